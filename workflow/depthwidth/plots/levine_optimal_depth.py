"""Levine: the depth of least loss at each N, read from the trained depths, and the depth-inefficient regime.

The grid trains depth x width, so two depths rarely share an N. At each trained N inside the range
where every depth has runs, each depth's loss is read off straight lines in log-log between its
own neighbouring trained shapes (seed means; no fit across the whole range), and the optimum is the
argmin over the trained depths. A bootstrap over seeds (`sweep_common.redraws`) gives its 95% range
and how often it is the same depth. Next to it: the depth Levine's fitted optimum predicts there,
d*(L) = exp(5.039 + 0.0555 L) with N = 12 L d*^2.

Every number is computed three times, at fixed non-embedding N (the papers' count), at fixed total
parameters and at fixed training FLOPs (`count`, `sweep_common.COUNTS`); the figure draws the first.

Levine's contrast (deepening pays below L_th = log3 d and stops paying above it) is read on rows of its own
(`row` = `step`; the optimum's rows are `optimum`): each pair of neighbouring trained depths (L, L') is compared
over its own range of N (the design targets both were trained at, moved into the range both were trained over:
`sweep_common.pair_ns`), never over the range every depth shares, which a depth trained over a narrower range
would move for every pair. `layer_gain_pct` is the deeper one's gain per added layer, 100 (1 - (L_deep /
L_shallow)^(1 / (L' - L))) (`sweep_common.step_gains`), so a step of one layer and one of eight read on one scale.
`side` says where the pair lies, with the literal row's buffer (`levine_literal.side_of`, a factor AT_CROSSOVER in
N around the N where a depth's width is 3^L): `below` the threshold (the deeper one's N that factor past its own
threshold N: it lies under its threshold, so the wider shallower one does too), `above` it (the shallower one's N
that factor short of its own: it is past its threshold, so the narrower deeper one is too), or `across` (a pair
that straddles a threshold or lies within the buffer of one: neither side's test reads it; `across_pairs` counts
them). `gain_below_pct` and `gain_above_pct` are the mean gains per layer of each side, `contrast_pct` the mean over
the design N (the key each comparison stands for) that have both sides of (mean gain below - mean gain above) at
that N, each with its bootstrap interval and its learning-rate systematic (`*_sys_down`, `*_sys_up`: how far it may
move when each shape's loss lies up to its scan's excess above its loss at its best rate; `excess_pct`: each depth's
excess at that N). Read literally, the threshold says the deeper model wins once its width passes 3^L: the gain
below is that reading's test. Each step also says where its deeper depth starts to win, by that reading
(`threshold_n`) and by Levine's fitted optimum (`fitted_n`), in the compared count: the claims say which of these
the compared N bracket (the optimum's rows: each depth's step from the next shallower, against the N every depth
shares; the steps': each pair against its own N).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from depthwidth import fits, tilt
from depthwidth.plots.levine_literal import AT_CROSSOVER, side_of
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
    pair_ns,
    read_at,
    read_table,
    say_nothing_to_draw,
    shape_means,
    shared_range,
    side_shifts,
    sorted_shapes,
    step_gains,
    targets,
    threshold_n,
)

# the figure's two kinds of row (`row`): the optimum's, one per compared N and depth over the range every depth was
# trained over; a step's, one per pair of neighbouring depths and N over the pair's own range (the contrast's)
OPTIMUM, STEP = "optimum", "step"
SIDE_STATISTICS = ("gain_below", "gain_above", "contrast")

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "count",
    "row",
    "n",
    "log_n",
    "depth",
    "shallow",
    "width",
    "loss",
    "threshold_depth",
    "above_threshold",
    "optimal_depth",
    "optimal_ci_low",
    "optimal_ci_high",
    "optimal_share",
    "runner_up_gap_pct",
    "below_levine_pct",
    "below_levine_se_pct",
    "below_levine_dof",
    "excess_pct",
    "levine_depth",
    "levine_trained_depth",
    "side",
    "layer_gain_pct",
    "layer_gain_ci_low",
    "layer_gain_ci_high",
    "threshold_n",
    "fitted_n",
    "growth_share",
    "decline_share",
    *[
        f"{name}{suffix}"
        for name in SIDE_STATISTICS
        for suffix in ("_pct", "_ci_low", "_ci_high", "_sys_down", "_sys_up", "_tilt_down", "_tilt_up")
    ],
    "below_pairs",
    "above_pairs",
    "across_pairs",
    *NOISE_COLUMNS,
    "seeds",
    "depth_step",
    *tilt.ROW_COLUMNS,
]


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


# ---------------------------------------------------------------- the optimum: every depth at each shared N


@dataclass(frozen=True)
class Reading:
    """The depths read at the compared counts every depth shares: arrays of rows `ns` and columns `depths` (per
    row: `papers_n`)."""

    ns: np.ndarray
    depths: list[int]
    log_loss: np.ndarray  # seed-mean ln(loss), straight in ln(count) between each depth's trained shapes
    excess: np.ndarray  # learning-rate excess (%), read off the trained shapes as the loss is
    widths: np.ndarray  # through the Conversion
    papers_n: np.ndarray  # the non-embedding N Levine's fit reads at each compared count (`papers_ns`)
    under: np.ndarray  # the depth lies below its own threshold: depth < log3(width)
    crossovers: np.ndarray  # per pair: where the deeper starts to win, by the threshold and by the fit (`crossover_ns`)
    weights: np.ndarray  # (ns, depths, shapes): each shape mean's weight in each depth's reading (read_at is linear)


def reading(means: pd.DataFrame, ns: np.ndarray, depths: list[int], convert: Conversion) -> Reading:
    """Each depth's loss, excess and width at each of `ns`, and whether it lies under its threshold."""
    widths = widths_at(convert, ns, depths)
    shapes_of = sorted_shapes(means)
    return Reading(
        ns=ns,
        depths=depths,
        log_loss=read_at(shapes_of, means["log_loss"].to_numpy(), ns, depths),
        excess=read_at(means, means["excess_pct"].to_numpy(float), ns, depths),
        widths=widths,
        papers_n=papers_ns(convert, ns, depths),
        under=np.array(depths)[None, :] < np.log(widths) / fits.LEVINE_LN_BASE,
        crossovers=np.array([crossover_ns(*pair, convert) for pair in zip(depths, depths[1:])]).reshape(-1, 2),
        weights=np.stack([read_at(shapes_of, unit, ns, depths) for unit in np.eye(len(means))], axis=-1),
    )


def below_levine(
    read: Reading, i: int, levine: int, sd_pct: np.ndarray, dof: np.ndarray, seeds: np.ndarray
) -> dict[str, list]:
    """At the compared count `read.ns[i]`, each depth's loss below that of `levine`, the trained depth nearest
    Levine's L*(N) (`optimum_columns`), 100 ln(L_levine / L_depth) (positive: the depth beats L*'s), with its
    standard error from the shapes' moderated seed sd (`sd_pct`, each with its `dof` and `seeds`) and the least dof
    of the shapes it reads: the numbers of a t test of whether some depth beats L*'s, which the claims split over the
    depths they compare (nan for L*'s own depth, and without a noise estimate)."""
    p = read.depths.index(levine)
    log_loss, weights = read.log_loss[i], read.weights[i]
    variance = (sd_pct / 100) ** 2 / seeds
    out = {"below_levine_pct": [], "below_levine_se_pct": [], "below_levine_dof": []}
    for j in range(len(read.depths)):
        difference = weights[p] - weights[j]  # what each shape's mean weighs in ln L_levine - ln L_depth
        reads = np.abs(difference) > 1e-12
        own = j != p and reads.any() and bool(np.all(np.isfinite(variance[reads])))
        out["below_levine_pct"].append(100 * (log_loss[p] - log_loss[j]) if j != p else math.nan)
        se = 100 * math.sqrt(difference**2 @ np.where(reads, variance, 0)) if own else math.nan
        out["below_levine_se_pct"].append(se)
        out["below_levine_dof"].append(float(dof[reads].min()) if own else math.nan)
    return out


def optimum_columns(read: Reading, i: int, best_drawn: np.ndarray | None) -> dict:
    """At the compared count `read.ns[i]`: the depth of least loss, the runner-up's gap to it (%), Levine's
    fitted optimal depth at its non-embedding N and the trained depth nearest that, and the optimum's bootstrap
    range at `fits.level()` (95% by default) and the share of redraws that pick it (`best_drawn`: (draws, ns), the
    index of each redraw's depth of least loss; nan without redraws)."""
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
    if best_drawn is not None:
        chosen = depths[best_drawn[:, i]]
        columns["optimal_ci_low"], columns["optimal_ci_high"] = np.quantile(chosen, fits.tails(), method="inverted_cdf")
        columns["optimal_share"] = float((best_drawn[:, i] == best).mean())
    return columns


def depth_columns(read: Reading, i: int, j: int) -> dict:
    """Depth `read.depths[j]` at the compared count `read.ns[i]`: its width, loss, the depth at which that width
    is the threshold (log3 width), whether it is at or past it, its learning-rate excess (%), and where it starts
    to win over the next shallower depth, in the compared count: by the threshold (`threshold_n`) and by Levine's
    fitted optimum (`fitted_n`; nan for the shallowest)."""
    width = read.widths[i, j]
    crossover = read.crossovers[j - 1] if j else (math.nan, math.nan)
    return {
        "row": OPTIMUM,
        "depth": read.depths[j],
        "width": width,
        "loss": math.exp(read.log_loss[i, j]),
        "threshold_depth": math.log(width) / fits.LEVINE_LN_BASE,
        "above_threshold": not read.under[i, j],
        "excess_pct": read.excess[i, j],
        "threshold_n": float(crossover[0]),
        "fitted_n": float(crossover[1]),
    }


def optimum_rows(read: Reading, best_drawn: np.ndarray | None, means: pd.DataFrame, noise: Noise) -> list[dict]:
    """One row per compared count and depth: the count's optimum, the depth's own columns and its loss below L*'s
    depth (`below_levine`, at the shapes' moderated sd under `noise`; nan without a noise estimate)."""
    seeds = means["seeds"].to_numpy(float)
    if noise.dof and np.isfinite(noise.sd_pct):
        sd, dof = noise.of_shapes(means["sd_pct"], seeds)
    else:
        sd, dof = np.full(len(means), np.nan), np.zeros(len(means))
    rows = []
    for i in range(len(read.ns)):
        optimum = optimum_columns(read, i, best_drawn)
        below = below_levine(read, i, optimum["levine_trained_depth"], sd, dof, seeds)
        for j in range(len(read.depths)):
            rows.append(optimum | depth_columns(read, i, j) | {name: values[j] for name, values in below.items()})
    return rows


def best_depths(means: pd.DataFrame, draws: np.ndarray | None, read: Reading) -> np.ndarray | None:
    """(draws, ns): the index of the depth of least loss at each compared count on each redraw (None without)."""
    if draws is None:
        return None
    shapes_of = sorted_shapes(means)
    return np.array([read_at(shapes_of, d, read.ns, read.depths).argmin(axis=1) for d in draws])


def trend_shares(best_drawn: np.ndarray | None, depths: list[int]) -> dict[str, float]:
    """How often the redraws' optimum at the largest compared count is deeper (`growth_share`) or shallower
    (`decline_share`) than at the smallest; nan without redraws."""
    if best_drawn is None:
        return {"growth_share": math.nan, "decline_share": math.nan}
    first, last = np.array(depths)[best_drawn[:, 0]], np.array(depths)[best_drawn[:, -1]]
    return {"growth_share": float((last > first).mean()), "decline_share": float((last < first).mean())}


# ---------------------------------------------------------------- the contrast: each pair over its own N


def step_side(shallow: int, deep: int, n: float, convert: Conversion) -> str:
    """Where the pair lies against the threshold at the compared count `n`, with the literal row's buffer
    (`side_of`): `below` where the deeper model's N is past the N at which its width is 3^L' (`threshold_n`) by the
    buffer, `above` where the shallower's is short of its own by it, else `across`."""
    if side_of(float(convert.n_papers(deep, n)), threshold_n(deep, convert.ff_ratio)) == "past":
        return "below"
    if side_of(float(convert.n_papers(shallow, n)), threshold_n(shallow, convert.ff_ratio)) == "before":
        return "above"
    return "across"


def step_points(means: pd.DataFrame, runs: pd.DataFrame, count: str, depths: list[int], convert: Conversion):
    """Every (pair of neighbouring `depths`, compared count) over the pair's own range (`pair_ns`: at the targets
    both were trained at, or without targets every trained value inside it), with its key (the design N it stands
    for), the deeper model's width, its side (`step_side`) and its crossovers (`crossover_ns`)."""
    by_depth = {int(depth): targets(of_depth, count) for depth, of_depth in runs.groupby("n_layer")}
    values = means[COMPARED].to_numpy()
    rows = []
    for shallow, deep in zip(depths, depths[1:]):
        threshold, fitted = crossover_ns(shallow, deep, convert)
        for key, n in zip(*pair_ns(means, by_depth, shallow, deep, values)):
            rows.append(
                {"shallow": shallow, "deep": deep, "key": float(key), "n": float(n),
                 "width": convert.width(deep, n), "side": step_side(shallow, deep, n, convert),
                 "threshold_n": threshold, "fitted_n": fitted}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=["shallow", "deep", "key", "n", "width", "side", "threshold_n", "fitted_n"])


def side_means(gain: np.ndarray, sides: np.ndarray, keys: np.ndarray) -> tuple[float, float, float]:
    """Mean gain per layer of the points below the threshold, of those above it, and the mean over the keys (the
    design N) that have both sides of (mean gain below - mean gain above) there; nan for a side with no point (the
    contrast: no key with both sides). A point `across` is on neither side."""
    below, above = sides == "below", sides == "above"
    mean = lambda values: float(values.mean()) if values.size else math.nan  # noqa: E731
    both = [k for k in np.unique(keys) if (below & (keys == k)).any() and (above & (keys == k)).any()]
    contrast = [gain[below & (keys == k)].mean() - gain[above & (keys == k)].mean() for k in both]
    return mean(gain[below]), mean(gain[above]), mean(np.asarray(contrast))


def side_columns(sides, means: pd.DataFrame, boot_sides: np.ndarray | None) -> dict[str, float]:
    """The side statistics' columns: each one's value (`sides(log_loss)` at the shape means), its bootstrap
    interval at `fits.level()` (95% by default) over `boot_sides` (draws x 3) and its learning-rate systematic
    (`side_shifts`)."""
    columns = {}
    for k, (name, value) in enumerate(zip(SIDE_STATISTICS, sides(means["log_loss"].to_numpy()))):
        column = boot_sides[:, k] if boot_sides is not None else np.array([])
        finite = column[np.isfinite(column)]
        low, high = np.quantile(finite, fits.tails()) if finite.size else (math.nan, math.nan)
        columns |= {f"{name}_pct": value, f"{name}_ci_low": low, f"{name}_ci_high": high}
    return columns | side_shifts(sides, means, SIDE_STATISTICS)


class Steps(NamedTuple):
    """The contrast's rows (`row` = STEP) and the figure-wide columns its statistics and counts give (`steps`)."""

    rows: list[dict]
    columns: dict


def steps(means: pd.DataFrame, points: pd.DataFrame, draws: np.ndarray | None) -> Steps:
    """The step rows (one per point: its gain per layer with its bootstrap range over `draws` at `fits.level()`,
    nan without) and the side statistics over them, with the count of points on each side and on neither."""
    sides, keys = points["side"].to_numpy(), points["key"].to_numpy()
    gain_at = step_gains(means, points)  # shape means' ln loss -> gains per layer
    boot = np.array([gain_at(d) for d in draws]) if draws is not None else None
    statistic = lambda log_loss: side_means(gain_at(log_loss), sides, keys)  # noqa: E731
    boot_sides = np.array([side_means(g, sides, keys) for g in boot]) if boot is not None else None
    low, high = np.quantile(boot, fits.tails(), axis=0) if boot is not None else np.full((2, len(points)), np.nan)
    gain = gain_at(means["log_loss"].to_numpy())
    rows = [
        {"row": STEP, "n": p.n, "log_n": math.log(p.n), "depth": p.deep, "shallow": p.shallow, "width": p.width,
         "side": p.side, "layer_gain_pct": float(gain[k]), "layer_gain_ci_low": float(low[k]),
         "layer_gain_ci_high": float(high[k]), "threshold_n": p.threshold_n, "fitted_n": p.fitted_n}
        for k, p in enumerate(points.itertuples())
    ]  # fmt: skip
    counts = {f"{side}_pairs": int((sides == side).sum()) for side in ("below", "above", "across")}
    return Steps(rows, side_columns(statistic, means, boot_sides) | counts)


def data(design: Path) -> pd.DataFrame:
    """The figure's rows at each count (the design sweep table by path)."""
    return at_each_count(read_table(design), at_fixed, COLUMNS)


def at_fixed(runs: pd.DataFrame, count: str = PAPERS_COUNT) -> pd.DataFrame:
    """The figure's rows with `count` (a key of COUNTS) held fixed (COLUMNS but `count`): the optimum's, one per
    compared value and depth over the range every depth shares, and the contrast's steps, one per pair of
    neighbouring depths and compared value over the pair's own range; none without two depths trained over a
    common range."""
    runs = compared(runs, count)
    means = shape_means(runs)
    depths = compared_depths(means)
    if len(depths) < 2:
        return pd.DataFrame()
    convert = conversion(means, count, float(runs["ff_ratio"].iloc[0]))  # one ff ratio
    points = step_points(means, runs, count, depths, convert)
    ns = compared_ns(targets(runs, count), means, *shared_range(means, depths))
    if points.empty and ns.size == 0:
        return pd.DataFrame()
    noise = noise_model(runs, ["n_layer", "d_model"])
    draws = noise.redraws(means)
    rows, best_drawn = [], None
    if ns.size:  # the optimum needs every depth at one N; the contrast's pairs need only their own range
        read = reading(means, ns, depths, convert)
        best_drawn = best_depths(means, draws, read)
        rows = optimum_rows(read, best_drawn, means, noise)
    contrast = steps(means, points, draws)
    return pd.DataFrame(rows + contrast.rows, columns=COLUMNS[1:]).assign(
        **trend_shares(best_drawn, depths),
        **contrast.columns,
        **noise.columns(),
        seeds=int(means["seeds"].min()),
        depth_step=float(np.diff(depths).min()),
        **tilt.row_range("design"),  # the optimum's argmin and L*'s depth beaten carry it per depth (claims.levine)
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
    optimum = frame[frame["row"] == OPTIMUM]
    per_n = optimum.drop_duplicates("n")
    if per_n.empty:
        say_nothing_to_draw(ax, "no N where every depth compares")
    else:
        ax.errorbar(
            per_n["n"],
            per_n["optimal_depth"],
            yerr=error_bars(per_n["optimal_depth"], per_n["optimal_ci_low"], per_n["optimal_ci_high"]),
            fmt="o",
            color="k",
            capsize=3,
            label=f"depth of least loss (bootstrap {fits.level_text()})",
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
        inside = [d for d in sorted(optimum["depth"].unique()) if low <= d <= high]
        if len(inside) >= 2:
            ax.set_yticks(inside)
        ax.set(xscale="log", xlabel="non-embedding parameters N", ylabel="optimal depth")
        legend_outside(ax, "below")
    rows = frame[(frame["row"] == STEP) & np.isfinite(frame["layer_gain_pct"])]
    series = sorted(rows.groupby(["side", "shallow", "depth"]), key=lambda item: item[0][2])  # by depth
    for k, ((side, shallow, depth), pair) in enumerate(series):
        # the pairs side by side at each N (a few % of N apart), so that no bar hides another
        dodge = np.exp(0.05 * (k - (len(series) - 1) / 2))
        bx.errorbar(
            pair["n"] * dodge,
            pair["layer_gain_pct"],
            yerr=error_bars(pair["layer_gain_pct"], pair["layer_gain_ci_low"], pair["layer_gain_ci_high"]),
            fmt={"below": "o", "above": "s", "across": "^"}[side],
            mfc=None if side == "below" else "none",
            capsize=3,
            label=f"{int(shallow)}->{int(depth)} ({side})",
        )
    bx.axhline(0, color="0.3", lw=0.8)
    bx.set(
        xscale="log",
        xlabel="non-embedding parameters N (pairs side by side)",
        ylabel="loss gain per added layer\nover the next shallower depth (%)",
        title="Levine: deepening pays below L_th = log3(width)\n(filled), not above (squares); across or within "
        f"{AT_CROSSOVER:g}x of it: triangles",
    )
    bx.title.set_fontsize(9)
    if len(rows):
        legend_outside(bx, "below", ncol=2)
    return fig
