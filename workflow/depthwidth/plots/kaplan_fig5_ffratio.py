"""Kaplan Fig. 5 (ffratio): loss increase over the L(N) fit vs feed-forward ratio d_ff / d_model, at fixed N."""

from __future__ import annotations

from depthwidth.plots.sweep_common import draw_increase, loss_increase, read_table


def data(inputs):
    experiment, baseline = inputs
    return loss_increase(read_table(experiment), read_table(baseline))


def draw(frame):
    return draw_increase(frame, knob="ff_ratio", label="feed-forward ratio d_ff / d_model")
