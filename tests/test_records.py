"""`records pack | unpack` (depthwidth/records.py): a config's trained and simulated records carried to a fresh
checkout, where the workflow then trains and simulates nothing it has a record of; the archive the same bytes for
the same records; a bad member or a differing file refused with nothing written."""

from __future__ import annotations

import io
import os
import re
import tarfile
from pathlib import Path

import pytest
from conftest import REPO, copy_workflow
from depthwidth import contracts, records
from depthwidth.cli import main as cli_main
from depthwidth.plan.config import read
from depthwidth.plan.jobs import from_config
from test_structure import planned_jobs  # rule -> its planned jobs, from a dry run on the ci config

HEAVY = {"train_run", "shaped_simulation", "prepare_data", "rate_scan"}  # the jobs the records stand for


def ci_plan():
    return from_config(read(REPO / "config/ci.yaml"))


def test_a_fresh_checkout_given_the_ci_records_trains_and_simulates_nothing(ci_build, tmp_path):
    """Packed from the ci build (every run, simulation and the corpus) and unpacked in a fresh copy of the workflow,
    whose code is older than the records, the records keep: a dry run plans the tables, figures, decisions and
    claims, and no training, simulation, data or scan job. Without them it plans every run."""
    archive = tmp_path / "ci-records.tar.xz"
    files = records.pack(ci_plan(), ci_build, archive)
    runs = {f.parts[1] for f in files if f.parts[0] == "runs"}
    assert runs == {p.name for p in (ci_build / "results" / "runs").iterdir() if (p / "metrics.json").is_file()}
    fresh = copy_workflow(tmp_path / "fresh")
    assert len(planned_jobs(fresh)["train_run"]) == len(runs)
    assert records.unpack(archive, fresh) == (len(files), 0)
    planned = planned_jobs(fresh)
    assert planned and HEAVY.isdisjoint(planned), planned
    assert len(planned["claims"]) == 1
    for relative in files:  # the bytes as built
        assert (fresh / "results" / relative).read_bytes() == (ci_build / "results" / relative).read_bytes()


def test_the_archive_is_the_same_bytes_for_the_same_records_and_leaves_unfinished_runs_out(tmp_path):
    root = tmp_path / "work"
    plan = ci_plan()
    run = next(iter(plan.runs.values()))
    (root / run.folder).mkdir(parents=True)
    for name in contracts.RUN_FILES:  # a finished run
        (root / run.folder / name).write_text(name)
    other = list(plan.runs.values())[1]
    (root / other.folder).mkdir(parents=True)
    (root / other.folder / "curve.csv").write_text("step\n")  # no metrics.json: not finished
    (root / other.checkpoint_dir).mkdir(parents=True)
    (root / other.checkpoint_dir / "checkpoint.pt").write_bytes(b"\0")
    first, second = tmp_path / "a.tar.xz", tmp_path / "b.tar.xz"
    files = records.pack(plan, root, first)
    assert [f.as_posix() for f in files] == [
        f"runs/{Path(run.folder).name}/{name}" for name in sorted(contracts.RUN_FILES)
    ]
    os.utime(root / run.folder / "curve.csv", (0, 0))  # another time, the same bytes
    records.pack(plan, root, second)
    assert first.read_bytes() == second.read_bytes()


def archive_of(members: dict[str, bytes], path: Path) -> Path:
    with tarfile.open(path, "w:xz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("name", ["../escape.txt", "ci/claims.csv", "/etc/passwd", "runs"])
def test_a_member_that_is_no_record_is_refused_and_nothing_is_written(tmp_path, name):
    archive = archive_of({"runs/r1/metrics.json": b"{}", name: b"x"}, tmp_path / "bad.tar.xz")
    with pytest.raises(records.RecordsError, match=f"^{re.escape(name)}: not a record"):
        records.unpack(archive, tmp_path / "root")
    assert not (tmp_path / "root").exists()


def test_an_existing_file_is_kept_when_alike_and_refused_when_it_differs_and_all_end_with_one_time(tmp_path):
    root = tmp_path / "root"
    same, other = root / "results/runs/r1/metrics.json", root / "results/runs/r2/metrics.json"
    same.parent.mkdir(parents=True)
    same.write_bytes(b"{}")
    os.utime(same, (1, 1))
    archive = archive_of({"runs/r1/metrics.json": b"{}", "runs/r2/metrics.json": b'{"a": 1}'}, tmp_path / "r.tar.xz")
    assert records.unpack(archive, root) == (1, 1)
    assert other.read_bytes() == b'{"a": 1}' and same.stat().st_mtime == other.stat().st_mtime > 1
    other.write_bytes(b"changed")
    with pytest.raises(SystemExit, match=r"records unpack: .*r2/metrics.json: differs from the archive's"):
        cli_main(["records", "unpack", str(archive), "--root", str(root)])
    assert other.read_bytes() == b"changed"


def test_the_command_packs_and_says_what_it_holds(ci_build, tmp_path, capsys):
    archive = tmp_path / "ci.tar.xz"
    assert cli_main(["records", "pack", str(archive), "--configfile", "config/ci.yaml", "--root", str(ci_build)]) == 0
    said = capsys.readouterr().out
    runs = len(ci_plan().runs)
    assert said.startswith(f"{archive}: ") and f"({runs} runs; " in said and said.count("\n") == 1, said


def test_every_corpus_the_runs_read_is_packed_a_vocabulary_confounds_too(tmp_path):
    """A sensitivity block's vocabulary confound trains on a corpus of its own: its runs would train again after an
    unpack without it (their data newer than them), so the archive holds every prepared corpus a run reads, and
    none that is not prepared yet (no meta.json)."""
    raw = read(REPO / "config/ci.yaml")
    raw["sensitivity"] = {"pairs": [{"experiment": "literal", "n": 2000, "depths": [1, 2]}], "vocab_sizes": [300]}
    plan = from_config(raw)
    corpora = sorted({job.spec["data"] for job in plan.runs.values()})
    assert len(corpora) == 2 and plan.data_dir in corpora
    for corpus in corpora:
        (tmp_path / corpus).mkdir(parents=True)
        (tmp_path / corpus / "train.bin").write_bytes(b"\0")
    (tmp_path / corpora[0] / "meta.json").write_text("{}")
    packed = {f.parent.as_posix() for f in records.members(plan, tmp_path)}
    assert packed == {Path(corpora[0]).relative_to("results").as_posix()}
    (tmp_path / corpora[1] / "meta.json").write_text("{}")
    packed = {f.parent.as_posix() for f in records.members(plan, tmp_path)}
    assert packed == {Path(c).relative_to("results").as_posix() for c in corpora}


def test_an_archive_that_is_no_tar_xz_is_one_line_naming_it_and_nothing_is_written(tmp_path):
    whole = archive_of({"runs/r1/metrics.json": b"{}"}, tmp_path / "whole.tar.xz")
    for name, data in (("text.tar.xz", b"a,b\n1,2\n"), ("empty.tar.xz", b""), ("cut.tar.xz", whole.read_bytes()[:40])):
        archive = tmp_path / name
        archive.write_bytes(data)
        with pytest.raises(SystemExit, match=f"^records unpack: {re.escape(str(archive))}: not a readable tar.xz "):
            cli_main(["records", "unpack", str(archive), "--root", str(tmp_path / "root")])  # was tarfile.ReadError
    assert not (tmp_path / "root").exists()


def test_packing_nothing_or_onto_a_folder_is_one_line_and_leaves_no_file(tmp_path, capsys):
    """A --root without the config's records (another folder, another config's) packed an empty archive and said
    so with exit 0; an archive path that is a folder left its .tmp beside it, with a traceback."""
    root = tmp_path / "work"
    (root / contracts.RESULTS).mkdir(parents=True)
    archive = tmp_path / "ci.tar.xz"
    assert cli_main(["records", "pack", str(archive), "--configfile", "config/ci.yaml", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert err == f"depthwidth records: error: {root / contracts.RESULTS}: no finished record of config ci to pack\n"
    assert not archive.exists()
    run = next(iter(ci_plan().runs.values()))
    (root / run.folder).mkdir(parents=True)
    for name in contracts.RUN_FILES:
        (root / run.folder / name).write_text(name)
    folder = tmp_path / "folder"
    folder.mkdir()
    assert cli_main(["records", "pack", str(folder), "--configfile", "config/ci.yaml", "--root", str(root)]) == 1
    assert capsys.readouterr().err.startswith(f"depthwidth records: error: [Errno 21] Is a directory: '{folder}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "work"]  # no folder.tmp
