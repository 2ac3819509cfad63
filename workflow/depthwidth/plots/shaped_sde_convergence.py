"""S3: distance between the finite-n and the SDE laws of rho_T vs width n, log-log.

The SDE is the n -> infinity limit, so the distance must shrink with n, down to what sampling
alone gives. That sampling threshold is measured, not assumed: `w1_null_q95` is the `fits.level()` quantile
(95% by default, whence the name) of W1 when the finite and SDE samples are pooled and split at random (a
permutation test; its p-value is `w1_p`), so W1 above it is a difference the samples resolve. `w1_floor` (two halves
of the SDE samples) is kept for comparison. Both sides are conditioned alike: each on its own
paths that finished (a finite network can blow up too); the stopped fractions of both are
columns, with their difference finite - SDE (`stopped_diff`) and its interval (`stopped_diff_low`, `_high`:
Newcombe's hybrid score interval from the two Wilson intervals, which keeps its coverage at fractions near 0).

Convergence is measured on smooth functionals of the terminal law (FUNCTIONALS: the mean, the sd
and the quartiles of rho_T) with their standard errors (the sd's by the delta method, from the
fourth central moment; a quantile's from its asymptotic law, sqrt(p (1 - p) / N) / density). The
SDE's value is its own limit dt -> 0: the SDE runs at two steps, and Richardson extrapolation for
Euler's weak order 1 removes the O(dt) bias (`sde_dt_bias_*` is what remained at the finer step).
The finite networks' value against n is fitted by weighted least squares, a + c n^-beta (its standard
errors scaled up by the fit's chi^2 per dof where that exceeds 1), and the gap of the limit a to the
SDE's (`limit_gap_*`, with `limit_gap_*_se`) is what n -> infinity leaves. beta is 1 or 1/2 as the
measured rate's interval allows (`limit_betas`; both, the hull of the two fits' intervals, where it
allows both or neither). The rate is the slope of
ln |finite - SDE| in the mean against ln n over the widths where the gap is resolved (> 2 se).

"Surprisingly good" is set against an alternative: the drift-only ODE (the SDE without its noise,
the deterministic limit that ignores fluctuations of order depth / width). `ode_ratio` is W1 to the
SDE over W1 to the ODE's terminal value, with a bootstrap interval over both sides' samples.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from depthwidth import fits
from depthwidth.plots.shaped_common import finished, read_terminal, sde_steps

PERMUTATIONS = 200
BOOTSTRAP = 200  # resamples of the ODE ratio's interval
EULER_WEAK_ORDER = 1  # of Euler-Maruyama (and of the multiplicative scheme): the bias is O(dt)
QUARTILES = {"q25": 0.25, "q50": 0.5, "q75": 0.75}
FUNCTIONALS = ("mean", "sd", *QUARTILES)
# A limit gap's interval is its gap +- z se and the Wilson intervals' z the same, z = `fits.z_quantile()` at the
# current level (the claims' too). Z975 is that z at the default level (1.96), for readers that want a number.
Z975 = fits.z_quantile(fits.LEVEL)

# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "block",
    "n",
    "w1",
    "ks",
    "w1_floor",
    "w1_null_q95",
    "w1_p",
    "w1_ode",
    "ode_ratio",
    "ode_ratio_low",
    "ode_ratio_high",
    "samples",
    "sde_samples",
    "stopped_finite",
    "stopped_sde",
    "stopped_diff",
    "stopped_diff_low",
    "stopped_diff_high",
    *[f"{side}_{stat}{suffix}" for side in ("finite", "sde") for stat in FUNCTIONALS for suffix in ("", "_se")],
    *[f"sde_dt_bias_{stat}" for stat in FUNCTIONALS],
    "sde_dt",
    "sde_dt_coarse",
    "ode_rho",
    "w1_slope",
    *[f"limit_gap_{stat}{suffix}" for stat in FUNCTIONALS for suffix in ("", "_se")],
    "rate",
    "rate_ci_low",
    "rate_ci_high",
    "rate_points",
    "limit_beta",
]
PER_BLOCK = COLUMNS[COLUMNS.index("w1_slope") :]  # one value per block, after the per-width columns


def _ranked(*samples: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The samples pooled and sorted, and each sample's places in that order (the rank of each of its values)."""
    pooled = np.concatenate(samples)
    order = np.argsort(pooled, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return pooled[order], np.split(rank, np.cumsum([s.size for s in samples])[:-1])


def _w1_counted(values: np.ndarray, x_counts: np.ndarray, y_counts: np.ndarray) -> float:
    """stats.wasserstein_distance between a sample holding each of the sorted `values` x_counts times and one holding
    it y_counts times, bit for bit, without its sorts and searches: its CDF differences times the gaps between the
    sorted values, summed as it sums them (np.vecdot). Its CDFs count with searchsorted, these by running sums; the
    two differ only inside a run of equal values, where the gap, and so the term, is 0 in both."""
    repeats = x_counts + y_counts
    x_cdf = np.repeat(np.cumsum(x_counts), repeats)[:-1] / x_counts.sum()
    y_cdf = np.repeat(np.cumsum(y_counts), repeats)[:-1] / y_counts.sum()
    terms, gaps = np.abs(x_cdf - y_cdf), np.diff(np.repeat(values, repeats))
    return float(np.vecdot(terms, gaps) if hasattr(np, "vecdot") else np.sum(terms * gaps))  # as scipy's np_vecdot


def permutation_null(x: np.ndarray, y: np.ndarray, permutations: int = PERMUTATIONS) -> np.ndarray:
    """W1 between random splits of the pooled samples (sizes of x and y): its law when both share one law.
    Each split is the first x.size of `rng.permutation(pooled)`, found by ranks in the pooled sorted values once
    (the permutation of the indices draws what the permutation of the values does)."""
    rng = np.random.default_rng(0)
    values, (ranks,) = _ranked(np.concatenate([x, y]))
    out = np.empty(permutations)
    for i in range(permutations):
        in_x = np.zeros(values.size, dtype=np.int64)
        in_x[ranks[rng.permutation(values.size)[: x.size]]] = 1
        out[i] = _w1_counted(values, in_x, 1 - in_x)
    return out


def wilson(stopped: int, total: int) -> tuple[float, float]:
    """Wilson's score interval of a fraction stopped / total at `fits.level()` (95% by default; nan without
    paths)."""
    if total <= 0:
        return math.nan, math.nan
    z = fits.z_quantile()
    z2 = z**2
    centre = (stopped + z2 / 2) / (total + z2)
    half = z * math.sqrt(stopped * (total - stopped) / total + z2 / 4) / (total + z2)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def stopped_difference(stopped_a: int, total_a: int, stopped_b: int, total_b: int) -> tuple[float, float, float]:
    """a's stopped fraction minus b's with Newcombe's (1998, method 10) hybrid score interval at `fits.level()`:
    each end moves from the difference by the two Wilson intervals' reaches on the sides that widen it (a Wald
    interval of fractions near 0 has a width near 0 and undercovers)."""
    (low_a, high_a), (low_b, high_b) = wilson(stopped_a, total_a), wilson(stopped_b, total_b)
    if total_a <= 0 or total_b <= 0:
        return math.nan, math.nan, math.nan
    a, b = stopped_a / total_a, stopped_b / total_b
    low = a - b - math.hypot(a - low_a, high_b - b)
    high = a - b + math.hypot(high_a - a, b - low_b)
    return a - b, low, high


def functionals(values: np.ndarray) -> dict:
    """The FUNCTIONALS of a sample with their standard errors: the mean's sd / sqrt(N); the sd's
    sqrt((m4 - s^4) / (4 s^2 N)); a quantile's sqrt(p (1 - p) / N) / f(q), f a Gaussian kernel density."""
    n, mean, sd = values.size, float(values.mean()), float(values.std(ddof=1))
    m4 = float(((values - mean) ** 4).mean())
    out = {"mean": mean, "mean_se": sd / math.sqrt(n), "sd": sd}
    out["sd_se"] = math.sqrt(max(m4 - sd**4, 0.0) / (4 * sd**2 * n))
    kde = stats.gaussian_kde(values, bw_method="silverman")
    for stat, p in QUARTILES.items():
        q = float(np.quantile(values, p))
        out[stat], out[f"{stat}_se"] = q, math.sqrt(p * (1 - p) / n) / float(kde(q)[0])
    return out


def richardson(coarse: tuple[float, float, float], fine: tuple[float, float, float], order: int = EULER_WEAK_ORDER):
    """A functional's dt -> 0 limit and its standard error from (dt, value, se) at two steps, for a bias
    c dt^order: (h1^p F(h2) - h2^p F(h1)) / (h1^p - h2^p); 2 F(dt/2) - F(dt) for p = 1."""
    (h1, f1, se1), (h2, f2, se2) = coarse, fine
    w1, w2 = h1**order, h2**order
    return (w1 * f2 - w2 * f1) / (w1 - w2), math.hypot(w1 * se2, w2 * se1) / (w1 - w2)


def sde_reference(by_dt: dict[float, np.ndarray]) -> dict:
    """The SDE's functionals (`sde_<stat>`, `_se`) at dt -> 0 from its two finest steps (the finest step's
    own values, and nan biases, with one step), and `sde_dt_bias_<stat>`, the finest step's remaining bias."""
    steps = sorted(by_dt)
    fine = functionals(by_dt[steps[0]])
    out = {"sde_dt": steps[0], "sde_dt_coarse": steps[1] if len(steps) > 1 else math.nan}
    coarse = functionals(by_dt[steps[1]]) if len(steps) > 1 else None
    for stat in FUNCTIONALS:
        value, se = fine[stat], fine[f"{stat}_se"]
        if coarse is not None:
            value, se = richardson(
                (steps[1], coarse[stat], coarse[f"{stat}_se"]), (steps[0], fine[stat], fine[f"{stat}_se"])
            )
        out[f"sde_{stat}"], out[f"sde_{stat}_se"] = value, se
        out[f"sde_dt_bias_{stat}"] = fine[stat] - value if coarse is not None else math.nan
    return out


def w1_to_point(values: np.ndarray, point: float) -> float:
    """W1 between a sample and a point mass: the mean absolute distance to it."""
    return float(np.abs(values - point).mean())


def ode_ratio_interval(finite: np.ndarray, sde: np.ndarray, ode: float, draws: int = BOOTSTRAP) -> tuple[float, float]:
    """Bootstrap percentile interval of W1(finite, SDE) / W1(finite, the ODE's point), both sides resampled."""
    rng = np.random.default_rng(1)
    values, (finite_ranks, sde_ranks) = _ranked(finite, sde)
    boot = []
    for _ in range(draws):
        # rng.choice(a, a.size)'s draws: a[rng.integers(0, a.size, a.size)]
        x, y = rng.integers(0, finite.size, finite.size), rng.integers(0, sde.size, sde.size)
        x_counts = np.bincount(finite_ranks[x], minlength=values.size)
        y_counts = np.bincount(sde_ranks[y], minlength=values.size)
        boot.append(_w1_counted(values, x_counts, y_counts) / w1_to_point(finite[x], ode))
    return fits.percentile_interval(boot)


def limit(n, values, se, beta: float = 1.0) -> tuple[float, float]:
    """a and its standard error in values = a + c n^-beta, weighted least squares (weights 1 / se^2)."""
    n, values, se = (np.asarray(v, dtype=float) for v in (n, values, se))
    design = np.column_stack([np.ones_like(n), n**-beta])
    weights = 1 / se**2
    cov = np.linalg.inv(design.T @ (design * weights[:, None]))
    coef = cov @ design.T @ (weights * values)
    dof = n.size - 2
    chi2 = float((weights * (values - design @ coef) ** 2).sum()) / dof if dof > 0 else 1.0
    return float(coef[0]), math.sqrt(cov[0, 0] * max(chi2, 1.0))


# the exponents the finite networks may approach the SDE with (docs/science.md §3.5): 1 for the attention block (odd
# softmax terms vanish in expectation), 1/2 possible for `both` (the shaped ReLU's c / sqrt(n))
LIMIT_BETAS = (1.0, 0.5)


def limit_betas(rate_low: float, rate_high: float) -> tuple[float, ...]:
    """The exponents the measured rate's interval allows: the one of LIMIT_BETAS it includes and the other it
    excludes; both where it includes both, neither, or was not measured."""
    inside = [beta for beta in LIMIT_BETAS if rate_low <= beta <= rate_high]
    return tuple(inside) if len(inside) == 1 else LIMIT_BETAS


def block_limits(rows: pd.DataFrame) -> dict:
    """Per block: the rate of the mean's gap, and the n -> infinity gap of each functional to the SDE's, fitted at
    each exponent the rate allows (`limit_betas`; `limit_beta`: the one, nan for both): where both, the gap's
    interval is the hull of the two fits' (its centre and half-width / z, z at `fits.level()`)."""
    z = fits.z_quantile()
    out = {}
    gap = (rows["finite_mean"] - rows["sde_mean"]).abs()
    resolved = rows[gap > 2 * np.hypot(rows["finite_mean_se"], rows["sde_mean_se"])]
    out["rate_points"], out["rate"], out["rate_ci_low"], out["rate_ci_high"] = len(resolved), *[math.nan] * 3
    if resolved["n"].nunique() >= 3:
        line = fits.fit_line(np.log(resolved["n"]), np.log(gap[resolved.index]))
        out["rate"], (out["rate_ci_low"], out["rate_ci_high"]) = -line.slope, sorted(-v for v in line.slope_ci95)
    betas = limit_betas(out["rate_ci_low"], out["rate_ci_high"])
    out["limit_beta"] = betas[0] if len(betas) == 1 else math.nan
    for stat in FUNCTIONALS:
        sde, sde_se = rows[f"sde_{stat}"].iloc[0], rows[f"sde_{stat}_se"].iloc[0]
        ends = []
        for beta in betas:
            a, a_se = limit(rows["n"], rows[f"finite_{stat}"], rows[f"finite_{stat}_se"], beta)
            half = z * math.hypot(a_se, sde_se)
            ends += [a - sde - half, a - sde + half]
        low, high = min(ends), max(ends)
        out[f"limit_gap_{stat}"], out[f"limit_gap_{stat}_se"] = (low + high) / 2, (high - low) / 2 / z
    return out


def _width_row(block, n, group, sde_all, sde, ode, reference) -> dict:
    """One width's distances, stopped fractions and functionals against the finest step's SDE samples
    (`reference`: the block's SDE columns, the same at every width)."""
    values = finished(group)["rho01"].to_numpy()
    w1, w1_ode = stats.wasserstein_distance(values, sde), w1_to_point(values, ode)
    null = permutation_null(values, sde)
    low, high = ode_ratio_interval(values, sde, ode)
    stopped = stopped_difference(len(group) - len(values), len(group), len(sde_all) - len(sde), len(sde_all))
    return {
        "block": block,
        "n": int(n),
        "w1": w1,
        "ks": stats.ks_2samp(values, sde).statistic,
        "w1_null_q95": float(np.quantile(null, fits.level())),  # the permutation test's threshold
        "w1_p": float((1 + (null >= w1).sum()) / (1 + null.size)),
        "w1_ode": w1_ode,
        "ode_ratio": w1 / w1_ode,
        "ode_ratio_low": low,
        "ode_ratio_high": high,
        "samples": len(values),
        "sde_samples": len(sde),
        "stopped_finite": 1 - len(values) / len(group),
        "stopped_sde": 1 - len(sde) / len(sde_all),
        "stopped_diff": stopped[0],
        "stopped_diff_low": stopped[1],
        "stopped_diff_high": stopped[2],
        **{f"finite_{k}": v for k, v in functionals(values).items()},
        **reference,
        "ode_rho": ode,
    }


def data(terminal: Path) -> pd.DataFrame:
    """Per block and width n: the distance between the finite-n and SDE terminal laws (the terminal table by path)."""
    samples = read_terminal(terminal)
    shaped = samples[samples["attention"] == "shaped"]
    rows = []
    for block, by_block in shaped.groupby("block"):
        steps = sde_steps(by_block)
        by_dt = {dt: finished(group)["rho01"].to_numpy() for dt, group in steps.items()}
        finest = min(steps)
        ode = by_block[(by_block["source"] == "ode") & (by_block["dt"] == finest)]["rho01"].iloc[0]
        half = len(by_dt[finest]) // 2  # the SDE's own halves are twice as noisy as the whole: / sqrt(2)
        floor = stats.wasserstein_distance(by_dt[finest][:half], by_dt[finest][half:]) / np.sqrt(2)
        reference = {**sde_reference(by_dt), "w1_floor": floor}
        for n, group in by_block[by_block["source"] == "finite"].groupby("n"):
            rows.append(_width_row(block, n, group, steps[finest], by_dt[finest], ode, reference))
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

    from depthwidth.plots.common import legend_outside

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for (block, group), color in zip(frame.groupby("block"), ("C0", "C1", "C2")):
        ax.plot(group["n"], group["w1"], "o-", color=color, label=f"{block}: W1, slope {group['w1_slope'].iloc[0]:.2f}")
        ax.plot(group["n"], group["ks"], "s:", color=color, alpha=0.6, label=f"{block}: KS")
        ax.plot(
            group["n"],
            group["w1_null_q95"],
            "--",
            color=color,
            lw=0.9,
            label=f"{block}: {fits.level_text()} of W1 from sampling alone",
        )
        ax.plot(group["n"], group["w1_ode"], "^-.", color=color, alpha=0.5, label=f"{block}: W1 to the drift-only ODE")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="width n (depth T n)",
        ylabel="distance of the finite law\nto the SDE (or ODE)",
    )
    legend_outside(ax, "below", ncol=2)
    return fig
