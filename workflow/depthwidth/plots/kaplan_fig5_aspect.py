"""Kaplan Fig. 5 (aspect): loss increase over the L(N) fit vs aspect ratio d_model / n_layer, at fixed N.

Counted three ways (`sweep_common.COUNTS`): the papers' non-embedding N, and total parameters and training
FLOPs, where each run's increase is over the baseline's power law in that count, at its own count.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from depthwidth.plots.sweep_common import (
    COUNTS,
    INCREASE_COLUMNS,
    PAPERS_COUNT,
    draw_increase,
    loss_increase_at_each_count,
    read_table,
)

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["count", "n_target", "aspect_ratio", *INCREASE_COLUMNS]


def data(experiment: Path, baseline: Path) -> pd.DataFrame:
    """The design runs' loss increase over the baseline's L fit, at each count (sweep tables by path)."""
    return loss_increase_at_each_count(read_table(experiment), read_table(baseline))


def draw(frame):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(COUNTS), figsize=(15, 4), sharey=True)
    for ax, count in zip(axes, COUNTS):
        rows = frame[frame["count"] == count]
        draw_increase(rows, knob="aspect_ratio", label="aspect ratio d_model / n_layer", ax=ax)
        papers = " (the papers')" if count == PAPERS_COUNT else ""
        ax.set_title(f"over the L fit in {count}{papers}", fontsize=10)
    for ax in axes[1:]:
        ax.set_ylabel("")
    return fig
