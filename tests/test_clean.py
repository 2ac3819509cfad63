"""`python -m depthwidth clean --configfile A` deletes what A built and no other known config plans (issue 36,
item 3): two configs in one checkout that share their simulations, each result a placeholder at its planned
path (what clean deletes is decided by the plans, not by the files' contents, so nothing is trained)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import REPO, copy_workflow, run_snakemake
from depthwidth import cli, contracts
from depthwidth.clean import record, record_path, shared_paths
from depthwidth.plan.config import read
from depthwidth.plan.jobs import from_config


def other_config() -> dict:
    """ci.yaml with another corpus (vocabulary): other runs and data folder, the same simulations."""
    other = yaml.safe_load((REPO / "config" / "ci.yaml").read_text())
    other["name"] = "other"
    other["data"]["vocab_size"] = 384
    return other


def build(plan) -> list[str]:
    """Placeholders for every file and folder a plan's jobs write, its checkpoints and logs included."""
    made = [*plan.targets(), *(p for paths in shared_paths(plan).values() for p in paths)]
    made += [contracts.log_path(plan.name, "claims"), contracts.report_path(plan.name)]
    for path in map(Path, made):
        if path.exists():
            continue
        if not path.suffix or path.suffix == ".ckpt":  # a run's, a checkpoint's or a corpus's folder
            path.mkdir(parents=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
    return made


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A checkout with config/ci.yaml and config/other.yaml, both built, and a download cache."""
    (tmp_path / "config").mkdir()
    shutil.copy(REPO / "config" / "ci.yaml", tmp_path / "config" / "ci.yaml")
    (tmp_path / "config" / "other.yaml").write_text(yaml.safe_dump(other_config()))
    monkeypatch.chdir(tmp_path)
    ci, other = from_config(read("config/ci.yaml")), from_config(other_config())
    assert set(ci.simulations) == set(other.simulations) and not set(ci.runs) & set(other.runs)
    assert ci.data_dir != other.data_dir
    build(ci), build(other)
    (tmp_path / "results" / "downloads").mkdir()
    (tmp_path / "results" / "downloads" / "corpus.zip").write_text("x")
    return {"ci": ci, "other": other}


def clean(capsys, *args: str) -> list[str]:
    assert cli.main(["clean", *args]) == 0
    return capsys.readouterr().out.splitlines()


def exists(path: str) -> bool:
    return Path(path).exists()


def test_a_dry_run_lists_what_only_this_config_planned_and_deletes_nothing(checkout, capsys):
    ci, other = checkout["ci"], checkout["other"]
    lines = clean(capsys, "--configfile", "config/ci.yaml", "--dry-run")
    listed = set(lines[:-2])
    assert {"results/ci", "results/logs/ci", ci.data_dir} | {job.folder for job in ci.runs.values()} <= listed
    assert {job.checkpoint_dir for job in ci.runs.values()} <= listed
    assert not listed & {job.output for job in ci.simulations.values()}  # other.yaml plans them too
    assert not any(path.startswith(("results/other", "results/downloads")) for path in listed)
    assert lines[-2] == f"kept: simulations: {3 * len(ci.simulations)} paths stay, planned by config/other.yaml"
    assert lines[-1] == f"clean ci: would delete {len(listed)} paths; kept what the lines above say"
    assert all(exists(path) for path in ci.targets() + other.targets())


def test_cleaning_one_config_keeps_every_file_of_the_other(checkout, capsys):
    ci, other = checkout["ci"], checkout["other"]
    clean(capsys, "--configfile", "config/ci.yaml")
    assert all(exists(path) for path in other.targets())  # its runs, corpus, tables, figures and claims
    assert all(exists(job.output) for job in ci.simulations.values())  # shared: still there for other
    assert not exists("results/ci") and not exists(ci.data_dir)
    assert not any(exists(job.folder) or exists(job.checkpoint_dir) for job in ci.runs.values())
    assert not any(exists(contracts.log_path("runs", run)) for run in ci.runs)
    assert exists("results/downloads/corpus.zip")
    # with config/ci.yaml gone, other.yaml is alone with its simulations: cleaning it deletes them
    Path("config/ci.yaml").unlink()
    lines = clean(capsys, "--configfile", "config/other.yaml")
    assert lines[-1].startswith("clean other: deleted ") and lines[-1].endswith(" paths") and "kept" not in lines[-2]
    assert not any(exists(job.output) for job in other.simulations.values())
    assert [p for p in Path("results").rglob("*") if p.is_file()] == [Path("results/downloads/corpus.zip")]


def test_a_config_recorded_in_results_is_known_and_an_unknown_folder_keeps_everything_shared(checkout, capsys):
    ci, other = checkout["ci"], checkout["other"]
    Path("config/other.yaml").rename("other.yaml")  # run from a file outside config/: known by its record alone
    record(other)
    assert json.loads(record_path("other").read_text()) == other.config  # JSON: YAML 1.1 reads 1e-05 as text
    clean(capsys, "--configfile", "config/ci.yaml")
    assert all(exists(job.output) for job in ci.simulations.values()) and all(exists(p) for p in other.targets())
    build(ci)
    record_path("other").unlink()  # a folder of a config nobody can read: nothing shared is deleted
    lines = clean(capsys, "--configfile", "config/ci.yaml")
    assert lines[-2] == (
        "kept: every shared output stays: results/other/ is the folder of a config that is neither in config/ "
        "nor recorded"
    )
    assert not exists("results/ci") and all(exists(job.folder) for job in ci.runs.values())
    assert exists(ci.data_dir)


def test_the_workflow_records_the_config_it_runs_and_not_on_a_dry_run(tmp_path):
    work = copy_workflow(tmp_path)
    plan = from_config(read(REPO / "config" / "ci.yaml"))
    run_snakemake("-n", "--configfile", "config/ci.yaml", cwd=work, check=True)
    assert not (work / record_path("ci")).exists()
    # one job, the cheapest: the rank-collapse trajectory (100 samples at width 32)
    run_snakemake("--cores", "1", plan.trajectory.output, "--configfile", "config/ci.yaml", cwd=work, check=True)
    assert json.loads((work / record_path("ci")).read_text()) == plan.config


def test_a_glue_configs_pretrainings_and_fine_tunings_are_shared_outputs_and_their_folders_no_config(
    tmp_path, monkeypatch
):
    from depthwidth.clean import other_configs
    from depthwidth.glue.contracts import GLUE_FOLDERS
    from depthwidth.plan.jobs import from_config

    plan = from_config(read(REPO / "config" / "glue.yaml"))
    glue = shared_paths(plan)["glue"]
    folders = {Path(p).parent.name for p in glue if not p.startswith(("results/logs", "results/benchmarks"))}
    assert folders == set(GLUE_FOLDERS)
    assert all(f"{job.folder}.ckpt" in glue for job in plan.glue.pretrained.values())
    # the GLUE stage's shared folders are no config's folder: they keep nothing shared of another config
    monkeypatch.chdir(tmp_path)
    for folder in GLUE_FOLDERS:
        (tmp_path / "results" / folder).mkdir(parents=True)
    assert not other_configs(from_config(read(REPO / "config" / "ci.yaml"))).unknown


def twin_config(seeds: list[int]) -> dict:
    """ci.yaml under its own name with other sweep seeds: a second file of the name `ci`."""
    twin = yaml.safe_load((REPO / "config" / "ci.yaml").read_text())
    twin["sweep"]["seeds"] = seeds
    return twin


def test_a_second_config_file_of_the_same_name_keeps_all_it_plans_and_the_names_folder(checkout, capsys):
    """Issue 55, case 6: a copy of ci.yaml with one more seed, under the same name: cleaning it deleted all of
    ci.yaml's runs and its corpus (a config of the cleaned name was taken for the cleaned one). What loses
    nothing: every other config file is another config, whatever its name; and results/<name>/, which both
    write, stays while another file has the name."""
    ci = checkout["ci"]
    Path("config/ci-more.yaml").write_text(yaml.safe_dump(twin_config([0, 1])))
    more = from_config(twin_config([0, 1]))
    build(more)
    only_more = [job.folder for run_id, job in more.runs.items() if run_id not in ci.runs]
    assert only_more and set(ci.runs) < set(more.runs)
    lines = clean(capsys, "--configfile", "config/ci-more.yaml")
    assert all(exists(path) for path in ci.targets())  # every run, the corpus, results/ci/ itself
    assert not any(map(exists, only_more))  # what ci-more.yaml alone planned goes
    assert "kept: results/ci/ and results/logs/ci/ stay: config/ci.yaml has the name ci too" in lines
    # and the other way round: cleaning ci.yaml keeps what ci-more.yaml plans, its extra seed's runs included
    build(more)
    clean(capsys, "--configfile", "config/ci.yaml")
    assert all(exists(path) for path in more.targets())


def test_a_record_of_this_name_from_another_config_keeps_its_runs(checkout, capsys):
    """A results/ci/config.json written by a run of another file named ci (outside config/) is a config of its
    own: its runs stay, while results/ci/ goes with the config cleaned."""
    ci, twin = checkout["ci"], from_config(twin_config([1]))
    build(twin)
    record(twin)  # the last run into results/ci/ was the twin's
    clean(capsys, "--configfile", "config/ci.yaml")
    assert all(exists(job.folder) for job in twin.runs.values()) and exists(ci.data_dir)
    assert not exists("results/ci") and not any(exists(job.folder) for r, job in ci.runs.items() if r not in twin.runs)


def test_clean_where_there_is_no_results_folder_says_so_in_one_line(checkout, capsys):
    """Issue 55, case 12: run from a subdirectory it said "would delete 0 paths", not that it found no results."""
    Path("sub").mkdir()
    os.chdir("sub")
    assert cli.main(["clean", "--configfile", "../config/ci.yaml", "--dry-run"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [
        f"depthwidth clean: error: no results/ folder in {Path.cwd()}: run clean in the folder the workflow runs in"
    ]


def test_a_vocabulary_confounds_corpus_is_the_configs_to_clean(tmp_path, monkeypatch, capsys):
    """A sensitivity block's vocabulary confound trains on a corpus of its own: clean deletes it with the config's
    other shared outputs (it was left behind)."""
    raw = yaml.safe_load((REPO / "config" / "ci.yaml").read_text())
    raw["sensitivity"] = {"pairs": [{"experiment": "literal", "n": 2000, "depths": [1, 2]}], "vocab_sizes": [300]}
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ci.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.chdir(tmp_path)
    plan = from_config(read("config/ci.yaml"))
    (confound,) = {job.spec["data"] for job in plan.runs.values()} - {plan.data_dir}
    assert confound in shared_paths(plan)["data"]
    build(plan)
    assert exists(confound)
    clean(capsys, "--configfile", "config/ci.yaml")
    assert not exists(confound) and not exists(plan.data_dir)
