"""Kaplan Fig. 5 (aspect): loss increase over the L(N) fit vs aspect ratio d_model / n_layer, at fixed N.

Counted three ways (`sweep_common.COUNTS`): the papers' non-embedding N, and total parameters and training
FLOPs, where each run's increase is over the baseline's power law in that count, at its own count.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from depthwidth import tilt
from depthwidth.plots.sweep_common import (
    COUNTS,
    INCREASE_COLUMNS,
    PAPERS_COUNT,
    draw_increase,
    increase_legend_title,
    loss_increase_at_each_count,
    read_table,
)

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["count", "n_target", "aspect_ratio", *INCREASE_COLUMNS, *tilt.ROW_COLUMNS]


def data(experiment: Path, baseline: Path) -> pd.DataFrame:
    """The design runs' loss increase over the baseline's L fit, at each count (sweep tables by path), with the depth
    tilt the aspect basin's spread carries (claims.kaplan)."""
    frame = loss_increase_at_each_count(read_table(experiment), read_table(baseline))
    return frame.assign(**tilt.row_range("design"))


def draw(frame):
    import matplotlib.pyplot as plt

    from depthwidth.plots.common import legend_in

    # a 2 x 2 grid, readable at page width: one panel per count, the legend in the fourth cell
    fig, grid = plt.subplots(2, 2, figsize=(9, 7), sharey=True)
    axes, spare = grid.flat[: len(COUNTS)], grid.flat[len(COUNTS)]
    for ax, count in zip(axes, COUNTS):
        rows = frame[frame["count"] == count]
        draw_increase(rows, knob="aspect_ratio", label="aspect ratio d_model / n_layer", ax=ax, legend=False)
        papers = " (the papers')" if count == PAPERS_COUNT else ""
        ax.set_title(f"over the L fit in {count}{papers}")
    for ax in axes:
        ax.set_ylabel(ax.get_ylabel() if ax.get_subplotspec().is_first_col() else "")
    legend_in(spare, axes[0], title=increase_legend_title(frame[frame["count"] == PAPERS_COUNT]))
    return fig
