"""The level of every interval and test: one fact (`fits.level()`, 95% by default), read when a site computes, set
for a block by `fits.at_level`; the figure command's `--level`; at the default, the numbers and words of before."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from depthwidth import fits
from depthwidth.claims import kaplan, levine, registry, wording
from depthwidth.cli import main as cli_main
from depthwidth.plots import common, shaped_sde_convergence
from scipy import stats
from test_sweep_figures import inputs, write_tables

VALUES = np.arange(1001, dtype=float)  # 0..1000: its q quantile is 1000 q


def test_the_default_level_is_95_percent_and_its_t_quantile_the_975_one():
    assert fits.LEVEL == 0.95 and fits.level() == 0.95
    assert fits.one_sided() == 0.975 and fits.tails() == (0.025, 0.975)  # the quantiles as written before
    assert fits.t_quantile(5) == float(stats.t.ppf(0.975, 5))
    assert fits.t_quantile(0) == math.inf
    assert fits.z_quantile() == float(stats.norm.ppf(0.975)) == shaped_sde_convergence.Z975
    assert fits.percentile_interval(VALUES) == (pytest.approx(25.0), pytest.approx(975.0))


def test_a_block_at_another_level_computes_there_and_restores_the_level_after():
    with fits.at_level(0.99) as level:
        assert level == 0.99 == fits.level()
        assert fits.one_sided() == 0.995 and fits.tails() == (0.005, 0.995)
        assert fits.t_quantile(5) == float(stats.t.ppf(0.995, 5))
        assert fits.z_quantile() == float(stats.norm.ppf(0.995))
        low, high = fits.percentile_interval(VALUES)
        assert (low, high) == (pytest.approx(5.0), pytest.approx(995.0))
        assert fits.percentile_interval(VALUES, level=0.5) == (pytest.approx(250.0), pytest.approx(750.0))
        assert fits.t_interval(0.0, 1.0, 5) == pytest.approx((-stats.t.ppf(0.995, 5), stats.t.ppf(0.995, 5)))
        with fits.at_level(0.96):
            assert fits.level() == 0.96 and fits.tails() == (0.02, 0.98)
        assert fits.level() == 0.99
    assert fits.level() == fits.LEVEL


def test_the_level_is_restored_after_an_exception_in_its_block():
    with pytest.raises(RuntimeError, match="inside"), fits.at_level(0.99):
        raise RuntimeError("inside")
    assert fits.level() == 0.95 and fits.t_quantile(5) == float(stats.t.ppf(0.975, 5))


@pytest.mark.parametrize("bad", [0.3, 0.5, 1.0, 95.0, math.nan])
def test_a_level_outside_one_half_to_one_is_refused_by_name(bad):
    with pytest.raises(ValueError, match=rf"level.*got {bad!r}"), fits.at_level(bad):
        pass  # pragma: no cover: never entered
    assert fits.level() == fits.LEVEL


def test_the_level_in_words():
    assert fits.level_text() == "95%"
    with fits.at_level(0.99):
        assert fits.level_text() == "99%"
    with fits.at_level(0.96):
        assert fits.level_text() == "96%"
    with fits.at_level(0.975):
        assert fits.level_text() == "97.5%"


def test_the_claims_words_and_thresholds_follow_the_level_when_read():
    """The registry's rule texts say the level they are filled at; levine's share of redraws and kaplan's
    Bonferroni split are read when a rule runs."""
    aspect = registry.BY_ID["kaplan_aspect_basin"]
    said = wording.fill(aspect.rule, aspect)
    assert said.startswith("holds if the 95% interval of the spread") and "its 1 - 0.05/k interval" in said
    assert levine.DECIDED == levine.decided() == 0.975
    with fits.at_level(0.99):
        said = wording.fill(aspect.rule, aspect)
        assert said.startswith("holds if the 99% interval of the spread") and "its 1 - 0.01/k interval" in said
        assert levine.DECIDED == levine.decided() == 0.995
        growth = registry.BY_ID["levine_optimal_depth"]
        assert ">= 99.5% of redraws" in wording.fill(growth.rule, growth)
        for claim in registry.CLAIMS:  # no template says the default level where another is set
            for template in (claim.statement, claim.metric, claim.paper_value, claim.rule):
                assert "95%" not in wording.fill(template, claim), claim.id


def test_the_spread_interval_reads_the_level_by_default():
    rng = np.random.default_rng(3)
    shapes = pd.DataFrame(
        {
            "increase_pct_mean": rng.normal(0, 1, 4),
            "seeds": 3,
            "noise_shape_sd_pct": 0.5,
            "noise_shape_dof": 8,
        }
    )
    assert kaplan.spread_of(shapes) == kaplan.spread_of(shapes, 0.95)
    with fits.at_level(0.99):
        at_99 = kaplan.spread_of(shapes)
    assert at_99 == kaplan.spread_of(shapes, 0.99)
    _, low, high = kaplan.spread_of(shapes)
    assert at_99[1] <= low and at_99[2] > high


# ---------------------------------------------------------------- a real figure's rows at two levels

FIGURES = ("kaplan_fig5_aspect", "kaplan_fig6", "kaplan_power_law", "levine_literal", "levine_optimal_depth")


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return write_tables(tmp_path_factory.mktemp("level_tables"), levine=True)


def interval_columns(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """The (low, high) column pairs of a figure's rows: `<x>_ci_low` / `<x>_ci_high`."""
    return [(c, c.removesuffix("_low") + "_high") for c in frame.columns if c.endswith("_ci_low")]


@pytest.mark.parametrize("figure", FIGURES)
def test_a_figures_intervals_at_99_percent_hold_those_at_95_on_every_row(figure, tables):
    data = common.figure_code(figure).data
    paths = inputs(figure, tables)
    at_95 = data(**paths)
    with fits.at_level(0.99):
        at_99 = data(**paths)
    pairs = interval_columns(at_95)
    assert pairs and len(at_95) == len(at_99)
    wider = 0
    for low, high in pairs:
        finite = at_95[low].notna() & at_95[high].notna()
        assert at_99.loc[finite, [low, high]].notna().all().all(), (figure, low)
        assert (at_99.loc[finite, low] <= at_95.loc[finite, low]).all(), (figure, low)
        assert (at_99.loc[finite, high] >= at_95.loc[finite, high]).all(), (figure, high)
        wider += int(
            (at_99.loc[finite, high] - at_99.loc[finite, low] > at_95.loc[finite, high] - at_95.loc[finite, low]).sum()
        )
    assert wider > 0, figure
    pd.testing.assert_frame_equal(data(**paths), at_95)  # the level is back at 95% after the block


def test_at_the_default_a_figures_intervals_are_the_t_intervals_of_before(tables):
    """kaplan_fig5_aspect's shape intervals are mean -+ t(0.975, dof) sd / sqrt(seeds), as the code wrote them."""
    rows = common.figure_code("kaplan_fig5_aspect").data(**inputs("kaplan_fig5_aspect", tables))
    shapes = rows.dropna(subset=["increase_pct_ci_low"]).drop_duplicates(["n_layer", "d_model"])
    assert len(shapes)
    half = [
        float(stats.t.ppf(0.975, d)) * s for s, d in zip(shapes["noise_shape_sd_pct"], shapes["noise_shape_dof"])
    ] / np.sqrt(shapes["seeds"])
    assert (shapes["increase_pct_ci_low"] == shapes["increase_pct_mean"] - half).all()
    assert (shapes["increase_pct_ci_high"] == shapes["increase_pct_mean"] + half).all()
    fig6 = common.figure_code("kaplan_fig6").data(**inputs("kaplan_fig6", tables))
    assert (fig6["lof_f95"].dropna() == [fits.f_quantile(0.95, k - 2, d) for k, d in _fig6_dofs(fig6)]).all()


def _fig6_dofs(fig6: pd.DataFrame) -> list[tuple[int, int]]:
    return [(int(r.deep_shapes), int(r.noise_dof)) for r in fig6.dropna(subset=["lof_f95"]).itertuples()]


def test_the_figure_command_draws_its_rows_at_the_level_asked(tables, tmp_path):
    figure = "kaplan_fig5_headdim"
    args = [f"--input={name}={path}" for name, path in inputs(figure, tables).items()]
    assert cli_main(["figure", figure, *args, "--out", str(tmp_path / "at99.png"), "--level", "0.99"]) == 0
    assert cli_main(["figure", figure, *args, "--out", str(tmp_path / "at95.png")]) == 0
    assert fits.level() == fits.LEVEL
    data = common.figure_code(figure).data
    with fits.at_level(0.99):
        expected = data(**inputs(figure, tables))
    written = pd.read_csv(tmp_path / "at99.csv")
    assert np.allclose(written["increase_pct_ci_low"], expected["increase_pct_ci_low"], rtol=1e-12, equal_nan=True)
    at_95 = pd.read_csv(tmp_path / "at95.csv")
    assert (written["increase_pct_ci_low"].dropna() < at_95["increase_pct_ci_low"].dropna()).all()
    # each CSV, and its reading without the stalled runs, says the level its intervals are at
    for csv, level in (("at99.csv", 0.99), ("at99.unstalled.csv", 0.99), ("at95.csv", 0.95)):
        assert set(pd.read_csv(tmp_path / csv)[fits.LEVEL_COLUMN]) == {level}, csv
    assert cli_main(["figure", figure, *args, "--out", str(tmp_path / "bad.png"), "--level", "1.5"]) != 0
