"""Kaplan Fig. 6: loss vs parameters per depth, counting embeddings (left) or not (right).

With non-embedding N the depths >= 2 should collapse onto one trend, 1-layer models apart.
"""

from __future__ import annotations

import pandas as pd

from depthwidth.plots.sweep_common import ok, read_table

COUNTS = {"n_total": "with embeddings", "n_nonembedding": "non-embedding"}


# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["n_layer", "d_model", "seed", "loss", "count", "params"]


def data(inputs):
    (grid,) = inputs
    runs = ok(read_table(grid))
    long = runs.melt(
        id_vars=["n_layer", "d_model", "seed", "final_val_loss"],
        value_vars=list(COUNTS),
        var_name="count",
        value_name="params",
    )
    long["count"] = long["count"].map(COUNTS)
    return long.rename(columns={"final_val_loss": "loss"})


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, count in zip(axes, COUNTS.values()):
        sns.lineplot(
            data=frame[frame["count"] == count],
            x="params",
            y="loss",
            hue="n_layer",
            marker="o",
            errorbar="sd",
            palette="viridis",
            ax=ax,
            legend=count == "non-embedding",
        )
        ax.set(xscale="log", yscale="log", xlabel=f"parameters ({count})", title=count)
    axes[0].set_ylabel("validation loss (nats/token)")
    axes[1].legend(title="depth", fontsize=8)
    return fig
