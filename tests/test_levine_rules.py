"""Levine's rules read directly, on small hand-built figure tables: every column of the Result each branch returns
(value, interval, noise, at our scale, needs) against texts written out here, the edges of the crossover slope's
interval exactly on ln 3 and on the fitted slope, the share of redraws with a slope, the factor of seeds an undecided
slope asks for, the edge of the trained depths, and what the undecided sided rules pass to the seeds they ask for.
test_rule_mutants checks the verdicts of these rules; mutation testing (scripts/mutation) found their texts and
edges untested there.

Each table is small and built so that the rule as written and a slightly different reading of it disagree on it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from depthwidth import fits
from depthwidth.claims import levine, verdicts
from depthwidth.claims.levine import PAYS_MARGIN
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, Result
from depthwidth.plots.levine_literal import AT_CROSSOVER
from test_rule_mutants import crossover_frame, optimal_frame, steps_frame

NAN = math.nan
LN3 = math.log(3.0)
NOISE = "seed sd 0.30% of the loss (pooled, 12 dof; 3 seeds per shape)"


# ---------------------------------------------------------------- Levine's crossover slope


BRACKETED = "bracketed by the trained N (one 1.5x or more on each side): "

# crossover_frame's pairs, trained at N = 1e4 to 1e6: 1->2 by the threshold at 2.6e4 and by the fit at 6e5, 2->3 at
# 3.4e5 and 1.2e6; only the last lacks a trained N 1.5x above it
CROSSOVER_BRACKETS = (
    f"; {BRACKETED}the threshold's 1->2 (N ~2.6e+04), 2->3 (N ~3.4e+05), the fitted optimum's 1->2 (N ~6e+05); "
    "not: the fitted optimum's 2->3 (N ~1.2e+06: none 1.5x above)"
)


def crossover_scale(fitted: str, brackets: str = CROSSOVER_BRACKETS) -> str:
    """The at-our-scale text of the crossover slope, the fitted optimum's slope written `fitted`, and `brackets`."""
    return (
        f"threshold: ln 3 = {LN3:.3f} per layer (crossover at width 3^L); fitted optimum d*(L): {fitted} per layer "
        "for the deeper model's width at the crossover (where L* passes the pair's midpoint; d*(L) itself rises "
        f"{fits.LEVINE_WIDTH_SLOPE} per layer)" + brackets
    )


BOTH_CROSS = "crossovers: 1->2: width 9 [2, 40] (in range), 2->3: width 27 [2, 40] (in range); never overtakes: none"


def test_crossover_slope_that_tells_ln3_from_the_fit_holds_with_every_column_written_out():
    """A slope interval [0.900, 1.300] (three decimals, as the slope is given) includes ln 3 and excludes 0.07:
    holds; the value says both, the interval, noise and scale are the figure's, and a decided slope asks for nothing."""
    result = levine.crossover_slope(crossover_frame((1.1, 0.9, 1.3)))
    assert result == Result(
        f"slope 1.100 per layer; {BOTH_CROSS}; the interval includes ln 3 and excludes the fitted optimum's 0.070",
        HOLDS,
        "slope [0.900, 1.300]",
        NOISE,
        crossover_scale("0.070"),
        "",
    )


def test_crossover_slope_that_excludes_ln3_fails_and_says_so():
    """A slope interval [0.000, 0.500] excludes ln 3 (and includes the fitted 0.07): fails, asking for nothing."""
    result = levine.crossover_slope(crossover_frame((0.25, 0.0, 0.5)))
    assert result.verdict == FAILS and result.needs == ""
    assert result.value.endswith("; the interval excludes ln 3 and includes the fitted optimum's 0.070")


@pytest.mark.parametrize(
    "slope, fitted, verdict, says",
    [
        ((1.2, LN3, 1.4), 0.07, HOLDS, "includes ln 3 and excludes"),  # ln 3 on the lower end
        ((1.0, 0.9, LN3), 0.07, HOLDS, "includes ln 3 and excludes"),  # ln 3 on the upper end
        ((0.6, 0.07, 1.3), 0.07, INCONCLUSIVE, "includes ln 3 and includes"),  # the fitted slope on the lower end
        ((1.1, 0.9, 1.2), 1.2, INCONCLUSIVE, "includes ln 3 and includes"),  # the fitted slope on the upper end
        ((1.25, LN3 + 1e-9, 1.4), 0.07, FAILS, "excludes ln 3 and excludes"),  # just past ln 3: excluded
    ],
)
def test_a_slope_interval_with_an_end_on_ln3_or_on_the_fitted_slope_includes_it(slope, fitted, verdict, says):
    """'The interval includes x' counts both ends: ln 3 (or the fitted optimum's slope) exactly on an end is inside
    it; just beyond the end it is not."""
    result = levine.crossover_slope(crossover_frame(slope, fitted=fitted))
    assert result.verdict == verdict
    assert f"; the interval {says} the fitted optimum's {fitted:.3f}" in result.value


@pytest.mark.parametrize("defined, verdict", [(0.95, HOLDS), (0.9499, INCONCLUSIVE)])
def test_a_slope_defined_in_95_percent_of_the_redraws_is_read(defined, verdict):
    """The slope's interval is read when at least 95% of the redraws have every pair crossing (95% exactly
    included); below that the rule is inconclusive and asks for seeds or wider N."""
    result = levine.crossover_slope(crossover_frame((1.1, 0.9, 1.3), defined=defined))
    assert result.verdict == verdict
    if verdict == INCONCLUSIVE:
        assert result.needs == "in 5% of the redraws a pair does not cross: more seeds or wider N per depth"


def test_an_undecided_slope_asks_for_the_factor_of_seeds_that_separates_ln3_from_the_fit():
    """An interval [0.05, 1.30] includes ln 3 and the fitted 0.07: its half-width 0.625 must shrink to half their
    distance, (ln 3 - 0.07) / 2, which takes (1.25 / (ln 3 - 0.07))^2 = 1.48 times the seeds."""
    result = levine.crossover_slope(crossover_frame((0.6, 0.05, 1.3)))
    factor = ((1.3 - 0.05) / (LN3 - 0.07)) ** 2
    assert f"{factor:.1f}" == "1.5"
    assert result == Result(
        f"slope 0.600 per layer; {BOTH_CROSS}; the interval includes ln 3 and includes the fitted optimum's 0.070",
        INCONCLUSIVE,
        "slope [0.050, 1.300]",
        NOISE,
        crossover_scale("0.070"),
        "~1.5x the seeds to separate ln 3 from 0.070",
    )


@pytest.mark.parametrize("dof", [12, 0])
def test_without_a_slope_the_missing_crossover_is_placed_and_one_seed_asks_for_a_second(dof):
    """One pair crossing in range, the next crossing outside the trained N (1e4 to 1e6): no slope; the needs place
    only the missing pair's threshold and fitted crossover against the trained N, and with one seed (no dof) also
    ask for a second seed; the noise column is the figure's."""
    frame = crossover_frame((NAN, NAN, NAN)).assign(noise_dof=dof, seeds=3 if dof else 1)
    frame.loc[1, "in_range"] = False
    result = levine.crossover_slope(frame)
    placed = (
        "2->3: the threshold puts it near N ~3.4e+05, inside the trained N, the fitted optimum near N ~1.2e+06, "
        "beyond it"
    )
    assert result == Result(
        "fewer than two in-range crossovers of consecutive depths; crossovers: 1->2: width 9 [2, 40] (in range), "
        "2->3: width 27 (outside the trained N); never overtakes: none",
        INCONCLUSIVE,
        "",
        NOISE if dof else verdicts.ONE_SEED,
        crossover_scale("0.070"),
        placed + ("" if dof else "; at least 2 seeds per shape to give each crossover an interval"),
    )


def test_crossover_slope_of_an_empty_figure_is_inconclusive_with_every_column_written_out():
    """A figure with no pair, even one without columns, decides nothing: it says so, with the threshold and an
    undefined fitted slope at our scale, and asks for two depths with two widths each."""
    expected = Result(
        "no pair of depths with two trained widths each",
        INCONCLUSIVE,
        at_our_scale=crossover_scale("nan", brackets=""),
        needs="at least two depths with two widths each",
    )
    assert levine.crossover_slope(crossover_frame((1.1, 0.9, 1.3)).iloc[:0]) == expected
    assert levine.crossover_slope(pd.DataFrame()) == expected


def test_a_figure_without_the_bootstrap_check_column_flags_no_crossover():
    """A crossover figure without `ci_holds_cross` (written before that check) flags no bootstrap range as missing
    its point: the range of an in-range crossover is shown as it is."""
    frame = crossover_frame((1.1, 0.9, 1.3)).drop(columns="ci_holds_cross")
    assert BOTH_CROSS in levine.crossover_slope(frame).value


# ---------------------------------------------------------------- Levine's optimal depth


OPTIMAL_INTERVAL = "per N above: bootstrap 95% range of the argmin depth"
# optimal_frame's steps 1->2 and 2->4 (test_rule_mutants.STEP_CROSSOVERS) against its N, 1e5 to 9e5
OPTIMAL_BRACKETS = (
    f"; {BRACKETED}the threshold's 1->2 (N ~3e+05); not: the threshold's 2->4 (N ~5e+06: none 1.5x above), "
    "the fitted optimum's 1->2 (N ~2e+06: none 1.5x above), 2->4 (N ~2e+04: none 1.5x below)"
)


def n_at_depth(depth: float) -> float:
    """N = 12 L d*(L)^2 at Levine's fitted optimal width ln d* = LEVINE_LOG_WIDTH + LEVINE_WIDTH_SLOPE L."""
    return 12 * depth * math.exp(2 * (fits.LEVINE_LOG_WIDTH + fits.LEVINE_WIDTH_SLOPE * depth))


def test_optimal_depth_growth_that_holds_writes_every_column_out():
    """L* moving from trained depth 1 to 2 and the argmin growing in 99% of the redraws: holds; each N's argmin with
    its bootstrap range as integers, Levine's L* and its trained depth; the growth and decline shares."""
    result = levine.optimal_depth_growth(optimal_frame([1, 2, 2], [1, 2, 2]))
    assert result == Result(
        "N=1e+05: 1 [1, 1] vs Levine 1.10 (nearest trained 1); N=3e+05: 2 [2, 2] vs Levine 2.10 (nearest trained 2); "
        "N=9e+05: 2 [2, 2] vs Levine 2.10 (nearest trained 2); growth in 99% of redraws, decline in 0%",
        HOLDS,
        OPTIMAL_INTERVAL,
        NOISE,
        "Levine's fit gives L* = 1.10 at N = 1e+05 and 2.10 at 9e+05: trained depth 1 -> 2" + OPTIMAL_BRACKETS,
        "",
    )


def test_undecided_growth_asks_for_the_seeds_that_resolve_the_closest_runner_up():
    """Flat argmins with the largest N's undecided (60%): inconclusive, asking for the seeds that resolve the closest
    runner-up gap (1%) at the figure's noise, over its 9 rows."""
    frame = optimal_frame([1, 2, 2], [2, 2, 2], growth=0.5)
    frame.loc[frame["n"] == frame["n"].max(), "optimal_share"] = 0.6
    result = levine.optimal_depth_growth(frame)
    assert result.verdict == INCONCLUSIVE and result.interval == OPTIMAL_INTERVAL and result.noise == NOISE
    assert result.needs == verdicts.seeds_text(0.3, 1.0, 3, 9, "the closest runner-up gap (%)")
    assert result.needs.endswith("would resolve the closest runner-up gap (%) (+1.00) at seed sd 0.30")


@pytest.mark.parametrize(
    "depth, edge, moves",
    [
        (
            1,
            " (the edge of the trained depths)",
            f"Levine's fit moves the optimum to depth 2 only near N = {n_at_depth(2**0.5):.2g}",
        ),
        (2, "", f"Levine's fit moves the optimum to depth 4 only near N = {n_at_depth(8**0.5):.2g}"),
        (4, " (the edge of the trained depths)", "a deeper trained depth than the one Levine's fit predicts"),
    ],
)
def test_a_fixed_levine_optimum_says_whether_it_is_an_edge_of_the_trained_depths(depth, edge, moves):
    bound = "at or below" if depth == 1 else "at or above"
    """Where L* stays at one trained depth (of 1, 2, 4) and the argmin is decided there, growth cannot be seen: the
    needs say so, flag the shallowest and the deepest trained depth as an edge (not the middle one), and say where
    Levine's fit moves the optimum on (at the log midpoint to the next deeper depth, if any)."""
    result = levine.optimal_depth_growth(optimal_frame([depth] * 3, [depth] * 3))
    suffix = "" if moves.startswith("a deeper") else " (trained up to 9e+05)"
    assert result == Result(
        "; ".join(
            f"N={n:.2g}: {depth} [{depth}, {depth}] vs Levine {depth + 0.1:.2f} (nearest trained {depth})"
            for n in (1e5, 3e5, 9e5)
        ),
        INCONCLUSIVE,
        OPTIMAL_INTERVAL,
        NOISE,
        f"Levine's fit gives L* = {depth + 0.1:.2f} at N = 1e+05 and {depth + 0.1:.2f} at 9e+05: trained depth "
        f"{depth} -> {depth}{OPTIMAL_BRACKETS}",
        f"Levine's fit keeps the optimum at trained depth {depth}{edge} over the trained N, so growth cannot be seen "
        f"here: {moves}{suffix}; the argmin agrees with it at both ends, a prediction that could have failed (an "
        "argmin decided at another depth refutes it)"
        + (f", but at the edge it only bounds the optimum ({bound} depth {depth}), not locates it" if edge else ""),
    )


def test_an_argmin_range_that_is_not_whole_is_written_as_it_is():
    """The bootstrap range of the argmin is written with the general format: whole depths as integers, a range end
    that is not whole (an interpolated quantile) with its decimals."""
    frame = optimal_frame([1, 2, 2], [1, 2, 2]).assign(optimal_ci_low=1.5, optimal_ci_high=2.0)
    assert levine.optimal_depth_growth(frame).value.startswith("N=1e+05: 1 [1.5, 2] vs Levine 1.10")


# ---------------------------------------------------------------- Levine's depth inefficiency (the contrast)


# contrast_row's step 1->2 (test_rule_mutants.STEP_CROSSOVERS) against its N, 1e5 and 9e5
CONTRAST_SCALE = (
    "L_th = log3(width) at the deeper model's own width at that N; read literally, the deeper model wins once its "
    f"width passes 3^L; {BRACKETED}the threshold's 1->2 (N ~3e+05); not: the fitted optimum's 1->2 (N ~2e+06: none "
    "1.5x above)"
)
STOPS = f"stops paying above (gain <= {PAYS_MARGIN:g}%)"


def contrast_row(below, above, contrast, pairs=(3, 2), dof: int = 12, **extra) -> pd.DataFrame:
    """The levine_optimal_depth figure's contrast columns on one row: the gain (mean, low, high, in %) below and above
    the threshold and their contrast, `pairs` of depths below and above it, the seed noise."""
    row = {"noise_sd_pct": 0.3, "noise_dof": dof, "seeds": 3, "below_pairs": pairs[0], "above_pairs": pairs[1]}
    for name, (mean, low, high) in {"gain_below": below, "gain_above": above, "contrast": contrast}.items():
        row |= {f"{name}_pct": mean, f"{name}_ci_low": low, f"{name}_ci_high": high}
    return steps_frame(row | extra)


CONTRAST_INTERVAL = "gain below (%) [0.80, 1.80]; gain above (%) [0.20, 0.90]; contrast (%) [0.10, 0.50]"


def test_depth_contrast_that_holds_writes_every_column_out():
    """Gains +1.30% below (3 pairs) and +0.10% above (2), contrast +0.70%: every part holds; the value gives the
    signed means and each part's verdict, the interval each part's range, and a decided rule asks for nothing.
    (A gain below of [0.3, 1.3]% would not hold: a gain must pass 0.5%.)"""
    result = levine.depth_contrast(contrast_row((1.3, 0.8, 1.8), (0.1, 0.0, 0.2), (0.7, 0.2, 1.2)))
    assert result == Result(
        "deepening gains +1.30% below the threshold (3 pairs), +0.10% above it (2); contrast +0.70%; "
        f"deepening pays below: {HOLDS}, {STOPS}: {HOLDS}, the contrast is positive: {HOLDS}",
        HOLDS,
        "gain below (%) [0.80, 1.80]; gain above (%) [0.00, 0.20]; contrast (%) [0.20, 1.20]",
        NOISE,
        CONTRAST_SCALE,
        "",
    )


def test_an_undecided_contrast_asks_for_the_seeds_that_resolve_its_mean_over_all_pairs():
    """A gain above of [0.2, 0.9]% is undecided against 0.5%: the needs name that part and the seeds that resolve the
    contrast's mean (0.3%, not its lower end) pooled over the 3 + 2 pairs."""
    result = levine.depth_contrast(contrast_row((1.3, 0.8, 1.8), (0.5, 0.2, 0.9), (0.3, 0.1, 0.5)))
    assert result == Result(
        "deepening gains +1.30% below the threshold (3 pairs), +0.50% above it (2); contrast +0.30%; "
        f"deepening pays below: {HOLDS}, {STOPS}: {INCONCLUSIVE}, the contrast is positive: {HOLDS}",
        INCONCLUSIVE,
        CONTRAST_INTERVAL,
        NOISE,
        CONTRAST_SCALE,
        f"undecided: {STOPS}; " + verdicts.seeds_text(0.3, 0.3, 3, 5, "the contrast (%)"),
    )
    assert verdicts.seeds_text(0.3, 0.3, 3, 5, "x") != verdicts.seeds_text(0.3, 0.3, 3, 1, "x")  # pairs matter


def test_a_contrast_with_one_side_missing_writes_every_column_out():
    """No pair above the threshold: inconclusive, every column still written (the noise with Bartlett's p where
    the figure tested it), and the needs ask for smaller N."""
    frame = contrast_row((1.3, 0.8, 1.8), (0.5, 0.2, 0.9), (0.3, 0.1, 0.5), pairs=(3, 0), noise_heterogeneity_p=0.2)
    result = levine.depth_contrast(frame)
    assert result == Result(
        "one side of the contrast is missing (no pair above the threshold); deepening gains +1.30% below the threshold "
        "(3 pairs), +0.50% above it (0); contrast +0.30%",
        INCONCLUSIVE,
        CONTRAST_INTERVAL,
        NOISE + "; one sd for every shape (Bartlett p = 0.2)",
        CONTRAST_SCALE,
        "pairs of depths on both sides of L_th = log3(width) at a shared N: smaller N (narrower deep models)",
    )


# ---------------------------------------------------------------- Levine read literally


def literal_rows(before=(-1.5, -2.0, -1.0), past=(1.5, 1.0, 2.0), points=(4, 3)) -> pd.DataFrame:
    """The levine_literal figure: two trained N of the pair 1 -> 2 (literal crossover at N ~ 1989) and one of 2 -> 3
    (~26433), each pair's own gains before and past, and the figure's gains (mean, low, high, %) and points."""
    figure = {"noise_sd_pct": 0.3, "noise_dof": 12, "seeds": 3}
    for side, (mean, low, high), count in zip(("before", "past"), (before, past), points):
        figure |= {f"{side}_points": count, f"gain_{side}_pct": mean}
        figure |= {f"gain_{side}_ci_low": low, f"gain_{side}_ci_high": high}
    pairs = [(1, 2, 1e3, 1989.0, -1.2, 0.8), (1, 2, 5e3, 1989.0, -1.2, 0.8), (2, 3, 1e4, 26433.0, 0.4, 1.6)]
    return pd.DataFrame(
        [
            {"shallow": s, "deep": d, "n": n, "literal_n": lit, "pair_gain_before_pct": b, "pair_gain_past_pct": p}
            | figure
            for s, d, n, lit, b, p in pairs
        ]
    )


# literal_rows' pairs: 1->2 trained at N = 1e3 and 5e3 around its 1989, 2->3 at 1e4 only, below its 26433
LITERAL_SCALE = (
    "literal crossovers (the deeper model's width 3^L): 1->2 at N ~2e+03, 2->3 at N ~2.6e+04; "
    f"{BRACKETED}1->2 (N ~2e+03); not: 2->3 (N ~2.6e+04: none 1.5x above)"
)
LITERAL_PAIRS = "1->2: -1.20% before, +0.80% past; 2->3: +0.40% before, +1.60% past"


def test_literal_threshold_that_holds_names_each_pair_once_with_every_column_written_out():
    """The shallower wins before, the deeper past: holds; each pair (of several trained N) appears once at our scale
    and in the value, with its signed gains; the interval gives both sides' ranges; a decided rule asks for nothing."""
    result = levine.literal_threshold(literal_rows())
    assert result == Result(
        "the deeper model gains -1.50% before its literal crossover (4 points), +1.50% past it (3); "
        f"{LITERAL_PAIRS}; the shallower wins before: {HOLDS}, the deeper wins past: {HOLDS}",
        HOLDS,
        "gain before (%) [-2.00, -1.00]; gain past (%) [1.00, 2.00]",
        NOISE,
        LITERAL_SCALE,
        "",
    )


def test_an_undecided_literal_side_asks_for_the_seeds_that_resolve_the_smaller_mean_gain():
    """A gain before of [-1.2, 0.6]% (mean +0.3%) is undecided: the needs name that side and the seeds that resolve
    the smaller of the two mean gains in size (0.3%, not an interval end) pooled over the 4 + 3 points."""
    result = levine.literal_threshold(literal_rows(before=(0.3, -1.2, 0.6)))
    assert result == Result(
        "the deeper model gains +0.30% before its literal crossover (4 points), +1.50% past it (3); "
        f"{LITERAL_PAIRS}; the shallower wins before: {INCONCLUSIVE}, the deeper wins past: {HOLDS}",
        INCONCLUSIVE,
        "gain before (%) [-1.20, 0.60]; gain past (%) [1.00, 2.00]",
        NOISE,
        LITERAL_SCALE,
        "undecided: the shallower wins before; " + verdicts.seeds_text(0.3, 0.3, 3, 7, "the smaller side's gain (%)"),
    )
    assert verdicts.seeds_text(0.3, 0.3, 3, 7, "x") != verdicts.seeds_text(0.3, 0.3, 3, 1, "x")  # points matter


def test_a_literal_side_without_points_writes_every_column_out():
    """No point past the crossovers: inconclusive with every column written, asking for N a factor AT_CROSSOVER or
    more on each side of the crossovers."""
    result = levine.literal_threshold(literal_rows(points=(4, 0)))
    assert result == Result(
        "no point past a literal crossover; the deeper model gains -1.50% before its literal crossover (4 points), "
        f"+1.50% past it (0); {LITERAL_PAIRS}",
        INCONCLUSIVE,
        "gain before (%) [-2.00, -1.00]; gain past (%) [1.00, 2.00]",
        NOISE,
        LITERAL_SCALE,
        f"trained N on both sides of each crossover, a factor {AT_CROSSOVER:g} or more away from it (smaller N for "
        "'before', larger for 'past')",
    )


def test_literal_threshold_of_an_empty_figure_says_there_is_no_pair():
    """No pair over a shared N: inconclusive, saying so, with nothing at our scale, asking for the literal block."""
    assert levine.literal_threshold(literal_rows().iloc[:0]) == Result(
        "no pair of consecutive depths trained over a shared range of N",
        INCONCLUSIVE,
        needs="the literal block: the shallowest depths at N on both sides of N ~ 2e3",
    )


@pytest.mark.parametrize(
    ("below", "verdict"),
    [((1.3, 0.8, 1.8), HOLDS), ((0.8, 0.3, 1.3), INCONCLUSIVE), ((0.25, 0.1, 0.4), FAILS)],
)
def test_deepening_pays_only_past_the_margin(below, verdict):
    """'Deepening pays below': a gain whose interval lies above 0.5% holds; one above 0 but reaching into 0.5% is
    undecided (it may be a bias that size); one at or below 0.5% throughout fails, though it lies above 0."""
    result = levine.depth_contrast(contrast_row(below, (0.1, 0.0, 0.2), (0.7, 0.2, 1.2)))
    assert f"deepening pays below: {verdict}" in result.value


# ---------------------------------------------------------------- which crossovers the trained N bracket


@pytest.mark.parametrize(
    "trained, says",
    [
        ([1e3 / AT_CROSSOVER, 1e3 * AT_CROSSOVER], f"{BRACKETED}1->2 (N ~1e+03); not: none"),  # both ends count
        ([1e3 / AT_CROSSOVER * 1.001, 1e4], f"{BRACKETED}none; not: 1->2 (N ~1e+03: none 1.5x below)"),
        ([1e2, 1e3 * AT_CROSSOVER * 0.999], f"{BRACKETED}none; not: 1->2 (N ~1e+03: none 1.5x above)"),
        ([9e2, 1.1e3], f"{BRACKETED}none; not: 1->2 (N ~1e+03: none 1.5x below or above)"),  # near it on both sides
    ],
)
def test_a_crossover_is_bracketed_only_by_a_trained_n_a_factor_1_5_away_on_each_side(trained, says):
    """A trained N exactly a factor AT_CROSSOVER below and another exactly that factor above bracket a crossover;
    just inside that factor on either side they do not, and the text names the side without one."""
    assert levine.bracketing({"": [("1->2", 1e3, np.array(trained))]}) == says


def test_bracketing_groups_each_reading_and_names_a_crossover_at_no_finite_n():
    """Each reading's crossovers are listed after its name, bracketed ones apart from the others; a crossover that
    no finite N reaches (a width beyond any count) is named as such, and the crossovers after it are still read."""
    trained = np.array([1e3, 1e6])
    said = levine.bracketing(
        {
            "the threshold's": [("2->3", math.inf, trained), ("1->2", 2e4, trained)],
            "the fitted optimum's": [("1->2", 3e4, trained), ("2->3", 2e6, trained)],
        }
    )
    assert said == (
        f"{BRACKETED}the threshold's 1->2 (N ~2e+04), the fitted optimum's 1->2 (N ~3e+04); not: the threshold's "
        "2->3 (at no finite N), the fitted optimum's 2->3 (N ~2e+06: none 1.5x above)"
    )


def test_the_crossover_slope_brackets_only_consecutive_pairs():
    """A pair of depths that are not neighbours (1 -> 3) is compared in the figure but is no crossover of the
    threshold: the row's bracketing names only 1 -> 2 and 2 -> 3."""
    frame = crossover_frame((1.1, 0.9, 1.3))
    skip = frame.iloc[[0]].assign(deep=3, consecutive=False, threshold_n=5e5, fitted_n=5e4)
    assert levine.crossover_slope(pd.concat([frame, skip])).at_our_scale == crossover_scale("0.070")


def test_the_literal_row_brackets_each_pair_by_its_own_trained_n():
    """Each pair is bracketed by the N it was trained at, not by another pair's: 1 -> 2 at N = 1e3 alone is not
    bracketed, although 2 -> 3 was trained at 5e4, past 1 -> 2's crossover; 2 -> 3 at 1e4 and 5e4 is."""
    rows = literal_rows()
    rows = pd.concat([rows[rows["n"] != 5e3], rows[rows["deep"] == 3].assign(n=5e4)])
    assert levine.literal_threshold(rows).at_our_scale.endswith(
        f"{BRACKETED}2->3 (N ~2.6e+04); not: 1->2 (N ~2e+03: none 1.5x above)"
    )


def test_a_literal_pair_with_no_point_on_a_side_says_so():
    """A pair trained only before its crossover (2 -> 3 here) has no gain past it: the value says 'no point past'
    for that pair, not a number."""
    rows = literal_rows()
    rows.loc[rows["deep"] == 3, "pair_gain_past_pct"] = NAN
    assert "; 2->3: +0.40% before, no point past;" in levine.literal_threshold(rows).value
