"""S3: distance between the finite-n and the SDE laws of rho_T vs width n, log-log.

The SDE is the n -> infinity limit, so the distance must shrink with n, down to the sampling
floor (the distance between two independent halves of the SDE samples).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.plots.shaped_common import finished, read_terminal
from depthwidth.shaped_sim import ks_distance, wasserstein1

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["block", "n", "w1", "ks", "w1_floor", "w1_slope"]


def data(inputs):
    (terminal,) = inputs
    samples = finished(read_terminal(terminal))
    shaped = samples[samples["attention"] == "shaped"]
    rows = []
    for block, by_block in shaped.groupby("block"):
        sde = by_block.loc[by_block["source"] == "sde", "rho01"].to_numpy()
        half = len(sde) // 2
        floor = wasserstein1(sde[:half], sde[half:]) / np.sqrt(2)  # halves are twice as noisy as the whole
        finite = by_block[by_block["source"] == "finite"]
        for n, group in finite.groupby("n"):
            values = group["rho01"].to_numpy()
            rows.append(
                {
                    "block": block,
                    "n": int(n),
                    "w1": wasserstein1(values, sde),
                    "ks": ks_distance(values, sde),
                    "w1_floor": floor,
                    "samples": len(values),
                    "sde_samples": len(sde),
                }
            )
    frame = pd.DataFrame(rows, columns=["block", "n", "w1", "ks", "w1_floor", "samples", "sde_samples"])
    slopes = {
        block: fits.fit_line(np.log(g["n"]), np.log(g["w1"])).slope
        for block, g in frame.groupby("block")
        if g["n"].nunique() >= 2
    }
    frame["w1_slope"] = frame["block"].map(slopes)
    return frame


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for (block, group), color in zip(frame.groupby("block"), ("C0", "C1", "C2")):
        ax.plot(group["n"], group["w1"], "o-", color=color, label=f"{block}: W1, slope {group['w1_slope'].iloc[0]:.2f}")
        ax.plot(group["n"], group["ks"], "s:", color=color, alpha=0.6, label=f"{block}: KS")
        ax.axhline(group["w1_floor"].iloc[0], color=color, lw=0.8, ls="--", alpha=0.7)
    ax.set(xscale="log", yscale="log", xlabel="width n (depth T n)", ylabel="distance to the SDE law")
    ax.legend(fontsize=8, title="dashed: sampling floor of W1")
    return fig
