"""A learning-rate scan's rounds as faults leave them (issue 55): each round is recomputed from the scouts it
records and each scout from its run, at every round; a damaged round is one line naming its file, in `check`,
`rate-scans` and the workflow alike; `rate-scans` reports the rounds the workflow reads."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import run_snakemake
from depthwidth import rate_scans, rates
from depthwidth.cli import main as cli_main
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
        f"{final}: chosen 0 recorded, the scan's rule gives 1 on the scouts it records; {rates.ADVICE}"
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
    assert line.startswith(f"{final}: {reason}") and line.endswith(f"; {rates.ADVICE}")


def test_a_scan_killed_before_its_first_round_is_a_problem_check_names(scanned, capsys):
    """Issue 55, a kill during a scan round (tried): snakemake killed while round 0 was being written leaves a scan
    with no round at all; `check` ended in `[Errno 2] No such file or directory: '.../round0.json'` instead of
    listing the scan (it read round 0 of a scan with no round)."""
    config, results, plan = scanned
    scan = next(iter(plan.scans.values()))
    folder = results / scan.round_path(0).removeprefix("results/").rsplit("/", 1)[0]
    shutil.rmtree(folder)  # as a kill before the first round's rename leaves it
    assert scan_lines(capsys, config, results) == [f"{folder}: its learning-rate scan has not chosen a rate"]


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


# --- the workflow on scans whose every scout diverges (ci's data, a learning rate 10^7 times too high)
def diverged_config() -> dict:
    """test_rate_grid's grid (two shapes from 0.5x and 4x, ci's corpus) at a learning rate 10^7 times too high."""
    from test_rate_grid import GRID_CONFIG

    config = yaml.safe_load(GRID_CONFIG)
    config["name"] = "griddiv"
    config["sweep"]["recipe"]["lr"] = 50000
    config["sweep"]["seeds"] = [0]
    return config


DIVERGED = diverged_config()
TABLE = "results/griddiv/tables/sweep_baseline.csv"


@pytest.fixture(scope="module")
def diverged(ci_build, tmp_path_factory) -> Path:
    """A copy of the ci build (for its corpus) that ran DIVERGED's scans and built their table: every scout and
    every seed diverges, `"final_val_loss": null`, as train writes it."""
    work = tmp_path_factory.mktemp("diverged") / "work"
    subprocess.run(["cp", "-a", str(ci_build), str(work)], check=True)
    (work / "config" / "griddiv.yaml").write_text(yaml.safe_dump(DIVERGED))
    run_snakemake("--cores", "2", TABLE, "--configfile", "config/griddiv.yaml", cwd=work, check=True)
    return work


def final_rounds(work: Path) -> list[Path]:
    plan = from_config(DIVERGED)
    return [
        work / scan.round_path(len(rates.read_rounds(scan.id, work / "results")) - 1) for scan in plan.scans.values()
    ]


def test_scans_whose_scouts_all_diverge_choose_and_their_table_is_built(diverged):
    """Issue 55, case 1: a diverged scout's null loss was a TypeError in every round-0 job."""
    table = pd.read_csv(diverged / TABLE)
    assert len(table) == 2 and set(table["status"]) == {"diverged"} and table["final_val_loss"].isna().all()
    for path in final_rounds(diverged):
        record = json.loads(path.read_text())
        assert record["why"] == rates.NONE_FINISHED and record["chosen"] == -4  # the lower bound, x0.25
        assert all(s["loss"] is None and not s["ok"] for s in record["scouts"])


def test_a_round_the_table_reads_is_its_input(diverged, tmp_path):
    """Issue 55, case 4: the table read each scan's final round from disk without declaring it, so a round
    rewritten since (its excess changed, its choice not) left the old lr_excess_pct, and `snakemake -n` said
    there was nothing to do."""
    work = tmp_path / "work"
    subprocess.run(["cp", "-a", str(diverged), str(work)], check=True)
    assert "Nothing to be done" in run_snakemake("-n", TABLE, "--configfile", "config/griddiv.yaml", cwd=work).stdout
    final = final_rounds(work)[0]
    # written again, its bytes changed (snakemake skips an input whose checksum it recorded and that kept it)
    final.write_text(json.dumps(json.loads(final.read_text())))
    dry = run_snakemake("-n", TABLE, "--configfile", "config/griddiv.yaml", cwd=work, check=True)
    assert "rule sweep_table:" in dry.stdout or "localrule sweep_table:" in dry.stdout


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda r: json.dumps({**r, "chosen": 99}), "chosen 99 is not a lattice index within the bounds [-4, 8]"),
        (lambda r: json.dumps({k: v for k, v in r.items() if k != "done"}), "lacks the fields ['done']"),
        (lambda r: json.dumps(r)[:120], "not a readable round ("),
    ],
    ids=["chosen-99", "no-done", "truncated"],
)
def test_snakemake_names_a_damaged_round_in_one_line(diverged, tmp_path, damage, reason):
    """Issue 55, case 10: `KeyError: (99, 0)` and `KeyError: 'done'` in `snakemake -n`, a traceback for a
    truncated file."""
    work = tmp_path / "work"
    subprocess.run(["cp", "-a", str(diverged), str(work)], check=True)
    final = final_rounds(work)[0]
    final.write_text(damage(json.loads(final.read_text())))
    result = run_snakemake("-n", TABLE, "--configfile", "config/griddiv.yaml", cwd=work)
    named = [line for line in result.stderr.splitlines() if str(final.relative_to(work)) in line]
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(named) == 1 and named[0].startswith(f"depthwidth: {final.relative_to(work)}: {reason}")
    assert named[0].endswith(f"; {rates.ADVICE}")
    # what it says to do: the rounds run again from their runs, and the round is whole (no figure and no decide job,
    # which runs the figure's code: with every run diverged there is nothing to draw)
    again = ["--cores", "1", "--forcerun", "rate_scan", TABLE, "--omit-from", "figure", "decide"]
    run_snakemake(*again, "--configfile", "config/griddiv.yaml", cwd=work, check=True)
    assert rates.read_round(final)["chosen"] == -4


def test_the_scan_reads_a_diverged_run_as_train_writes_it(slice_data, tmp_path):
    """Issue 55, case 1, end to end: a run trained at a rate that diverges (train writes `"final_val_loss": null`)
    is a scout that did not finish; its round says so (it was a TypeError)."""
    from test_faults import tiny_spec

    spec = tiny_spec(slice_data, steps=20, lr=5e4)
    run = tmp_path / "run"
    assert cli_main(["train", "--spec-json", json.dumps(spec), "--out", str(run), "--no-progress"]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert (metrics["status"], metrics["final_val_loss"]) == ("diverged", None)
    out = tmp_path / "round0.json"
    scan = json.dumps({"id": "L1-d16", "bounds": [-6, 8], "stall": 0.04, "confirm": 2})
    assert cli_main(["rate-scan", "--scan-json", scan, f"--scout=0={run}/metrics.json", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["scouts"] == [{"k": 0, "loss": None, "ok": False}] and record["next"] == [-2]
