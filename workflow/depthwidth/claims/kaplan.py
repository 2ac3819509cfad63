"""Kaplan et al. 2020 (docs/science.md §1): the shape ablations (Fig. 5), the depth collapse in non-embedding N
(Fig. 6) and the power law L(N) (Eq. 1.5). Each rule reads its figure's rows and returns numbers (`Evidence`); its
margins are arguments, given by its entry in claims/registry.py."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from depthwidth import fits, tilt
from depthwidth.claims.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NO_SHIFT,
    NOT_RUN,
    Evidence,
    Need,
    Noise,
    Part,
    Systematic,
    above,
    below,
    combine,
    excess_of,
    figure_shift,
    figure_tilt,
    need,
    noise_of,
    part,
    reads,
    seeds_need,
    unmeasurable,
    within,
)
from depthwidth.plots.sweep_common import NOISE_COLUMNS, SHAPE_NOISE_COLUMNS
from depthwidth.plots.sweep_common import ok as finished

# ---------------------------------------------------------------- Kaplan Fig. 5: shape ablations

SPREAD_DRAWS = 4000  # bootstrap redraws of a selected statistic (spread, best-of)


def shape_table(frame: pd.DataFrame, knob: str) -> pd.DataFrame:
    """One row per trained shape of an ablation figure: the knob, the seed mean and the seeds."""
    return finished(frame).drop_duplicates(["n_target", "n_layer", "d_model", knob]).reset_index(drop=True)


# the lever each ablation's warm-up tilt acts on (docs/protocol-choices.md, "The warm-up's tilt"): depth for the
# aspect ratio, ln(d_ff / d) for the feed-forward ratio; the head size varies neither, and carries none
TILT_LEVERS = {"aspect_ratio": "n_layer", "ff_ratio": "ff_ratio"}


def increase_tilt(shapes: pd.DataFrame, knob: str, statistic) -> tuple[float, float]:
    """(down, up) of `statistic(increases)` (the shapes' seed-mean increases, %, in order) under the tilt the figure's
    rows carry (`tilt.ROW_COLUMNS`): each shape's increase moved by t ln(lever) for t in that range
    (`fits.tilt_shift`); NO_SHIFT where none is carried or the knob has no lever."""
    lever = TILT_LEVERS.get(knob)
    carried = tilt.range_of_rows(shapes)
    if lever is None or not all(math.isfinite(end) for end in carried):
        return NO_SHIFT
    values = shapes["increase_pct_mean"].to_numpy(float)
    # tilt_shift moves values by lever t / 100: values in % take 100 ln(lever) to move by t ln(lever) %
    return fits.tilt_shift(statistic, values, 100 * np.log(shapes[lever].to_numpy(float)), [carried])


def spread(values: np.ndarray) -> float:
    return float(values.max() - values.min())


def redrawn_means(shapes: pd.DataFrame) -> np.ndarray | None:
    """Bootstrap redraws of each shape's seed-mean increase (%), shape (SPREAD_DRAWS, shapes): t draws at each
    shape's moderated sd and dof (the figure's SHAPE_NOISE_COLUMNS); None without a seed noise (one seed)."""
    sd, dof = (shapes[column].to_numpy(float) for column in SHAPE_NOISE_COLUMNS)
    if not (np.isfinite(sd).all() and (dof > 0).all()):
        return None
    seeds = shapes["seeds"].to_numpy(float)
    return fits.redraw_means(shapes["increase_pct_mean"], sd / np.sqrt(seeds), dof, SPREAD_DRAWS)


def spread_of(shapes: pd.DataFrame, *levels: float) -> tuple[float, ...]:
    """Largest minus smallest seed-mean increase (%) among `shapes`, then the low and high ends of each `level`
    interval (default: `fits.level()`, 0.95 unless set) of the true spread: the spread -+ the level's quantile of
    the noise's own spread (the largest difference between two shapes' redrawn errors), the low end at least 0. It
    holds for every pair of shapes at once (Tukey's studentized range, with each shape's moderated sd):
    the true spread moves from the observed one by at most the noise's spread. (The percentile interval of
    the spread recomputed on redraws around the observed means inherits the spread's upward bias: on pure
    noise, 4 shapes at 5% seed noise, it put [3.5, 18.2]% on a spread of 0.)"""
    levels = levels or (fits.level(),)
    values = shapes["increase_pct_mean"].to_numpy(float)
    spread = float(values.max() - values.min()) if values.size else math.nan
    draws = redrawn_means(shapes) if len(shapes) >= 2 else None
    if draws is None:
        return (spread, *[math.nan] * 2 * len(levels))
    errors = draws - values
    noise = errors.max(axis=1) - errors.min(axis=1)
    ends = [(max(0.0, spread - reach), spread + reach) for reach in (float(np.quantile(noise, q)) for q in levels)]
    return (spread, *[end for pair in ends for end in pair])


def _seeds_need(frame: pd.DataFrame, effect: float, what: str, **at: float | str):
    """What would decide an ablation rule: more seeds, for `what` (`verdicts.seeds_need`)."""
    return seeds_need(noise_of(frame.iloc[0], int(frame["seeds"].max())), effect, what, **at)


def basin_window(shapes: pd.DataFrame, span_limit: float) -> pd.DataFrame:
    """The shapes of one N in the widest aspect-ratio range of at most `span_limit` that holds the best (least
    increase) shape; of equally wide ranges, the one with the most shapes."""
    shapes = shapes.sort_values("aspect_ratio").reset_index(drop=True)
    ratios, best = shapes["aspect_ratio"].to_numpy(), int(shapes["increase_pct_mean"].to_numpy().argmin())
    ranges = [
        (ratios[j] / ratios[i], j - i, i, j)
        for i in range(best + 1)
        for j in range(best, len(shapes))
        if ratios[j] / ratios[i] <= span_limit * (1 + 1e-9)
    ]
    *_, i, j = max(ranges)
    return shapes.iloc[i : j + 1]


@dataclass(frozen=True)
class Window:
    """One N's aspect-ratio window: its spread (%) with its interval (at `fits.level()`), the span of aspect ratios,
    the shapes, and its least and largest aspect ratio."""

    n: float
    spread: float
    low: float
    high: float
    span: float
    shapes: int
    ratio_low: float
    ratio_high: float


@dataclass(frozen=True, kw_only=True)
class AspectBasin(Evidence):
    """Per N, the spread in the widest window around the best shape (`windows`, `parts` in the same order); the
    largest spread; the narrowest span tested against Kaplan's (`span_limit`), PARTIAL under half of it; Kaplan's basin
    (`basin`: its least and largest aspect ratio), which a window reaching outside it does not test."""

    windows: tuple[Window, ...]
    largest: float
    span: float
    span_limit: float
    partial: bool
    basin: tuple[float, float]
    noise: Noise

    @property
    def outside(self) -> tuple[Window, ...]:
        """The windows reaching outside Kaplan's basin: a spread there is no evidence about his basin."""
        return tuple(w for w in self.windows if w.ratio_low < self.basin[0] or w.ratio_high > self.basin[1])


SWEEP_COLUMNS = ("n_target", "n_layer", "d_model", "final_val_loss", "seeds", *NOISE_COLUMNS)
INCREASE = ("increase_pct_mean", *SHAPE_NOISE_COLUMNS)


@reads(*SWEEP_COLUMNS, *INCREASE, "aspect_ratio", "lr_excess_pct", labels=("status",))
def aspect_basin(
    frame: pd.DataFrame,
    systematic: Systematic,
    *,
    limit: float,
    span: float,
    partial_below: float,
    basin: tuple[float, float],
) -> AspectBasin:
    """Per N: the spread of the loss increase within a `span` aspect-ratio window around the best shape (depth >= 2),
    at or below `limit`; a window under `partial_below` wide is PARTIAL and never holds. Each window's aspect ratios
    are recorded against Kaplan's `basin`, which the verdict does not read: it is about the window tested."""
    shapes = shape_table(frame[frame["n_layer"] >= 2], "aspect_ratio")
    if shapes.empty:
        return unmeasurable("no_deep_shapes", need("deep_shapes"))
    first = frame.iloc[0]
    windows, parts = [], []
    tests = shapes["n_target"].nunique()  # one per N: a fail at any one of them needs a Bonferroni interval
    for n, by_n in shapes.groupby("n_target"):
        window = basin_window(by_n, span)
        bonferroni = 1 - (1 - fits.level()) / tests  # the level's miss split over the N tested
        width, low, high, strict_low, strict_high = spread_of(window, fits.level(), bonferroni)
        shift = fits.spread_shift(window["increase_pct_mean"], excess_of(window))
        tilted = increase_tilt(window, "aspect_ratio", spread)
        spread_n = part(
            "spread", width, (low, high), systematic, shift, tilt=tilted, margin=limit, test=below, n=float(n)
        )
        strict_low -= spread_n.down if spread_n.carried else 0.0
        if spread_n.verdict == FAILS and not strict_low > limit:
            spread_n = replace(spread_n, verdict=INCONCLUSIVE)  # above the limit at the level, not at Bonferroni's
        parts.append(spread_n)
        ratio_low, ratio_high = float(window["aspect_ratio"].min()), float(window["aspect_ratio"].max())
        windows.append(Window(float(n), width, low, high, ratio_high / ratio_low, len(window), ratio_low, ratio_high))
    tested = min(w.span for w in windows)
    partial = tested < partial_below
    verdict = combine(*(p.verdict for p in parts))
    if partial and verdict == HOLDS:
        verdict = INCONCLUSIVE  # flat over a narrower window is no evidence of flat over 40x (a spread over it is)
    largest = max(w.spread for w in windows)
    needs = [_seeds_need(frame, largest - limit, "spread_distance", limit=limit)] if verdict == INCONCLUSIVE else []
    if partial:
        needs.append(need("aspect_span", span=span, tested=tested))
    return AspectBasin(
        verdict=verdict,
        parts=tuple(parts),
        needs=tuple(needs),
        windows=tuple(windows),
        largest=largest,
        span=tested,
        span_limit=span,
        partial=partial,
        basin=(float(basin[0]), float(basin[1])),
        noise=noise_of(first, int(shapes["seeds"].max())),
        seeds=int(shapes["seeds"].max()),
    )


def best_of_interval(top: pd.Series, inside: pd.DataFrame) -> tuple[float, float]:
    """The interval (at `fits.level()`) of `top`'s increase minus the best (least) of `inside`'s, the best re-chosen
    on every bootstrap redraw (the best of several is a selected statistic)."""
    shapes = pd.concat([top.to_frame().T, inside], ignore_index=True)
    draws = redrawn_means(shapes.astype({"increase_pct_mean": float, "seeds": float}))
    if draws is None:
        return math.nan, math.nan
    return fits.percentile_interval(draws[:, 0] - draws[:, 1:].min(axis=1))


@dataclass(frozen=True, kw_only=True)
class KnobSpread(Evidence):
    """(a) the spread over knob values in [low, high] (`values` of them); (b) where asked (`worse_above`), the largest
    knob value at or above it (`top`, nan: none trained) against the best in [low, high]."""

    knob: str
    low: float
    high: float
    values: int
    worse_above: float | None
    top: float
    noise: Noise


@reads(*SWEEP_COLUMNS, *INCREASE, "lr_excess_pct", labels=("status",), named_by=("knob",))
def knob_spread(
    frame: pd.DataFrame,
    systematic: Systematic,
    *,
    knob: str,
    low: float,
    high: float,
    limit: float,
    worse_above: float | None = None,
    cost: float = math.nan,
) -> KnobSpread:
    """(a) The spread of the seed-mean loss increase over knob values in [low, high], at or below `limit`; (b) where
    `worse_above` is given, the largest knob value at or above it worse than the best in [low, high] by more than
    `cost` (% of the loss)."""
    shapes = shape_table(frame, knob)
    if shapes.empty:
        return unmeasurable("no_shapes", need("shapes"))
    first = frame.iloc[0]
    inside = shapes[shapes[knob].between(low, high)]
    width, s_low, s_high = spread_of(inside)
    shift = fits.spread_shift(inside["increase_pct_mean"], excess_of(inside))
    tilted = increase_tilt(inside, knob, spread) if len(inside) >= 2 else NO_SHIFT
    where = dict(knob=knob, low=low, high=high)
    spread_part = part(
        "spread", width, (s_low, s_high), systematic, shift, tilt=tilted, margin=limit, test=below, **where
    )
    if len(inside) < 2:
        spread_part = replace(spread_part, verdict=NOT_RUN)
    parts, needs = [spread_part], []
    if spread_part.verdict == INCONCLUSIVE:
        needs.append(_seeds_need(frame, width - limit, "spread_distance", limit=limit))
    if spread_part.verdict == NOT_RUN:
        needs.append(need("second_knob_value", knob=knob, low=low, high=high))
    top = math.nan
    if worse_above is not None:
        large = shapes[shapes[knob] >= worse_above]
        if large.empty or inside.empty:
            needs.append(need("large_knob_value", knob=knob, at_least=worse_above))
        else:
            row, best = large.loc[large[knob].idxmax()], inside.loc[inside["increase_pct_mean"].idxmin()]
            top = float(row[knob])
            diff = float(row["increase_pct_mean"] - best["increase_pct_mean"])
            shift_b = fits.best_of_shift(
                row["increase_pct_mean"], excess_of(row.to_frame().T)[0], inside["increase_pct_mean"], excess_of(inside)
            )
            interval = best_of_interval(row, inside)
            tilted = increase_tilt(
                pd.concat([row.to_frame().T, inside], ignore_index=True), knob, lambda v: float(v[0] - v[1:].min())
            )
            reading = dict(tilt=tilted, margin=cost, test=above, top=top)
            parts.append(part("cost", diff, interval, systematic, shift_b, **reading, **where))
            if parts[-1].verdict == INCONCLUSIVE:
                needs.append(_seeds_need(frame, diff, "cost_difference"))
    verdict = combine(*(p.verdict for p in parts), *([NOT_RUN] if worse_above is not None and len(parts) < 2 else []))
    return KnobSpread(
        verdict=verdict,
        parts=tuple(parts),
        needs=tuple(needs) if verdict == INCONCLUSIVE else (),
        knob=knob,
        low=low,
        high=high,
        values=len(inside),
        worse_above=worse_above,
        top=top,
        noise=noise_of(first, int(shapes["seeds"].max())),
        seeds=int(shapes["seeds"].max()),
    )


# ---------------------------------------------------------------- Kaplan Fig. 6 and L(N)


@dataclass(frozen=True, kw_only=True)
class DepthCollapse(Evidence):
    """(a) the depth >= 2 means' scatter around one power law and its lack of fit beyond the seed noise (F against
    its 95% quantile; parts[1]: the lack of fit, % rms); (b) the 1-layer offset above the line (parts[0])."""

    scatter: float
    f: float
    f95: float
    one_layer: bool
    noise: Noise


COLLAPSE_COLUMNS = ("n_layer", "d_model", "seeds", "noise_sd_pct", "noise_dof", "deep_shapes", "scatter_pct")
FIT_COLUMNS = ("lof_f", "lof_f95", "lof_sd_pct", "lof_sd_ci_low", "lof_sd_ci_high", "lof_sys_down", "lof_sys_up")
OFFSET_COLUMNS = ("offset_1layer_pct", "offset_ci_low", "offset_ci_high", "offset_sys_down", "offset_sys_up")


@reads(*COLLAPSE_COLUMNS, *FIT_COLUMNS, *OFFSET_COLUMNS)
def depth_collapse(frame: pd.DataFrame, systematic: Systematic, *, margin: float) -> DepthCollapse:
    """(a) depths >= 2 on one power law in the count of `frame` (the claims give it one count at a time, the
    papers' non-embedding N first): the lack of fit beyond the seed noise (F test) at or below `margin` % rms;
    (b) the 1-layer offset above that line, above `margin`."""
    if frame.empty:
        return unmeasurable("no_rows", need("deep_line"))
    row = frame.iloc[0]
    noise = noise_of(row, int(frame["seeds"].max()))
    if not np.isfinite(row["scatter_pct"]):  # one design N and one depth >= 2: no line to collapse onto
        return unmeasurable("no_line", need("deep_line"), noise=noise, deep_shapes=int(row["deep_shapes"]))
    lack = _figure_part(row, "lack_of_fit", "lof", "lof_sd_pct", "lof_sd_ci", systematic, margin, below)
    if not noise.dof:
        lack = replace(lack, verdict=INCONCLUSIVE)
    one_layer = bool(np.isfinite(row["offset_1layer_pct"]))
    offset = _figure_part(row, "offset", "offset", "offset_1layer_pct", "offset_ci", systematic, margin, above)
    if not one_layer:
        offset = replace(offset, verdict=NOT_RUN)
    verdict = combine(lack.verdict, offset.verdict)
    needs = []
    if verdict == INCONCLUSIVE:
        if not one_layer:
            needs.append(need("one_layer_models"))
        if noise.dof and lack.verdict == INCONCLUSIVE:
            needs.append(need("lack_of_fit", low=lack.low, high=lack.high, margin=margin))
        if not noise.dof or offset.verdict == INCONCLUSIVE:  # one seed: a second first (the need says so)
            needs.append(seeds_need(noise, offset.value, "offset"))
    return DepthCollapse(
        verdict=verdict,
        parts=(offset, lack),  # the offset first: the part that separates the paper's claim from a plain collapse
        needs=tuple(needs),
        scatter=float(row["scatter_pct"]),
        f=float(row["lof_f"]),
        f95=float(row["lof_f95"]),
        one_layer=one_layer,
        noise=noise,
        seeds=noise.seeds,
    )


def _figure_part(row: pd.Series, name: str, stem: str, value: str, interval: str, systematic, margin, test) -> Part:
    """A statistic the figure computed: its `value` column, its interval (`<interval>_low`, `<interval>_high`) and its
    learning-rate systematic (`<stem>_sys_down`, `<stem>_sys_up`) and warm-up tilt (`<stem>_tilt_down`, ...), read by
    `test` against `margin`."""
    ends = (row[interval + "_low"], row[interval + "_high"])
    shifts = figure_shift(row, stem), figure_tilt(row, stem)
    return part(name, row[value], ends, systematic, shifts[0], tilt=shifts[1], margin=margin, test=test)


@dataclass(frozen=True, kw_only=True)
class PowerLaw(Evidence):
    """alpha with its interval (parts: the sagitta, alpha, the rms residual), the curvature of ln L in ln N with its
    interval, the fit's points and N values, and Kaplan's exponents at our scale: alpha_N (unlimited data), along the
    runs' own path (each run's N and tokens) and at one fixed token count per run, and whether alpha's interval holds
    the first two (`covers`)."""

    curvature: float
    curvature_low: float
    curvature_high: float
    points: int
    groups: int
    n_low: float
    n_high: float
    tokens: float
    kaplan_alpha: float
    kaplan_path_alpha: float
    kaplan_local_alpha: float
    covers_alpha: bool | None
    covers_path: bool | None
    # Eq. 1.5's local exponent along a path with D proportional to N is a weighted mean of alpha_N and alpha_D, so it
    # lies in [alpha_N, alpha_D] whatever the constants: whether alpha's interval meets that range
    meets_path_range: bool | None
    noise: Noise


def covers(statistic: Part, reference: float) -> bool | None:
    """Whether `statistic`'s 95% interval holds `reference`; None without an interval or a finite reference."""
    if not (np.isfinite(statistic.low) and np.isfinite(statistic.high) and np.isfinite(reference)):
        return None
    return bool(statistic.low <= reference <= statistic.high)


def meets(statistic: Part, span: tuple[float, float]) -> bool | None:
    """Whether `statistic`'s 95% interval meets the closed range `span`; None without an interval."""
    if not (np.isfinite(statistic.low) and np.isfinite(statistic.high)):
        return None
    return bool(statistic.low <= span[1] and statistic.high >= span[0])


def _sagitta_need(row: pd.Series, sagitta: Part, margin: float, groups: int) -> Need:
    """What would place an undecided sagitta inside +-`margin`: the room on its point's side less its own systematic
    reaching toward the margin (read from the figure whether or not the reading carries it: seeds and N values
    shrink the interval, not that), and the factor of N values that reaches it (`fits.groups_factor_needed`; nan
    where no room is left)."""
    toward = figure_shift(row, "sagitta")[0 if sagitta.value < 0 else 1]
    toward = toward if math.isfinite(toward) else 0.0
    room = margin - abs(sagitta.value) - toward
    half = (sagitta.high - sagitta.low) / 2
    factor = fits.groups_factor_needed(half, room, groups, parameters=3) if room > 0 else math.nan
    ends = dict(low=sagitta.low, high=sagitta.high, margin=margin, value=sagitta.value)
    return need("sagitta", **ends, toward=toward, room=room, factor=factor, groups=groups)


@reads(
    "n_nonembedding", "final_val_loss", "alpha", "alpha_ci_low", "alpha_ci_high", "fit_points",
    "fit_groups", "rms_residual_pct", "curvature", "curvature_ci_low", "curvature_ci_high", "sagitta_pct",
    "sagitta_ci_low", "sagitta_ci_high", "sagitta_sys_down", "sagitta_sys_up", "noise_sd_pct", "noise_dof",
    "tokens_per_run", "kaplan_alpha", "kaplan_local_alpha", "kaplan_path_alpha", labels=("status",),
)  # fmt: skip
def power_law(frame: pd.DataFrame, systematic: Systematic, *, rms_limit: float, curvature: float) -> PowerLaw:
    """alpha's interval above 0, the runs' rms residual below `rms_limit` %, and the sagitta (how far ln L bows from a
    straight line at the middle of the N span) within +-`curvature` % of the loss (an equivalence test)."""
    ok = finished(frame)
    if ok.empty:
        return unmeasurable("no_finished_runs", need("n_values"))
    row = frame.iloc[0]
    sagitta = _figure_part(row, "sagitta", "sagitta", "sagitta_pct", "sagitta_ci", systematic, curvature, within)
    alpha = part("alpha", row["alpha"], (row["alpha_ci_low"], row["alpha_ci_high"]), margin=0.0, test=above, unit="")
    rms = float(row["rms_residual_pct"])
    smooth = Part("rms", rms, margin=rms_limit, verdict=HOLDS if rms < rms_limit else INCONCLUSIVE)
    if FAILS in (sagitta.verdict, alpha.verdict):
        verdict = FAILS
    elif sagitta.verdict == alpha.verdict == smooth.verdict == HOLDS:
        verdict = HOLDS
    else:
        verdict = INCONCLUSIVE
    n_low, n_high = float(ok["n_nonembedding"].min()), float(ok["n_nonembedding"].max())
    seeds = int(ok.groupby("n_nonembedding").size().max())
    groups, tokens = int(row["fit_groups"]), float(row["tokens_per_run"])
    needs = []
    if verdict == INCONCLUSIVE:
        half = (alpha.high - alpha.low) / 2 if np.isfinite(alpha.low) else math.nan
        if np.isfinite(half) and alpha.verdict == INCONCLUSIVE:
            needs.append(
                need("alpha_tokens", half=half, tokens=fits.tokens_for_local_exponent(half, n_low, n_high), now=tokens)
            )
            factor = fits.groups_factor_needed(half, abs(alpha.value), groups, parameters=2)  # a line's slope
            needs.append(need("alpha_n_values", factor=factor, groups=groups, alpha=alpha.value))
        if not np.isfinite(sagitta.low):
            needs.append(need("curvature_test"))
        elif sagitta.verdict == INCONCLUSIVE:
            needs.append(_sagitta_need(row, sagitta, curvature, groups))
        if rms >= rms_limit:
            needs.append(need("rms", rms=rms, limit=rms_limit))
    return PowerLaw(
        verdict=verdict,
        parts=(sagitta, alpha, smooth),
        needs=tuple(needs),
        curvature=float(row["curvature"]),
        curvature_low=float(row["curvature_ci_low"]),
        curvature_high=float(row["curvature_ci_high"]),
        points=int(row["fit_points"]),
        groups=groups,
        n_low=n_low,
        n_high=n_high,
        tokens=tokens,
        kaplan_alpha=float(row["kaplan_alpha"]),
        kaplan_path_alpha=float(row["kaplan_path_alpha"]),
        kaplan_local_alpha=float(row["kaplan_local_alpha"]),
        covers_alpha=covers(alpha, float(row["kaplan_alpha"])),
        covers_path=covers(alpha, float(row["kaplan_path_alpha"])),
        meets_path_range=meets(alpha, (fits.KAPLAN_ALPHA_N, fits.KAPLAN_ALPHA_D)),
        noise=Noise(float(row["noise_sd_pct"]), int(row["noise_dof"]), seeds),
        seeds=seeds,
    )
