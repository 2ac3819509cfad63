"""What would decide a row (claims/decide.py): the noise model it fits, its redraws, and its answer against planted
truths, checked by drawing the planted tables at the seeds it names (an independent computation: the planted law
and its noise, not the fitted model)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import planted
import pytest
from depthwidth import stalls
from depthwidth.claims import decide, registry
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE
from depthwidth.cli import main as cli_main
from depthwidth.contracts import sweep_table

FFRATIO = registry.BY_ID["kaplan_ffratio"]
FF_TABLES = (sweep_table("ffratio"), sweep_table("baseline"))


@pytest.fixture(scope="module")
def basin(tmp_path_factory) -> dict[str, pd.DataFrame]:
    """The default's sweep tables planted on Kaplan's basin (3 seeds, the planted seed sd), by table id."""
    paths = planted.write_tables(tmp_path_factory.mktemp("basin"), planted.kaplan_basin)
    return {table_id: pd.read_csv(path) for table_id, path in paths.items()}


def synthetic(shapes: int, seeds: int, sd: float, stalls_at: dict[int, float] | None = None) -> pd.DataFrame:
    """A sweep table of `shapes` shapes (depth 1 to `shapes`) of `seeds` seeds each, ln(loss) 1 + shape / 100 + sd z,
    the seeds named in `stalls_at` (row index -> ln excess) raised by that much, flagged as sweep-table flags."""
    rng = np.random.default_rng(0)
    rows = []
    for shape in range(shapes):
        for seed in range(seeds):
            log = 1 + shape / 100 + sd * rng.standard_normal()
            log += (stalls_at or {}).get(len(rows), 0.0)
            rows.append(
                {"run_id": f"r{shape}-{seed}", "seed": seed, "n_layer": shape + 1, "d_model": 32, "n_head": 1,
                 "d_head": 32, "d_ff": 128, "lr_factor": 1.0, "status": "ok", "final_val_loss": math.exp(log),
                 "best_val_loss": math.exp(log), "wall_seconds": 60.0 * (shape + 1)}
            )  # fmt: skip
    flags = stalls.flag(rows)
    return pd.DataFrame([{**r, "stall_excess_pct": e, "stalled": s} for r, (e, s) in zip(rows, flags)])


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
    assert [s.minutes for s in noise.shapes] == pytest.approx([s + 1 for s in range(30)])


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


def test_the_seeds_it_names_decide_the_planted_truth_when_drawn_from_the_law(basin, tmp_path):
    """ffratio on the basin law is inconclusive at 3 seeds; at the count decide names, tables drawn afresh from the
    planted law (not from the fitted model) decide it in most draws, and at the seeds in hand in fewer."""
    decision = decide.decide(FFRATIO, basin, decide.lr_fallback(basin), sims=20)
    assert decision.verdict == INCONCLUSIVE and not decision.undecidable
    assert decision.seeds is not None and decision.seeds > 3 and decision.steps[-1].decided >= decide.POWER
    assert decision.shapes == 11 and decision.runs == (decision.seeds - 3) * 11
    assert decision.job_minutes == pytest.approx(decision.runs * 1.0)  # planted runs take 60 s each

    def decided(seeds: int, draws: int = 12) -> float:
        cfg = planted.default_config()
        cfg["sweep"]["seeds"] = list(range(seeds))
        hits = 0
        for draw in range(draws):
            paths = planted.write_tables(tmp_path / f"{seeds}-{draw}", planted.kaplan_basin, cfg, seed=100 + draw)
            tables = {t: pd.read_csv(p) for t, p in paths.items()}
            hits += decide.verdict(FFRATIO, tables, decide.lr_fallback(tables)) in (HOLDS, FAILS)
        return hits / draws

    assert decided(decision.seeds) >= 0.6
    assert decided(decision.seeds) > decided(3)


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
    assert cli_main(argv) == 0
    written = pd.read_csv(out)
    assert written["claim"].tolist() == ["kaplan_power_law"] and written["verdict"].tolist() == [HOLDS]
    assert "kaplan_power_law" in capsys.readouterr().out
    assert cli_main(["decide", str(tmp_path), "--claim", "no_such_claim"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--claim 'no_such_claim': no such claim" in err[0]
    assert cli_main(["decide", str(tmp_path / "empty")]) == 1
    assert "no sweep_*.csv tables" in capsys.readouterr().err
