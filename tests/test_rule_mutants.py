"""The rules' edges that mutation testing (scripts/mutation) found no test for: intervals touching a limit, half an
interval, the learning-rate systematic, failed runs, the seeds an inconclusive verdict asks for.

Each table is small and built so that one reading of the rule and a slightly different one disagree on it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from claim_rules import evidence, needs, parts, text
from depthwidth import fits
from depthwidth.claims import verdicts, wording
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, Noise
from depthwidth.plots.sweep_common import ok
from scipy import stats

NAN = math.nan


# ---------------------------------------------------------------- the interval gates


def test_an_interval_touching_the_limit_is_on_the_side_the_statement_includes():
    """'At most limit' includes the limit, 'exceeds limit' does not, 'within +-margin' includes both ends: an
    interval with an end exactly on the limit decides the including side and leaves the other undecided."""
    assert verdicts.below(4.0, 5.0, 5.0) == HOLDS  # at most 5: a top of exactly 5 is at most 5
    assert verdicts.below(5.0, 6.0, 5.0) == INCONCLUSIVE  # the quantity may be exactly 5: not shown above it
    assert verdicts.above(0.0, 1.0, 0.0) == INCONCLUSIVE  # may be exactly 0: not shown to exceed it
    assert verdicts.above(-1.0, 0.0, 0.0) == FAILS  # at most 0 throughout: does not exceed it
    assert verdicts.within(-1.0, 1.0, 1.0) == HOLDS  # both ends on the margin: inside it
    assert verdicts.within(1.0, 2.0, 1.0) == INCONCLUSIVE  # may be exactly +1: not wholly outside
    assert verdicts.within(-2.0, -1.0, 1.0) == INCONCLUSIVE  # may be exactly -1: not wholly outside


def test_an_effect_at_most_the_negligible_size_is_none_on_both_sides_of_zero():
    """`above` a negligible size: only an interval above it holds; one above 0 that reaches into it does not
    (it may be a bias of that size), and one at or below it throughout fails (at most negligible is none).
    Found by the planted truths: under depth_never_pays the ff ratio's (b) measured +0.59% [0.18, 1.06] from
    the N-correction alone, which held against 0 though the law has no ff cost."""
    assert verdicts.above(0.6, 0.8, 0.5) == HOLDS
    assert verdicts.above(0.5, 0.8, 0.5) == INCONCLUSIVE  # may be exactly the negligible size
    assert verdicts.above(0.3, 0.8, 0.5) == INCONCLUSIVE  # above 0, but it may be a negligible one
    assert verdicts.above(0.3, 0.5, 0.5) == FAILS  # above 0 but at most negligible throughout: none
    assert verdicts.above(-0.2, 0.5, 0.5) == FAILS  # at most 0.5 throughout
    assert verdicts.above(-0.2, 0.6, 0.5) == INCONCLUSIVE


@pytest.mark.parametrize("gate", [verdicts.below, verdicts.above, verdicts.within])
@pytest.mark.parametrize("low, high", [(NAN, 1.0), (1.0, NAN)])
def test_half_an_interval_decides_nothing(gate, low, high):
    """An interval with one end undefined (a bootstrap that did not run, a t-interval without dof) is no interval:
    every gate is inconclusive on it, whatever the defined end says."""
    assert gate(low, high, 5.0) == INCONCLUSIVE


@pytest.mark.parametrize("low, high", [(NAN, -10.0), (10.0, NAN), (NAN, 0.0)])
def test_half_an_interval_is_no_equivalence_and_no_interval_even_where_its_defined_end_would_decide(low, high):
    """The defined end alone lies outside (or inside) the margin: still inconclusive, and shown as no interval."""
    assert verdicts.within(low, high, 5.0) == INCONCLUSIVE
    assert wording.interval_text(low, high) == "no interval"


# ---------------------------------------------------------------- the learning-rate systematic


# each depth's step crossovers in the levine_optimal_depth figure: where it starts to win over the next shallower
# trained depth, by the threshold and by Levine's fit (`threshold_n`, `fitted_n`; none for the shallowest)
STEP_CROSSOVERS = {1: (NAN, NAN), 2: (3e5, 2e6), 4: (5e6, 2e4)}


def steps_frame(row: dict, ns=(1e5, 9e5), depths=(1, 2)) -> pd.DataFrame:
    """`row`, a levine_optimal_depth figure's columns shared by its rows, on its two kinds of row at each compared N:
    the optimum's, one per depth, and the steps', one per pair of neighbouring depths (the deeper its `depth`), each
    with the deeper depth's step crossovers (STEP_CROSSOVERS)."""
    optimum = [
        row
        | {"row": "optimum", "n": n, "depth": d, "shallow": NAN}
        | dict(zip(("threshold_n", "fitted_n"), STEP_CROSSOVERS[d]))
        for n in ns
        for d in depths
    ]
    steps = [
        row
        | {"row": "step", "n": n, "depth": d, "shallow": s}
        | dict(zip(("threshold_n", "fitted_n"), STEP_CROSSOVERS[d]))
        for n in ns
        for s, d in zip(depths, depths[1:])
    ]
    return pd.DataFrame(optimum + steps)


def contrast_frame(gain_below: tuple[float, float, float], gain_above: tuple[float, float, float]) -> pd.DataFrame:
    """The levine_optimal_depth figure's columns that `depth_contrast` reads: one N, two pairs on each side."""
    contrast = (gain_below[0] - gain_above[0], gain_below[1] - gain_above[2], gain_below[2] - gain_above[1])
    row = {"noise_sd_pct": 0.3, "noise_dof": 12, "seeds": 3, "below_pairs": 2, "above_pairs": 2, "across_pairs": 0}
    row |= {"noise_prior_sd_pct": NAN, "noise_prior_dof": NAN}
    for name, (mean, low, high) in {"gain_below": gain_below, "gain_above": gain_above, "contrast": contrast}.items():
        row |= {f"{name}_pct": mean, f"{name}_ci_low": low, f"{name}_ci_high": high}
        row |= {f"{name}_sys_down": NAN, f"{name}_sys_up": NAN}  # no shift of its own: the fallback
    return steps_frame(row)


def test_the_learning_rate_systematic_widens_both_ends_of_a_loss_interval():
    """A gain below the threshold of [0.8, 1.8]% holds without the systematic (above the 0.5% a gain must pass);
    +-0.5% puts its lower end at 0.3% (undecided); a gain above of [0.0, 0.2]% 'stops paying' without it and
    reaches 0.7% > 0.5% with it (undecided). Each end moves outward: the verdict turns inconclusive, and neither
    side may stay decided."""
    frame = contrast_frame((1.3, 0.8, 1.8), (0.1, 0.0, 0.2))
    assert evidence("levine_depth_inefficiency", frame).verdict == HOLDS
    within = evidence("levine_depth_inefficiency", frame, fallback=0.5)
    assert within.verdict == INCONCLUSIVE
    sides = parts(within)
    assert sides["gain_below"].wide == pytest.approx((0.3, 2.3)) and sides["gain_below"].verdict == INCONCLUSIVE
    assert sides["gain_above"].wide == pytest.approx((-0.5, 0.7)) and sides["gain_above"].verdict == INCONCLUSIVE


# ---------------------------------------------------------------- failed runs, seeds asked for


def test_a_failed_run_never_enters_a_rule():
    """Runs whose status is not ok (diverged, out of memory) or whose loss is not finite are dropped."""
    frame = pd.DataFrame({"status": ["ok", "failed", "ok", "ok"], "final_val_loss": [3.0, 9.0, 3.1, NAN]})
    assert ok(frame)["final_val_loss"].tolist() == [3.0, 3.1]


def test_the_noise_column_says_one_seed_only_without_degrees_of_freedom():
    """With replicated shapes the noise column gives the pooled sd and its dof; only without any it says one seed."""
    assert wording.noise_text(Noise(0.3, 12, 3)) == "seed sd 0.30% of the loss (pooled, 12 dof; 3 seeds per shape)"
    assert wording.noise_text(Noise(NAN, 0, 1)) == wording.ONE_SEED


# ---------------------------------------------------------------- Levine read literally (no other fast test runs it)

LITERAL = "levine_literal_threshold"


def literal_frame(before: tuple[float, float, float], past: tuple[float, float, float], dof: int = 12, points=(4, 4)):
    """The levine_literal figure's columns that `literal_threshold` reads: the pair 1 -> 2, gains (mean, low, high)
    in % of the deeper model over the shallower before and past the literal crossover, `points` on each side."""
    row = {
        "shallow": 1,
        "deep": 2,
        "n": 1e3,
        "literal_n": 2.0e3,
        "noise_sd_pct": 0.3,
        "noise_dof": dof,
        "seeds": 3 if dof else 1,
        "noise_prior_sd_pct": NAN,
        "noise_prior_dof": NAN,
    }
    row |= {"pair_gain_before_pct": before[0], "pair_gain_past_pct": past[0]}
    for side, (mean, low, high), count in zip(("before", "past"), (before, past), points):
        row |= {f"{side}_points": count, f"gain_{side}_pct": mean}
        row |= {f"gain_{side}_ci_low": low, f"gain_{side}_ci_high": high}
        row |= {f"gain_{side}_sys_down": NAN, f"gain_{side}_sys_up": NAN}
    return pd.DataFrame([row])


def sides(e) -> dict[str, str]:
    return {p.name: p.verdict for p in e.parts}


def test_literal_threshold_without_pairs_is_inconclusive_and_asks_for_the_literal_block():
    """No pair of consecutive depths over a shared N (a figure without the literal block): inconclusive, and it
    names the block that would decide it."""
    frame = literal_frame((-1.5, -2.0, -1.0), (1.5, 1.0, 2.0)).iloc[:0]
    found = evidence(LITERAL, frame)
    assert (
        found.verdict == INCONCLUSIVE and found.reason == "no_literal_pairs" and list(needs(found)) == ["literal_block"]
    )
    said = text(LITERAL, frame)
    assert said.at_our_scale == "" and said.needs == [
        "the literal block: the shallowest depths at N on both sides of N ~ 2e3"
    ]


def test_literal_threshold_holds_when_the_shallower_wins_before_and_the_deeper_past():
    """The deeper model 1-2% worse before its crossover and 1-2% better past it: both sides hold."""
    found = evidence(LITERAL, literal_frame((-1.5, -2.0, -1.0), (1.5, 1.0, 2.0)))
    assert found.verdict == HOLDS and sides(found) == {"gain_before": HOLDS, "gain_past": HOLDS}


def test_literal_threshold_fails_when_the_deeper_wins_before_its_crossover():
    """A deeper model already better before its crossover (gain [0.2, 1.0]%) refutes 'the shallower wins before',
    however clearly it wins past."""
    found = evidence(LITERAL, literal_frame((0.6, 0.2, 1.0), (1.5, 1.0, 2.0)))
    assert found.verdict == FAILS and sides(found) == {"gain_before": FAILS, "gain_past": HOLDS}


def test_literal_threshold_fails_when_the_deeper_gains_at_most_the_margin_past_it():
    """Past the crossover a gain of [-0.1, 0.4]% is at most the 0.5% that counts as no win: the deeper does not win."""
    found = evidence(LITERAL, literal_frame((-1.5, -2.0, -1.0), (0.15, -0.1, 0.4)))
    assert found.verdict == FAILS and sides(found)["gain_past"] == FAILS


def test_literal_threshold_is_inconclusive_on_an_undecided_side_and_asks_for_seeds():
    """A gain past the crossover of [-0.2, 1.0]% neither clears 0 nor stays within 0.5%: inconclusive, and the
    row names that side and more seeds for the smaller gain (0.4%; how many is decide's)."""
    found = evidence(LITERAL, literal_frame((-1.5, -2.0, -1.0), (0.4, -0.2, 1.0)))
    assert found.verdict == INCONCLUSIVE and [n.kind for n in found.needs] == ["undecided", "seeds"]
    assert needs(found)["undecided"]["parts"] == ("gain_past",)
    seeds = needs(found)["seeds"]
    assert seeds == {"effect": 0.4, "what": "smaller_side_gain", "one_seed": False}
    assert text(LITERAL, literal_frame((-1.5, -2.0, -1.0), (0.4, -0.2, 1.0))).needs[0] == (
        "undecided: the deeper wins past"
    )


def test_literal_threshold_with_one_seed_asks_for_a_second():
    """Without seed noise (one seed) the gains have no interval: inconclusive, needs 2 seeds per shape."""
    frame = literal_frame((-1.5, NAN, NAN), (1.5, NAN, NAN), dof=0)
    found = evidence(LITERAL, frame)
    assert found.verdict == INCONCLUSIVE and "bootstrap_seeds" in needs(found) and found.noise.dof == 0
    assert text(LITERAL, frame).noise == wording.ONE_SEED


@pytest.mark.parametrize("points, smaller_or_larger", [((0, 4), "smaller N"), ((4, 0), "larger")])
def test_literal_threshold_without_points_on_one_side_is_inconclusive(points, smaller_or_larger):
    """Gains measured on one side only cannot show a crossover: inconclusive, naming the side with no point,
    however decided the other side is."""
    frame = literal_frame((-1.5, -2.0, -1.0), (1.5, 1.0, 2.0), points=points)
    found = evidence(LITERAL, frame)
    missing = "before" if points[0] == 0 else "past"
    assert found.verdict == INCONCLUSIVE and found.missing == (missing,) and list(needs(found)) == ["literal_sides"]
    assert all(p.verdict == INCONCLUSIVE and not p.carried for p in evidence(LITERAL, frame, fallback=0.5).parts)
    said = text(LITERAL, frame)
    assert said.headline == f"no point {missing} a literal crossover" and smaller_or_larger in said.needs[0]


def test_literal_threshold_under_the_learning_rate_systematic():
    """A shallower win before of [1.0, 2.0]% (gain [-2.0, -1.0]%) and a deeper win past of [1.0, 2.0]% hold without
    the systematic (both past the 0.5% a win must pass); at +-0.5% both intervals reach down to 0.5%: both
    undecided."""
    frame = literal_frame((-1.5, -2.0, -1.0), (1.5, 1.0, 2.0))
    assert evidence(LITERAL, frame).verdict == HOLDS
    within = evidence(LITERAL, frame, fallback=0.5)
    assert within.verdict == INCONCLUSIVE and sides(within) == {"gain_before": INCONCLUSIVE, "gain_past": INCONCLUSIVE}
    assert [(p.down, p.up, p.own) for p in within.carried] == [(0.5, 0.5, False)] * 2


# ---------------------------------------------------------------- the fits behind the intervals and the needs-texts


def test_curvature_interval_is_the_least_squares_t_interval_with_n_minus_3_dof():
    """The power law's lack-of-fit test: the quadratic coefficient's interval is c -+ t(n - 3) se(c) of the
    ordinary least-squares fit (numpy's own covariance as the reference), also with 3 distinct x in 4 points."""
    rng = np.random.default_rng(7)
    for x in (np.linspace(10.0, 14.0, 7), np.array([1.0, 2.0, 3.0, 3.0])):
        y = 0.3 - 0.1 * x + 0.02 * x**2 + rng.normal(0, 0.01, x.size)
        coef, cov = np.polyfit(x, y, 2, cov="unscaled")
        residual = y - np.polyval(coef, x)
        se = math.sqrt(cov[0, 0] * (residual @ residual) / (x.size - 3))
        half = fits.t_quantile(x.size - 3) * se
        c, low, high = fits.curvature(x, y)
        assert c == pytest.approx(coef[0], rel=1e-6)
        assert (low, high) == pytest.approx((coef[0] - half, coef[0] + half), rel=1e-6)


def test_curvature_through_three_points_is_exact_and_has_no_interval():
    """Three points fix a parabola: its coefficient is exact, with no degrees of freedom left for an interval;
    fewer than three distinct x fix none."""
    x = np.array([1.0, 2.0, 4.0])
    c, low, high = fits.curvature(x, 1.0 + 0.5 * x + 0.25 * x**2)
    assert c == pytest.approx(0.25) and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(v) for v in fits.curvature([1.0, 1.0, 2.0, 2.0], [1.0, 1.1, 2.0, 2.1]))


def test_f_quantile_is_defined_from_one_degree_of_freedom_each():
    """F(1, 1) has quantiles (the depth collapse's lack-of-fit test with three depths and one replicate dof);
    without a degree of freedom on either side there is none."""
    assert fits.f_quantile(0.95, 1, 1) == pytest.approx(161.4476, rel=1e-5)
    assert fits.f_quantile(0.95, 1, 20) == pytest.approx(4.3512, rel=1e-4)
    assert fits.f_quantile(0.95, 20, 1) == pytest.approx(248.0131, rel=1e-5)
    assert math.isnan(fits.f_quantile(0.95, 0, 20)) and math.isnan(fits.f_quantile(0.95, 20, 0))


def test_percentile_interval_cuts_half_the_missing_level_from_each_end():
    """The 95% interval of 0..1000 is [25, 975]; the 90% one [50, 950]."""
    values = np.arange(1001.0)
    assert fits.percentile_interval(values) == pytest.approx((25.0, 975.0))
    assert fits.percentile_interval(values, 0.9) == pytest.approx((50.0, 950.0))


def test_t_interval_needs_a_degree_of_freedom():
    """Without a noise estimate (dof 0) there is no interval, not an infinite one; one dof (two seeds of one shape)
    gives one."""
    assert all(math.isnan(v) for v in fits.t_interval(1.0, 0.5, 0))
    assert fits.t_interval(1.0, 0.5, 1) == pytest.approx((1.0 - 12.7062 * 0.5, 1.0 + 12.7062 * 0.5), rel=1e-5)
    assert fits.t_interval(1.0, 0.5, 4) == pytest.approx((1.0 - 2.776445 * 0.5, 1.0 + 2.776445 * 0.5), rel=1e-6)


@pytest.mark.parametrize("target", [0.02, 0.05, 0.07])
def test_tokens_for_local_exponent_gives_that_exponent(target):
    """The tokens the power law's needs-text names: at them Kaplan's L(N, D) has the target local exponent."""
    tokens = fits.tokens_for_local_exponent(target, 1e5, 1e7)
    assert fits.kaplan_local_exponent(1e5, 1e7, tokens) == pytest.approx(target, rel=1e-6)


def test_tokens_for_local_exponent_at_its_ends():
    """alpha_N itself needs unlimited data; an exponent already reached with one token needs one token."""
    assert fits.tokens_for_local_exponent(fits.KAPLAN_ALPHA_N, 1e5, 1e7) == math.inf
    assert fits.tokens_for_local_exponent(0.0, 1e5, 1e7) == 1.0


# ---------------------------------------------------------------- Levine's crossover slope

CROSSOVER, OPTIMAL, CONTRAST = "levine_crossover_slope", "levine_optimal_depth", "levine_depth_inefficiency"


def crossover_frame(slope: tuple[float, float, float], fitted: float = 0.07, defined: float = 1.0, **pair):
    """The levine_crossover figure's columns that `crossover_slope` reads: pairs 1->2 and 2->3, both crossing in
    range, the slope (value, low, high) of ln(crossover width) vs depth and the fitted optimum's slope."""
    rows = []
    for shallow in (1, 2):
        row = {"shallow": shallow, "deep": shallow + 1, "crosses": True, "in_range": True, "consecutive": True}
        row |= {"width_cross": 3.0 ** (shallow + 1), "width_ci_low": 2.0, "width_ci_high": 40.0, "ci_holds_cross": True}
        row |= {"threshold_n": 2e3 * 13**shallow, "fitted_n": 3e5 * 2**shallow}
        row |= {"n_trained_min": 1e4, "n_trained_max": 1e6, "fitted_slope": fitted}
        row |= {"noise_sd_pct": 0.3, "noise_dof": 12, "seeds": 3, "slope_defined_fraction": defined}
        row |= {"noise_prior_sd_pct": NAN, "noise_prior_dof": NAN, "slope_sys_down": NAN, "slope_sys_up": NAN}
        row |= dict(zip(("slope", "slope_ci_low", "slope_ci_high"), slope))
        rows.append(row | pair)
    return pd.DataFrame(rows)


def test_crossover_slope_holds_only_when_its_interval_tells_ln3_from_the_fitted_optimum():
    """An interval [0.9, 1.3] includes ln 3 and excludes the fitted optimum's 0.07: holds. One of [0.0, 1.3] includes
    both: inconclusive, and it leaves to `decide` how many seeds would separate them. One of [0.0, 0.5]: fails."""
    held = evidence(CROSSOVER, crossover_frame((1.1, 0.9, 1.3)))
    assert held.verdict == HOLDS and (held.includes_threshold, held.includes_fitted) == (True, False)
    both = evidence(CROSSOVER, crossover_frame((0.6, 0.0, 1.3)))
    assert both.verdict == INCONCLUSIVE and (both.includes_threshold, both.includes_fitted) == (True, True)
    assert needs(both)["seeds"] == {"effect": 0.6, "what": "slope_between", "one_seed": False, "fitted": 0.07}
    assert text(CROSSOVER, crossover_frame((0.6, 0.0, 1.3))).value[-1] == (
        "the interval includes ln 3 and includes the fitted optimum's 0.070"
    )
    failed = evidence(CROSSOVER, crossover_frame((0.25, 0.0, 0.5)))
    assert failed.verdict == FAILS and not failed.includes_threshold


def test_crossover_slope_with_pairs_that_cross_in_few_redraws_is_inconclusive():
    """A slope interval that would hold, from redraws of which 10% have a pair that does not cross, is not one."""
    found = evidence(CROSSOVER, crossover_frame((1.1, 0.9, 1.3), defined=0.9))
    assert found.verdict == INCONCLUSIVE and found.stage == "undefined"
    assert needs(found)["undefined_slope"]["undefined"] == pytest.approx(0.1)


def test_a_pair_that_never_crosses_is_named_as_such():
    """The value names the pairs whose deeper model never overtakes, and only those."""
    frame = crossover_frame((1.1, 0.9, 1.3))
    frame.loc[1, "crosses"] = False
    found = evidence(CROSSOVER, frame)
    assert [(c.shallow, c.deep, c.crosses) for c in found.crossovers] == [(1, 2, True), (2, 3, False)]
    said = "; ".join(text(CROSSOVER, frame).value)
    assert "crossovers: 1->2: width 9 [2, 40] (in range); never overtakes: 2->3" in said


def test_missing_crossovers_say_where_the_threshold_and_the_fit_put_them_against_the_trained_n():
    """Without a slope, each consecutive pair not crossing in range says whether the threshold's and the fit's N
    lie below, inside (ends included) or beyond the trained N, 1e4 to 1e6 here."""
    frame = crossover_frame((NAN, NAN, NAN), in_range=False)
    frame["threshold_n"] = [5e3, 1e4]
    frame["fitted_n"] = [1e6, 2e6]
    found = evidence(CROSSOVER, frame)
    assert found.stage == "no_slope" and found.trained == (1e4, 1e6)
    assert [(m.shallow, m.deep, m.threshold_n, m.fitted_n) for m in found.missing] == [
        (1, 2, 5e3, 1e6),
        (2, 3, 1e4, 2e6),
    ]
    said = text(CROSSOVER, frame).needs
    assert (
        "1->2: the threshold puts it near N ~5e+03, below the trained N, the fitted optimum near N ~1e+06, inside it"
        in said
    )
    assert (
        "2->3: the threshold puts it near N ~1e+04, inside the trained N, the fitted optimum near N ~2e+06, beyond it"
        in said
    )


def test_crossover_slope_without_pairs_is_inconclusive_and_asks_for_them():
    """A figure with no pair of depths (an empty table) decides nothing and says what it takes."""
    found = evidence(CROSSOVER, pd.DataFrame(columns=crossover_frame((1.1, 0.9, 1.3)).columns))
    assert (
        found.verdict == INCONCLUSIVE and found.stage == "no_pairs" and list(needs(found)) == ["two_depths_two_widths"]
    )


def test_an_in_range_crossover_shows_its_bootstrap_range_and_an_extrapolated_one_does_not():
    """A crossover inside the trained N is given with its bootstrap range (flagged when that range misses the point);
    one outside it only as such: its range spans orders of magnitude and says nothing."""
    frame = crossover_frame((1.1, 0.9, 1.3))
    frame.loc[1, ["in_range", "ci_holds_cross"]] = [False, True]
    frame.loc[0, "ci_holds_cross"] = False
    found = evidence(CROSSOVER, frame)
    assert [(c.in_range, c.range_holds) for c in found.crossovers] == [(True, False), (False, True)]
    said = "; ".join(text(CROSSOVER, frame).value)
    assert "1->2: width 9 [2, 40] (in range; the bootstrap range misses the point)" in said
    assert "2->3: width 27 (outside the trained N)" in said


# ---------------------------------------------------------------- Levine's optimal depth


# the standard error of two depths' difference in optimal_frame: each depth one shape of 3 seeds at sd 0.3%
OPTIMAL_SE = 0.3 * math.sqrt(2 / 3)


def optimal_frame(
    trained: list[int], optimal: list[int], growth=0.99, decline=0.0, share=0.99, gap=1.0
) -> pd.DataFrame:
    """The levine_optimal_depth figure's columns that `optimal_depth_growth` reads: one row per N (1e5, 3e5, ...)
    and trained depth 1, 2, 4; per N the trained depth nearest Levine's L*(N), the argmin and how often the
    redraws chose it; growth and decline shares of the argmin from the smallest to the largest N; each depth's loss
    below L*'s depth's (100 ln ratio) with its standard error (OPTIMAL_SE, 12 dof). Every depth's loss is `gap` %
    above the argmin's, with no excess over its best rate."""
    rows = []
    for i, (p, best) in enumerate(zip(trained, optimal)):
        n = 1e5 * 3**i
        loss = {depth: 3.0 * (1.0 if depth == best else 1 + gap / 100) for depth in (1, 2, 4)}
        for depth in (1, 2, 4):
            row = {"row": "optimum", "n": n, "depth": depth, "levine_trained_depth": p, "levine_depth": p + 0.1}
            row |= {"optimal_depth": best}
            row |= {"optimal_ci_low": best, "optimal_ci_high": best, "optimal_share": share, "runner_up_gap_pct": gap}
            row |= {"growth_share": growth, "decline_share": decline, "noise_sd_pct": 0.3, "noise_dof": 12, "seeds": 3}
            row |= {"noise_prior_sd_pct": NAN, "noise_prior_dof": NAN}
            row |= {"loss": loss[depth], "excess_pct": 0.0}
            other = depth != p
            row |= {"below_levine_pct": 100 * math.log(loss[p] / loss[depth]) if other else NAN}
            row |= {"below_levine_se_pct": OPTIMAL_SE if other else NAN, "below_levine_dof": 12 if other else NAN}
            rows.append(row | dict(zip(("threshold_n", "fitted_n"), STEP_CROSSOVERS[depth])))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("trained", [[1, 2, 2], [1, 1, 2]])
def test_optimal_depth_growth_compares_the_smallest_and_the_largest_n(trained):
    """Where Levine's L* moves to a deeper trained depth between the smallest and the largest N (whichever N between
    them it moves at), growth of the argmin in 99% of the redraws holds; the record gives each N's argmin once."""
    found = evidence(OPTIMAL, optimal_frame(trained, [1, 2, 2]))
    assert found.verdict == HOLDS and found.stage == "moves"
    assert [(a.n, a.depth) for a in found.argmins] == [(1e5, 1), (3e5, 2), (9e5, 2)]  # one per N, not per depth
    assert (found.argmins[0].levine_trained, found.argmins[-1].levine_trained) == (1, 2)
    assert found.needs == ()  # a decided verdict asks for nothing


def test_optimal_depth_that_stays_put_when_levine_predicts_growth_fails():
    """L* moves from depth 1 to 2 over our N, both ends' argmins are decided (99%) and do not grow: fails."""
    assert evidence(OPTIMAL, optimal_frame([1, 2, 2], [2, 2, 2], growth=0.5)).verdict == FAILS


def test_optimal_depth_growth_cannot_be_seen_where_levine_predicts_none():
    """L* stays at trained depth 2 over our N: an argmin decided there is inconclusive (growth cannot be seen) and
    says where Levine's fit moves it to the next trained depth, 4; one decided at another depth fails."""
    found = evidence(OPTIMAL, optimal_frame([2, 2, 2], [2, 2, 2]))
    assert found.verdict == INCONCLUSIVE and found.stage == "stays"
    unseen = needs(found)["growth_unseen"]
    assert (unseen["depth"], unseen["next_depth"], unseen["edge"]) == (2, 4, False)
    assert unseen["next_n"] == pytest.approx(fits.levine_n_at_depth(math.sqrt(2 * 4)))
    assert evidence(OPTIMAL, optimal_frame([2, 2, 2], [2, 2, 4])).verdict == FAILS


def test_where_levine_predicts_no_growth_a_depth_refutes_it_only_by_beating_its_depth_at_the_split_level():
    """L* stays at trained depth 2 and depth 4 is least at the largest N. Its gain over depth 2 refutes L* only
    where its one-sided t bound, split over the 2 other depths x 2 ends (Bonferroni: 0.625% a test), lies above 0:
    0.8% at a standard error of 0.245% does (2.93 se reach), 0.6% does not, though it would at the unsplit 97.5%
    (2.18 se), and a near tie of 0.3% never does, whatever share of the redraws picks depth 4."""
    split = stats.t.ppf(1 - 0.025 / 4, 12) * OPTIMAL_SE
    for gap, verdict in ((0.8, FAILS), (0.6, INCONCLUSIVE), (0.3, INCONCLUSIVE)):
        found = evidence(OPTIMAL, optimal_frame([2, 2, 2], [2, 2, 4], share=1.0, gap=gap))
        assert found.verdict == verdict, gap
        beaten = [p for p in found.parts if p.name == "levine_beaten"]
        assert [(p.at["n"], p.at["levine"]) for p in beaten] == [(1e5, 2), (9e5, 2)]
        last = beaten[-1]
        value = 100 * math.log(1 + gap / 100)
        assert (last.at["depth"], last.value) == (4, pytest.approx(value))
        assert (last.low, last.high) == (pytest.approx(value - split), pytest.approx(value + split))
        assert last.verdict == verdict
    assert 0.6 - stats.t.ppf(0.975, 12) * OPTIMAL_SE > 0  # the split, not the gap, keeps 0.6% undecided


def test_a_depth_beats_levines_only_where_its_bound_lies_above_zero():
    """A lead whose split lower bound is exactly 0 does not refute L*'s depth; one a hair above it does."""
    with fits.at_level(1 - (1 - fits.level()) / 4):  # the other 2 depths x 2 ends
        reach = fits.t_quantile(12) * OPTIMAL_SE
    frame = optimal_frame([2, 2, 2], [2, 2, 4])
    last = (frame["n"] == frame["n"].max()) & (frame["depth"] == 4)
    assert evidence(OPTIMAL, frame.assign(below_levine_pct=np.where(last, reach, -1.0))).verdict == INCONCLUSIVE
    assert evidence(OPTIMAL, frame.assign(below_levine_pct=np.where(last, reach + 1e-9, -1.0))).verdict == FAILS


def test_the_depth_nearest_to_beating_levines_is_the_one_of_the_greatest_lower_bound():
    """Depth 1 leads L*'s depth 2 by more (1.0%) but at five times the standard error of depth 4's 0.9% lead: depth
    4's bound lies above 0, depth 1's below, so depth 4 refutes L*'s depth, and its part is the one read."""
    frame = optimal_frame([2, 2, 2], [2, 2, 4])
    last = frame["n"] == frame["n"].max()
    frame.loc[last & (frame["depth"] == 1), ["below_levine_pct", "below_levine_se_pct"]] = 1.0, 0.5
    frame.loc[last & (frame["depth"] == 4), ["below_levine_pct", "below_levine_se_pct"]] = 0.9, 0.1
    found = evidence(OPTIMAL, frame)
    assert found.verdict == FAILS
    beaten = [p for p in found.parts if p.name == "levine_beaten"][-1]
    assert (beaten.at["depth"], beaten.value, beaten.verdict) == (4, 0.9, FAILS)


def test_a_depth_beats_levines_only_beyond_levines_own_excess():
    """Within the systematic L*'s depth may lie up to its own excess above its loss at its best rate, which can
    close depth 4's 1% lead (lower bound 0.28%): an excess of 0.5% at depth 2 leaves it undecided; the same excess at
    the depth that beats it only widens the lead."""
    frame = optimal_frame([2, 2, 2], [2, 2, 4])
    assert evidence(OPTIMAL, frame, fallback=NAN).verdict == FAILS
    own = frame.assign(excess_pct=np.where(frame["depth"] == 2, 0.5, 0.0))
    found = evidence(OPTIMAL, own, fallback=NAN)
    assert found.verdict == INCONCLUSIVE
    last = [p for p in found.parts if p.name == "levine_beaten"][-1]
    assert (last.at["depth"], last.down, last.up, last.verdict) == (4, 0.5, 0.0, INCONCLUSIVE)
    other = frame.assign(excess_pct=np.where(frame["depth"] == 4, 0.5, 0.0))
    assert evidence(OPTIMAL, other, fallback=NAN).verdict == FAILS


def test_a_power_law_takes_any_positive_n_and_loss_and_refuses_zero():
    """Losses below 1 nat and counts below 1 (N in millions) are fitted; a zero N or loss has no logarithm."""
    law = fits.fit_power_law([0.5, 1.0, 2.0, 4.0], [0.8, 0.7, 0.6, 0.5])
    assert 0 < law.alpha < 1
    with pytest.raises(ValueError, match="positive N and loss"):
        fits.fit_power_law([0.0, 1.0, 2.0], [3.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="positive N and loss"):
        fits.fit_power_law([1.0, 2.0, 4.0], [3.0, 2.0, 0.0])


def test_optimal_depth_with_one_seed_asks_for_a_second_and_says_where_levine_moves_the_optimum():
    """Without seed noise the argmin has no bootstrap: inconclusive, naming the closest runner-up gap; where L* stays
    at one trained depth it also says where Levine's fit moves it on, and only there."""
    frame = optimal_frame([2, 2, 2], [2, 2, 2]).assign(noise_dof=0, seeds=1, runner_up_gap_pct=[1.5] * 6 + [0.7] * 3)
    found = evidence(OPTIMAL, frame)
    assert found.verdict == INCONCLUSIVE and found.stage == "no_seeds"
    assert [n.kind for n in found.needs] == ["bootstrap_seeds", "levine_next"]
    assert needs(found)["bootstrap_seeds"]["gap"] == 0.7 and needs(found)["levine_next"]["n_now"] == 9e5
    n_next = fits.levine_n_at_depth(math.sqrt(2 * 4))
    assert text(OPTIMAL, frame).needs == [
        "at least 2 seeds per shape for the bootstrap (the closest runner-up is 0.70% behind)",
        f"Levine's fit moves the optimum to depth 4 only near N = {n_next:.2g} (trained up to 9e+05)",
    ]
    moving = evidence(OPTIMAL, optimal_frame([1, 2, 2], [1, 2, 2]).assign(noise_dof=0, seeds=1))
    assert moving.verdict == INCONCLUSIVE and [n.kind for n in moving.needs] == ["bootstrap_seeds"]


def test_optimal_depth_shares_of_exactly_97_5_percent_decide():
    """The rule's '>= 97.5% of redraws' includes 97.5% (3900 of 4000 redraws): growth that often holds, decline
    that often fails, and ends chosen that often are decided (flat ends then fail; an end away from a fixed L* too)."""
    assert evidence(OPTIMAL, optimal_frame([1, 2, 2], [1, 2, 2], growth=0.975)).verdict == HOLDS
    declining = optimal_frame([1, 2, 2], [2, 1, 1], growth=0.0, decline=0.975, share=0.6)  # ends undecided
    assert evidence(OPTIMAL, declining).verdict == FAILS
    flat = optimal_frame([1, 2, 2], [2, 2, 2], growth=0.5, share=0.975)
    assert evidence(OPTIMAL, flat).verdict == FAILS


def test_flat_argmins_refute_growth_only_when_both_ends_are_decided():
    """Flat argmins with growth and decline both rare are a refutation only if both ends' argmins are decided; with
    the largest N's argmin chosen in 60% of the redraws it is undecided, and the row asks for seeds."""
    frame = optimal_frame([1, 2, 2], [2, 2, 2], growth=0.5)
    frame.loc[frame["n"] == frame["n"].max(), "optimal_share"] = 0.6
    found = evidence(OPTIMAL, frame)
    assert found.verdict == INCONCLUSIVE and needs(found)["seeds"]["what"] == "runner_up_gap"


def test_an_argmin_whose_runner_up_an_excess_could_overtake_is_not_decided_within_the_systematic():
    """Flat ends decided in 99% of the redraws refute growth; a runner-up 1% behind whose own excess is 1.5% could
    be the true argmin, so within the systematic neither end stands and the refutation is undecided."""
    frame = optimal_frame([1, 2, 2], [2, 2, 2], growth=0.5)
    assert evidence(OPTIMAL, frame, fallback=NAN).verdict == FAILS
    found = evidence(OPTIMAL, frame.assign(excess_pct=1.5), fallback=NAN)
    ends = [p for p in found.parts if p.name == "argmin"]
    assert [(p.at["n"], p.down, p.margin, p.verdict) for p in ends] == [
        (1e5, 1.5, pytest.approx(1.0), INCONCLUSIVE),
        (9e5, 1.5, pytest.approx(1.0), INCONCLUSIVE),
    ]
    assert found.verdict == INCONCLUSIVE


# ---------------------------------------------------------------- Levine's depth inefficiency (the contrast)


def test_depth_contrast_fails_on_any_refuted_part():
    """Deepening that gains [0.6, 1.0]% above the threshold (more than 0.5%: it still pays), a gain below of
    [-0.2, 0.4]% (at most 0.5%: no efficiency), or a contrast at or below 0 each refute the statement."""
    still_pays = evidence(CONTRAST, contrast_frame((1.5, 1.2, 1.8), (0.8, 0.6, 1.0)))
    assert still_pays.verdict == FAILS and sides(still_pays)["gain_above"] == FAILS
    no_gain = evidence(CONTRAST, contrast_frame((0.1, -0.2, 0.4), (0.0, -0.1, 0.1)))
    assert no_gain.verdict == FAILS and sides(no_gain)["gain_below"] == FAILS
    frame = contrast_frame((1.5, 1.2, 1.8), (0.2, 0.0, 0.4))
    frame[["contrast_pct", "contrast_ci_low", "contrast_ci_high"]] = [-0.2, -0.5, 0.0]
    no_contrast = evidence(CONTRAST, frame)
    assert no_contrast.verdict == FAILS and sides(no_contrast) == {
        "gain_below": HOLDS,
        "gain_above": HOLDS,
        "contrast": FAILS,
    }
    assert text(CONTRAST, frame).value[-1] == (
        "deepening pays below: holds, stops paying above (gain <= 0.5%): holds, the contrast is positive: does not hold"
    )


def test_depth_contrast_undecided_names_the_part_and_the_seeds():
    """A gain above the threshold of [0.2, 0.9]% is undecided against 0.5%: inconclusive, naming that part and the
    seeds that would resolve the contrast; with one seed, a second seed."""
    frame = contrast_frame((1.5, 1.2, 1.8), (0.5, 0.2, 0.9))
    found = evidence(CONTRAST, frame)
    assert found.verdict == INCONCLUSIVE and needs(found)["undecided"]["parts"] == ("gain_above",)
    assert needs(found)["seeds"]["what"] == "contrast" and needs(found)["seeds"]["effect"] == pytest.approx(1.0)
    assert text(CONTRAST, frame).needs[0] == "undecided: stops paying above (gain <= 0.5%)"
    one_seed = evidence(CONTRAST, frame.assign(noise_dof=0))
    assert [n.kind for n in one_seed.needs] == ["undecided", "bootstrap_seeds"]


@pytest.mark.parametrize("side, more", [("below", "larger"), ("above", "smaller")])
def test_depth_contrast_without_pairs_on_one_side_is_inconclusive(side, more):
    """No pair on one side of the threshold: inconclusive however clear the other side, and it says which N would
    give pairs there."""
    frame = contrast_frame((1.5, 1.2, 1.8), (0.1, 0.0, 0.2))
    frame[f"{side}_pairs"] = 0
    found = evidence(CONTRAST, frame)
    assert found.verdict == INCONCLUSIVE and found.missing == (side,)
    assert needs(found) == {"contrast_sides": {"more": more}}
    assert text(CONTRAST, frame).headline == f"one side of the contrast is missing (no pair {side} the threshold)"


def test_crossover_slope_from_one_pair_is_inconclusive():
    """Two trained depths give one crossover: no slope, inconclusive (the fitted optimum's slope is still stated)."""
    frame = crossover_frame((NAN, NAN, NAN), fitted=0.06).iloc[:1]
    found = evidence(CROSSOVER, frame)
    assert found.verdict == INCONCLUSIVE and found.stage == "no_slope" and found.fitted == 0.06
    assert "fitted optimum d*(L): 0.060 per layer" in text(CROSSOVER, frame).at_our_scale


def test_literal_threshold_reads_each_sides_own_systematic():
    """Each side is widened by its own shift from the figure (`gain_before_sys_*`, `gain_past_sys_*`), not the
    fallback: own shifts of zero leave both wins decided under a 0.5% fallback; a shift of 0.6% down on the side
    past the crossovers alone leaves that side undecided."""
    zero = {f"gain_{side}_sys_{end}": 0.0 for side in ("before", "past") for end in ("down", "up")}
    frame = literal_frame((-1.5, -2.0, -1.0), (1.5, 1.0, 2.0)).assign(**zero)
    held = evidence(LITERAL, frame, fallback=0.5)
    assert held.verdict == HOLDS and all(p.own and p.width == 0 for p in held.carried)
    found = evidence(LITERAL, frame.assign(gain_past_sys_down=0.6), fallback=0.5)
    assert sides(found) == {"gain_before": HOLDS, "gain_past": INCONCLUSIVE}


def test_the_warm_up_tilt_reaches_levines_depth_and_the_argmin_by_the_ratio_of_their_depths():
    """With the rows carrying a tilt range [t_lo, t_hi] (tilt_low, tilt_high; % per e-fold of depth), a depth's lead
    over L*'s depth 2, 100 ln(L_2 / L_depth), moves by t ln(2 / depth): depth 1's part carries -t_lo ln 2 down and
    t_hi ln 2 up, exactly; an argmin's runner-up gap closes by up to max(0, -t ln(its depth / the best's)). A tilt of
    up to 2% per e-fold leaves no argmin standing (depth 1 may close 1% on depth 4 by 2 ln 4) and no depth beating
    L*'s; one of 0.1 leaves depth 4's lead over depth 2 (its lower end 0.28%) beating it, widened by 0.1 ln 2 below."""
    low, high = -0.2, 2.0
    found = evidence(OPTIMAL, optimal_frame([2, 2, 2], [2, 2, 4]).assign(tilt_low=low, tilt_high=high), fallback=NAN)
    beaten = {(p.at["n"], p.at["depth"]): p for p in found.parts if p.name == "levine_beaten"}
    one = beaten[(9e5, 1)]
    assert (one.tilt_down, one.tilt_up) == (pytest.approx(-low * math.log(2)), pytest.approx(high * math.log(2)))
    assert one.verdict == INCONCLUSIVE
    argmins = {p.at["n"]: p for p in found.parts if p.name == "argmin"}
    assert argmins[1e5].down == pytest.approx(high * math.log(2))  # best depth 2: depth 1 closes by t ln 2
    assert argmins[9e5].down == pytest.approx(high * math.log(4))  # best depth 4: depth 1 closes by t ln 4
    assert {p.verdict for p in argmins.values()} == {INCONCLUSIVE}
    small = optimal_frame([2, 2, 2], [2, 2, 4]).assign(tilt_low=0.0, tilt_high=0.1)
    kept = [p for p in evidence(OPTIMAL, small, fallback=NAN).parts if p.name == "levine_beaten"][-1]
    assert (kept.at["depth"], kept.verdict) == (4, FAILS)
    assert (kept.tilt_down, kept.tilt_up) == (pytest.approx(0.1 * math.log(2)), 0.0)
