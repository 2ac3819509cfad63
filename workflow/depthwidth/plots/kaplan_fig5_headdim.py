"""Kaplan Fig. 5 (headdim): loss increase over the L(N) fit vs head dimension d_model / n_head, at fixed N."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from depthwidth.plots.sweep_common import INCREASE_COLUMNS, draw_increase, loss_increase, read_table

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["n_target", "d_head", *INCREASE_COLUMNS]


def data(experiment: Path, baseline: Path) -> pd.DataFrame:
    """The head-dimension runs' loss increase over the baseline's L(N) fit (sweep tables by path)."""
    return loss_increase(read_table(experiment), read_table(baseline))


def draw(frame):
    return draw_increase(frame, knob="d_head", label="head dimension d_model / n_head")
