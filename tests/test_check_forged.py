"""`check` recomputes what follows from a run's spec (issue 36, items 4 and 9): a forged count, rate, token or
FLOPs figure in metrics.json, a non-embedding N above the total, and a run folder copied to another id are
each one line naming the run and the field (or both ids)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_faults import check_lines, ci_plan, planned_run, write_run

FORGED = {
    "n_params_total": lambda v: v + 1,
    "n_params_nonembedding": lambda v: v * 2,
    "n_params_kaplan": lambda v: v - 1,
    "lr_peak": lambda v: v * 1.5,
    "tokens_seen": lambda v: v * 2,
    "tokens_per_parameter": lambda v: v + 0.5,
    "epochs": lambda v: v * 3,
    "train_flops_estimate": lambda v: v * 1.01,
    "train_flops_matmul": lambda v: v / 2,
    "tokens_per_step": lambda v: v + 1,
    "train_tokens": lambda v: v + 1,
    "steps": lambda v: v + 1,
    "spec_hash": lambda v: "0" * 64,
}


@pytest.fixture
def results(slice_data, tmp_path) -> Path:
    """A results folder holding the ci config's data (the slice's shards under its name), and no run."""
    folder = tmp_path / "results"
    shutil.copytree(slice_data, folder / ci_plan().data_dir.removeprefix("results/"))
    return folder


def run_lines(capsys, results, folder) -> list[str]:
    return [line for line in check_lines(capsys, results)[1] if line.startswith(str(folder))]


def test_an_unforged_run_has_no_problem(results, capsys):
    folder, spec = planned_run(results)
    write_run(folder, spec, 2.5, 2.5)
    assert run_lines(capsys, results, folder) == []


@pytest.mark.parametrize("field", FORGED)
def test_a_forged_derived_field_is_named_with_both_values(results, capsys, field):
    folder, spec = planned_run(results)
    write_run(folder, spec, 2.5, 2.5)
    metrics = json.loads((folder / "metrics.json").read_text())
    true, forged = metrics[field], FORGED[field](metrics[field])
    write_run(folder, spec, 2.5, 2.5, **{field: forged})
    lines = run_lines(capsys, results, folder)
    expected = f"{folder / 'metrics.json'}: {field} {forged!r} recorded, "
    assert [line for line in lines if line.startswith(expected) and line.endswith(f"gives {true!r}")], lines


def test_a_nonembedding_count_above_the_total_is_named(results, capsys):
    folder, spec = planned_run(results)
    write_run(folder, spec, 2.5, 2.5)
    total = json.loads((folder / "metrics.json").read_text())["n_params_total"]
    write_run(folder, spec, 2.5, 2.5, n_params_nonembedding=total + 1)
    lines = run_lines(capsys, results, folder)
    assert f"{folder / 'metrics.json'}: n_params_nonembedding {total + 1} exceeds n_params_total {total}" in lines


def test_a_run_folder_copied_to_another_id_names_both_ids(results, capsys):
    (a, job_a), (b, job_b) = sorted(ci_plan().runs.items())[:2]
    folder_a = results / job_a.folder.removeprefix("results/")
    folder_b = results / job_b.folder.removeprefix("results/")
    write_run(folder_a, job_a.spec, 2.5, 2.5)
    shutil.copytree(folder_a, folder_b)
    assert run_lines(capsys, results, folder_b) == [
        f"{folder_b / 'metrics.json'}: records the spec of run {a}, its folder's id is {b} "
        "(a folder copied or renamed?): retrain it"
    ]
