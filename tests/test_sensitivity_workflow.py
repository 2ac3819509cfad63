"""The sensitivity block through the workflow: ci with a block builds its corpus, runs, tables and reading beside ci's
own results, and `check` recomputes the reading (apart from tests/test_sensitivity.py, which the mutation run reads)."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
import yaml
from conftest import package_env, run_snakemake
from depthwidth.claims import sensitivity
from test_sensitivity import PAIRS, ci_with


@pytest.mark.slow
def test_the_ci_build_with_a_block_reads_what_its_depth_rows_survive(ci_build, tmp_path):
    work = tmp_path / "work"
    subprocess.run(["cp", "-a", str(ci_build), str(work)], check=True)
    config = work / "config/ci-sensitivity.yaml"
    raw = ci_with({"pairs": PAIRS[:1], "tokens_factor": 2, "vocab_sizes": [300]})
    for experiment in ("ffratio", "headdim"):  # the literal pair's rows, the design's baseline and lr_check suffice
        del raw["sweep"][experiment]
    del raw["shaped"]  # nor does it read the SDE or the entropy: fewer figures and claims to build for a new name
    config.write_text(yaml.safe_dump(raw | {"name": "ci-sens"}))  # ci's name is config/ci.yaml's, of other results
    args = ("--cores", "2", "--configfile", str(config))
    # the runs of ci are ci-sens's too (a run's folder is its spec's): the block adds its corpus and its runs
    dry = run_snakemake("-n", *args, cwd=work, check=True).stdout
    assert "rule sensitivity:" in dry and dry.count("rule prepare_data:") == 1  # ci's corpus is built
    run_snakemake(*args, cwd=work, check=True)
    frame = pd.read_csv(work / "results/ci-sens/sensitivity.csv")
    assert list(frame["source"]) == ["reference", "tokens", "vocab300"]
    assert (frame[["runs_shallow", "runs_deep"]] == 1).all().all()  # ci's one seed: no interval, sign 0
    dose = frame.set_index("source")["tokens_per_parameter"]  # the floor (min_tokens) x 2, to a whole step
    assert dose["tokens"] / dose["reference"] == pytest.approx(2, rel=0.03) and dose["vocab300"] == dose["reference"]
    assert "## What the depth verdicts survive" in (work / "results/ci-sens/claims.md").read_text()
    drawn = pd.read_csv(work / "results/ci-sens/figures/depth_sensitivity.csv")  # the reading, drawn (one seed: no bar)
    assert list(drawn["source"]) == list(frame["source"]) and (drawn["sign"] == 0).all()
    # claims.csv says what each depth row that reads the pair survives (by_confound), every other row nothing
    stated = pd.read_csv(work / "results/ci-sens/claims.csv").set_index("id").fillna("")
    survived = sensitivity.outcomes(frame)
    assert survived
    for claim, by_source in survived.items():
        assert stated.loc[claim, "by_confound"] == "; ".join(f"{s}={o}" for s, o in by_source.items())
    assert (stated.drop(index=list(survived))["by_confound"] == "").all()
    assert "Nothing to be done" in run_snakemake("-n", *args, cwd=work, check=True).stdout
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "check", "results", "--configfile", str(config)],
        cwd=work, env=package_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    # check recomputes the reading from the tables: an edited gain is a problem naming the file and the row
    stored = work / "results/ci-sens/sensitivity.csv"
    frame.loc[1, "gain_pct"] += 1
    stored.write_text(frame.to_csv(index=False))
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "check", "results", "--configfile", str(config)],
        cwd=work, env=package_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 1 and "sensitivity.csv: row 2: gain_pct differ from the tables'" in result.stdout
