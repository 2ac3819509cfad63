"""`check` recomputes what follows from a run's spec (issue 36, items 4 and 9): a forged count, rate, token or
FLOPs figure in metrics.json, a non-embedding N above the total, and a run folder copied to another id are
each one line naming the run and the field (or both ids)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import yaml
from depthwidth import rates
from depthwidth.plan.jobs import from_config
from test_faults import CI_CONFIG, check_lines, ci_plan, cli, planned_run, write_run

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


# --- a learning-rate scan's rounds (issue 55, case 3): each round recomputed from the scouts it records, each
# scout from its run, at every round (not the first scouts alone)
def grid_config() -> dict:
    """ci's data and recipe, two shapes (the baseline at N = 25000 and 50000), each scanned from factors 1 and 4."""
    config = yaml.safe_load(CI_CONFIG.read_text())
    config["name"] = "gridcheck"
    del config["shaped"]
    sweep = config["sweep"]
    for name in ("design", "literal", "ffratio", "headdim", "lr_check"):
        sweep[name]["enabled"] = False
    sweep["baseline"]["n"] = [25000, 50000]
    sweep["lr_grid"] = {"factors": [1, 4], "bounds": [0.25, 16], "confirm": 0}
    return config


def law(k: int) -> float:
    return 3.0 * math.exp(0.03 * (k / 2 - 0.6) ** 2)  # best at 2^0.6: the scan widens down, then chooses x1.41


@pytest.fixture
def scanned(results, tmp_path) -> tuple[Path, Path, object]:
    """The grid config (a file), and its scans run round by round into `results` as the workflow runs them."""
    config = tmp_path / "grid.yaml"
    config.write_text(yaml.safe_dump(grid_config()))
    plan = from_config(grid_config())
    for scan in plan.scans.values():
        chosen = run_scan(results, plan, scan)
        job = plan.job(scan.runs[(chosen, 0)])  # the seed the table reads, at the chosen rate
        write_run(results / job.folder.removeprefix("results/"), job.spec, law(chosen), law(chosen))
    return config, results, plan


def run_scan(results: Path, plan, scan) -> int:
    """Every round of a scan, each a scout's run, as the workflow trains them; the lattice index it chose."""
    trained, previous, round_ = {}, None, 0
    while True:
        for _, k, run_id in scan.round_runs(previous):
            if k not in trained:
                job = plan.job(run_id)
                write_run(results / job.folder.removeprefix("results/"), job.spec, law(k), law(k))
                trained[k] = rates.Scout(k, law(k), True)
        step = rates.next_step(list(trained.values()), scan.bounds, scan.stall)
        record = json.loads(json.dumps(rates.round_record(scan.spec, list(trained.values()), step)))
        path = results / scan.round_path(round_).removeprefix("results/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
        if record["done"]:
            return record["chosen"]
        previous, round_ = record, round_ + 1


def scan_lines(capsys, config: Path, results: Path) -> list[str]:
    """check's lines about the scan's rounds and runs."""
    code, out, err = cli(capsys, "check", str(results), "--configfile", str(config))
    assert not err, err
    lines = [line.removeprefix("  - ") for line in out.splitlines()[1:]]
    return [line for line in lines if line.startswith((f"{results}/rates", f"{results}/runs"))]


def test_a_scan_as_its_rule_ran_it_has_no_problem(scanned, capsys):
    config, results, plan = scanned
    scan = next(iter(plan.scans.values()))
    rounds = rates.read_rounds(scan.id, results, scan.spec)
    assert [r["next"] for r in rounds] == [[-2], [2], [3], []] and rounds[-1]["chosen"] == 1
    assert scan_lines(capsys, config, results) == []


def test_a_forged_choice_in_the_final_round_is_named(scanned, capsys):
    config, results, plan = scanned
    scan = next(iter(plan.scans.values()))
    final = results / scan.round_path(3).removeprefix("results/")
    record = json.loads(final.read_text())
    final.write_text(json.dumps({**record, "chosen": 0, "chosen_factor": 1.0}))
    assert scan_lines(capsys, config, results) == [
        f"{final}: chosen 0 recorded, the scan's rule gives 1 on the scouts it records; "
        "delete it to run the round again"
    ]


def test_a_later_rounds_scout_forged_in_its_metrics_or_in_the_round_is_named(scanned, capsys):
    config, results, plan = scanned
    scan = next(iter(plan.scans.values()))
    # the scout round 0 asked for, read from round 1 on (no table reads it: the scan chose x1.41)
    scout = results / plan.job(scan.scout(-2)).folder.removeprefix("results/")
    write_run(scout, plan.job(scan.scout(-2)).spec, 2.9, law(-2))
    final = results / scan.round_path(3).removeprefix("results/")
    lines = scan_lines(capsys, config, results)
    assert f"{scout / 'metrics.json'}: final_val_loss 2.9 is not the last val_loss of curve.csv ({law(-2)})" in lines
    assert f'{final}: scouts[0] {{"k": -2, "loss": {law(-2)}, "ok": true}} recorded, the runs the round read give ' \
        f'{{"k": -2, "loss": 2.9, "ok": true}}' in lines  # fmt: skip


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda r: {**r, "chosen": 99}, "chosen 99 is not a lattice index within the bounds [-4, 8]"),
        (lambda r: {k: v for k, v in r.items() if k != "done"}, "lacks the fields ['done']"),
        (lambda r: json.dumps(r)[:200], "not a readable round (Expecting "),
    ],
    ids=["chosen-99", "no-done", "truncated"],
)
def test_a_damaged_round_is_one_line_naming_its_file(scanned, capsys, damage, reason):
    """Issue 55, case 10: `KeyError: (99, 0)`, `KeyError: 'done'`, or `Expecting ',' delimiter` naming no file."""
    config, results, plan = scanned
    scan = next(iter(plan.scans.values()))
    final = results / scan.round_path(3).removeprefix("results/")
    damaged = damage(json.loads(final.read_text()))
    final.write_text(damaged if isinstance(damaged, str) else json.dumps(damaged))
    (line,) = [line for line in scan_lines(capsys, config, results) if "/rates/" in line]
    assert line.startswith(f"{final}: {reason}") and line.endswith("; delete it to run the round again")
