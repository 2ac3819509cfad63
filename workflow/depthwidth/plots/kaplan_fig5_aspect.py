"""Kaplan Fig. 5 (aspect): loss increase over the L(N) fit vs aspect ratio d_model / n_layer, at fixed N."""

from __future__ import annotations

from depthwidth.plots.sweep_common import draw_increase, loss_increase, read_table

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "n_target",
    "aspect_ratio",
    "n_layer",
    "d_model",
    "seed",
    "status",
    "final_val_loss",
    "loss_fit",
    "increase_pct",
    "increase_pct_mean",
    "increase_pct_ci_low",
    "increase_pct_ci_high",
    "seeds",
    "noise_sd_pct",
    "noise_dof",
    "baseline_rms_pct",
]


def data(inputs):
    experiment, baseline = inputs
    return loss_increase(read_table(experiment), read_table(baseline))


def draw(frame):
    return draw_increase(frame, knob="aspect_ratio", label="aspect ratio d_model / n_layer")
