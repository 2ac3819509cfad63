"""Kaplan's rules read directly, on small hand-built figure tables: the numbers they compute (spreads, differences,
bootstrap draws), the edges of their windows and limits, every branch of their verdicts, and the texts a reader
relies on. The pipeline tests (test_verdicts, test_planted_laws) check verdicts of whole figures; mutation testing
(scripts/mutation) found the rules' arithmetic and texts untested there.

Each table is small and built so that the rule as written and a slightly different reading of it disagree on it.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest
from depthwidth import fits
from depthwidth.claims import kaplan, verdicts
from depthwidth.claims.kaplan import (
    ASPECT_LIMIT,
    COLLAPSE_MARGIN,
    CURVATURE_MARGIN,
    FF_COST_MARGIN,
    FF_LIMIT,
    HEAD_DIM_LIMIT,
    KAPLAN_ASPECT_SPAN,
    POWER_LAW_RMS_LIMIT,
    SPREAD_DRAWS,
)
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN
from scipy import stats

NAN = math.nan


# ---------------------------------------------------------------- builders


def ablation(shapes: list[dict], seeds: int = 3, sd: float = 0.3, dof: int = 12, **figure) -> pd.DataFrame:
    """Rows of a Fig. 5 ablation figure: `seeds` finished runs of each shape (a dict of its own columns: its
    increase_pct_mean and knob, optionally n_target, n_layer, d_model, seeds, increase_pct_sd), with the figure's
    seed noise (pooled sd, dof; Bartlett's p; per-shape sds not taken) and the L(N) fit's rms on every row."""
    rows = []
    for shape in shapes:
        shape = {"n_target": 50000, "n_layer": 4, "d_model": 32, "seeds": seeds, "increase_pct_sd": sd} | shape
        for seed in range(int(shape["seeds"])):
            rows.append(shape | {"seed": seed, "increase_pct": shape["increase_pct_mean"] + seed / 100, "status": "ok"})
    noise = {"noise_sd_pct": sd, "noise_dof": dof, "baseline_rms_pct": 0.5, "noise_heterogeneity_p": 0.2}
    return pd.DataFrame(rows).assign(**(noise | {"noise_per_shape": False} | figure))


def aspect(ratio: float, mean: float, n: int = 50000, depth: int = 4) -> dict:
    """A shape of the aspect-ratio figure: depth `depth` at aspect ratio d/L = `ratio`."""
    return {"n_target": n, "n_layer": depth, "d_model": ratio * depth, "aspect_ratio": ratio, "increase_pct_mean": mean}


def ff(ratio: float, mean: float) -> dict:
    """A shape of the feed-forward figure: d_ff / d = `ratio` (its own width, as at fixed N)."""
    return {"d_model": 64 + ratio, "ff_ratio": ratio, "increase_pct_mean": mean}


def head(d_head: int, mean: float) -> dict:
    """A shape of the head-dimension figure: one depth and width, head dimension `d_head`."""
    return {"d_head": d_head, "increase_pct_mean": mean}


def ff_spread(frame: pd.DataFrame, worse_above: float | None = 8) -> verdicts.Result:
    """knob_spread over d_ff / d in [1, 4] against FF_LIMIT, (b) at ratios >= `worse_above`."""
    return kaplan.knob_spread(frame, "ff_ratio", 1, 4, FF_LIMIT, worse_above)


def table(means, seeds, own_sd=None, per_shape: bool = False) -> pd.DataFrame:
    """A shape table as redrawn_means reads it; `own_sd`: the figure's per-shape sds (and whether it took them)."""
    shapes = pd.DataFrame({"increase_pct_mean": np.asarray(means, float), "seeds": seeds})
    if own_sd is not None:
        shapes = shapes.assign(increase_pct_sd=own_sd, noise_per_shape=per_shape)
    return shapes


def collapse(lack=(0.5, 1.5), offset=(4.0, 3.0, 5.0), dof: int = 36, sd: float = 1.0, seeds: int = 3, **summary):
    """Rows of the Fig. 6 figure at one count: 3 seeds of a 1-layer and two deeper shapes, each row carrying the
    figure's summary: the lack of fit's interval (% rms), the 1-layer offset (mean, low, high) and the seed noise."""
    row = {"scatter_pct": 1.2, "lof_f": 3.5, "lof_f95": 2.0, "lof_sd_pct": sum(lack) / 2, "deep_shapes": 2}
    row |= {"lof_sd_ci_low": lack[0], "lof_sd_ci_high": lack[1], "noise_sd_pct": sd, "noise_dof": dof}
    row |= dict(zip(("offset_1layer_pct", "offset_ci_low", "offset_ci_high"), offset))
    row |= {"seeds": seeds, "count": "non-embedding N"} | summary
    shapes = [(1, 46), (2, 32), (4, 22)]
    return pd.DataFrame(
        [{"n_layer": depth, "d_model": d, "seed": s} | row for depth, d in shapes for s in range(seeds)]
    )


N_TRAINED = (2.5e4, 5e4, 1e5, 2e5)


def law(alpha=(0.1, 0.09, 0.11), sagitta=(0.2, -0.5, 0.6), rms: float = 0.5, seeds: int = 3, **fit) -> pd.DataFrame:
    """Rows of the power-law figure: `seeds` finished runs at each N in N_TRAINED, each row carrying the fit:
    alpha (value, low, high), the sagitta (%), the rms residual, the curvature, the seed noise, Kaplan's references."""
    row = dict(zip(("alpha", "alpha_ci_low", "alpha_ci_high"), alpha))
    row |= dict(zip(("sagitta_pct", "sagitta_ci_low", "sagitta_ci_high"), sagitta))
    row |= {"curvature": -0.0049, "curvature_ci_low": -0.0115, "curvature_ci_high": 0.0017, "rms_residual_pct": rms}
    row |= {"fit_points": len(N_TRAINED) * seeds, "fit_groups": len(N_TRAINED), "noise_sd_pct": 0.29, "noise_dof": 8}
    row |= {"tokens_per_run": 1.5e6}
    row |= {
        "kaplan_alpha": fits.KAPLAN_ALPHA_N,
        "kaplan_local_alpha": 0.027,
        "kaplan_path_alpha": 0.089,
        "status": "ok",
    } | fit
    return pd.DataFrame([{"n_nonembedding": n, "seed": s} | row for n in N_TRAINED for s in range(seeds)])


def quartile(draws: np.ndarray, means, scale) -> float:
    """The 75% quantile of bootstrap draws standardized by the means and scales they should have, pooled over
    their columns."""
    return float(np.quantile((draws - np.asarray(means)) / np.asarray(scale), 0.75))


# ---------------------------------------------------------------- the shape table and the bootstrap of its means


def test_shape_table_has_one_row_per_finished_shape_knob_included_with_the_figures_columns():
    """Seeds of one shape collapse to one row; two head dimensions at one depth and width are two shapes (the knob
    is part of the shape); a failed run is no shape; the table keeps the figure's columns, indexed from 0."""
    frame = ablation([head(8, 0.5), head(16, 0.2)])
    frame = pd.concat([frame, frame.iloc[:1].assign(d_head=32, status="failed")], ignore_index=True)
    shapes = kaplan.shape_table(frame, "d_head")
    assert shapes["d_head"].tolist() == [8, 16]
    assert list(shapes.columns) == list(frame.columns) and shapes.index.tolist() == [0, 1]


@pytest.mark.parametrize("sd, dof", [(0.3, 0), (NAN, 12)])
def test_redrawn_means_without_a_seed_noise_are_none(sd, dof):
    """One seed (no dof) or an undefined sd: there is no noise to redraw the means with."""
    assert kaplan.redrawn_means(table([0.0, 1.0], 1), sd, dof) is None


@pytest.mark.parametrize("own_sd", [None, 5.0], ids=["no per-shape sds", "per-shape sds not taken"])
def test_redrawn_means_are_t_draws_with_the_pooled_sd_over_root_seeds_and_the_pooled_dof(own_sd):
    """Without per-shape noise (a figure that has none, or one whose shapes pass Bartlett's test), every shape's
    mean is redrawn as mean + t(pooled dof) * pooled sd / sqrt(seeds): centred on the seed mean, with t's
    quartile; the shapes' own sds (here 5.0) are not used, nor their own seeds - 1 dof."""
    means, sd, dof = np.arange(8.0), 0.5, 12
    draws = kaplan.redrawn_means(table(means, 3, own_sd), sd, dof)
    assert draws.shape == (SPREAD_DRAWS, 8)
    scale = sd / math.sqrt(3)
    assert float(np.median((draws - means) / scale)) == pytest.approx(0.0, abs=0.03)
    assert quartile(draws, means, scale) == pytest.approx(stats.t.ppf(0.75, dof), abs=0.03)


def test_redrawn_means_take_each_shapes_own_sd_and_seeds_minus_one_dof_where_the_figure_says_so():
    """Where the figure found the shapes' variances to differ (noise_per_shape), a shape of >= 2 seeds is redrawn
    with its own sd over sqrt(seeds) and seeds - 1 dof (3 seeds: t(2); 2 seeds: t(1)); a shape of one seed has no
    sd of its own and keeps the pooled sd and dof."""
    seeds = [3] * 4 + [2] * 4 + [1] * 4
    own = [0.1] * 4 + [2.0] * 4 + [5.0] * 4
    means, sd, dof = np.arange(12.0), 0.5, 12
    draws = kaplan.redrawn_means(table(means, seeds, own, per_shape=True), sd, dof)
    groups = [(slice(0, 4), 0.1 / math.sqrt(3), 2), (slice(4, 8), 2.0 / math.sqrt(2), 1), (slice(8, 12), sd, dof)]
    for columns, scale, t_dof in groups:
        assert quartile(draws[:, columns], means[columns], scale) == pytest.approx(
            stats.t.ppf(0.75, t_dof), abs=0.05
        ), (scale, t_dof)


def test_the_spread_is_the_largest_minus_the_smallest_shape_mean():
    """The spread is max - min of the seed means (here 2.5 - (-1.0)), whatever their order."""
    spread, *_ = kaplan.spread_of(table([0.5, -1.0, 2.5, 1.0], 3), 0.3, 12)
    assert spread == pytest.approx(3.5)


def test_the_spread_interval_is_the_spread_less_and_plus_the_noises_own_spread_at_each_level():
    """Each level's interval is the spread -+ that quantile of max - min of the redrawn errors (each redraw less
    the observed means), its low end at least 0; one pair of ends per level asked for, 95% by default."""
    shapes, sd, dof = table([0.0, 0.4, 0.1, 0.3], 3), 0.5, 12
    errors = kaplan.redrawn_means(shapes, sd, dof) - np.array([0.0, 0.4, 0.1, 0.3])
    reach = errors.max(axis=1) - errors.min(axis=1)
    spread, low, high, low99, high99 = kaplan.spread_of(shapes, sd, dof, 0.95, 0.99)
    assert spread == pytest.approx(0.4)
    assert (low, high) == pytest.approx((max(0.0, 0.4 - np.quantile(reach, 0.95)), 0.4 + np.quantile(reach, 0.95)))
    assert (low99, high99) == pytest.approx((0.0, 0.4 + np.quantile(reach, 0.99)))
    assert low == 0.0 and high99 > high
    wide = table([0.0, 4.0, 1.0, 3.0], 3)  # a spread far above the noise: both ends move with it
    _, w_low, w_high = kaplan.spread_of(wide, sd, dof)
    assert (w_low, w_high) == pytest.approx((4.0 - (high - 0.4), 4.0 + (high - 0.4)), rel=0.05)
    assert kaplan.spread_of(shapes, sd, dof) == pytest.approx((spread, low, high))


@pytest.mark.parametrize("true_means", [(0.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.5, 2.0)])
def test_the_spread_interval_covers_the_true_spread_at_least_95_percent_of_the_time(true_means):
    """Coverage against the truth, 300 tables of 4 shapes x 3 seeds at seed sd 1 (the pooled sd each table's
    own): the 95% interval holds the true spread in at least 93% of them (binomial sd 1.3%), pure noise
    included. The percentile interval of the spread recomputed on redraws held 0 in none of the pure-noise
    tables."""
    rng = np.random.default_rng(35)
    truth, covered = max(true_means) - min(true_means), 0
    for _ in range(300):
        seeds = np.asarray(true_means)[:, None] + rng.standard_normal((4, 3))
        sd = float(np.sqrt(seeds.var(axis=1, ddof=1).mean()))
        _, low, high = kaplan.spread_of(table(seeds.mean(axis=1), 3), sd, 8)
        covered += low <= truth <= high
    assert covered >= 0.93 * 300, covered


def test_two_shapes_give_a_spread_interval_and_one_shape_or_one_seed_none():
    """Two shapes are enough for an interval of their spread; one shape (its own sd taken or not) has a spread of 0
    and no interval; neither has one without a seed noise."""
    assert all(np.isfinite(kaplan.spread_of(table([0.0, 1.0], 3), 0.3, 12)))
    spread, low, high = kaplan.spread_of(table([1.0], 3, 0.2, per_shape=True), 0.3, 12)
    assert spread == 0.0 and math.isnan(low) and math.isnan(high)
    spread, low, high = kaplan.spread_of(table([0.0, 1.0], 1), NAN, 0)
    assert spread == 1.0 and math.isnan(low) and math.isnan(high)


# ---------------------------------------------------------------- what would decide an ablation rule


@pytest.mark.parametrize("dof", [1, 12])
def test_undecided_seeds_pool_the_seed_noise_over_the_shapes_not_the_runs(dof):
    """With a seed noise (from one dof up: two seeds of one shape) the seeds asked for are those that resolve the
    margin with the seed sd pooled over the figure's shapes (2 here, in 3 runs), from the most seeds run (2), named
    with what they resolve."""
    frame = ablation([ff(1, 0.0) | {"seeds": 2}, ff(2, 1.0) | {"seeds": 1}], sd=1.0, dof=dof)
    k = fits.seeds_needed(1.0, 1.7, seeds_now=2, shapes=2)
    assert k != fits.seeds_needed(1.0, 1.7, seeds_now=2, shapes=len(frame))  # the runs would ask for fewer
    assert kaplan._undecided_seeds(frame, 1.7, "the effect") == (
        f"about {k} seeds per shape would resolve the effect (+1.70) at seed sd 1.00"
    )


def test_undecided_seeds_with_one_seed_ask_for_a_second_and_take_the_fit_rms_as_the_seed_sd():
    """Without a seed noise: at least 2 seeds per shape, and the seeds that would resolve the margin if the seed
    sd were the L(N) fit's rms residual (0.5%), named with what they resolve."""
    frame = ablation([ff(1, 0.0), ff(2, 1.0), ff(4, 0.5)], seeds=1, sd=NAN, dof=0)
    k = fits.seeds_needed(0.5, 0.8, seeds_now=2, shapes=3)
    assert kaplan._undecided_seeds(frame, 0.8, "the effect") == (
        "at least 2 seeds per shape to measure the seed noise; "
        f"about {k} seeds per shape would resolve the effect (+0.80) if the seed sd were the L(N) fit's rms 0.50"
    )


# ---------------------------------------------------------------- the aspect-ratio window


@pytest.mark.parametrize(
    "ratios, means, window",
    [
        ([60.0, 1.0, 2.0], [2.0, 0.0, 1.0], [1.0, 2.0]),  # 2 to 60 is 30x but leaves the best (1) out
        ([1.0, 30.0, 100.0], [2.0, 1.0, 0.0], [30.0, 100.0]),  # 1 to 30 is wider but leaves the best (100) out
        ([1.5, 60.0], [0.0, 1.0], [1.5, 60.0]),  # exactly KAPLAN_ASPECT_SPAN: allowed
        ([1.0, 40.0 * (1 + 1e-12)], [0.0, 1.0], [1.0, 40.0 * (1 + 1e-12)]),  # the span up to rounding: allowed
        ([1.0, 41.0], [0.0, 1.0], [1.0]),  # wider than the span: the best alone
        ([80.0, 1.0, 2.0, 1.5, 40.0], [0.0, 1.0, 2.0, 3.0, -1.0], [1.0, 1.5, 2.0, 40.0]),  # two 40x: the fuller one
    ],
)
def test_basin_window_is_the_widest_run_of_shapes_of_at_most_the_span_that_holds_the_best(ratios, means, window):
    """The window is a run of consecutive aspect ratios (sorted) that holds the least-increase shape and spans at
    most KAPLAN_ASPECT_SPAN (ends included); the widest such, and of equally wide ones the one with more shapes.
    It is made of the table's own rows and columns."""
    shapes = pd.DataFrame([aspect(r, m) for r, m in zip(ratios, means)])
    found = kaplan.basin_window(shapes)
    assert found["aspect_ratio"].tolist() == window
    assert list(found.columns) == list(shapes.columns)
    assert found["increase_pct_mean"].min() == min(means)


# ---------------------------------------------------------------- aspect_basin


def test_aspect_basin_reports_each_ns_window_spread_and_interval():
    """Per N: the spread over its window (one-layer shapes apart), its 95% interval and the window's span and
    shapes; the largest spread leads the value, the interval column restates each N's spread and interval."""
    frame = ablation(
        [aspect(2.0, 1.0), aspect(8.0, 0.0), aspect(40.0, 0.5), aspect(46.0, -3.0, depth=1)]
        + [aspect(2.0, 0.0, n=100000), aspect(40.0, 0.2, n=100000)],
        sd=0.3,
    )
    result = kaplan.aspect_basin(frame)
    parts, intervals = [], []
    for n, spread in ((50000, 1.0), (100000, 0.2)):
        window = kaplan.shape_table(frame[(frame["n_target"] == n) & (frame["n_layer"] >= 2)], "aspect_ratio")
        same, low, high = kaplan.spread_of(window, 0.3, 12)
        assert same == pytest.approx(spread)
        shapes = len(window)
        parts.append(f"N={n:.2g}: {spread:.2f}% [{low:.2f}, {high:.2f}] over 20x ({shapes} shapes)")
        intervals.append(f"{spread:.2f}% [{low:.2f}, {high:.2f}]")
    assert result.value == "largest spread 1.00%; " + "; ".join(parts)
    assert result.interval == "; ".join(intervals)
    assert result.at_our_scale == "a span of aspect ratios of 20x was tested (Kaplan's basin: ~40x)"


@pytest.mark.parametrize(
    "means, sd, verdict", [([0.0, 0.5], 0.3, HOLDS), ([0.0, ASPECT_LIMIT + 5.0], 0.1, FAILS)], ids=["flat", "steep"]
)
def test_aspect_basin_decided_against_the_limit_asks_for_nothing(means, sd, verdict):
    """A spread whose interval lies at or below ASPECT_LIMIT over a 20x window holds; one above it fails; a decided
    verdict asks for nothing."""
    result = kaplan.aspect_basin(ablation([aspect(2.0, means[0]), aspect(40.0, means[1])], sd=sd))
    assert result.verdict == verdict and result.needs == ""


def test_aspect_basin_straddling_the_limit_asks_for_the_seeds_that_resolve_the_spreads_distance():
    """A spread of ASPECT_LIMIT + 1.5 with a wide interval is inconclusive: it asks for the seeds that resolve
    the largest spread's distance to the limit (+1.50) at the pooled seed sd over the figure's 2 shapes."""
    result = kaplan.aspect_basin(ablation([aspect(2.0, 0.0), aspect(40.0, ASPECT_LIMIT + 1.5)], sd=1.0))
    assert result.verdict == INCONCLUSIVE
    k = fits.seeds_needed(1.0, 1.5, seeds_now=3, shapes=2)
    what = f"the spread's distance to {ASPECT_LIMIT:g}%"
    assert result.needs == f"about {k} seeds per shape would resolve {what} (+1.50) at seed sd 1.00"


@pytest.mark.parametrize("span, partial", [(KAPLAN_ASPECT_SPAN / 2, False), (KAPLAN_ASPECT_SPAN / 2 * 0.95, True)])
def test_a_window_of_half_the_span_is_not_partial_and_a_narrower_one_is(span, partial):
    """A flat window spanning exactly half of KAPLAN_ASPECT_SPAN (20x) holds; under it (19x) the test is PARTIAL and
    inconclusive, and asks for depths spanning the whole 40x; the narrowest N's span decides (the other spans 40x)."""
    frame = ablation([aspect(2.0, 0.0), aspect(2.0 * span, 0.3), aspect(1.0, 0.0, n=100000), aspect(40.0, 0.3, 100000)])
    result = kaplan.aspect_basin(frame)
    assert result.verdict == (INCONCLUSIVE if partial else HOLDS)
    assert result.value.startswith("PARTIAL: ") == partial
    assert result.at_our_scale.endswith(" -- partial") == partial
    assert f"a span of aspect ratios of {span:.0f}x was tested" in result.at_our_scale
    asks = (
        f"depths spanning {KAPLAN_ASPECT_SPAN:g}x of aspect ratio at each N (tested: {span:.0f}x; "
        "at fixed N the aspect ratio d/L moves as L^-1.5: depths 2 to ~23)"
    )
    assert (asks in result.needs) == partial
    if partial:  # inconclusive from its span: the spread's own seeds come first
        assert result.needs.startswith("about ") and result.needs.endswith("; " + asks)


def test_a_steep_partial_window_still_fails():
    """A narrow window is no evidence of a flat 40x one, but a spread above the limit within it refutes flatness."""
    result = kaplan.aspect_basin(ablation([aspect(2.0, 0.0), aspect(20.0, ASPECT_LIMIT + 5.0)], sd=0.1))
    assert result.verdict == FAILS and result.value.startswith("PARTIAL: ")
    assert result.needs.startswith(f"depths spanning {KAPLAN_ASPECT_SPAN:g}x")  # no seeds: the verdict is decided


def test_bonferroni_an_n_that_fails_at_95_but_not_at_the_shared_level_is_inconclusive():
    """A spread whose 95% interval lies above ASPECT_LIMIT but whose 97.5% one (1 - 0.05 / 2: two N tested) does not
    fails when its N is the only one and is inconclusive next to a second N; the interval shown stays the 95% one."""
    steep = [aspect(2.0, 0.0), aspect(40.0, ASPECT_LIMIT + 2.0)]
    flat = [aspect(2.0, 0.0, n=100000), aspect(40.0, 0.0, n=100000)]
    _, low, high, strict_low, _ = kaplan.spread_of(
        kaplan.shape_table(ablation(steep, sd=1.0), "aspect_ratio"), 1.0, 12, 0.95, 0.975
    )
    assert low > ASPECT_LIMIT >= strict_low  # the table is built for this
    assert kaplan.aspect_basin(ablation(steep, sd=1.0)).verdict == FAILS
    result = kaplan.aspect_basin(ablation(steep + flat, sd=1.0))
    assert result.verdict == INCONCLUSIVE
    assert result.interval.startswith(f"{ASPECT_LIMIT + 2.0:.2f}% [{low:.2f}, {high:.2f}]; ")
    assert f"the spread's distance to {ASPECT_LIMIT:g}% (+2.00)" in result.needs


def test_a_shared_level_interval_ending_on_the_limit_does_not_show_the_spread_above_it():
    """Under the learning-rate systematic, a steep N whose 95% interval lies above ASPECT_LIMIT and whose 97.5% one
    (two N tested) ends exactly on it is inconclusive: 'above the limit' excludes the limit, as in `below`."""
    steep = [aspect(2.0, 0.0), aspect(40.0, ASPECT_LIMIT + 3.0)]
    flat = [aspect(2.0, 0.0, n=100000), aspect(40.0, 0.0, n=100000)]
    window = kaplan.shape_table(ablation(steep, sd=1.0), "aspect_ratio")
    _, low, _, strict_low, _ = kaplan.spread_of(window, 1.0, 12, 0.95, 0.975)
    systematic = strict_low - ASPECT_LIMIT  # widens every interval by this much: the strict one ends on the limit
    assert systematic > 0 and strict_low - systematic == ASPECT_LIMIT < low - systematic
    with verdicts.loss_systematic(systematic):
        assert kaplan.aspect_basin(ablation(steep + flat, sd=1.0)).verdict == INCONCLUSIVE


@pytest.mark.parametrize(
    "p, per_shape, bartlett",
    [
        (0.2, False, "one sd for every shape (Bartlett p = 0.2)"),
        (0.01, True, "the shapes' seed variances differ (Bartlett p = 0.01): each shape's own sd in the bootstrap"),
    ],
)
def test_aspect_basin_noise_names_the_pooled_sd_its_dof_the_seeds_and_bartletts_p(p, per_shape, bartlett):
    """The noise column is the pooled seed sd with its dof and seeds per shape, then Bartlett's p of the figure and
    whether the bootstrap took each shape's own sd."""
    frame = ablation([aspect(2.0, 0.0), aspect(40.0, 0.5)], sd=0.3, noise_heterogeneity_p=p, noise_per_shape=per_shape)
    assert (
        kaplan.aspect_basin(frame).noise == f"seed sd 0.30% of the loss (pooled, 12 dof; 3 seeds per shape); {bartlett}"
    )


def test_one_trained_shape_has_no_spread_and_is_partial():
    """A figure of one run: a spread of 0 without an interval over 1x: inconclusive and PARTIAL; it asks for a second
    seed and for depths spanning the aspect span."""
    result = kaplan.aspect_basin(ablation([aspect(8.0, 0.3)], seeds=1, sd=NAN, dof=0))
    assert result.verdict == INCONCLUSIVE
    assert result.value == "PARTIAL: largest spread 0.00%; N=5e+04: 0.00% no interval over 1x (1 shapes)"
    assert result.needs.startswith("at least 2 seeds per shape") and "depths spanning" in result.needs
    assert result.noise == verdicts.ONE_SEED


# ---------------------------------------------------------------- best-of and knob_spread


def test_best_of_interval_is_the_top_minus_the_best_rechosen_on_every_redraw():
    """The (b) interval: the percentile interval of the top shape's redrawn mean minus the least of the others' on
    every redraw (the best of several is a selected statistic), not minus a fixed one."""
    shapes = kaplan.shape_table(ablation([ff(1, 0.0), ff(2, 0.1), ff(4, 0.3), ff(16, 1.0)], sd=0.5), "ff_ratio")
    top, inside = shapes.iloc[3], shapes.iloc[:3]
    draws = kaplan.redrawn_means(shapes.iloc[[3, 0, 1, 2]], 0.5, 12)
    expected = np.quantile(draws[:, 0] - draws[:, 1:].min(axis=1), [0.025, 0.975])
    assert kaplan.best_of_interval(top, inside, 0.5, 12) == pytest.approx(tuple(expected))
    fixed = np.quantile(draws[:, 0] - draws[:, 1], [0.025, 0.975])
    assert expected[1] > fixed[1] + 0.05  # the reading it is not


def test_best_of_interval_without_noise_is_the_difference_and_with_one_seed_none():
    """With a vanishing seed sd the interval closes on top - best (1.0 - 0.0; the best is the first of the others,
    so none of them is skipped); with one seed there is none."""
    shapes = kaplan.shape_table(ablation([ff(1, 0.0), ff(2, 0.1), ff(16, 1.0)]), "ff_ratio")
    top, inside = shapes.iloc[2], shapes.iloc[:2]
    assert kaplan.best_of_interval(top, inside, 1e-9, 12) == pytest.approx((1.0, 1.0), abs=1e-6)
    assert all(math.isnan(v) for v in kaplan.best_of_interval(top, inside, NAN, 0))


def test_knob_spread_a_is_the_spread_over_the_values_in_the_range_ends_included():
    """(a) is max - min of the seed means over the knob values in [low, high], both ends included (1 and 4), not
    the values outside it (0.5 below, 6 between the range and worse_above)."""
    frame = ablation([ff(0.5, 9.0), ff(1, 1.0), ff(2, 0.5), ff(4, 0.0), ff(6, 7.0)], sd=0.1)
    result = ff_spread(frame, worse_above=None)
    assert result.value == "(a) spread 1.00% over ff_ratio in [1, 4] (3 values)"
    inside = kaplan.shape_table(frame, "ff_ratio").iloc[1:4]
    assert result.interval == "(a) " + verdicts.interval_text(*kaplan.spread_of(inside, 0.1, 12)[1:])
    assert result.verdict == HOLDS


def test_knob_spread_b_is_the_largest_value_minus_the_best_in_the_range():
    """(b) compares the largest knob value >= worse_above (16, though 8 is worse) with the best (least) mean in
    [low, high] (ratio 2, not the first one): +3.00%; its interval is the best-of interval."""
    frame = ablation([ff(1, 1.5), ff(2, 0.5), ff(4, 1.0), ff(8, 5.5), ff(16, 3.5)], sd=0.1)
    result = ff_spread(frame)
    assert result.value == (
        "(a) spread 1.00% over ff_ratio in [1, 4] (3 values); (b) ff_ratio = 16 is +3.00% vs the best in [1, 4]"
    )
    shapes = kaplan.shape_table(frame, "ff_ratio")
    spread_interval = kaplan.spread_of(shapes.iloc[:3], 0.1, 12)[1:]
    interval = kaplan.best_of_interval(shapes.iloc[4], shapes.iloc[:3], 0.1, 12)
    assert result.interval == f"(a) {verdicts.interval_text(*spread_interval)}; (b) {verdicts.interval_text(*interval)}"
    assert result.verdict == HOLDS and result.needs == ""


def test_a_knob_value_equal_to_worse_above_counts_as_large():
    """'Ratios of 8 and above': a ratio of exactly 8 is tested against the range."""
    result = ff_spread(ablation([ff(1, 0.0), ff(4, 0.2), ff(8, 3.0)], sd=0.1))
    assert "(b) ff_ratio = 8 is +3.00% vs the best in [1, 4]" in result.value and result.verdict == HOLDS


@pytest.mark.parametrize(
    "means, sd, verdict",
    [
        ([0.0, 0.3, 0.5], 0.05, HOLDS),
        ([0.0, FF_LIMIT + 2.0, 0.5], 0.05, FAILS),
        ([0.0, FF_LIMIT + 0.3, 0.5], 0.5, INCONCLUSIVE),
    ],
)
def test_knob_spread_a_against_its_limit(means, sd, verdict):
    """(a) alone (no worse_above): at or below the limit holds, above fails, straddling it is inconclusive and asks
    for the seeds that resolve the spread's distance to the limit; decided, it asks for nothing."""
    frame = ablation([ff(r, m) for r, m in zip((1, 2, 4), means)], sd=sd)
    result = ff_spread(frame, worse_above=None)
    assert result.verdict == verdict
    if verdict == INCONCLUSIVE:
        margin = max(means) - FF_LIMIT
        assert result.needs == verdicts.seeds_text(sd, margin, 3, 3, f"the spread's distance to {FF_LIMIT:g}%")
        assert f"({margin:+.2f})" in result.needs
    else:
        assert result.needs == ""


@pytest.mark.parametrize("top, sd, verdict", [(3.0, 0.05, HOLDS), (0.0, 0.05, FAILS), (0.5, 0.6, INCONCLUSIVE)])
def test_knob_spread_b_against_zero_and_the_cost_margin(top, sd, verdict):
    """(b), with (a) holding: a difference whose interval lies above FF_COST_MARGIN holds; one at or below it
    throughout fails (no cost worth 'a few percent'); else inconclusive, asking for seeds for the (b) difference
    only."""
    frame = ablation([ff(1, 0.0), ff(2, 0.2), ff(4, 0.1), ff(16, top)], sd=sd)
    shapes = kaplan.shape_table(frame, "ff_ratio")
    assert kaplan.spread_of(shapes.iloc[:3], sd, 12)[2] <= FF_LIMIT  # (a) holds
    low, high = kaplan.best_of_interval(shapes.iloc[3], shapes.iloc[:3], sd, 12)
    assert verdicts.exceeds(low, high, FF_COST_MARGIN) == verdict
    result = ff_spread(frame)
    assert result.verdict == verdict
    if verdict == INCONCLUSIVE:
        assert high > FF_COST_MARGIN
        assert result.needs == verdicts.seeds_text(sd, top, 3, 4, "the (b) difference")
    else:
        assert result.needs == ""


def test_one_value_in_the_range_leaves_part_a_not_run():
    """A figure of one run (one value in the range, one seed): (a) is not run, and with no (b) nor is the claim;
    nothing is asked, the noise column says one seed."""
    result = kaplan.knob_spread(
        ablation([head(16, 0.4)], seeds=1, sd=NAN, dof=0), "d_head", 0, math.inf, HEAD_DIM_LIMIT
    )
    assert result.verdict == NOT_RUN and result.needs == ""
    assert result.value == "(a) spread 0.00% over all d_head values (1 values)"
    assert result.interval == "(a) no interval" and result.noise == verdicts.ONE_SEED


def test_one_value_in_the_range_with_part_b_decided_asks_for_a_second_value():
    """(a) not run and (b) holding leave the claim inconclusive: it asks for what part (a) lacks, not for seeds."""
    result = ff_spread(ablation([ff(2, 0.0), ff(16, 5.0)], sd=0.05))
    assert result.verdict == INCONCLUSIVE
    assert result.needs == "train a second ff_ratio value in [1, 4] for part (a)"


def test_two_values_in_the_range_are_enough_for_part_a():
    """Two values in the range give (a) an interval and a verdict."""
    result = kaplan.knob_spread(ablation([head(8, 0.1), head(16, 0.0)], sd=0.05), "d_head", 0, math.inf, HEAD_DIM_LIMIT)
    assert result.verdict == HOLDS and result.interval != "(a) no interval"


def test_knob_spread_without_a_large_value_leaves_part_b_not_run_and_asks_for_it():
    """No ratio >= worse_above trained: (b) is not run, the claim is inconclusive however (a) reads, and it asks
    for those ratios; (a)'s interval alone is shown."""
    result = ff_spread(ablation([ff(1, 0.0), ff(2, 0.2), ff(4, 0.1), ff(6, 3.0)], sd=0.05))
    assert result.verdict == INCONCLUSIVE
    assert result.value == "(a) spread 0.20% over ff_ratio in [1, 4] (3 values); (b) no ff_ratio >= 8 trained"
    assert result.needs == "train ff_ratio >= 8 for part (b)" and "(b)" not in result.interval


def test_with_neither_part_run_the_claim_is_not_run():
    """One ratio in the range and none >= worse_above: neither (a) nor (b) ran, so neither did the claim; nothing is
    asked of an unrun claim."""
    result = ff_spread(ablation([ff(2, 0.0), ff(6, 3.0)], sd=0.05))
    assert result.verdict == NOT_RUN and result.needs == ""


@pytest.mark.parametrize(
    "shapes",
    [
        [ff(1, 0.0), ff(2, FF_LIMIT + 2.0), ff(16, 0.5)],  # (a) refuted, (b) undecided: [-0.6, 1.5]
        [ff(1, 0.0), ff(2, FF_LIMIT + 2.0), ff(6, 3.0)],  # (a) refuted, (b) not run
    ],
    ids=["b undecided", "b not run"],
)
def test_a_refuted_part_decides_the_claim_and_nothing_is_asked(shapes):
    """A spread well above the limit fails the claim whatever (b) shows: a decided claim asks for nothing, not even
    what the other part lacks."""
    result = ff_spread(ablation(shapes, sd=0.6))
    assert result.verdict == FAILS and result.needs == ""


def test_knob_spread_undecided_in_both_parts_asks_for_both():
    """(a) and (b) both undecided: the needs name the spread's distance to the limit, then the (b) difference."""
    frame = ablation([ff(1, 0.0), ff(2, FF_LIMIT + 0.3), ff(4, 0.1), ff(16, 0.4)], sd=0.5)
    result = ff_spread(frame)
    assert result.verdict == INCONCLUSIVE
    a = verdicts.seeds_text(0.5, 0.3, 3, 4, f"the spread's distance to {FF_LIMIT:g}%")
    b = verdicts.seeds_text(0.5, 0.4, 3, 4, "the (b) difference")
    assert result.needs == f"{a}; {b}"


def test_knob_spread_noise_and_scale_columns():
    """The noise column names the pooled sd, its dof and seeds per shape and Bartlett's p; the scale column says the
    statement is about shape, not scale."""
    result = ff_spread(ablation([ff(1, 0.0), ff(2, 0.2), ff(16, 3.0)], sd=0.25, dof=12))
    assert result.noise == verdicts.noise_text(0.25, 12, 3, 0.2, False)
    assert "Bartlett p = 0.2" in result.noise
    assert result.at_our_scale == "the paper's statement is about shape, not scale: same thresholds"


def test_the_claims_bind_the_knob_rules_to_the_papers_ranges():
    """kaplan_ffratio reads d_ff / d in [1, 4] against FF_LIMIT and ratios >= 8 for (b); kaplan_headdim every head
    dimension against HEAD_DIM_LIMIT, with no (b)."""
    rules = {claim.id: claim.measure for claim in kaplan.CLAIMS}
    assert isinstance(rules["kaplan_ffratio"], functools.partial)
    ff_keywords = {"knob": "ff_ratio", "low": 1, "high": 4, "limit": FF_LIMIT, "worse_above": 8}
    assert rules["kaplan_ffratio"].keywords == ff_keywords
    assert rules["kaplan_headdim"].keywords == {"knob": "d_head", "low": 0, "high": math.inf, "limit": HEAD_DIM_LIMIT}
    result = rules["kaplan_headdim"](ablation([head(8, 0.1), head(16, 0.0), head(64, 0.2)], sd=0.05))
    assert result.value == "(a) spread 0.20% over all d_head values (3 values)" and result.verdict == HOLDS


# ---------------------------------------------------------------- depth_collapse


@pytest.mark.parametrize(
    "lack, offset, verdict",
    [
        ((0.5, COLLAPSE_MARGIN), (4.0, 3.0, 5.0), HOLDS),  # (a) at most the margin, (b) above 0
        ((COLLAPSE_MARGIN + 0.5, 3.5), (4.0, 3.0, 5.0), FAILS),  # (a) above the margin
        ((0.5, 1.5), (0.5, -0.5, COLLAPSE_MARGIN), FAILS),  # (b) at most the margin throughout
        ((1.5, COLLAPSE_MARGIN + 0.5), (4.0, 3.0, 5.0), INCONCLUSIVE),  # (a) straddles
        ((0.5, 1.5), (1.5, -0.5, 3.5), INCONCLUSIVE),  # (b) straddles 0 and the margin
    ],
)
def test_depth_collapse_needs_both_parts(lack, offset, verdict):
    """(a) the lack of fit's interval at or below COLLAPSE_MARGIN and (b) the 1-layer offset's interval above 0 hold
    together; either one refuted fails the claim, either undecided leaves it inconclusive."""
    assert kaplan.depth_collapse(collapse(lack, offset)).verdict == verdict


def test_depth_collapse_asks_only_for_the_undecided_part():
    """(a) undecided: its interval straddles the margin (more seeds or shapes), no seeds for the offset; (b) undecided:
    the seeds that resolve the offset at the pooled sd over the figure's 3 shapes (not its 9 runs), no (a) text;
    decided: nothing."""
    only_a = kaplan.depth_collapse(collapse(lack=(1.5, 2.5)))
    assert only_a.needs == (
        f"(a) the lack of fit's interval [1.50, 2.50] straddles the {COLLAPSE_MARGIN:g}% margin: more seeds per shape "
        "(its upper end shrinks as the seed noise's interval does) or more shapes per depth"
    )
    only_b = kaplan.depth_collapse(collapse(offset=(1.5, -0.5, 3.5)))
    k = fits.seeds_needed(1.0, 1.5, seeds_now=3, shapes=3)
    assert k != fits.seeds_needed(1.0, 1.5, seeds_now=3, shapes=9)
    assert only_b.needs == f"about {k} seeds per shape would resolve the 1-layer offset (+1.50) at seed sd 1.00"
    assert kaplan.depth_collapse(collapse()).needs == ""
    both = kaplan.depth_collapse(collapse(lack=(1.5, 2.5), offset=(1.5, -0.5, 3.5)))
    assert both.verdict == INCONCLUSIVE and both.needs == f"{only_a.needs}; {only_b.needs}"


def test_depth_collapse_without_seed_noise_is_inconclusive_and_asks_for_two_seeds():
    """Without a seed dof (a) is never decided, whatever its columns say, and (b) however clear leaves the claim
    inconclusive; it asks for 2 seeds per shape and the seeds that would resolve the offset were the seed sd the
    scatter, pooled over the deep shapes."""
    result = kaplan.depth_collapse(collapse(lack=(0.5, 1.0), dof=0, sd=NAN, seeds=1))
    assert result.verdict == INCONCLUSIVE
    k = fits.seeds_needed(1.2, 4.0, seeds_now=2, shapes=2)
    assert result.needs == (
        "at least 2 seeds per shape to measure the seed noise; "
        f"about {k} seeds per shape would resolve the 1-layer offset (+4.00) if the seed sd were the scatter 1.20"
    )
    assert result.noise == verdicts.ONE_SEED


def test_depth_collapse_without_a_one_layer_offset_leaves_part_b_not_run():
    """No 1-layer model: (b) is not run, so the claim is not decided by (a) alone, and no seeds are asked for an
    offset that was not measured; the value says nan; a refuted (a) still fails it."""
    result = kaplan.depth_collapse(collapse(offset=(NAN, NAN, NAN)))
    assert result.verdict == INCONCLUSIVE
    assert result.needs == "train 1-layer models for part (b), the 1-layer offset"  # no seeds for an unmeasured one
    assert result.value.endswith("(b) 1-layer offset nan%")
    assert result.interval.endswith("(b) 1-layer offset (%) no interval")
    assert kaplan.depth_collapse(collapse(lack=(2.5, 3.5), offset=(NAN, NAN, NAN))).verdict == FAILS


def test_depth_collapse_texts():
    """The value gives the scatter, F and its 95% quantile, the lack of fit and the margin, the signed offset; the
    interval both intervals; the noise the pooled sd with its dof and seeds."""
    result = kaplan.depth_collapse(collapse(lack=(0.5, 1.5), offset=(4.0, 3.0, 5.0), sd=0.35))
    assert result.value == (
        "(a) scatter 1.20%, F = 3.50 (95% quantile 2.00), lack of fit beyond the seed noise 1.00% rms "
        f"(margin {COLLAPSE_MARGIN:g}%); (b) 1-layer offset +4.00%"
    )
    assert result.interval == "(a) lack of fit (% rms) [0.50, 1.50]; (b) 1-layer offset (%) [3.00, 5.00]"
    assert result.noise == "seed sd 0.35% of the loss (pooled, 36 dof; 3 seeds per shape)"
    assert result.at_our_scale == "the paper's statement is about parameter counting, not scale"


# ---------------------------------------------------------------- power_law


@pytest.mark.parametrize(
    "alpha, sagitta, verdict",
    [
        ((0.1, 0.09, 0.11), (0.2, -0.5, 0.6), HOLDS),
        ((0.1, 0.09, 0.11), (1.6, CURVATURE_MARGIN + 0.2, 2.0), FAILS),  # bowed: not a power law
        ((-0.01, -0.02, 0.0), (0.2, -0.5, 0.6), FAILS),  # alpha at or below 0: loss not decreasing
        ((0.01, -0.01, 0.03), (0.2, -0.5, 0.6), INCONCLUSIVE),  # straight, but alpha not shown above 0
        ((0.1, 0.09, 0.11), (0.2, -0.9, 1.3), INCONCLUSIVE),  # straight not shown
    ],
)
def test_power_law_verdict(alpha, sagitta, verdict):
    """Holds with alpha's interval above 0, the sagitta's within +-CURVATURE_MARGIN and a small rms; a sagitta wholly
    outside the margin or an alpha at or below 0 fails; any part undecided is inconclusive. Decided asks nothing."""
    result = kaplan.power_law(law(alpha, sagitta))
    assert result.verdict == verdict
    assert (result.needs == "") == (verdict != INCONCLUSIVE)


@pytest.mark.parametrize("rms, verdict", [(POWER_LAW_RMS_LIMIT * 0.99, HOLDS), (POWER_LAW_RMS_LIMIT, INCONCLUSIVE)])
def test_an_rms_residual_at_the_limit_keeps_the_power_law_inconclusive_and_says_so(rms, verdict):
    """The rms residual must be below POWER_LAW_RMS_LIMIT: exactly at it the law is inconclusive, and the needs say
    the runs scatter too much (and nothing else: alpha and the sagitta are decided)."""
    result = kaplan.power_law(law(rms=rms))
    assert result.verdict == verdict
    if verdict == INCONCLUSIVE:
        assert result.needs == (
            f"an rms residual below {POWER_LAW_RMS_LIMIT:g}% (now {rms:.2f}%): the runs scatter too much"
        )


@pytest.mark.parametrize(
    "low, high, alpha_n, path",
    [
        (0.05, 0.1, "includes", "includes"),
        (fits.KAPLAN_ALPHA_N, 0.1, "includes", "includes"),  # alpha_N on the lower end
        (0.01, fits.KAPLAN_ALPHA_N, "includes", "excludes"),  # alpha_N on the upper end, the path's above it
        (0.08, 0.089, "excludes", "includes"),  # the path's on the upper end
        (0.09, 0.1, "excludes", "excludes"),
        (NAN, 0.1, "no interval", "no interval"),
        (0.05, NAN, "no interval", "no interval"),
    ],
)
def test_power_law_says_whether_alpha_covers_kaplans_references(low, high, alpha_n, path):
    """The scale column: whether alpha's interval (ends included) covers Kaplan's alpha_N and the exponent of his
    L(N, D) along the runs' own N and tokens (0.089; at one fixed D it would be 0.027); without both ends, no
    interval."""
    result = kaplan.power_law(law(alpha=(0.07, low, high)))
    assert f"alpha_N = {fits.KAPLAN_ALPHA_N:.3f} (unlimited data): ours {alpha_n} it; " in result.at_our_scale
    assert (
        f"L(N, D) along the runs' own path (each run's N and tokens, D ~ 20 N): 0.089: ours {path} it (at one fixed "
        "1.5e+06 tokens/run it would be 0.027;"
    ) in result.at_our_scale


def test_an_alpha_not_shown_above_zero_asks_for_tokens_and_runs():
    """Alpha's interval straddles 0: the needs give its half-width, the tokens per run at which Kaplan's L(N, D)
    has a local slope that large over the finished runs' N (a failed run at larger N left out), and the runs
    factor (half / alpha)^2 to clear 0."""
    frame = law(alpha=(0.01, -0.01, 0.04))
    frame = pd.concat([frame, frame.iloc[:1].assign(n_nonembedding=1e8, status="failed")], ignore_index=True)
    result = kaplan.power_law(frame)
    assert result.verdict == INCONCLUSIVE
    half = 0.025
    d = fits.tokens_for_local_exponent(half, min(N_TRAINED), max(N_TRAINED))
    assert result.needs == (
        f"the interval's half-width is 0.025: Kaplan's L(N, D) predicts a slope that large at ~{d:.2g} tokens per "
        f"run (now 1.5e+06); or ~{(half / 0.01) ** 2:.1f}x the N values (now 4) for this alpha (0.010) to clear 0"
    )


def test_an_alpha_interval_wider_than_alpha_n_says_no_data_would_do():
    """A half-width at or above Kaplan's alpha_N: no amount of data gives L(N, D) that slope; the text says so."""
    result = kaplan.power_law(law(alpha=(0.05, -0.1, 0.2)))
    assert result.needs.startswith("the interval's half-width 0.150 exceeds even Kaplan's unlimited-data alpha_N; ")


@pytest.mark.parametrize(
    "sagitta, text",
    [
        ((0.2, -0.9, 1.3), "~{factor:.1f}x the N values (now 4) to place it inside"),
        ((CURVATURE_MARGIN, CURVATURE_MARGIN - 0.5, CURVATURE_MARGIN + 0.5), "its point lies outside"),
        ((-CURVATURE_MARGIN - 0.2, -CURVATURE_MARGIN - 0.6, -CURVATURE_MARGIN + 0.2), "its point lies outside"),
    ],
    ids=["inside", "on the margin", "outside"],
)
def test_a_sagitta_straddling_the_margin_asks_for_runs_only_if_its_point_is_inside(sagitta, text):
    """An undecided sagitta (alpha decided): with its point inside the margin, the runs factor that would place the
    interval inside, (half-width / (margin - |sagitta|))^2; with its point on or past the margin, no factor (more runs
    would show the bow). Alpha's interval clears 0: nothing about it."""
    bow, low, high = sagitta
    result = kaplan.power_law(law(sagitta=sagitta))
    assert result.verdict == INCONCLUSIVE
    factor = ((high - low) / 2 / (CURVATURE_MARGIN - abs(bow))) ** 2 if abs(bow) < CURVATURE_MARGIN else NAN
    assert result.needs.startswith(
        f"the sagitta's interval [{low:.2f}, {high:.2f}]% reaches past +-{CURVATURE_MARGIN:g}%: "
        + text.format(factor=factor)
    )
    assert "half-width" not in result.needs and "at least 4 runs" not in result.needs


def test_a_power_law_without_a_curvature_test_asks_for_runs_over_three_n():
    """No sagitta interval (too few runs or distinct N): inconclusive, and it asks for the runs the test needs."""
    result = kaplan.power_law(law(sagitta=(0.2, NAN, NAN)))
    assert result.verdict == INCONCLUSIVE
    assert result.needs == "at least 4 distinct N, with a residual dof, for the curvature test"
    assert result.interval.endswith("sagitta (%) no interval")


def test_power_law_texts():
    """The value gives alpha, the signed curvature and sagitta, the rms and the runs; the interval alpha's to three
    decimals, the curvature's to four (signed), the sagitta's; the noise the seeds per N and the fit's residuals."""
    result = kaplan.power_law(law())
    assert result.value == (
        "alpha = 0.100; curvature -0.0049, a sagitta of +0.20% over the N span; rms residual 0.50% (12 runs at 4 N)"
    )
    assert result.interval == "alpha [0.090, 0.110]; curvature [-0.0115, +0.0017]; sagitta (%) [-0.50, 0.60]"
    assert result.noise == (
        "seed sd 0.29% of the loss (pooled, 8 dof; 3 seeds per shape); the intervals are from the fit's residuals "
        "over the N values' seed means (the seeds of one N share its deviation)"
    )
    assert result.at_our_scale == (
        f"alpha_N = {fits.KAPLAN_ALPHA_N:.3f} (unlimited data): ours excludes it; L(N, D) along the runs' own path "
        "(each run's N and tokens, D ~ 20 N): 0.089: ours excludes it (at one fixed 1.5e+06 tokens/run it would be "
        "0.027; their constants belong to WebText2 and their BPE)"
    )


# ---------------------------------------------------------------- the figure's first row


@pytest.mark.parametrize(
    "rule, frame", [(kaplan.depth_collapse, collapse()), (kaplan.power_law, law())], ids=["collapse", "power law"]
)
def test_the_summary_rules_read_the_figures_first_row(rule, frame):
    """The Fig. 6 and power-law figures repeat their fit on every run's row: the verdict and texts come from it,
    so a figure of its first row alone gives the same."""
    whole, first = rule(frame), rule(frame.iloc[:1])
    assert (first.verdict, first.value, first.interval, first.at_our_scale) == (
        whole.verdict,
        whole.value,
        whole.interval,
        whole.at_our_scale,
    )


def test_a_power_law_figure_without_its_group_count_counts_its_distinct_n():
    """An older figure CSV without `fit_groups`: the rule counts the distinct N of its finished runs (4 here)."""
    result = kaplan.power_law(law().drop(columns="fit_groups"))
    assert "(12 runs at 4 N)" in result.value
