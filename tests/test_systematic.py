"""The learning-rate systematic each row carries (issue 35, item 2): each shape's loss lies up to its scan's excess
above its loss at its best rate, so a statistic of the shapes moves one way or the other by what its own shapes
allow. Checked against brute force over the box of true values, through the figures' own code, and on rules
built to flip. A rule receives the systematic as an argument (`verdicts.WITHOUT`, or `within_systematic(fallback)`);
the parts it widened are its record's `carried`, and `claims.judge` turns a verdict the systematic flips
inconclusive."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from claim_rules import evidence, judged
from depthwidth import claims, fits
from depthwidth.claims import levine, registry, verdicts, wording
from depthwidth.claims.registry import Claim
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, NO_SHIFT, WITHOUT, Part, within_systematic
from depthwidth.plots import kaplan_fig6, levine_optimal_depth
from depthwidth.plots.sweep_common import PAPERS_COUNT

NAN = math.nan
ASPECT, FFRATIO, COLLAPSE = "kaplan_aspect_basin", "kaplan_ffratio", "kaplan_depth_collapse"
FF_LIMIT, FF_COST = (registry.BY_ID[FFRATIO].params[name] for name in ("limit", "cost"))
ASPECT_LIMIT = registry.BY_ID[ASPECT].params["limit"]

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


# ---------------------------------------------------------------- a part's interval and the systematic it carries


def test_an_interval_widens_by_its_own_shift_one_sided_else_by_the_fallback_both_ways():
    """Without the systematic nothing widens; within it, a statistic widens by its own one-sided shift where its
    shapes were scanned, else by the fallback both ways (a slope, in another unit, by none), and its verdict is
    read on the widened interval; with no fallback measured, only own shifts widen."""
    plain = verdicts.part("a", 1.5, (1.0, 2.0), WITHOUT, (0.5, 0.0), margin=2.0)
    assert plain.wide == (1.0, 2.0) and not plain.carried and plain.width == 0.0  # no systematic in force
    systematic = within_systematic(3.0)
    own = verdicts.part("a", 1.5, (1.0, 2.0), systematic, (0.5, 0.0), margin=2.0)
    assert own.wide == (0.5, 2.0) and (own.down, own.up, own.margin) == (0.5, 0.0, 2.0) and own.own and own.carried
    fallback = verdicts.part("b", 1.5, (1.0, 2.0), systematic)  # no shift of its own: the fallback
    assert fallback.wide == (-2.0, 5.0) and fallback.carried and not fallback.own and fallback.width == 6.0
    slope = verdicts.part("slope", 1.5, (1.0, 2.0), systematic, unit=" per layer")
    assert slope.wide == (1.0, 2.0) and not slope.carried
    assert (systematic.shift((0.1, 0.1)), systematic.shift(NO_SHIFT)) == ((0.1, 0.1, True), (3.0, 3.0, False))
    assert WITHOUT.shift((0.5, 0.0)) is None
    read = verdicts.part("a", 1.5, (1.0, 2.0), within_systematic(NAN), (0.0, 0.5), margin=2.0, test=verdicts.below)
    assert read.verdict == INCONCLUSIVE and read.wide == (1.0, 2.5)  # read on [1.0, 2.5]: it may pass 2
    assert verdicts.part("a", 1.5, (1.0, 2.0), margin=2.0, test=verdicts.below).verdict == HOLDS  # on [1.0, 2.0]
    unmeasured = verdicts.part("b", 1.5, (1.0, 2.0), within_systematic(NAN))
    assert unmeasured.wide == (1.0, 2.0) and not unmeasured.carried
    e = verdicts.Evidence(verdict=HOLDS, parts=(plain, own, fallback, slope, unmeasured))
    assert e.carried == (own, fallback)


# ---------------------------------------------------------------- rules built to flip, one side at a time


def figure_rows(shapes: list[dict], dof: int) -> pd.DataFrame:
    """An ablation figure's rows: each shape (its columns, `increase_pct_mean` and `lr_excess_pct`) at 3 tight
    seeds, with the figure's noise columns."""
    rows = [
        {**shape, "seed": seed, "increase_pct": shape["increase_pct_mean"], "seeds": 3}
        for shape in shapes
        for seed in range(3)
    ]
    noise = {"noise_sd_pct": 0.01, "noise_dof": dof, "noise_prior_sd_pct": 0.01, "noise_prior_dof": math.inf}
    shape_noise = {"noise_shape_sd_pct": 0.01, "noise_shape_dof": dof, "baseline_rms_pct": 0.5}
    return pd.DataFrame(rows).assign(status="ok", final_val_loss=4.0, **noise, **shape_noise)


def ff_frame(excess: dict[float, float]) -> pd.DataFrame:
    """An ff-ratio figure: ratios 1, 2, 4 at increases 0.0, 0.5, 1.5 (%), tight seeds, each ratio's excess."""
    shapes = [
        {"n_target": 50000, "n_layer": 4, "d_model": 64 + ratio, "ff_ratio": ratio, "increase_pct_mean": mean}
        | {"lr_excess_pct": excess.get(ratio, 0.0)}
        for ratio, mean in ((1.0, 0.0), (2.0, 0.5), (4.0, 1.5))
    ]
    return figure_rows(shapes, dof=6)


def ff_judged(frame: pd.DataFrame, fallback: float) -> claims.Judgement:
    """kaplan_ffratio's part (a) alone (no ratio >= 8 here), judged as the table judges it."""
    return judged(FFRATIO, frame, fallback, worse_above=None).main


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
    """The spread's shift is its own (each shape scanned: the fallback is never taken), one-sided as the excesses
    move it; the verdict it turns is inconclusive, and undecidable where the shift is wider than the margin."""
    j = ff_judged(ff_frame(excess), fallback=5.0)
    assert j.plain.verdict == HOLDS and j.verdict == verdict and j.flipped == (verdict != HOLDS)
    (spread,) = j.shifted.carried
    assert spread.own and spread.margin == FF_LIMIT and j.deciding.name == "spread"
    assert (spread.width > spread.margin) == undecidable
    if verdict == INCONCLUSIVE:
        assert spread.width == pytest.approx(max(excess.values()) - (1.5 if 4.0 in excess else 0))


def test_shapes_not_scanned_take_the_lr_check_fallback_both_ways():
    """No shape scanned (`lr_excess_pct` nan): the spread takes lr_check's fallback, 0.6% both ways, and 1.5 + 0.6
    reaches past the 2% limit; the noise column says so (a golden wording test)."""
    j = ff_judged(ff_frame({}).assign(lr_excess_pct=NAN), fallback=0.6)
    assert j.verdict == INCONCLUSIVE and j.plain.verdict == HOLDS and j.shifted.verdict == INCONCLUSIVE
    (spread,) = j.shifted.carried
    assert (spread.down, spread.up, spread.own) == (0.6, 0.6, False)
    assert wording.systematic_text(j.shifted.carried, j.fallback) == (
        "learning-rate systematic +-0.60% (lr_check: the largest excess over a shape's best rate; sweep.lr_grid "
        "measures each shape's own)"
    )


def test_a_systematic_wider_than_its_margin_is_said_undecidable_at_this_protocol():
    """The words of a flipped row (a golden wording test): the noise column gives the largest own one-sided shift
    with the statistic and its margin, and how many exceed their margins; the what-it-would-take column why the
    verdict turns, and that a systematic wider than its margin makes the row undecidable at this protocol."""
    j = ff_judged(ff_frame({1.0: 2.5}), fallback=5.0)
    assert wording.systematic_text(j.shifted.carried, j.fallback) == (
        "learning-rate systematic from each shape's own scan, one-sided: largest -0.00/+2.50% (the spread over "
        "ff_ratio in [1, 4]; margin 2%) over 1 interval; 1 of them wider than their margin"
    )
    assert wording.flip_text(j.plain.verdict, j.shifted.verdict, j.shifted.carried) == (
        "the verdict would be holds but turns inconclusive within the learning-rate systematic (each shape's loss "
        "may lie above its loss at its best rate, by up to 2.50% on a statistic here); undecidable at this protocol: "
        "systematic 2.50% > margin 2% (the spread over ff_ratio in [1, 4]): every shape of the row trained at its own "
        "best rate"
    )


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
        ([1.0, 3.0], [0.5, 2.0], NAN, True, (0.5, 1.0)),  # no runner-up's excess reaches its gap
        ([1.0, 3.0], [0.5, 3.5], NAN, False, (3.5, 3.0)),  # the second may overtake: its excess > its gap
        ([1.0, 3.0], [NAN, 0.0], 0.9, True, (0.9, 1.0)),  # unscanned: the fallback for every runner-up
        ([1.0, 3.0], [NAN, 0.0], 1.0, False, (1.0, 1.0)),  # a tie is no longer an argmin
    ],
)
def test_an_argmin_stands_where_no_runner_ups_excess_reaches_its_gap(gaps, excess, fallback, stands, closest):
    """Within the systematic the argmin's part holds where no runner-up's excess reaches its gap, and records the
    runner-up closest to overtaking (its excess as `down`, its gap as the margin); outside it nothing can move it."""
    assert verdicts.argmin_part(gaps, excess, WITHOUT, n=5e4) is None  # outside the systematic: as decided
    found = verdicts.argmin_part(gaps, excess, within_systematic(fallback), n=5e4)
    assert (found.verdict == HOLDS) is stands and found.verdict in (HOLDS, INCONCLUSIVE)
    assert (found.down, found.margin) == closest and found.up == 0.0 and found.carried
    assert found.own == all(map(math.isfinite, excess)) and found.at == {"n": 5e4}
    assert (found.width >= found.margin) is not stands  # a tie does not stand


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
    [((0.0, 0.0), FAILS), ((0.0, 0.65), INCONCLUSIVE), ((0.65, 0.0), FAILS)],
)
def test_a_crossover_slope_that_excludes_ln3_turns_only_where_its_systematic_reaches_it(shift, verdict):
    """A slope interval [0.0, 0.5] excludes ln 3 (1.099): a systematic that may put the slope 0.65 higher reaches it
    and the row turns inconclusive, carried in the slope's own unit; one that may only put it lower does not."""
    from test_rule_mutants import crossover_frame

    frame = crossover_frame((0.25, 0.0, 0.5)).assign(slope_sys_down=shift[0], slope_sys_up=shift[1])
    j = judged("levine_crossover_slope", frame.assign(count=PAPERS_COUNT), fallback=5.0).main
    assert j.plain.verdict == FAILS and j.verdict == verdict and j.flipped == (verdict == INCONCLUSIVE)
    (slope,) = j.shifted.carried
    assert (slope.name, slope.unit, slope.down, slope.up, slope.own) == ("slope", " per layer", *shift, True)
    assert slope.wide == pytest.approx((0.0 - shift[0], 0.5 + shift[1]))


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
    e = evidence(ASPECT, aspect_frame({2: 0.4}), fallback=NAN)
    assert e.verdict == HOLDS
    assert [(p.name, p.at, p.down, p.up, p.margin) for p in e.carried] == [
        ("spread", {"n": 50000}, 0.0, pytest.approx(0.4), ASPECT_LIMIT)
    ]
    assert wording.part_name(e.carried[0]) == "the spread at N=5e+04"


def test_the_ff_rows_b_part_records_its_comparison_and_the_cost_margin():
    frame = pd.concat([ff_frame({}), ff_frame({4.0: 0.2}).query("ff_ratio == 4").assign(ff_ratio=16.0, d_model=99)])
    frame.loc[frame["ff_ratio"] == 16.0, ["increase_pct", "increase_pct_mean"]] = 4.0
    e = evidence(FFRATIO, frame, fallback=NAN)
    span = {"knob": "ff_ratio", "low": 1.0, "high": 4.0}
    assert [(p.name, p.at, p.margin) for p in e.carried] == [
        ("spread", span, FF_LIMIT),
        ("cost", span | {"top": 16.0}, FF_COST),
    ]
    assert FF_COST == 1.0 and all(p.own for p in e.carried)


def test_a_frame_without_excesses_gives_one_nan_per_row_whatever_its_index():
    shapes = pd.DataFrame({"increase_pct_mean": [0.0, 1.0, 2.0]}, index=[5, 7, 9])
    excess = verdicts.excess_of(shapes)
    assert excess.shape == (3,) and np.isnan(excess).all()
    assert list(verdicts.excess_of(shapes.assign(lr_excess_pct=[0.1, "x", 0.3]))[[0, 2]]) == [0.1, 0.3]


def test_the_margin_is_said_where_there_is_one():
    assert wording.margin_text(2.0) == "; margin 2%" and wording.margin_text(0.5) == "; margin 0.5%"
    assert wording.margin_text(NAN) == ""


def two_parts(frame: pd.DataFrame, systematic: verdicts.Systematic) -> verdicts.Evidence:
    """A rule of two loss statistics at 1% and 0.5% (both under their limits), each with its own upward shift."""
    a = verdicts.part("spread", 1.0, (1.0, 1.0), systematic, (0.0, 3.0), margin=2.0, test=verdicts.below, n=5e4)
    b = verdicts.part("spread", 0.5, (0.5, 0.5), systematic, (0.0, 5.0), margin=1.5, test=verdicts.below, n=1e5)
    return verdicts.Evidence(verdict=verdicts.combine(a.verdict, b.verdict), parts=(a, b))


def test_the_undecidable_text_names_the_statistic_furthest_past_its_margin():
    """Both shifts exceed their margins (3 > 2, 5 > 1.5): the text names the second, 3.5 past its margin, not the
    first (1 past), whichever comes first."""
    claim = Claim("two", "P", "s", "m", "v", "r", "fig", two_parts, lr_systematic=True)
    j = claims.judge(claim, pd.DataFrame(), fallback=NAN)
    assert j.plain.verdict == HOLDS and j.verdict == INCONCLUSIVE and j.flipped
    assert [p.width - p.margin for p in j.shifted.carried] == [1.0, 3.5]
    flip = wording.flip_text(j.plain.verdict, j.shifted.verdict, j.shifted.carried)
    assert "undecidable at this protocol: systematic 5.00% > margin 1.5% (the spread at N=1e+05)" in flip
    assert "2 of them wider than their margin" in wording.systematic_text(j.shifted.carried, j.fallback)


def collapse_frame(**summary) -> pd.DataFrame:
    """The Fig. 6 figure's rows of depths 1, 2, 4 at 3 seeds, each carrying `summary` over nan in every column the
    rule reads."""
    shapes = [{"n_layer": d, "d_model": 32, "seed": s} for d in (1, 2, 4) for s in range(3)]
    frame = pd.DataFrame(shapes)
    numbers, _, _ = registry.BY_ID[COLLAPSE].measure.columns
    return frame.assign(**({column: NAN for column in numbers if column not in frame} | summary))


def test_the_collapse_rows_record_names_its_lack_of_fit_and_its_offset():
    row = {"lof_sys_down": 0.2, "lof_sys_up": 0.3, "offset_sys_down": 0.4, "offset_sys_up": 0.1}
    summary = {"scatter_pct": 1.0, "lof_f": 1.0, "lof_f95": 2.0, "lof_sd_pct": 0.5, "deep_shapes": 2, "seeds": 3}
    summary |= {"lof_sd_ci_low": 0.1, "lof_sd_ci_high": 1.0, "noise_sd_pct": 0.5, "noise_dof": 6}
    summary |= {"offset_1layer_pct": 4.0, "offset_ci_low": 3.0, "offset_ci_high": 5.0}
    e = evidence(COLLAPSE, collapse_frame(**summary, **row), fallback=NAN)
    assert [(p.name, p.down, p.up, p.own) for p in e.carried] == [
        ("offset", 0.4, 0.1, True),
        ("lack_of_fit", 0.2, 0.3, True),
    ]


def test_an_argmin_records_its_closest_runner_up_under_its_name():
    found = verdicts.argmin_part([3.0, 1.0], [0.5, 0.8], within_systematic(NAN), n=5e4)
    assert (found.name, found.at, found.down, found.margin, found.verdict) == ("argmin", {"n": 5e4}, 0.8, 1.0, HOLDS)
    assert wording.part_name(found) == "the argmin depth at N=5e+04"


def unscanned(losses: list[float]) -> pd.DataFrame:
    """An optimal-depth figure at one N, depths 1, 2, ...: no shape scanned (`excess_pct` nan)."""
    depths = range(1, len(losses) + 1)
    return pd.DataFrame({"n": 5e4, "depth": depths, "loss": losses, "optimal_depth": 1, "excess_pct": NAN})


def test_an_optimal_depth_figure_without_excesses_takes_the_fallback():
    """Depths 1-3 at one N, no shape scanned: each runner-up takes lr_check's fallback, and the argmin falls where
    the fallback reaches its closest gap (1% here)."""
    frame = unscanned([4.00, 4.04, 4.20])
    stands = levine._argmin_stands(frame, frame.iloc[0], within_systematic(0.5))
    assert stands.verdict == HOLDS and (stands.down, stands.own) == (0.5, False)
    assert stands.margin == pytest.approx(1.0)
    assert levine._argmin_stands(frame, frame.iloc[0], within_systematic(1.5)).verdict == INCONCLUSIVE
    assert levine._argmin_stands(frame, frame.iloc[0], WITHOUT) is None


def test_the_noise_text_counts_its_intervals_and_the_widest_is_a_loss_statistics():
    one = (Part("lack_of_fit", down=0.1, up=0.2, margin=2.0, own=True, carried=True),)
    two = (*one, Part("offset", down=0.4, up=0.0, margin=2.0, own=True, carried=True))
    assert wording.systematic_text(one, NAN).endswith("over 1 interval")
    assert wording.systematic_text(two, NAN).endswith("over 2 intervals")
    slope = Part("slope", down=5.0, up=5.0, margin=1.0, own=True, carried=True, unit=" per layer")
    assert wording.widest([slope, *two]) is two[1] and wording.widest([slope]) is slope


def test_a_failing_spread_records_one_widening_per_n():
    """A spread far over 5% fails at 95% and at the Bonferroni level; one part per N carries the systematic (the
    stricter interval is a second level of the same statistic)."""
    frame = aspect_frame({}).assign(increase_pct_mean=lambda f: 3.0 * np.log2(f["n_layer"]))
    e = evidence(ASPECT, frame, fallback=NAN)
    assert e.verdict == FAILS
    assert [(p.name, p.at) for p in e.carried] == [("spread", {"n": 50000})]


def test_an_argmin_falls_where_a_runner_ups_excess_reaches_its_gap_in_percent():
    """The runner-up 1% behind (4.04 against 4.00): an excess of 1.005% reaches the gap, 0.995% does not."""
    frame = unscanned([4.00, 4.04])
    assert levine._argmin_stands(frame, frame.iloc[0], within_systematic(0.995)).verdict == HOLDS
    assert levine._argmin_stands(frame, frame.iloc[0], within_systematic(1.005)).verdict == INCONCLUSIVE


def test_a_collapse_with_no_line_to_collapse_onto_still_states_its_seed_noise():
    summary = {"scatter_pct": NAN, "deep_shapes": 1, "noise_sd_pct": 0.5, "noise_dof": 6, "seeds": 3}
    e = evidence(COLLAPSE, collapse_frame(**summary).query("n_layer <= 2"))
    assert isinstance(e, verdicts.Unmeasurable) and e.verdict == INCONCLUSIVE
    assert (e.reason, dict(e.numbers)) == ("no_line", {"deep_shapes": 1})
    assert (e.noise.sd, e.noise.dof, e.noise.seeds) == (0.5, 6, 3)


def test_furthest_over_is_the_part_furthest_past_its_margin_not_the_widest():
    """The undecidable row names the statistic whose systematic overshoots its margin most: a wide part with a
    wide margin is nearer to being decidable than a narrower one with a narrow margin."""
    Part, furthest_over = verdicts.Part, verdicts.furthest_over
    wide = Part("wide", down=1.5, up=1.5, margin=2.0, carried=True)  # 3.0 past 2.0: by 1.0
    narrow = Part("narrow", down=1.25, up=1.25, margin=0.5, carried=True)  # 2.5 past 0.5: by 2.0
    inside = Part("inside", down=0.5, up=0.5, margin=2.0, carried=True)  # 1.0 within 2.0
    assert furthest_over([wide, narrow, inside]) is narrow
    assert furthest_over([inside]) is None
    assert furthest_over([]) is None


def test_an_unmeasurable_record_keeps_the_seeds_of_the_noise_it_read():
    """claims.csv's seeds column of a row no statistic could be read for: the seeds its noise counted, else none."""
    noise = verdicts.Noise(0.4, 12, 3)
    found = verdicts.unmeasurable("no_rows", verdicts.need("simulations"), noise=noise)
    assert (found.seeds, found.noise, found.verdict) == (3, noise, verdicts.INCONCLUSIVE)
    assert verdicts.unmeasurable("no_rows").seeds is None
