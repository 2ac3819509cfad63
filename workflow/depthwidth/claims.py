"""The claims table: each paper claim, our number, and a verdict computed by the rule in its row.

Every claim reads the CSV of the figure that shows it (`results/figures/<id>.csv`), so the
number in the table is the number on the figure. A claim whose figure this config does not
build gets the verdict `not run`. Verdicts are never set by hand.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.io import write_text

COLUMNS = [
    "id",
    "paper",
    "statement",
    "metric",
    "paper_value",
    "paper_at_our_scale",
    "our_value",
    "interval",
    "noise",
    "rule",
    "verdict",
    "what_it_would_take",
    "scale_note",
    "figure",
]
HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = "holds", "does not hold", "inconclusive", "not run"
VERDICTS = (HOLDS, FAILS, INCONCLUSIVE, NOT_RUN)
ONE_SEED = "one seed per shape: the seed noise is not measured"
OURS = "(threshold chosen by this project, not the paper)"


@dataclass(frozen=True)
class Result:
    """What a rule found: our number, the verdict, and the columns that say how sure it is.

    interval: the 95% interval the verdict was read from; noise: the noise estimate behind it;
    at_our_scale: what the paper's equations give at our scale (next to its own numbers);
    needs: for an inconclusive verdict, what would decide it, computed from the noise and the effect.
    """

    value: str
    verdict: str
    interval: str = ""
    noise: str = ""
    at_our_scale: str = ""
    needs: str = ""


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    statement: str
    metric: str
    paper_value: str
    rule: str
    figure: str | None  # the figure whose CSV the claim reads; None: cannot be run here
    measure: Callable[[pd.DataFrame], Result] | None
    not_run_reason: str = ""


# ---------------------------------------------------------------- verdict arithmetic


def below(low: float, high: float, limit: float) -> str:
    """Verdict of 'the quantity is at most `limit`' from its 95% interval [low, high]."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return INCONCLUSIVE
    return HOLDS if high <= limit else FAILS if low > limit else INCONCLUSIVE


def above(low: float, high: float, limit: float) -> str:
    """Verdict of 'the quantity exceeds `limit`' from its 95% interval [low, high]."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return INCONCLUSIVE
    return HOLDS if low > limit else FAILS if high <= limit else INCONCLUSIVE


def combine(*verdicts: str) -> str:
    """All parts of a statement: fails if one fails, holds if all hold, not run if none ran, else inconclusive."""
    if FAILS in verdicts:
        return FAILS
    if all(v == HOLDS for v in verdicts):
        return HOLDS
    if all(v == NOT_RUN for v in verdicts):
        return NOT_RUN
    return INCONCLUSIVE


def noise_text(sd: float, dof: int, seeds: int) -> str:
    """The seed-noise column: pooled sd of the loss (%) with its degrees of freedom."""
    if not dof:
        return ONE_SEED
    return f"seed sd {sd:.2f}% of the loss (pooled, {int(dof)} dof; {int(seeds)} seeds per shape)"


def seeds_text(sd: float, margin: float, seeds: int, shapes: int, what: str) -> str:
    """'needs about k seeds' for an effect `margin` (in the units of sd) to clear the noise."""
    k = fits.seeds_needed(sd, margin, seeds_now=max(seeds, 2), shapes=max(shapes, 1))
    if k is None:
        return f"more than 100 seeds per shape: {what} ({margin:+.2f}) sits at the threshold, within any noise"
    return f"about {k} seeds per shape would resolve {what} ({margin:+.2f}) at seed sd {sd:.2f}"


def _f(value: float, fmt: str = ".2f") -> str:
    return format(value, fmt) if np.isfinite(value) else "nan"


def _ci(low: float, high: float, fmt: str = ".2f") -> str:
    return f"[{_f(low, fmt)}, {_f(high, fmt)}]" if np.isfinite(low) and np.isfinite(high) else "no interval"


def _finished(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] == "ok"] if "status" in frame else frame


# ---------------------------------------------------------------- Kaplan Fig. 5: shape ablations

KAPLAN_ASPECT_SPAN = 40.0  # Kaplan Fig. 5: "a factor ~40" of aspect ratio
ASPECT_LIMIT = 5.0  # Kaplan's "a few percent" read as 5% (chosen by this project)
FF_LIMIT = 2.0  # d_ff/d in [1, 4] "barely matters" read as a spread of 2% (chosen by this project)


def shape_table(frame: pd.DataFrame, knob: str) -> pd.DataFrame:
    """One row per trained shape of an ablation figure: the knob, the seed mean and the seeds."""
    return _finished(frame).drop_duplicates(["n_target", "n_layer", "d_model", knob]).reset_index(drop=True)


def spread_of(shapes: pd.DataFrame, sd: float, dof: int) -> tuple[float, float, float]:
    """Largest minus smallest seed-mean increase (%) among `shapes`, with the t-interval of that difference."""
    hi, lo = shapes.loc[shapes["increase_pct_mean"].idxmax()], shapes.loc[shapes["increase_pct_mean"].idxmin()]
    spread = float(hi["increase_pct_mean"] - lo["increase_pct_mean"])
    if hi.name == lo.name:
        return 0.0, math.nan, math.nan
    low, high = fits.t_interval(spread, sd * math.sqrt(1 / hi["seeds"] + 1 / lo["seeds"]), dof)
    return spread, max(low, 0.0) if np.isfinite(low) else low, high


def _undecided_seeds(frame: pd.DataFrame, margin: float, what: str) -> str:
    """What would decide an ablation rule: seeds, from the seed noise or (one seed) the L(N) residual stand-in."""
    first = frame.iloc[0]
    shapes = frame.drop_duplicates(["n_target", "n_layer", "d_model"]).shape[0]
    if first["noise_dof"] > 0:
        return seeds_text(first["noise_sd_pct"], margin, int(frame["seeds"].max()), shapes, what)
    stand_in = first["baseline_rms_pct"]
    return "at least 2 seeds per shape to measure the seed noise; " + seeds_text(
        stand_in, margin, 1, shapes, what
    ).replace("at seed sd", "if the seed sd were the L(N) fit's rms")


def aspect_basin(frame: pd.DataFrame) -> Result:
    """Per N: the spread of the loss increase within a 40x aspect-ratio window around the best shape (depth >= 2)."""
    limit = ASPECT_LIMIT
    shapes = shape_table(frame[frame["n_layer"] >= 2], "aspect_ratio")
    first = frame.iloc[0]
    sd, dof = first["noise_sd_pct"], int(first["noise_dof"])
    parts, verdicts, spans, worst = [], [], [], None
    for n, by_n in shapes.groupby("n_target"):
        best = by_n.loc[by_n["increase_pct_mean"].idxmin(), "aspect_ratio"]
        root = math.sqrt(KAPLAN_ASPECT_SPAN)
        window = by_n[by_n["aspect_ratio"].between(best / root, best * root)]
        span = window["aspect_ratio"].max() / window["aspect_ratio"].min()
        spread, low, high = spread_of(window, sd, dof)
        verdicts.append(below(low, high, limit))
        spans.append(span)
        parts.append(f"N={n:.2g}: {spread:.2f}% {_ci(low, high)} over {span:.0f}x ({len(window)} shapes)")
        if worst is None or spread > worst:
            worst = spread
    partial = min(spans) < KAPLAN_ASPECT_SPAN
    verdict = combine(*verdicts)
    needs = ""
    if verdict == INCONCLUSIVE:
        needs = _undecided_seeds(frame, worst - limit, f"the spread's distance to {limit:g}%")
    if partial:
        needs = "; ".join(
            filter(
                None,
                [
                    needs,
                    f"depths spanning {KAPLAN_ASPECT_SPAN:g}x of aspect ratio at each N (tested: {min(spans):.0f}x)",
                ],
            )
        )
    label = "PARTIAL: " if partial else ""
    return Result(
        value=f"{label}largest spread {worst:.2f}%; " + "; ".join(parts),
        verdict=verdict,
        interval="; ".join(p.split(": ", 1)[1].split(" over")[0] for p in parts),
        noise=noise_text(sd, dof, int(shapes["seeds"].max())),
        at_our_scale=f"a span of aspect ratios of {min(spans):.0f}x was tested (Kaplan's basin: ~40x)"
        + (" -- partial" if partial else ""),
        needs=needs,
    )


def knob_spread(knob: str, low: float, high: float, limit: float, worse_above: float | None = None):
    """Spread of the seed-mean loss increase over knob values in [low, high] (<= `limit`, interval-gated).

    worse_above: also test the paper's second part: the largest knob value >= `worse_above` is worse
    than the best value in [low, high] (interval of the difference above 0).
    """

    def measure(frame: pd.DataFrame) -> Result:
        shapes = shape_table(frame, knob)
        first = frame.iloc[0]
        sd, dof = first["noise_sd_pct"], int(first["noise_dof"])
        inside = shapes[shapes[knob].between(low, high)]
        span = f"all {knob} values" if math.isinf(high) else f"{knob} in [{low:g}, {high:g}]"
        spread, s_low, s_high = spread_of(inside, sd, dof)
        verdict_a = below(s_low, s_high, limit) if len(inside) >= 2 else NOT_RUN
        value = f"(a) spread {spread:.2f}% over {span} ({len(inside)} values)"
        interval = f"(a) {_ci(s_low, s_high)}"
        verdicts, needs = [verdict_a], []
        if verdict_a == INCONCLUSIVE:
            needs.append(_undecided_seeds(frame, spread - limit, f"the spread's distance to {limit:g}%"))
        if worse_above is not None:
            large = shapes[shapes[knob] >= worse_above]
            if large.empty or inside.empty:
                verdicts.append(NOT_RUN)
                value += f"; (b) no {knob} >= {worse_above:g} trained"
                needs.append(f"train {knob} >= {worse_above:g} for part (b)")
            else:
                top, best = large.loc[large[knob].idxmax()], inside.loc[inside["increase_pct_mean"].idxmin()]
                diff = float(top["increase_pct_mean"] - best["increase_pct_mean"])
                d_low, d_high = fits.t_interval(diff, sd * math.sqrt(1 / top["seeds"] + 1 / best["seeds"]), dof)
                verdicts.append(above(d_low, d_high, 0.0))
                value += f"; (b) {knob} = {top[knob]:g} is {diff:+.2f}% vs the best in [{low:g}, {high:g}]"
                interval += f"; (b) {_ci(d_low, d_high)}"
                if verdicts[-1] == INCONCLUSIVE:
                    needs.append(_undecided_seeds(frame, diff, "the (b) difference"))
        return Result(
            value=value,
            verdict=combine(*verdicts),
            interval=interval,
            noise=noise_text(sd, dof, int(shapes["seeds"].max())),
            at_our_scale="the paper's statement is about shape, not scale: same thresholds",
            needs="; ".join(needs) if combine(*verdicts) == INCONCLUSIVE else "",
        )

    return measure


# ---------------------------------------------------------------- Kaplan Fig. 6 and L(N)


def depth_collapse(frame: pd.DataFrame) -> Result:
    """(a) depths >= 2 on one power law in non-embedding N within the seed noise (F test);
    (b) the 1-layer offset above that line, its interval above 0. With embeddings: for contrast."""
    tests = frame.drop_duplicates("count").set_index("count")
    nonemb, total = tests.loc["non-embedding"], tests.loc["with embeddings"]
    sd, dof = nonemb["noise_sd_pct"], int(nonemb["noise_dof"])
    if dof and np.isfinite(nonemb["lof_f"]):
        verdict_a = HOLDS if nonemb["lof_f"] <= nonemb["lof_f95"] else FAILS
    else:
        verdict_a = INCONCLUSIVE
    has_one = np.isfinite(nonemb["offset_1layer_pct"])
    verdict_b = above(nonemb["offset_ci_low"], nonemb["offset_ci_high"], 0.0) if has_one else NOT_RUN
    verdict = combine(verdict_a, verdict_b)
    value = (
        f"(a) non-embedding: scatter {nonemb['scatter_pct']:.2f}%, F = {_f(nonemb['lof_f'])} "
        f"(95% quantile {_f(nonemb['lof_f95'])}); (b) 1-layer offset {_f(nonemb['offset_1layer_pct'], '+.2f')}%; "
        f"contrast, with embeddings: scatter {total['scatter_pct']:.2f}%, F = {_f(total['lof_f'])}"
    )
    needs = []
    if verdict == INCONCLUSIVE:
        if not dof:
            needs.append(
                "at least 2 seeds per shape to measure the seed noise; "
                + seeds_text(
                    nonemb["scatter_pct"],
                    nonemb["offset_1layer_pct"],
                    1,
                    int(nonemb["deep_shapes"]),
                    "the 1-layer offset",
                ).replace("at seed sd", "if the seed sd were the scatter")
            )
        elif verdict_b == INCONCLUSIVE:
            shapes = frame.drop_duplicates(["n_layer", "d_model"]).shape[0]
            needs.append(
                seeds_text(sd, nonemb["offset_1layer_pct"], int(frame["seeds"].max()), shapes, "the 1-layer offset")
            )
    return Result(
        value=value,
        verdict=verdict,
        interval=f"(b) 1-layer offset (%) {_ci(nonemb['offset_ci_low'], nonemb['offset_ci_high'])}",
        noise=noise_text(sd, dof, int(frame["seeds"].max())),
        at_our_scale="the paper's statement is about parameter counting, not scale",
        needs="; ".join(needs),
    )


def power_law(frame: pd.DataFrame) -> Result:
    """alpha with its interval, the curvature (lack-of-fit) test, and Kaplan's two references."""
    first = frame.iloc[0]
    alpha, low, high = first["alpha"], first["alpha_ci_low"], first["alpha_ci_high"]
    c, c_low, c_high = first["curvature"], first["curvature_ci_low"], first["curvature_ci_high"]
    curved = np.isfinite(c_low) and (c_low > 0 or c_high < 0)
    testable = np.isfinite(c_low)
    if curved or (np.isfinite(high) and high < 0):
        verdict = FAILS
    elif np.isfinite(low) and low > 0 and testable:
        verdict = HOLDS
    else:
        verdict = INCONCLUSIVE
    local, tokens = first["kaplan_local_alpha"], first["tokens_per_run"]

    def covers(ref: float) -> str:
        if not (np.isfinite(low) and np.isfinite(high)):
            return "no interval"
        return "includes" if low <= ref <= high else "excludes"

    at_scale = (
        f"alpha_N = {first['kaplan_alpha']:.3f} (unlimited data): ours {covers(first['kaplan_alpha'])} it; "
        f"L(N, D) over our N at {tokens:.3g} tokens/run: {local:.3f}: ours {covers(local)} it "
        "(their constants belong to WebText2 and their BPE)"
    )
    needs = []
    if verdict == INCONCLUSIVE:
        half = (high - low) / 2 if np.isfinite(low) else math.nan
        if np.isfinite(half):
            d = fits.tokens_for_local_exponent(half, *_n_span(frame))
            needs.append(
                f"the interval's half-width is {half:.3f}: Kaplan's L(N, D) predicts a slope that large at "
                f"~{d:.2g} tokens per run (now {tokens:.3g})"
                if np.isfinite(d)
                else f"the interval's half-width {half:.3f} exceeds even Kaplan's unlimited-data alpha_N"
            )
            needs.append(
                f"or ~{fits.runs_factor_needed(half, alpha):.1f}x the runs for this alpha ({alpha:.3f}) to clear 0"
            )
        if not testable:
            needs.append("at least 4 runs over 3 distinct N, with a residual dof, for the curvature test")
    return Result(
        value=f"alpha = {alpha:.3f}; curvature {c:+.4f}; rms residual {first['rms_residual_pct']:.2f}% "
        f"({int(first['fit_points'])} runs)",
        verdict=verdict,
        interval=f"alpha {_ci(low, high, '.3f')}; curvature {_ci(c_low, c_high, '+.4f')}",
        noise=noise_text(
            first["noise_sd_pct"], int(first["noise_dof"]), int(_finished(frame).groupby("n_nonembedding").size().max())
        )
        + "; the intervals are from the fit's residuals",
        at_our_scale=at_scale,
        needs="; ".join(needs),
    )


def _n_span(frame: pd.DataFrame) -> tuple[float, float]:
    finished = _finished(frame)
    return float(finished["n_nonembedding"].min()), float(finished["n_nonembedding"].max())


# ---------------------------------------------------------------- Levine


def crossover_slope(frame: pd.DataFrame) -> Result:
    """Slope of ln(crossover width) vs depth, its bootstrap interval against ln 3 and 0.0555."""
    ln3, fitted = math.log(3), 0.0555
    never = frame[~frame["crosses"].astype(bool)] if len(frame) else frame
    pairs = ", ".join(
        f"{r.shallow}->{r.deep}: width {_f(r.width_cross, '.0f')} "
        # an extrapolated crossover's bootstrap range spans orders of magnitude: it says nothing
        + (f"{_ci(r.width_ci_low, r.width_ci_high, '.0f')} (in range)" if r.in_range else "(outside the trained N)")
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
    return Result(value, verdict, f"slope {_ci(low, high, '.3f')}", noise_text(sd, dof, seeds), at_scale, needs)


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
        f"N={r.n:.2g}: {r.optimal_depth} [{_f(r.optimal_ci_low, 'g')}, {_f(r.optimal_ci_high, 'g')}] vs Levine "
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
        interval=f"mean deficit (%) {_ci(low, high)} (bootstrap over seeds)",
        noise=noise_text(sd, dof, seeds),
        at_our_scale=at_scale,
        needs=needs,
    )


SWEEP_CLAIMS = [
    Claim(
        "kaplan_aspect_basin",
        "Kaplan 2020 (Fig. 5)",
        "At fixed non-embedding N, loss is nearly flat over a ~40x range of aspect ratio d/L",
        "largest spread of the seed-mean loss increase (%) within a 40x aspect-ratio window around the best "
        "shape (depth >= 2), per N",
        "within a few percent over ~40x ((6, 4288) within 3% of (48, 1600))",
        f"holds if the 95% interval of the spread (t, pooled seed sd) lies at or below {ASPECT_LIMIT:g}% ('a few "
        f"percent' read as {ASPECT_LIMIT:g}%: threshold chosen by this project, not the paper) at every N; does not "
        f"hold if it lies above; inconclusive if it straddles {ASPECT_LIMIT:g}% or one seed; PARTIAL if the window "
        "tested spans under 40x",
        "kaplan_fig5_aspect",
        aspect_basin,
    ),
    Claim(
        "kaplan_ffratio",
        "Kaplan 2020 (Fig. 5)",
        "(a) Feed-forward ratio d_ff/d between 1 and 4 barely matters at fixed N; (b) ratios of 8 and above cost "
        "a few percent",
        "(a) spread of the seed-mean loss increase (%) for d_ff/d in [1, 4]; (b) largest ratio >= 8 vs the best "
        "in [1, 4]",
        "(a) ~0%; (b) a few % worse",
        f"both parts, 95% t-intervals (pooled seed sd): (a) holds if the spread's interval is at or below "
        f"{FF_LIMIT:g}% {OURS}, fails above; (b) holds if the difference's interval is above 0, fails at or below",
        "kaplan_fig5_ffratio",
        knob_spread("ff_ratio", 1, 4, FF_LIMIT, worse_above=8),
    ),
    Claim(
        "kaplan_headdim",
        "Kaplan 2020 (Fig. 5)",
        "Head dimension barely matters at fixed N and width",
        "spread of the seed-mean loss increase (%) over head dimensions",
        "within ~2%",
        "holds if the spread's 95% interval (t, pooled seed sd) is at or below 2%; fails above; "
        "inconclusive if it straddles 2% or one seed",
        "kaplan_fig5_headdim",
        knob_spread("d_head", 0, math.inf, 2.0),
    ),
    Claim(
        "kaplan_depth_collapse",
        "Kaplan 2020 (Fig. 6)",
        "Counted in non-embedding N, depths >= 2 collapse onto one trend; 1-layer models fall above it",
        "(a) lack-of-fit F of the depth >= 2 seed means around one power law in non-embedding N, against the "
        "seed noise; (b) 1-layer offset (%) from it; with embeddings for contrast",
        "collapse with non-embedding N (1-layer models apart); depths separate with embeddings",
        "(a) holds if F <= its 95% quantile F(k-2, seed dof) (collapse within the noise), fails above; "
        "(b) holds if the offset's 95% t-interval is above 0, fails at or below; both needed",
        "kaplan_fig6",
        depth_collapse,
    ),
    Claim(
        "kaplan_power_law",
        "Kaplan 2020 (Eq. 1.5)",
        "Loss follows a power law in non-embedding N",
        "exponent alpha_N with 95% CI; curvature of ln L in ln N (lack of fit) with 95% CI",
        "alpha_N = 0.076 (WebText2, their BPE; their constants are not ours)",
        "holds if alpha's interval is above 0 and the curvature's interval includes 0; fails if the curvature's "
        "interval excludes 0 (not a power law) or alpha's lies below 0; inconclusive otherwise (e.g. alpha's "
        "interval includes 0, or too few N for the curvature test)",
        "kaplan_power_law",
        power_law,
    ),
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


def sde_convergence(frame: pd.DataFrame) -> Result:
    """Per block: (a) at the largest n, W1 within what sampling alone gives (permutation 95% quantile);
    (b) at the smallest n, W1 above it (convergence is seen); stopped fractions alike on both sides."""
    parts, verdicts, needs, stopped = [], [], [], []
    for block, group in frame.groupby("block"):
        group = group.sort_values("n")
        small, large = group.iloc[0], group.iloc[-1]
        a = HOLDS if large["w1"] <= large["w1_null_q95"] else FAILS
        b = HOLDS if small["w1"] > small["w1_null_q95"] else INCONCLUSIVE
        alike = abs(large["stopped_z"]) <= 1.96
        verdicts += [a, b] if alike or a == FAILS else [a, b, INCONCLUSIVE]
        parts.append(
            f"{block}: W1 {large['w1']:.3f} at n={int(large['n'])} (sampling 95%: {large['w1_null_q95']:.3f}, "
            f"p = {large['w1_p']:.2f}); {small['w1']:.3f} at n={int(small['n'])} (sampling 95%: "
            f"{small['w1_null_q95']:.3f}); slope {small['w1_slope']:.2f}"
        )
        stopped.append(
            f"{block}: stopped finite {large['stopped_finite']:.1%} (n={int(large['n'])}), "
            f"SDE {large['stopped_sde']:.1%}"
        )
        if b == INCONCLUSIVE:
            factor = (small["w1_null_q95"] / small["w1"]) ** 2 if small["w1"] > 0 else math.inf
            needs.append(
                f"{block}: W1 at n={int(small['n'])} is within sampling; ~{factor:.1f}x the samples "
                f"({int(small['samples'])} now) would resolve it, or smaller n"
            )
        if not alike:
            needs.append(
                f"{block}: the stopped fractions differ beyond sampling (z = {large['stopped_z']:.1f}): "
                "SDE settings where paths rarely stop (larger tau0, smaller T)"
            )
    verdict = combine(*verdicts)
    return Result(
        value="; ".join(parts) + "; " + "; ".join(stopped),
        verdict=verdict,
        interval="W1 against its permutation 95% quantile per block (above)",
        noise="sampling: W1 between random splits of the pooled finite and SDE samples (200 permutations)",
        at_our_scale="the paper gives no number: agreement 'surprisingly good'; we test agreement within sampling",
        needs="; ".join(needs) if verdict == INCONCLUSIVE else "",
    )


RANK_STANDARD_LIMIT = 0.9  # standard's terminal correlation must exceed this (chosen by this project)
RANK_GAP_LIMIT = 0.3  # and exceed shaped's by this (chosen by this project)


def rank_collapse(frame: pd.DataFrame) -> Result:
    """Mean correlation at the last recorded t: standard vs shaped finite networks (2-sem intervals), and the SDE."""
    last = frame[frame["t"] == frame["t"].max()]
    finite = last[last["source"] == "finite"].set_index("attention")
    sde = last.loc[last["source"] == "sde", "mean_rho"]
    start = frame.loc[frame["t"] == frame["t"].min(), "mean_rho"].iloc[0]
    std, shp = finite.loc["standard"], finite.loc["shaped"]
    s_low, s_high = std["mean_rho"] - 1.96 * std["sem_rho"], std["mean_rho"] + 1.96 * std["sem_rho"]
    diff = std["mean_rho"] - shp["mean_rho"]
    diff_se = math.hypot(std["sem_rho"], shp["sem_rho"])
    d_low, d_high = diff - 1.96 * diff_se, diff + 1.96 * diff_se
    verdict = combine(above(s_low, s_high, RANK_STANDARD_LIMIT), above(d_low, d_high, RANK_GAP_LIMIT))
    return Result(
        value=f"t={last['t'].iloc[0]:g}: standard {std['mean_rho']:.3f}, shaped {shp['mean_rho']:.3f}, "
        f"SDE {sde.iloc[0]:.3f} (start {start:.2f})",
        verdict=verdict,
        interval=f"standard {_ci(s_low, s_high, '.3f')}; standard - shaped {_ci(d_low, d_high, '.3f')}",
        noise="sampling: standard error of the mean correlation over networks",
        at_our_scale="standard -> 1 with depth at any width; shaped stays at the SDE's value",
        needs="more sampled networks" if verdict == INCONCLUSIVE else "",
    )


ENTROPY_LIMIT = 0.2  # final / initial entropy below which attention has collapsed (chosen by this project)
CONTROL = "temperature"  # the temperature-only control: softmax attention at the shaped temperature


def entropy_ratios(runs: pd.DataFrame) -> np.ndarray:
    """Per finished run in `runs`: the lowest (over layers) final / initial entropy, head-averaged."""
    finished = runs[runs["status"] == "ok"]
    return np.array(
        [
            float(
                g.groupby(["layer", "step"])["entropy"]
                .mean()
                .unstack("step")
                .pipe(lambda t: t.iloc[:, -1] / t.iloc[:, 0])
                .min()
            )
            for _, g in finished.groupby("run_id")
        ]
    )


def ratio_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Mean of the per-seed ratios and its 95% t-interval (nan, nan under 2 seeds)."""
    if values.size == 0:
        return math.nan, math.nan, math.nan
    se = values.std(ddof=1) / math.sqrt(values.size) if values.size >= 2 else math.nan
    return (float(values.mean()), *fits.t_interval(float(values.mean()), se, values.size - 1))


def kind_verdict(attention: str, low: float, high: float) -> str:
    """Gate of one kind's ratio interval: standard 'collapses' (below the limit), the others 'keep' (at or above)."""
    if attention == "standard":
        return below(low, high, ENTROPY_LIMIT)
    return above(low, high, ENTROPY_LIMIT - 1e-12)


def attribution(verdict: str, control_keeps: str) -> str:
    """What the temperature-only control says about a shaped-vs-standard difference, both gated alike."""
    if verdict == FAILS:
        return "no shaped-vs-standard difference to attribute"
    if verdict != HOLDS:
        return "undecided: the shaped-vs-standard difference itself is undecided"
    if control_keeps == HOLDS:
        return "keeps its entropy like shaped: the temperature alone prevents the collapse, not the centring"
    if control_keeps == FAILS:
        return "collapses like standard: the centring prevents the collapse, not the temperature"
    return "undecided: its interval straddles the limit or is missing (too few seeds)"


def kind_needs(attention: str, values: np.ndarray, low: float, high: float, lr: float) -> str:
    """What would decide one kind's gate: a second seed, or the seeds its interval needs to clear the limit."""
    if values.size < 2:
        return f"at least 2 seeds of {attention} at lr {lr:g} (3 for a usable t-interval)"
    if kind_verdict(attention, low, high) != INCONCLUSIVE:
        return ""
    margin = float(values.mean()) - ENTROPY_LIMIT
    factor = fits.runs_factor_needed((high - low) / 2, margin)
    if not np.isfinite(factor):
        return f"{attention} sits at the limit {ENTROPY_LIMIT:g}: more seeds would not decide it"
    seeds = math.ceil(values.size * factor)
    return f"about {seeds} seeds of {attention} would resolve its distance to the limit ({margin:+.2f})"


def entropy_collapse(frame: pd.DataFrame) -> Result:
    """At the largest lr: per finished run, the lowest layer's final / initial entropy; t-interval over seeds.

    The verdict is shaped vs standard; the temperature-only control, gated the same way, says whether the
    difference comes from the temperature (it keeps its entropy) or the centring (it collapses).
    """
    kinds = set(frame["attention"])
    if not {"standard", "shaped"} <= kinds:
        return Result(f"needs both attention kinds, trained only {sorted(kinds)}", NOT_RUN)
    top = frame[frame["lr"] == frame["lr"].max()]
    lr = top["lr"].iloc[0]
    diverged = top.drop_duplicates("run_id").query("status != 'ok'")
    parts, intervals, verdicts, needs = [], [], {}, []
    for attention in [kind for kind in ("standard", "shaped", CONTROL) if kind in kinds]:
        values = entropy_ratios(top[top["attention"] == attention])
        mean, low, high = ratio_interval(values)
        verdicts[attention] = kind_verdict(attention, low, high)
        intervals.append(f"{attention} {_ci(low, high)}")
        parts.append(
            f"{attention} {mean:.2f} {_ci(low, high)} ({values.size} seeds)"
            if values.size
            else f"{attention}: no finished run"
        )
        needs.append(kind_needs(attention, values, low, high, lr))
    verdict = combine(verdicts["standard"], verdicts["shaped"])
    if CONTROL in verdicts:
        control = f"temperature-only control: {attribution(verdict, verdicts[CONTROL])}"
    else:
        control = "temperature-only control (softmax attention at the shaped temperature): not run"
        needs.append(f"train the control (add {CONTROL} to shaped.training.attentions)")
    value = f"lr={lr:g}: " + ", ".join(parts) + " (lowest layer's final / initial entropy)"
    value += f"; {control}; diverged runs excluded: {len(diverged)} ({', '.join(diverged['run_id']) or 'none'})"
    control_open = CONTROL not in verdicts or verdicts[CONTROL] == INCONCLUSIVE
    return Result(
        value=value,
        verdict=verdict,
        interval="; ".join(intervals),
        noise="seed-to-seed spread of the entropy ratio",
        at_our_scale=f"the paper gives no number; collapse read as a ratio below {ENTROPY_LIMIT:g} at our largest lr",
        needs="; ".join(filter(None, needs)) if verdict == INCONCLUSIVE or (verdict == HOLDS and control_open) else "",
    )


SHAPED_CLAIMS = [
    Claim(
        "noci_sde_describes_finite",
        "Noci 2023",
        "The covariance SDE describes finite shaped networks at "
        "initialization, and they converge to it as the width grows (depth = T x width)",
        "Wasserstein-1 distance of the terminal correlation law, finite n vs SDE, against what sampling alone "
        "gives (permutation 95% quantile); stopped-path fractions of both sides",
        "agreement 'surprisingly good' at finite size",
        "per block: holds if W1 at the largest n is within the sampling 95% quantile and W1 at the smallest n "
        "above it; fails if W1 at the largest n exceeds it; inconclusive if the smallest n is already within "
        "sampling or the stopped fractions differ beyond sampling (|z| > 1.96); both sides conditioned on finishing",
        "shaped_sde_convergence",
        sde_convergence,
    ),
    Claim(
        "noci_no_rank_collapse",
        "Noci 2023",
        "Shaped attention prevents rank collapse; standard softmax attention "
        "with the same residual drives token correlations to 1",
        "mean pairwise correlation at terminal t",
        "standard -> 1; shaped stays away from 1",
        f"holds if the standard's 95% interval is above {RANK_STANDARD_LIMIT:g} and that of (standard - shaped) "
        f"above {RANK_GAP_LIMIT:g} (thresholds chosen by this project, not the paper); fails if either lies at or "
        "below",
        "shaped_rank_collapse",
        rank_collapse,
    ),
    Claim(
        "noci_entropy_collapse",
        "Noci 2023",
        "In training at large learning rates, standard attention's entropy collapses while shaped attention's does not",
        "lowest layer's final/initial attention entropy at the largest lr, finished runs only, 95% t-interval "
        "over seeds; the same for the temperature-only control (softmax attention at the shaped temperature)",
        "collapse (entropy -> 0) for standard only",
        f"holds if standard's interval is below {ENTROPY_LIMIT:g} and shaped's at or above {ENTROPY_LIMIT:g} {OURS}; "
        f"fails if standard's is at or above {ENTROPY_LIMIT:g} or shaped's below; inconclusive if either straddles "
        f"it or one seed; diverged runs excluded and counted. The temperature-only control, gated alike, does not "
        "change the verdict: where the claim holds, the control keeping its entropy attributes the difference to "
        "the temperature, collapsing to the centring",
        "shaped_entropy",
        entropy_collapse,
    ),
    Claim(
        "noci_glue",
        "Noci 2023",
        "Fine-tuned on GLUE, the shaped model beats the baseline (most at depth 24 on CoLA and RTE)",
        "GLUE scores",
        "shaped > baseline",
        "not evaluated",
        None,
        None,
        not_run_reason="needs pretrained weights and GLUE data, which cannot be fetched in this project",
    ),
]

CLAIMS: list[Claim] = [*SWEEP_CLAIMS, *SHAPED_CLAIMS]


def evaluate(claim: Claim, figure_csvs: dict[str, Path], scale_note: str) -> dict:
    """One row of the claims table; `figure_csvs` maps the figures this config built to their CSV.

    A figure this config does not build: `not run`. A built figure whose data cannot support the
    measure (too few points, an empty table): `inconclusive`, with the reason. Never `does not hold`.
    """
    row = {
        "id": claim.id,
        "paper": claim.paper,
        "statement": claim.statement,
        "metric": claim.metric,
        "paper_value": claim.paper_value,
        "rule": claim.rule,
        "scale_note": scale_note,
        "figure": claim.figure or "",
    }
    blank = {"paper_at_our_scale": "", "interval": "", "noise": "", "what_it_would_take": ""}
    csv = figure_csvs.get(claim.figure)
    if claim.measure is None or csv is None:
        reason = claim.not_run_reason or "this config does not build its figure"
        return {**row, **blank, "our_value": reason, "verdict": NOT_RUN}
    try:
        result = claim.measure(pd.read_csv(csv))
    except (ValueError, KeyError, IndexError, np.linalg.LinAlgError, pd.errors.EmptyDataError) as err:
        # the figure's data cannot support this measure (e.g. too few points): say so, keep going
        return {
            **row,
            **blank,
            "our_value": f"cannot be measured on {csv.name}: {err}",
            "verdict": INCONCLUSIVE,
            "what_it_would_take": "more trained shapes or runs for this figure",
        }
    if result.verdict not in VERDICTS:
        raise ValueError(f"claim {claim.id}: unknown verdict {result.verdict!r}")
    return {
        **row,
        "our_value": result.value,
        "verdict": result.verdict,
        "paper_at_our_scale": result.at_our_scale,
        "interval": result.interval,
        "noise": result.noise,
        "what_it_would_take": result.needs,
    }


def training_range(sweep_tables: list[Path]) -> str:
    """The tokens per non-embedding parameter and the epochs over the train split the sweep runs saw, as a range."""
    frames = [pd.read_csv(path) for path in sweep_tables]
    runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if runs.empty or "epochs" not in runs:
        return ""
    tpp, epochs = runs["tokens_per_parameter"], runs["epochs"]
    return (
        f"{tpp.min():.3g} to {tpp.max():.3g} tokens per non-embedding parameter, "
        f"{epochs.min():.2g} to {epochs.max():.2g} epochs"
    )


def full_scale_note(plan_note: str, sweep_tables: list[Path]) -> str:
    """The plan's scale note, with the range of tokens per parameter and epochs the sweep tables record."""
    measured = training_range(sweep_tables)
    return f"{plan_note}; {measured}" if measured else plan_note


def table(figure_csvs: list[Path], scale_note: str) -> pd.DataFrame:
    """Every claim, evaluated on the given figure CSVs (`results/figures/<id>.csv`)."""
    by_figure = {Path(p).stem: Path(p) for p in figure_csvs}
    return pd.DataFrame([evaluate(c, by_figure, scale_note) for c in CLAIMS], columns=COLUMNS)


def markdown(frame: pd.DataFrame) -> str:
    """The claims table for humans (results/claims.md)."""
    head = (
        "| claim | paper (their scale) | paper at our scale | our value | interval | noise | rule | verdict "
        "| what would decide it |"
    )
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for row in frame.fillna("").astype(str).map(lambda cell: cell.replace("|", "\\|")).itertuples():
        lines.append(
            f"| {row.statement} | {row.paper}: {row.paper_value} | {row.paper_at_our_scale} | {row.our_value} | "
            f"{row.interval} | {row.noise} | {row.rule} | **{row.verdict}** | {row.what_it_would_take} |"
        )
    return "\n".join(lines) + "\n"


def lr_check_summary(frame: pd.DataFrame) -> str:
    """One sentence per shape of the learning-rate check: the best factor and whether the recipe is within 2x."""
    shapes = frame.drop_duplicates(["n_layer", "d_model"])
    said = {
        "yes": "so the recipe is within 2x of the best",
        "no": "so the recipe is not within 2x of the best",
        "unknown": "at the edge of the factors tried, so whether the recipe is within 2x is unknown (widen them)",
    }
    parts = [
        f"L{row.n_layer} d{row.d_model}: best learning rate {row.best_factor:.2g} x the recipe's, "
        f"{said[row.recipe_within_2x]}"
        for row in shapes.itertuples()
    ]
    return "Protocol check, not a paper claim. " + ("; ".join(parts) or "no finished runs") + "."


PROTOCOL_CHECKS = {"lr_check": lr_check_summary}  # figure id -> its caption sentence (no claim reads them)


def rst_text(text: str) -> str:
    """Plain text safe inside an RST paragraph: every inline-markup character (* ` | _ and backslash) escaped."""
    return re.sub(r"([\\*`|_])", r"\\\1", str(text))


def caption(figure: str, frame: pd.DataFrame, scale_note: str, csv: Path | None = None) -> str:
    """The report caption of one figure (RST): what it stands for, what was run, and its verdicts
    (or, for a protocol check, what its CSV shows). Every value is escaped: it reads as written."""
    from depthwidth.plots import FIGURES

    lines = [f"**{figure}** -- {rst_text(FIGURES[figure].title)}.", "", f"*Run at:* {rst_text(scale_note)}.", ""]
    rows = frame[frame["figure"] == figure].fillna("")
    for row in rows.itertuples():
        row = row._replace(**{field: rst_text(value) for field, value in row._asdict().items() if field != "Index"})
        text = f"- *{row.paper}*: {row.statement}. Paper: {row.paper_value}."
        if row.paper_at_our_scale:
            text += f" At our scale: {row.paper_at_our_scale}."
        text += f" Ours: {row.our_value}."
        if row.interval:
            text += f" Interval: {row.interval}."
        if row.noise:
            text += f" Noise: {row.noise}."
        text += f" Rule: {row.rule}. **Verdict: {row.verdict}.**"
        if row.what_it_would_take:
            text += f" What would decide it: {row.what_it_would_take}."
        lines.append(text)
    if figure in PROTOCOL_CHECKS and csv is not None:
        lines.append(rst_text(PROTOCOL_CHECKS[figure](pd.read_csv(csv))))
    elif rows.empty:
        lines.append("No claim reads this figure; it documents the data behind the others.")
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--figure-csv",
        action="append",
        default=[],
        type=Path,
        help="results/figures/<id>.csv of a figure this config built (repeatable)",
    )
    parser.add_argument(
        "--sweep-table", action="append", default=[], type=Path, help="results/tables/sweep_<id>.csv (repeatable)"
    )
    parser.add_argument("--scale-note", required=True, help="what was run, e.g. 'config default: 2 seeds, N 1e5-3e6'")
    parser.add_argument("--out", required=True, type=Path, help="results/claims.csv (claims.md is written beside it)")
    parser.add_argument(
        "--captions-dir", type=Path, default=None, help="write the report caption of each figure here as <figure>.rst"
    )


def run(args: argparse.Namespace) -> int:
    scale_note = full_scale_note(args.scale_note, args.sweep_table)
    frame = table(args.figure_csv, scale_note)
    write_text(args.out, frame.to_csv(index=False))
    write_text(args.out.with_suffix(".md"), markdown(frame))
    if args.captions_dir:
        for csv in args.figure_csv:
            write_text(args.captions_dir / f"{csv.stem}.rst", caption(csv.stem, frame, scale_note, csv))
    for row in frame.itertuples():
        print(f"{row.verdict:>28}  {row.id}: {row.our_value}")
    return 0
