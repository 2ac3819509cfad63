"""Fits of the sweep analysis: power laws in N, crossovers between depths, the optimal depth.

Losses are in nats per token; N is the non-embedding parameter count. A power law
L(N) = (N_c / N)^alpha is fitted as a straight line in log-log coordinates:
log L = alpha log N_c - alpha log N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Two-sided 95% Student-t quantiles for 1..30 degrees of freedom (beyond: the normal 1.96).
_T975 = [
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
]


def t_quantile_975(dof: int) -> float:
    """The 97.5% quantile of Student's t with `dof` degrees of freedom."""
    if dof < 1:
        return math.inf
    return _T975[dof - 1] if dof <= len(_T975) else 1.96


@dataclass(frozen=True)
class Line:
    """y = intercept + slope * x, with the standard error of the slope and the points it used."""

    intercept: float
    slope: float
    slope_se: float
    n_points: int

    def __call__(self, x):
        return self.intercept + self.slope * np.asarray(x, dtype=float)

    @property
    def slope_ci95(self) -> tuple[float, float]:
        half = t_quantile_975(self.n_points - 2) * self.slope_se
        return self.slope - half, self.slope + half


def fit_line(x, y) -> Line:
    """Ordinary least squares of y on x (at least two distinct x)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.ptp(x) == 0:
        raise ValueError(f"a line needs at least two distinct x values, got {x.tolist()}")
    slope, intercept = np.polyfit(x, y, 1)
    dof = x.size - 2
    if dof > 0:
        residual = y - (intercept + slope * x)
        slope_se = math.sqrt(residual @ residual / dof / ((x - x.mean()) @ (x - x.mean())))
    else:
        slope_se = math.inf
    return Line(float(intercept), float(slope), slope_se, int(x.size))


@dataclass(frozen=True)
class PowerLaw:
    """L(N) = (N_c / N) ** alpha, fitted in log-log coordinates.

    N_c is kept as its logarithm: with a nearly flat loss (alpha -> 0) N_c itself overflows.
    """

    alpha: float
    log_n_c: float
    alpha_ci95: tuple[float, float]
    n_points: int

    def __call__(self, n):
        return np.exp(self.alpha * (self.log_n_c - np.log(np.asarray(n, dtype=float))))


def fit_power_law(n, loss) -> PowerLaw:
    """Fit L(N) = (N_c / N)^alpha to positive (N, loss) pairs."""
    n, loss = np.asarray(n, dtype=float), np.asarray(loss, dtype=float)
    if np.any(n <= 0) or np.any(loss <= 0):
        raise ValueError("a power law needs positive N and loss")
    line = fit_line(np.log(n), np.log(loss))
    alpha = -line.slope
    low, high = line.slope_ci95
    log_n_c = line.intercept / alpha if alpha != 0 else math.inf
    return PowerLaw(alpha, log_n_c, (-high, -low), line.n_points)


def loss_increase_percent(loss, n, law: PowerLaw):
    """How much worse than the L(N) fit, in percent: 100 (L / L_fit(N) - 1)."""
    return 100.0 * (np.asarray(loss, dtype=float) / law(n) - 1.0)


def crossover_log_n(shallow: Line, deep: Line) -> float | None:
    """log N above which the deeper family (fitted as log L vs log N) has the lower loss.

    None when the deeper family never overtakes (its line is not steeper).
    """
    steeper_by = shallow.slope - deep.slope  # > 0: deep falls faster with N
    if steeper_by <= 0:
        return None
    return (deep.intercept - shallow.intercept) / steeper_by


def levine_threshold_width(depth: float) -> float:
    """Width at which `depth` equals Levine's threshold L_th = log_3(d): d = 3**L."""
    return 3.0**depth


def levine_optimal_width(depth: float) -> float:
    """Levine et al.'s fitted optimal width d*(L) = exp(5.039 + 0.0555 L) (BigScience transcription)."""
    return math.exp(5.039 + 0.0555 * depth)


def optimal_depth(depths, losses) -> float:
    """Depth of least loss, refined by a parabola in depth through the best point and its neighbours."""
    depths, losses = np.asarray(depths, dtype=float), np.asarray(losses, dtype=float)
    order = np.argsort(depths)
    depths, losses = depths[order], losses[order]
    best = int(np.argmin(losses))
    if best == 0 or best == depths.size - 1:
        return float(depths[best])  # at the edge of the grid: no interpolation beyond it
    x, y = depths[best - 1 : best + 2], losses[best - 1 : best + 2]
    a, b, _ = np.polyfit(x, y, 2)
    return float(np.clip(-b / (2 * a), x[0], x[2])) if a > 0 else float(depths[best])
