"""Shared by the sweep figures: reading sweep tables, the L(N) baseline fit, per-depth fits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits


def read_table(path: Path) -> pd.DataFrame:
    """A sweep table (results/tables/sweep_<experiment>.csv)."""
    return pd.read_csv(path)


def ok(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs that finished with a finite loss; diverged runs are reported, never fitted."""
    return frame[(frame["status"] == "ok") & np.isfinite(frame["final_val_loss"])]


def baseline_law(baseline: pd.DataFrame) -> fits.PowerLaw:
    """L(N) fitted on the fixed-aspect-ratio family, 1-layer models excluded as in Kaplan."""
    runs = ok(baseline)
    runs = runs[runs["n_layer"] > 1] if (runs["n_layer"] > 1).sum() >= 2 else runs
    return fits.fit_power_law(runs["n_nonembedding"], runs["final_val_loss"])


def loss_increase(experiment: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """The experiment's runs with the L(N) fit at their N and the loss increase in percent."""
    law = baseline_law(baseline)
    rows = experiment.copy()
    rows["loss_fit"] = law(rows["n_nonembedding"])
    rows["increase_pct"] = fits.loss_increase_percent(rows["final_val_loss"], rows["n_nonembedding"], law)
    rows["alpha"] = law.alpha
    return rows


def n_range(grid: pd.DataFrame) -> pd.DataFrame:
    """Per depth, the smallest and largest non-embedding N of its finished runs (columns min, max)."""
    return ok(grid).groupby("n_layer")["n_nonembedding"].agg(["min", "max"])


def depth_lines(grid: pd.DataFrame) -> dict[int, fits.Line]:
    """Per depth: log(loss) against log(non-embedding N), seeds averaged, on finished runs."""
    mean = ok(grid).groupby(["n_layer", "d_model"], as_index=False)[["n_nonembedding", "final_val_loss"]].mean()
    lines = {}
    for depth, runs in mean.groupby("n_layer"):
        if runs["n_nonembedding"].nunique() >= 2:
            lines[int(depth)] = fits.fit_line(np.log(runs["n_nonembedding"]), np.log(runs["final_val_loss"]))
    return lines


def draw_increase(frame: pd.DataFrame, knob: str, label: str, hue: str = "n_target"):
    """Loss increase (%) over the L(N) fit vs a shape knob, one line per N (mean and spread over seeds)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(5.5, 4))
    finished = ok(frame).assign(N=lambda f: f[hue].map(lambda n: f"{n:.2g}"))
    sns.lineplot(
        data=finished,
        x=knob,
        y="increase_pct",
        hue="N",
        marker="o",
        errorbar="sd",
        palette="viridis",
        ax=ax,
        legend="full",
    )
    diverged = frame[frame["status"] != "ok"]
    if len(diverged):
        ax.scatter(
            diverged[knob],
            [finished["increase_pct"].max()] * len(diverged),
            marker="x",
            color="red",
            label=f"diverged ({len(diverged)})",
        )
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(label)
    ax.set_ylabel("loss increase over L(N) fit (%)")
    ax.legend(title="N (non-emb.)", fontsize=8)
    return fig
