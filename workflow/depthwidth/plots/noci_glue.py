"""Noci: GLUE fine-tuning, shaped against standard. One panel per task and score (CoLA's Matthews correlation
and F1, RTE's accuracy): each model's mean over fine-tuning seeds with its 95% t-interval, the seeds as dots,
and chance level (MCC 0, RTE 50%) as a dashed line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.glue.contracts import CHANCE, PRIMARY, REPORTED
from depthwidth.plots.common import PALETTE, legend_outside

ATTENTIONS = ("standard", "shaped")
LABELS = {"mcc": "Matthews correlation", "f1": "F1", "accuracy": "accuracy", "cola": "CoLA", "rte": "RTE"}
# the columns draw() and the claim read; the figure's CSV must have them
COLUMNS = ["task", "metric", "attention", "primary", "seeds", "mean", "sd", "low", "high", "chance", "values"]


def summary(values: np.ndarray) -> tuple[float, float, float, float]:
    """Mean, sd and the t-interval of the mean of per-seed scores at `fits.level()` (95% by default; nan sd and
    interval under 2 seeds)."""
    mean = float(values.mean()) if values.size else math.nan
    if values.size < 2:
        return mean, math.nan, math.nan, math.nan
    sd = float(values.std(ddof=1))
    half = fits.t_quantile(values.size - 1) * sd / math.sqrt(values.size)
    return mean, sd, mean - half, mean + half


def data(glue: Path) -> pd.DataFrame:
    """Per task, metric and attention: the mean score over seeds and its interval (the GLUE table by path)."""
    frame = pd.read_csv(glue)
    rows = []
    for task in dict.fromkeys(frame["task"]):
        for metric in REPORTED[task]:
            for attention in ATTENTIONS:
                values = frame.loc[(frame["task"] == task) & (frame["attention"] == attention), metric].to_numpy(float)
                mean, sd, low, high = summary(values)
                rows.append({
                    "task": task, "metric": metric, "attention": attention, "primary": metric == PRIMARY[task],
                    "seeds": values.size, "mean": mean, "sd": sd, "low": low, "high": high, "chance": CHANCE[metric],
                    "values": " ".join(f"{v:.6g}" for v in values),
                })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(zip(frame["task"], frame["metric"])))
    columns = min(len(panels), 3)  # three panels to a row at most, readable at page width
    lines = -(-len(panels) // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(2.8 * columns, 3.4 * lines), squeeze=False)
    for ax, (task, metric) in zip(axes.flat, panels):
        rows = frame[(frame["task"] == task) & (frame["metric"] == metric)]
        for x, row in enumerate(rows.itertuples()):
            color = PALETTE[row.attention]
            values = [float(v) for v in str(row.values).split()] if isinstance(row.values, str) else []
            ax.scatter([x + 0.15] * len(values), values, color=color, alpha=0.5, s=14)
            if np.isfinite(row.low):
                ax.errorbar([x], [row.mean], yerr=[[row.mean - row.low], [row.high - row.mean]], color=color, capsize=4)
            ax.scatter([x], [row.mean], color=color, s=40, label=row.attention)
        if np.isfinite(rows["chance"].iloc[0]):
            ax.axhline(rows["chance"].iloc[0], color="grey", ls="--", lw=1, label="chance")
        ax.set_xticks(range(len(rows)), list(rows["attention"]))
        ax.set_xlim(-0.5, len(rows) - 0.5)
        ax.set(title=f"{LABELS[task]}: {LABELS[metric]}", ylabel=f"dev {LABELS[metric]}")
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    legend_outside(axes.flat[0], "under", ncol=3)
    return fig
