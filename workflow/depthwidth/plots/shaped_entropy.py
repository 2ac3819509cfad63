"""S4: attention entropy per layer vs training step, standard vs shaped attention, at several
learning rates; and final validation loss vs learning rate (Noci et al.: shaping prevents
entropy collapse, also at large learning rates). The temperature-only control (softmax attention
at the shaped temperature, `temperature`), where trained, is a third series, dashed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.columns import ENTROPY_TABLE_COLUMNS
from depthwidth.plots.common import PALETTE
from depthwidth.plots.sweep_common import finished, ok

DASHES = {"temperature": "--"}  # the control is dashed, the two kinds of the claim solid

# the columns draw() and the claims read, the entropy table's: the figure's CSV must have them
COLUMNS = list(ENTROPY_TABLE_COLUMNS)


def data(entropy: Path) -> pd.DataFrame:
    """The entropy table's rows as they are (by path)."""
    return pd.read_csv(entropy)


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    rates = sorted(frame["lr"].unique())
    fig, axes = plt.subplots(1, len(rates) + 1, figsize=(3.6 * (len(rates) + 1), 3.8))
    layers = sorted(frame["layer"].unique())
    for ax, lr in zip(axes, rates):
        at_lr = frame[frame["lr"] == lr]
        for (attention, layer), curve in at_lr.groupby(["attention", "layer"]):
            mean = curve.groupby("tokens", as_index=False)["entropy"].mean()
            shade = 0.35 + 0.65 * (layers.index(layer) + 1) / len(layers)
            ax.plot(
                mean["tokens"],
                mean["entropy"],
                color=PALETTE[attention],
                ls=DASHES.get(attention, "-"),
                alpha=shade,
                lw=1.2,
                label=attention if layer == layers[-1] else None,
            )
        ax.set(title=f"lr = {lr:g}", xlabel="training tokens", ylim=(0, None))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
    axes[0].set_ylabel("attention entropy (nats), one line per layer")
    axes[0].legend(fontsize=8)
    outcome = frame.drop_duplicates("run_id")
    ax = axes[-1]
    for attention, runs in outcome.groupby("attention"):
        done = ok(runs).groupby("lr")["final_val_loss"].mean()
        ax.plot(
            done.index,
            done.values,
            marker="o",
            ls=DASHES.get(attention, "-"),
            color=PALETTE[attention],
            label=attention,
        )
        diverged = runs[~finished(runs)]["lr"].unique()
        if len(diverged):
            top = np.nanmax(outcome["final_val_loss"]) if outcome["final_val_loss"].notna().any() else 1.0
            ax.scatter(
                diverged,
                [top] * len(diverged),
                marker="x",
                color=PALETTE[attention],
                s=60,
                label=f"{attention}: diverged",
            )
    ax.set(
        xscale="log",
        xlabel="peak learning rate",
        ylabel="final validation loss (nats/token)",
        title="loss vs learning rate",
    )
    ax.set_xticks(rates, [f"{lr:g}" for lr in rates])
    ax.minorticks_off()
    ax.legend(fontsize=8)
    return fig
