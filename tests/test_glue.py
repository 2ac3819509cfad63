"""The GLUE stage (issue 38): fetch, parse, pretrain, fine-tune, score, table, figure and claim, offline.

Fixture zips in GLUE's layout are built here and served on 127.0.0.1 (tests/glue_fixtures.py); the end-to-end
test runs the real workflow on a tiny config in a copy of the checkout."""

from __future__ import annotations

import time

import pandas as pd
import yaml
from conftest import BUILD_SECONDS, copy_workflow, plan_of, run_snakemake
from depthwidth.glue.contracts import TABLE_COLUMNS
from glue_fixtures import glue_zip, serving, sha256


def tiny_config(base: str, files: dict[str, bytes], **glue) -> dict:
    """A tiny GLUE config on the committed corpus slice, its tasks served at `base`."""
    sources = {task: {"url": f"{base}/{name}", "checksum": sha256(files[name])} for task, name in NAMES.items()}
    block = {
        "sources": sources,
        "model": {"n_layer": 2, "d_model": 16, "n_head": 2},
        "pretrain": {
            "recipe": {"n_ctx": 32, "batch_size": 8, "token_budget": 2560, "lr": 0.003, "eval_interval": 5,
                       "eval_batches": 2, "checkpoint_interval": 0},
        },
        "finetune": {"seeds": [0, 1], "epochs": 1, "batch_size": 8},
    }  # fmt: skip
    data = {"name": "slice", "corpus": "text", "paths": ["tests/data/corpus"], "val_fraction": 0.25, "vocab_size": 300}
    return {"name": "glue-tiny", "data": data, "glue": {**block, **glue}}


NAMES = {"cola": "CoLA.zip", "rte": "RTE.zip"}


def test_the_stage_runs_end_to_end_through_the_workflow(tmp_path):
    work = copy_workflow(tmp_path)
    files = {name: glue_zip(task) for task, name in NAMES.items()}
    with serving(files) as base:
        (work / "config" / "tiny.yaml").write_text(yaml.safe_dump(tiny_config(base, files)))
        start = time.time()
        run_snakemake("--cores", "2", "--configfile", "config/tiny.yaml", cwd=work, check=True)
        BUILD_SECONDS["GLUE fixture build (test_glue)"] = time.time() - start
    plan = plan_of(work / "config" / "tiny.yaml")
    glue = plan.glue
    assert len(glue.pretrained) == 2 and len(glue.finetuned) == 2 * 2 * 2  # kinds x tasks x seeds
    table = pd.read_csv(work / plan.table_file("glue"))
    assert list(table.columns) == list(TABLE_COLUMNS) and len(table) == 8
    assert set(table["n_dev"]) == {24} and set(table["n_train"]) == {36}
    assert (table[["tp", "fp", "tn", "fn"]].sum(axis=1) == table["n_dev"]).all()
    figure = pd.read_csv(work / "results/glue-tiny/figures/noci_glue.csv")
    assert set(zip(figure["task"], figure["metric"])) == {("cola", "mcc"), ("cola", "f1"), ("rte", "accuracy")}
    claims = pd.read_csv(work / "results/glue-tiny/claims.csv").set_index("id")
    row = claims.loc["noci_glue"]
    assert row["verdict"] in ("holds", "does not hold", "inconclusive") and row["figure"] == "noci_glue"
    assert "cola mcc: shaped" in row["our_value"] and "rte accuracy: shaped" in row["our_value"]
    assert (work / "results/glue-tiny/figures/noci_glue.png").stat().st_size > 0
    checked = run_snakemake("--cores", "1", "check", "--configfile", "config/tiny.yaml", cwd=work, check=True)
    report = (work / "results/glue-tiny/check.txt").read_text()
    assert ": 0 problems" in report, checked.stdout
