"""S4: attention entropy per layer vs training step, standard vs shaped attention, at several
learning rates; and final validation loss vs learning rate (Noci et al.: shaping prevents
entropy collapse, also at large learning rates). The temperature-only control (softmax attention
at the shaped temperature, `temperature`), where trained, is a third series, dashed.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.columns import ENTROPY_TABLE_COLUMNS
from depthwidth.plots.common import PALETTE, legend_in, plain_ticks
from depthwidth.plots.sweep_common import finished, ok

DASHES = {"temperature": "--"}  # the control is dashed, the two kinds of the claim solid

# the columns draw() and the claims read, the entropy table's: the figure's CSV must have them
COLUMNS = list(ENTROPY_TABLE_COLUMNS)


def data(entropy: Path) -> pd.DataFrame:
    """The entropy table's rows as they are (by path)."""
    return pd.read_csv(entropy)


def grid_cells(panels: int) -> tuple[int, int]:
    """(rows, columns) of a grid holding `panels` panels and one cell for the legends: three columns at most,
    two where that fills a square of four."""
    cells = panels + 1
    columns = 2 if cells == 4 else min(cells, 3)
    return math.ceil(cells / columns), columns


def draw_entropy(ax, at_lr: pd.DataFrame, layers: list) -> None:
    """One rate's panel: each attention kind's entropy per layer against tokens (seeds averaged), deeper darker."""
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
    ax.set(xlabel="training tokens", ylim=(0, None))
    plain_ticks(ax.xaxis)


def draw_loss(ax, outcome: pd.DataFrame) -> None:
    """The loss panel: each attention kind's final loss (seed mean) against the rate, diverged rates marked."""
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
    ax.set(xscale="log", xlabel="peak learning rate", ylabel="final validation loss\n(nats/token)")
    ax.set_title("loss vs learning rate")


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    # a grid readable at page width: a panel per rate, the loss panel, then a cell for the two legends
    rates = sorted(frame["lr"].unique())
    rows, columns = grid_cells(len(rates) + 1)
    fig = plt.figure(figsize=(3 * columns, 3 * rows))
    cells = fig.add_gridspec(rows, columns)
    at = lambda k: cells[k // columns, k % columns]  # noqa: E731
    layers = sorted(frame["layer"].unique())
    axes = []
    for k, lr in enumerate(rates):
        ax = fig.add_subplot(at(k), sharey=axes[0] if axes else None)
        draw_entropy(ax, frame[frame["lr"] == lr], layers)
        ax.set_title(f"lr = {lr:g}")
        first_column = k % columns == 0
        ax.set_ylabel("attention entropy (nats)\none line per layer" if first_column else "")
        ax.tick_params(labelleft=first_column)
        axes.append(ax)
    spare = fig.add_subplot(at(len(rates) + 1))
    loss = fig.add_subplot(at(len(rates)))  # the last axes: the loss panel
    draw_loss(loss, frame.drop_duplicates("run_id"))
    legend_in(spare, axes[0], title="entropy (paler: earlier layer)")
    legend_in(spare, loss, loc="lower left", title="loss vs learning rate")
    return fig
