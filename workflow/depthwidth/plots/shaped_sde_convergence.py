"""S3: distance between the finite-n and the SDE laws of rho_T vs width n, log-log.

The SDE is the n -> infinity limit, so the distance must shrink with n, down to what sampling
alone gives. That sampling threshold is measured, not assumed: `w1_null_q95` is the 95% quantile
of W1 when the finite and SDE samples are pooled and split at random (a permutation test; its
p-value is `w1_p`), so W1 above it is a difference the samples resolve. `w1_floor` (two halves
of the SDE samples) is kept for comparison. Both sides are conditioned alike: each on its own
paths that finished (a finite network can blow up too); the stopped fractions of both are
columns, with `stopped_z`, the two-proportion z of their difference.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.plots.shaped_common import finished, read_terminal
from depthwidth.shaped_sim import ks_distance, wasserstein1

PERMUTATIONS = 200

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "block",
    "n",
    "w1",
    "ks",
    "w1_floor",
    "w1_null_q95",
    "w1_p",
    "samples",
    "sde_samples",
    "stopped_finite",
    "stopped_sde",
    "stopped_z",
    "w1_slope",
]


def permutation_null(x: np.ndarray, y: np.ndarray, permutations: int = PERMUTATIONS) -> np.ndarray:
    """W1 between random splits of the pooled samples (sizes of x and y): its law when both share one law."""
    rng = np.random.default_rng(0)
    pooled = np.concatenate([x, y])
    out = np.empty(permutations)
    for i in range(permutations):
        shuffled = rng.permutation(pooled)
        out[i] = wasserstein1(shuffled[: x.size], shuffled[x.size :])
    return out


def two_proportion_z(stopped_a: int, total_a: int, stopped_b: int, total_b: int) -> float:
    """z statistic of the difference of two stopped fractions (0 when neither side stops)."""
    pooled = (stopped_a + stopped_b) / (total_a + total_b)
    se = math.sqrt(pooled * (1 - pooled) * (1 / total_a + 1 / total_b))
    return (stopped_a / total_a - stopped_b / total_b) / se if se > 0 else 0.0


def data(inputs):
    (terminal,) = inputs
    samples = read_terminal(terminal)
    shaped = samples[samples["attention"] == "shaped"]
    rows = []
    for block, by_block in shaped.groupby("block"):
        sde_all = by_block[by_block["source"] == "sde"]
        sde = finished(sde_all)["rho01"].to_numpy()
        half = len(sde) // 2
        floor = wasserstein1(sde[:half], sde[half:]) / np.sqrt(2)  # halves are twice as noisy as the whole
        for n, group in by_block[by_block["source"] == "finite"].groupby("n"):
            values = finished(group)["rho01"].to_numpy()
            w1 = wasserstein1(values, sde)
            null = permutation_null(values, sde)
            rows.append(
                {
                    "block": block,
                    "n": int(n),
                    "w1": w1,
                    "ks": ks_distance(values, sde),
                    "w1_floor": floor,
                    "w1_null_q95": float(np.quantile(null, 0.95)),
                    "w1_p": float((1 + (null >= w1).sum()) / (1 + null.size)),
                    "samples": len(values),
                    "sde_samples": len(sde),
                    "stopped_finite": 1 - len(values) / len(group),
                    "stopped_sde": 1 - len(sde) / len(sde_all),
                    "stopped_z": two_proportion_z(
                        len(group) - len(values), len(group), len(sde_all) - len(sde), len(sde_all)
                    ),
                }
            )
    frame = pd.DataFrame(rows, columns=COLUMNS[:-1])
    slopes = {
        block: fits.fit_line(np.log(g["n"]), np.log(g["w1"])).slope
        for block, g in frame.groupby("block")
        if g["n"].nunique() >= 2
    }
    frame["w1_slope"] = frame["block"].map(slopes)
    return frame


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for (block, group), color in zip(frame.groupby("block"), ("C0", "C1", "C2")):
        ax.plot(group["n"], group["w1"], "o-", color=color, label=f"{block}: W1, slope {group['w1_slope'].iloc[0]:.2f}")
        ax.plot(group["n"], group["ks"], "s:", color=color, alpha=0.6, label=f"{block}: KS")
        ax.plot(
            group["n"], group["w1_null_q95"], "--", color=color, lw=0.9, label=f"{block}: 95% of W1 from sampling alone"
        )
    ax.set(xscale="log", yscale="log", xlabel="width n (depth T n)", ylabel="distance to the SDE law")
    ax.legend(fontsize=7)
    return fig
