"""S2: rank collapse. Mean pairwise correlation vs t = layer / n: standard softmax attention
drives correlations to 1 with depth; shaped attention, with the same residual, does not; the
SDE mean follows the shaped network.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from depthwidth.plots.common import PALETTE, legend_outside

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["source", "attention", "n", "t", "mean_rho", "sem_rho", "curve"]


def data(trajectory: Path) -> pd.DataFrame:
    """The trajectory table's rows (by path), each named by its curve: the SDE, or a finite network's attention, n."""
    frame = pd.read_csv(trajectory)
    frame["curve"] = frame.apply(
        lambda r: "SDE (shaped)" if r["source"] == "sde" else f"finite {r['attention']} (n = {int(r['n'])})", axis=1
    )
    return frame


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for curve, group in frame.groupby("curve"):
        key = "sde" if group["source"].iloc[0] == "sde" else group["attention"].iloc[0]
        style = dict(ls="--", lw=2) if key == "sde" else dict(lw=1.6)
        ax.plot(group["t"], group["mean_rho"], color=PALETTE[key], label=curve, **style)
        ax.fill_between(
            group["t"],
            group["mean_rho"] - 2 * group["sem_rho"],
            group["mean_rho"] + 2 * group["sem_rho"],
            color=PALETTE[key],
            alpha=0.2,
        )
    ax.axhline(1, color="0.3", lw=0.8)
    ax.set(xlabel="t = layer / n", ylabel="mean pairwise correlation", ylim=(None, 1.02))
    legend_outside(ax, "below", ncol=2)
    return fig
