"""Kaplan et al. 2020: the shape ablations (Fig. 5), the depth collapse in non-embedding N (Fig. 6) and
the power law L(N) (Eq. 1.5): each a rule over its figure's CSV, and the claims they decide."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.claims.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    OURS,
    Claim,
    Result,
    above,
    below,
    combine,
    exceeds,
    excess_of,
    figure_shift,
    finished_runs,
    heterogeneity,
    interval_text,
    loss_interval,
    noise_text,
    number_text,
    seeds_text,
    within,
)

# ---------------------------------------------------------------- Kaplan Fig. 5: shape ablations

KAPLAN_ASPECT_SPAN = 40.0  # Kaplan Fig. 5: "a factor ~40" of aspect ratio
# a window spanning under half of it (20x) tests a narrower claim: PARTIAL, and never holds ("~40x" read
# as within the factor of 2 a discrete grid of depths leaves; chosen by this project)
ASPECT_LIMIT = 5.0  # Kaplan's "a few percent" read as 5% (chosen by this project)
FF_LIMIT = 2.0  # d_ff/d in [1, 4] "barely matters" read as a spread of 2% (chosen by this project)
HEAD_DIM_LIMIT = 2.0  # head dimension "barely matters": Kaplan's "within ~2%"
# "collapse onto one trend" read as: the depth >= 2 shape means lie within 2% rms of one power law beyond
# the seed noise, the 2% at which this project reads "barely matters" (FF_LIMIT) (chosen by this project)
COLLAPSE_MARGIN = 2.0
# "ratios of 8 and above cost a few percent" is false if the cost is at most 1% (chosen by this project)
FF_COST_MARGIN = 1.0
# the power law's fit quality: rms residual of the runs around it below 2% of the loss (this project's
# gate before the rules were rewritten), and its curvature "not detectable" read as: the 95% interval of
# the sagitta (how far ln L bows from the straight line at the middle of the trained N span) within
# +-1% of the loss, half the rms gate
POWER_LAW_RMS_LIMIT = 2.0
CURVATURE_MARGIN = 1.0


def shape_table(frame: pd.DataFrame, knob: str) -> pd.DataFrame:
    """One row per trained shape of an ablation figure: the knob, the seed mean and the seeds."""
    return finished_runs(frame).drop_duplicates(["n_target", "n_layer", "d_model", knob]).reset_index(drop=True)


SPREAD_DRAWS = 4000  # bootstrap redraws of a selected statistic (spread, best-of)


def redrawn_means(shapes: pd.DataFrame, sd: float, dof: int) -> np.ndarray | None:
    """Bootstrap redraws of each shape's seed-mean increase (%), shape (SPREAD_DRAWS, shapes); None with one seed.
    The pooled sd, or each shape's own where the figure found the shapes' variances to differ."""
    if not dof or not np.isfinite(sd):
        return None
    seeds = shapes["seeds"].to_numpy(float)
    per_shape = "increase_pct_sd" in shapes and bool(shapes["noise_per_shape"].iloc[0])
    own = per_shape & (seeds >= 2)
    shape_sd = np.where(own, shapes["increase_pct_sd"].to_numpy(float) if per_shape else sd, sd)
    dofs = np.where(own, seeds - 1, dof)
    return fits.redraw_means(shapes["increase_pct_mean"], shape_sd / np.sqrt(seeds), dofs, SPREAD_DRAWS)


def spread_of(shapes: pd.DataFrame, sd: float, dof: int, *levels: float) -> tuple[float, ...]:
    """Largest minus smallest seed-mean increase (%) among `shapes`, then the low and high ends of each `level`
    interval (default 0.95) of the true spread: the spread -+ the level's quantile of the noise's own spread
    (the largest difference between two shapes' redrawn errors), the low end at least 0. It holds for every
    pair of shapes at once (Tukey's studentized range, with each shape's own sd where the variances differ):
    the true spread moves from the observed one by at most the noise's spread. (The percentile interval of
    the spread recomputed on redraws around the observed means inherits the spread's upward bias: on pure
    noise, 4 shapes at 5% seed noise, it put [3.5, 18.2]% on a spread of 0.)"""
    levels = levels or (0.95,)
    values = shapes["increase_pct_mean"].to_numpy(float)
    spread = float(values.max() - values.min())
    draws = redrawn_means(shapes, sd, dof)
    if len(shapes) < 2 or draws is None:
        return (spread, *[math.nan] * 2 * len(levels))
    errors = draws - values
    noise = errors.max(axis=1) - errors.min(axis=1)
    ends = [(max(0.0, spread - reach), spread + reach) for reach in (float(np.quantile(noise, q)) for q in levels)]
    return (spread, *[end for pair in ends for end in pair])


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


def basin_window(shapes: pd.DataFrame) -> pd.DataFrame:
    """The shapes of one N in the widest aspect-ratio range of at most KAPLAN_ASPECT_SPAN that holds the best
    (least increase) shape; of equally wide ranges, the one with the most shapes."""
    shapes = shapes.sort_values("aspect_ratio").reset_index(drop=True)
    ratios, best = shapes["aspect_ratio"].to_numpy(), int(shapes["increase_pct_mean"].to_numpy().argmin())
    ranges = [
        (ratios[j] / ratios[i], j - i, i, j)
        for i in range(best + 1)
        for j in range(best, len(shapes))
        if ratios[j] / ratios[i] <= KAPLAN_ASPECT_SPAN * (1 + 1e-9)
    ]
    *_, i, j = max(ranges)
    return shapes.iloc[i : j + 1]


def aspect_basin(frame: pd.DataFrame) -> Result:
    """Per N: the spread of the loss increase within a 40x aspect-ratio window around the best shape (depth >= 2)."""
    limit = ASPECT_LIMIT
    shapes = shape_table(frame[frame["n_layer"] >= 2], "aspect_ratio")
    first = frame.iloc[0]
    sd, dof = first["noise_sd_pct"], int(first["noise_dof"])
    parts, verdicts, spans, worst = [], [], [], None
    tests = shapes["n_target"].nunique()  # one per N: a fail at any one of them needs a Bonferroni interval
    for n, by_n in shapes.groupby("n_target"):
        window = basin_window(by_n)
        span = window["aspect_ratio"].max() / window["aspect_ratio"].min()
        spread, low, high, strict_low, strict_high = spread_of(window, sd, dof, 0.95, 1 - 0.05 / tests)
        shift = fits.spread_shift(window["increase_pct_mean"], excess_of(window))
        what = f"the spread at N={n:.2g}"
        verdict_n = below(*loss_interval(low, high, shift, limit, what), limit)
        if verdict_n == FAILS and not loss_interval(strict_low, strict_high, shift, record=False)[0] > limit:
            verdict_n = INCONCLUSIVE  # above the limit at 95%, not at the 1 - 0.05 / tests every N shares
        verdicts.append(verdict_n)
        spans.append(span)
        parts.append(f"N={n:.2g}: {spread:.2f}% {interval_text(low, high)} over {span:.0f}x ({len(window)} shapes)")
        if worst is None or spread > worst:
            worst = spread
    partial = min(spans) < KAPLAN_ASPECT_SPAN / 2
    verdict = combine(*verdicts)
    if partial and verdict == HOLDS:
        verdict = INCONCLUSIVE  # flat over a narrower window is no evidence of flat over 40x (a spread over it is)
    needs = ""
    if verdict == INCONCLUSIVE:
        needs = _undecided_seeds(frame, worst - limit, f"the spread's distance to {limit:g}%")
    if partial:
        needs = "; ".join(
            filter(
                None,
                [
                    needs,
                    f"depths spanning {KAPLAN_ASPECT_SPAN:g}x of aspect ratio at each N (tested: {min(spans):.0f}x; "
                    "at fixed N the aspect ratio d/L moves as L^-1.5: depths 2 to ~23)",
                ],
            )
        )
    label = "PARTIAL: " if partial else ""
    return Result(
        value=f"{label}largest spread {worst:.2f}%; " + "; ".join(parts),
        verdict=verdict,
        interval="; ".join(p.split(": ", 1)[1].split(" over")[0] for p in parts),
        noise=noise_text(sd, dof, int(shapes["seeds"].max()), *heterogeneity(first)),
        at_our_scale=f"a span of aspect ratios of {min(spans):.0f}x was tested (Kaplan's basin: ~40x)"
        + (" -- partial" if partial else ""),
        needs=needs,
    )


def best_of_interval(top: pd.Series, inside: pd.DataFrame, sd: float, dof: int) -> tuple[float, float]:
    """95% interval of `top`'s increase minus the best (least) of `inside`'s, the best re-chosen on every
    bootstrap redraw (the best of several is a selected statistic)."""
    shapes = pd.concat([top.to_frame().T, inside], ignore_index=True)
    draws = redrawn_means(shapes.astype({"increase_pct_mean": float, "seeds": float}), sd, dof)
    if draws is None:
        return math.nan, math.nan
    return fits.percentile_interval(draws[:, 0] - draws[:, 1:].min(axis=1))


def knob_spread(
    frame: pd.DataFrame, knob: str, low: float, high: float, limit: float, worse_above: float | None = None
) -> Result:
    """Spread of the seed-mean loss increase over knob values in [low, high] (<= `limit`, interval-gated).

    worse_above: also test the paper's second part: the largest knob value >= `worse_above` is worse
    than the best value in [low, high] (interval of the difference above 0). A claim binds the knob's
    arguments with functools.partial, so the rule runs (and can be mutated) when it is measured.
    """
    shapes = shape_table(frame, knob)
    first = frame.iloc[0]
    sd, dof = first["noise_sd_pct"], int(first["noise_dof"])
    inside = shapes[shapes[knob].between(low, high)]
    span = f"all {knob} values" if math.isinf(high) else f"{knob} in [{low:g}, {high:g}]"
    spread, s_low, s_high = spread_of(inside, sd, dof)
    shift = fits.spread_shift(inside["increase_pct_mean"], excess_of(inside))
    spread_interval = loss_interval(s_low, s_high, shift, limit, f"the spread over {span}")
    verdict_a = below(*spread_interval, limit) if len(inside) >= 2 else NOT_RUN
    value = f"(a) spread {spread:.2f}% over {span} ({len(inside)} values)"
    interval = f"(a) {interval_text(s_low, s_high)}"
    verdicts, needs = [verdict_a], []
    if verdict_a == INCONCLUSIVE:
        needs.append(_undecided_seeds(frame, spread - limit, f"the spread's distance to {limit:g}%"))
    if verdict_a == NOT_RUN:
        needs.append(f"train a second {knob} value in [{low:g}, {high:g}] for part (a)")
    if worse_above is not None:
        large = shapes[shapes[knob] >= worse_above]
        if large.empty or inside.empty:
            verdicts.append(NOT_RUN)
            value += f"; (b) no {knob} >= {worse_above:g} trained"
            needs.append(f"train {knob} >= {worse_above:g} for part (b)")
        else:
            top, best = large.loc[large[knob].idxmax()], inside.loc[inside["increase_pct_mean"].idxmin()]
            diff = float(top["increase_pct_mean"] - best["increase_pct_mean"])
            d_low, d_high = best_of_interval(top, inside, sd, dof)
            shift_b = fits.best_of_shift(
                top["increase_pct_mean"], excess_of(top.to_frame().T)[0], inside["increase_pct_mean"], excess_of(inside)
            )
            what_b = f"{knob} = {top[knob]:g} vs the best in [{low:g}, {high:g}]"
            verdicts.append(exceeds(*loss_interval(d_low, d_high, shift_b, FF_COST_MARGIN, what_b), FF_COST_MARGIN))
            value += f"; (b) {knob} = {top[knob]:g} is {diff:+.2f}% vs the best in [{low:g}, {high:g}]"
            interval += f"; (b) {interval_text(d_low, d_high)}"
            if verdicts[-1] == INCONCLUSIVE:
                needs.append(_undecided_seeds(frame, diff, "the (b) difference"))
    return Result(
        value=value,
        verdict=combine(*verdicts),
        interval=interval,
        noise=noise_text(sd, dof, int(shapes["seeds"].max()), *heterogeneity(first)),
        at_our_scale="the paper's statement is about shape, not scale: same thresholds",
        needs="; ".join(needs) if combine(*verdicts) == INCONCLUSIVE else "",
    )


# ---------------------------------------------------------------- Kaplan Fig. 6 and L(N)


def depth_collapse(frame: pd.DataFrame) -> Result:
    """(a) depths >= 2 on one power law in the count of `frame` (the claims give it one count at a time, the
    papers' non-embedding N first) within the seed noise (F test); (b) the 1-layer offset above that line,
    its interval above 0."""
    nonemb = frame.iloc[0]
    sd, dof = nonemb["noise_sd_pct"], int(nonemb["noise_dof"])
    if not np.isfinite(nonemb["scatter_pct"]):  # one design N and one depth >= 2: no line to collapse onto
        return Result(
            value=f"fewer than two shapes of depth >= 2 at distinct N ({int(nonemb['deep_shapes'])}): no line to "
            "collapse onto",
            verdict=INCONCLUSIVE,
            noise=noise_text(sd, dof, int(frame["seeds"].max())),
            at_our_scale="the paper's statement is about parameter counting, not scale",
            needs="at least two shapes of depth >= 2 at distinct N: two design N, or two depths >= 2",
        )
    lack_low, lack_high = nonemb["lof_sd_ci_low"], nonemb["lof_sd_ci_high"]
    lack = loss_interval(lack_low, lack_high, figure_shift(nonemb, "lof"), COLLAPSE_MARGIN, "the lack of fit")
    verdict_a = below(*lack, COLLAPSE_MARGIN) if dof else INCONCLUSIVE
    has_one = np.isfinite(nonemb["offset_1layer_pct"])
    offset_ends = nonemb["offset_ci_low"], nonemb["offset_ci_high"]
    offset = loss_interval(*offset_ends, figure_shift(nonemb, "offset"), COLLAPSE_MARGIN, "the 1-layer offset")
    verdict_b = exceeds(*offset, COLLAPSE_MARGIN) if has_one else NOT_RUN
    verdict = combine(verdict_a, verdict_b)
    value = (
        f"(a) scatter {nonemb['scatter_pct']:.2f}%, F = {number_text(nonemb['lof_f'])} "
        f"(95% quantile {number_text(nonemb['lof_f95'])}), lack of fit beyond the seed noise "
        f"{number_text(nonemb['lof_sd_pct'])}% rms (margin {COLLAPSE_MARGIN:g}%); "
        f"(b) 1-layer offset {number_text(nonemb['offset_1layer_pct'], '+.2f')}%"
    )
    needs = []
    if verdict == INCONCLUSIVE:
        if not has_one:
            needs.append("train 1-layer models for part (b), the 1-layer offset")
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
        if dof and verdict_a == INCONCLUSIVE:
            needs.append(
                f"(a) the lack of fit's interval {interval_text(lack_low, lack_high)} straddles the "
                f"{COLLAPSE_MARGIN:g}% margin: more seeds per shape (its upper end shrinks as the seed noise's "
                "interval does) or more shapes per depth"
            )
        if dof and verdict_b == INCONCLUSIVE:
            shapes = frame.drop_duplicates(["n_layer", "d_model"]).shape[0]
            needs.append(
                seeds_text(sd, nonemb["offset_1layer_pct"], int(frame["seeds"].max()), shapes, "the 1-layer offset")
            )
    return Result(
        value=value,
        verdict=verdict,
        interval=f"(a) lack of fit (% rms) {interval_text(lack_low, lack_high)}; "
        f"(b) 1-layer offset (%) {interval_text(nonemb['offset_ci_low'], nonemb['offset_ci_high'])}",
        noise=noise_text(sd, dof, int(frame["seeds"].max())),
        at_our_scale="the paper's statement is about parameter counting, not scale",
        needs="; ".join(needs),
    )


def power_law(frame: pd.DataFrame) -> Result:
    """alpha with its interval, the fit's rms, the curvature as an equivalence test, Kaplan's two references."""
    first = frame.iloc[0]
    alpha, low, high = first["alpha"], first["alpha_ci_low"], first["alpha_ci_high"]
    c, c_low, c_high = first["curvature"], first["curvature_ci_low"], first["curvature_ci_high"]
    bow, bow_low, bow_high = first["sagitta_pct"], first["sagitta_ci_low"], first["sagitta_ci_high"]
    rms = first["rms_residual_pct"]
    testable = np.isfinite(bow_low)
    bow_interval = loss_interval(bow_low, bow_high, figure_shift(first, "sagitta"), CURVATURE_MARGIN, "the sagitta")
    straight = within(*bow_interval, CURVATURE_MARGIN)
    decreasing = above(low, high, 0.0)
    if straight == FAILS or decreasing == FAILS:
        verdict = FAILS
    elif straight == HOLDS and decreasing == HOLDS and rms < POWER_LAW_RMS_LIMIT:
        verdict = HOLDS
    else:
        verdict = INCONCLUSIVE
    local, tokens = first["kaplan_local_alpha"], first["tokens_per_run"]
    finished = finished_runs(frame)
    groups = int(first["fit_groups"]) if "fit_groups" in first else finished["n_nonembedding"].nunique()

    def covers(ref: float) -> str:
        if not (np.isfinite(low) and np.isfinite(high) and np.isfinite(ref)):
            return "no interval" if np.isfinite(ref) else "cannot be compared with"
        return "includes" if low <= ref <= high else "excludes"

    path = float(first.get("kaplan_path_alpha", math.nan))
    at_scale = (
        f"alpha_N = {first['kaplan_alpha']:.3f} (unlimited data): ours {covers(first['kaplan_alpha'])} it; "
        f"L(N, D) along the runs' own path (each run's N and tokens, D ~ 20 N): {number_text(path, '.3f')}: ours "
        f"{covers(path)} it (at one fixed {tokens:.3g} tokens/run it would be {local:.3f}; their constants "
        "belong to WebText2 and their BPE)"
    )
    needs = []
    if verdict == INCONCLUSIVE:
        half = (high - low) / 2 if np.isfinite(low) else math.nan
        if np.isfinite(half) and decreasing == INCONCLUSIVE:
            d = fits.tokens_for_local_exponent(half, *_n_span(frame))
            needs.append(
                f"the interval's half-width is {half:.3f}: Kaplan's L(N, D) predicts a slope that large at "
                f"~{d:.2g} tokens per run (now {tokens:.3g})"
                if np.isfinite(d)
                else f"the interval's half-width {half:.3f} exceeds even Kaplan's unlimited-data alpha_N"
            )
            needs.append(
                f"or ~{fits.runs_factor_needed(half, alpha):.1f}x the N values (now {groups}) for this alpha "
                f"({alpha:.3f}) to clear 0"
            )
        if not testable:
            needs.append("at least 4 distinct N, with a residual dof, for the curvature test")
        elif straight == INCONCLUSIVE:
            room = CURVATURE_MARGIN - abs(bow)
            needs.append(
                f"the sagitta's interval {interval_text(bow_low, bow_high)}% reaches past +-{CURVATURE_MARGIN:g}%: "
                + (
                    f"~{fits.runs_factor_needed((bow_high - bow_low) / 2, room):.1f}x the N values (now {groups}) to "
                    "place it inside"
                    if room > 0
                    else "its point lies outside, so more N values would show the bow"
                )
            )
        if rms >= POWER_LAW_RMS_LIMIT:
            needs.append(f"an rms residual below {POWER_LAW_RMS_LIMIT:g}% (now {rms:.2f}%): the runs scatter too much")
    return Result(
        value=f"alpha = {alpha:.3f}; curvature {c:+.4f}, a sagitta of {number_text(bow, '+.2f')}% over the N span; "
        f"rms residual {rms:.2f}% ({int(first['fit_points'])} runs at {groups} N)",
        verdict=verdict,
        interval=f"alpha {interval_text(low, high, '.3f')}; curvature {interval_text(c_low, c_high, '+.4f')}; "
        f"sagitta (%) {interval_text(bow_low, bow_high)}",
        noise=noise_text(
            first["noise_sd_pct"],
            int(first["noise_dof"]),
            int(finished.groupby("n_nonembedding").size().max()),
        )
        + "; the intervals are from the fit's residuals over the N values' seed means (the seeds of one N share "
        "its deviation)",
        at_our_scale=at_scale,
        needs="; ".join(needs),
    )


def _n_span(frame: pd.DataFrame) -> tuple[float, float]:
    finished = finished_runs(frame)
    return float(finished["n_nonembedding"].min()), float(finished["n_nonembedding"].max())


CLAIMS = [
    Claim(
        "kaplan_aspect_basin",
        "Kaplan 2020 (Fig. 5)",
        "At fixed non-embedding N, loss is nearly flat over a ~40x range of aspect ratio d/L",
        "largest spread of the seed-mean loss increase (%) within the widest aspect-ratio window of at most 40x "
        "around the best shape (depth >= 2), per N; restated at total parameters and at training FLOPs (each "
        "run's increase over the L fit in that count)",
        "within a few percent over ~40x ((6, 4288) within 3% of (48, 1600))",
        "holds if the 95% interval of the spread (the spread -+ the noise's own, over redraws of the seed means: "
        "every pair at once) lies at or "
        f"below {ASPECT_LIMIT:g}% ('a few "
        f"percent' read as {ASPECT_LIMIT:g}%: threshold chosen by this project, not the paper) at every N; does not "
        f"hold if it lies above (at one N: its 1 - 0.05/k interval, k the N tested); inconclusive if it straddles "
        f"{ASPECT_LIMIT:g}% or one seed; PARTIAL if the widest window of at most 40x around the best shape spans "
        "under 20x, and then never holds (a narrower flat window is no evidence of a 40x one)",
        "kaplan_fig5_aspect",
        aspect_basin,
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "kaplan_ffratio",
        "Kaplan 2020 (Fig. 5)",
        "(a) Feed-forward ratio d_ff/d between 1 and 4 barely matters at fixed N; (b) ratios of 8 and above cost "
        "a few percent",
        "(a) spread of the seed-mean loss increase (%) for d_ff/d in [1, 4]; (b) largest ratio >= 8 vs the best "
        "in [1, 4]",
        "(a) ~0%; (b) a few % worse",
        f"both parts, 95% intervals from redraws of the seed means (pooled seed sd): (a) holds if "
        "the spread's interval is at or below "
        f"{FF_LIMIT:g}% {OURS}, fails above; (b) holds if the difference's interval is above {FF_COST_MARGIN:g}%, "
        f"fails if it lies at or below it (a cost that small is not 'a few percent') {OURS}",
        "kaplan_fig5_ffratio",
        functools.partial(knob_spread, knob="ff_ratio", low=1, high=4, limit=FF_LIMIT, worse_above=8),
        lr_systematic=True,
    ),
    Claim(
        "kaplan_headdim",
        "Kaplan 2020 (Fig. 5)",
        "Head dimension barely matters at fixed N and width",
        "spread of the seed-mean loss increase (%) over head dimensions",
        "within ~2%",
        "holds if the spread's 95% interval (the spread -+ the noise's own, over redraws of the seed means) is at or "
        "below "
        f"{HEAD_DIM_LIMIT:g}%; fails above; inconclusive if it straddles {HEAD_DIM_LIMIT:g}% or one seed",
        "kaplan_fig5_headdim",
        functools.partial(knob_spread, knob="d_head", low=0, high=math.inf, limit=HEAD_DIM_LIMIT),
        lr_systematic=True,
    ),
    Claim(
        "kaplan_depth_collapse",
        "Kaplan 2020 (Fig. 6)",
        "Counted in non-embedding N, depths >= 2 collapse onto one trend; 1-layer models fall above it",
        "(a) lack of fit (% rms beyond the seed noise, from the F statistic) of the depth >= 2 seed means around "
        "one power law in non-embedding N; (b) 1-layer offset (%) from it; restated at total parameters (the "
        "paper's contrast) and at training FLOPs",
        "collapse with non-embedding N (1-layer models apart); depths separate with embeddings",
        f"(a) holds if the 95% interval of the depth >= 2 means' lack of fit beyond the seed noise (% rms, from "
        f"F against F(k-2, seed dof)) lies at or below {COLLAPSE_MARGIN:g}% {OURS}, fails if it lies above, "
        "inconclusive if it straddles it; (b) holds if the offset's 95% t-interval lies above "
        f"{COLLAPSE_MARGIN:g}%, fails if it lies at or below it (no further off the trend than (a) allows the deeper "
        "ones); both needed",
        "kaplan_fig6",
        depth_collapse,
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "kaplan_power_law",
        "Kaplan 2020 (Eq. 1.5)",
        "Loss follows a power law in non-embedding N",
        "exponent alpha_N with 95% CI; rms residual; curvature of ln L in ln N (lack of fit) and its sagitta "
        "over the N span, with 95% CIs",
        "alpha_N = 0.076 (WebText2, their BPE; their constants are not ours)",
        f"holds if alpha's interval is above 0, the runs' rms residual is below {POWER_LAW_RMS_LIMIT:g}% and the "
        f"95% interval of the sagitta (the bow of ln L from a straight line at the middle of the N span) lies "
        f"within +-{CURVATURE_MARGIN:g}% {OURS}; fails if the sagitta's interval lies wholly outside it (not a "
        "power law) or alpha's at or below 0; inconclusive otherwise (a curvature merely not detected is not "
        "a straight line)",
        "kaplan_power_law",
        power_law,
        lr_systematic=True,
    ),
]
