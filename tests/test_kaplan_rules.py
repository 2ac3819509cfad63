"""Kaplan's rules read directly, on small hand-built figure tables: the numbers they compute (spreads, differences,
bootstrap draws), the edges of their windows and limits, every branch of their verdicts, what would decide them (in
numbers), and a few texts a reader relies on. The pipeline tests (test_verdicts, test_planted_laws) check verdicts of
whole figures; mutation testing (scripts/mutation) found the rules' arithmetic untested there.

Each table is small and built so that the rule as written and a slightly different reading of it disagree on it. The
rules run as the claims table runs them (tests/claim_rules.py): with their registry params, on rows checked against
the columns they read.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from claim_rules import evidence, needs, parts, text
from depthwidth import fits
from depthwidth.claims import kaplan, registry, verdicts, wording
from depthwidth.claims.kaplan import SPREAD_DRAWS
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, Need, Noise
from scipy import stats

NAN = math.nan
ASPECT, FFRATIO, HEADDIM = "kaplan_aspect_basin", "kaplan_ffratio", "kaplan_headdim"
COLLAPSE, POWER = "kaplan_depth_collapse", "kaplan_power_law"


def param(claim_id: str, name: str):
    """A margin or setting the registry gives a claim's rule."""
    return registry.BY_ID[claim_id].params[name]


ASPECT_LIMIT, SPAN = param(ASPECT, "limit"), registry.KAPLAN_ASPECT_SPAN
FF_LIMIT, FF_COST, HEAD_DIM_LIMIT = param(FFRATIO, "limit"), param(FFRATIO, "cost"), param(HEADDIM, "limit")
COLLAPSE_MARGIN = param(COLLAPSE, "margin")
CURVATURE_MARGIN, RMS_LIMIT = param(POWER, "curvature"), param(POWER, "rms_limit")


# ---------------------------------------------------------------- builders


def ablation(shapes: list[dict], seeds: int = 3, sd: float = 0.3, dof: int = 12, **figure) -> pd.DataFrame:
    """Rows of a Fig. 5 ablation figure: `seeds` finished runs of each shape (a dict of its own columns: its
    increase_pct_mean and knob, optionally n_target, n_layer, d_model, seeds, noise_shape_sd_pct, noise_shape_dof),
    with the figure's seed noise (pooled sd, dof; the moderated prior at that sd with infinite dof: every shape at
    the pooled sd and dof), the L(N) fit's rms on every row, a finite loss and no learning-rate scan
    (`lr_excess_pct` nan)."""
    rows = []
    for shape in shapes:
        shape = {"n_target": 50000, "n_layer": 4, "d_model": 32, "seeds": seeds} | shape
        shape = {"noise_shape_sd_pct": sd, "noise_shape_dof": dof} | shape
        for seed in range(int(shape["seeds"])):
            rows.append(shape | {"seed": seed, "increase_pct": shape["increase_pct_mean"] + seed / 100, "status": "ok"})
    noise = {"noise_sd_pct": sd, "noise_dof": dof, "noise_prior_sd_pct": sd, "noise_prior_dof": math.inf}
    runs = {"baseline_rms_pct": 0.5, "final_val_loss": 4.0, "lr_excess_pct": NAN}
    return pd.DataFrame(rows).assign(**(noise | runs | figure))


def aspect(ratio: float, mean: float, n: int = 50000, depth: int = 4) -> dict:
    """A shape of the aspect-ratio figure: depth `depth` at aspect ratio d/L = `ratio`."""
    return {"n_target": n, "n_layer": depth, "d_model": ratio * depth, "aspect_ratio": ratio, "increase_pct_mean": mean}


def ff(ratio: float, mean: float) -> dict:
    """A shape of the feed-forward figure: d_ff / d = `ratio` (its own width, as at fixed N)."""
    return {"d_model": 64 + ratio, "ff_ratio": ratio, "increase_pct_mean": mean}


def head(d_head: int, mean: float) -> dict:
    """A shape of the head-dimension figure: one depth and width, head dimension `d_head`."""
    return {"d_head": d_head, "increase_pct_mean": mean}


def ff_spread(frame: pd.DataFrame, worse_above: float | None = 8) -> kaplan.KnobSpread:
    """kaplan_ffratio's rule: d_ff / d in [1, 4] against FF_LIMIT, (b) at ratios >= `worse_above`."""
    return evidence(FFRATIO, frame, worse_above=worse_above)


def seeds_asked(e: verdicts.Evidence) -> list[dict]:
    """The numbers of every 'seeds' need, in order."""
    return [dict(n.numbers) for n in e.needs if n.kind == "seeds"]


def pooled(noise: Noise) -> tuple[float, int, int]:
    """A seed noise without moderated variances (a figure that pools only: its prior nan): its pooled sd, dof and
    seeds per shape."""
    assert math.isnan(noise.prior_sd) and math.isnan(noise.prior_dof)
    return noise.sd, noise.dof, noise.seeds


def table(means, seeds, sd=0.5, dof=12) -> pd.DataFrame:
    """A shape table as redrawn_means reads it: each shape's seed mean, seeds, and moderated sd and dof (one for
    every shape, or each its own)."""
    shapes = pd.DataFrame({"increase_pct_mean": np.asarray(means, float), "seeds": seeds})
    return shapes.assign(noise_shape_sd_pct=sd, noise_shape_dof=dof)


def collapse(lack=(0.5, 1.5), offset=(4.0, 3.0, 5.0), dof: int = 36, sd: float = 1.0, seeds: int = 3, **summary):
    """Rows of the Fig. 6 figure at one count: 3 seeds of a 1-layer and two deeper shapes, each row carrying the
    figure's summary: the lack of fit's interval (% rms), the 1-layer offset (mean, low, high), the seed noise, and
    no learning-rate shift of their own (`*_sys_down/_sys_up` nan)."""
    row = {"scatter_pct": 1.2, "lof_f": 3.5, "lof_f95": 2.0, "lof_sd_pct": sum(lack) / 2, "deep_shapes": 2}
    row |= {"lof_sd_ci_low": lack[0], "lof_sd_ci_high": lack[1], "noise_sd_pct": sd, "noise_dof": dof}
    row |= dict(zip(("offset_1layer_pct", "offset_ci_low", "offset_ci_high"), offset))
    row |= {f"{name}_sys_{side}": NAN for name in ("lof", "offset") for side in ("down", "up")}
    row |= {"seeds": seeds, "count": "non-embedding N"} | summary
    shapes = [(1, 46), (2, 32), (4, 22)]
    return pd.DataFrame(
        [{"n_layer": depth, "d_model": d, "seed": s} | row for depth, d in shapes for s in range(seeds)]
    )


N_TRAINED = (2.5e4, 5e4, 1e5, 2e5)


def least_groups_factor(half: float, room: float, groups: int, parameters: int, level: float = 0.95) -> float:
    """Independently of fits.groups_factor_needed: the least k on a fine grid at which a fit of `groups` N values now
    (t interval of half-width `half` at `level`) reaches `room` with k times the N values, its t quantile at their
    dof and its standard error / sqrt(k)."""
    q = 1 - (1 - level) / 2
    se = half / stats.t.ppf(q, groups - parameters)
    ks = np.arange(1.0, 200.0, 0.001)
    reached = stats.t.ppf(q, ks * groups - parameters) * se / np.sqrt(ks) <= room
    return float(ks[np.argmax(reached)]) if reached.any() else math.inf


def law(alpha=(0.1, 0.09, 0.11), sagitta=(0.2, -0.5, 0.6), rms: float = 0.5, seeds: int = 3, **fit) -> pd.DataFrame:
    """Rows of the power-law figure: `seeds` finished runs at each N in N_TRAINED, each row carrying the fit:
    alpha (value, low, high), the sagitta (%, no shift of its own), the rms residual, the curvature, the seed
    noise, Kaplan's references."""
    row = dict(zip(("alpha", "alpha_ci_low", "alpha_ci_high"), alpha))
    row |= dict(zip(("sagitta_pct", "sagitta_ci_low", "sagitta_ci_high"), sagitta))
    row |= {"sagitta_sys_down": NAN, "sagitta_sys_up": NAN, "final_val_loss": 4.0}
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
    assert kaplan.redrawn_means(table([0.0, 1.0], 1, sd, dof)) is None


def test_redrawn_means_are_t_draws_with_the_shapes_sd_over_root_seeds_and_its_dof():
    """Where every shape has one moderated sd and dof (the prior worth every dof there is), each shape's mean is
    redrawn as mean + t(dof) * sd / sqrt(seeds): centred on the seed mean, with t's quartile."""
    means, sd, dof = np.arange(8.0), 0.5, 12
    draws = kaplan.redrawn_means(table(means, 3, sd, dof))
    assert draws.shape == (SPREAD_DRAWS, 8)
    scale = sd / math.sqrt(3)
    assert float(np.median((draws - means) / scale)) == pytest.approx(0.0, abs=0.03)
    assert quartile(draws, means, scale) == pytest.approx(stats.t.ppf(0.75, dof), abs=0.03)


def test_redrawn_means_take_each_shapes_moderated_sd_and_dof():
    """Each shape is redrawn at the figure's moderated sd and dof for it (noise_shape_sd_pct, noise_shape_dof), over
    sqrt(its seeds): 3 seeds at 0.1% with 4.5 dof, 2 seeds at 2% with 3.5 dof, 1 seed at the prior's 0.5%, 2.5 dof."""
    seeds = [3] * 4 + [2] * 4 + [1] * 4
    sds = [0.1] * 4 + [2.0] * 4 + [0.5] * 4
    dofs = [4.5] * 4 + [3.5] * 4 + [2.5] * 4
    means = np.arange(12.0)
    draws = kaplan.redrawn_means(table(means, seeds, sds, dofs))
    groups = [(slice(0, 4), 0.1 / math.sqrt(3), 4.5), (slice(4, 8), 2.0 / math.sqrt(2), 3.5), (slice(8, 12), 0.5, 2.5)]
    for columns, scale, t_dof in groups:
        assert quartile(draws[:, columns], means[columns], scale) == pytest.approx(
            stats.t.ppf(0.75, t_dof), abs=0.05
        ), (scale, t_dof)


def test_the_spread_is_the_largest_minus_the_smallest_shape_mean():
    """The spread is max - min of the seed means (here 2.5 - (-1.0)), whatever their order."""
    spread, *_ = kaplan.spread_of(table([0.5, -1.0, 2.5, 1.0], 3, 0.3, 12))
    assert spread == pytest.approx(3.5)


def test_the_spread_interval_is_the_spread_less_and_plus_the_noises_own_spread_at_each_level():
    """Each level's interval is the spread -+ that quantile of max - min of the redrawn errors (each redraw less
    the observed means), its low end at least 0; one pair of ends per level asked for, 95% by default."""
    shapes = table([0.0, 0.4, 0.1, 0.3], 3, 0.5, 12)
    errors = kaplan.redrawn_means(shapes) - np.array([0.0, 0.4, 0.1, 0.3])
    reach = errors.max(axis=1) - errors.min(axis=1)
    spread, low, high, low99, high99 = kaplan.spread_of(shapes, 0.95, 0.99)
    assert spread == pytest.approx(0.4)
    assert (low, high) == pytest.approx((max(0.0, 0.4 - np.quantile(reach, 0.95)), 0.4 + np.quantile(reach, 0.95)))
    assert (low99, high99) == pytest.approx((0.0, 0.4 + np.quantile(reach, 0.99)))
    assert low == 0.0 and high99 > high
    wide = table([0.0, 4.0, 1.0, 3.0], 3, 0.5, 12)  # a spread far above the noise: both ends move with it
    _, w_low, w_high = kaplan.spread_of(wide)
    assert (w_low, w_high) == pytest.approx((4.0 - (high - 0.4), 4.0 + (high - 0.4)), rel=0.05)
    assert kaplan.spread_of(shapes) == pytest.approx((spread, low, high))


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
        _, low, high = kaplan.spread_of(table(seeds.mean(axis=1), 3, sd, 8))
        covered += low <= truth <= high
    assert covered >= 0.93 * 300, covered


def test_two_shapes_give_a_spread_interval_and_one_shape_or_one_seed_none():
    """Two shapes are enough for an interval of their spread; one shape has a spread of 0 and no interval; neither
    has one without a seed noise."""
    assert all(np.isfinite(kaplan.spread_of(table([0.0, 1.0], 3, 0.3, 12))))
    spread, low, high = kaplan.spread_of(table([1.0], 3, 0.2, 12))
    assert spread == 0.0 and math.isnan(low) and math.isnan(high)
    spread, low, high = kaplan.spread_of(table([0.0, 1.0], 1, NAN, 0))
    assert spread == 1.0 and math.isnan(low) and math.isnan(high)


# ---------------------------------------------------------------- what would decide an ablation rule


@pytest.mark.parametrize("dof, one_seed", [(0, True), (1, False), (12, False)])
def test_undecided_seeds_name_what_they_resolve_and_no_count(dof, one_seed):
    """An undecided ablation part asks for more seeds for what it leaves open (its effect and limit), with no count:
    how many is decide's, by the row's own procedure; without a seed dof it asks first for a second seed."""
    frame = ablation([ff(1, 0.0) | {"seeds": 2}, ff(2, 1.0) | {"seeds": 1}], sd=1.0 if dof else NAN, dof=dof)
    asked = kaplan._seeds_need(frame, 1.7, "spread_distance", limit=FF_LIMIT)
    numbers = {"effect": 1.7, "what": "spread_distance", "one_seed": one_seed, "limit": FF_LIMIT}
    assert asked == Need("seeds", numbers)
    said = wording.seeds_text(asked.numbers)
    assert "the spread's distance to 2% (+1.70)" in said and "decide.sims is 0" in said
    assert said.startswith("at least 2 seeds per shape to measure the seed noise") == one_seed
    assert "about" not in said and "seed sd" not in said  # no count, and no sd it would be computed at


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
    found = kaplan.basin_window(shapes, SPAN)
    assert found["aspect_ratio"].tolist() == window
    assert list(found.columns) == list(shapes.columns)
    assert found["increase_pct_mean"].min() == min(means)


# ---------------------------------------------------------------- aspect_basin


def test_aspect_basin_reports_each_ns_window_spread_and_interval():
    """Per N: the spread over its window (one-layer shapes apart), its 95% interval and the window's span and
    shapes, one part per N read against the limit; the largest spread. In words (a golden wording test), the largest
    spread leads the value and the interval column restates each N's spread and interval."""
    frame = ablation(
        [aspect(2.0, 1.0), aspect(8.0, 0.0), aspect(40.0, 0.5), aspect(46.0, -3.0, depth=1)]
        + [aspect(2.0, 0.0, n=100000), aspect(40.0, 0.2, n=100000)],
        sd=0.3,
    )
    e = evidence(ASPECT, frame)
    said, intervals = [], []
    assert len(e.windows) == len(e.parts) == 2
    for window, spread_n, (n, spread) in zip(e.windows, e.parts, ((50000, 1.0), (100000, 0.2))):
        shapes = kaplan.shape_table(frame[(frame["n_target"] == n) & (frame["n_layer"] >= 2)], "aspect_ratio")
        same, low, high = kaplan.spread_of(shapes)
        assert same == pytest.approx(spread)
        found = (window.n, window.spread, window.low, window.high, window.span, window.shapes)
        assert found == pytest.approx((n, spread, low, high, 20.0, len(shapes)))
        assert (window.ratio_low, window.ratio_high) == (2.0, 40.0)  # the window's own aspect ratios, depth >= 2
        read = (spread_n.name, spread_n.value, spread_n.low, spread_n.high, spread_n.margin, spread_n.verdict)
        assert read == pytest.approx(("spread", spread, low, high, ASPECT_LIMIT, HOLDS)) and spread_n.at == {"n": n}
        said.append(f"N={n:.2g}: {spread:.2f}% [{low:.2f}, {high:.2f}] over 20x, d/L 2-40 ({len(shapes)} shapes)")
        intervals.append(f"{spread:.2f}% [{low:.2f}, {high:.2f}]")
    assert (e.largest, e.span, e.span_limit, e.partial) == pytest.approx((1.0, 20.0, SPAN, False))
    words = text(ASPECT, frame)
    assert words.value == ["largest spread 1.00%", *said]
    assert words.interval == "; ".join(intervals)
    # both windows reach below Kaplan's basin (d/L 10-300): named, and the verdict said to be about them alone
    assert [w.n for w in e.outside] == [50000, 100000] and e.basin == (10.0, 300.0)
    assert words.at_our_scale == (
        "a span of aspect ratios of 20x was tested (Kaplan's basin: ~40x); windows reaching outside Kaplan's basin "
        "(d/L 10-300): N=5e+04: d/L 2-40, N=1e+05: d/L 2-40 -- the verdict is about these windows: a spread there is "
        "no evidence against his basin"
    )
    inside = ablation([aspect(12.0, 0.0), aspect(48.0, 0.5), aspect(240.0, 1.0)], sd=0.3)
    assert not evidence(ASPECT, inside).outside  # a window within d/L 10-300 is Kaplan's own: nothing to say
    assert "outside" not in text(ASPECT, inside).at_our_scale


@pytest.mark.parametrize(
    "means, sd, verdict", [([0.0, 0.5], 0.3, HOLDS), ([0.0, ASPECT_LIMIT + 5.0], 0.1, FAILS)], ids=["flat", "steep"]
)
def test_aspect_basin_decided_against_the_limit_asks_for_nothing(means, sd, verdict):
    """A spread whose interval lies at or below ASPECT_LIMIT over a 20x window holds; one above it fails; a decided
    verdict asks for nothing."""
    e = evidence(ASPECT, ablation([aspect(2.0, means[0]), aspect(40.0, means[1])], sd=sd))
    assert e.verdict == verdict and e.needs == ()
    assert parts(e)["spread"].verdict == verdict and parts(e)["spread"].value == pytest.approx(means[1])


def test_aspect_basin_straddling_the_limit_asks_for_the_seeds_that_resolve_the_spreads_distance():
    """A spread of ASPECT_LIMIT + 1.5 with a wide interval is inconclusive: it asks for the seeds that resolve
    the largest spread's distance to the limit (+1.50)."""
    e = evidence(ASPECT, ablation([aspect(2.0, 0.0), aspect(40.0, ASPECT_LIMIT + 1.5)], sd=1.0))
    assert e.verdict == INCONCLUSIVE
    distance = {"effect": 1.5, "what": "spread_distance", "one_seed": False, "limit": ASPECT_LIMIT}
    assert [n.kind for n in e.needs] == ["seeds"] and needs(e)["seeds"] == pytest.approx(distance)


@pytest.mark.parametrize("span, partial", [(SPAN / 2, False), (SPAN / 2 * 0.95, True)])
def test_a_window_of_half_the_span_is_not_partial_and_a_narrower_one_is(span, partial):
    """A flat window spanning exactly half of KAPLAN_ASPECT_SPAN (20x) holds; under it (19x) the test is PARTIAL and
    inconclusive, and asks for depths spanning the whole 40x; the narrowest N's span decides (the other spans 40x)."""
    frame = ablation([aspect(2.0, 0.0), aspect(2.0 * span, 0.3), aspect(1.0, 0.0, n=100000), aspect(40.0, 0.3, 100000)])
    e = evidence(ASPECT, frame)
    assert e.verdict == (INCONCLUSIVE if partial else HOLDS)
    assert e.partial == partial and all(p.verdict == HOLDS for p in e.parts)  # each N's spread holds on its own
    assert (e.span, e.span_limit) == pytest.approx((span, SPAN))
    assert [w.span for w in e.windows] == pytest.approx([span, 40.0])
    if partial:  # inconclusive from its span: the spread's own seeds come first
        assert [n.kind for n in e.needs] == ["seeds", "aspect_span"]
        assert needs(e)["aspect_span"] == pytest.approx({"span": SPAN, "tested": span})
    else:
        assert e.needs == ()


def test_a_steep_partial_window_still_fails():
    """A narrow window is no evidence of a flat 40x one, but a spread above the limit within it refutes flatness."""
    e = evidence(ASPECT, ablation([aspect(2.0, 0.0), aspect(20.0, ASPECT_LIMIT + 5.0)], sd=0.1))
    assert e.verdict == FAILS and e.partial and e.span == pytest.approx(10.0)
    assert e.needs == (Need("aspect_span", {"span": SPAN, "tested": pytest.approx(10.0)}),)  # no seeds: decided


def test_bonferroni_an_n_that_fails_at_95_but_not_at_the_shared_level_is_inconclusive():
    """A spread whose 95% interval lies above ASPECT_LIMIT but whose 97.5% one (1 - 0.05 / 2: two N tested) does not
    fails when its N is the only one and is inconclusive next to a second N; the interval kept is the 95% one."""
    steep = [aspect(2.0, 0.0), aspect(40.0, ASPECT_LIMIT + 2.0)]
    flat = [aspect(2.0, 0.0, n=100000), aspect(40.0, 0.0, n=100000)]
    _, low, high, strict_low, _ = kaplan.spread_of(
        kaplan.shape_table(ablation(steep, sd=1.0), "aspect_ratio"), 0.95, 0.975
    )
    assert low > ASPECT_LIMIT >= strict_low  # the table is built for this
    assert evidence(ASPECT, ablation(steep, sd=1.0)).verdict == FAILS
    e = evidence(ASPECT, ablation(steep + flat, sd=1.0))
    assert e.verdict == INCONCLUSIVE
    first = e.parts[0]
    assert first.at == {"n": 50000} and first.verdict == INCONCLUSIVE
    assert (first.value, first.low, first.high) == pytest.approx((ASPECT_LIMIT + 2.0, low, high))
    assert needs(e)["seeds"]["effect"] == pytest.approx(2.0) and needs(e)["seeds"]["limit"] == ASPECT_LIMIT


def test_a_shared_level_interval_ending_on_the_limit_does_not_show_the_spread_above_it():
    """Within the learning-rate systematic, a steep N whose 95% interval lies above ASPECT_LIMIT and whose 97.5% one
    (two N tested) ends exactly on it is inconclusive: 'above the limit' excludes the limit, as in `below`."""
    steep = [aspect(2.0, 0.0), aspect(40.0, ASPECT_LIMIT + 3.0)]
    flat = [aspect(2.0, 0.0, n=100000), aspect(40.0, 0.0, n=100000)]
    window = kaplan.shape_table(ablation(steep, sd=1.0), "aspect_ratio")
    _, low, _, strict_low, _ = kaplan.spread_of(window, 0.95, 0.975)
    systematic = strict_low - ASPECT_LIMIT  # widens every interval by this much: the strict one ends on the limit
    assert systematic > 0 and strict_low - systematic == ASPECT_LIMIT < low - systematic
    e = evidence(ASPECT, ablation(steep + flat, sd=1.0), fallback=systematic)
    assert e.verdict == INCONCLUSIVE
    first = e.parts[0]  # no shape scanned: the fallback, both ways
    assert first.carried and not first.own and (first.down, first.up) == (systematic, systematic)
    assert first.wide[0] > ASPECT_LIMIT  # its 95% interval, widened, still lies above the limit


@pytest.mark.parametrize(
    "prior_sd, prior_dof, moderated",
    [
        (0.28, math.inf, "moderated: the shapes' sds scatter as sampling does, one sd (0.28%) for every shape"),
        (0.21, 2.34, "moderated: each shape's sd shrunk toward 0.21% with 2.3 prior dof"),
    ],
)
def test_aspect_basin_noise_names_the_pooled_sd_its_dof_the_seeds_and_the_moderated_prior(
    prior_sd, prior_dof, moderated
):
    """The seed noise is the pooled seed sd with its dof and seeds per shape, and the prior the figure's moderated
    variances shrank each shape's sd toward with its dof; in words (a golden wording test), the noise column says
    so."""
    frame = ablation(
        [aspect(2.0, 0.0), aspect(40.0, 0.5)], sd=0.3, noise_prior_sd_pct=prior_sd, noise_prior_dof=prior_dof
    )
    assert evidence(ASPECT, frame).noise == Noise(0.3, 12, 3, prior_sd, prior_dof)
    assert text(ASPECT, frame).noise == f"seed sd 0.30% of the loss (pooled, 12 dof; 3 seeds per shape); {moderated}"


def test_one_trained_shape_has_no_spread_and_is_partial():
    """A figure of one run: a spread of 0 without an interval over 1x: inconclusive and PARTIAL; it asks for the
    seeds that would resolve the spread, a second first to measure the seed noise, and for depths spanning the aspect
    span."""
    e = evidence(ASPECT, ablation([aspect(8.0, 0.3)], seeds=1, sd=NAN, dof=0))
    assert e.verdict == INCONCLUSIVE and e.partial and e.largest == 0.0
    (window,) = e.windows
    assert (window.n, window.spread, window.span, window.shapes) == (50000, 0.0, 1.0, 1)
    assert math.isnan(window.low) and math.isnan(window.high)
    assert [n.kind for n in e.needs] == ["seeds", "aspect_span"]
    assert needs(e)["seeds"]["one_seed"] and needs(e)["aspect_span"] == {"span": SPAN, "tested": 1.0}
    assert e.noise.dof == 0 and e.seeds == 1


# ---------------------------------------------------------------- best-of and knob_spread


def test_best_of_interval_is_the_top_minus_the_best_rechosen_on_every_redraw():
    """The (b) interval: the percentile interval of the top shape's redrawn mean minus the least of the others' on
    every redraw (the best of several is a selected statistic), not minus a fixed one."""
    shapes = kaplan.shape_table(ablation([ff(1, 0.0), ff(2, 0.1), ff(4, 0.3), ff(16, 1.0)], sd=0.5), "ff_ratio")
    top, inside = shapes.iloc[3], shapes.iloc[:3]
    draws = kaplan.redrawn_means(shapes.iloc[[3, 0, 1, 2]])
    expected = np.quantile(draws[:, 0] - draws[:, 1:].min(axis=1), [0.025, 0.975])
    assert kaplan.best_of_interval(top, inside) == pytest.approx(tuple(expected))
    fixed = np.quantile(draws[:, 0] - draws[:, 1], [0.025, 0.975])
    assert expected[1] > fixed[1] + 0.05  # the reading it is not


def test_best_of_interval_without_noise_is_the_difference_and_with_one_seed_none():
    """With a vanishing seed sd the interval closes on top - best (1.0 - 0.0; the best is the first of the others,
    so none of them is skipped); with one seed there is none."""

    def best_of(**noise):
        shapes = kaplan.shape_table(ablation([ff(1, 0.0), ff(2, 0.1), ff(16, 1.0)], **noise), "ff_ratio")
        return kaplan.best_of_interval(shapes.iloc[2], shapes.iloc[:2])

    assert best_of(sd=1e-9) == pytest.approx((1.0, 1.0), abs=1e-6)
    assert all(math.isnan(v) for v in best_of(sd=NAN, dof=0))


def test_knob_spread_a_is_the_spread_over_the_values_in_the_range_ends_included():
    """(a) is max - min of the seed means over the knob values in [low, high], both ends included (1 and 4), not
    the values outside it (0.5 below, 6 between the range and worse_above); its interval is their spread's."""
    frame = ablation([ff(0.5, 9.0), ff(1, 1.0), ff(2, 0.5), ff(4, 0.0), ff(6, 7.0)], sd=0.1)
    e = ff_spread(frame, worse_above=None)
    (spread,) = e.parts
    inside = kaplan.shape_table(frame, "ff_ratio").iloc[1:4]
    assert (spread.value, spread.low, spread.high) == pytest.approx(kaplan.spread_of(inside))
    assert spread.value == pytest.approx(1.0) and (e.knob, e.low, e.high, e.values) == ("ff_ratio", 1.0, 4.0, 3)
    assert spread.at == {"knob": "ff_ratio", "low": 1.0, "high": 4.0} and spread.margin == FF_LIMIT
    assert e.verdict == spread.verdict == HOLDS


def test_knob_spread_b_is_the_largest_value_minus_the_best_in_the_range():
    """(b) compares the largest knob value >= worse_above (16, though 8 is worse) with the best (least) mean in
    [low, high] (ratio 2, not the first one): +3.00%; its interval is the best-of interval, read against the cost."""
    frame = ablation([ff(1, 1.5), ff(2, 0.5), ff(4, 1.0), ff(8, 5.5), ff(16, 3.5)], sd=0.1)
    e = ff_spread(frame)
    spread, cost = e.parts
    shapes = kaplan.shape_table(frame, "ff_ratio")
    assert (spread.value, spread.low, spread.high) == pytest.approx(kaplan.spread_of(shapes.iloc[:3]))
    interval = kaplan.best_of_interval(shapes.iloc[4], shapes.iloc[:3])
    assert (cost.name, cost.value, cost.low, cost.high) == pytest.approx(("cost", 3.0, *interval))
    assert e.top == 16 and cost.at == {"top": 16.0, "knob": "ff_ratio", "low": 1.0, "high": 4.0}
    assert cost.margin == FF_COST and e.worse_above == 8
    assert e.verdict == HOLDS and e.needs == ()


def test_a_knob_value_equal_to_worse_above_counts_as_large():
    """'Ratios of 8 and above': a ratio of exactly 8 is tested against the range."""
    e = ff_spread(ablation([ff(1, 0.0), ff(4, 0.2), ff(8, 3.0)], sd=0.1))
    assert e.top == 8 and parts(e)["cost"].value == pytest.approx(3.0) and e.verdict == HOLDS


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
    e = ff_spread(frame, worse_above=None)
    assert e.verdict == e.parts[0].verdict == verdict
    if verdict == INCONCLUSIVE:
        margin = max(means) - FF_LIMIT
        distance = {"effect": margin, "what": "spread_distance", "one_seed": False, "limit": FF_LIMIT}
        assert [n.kind for n in e.needs] == ["seeds"] and needs(e)["seeds"] == pytest.approx(distance)
    else:
        assert e.needs == ()


@pytest.mark.parametrize("top, sd, verdict", [(3.0, 0.05, HOLDS), (0.0, 0.05, FAILS), (0.5, 0.6, INCONCLUSIVE)])
def test_knob_spread_b_against_zero_and_the_cost_margin(top, sd, verdict):
    """(b), with (a) holding: a difference whose interval lies above FF_COST holds; one at or below it throughout
    fails (no cost worth 'a few percent'); else inconclusive, asking for seeds for the (b) difference only."""
    frame = ablation([ff(1, 0.0), ff(2, 0.2), ff(4, 0.1), ff(16, top)], sd=sd)
    shapes = kaplan.shape_table(frame, "ff_ratio")
    assert kaplan.spread_of(shapes.iloc[:3])[2] <= FF_LIMIT  # (a) holds
    low, high = kaplan.best_of_interval(shapes.iloc[3], shapes.iloc[:3])
    assert verdicts.above(low, high, FF_COST) == verdict
    e = ff_spread(frame)
    assert e.verdict == verdict and parts(e)["spread"].verdict == HOLDS
    if verdict == INCONCLUSIVE:
        assert high > FF_COST
        difference = {"effect": top, "what": "cost_difference", "one_seed": False}
        assert [n.kind for n in e.needs] == ["seeds"] and needs(e)["seeds"] == pytest.approx(difference)
    else:
        assert e.needs == ()


def test_one_value_in_the_range_leaves_part_a_not_run():
    """A figure of one run (one value in the range, one seed): (a) is not run, and with no (b) nor is the claim;
    nothing is asked; the spread is 0 without an interval, and the noise is one seed's (no dof)."""
    e = evidence(HEADDIM, ablation([head(16, 0.4)], seeds=1, sd=NAN, dof=0))
    assert e.verdict == NOT_RUN and e.needs == ()
    (spread,) = e.parts
    assert spread.verdict == NOT_RUN and spread.value == 0.0 and e.values == 1
    assert math.isnan(spread.low) and math.isnan(spread.high) and e.noise.dof == 0


def test_one_value_in_the_range_with_part_b_decided_asks_for_a_second_value():
    """(a) not run and (b) holding leave the claim inconclusive: it asks for what part (a) lacks, not for seeds."""
    e = ff_spread(ablation([ff(2, 0.0), ff(16, 5.0)], sd=0.05))
    assert e.verdict == INCONCLUSIVE
    assert [p.verdict for p in e.parts] == [NOT_RUN, HOLDS]
    assert e.needs == (Need("second_knob_value", {"knob": "ff_ratio", "low": 1.0, "high": 4.0}),)


def test_two_values_in_the_range_are_enough_for_part_a():
    """Two values in the range give (a) an interval and a verdict."""
    e = evidence(HEADDIM, ablation([head(8, 0.1), head(16, 0.0)], sd=0.05))
    assert e.verdict == HOLDS and np.isfinite([e.parts[0].low, e.parts[0].high]).all()


def test_knob_spread_without_a_large_value_leaves_part_b_not_run_and_asks_for_it():
    """No ratio >= worse_above trained: (b) is not run, the claim is inconclusive however (a) reads, and it asks
    for those ratios; (a) alone is read."""
    e = ff_spread(ablation([ff(1, 0.0), ff(2, 0.2), ff(4, 0.1), ff(6, 3.0)], sd=0.05))
    assert e.verdict == INCONCLUSIVE
    (spread,) = e.parts
    assert spread.verdict == HOLDS and spread.value == pytest.approx(0.2) and math.isnan(e.top)
    assert e.needs == (Need("large_knob_value", {"knob": "ff_ratio", "at_least": 8.0}),)


def test_with_neither_part_run_the_claim_is_not_run():
    """One ratio in the range and none >= worse_above: neither (a) nor (b) ran, so neither did the claim; nothing is
    asked of an unrun claim."""
    e = ff_spread(ablation([ff(2, 0.0), ff(6, 3.0)], sd=0.05))
    assert e.verdict == NOT_RUN and e.needs == ()


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
    e = ff_spread(ablation(shapes, sd=0.6))
    assert e.verdict == FAILS and e.parts[0].verdict == FAILS and e.needs == ()


def test_knob_spread_undecided_in_both_parts_asks_for_both():
    """(a) and (b) both undecided: it asks for the seeds that resolve the spread's distance to the limit, then
    those for the (b) difference, each at the pooled sd over the figure's 4 shapes."""
    frame = ablation([ff(1, 0.0), ff(2, FF_LIMIT + 0.3), ff(4, 0.1), ff(16, 0.4)], sd=0.5)
    e = ff_spread(frame)
    assert e.verdict == INCONCLUSIVE and [p.verdict for p in e.parts] == [INCONCLUSIVE, INCONCLUSIVE]
    a = {"effect": 0.3, "what": "spread_distance", "one_seed": False}
    b = {"effect": 0.4, "what": "cost_difference", "one_seed": False}
    assert [n.kind for n in e.needs] == ["seeds", "seeds"]
    first, second = seeds_asked(e)
    assert first == pytest.approx(a | {"limit": FF_LIMIT}) and second == pytest.approx(b)


def test_knob_spread_noise_and_scale_columns():
    """The seed noise is the pooled sd, its dof and seeds per shape and the moderated prior; the scale column says
    the statement is about shape, not scale."""
    frame = ablation([ff(1, 0.0), ff(2, 0.2), ff(16, 3.0)], sd=0.25, dof=12)
    assert ff_spread(frame).noise == Noise(0.25, 12, 3, 0.25, math.inf) and ff_spread(frame).seeds == 3
    assert text(FFRATIO, frame).at_our_scale == "the paper's statement is about shape, not scale: same thresholds"


def test_the_claims_bind_the_knob_rules_to_the_papers_ranges():
    """kaplan_ffratio reads d_ff / d in [1, 4] against FF_LIMIT, ratios >= 8 for (b) against a cost of 1%;
    kaplan_headdim every head dimension against HEAD_DIM_LIMIT, with no (b): in words (a golden wording test), the
    spread over all d_head values."""
    ffratio, headdim = registry.BY_ID[FFRATIO], registry.BY_ID[HEADDIM]
    assert ffratio.measure is headdim.measure is kaplan.knob_spread
    ff_params = {"knob": "ff_ratio", "low": 1, "high": 4, "limit": registry.BARELY, "worse_above": 8, "cost": 1.0}
    assert ffratio.params == ff_params
    assert headdim.params == {"knob": "d_head", "low": 0, "high": math.inf, "limit": registry.BARELY}
    frame = ablation([head(8, 0.1), head(16, 0.0), head(64, 0.2)], sd=0.05)
    e = evidence(HEADDIM, frame)
    assert e.verdict == HOLDS and e.parts[0].value == pytest.approx(0.2) and e.values == 3
    assert e.worse_above is None and len(e.parts) == 1
    assert text(HEADDIM, frame).value == ["(a) spread 0.20% over all d_head values (3 values)"]


# ---------------------------------------------------------------- depth_collapse


@pytest.mark.parametrize(
    "lack, offset, verdict",
    [
        ((0.5, COLLAPSE_MARGIN), (4.0, 3.0, 5.0), HOLDS),  # (a) at most the margin, (b) above it
        ((COLLAPSE_MARGIN + 0.5, 3.5), (4.0, 3.0, 5.0), FAILS),  # (a) above the margin
        ((0.5, 1.5), (0.5, -0.5, COLLAPSE_MARGIN), FAILS),  # (b) at most the margin throughout
        ((1.5, COLLAPSE_MARGIN + 0.5), (4.0, 3.0, 5.0), INCONCLUSIVE),  # (a) straddles
        ((0.5, 1.5), (1.5, -0.5, 3.5), INCONCLUSIVE),  # (b) straddles 0 and the margin
    ],
)
def test_depth_collapse_needs_both_parts(lack, offset, verdict):
    """(a) the lack of fit's interval at or below COLLAPSE_MARGIN and (b) the 1-layer offset's interval above it hold
    together; either one refuted fails the claim, either undecided leaves it inconclusive."""
    e = evidence(COLLAPSE, collapse(lack, offset))
    assert e.verdict == verdict
    one_layer, lack_of_fit = e.parts  # the offset first: (a) alone never decides the row
    assert (lack_of_fit.name, lack_of_fit.low, lack_of_fit.high, lack_of_fit.margin) == (
        "lack_of_fit", *lack, COLLAPSE_MARGIN
    )  # fmt: skip
    assert (one_layer.name, one_layer.value, one_layer.low, one_layer.high) == ("offset", *offset)
    assert one_layer.margin == COLLAPSE_MARGIN


def test_depth_collapse_asks_only_for_the_undecided_part():
    """(a) undecided: its interval straddles the margin (more seeds or shapes), no seeds for the offset; (b) undecided:
    more seeds for the offset (how many is decide's), nothing for (a); decided: nothing."""
    only_a = evidence(COLLAPSE, collapse(lack=(1.5, 2.5)))
    assert only_a.needs == (Need("lack_of_fit", {"low": 1.5, "high": 2.5, "margin": COLLAPSE_MARGIN}),)
    only_b = evidence(COLLAPSE, collapse(offset=(1.5, -0.5, 3.5)))
    assert only_b.needs == (Need("seeds", {"effect": 1.5, "what": "offset", "one_seed": False}),)
    assert evidence(COLLAPSE, collapse()).needs == ()
    both = evidence(COLLAPSE, collapse(lack=(1.5, 2.5), offset=(1.5, -0.5, 3.5)))
    assert both.verdict == INCONCLUSIVE and both.needs == only_a.needs + only_b.needs


def test_depth_collapse_without_seed_noise_is_inconclusive_and_asks_for_two_seeds():
    """Without a seed dof (a) is never decided, whatever its columns say, and (b) however clear leaves the claim
    inconclusive; it asks for a second seed to measure the seed noise, then more for the offset."""
    e = evidence(COLLAPSE, collapse(lack=(0.5, 1.0), dof=0, sd=NAN, seeds=1))
    assert e.verdict == INCONCLUSIVE and [p.verdict for p in e.parts] == [HOLDS, INCONCLUSIVE]
    assert e.needs == (Need("seeds", {"effect": 4.0, "what": "offset", "one_seed": True}),)
    assert e.noise.dof == 0 and e.seeds == 1


def test_depth_collapse_without_a_one_layer_offset_leaves_part_b_not_run():
    """No 1-layer model: (b) is not run, so the claim is not decided by (a) alone, and no seeds are asked for an
    offset that was not measured; the offset is nan without an interval; a refuted (a) still fails it."""
    e = evidence(COLLAPSE, collapse(offset=(NAN, NAN, NAN)))
    assert e.verdict == INCONCLUSIVE and not e.one_layer
    assert e.needs == (Need("one_layer_models"),)  # no seeds for an unmeasured one
    offset = parts(e)["offset"]
    assert offset.verdict == NOT_RUN and np.isnan([offset.value, offset.low, offset.high]).all()
    assert evidence(COLLAPSE, collapse(lack=(2.5, 3.5), offset=(NAN, NAN, NAN))).verdict == FAILS


def test_depth_collapse_texts():
    """In numbers, the scatter, F and its 95% quantile, the lack of fit, the offset, the seed noise; in words (a
    golden wording test), the value gives the scatter, F and its 95% quantile, the lack of fit and the margin, the
    signed offset; the interval both intervals; the noise the pooled sd with its dof and seeds."""
    frame = collapse(lack=(0.5, 1.5), offset=(4.0, 3.0, 5.0), sd=0.35)
    e = evidence(COLLAPSE, frame)
    assert (e.scatter, e.f, e.f95, e.one_layer) == (1.2, 3.5, 2.0, True)
    assert [p.value for p in e.parts] == [4.0, 1.0] and pooled(e.noise) == (0.35, 36, 3)
    words = text(COLLAPSE, frame)
    assert words.value == [
        "(b) 1-layer offset +4.00%",
        "(a) scatter 1.20%, F = 3.50 (95% quantile 2.00), lack of fit beyond the seed noise 1.00% rms "
        f"(margin {COLLAPSE_MARGIN:g}%)",
    ]
    assert words.interval == "(b) 1-layer offset (%) [3.00, 5.00]; (a) lack of fit (% rms) [0.50, 1.50]"
    assert words.noise == "seed sd 0.35% of the loss (pooled, 36 dof; 3 seeds per shape)"
    assert words.at_our_scale == "the paper's statement is about parameter counting, not scale"


def test_the_one_layer_offsets_interval_carries_the_deep_shapes_lack_of_fit():
    """The figure's (b) interval: a 1-layer shape may sit off the line as far as any deep shape does, so the deep
    shapes' lack of fit beyond the seed noise enters it (for the 1-layer mean and for the line at their N; its k - 2
    dof), checked against the variance written out here; deep shapes on one line leave the seed noise alone."""
    from depthwidth.plots import kaplan_fig6

    params = np.array([1e4, 2e4, 4e4, 8e4, 1.6e5, 3.2e5])
    scatter = np.array([0.02, -0.015, 0.01, -0.02, 0.015, -0.01])  # ln-loss scatter of the deep shapes, ~1.6%
    deep = pd.DataFrame({"n_layer": 2, "params": params, "loss_mean": np.exp(2.0 - 0.08 * np.log(params) + scatter)})
    one_params = np.array([2e4, 8e4])
    one = pd.DataFrame(
        {"n_layer": 1, "params": one_params, "loss_mean": np.exp(2.0 - 0.08 * np.log(one_params) + 0.05)}
    )
    means = pd.concat([deep, one], ignore_index=True).assign(seeds=3)
    sd, dof = 0.3, 36
    test = kaplan_fig6.collapse_test(means, sd, dof)
    lack, k = test["lof_sd_pct"], len(deep)
    assert lack > 1.0  # the scatter is well beyond three seeds' noise at 0.3%
    x, x_one = np.log(params), np.log([2e4, 8e4])
    lever = 1 / 2 + 1 / k + (x_one.mean() - x.mean()) ** 2 / ((x - x.mean()) ** 2).sum()
    se = math.sqrt(sd**2 * (1 / 6 + 1 / 18) + lack**2 * lever)
    half = stats.t.ppf(0.975, k - 2) * se
    assert test["offset_ci_high"] - test["offset_1layer_pct"] == pytest.approx(half)
    assert test["offset_1layer_pct"] - test["offset_ci_low"] == pytest.approx(half)
    seed_only = stats.t.ppf(0.975, dof) * sd * math.sqrt(1 / 6 + 1 / 18)
    assert half > 3 * seed_only  # the interval the rule read before: the seed noise alone
    on_line = means.assign(loss_mean=np.exp(2.0 - 0.08 * np.log(means["params"]) + 0.05 * (means["n_layer"] == 1)))
    flat = kaplan_fig6.collapse_test(on_line, sd, dof)
    assert flat["offset_ci_high"] - flat["offset_1layer_pct"] == pytest.approx(seed_only)


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
    e = evidence(POWER, law(alpha, sagitta))
    assert e.verdict == verdict
    assert (e.needs == ()) == (verdict != INCONCLUSIVE)
    bow, slope, _ = e.parts
    assert (bow.name, bow.value, bow.low, bow.high, bow.margin) == ("sagitta", *sagitta, CURVATURE_MARGIN)
    assert (slope.name, slope.value, slope.low, slope.high, slope.margin) == ("alpha", *alpha, 0.0)


@pytest.mark.parametrize("rms, verdict", [(RMS_LIMIT * 0.99, HOLDS), (RMS_LIMIT, INCONCLUSIVE)])
def test_an_rms_residual_at_the_limit_keeps_the_power_law_inconclusive_and_says_so(rms, verdict):
    """The rms residual must be below the rms limit: exactly at it the law is inconclusive, and it asks for an rms
    below the limit (and nothing else: alpha and the sagitta are decided)."""
    e = evidence(POWER, law(rms=rms))
    assert e.verdict == verdict
    smooth = parts(e)["rms"]
    assert (smooth.value, smooth.margin, smooth.verdict) == (rms, RMS_LIMIT, verdict)
    assert e.needs == ((Need("rms", {"rms": rms, "limit": RMS_LIMIT}),) if verdict == INCONCLUSIVE else ())


@pytest.mark.parametrize(
    "low, high, alpha_n, path",
    [
        (0.05, 0.1, True, True),
        (fits.KAPLAN_ALPHA_N, 0.1, True, True),  # alpha_N on the lower end
        (0.01, fits.KAPLAN_ALPHA_N, True, False),  # alpha_N on the upper end, the path's above it
        (0.08, 0.089, False, True),  # the path's on the upper end
        (0.09, 0.1, False, False),
        (NAN, 0.1, None, None),
        (0.05, NAN, None, None),
    ],
)
def test_power_law_says_whether_alpha_covers_kaplans_references(low, high, alpha_n, path):
    """Whether alpha's interval (ends included) covers Kaplan's alpha_N and the exponent of his L(N, D) along the
    runs' own N and tokens (0.089; at one fixed D it would be 0.027); without both ends, no interval (None). The
    scale column says it (a golden wording test)."""
    frame = law(alpha=(0.07, low, high))
    e = evidence(POWER, frame)
    assert (e.kaplan_alpha, e.kaplan_path_alpha, e.kaplan_local_alpha, e.tokens) == (
        fits.KAPLAN_ALPHA_N, 0.089, 0.027, 1.5e6
    )  # fmt: skip
    assert (e.covers_alpha, e.covers_path) == (alpha_n, path)
    alpha_n, path = (wording.COVERS[covered] for covered in (alpha_n, path))
    at_our_scale = text(POWER, frame).at_our_scale
    assert f"alpha_N = {fits.KAPLAN_ALPHA_N:.3f} (unlimited data): ours {alpha_n} it; " in at_our_scale
    assert (
        f"L(N, D) along the runs' own path (each run's N and tokens, D ~ 20 N): 0.089: ours {path} it (at one fixed "
        "1.5e+06 tokens/run it would be 0.027;"
    ) in at_our_scale


def test_a_power_law_figure_without_a_finished_run_is_unmeasurable():
    """Every run of the figure failed: no N to fit, no seeds: inconclusive, asking for N values, never a crash."""
    e = evidence(POWER, law(alpha=(0.07, 0.05, 0.1)).assign(status="diverged"))
    assert e.verdict == INCONCLUSIVE and e.reason == "no_finished_runs" and [n.kind for n in e.needs] == ["n_values"]


def test_an_alpha_not_shown_above_zero_asks_for_tokens_and_runs():
    """Alpha's interval straddles 0: it asks for the tokens per run at which Kaplan's L(N, D) has a local slope as
    large as its half-width over the finished runs' N (a failed run at larger N left out), and the factor of N values
    that clears 0: its t quantile falls with the dof they add (2 dof now: (half / alpha)^2 = 6.25 would overstate
    it), as a fine grid over scipy's quantiles finds it (to 1%)."""
    frame = law(alpha=(0.01, -0.01, 0.04))
    frame = pd.concat([frame, frame.iloc[:1].assign(n_nonembedding=1e8, status="failed")], ignore_index=True)
    e = evidence(POWER, frame)
    assert e.verdict == INCONCLUSIVE and (e.n_low, e.n_high) == (min(N_TRAINED), max(N_TRAINED))
    half = 0.025
    d = fits.tokens_for_local_exponent(half, min(N_TRAINED), max(N_TRAINED))
    assert [n.kind for n in e.needs] == ["alpha_tokens", "alpha_n_values"]
    assert needs(e)["alpha_tokens"] == pytest.approx({"half": half, "tokens": d, "now": 1.5e6})
    asked = needs(e)["alpha_n_values"]
    assert asked == pytest.approx({"factor": asked["factor"], "groups": 4, "alpha": 0.01})
    least = least_groups_factor(half, 0.01, 4, parameters=2)
    assert least <= asked["factor"] <= 1.011 * least and least < (half / 0.01) ** 2 / 2


def test_an_alpha_interval_wider_than_alpha_n_says_no_data_would_do():
    """A half-width at or above Kaplan's alpha_N: no amount of data gives L(N, D) that slope (no token count)."""
    e = evidence(POWER, law(alpha=(0.05, -0.1, 0.2)))
    tokens = e.needs[0]
    assert tokens.kind == "alpha_tokens" and tokens.numbers["half"] == pytest.approx(0.15)
    assert not math.isfinite(tokens.numbers["tokens"])  # no token count gives it


@pytest.mark.parametrize(
    "sagitta",
    [
        (0.2, -0.9, 1.3),
        (CURVATURE_MARGIN, CURVATURE_MARGIN - 0.5, CURVATURE_MARGIN + 0.5),
        (-CURVATURE_MARGIN - 0.2, -CURVATURE_MARGIN - 0.6, -CURVATURE_MARGIN + 0.2),
    ],
    ids=["inside", "on the margin", "outside"],
)
def test_a_sagitta_straddling_the_margin_asks_for_runs_only_if_its_point_is_inside(sagitta):
    """An undecided sagitta (alpha decided): with its point inside the margin, the factor of N values that would
    place the interval inside (the least k with t(4k - 3) se / sqrt(k) within margin - |sagitta|, to 1%); with its
    point on or past the margin, no factor (more runs would show the bow). Alpha's interval clears 0: nothing about
    it."""
    bow, low, high = sagitta
    e = evidence(POWER, law(sagitta=sagitta))
    assert e.verdict == INCONCLUSIVE
    room = CURVATURE_MARGIN - abs(bow)
    asked = needs(e)["sagitta"]
    factor = asked["factor"] if room > 0 else NAN
    expected = {"low": low, "high": high, "margin": CURVATURE_MARGIN, "value": bow, "toward": 0.0, "room": room}
    assert [n.kind for n in e.needs] == ["sagitta"]
    assert asked == pytest.approx(expected | {"factor": factor, "groups": 4}, nan_ok=True)
    if room > 0:
        least = least_groups_factor((high - low) / 2, room, 4, parameters=3)
        assert least <= factor <= 1.011 * least


@pytest.mark.parametrize("down, blocked", [(0.05, False), (0.12, True)])
def test_a_sagitta_whose_systematic_reaches_past_the_margin_asks_for_no_n_values(down, blocked):
    """The default's case: the sagitta -0.936% [-10.5, 8.6] against +-1%, its systematic -0.116/+0.053. The room on
    the point's side is 1 - 0.936 - down: with down 0.12 none is left and no count of N values places the interval
    inside (the text says so); with 0.05 a factor is asked, over what seeds could give at this protocol. The plain
    reading, whose needs the claims table gives, reads the systematic too."""
    frame = law(sagitta=(-0.936, -10.47, 8.60)).assign(sagitta_sys_down=down, sagitta_sys_up=0.053)
    e = evidence(POWER, frame)
    asked = needs(e)["sagitta"]
    assert (
        asked["room"]
        == pytest.approx(CURVATURE_MARGIN - 0.936 - down)
        == needs(evidence(POWER, frame, NAN))["sagitta"]["room"]
    )
    said = text(POWER, frame).needs[-1]
    if blocked:
        assert math.isnan(asked["factor"]) and "no count of N values places the interval inside" in said
    else:
        assert math.isinf(asked["factor"]) and "over 1000x the N values" in said


def test_a_power_law_without_a_curvature_test_asks_for_runs_over_three_n():
    """No sagitta interval (too few runs or distinct N): inconclusive, and it asks for the runs the test needs."""
    e = evidence(POWER, law(sagitta=(0.2, NAN, NAN)))
    assert e.verdict == INCONCLUSIVE and e.needs == (Need("curvature_test"),)
    bow = parts(e)["sagitta"]
    assert bow.verdict == INCONCLUSIVE and math.isnan(bow.low) and math.isnan(bow.high)


def test_power_law_texts():
    """In numbers, alpha, the curvature with its interval, the sagitta, the rms, the runs and N values; in words (a
    golden wording test), the value gives alpha, the signed curvature and sagitta, the rms and the runs; the interval
    alpha's to three decimals, the curvature's to four (signed), the sagitta's; the noise the seeds per N and the
    fit's residuals."""
    e = evidence(POWER, law())
    assert [p.value for p in e.parts] == [0.2, 0.1, 0.5]
    curvature = (e.curvature, e.curvature_low, e.curvature_high)
    assert curvature == (-0.0049, -0.0115, 0.0017) and (e.points, e.groups) == (12, 4)
    assert pooled(e.noise) == (0.29, 8, 3) and e.seeds == 3
    words = text(POWER, law())
    assert words.value == [
        "alpha = 0.100",
        "curvature -0.0049, a sagitta of +0.20% over the N span",
        "rms residual 0.50% (12 runs at 4 N)",
    ]
    assert words.interval == "alpha [0.090, 0.110]; curvature [-0.0115, +0.0017]; sagitta (%) [-0.50, 0.60]"
    assert words.noise == (
        "seed sd 0.29% of the loss (pooled, 8 dof; 3 seeds per shape); the intervals are from the fit's residuals "
        "over the N values' seed means (the seeds of one N share its deviation)"
    )
    assert words.at_our_scale == (
        f"alpha_N = {fits.KAPLAN_ALPHA_N:.3f} (unlimited data): ours excludes it; L(N, D) along the runs' own path "
        "(each run's N and tokens, D ~ 20 N): 0.089: ours excludes it (at one fixed 1.5e+06 tokens/run it would be "
        "0.027; their constants belong to WebText2 and their BPE); along any path with D proportional to N, Eq. "
        f"1.5's exponent lies in [{fits.KAPLAN_ALPHA_N}, {fits.KAPLAN_ALPHA_D}] whatever the constants: ours meets "
        "that range"
    )
    # [0.090, 0.110] meets [0.076, 0.095]; an interval wholly above or below it misses it, one without ends says so
    assert e.meets_path_range is True
    assert [kaplan.meets(verdicts.Part("alpha", 0.1, low, high), (0.076, 0.095)) for low, high in (
        (0.096, 0.11), (0.05, 0.0759), (0.095, 0.2), (NAN, NAN)
    )] == [False, False, True, None]  # fmt: skip


# ---------------------------------------------------------------- the figure's first row

# what a rule reads from the figure's first row alone (the rest of its record also counts the frame's runs)
FROM_THE_ROW = {
    COLLAPSE: ("verdict", "parts", "needs", "scatter", "f", "f95", "one_layer"),
    POWER: ("verdict", "parts", "needs", "curvature", "curvature_low", "curvature_high", "points", "groups", "tokens"),
}


@pytest.mark.parametrize("claim_id, frame", [(COLLAPSE, collapse()), (POWER, law())], ids=["collapse", "power law"])
def test_the_summary_rules_read_the_figures_first_row(claim_id, frame):
    """The Fig. 6 and power-law figures repeat their fit on every run's row: the verdict and the numbers of the fit
    come from it, so a figure of its first row alone gives the same."""
    whole, first = evidence(claim_id, frame), evidence(claim_id, frame.iloc[:1])
    assert whole.verdict == HOLDS  # the table is built to read every part
    for name in FROM_THE_ROW[claim_id]:
        assert repr(getattr(first, name)) == repr(getattr(whole, name)), name


def test_a_power_law_figure_without_its_group_count_is_a_defect_naming_the_figure_and_column():
    """A figure CSV without `fit_groups` (an older one) is a pipeline defect: FigureDataError names the figure and
    the column, never a verdict (the rule used to count the distinct N of its finished runs in its stead)."""
    with pytest.raises(verdicts.FigureDataError, match="figure kaplan_power_law: column 'fit_groups' missing") as info:
        evidence(POWER, law().drop(columns="fit_groups"))
    assert (info.value.figure, info.value.column) == ("kaplan_power_law", "fit_groups")


def test_the_spread_of_no_shapes_is_undefined_and_of_one_shape_zero_without_an_interval():
    """No shape: no spread (nan, not an error on an empty max); one shape: a spread of 0 with no interval (no noise
    spread to read without two shapes)."""
    nothing = kaplan.spread_of(pd.DataFrame({"increase_pct_mean": []}))
    assert len(nothing) == 3 and all(math.isnan(v) for v in nothing)
    one = kaplan.spread_of(pd.DataFrame({"increase_pct_mean": [1.5]}))
    assert one[0] == 0.0 and all(math.isnan(v) for v in one[1:])
