"""Levine: the depth of least loss at each N (parabola-refined on the per-depth fits) vs log N."""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.plots.sweep_common import depth_lines, n_range, read_table

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["n", "log_n", "optimal_depth", "depth_step", "slope", "intercept"]


def data(inputs):
    (grid,) = inputs
    runs = read_table(grid)
    lines = depth_lines(runs)
    spans = n_range(runs)
    # Only where every depth has trained runs: comparing the few deep models that reach the
    # largest N (or the shallow ones at the smallest) would bias the optimum, not measure it.
    depths = sorted(lines)
    low, high = (spans.loc[depths, "min"].max(), spans.loc[depths, "max"].min()) if depths else (0, 0)
    rows = []
    for n in np.geomspace(low, high, 25) if low < high and len(depths) >= 2 else []:
        losses = [float(np.exp(lines[d](np.log(n)))) for d in depths]
        rows.append(
            {
                "n": n,
                "log_n": np.log(n),
                "optimal_depth": fits.optimal_depth(depths, losses),
                "depths_compared": len(depths),
            }
        )
    frame = pd.DataFrame(rows, columns=["n", "log_n", "optimal_depth", "depths_compared"])
    frame["depth_step"] = float(np.diff(depths).min()) if len(depths) >= 2 else np.nan
    if frame["log_n"].nunique() >= 2:
        line = fits.fit_line(frame["log_n"], frame["optimal_depth"])
        frame["slope"], frame["intercept"] = line.slope, line.intercept
    else:
        frame["slope"] = frame["intercept"] = np.nan
    return frame


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.plot(frame["n"], frame["optimal_depth"], "o-", color="k", ms=4, label="depth of least loss")
    if len(frame) and np.isfinite(frame["slope"].iloc[0]):
        slope, intercept = frame["slope"].iloc[0], frame["intercept"].iloc[0]
        ax.plot(
            frame["n"], intercept + slope * frame["log_n"], color="C0", label=f"fit: {slope:.2f} layers per e-fold of N"
        )
    ax.set(xscale="log", xlabel="non-embedding parameters N", ylabel="optimal depth")
    ax.legend(fontsize=8)
    return fig
