"""Loss vs non-embedding N at fixed aspect ratio, with the power-law fit L = (N_c / N)^alpha."""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth.plots.sweep_common import baseline_law, read_table

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "n_nonembedding",
    "final_val_loss",
    "status",
    "loss_fit",
    "alpha",
    "log_n_c",
    "alpha_ci_low",
    "alpha_ci_high",
]


def data(inputs):
    (baseline,) = inputs
    runs = read_table(baseline)
    law = baseline_law(runs)
    runs["loss_fit"] = law(runs["n_nonembedding"])
    runs["alpha"], runs["log_n_c"] = law.alpha, law.log_n_c
    runs["alpha_ci_low"], runs["alpha_ci_high"] = law.alpha_ci95
    return runs


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    finished = frame[frame["status"] == "ok"]
    ax.scatter(finished["n_nonembedding"], finished["final_val_loss"], color="k", s=18, label="runs")
    grid = np.geomspace(frame["n_nonembedding"].min(), frame["n_nonembedding"].max(), 50)
    alpha, log_n_c = frame["alpha"].iloc[0], frame["log_n_c"].iloc[0]
    low, high = frame["alpha_ci_low"].iloc[0], frame["alpha_ci_high"].iloc[0]
    ax.plot(
        grid,
        np.exp(alpha * (log_n_c - np.log(grid))),
        color="C0",
        label=f"fit: alpha = {alpha:.3f} [{low:.3f}, {high:.3f}] (Kaplan: 0.076)",
    )
    ax.set(xscale="log", yscale="log", xlabel="non-embedding parameters N", ylabel="validation loss (nats/token)")
    ax.legend(fontsize=8)
    return fig
