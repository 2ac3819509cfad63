"""Levine: the depth of least loss at each N, read from the trained depths, and the depth-inefficient regime.

The grid trains depth x width, so two depths rarely share an N. At each trained N inside the range
where every depth has runs, each depth's loss is read off straight lines in log-log between its
own neighbouring trained shapes (seed means; no fit across the whole range), and the optimum is the
argmin over the trained depths. A bootstrap over seeds (`sweep_common.redraws`) gives its 95% range
and how often it is the same depth. Next to it: the depth Levine's fitted optimum predicts there,
d*(L) = exp(5.039 + 0.0555 L) with N = 12 L d*^2.

The depth-inefficient regime (Levine: above L_th = log3 d deepening is no better than widening):
every depth deeper than log3 of its own width at that N is compared with the next shallower trained
depth at the same N; `deficit_pct` is how much worse it is (%), with its bootstrap interval, and
`inefficiency_pct` their mean over all such comparisons.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from depthwidth import fits, shapes
from depthwidth.plots.sweep_common import error_bars, read_table, redraws, seed_noise_pct, shape_means

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
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
    "levine_depth",
    "levine_trained_depth",
    "deficit_pct",
    "deficit_ci_low",
    "deficit_ci_high",
    "growth_share",
    "decline_share",
    "inefficiency_pct",
    "inefficiency_ci_low",
    "inefficiency_ci_high",
    "inefficient_rows",
    "noise_sd_pct",
    "noise_dof",
    "seeds",
    "depth_step",
]


def interpolated_log_loss(means: pd.DataFrame, log_loss: np.ndarray, ns: np.ndarray, depths: list[int]) -> np.ndarray:
    """ln(loss) of every depth at every N (rows: ns; columns: depths), linear in ln N between its trained shapes."""
    out = np.empty((len(ns), len(depths)))
    for j, depth in enumerate(depths):
        idx = np.flatnonzero(means["n_layer"].to_numpy() == depth)
        order = idx[np.argsort(means["n_nonembedding"].to_numpy()[idx])]
        out[:, j] = np.interp(np.log(ns), np.log(means["n_nonembedding"].to_numpy()[order]), log_loss[order])
    return out


def deficits(table: np.ndarray, pairs: list[tuple[int, int, int]]) -> np.ndarray:
    """100 (L_deep / L_shallower - 1) for each (n index, deep column, shallower column)."""
    return np.array([100 * (math.exp(table[i, j] - table[i, k]) - 1) for i, j, k in pairs])


def compared_ns(runs: pd.DataFrame, means: pd.DataFrame, low: float, high: float) -> np.ndarray:
    """The N at which depths are compared: the design's target N (each moved into the N range every
    depth was trained over, since a shape's N misses its target by a few percent), or, for runs
    without targets, every trained N inside that range."""
    if low > high:
        return np.array([])
    targets = runs["n_target"].dropna().unique() if "n_target" in runs else []
    if len(targets):
        return np.unique(np.clip(np.asarray(targets, dtype=float), low, high))
    return np.unique(means.loc[means["n_nonembedding"].between(low, high), "n_nonembedding"].to_numpy())


def data(inputs):
    (grid,) = inputs
    runs = read_table(grid)
    means = shape_means(runs)
    sd, dof = seed_noise_pct(runs, ["n_layer", "d_model"])
    ff_ratio = float(runs["ff_ratio"].iloc[0])  # one ratio for the whole grid
    depths = sorted(int(d) for d, g in means.groupby("n_layer") if g["n_nonembedding"].nunique() >= 2)
    span = means[means["n_layer"].isin(depths)].groupby("n_layer")["n_nonembedding"].agg(["min", "max"])
    low, high = (span["min"].max(), span["max"].min()) if len(depths) >= 2 else (1.0, 0.0)
    ns = compared_ns(runs, means, low, high)
    if len(depths) < 2 or ns.size == 0:
        return pd.DataFrame(columns=COLUMNS)
    table = interpolated_log_loss(means, means["log_loss"].to_numpy(), ns, depths)
    best = table.argmin(axis=1)
    widths = np.array([[shapes.width_for_n(n, d, ff_ratio) for d in depths] for n in ns])
    above = np.array(depths)[None, :] > np.log(widths) / math.log(3)
    pairs = [(i, j, j - 1) for i in range(len(ns)) for j in range(1, len(depths)) if above[i, j]]
    draws = redraws(means, sd, dof)
    boot_best, boot_deficit = None, None
    if draws is not None:
        tables = [interpolated_log_loss(means, d, ns, depths) for d in draws]
        boot_best = np.array([t.argmin(axis=1) for t in tables])  # (draws, ns)
        boot_deficit = np.array([deficits(t, pairs) for t in tables]) if pairs else None
    depth_arr = np.array(depths)
    rows = []
    point_deficit = dict(zip(pairs, deficits(table, pairs))) if pairs else {}
    for i, n in enumerate(ns):
        ordered = np.sort(table[i])
        levine = fits.levine_optimal_depth_at(float(n))
        for j, depth in enumerate(depths):
            pair = (i, j, j - 1)
            row = {
                "n": float(n),
                "log_n": math.log(n),
                "depth": depth,
                "width": widths[i, j],
                "loss": math.exp(table[i, j]),
                "threshold_depth": math.log(widths[i, j]) / math.log(3),
                "above_threshold": bool(above[i, j]),
                "optimal_depth": int(depth_arr[best[i]]),
                "runner_up_gap_pct": 100 * (math.exp(ordered[1] - ordered[0]) - 1),
                "levine_depth": levine,
                "levine_trained_depth": fits.nearest_depth(levine, depths),
                "deficit_pct": point_deficit.get(pair, math.nan),
                "optimal_ci_low": math.nan,
                "optimal_ci_high": math.nan,
                "optimal_share": math.nan,
                "deficit_ci_low": math.nan,
                "deficit_ci_high": math.nan,
            }
            if boot_best is not None:
                chosen = depth_arr[boot_best[:, i]]
                row["optimal_ci_low"], row["optimal_ci_high"] = np.quantile(
                    chosen, [0.025, 0.975], method="inverted_cdf"
                )
                row["optimal_share"] = float((boot_best[:, i] == best[i]).mean())
                if pair in point_deficit:
                    col = boot_deficit[:, pairs.index(pair)]
                    row["deficit_ci_low"], row["deficit_ci_high"] = np.quantile(col, [0.025, 0.975])
            rows.append(row)
    frame = pd.DataFrame(rows)
    frame["growth_share"] = frame["decline_share"] = math.nan
    if boot_best is not None:
        first, last = depth_arr[boot_best[:, 0]], depth_arr[boot_best[:, -1]]
        frame["growth_share"], frame["decline_share"] = float((last > first).mean()), float((last < first).mean())
    frame["inefficiency_pct"] = float(np.mean(list(point_deficit.values()))) if pairs else math.nan
    frame["inefficiency_ci_low"] = frame["inefficiency_ci_high"] = math.nan
    if boot_deficit is not None:
        frame["inefficiency_ci_low"], frame["inefficiency_ci_high"] = np.quantile(
            boot_deficit.mean(axis=1), [0.025, 0.975]
        )
    frame["inefficient_rows"] = len(pairs)
    frame["noise_sd_pct"], frame["noise_dof"] = sd, dof
    frame["seeds"] = int(means["seeds"].min())
    frame["depth_step"] = float(np.diff(depths).min())
    return frame[COLUMNS]


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    per_n = frame.drop_duplicates("n")
    for depth in sorted(frame["depth"].unique()):
        ax.axhline(depth, color="0.85", lw=0.8, zorder=0)
    ax.errorbar(
        per_n["n"],
        per_n["optimal_depth"],
        yerr=error_bars(per_n["optimal_depth"], per_n["optimal_ci_low"], per_n["optimal_ci_high"]),
        fmt="o",
        color="k",
        capsize=3,
        label="depth of least loss (bootstrap 95%)",
    )
    if len(per_n):
        wide = np.geomspace(per_n["n"].min() / 2, per_n["n"].max() * 2, 50)
        ax.plot(
            wide,
            [fits.levine_optimal_depth_at(n) for n in wide],
            "--",
            color="C2",
            label="Levine: d* = exp(5.039 + 0.0555 L), N = 12 L d*^2",
        )
    ax.set(xscale="log", xlabel="non-embedding parameters N", ylabel="optimal depth")
    ax.legend(fontsize=7)
    rows = frame[np.isfinite(frame["deficit_pct"])]
    for depth, by_depth in rows.groupby("depth"):
        bx.errorbar(
            by_depth["n"],
            by_depth["deficit_pct"],
            yerr=error_bars(by_depth["deficit_pct"], by_depth["deficit_ci_low"], by_depth["deficit_ci_high"]),
            fmt="o",
            capsize=3,
            label=f"depth {depth}",
        )
    bx.axhline(0, color="0.3", lw=0.8)
    bx.set(
        xscale="log",
        xlabel="non-embedding parameters N",
        ylabel="loss vs next shallower depth (%)",
        title="depths above L_th = log3(width): > 0 means they lose",
    )
    bx.title.set_fontsize(9)
    if len(rows):
        bx.legend(fontsize=7)
    return fig
