"""Levine: the depth of least loss at each N, read from the trained depths, and the depth-inefficient regime.

The grid trains depth x width, so two depths rarely share an N. At each trained N inside the range
where every depth has runs, each depth's loss is read off straight lines in log-log between its
own neighbouring trained shapes (seed means; no fit across the whole range), and the optimum is the
argmin over the trained depths. A bootstrap over seeds (`sweep_common.redraws`) gives its 95% range
and how often it is the same depth. Next to it: the depth Levine's fitted optimum predicts there,
d*(L) = exp(5.039 + 0.0555 L) with N = 12 L d*^2.

Every number is computed three times, at fixed non-embedding N (the papers' count), at fixed total
parameters and at fixed training FLOPs (`count`, `sweep_common.COUNTS`); the figure draws the first.

Levine's contrast (deepening pays below L_th = log3 d and stops paying above it): at every compared
N, each depth is compared with the next shallower trained depth; `depth_gain_pct` is how much less
loss the deeper one has (%), and `side` says where the pair lies: `below` the threshold (the deeper
one's depth < log3 of its own width at that N, so both are), `above` it (the shallower one is
already at or past its own), or `across` it (neither side's test reads it). `gain_below_pct` and
`gain_above_pct` are the mean gains of each side, `contrast_pct` the mean over the N that have both
sides of (mean gain below - mean gain above) at that N, each with its bootstrap interval and its
learning-rate systematic (`*_sys_down`, `*_sys_up`: how far it may move when each shape's loss lies up to its
scan's excess above its loss at its best rate; `excess_pct`: each depth's excess at that N). Read
literally, the threshold says the deeper model wins once its width passes 3^L: the gain below is that
reading's test. Each step also says where its deeper depth starts to win, by that reading (`threshold_n`) and
by Levine's fitted optimum (`fitted_n`), in the compared count: the claims say which of these the compared N
bracket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.plots.sweep_common import (
    COMPARED,
    NO_LINES,
    NOISE_COLUMNS,
    PAPERS_COUNT,
    Conversion,
    Noise,
    at_each_count,
    compared,
    compared_depths,
    conversion,
    crossover_ns,
    error_bars,
    noise_model,
    read_at,
    read_table,
    say_nothing_to_draw,
    shape_means,
    shared_range,
    side_shifts,
    sorted_shapes,
    targets,
)

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "count",
    "n",
    "log_n",
    "depth",
    "width",
    "loss",
    "threshold_depth",
    "above_threshold",
    "optimal_depth",
    "optimal_ci_low",
    "optimal_ci_high",
    "optimal_share",
    "runner_up_gap_pct",
    "excess_pct",
    "levine_depth",
    "levine_trained_depth",
    "side",
    "depth_gain_pct",
    "depth_gain_ci_low",
    "depth_gain_ci_high",
    "threshold_n",
    "fitted_n",
    "growth_share",
    "decline_share",
    *[
        f"{name}{suffix}"
        for name in ("gain_below", "gain_above", "contrast")
        for suffix in ("_pct", "_ci_low", "_ci_high", "_sys_down", "_sys_up")
    ],
    "below_pairs",
    "above_pairs",
    *NOISE_COLUMNS,
    "seeds",
    "depth_step",
]


def gains(table: np.ndarray) -> np.ndarray:
    """100 (1 - L_deeper / L_shallower) of each depth against the next shallower one: shape (ns, depths - 1)."""
    return 100 * (1 - np.exp(np.diff(table, axis=1)))


def side_means(gain: np.ndarray, below: np.ndarray, above: np.ndarray) -> tuple[float, float, float]:
    """Mean gain of the pairs below the threshold, of those above it, and the mean per-N contrast below - above.

    gain, below, above: (ns, depths - 1); a pair that straddles the threshold is on neither side. nan for
    a side with no pair (the contrast: no N with both sides).
    """
    mean = lambda values: float(values.mean()) if values.size else math.nan  # noqa: E731
    both = below.any(axis=1) & above.any(axis=1)
    contrast = [gain[i][below[i]].mean() - gain[i][above[i]].mean() for i in np.flatnonzero(both)]
    return mean(gain[below]), mean(gain[above]), mean(np.asarray(contrast))


def widths_at(convert: Conversion, ns: np.ndarray, depths: list[int]) -> np.ndarray:
    """Each depth's width at each compared count (rows: ns; columns: depths), through `convert`."""
    return np.array([[convert.width(depth, n) for depth in depths] for n in ns])


def papers_ns(convert: Conversion, ns: np.ndarray, depths: list[int]) -> np.ndarray:
    """The non-embedding N at each compared count, which Levine's fit reads: the count itself at the papers'
    count; at another, the geometric mean of the depths' N there."""
    if convert.count == PAPERS_COUNT:
        return ns
    return np.exp(np.column_stack([convert.log_n_papers(depth, ns) for depth in depths]).mean(axis=1))


def compared_ns(targets: np.ndarray, means: pd.DataFrame, low: float, high: float) -> np.ndarray:
    """The values of the compared count at which depths are compared: the design's `targets` (each moved into
    the range every depth was trained over, since a shape's N misses its target by a few percent), or, without
    targets, every trained value inside that range."""
    if low > high:
        return np.array([])
    if len(targets):
        return np.unique(np.clip(targets, low, high))
    return np.unique(means.loc[means[COMPARED].between(low, high), COMPARED].to_numpy())


@dataclass(frozen=True)
class Reading:
    """The depths read at the compared counts: arrays of rows `ns` and columns `depths` (per row: `papers_n`;
    per pair of neighbouring depths: `below`, `above`)."""

    ns: np.ndarray
    depths: list[int]
    log_loss: np.ndarray  # seed-mean ln(loss), straight in ln(count) between each depth's trained shapes
    excess: np.ndarray  # learning-rate excess (%), read off the trained shapes as the loss is
    widths: np.ndarray  # through the Conversion
    papers_n: np.ndarray  # the non-embedding N Levine's fit reads at each compared count (`papers_ns`)
    under: np.ndarray  # the depth lies below its own threshold: depth < log3(width)
    crossovers: np.ndarray  # per pair: where the deeper starts to win, by the threshold and by the fit (`crossover_ns`)
    below: np.ndarray  # the pair lies below the threshold: the deeper one is under it (so both are)
    above: np.ndarray  # the pair lies above it: the shallower one is already at or past its own


def reading(means: pd.DataFrame, ns: np.ndarray, depths: list[int], convert: Conversion) -> Reading:
    """Each depth's loss, excess and width at each of `ns`, and the sides of the threshold they lie on."""
    widths = widths_at(convert, ns, depths)
    under = np.array(depths)[None, :] < np.log(widths) / fits.LEVINE_LN_BASE
    return Reading(
        ns=ns,
        depths=depths,
        log_loss=read_at(means, means["log_loss"].to_numpy(), ns, depths),
        excess=read_at(means, means["excess_pct"].to_numpy(float), ns, depths),
        widths=widths,
        papers_n=papers_ns(convert, ns, depths),
        under=under,
        crossovers=np.array([crossover_ns(*pair, convert) for pair in zip(depths, depths[1:])]).reshape(-1, 2),
        below=under[:, 1:],
        above=~under[:, :-1],
    )


class Redrawn(NamedTuple):
    """The figure's statistics on each bootstrap redraw of the shape means."""

    best: np.ndarray  # (draws, ns): the index of the depth of least loss
    gain: np.ndarray  # (draws, ns, depths - 1): `gains`
    sides: np.ndarray  # (draws, 3): `side_means`


def redrawn(means: pd.DataFrame, noise: Noise, read: Reading) -> Redrawn | None:
    """The statistics on each redraw of the shape means' ln(loss) under `noise`; None without a noise estimate."""
    draws = noise.redraws(means)
    if draws is None:
        return None
    shapes_of = sorted_shapes(means)
    tables = [read_at(shapes_of, d, read.ns, read.depths) for d in draws]
    gain = np.array([gains(t) for t in tables])
    sides = np.array([side_means(g, read.below, read.above) for g in gain])
    return Redrawn(np.array([t.argmin(axis=1) for t in tables]), gain, sides)


def optimum_columns(read: Reading, i: int, boot: Redrawn | None) -> dict:
    """At the compared count `read.ns[i]`: the depth of least loss, the runner-up's gap to it (%), Levine's
    fitted optimal depth at its non-embedding N and the trained depth nearest that, and the optimum's bootstrap
    95% range and the share of redraws that pick it (nan without redraws)."""
    n, log_loss, depths = read.ns[i], read.log_loss[i], np.array(read.depths)
    best, ordered = log_loss.argmin(), np.sort(log_loss)
    levine = fits.levine_optimal_depth_at(float(read.papers_n[i]))
    columns = {
        "n": float(n),
        "log_n": math.log(n),
        "optimal_depth": int(depths[best]),
        "runner_up_gap_pct": 100 * (math.exp(ordered[1] - ordered[0]) - 1),
        "levine_depth": levine,
        "levine_trained_depth": fits.nearest_depth(levine, read.depths),
        "optimal_ci_low": math.nan,
        "optimal_ci_high": math.nan,
        "optimal_share": math.nan,
    }
    if boot is not None:
        chosen = depths[boot.best[:, i]]
        columns["optimal_ci_low"], columns["optimal_ci_high"] = np.quantile(
            chosen, [0.025, 0.975], method="inverted_cdf"
        )
        columns["optimal_share"] = float((boot.best[:, i] == best).mean())
    return columns


def depth_columns(read: Reading, i: int, j: int) -> dict:
    """Depth `read.depths[j]` at the compared count `read.ns[i]`: its width, loss, the depth at which that width
    is the threshold (log3 width), whether it is at or past it, and its learning-rate excess (%)."""
    width = read.widths[i, j]
    return {
        "depth": read.depths[j],
        "width": width,
        "loss": math.exp(read.log_loss[i, j]),
        "threshold_depth": math.log(width) / fits.LEVINE_LN_BASE,
        "above_threshold": not read.under[i, j],
        "excess_pct": read.excess[i, j],
    }


# the shallowest depth's step columns: no shallower depth to gain over
SHALLOWEST = {
    "side": "",
    "depth_gain_pct": math.nan,
    "depth_gain_ci_low": math.nan,
    "depth_gain_ci_high": math.nan,
    "threshold_n": math.nan,
    "fitted_n": math.nan,
}


def step_columns(read: Reading, i: int, j: int, gain: np.ndarray, boot: Redrawn | None) -> dict:
    """Depth `read.depths[j]` against the next shallower at the compared count `read.ns[i]`: the side of the
    threshold the pair lies on, the deeper one's loss gain (%, `gain`: `gains` of the reading), the gain's
    bootstrap 95% range (nan without redraws) and where the deeper one starts to win, in the compared count: by
    the threshold (`threshold_n`) and by Levine's fitted optimum (`fitted_n`)."""
    if j == 0:
        return SHALLOWEST
    below, above = read.below[i, j - 1], read.above[i, j - 1]
    columns = {
        "side": "below" if below else "above" if above else "across",
        "depth_gain_pct": float(gain[i, j - 1]),
        "depth_gain_ci_low": math.nan,
        "depth_gain_ci_high": math.nan,
        "threshold_n": float(read.crossovers[j - 1, 0]),
        "fitted_n": float(read.crossovers[j - 1, 1]),
    }
    if boot is not None:
        columns["depth_gain_ci_low"], columns["depth_gain_ci_high"] = np.quantile(
            boot.gain[:, i, j - 1], [0.025, 0.975]
        )
    return columns


def point_rows(read: Reading, boot: Redrawn | None) -> list[dict]:
    """One row per compared count and depth: the count's optimum, the depth's own columns and its step from the
    next shallower depth."""
    gain = gains(read.log_loss)
    rows = []
    for i in range(len(read.ns)):
        optimum = optimum_columns(read, i, boot)
        rows += [
            optimum | depth_columns(read, i, j) | step_columns(read, i, j, gain, boot) for j in range(len(read.depths))
        ]
    return rows


def trend_shares(boot: Redrawn | None, depths: list[int]) -> dict[str, float]:
    """How often the redraws' optimum at the largest compared count is deeper (`growth_share`) or shallower
    (`decline_share`) than at the smallest; nan without redraws."""
    if boot is None:
        return {"growth_share": math.nan, "decline_share": math.nan}
    first, last = np.array(depths)[boot.best[:, 0]], np.array(depths)[boot.best[:, -1]]
    return {"growth_share": float((last > first).mean()), "decline_share": float((last < first).mean())}


SIDE_STATISTICS = ("gain_below", "gain_above", "contrast")


def side_columns(sides, means: pd.DataFrame, boot_sides: np.ndarray | None) -> dict[str, float]:
    """The side statistics' columns: each one's value (`sides(log_loss)` at the shape means), its bootstrap 95%
    interval over `boot_sides` (draws x 3) and its learning-rate systematic (`side_shifts`)."""
    columns = {}
    for k, (name, value) in enumerate(zip(SIDE_STATISTICS, sides(means["log_loss"].to_numpy()))):
        column = boot_sides[:, k] if boot_sides is not None else np.array([])
        finite = column[np.isfinite(column)]
        low, high = np.quantile(finite, [0.025, 0.975]) if finite.size else (math.nan, math.nan)
        columns |= {f"{name}_pct": value, f"{name}_ci_low": low, f"{name}_ci_high": high}
    return columns | side_shifts(sides, means, SIDE_STATISTICS)


def data(design: Path) -> pd.DataFrame:
    """The figure's rows at each count (the design sweep table by path)."""
    return at_each_count(read_table(design), at_fixed, COLUMNS)


def at_fixed(runs: pd.DataFrame, count: str = PAPERS_COUNT) -> pd.DataFrame:
    """The figure's rows with `count` (a key of COUNTS) held fixed (COLUMNS but `count`): one per compared value
    and depth; none without two depths trained over a common range."""
    runs = compared(runs, count)
    means = shape_means(runs)
    depths = compared_depths(means)
    ns = compared_ns(targets(runs, count), means, *shared_range(means, depths))
    if len(depths) < 2 or ns.size == 0:
        return pd.DataFrame()
    noise = noise_model(runs, ["n_layer", "d_model"])
    read = reading(means, ns, depths, conversion(means, count, float(runs["ff_ratio"].iloc[0])))  # one ff ratio
    boot = redrawn(means, noise, read)
    sides = side_columns(
        lambda log_loss: side_means(gains(read_at(means, log_loss, ns, depths)), read.below, read.above),
        means,
        None if boot is None else boot.sides,
    )
    return pd.DataFrame(point_rows(read, boot)).assign(
        **trend_shares(boot, depths),
        **sides,
        below_pairs=int(read.below.sum()),
        above_pairs=int(read.above.sum()),
        **noise.columns(),
        seeds=int(means["seeds"].min()),
        depth_step=float(np.diff(depths).min()),
    )


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    from depthwidth.plots.common import legend_outside

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 4.5))
    frame = frame[frame["count"] == PAPERS_COUNT]
    if frame.empty:  # one design N: no depth to read at a shared N (its columns are read back untyped)
        for panel in (ax, bx):
            say_nothing_to_draw(panel, f"{NO_LINES}:\nno N where depths compare")
        return fig
    per_n = frame.drop_duplicates("n")
    ax.errorbar(
        per_n["n"],
        per_n["optimal_depth"],
        yerr=error_bars(per_n["optimal_depth"], per_n["optimal_ci_low"], per_n["optimal_ci_high"]),
        fmt="o",
        color="k",
        capsize=3,
        label="depth of least loss (bootstrap 95%)",
    )
    wide = np.geomspace(per_n["n"].min() / 2, per_n["n"].max() * 2, 50)
    ax.plot(
        wide,
        [fits.levine_optimal_depth_at(n) for n in wide],
        "--",
        color="C2",
        label=f"Levine: d* = {fits.LEVINE_OPTIMUM_TEXT}, N = 12 L d*^2",
    )
    # the depth axis fitted to what is drawn (not to every trained depth), its ticks the trained depths within it
    low, high = ax.get_ylim()
    inside = [d for d in sorted(frame["depth"].unique()) if low <= d <= high]
    if len(inside) >= 2:
        ax.set_yticks(inside)
    ax.set(xscale="log", xlabel="non-embedding parameters N", ylabel="optimal depth")
    legend_outside(ax, "below")
    rows = frame[np.isfinite(frame["depth_gain_pct"])]
    series = sorted(rows.groupby(["side", "depth"]), key=lambda item: item[0][1])  # by depth
    for k, ((side, depth), by_depth) in enumerate(series):
        # the depths side by side at each N (a few % of N apart), so that no bar hides another
        dodge = np.exp(0.05 * (k - (len(series) - 1) / 2))
        bx.errorbar(
            by_depth["n"] * dodge,
            by_depth["depth_gain_pct"],
            yerr=error_bars(by_depth["depth_gain_pct"], by_depth["depth_gain_ci_low"], by_depth["depth_gain_ci_high"]),
            fmt={"below": "o", "above": "s", "across": "^"}[side],
            mfc=None if side == "below" else "none",
            capsize=3,
            label=f"depth {depth} ({side} L_th)",
        )
    bx.axhline(0, color="0.3", lw=0.8)
    bx.set(
        xscale="log",
        xlabel="non-embedding parameters N (depths side by side)",
        ylabel="loss gain over next shallower depth (%)",
        title="Levine: deepening pays below L_th = log3(width)\n(filled), not above (squares); across: triangles",
    )
    bx.title.set_fontsize(9)
    if len(rows):
        legend_outside(bx, "below", ncol=2)
    return fig
