"""Loss vs non-embedding N at fixed aspect ratio, with the power-law fit L = (N_c / N)^alpha.

Besides the fit (alpha with its 95% t-interval over the runs, seeds as separate points) the data
carries a lack-of-fit test (the curvature of ln L in ln N, with its interval, and the sagitta it
implies: how far, in % of the loss, the fitted parabola bows from its chord at the middle of the
trained N span), the seed noise, the tokens each run saw, and the exponent Kaplan's L(N, D) (their
Eq. 1.5 and constants) has over our N range at those tokens: the slope their own law predicts at
our scale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.plots.sweep_common import baseline_law, ok, read_table, seed_noise_pct

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "n_nonembedding",
    "final_val_loss",
    "status",
    "seed",
    "loss_fit",
    "alpha",
    "log_n_c",
    "alpha_ci_low",
    "alpha_ci_high",
    "fit_points",
    "fit_groups",
    "rms_residual_pct",
    "curvature",
    "curvature_ci_low",
    "curvature_ci_high",
    "sagitta_pct",
    "sagitta_ci_low",
    "sagitta_ci_high",
    "sagitta_sys_down",
    "sagitta_sys_up",
    "noise_sd_pct",
    "noise_dof",
    "tokens_per_run",
    "kaplan_alpha",
    "kaplan_local_alpha",
    "kaplan_path_alpha",
]


def data(baseline: Path) -> pd.DataFrame:
    """The baseline runs with the L(N) fit, its exponent's interval, its curvature and Kaplan's exponents (the
    fixed-aspect-ratio sweep table by path)."""
    runs = read_table(baseline)
    law = baseline_law(runs)
    fitted = ok(runs)
    fitted = fitted[fitted["n_layer"] > 1] if (fitted["n_layer"] > 1).sum() >= 2 else fitted
    log_n, log_loss = np.log(fitted["n_nonembedding"]), np.log(fitted["final_val_loss"])
    # the seeds of one N share its deviation from the law (the runs' rms exceeds the seed sd): the intervals count
    # the N values, each its seeds' mean ln(loss), not the runs
    groups = (
        fitted.assign(log_n=log_n, log_loss=log_loss, excess=fitted.get("lr_excess_pct", np.nan))
        .groupby("n_nonembedding", as_index=False)[["log_n", "log_loss", "excess"]]
        .mean()
    )
    runs["loss_fit"] = law(runs["n_nonembedding"])
    runs["alpha"], runs["log_n_c"] = law.alpha, law.log_n_c
    by_n = fits.fit_line(groups["log_n"], groups["log_loss"]) if len(groups) >= 2 else None
    runs["alpha_ci_low"], runs["alpha_ci_high"] = sorted(-v for v in by_n.slope_ci95) if by_n else law.alpha_ci95
    runs["fit_points"], runs["fit_groups"] = law.n_points, len(groups)
    runs["rms_residual_pct"] = 100 * float(np.sqrt(np.mean((log_loss - np.log(law(fitted["n_nonembedding"]))) ** 2)))
    log_n, log_loss = groups["log_n"], groups["log_loss"]
    curvature = fits.curvature(log_n, log_loss)
    runs["curvature"], runs["curvature_ci_low"], runs["curvature_ci_high"] = curvature
    # how far ln L bows from the chord at the middle of the span: c (half the ln N span)^2, in % of the loss
    half_span = float(np.ptp(log_n)) / 2
    runs["sagitta_pct"], runs["sagitta_ci_low"], runs["sagitta_ci_high"] = (100 * c * half_span**2 for c in curvature)
    # the learning-rate systematic of the sagitta: each run's loss up to its shape's excess above its best rate
    excess = pd.to_numeric(groups["excess"], errors="coerce") / 100
    runs["sagitta_sys_down"], runs["sagitta_sys_up"] = fits.systematic_shift(
        lambda y: 100 * fits.curvature(log_n, y)[0] * half_span**2, log_loss.to_numpy(), excess
    )
    runs["noise_sd_pct"], runs["noise_dof"] = seed_noise_pct(runs)
    tokens = float(fitted["tokens_seen"].median())
    runs["tokens_per_run"] = tokens
    runs["kaplan_alpha"] = fits.KAPLAN_ALPHA_N
    n_low, n_high = float(fitted["n_nonembedding"].min()), float(fitted["n_nonembedding"].max())
    runs["kaplan_local_alpha"] = fits.kaplan_local_exponent(n_low, n_high, tokens)
    runs["kaplan_path_alpha"] = fits.kaplan_path_exponent(fitted["n_nonembedding"], fitted["tokens_seen"])
    return runs


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    from depthwidth.plots.common import legend_outside

    fig, ax = plt.subplots(figsize=(5.5, 4))
    finished = ok(frame)
    ax.scatter(finished["n_nonembedding"], finished["final_val_loss"], color="k", s=18, label="runs (all seeds)")
    grid = np.geomspace(frame["n_nonembedding"].min(), frame["n_nonembedding"].max(), 50)
    first = frame.iloc[0]
    alpha, log_n_c = first["alpha"], first["log_n_c"]
    low, high = first["alpha_ci_low"], first["alpha_ci_high"]
    fit = np.exp(alpha * (log_n_c - np.log(grid)))
    ax.plot(grid, fit, color="C0", label=f"fit: alpha = {alpha:.3f} [{low:.3f}, {high:.3f}]")
    # the band: every exponent in the interval, pivoting on the geometric centre of the N range
    centre = np.exp(np.log(grid).mean())
    at_centre = float(np.exp(alpha * (log_n_c - np.log(centre))))
    if np.isfinite(low) and np.isfinite(high):
        slopes = [at_centre * (grid / centre) ** -a for a in (low, high)]
        ax.fill_between(
            grid,
            np.minimum(*slopes),
            np.maximum(*slopes),
            color="C0",
            alpha=0.15,
            label=f"{fits.level_text()} CI of alpha",
        )
    for name, ref, color in (
        (
            f"Kaplan L(N, D) along the runs' N and tokens: {first['kaplan_path_alpha']:.3f}",
            "kaplan_path_alpha",
            "C3",
        ),
        (f"Kaplan alpha_N (unlimited data): {first['kaplan_alpha']:.3f}", "kaplan_alpha", "C2"),
    ):
        ax.plot(grid, at_centre * (grid / centre) ** -first[ref], ls="--", color=color, label=name)
    ax.set(xscale="log", yscale="log", xlabel="non-embedding parameters N", ylabel="validation loss (nats/token)")
    legend_outside(ax, "below")
    return fig
