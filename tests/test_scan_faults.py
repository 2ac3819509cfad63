"""A learning-rate scan's rounds as faults leave them (issue 55): each round is recomputed from the scouts it
records and each scout from its run, at every round; a damaged round is one line naming its file, in `check`,
`rate-scans` and the workflow alike; `rate-scans` reports the rounds the workflow reads."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import yaml
from depthwidth import rate_scans, rates
from depthwidth.plan.jobs import from_config
from test_faults import CI_CONFIG, ci_plan, cli, write_run


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
def scanned(slice_data, tmp_path) -> tuple[Path, Path, object]:
    """The grid config (a file), and a results folder holding ci's data (the slice's shards) and its scans, run
    round by round as the workflow runs them."""
    results = tmp_path / "results"
    shutil.copytree(slice_data, results / ci_plan().data_dir.removeprefix("results/"))
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


def test_rate_scans_reports_the_round_that_chose_not_a_later_one_left_on_disk(scanned, capsys):
    """Issue 55, case 5: it showed the last roundN.json (x11.3) where the workflow and check use the first
    round that chose (x4)."""
    config, results, plan = scanned
    scan = next(iter(plan.scans.values()))
    final = json.loads((results / scan.round_path(3).removeprefix("results/")).read_text())
    stale = results / scan.round_path(4).removeprefix("results/")  # left by an earlier run of the scan
    stale.write_text(json.dumps({**final, "chosen": 7, "chosen_factor": rates.lattice_factor(7)}))
    row = rate_scans.table(plan, results).set_index("scan").loc[scan.id]
    assert (row["rounds"], row["chosen_factor"]) == (4, rates.lattice_factor(1))
    code, out, _ = cli(capsys, "rate-scans", str(results), "--configfile", str(config))
    assert code == 0 and "11.3" not in out
