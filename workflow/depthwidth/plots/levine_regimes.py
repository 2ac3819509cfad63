"""Levine: loss vs non-embedding N per depth, with the point where width = 3^L (L = log3 d) marked.

Right of the mark (width above 3^L) a depth is below its threshold: deepening should pay off.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.plots.sweep_common import depth_lines, ok, read_table, threshold_n

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["n_layer", "d_model", "n_nonembedding", "loss", "kind"]


def data(design: Path) -> pd.DataFrame:
    """The design grid's shape means and each depth's mark at width 3^L (the design sweep table by path)."""
    runs = read_table(design)
    mean = ok(runs).groupby(["n_layer", "d_model"], as_index=False)[["n_nonembedding", "final_val_loss"]].mean()
    mean["kind"] = "runs"
    ff_ratio = float(runs["ff_ratio"].iloc[0])  # one ratio for the whole grid
    marks = []
    for depth, line in depth_lines(runs).items():
        width = fits.levine_threshold_width(depth)
        n = threshold_n(depth, ff_ratio)
        widths = mean.loc[mean["n_layer"] == depth, "d_model"]
        inside = widths.min() <= width <= widths.max()
        marks.append(
            {
                "n_layer": depth,
                "d_model": width,
                "n_nonembedding": n,
                "final_val_loss": float(np.exp(line(np.log(n)))),
                "kind": "threshold" if inside else "threshold (extrapolated)",
            }
        )
    return pd.concat([mean, pd.DataFrame(marks)], ignore_index=True).rename(columns={"final_val_loss": "loss"})


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    from depthwidth.plots.common import legend_outside

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    runs = frame[frame["kind"] == "runs"]
    depths = sorted(runs["n_layer"].unique())
    palette = dict(zip(depths, sns.color_palette("viridis", len(depths))))
    sns.lineplot(data=runs, x="n_nonembedding", y="loss", hue="n_layer", palette=palette, marker="o", ax=ax)
    marks = frame[frame["kind"] == "threshold"]
    ax.scatter(
        marks["n_nonembedding"],
        marks["loss"],
        marker="*",
        s=160,
        c=[palette[d] for d in marks["n_layer"]],
        edgecolor="k",
        zorder=5,
        label="width = 3^L\n(L = log3 d)",
    )
    ax.set(xscale="log", yscale="log", xlabel="non-embedding parameters N", ylabel="validation loss (nats/token)")
    legend_outside(ax, "right", title="depth")
    return fig
