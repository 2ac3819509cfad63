"""Kaplan Fig. 5 (aspect): loss increase over the L(N) fit vs aspect ratio d_model / n_layer, at fixed N."""

from __future__ import annotations

from depthwidth.plots.sweep_common import INCREASE_COLUMNS, draw_increase, loss_increase, read_table

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = ["n_target", "aspect_ratio", *INCREASE_COLUMNS]


def data(inputs):
    experiment, baseline = inputs
    return loss_increase(read_table(experiment), read_table(baseline))


def draw(frame):
    return draw_increase(frame, knob="aspect_ratio", label="aspect ratio d_model / n_layer")
