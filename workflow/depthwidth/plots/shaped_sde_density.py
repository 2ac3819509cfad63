"""S1: density of the terminal correlation rho_T of tokens 0 and 1, finite shaped networks of
several widths n (depth T n) against the covariance SDE at its finer step (Noci et al.: the SDE
describes finite networks well), with the drift-only ODE's terminal value (the deterministic limit).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from depthwidth.plots.shaped_common import finished, read_terminal

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["block", "source", "n", "rho", "density", "samples", "blowup_fraction"]


def density(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Gaussian kernel density of the finished samples on `grid` (Silverman's bandwidth, 1.06 sd n^-1/5);
    nan where fewer than two samples finished or none differ."""
    if len(values) < 2 or not np.ptp(values) > 0:
        return np.full(grid.shape, np.nan)
    return stats.gaussian_kde(values, bw_method="silverman")(grid)


def data(terminal: Path) -> pd.DataFrame:
    """The terminal correlation densities of the finite networks and the SDE (the terminal table by path)."""
    samples = read_terminal(terminal)
    shaped = samples[samples["attention"] == "shaped"]
    finest = shaped.groupby("block")["dt"].transform("min")  # the SDE and its ODE at their finest step
    shaped = shaped[(shaped["source"] == "finite") | (shaped["dt"] == finest)]
    ok = finished(shaped[shaped["source"] != "ode"])
    grid = np.linspace(ok["rho01"].quantile(0.001), ok["rho01"].quantile(0.999), 200)
    rows = []
    for (block, source, n), group in shaped.groupby(["block", "source", "n"], dropna=False):
        values = finished(group)["rho01"].to_numpy()
        # the ODE has one terminal value: a point at it, not a density on the grid
        rho, dens = (values, np.nan) if source == "ode" else (grid, density(values, grid))
        rows.append(
            pd.DataFrame(
                {
                    "block": block,
                    "source": source,
                    "n": n,
                    "rho": rho,
                    "density": dens,
                    "samples": len(values),
                    "blowup_fraction": 1 - len(values) / len(group),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    from depthwidth.plots.common import legend_outside

    blocks = sorted(frame["block"].unique())
    # two panels to a row at most, readable at page width; one legend under them (every panel draws the same series)
    columns = min(len(blocks), 2)
    rows = -(-len(blocks) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.5 * columns, 3.8 * rows), squeeze=False)
    widths = sorted(frame["n"].dropna().unique())
    colors = dict(zip(widths, sns.color_palette("crest", len(widths))))
    for ax, block in zip(axes.flat, blocks):
        stopped = ""
        for (source, n), curve in frame[frame["block"] == block].groupby(["source", "n"], dropna=False):
            if source == "ode":
                ax.axvline(curve["rho"].iloc[0], color="0.4", lw=1.2, ls=":", label="drift-only ODE (no noise)")
            elif source == "sde":
                stopped = f"\nSDE paths stopped (blow-up or PSD exit): {curve['blowup_fraction'].iloc[0]:.1%}"
                ax.plot(curve["rho"], curve["density"], color="k", lw=2.2, ls="--", label="SDE")
            else:
                ax.plot(curve["rho"], curve["density"], color=colors[n], lw=1.4, label=f"finite n = {int(n)}")
        ax.set(xlabel="terminal correlation rho_T (tokens 0, 1)", ylabel="density")
        ax.xaxis.set_major_locator(plt.MultipleLocator(0.5))  # five labels across [-1, 1], not nine that touch
        ax.set_title(f"block: {block}{stopped}", fontsize=10)
    for ax in axes.flat[len(blocks) :]:
        ax.axis("off")
    legend_outside(fig.axes[0], "under", ncol=min(len(widths) + 2, 5))
    return fig
