"""Kaplan Fig. 6: loss vs parameters per depth, counted three ways: non-embedding N (the paper's), total
parameters (embeddings counted, the paper's contrast) and training FLOPs (`sweep_common.COUNTS`).

With non-embedding N the depths >= 2 should collapse onto one trend, 1-layer models apart. Per
count, the data carries the test of that statement against the seed noise: one power law through
the seed means of the depth >= 2 shapes, its rms scatter, the lack-of-fit F statistic (scatter of
the means around the line over the pure seed noise; F above its 95% quantile: the depths separate),
and the mean offset of the 1-layer shapes from that line with its 95% t-interval (the seed noise and the
deep shapes' lack of fit beyond it: a 1-layer shape may sit off the line as far as any shape does).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits, tilt
from depthwidth.plots.sweep_common import COUNTS as COUNT_COLUMNS
from depthwidth.plots.sweep_common import ok, read_table, seed_noise_pct

COUNTS = {column: count for count, column in COUNT_COLUMNS.items()}  # table column -> count
KEYS = ["n_layer", "d_model"]

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "n_layer",
    "d_model",
    "seed",
    "loss",
    "count",
    "params",
    "loss_mean",
    "seeds",
    "deep_shapes",
    "scatter_pct",
    "lof_f",
    "lof_f95",
    "lof_sd_pct",
    "lof_sd_ci_low",
    "lof_sd_ci_high",
    "offset_1layer_pct",
    "offset_ci_low",
    "offset_ci_high",
    "lof_sys_down",
    "lof_sys_up",
    "offset_sys_down",
    "offset_sys_up",
    "lof_tilt_down",
    "lof_tilt_up",
    "offset_tilt_down",
    "offset_tilt_up",
    "noise_sd_pct",
    "noise_dof",
    "line_intercept",
    "line_slope",
]
# what the collapse test gives without a line through the depth >= 2 shapes (nan)
NO_LINE = [
    *("scatter_pct", "lof_f", "lof_f95", "lof_sd_pct", "lof_sd_ci_low", "lof_sd_ci_high"),
    *("offset_1layer_pct", "offset_ci_low", "offset_ci_high", "line_intercept", "line_slope"),
    *("lof_sys_down", "lof_sys_up", "offset_sys_down", "offset_sys_up"),
    *("lof_tilt_down", "lof_tilt_up", "offset_tilt_down", "offset_tilt_up"),
]


def lack_of_fit_sd(f_stat: float, sd_pct: float, dfn: int, dfd: int, seeds: float) -> tuple[float, float, float]:
    """The sd (% of the loss) of the shape means around the line beyond the seed noise, with its interval at
    `fits.level()` (95% by default).

    With a lack of fit tau per shape, E[seeds r^2] = sd^2 + seeds tau^2, so F / (1 + seeds tau^2 / sd^2)
    is F(dfn, dfd)-distributed: the interval of that ratio is [F / F_upper, F / F_lower] (F_0.975 and F_0.025 at
    the default: `fits.tails()`), and
    tau = sd sqrt(max(ratio - 1, 0) / seeds). nan without an F statistic.
    """
    if not np.isfinite(f_stat):
        return math.nan, math.nan, math.nan
    lower, upper = fits.tails()
    ratios = (f_stat, f_stat / fits.f_quantile(upper, dfn, dfd), f_stat / fits.f_quantile(lower, dfn, dfd))
    return tuple(sd_pct * math.sqrt(max(r - 1.0, 0.0) / seeds) for r in ratios)


def one_layer_offset(means: pd.DataFrame, log_loss: np.ndarray) -> float:
    """The 1-layer shapes' mean offset (%) from the line through the depth >= 2 shapes, at shape means `log_loss`."""
    deep = means["n_layer"].to_numpy() >= 2
    log_params = np.log(means["params"].to_numpy(float))
    line = fits.fit_line(log_params[deep], log_loss[deep])
    return 100 * float(np.mean(log_loss[~deep] - line(log_params[~deep])))


def lack_of_fit_shift(
    residual: np.ndarray, seeds: np.ndarray, excess_pct: np.ndarray, sd_pct: float, dof: int, ends: tuple[float, float]
) -> tuple[float, float]:
    """(down, up) of the lack of fit's interval `ends` when each depth >= 2 shape's loss may lie up to its
    excess (%) above its loss at its best rate: the residuals move by at most the excesses' norm (a least-squares
    residual is a projection, which shortens), so F's seed-weighted residual norm moves by at most
    sqrt(max seeds * sum excess^2); the interval's ends at those norms. A bound, not exact."""
    k = residual.size
    if not (np.all(np.isfinite(excess_pct)) and np.all(np.isfinite(ends))):
        return math.nan, math.nan
    norm = math.sqrt(float((seeds * residual**2).sum()))
    moved = math.sqrt(float(seeds.max() * ((excess_pct / 100) ** 2).sum()))
    sd = sd_pct / 100

    def interval(at: float) -> tuple[float, float]:
        _, low, high = lack_of_fit_sd(at**2 / (k - 2) / sd**2, sd_pct, k - 2, dof, float(seeds.mean()))
        return low, high

    return ends[0] - interval(max(norm - moved, 0.0))[0], interval(norm + moved)[1] - ends[1]


def collapse_test(means: pd.DataFrame, sd_pct: float, dof: int) -> dict:
    """One count's collapse test on shape means (columns n_layer, params, loss_mean, seeds, excess_pct), with
    each interval's learning-rate systematic (`*_sys_down`, `*_sys_up`: % of the loss) and warm-up tilt
    (`*_tilt_down`, `*_tilt_up`; nan where none is carried)."""
    if "excess_pct" not in means:  # shapes not scanned: no systematic of their own
        means = means.assign(excess_pct=np.nan)
    deep, one = means[means["n_layer"] >= 2], means[means["n_layer"] == 1]
    if deep["params"].nunique() < 2:  # a design of one N and one depth >= 2: no line (the claim says so)
        return {"deep_shapes": len(deep)} | dict.fromkeys(NO_LINE, math.nan)
    line = fits.fit_line(np.log(deep["params"]), np.log(deep["loss_mean"]))
    residual = np.log(deep["loss_mean"]) - line(np.log(deep["params"]))
    k, sd = len(deep), sd_pct / 100
    f_stat = float((deep["seeds"] * residual**2).sum() / (k - 2) / sd**2) if k > 2 and dof else math.nan
    lack, lack_low, lack_high = lack_of_fit_sd(f_stat, sd_pct, k - 2, dof, float(deep["seeds"].mean()))

    def lof_shift_at(reach: np.ndarray) -> tuple[float, float]:
        args = (residual.to_numpy(), deep["seeds"].to_numpy(float), reach, sd_pct, dof, (lack_low, lack_high))
        return lack_of_fit_shift(*args) if np.isfinite(f_stat) else (math.nan, math.nan)

    excess = deep["excess_pct"].to_numpy(float)
    lof_shift = lof_shift_at(excess)
    # the tilt moves each deep shape by t ln(depth) %: a move bounded by its largest |t| ln(depth), the bound taken
    # with the excesses' (a norm's bound is not additive), less the learning-rate shift alone
    tilt_reach = max(map(abs, tilt.carried().range("design"))) * np.log(deep["n_layer"].to_numpy(float))
    both = lof_shift_at(np.where(np.isfinite(excess), excess, 0.0) + tilt_reach)
    lof_tilt = tuple(b - (s if math.isfinite(s) else 0.0) for b, s in zip(both, lof_shift))
    lof_tilt = tuple(max(0.0, v) if math.isfinite(v) else math.nan for v in lof_tilt)
    offset, low, high, offset_shift = math.nan, math.nan, math.nan, (math.nan, math.nan)
    offset_tilt = (math.nan, math.nan)
    if len(one):
        offset = 100 * float(np.mean(np.log(one["loss_mean"]) - line(np.log(one["params"]))))
        # A 1-layer shape sits off the line as any shape may: beyond the seed noise, the deep shapes' own lack of fit
        # (its estimate, k - 2 dof) enters the interval, for the 1-layer shapes' mean and for the line at their N
        x, x_one = np.log(deep["params"].to_numpy(float)), np.log(one["params"].to_numpy(float))
        lever = 1 / len(one) + 1 / k + (x_one.mean() - x.mean()) ** 2 / float(((x - x.mean()) ** 2).sum())
        shape_var = (lack**2 * lever) if np.isfinite(lack) and lack > 0 else 0.0
        se = math.sqrt(sd_pct**2 * (1 / one["seeds"].sum() + 1 / deep["seeds"].sum()) + shape_var)
        low, high = fits.t_interval(offset, se, min(dof, k - 2) if shape_var else dof)
        offset_shift = fits.systematic_shift(
            lambda log_loss: one_layer_offset(means, log_loss), np.log(means["loss_mean"]), means["excess_pct"] / 100
        )
        offset_tilt = tilt.shift(
            lambda log_loss: one_layer_offset(means, log_loss),
            np.log(means["loss_mean"]),
            np.log(means["n_layer"].to_numpy(float)),
            "design",
        )
    return {
        "deep_shapes": k,
        "scatter_pct": 100 * float(np.sqrt(np.mean(residual**2))),
        "lof_f": f_stat,
        "lof_f95": fits.f_quantile(fits.level(), k - 2, dof),  # the F test's threshold at the level (95% by default)
        "lof_sd_pct": lack,
        "lof_sd_ci_low": lack_low,
        "lof_sd_ci_high": lack_high,
        "offset_1layer_pct": offset,
        "offset_ci_low": low,
        "offset_ci_high": high,
        "lof_sys_down": lof_shift[0],
        "lof_sys_up": lof_shift[1],
        "offset_sys_down": offset_shift[0],
        "offset_sys_up": offset_shift[1],
        "lof_tilt_down": lof_tilt[0],
        "lof_tilt_up": lof_tilt[1],
        "offset_tilt_down": offset_tilt[0],
        "offset_tilt_up": offset_tilt[1],
        "line_intercept": line.intercept,
        "line_slope": line.slope,
    }


def data(design: Path) -> pd.DataFrame:
    """Each finished design run's loss at each count (`params`), its shape's seed mean and each count's collapse test
    (the design sweep table by path)."""
    runs = ok(read_table(design))
    sd, dof = seed_noise_pct(runs, KEYS)
    runs = runs.assign(excess_pct=runs.get("lr_excess_pct", np.nan))
    long = runs.melt(
        id_vars=[*KEYS, "seed", "final_val_loss", "excess_pct"],
        value_vars=list(COUNTS),
        var_name="count",
        value_name="params",
    )
    long["count"] = long["count"].map(COUNTS)
    long = long.rename(columns={"final_val_loss": "loss"})
    means = long.groupby(["count", *KEYS], as_index=False).agg(
        params=("params", "mean"),
        loss_mean=("loss", "mean"),
        seeds=("seed", "count"),
        excess_pct=("excess_pct", "mean"),
    )
    tests = pd.DataFrame([{"count": c, **collapse_test(m, sd, dof)} for c, m in means.groupby("count")])
    long = long.drop(columns="excess_pct")
    long = long.merge(means[["count", *KEYS, "loss_mean", "seeds"]], on=["count", *KEYS]).merge(tests, on="count")
    long["noise_sd_pct"], long["noise_dof"] = sd, dof
    return long


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    from depthwidth.plots.common import legend_in

    # a 2 x 2 grid, readable at page width: one panel per count, the legend in the fourth cell
    fig, grid = plt.subplots(2, 2, figsize=(9, 7), sharey=True)
    axes, spare = grid.flat[: len(COUNTS)], grid.flat[len(COUNTS)]
    depths = sorted(frame["n_layer"].unique())
    palette = dict(zip(depths, sns.color_palette("viridis", len(depths))))
    for ax, count in zip(axes, COUNTS.values()):
        rows = frame[frame["count"] == count]
        means = rows.drop_duplicates(KEYS).sort_values("params")
        dof, sd = int(means["noise_dof"].iloc[0]), means["noise_sd_pct"].iloc[0]
        for depth, by_depth in means.groupby("n_layer"):
            half = fits.t_quantile(dof) * sd / 100 / np.sqrt(by_depth["seeds"]) if dof else None
            ax.errorbar(
                by_depth["params"],
                by_depth["loss_mean"],
                yerr=None
                if half is None
                else [by_depth["loss_mean"] * (1 - np.exp(-half)), by_depth["loss_mean"] * (np.exp(half) - 1)],
                marker="o",
                capsize=3,
                color=palette[depth],
                label=f"{depth}",
            )
        first = means.iloc[0]
        title = f"{count}\nno line: fewer than two depth >= 2 shapes"
        if np.isfinite(first["line_slope"]):
            x = np.geomspace(means["params"].min(), means["params"].max(), 20)
            line = np.exp(first["line_intercept"] + first["line_slope"] * np.log(x))
            ax.plot(x, line, "k--", lw=1, label="fit, depth >= 2")
            f_text = (
                f"F = {first['lof_f']:.2f} ({fits.level_text()}: {first['lof_f95']:.2f})" if dof else "F: needs 2 seeds"
            )
            title = f"{count}\nscatter {first['scatter_pct']:.2f}%, {f_text}"
        ax.set(xscale="log", yscale="log", xlabel=count, title=title)
        ylabel = f"validation loss (nats/token)\nseed mean, {fits.level_text()} CI"
        ax.set_ylabel(ylabel if ax.get_subplotspec().is_first_col() else "")
    legend_in(spare, axes[-1], title="depth", ncol=2)
    return fig
