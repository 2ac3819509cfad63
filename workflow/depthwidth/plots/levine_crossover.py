"""Levine: log(width where the deeper of two depths starts to win) vs depth.

Per depth, log loss is fitted against log N over the shape means; two depths cross where their
lines meet. Every pair of depths is a row: pairs where the deeper never overtakes have
`crosses` False and no width, rather than being dropped. Intervals come from a bootstrap over
seeds (`sweep_common.redraws`): the width interval of each pair, the fraction of redraws in which
it crosses at all, and the slope of log crossover width against depth over the consecutive
in-range pairs. A pair whose bootstrap range misses its own point estimate (an unstable crossover
of nearly parallel lines) has `ci_holds_cross` False and is drawn without an error bar; with no
crossover of consecutive depths inside the trained N the axes say so. Theory: log d = L ln 3 at
the threshold L_th = log3 d (slope 1.099 per layer); under Levine's fitted optimum
d*(L) = exp(5.039 + 0.0555 L) the deeper model starts to win where L*(N) passes the pair's midpoint
(`fitted_n`), at its own width there (`fitted_log_width`): a slope (`fitted_slope`, over the same
pairs): 0.03-0.11 per layer between neighbouring pairs of depths 1-8, 0.059 over the default's
five, which is not the 0.0555 of d*(L) itself (the optimal width, not the deeper model's width at a
crossover) but is as far from ln 3.

Every row is computed three times, at fixed non-embedding N (the papers' count), at fixed total
parameters and at fixed training FLOPs (`count`, `sweep_common.COUNTS`); the figure draws the first.
At another count the crossover lies at a value of that count, and the deeper model's width there, and
each threshold's value of that count, come through `sweep_common.Conversion`.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits, shapes
from depthwidth.plots.sweep_common import (
    COMPARED,
    NO_LINES,
    NOISE_COLUMNS,
    PAPERS_COUNT,
    Conversion,
    at_each_count,
    compared,
    conversion,
    crossover_ns,
    depth_rows,
    error_bars,
    holds_point,
    lines_from_means,
    noise_model,
    ok,
    read_table,
    say_nothing_to_draw,
    shape_means,
    shared_range,
    tilt_columns,
)

THRESHOLD_SLOPE = fits.LEVINE_LN_BASE  # per layer: the crossover at width 3^L

# one row per pair of depths
PAIR_COLUMNS = [
    "shallow",
    "deep",
    "consecutive",
    "crosses",
    "n_cross",
    "width_cross",
    "log_width_cross",
    "width_ci_low",
    "width_ci_high",
    "cross_fraction",
    "in_range",
    "threshold_n",
    "fitted_n",
    "fitted_log_width",
]
# the columns draw() and the claims read; the figure's CSV must have them: each pair, then the fit
COLUMNS = [
    *PAIR_COLUMNS, "ci_holds_cross", "used_in_fit", "slope", "intercept", "slope_ci_low", "slope_ci_high",
    "slope_defined_fraction", "slope_sys_down", "slope_sys_up", "slope_tilt_down", "slope_tilt_up",
    *NOISE_COLUMNS, "seeds",
    "fitted_slope", "n_trained_min", "n_trained_max", "count",
]  # fmt: skip


def log_width_at(convert: Conversion, depth: int):
    """ln(compared count) -> ln(width) of a model of `depth` (nan where no finite width has that count)."""
    return lambda log_n: math.log(convert.width(depth, math.exp(log_n)))


def crossing_log_n(shallow: fits.Line, deep: fits.Line) -> float:
    """ln(compared count) where the deeper depth's line overtakes the shallower's; nan if it never does, or at a
    count no float can hold."""
    log_n = fits.crossover_log_n(shallow, deep)
    return math.nan if log_n is None or abs(log_n) > 700 else log_n


def log_width_at_crossover(shallow: fits.Line, deep: fits.Line, log_width_of) -> float:
    """ln(width of the deeper model) where it overtakes the shallower (`log_width_of`: ln N -> its ln width);
    nan if it never does."""
    log_n = crossing_log_n(shallow, deep)
    return log_width_of(log_n) if math.isfinite(log_n) else math.nan


def bootstrap_log_widths(means: pd.DataFrame, draws: np.ndarray | None, pairs: list, log_width_of: dict) -> np.ndarray:
    """ln(crossover width) of each pair (columns; nan where it never crosses) on each redraw of the shape means'
    ln(loss) (rows; none without `draws`)."""
    boot = np.full((0 if draws is None else len(draws), len(pairs)), np.nan)
    rows = depth_rows(means)
    for b in range(len(boot)):
        redrawn = lines_from_means(means, draws[b], rows)
        boot[b] = [log_width_at_crossover(redrawn[s], redrawn[d], log_width_of[d]) for s, d in pairs]
    return boot


def width_interval(log_widths: np.ndarray) -> tuple[float, float]:
    """The range of a crossover width over its redraws' ln widths at `fits.level()` (95% by default): a redraw
    that never crosses counts as a crossing beyond any N, so an end it reaches is inf; nan, nan without redraws."""
    if not len(log_widths):
        return math.nan, math.nan
    ends = np.quantile(np.where(np.isfinite(log_widths), log_widths, np.inf), fits.tails(), method="inverted_cdf")
    return tuple(math.exp(end) if np.isfinite(end) else math.inf for end in ends)


def predicted_columns(shallow: int, deep: int, convert: Conversion) -> dict[str, float]:
    """Where the pair's crossover lies by the threshold (the deeper model at width 3^L: `threshold_n`) and by
    Levine's fitted optimum (L* at the pair's midpoint: `fitted_n`), in the compared count, and the deeper model's
    ln width at the fitted one (`fitted_log_width`)."""
    threshold, fitted = crossover_ns(shallow, deep, convert)
    fitted_papers = fits.levine_fitted_crossover_n(shallow, deep)  # non-embedding N
    return {
        "threshold_n": threshold,
        "fitted_n": fitted,
        "fitted_log_width": math.log(shapes.width_for_n(fitted_papers, deep, convert.ff_ratio)),
    }


def pair_row(pair: tuple[int, int], depths: list[int], lines: dict, log_width_of, boot: np.ndarray, finished) -> dict:
    """A pair's measured columns (PAIR_COLUMNS but the predicted ones): where the deeper depth overtakes (its
    compared count, the deeper model's width there, whether inside the range both depths' `finished` runs span), the 95%
    range of that width over the redraws `boot` and the share of them that cross."""
    shallow, deep = pair
    log_n = crossing_log_n(lines[shallow], lines[deep])
    log_width = log_width_of(log_n) if math.isfinite(log_n) else math.nan
    crosses = bool(np.isfinite(log_width))
    n = math.exp(log_n) if crosses else math.nan
    low, high = width_interval(boot)
    low_n, high_n = shared_range(finished, pair)
    return {
        "shallow": shallow,
        "deep": deep,
        "consecutive": deep == depths[depths.index(shallow) + 1],
        "crosses": crosses,
        "n_cross": n,
        "width_cross": math.exp(log_width) if crosses else math.nan,
        "log_width_cross": log_width,
        "width_ci_low": low,
        "width_ci_high": high,
        "cross_fraction": float(np.isfinite(boot).mean()) if len(boot) else math.nan,
        "in_range": crosses and low_n <= n <= high_n,
    }


def slope_of(deeps, log_widths) -> float:
    """Slope of log crossover width against depth; nan if a pair does not cross."""
    log_widths = np.asarray(log_widths, dtype=float)
    return fits.fit_line(deeps, log_widths).slope if np.isfinite(log_widths).all() else math.nan


def used_slope(means: pd.DataFrame, log_loss: np.ndarray, used: pd.DataFrame, log_width_of: dict) -> float:
    """The crossover slope over the `used` pairs at shape means `log_loss` (the learning-rate systematic moves
    them: `fits.systematic_shift`, first order, the crossings being smooth in the lines)."""
    lines = lines_from_means(means, log_loss)
    widths = [
        log_width_at_crossover(lines[s], lines[d], log_width_of[d]) for s, d in zip(used["shallow"], used["deep"])
    ]
    return slope_of(used["deep"], np.asarray(widths, dtype=float))


def slope_columns(used: pd.DataFrame, boot: np.ndarray, slope_at, means: pd.DataFrame) -> dict[str, float]:
    """The slope of ln(crossover width) against depth over the `used` pairs (nan under two), its bootstrap interval
    over `boot` (draws x used pairs' ln widths) and how often it is defined there, and its learning-rate systematic
    and warm-up tilt (`slope_at(log_loss)`, at the shape means' moved log losses)."""
    columns = dict.fromkeys(
        ("slope", "intercept", "slope_ci_low", "slope_ci_high", "slope_sys_down", "slope_sys_up", "slope_tilt_down",
         "slope_tilt_up"), math.nan,
    )  # fmt: skip
    columns["slope_defined_fraction"] = math.nan
    if len(used) < 2:
        return columns
    line = fits.fit_line(used["deep"], used["log_width_cross"])
    columns["slope"], columns["intercept"] = line.slope, line.intercept
    columns["slope_sys_down"], columns["slope_sys_up"] = fits.systematic_shift(
        slope_at, means["log_loss"].to_numpy(), means["excess_pct"].to_numpy(float) / 100
    )
    columns |= tilt_columns("slope", slope_at, means)
    if len(boot):
        slopes = np.array([slope_of(used["deep"], draw) for draw in boot])
        finite = slopes[np.isfinite(slopes)]
        columns["slope_defined_fraction"] = finite.size / slopes.size
        if finite.size:
            columns["slope_ci_low"], columns["slope_ci_high"] = np.quantile(finite, fits.tails())
    return columns


def data(design: Path) -> pd.DataFrame:
    """The figure's rows at each count (the design sweep table by path)."""
    return at_each_count(read_table(design), at_fixed, COLUMNS)


def fitted_slope(frame: pd.DataFrame, used: pd.DataFrame) -> float:
    """The slope against depth of the deeper model's ln width at the fitted optimum's crossover, over the pairs the
    measured slope uses (all consecutive ones while fewer than two cross in range): Levine's fit's prediction of
    the measured slope."""
    reference = used if len(used) >= 2 else frame[frame["consecutive"]]
    return fits.fit_line(reference["deep"], reference["fitted_log_width"]).slope if len(reference) >= 2 else math.nan


def with_fit(frame: pd.DataFrame, boot: np.ndarray, pairs: list, means: pd.DataFrame, log_width_of: dict):
    """The pairs' rows with whether each width's range holds it (`ci_holds_cross`), which pairs the slope uses
    (`used_in_fit`: consecutive depths crossing in range), the slope's columns (`slope_columns`, over the redraws
    `boot`, one column per pair) and the fitted optimum's slope over the same pairs (`fitted_slope`)."""
    with np.errstate(divide="ignore"):  # a width interval from 0: ln 0 = -inf holds any point
        log_ci = np.log(frame["width_ci_low"]), np.log(frame["width_ci_high"])
    frame = frame.assign(
        ci_holds_cross=frame["crosses"] & holds_point(frame["log_width_cross"], *log_ci),
        used_in_fit=(frame["consecutive"] & frame["in_range"]).astype(bool),
    )
    used = frame[frame["used_in_fit"]]
    columns = slope_columns(
        used,
        boot[:, [pairs.index(p) for p in zip(used["shallow"], used["deep"])]],
        lambda log_loss: used_slope(means, log_loss, used, log_width_of),
        means,
    )
    return frame.assign(fitted_slope=fitted_slope(frame, used), **columns)


def at_fixed(runs: pd.DataFrame, count: str = PAPERS_COUNT) -> pd.DataFrame:
    """The figure's rows with `count` (a key of COUNTS) held fixed (COLUMNS but `count`): one per pair of depths."""
    runs = compared(runs, count)
    means, noise = shape_means(runs), noise_model(runs, ["n_layer", "d_model"])
    lines = lines_from_means(means)
    convert = conversion(means, count, float(runs["ff_ratio"].iloc[0]))  # one ratio for the whole grid
    depths = sorted(lines)
    log_width_of = {depth: log_width_at(convert, depth) for depth in depths}
    pairs = list(itertools.combinations(depths, 2))
    boot = bootstrap_log_widths(means, noise.redraws(means), pairs, log_width_of)
    finished = ok(runs)
    rows = [
        pair_row(pair, depths, lines, log_width_of[pair[1]], boot[:, j], finished) | predicted_columns(*pair, convert)
        for j, pair in enumerate(pairs)
    ]
    frame = with_fit(pd.DataFrame(rows, columns=PAIR_COLUMNS), boot, pairs, means, log_width_of)
    trained_range = {"n_trained_min": float(runs[COMPARED].min()), "n_trained_max": float(runs[COMPARED].max())}
    seeds = int(means["seeds"].min()) if len(means) else 0
    return frame.assign(**noise.columns(), seeds=seeds, **trained_range)[COLUMNS[:-1]]


def axis_span(frame: pd.DataFrame, depths: np.ndarray) -> tuple[float, float]:
    """The ln-width span the figure's axis shows: the threshold line, the fitted-optimum line, the fitted crossovers
    and the other crossovers within a quarter of their span beyond them; one farther out (read far outside the
    trained N) is marked at the edge."""
    consecutive = frame.loc[frame["consecutive"], "fitted_log_width"]
    used = frame.loc[frame["used_in_fit"] & frame["crosses"], "log_width_cross"]
    core = np.concatenate([THRESHOLD_SLOPE * depths, consecutive, used]).astype(float)
    core = core[np.isfinite(core)]
    reach = 0.25 * (core.max() - core.min())
    others = frame.loc[frame["crosses"], "log_width_cross"].to_numpy(float)
    near = others[(others >= core.min() - reach) & (others <= core.max() + reach)]
    shown = np.concatenate([core, near])
    return float(shown.min()), float(shown.max())


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    from depthwidth.plots.common import legend_outside

    frame = frame[frame["count"] == PAPERS_COUNT]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    if frame.empty:  # one design N: no line per depth (its columns are read back untyped)
        say_nothing_to_draw(ax, f"{NO_LINES}:\nno crossover to read")
        return fig
    depths = np.array(sorted(set(frame["deep"]) | set(frame["shallow"])), dtype=float)
    low, high = axis_span(frame, depths)
    pad = 0.06 * (high - low)  # marks beyond the span sit in the margins, a pad apart
    top, bottom = high + pad, low - pad
    crossing = frame[frame["crosses"]]
    for used, style in (
        (False, dict(color="0.6", ms=4, label="other pairs, or outside the trained N")),
        (True, dict(color="k", ms=6, label="consecutive depths, in range (fitted)")),
    ):
        pairs = crossing[(crossing["used_in_fit"] == used) & crossing["log_width_cross"].between(low, high)]
        ci_low, ci_high = np.log(pairs["width_ci_low"].clip(lower=1e-300)), np.log(pairs["width_ci_high"])
        bars = error_bars(pairs["log_width_cross"], ci_low, ci_high)  # none where the range misses the point
        ax.errorbar(pairs["deep"], pairs["log_width_cross"], yerr=bars, fmt="o", capsize=3, **style)
    off = crossing[~crossing["log_width_cross"].between(low, high)]
    above, below = off[off["log_width_cross"] > high], off[off["log_width_cross"] < low]
    off_scale = dict(facecolor="none", color="0.5")
    if len(above):
        label = f"other pairs, off the scale above ({len(above)})"
        ax.scatter(above["deep"], [top] * len(above), marker="^", label=label, **off_scale)
        top += pad
    if len(below):
        label = f"other pairs, off the scale below ({len(below)})"
        ax.scatter(below["deep"], [bottom] * len(below), marker="v", label=label, **off_scale)
        bottom -= pad
    x = np.linspace(depths.min(), depths.max(), 20)
    ax.plot(
        x, THRESHOLD_SLOPE * x, ls="--", color="C3", label=f"threshold: ln d = L ln 3 (slope {fits.LEVINE_SLOPE_TEXT})"
    )
    consecutive = frame[frame["consecutive"]].sort_values("deep")
    ax.plot(
        consecutive["deep"],
        consecutive["fitted_log_width"],
        ls="--",
        marker=".",
        color="C2",
        label="fitted optimum d*(L): crossover where L* passes the midpoint "
        f"(slope {frame['fitted_slope'].iloc[0]:.3f})",
    )
    never = frame[~frame["crosses"]]
    if len(never):
        ax.scatter(
            never["deep"],
            [top] * len(never),
            marker="^",
            color="C1",
            zorder=5,
            label=f"never overtakes ({len(never)} pairs)",
        )
    if np.isfinite(frame["slope"].iloc[0]):
        first = frame.iloc[0]
        x = np.array([frame["deep"].min(), frame["deep"].max()])
        ax.plot(
            x,
            first["intercept"] + first["slope"] * x,
            color="C0",
            label=f"fit: {first['slope']:.3f} [{first['slope_ci_low']:.3f}, {first['slope_ci_high']:.3f}] per layer",
        )
    if not frame["used_in_fit"].any():
        note = "no pair of depths crosses" if crossing.empty else "no crossover of consecutive depths"
        ax.set_title(f"{note} inside the trained N", fontsize=9, color="0.3")  # above the data, not over it
    ax.set_ylim(bottom, top + (pad if len(never) else 0))
    ax.set(xlabel="depth of the deeper model", ylabel="ln(width of the deeper model at crossover)")
    legend_outside(ax, "below")
    return fig
