"""Protocol check: final loss vs peak learning rate at one N, for a few depths and feed-forward ratios.

Not a paper claim. It asks whether the recipe's learning rate is within 2x of the best one for each
shape, so that the depth comparisons are not comparisons of how well each shape suits the recipe.
The best factor is the vertex of a parabola in log2(factor) through the seed-mean ln(loss) of the best
trained factor and its two neighbours; at the edge of the factors tried it is that edge (`best_at_edge`).
`recipe_within_2x`: "yes" or "no", or "unknown" when the best is at an edge inside [1/2, 2] (the true
best may lie beyond it). `excess_pct`: how far the loss at the recipe's rate lies above the loss at the
best rate (the parabola's vertex; at an edge, the best trained factor's: a lower bound), in % of the loss.
Its largest value over the shapes is the learning-rate systematic the claims carry (`claims`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.plots.sweep_common import ok, read_table

COLUMNS = [
    "n_layer", "d_model", "d_ff", "lr_factor", "lr_peak", "loss_mean", "seeds", "gap_pct", "best_factor",
    "best_at_edge", "recipe_within_2x", "excess_pct",
]  # fmt: skip
SHAPE = ["n_layer", "d_model", "d_ff"]


def best_of(factors: np.ndarray, log_loss: np.ndarray) -> tuple[float, float, bool]:
    """The learning-rate factor of least loss (parabola vertex in log2 factor), the ln(loss) there, and
    whether it is at an edge of the factors tried (then the best trained point)."""
    order = np.argsort(factors)
    x, y = np.log2(factors[order]), log_loss[order]
    i = int(np.argmin(y))
    if i in (0, len(x) - 1):
        return float(2 ** x[i]), float(y[i]), True
    a, b, c = np.polyfit(x[i - 1 : i + 2], y[i - 1 : i + 2], 2)
    return float(2 ** (-b / (2 * a))), float(c - b * b / (4 * a)), False


def within_2x(best: float, at_edge: bool) -> str:
    """Whether the recipe's learning rate (factor 1) is within 2x of the best factor: yes, no or unknown."""
    inside = 0.5 <= best <= 2
    if at_edge:
        return "unknown" if inside else "no"
    return "yes" if inside else "no"


def data(lr_check: Path) -> pd.DataFrame:
    """Per shape and learning-rate factor: the seed-mean loss and its gap to the shape's least; per shape, the best
    factor and the recipe's excess over it (the lr_check sweep table by path)."""
    runs = ok(read_table(lr_check)).assign(log_loss=lambda f: np.log(f["final_val_loss"]))
    means = runs.groupby([*SHAPE, "lr_factor"], as_index=False).agg(
        lr_peak=("lr_peak", "mean"), log_loss=("log_loss", "mean"), seeds=("seed", "count")
    )
    rows = []
    for _, shape in means.groupby(SHAPE):
        best, best_log_loss, edge = best_of(shape["lr_factor"].to_numpy(float), shape["log_loss"].to_numpy())
        at_recipe = shape.loc[shape["lr_factor"] == 1, "log_loss"]
        rows.append(
            shape.assign(
                loss_mean=np.exp(shape["log_loss"]),
                gap_pct=100 * (shape["log_loss"] - shape["log_loss"].min()),
                best_factor=best,
                best_at_edge=edge,
                recipe_within_2x=within_2x(best, edge),
                excess_pct=100 * (float(at_recipe.iloc[0]) - best_log_loss) if len(at_recipe) else np.nan,
            )
        )
    return pd.concat(rows, ignore_index=True)[COLUMNS] if rows else pd.DataFrame(columns=COLUMNS)


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    from depthwidth.plots.common import legend_outside

    fig, ax = plt.subplots(figsize=(6, 4.5))
    shapes = list(frame.groupby(SHAPE))
    for ((depth, width, d_ff), shape), color in zip(shapes, sns.color_palette("viridis", len(shapes))):
        shape = shape.sort_values("lr_peak")
        recipe = shape.loc[shape["lr_factor"] == 1, "lr_peak"]
        best, within = shape["best_factor"].iloc[0], shape["recipe_within_2x"].iloc[0]
        label = f"L{depth} d{width} f{d_ff}: best x{best:.2g}, recipe within 2x: {within}"
        ax.plot(shape["lr_peak"], shape["loss_mean"], marker="o", color=color, label=label)
        for lr in recipe:
            ax.axvspan(lr / 2, lr * 2, color=color, alpha=0.08)
            ax.axvline(lr, color=color, ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("peak learning rate (recipe dashed, its 2x band shaded)")
    ax.set_ylabel("final validation loss (seed mean)")
    legend_outside(ax, "below")
    return fig
