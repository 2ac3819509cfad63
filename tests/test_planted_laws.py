"""Every sweep figure and every claim runs on planted sweep tables of the default design (tests/planted.py):
a shape-independent power law, pure seed noise, depth that never pays, a Levine-like threshold. A
degenerate fit or an empty crossover is drawn and reported, never raised."""

from __future__ import annotations

import traceback

import numpy as np
import pandas as pd
import planted
import pytest
from depthwidth import cli, plan
from depthwidth.claims import CLAIMS, COLUMNS, verdicts
from depthwidth.plots import FIGURES, common, sweep_common

PLAN = plan.from_config(planted.default_config())
SWEEP_FIGURES = sorted(f for f in PLAN.figures if all(t.startswith("sweep_") for t in FIGURES[f].inputs.values()))
SWEEP_CLAIMS = [c.id for c in CLAIMS if c.figure in SWEEP_FIGURES]


def build(folder, law) -> dict:
    """Plant the tables, render every sweep figure (recording, not raising, its error), run the claims command."""
    tables = planted.write_tables(folder, law)
    errors, csvs = {}, []
    for figure in SWEEP_FIGURES:
        inputs = {name: tables[table] for name, table in FIGURES[figure].inputs.items()}
        try:
            common.render(figure, inputs, folder / f"{figure}.png")
            csvs.append(folder / f"{figure}.csv")
        except Exception:  # noqa: BLE001 - the test reports it per figure
            errors[figure] = traceback.format_exc()
    args = [arg for csv in csvs for arg in ("--figure-csv", str(csv))]
    args += [arg for path in tables.values() for arg in ("--sweep-table", str(path))]
    args += ["--scale-note", "planted", "--out", str(folder / "claims.csv"), "--captions-dir", str(folder)]
    try:
        claims_rc = cli.main(["claims", *args])
    except Exception:  # noqa: BLE001
        claims_rc, errors["claims"] = None, traceback.format_exc()
    return {"folder": folder, "tables": tables, "errors": errors, "claims_rc": claims_rc}


@pytest.fixture(scope="module", params=sorted(planted.LAWS))
def built(request, tmp_path_factory):
    return {"law": request.param, **build(tmp_path_factory.mktemp(request.param), planted.LAWS[request.param])}


def test_the_planted_tables_are_the_default_design():
    assert sorted(PLAN.sweep) == ["baseline", "design", "ffratio", "headdim", "lr_check"]
    assert {t for f in SWEEP_FIGURES for t in FIGURES[f].inputs.values()} == {f"sweep_{e}" for e in PLAN.sweep}


def test_every_sweep_figure_is_drawn(built):
    assert not built["errors"].keys() - {"claims"}, "\n".join(built["errors"].values())
    for figure in SWEEP_FIGURES:
        for suffix in (".png", ".pdf", ".csv"):
            assert (built["folder"] / f"{figure}{suffix}").stat().st_size > 0, (figure, suffix)


def test_the_claims_table_has_every_claim_with_a_verdict(built):
    assert "claims" not in built["errors"], built["errors"]["claims"]
    assert built["claims_rc"] == 0
    table = pd.read_csv(built["folder"] / "claims.csv")
    assert list(table.columns) == COLUMNS and list(table["id"]) == [c.id for c in CLAIMS]
    assert set(table["verdict"]) <= set(verdicts.VERDICTS)
    # every figure a sweep claim reads was built: its verdict is measured, never `not run`
    measured = table[table["id"].isin(SWEEP_CLAIMS)]
    assert len(measured) == len(SWEEP_CLAIMS) and (measured["verdict"] != verdicts.NOT_RUN).all(), measured
    # and no rule raised on it (`evaluate` turns a raised error into "cannot be measured")
    assert not measured["our_value"].str.startswith("cannot be measured").any(), measured["our_value"].tolist()
    for figure in SWEEP_FIGURES:
        assert (built["folder"] / f"{figure}.rst").stat().st_size > 0


def test_the_planted_tables_carry_the_default_design_and_seed_noise(built):
    design = pd.read_csv(built["tables"]["sweep_design"])
    assert sorted(design["n_target"].unique()) == [25000, 50000, 100000]
    assert sorted(design["n_layer"].unique()) == [1, 2, 3, 4, 6, 8] and sorted(design["seed"].unique()) == [0, 1, 2]
    crossover = pd.read_csv(built["folder"] / "levine_crossover.csv")
    assert 0.5 < crossover["noise_sd_pct"].iloc[0] < 1.0  # the seed sd planted: 0.75% of the loss


def test_the_power_law_figure_recovers_the_planted_exponent(built):
    if built["law"] not in ("kaplan_basin", "seed_noise"):
        pytest.skip("the other laws put a depth term on the baseline's depths 2-4")
    fitted = pd.read_csv(built["folder"] / "kaplan_power_law.csv")["alpha"].iloc[0]
    assert fitted == pytest.approx(planted.ALPHA if built["law"] == "kaplan_basin" else 0.0, abs=0.015)


def test_depths_that_never_pay_never_overtake_inside_the_trained_n(built):
    if built["law"] != "depth_never_pays":
        pytest.skip("a property of one law")
    crossover = pd.read_csv(built["folder"] / "levine_crossover.csv")
    assert not crossover["in_range"].any() and np.isnan(crossover["slope"]).all()
    assert (pd.read_csv(built["folder"] / "levine_optimal_depth.csv")["optimal_depth"] == 1).all()
    rows = pd.read_csv(built["folder"] / "claims.csv").set_index("id")
    assert rows.loc["levine_crossover_slope", "verdict"] == verdicts.INCONCLUSIVE


def test_a_crossover_whose_range_misses_its_point_is_drawn_without_a_bar_and_flagged(built):
    if built["law"] != "levine":
        pytest.skip("the planted noise draw puts such a crossover in the Levine law's tables")
    crossover = pd.read_csv(built["folder"] / "levine_crossover.csv")
    missed = crossover[crossover["crosses"] & ~crossover["ci_holds_cross"]]
    assert len(missed) >= 1  # the case that raised `'yerr' must not contain negative values`
    outside = (missed["width_cross"] < missed["width_ci_low"]) | (missed["width_cross"] > missed["width_ci_high"])
    assert outside.all()


def test_error_bars_leave_out_a_point_outside_its_interval_and_keep_rounding_at_zero():
    bars = sweep_common.error_bars([1.0, 2.0, 3.0, 4.0], [0.5, 2.5, 3.0 + 1e-15, -np.inf], [1.5, 3.0, 3.0, 5.0])
    np.testing.assert_array_equal(bars[:, 0], [0.5, 0.5])
    assert np.isnan(bars[:, 1]).all()  # 2 lies below its interval [2.5, 3]: no bar, not a negative one
    np.testing.assert_array_equal(bars[:, 2], [0.0, 0.0])  # an interval equal to its point, to rounding
    assert np.isnan(bars[0, 3]) and bars[1, 3] == 1.0  # an unbounded side: no bar on that side
    assert sweep_common.error_bars([1.0], [np.nan], [np.nan]) is None
    assert list(sweep_common.holds_point([1.0, 2.0, 3.0], [0.5, 2.5, np.nan], [1.5, 3.0, 4.0])) == [True, False, False]
