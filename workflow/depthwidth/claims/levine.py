"""Levine et al. 2020: the depth threshold L_th = log3(width), read three ways (the crossover width of
consecutive depths, the optimal depth against N, the deficit of depths above the threshold), and the
claims they decide."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.claims.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    Claim,
    Result,
    above,
    interval_text,
    noise_text,
    number_text,
    seeds_text,
)


def crossover_slope(frame: pd.DataFrame) -> Result:
    """Slope of ln(crossover width) vs depth, its bootstrap interval against ln 3 and 0.0555."""
    ln3, fitted = math.log(3), 0.0555
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
        f"threshold: ln 3 = {ln3:.3f} per layer (crossover at width 3^L); fitted optimum: {fitted} per layer; "
        "they differ by 20x"
    )
    if frame.empty:
        return Result(
            "no pair of depths with two trained widths each",
            INCONCLUSIVE,
            at_our_scale=at_scale,
            needs="at least two depths with two widths each",
        )
    first = frame.iloc[0]
    sd, dof, seeds = first["noise_sd_pct"], int(first["noise_dof"]), int(first["seeds"])
    value = f"crossovers: {pairs or 'none'}; never overtakes: {never_text}"
    if not np.isfinite(first["slope"]):
        consecutive = frame[frame["consecutive"].astype(bool)]
        missing = consecutive[~(consecutive["crosses"].astype(bool) & consecutive["in_range"].astype(bool))]
        needs = []
        for r in missing.itertuples():
            where = "inside" if r.threshold_n <= first["n_trained_max"] else "beyond"
            needs.append(
                f"{r.shallow}->{r.deep}: the threshold puts it near N ~{r.threshold_n:.2g}, {where} the trained N"
            )
        if not dof:
            needs.append("at least 2 seeds per shape to give each crossover an interval")
        return Result(
            value=f"fewer than two in-range crossovers of consecutive depths; {value}",
            verdict=INCONCLUSIVE,
            noise=noise_text(sd, dof, seeds),
            at_our_scale=at_scale,
            needs="; ".join(needs),
        )
    low, high, slope = first["slope_ci_low"], first["slope_ci_high"], first["slope"]
    defined = first["slope_defined_fraction"]
    value = f"slope {slope:.3f} per layer; {value}"
    if not np.isfinite(low):
        verdict, needs = INCONCLUSIVE, "at least 2 seeds per shape for the bootstrap interval"
    elif defined < 0.95:
        verdict = INCONCLUSIVE
        needs = f"in {1 - defined:.0%} of the redraws a pair does not cross: more seeds or wider N per depth"
    else:
        includes_ln3, includes_fit = low <= ln3 <= high, low <= fitted <= high
        verdict = FAILS if not includes_ln3 else HOLDS if not includes_fit else INCONCLUSIVE
        half = (high - low) / 2
        needs = (
            f"~{fits.runs_factor_needed(half, (ln3 - fitted) / 2):.1f}x the seeds to separate ln 3 from 0.0555"
            if verdict == INCONCLUSIVE
            else ""
        )
        value += f"; the interval {'includes' if includes_ln3 else 'excludes'} ln 3 and "
        value += f"{'includes' if includes_fit else 'excludes'} 0.0555"
    return Result(
        value, verdict, f"slope {interval_text(low, high, '.3f')}", noise_text(sd, dof, seeds), at_scale, needs
    )


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
        f"at {last['n']:.2g}: trained depth {p_first} -> {p_last}"
    )
    needs = ""
    if not dof:
        verdict = INCONCLUSIVE
        gap = float(per_n["runner_up_gap_pct"].min())
        needs = f"at least 2 seeds per shape for the bootstrap (the closest runner-up is {gap:.2f}% behind)"
        if p_last == p_first:
            needs += f"; {_levine_next(p_first, depths, float(last['n']))}"
    elif p_last > p_first:
        share, decline = first["growth_share"], first["decline_share"]
        ends_decided = first["optimal_share"] >= 0.975 and last["optimal_share"] >= 0.975
        flat_or_down = last["optimal_depth"] <= first["optimal_depth"]
        verdict = (
            HOLDS if share >= 0.975 else FAILS if decline >= 0.975 or (ends_decided and flat_or_down) else INCONCLUSIVE
        )
        if verdict == INCONCLUSIVE:
            gap = float(per_n["runner_up_gap_pct"].min())
            needs = seeds_text(sd, gap, seeds, len(frame), "the closest runner-up gap (%)")
        points += f"; growth in {share:.0%} of redraws, decline in {decline:.0%}"
    else:
        decided = [r["optimal_share"] >= 0.975 for r in (first, last)]
        matches = [r["optimal_depth"] == p_first for r in (first, last)]
        decided_other = any(d and not m for d, m in zip(decided, matches))
        verdict = FAILS if decided_other else HOLDS if all(decided) and all(matches) else INCONCLUSIVE
        if verdict == INCONCLUSIVE:
            needs = _levine_next(p_first, depths, float(last["n"]))
    return Result(
        value=points,
        verdict=verdict,
        interval="per N above: bootstrap 95% range of the argmin depth",
        noise=noise_text(sd, dof, seeds),
        at_our_scale=at_scale,
        needs=needs,
    )


def _levine_next(depth: int, depths: list[int], n_now: float) -> str:
    """Where Levine's fitted optimum moves past `depth` toward the next trained depth (log midpoint)."""
    deeper = [d for d in depths if d > depth]
    if not deeper:
        return "a deeper trained depth than the one Levine's fit predicts"
    n_next = fits.levine_n_at_depth(math.sqrt(depth * deeper[0]))
    return f"Levine's fit moves the optimum to depth {deeper[0]} only near N = {n_next:.2g} (trained up to {n_now:.2g})"


def depth_inefficiency(frame: pd.DataFrame) -> Result:
    """At fixed N, depths above L_th = log3(width) lose to the next shallower depth (mean deficit > 0)."""
    if frame.empty:
        return NO_COMMON_RANGE
    first = frame.iloc[0]
    sd, dof, seeds = first["noise_sd_pct"], int(first["noise_dof"]), int(first["seeds"])
    count = int(first["inefficient_rows"])
    at_scale = "L_th = log3(width) at each depth's own width at that N"
    if count == 0:
        return Result(
            "no depth is above log3(width) inside the common N range",
            INCONCLUSIVE,
            noise=noise_text(sd, dof, seeds),
            at_our_scale=at_scale,
            needs="deeper models at widths below 3^L inside the N range every depth covers",
        )
    mean, low, high = first["inefficiency_pct"], first["inefficiency_ci_low"], first["inefficiency_ci_high"]
    rows = frame[np.isfinite(frame["deficit_pct"])]
    lost = int((rows["deficit_pct"] > 0).sum())
    verdict = above(low, high, 0.0)
    needs = ""
    if verdict == INCONCLUSIVE:
        needs = (
            "at least 2 seeds per shape for the bootstrap"
            if not dof
            else seeds_text(sd, mean, seeds, len(frame["depth"].unique()) * 2, "the mean deficit (%)")
        )
    return Result(
        value=f"mean deficit {mean:+.2f}% over {count} (N, depth) comparisons above the threshold; "
        f"the deeper model lost {lost} of {count}",
        verdict=verdict,
        interval=f"mean deficit (%) {interval_text(low, high)} (bootstrap over seeds)",
        noise=noise_text(sd, dof, seeds),
        at_our_scale=at_scale,
        needs=needs,
    )


CLAIMS = [
    Claim(
        "levine_crossover_slope",
        "Levine 2020",
        "The width at which the deeper of two depths starts to win grows exponentially with depth, ln 3 per layer "
        "(threshold L_th = log3 d)",
        "slope of ln(crossover width) vs depth over consecutive in-range pairs, bootstrap 95% CI; every pair's "
        "crossover width with its interval; pairs that never cross",
        "ln 3 = 1.099 per layer (threshold); 0.0555 per layer (fitted optimum d*(L))",
        "holds if the slope's interval includes ln 3 and excludes 0.0555; fails if it excludes ln 3; "
        "inconclusive if it includes both, or no slope or interval",
        "levine_crossover",
        crossover_slope,
    ),
    Claim(
        "levine_optimal_depth",
        "Levine 2020",
        "The optimal depth grows with model size as the fitted optimum d*(L) = exp(5.039 + 0.0555 L), "
        "N = 12 L d*^2, says",
        "argmin over trained depths at each trained N (bootstrap over seeds) vs the trained depth nearest Levine's "
        "L*(N)",
        "~80 layers at 175B; L* = 1 at N = 3.2e5, 2 at 7.1e5, 4 at 1.8e6",
        "where L* moves to a deeper trained depth over our N: holds if the optimum grows from the smallest to the "
        "largest N in >= 97.5% of redraws, fails if it declines in >= 97.5% or both ends' argmins are decided "
        "(>= 97.5%) and do not grow; where it does not: holds if the argmin is L*'s "
        "depth at both ends in >= 97.5% of redraws, fails if another depth is, else inconclusive",
        "levine_optimal_depth",
        optimal_depth_growth,
    ),
    Claim(
        "levine_depth_inefficiency",
        "Levine 2020",
        "At fixed N, models deeper than the threshold L_th = log3(width) lose to shallower, wider ones",
        "mean loss deficit (%) of each depth above log3 of its width vs the next shallower trained depth, "
        "same N; bootstrap 95% CI",
        "above L_th deepening is no better than widening (depth-inefficient regime)",
        "holds if the mean deficit's interval is above 0; fails if it lies at or below 0; inconclusive if it "
        "straddles 0 or one seed",
        "levine_optimal_depth",
        depth_inefficiency,
    ),
]
