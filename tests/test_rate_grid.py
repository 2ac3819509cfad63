"""`sweep.lr_grid`: each shape at its own best learning rate. The plan (every scan, its first scouts, every
run it may ask for) and the workflow that runs the scans round by round as checkpoints and trains every
seed at each scan's chosen rate."""

from __future__ import annotations

import copy
import json
import shutil

import pandas as pd
import pytest
import yaml
from conftest import REPO, copy_workflow, readable, run_snakemake
from depthwidth import contracts, rate_scans, rates
from depthwidth.plan.config import ConfigError
from depthwidth.plan.jobs import from_config

DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
DEFAULT.pop("sensitivity")  # the rows' design: its scans without the block's experiments (tests/test_sensitivity.py)
GRID = {"factors": [1, 2, 4]}


def with_grid(config: dict, grid: dict | None) -> dict:
    """`config` with `grid` as its sweep.lr_grid (None: without one, as before the default turned it on)."""
    config = copy.deepcopy(config)
    config["sweep"].pop("lr_grid", None)
    if grid is not None:
        config["sweep"]["lr_grid"] = copy.deepcopy(grid)
    return config


def test_a_disabled_grid_plans_exactly_the_runs_of_no_grid():
    plain = from_config(with_grid(DEFAULT, None))
    off = from_config(with_grid(DEFAULT, {**GRID, "enabled": False}))
    # no scan: the only candidates are the second stage's seeds of each planned run (decide.looks 2)
    assert off.runs.keys() == plain.runs.keys() and not off.scans
    assert off.candidates.keys() == plain.candidates.keys()
    assert all(job.spec["seed"] in off.design.seeds for job in off.candidates.values())
    assert {e: list(r) for e, r in off.sweep.items()} == {e: list(r) for e, r in plain.sweep.items()}


def test_every_shape_of_every_loss_experiment_gets_one_scan_whose_scouts_train_a_seed_no_row_trains():
    plain = from_config(with_grid(DEFAULT, None))
    plan = from_config(with_grid(DEFAULT, GRID))
    scanned = {e: runs for e, runs in plan.sweep.items() if e != "lr_check"}
    # every planned run of those experiments is decided by the scan of its shape, and lr_check by none
    assert all(set(runs) == set(plan.scan_of[e]) for e, runs in scanned.items())
    assert "lr_check" not in plan.scan_of
    shapes = {run.shape for runs in scanned.values() for run in runs.values()}
    assert len(plan.scans) == len(shapes)  # a shape two experiments share is scanned once
    rows = set()  # every run a row may read, whatever rate its scan chooses
    for scan in plan.scans.values():
        assert scan.start == (0, 2, 4) and scan.bounds == (-6, 8) and scan.scout_seed == 2000
        decided = {seed for runs in plan.scan_of.values() for scan_id, seed in runs.values() if scan_id == scan.id}
        assert scan.confirm_seeds == (1000, 1001) and scan.spec["confirm"] == 2
        confirmers = {scan.scout_seed, *decided, *scan.confirm_seeds, *plan.design.seeds}  # and the second stage's
        assert set(scan.runs) == {(k, s) for k in range(-6, 9) for s in confirmers}
        rows |= {scan.runs[(k, seed)] for k in range(-6, 9) for seed in decided}
        # the scout at the recipe's rate is the row's spec but for its seed
        row_spec = plan.job(scan.runs[(0, min(decided))]).spec
        assert plan.job(scan.scout(0)).spec == {**row_spec, "seed": 2000}
        for k in scan.start:
            assert scan.scout(k) in plan.runs
    # no run that chose a rate (a scout, a confirmation seed) is ever a row's, at any rate the scan may choose
    choosers = {run_id for scan in plan.scans.values() for (k, s), run_id in scan.runs.items() if 1000 <= s < 3000}
    assert choosers and rows and not choosers & rows
    # planned: the first scouts, lr_check's runs and the shaped training; no seed waits on a scan's choice
    scouts = {scan.scout(k) for scan in plan.scans.values() for k in scan.start}
    others = set(plain.sweep["lr_check"]) | set(plain.entropy_runs)
    assert set(plan.runs) == scouts | others
    # a scout seed that a row trains is refused, naming the key
    config = with_grid(DEFAULT, {**GRID, "seed": 2})
    with pytest.raises(ConfigError, match="'sweep.lr_grid.seed': seed 2 is a row's seed \\(sweep.seeds\\)"):
        from_config(config)
    config["sweep"]["lr_grid"]["seed"] = 8  # only the literal block trains seed 8
    with pytest.raises(ConfigError, match="'sweep.lr_grid.seed': seed 8 is a row's seed \\(sweep.literal.seeds\\)"):
        from_config(config)


def test_a_block_with_its_own_seeds_gets_a_candidate_for_each_at_every_rate_and_trains_them_at_the_choice():
    config = with_grid(DEFAULT, GRID)
    config["sweep"]["literal"]["seeds"] = [0, 4, 7]
    plan = from_config(config)
    literal = plan.scan_of["literal"]
    assert {seed for _, seed in literal.values()} == {0, 4, 7}
    assert {seed for _, seed in plan.scan_of["design"].values()} == set(config["sweep"]["seeds"])
    for run_id, (scan_id, seed) in literal.items():
        trained = plan.chosen_run("literal", run_id, lambda _: 3)
        assert trained == plan.scans[scan_id].runs[(3, seed)]
        assert plan.job(trained).spec["seed"] == seed
    # the block's scans hold its seeds and the confirmation seeds only, and the run sheet prices each of
    # its seeds once besides the scouts, not the confirmation seeds it may never train
    priced = plan.priced_runs()
    for scan_id in plan.experiment_scans("literal"):
        scan = plan.scans[scan_id]
        assert {s for _, s in scan.runs} == {0, 4, 7, 1000, 1001, 2000, *plan.design.seeds}
        assert {s for (k, s), run_id in scan.runs.items() if run_id in priced} == {0, 4, 7, 2000}
        assert {k for (k, s), run_id in scan.runs.items() if run_id in priced and s == 2000} == set(scan.start)
        assert {s for (k, s), run_id in scan.runs.items() if run_id in priced and k == 2} == {0, 4, 7, 2000}
    del config["sweep"]["literal"]["seeds"]
    assert {seed for _, seed in from_config(config).scan_of["literal"].values()} == set(config["sweep"]["seeds"])


def test_a_round_reads_every_scout_so_far_then_the_confirmation_seeds_where_they_were_asked_for():
    plan = from_config(with_grid(DEFAULT, GRID))
    scan = next(iter(plan.scans.values()))
    assert scan.round_runs(None) == [("scout", k, scan.scout(k)) for k in (0, 2, 4)]
    widen = {"scouts": [{"k": k} for k in (0, 2, 4)], "next": [-2], "confirm": None, "confirmations": []}
    assert scan.round_runs(widen) == [("scout", k, scan.scout(k)) for k in (-2, 0, 2, 4)]
    confirm = {**widen, "next": [], "confirm": 2}
    then = [("scout", k, scan.scout(k)) for k in (0, 2, 4)] + [("confirm", 2, scan.runs[(2, s)]) for s in (1000, 1001)]
    assert scan.round_runs(confirm) == then
    # a later round still reads them (the round before it asked for a scout, not for them)
    later = {**widen, "next": [1], "confirmations": [{"k": 2}, {"k": 2}]}
    assert scan.round_runs(later) == [("scout", k, scan.scout(k)) for k in (0, 1, 2, 4)] + then[3:]
    # the runs of the confirmation seeds are the seeds' own candidates: one spec, one id, trained once
    assert {scan.runs[(2, s)] for s in (1000, 1001)} <= set(plan.candidates)
    # no sweep may train a confirmation seed: its runs would be chosen for by their own losses
    config = with_grid(DEFAULT, GRID)
    config["sweep"]["seeds"] = [0, 1000]
    with pytest.raises(ConfigError, match="'sweep.seeds': seed 1000 is a confirmation seed"):
        from_config(config)
    config["sweep"]["seeds"], config["sweep"]["literal"]["seeds"] = [0, 1], [0, 1001]
    with pytest.raises(ConfigError, match="'sweep.literal.seeds': seed 1001 is a confirmation seed"):
        from_config(config)
    config["sweep"]["literal"]["seeds"], config["sweep"]["lr_grid"]["seed"] = [0, 1], 1000
    with pytest.raises(ConfigError, match="'sweep.lr_grid.seed': seed 1000 is a confirmation seed"):
        from_config(config)


def test_a_candidate_run_is_its_shape_and_seed_at_the_lattice_factor_of_the_recipe_rate():
    plan = from_config(with_grid(DEFAULT, GRID))
    scan = next(iter(plan.scans.values()))
    base = plan.job(scan.runs[(0, 1)]).spec
    for k in (-6, -1, 0, 3, 8):
        job = plan.job(scan.runs[(k, 1)])
        assert job.spec["recipe"]["lr"] == pytest.approx(base["recipe"]["lr"] * rates.lattice_factor(k), rel=1e-5)
        assert {**job.spec, "recipe": {**job.spec["recipe"], "lr": 0}} == {
            **base,
            "recipe": {**base["recipe"], "lr": 0},
        }
        assert readable(job.run_id).endswith("-s1" if k == 0 else f"-lr{rates.lattice_factor(k):g}x-s1")
    # each planned run reads, at a chosen index, its own shape and seed there
    planned, (scan_id, seed) = next(iter(plan.scan_of["design"].items()))
    assert plan.chosen_run("design", planned, lambda _: 3) == plan.scans[scan_id].runs[(3, seed)]
    # lr_check's run at the recipe's rate is the same run, and stays there
    shared = next(r for r in plan.sweep["lr_check"] if r in plan.scan_of["design"])
    assert plan.chosen_run("lr_check", shared, lambda _: 3) == shared


@pytest.mark.parametrize(
    "grid, message",
    [
        ({"factors": [1, 3]}, "config key 'sweep.lr_grid': 3 is not a power of sqrt(2)"),
        (
            {"factors": [1, 2], "bounds": [0.5, 1.41421]},
            "config key 'sweep.lr_grid': factors [1, 2] lie outside bounds",
        ),
        ({"factors": [1, 2], "bounds": [0.3, 4]}, "config key 'sweep.lr_grid': 0.3 is not a power of sqrt(2)"),
        ({"factors": []}, "sweep.lr_grid.factors"),
    ],
)
def test_a_grid_off_the_lattice_is_one_line_naming_its_key(grid, message):
    with pytest.raises(ConfigError) as err:
        from_config(with_grid(DEFAULT, grid))
    assert message in str(err.value) and "\n" not in str(err.value)


# ---------------------------------------------------------------- the workflow

GRID_CONFIG = """
name: gridtest
data:
  { name: english-ci, corpus: builtin, sources: [sotu, kjv], max_bytes_per_source: 400000, val_fraction: 0.25,
    vocab_size: 512 }
sweep:
  recipe:
    { n_ctx: 64, batch_size: 16, token_budget: 20000, lr: 0.003, warmup_tokens: 5000, eval_interval: 50,
      eval_batches: 2, checkpoint_interval: 50 }
  seeds: [0, 1]
  head_dim: 16
  design: { enabled: false, n: [10000, 20000], depths: [1, 2] }
  literal: { enabled: false, n: [2000], depths: [1, 2] }
  ffratio: { enabled: false, n: 50000, n_layer: 2, ratios: [1, 4] }
  headdim: { enabled: false, n: 50000, n_layer: 1, head_dims: [16, 32] }
  baseline: { aspect_ratio: 8, n: [5000, 10000] }
  lr_check: { enabled: false, n: 50000, depths: [1], factors: [0.5, 1, 2] }
  lr_grid: { factors: [0.5, 4], bounds: [0.25, 16] }  # a negative lattice index from the first round
"""


@pytest.fixture(scope="module")
def grid_build(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("grid-build"))
    (work / "config" / "grid.yaml").write_text(GRID_CONFIG)
    run_snakemake("--cores", "2", "--configfile", "config/grid.yaml", cwd=work, check=True)
    return work


@pytest.mark.slow
def test_each_scan_runs_round_by_round_and_every_seed_trains_at_its_choice(grid_build):
    work = grid_build
    plan = from_config(yaml.safe_load(GRID_CONFIG))
    table = pd.read_csv(work / contracts.table_path("gridtest", "sweep_baseline"))
    assert len(table) == 4 and set(table["seed"]) == {0, 1}
    for scan in plan.scans.values():
        folder = work / "results" / "rates" / scan.id
        records = [json.loads((folder / f"round{r}.json").read_text()) for r in range(len(list(folder.iterdir())))]
        assert [r["done"] for r in records] == [False] * (len(records) - 1) + [True]  # rounds stop at the choice
        for earlier, later in zip(records, records[1:]):  # each round adds what the one before asked for
            assert {s["k"] for s in later["scouts"]} == {s["k"] for s in earlier["scouts"]} | set(earlier["next"])
            asked = [earlier["confirm"]] * 2 if earlier["confirm"] is not None else []
            assert [c["k"] for c in later["confirmations"]] == [c["k"] for c in earlier["confirmations"]] + asked
        assert {s["k"] for s in records[0]["scouts"]} == {-2, 4} and records[0]["confirmations"] == []
        final = records[-1]
        # the step is the scan's rule on the scouts and confirmation runs it records
        scouts, confirmations = (
            [rates.Scout(s["k"], s["loss"], s["ok"]) for s in final[key]] for key in ("scouts", "confirmations")
        )
        assert rates.next_step(scouts, scan.bounds, scan.stall, 2, confirmations).chosen == final["chosen"]
        for c in final["confirmations"]:  # each confirmation's loss is one of its seeds' runs there
            losses = [
                json.loads((work / contracts.run_dir(scan.runs[(c["k"], seed)]) / "metrics.json").read_text())[
                    "final_val_loss"
                ]
                for seed in scan.confirm_seeds
            ]
            assert c["loss"] in losses
        rows = table[table["lr_scan"] == scan.id]
        assert len(rows) == 2 and list(rows["lr_factor"]) == pytest.approx([final["chosen_factor"]] * 2)
        assert set(rows["run_id"]) == {scan.runs[(final["chosen"], seed)] for seed in (0, 1)}
        assert set(rows["lr_choice"]) == {final["why"]}
        # each scout's loss is its run's
        for s in final["scouts"]:
            metrics = json.loads((work / contracts.run_dir(scan.scout(s["k"])) / "metrics.json").read_text())
            assert metrics["final_val_loss"] == s["loss"]
    # `rate-scans` says the same, a row a scan
    summary = rate_scans.table(plan, work / "results").set_index("scan")
    for scan in plan.scans.values():
        final = rates.final_round(scan.id, work / "results")
        row = summary.loc[scan.id]
        assert row["done"] and row["chosen_factor"] == final["chosen_factor"] and row["why"] == final["why"]
        assert row["rounds"] == len(list((work / "results" / "rates" / scan.id).iterdir()))
        assert row["tried"].count("x") == len(final["scouts"]) and "+0.0%" in row["tried"]


@pytest.mark.slow
def test_a_built_grid_plans_nothing_more_and_check_passes_and_names_a_lost_round(grid_build, tmp_path):
    work = grid_build
    dry = run_snakemake("-n", "--configfile", "config/grid.yaml", cwd=work, check=True)
    assert "Nothing to be done" in dry.stdout + dry.stderr
    check = run_snakemake_check(work)
    assert check.returncode == 0, check.stdout + check.stderr
    copy = tmp_path / "copy"
    shutil.copytree(work, copy, symlinks=True)
    scan = next((copy / "results" / "rates").iterdir())
    last = max(scan.iterdir(), key=lambda p: int(p.stem.removeprefix("round")))
    last.unlink()
    check = run_snakemake_check(copy)
    assert check.returncode == 1
    assert f"results/rates/{scan.name}: its learning-rate scan has not chosen a rate" in check.stdout


def run_snakemake_check(work):
    import subprocess
    import sys

    from conftest import package_env

    return subprocess.run(
        [sys.executable, "-m", "depthwidth", "check", "results/", "--configfile", "config/grid.yaml"],
        cwd=work,
        env=package_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_clean_counts_every_run_a_scan_may_ask_for_and_its_rounds_as_the_configs_own():
    from depthwidth import clean

    plan = from_config(with_grid(DEFAULT, GRID))
    shared = clean.shared_paths(plan)
    scan = next(iter(plan.scans.values()))
    chosen = plan.job(scan.runs[(3, 2)])  # a run no config plans until the scan chooses 2.83x
    assert chosen.run_id not in plan.runs and chosen.folder in shared["runs"]
    assert contracts.rate_round_path(scan.id, 0).rsplit("/", 1)[0] in shared["rates"]
    # another config that plans the same scan keeps all of it
    other = clean.Others(plans={"config/protocol/other.yaml": plan})
    deleted, kept = clean.to_delete(plan, other)
    assert not any(p.startswith(("results/runs", "results/rates")) for p in deleted)


def test_rate_scans_says_what_the_confirmation_seeds_found_and_whether_the_choice_took_their_rate():
    record = {"scouts": [{"k": 2, "loss": 3.0, "ok": True}], "confirmed": True, "chosen": 2}
    record["confirmations"] = [{"k": 2, "loss": 3.03, "ok": True}, {"k": 2, "loss": 2.97, "ok": True}]
    assert rate_scans.confirmed(record) == "x2: +1.0%, -1.0% (chosen)"
    record["chosen"] = 1
    assert rate_scans.confirmed(record) == "x2: +1.0%, -1.0% (trained; their mean moved the best below)"
    record["confirmations"][1]["ok"], record["confirmed"] = False, False
    assert rate_scans.confirmed(record) == "x2: +1.0%, diverged (stalled: margin kept)"
    record["confirmed"] = None  # read by no round yet
    assert rate_scans.confirmed(record) == "x2: +1.0%, diverged"
    assert rate_scans.confirmed({"scouts": [], "confirmations": []}) == ""
    assert rate_scans.confirmed({"scouts": []}) == ""  # a round written before confirmations


def test_rate_scans_names_a_results_folder_that_is_none(tmp_path, capsys):
    """A mistyped results folder read as scans that never ran (every row 0 rounds, exit 0), a file as a round
    that was unreadable; both are one line naming the folder."""
    from depthwidth.cli import main

    file = tmp_path / "claims.csv"
    file.write_text("id\n")
    for given, said in ((tmp_path / "nope", "no such results folder"), (file, "no such results folder"),
                        (tmp_path, "not a results folder (no data/ or runs/ inside)")):  # fmt: skip
        assert main(["rate-scans", str(given), "--configfile", str(REPO / "config/config.yaml")]) == 1
        out, err = capsys.readouterr()
        assert err.startswith(f"depthwidth rate-scans: error: {given}: {said}") and err.count("\n") == 1 and not out
