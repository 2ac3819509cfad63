"""Kaplan Fig. 5 (ffratio): loss increase over the L(N) fit vs feed-forward ratio d_ff / d_model, at fixed N."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from depthwidth import tilt
from depthwidth.plots.sweep_common import INCREASE_COLUMNS, draw_increase, loss_increase, read_table

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["n_target", "ff_ratio", *INCREASE_COLUMNS, *tilt.ROW_COLUMNS]


def data(experiment: Path, baseline: Path) -> pd.DataFrame:
    """The feed-forward runs' loss increase over the baseline's L(N) fit (sweep tables by path), with the
    feed-forward tilt the spread over ratios carries (claims.kaplan)."""
    return loss_increase(read_table(experiment), read_table(baseline)).assign(**tilt.row_range("ff_ratio"))


def draw(frame):
    return draw_increase(frame, knob="ff_ratio", label="feed-forward ratio d_ff / d_model")
