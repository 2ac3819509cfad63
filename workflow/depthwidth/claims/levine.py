"""Levine et al. 2020: the depth threshold L_th = log3(width), read three ways (the crossover width of
consecutive depths, the optimal depth against N, the deficit of depths above the threshold), and the
claims they decide."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.claims.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    OURS,
    Claim,
    Result,
    above,
    argmin_stands,
    below,
    combine,
    exceeds,
    figure_shift,
    heterogeneity,
    interval_text,
    loss_interval,
    noise_text,
    number_text,
    seeds_text,
)
from depthwidth.plots.levine_literal import AT_CROSSOVER, SIDES


def crossover_slope(frame: pd.DataFrame) -> Result:
    """Slope of ln(crossover width) vs depth, its bootstrap interval against ln 3 (the threshold) and the slope
    the same quantity has under Levine's fitted optimum (`fitted_slope`)."""
    ln3 = fits.LEVINE_LN_BASE
    fitted = float(frame["fitted_slope"].iloc[0]) if len(frame) else math.nan
    never = frame[~frame["crosses"].astype(bool)] if len(frame) else frame
    pairs = ", ".join(
        f"{r.shallow}->{r.deep}: width {number_text(r.width_cross, '.0f')} "
        # an extrapolated crossover's bootstrap range spans orders of magnitude: it says nothing
        + (
            f"{interval_text(r.width_ci_low, r.width_ci_high, '.0f')} (in range"
            + ("" if getattr(r, "ci_holds_cross", True) else "; the bootstrap range misses the point")
            + ")"
            if r.in_range
            else "(outside the trained N)"
        )
        for r in frame.itertuples()
        if r.crosses
    )
    never_text = ", ".join(f"{r.shallow}->{r.deep}" for r in never.itertuples()) or "none"
    at_scale = (
        f"threshold: ln 3 = {ln3:.3f} per layer (crossover at width 3^L); fitted optimum d*(L): "
        f"{number_text(fitted, '.3f')} per layer for the deeper model's width at the crossover (where L* passes "
        f"the pair's midpoint; d*(L) itself rises {fits.LEVINE_WIDTH_SLOPE} per layer)"
    )
    if len(frame):
        at_scale += "; " + _pair_bracketing(frame)
    if frame.empty:
        return Result(
            "no pair of depths with two trained widths each",
            INCONCLUSIVE,
            at_our_scale=at_scale,
            needs="at least two depths with two widths each",
        )
    first = frame.iloc[0]
    dof = int(first["noise_dof"])
    value = f"crossovers: {pairs or 'none'}; never overtakes: {never_text}"
    if not np.isfinite(first["slope"]):
        needs = _where_missing_crossovers_lie(frame)
        if not dof:
            needs.append("at least 2 seeds per shape to give each crossover an interval")
        return Result(
            value=f"fewer than two in-range crossovers of consecutive depths; {value}",
            verdict=INCONCLUSIVE,
            noise=_noise(first),
            at_our_scale=at_scale,
            needs="; ".join(needs),
        )
    low, high, slope = first["slope_ci_low"], first["slope_ci_high"], first["slope"]
    shift = figure_shift(first, "slope")
    wide_low, wide_high = loss_interval(low, high, shift, what="the crossover slope", unit=" per layer")
    defined = first["slope_defined_fraction"]
    value = f"slope {slope:.3f} per layer; {value}"
    if not np.isfinite(low):
        verdict, needs = INCONCLUSIVE, "at least 2 seeds per shape for the bootstrap interval"
    elif defined < 0.95:
        verdict = INCONCLUSIVE
        needs = f"in {1 - defined:.0%} of the redraws a pair does not cross: more seeds or wider N per depth"
    else:
        includes_ln3, includes_fit = wide_low <= ln3 <= wide_high, wide_low <= fitted <= wide_high
        verdict = FAILS if not includes_ln3 else HOLDS if not includes_fit else INCONCLUSIVE
        half = (high - low) / 2
        needs = (
            f"~{fits.runs_factor_needed(half, (ln3 - fitted) / 2):.1f}x the seeds to separate ln 3 from {fitted:.3f}"
            if verdict == INCONCLUSIVE
            else ""
        )
        value += f"; the interval {'includes' if includes_ln3 else 'excludes'} ln 3 and "
        value += f"{'includes' if includes_fit else 'excludes'} the fitted optimum's {fitted:.3f}"
    return Result(
        value,
        verdict,
        f"slope {interval_text(low, high, '.3f')}",
        _noise(first),
        at_scale,
        needs,
    )


def _where(n: float, low: float, high: float) -> str:
    """Where N lies against the trained range [low, high]: below, inside or beyond it."""
    return "below" if n < low else "inside" if n <= high else "beyond"


def _where_missing_crossovers_lie(frame: pd.DataFrame) -> list[str]:
    """For each consecutive pair without an in-range crossover: where the threshold and Levine's fitted
    optimum put it, against the trained N."""
    consecutive = frame[frame["consecutive"].astype(bool)]
    missing = consecutive[~(consecutive["crosses"].astype(bool) & consecutive["in_range"].astype(bool))]
    trained = (frame["n_trained_min"].iloc[0], frame["n_trained_max"].iloc[0])
    return [
        f"{r.shallow}->{r.deep}: the threshold puts it near N ~{r.threshold_n:.2g}, "
        f"{_where(r.threshold_n, *trained)} the trained N, the fitted optimum near N ~{r.fitted_n:.2g}, "
        f"{_where(r.fitted_n, *trained)} it"
        for r in missing.itertuples()
    ]


def bracketing(readings: dict[str, list[tuple[str, float, np.ndarray]]]) -> str:
    """Which crossovers the trained N bracket, with a trained N a factor AT_CROSSOVER or more on each side, and for
    each one they do not, the side without one. `readings`: per reading (a prefix, e.g. "the threshold's", or ""),
    its crossovers as (pair, the N where the deeper starts to win, the N its pair was trained or compared at), all
    in one count."""
    bracketed, not_bracketed = [], []
    for reading, crossovers in readings.items():
        yes, no = [], []
        for pair, n, trained in crossovers:
            if not math.isfinite(n):
                no.append(f"{pair} (at no finite N)")
                continue
            sides = {"below": np.any(trained <= n / AT_CROSSOVER), "above": np.any(trained >= n * AT_CROSSOVER)}
            missing = " or ".join(side for side, has in sides.items() if not has)
            (no if missing else yes).append(
                f"{pair} (N ~{n:.2g}" + (f": none {AT_CROSSOVER:g}x {missing})" if missing else ")")
            )
        bracketed += [" ".join(filter(None, (reading, ", ".join(yes))))] if yes else []
        not_bracketed += [" ".join(filter(None, (reading, ", ".join(no))))] if no else []
    return (
        f"bracketed by the trained N (one {AT_CROSSOVER:g}x or more on each side): {', '.join(bracketed) or 'none'}; "
        f"not: {', '.join(not_bracketed) or 'none'}"
    )


# the two readings of a crossover: the columns of a Levine figure that place it
READINGS = {"the threshold's": "threshold_n", "the fitted optimum's": "fitted_n"}


def _both_readings(pairs: list[tuple[str, Mapping]], trained: np.ndarray) -> str:
    """`bracketing` of both readings (READINGS) of `pairs` (a label, and the figure row that places its crossovers)
    against the N `trained`."""
    return bracketing(
        {
            reading: [(label, float(row[column]), trained) for label, row in pairs]
            for reading, column in READINGS.items()
        }
    )


def _pair_bracketing(frame: pd.DataFrame) -> str:
    """`_both_readings` over a crossover figure's pairs of consecutive trained depths, against the trained N."""
    consecutive = frame[frame["consecutive"].astype(bool)]
    trained = frame[["n_trained_min", "n_trained_max"]].iloc[0].to_numpy(float)
    return _both_readings([(f"{r.shallow}->{r.deep}", r._asdict()) for r in consecutive.itertuples()], trained)


def _step_bracketing(frame: pd.DataFrame) -> str:
    """`_both_readings` over a per-N Levine figure's steps (each depth from the next shallower), against the N
    compared."""
    depths = sorted(frame["depth"].unique())
    steps = frame.drop_duplicates("depth").set_index("depth")
    return _both_readings([(f"{a}->{b}", steps.loc[b]) for a, b in zip(depths, depths[1:])], frame["n"].unique())


# what the two per-N Levine rows say when no N has every depth trained on both sides of it
NO_COMMON_RANGE = Result(
    "no range of N where every depth has two trained widths",
    INCONCLUSIVE,
    needs="every depth trained over a common range of N",
)


def optimal_depth_growth(frame: pd.DataFrame) -> Result:
    """The per-N argmin over trained depths (bootstrap) against the depth Levine's fitted optimum gives at our N."""
    if frame.empty:
        return NO_COMMON_RANGE
    per_n = frame.drop_duplicates("n").reset_index(drop=True)
    first, last = per_n.iloc[0], per_n.iloc[-1]
    sd, dof, seeds = first["noise_sd_pct"], int(first["noise_dof"]), int(first["seeds"])
    depths = sorted(frame["depth"].unique())
    p_first, p_last = int(first["levine_trained_depth"]), int(last["levine_trained_depth"])
    points = "; ".join(
        f"N={r.n:.2g}: {r.optimal_depth} [{number_text(r.optimal_ci_low, 'g')}, "
        f"{number_text(r.optimal_ci_high, 'g')}] vs Levine "
        f"{r.levine_depth:.2f} (nearest trained {r.levine_trained_depth})"
        for r in per_n.itertuples()
    )
    at_scale = (
        f"Levine's fit gives L* = {first['levine_depth']:.2f} at N = {first['n']:.2g} and {last['levine_depth']:.2f} "
        f"at {last['n']:.2g}: trained depth {p_first} -> {p_last}; {_step_bracketing(frame)}"
    )
    needs = ""
    # each end's argmin: whether it survives the learning-rate systematic (always, outside it), and is decided
    robust = [_argmin_stands(frame, r) for r in (first, last)] if dof else [True, True]
    decided = [stands and r["optimal_share"] >= 0.975 for stands, r in zip(robust, (first, last))]
    if not dof:
        verdict = INCONCLUSIVE
        gap = float(per_n["runner_up_gap_pct"].min())
        needs = f"at least 2 seeds per shape for the bootstrap (the closest runner-up is {gap:.2f}% behind)"
        if p_last == p_first:
            needs += f"; {_levine_next(p_first, depths, float(last['n']))}"
    elif p_last > p_first:
        share, decline = first["growth_share"], first["decline_share"]
        flat_or_down = last["optimal_depth"] <= first["optimal_depth"]
        grows, declines = share >= 0.975 and all(robust), decline >= 0.975 or (all(decided) and flat_or_down)
        verdict = HOLDS if grows else FAILS if declines else INCONCLUSIVE
        if verdict == INCONCLUSIVE:
            gap = float(per_n["runner_up_gap_pct"].min())
            needs = seeds_text(sd, gap, seeds, len(frame), "the closest runner-up gap (%)")
        points += f"; growth in {share:.0%} of redraws, decline in {decline:.0%}"
    else:
        # the prediction does not move inside the trained N: an argmin that stays put cannot show growth (and
        # at the edge of the trained depths it does not even locate an optimum); one decided elsewhere refutes
        matches = [r["optimal_depth"] == p_first for r in (first, last)]
        verdict = FAILS if any(d and not m for d, m in zip(decided, matches)) else INCONCLUSIVE
        if verdict == INCONCLUSIVE:
            edge = " (the edge of the trained depths)" if p_first in (depths[0], depths[-1]) else ""
            needs = (
                f"Levine's fit keeps the optimum at trained depth {p_first}{edge} over the trained N, so growth "
                f"cannot be seen here: {_levine_next(p_first, depths, float(last['n']))}"
            )
            if all(decided) and all(matches):
                side = "at or below" if p_first == depths[0] else "at or above"
                bounds = f", but at the edge it only bounds the optimum ({side} depth {p_first}), not locates it"
                needs += (
                    "; the argmin agrees with it at both ends, a prediction that could have failed (an argmin decided "
                    "at another depth refutes it)" + (bounds if edge else "")
                )
    return Result(
        value=points,
        verdict=verdict,
        interval="per N above: bootstrap 95% range of the argmin depth",
        noise=_noise(first),
        at_our_scale=at_scale,
        needs=needs,
    )


def _argmin_stands(frame: pd.DataFrame, row: pd.Series) -> bool:
    """Whether the argmin depth at `row`'s N stands within the learning-rate systematic (no other depth's excess
    there reaches its gap to the best; `argmin_stands`); always, outside it."""
    at_n = frame[frame["n"] == row["n"]]
    if "loss" not in at_n:  # a figure without each depth's loss: nothing to move
        return True
    others = at_n[at_n["depth"] != row["optimal_depth"]]
    gaps = 100 * (others["loss"].to_numpy() / float(at_n["loss"].min()) - 1)
    excess = others["excess_pct"].to_numpy(float) if "excess_pct" in others else np.full(len(others), np.nan)
    return argmin_stands(True, gaps, excess, f"the argmin depth at N={row['n']:.2g}")


def _levine_next(depth: int, depths: list[int], n_now: float) -> str:
    """Where Levine's fitted optimum moves past `depth` toward the next trained depth (log midpoint)."""
    deeper = [d for d in depths if d > depth]
    if not deeper:
        return "a deeper trained depth than the one Levine's fit predicts"
    n_next = fits.levine_n_at_depth(math.sqrt(depth * deeper[0]))
    return f"Levine's fit moves the optimum to depth {deeper[0]} only near N = {n_next:.2g} (trained up to {n_now:.2g})"


# "stops paying" read as: deepening above the threshold gains at most 0.5% of the loss (an equivalence
# margin, a quarter of the 2% at which this project reads "barely matters"); a gain below the threshold
# of at most that much is no depth efficiency either (chosen by this project)
PAYS_MARGIN = 0.5


def depth_contrast(frame: pd.DataFrame) -> Result:
    """At fixed N: deepening pays below L_th = log3(width), stops paying above it, and the contrast is positive."""
    if frame.empty:
        return NO_COMMON_RANGE
    first = frame.iloc[0]
    at_scale = (
        "L_th = log3(width) at the deeper model's own width at that N; read literally, the deeper model wins "
        f"once its width passes 3^L; {_step_bracketing(frame)}"
    )
    counts = {"below": int(first["below_pairs"]), "above": int(first["above_pairs"])}
    parts = {
        name: (first[f"{name}_pct"], first[f"{name}_ci_low"], first[f"{name}_ci_high"])
        for name in ("gain_below", "gain_above", "contrast")
    }
    value = (
        f"deepening gains {number_text(parts['gain_below'][0], '+.2f')}% below the threshold "
        f"({counts['below']} pairs), {number_text(parts['gain_above'][0], '+.2f')}% above it ({counts['above']}); "
        f"contrast {number_text(parts['contrast'][0], '+.2f')}%"
    )
    interval = "; ".join(
        f"{name.replace('_', ' ')} (%) {interval_text(low, high)}" for name, (_, low, high) in parts.items()
    )
    missing = [side for side, count in counts.items() if not count]
    if missing:
        return Result(
            f"one side of the contrast is missing (no pair {' or '.join(missing)} the threshold); {value}",
            INCONCLUSIVE,
            interval,
            _noise(first),
            at_scale,
            "pairs of depths on both sides of L_th = log3(width) at a shared N: "
            + ("smaller N (narrower deep models)" if "above" in missing else "larger N (wider deep models)"),
        )
    # pays: above PAYS_MARGIN (a gain of at most that is none); stops: at most PAYS_MARGIN
    widened = {name: _widened(first, name, parts[name][1:]) for name in parts}
    sides = {
        "deepening pays below": exceeds(*widened["gain_below"], PAYS_MARGIN),
        f"stops paying above (gain <= {PAYS_MARGIN:g}%)": below(*widened["gain_above"], PAYS_MARGIN),
        "the contrast is positive": above(*widened["contrast"], 0.0),
    }
    effect = (parts["contrast"][0], counts["below"] + counts["above"], "the contrast (%)")
    return _sided(sides, first, value, interval, at_scale, effect)


def literal_threshold(frame: pd.DataFrame) -> Result:
    """Read literally: the shallower of two consecutive depths wins before the deeper one's width reaches 3^L,
    the deeper wins past it; both sides, over every pair with points on them."""
    at_scale = ""
    if len(frame):
        by_pair = frame.drop_duplicates("deep")
        at_scale = (
            "literal crossovers (the deeper model's width 3^L): "
            + ", ".join(f"{r.shallow}->{r.deep} at N ~{r.literal_n:.2g}" for r in by_pair.itertuples())
            + "; "
            + bracketing(
                {
                    "": [
                        (f"{r.shallow}->{r.deep}", r.literal_n, frame.loc[frame["deep"] == r.deep, "n"].to_numpy(float))
                        for r in by_pair.itertuples()
                    ]
                }
            )
        )
    if frame.empty:
        return Result(
            "no pair of consecutive depths trained over a shared range of N",
            INCONCLUSIVE,
            at_our_scale=at_scale,
            needs="the literal block: the shallowest depths at N on both sides of N ~ 2e3",
        )
    first = frame.iloc[0]
    counts = {side: int(first[f"{side}_points"]) for side in SIDES}
    parts = {
        side: (first[f"gain_{side}_pct"], first[f"gain_{side}_ci_low"], first[f"gain_{side}_ci_high"]) for side in SIDES
    }
    pairs = "; ".join(
        f"{r.shallow}->{r.deep}: "
        + ", ".join(
            f"{gain:+.2f}% {side}" if math.isfinite(gain) else f"no point {side}"
            for side, gain in zip(SIDES, (r.pair_gain_before_pct, r.pair_gain_past_pct))
        )
        for r in frame.drop_duplicates("deep").itertuples()
    )
    value = (
        f"the deeper model gains {number_text(parts['before'][0], '+.2f')}% before its literal crossover "
        f"({counts['before']} points), {number_text(parts['past'][0], '+.2f')}% past it ({counts['past']}); {pairs}"
    )
    interval = "; ".join(f"gain {side} (%) {interval_text(low, high)}" for side, (_, low, high) in parts.items())
    missing = [side for side, count in counts.items() if not count]
    if missing:
        return Result(
            f"no point {' or '.join(missing)} a literal crossover; {value}",
            INCONCLUSIVE,
            interval,
            _noise(first),
            at_scale,
            f"trained N on both sides of each crossover, a factor {AT_CROSSOVER:g} or more away from it (smaller "
            "N for 'before', larger for 'past')",
        )
    # the deeper model wins past: its gain above PAYS_MARGIN (at most that is no win); the shallower wins
    # before: the deeper one's loss above the shallower's by more than PAYS_MARGIN (at most that is none)
    before_low, before_high = _widened(first, "gain_before", parts["before"][1:])
    sides = {
        "the shallower wins before": exceeds(-before_high, -before_low, PAYS_MARGIN),
        "the deeper wins past": exceeds(*_widened(first, "gain_past", parts["past"][1:]), PAYS_MARGIN),
    }
    gap = min(abs(parts[side][0]) for side in SIDES)
    effect = (gap, counts["before"] + counts["past"], "the smaller side's gain (%)")
    return _sided(sides, first, value, interval, at_scale, effect)


def _widened(first: pd.Series, name: str, interval: tuple[float, float]) -> tuple[float, float]:
    """A side statistic's interval (% of the loss) within the learning-rate systematic in force: its own shift
    (`<name>_sys_down`, `<name>_sys_up` in the figure), read against PAYS_MARGIN."""
    return loss_interval(*interval, figure_shift(first, name), PAYS_MARGIN, f"the {name.replace('_', ' ')}")


def _noise(first: pd.Series) -> str:
    """The noise column of a Levine figure's row."""
    return noise_text(first["noise_sd_pct"], int(first["noise_dof"]), int(first["seeds"]), *heterogeneity(first))


def _sided(
    sides: dict[str, str], first: pd.Series, value: str, interval: str, at_scale: str, effect: tuple[float, int, str]
) -> Result:
    """A rule of several sides, all needed: combined; for an undecided one, the seeds that would resolve
    `effect` (its size in %, the points it averages over, its name)."""
    verdict = combine(*sides.values())
    needs = ""
    if verdict == INCONCLUSIVE:
        undecided = [name for name, v in sides.items() if v == INCONCLUSIVE]
        size, points, what = effect
        needs = f"undecided: {', '.join(undecided)}; " + (
            seeds_text(first["noise_sd_pct"], size, int(first["seeds"]), points, what)
            if int(first["noise_dof"])
            else "at least 2 seeds per shape for the bootstrap"
        )
    value += "; " + ", ".join(f"{name}: {v}" for name, v in sides.items())
    return Result(value, verdict, interval, _noise(first), at_scale, needs)


CLAIMS = [
    Claim(
        "levine_crossover_slope",
        "Levine 2020",
        "The width at which the deeper of two depths starts to win grows exponentially with depth, ln 3 per layer "
        "(threshold L_th = log3 d)",
        "slope of ln(crossover width) vs depth over consecutive in-range pairs, bootstrap 95% CI; every pair's "
        "crossover width with its interval; pairs that never cross; restated with the depths compared at fixed "
        "total parameters and at fixed training FLOPs",
        f"ln 3 = {fits.LEVINE_SLOPE_TEXT} per layer (threshold); under the fitted optimum "
        f"d*(L) = {fits.LEVINE_OPTIMUM_TEXT} the deeper "
        "model's width at the crossover rises 0.03-0.11 per layer (computed for the pairs measured)",
        "holds if the slope's interval includes ln 3 and excludes the fitted optimum's slope for the same pairs; "
        "fails if it excludes ln 3; "
        "inconclusive if it includes both, or no slope or interval",
        "levine_crossover",
        crossover_slope,
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "levine_optimal_depth",
        "Levine 2020",
        f"The optimal depth grows with model size as the fitted optimum d*(L) = {fits.LEVINE_OPTIMUM_TEXT}, "
        "N = 12 L d*^2, says",
        "argmin over trained depths at each trained N (bootstrap over seeds) vs the trained depth nearest Levine's "
        "L*(N)",
        "~80 layers at 175B; L* = 1 at N = 3.2e5, 2 at 7.1e5, 4 at 1.8e6",
        "where L* moves to a deeper trained depth over our N: holds if the optimum grows from the smallest to the "
        "largest N in >= 97.5% of redraws, fails if it declines in >= 97.5% or both ends' argmins are decided "
        "(>= 97.5%) and do not grow; where it does not, growth cannot be seen: fails if either end's argmin is "
        "decided (>= 97.5%) at another depth than L*'s, else inconclusive (never holds)",
        "levine_optimal_depth",
        optimal_depth_growth,
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "levine_depth_inefficiency",
        "Levine 2020",
        "At fixed N, deepening pays below the threshold L_th = log3(width) and stops paying above it",
        "mean loss gain (%) of each depth over the next shallower trained depth at the same N, for deeper models "
        "below their threshold and above it, and their per-N contrast (below - above); bootstrap 95% CIs",
        "below L_th depth is efficient (gain > 0); above it deepening is no better than widening",
        f"holds if the gain below has its interval above {PAYS_MARGIN:g}% {OURS}, the gain above has its interval at "
        f"or below {PAYS_MARGIN:g}% and the contrast has its interval above 0; fails if the gain below lies at or "
        f"below {PAYS_MARGIN:g}%, the gain above lies above {PAYS_MARGIN:g}%, or the contrast "
        "at or below 0; inconclusive if one is undecided or a side has no pair (pairs across the threshold "
        "are on neither side)",
        "levine_optimal_depth",
        depth_contrast,
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "levine_literal_threshold",
        "Levine 2020",
        "Read literally, the threshold L_th = log3(width) says the deeper of two consecutive depths wins once its "
        "width passes 3^L: the shallower wins before, the deeper past it",
        "mean loss gain (%) of the deeper model over the shallower at the trained N before each pair's literal "
        f"crossover (N below 1/{AT_CROSSOVER:g} of it) and past it (above {AT_CROSSOVER:g}x), over the pairs of the "
        "design and its small-N block; bootstrap 95% CIs",
        "the deeper model's width 3^L: N ~ 2.0e3 for depths 1 -> 2, 2.6e4 for 2 -> 3, 3.2e5 for 3 -> 4 (d_ff = 4 d)",
        f"holds if the gain past the crossover has its interval above {PAYS_MARGIN:g}% and the gain before it below "
        f"-{PAYS_MARGIN:g}%; fails if "
        f"either lies within {PAYS_MARGIN:g}% of no win for its side (the deeper not better than that past, or "
        f"not worse than that before) {OURS}; inconclusive otherwise, or with a side with no point (points "
        f"within a factor {AT_CROSSOVER:g} of a crossover are on neither side)",
        "levine_literal",
        literal_threshold,
        lr_systematic=True,
        per_count=True,
    ),
]
