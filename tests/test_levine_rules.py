"""Levine's rules read directly, on small hand-built figure tables: the numbers each branch's evidence holds (the
statistic and its interval, the verdict, each part's, the crossovers, argmins and brackets, and what would decide it
in numbers), the edges of the crossover slope's interval exactly on ln 3 and on the fitted slope, the share of redraws
with a slope, the factor of seeds an undecided slope asks for, the edge of the trained depths, and what the undecided
sided rules pass to the seeds they ask for. A few golden tests hold the words (`claim_rules.text`,
`wording.bracketing_text`). test_rule_mutants checks the verdicts of these rules and the learning-rate systematic.

Each table is small and built so that the rule as written and a slightly different reading of it disagree on it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from claim_rules import evidence, needs, parts, text
from depthwidth import fits
from depthwidth.claims import levine, wording
from depthwidth.claims.registry import PAYS_MARGIN
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, FigureDataError, Unmeasurable
from depthwidth.plots.levine_literal import AT_CROSSOVER
from test_rule_mutants import crossover_frame, optimal_frame, steps_frame

NAN = math.nan
LN3 = math.log(3.0)
NOISE = "seed sd 0.30% of the loss (pooled, 12 dof; 3 seeds per shape)"
CROSSOVER, OPTIMAL = "levine_crossover_slope", "levine_optimal_depth"
CONTRAST, LITERAL = "levine_depth_inefficiency", "levine_literal_threshold"


def bracketed(brackets) -> list[tuple]:
    """Each `levine.Bracket` as (reading, shallow, deep, below, above)."""
    return [(b.reading, b.shallow, b.deep, b.below, b.above) for b in brackets]


def noise_of(e) -> tuple:
    """The evidence's seed noise as (sd, dof, seeds)."""
    return e.noise.sd, e.noise.dof, e.noise.seeds


# ---------------------------------------------------------------- Levine's crossover slope


BRACKETED = "bracketed by the trained N (one 1.5x or more on each side): "

# crossover_frame's pairs, trained at N = 1e4 to 1e6: 1->2 by the threshold at 2.6e4 and by the fit at 6e5, 2->3 at
# 3.4e5 and 1.2e6; only the last lacks a trained N 1.5x above it
CROSSOVER_BRACKETS = [
    ("threshold", 1, 2, True, True),
    ("threshold", 2, 3, True, True),
    ("fitted", 1, 2, True, True),
    ("fitted", 2, 3, True, False),
]


def crossover_scale(fitted: str) -> str:
    """The at-our-scale text of the crossover slope, the fitted optimum's slope written `fitted`."""
    return (
        f"threshold: ln 3 = {LN3:.3f} per layer (crossover at width 3^L); fitted optimum d*(L): {fitted} per layer "
        "for the deeper model's width at the crossover (where L* passes the pair's midpoint; d*(L) itself rises "
        f"{fits.LEVINE_WIDTH_SLOPE} per layer); {BRACKETED}the threshold's 1->2 (N ~2.6e+04), 2->3 (N ~3.4e+05), the "
        "fitted optimum's 1->2 (N ~6e+05); not: the fitted optimum's 2->3 (N ~1.2e+06: none 1.5x above)"
    )


BOTH_CROSS = [
    "crossovers: 1->2: width 9 [2, 40] (in range), 2->3: width 27 [2, 40] (in range)",
    "never overtakes: none",
]


def test_crossover_slope_that_tells_ln3_from_the_fit_holds_with_its_numbers():
    """A slope interval [0.9, 1.3] includes ln 3 and excludes the fitted 0.07: holds, read (not stopped early); the
    slope's part is the figure's, both crossovers are in range, the brackets are the pairs' and the noise the
    figure's, and a decided slope asks for nothing."""
    found = evidence(CROSSOVER, crossover_frame((1.1, 0.9, 1.3)))
    assert found.verdict == HOLDS and found.stage == "read" and found.needs == ()
    (slope,) = found.parts
    assert (slope.name, slope.value, slope.low, slope.high, slope.verdict) == ("slope", 1.1, 0.9, 1.3, HOLDS)
    assert not slope.carried and slope.unit == " per layer"
    assert (found.threshold, found.fitted) == (LN3, 0.07)
    assert (found.includes_threshold, found.includes_fitted) == (True, False)
    assert [(c.shallow, c.deep, c.crosses, c.width, c.in_range) for c in found.crossovers] == [
        (1, 2, True, 9.0, True),
        (2, 3, True, 27.0, True),
    ]
    assert bracketed(found.brackets) == CROSSOVER_BRACKETS and found.trained == (1e4, 1e6)
    assert noise_of(found) == (0.3, 12, 3) and found.seeds == 3 and found.defined == 1.0


def test_crossover_slope_that_holds_in_words():
    """Golden: every text column of a crossover slope that holds (value, interval, noise, at our scale, needs)."""
    assert text(CROSSOVER, crossover_frame((1.1, 0.9, 1.3))) == wording.Text(
        ["slope 1.100 per layer", *BOTH_CROSS, "the interval includes ln 3 and excludes the fitted optimum's 0.070"],
        "slope [0.900, 1.300]",
        NOISE,
        crossover_scale("0.070"),
        [],
    )


def test_crossover_slope_that_excludes_ln3_fails_and_asks_for_nothing():
    """A slope interval [0.0, 0.5] excludes ln 3 (and includes the fitted 0.07): fails, asking for nothing."""
    found = evidence(CROSSOVER, crossover_frame((0.25, 0.0, 0.5)))
    assert found.verdict == FAILS and found.needs == () and found.parts[0].verdict == FAILS
    assert (found.includes_threshold, found.includes_fitted) == (False, True)


@pytest.mark.parametrize(
    "slope, fitted, verdict, includes",
    [
        ((1.2, LN3, 1.4), 0.07, HOLDS, (True, False)),  # ln 3 on the lower end
        ((1.0, 0.9, LN3), 0.07, HOLDS, (True, False)),  # ln 3 on the upper end
        ((0.6, 0.07, 1.3), 0.07, INCONCLUSIVE, (True, True)),  # the fitted slope on the lower end
        ((1.1, 0.9, 1.2), 1.2, INCONCLUSIVE, (True, True)),  # the fitted slope on the upper end
        ((1.25, LN3 + 1e-9, 1.4), 0.07, FAILS, (False, False)),  # just past ln 3: excluded
    ],
)
def test_a_slope_interval_with_an_end_on_ln3_or_on_the_fitted_slope_includes_it(slope, fitted, verdict, includes):
    """'The interval includes x' counts both ends: ln 3 (or the fitted optimum's slope) exactly on an end is inside
    it; just beyond the end it is not."""
    found = evidence(CROSSOVER, crossover_frame(slope, fitted=fitted))
    assert found.verdict == verdict and found.fitted == fitted
    assert (found.includes_threshold, found.includes_fitted) == includes


@pytest.mark.parametrize("defined, verdict, stage", [(0.95, HOLDS, "read"), (0.9499, INCONCLUSIVE, "undefined")])
def test_a_slope_defined_in_95_percent_of_the_redraws_is_read(defined, verdict, stage):
    """The slope's interval is read when at least 95% of the redraws have every pair crossing (95% exactly
    included); below that the rule is inconclusive and asks for seeds or wider N, naming the share without a
    slope."""
    found = evidence(CROSSOVER, crossover_frame((1.1, 0.9, 1.3), defined=defined))
    assert (found.verdict, found.stage, found.defined) == (verdict, stage, defined)
    if verdict == INCONCLUSIVE:
        assert [n.kind for n in found.needs] == ["undefined_slope"]
        assert needs(found)["undefined_slope"]["undefined"] == pytest.approx(1 - defined)
    else:
        assert found.needs == ()


def test_an_undecided_slope_leaves_how_many_seeds_to_decide_and_names_what_they_resolve():
    """An interval [0.05, 1.30] includes ln 3 and the fitted 0.07: more seeds may separate them, and how many is
    `decide`'s to say by this rule on redrawn tables (a (half-width / half-distance)^2 factor read a bootstrap
    interval as a mean's and left out the systematic that seeds do not shrink). The need names the slope and the
    fitted value, in numbers, and its words say what is open and defer the count."""
    found = evidence(CROSSOVER, crossover_frame((0.6, 0.05, 1.3)))
    assert found.verdict == INCONCLUSIVE and found.stage == "read" and found.parts[0].verdict == INCONCLUSIVE
    assert (found.includes_threshold, found.includes_fitted) == (True, True)
    assert [n.kind for n in found.needs] == ["seeds"]
    assert needs(found)["seeds"] == {"effect": 0.6, "what": "slope_between", "one_seed": False, "fitted": 0.07}
    words = wording.NEEDS["seeds"](needs(found)["seeds"])
    assert "the slope (per layer) between ln 3 and the fitted optimum's 0.070 (+0.60)" in words
    assert "`decide` finds it" in words


@pytest.mark.parametrize("dof", [12, 0])
def test_without_a_slope_the_missing_crossover_is_placed_and_one_seed_asks_for_a_second(dof):
    """One pair crossing in range, the next crossing outside the trained N (1e4 to 1e6): no slope and no part; the
    record places only the missing pair's threshold (inside the trained N) and fitted crossover (beyond it), and
    with one seed (no dof) also asks for a second seed; the noise is the figure's."""
    frame = crossover_frame((NAN, NAN, NAN)).assign(noise_dof=dof, seeds=3 if dof else 1)
    frame.loc[1, "in_range"] = False
    found = evidence(CROSSOVER, frame)
    assert found.verdict == INCONCLUSIVE and found.stage == "no_slope" and found.parts == ()
    assert [(c.shallow, c.deep, c.crosses, c.in_range) for c in found.crossovers] == [
        (1, 2, True, True),
        (2, 3, True, False),
    ]
    (missing,) = found.missing
    assert (missing.shallow, missing.deep, missing.threshold_n, missing.fitted_n) == (2, 3, 2e3 * 13**2, 1.2e6)
    low, high = found.trained
    assert low <= missing.threshold_n <= high < missing.fitted_n
    assert [n.kind for n in found.needs] == ([] if dof else ["crossover_seeds"])
    assert noise_of(found) == ((0.3, 12, 3) if dof else (0.3, 0, 1))
    assert bracketed(found.brackets) == CROSSOVER_BRACKETS  # read before the slope is


def test_crossover_slope_of_an_empty_figure_is_inconclusive_and_asks_for_pairs():
    """A figure with no pair decides nothing: no part, an undefined fitted slope, ln 3 kept, no bracket, and it asks
    for two depths with two widths each. A figure without the columns the rule reads is a defect, not a verdict."""
    found = evidence(CROSSOVER, crossover_frame((1.1, 0.9, 1.3)).iloc[:0])
    assert found.verdict == INCONCLUSIVE and found.stage == "no_pairs" and found.parts == ()
    assert found.threshold == LN3 and math.isnan(found.fitted) and found.brackets == ()
    assert [n.kind for n in found.needs] == ["two_depths_two_widths"]
    with pytest.raises(FigureDataError, match="figure levine_crossover: column 'shallow' missing"):
        evidence(CROSSOVER, pd.DataFrame())


def test_a_figure_without_the_bootstrap_check_column_is_a_defect_not_a_default():
    """A crossover figure without `ci_holds_cross` (written before that check) is no longer read as 'every range
    holds its point': it raises the error that names the figure and the column; with it, each crossover carries its
    own flag."""
    frame = crossover_frame((1.1, 0.9, 1.3))
    with pytest.raises(FigureDataError, match="figure levine_crossover: column 'ci_holds_cross' missing"):
        evidence(CROSSOVER, frame.drop(columns="ci_holds_cross"))
    frame.loc[1, "ci_holds_cross"] = False
    assert [c.range_holds for c in evidence(CROSSOVER, frame).crossovers] == [True, False]


# ---------------------------------------------------------------- Levine's optimal depth


# optimal_frame's steps 1->2 and 2->4 (test_rule_mutants.STEP_CROSSOVERS) against its N, 1e5 to 9e5
OPTIMAL_BRACKETS = [
    ("threshold", 1, 2, True, True),
    ("threshold", 2, 4, True, False),
    ("fitted", 1, 2, True, False),
    ("fitted", 2, 4, False, True),
]


def n_at_depth(depth: float) -> float:
    """N = 12 L d*(L)^2 at Levine's fitted optimal width ln d* = LEVINE_LOG_WIDTH + LEVINE_WIDTH_SLOPE L."""
    return 12 * depth * math.exp(2 * (fits.LEVINE_LOG_WIDTH + fits.LEVINE_WIDTH_SLOPE * depth))


def test_optimal_depth_growth_that_holds_gives_every_argmin_and_the_growth():
    """L* moving from trained depth 1 to 2 and the argmin growing in 99% of the redraws: holds; each N's argmin with
    its bootstrap range, Levine's L* and its trained depth; the growth and decline shares; the steps' brackets."""
    found = evidence(OPTIMAL, optimal_frame([1, 2, 2], [1, 2, 2]))
    assert found.verdict == HOLDS and found.stage == "moves" and found.needs == ()
    assert [(a.n, a.depth, a.low, a.high, a.levine_depth, a.levine_trained) for a in found.argmins] == [
        (1e5, 1, 1, 1, 1.1, 1),
        (3e5, 2, 2, 2, 2.1, 2),
        (9e5, 2, 2, 2, 2.1, 2),
    ]
    assert (found.growth, found.decline) == (0.99, 0.0)
    (growth,) = found.parts  # without the systematic no argmin part is read
    assert (growth.name, growth.value, growth.margin, growth.verdict) == ("growth", 0.99, levine.DECIDED, HOLDS)
    assert bracketed(found.brackets) == OPTIMAL_BRACKETS
    assert noise_of(found) == (0.3, 12, 3) and found.seeds == 3


def test_undecided_growth_asks_for_the_seeds_that_resolve_the_closest_runner_up():
    """Flat argmins with the largest N's undecided (60%): inconclusive, asking for more seeds for the closest
    runner-up gap (1%, not another number)."""
    frame = optimal_frame([1, 2, 2], [2, 2, 2], growth=0.5)
    frame.loc[frame["n"] == frame["n"].max(), "optimal_share"] = 0.6
    found = evidence(OPTIMAL, frame)
    assert found.verdict == INCONCLUSIVE and found.stage == "moves" and [n.kind for n in found.needs] == ["seeds"]
    assert needs(found)["seeds"] == {"effect": 1.0, "what": "runner_up_gap", "one_seed": False}


@pytest.mark.parametrize(
    "depth, edge, moves",
    [
        (1, True, {"next_depth": 2, "next_n": n_at_depth(2**0.5), "n_now": 9e5}),
        (2, False, {"next_depth": 4, "next_n": n_at_depth(8**0.5), "n_now": 9e5}),
        (4, True, {"next_depth": None}),
    ],
)
def test_a_fixed_levine_optimum_says_whether_it_is_an_edge_of_the_trained_depths(depth, edge, moves):
    """Where L* stays at one trained depth (of 1, 2, 4) and the argmin is decided there, growth cannot be seen: the
    needs say so, flag the shallowest and the deepest trained depth as an edge (not the middle one), say on which
    side an edge bounds the optimum, and where Levine's fit moves the optimum on (at the log midpoint to the next
    deeper depth, if any)."""
    found = evidence(OPTIMAL, optimal_frame([depth] * 3, [depth] * 3))
    assert found.verdict == INCONCLUSIVE and found.stage == "stays"
    # each end's argmin agrees with L*'s depth: no depth beats it, yet no growth can be seen (nothing refutes, nothing
    # holds); each end names the depth nearest to beating it (all 1% behind: the shallowest other), 1% behind
    ends = [(p.name, p.at["n"], p.at["depth"], p.at["levine"], p.verdict) for p in found.parts]
    nearest = 2 if depth == 1 else 1
    assert ends == [("levine_beaten", n, nearest, depth, INCONCLUSIVE) for n in (1e5, 9e5)]
    assert [p.value for p in found.parts] == [pytest.approx(-100 * math.log(1.01))] * 2
    assert [(a.depth, a.levine_depth, a.levine_trained) for a in found.argmins] == [(depth, depth + 0.1, depth)] * 3
    assert [n.kind for n in found.needs] == ["growth_unseen", "argmin_agrees"]
    expected = {"depth": depth, "edge": edge, **moves}
    if "next_n" in expected:
        expected["next_n"] = pytest.approx(expected["next_n"], rel=1e-9)  # Levine's fit, computed here apart
    assert needs(found)["growth_unseen"] == expected
    side = "below" if depth == 1 else "above"
    assert needs(found)["argmin_agrees"] == {"depth": depth, "edge": edge, "side": side}


def test_a_fixed_levine_optimum_at_the_edge_in_words():
    """Golden: at the shallowest trained depth the needs say growth cannot be seen, where Levine's fit moves the
    optimum on, and that the argmin there only bounds the optimum."""
    assert text(OPTIMAL, optimal_frame([1] * 3, [1] * 3)).needs == [
        "Levine's fit keeps the optimum at trained depth 1 (the edge of the trained depths) over the trained N, so "
        f"growth cannot be seen here: Levine's fit moves the optimum to depth 2 only near N = {n_at_depth(2**0.5):.2g} "
        "(trained up to 9e+05)",
        "the argmin agrees with it at both ends, a prediction that could have failed (a depth that beats it refutes "
        "it), but at the edge it only bounds the optimum (at or below depth 1), not locates it",
    ]


def test_an_argmin_range_that_is_not_whole_is_kept_and_written_as_it_is():
    """The bootstrap range of the argmin is the figure's (an interpolated quantile is not rounded), and the words
    write it with the general format: whole depths as integers, a range end that is not whole with its decimals."""
    frame = optimal_frame([1, 2, 2], [1, 2, 2]).assign(optimal_ci_low=1.5, optimal_ci_high=2.0)
    assert [(a.low, a.high) for a in evidence(OPTIMAL, frame).argmins] == [(1.5, 2.0)] * 3
    assert text(OPTIMAL, frame).headline == "N=1e+05: 1 [1.5, 2] vs Levine 1.10 (nearest trained 1)"


# ---------------------------------------------------------------- Levine's depth inefficiency (the contrast)


# contrast_row's step 1->2 (test_rule_mutants.STEP_CROSSOVERS) against its N, 1e5 and 9e5
CONTRAST_BRACKETS = [("threshold", 1, 2, True, True), ("fitted", 1, 2, True, False)]


def contrast_row(below, above, contrast, pairs=(3, 2), dof: int = 12, depths=(1, 2), **extra) -> pd.DataFrame:
    """The levine_optimal_depth figure's contrast columns on one row: the gain (mean, low, high, in %) per layer below
    and above the threshold and their contrast, none with a systematic of its own, `pairs` of depths below and above
    it (and one on neither side), the seed noise (no moderated prior: nan); on the rows of `steps_frame` (`depths`)."""
    row = {"noise_sd_pct": 0.3, "noise_dof": dof, "seeds": 3, "below_pairs": pairs[0], "above_pairs": pairs[1]}
    row |= {"across_pairs": 1}
    row |= {"noise_prior_sd_pct": NAN, "noise_prior_dof": NAN}
    for name, (mean, low, high) in {"gain_below": below, "gain_above": above, "contrast": contrast}.items():
        row |= {f"{name}_pct": mean, f"{name}_ci_low": low, f"{name}_ci_high": high}
        row |= {f"{name}_sys_down": NAN, f"{name}_sys_up": NAN}
    return steps_frame(row | extra, depths=depths)


def sides(e) -> list[tuple]:
    """Each part of a sided record as (name, value, low, high, verdict)."""
    return [(p.name, p.value, p.low, p.high, p.verdict) for p in e.parts]


def test_depth_contrast_that_holds_gives_each_side_and_asks_for_nothing():
    """Gains +1.30% below (3 pairs) and +0.10% above (2), contrast +0.70%: every part holds, each read against the
    0.5% a gain must pass (the contrast against 0, its systematic weighed against 0.5%); a decided rule asks for
    nothing. (A gain below of [0.3, 1.3]% would not hold: a gain must pass 0.5%.)"""
    found = evidence(CONTRAST, contrast_row((1.3, 0.8, 1.8), (0.1, 0.0, 0.2), (0.7, 0.2, 1.2)))
    assert found.verdict == HOLDS and found.needs == ()
    assert sides(found) == [
        ("gain_below", 1.3, 0.8, 1.8, HOLDS),
        ("gain_above", 0.1, 0.0, 0.2, HOLDS),
        ("contrast", 0.7, 0.2, 1.2, HOLDS),
    ]
    assert all(p.margin == PAYS_MARGIN and not p.carried for p in found.parts)
    assert found.counts == {"below": 3, "above": 2} and found.missing == () and found.across == 1
    assert bracketed(found.brackets) == CONTRAST_BRACKETS and noise_of(found) == (0.3, 12, 3) and found.seeds == 3


def test_depth_contrast_that_holds_in_words():
    """Golden: the value and the at-our-scale texts of a contrast that holds: gains per layer, the pairs on neither
    side counted with the literal row's buffer, each pair over its own N."""
    said = text(CONTRAST, contrast_row((1.3, 0.8, 1.8), (0.1, 0.0, 0.2), (0.7, 0.2, 1.2)))
    assert said.value == [
        "deepening gains +1.30% per layer below the threshold (3 pairs), +0.10% per layer above it (2)",
        "contrast +0.70% per layer",
        "1 on neither side (across a threshold, or within 1.5x in N of one)",
        "deepening pays below: holds, stops paying above (gain <= 0.5%): holds, the contrast is positive: holds",
    ]
    assert said.at_our_scale.startswith(
        "each pair of neighbouring depths over its own N, its gain per added layer; below L_th = log3(width): the "
        "deeper model's N 1.5x or more past the N where its width is 3^L, above: the shallower's as far short of its "
        "own; bracketed by the trained N"
    )


def test_the_contrast_brackets_each_pair_by_its_own_n():
    """The pair 2 -> 4 compared only at 1e7 and 2e7 (its own range), 1 -> 2 at 1e5 and 9e5: 2 -> 4's crossovers (5e6
    by the threshold, 2e4 by the fit) are bracketed by its own N (both above, none below), not by the N the other
    pair or the optimum's rows were compared at (which would put a point below 5e6)."""
    frame = contrast_row((1.3, 0.8, 1.8), (0.1, 0.0, 0.2), (0.7, 0.2, 1.2), depths=(1, 2, 4))
    frame.loc[(frame["row"] == "step") & (frame["depth"] == 4), "n"] = [1e7, 2e7]
    assert bracketed(evidence(CONTRAST, frame).brackets) == [
        ("threshold", 1, 2, True, True),
        ("threshold", 2, 4, False, True),
        ("fitted", 1, 2, True, False),
        ("fitted", 2, 4, False, True),
    ]


def test_an_undecided_contrast_asks_for_the_seeds_that_resolve_its_mean():
    """A gain above of [0.2, 0.9]% is undecided against 0.5%: the needs name that part and more seeds for the
    contrast's mean (0.4%, not its lower end; how many is decide's)."""
    found = evidence(CONTRAST, contrast_row((1.3, 0.8, 1.8), (0.5, 0.2, 0.9), (0.4, 0.1, 0.7)))
    assert found.verdict == INCONCLUSIVE
    assert [p.verdict for p in found.parts] == [HOLDS, INCONCLUSIVE, HOLDS]
    assert [n.kind for n in found.needs] == ["undecided", "seeds"]
    assert needs(found)["undecided"] == {"parts": ("gain_above",)}
    assert needs(found)["seeds"] == {"effect": 0.4, "what": "contrast", "one_seed": False}


def test_the_contrast_and_the_optimum_each_read_their_own_rows():
    """The contrast reads the figure's step rows, the optimum its optimum rows: a figure with only the optimum's
    (no pair of neighbouring depths compared) leaves the contrast unmeasurable, asking for a pair trained over a
    shared range; steps beside the optimum's rows change nothing the optimum reads."""
    frame = contrast_row((1.3, 0.8, 1.8), (0.1, 0.0, 0.2), (0.7, 0.2, 1.2))
    found = evidence(CONTRAST, frame[frame["row"] == "optimum"])
    assert isinstance(found, Unmeasurable) and found.reason == levine.NO_COMMON_RANGE
    assert [n.kind for n in found.needs] == ["pair_range"]
    optimum = optimal_frame([1, 2, 2], [1, 2, 2])
    steps = optimum.iloc[:2].assign(row="step", shallow=1, depth=2, optimal_depth=NAN, levine_trained_depth=NAN)
    mixed, alone = evidence(OPTIMAL, pd.concat([optimum, steps], ignore_index=True)), evidence(OPTIMAL, optimum)
    assert (mixed.verdict, mixed.parts, mixed.argmins, mixed.brackets) == (
        alone.verdict, alone.parts, alone.argmins, alone.brackets,
    )  # fmt: skip


def test_a_contrast_with_one_side_missing_reads_no_side_and_asks_for_smaller_n():
    """No pair above the threshold: inconclusive, no side decided or widened, the noise with the figure's moderated
    prior, and the needs ask for smaller N (narrower deep models)."""
    frame = contrast_row(
        (1.3, 0.8, 1.8), (0.5, 0.2, 0.9), (0.3, 0.1, 0.5), pairs=(3, 0), noise_prior_sd_pct=0.2, noise_prior_dof=3.5
    )
    found = evidence(CONTRAST, frame)
    assert found.verdict == INCONCLUSIVE and found.missing == ("above",) and found.counts == {"below": 3, "above": 0}
    assert all(p.verdict == INCONCLUSIVE and not p.carried for p in evidence(CONTRAST, frame, fallback=0.5).parts)
    assert [p.value for p in found.parts] == [1.3, 0.5, 0.3]  # still read, for the row to state
    assert [n.kind for n in found.needs] == ["contrast_sides"] and needs(found)["contrast_sides"] == {"more": "smaller"}
    assert (found.noise.prior_sd, found.noise.prior_dof) == (0.2, 3.5)


@pytest.mark.parametrize(
    ("below", "verdict"),
    [((1.3, 0.8, 1.8), HOLDS), ((0.8, 0.3, 1.3), INCONCLUSIVE), ((0.25, 0.1, 0.4), FAILS)],
)
def test_deepening_pays_only_past_the_margin(below, verdict):
    """'Deepening pays below': a gain whose interval lies above 0.5% holds; one above 0 but reaching into 0.5% is
    undecided (it may be a bias that size); one at or below 0.5% throughout fails, though it lies above 0."""
    found = evidence(CONTRAST, contrast_row(below, (0.1, 0.0, 0.2), (0.7, 0.2, 1.2)))
    assert parts(found)["gain_below"].verdict == verdict


# ---------------------------------------------------------------- Levine read literally


def literal_rows(before=(-1.5, -2.0, -1.0), past=(1.5, 1.0, 2.0), points=(4, 3)) -> pd.DataFrame:
    """The levine_literal figure: two trained N of the pair 1 -> 2 (literal crossover at N ~ 1989) and one of 2 -> 3
    (~26433), each pair's own gains before and past, and the figure's gains (mean, low, high, %; no systematic of
    their own) and points."""
    figure = {"noise_sd_pct": 0.3, "noise_dof": 12, "seeds": 3, "noise_prior_sd_pct": NAN, "noise_prior_dof": NAN}
    for side, (mean, low, high), count in zip(("before", "past"), (before, past), points):
        figure |= {f"{side}_points": count, f"gain_{side}_pct": mean}
        figure |= {f"gain_{side}_ci_low": low, f"gain_{side}_ci_high": high}
        figure |= {f"gain_{side}_sys_down": NAN, f"gain_{side}_sys_up": NAN}
    pairs = [(1, 2, 1e3, 1989.0, -1.2, 0.8), (1, 2, 5e3, 1989.0, -1.2, 0.8), (2, 3, 1e4, 26433.0, 0.4, 1.6)]
    return pd.DataFrame(
        [
            {"shallow": s, "deep": d, "n": n, "literal_n": lit, "pair_gain_before_pct": b, "pair_gain_past_pct": p}
            | figure
            for s, d, n, lit, b, p in pairs
        ]
    )


# literal_rows' pairs: 1->2 trained at N = 1e3 and 5e3 around its 1989, 2->3 at 1e4 only, below its 26433
LITERAL_BRACKETS = [("literal", 1, 2, True, True), ("literal", 2, 3, True, False)]
LITERAL_PAIRS = [(1, 2, 1989.0, -1.2, 0.8), (2, 3, 26433.0, 0.4, 1.6)]


def literal_pairs(e) -> list[tuple]:
    return [(p.shallow, p.deep, p.literal_n, p.before, p.past) for p in e.pairs]


def test_literal_threshold_that_holds_names_each_pair_once():
    """The shallower wins before, the deeper past: holds; each pair (of several trained N) appears once, with its
    crossover and its own gains; both sides' gains with their intervals; a decided rule asks for nothing."""
    found = evidence(LITERAL, literal_rows())
    assert found.verdict == HOLDS and found.needs == ()
    assert sides(found) == [("gain_before", -1.5, -2.0, -1.0, HOLDS), ("gain_past", 1.5, 1.0, 2.0, HOLDS)]
    assert all(p.margin == PAYS_MARGIN for p in found.parts)
    assert found.counts == {"before": 4, "past": 3} and found.missing == ()
    assert literal_pairs(found) == LITERAL_PAIRS
    assert bracketed(found.brackets) == LITERAL_BRACKETS and noise_of(found) == (0.3, 12, 3)


def test_an_undecided_literal_side_asks_for_the_seeds_that_resolve_the_smaller_mean_gain():
    """A gain before of [-0.8, 1.6]% (mean +0.4%) is undecided: the needs name that side and more seeds for the
    smaller of the two mean gains in size (0.4%, not an interval end)."""
    found = evidence(LITERAL, literal_rows(before=(0.4, -0.8, 1.6)))
    assert found.verdict == INCONCLUSIVE and [p.verdict for p in found.parts] == [INCONCLUSIVE, HOLDS]
    assert [n.kind for n in found.needs] == ["undecided", "seeds"]
    assert needs(found)["undecided"] == {"parts": ("gain_before",)}
    assert needs(found)["seeds"] == {"effect": 0.4, "what": "smaller_side_gain", "one_seed": False}


def test_a_literal_side_without_points_is_inconclusive_and_asks_for_n_on_both_sides():
    """No point past the crossovers: inconclusive, no side decided, asking for N a factor AT_CROSSOVER or more on
    each side of the crossovers; the pairs and gains are still read for the row to state."""
    found = evidence(LITERAL, literal_rows(points=(4, 0)))
    assert found.verdict == INCONCLUSIVE and found.missing == ("past",) and found.counts == {"before": 4, "past": 0}
    assert [p.verdict for p in found.parts] == [INCONCLUSIVE, INCONCLUSIVE]
    assert [n.kind for n in found.needs] == ["literal_sides"]
    assert needs(found)["literal_sides"] == {"factor": AT_CROSSOVER}
    assert literal_pairs(found) == LITERAL_PAIRS


def test_literal_threshold_of_an_empty_figure_says_there_is_no_pair():
    """No pair over a shared N: unmeasurable (inconclusive), asking for the literal block."""
    found = evidence(LITERAL, literal_rows().iloc[:0])
    assert isinstance(found, Unmeasurable) and found.verdict == INCONCLUSIVE and found.reason == "no_literal_pairs"
    assert [n.kind for n in found.needs] == ["literal_block"] and found.parts == ()


def test_a_literal_pair_with_no_point_on_a_side_says_so():
    """A pair trained only before its crossover (2 -> 3 here) has no gain past it: its record holds none (nan), and
    the words say 'no point past' for that pair, not a number."""
    rows = literal_rows()
    rows.loc[rows["deep"] == 3, "pair_gain_past_pct"] = NAN
    (_, deeper) = evidence(LITERAL, rows).pairs
    assert deeper.before == 0.4 and math.isnan(deeper.past)
    assert "2->3: +0.40% before, no point past" in text(LITERAL, rows).value


# ---------------------------------------------------------------- which crossovers the trained N bracket


@pytest.mark.parametrize(
    "trained, below, above",
    [
        ([1e3 / AT_CROSSOVER, 1e3 * AT_CROSSOVER], True, True),  # both ends count
        ([1e3 / AT_CROSSOVER * 1.001, 1e4], False, True),
        ([1e2, 1e3 * AT_CROSSOVER * 0.999], True, False),
        ([9e2, 1.1e3], False, False),  # near it on both sides
    ],
)
def test_a_crossover_is_bracketed_only_by_a_trained_n_a_factor_1_5_away_on_each_side(trained, below, above):
    """A trained N exactly a factor AT_CROSSOVER below and another exactly that factor above bracket a crossover;
    just inside that factor on either side they do not, and the bracket says which side has none."""
    (found,) = levine.brackets("literal", [(1, 2, 1e3, np.array(trained))])
    assert (found.n, found.below, found.above, found.bracketed) == (1e3, below, above, below and above)


def test_bracketing_groups_each_reading_and_names_a_crossover_at_no_finite_n():
    """Golden: each reading's crossovers are listed after its name, bracketed ones apart from the others, a missing
    side named (both where neither has one); a crossover that no finite N reaches (a width beyond any count) is
    bracketed on neither side and named as such, and the crossovers after it are still read."""
    trained = np.array([1e3, 1e6])
    found = (
        *levine.brackets("threshold", [(2, 3, math.inf, trained), (1, 2, 2e4, trained)]),
        *levine.brackets("fitted", [(1, 2, 3e4, trained), (2, 3, 2e6, trained), (3, 4, 1.1e6, np.array([1e6]))]),
    )
    assert bracketed(found) == [
        ("threshold", 2, 3, False, False),
        ("threshold", 1, 2, True, True),
        ("fitted", 1, 2, True, True),
        ("fitted", 2, 3, True, False),
        ("fitted", 3, 4, False, False),
    ]
    assert wording.bracketing_text(found) == (
        f"{BRACKETED}the threshold's 1->2 (N ~2e+04), the fitted optimum's 1->2 (N ~3e+04); not: the threshold's "
        "2->3 (at no finite N), the fitted optimum's 2->3 (N ~2e+06: none 1.5x above), 3->4 (N ~1.1e+06: none 1.5x "
        "below or above)"
    )


def test_the_crossover_slope_brackets_only_consecutive_pairs():
    """A pair of depths that are not neighbours (1 -> 3) is compared in the figure but is no crossover of the
    threshold: the row's brackets are only 1 -> 2 and 2 -> 3."""
    frame = crossover_frame((1.1, 0.9, 1.3))
    skip = frame.iloc[[0]].assign(deep=3, consecutive=False, threshold_n=5e5, fitted_n=5e4)
    found = evidence(CROSSOVER, pd.concat([frame, skip]))
    assert bracketed(found.brackets) == CROSSOVER_BRACKETS and found.verdict == HOLDS


def test_the_literal_row_brackets_each_pair_by_its_own_trained_n():
    """Each pair is bracketed by the N it was trained at, not by another pair's: 1 -> 2 at N = 1e3 alone is not
    bracketed, although 2 -> 3 was trained at 5e4, past 1 -> 2's crossover; 2 -> 3 at 1e4 and 5e4 is."""
    rows = literal_rows()
    rows = pd.concat([rows[rows["n"] != 5e3], rows[rows["deep"] == 3].assign(n=5e4)])
    assert bracketed(evidence(LITERAL, rows).brackets) == [
        ("literal", 1, 2, True, False),
        ("literal", 2, 3, True, True),
    ]
