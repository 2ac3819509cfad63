"""Levine read literally: the deeper of two consecutive depths wins once its width passes 3^L.

For depths L -> L + 1 the literal crossover lies where the deeper model's width is 3^(L+1): N ~ 2.0e3
for 1 -> 2, 2.6e4 for 2 -> 3 and 3.2e5 for 3 -> 4 at d_ff = 4 d (`sweep_common.threshold_n`). The design and its
extension to small N (the `literal` block) are read together, over every pair L -> L + 1 of their depths (a pair
of depths further apart, such as 4 -> 6, has no one literal crossover): at each trained target N inside the
range where both depths of a pair have runs, each depth's ln(loss) is read off straight lines in ln N between its
own neighbouring trained shapes (seed means, as in `levine_optimal_depth`), and `depth_gain_pct` is how much
less loss the deeper one has (%). A point is `before` the crossover (N below N_lit / AT_CROSSOVER: the literal reading
says the shallower wins), `past` it (N above AT_CROSSOVER x N_lit: the deeper wins), or `at` it (a tie is
predicted there; neither side reads it). `gain_past_pct` and `gain_before_pct` are the mean gains of each
side over every pair, with bootstrap intervals over seeds (`sweep_common.redraws`); each pair also has its
own side means. Every number is computed at fixed non-embedding N (the papers' count), fixed total
parameters and fixed training FLOPs (`count`, `sweep_common.COUNTS`; at the other counts, the deeper model's
non-embedding N and width at a compared value come through `sweep_common.Conversion`); the figure draws the first.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.plots.sweep_common import (
    COMPARED,
    NOISE_COLUMNS,
    PAPERS_COUNT,
    Conversion,
    at_each_count,
    compared,
    compared_depths,
    conversion,
    error_bars,
    noise_model,
    pair_ns,
    read_table,
    shape_means,
    side_shifts,
    step_gains,
    targets,
    threshold_n,
)

# a point within this factor of N of the literal crossover is `at` it, on neither side: the literal
# reading predicts a tie there, so it tests neither "the shallower wins before" nor "the deeper wins past"
AT_CROSSOVER = 1.5
SIDES = ("before", "past")

# the columns draw() and the claims read; the figure's CSV must have them: one row per pair and N
COLUMNS = [
    "count", "shallow", "deep", "n", "deep_n_papers", "literal_n", "n_over_literal", "deep_width", "side",
    "depth_gain_pct", "depth_gain_ci_low", "depth_gain_ci_high", "pair_gain_before_pct", "pair_gain_past_pct",
    *[f"gain_{side}{suffix}" for side in SIDES for suffix in ("_pct", "_ci_low", "_ci_high")],
    *[f"gain_{side}{suffix}" for side in SIDES for suffix in ("_sys_down", "_sys_up", "_tilt_down", "_tilt_up")],
    "before_points", "past_points", "n_trained_min", "n_trained_max", *NOISE_COLUMNS, "seeds",
]  # fmt: skip


def side_of(n: float, crossover_n: float) -> str:
    """`before`, `at` or `past` the literal crossover, by N."""
    if n < crossover_n / AT_CROSSOVER:
        return "before"
    return "past" if n > crossover_n * AT_CROSSOVER else "at"


def side_means(gain: np.ndarray, sides: np.ndarray) -> tuple[float, float]:
    """Mean gain of the points before the crossover and of those past it (nan for a side with none)."""
    return tuple(float(gain[sides == side].mean()) if (sides == side).any() else math.nan for side in SIDES)


def pair_points(
    means: pd.DataFrame, targets: dict[int, np.ndarray], depths: list[int], ff_ratio: float
) -> pd.DataFrame:
    """Every (pair of depths L -> L + 1 among `depths`, compared N): each pair over its own range, at the targets
    both of its depths were trained at (`targets`: per depth) or, with none shared (another count, where there are
    no targets), at the pair's own trained values (`sweep_common.pair_ns`)."""
    rows = []
    for shallow, deep in ((shallow, deep) for shallow, deep in zip(depths, depths[1:]) if deep == shallow + 1):
        own = means.loc[means["n_layer"].isin([shallow, deep]), COMPARED].to_numpy()
        for n in pair_ns(means, targets, shallow, deep, own)[1]:
            rows.append({"shallow": shallow, "deep": deep, "n": float(n), "literal_n": threshold_n(deep, ff_ratio)})
    return pd.DataFrame(rows, columns=["shallow", "deep", "n", "literal_n"])


def data(design: Path, literal: Path) -> pd.DataFrame:
    """The figure's rows at each count, over every pair of depths L -> L + 1 of the design and the literal block
    (the two sweep tables by path)."""
    runs = pd.concat([read_table(design), read_table(literal)], ignore_index=True)
    return at_each_count(runs, at_fixed, COLUMNS)


def with_deeper_model(points: pd.DataFrame, convert: Conversion) -> pd.DataFrame:
    """The points with the deeper model's non-embedding N and width at each point's compared count (through
    `convert`), its N over the literal crossover's, and the side of the crossover it lies on (`side_of`)."""
    pairs = list(zip(points["n"], points["deep"]))
    points = points.assign(deep_n_papers=[float(convert.n_papers(d, n)) for n, d in pairs])
    return points.assign(
        n_over_literal=points["deep_n_papers"] / points["literal_n"],
        deep_width=[convert.width(d, n) for n, d in pairs],
        side=[side_of(n, c) for n, c in zip(points["deep_n_papers"], points["literal_n"])],
    )


def side_columns(gain: np.ndarray, sides: np.ndarray, boot: np.ndarray) -> dict:
    """Each side's mean gain over the points (`gain_<side>_pct`, `gain` per point, `sides` its side), its bootstrap
    interval at `fits.level()` (95% by default) over the redraws' gains `boot` (draws x points) and its count of
    points."""
    boot_sides = np.array([side_means(g, sides) for g in boot]) if boot.size else np.empty((0, 2))
    columns = {}
    for k, (side, value) in enumerate(zip(SIDES, side_means(gain, sides))):
        finite = boot_sides[:, k][np.isfinite(boot_sides[:, k])]
        low, high = np.quantile(finite, fits.tails()) if finite.size else (math.nan, math.nan)
        columns |= {f"gain_{side}_pct": value, f"gain_{side}_ci_low": low, f"gain_{side}_ci_high": high}
        columns[f"{side}_points"] = int((sides == side).sum())
    return columns


def at_fixed(runs: pd.DataFrame, count: str = PAPERS_COUNT) -> pd.DataFrame:
    """The figure's rows with `count` (a key of COUNTS) held fixed (COLUMNS but `count`), over the depths with two
    trained values of it."""
    runs = compared(runs, count)
    means = shape_means(runs)
    depths = compared_depths(means)
    if len(depths) < 2:
        return pd.DataFrame()
    ff_ratio = float(runs["ff_ratio"].iloc[0])  # the literal block takes the design's ratio
    by_depth = {int(depth): targets(runs_of, count) for depth, runs_of in runs.groupby("n_layer")}
    points = pair_points(means, by_depth, depths, ff_ratio)
    if points.empty:
        return pd.DataFrame()
    points = with_deeper_model(points, conversion(means, count, ff_ratio))
    sides = points["side"].to_numpy()
    gain_at = step_gains(means, points)  # shape means' ln loss -> gains (one layer: the gain itself)
    points["depth_gain_pct"] = gain_at(means["log_loss"].to_numpy())
    noise = noise_model(runs, ["n_layer", "d_model"])
    draws = noise.redraws(means)
    boot = np.array([gain_at(d) for d in draws]) if draws is not None else np.empty((0, 0))
    low, high = np.quantile(boot, fits.tails(), axis=0) if boot.size else (math.nan, math.nan)
    points["depth_gain_ci_low"], points["depth_gain_ci_high"] = low, high
    for _, pair in points.groupby(["shallow", "deep"]):
        before, past = side_means(pair["depth_gain_pct"].to_numpy(), pair["side"].to_numpy())
        points.loc[pair.index, "pair_gain_before_pct"], points.loc[pair.index, "pair_gain_past_pct"] = before, past
    shifts = side_shifts(
        lambda log_loss: side_means(gain_at(log_loss), sides), means, tuple(f"gain_{side}" for side in SIDES)
    )
    return points.assign(
        **side_columns(points["depth_gain_pct"].to_numpy(), sides, boot),
        **shifts,
        n_trained_min=means[COMPARED].min(),
        n_trained_max=means[COMPARED].max(),
        **noise.columns(),
        seeds=int(means["seeds"].min()),
    )


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    from depthwidth.plots.common import legend_outside

    fig, ax = plt.subplots(figsize=(6, 4.5))
    frame = frame[frame["count"] == PAPERS_COUNT]
    for (shallow, deep), pair in frame.groupby(["shallow", "deep"]):
        pair = pair.sort_values("n_over_literal")
        ax.errorbar(
            pair["n_over_literal"],
            pair["depth_gain_pct"],
            yerr=error_bars(pair["depth_gain_pct"], pair["depth_gain_ci_low"], pair["depth_gain_ci_high"]),
            marker="o",
            capsize=3,
            label=f"{shallow} -> {deep} (width 3^{deep} = {fits.levine_threshold_width(deep):.0f} "
            f"at N = {pair['literal_n'].iloc[0]:.2g})",
        )
    ax.axhline(0, color="0.3", lw=0.8)
    ax.axvline(1, color="C3", ls="--", lw=0.8, label="literal crossover: the deeper model's width is 3^L")
    ax.axvspan(1 / AT_CROSSOVER, AT_CROSSOVER, color="C3", alpha=0.08)
    ax.set(
        xscale="log",
        xlabel="N / N at the literal crossover",
        ylabel=f"loss gain of the deeper model (%)\nbootstrap {fits.level_text()}",
        title="the shallower wins before width 3^L (left), the deeper past it (right)",
    )
    ax.title.set_fontsize(9)
    if len(frame):
        legend_outside(ax, "below")
    else:
        ax.text(0.5, 0.5, "no pair of depths trained over a shared range of N", transform=ax.transAxes, ha="center")
    return fig
