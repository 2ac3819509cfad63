"""The pre-registered second stage: its design (plan/second.py), the seeds it reserves in the plan, and what it asks
for (claims/second.py), each against numbers worked by hand."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import pytest
import yaml
from conftest import REPO
from depthwidth.claims import second
from depthwidth.claims.decide import Decision
from depthwidth.cli import main as cli_main
from depthwidth.contracts import ENTROPY_TABLE, SDE_TERMINAL
from depthwidth.plan import jobs
from depthwidth.plan import second as design_of
from depthwidth.plan.config import ConfigError


def raw(name: str = "config", **decide) -> dict:
    config = yaml.safe_load((REPO / "config" / f"{name}.yaml").read_text())
    return {**config, "decide": {**config.get("decide", {}), **decide}}


# ---------------------------------------------------------------- the design


def test_the_levels_split_alpha_between_the_looks_and_one_look_spends_it_all():
    one = jobs.from_config(raw(looks=1)).design
    two = jobs.from_config(raw(looks=2)).design
    assert one.levels == (0.95,) and one.seeds == ()
    assert two.levels == (0.99, 0.96) and two.one_look == 0.95
    assert two.seeds == tuple(range(3000, 3006))
    split = jobs.from_config(raw(looks=2, alpha=0.1, first_alpha=0.02, max_seeds_per_shape=2, first_seed=50)).design
    assert split.levels == (0.98, 0.92) and split.seeds == (50, 51)
    # the design is named by its block: any change of it is another design
    assert one.digest != two.digest != split.digest
    # its price is the config's block, defaults filled in, and a part of the design
    cheaper = jobs.from_config(raw(looks=2, price={"startup_seconds": 0.5})).design
    assert cheaper.price.block == {**two.price.block, "startup_seconds": 0.5} and cheaper.digest != two.digest
    assert cheaper.price.run_minutes(0, 1, 0) == pytest.approx(0.5 / 60)


def test_a_first_look_that_spends_all_of_alpha_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"decide.first_alpha.*spends all of alpha"):
        jobs.from_config(raw(looks=2, first_alpha=0.05))
    jobs.from_config(raw(looks=1, first_alpha=0.05))  # one look never spends it


def test_a_reserved_seed_that_a_block_plans_is_refused_naming_the_block():
    with pytest.raises(ConfigError, match=r"sweep.literal.seeds.*seed 3 is reserved"):
        jobs.from_config(raw(looks=2, first_seed=3))
    with pytest.raises(ConfigError, match=r"sweep.lr_grid.seed.*seed 2000 is reserved"):
        jobs.from_config(raw(looks=2, first_seed=1995))


# ---------------------------------------------------------------- the seeds in the plan


@pytest.fixture(scope="module")
def two_looks() -> jobs.Plan:
    return jobs.from_config(raw(looks=2))


def test_each_shape_has_its_reserved_seeds_at_every_rate_its_scan_may_choose(two_looks):
    plan = two_looks
    run_id = next(iter(plan.sweep["design"]))
    scan_id, seed = plan.scan_of["design"][run_id]
    scan = plan.scans[scan_id]
    for k in range(scan.bounds[0], scan.bounds[1] + 1):
        trained = scan.runs[(k, seed)]
        fresh = plan.second_runs(trained, 3)
        assert [plan.job(r).spec["seed"] for r in fresh] == [3000, 3001, 3002]
        # the same shape at the same rate: only the seed differs
        for r in fresh:
            assert {**plan.job(r).spec, "seed": seed} == plan.job(trained).spec
        assert {plan.shape_cell(r) for r in [trained, *fresh]} == {f"{scan_id}@{k}"}
    assert set(plan.all_run_ids()) >= set(plan.second_runs(scan.runs[(0, seed)], 6))
    with pytest.raises(ValueError, match="7 second-stage seeds asked, the design reserves 6"):
        plan.second_runs(scan.runs[(0, seed)], 7)


def test_each_attention_kind_has_its_reserved_seeds_at_the_top_rate_named_by_its_least_seed(two_looks):
    plan = two_looks
    training = plan.config["shaped"]["training"]
    top, least = max(training["learning_rates"]), min(training["seeds"])
    named = {}  # attention kind -> its planned run at the top rate on the least seed (decide.fit_entropy's name)
    for run_id in plan.entropy_runs:
        spec = plan.job(run_id).spec
        if spec["recipe"]["lr"] == top and spec["seed"] == least:
            named[spec["model"]["attention"]] = run_id
    assert sorted(named) == sorted(training["attentions"])
    for run_id in named.values():
        fresh = plan.second_runs(run_id, 3)
        assert [plan.job(r).spec for r in fresh] == [{**plan.job(run_id).spec, "seed": s} for s in (3000, 3001, 3002)]
        assert {plan.shape_cell(r) for r in [run_id, *fresh]} == {run_id} and set(fresh) <= set(plan.all_run_ids())
    # what the second stage asked for: the entropy table reads the kinds' fresh seeds after its planned runs; a sweep
    # shape in the same ask is the sweep tables' (and the planned runs of other rates or seeds name no kind)
    standard, shaped = named["standard"], named["shaped"]
    sweep_run = next(iter(plan.sweep["design"]))
    other = next(r for r in plan.entropy_runs if plan.job(r).spec["recipe"]["lr"] != top)
    asked = {standard: 2, shaped: 1, sweep_run: 4, other: 3}
    assert plan.entropy_second(asked) == [*plan.second_runs(standard, 2), *plan.second_runs(shaped, 1)]
    specs = plan.entropy_specs(asked)
    assert list(specs) == [*plan.entropy_runs, *plan.entropy_second(asked)] and plan.entropy_specs() == {
        r: plan.job(r).spec for r in plan.entropy_runs
    }
    with pytest.raises(KeyError, match=other):
        plan.second_runs(other, 1)


def test_each_sample_job_has_its_spec_on_the_reserved_seeds_named_as_the_sde_row_names_it(two_looks):
    plan = two_looks
    names = plan.sample_jobs()
    blocks, widths = plan.config["shaped"]["simulation"]["blocks"], plan.config["shaped"]["simulation"]["widths"]
    assert set(names) == {f"{b}-{s}" for b in blocks for s in ("sde", "sde-half", *(f"n{w}" for w in widths))}
    for name, sim_id in names.items():
        fresh = plan.second_simulations(name, 2)
        expected = [{**plan.simulation(sim_id).spec, "seed": s} for s in (3000, 3001)]
        assert [plan.simulation(s).spec for s in fresh] == expected
        assert set(fresh) <= set(plan.all_simulation_ids()) and not set(fresh) & set(plan.simulations)
    asked = {"attention-n16": 2, "both-sde": 1, next(iter(plan.sweep["design"])): 3}  # a run's ask is the sweep's
    fresh = [*plan.second_simulations("attention-n16", 2), *plan.second_simulations("both-sde", 1)]
    assert plan.sde_second(asked) == fresh
    assert plan.sde_samples(asked) == plan.sample_tables() + [plan.simulation(s).output for s in fresh]
    with pytest.raises(KeyError, match="trajectory"):
        plan.second_simulations("trajectory", 1)
    one = jobs.from_config(raw(looks=1))
    assert not one.sim_candidates and set(one.simulations) == set(plan.simulations)


def test_a_shaped_training_seed_the_second_stage_reserves_is_refused_naming_the_key():
    config = raw(looks=2)
    config["shaped"]["training"]["seeds"] = [0, 3001]
    with pytest.raises(ConfigError, match=r"shaped.training.seeds.*seed 3001 is reserved for the second stage"):
        jobs.from_config(config)
    assert jobs.from_config({**config, "decide": {**config["decide"], "looks": 1}}).entropy_runs
    with pytest.raises(ConfigError, match=r"config key 'seed'.*seed 3002 is reserved for the second stage"):
        jobs.from_config({**raw(looks=2), "seed": 3002})  # the simulations' seed


def test_one_look_plans_no_seed_more_and_the_runs_the_first_stage_trains_are_unchanged(two_looks):
    one = jobs.from_config(raw(looks=1))
    assert set(one.runs) == set(two_looks.runs) and one.sweep == two_looks.sweep
    assert set(one.candidates) < set(two_looks.candidates)
    assert not any(job.spec["seed"] >= 3000 for job in one.candidates.values())


def test_a_table_reads_the_fresh_seeds_of_the_shapes_it_shares_once_at_its_chosen_rate(two_looks):
    plan = two_looks
    chosen = {scan: 1 for scan in plan.scans}.get
    design = plan.chosen_plan("design", chosen)
    named = next(iter(design))  # a seed-0 run of the design's first shape, at its chosen rate
    other = next(r for r, row in design.items() if plan.shape_cell(r) == plan.shape_cell(named) and r != named)
    rows = plan.second_plan("design", chosen, {named: 2, other: 3})  # two runs naming one shape: the larger count
    assert sorted(row["seed"] for row in rows.values()) == [3000, 3001, 3002]
    assert list(rows) == plan.second_runs(named, 3)
    assert all(plan.shape_cell(r) == plan.shape_cell(named) for r in rows)
    assert {row["lr_factor"] for row in rows.values()} == {design[named]["lr_factor"]}
    # a table without the shape reads none of its seeds
    shapes_of = {plan.shape_cell(r) for r in plan.chosen_plan("headdim", chosen)}
    assert (plan.shape_cell(named) in shapes_of) == bool(plan.second_plan("headdim", chosen, {named: 2}))


def test_without_a_scan_the_fresh_seeds_are_the_planned_spec_at_each_reserved_seed():
    config = raw("ci", looks=2)
    plan = jobs.from_config(config)
    assert not plan.scans
    run_id = next(iter(plan.sweep["design"]))
    fresh = plan.second_runs(run_id, 2)
    assert [plan.job(r).spec for r in fresh] == [{**plan.job(run_id).spec, "seed": s} for s in (3000, 3001)]
    rows = plan.second_plan("design", lambda scan: 0, {run_id: 2})
    assert list(rows) == fresh


# ---------------------------------------------------------------- what the second stage asks for


def decision(claim: str, seeds: int | None, runs: dict[str, tuple[int, float]], **kw) -> Decision:
    """An inconclusive row whose ladder found `seeds` per shape; `runs`: the run naming each shape -> (its seeds now,
    its minutes a run)."""
    now = [n for n, _ in runs.values()]
    minutes = None if seeds is None else sum((seeds - n) * m for n, m in runs.values() if seeds > n)
    fields = {"verdict": "inconclusive", "seeds_now": min(now), "shapes": len(runs), "undecidable": False}
    fields |= {"seeds": seeds, "job_minutes": minutes, "shape_runs": tuple(runs)}
    fields |= {"shape_seeds": tuple(now), "shape_minutes": tuple(m for _, m in runs.values())}
    return Decision(claim, **(fields | kw))


def test_rows_are_taken_cheapest_first_sharing_shapes_within_the_budget():
    a = decision("a", 5, {"s1": (3, 2.0), "s2": (3, 1.0)})  # 2 + 2 seeds: 6 minutes
    b = decision("b", 4, {"s2": (3, 1.0), "s3": (3, 1.0)})  # 1 + 1: 2 minutes, first
    c = decision("c", 9, {"s4": (3, 5.0)})  # 6 seeds: 30 minutes, over what is left
    done = Decision("d", "holds", 3, 2, False)
    blocked = Decision("e", "inconclusive", 3, 2, True)
    unknown = Decision("f", "inconclusive", 1, 2, False, noise_known=False)
    far = decision("g", None, {"s5": (3, 1.0)})
    greedy = decision("h", 10, {"s6": (3, 0.1)})  # 7 fresh seeds: more than the design allows
    found = second.allocate([a, b, c, done, blocked, unknown, far, greedy], budget=10.0, most=6)
    reasons = {ask.claim: ask.reason for ask in found.asks}
    assert reasons == {
        "a": second.ASKED, "b": second.ASKED, "c": second.OVER_BUDGET, "d": second.DECIDED,
        "e": second.UNDECIDABLE, "f": second.NOISE_UNKNOWN, "g": second.NO_COUNT, "h": second.TOO_MANY,
    }  # fmt: skip
    # b first: s2 and s3 one seed each (2 minutes); then a: s1 two seeds, s2 one more (it has one of b's): 5 minutes
    assert found.shapes == {"s1": 2, "s2": 2, "s3": 1}
    asks = {ask.claim: ask for ask in found.asks}
    assert (asks["b"].runs, asks["b"].job_minutes) == (2, 2.0)
    assert (asks["a"].runs, asks["a"].job_minutes) == (3, 5.0)
    assert found.job_minutes == 7.0 and found.runs == 5 and found.budget == 10.0
    assert [ask.claim for ask in found.asks] == list("abcdefgh")  # in the order given


def test_a_budget_of_nothing_asks_for_nothing_and_a_tie_goes_by_claim_id():
    tied = [decision("y", 4, {"s1": (3, 1.0)}), decision("x", 4, {"s2": (3, 1.0)})]
    assert second.allocate(tied, budget=0.0, most=6).shapes == {}
    assert second.allocate(tied, budget=1.0, most=6).shapes == {"s2": 1}  # x before y: one minute each


def test_the_cli_writes_what_the_plan_reads_back(tmp_path):
    from depthwidth.claims import decide

    path = tmp_path / "kaplan.json"
    record = decide.to_json([decision("a", 5, {"s1": (3, 2.0)})], sims=40, most=24, seed=0)
    path.write_text(json.dumps(record))
    out = tmp_path / "second-stage.json"
    argv = ["second-stage", "--decision", str(path), "--budget", "30", "--most", "6", "--design", "d1"]
    assert cli_main([*argv, "--out", str(out)]) == 0
    assert design_of.asked(out) == {"s1": 2}
    allocation, made_by = second.read(out)
    assert made_by == "d1" and allocation.job_minutes == 4.0 and allocation.asks[0].reason == second.ASKED
    assert copy.deepcopy(allocation) == allocation
    # a config whose figures read no sweep table has no decide job: no --decision, an empty stage
    assert cli_main([*argv[:1], *argv[3:], "--out", str(out)]) == 0
    assert design_of.asked(out) == {} and second.read(out)[0].asks == ()


def test_two_looks_add_the_first_stage_the_looks_and_the_second_stage_to_the_targets(two_looks):
    one = jobs.from_config(raw(looks=1))
    added = set(two_looks.targets()) - set(one.targets())
    first = {two_looks.first_table(path) for path in two_looks.sweep_tables()}
    entropy = two_looks.first_table(two_looks.table_file(ENTROPY_TABLE))
    terminal = two_looks.first_table(two_looks.table_file(SDE_TERMINAL))
    assert added == first | {entropy, terminal, design_of.second_stage_path("default")}
    assert two_looks.decisions_file() in one.targets()  # the audit trail is written with one look too
    assert set(two_looks.decide_tables("kaplan_fig6")) <= first and not set(one.decide_tables("kaplan_fig6")) & first
    # the entropy row's decide job reads its own table alone (as the first stage left it), no lr_check
    assert two_looks.decide_tables("shaped_entropy") == [entropy]
    assert one.decide_tables("shaped_entropy") == [one.table_file(ENTROPY_TABLE)]
    assert two_looks.decide_tables("shaped_sde_convergence") == [terminal]
    # the figures whose data grows are drawn at their last look's level, the others (the trajectory) at the one look's
    assert two_looks.figure_level("kaplan_fig6") == 0.96 and two_looks.figure_level("shaped_entropy") == 0.96
    assert two_looks.figure_level("shaped_sde_convergence") == 0.96 and one.figure_level("kaplan_fig6") == 0.95
    assert two_looks.figure_level("shaped_rank_collapse") == 0.95
    growing = two_looks.growing_figures()
    assert growing == [*two_looks.decide_figures(), "shaped_entropy", "shaped_sde_convergence"]
    assert not {"shaped_entropy", "shaped_sde_convergence"} & set(two_looks.decide_figures())
    assert len(two_looks.look_files()) == 2 * len(growing) == len(one.look_files())
    assert two_looks.tilt_option("kaplan_fig6") and two_looks.tilt_option("shaped_entropy") == ""  # no depths compared


def test_a_design_whose_look_would_sit_outside_its_levels_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"decide.alpha.*level 0.5 is not between 0.5 and 1"):
        jobs.from_config(raw(looks=1, alpha=0.5))
    with pytest.raises(ConfigError, match=r"decide.first_alpha.*level 1 is not between"):
        jobs.from_config(raw(looks=2, first_alpha=1e-14))


def test_a_shape_without_a_price_is_refused_naming_its_claim_and_run():
    priced = decision("a", 5, {"s1": (3, float("nan"))})
    with pytest.raises(ValueError, match=r"claim a: shape s1 has no price \(its table.s tokens_seen"):
        second.allocate([priced], budget=30.0, most=6)
    assert second.allocate([replace(priced, verdict="holds")], budget=30.0, most=6).shapes == {}  # not priced


def test_a_second_stage_file_without_its_seeds_is_named(tmp_path):
    path = tmp_path / "second-stage.json"
    path.write_text(json.dumps({"asks": []}))
    with pytest.raises(ValueError, match=r"second-stage.json: no 'shapes' mapping"):
        design_of.asked(path)


def test_without_a_scan_a_shape_is_one_cell_whatever_the_seed_that_names_it():
    plan = jobs.from_config(raw("ci", looks=2))
    design = list(plan.sweep["design"])
    cells = {plan.shape_cell(r) for r in design}
    assert len(cells) == len(design)  # ci: one seed per shape
    run_id = design[0]
    assert {plan.shape_cell(r) for r in [run_id, *plan.second_runs(run_id, 6)]} == {plan.shape_cell(run_id)}
    assert plan.shape_cell(run_id) != run_id  # named by the shape and its spec without the seed, not by a run


def test_the_ask_records_the_seeds_found_and_a_shape_named_twice_takes_its_larger_want():
    a = decision("a", 5, {"s1": (3, 1.0)})
    over = decision("o", 9, {"s9": (3, 10.0)})
    found = second.allocate([a, over], budget=5.0, most=6)
    asks = {ask.claim: ask for ask in found.asks}
    assert (asks["a"].seeds, asks["o"].seeds) == (5, 9) and asks["o"].reason == second.OVER_BUDGET
    # one shape listed twice (seeds 2 and 3 in hand): it wants the larger count, 5 - 2 = 3
    twice = replace(a, shape_runs=("s1", "s1"), shape_seeds=(2, 3), shape_minutes=(1.0, 1.0))
    assert second.allocate([twice], budget=30.0, most=6).shapes == {"s1": 3}
    # a shape that has the seeds already asks for none; a later row that wants fewer of a shape adds none of it
    full = decision("f", 4, {"s1": (3, 1.0), "s2": (4, 1.0)})
    assert second.allocate([full], budget=30.0, most=6).shapes == {"s1": 1}
    first, later = decision("b", 6, {"s2": (3, 1.0)}), decision("c", 4, {"s2": (3, 1.0), "s3": (3, 5.0)})
    found = second.allocate([first, later], budget=30.0, most=6)  # b (3 minutes) before c (6)
    assert found.shapes == {"s2": 3, "s3": 1} and [(a.runs, a.job_minutes) for a in found.asks] == [(3, 3.0), (1, 5.0)]
    greedy = second.allocate([decision("h", 10, {"s6": (3, 0.1)})], budget=30.0, most=6).asks[0]
    assert (greedy.reason, greedy.seeds) == (second.TOO_MANY, 10)
    # a row of no shapes asks for nothing, and its fields must agree in length
    empty = replace(a, shape_runs=(), shape_seeds=(), shape_minutes=())
    assert second.allocate([empty], budget=30.0, most=6).asks[0] == second.Ask("a", second.ASKED, 5, 0, 0.0)
    with pytest.raises(ValueError):
        second.allocate([replace(a, shape_minutes=())], budget=30.0, most=6)
    with pytest.raises(ValueError):
        second.allocate([replace(a, shape_seeds=())], budget=30.0, most=6)


@pytest.mark.parametrize("text", ["[1, 2]", '{"a": 1}', '{"decisions": [1]}'])
def test_a_decision_or_second_stage_file_of_another_shape_is_one_line_naming_it(tmp_path, capsys, text):
    """second-stage --decision and claims --decision/--second-stage name a JSON file that is not what they read (a
    TypeError's or KeyError's traceback)."""
    path = tmp_path / "other.json"
    path.write_text(text)
    argv = ["second-stage", "--decision", str(path), "--budget", "30", "--most", "6", "--design", "d1"]
    assert cli_main([*argv, "--out", str(tmp_path / "second-stage.json")]) == 1
    claims = ["claims", "--scale-note", "x", "--out", str(tmp_path / "claims.csv")]
    assert cli_main([*claims, "--decision", str(path)]) == 1
    assert cli_main([*claims, "--second-stage", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" (")[0] for line in err] == [
        f"depthwidth second-stage: error: {path}: not a `decide --json-out` file",
        f"depthwidth claims: error: {path}: not a `decide --json-out` file",
        f"depthwidth claims: error: {path}: not a `second-stage` file",
    ]
    assert not any(tmp_path.glob("claims*")) and not (tmp_path / "second-stage.json").exists()
