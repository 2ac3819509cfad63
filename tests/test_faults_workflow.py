"""Fault injection on the workflow and its machine: outputs deleted after a build, a checkout path that
needs quoting, GPUs asked of a machine without one, a plain `snakemake`, a full disk, and an installed
copy of the package run against an edited checkout. Each ends in a correct rebuild or one clear line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import CI_CONFIG, REPO, SLICE, copy_workflow, package_env, plan_of, run_snakemake
from depthwidth import contracts
from depthwidth.cli import stale_install
from depthwidth.io import NoSpaceError, write_bytes
from depthwidth.plan import jobs as plan
from depthwidth.plan.runsheet import has_cuda_device

CI = ["--configfile", "config/ci.yaml"]
CI_PLAN = plan_of(CI_CONFIG)
NAME = CI_PLAN.name  # what the ci config concludes lies under results/ci/
CLAIMS_CSV, CLAIMS_MD = contracts.claims_files(NAME)


@pytest.fixture(scope="module")
def built(ci_build, tmp_path_factory) -> Path:
    """A private copy of the session's ci build, for this module's tests to damage."""
    work = tmp_path_factory.mktemp("faults-workflow") / "work"
    subprocess.run(["cp", "-a", str(ci_build), str(work)], check=True)
    return work


def planned_jobs(work: Path, *args: str) -> dict[str, set[str]]:
    """rule -> the outputs its planned jobs would write, from a dry run."""
    result = run_snakemake("-n", *args, cwd=work, check=True)
    jobs: dict[str, set[str]] = {}
    rule = None
    for line in result.stdout.splitlines():
        if line.startswith(("rule ", "localrule ")):
            rule = line.split()[-1].rstrip(":")
            jobs.setdefault(rule, set())
        elif line.startswith("    output: ") and rule:
            jobs[rule].update(path.strip() for path in line.removeprefix("    output: ").split(","))
    return jobs


def test_targets_are_every_declared_output_of_the_ci_plan():
    ci = plan.from_config(yaml.safe_load((REPO / "config/ci.yaml").read_text()))
    result = run_snakemake("-n", "--forceall", *CI)
    declared = {
        path.strip()
        for line in result.stdout.splitlines()
        if line.startswith("    output: ")
        for path in line.removeprefix("    output: ").split(",")
    }
    assert declared and declared == set(ci.targets())


@pytest.mark.parametrize(
    "deleted, rule",
    [
        (CLAIMS_MD, "claims"),
        (contracts.caption_path(NAME, "kaplan_fig6"), "claims"),
        (contracts.figure_path(NAME, "levine_regimes", ".pdf"), "figure"),
        (contracts.figure_path(NAME, "levine_regimes", ".csv"), "figure"),
        (f"{CI_PLAN.data_dir}/tokenizer.json", "prepare_data"),
    ],
)
def test_an_output_no_job_reads_is_rebuilt_when_deleted(built, tmp_path, deleted, rule):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    (copy / deleted).unlink()
    jobs = planned_jobs(copy, *CI)
    assert deleted in jobs.get(rule, set()), jobs


def test_deleted_claims_and_figure_files_come_back_and_check_passes(built, tmp_path):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    pdf, caption = contracts.figure_path(NAME, "kaplan_fig6", ".pdf"), contracts.caption_path(NAME, "lr_check")
    deleted = [CLAIMS_MD, pdf, caption]
    before = {path: (copy / path).read_bytes() for path in deleted}
    for path in deleted:
        (copy / path).unlink()
    run_snakemake("--cores", "2", *CI, cwd=copy, check=True)
    assert (copy / CLAIMS_MD).read_bytes() == before[CLAIMS_MD]
    assert (copy / caption).read_bytes() == before[caption]
    assert (copy / pdf).read_bytes()[:4] == b"%PDF"
    run_snakemake("--cores", "1", "check", *CI, cwd=copy, check=True)
    assert (copy / contracts.check_path(NAME)).read_text().splitlines()[0].endswith(": 0 problems")


def test_a_checkout_under_a_path_with_an_apostrophe_runs_its_jobs(built, tmp_path):
    # (braces are not tried: snakemake itself formats the checkout's path into its conda directive)
    odd = tmp_path / "it's a $HOME dir, ü" / "work"
    odd.parent.mkdir()
    subprocess.run(["cp", "-a", str(built), str(odd)], check=True)
    result = run_snakemake("--cores", "1", "--forcerun", "claims", *CI, cwd=odd)
    assert result.returncode == 0, result.stderr[-3000:]
    log = (odd / contracts.log_path(NAME, "claims")).read_text()
    assert "Traceback" not in log and (odd / CLAIMS_CSV).is_file()


@pytest.mark.skipif(has_cuda_device(), reason="this machine has a GPU")
def test_gpus_asked_of_a_machine_without_one_are_said_once_before_the_jobs(built, tmp_path):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    config = yaml.safe_load((copy / "config/ci.yaml").read_text())
    config["sweep"]["gpu"] = 1
    (copy / "config/ci-gpu.yaml").write_text(yaml.safe_dump(config))
    result = run_snakemake("--cores", "1", "check", "--configfile", "config/ci-gpu.yaml", cwd=copy, check=True)
    said = [line for line in result.stderr.splitlines() if "asks for GPUs" in line]
    assert said == [
        "depthwidth: config ci asks for GPUs (sweep.gpu) but this machine has no CUDA device: "
        "its training runs will run on the CPU"
    ]
    quiet = run_snakemake("--cores", "1", "check", *CI, cwd=copy, check=True)
    assert "asks for GPUs" not in quiet.stderr


def test_a_plain_snakemake_needs_no_cores_argument(built):
    result = run_snakemake(*CI, cwd=built)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Nothing to be done" in result.stdout + result.stderr


@pytest.fixture
def tiny_disk(tmp_path):
    """A 96 KiB file system of its own (tmpfs; needs root), unmounted afterwards."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_is_named_and_leaves_nothing_half_written(tiny_disk):
    target = tiny_disk / "big.bin"
    with pytest.raises(NoSpaceError) as raised:
        write_bytes(target, b"x" * (1 << 20))
    assert str(raised.value).startswith(f"{target}: no space left on device")
    assert list(tiny_disk.iterdir()) == []


PREPARE = [sys.executable, "-m", "depthwidth", "prepare-data", "--no-progress"]  # stderr: the error line alone


def test_prepare_data_on_a_full_disk_is_one_line(tiny_disk):
    data = {"corpus": "text", "paths": [str(SLICE)], "val_fraction": 0.25, "vocab_size": 512, "chunk_chars": 20000}
    result = subprocess.run(
        [*PREPARE, "--data-json", json.dumps(data), "--out", str(tiny_disk)],
        env=package_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "no space left on device" in lines[0] and lines[0].startswith("depthwidth prepare-data: error: ")
    assert not [p for p in tiny_disk.rglob("*") if p.is_file() and p.name.endswith(".tmp")]


def installed_copy(tmp_path: Path) -> Path:
    """The package as a non-editable install leaves it: a copy outside any checkout."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "workflow" / "depthwidth", site / "depthwidth", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def test_an_installed_copy_refuses_a_checkout_whose_code_differs(tmp_path):
    site = installed_copy(tmp_path)
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "workflow", checkout / "workflow", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**package_env(), "PYTHONPATH": str(site)}
    same = subprocess.run(
        [sys.executable, "-m", "depthwidth", "validate-config", str(REPO / "config/ci.yaml")],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    assert same.returncode == 0, same.stderr
    edited = checkout / "workflow/depthwidth/fits.py"
    edited.write_text(edited.read_text() + "\n# edited\n")
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "check", "results"], cwd=checkout, env=env, capture_output=True, text=True
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "differs from this checkout's" in lines[0] and "(fits.py)" in lines[0]


def test_a_checkouts_own_package_is_never_called_stale(tmp_path):
    assert stale_install(REPO) is None
    assert stale_install(tmp_path) is None  # no checkout here at all


def test_a_checkpoint_on_a_full_disk_is_one_line(slice_data, tiny_disk, tmp_path):
    from test_faults import tiny_spec

    spec = tiny_spec(slice_data, steps=20, checkpoint_interval=5)
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "train", "--spec-json", json.dumps(spec), "--out", str(tmp_path / "run"),
         "--checkpoint-dir", str(tiny_disk / "ckpt"), "--no-progress"],
        env=package_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[-1].startswith("depthwidth train: error: ") and "no space left on device" in lines[-1]
    assert not list((tmp_path / "run").glob("metrics.json"))


# Every process of a workflow on a full disk, simulated without a mount (tests run as a normal user too): each
# folder reports 0 bytes free and every rename into place under results/ fails with ENOSPC, as the last step of a
# write would (snakemake's own files, in .snakemake/, are written as before).
FULL_DISK = """
import errno, os
_statvfs, _replace = os.statvfs, os.replace
def full(path):
    s = _statvfs(path)
    return os.statvfs_result((s.f_bsize, s.f_frsize, s.f_blocks, 0, 0, s.f_files, s.f_ffree, s.f_favail, s.f_flag,
                              s.f_namemax))
def replace(src, dst, **kw):
    if "results" in os.path.normpath(os.path.abspath(dst)).split(os.sep):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
    return _replace(src, dst, **kw)
os.statvfs, os.replace = full, replace
"""


def test_a_workflow_failed_on_a_full_disk_says_so_once_its_jobs_have_failed(built, tmp_path):
    """Issue 55, a full disk during a write (tried on a tmpfs of 0.4, 2, 4 and 16 MB under results/): every write
    that failed left nothing a rerun accepts, but a job's error line goes to its log on the same disk, and there a
    job that failed on the full disk left an empty log or one cut short mid-progress; snakemake said only "check
    log file(s) for error details". Its onerror now names the full disk, in snakemake's own output."""
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    figure = contracts.figure_path(NAME, "levine_regimes", ".png")
    (copy / figure).unlink()
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(FULL_DISK)
    env = package_env()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env["PYTHONPATH"]])
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", *CI], cwd=copy, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert result.returncode != 0 and "Error in rule figure" in result.stderr, result.stderr[-2000:]
    notes = [line for line in result.stderr.splitlines() if "bytes free" in line]
    assert notes == [
        "depthwidth: results/ has 0 bytes free: a job stopped by the full disk may have left its log empty or cut "
        "short (its error could not be written there); free some and rerun"
    ]
    assert not (copy / figure).exists()
    run_snakemake("--cores", "1", *CI, cwd=copy, check=True)  # space freed: the rerun completes
    assert (copy / figure).read_bytes()[:4] == b"\x89PNG"


def test_the_full_disk_note_is_said_only_when_the_results_disk_is_nearly_full(tmp_path, monkeypatch):
    from depthwidth import io

    assert io.full_disk_note(tmp_path / "absent") is None
    monkeypatch.setattr(io, "_free_bytes", lambda folder: io.LOW_SPACE_BYTES)
    assert io.full_disk_note(tmp_path) is None
    monkeypatch.setattr(io, "_free_bytes", lambda folder: 4096)
    assert io.full_disk_note(tmp_path).startswith(f"{tmp_path}/ has 4,096 bytes free: ")


def test_a_config_on_the_same_corpus_rebuilds_none_of_another_configs_data_or_runs(built):
    """The shards are keyed by the data block alone: a config on ci's corpus with no runs (so no n_ctx)
    neither rewrites them nor makes ci retrain (issue 36, item 2: it did, 24 of 24 runs)."""
    data_config = yaml.safe_load((built / "config/ci.yaml").read_text())["data"]
    (built / "config/other.yaml").write_text(yaml.safe_dump({"name": "other", "data": data_config}))
    meta = built / CI_PLAN.data_dir / "meta.json"
    before = meta.stat().st_mtime_ns, (built / CI_PLAN.data_dir / "train.bin").read_bytes()
    run_snakemake("--cores", "1", "--configfile", "config/other.yaml", cwd=built, check=True)
    assert (meta.stat().st_mtime_ns, (built / CI_PLAN.data_dir / "train.bin").read_bytes()) == before
    assert planned_jobs(built, *CI) == {}  # nothing of ci to rebuild


def test_a_split_too_short_for_a_configs_runs_is_one_line_at_parse_time(tmp_path):
    meta = tmp_path / CI_PLAN.data_dir / "meta.json"
    meta.parent.mkdir(parents=True)
    need = CI_PLAN.min_split_tokens()
    assert need == 64 + 1  # every ci run has n_ctx 64
    meta.write_text(json.dumps({"splits": {"train": {"tokens": 10**6}, "val": {"tokens": need}}}))
    assert CI_PLAN.split_size_problem(tmp_path) is None
    meta.write_text(json.dumps({"splits": {"train": {"tokens": 10**6}, "val": {"tokens": need - 1}}}))
    problem = CI_PLAN.split_size_problem(tmp_path)
    assert problem == (
        f"data.val_fraction: the val split of {meta} has 64 tokens, but this config's runs need at least 65 "
        "(their longest n_ctx + 1); raise data.val_fraction, add text, or shorten n_ctx"
    )
    assert CI_PLAN.split_size_problem(tmp_path / "none") is None  # not prepared yet: the runs check at start


def test_a_corpus_file_edited_under_its_old_mtime_is_named_by_check(tmp_path):
    work = copy_workflow(tmp_path)
    data = {"name": "slice", "corpus": "text", "paths": ["tests/data/corpus"], "val_fraction": 0.25, "vocab_size": 400}
    (work / "config/slice.yaml").write_text(yaml.safe_dump({"name": "slice", "data": data}))
    slice_config = ["--configfile", "config/slice.yaml"]
    run_snakemake("--cores", "1", "data", *slice_config, cwd=work, check=True)
    edited = work / "tests/data/corpus" / sorted(p.name for p in SLICE.glob("*.txt"))[0]
    before = edited.stat()
    edited.write_text(edited.read_text().replace(" the ", " thy ", 1))
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))  # an edit that keeps the old mtime
    assert "Nothing to be done" in run_snakemake("-n", "data", *slice_config, cwd=work, check=True).stdout
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "check", "results", *slice_config],
        cwd=work, env=package_env(), capture_output=True, text=True,
    )  # fmt: skip
    named = [line for line in result.stdout.splitlines() if edited.name in line]
    assert result.returncode == 1 and len(named) == 1, result.stdout
    assert "changed since the data was prepared" in named[0] and "--forcerun prepare_data" in named[0]


def test_snakemake_exits_once_its_last_job_is_done(built, tmp_path):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    start = time.monotonic()
    result = run_snakemake("--cores", "1", "--forcerun", "claims", *CI, cwd=copy, check=True)
    wall = time.monotonic() - start
    hours, minutes, seconds = re.search(r"Elapsed time: (\d+):(\d+):([\d.]+)", result.stderr).groups()
    # the scheduler's timers (one minute each, profiles/default) no longer hold the exit
    assert wall - (3600 * int(hours) + 60 * int(minutes) + float(seconds)) < 20


@pytest.mark.parametrize("flag", ["--delete-all-output", "--delete-all"])
def test_snakemakes_delete_all_output_is_refused_in_one_line_and_deletes_nothing_shared(built, tmp_path, flag):
    """Issue 55, case 11: `snakemake --delete-all-output --configfile twin.yaml` (ci.yaml under another name)
    deleted the corpus, runs and simulations ci shares: `check` on ci then found 57 of its 109 artifacts missing.
    Refused, pointing to `clean` (argparse takes the unambiguous prefix --delete-all too)."""
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    twin = yaml.safe_load((copy / "config/ci.yaml").read_text())
    (copy / "config/twin.yaml").write_text(yaml.safe_dump({**twin, "name": "twin"}))
    result = run_snakemake(flag, "--configfile", "config/twin.yaml", cwd=copy)
    lines = [line for line in result.stderr.splitlines() if line.startswith("depthwidth: ")]
    assert result.returncode != 0 and lines == [
        "depthwidth: --delete-all-output would delete the corpus, runs and simulations other configs share with "
        "twin; `python -m depthwidth clean --configfile FILE` deletes what this config alone built"
    ]
    assert all((copy / path).is_file() for path in CI_PLAN.targets())


def test_a_corpus_and_a_config_file_named_with_spaces_and_non_ascii_letters_build_and_check(tmp_path):
    """Issue 55, the case not tried before: a checkout, a config file, a corpus folder and its files all named
    with spaces, non-ASCII letters and curly quotes."""
    work = copy_workflow(tmp_path / "dír with space ü" / "work")
    corpus = work / "tests" / "data" / "corpus ü"
    corpus.mkdir()
    for i, text in enumerate(sorted(SLICE.glob("*.txt"))):
        shutil.copy(text, corpus / f"Bök {i} – ‘quoted’.txt")
    data = {
        "name": "slice",
        "corpus": "text",
        "paths": ["tests/data/corpus ü"],
        "val_fraction": 0.25,
        "vocab_size": 400,
    }
    (work / "config" / "slice ü.yaml").write_text(yaml.safe_dump({"name": "sliceu", "data": data}, allow_unicode=True))
    run_snakemake("--cores", "1", "--configfile", "config/slice ü.yaml", cwd=work, check=True)
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "check", "results", "--configfile", "config/slice ü.yaml"],
        cwd=work, env=package_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0 and result.stdout.splitlines()[0].endswith(" of config sliceu: 0 problems")
