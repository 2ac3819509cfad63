"""S3: distance between the finite-n and the SDE laws of rho_T vs width n, log-log.

The SDE is the n -> infinity limit, so the distance must shrink with n, down to what sampling
alone gives. That sampling threshold is measured, not assumed: `w1_null_q95` is the 95% quantile
of W1 when the finite and SDE samples are pooled and split at random (a permutation test; its
p-value is `w1_p`), so W1 above it is a difference the samples resolve. `w1_floor` (two halves
of the SDE samples) is kept for comparison. Both sides are conditioned alike: each on its own
paths that finished (a finite network can blow up too); the stopped fractions of both are
columns, with `stopped_z`, the two-proportion z of their difference.

Convergence is measured on smooth functionals of the terminal law, the mean and the sd of rho_T,
with their standard errors (the sd's by the delta method, from the fourth central moment): the
finite networks' value against 1/n is fitted by weighted least squares, a + c / n (its standard
errors scaled up by the fit's chi^2 per dof where that exceeds 1), and the gap of the limit a to
the SDE's value (`limit_gap_*`, with `limit_gap_*_se`) is what n -> infinity leaves. The rate is the
slope of ln |finite - SDE| against ln n over the widths where the gap is resolved (> 2 se).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from depthwidth import fits
from depthwidth.plots.shaped_common import finished, read_terminal

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
    *[f"{side}_{stat}" for side in ("finite", "sde") for stat in ("mean", "mean_se", "sd", "sd_se")],
    "w1_slope",
    *[f"limit_gap_{stat}{suffix}" for stat in ("mean", "sd") for suffix in ("", "_se")],
    "rate",
    "rate_ci_low",
    "rate_ci_high",
    "rate_points",
]
PER_BLOCK = COLUMNS[COLUMNS.index("w1_slope") :]  # one value per block, after the per-width columns


def permutation_null(x: np.ndarray, y: np.ndarray, permutations: int = PERMUTATIONS) -> np.ndarray:
    """W1 between random splits of the pooled samples (sizes of x and y): its law when both share one law."""
    rng = np.random.default_rng(0)
    pooled = np.concatenate([x, y])
    out = np.empty(permutations)
    for i in range(permutations):
        shuffled = rng.permutation(pooled)
        out[i] = stats.wasserstein_distance(shuffled[: x.size], shuffled[x.size :])
    return out


def two_proportion_z(stopped_a: int, total_a: int, stopped_b: int, total_b: int) -> float:
    """z statistic of the difference of two stopped fractions (0 when neither side stops)."""
    pooled = (stopped_a + stopped_b) / (total_a + total_b)
    se = math.sqrt(pooled * (1 - pooled) * (1 / total_a + 1 / total_b))
    return (stopped_a / total_a - stopped_b / total_b) / se if se > 0 else 0.0


def moments(values: np.ndarray) -> dict:
    """Mean and sd of a sample with their standard errors (the sd's: sqrt((m4 - s^4) / (4 s^2 n)))."""
    n, mean, sd = values.size, float(values.mean()), float(values.std(ddof=1))
    m4 = float(((values - mean) ** 4).mean())
    return {
        "mean": mean,
        "mean_se": sd / math.sqrt(n),
        "sd": sd,
        "sd_se": math.sqrt(max(m4 - sd**4, 0.0) / (4 * sd**2 * n)),
    }


def limit(n, values, se) -> tuple[float, float]:
    """a and its standard error in values = a + c / n, weighted least squares (weights 1 / se^2)."""
    n, values, se = (np.asarray(v, dtype=float) for v in (n, values, se))
    design = np.column_stack([np.ones_like(n), 1 / n])
    weights = 1 / se**2
    cov = np.linalg.inv(design.T @ (design * weights[:, None]))
    coef = cov @ design.T @ (weights * values)
    dof = n.size - 2
    chi2 = float((weights * (values - design @ coef) ** 2).sum()) / dof if dof > 0 else 1.0
    return float(coef[0]), math.sqrt(cov[0, 0] * max(chi2, 1.0))


def block_limits(rows: pd.DataFrame) -> dict:
    """Per block: the n -> infinity gap of the mean and sd to the SDE's, and the rate of the mean's gap."""
    out = {}
    for stat in ("mean", "sd"):
        a, a_se = limit(rows["n"], rows[f"finite_{stat}"], rows[f"finite_{stat}_se"])
        sde, sde_se = rows[f"sde_{stat}"].iloc[0], rows[f"sde_{stat}_se"].iloc[0]
        out[f"limit_gap_{stat}"], out[f"limit_gap_{stat}_se"] = a - sde, math.hypot(a_se, sde_se)
    gap = (rows["finite_mean"] - rows["sde_mean"]).abs()
    resolved = rows[gap > 2 * np.hypot(rows["finite_mean_se"], rows["sde_mean_se"])]
    out["rate_points"], out["rate"], out["rate_ci_low"], out["rate_ci_high"] = len(resolved), *[math.nan] * 3
    if resolved["n"].nunique() >= 3:
        line = fits.fit_line(np.log(resolved["n"]), np.log(gap[resolved.index]))
        out["rate"], (out["rate_ci_low"], out["rate_ci_high"]) = -line.slope, sorted(-v for v in line.slope_ci95)
    return out


def data(inputs):
    (terminal,) = inputs
    samples = read_terminal(terminal)
    shaped = samples[samples["attention"] == "shaped"]
    rows = []
    for block, by_block in shaped.groupby("block"):
        sde_all = by_block[by_block["source"] == "sde"]
        sde = finished(sde_all)["rho01"].to_numpy()
        half = len(sde) // 2
        floor = stats.wasserstein_distance(sde[:half], sde[half:]) / np.sqrt(
            2
        )  # halves are twice as noisy as the whole
        sde_moments = {f"sde_{k}": v for k, v in moments(sde).items()}
        for n, group in by_block[by_block["source"] == "finite"].groupby("n"):
            values = finished(group)["rho01"].to_numpy()
            w1 = stats.wasserstein_distance(values, sde)
            null = permutation_null(values, sde)
            rows.append(
                {
                    "block": block,
                    "n": int(n),
                    "w1": w1,
                    "ks": stats.ks_2samp(values, sde).statistic,
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
                    **{f"finite_{k}": v for k, v in moments(values).items()},
                    **sde_moments,
                }
            )
    frame = pd.DataFrame(rows, columns=COLUMNS[: COLUMNS.index("w1_slope")])
    per_block = {}
    for block, group in frame.groupby("block"):
        per_block[block] = {"w1_slope": math.nan, **dict.fromkeys(PER_BLOCK[1:], math.nan)}
        if group["n"].nunique() >= 2:
            per_block[block]["w1_slope"] = fits.fit_line(np.log(group["n"]), np.log(group["w1"])).slope
        if group["n"].nunique() >= 3:
            per_block[block].update(block_limits(group))
    for column in PER_BLOCK:
        frame[column] = frame["block"].map({block: values[column] for block, values in per_block.items()})
    return frame[COLUMNS]


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
