"""What would decide a row (claims/decide.py): the noise model it fits, its redraws, and its answer against planted
truths, checked by drawing the planted tables at the seeds it names (an independent computation: the planted law
and its noise, not the fitted model)."""

from __future__ import annotations

import argparse
import io
import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import planted
import pytest
from depthwidth import fits, stalls
from depthwidth.claims import decide, registry, wording
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE
from depthwidth.cli import main as cli_main
from depthwidth.contracts import SDE_TERMINAL, sweep_table
from depthwidth.plan import jobs, shaped
from test_verdicts import terminal_frame

FFRATIO = registry.BY_ID["kaplan_ffratio"]
FF_TABLES = (sweep_table("ffratio"), sweep_table("baseline"))


@pytest.fixture(scope="module")
def basin(tmp_path_factory) -> dict[str, pd.DataFrame]:
    """The default's sweep tables planted on Kaplan's basin (3 seeds, the planted seed sd), by table id."""
    paths = planted.write_tables(tmp_path_factory.mktemp("basin"), planted.kaplan_basin)
    return {table_id: pd.read_csv(path) for table_id, path in paths.items()}


# The registered price (config decide.price's defaults; docs/protocol-choices.md), written out: seconds of a run are
# 1.5 + tokens x (9.7e-6 + 2.7e-6 x layers) + FLOPs / 3.2e10, of a sample job 1.5 + samples x steps x 3e-6 (SDE) or
# 1e-5 (finite network)
PRICE = decide.PRICE


def priced_run(tokens: float, layers: float, flops: float) -> float:
    return (1.5 + tokens * (9.7e-6 + 2.7e-6 * layers) + flops / 3.2e10) / 60


def synthetic(shapes: int, seeds: int, sd: float, stalls_at: dict[int, float] | None = None) -> pd.DataFrame:
    """A sweep table of `shapes` shapes (depth 1 to `shapes`) of `seeds` seeds each, ln(loss) 1 + shape / 100 + sd z,
    the seeds named in `stalls_at` (row index -> ln excess) raised by that much, flagged as sweep-table flags; each
    run of 1e6 tokens and 3.2e11 training FLOPs a layer (priced at 11.2 + 12.7 x layers seconds), each shape's wall
    time another (which the price must not read)."""
    rng = np.random.default_rng(0)
    rows = []
    for shape in range(shapes):
        for seed in range(seeds):
            log = 1 + shape / 100 + sd * rng.standard_normal()
            log += (stalls_at or {}).get(len(rows), 0.0)
            rows.append(
                {"run_id": f"r{shape}-{seed}", "seed": seed, "n_layer": shape + 1, "d_model": 32, "n_head": 1,
                 "d_head": 32, "d_ff": 128, "lr_factor": 1.0, "status": "ok", "final_val_loss": math.exp(log),
                 "best_val_loss": math.exp(log), "tokens_seen": 1e6, "train_flops": 3.2e11 * (shape + 1),
                 "wall_seconds": 60.0 * (seeds - seed)}
            )  # fmt: skip
    flags = stalls.flag(rows)
    return pd.DataFrame([{**r, "stall_excess_pct": e, "stalled": s} for r, (e, s) in zip(rows, flags)])


def test_fit_of_tables_where_nothing_finished_or_nothing_is_priced_has_no_stall_chance_and_no_minutes():
    """A table whose runs all diverged has finished none: its stall chance is 0 (not a division by zero), and a
    shape without its FLOPs has no minutes (nan: the second stage then refuses to price it, naming the shape)."""
    table = synthetic(shapes=2, seeds=2, sd=0.004).assign(status="diverged")
    noise = decide.fit({"sweep_x": table}, PRICE)
    assert noise.stall_chance == 0.0 and noise.stall_excess == ()
    unpriced = decide.fit({"sweep_x": synthetic(shapes=2, seeds=2, sd=0.004).drop(columns="train_flops")}, PRICE)
    assert all(math.isnan(shape.minutes) for shape in unpriced.shapes)


def test_the_price_is_the_registered_one_and_reads_no_measured_time():
    """Each shape is priced at the registered yardstick from its tokens, layers and FLOPs, whatever its runs' wall
    times: every price is the same when every wall time changes (another machine, another load), and another price
    block moves it as the formula says."""
    table = synthetic(shapes=4, seeds=3, sd=0.004)
    noise = decide.fit({"t": table}, PRICE)
    assert [s.minutes for s in noise.shapes] == pytest.approx([(11.2 + 12.7 * layers) / 60 for layers in (1, 2, 3, 4)])
    assert [s.run for s in noise.shapes] == [f"r{shape}-0" for shape in range(4)]  # each named by its least seed
    assert priced_run(1e6, 2, 6.4e11) == pytest.approx((11.2 + 12.7 * 2) / 60)
    slower = table.assign(wall_seconds=np.random.default_rng(5).uniform(1, 1e4, len(table)))
    assert [s.minutes for s in decide.fit({"t": slower}, PRICE).shapes] == [s.minutes for s in noise.shapes]
    doubled = decide.Price({**PRICE.block, "flops_per_second": 1.6e10, "startup_seconds": 0.0})
    again = decide.fit({"t": table}, doubled)
    assert [s.minutes for s in again.shapes] == pytest.approx([(9.7 + 22.7 * layers) / 60 for layers in (1, 2, 3, 4)])


def test_fit_recovers_each_shapes_centre_and_the_pooled_sd_and_the_stalls():
    table = synthetic(shapes=30, seeds=6, sd=0.004, stalls_at={0: 0.08, 13: 0.06})
    noise = decide.fit({"t": table})
    assert len(noise.shapes) == 30 and noise.seeds == 6
    # two stalled runs of 180, their excesses kept; the stalled seeds do not move their shape's centre
    assert noise.stall_chance == pytest.approx(2 / 180)
    planted_excess = table.loc[table["stalled"], "stall_excess_pct"]
    assert sorted(noise.stall_excess) == pytest.approx(sorted(math.log1p(e / 100) for e in planted_excess))
    healthy = table[~table["stalled"]].assign(log=lambda f: np.log(f["final_val_loss"]))
    centres = healthy.groupby("n_layer")["log"].mean().to_numpy()
    assert [s.centre for s in noise.shapes] == pytest.approx(centres)
    # moderated toward a common sd: every shape's within 30% of the planted 0.004
    assert all(0.7 * 0.004 < s.sd < 1.3 * 0.004 for s in noise.shapes)
    assert [s.minutes for s in noise.shapes] == pytest.approx([(11.2 + 12.7 * (s + 1)) / 60 for s in range(30)])


def test_a_run_two_tables_share_is_one_shape_drawn_once():
    table = synthetic(shapes=4, seeds=3, sd=0.004)
    noise = decide.fit({"a": table, "b": table.iloc[6:]})
    assert len(noise.shapes) == 4 and noise.seeds == 3
    drawn = decide.redraw(noise, {"a": table, "b": table.iloc[6:]}, 5, np.random.default_rng(1))
    assert len(drawn["a"]) == 20 and len(drawn["b"]) == 10
    shared = drawn["a"][drawn["a"]["n_layer"] >= 3].reset_index(drop=True)
    pd.testing.assert_frame_equal(shared, drawn["b"].reset_index(drop=True))
    assert list(drawn["a"].columns) == list(table.columns)


def test_a_redraw_has_the_fitted_centre_sd_and_stall_chance():
    table = synthetic(shapes=3, seeds=4, sd=0.01)
    fitted = decide.fit({"t": table})
    noise = decide.Noise(fitted.shapes, stall_chance=0.1, stall_excess=(0.2,))
    drawn = decide.redraw(noise, {"t": table}, 1500, np.random.default_rng(2))["t"]
    logs = np.log(drawn["final_val_loss"])
    healthy = logs[~drawn["stalled"]]
    for shape, (_, group) in zip(noise.shapes, healthy.groupby(drawn["n_layer"])):
        assert group.mean() == pytest.approx(shape.centre, abs=4 * shape.sd / math.sqrt(len(group)))
        assert group.std() == pytest.approx(shape.sd, rel=0.1)
    assert drawn["stalled"].mean() == pytest.approx(0.1, abs=0.025)  # a 20% stall is flagged (3% and more)
    quiet = decide.redraw(noise, {"t": table}, 50, np.random.default_rng(3), scale=decide.NOISELESS)["t"]
    assert not quiet["stalled"].any() and np.log(quiet["final_val_loss"]).groupby(quiet["n_layer"]).std().max() < 1e-3


def test_ladder_adds_a_few_seeds_then_doubles_up_to_the_most():
    assert decide.ladder(3) == [4, 5, 6, 8, 11, 12, 24]
    assert decide.ladder(3, most=6) == [4, 5, 6]
    assert decide.ladder(24) == []


def test_a_decided_row_needs_nothing(basin):
    decision = decide.decide(registry.BY_ID["kaplan_power_law"], basin, sims=2)
    assert decision.verdict == HOLDS and decision.steps == () and decision.seeds is None and not decision.undecidable


def test_the_seeds_it_names_decide_the_planted_truth_when_drawn_from_the_law(basin, tmp_path, monkeypatch):
    """ffratio on the basin law is inconclusive at 3 seeds; at the count decide names, tables drawn afresh from the
    planted law (not from the fitted model) decide it in most draws, and at the seeds in hand in fewer."""
    plans, build = {}, jobs.build

    def built_once(cfg: dict) -> jobs.Plan:  # the plan is a function of the config: each draw's noise is its own
        key = json.dumps(cfg, sort_keys=True, default=str)
        if key not in plans:
            plans[key] = build(cfg)
        return plans[key]

    monkeypatch.setattr(jobs, "build", built_once)  # write_tables' plan, 1.8 s a draw, built once per seed count
    decision = decide.decide(FFRATIO, basin, decide.lr_fallback(basin), sims=20)
    assert decision.verdict == INCONCLUSIVE and not decision.undecidable
    assert decision.seeds is not None and decision.seeds > 3 and decision.reached.decided >= decide.POWER
    assert decision.reached.seeds == decision.seeds
    assert decision.shapes == 11 and decision.runs == (decision.seeds - 3) * 11
    # each fresh run at the registered price of its shape's tokens, layers and FLOPs (the planted metrics': real ones)
    rows = pd.concat(basin.values()).drop_duplicates("run_id").set_index("run_id")
    minutes = [priced_run(*rows.loc[run, ["tokens_seen", "n_layer", "train_flops"]]) for run in decision.shape_runs]
    assert decision.shape_minutes == pytest.approx(minutes)
    assert decision.job_minutes == pytest.approx(sum(minutes) * (decision.seeds - 3))

    def decided(seeds: int, draws: int = 12) -> float:
        cfg = planted.default_config()
        cfg["sweep"]["seeds"] = list(range(seeds))
        hits = 0
        for draw in range(draws):
            paths = planted.write_tables(tmp_path / f"{seeds}-{draw}", planted.kaplan_basin, cfg, seed=100 + draw)
            tables = {t: pd.read_csv(p) for t, p in paths.items()}
            hits += decide.verdict(FFRATIO, tables, decide.lr_fallback(tables)) in (HOLDS, FAILS)
        return hits / draws

    named = decided(decision.seeds)  # the draws are seeded: one rate, read by both assertions
    assert named >= 0.6
    assert named > decided(3)


def test_a_row_its_systematic_keeps_open_is_undecidable(basin):
    """Every shape 3% off its best rate: the ffratio spread's systematic alone passes its margin, and no seed count
    can decide it."""
    wide = {t: f.assign(lr_excess_pct=3.0) for t, f in basin.items()}
    decision = decide.decide(FFRATIO, wide, sims=2)
    assert decision.verdict == INCONCLUSIVE and decision.undecidable
    assert decision.steps == () and decision.seeds is None and decision.runs is None


def test_cli_prints_a_row_per_claim_and_names_a_bad_claim(basin, tmp_path, capsys):
    for table_id, frame in basin.items():
        frame.to_csv(tmp_path / f"{table_id}.csv", index=False)
    out = tmp_path / "decide.csv"
    argv = ["decide", str(tmp_path), "--claim", "kaplan_power_law", "--sims", "2", "--out", str(out)]
    priced = tmp_path / "decide.json"
    assert cli_main([*argv, "--json-out", str(priced), "--price-json", '{"startup_seconds": 600}']) == 0
    written = pd.read_csv(out)
    assert written["claim"].tolist() == ["kaplan_power_law"] and written["verdict"].tolist() == [HOLDS]
    (made,) = decide.from_json(json.loads(priced.read_text()))  # every shape priced at the block given: 10 min up
    runs = pd.concat(basin.values()).drop_duplicates("run_id").set_index("run_id")
    expected = [priced_run(*runs.loc[run, list(decide.RUN_PRICE)]) + 9.975 for run in made.shape_runs]
    assert made.shape_minutes == pytest.approx(expected)
    assert "kaplan_power_law" in capsys.readouterr().out
    assert cli_main(["decide", str(tmp_path), "--claim", "no_such_claim"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--claim 'no_such_claim': no such claim" in err[0]
    assert cli_main(["decide", str(tmp_path / "empty")]) == 1
    assert "no sweep_*.csv tables" in capsys.readouterr().err
    # neither --claim nor --figure: every claim whose figure reads only the tables given
    assert cli_main(["decide", str(tmp_path), "--sims", "1", "--most", "4", "--out", str(out)]) == 0
    from depthwidth.plots.registry import FIGURES

    readable = [f for f, job in FIGURES.items() if set(job.inputs.values()) <= set(basin)]
    every = [c.id for c in registry.CLAIMS if c.figure in readable]
    assert pd.read_csv(out)["claim"].tolist() == every and len(every) == 9


def test_one_seed_per_shape_measures_no_noise_and_runs_no_ladder():
    table = synthetic(shapes=5, seeds=1, sd=0.004)
    noise = decide.fit({"t": table})
    assert not noise.known and all(math.isnan(s.sd) for s in noise.shapes)
    # the noiseless redraw still runs (a stand-in sd, x NOISELESS): finite losses, no stalls
    quiet = decide.redraw(noise, {"t": table}, 2, np.random.default_rng(0), scale=decide.NOISELESS)["t"]
    assert np.isfinite(quiet["final_val_loss"]).all() and not quiet["stalled"].any()
    assert decide.fit({"t": synthetic(shapes=5, seeds=2, sd=0.004)}).known


def test_a_one_seed_table_says_whether_seeds_could_decide_and_prices_nothing(tmp_path):
    cfg = planted.default_config()
    cfg["sweep"]["seeds"] = [0]
    paths = planted.write_tables(tmp_path, planted.kaplan_basin, cfg)
    tables = {t: pd.read_csv(p) for t, p in paths.items()}
    decision = decide.decide(FFRATIO, tables, decide.lr_fallback(tables), sims=2)
    assert decision.seeds_now == 1 and decision.steps == () and decision.seeds is None and decision.runs is None
    assert decision.undecidable or not decision.noise_known


@pytest.fixture(scope="module")
def decided_ffratio(basin, tmp_path_factory) -> tuple[decide.Decision, list]:
    """The basin's ffratio decision (as the workflow's decide job writes it) and the figure CSVs of the claims."""
    from depthwidth.plots import common
    from depthwidth.plots.registry import FIGURES

    tmp_path = tmp_path_factory.mktemp("ffratio")
    csvs = []
    for figure in ("kaplan_fig5_ffratio", "lr_check"):
        inputs = {}
        for name, table_id in FIGURES[figure].inputs.items():
            inputs[name] = tmp_path / f"{table_id}.csv"
            basin[table_id].to_csv(inputs[name], index=False)
        common.render(figure, inputs, tmp_path / f"{figure}.png")
        csvs.append(tmp_path / f"{figure}.csv")
    return decide.decide(FFRATIO, basin, decide.lr_fallback(basin), sims=10), csvs


def test_the_claims_table_says_what_decide_found_in_numbers_and_words(basin, decided_ffratio, tmp_path):
    from depthwidth import claims

    decision, csvs = decided_ffratio
    assert decision.verdict == INCONCLUSIVE and decision.seeds is not None
    record = tmp_path / "kaplan_fig5_ffratio.json"
    record.write_text(json.dumps(decide.to_json([decision], sims=10, most=24, seed=0)))
    assert decide.read_decisions([record]) == {FFRATIO.id: decision}  # the JSON round trip loses nothing
    before = claims.table(csvs, "planted").set_index("id").loc[FFRATIO.id]
    after = claims.table(csvs, "planted", [record]).set_index("id").loc[FFRATIO.id]
    said = f"{decision.seeds} seeds per shape (now 3: {decision.runs} more runs"
    assert said in after["what_it_would_take"] and said not in before["what_it_would_take"]
    assert (after["decide_seeds"], after["decide_runs"]) == (decision.seeds, decision.runs)
    assert after["decide_job_minutes"] == pytest.approx(decision.job_minutes)
    assert after["decide_undecidable"] == 0 and before["decide_seeds"] == ""
    assert after.drop([c for c in after.index if "decide" in c or c == "what_it_would_take"]).equals(
        before.drop([c for c in before.index if "decide" in c or c == "what_it_would_take"])
    )  # nothing else moves: the verdict, the numbers, the words


def test_what_decide_found_replaces_the_rules_seed_estimate_and_keeps_its_other_needs(basin, decided_ffratio, tmp_path):
    from depthwidth import claims
    from depthwidth.claims.verdicts import need

    decision, csvs = decided_ffratio
    judged = claims.judged(FFRATIO, pd.read_csv(csvs[0]), decide.lr_fallback(basin))
    needs = (need("seeds", effect=0.5, what="spread_distance", one_seed=False), need("deep_shapes"))
    planted_needs = replace(judged, main=replace(judged.main, plain=replace(judged.main.plain, needs=needs)))
    kinds = [n.kind for n in claims.with_decision(planted_needs, decision).main.plain.needs]
    assert kinds == ["decide", "deep_shapes"]
    assert claims.with_decision(planted_needs, None) is planted_needs


def test_a_decision_made_from_other_tables_is_refused(basin, decided_ffratio, tmp_path):
    from depthwidth import claims

    decision, csvs = decided_ffratio
    record = tmp_path / "stale.json"
    record.write_text(json.dumps(decide.to_json([replace(decision, verdict=HOLDS)])))
    with pytest.raises(decide.StaleDecision, match="claim kaplan_ffratio: decide found 'holds'") as raised:
        claims.table(csvs, "planted", [record])
    assert raised.value.claim == FFRATIO.id
    with pytest.raises(ValueError, match="decides claim kaplan_ffratio a second time"):
        decide.read_decisions([record, record])


def test_the_decide_columns_are_blank_for_a_decided_row_and_flag_an_undecidable_one():
    held = decide.Decision("c", HOLDS, 3, 5, undecidable=False)
    assert set(decide.numbers(held).values()) == {""} and set(decide.numbers(None).values()) == {""}
    stuck = decide.Decision("c", INCONCLUSIVE, 3, 5, undecidable=True)
    assert decide.numbers(stuck) == {
        "decide_seeds": "", "decide_runs": "", "decide_job_minutes": "", "decide_undecidable": 1
    }  # fmt: skip


def test_cli_decides_one_figures_claims_from_the_tables_given_and_writes_json(basin, tmp_path, capsys):
    from depthwidth.plots.registry import FIGURES

    given = []
    for table_id in {*FIGURES["kaplan_fig5_ffratio"].inputs.values(), sweep_table("lr_check")}:
        given += ["--sweep-table", str(tmp_path / f"{table_id}.csv")]
        basin[table_id].to_csv(given[-1], index=False)
    out = tmp_path / "decide" / "kaplan_fig5_ffratio.json"
    argv = ["decide", *given, "--figure", "kaplan_fig5_ffratio", "--sims", "4", "--most", "5", "--json-out", str(out)]
    assert cli_main(argv) == 0
    record = json.loads(out.read_text())
    assert (record["sims"], record["most"], record["seed"]) == (4, 5, 0)
    (decision,) = decide.from_json(record)
    tried = [s.seeds for s in decision.steps]
    # the most seeds first, then the ladder from below up to the least that decides: a sorted part of the ladder
    assert decision.claim == FFRATIO.id and tried == sorted(set(tried)) and set(tried) <= set(decide.ladder(3, 5))
    assert not tried or tried[-1] == decide.ladder(3, 5)[-1]
    assert cli_main(["decide", *given, "--figure", "kaplan_fig6"]) == 1  # it reads the design tables, not given
    assert "claim kaplan_depth_collapse: its figure reads tables not given" in capsys.readouterr().err


def test_the_cli_judges_at_the_first_looks_level_and_writes_the_rows_it_read(basin, tmp_path):
    """With two looks the decide job judges at look 1's level, prices seeds at look 2's, and writes the figure's rows
    at look 1 (and without the stalled runs beside them): the rows the claims read a row decided there from."""
    from depthwidth import fits
    from depthwidth.contracts import unstalled_path

    given = []
    for table_id in {*inputs_of("kaplan_fig5_headdim"), sweep_table("lr_check")}:
        given += ["--sweep-table", str(tmp_path / f"{table_id}.csv")]
        basin[table_id].to_csv(given[-1], index=False)
    out, look = tmp_path / "headdim.json", tmp_path / "headdim.look1.csv"
    argv = ["decide", *given, "--figure", "kaplan_fig5_headdim", "--sims", "2", "--most", "4", "--level", "0.99"]
    assert cli_main([*argv, "--ladder-level", "0.96", "--json-out", str(out), "--look-out", str(look)]) == 0
    record = json.loads(out.read_text())
    assert (record["level"], record["ladder_level"]) == (0.99, 0.96)
    (decision,) = decide.from_json(record)
    assert (decision.level, decision.ladder_level) == (0.99, 0.96)
    rows = pd.read_csv(look)
    with fits.at_level(0.99):
        expected = decide.figure_rows("kaplan_fig5_headdim", basin)
    assert set(rows[fits.LEVEL_COLUMN]) == {0.99}  # the rows say the level they were read at
    drawn = rows.drop(columns=["stalled_runs", fits.LEVEL_COLUMN])
    assert drawn.equals(pd.read_csv(io.StringIO(expected.to_csv(index=False))))
    assert pd.read_csv(unstalled_path(look)).shape[0] >= 1
    # the rows at 99% are not those at 95%: the level reached the figure's code
    assert not drawn.equals(decide.figure_rows("kaplan_fig5_headdim", basin))
    assert cli_main(["decide", *given, "--look-out", str(look)]) == 1  # which figure's rows? --figure names it


def inputs_of(figure: str):
    from depthwidth.plots.registry import FIGURES

    return FIGURES[figure].inputs.values()


# ---------------------------------------------------------------- the entropy row (docs/protocol-choices.md)

ENTROPY = registry.BY_ID["noci_entropy_collapse"]
entropy_table = planted.entropy_table


def test_the_entropy_row_is_decided_at_the_seeds_decide_names_when_drawn_from_its_law():
    """The entropy row grows by fresh seeds of its kinds at the top rate (`decide.GROWTHS`). At 3 seeds standard's
    interval straddles the limit; decide's redraws of the fitted model name a count, and tables drawn afresh from the
    planted law (two layers, three steps: not the redraw's one-layer form) at that count decide the row in most draws,
    at 3 seeds in fewer. The kinds are the shapes it prices, each named by its least seed's run."""
    table = entropy_table(3)
    tables = {"shaped_entropy": table}
    decision = decide.decide(ENTROPY, tables, sims=40, seed=1)
    assert decision.verdict == INCONCLUSIVE and not decision.undecidable and decision.noise_known
    assert decision.shape_runs == ("shaped-0.03-s0", "standard-0.03-s0", "temperature-0.03-s0")
    assert decision.shape_seeds == (3, 3, 3) and decision.seeds is not None and 3 < decision.seeds <= 24
    assert decision.reached.decided >= decide.POWER and decision.runs == 3 * (decision.seeds - 3)
    # each kind's seed priced as its runs at the top rate (2 layers, 51,200 tokens, 1e11 FLOPs), none without them
    minutes = priced_run(51200, 2, 1e11)
    assert decision.shape_minutes == pytest.approx((minutes,) * 3)
    assert decision.job_minutes == pytest.approx(minutes * decision.runs)
    unpriced = decide.fit_entropy({"shaped_entropy": table.drop(columns="train_flops")})
    assert all(math.isnan(shape.minutes) for shape in unpriced.shapes)
    # its words count seeds per attention kind, not per shape; a sweep row's per shape
    said = wording.NEEDS["decide"](decide.as_need(decision, figure="shaped_entropy").numbers)
    assert said.startswith(f"{decision.seeds} seeds per attention kind (now 3: {decision.runs} more runs")
    assert "seeds per shape" in wording.NEEDS["decide"](decide.as_need(decision, figure="kaplan_fig6").numbers)
    blocked = decide.as_need(replace(decision, undecidable=True), figure="shaped_entropy")
    assert wording.NEEDS["decide"](blocked.numbers).endswith("only another design (other rates or kinds)")

    def decided(seeds: int, draws: int = 40) -> float:
        fresh = np.random.default_rng(100 + seeds)
        hits = sum(
            decide.verdict(ENTROPY, {"shaped_entropy": entropy_table(seeds, fresh)}, math.nan) in (HOLDS, FAILS)
            for _ in range(draws)
        )
        return hits / draws

    named, now = decided(decision.seeds), decided(3)
    assert named >= 0.6 and now < named
    # a kind whose mean sits on the limit (standard at 0.2 exactly, seeds at -1, 0, +1 sd): more seeds narrow its
    # interval onto the limit, never off it; the noiseless redraw stays open, and the row asks for nothing
    last = (table["attention"] == "standard") & (table["layer"] == 0) & (table["step"] == 100) & (table["lr"] == 0.03)
    on_limit = 2.0 * 0.2 * np.exp(0.45 * (table["seed"] - 1.0))
    at_limit = decide.decide(ENTROPY, {"shaped_entropy": table.assign(entropy=table["entropy"].where(~last, on_limit))})
    assert at_limit.verdict == INCONCLUSIVE and at_limit.undecidable and at_limit.seeds is None


# ---------------------------------------------------------------- the SDE row (docs/protocol-choices.md)

SDE_ROW = registry.BY_ID["noci_sde_describes_finite"]
CONVERGING = lambda n: 4 / n  # noqa: E731 - finite networks close on the SDE's law as 4 / n: the row's truth holds


def sde_table(samples: int, seed: int) -> dict[str, pd.DataFrame]:
    """The terminal table of test_verdicts' planted SDE (one block, widths 8-128), its sample jobs on seed 0."""
    return {SDE_TERMINAL: terminal_frame(CONVERGING, samples=samples, seed=seed).assign(seed=0)}


@pytest.mark.sde_figure
def test_the_sde_row_grows_by_samples_redrawn_part_by_part_as_fresh_samples_give_them():
    """The SDE row grows by k x the samples of each sample job (`decide.GROWTHS`), redrawn part by part: each limit
    gap's point from N(gap, (se / sqrt k)^2) with that se, W1's null quantile and each interval narrowed by sqrt k.
    Against fresh samples of the planted law at 3x: the figure's own standard errors and null quantile shrink by
    about sqrt 3 too. Its shapes are the sample jobs, named as the plan names them."""
    tables, fresh = sde_table(2000, 12), sde_table(6000, 13)
    noise = decide.fit_sde(tables)
    widths = sorted(tables[SDE_TERMINAL]["n"].dropna().unique())
    named = {shaped.sample_name("attention", n) for n in widths} | {"attention-sde", "attention-sde-half"}
    assert {s.run for s in noise.shapes} == named and {s.seeds for s in noise.shapes} == {1}
    rng = np.random.default_rng(3)
    with fits.at_level(0.96):
        rows = noise.rows_at(0.96)
        draws = [decide.redraw_sde(noise, tables, 3, rng) for _ in range(300)]
        again = decide.figure_rows("shaped_sde_convergence", fresh)
        quiet = decide.redraw_sde(noise, tables, 2, rng, decide.NOISELESS)
    root = math.sqrt(3)
    for stat in ("mean", "q50"):
        gap, se = rows[f"limit_gap_{stat}"].iloc[0], rows[f"limit_gap_{stat}_se"].iloc[0]
        points = np.array([d[f"limit_gap_{stat}"].iloc[0] for d in draws])
        assert abs(points.mean() - gap) < 4 * se / root / math.sqrt(len(points))
        assert points.std(ddof=1) == pytest.approx(se / root, rel=0.15)
        assert draws[0][f"limit_gap_{stat}_se"].iloc[0] == pytest.approx(se / root)
        assert again[f"limit_gap_{stat}_se"].iloc[0] == pytest.approx(se / root, rel=0.15)  # as fresh samples give it
        assert abs(quiet[f"limit_gap_{stat}"].iloc[0] - gap) < 1e-2 * se  # the noise taken out: the point held
    assert np.allclose(draws[0]["w1_null_q95"], rows["w1_null_q95"] / root)
    # k counts against the jobs' seeds in hand: each job run on two seeds already, 4 of them narrow by sqrt 2
    twice = {SDE_TERMINAL: pd.concat([tables[SDE_TERMINAL], tables[SDE_TERMINAL].assign(seed=1)], ignore_index=True)}
    doubled = decide.fit_sde(twice)
    assert {s.seeds for s in doubled.shapes} == {2} and doubled.seeds == 2
    assert [s.minutes for s in doubled.shapes] == [s.minutes for s in noise.shapes]  # a job's samples, not its seeds
    doubled.rows[0.96] = rows  # the same rows stand in: the scaling alone is under test
    with fits.at_level(0.96):
        narrowed = decide.redraw_sde(doubled, twice, 4, rng)
    assert np.allclose(narrowed["w1_null_q95"], rows["w1_null_q95"] / math.sqrt(2))
    assert np.allclose(again["w1_null_q95"] / (rows["w1_null_q95"] / root), 1, atol=0.15)
    for column in ("ode_ratio", "stopped_diff"):
        half = (rows[f"{column}_high"] - rows[f"{column}_low"]) / 2 / root
        drawn = draws[0]  # its interval: its new point +- the level's z times the narrowed se
        assert np.allclose(drawn[f"{column}_high"] - drawn[column], half)
        assert np.allclose(drawn[column] - drawn[f"{column}_low"], half)


@pytest.mark.sde_figure
def test_the_sde_row_open_at_look_one_is_decided_by_the_samples_decide_names():
    """On the planted law at 2000 samples a width (seed 12) look 1 at 99% leaves the row open; decide's part-level
    redraws at 96% name 3x the samples, 14 more sample jobs, each priced at its samples x steps, and fresh samples of
    the law at 3x decide it at 96% where at 1x they do not."""
    tables = sde_table(2000, 12)
    decision = decide.decide(SDE_ROW, tables, sims=40, seed=1, level=0.99, ladder_level=0.96)
    assert decision.verdict == INCONCLUSIVE and not decision.undecidable and decision.seeds == 3
    # the SDE at dt 0.01 and 0.005 (100 and 200 steps of 8000 samples), the widths 8-128 (n steps of 2000 samples)
    sde = [(1.5 + 8000 * steps * 3e-6) / 60 for steps in (100, 200)]
    finite = [(1.5 + 2000 * n * 1e-5) / 60 for n in (8, 16, 32, 64, 128)]
    assert sorted(decision.shape_minutes) == pytest.approx(sorted(sde + finite))
    assert decision.runs == 2 * 7 and decision.job_minutes == pytest.approx(2 * sum(sde + finite))
    # at another price, that price's minutes and nothing else
    rates = {"sde": 6e-6, "finite": 2e-5}
    doubled = decide.Price({**PRICE.block, "startup_seconds": 3.0, "sample_step_seconds": rates})
    dearer = decide.decide(SDE_ROW, tables, sims=40, seed=1, level=0.99, ladder_level=0.96, price=doubled)
    assert dearer == replace(decision, shape_minutes=dearer.shape_minutes, job_minutes=dearer.job_minutes)
    assert dearer.shape_minutes == pytest.approx([2 * m for m in decision.shape_minutes])
    said = wording.NEEDS["decide"](decide.as_need(decision, figure="shaped_sde_convergence").numbers)
    assert said.startswith(
        "3x the samples of each simulation (now 1x: 14 more simulation jobs, about 0.755 job-minutes) decide it in"
    )
    row = {"id": SDE_ROW.id, "decide_seeds": 3, "decide_runs": 14, "decide_job_minutes": 7.0, "decide_undecidable": 0}
    assert (
        wording.decide_summary(row)
        == "; 3x the samples of each simulation decide it (+14 simulation jobs, ~7 job-minutes)"
    )
    assert wording.decide_summary(row | {"decide_undecidable": 1}) == "; no sample count decides it"
    with fits.at_level(0.96):
        at = {k: [decide.verdict(SDE_ROW, sde_table(2000 * k, 100 + d), math.nan) for d in range(4)] for k in (1, 3)}
    assert at[1].count(HOLDS) < at[3].count(HOLDS) >= 3 and FAILS not in at[1] + at[3]


def test_the_price_block_is_read_as_the_config_has_it_and_a_bad_one_is_named():
    """--price-json takes the config's decide.price block: a key it leaves out takes the schema's default; an unknown
    key, a negative price or text that is no JSON is refused in one line naming it."""
    partial = decide.price_of('{"startup_seconds": 0, "sample_step_seconds": {"sde": 1e-6}}')
    assert partial.block == {**PRICE.block, "startup_seconds": 0, "sample_step_seconds": {"sde": 1e-6, "finite": 1e-5}}
    assert partial.sample_minutes("sde", 1000, 600) == pytest.approx(0.01)
    for bad, named in (
        ('{"startup": 1}', "startup"),
        ('{"token_seconds": -1}', "token_seconds"),
        ("{", "--price-json"),
    ):
        with pytest.raises(argparse.ArgumentTypeError, match=named):
            decide.price_of(bad)


def test_a_sweep_table_without_its_columns_is_one_line_naming_the_file_and_the_columns(tmp_path, capsys):
    """decide read a sweep table lacking a column as a KeyError's traceback ('run_id') from deep in a fit."""
    bad = tmp_path / f"{sweep_table('design')}.csv"
    bad.write_text("a,b\n1,2\n")
    assert cli_main(["decide", "--sweep-table", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"depthwidth decide: error: {bad}: not a sweep table: no column experiment, run_id, seed, ")
    assert err.count("\n") == 1
