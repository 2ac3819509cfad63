"""The learning-rate systematic each row carries (issue 35, item 2): each shape's loss lies up to its scan's excess
above its loss at its best rate, so a statistic of the shapes moves one way or the other by what its own shapes
allow. Checked against brute force over the box of true values, through the figures' own code, and on rules
built to flip."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from depthwidth import claims, fits
from depthwidth.claims import kaplan, levine, verdicts
from depthwidth.claims.kaplan import FF_LIMIT
from depthwidth.claims.verdicts import HOLDS, INCONCLUSIVE, Claim
from depthwidth.plots import kaplan_fig6, levine_optimal_depth

# ---------------------------------------------------------------- the bounds, against brute force


def corners(values: np.ndarray, excess: np.ndarray):
    """Every corner of the box of true values [v - e, v]."""
    for picks in itertools.product((0, 1), repeat=values.size):
        yield values - excess * np.asarray(picks)


def lattice(values: np.ndarray, excess: np.ndarray, step: float = 0.25):
    """Every point of the box of true values on the lattice of `step` (values and excesses on it: the box's
    ends, and so the extremes of a spread or a best-of, are lattice points)."""
    axes = [np.arange(v - e, v + step / 2, step) for v, e in zip(values, excess)]
    yield from (np.asarray(point) for point in itertools.product(*axes))


@pytest.mark.parametrize("seed", range(20))
def test_a_linear_statistics_shift_is_its_range_over_the_box(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    weights, values = rng.normal(size=k), rng.normal(size=k)
    excess = rng.uniform(0, 2, size=k) * (rng.random(k) < 0.8)  # some shapes not off their best at all
    statistic = lambda v: float(weights @ v) + 3.0  # noqa: E731
    base = statistic(values)
    true = [statistic(point) for point in corners(values, excess)]
    down, up = fits.systematic_shift(statistic, values, excess)
    assert down >= 0 and up >= 0
    assert base - down == pytest.approx(min(true)) and base + up == pytest.approx(max(true))


def test_a_shape_that_cancels_adds_nothing_and_one_side_moves_only_one_way():
    difference = lambda v: float(v[0] - v[1])  # noqa: E731
    assert fits.systematic_shift(difference, [1.0, 1.0], [0.5, 0.0]) == (0.5, 0.0)  # the first may be lower
    assert fits.systematic_shift(difference, [1.0, 1.0], [0.0, 0.5]) == (0.0, 0.5)  # the second: it rises
    cancel = lambda v: float(v[0] - v[0] + v[1])  # noqa: E731
    assert fits.systematic_shift(cancel, [4.0, 1.0], [3.0, 0.0]) == (0.0, 0.0)


def test_an_unknown_excess_or_statistic_gives_no_shift():
    assert all(map(math.isnan, fits.systematic_shift(lambda v: float(v.sum()), [1.0, 2.0], [0.1, math.nan])))
    assert all(map(math.isnan, fits.systematic_shift(lambda v: math.nan, [1.0, 2.0], [0.1, 0.1])))
    assert all(map(math.isnan, fits.systematic_shift(lambda v: float(v.sum()), [1.0, 2.0], math.nan)))


@pytest.mark.parametrize("seed", range(25))
def test_the_spreads_shift_is_its_exact_range_over_the_box(seed):
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(2, 5))
    values = rng.integers(0, 9, size=k) / 4  # on the lattice, with the excesses, so its extremes are on it
    excess = rng.integers(0, 9, size=k) / 4
    spread = values.max() - values.min()
    true = [point.max() - point.min() for point in lattice(values, excess)]
    down, up = fits.spread_shift(values, excess)
    assert spread - down == pytest.approx(min(true)) and spread + up == pytest.approx(max(true))


@pytest.mark.parametrize("seed", range(25))
def test_the_best_of_shift_is_its_exact_range_over_the_box(seed):
    rng = np.random.default_rng(200 + seed)
    k = int(rng.integers(1, 4))
    values, excess = rng.integers(0, 9, size=k + 1) / 4, rng.integers(0, 9, size=k + 1) / 4
    base = values[0] - values[1:].min()
    true = [point[0] - point[1:].min() for point in lattice(values, excess)]
    down, up = fits.best_of_shift(values[0], excess[0], values[1:], excess[1:])
    assert base - down == pytest.approx(min(true)) and base + up == pytest.approx(max(true))


def test_spread_and_best_of_without_an_excess_or_shapes_give_no_shift():
    assert all(map(math.isnan, fits.spread_shift([1.0, 2.0], [0.0, math.nan])))
    assert all(map(math.isnan, fits.spread_shift([1.0], [0.0])))
    assert all(map(math.isnan, fits.best_of_shift(1.0, math.nan, [0.0], [0.0])))
    assert all(map(math.isnan, fits.best_of_shift(1.0, 0.0, [], [])))


# ---------------------------------------------------------------- loss_interval and the row's record


def test_an_interval_widens_by_its_own_shift_one_sided_else_by_the_fallback_both_ways():
    assert verdicts.loss_interval(1.0, 2.0, (0.5, 0.0)) == (1.0, 2.0)  # no systematic in force
    with verdicts.loss_systematic(3.0) as systematic:
        assert verdicts.loss_interval(1.0, 2.0, (0.5, 0.0), 2.0, "a") == (0.5, 2.0)
        assert verdicts.loss_interval(1.0, 2.0) == (-2.0, 5.0)  # no shift of its own: the fallback
        assert verdicts.loss_interval(1.0, 2.0, (0.1, 0.1), record=False) == (0.9, 2.1)
    assert [(w.what, w.down, w.up, w.margin, w.own) for w in systematic.widened][0] == ("a", 0.5, 0.0, 2.0, True)
    assert len(systematic.widened) == 2 and not systematic.widened[1].own
    with verdicts.loss_systematic(math.nan) as unmeasured:
        assert verdicts.loss_interval(1.0, 2.0) == (1.0, 2.0)
    assert not unmeasured.widened


# ---------------------------------------------------------------- rules built to flip, one side at a time


def figure_rows(shapes: list[dict], dof: int) -> pd.DataFrame:
    """An ablation figure's rows: each shape (its columns, `increase_pct_mean` and `lr_excess_pct`) at 3 tight
    seeds, with the figure's noise columns."""
    rows = [
        {**shape, "seed": seed, "increase_pct": shape["increase_pct_mean"], "increase_pct_sd": 0.01, "seeds": 3}
        for shape in shapes
        for seed in range(3)
    ]
    noise = {"noise_sd_pct": 0.01, "noise_dof": dof, "baseline_rms_pct": 0.5, "noise_heterogeneity_p": 0.5}
    return pd.DataFrame(rows).assign(status="ok", **noise, noise_per_shape=False)


def ff_frame(excess: dict[float, float]) -> pd.DataFrame:
    """An ff-ratio figure: ratios 1, 2, 4 at increases 0.0, 0.5, 1.5 (%), tight seeds, each ratio's excess."""
    shapes = [
        {"n_target": 50000, "n_layer": 4, "d_model": 64 + ratio, "ff_ratio": ratio, "increase_pct_mean": mean}
        | {"lr_excess_pct": excess.get(ratio, 0.0)}
        for ratio, mean in ((1.0, 0.0), (2.0, 0.5), (4.0, 1.5))
    ]
    return figure_rows(shapes, dof=6)


FF_CLAIM = Claim(
    "ff",
    "P",
    "s",
    "m",
    "v",
    "r",
    "fig",
    lambda f: kaplan.knob_spread(f, "ff_ratio", 1, 4, FF_LIMIT),
    lr_systematic=True,
)


@pytest.mark.parametrize(
    ("excess", "verdict", "undecidable"),
    [
        ({}, HOLDS, False),  # every shape at its best: spread 1.5 <= 2
        ({4.0: 1.0}, HOLDS, False),  # the highest shape may only lie lower: the spread shrinks, still holds
        ({4.0: 3.0}, INCONCLUSIVE, False),  # ... unless it may fall below the lowest: 2.0 from ratio 2
        ({1.0: 0.3}, HOLDS, False),  # the lowest may lie 0.3 lower: 1.8 <= 2 still
        ({1.0: 1.0}, INCONCLUSIVE, False),  # ... 1.0 lower: up to 2.5 > 2: turns, within the 2% margin
        ({1.0: 2.5}, INCONCLUSIVE, True),  # a systematic wider than the margin: undecidable at this protocol
    ],
)
def test_the_spreads_systematic_is_one_sided_from_each_shapes_own_excess(excess, verdict, undecidable):
    frame = ff_frame(excess)
    result = FF_CLAIM.measure(frame)
    assert result.verdict == HOLDS
    out = claims.with_systematic(FF_CLAIM, frame, result, fallback=5.0)  # the fallback is never taken here
    assert out.verdict == verdict
    assert "+-5.00%" not in out.noise and "learning-rate systematic from each shape's own scan" in out.noise
    assert ("undecidable at this protocol: systematic" in out.needs) == undecidable
    if verdict == INCONCLUSIVE:
        assert f"by up to {max(excess.values()) - (1.5 if 4.0 in excess else 0):.2f}% on a statistic" in out.needs


def test_shapes_not_scanned_take_the_lr_check_fallback_both_ways():
    frame = ff_frame({}).assign(lr_excess_pct=math.nan)
    out = claims.with_systematic(FF_CLAIM, frame, FF_CLAIM.measure(frame), fallback=0.6)
    assert out.verdict == INCONCLUSIVE and "+-0.60% (lr_check" in out.noise  # 1.5 + 0.6 > 2


# ---------------------------------------------------------------- the figures' shifts, against their own code


def runs_table(excess: dict[tuple[int, int], float], scale: dict[tuple[int, int], float] | None = None):
    """A depth x width grid: depths 1, 2, 3, three widths each, 3 seeds, loss from a law where depth 2 is best at
    the middle N; `excess` per (depth, width); `scale` multiplies a shape's losses (its true loss, moved)."""
    rows = []
    for depth, widths in {1: (40, 64, 96), 2: (28, 45, 68), 3: (23, 37, 56)}.items():
        for width in widths:
            n = 12 * depth * width**2
            loss = 6.0 * n**-0.08 * (1 + 0.01 * (depth - 2) ** 2 + 0.02 * (depth == 1))
            loss *= (scale or {}).get((depth, width), 1.0)
            for seed in range(3):
                rows.append(
                    {
                        "n_layer": depth, "d_model": width, "seed": seed, "n_nonembedding": n, "n_target": n,
                        "n_total": n + 65 * width * 1024, "train_flops": 6.0 * n * 20 * n, "ff_ratio": 4.0,
                        "final_val_loss": loss * (1 + 0.002 * (seed - 1)), "status": "ok",
                        "lr_excess_pct": excess.get((depth, width), 0.0),
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


def moved(runs: pd.DataFrame, shape: tuple[int, int], pct: float) -> pd.DataFrame:
    """`runs` with one shape's losses at its best rate: ln(loss) lowered by its excess."""
    mask = (runs["n_layer"] == shape[0]) & (runs["d_model"] == shape[1])
    return runs.assign(
        final_val_loss=np.where(mask, runs["final_val_loss"] * math.exp(-pct / 100), runs["final_val_loss"])
    )


def test_the_collapse_tests_offset_shift_is_what_moving_its_shapes_does():
    shape, pct = (1, 64), 1.5  # a 1-layer shape: its true offset is lower
    means = lambda runs: runs.groupby(["n_layer", "d_model"], as_index=False).agg(  # noqa: E731
        params=("n_nonembedding", "mean"), loss_mean=("final_val_loss", "mean"), seeds=("seed", "count"),
        excess_pct=("lr_excess_pct", "mean"),
    )  # fmt: skip
    runs = runs_table({shape: pct})
    test = kaplan_fig6.collapse_test(means(runs), 0.2, 18)
    truth = kaplan_fig6.collapse_test(means(moved(runs, shape, pct)), 0.2, 18)
    assert test["offset_sys_up"] == 0.0
    assert test["offset_1layer_pct"] - test["offset_sys_down"] == pytest.approx(truth["offset_1layer_pct"])
    deep = (3, 37)  # a deeper shape: the line moves, the offset rises
    runs = runs_table({deep: pct})
    test = kaplan_fig6.collapse_test(means(runs), 0.2, 18)
    truth = kaplan_fig6.collapse_test(means(moved(runs, deep, pct)), 0.2, 18)
    assert test["offset_sys_down"] == 0.0
    assert test["offset_1layer_pct"] + test["offset_sys_up"] == pytest.approx(truth["offset_1layer_pct"])
    for pick in (0.0, 0.5, 1.0):  # the lack of fit's ends stay inside the bound
        truth = kaplan_fig6.collapse_test(means(moved(runs, deep, pick * pct)), 0.2, 18)
        assert truth["lof_sd_ci_low"] >= test["lof_sd_ci_low"] - test["lof_sys_down"] - 1e-12
        assert truth["lof_sd_ci_high"] <= test["lof_sd_ci_high"] + test["lof_sys_up"] + 1e-12


@pytest.mark.parametrize("shape", [(2, 45), (3, 37), (1, 64)])
def test_the_optimal_depth_figures_side_shifts_are_what_moving_its_shapes_does(shape):
    pct = 1.2
    runs = runs_table({shape: pct})
    figure = levine_optimal_depth.at_fixed(runs).iloc[0]
    truth = levine_optimal_depth.at_fixed(moved(runs, shape, pct)).iloc[0]
    for name in ("gain_below", "gain_above", "contrast"):
        value, change = figure[f"{name}_pct"], truth[f"{name}_pct"] - figure[f"{name}_pct"]
        if not np.isfinite(value):
            assert math.isnan(figure[f"{name}_sys_down"])
            continue
        down, up = figure[f"{name}_sys_down"], figure[f"{name}_sys_up"]
        assert min(down, up) == 0.0  # one shape moves a statistic one way
        assert change == pytest.approx(up if change > 0 else -down, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize(
    ("gaps", "excess", "fallback", "stands", "closest"),
    [
        ([1.0, 3.0], [0.5, 2.0], math.nan, True, (0.5, 1.0)),  # no runner-up's excess reaches its gap
        ([1.0, 3.0], [0.5, 3.5], math.nan, False, (3.5, 3.0)),  # the second may overtake: its excess > its gap
        ([1.0, 3.0], [math.nan, 0.0], 0.9, True, (0.9, 1.0)),  # unscanned: the fallback for every runner-up
        ([1.0, 3.0], [math.nan, 0.0], 1.0, False, (1.0, 1.0)),  # a tie is no longer an argmin
    ],
)
def test_an_argmin_stands_where_no_runner_ups_excess_reaches_its_gap(gaps, excess, fallback, stands, closest):
    assert verdicts.argmin_stands(False, gaps, excess, "a") is False  # outside the systematic: as decided
    assert verdicts.argmin_stands(True, gaps, excess, "a") is True
    with verdicts.loss_systematic(fallback) as systematic:
        assert verdicts.argmin_stands(True, gaps, excess, "a") is stands
        assert verdicts.argmin_stands(False, gaps, excess, "a") is False
    (first, _) = systematic.widened
    assert (first.down, first.margin) == closest and first.up == 0.0
    assert (first.width >= first.margin) is not stands  # a tie does not stand


def crossing_runs(excess: dict, scale: dict | None = None) -> pd.DataFrame:
    """Depths 1-3 at five widths each, ln L = ln 6 - (0.06 + 0.03 L) ln N + 0.33 L: each deeper depth overtakes
    the shallower at N ~ 6e4, inside every depth's trained N; `excess` and `scale` per (depth, width)."""
    rows = []
    for depth, widths in {1: (30, 45, 64, 96, 128), 2: (22, 32, 45, 68, 90), 3: (18, 26, 37, 56, 74)}.items():
        for width in widths:
            n = 12 * depth * width**2
            loss = 6.0 * n ** (-0.06 - 0.03 * depth) * math.exp(0.33 * depth) * (scale or {}).get((depth, width), 1.0)
            for seed in range(3):
                rows.append(
                    {
                        "n_layer": depth, "d_model": width, "seed": seed, "n_nonembedding": n, "n_target": n,
                        "n_total": n + 65 * width * 1024, "train_flops": 120.0 * n * n, "ff_ratio": 4.0,
                        "final_val_loss": loss * (1 + 0.002 * (seed - 1)), "status": "ok",
                        "lr_excess_pct": excess.get((depth, width), 0.0),
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("shape", [(2, 32), (3, 26), (1, 45)])
def test_the_crossover_slopes_shift_is_what_moving_its_shapes_does(shape):
    """The slope of ln(crossover width) against depth moves, to first order, as moving the shape's loss moves it."""
    from depthwidth.plots import levine_crossover

    figure = levine_crossover.at_fixed(crossing_runs({shape: 0.5})).iloc[0]
    truth = levine_crossover.at_fixed(crossing_runs({}, {shape: math.exp(-0.005)})).iloc[0]
    assert np.isfinite(figure["slope"]) and min(figure["slope_sys_down"], figure["slope_sys_up"]) == 0.0
    change = truth["slope"] - figure["slope"]
    assert change == pytest.approx(figure["slope_sys_up"] if change > 0 else -figure["slope_sys_down"], rel=1e-3)


@pytest.mark.parametrize(
    ("shift", "verdict"),
    [((0.0, 0.0), "does not hold"), ((0.0, 0.65), INCONCLUSIVE), ((0.65, 0.0), "does not hold")],
)
def test_a_crossover_slope_that_excludes_ln3_turns_only_where_its_systematic_reaches_it(shift, verdict):
    """A slope interval [0.0, 0.5] excludes ln 3 (1.099): a systematic that may put the slope 0.65 higher reaches it
    and the row turns inconclusive, said in the slope's own unit; one that may only put it lower does not."""
    from test_rule_mutants import crossover_frame

    claim = next(c for c in claims.CLAIMS if c.id == "levine_crossover_slope")
    frame = crossover_frame((0.25, 0.0, 0.5)).assign(slope_sys_down=shift[0], slope_sys_up=shift[1])
    out = claims.with_systematic(claim, frame, claim.measure(frame), fallback=5.0)
    assert out.verdict == verdict
    if verdict == INCONCLUSIVE:
        assert "per layer on a statistic here" in out.needs and "+0.65 per layer (the crossover slope)" in out.noise


# ---------------------------------------------------------------- what each row's record names (mutation testing)


def aspect_frame(excess: dict[int, float]) -> pd.DataFrame:
    """An aspect figure at one N: depths 2, 4, 8, 16 (aspect ratios 23 to 1) at increases 0 to 1.5%, each depth's
    excess."""
    shapes = [
        {"n_target": 50000, "n_layer": depth, "d_model": width, "aspect_ratio": width / depth}
        | {"increase_pct_mean": mean, "lr_excess_pct": excess.get(depth, 0.0)}
        for depth, width, mean in ((2, 46, 0.0), (4, 32, 0.5), (8, 22, 1.0), (16, 16, 1.5))
    ]
    return figure_rows(shapes, dof=8)


def test_the_aspect_rows_record_names_each_n_and_its_limit():
    with verdicts.loss_systematic(math.nan) as systematic:
        result = kaplan.aspect_basin(aspect_frame({2: 0.4}))
    assert result.verdict == HOLDS
    assert [(w.what, w.down, w.up, w.margin) for w in systematic.widened] == [
        ("the spread at N=5e+04", 0.0, pytest.approx(0.4), kaplan.ASPECT_LIMIT)
    ]


def test_the_ff_rows_b_part_records_its_comparison_and_the_cost_margin():
    frame = pd.concat([ff_frame({}), ff_frame({4.0: 0.2}).query("ff_ratio == 4").assign(ff_ratio=16.0, d_model=99)])
    frame.loc[frame["ff_ratio"] == 16.0, ["increase_pct", "increase_pct_mean"]] = 4.0
    with verdicts.loss_systematic(math.nan) as systematic:
        kaplan.knob_spread(frame, "ff_ratio", 1, 4, FF_LIMIT, worse_above=8)
    named = {w.what: w.margin for w in systematic.widened}
    assert named == {"the spread over ff_ratio in [1, 4]": FF_LIMIT, "ff_ratio = 16 vs the best in [1, 4]": 1.0}


def test_a_frame_without_excesses_gives_one_nan_per_row_whatever_its_index():
    shapes = pd.DataFrame({"increase_pct_mean": [0.0, 1.0, 2.0]}, index=[5, 7, 9])
    excess = verdicts.excess_of(shapes)
    assert excess.shape == (3,) and np.isnan(excess).all()
    assert list(verdicts.excess_of(shapes.assign(lr_excess_pct=[0.1, "x", 0.3]))[[0, 2]]) == [0.1, 0.3]


def test_the_margin_is_said_where_there_is_one():
    assert claims.margin_text(2.0) == "; margin 2%" and claims.margin_text(0.5) == "; margin 0.5%"
    assert claims.margin_text(math.nan) == ""


def two_parts(frame: pd.DataFrame) -> verdicts.Result:
    """A rule of two loss statistics at 1% and 0.5% (both under their limits), each with its own upward shift."""
    a = verdicts.below(*verdicts.loss_interval(1.0, 1.0, (0.0, 3.0), 2.0, "part a"), 2.0)
    b = verdicts.below(*verdicts.loss_interval(0.5, 0.5, (0.0, 5.0), 1.5, "part b"), 1.5)
    return verdicts.Result(value="v", verdict=verdicts.combine(a, b))


def test_the_undecidable_text_names_the_statistic_furthest_past_its_margin():
    """Both shifts exceed their margins (3 > 2, 5 > 1.5): the text names part b, 3.5 past its margin, not part a
    (1 past), whichever comes first."""
    claim = Claim("two", "P", "s", "m", "v", "r", "fig", two_parts, lr_systematic=True)
    out = claims.with_systematic(claim, pd.DataFrame(), two_parts(pd.DataFrame()), fallback=math.nan)
    assert out.verdict == INCONCLUSIVE
    assert "undecidable at this protocol: systematic 5.00% > margin 1.5% (part b)" in out.needs
    assert "2 of them wider than their margin" in out.noise


def test_the_collapse_rows_record_names_its_lack_of_fit_and_its_offset():
    row = {"lof_sys_down": 0.2, "lof_sys_up": 0.3, "offset_sys_down": 0.4, "offset_sys_up": 0.1}
    summary = {"scatter_pct": 1.0, "lof_f": 1.0, "lof_f95": 2.0, "lof_sd_pct": 0.5, "deep_shapes": 2, "seeds": 3}
    summary |= {"lof_sd_ci_low": 0.1, "lof_sd_ci_high": 1.0, "noise_sd_pct": 0.5, "noise_dof": 6}
    summary |= {"offset_1layer_pct": 4.0, "offset_ci_low": 3.0, "offset_ci_high": 5.0}
    shapes = [{"n_layer": d, "d_model": 32, "seed": s} for d in (1, 2, 4) for s in range(3)]
    frame = pd.DataFrame(shapes).assign(**summary, **row)
    with verdicts.loss_systematic(math.nan) as systematic:
        kaplan.depth_collapse(frame)
    assert [(w.what, w.down, w.up) for w in systematic.widened] == [
        ("the lack of fit", 0.2, 0.3),
        ("the 1-layer offset", 0.4, 0.1),
    ]


def test_an_argmin_records_its_closest_runner_up_under_its_name():
    with verdicts.loss_systematic(math.nan) as systematic:
        assert verdicts.argmin_stands(True, [3.0, 1.0], [0.5, 0.8], "the argmin at N=5e+04")
    assert [(w.what, w.down, w.margin) for w in systematic.widened] == [("the argmin at N=5e+04", 0.8, 1.0)]


def test_an_optimal_depth_figure_without_excesses_takes_the_fallback():
    """Depths 1-3 at one N, no `excess_pct` column (an unscanned config): each runner-up takes lr_check's fallback,
    and the argmin falls where the fallback reaches its closest gap (1% here)."""
    frame = pd.DataFrame({"n": 5e4, "depth": [1, 2, 3], "loss": [4.00, 4.04, 4.20], "optimal_depth": 1})
    row = frame.iloc[0]
    with verdicts.loss_systematic(0.5):
        assert levine._argmin_stands(frame, row)
    with verdicts.loss_systematic(1.5):
        assert not levine._argmin_stands(frame, row)


def test_the_noise_text_counts_its_intervals_and_the_widest_is_a_loss_statistics():
    one = [verdicts.Widening("a", 0.1, 0.2, 2.0, True)]
    two = one + [verdicts.Widening("b", 0.4, 0.0, 2.0, True)]
    assert claims.systematic_text(one, math.nan).endswith("over 1 interval")
    assert claims.systematic_text(two, math.nan).endswith("over 2 intervals")
    slope = verdicts.Widening("the slope", 5.0, 5.0, 1.0, True, "/layer")
    assert claims.widest([slope, *two]).what == "b" and claims.widest([slope]).what == "the slope"


def test_a_failing_spread_records_one_widening_per_n():
    """A spread far over 5% fails at 95% and at the Bonferroni level; only the 95% interval enters the record (the
    stricter one is a second level of the same statistic)."""
    frame = aspect_frame({}).assign(increase_pct_mean=lambda f: 3.0 * np.log2(f["n_layer"]))
    with verdicts.loss_systematic(math.nan) as systematic:
        assert kaplan.aspect_basin(frame).verdict == verdicts.FAILS
    assert [w.what for w in systematic.widened] == ["the spread at N=5e+04"]


def test_an_argmin_falls_where_a_runner_ups_excess_reaches_its_gap_in_percent():
    """The runner-up 1% behind (4.04 against 4.00): an excess of 1.005% reaches the gap, 0.995% does not."""
    frame = pd.DataFrame({"n": 5e4, "depth": [1, 2], "loss": [4.00, 4.04], "optimal_depth": 1})
    with verdicts.loss_systematic(0.995):
        assert levine._argmin_stands(frame, frame.iloc[0])
    with verdicts.loss_systematic(1.005):
        assert not levine._argmin_stands(frame, frame.iloc[0])


def test_a_collapse_with_no_line_to_collapse_onto_still_states_its_seed_noise():
    summary = {"scatter_pct": math.nan, "deep_shapes": 1, "noise_sd_pct": 0.5, "noise_dof": 6, "seeds": 3}
    frame = pd.DataFrame([{"n_layer": d, "d_model": 32, "seed": s} for d in (1, 2) for s in range(3)]).assign(**summary)
    result = kaplan.depth_collapse(frame)
    assert result.verdict == INCONCLUSIVE and "(pooled, 6 dof; 3 seeds per shape)" in result.noise
