"""The workflow as a whole: dry runs on every config, lint, format, and caching of the data stage."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from conftest import CI_CONFIG, REPO, SLICE, copy_workflow, plan_of, run_snakemake

CONFIGS = sorted((REPO / "config").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_dry_run_plans_every_stage(path):
    result = run_snakemake("-n", "--forceall", "--configfile", str(path))
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(path.read_text())
    simulated = "simulation" in config.get("shaped", {})  # levine.yaml trains sweeps only
    trained = "sweep" in config or "training" in config.get("shaped", {})  # glue.yaml: the GLUE stage only
    glue = ["glue_fetch", "glue_pretrain", "glue_finetune", "glue_table"] if "glue" in config else []
    for rule in ("prepare_data", *(["train_run"] if trained else []), "figure", "claims", *glue):
        assert rule in result.stdout, rule
    if simulated:
        assert "shaped_simulation" in result.stdout
    if not glue:  # only a config with a glue block downloads GLUE or pretrains for it
        assert "rule glue_" not in result.stdout
    assert "docs/findings.md" not in result.stdout  # no part of `all`: asked for by name


def test_findings_is_asked_for_by_name_and_writes_docs():
    result = run_snakemake("-n", "--forceall", "findings", "--configfile", "config/ci.yaml", check=True)
    assert "rule findings:" in result.stdout
    assert "output: docs/findings-ci.md, docs/findings-ci/kaplan_power_law.png" in result.stdout, result.stdout
    assert "docs/findings.md" not in result.stdout  # the default config's, committed: never overwritten by ci's


def test_lint_is_clean():
    result = run_snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr


def test_snakefmt_is_clean():
    result = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", "."], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]], ids=["format", "lint"])
def test_ruff_is_clean(command):
    # ruff is pinned in the test extra; its settings (line length 120, rules) live in pyproject.toml
    result = subprocess.run([sys.executable, "-m", "ruff", *command, "."], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ci_data_builds_once_then_nothing_to_do(tmp_path):
    work = copy_workflow(tmp_path)
    run_snakemake("--cores", "2", "data", "--configfile", "config/ci.yaml", cwd=work, check=True)
    meta = json.loads((work / plan_of(CI_CONFIG).data_dir / "meta.json").read_text())
    assert meta["splits"]["val"]["documents"] > 0 and meta["vocab_size"] == 512
    again = run_snakemake("-n", "data", "--configfile", "config/ci.yaml", cwd=work, check=True)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_text_corpus_reruns_when_a_file_changes(tmp_path):
    work = copy_workflow(tmp_path)
    config = {
        "name": "slice",
        "data": {
            "name": "slice",
            "corpus": "text",
            "paths": ["tests/data/corpus"],
            "val_fraction": 0.25,
            "vocab_size": 400,
        },
    }
    (work / "config" / "slice.yaml").write_text(yaml.safe_dump(config))
    run_snakemake("--cores", "1", "data", "--configfile", "config/slice.yaml", cwd=work, check=True)
    assert (work / plan_of(work / "config" / "slice.yaml").data_dir / "train.bin").stat().st_size > 0
    nothing = run_snakemake("-n", "data", "--configfile", "config/slice.yaml", cwd=work, check=True)
    assert "Nothing to be done" in nothing.stdout + nothing.stderr
    edited = work / "tests/data/corpus" / sorted(p.name for p in SLICE.glob("*.txt"))[0]
    edited.write_text(edited.read_text() + "\nA new closing line.\n")
    rerun = run_snakemake("-n", "data", "--configfile", "config/slice.yaml", cwd=work, check=True)
    assert "prepare_data" in rerun.stdout
