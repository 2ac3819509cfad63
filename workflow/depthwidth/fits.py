"""Fits of the sweep analysis: power laws in N, crossovers between depths, the optimal depth.

Losses are in nats per token; N is the non-embedding parameter count. A power law
L(N) = (N_c / N)^alpha is fitted as a straight line in log-log coordinates:
log L = alpha log N_c - alpha log N.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from scipy import special, stats

# ---------------------------------------------------------------- the level of every interval and test
# One fact: the two-sided confidence level every interval the pipeline computes is taken at, and every decision
# threshold read from one. Each site reads it when it computes (`level()`, `one_sided()`, `tails()`,
# `t_quantile()`, `z_quantile()`), never at import, so a block under `at_level(...)` computes everything at that
# level (a sequential design's looks at other levels); outside any such block it is LEVEL.

LEVEL = 0.95  # the default two-sided level of every interval and test
LEVEL_COLUMN = "level"  # where a figure's rows record the level their intervals were computed at
_LEVEL: contextvars.ContextVar[float] = contextvars.ContextVar("depthwidth_level", default=LEVEL)


def level() -> float:
    """The current two-sided level of every interval and test: LEVEL (0.95) outside any `at_level` block."""
    return _LEVEL.get()


def level_of_rows(rows) -> float:
    """The level a figure's rows say their intervals are at (their first row's `LEVEL_COLUMN`); nan where they say
    none: no rows, or rows drawn before the column."""
    if len(rows) == 0 or LEVEL_COLUMN not in rows.columns:
        return math.nan
    return float(rows[LEVEL_COLUMN].iloc[0])


@contextmanager
def at_level(level: float) -> Iterator[float]:
    """Compute every interval and test in the block at the two-sided `level` (0.5 < level < 1); the level before
    is restored on leaving it, an exception included."""
    if not 0.5 < level < 1:  # nan fails it too
        raise ValueError(f"the two-sided level must lie strictly between 0.5 and 1, got {level!r}")
    token = _LEVEL.set(level)
    try:
        yield level
    finally:
        _LEVEL.reset(token)


def one_sided(at: float | None = None) -> float:
    """The one-sided quantile of a two-sided interval at the current level (or at `at`), 1 - (1 - level) / 2:
    0.975 at the default; also the share of redraws that decides a bootstrap argmin or growth (levine)."""
    return 1 - (1 - (level() if at is None else at)) / 2


def tails() -> tuple[float, float]:
    """The lower and upper quantiles of the two-sided interval at the current level, (1 - level) / 2 and
    `one_sided()`: (0.025, 0.975) at the default. The lower one is taken in decimal on the level as written
    (its repr), so that 0.95 gives 0.025 itself (in binary, (1 - 0.95) / 2 is 0.025000000000000022)."""
    return float((1 - Decimal(repr(level()))) / 2), one_sided()


def level_text() -> str:
    """The current level as the words say it: "95%" at the default, "99%" at 0.99, "97.5%" at 0.975."""
    return f"{100 * level():g}%"


def t_quantile(dof: float) -> float:
    """The `one_sided()` quantile of Student's t with `dof` degrees of freedom, the half-width of a two-sided
    t-interval in standard errors at the current level (97.5% at the default; inf without any dof)."""
    return float(stats.t.ppf(one_sided(), dof)) if dof >= 1 else math.inf


def z_quantile(at: float | None = None) -> float:
    """The `one_sided()` quantile of the standard normal (at the current level, or at `at`): 1.96 at the default."""
    return float(stats.norm.ppf(one_sided(at)))


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
        """The slope's two-sided t-interval at the current `level()` (95% at the default, whence the name)."""
        half = t_quantile(self.n_points - 2) * self.slope_se
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
    alpha_ci95: tuple[float, float]  # at the `level()` it was fitted at (95% at the default, whence the name)
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


LEVINE_BASE = 3.0  # Levine et al.'s threshold L_th = log_3(d): width 3^L at depth L
LEVINE_LN_BASE = math.log(LEVINE_BASE)  # its ln width per layer, 1.099
LEVINE_LOG_WIDTH, LEVINE_WIDTH_SLOPE = 5.039, 0.0555  # Levine et al.'s fitted optimum, ln d*(L) = 5.039 + 0.0555 L
# the fitted optimum and the threshold's slope as the figures and claims write them
LEVINE_OPTIMUM_TEXT = f"exp({LEVINE_LOG_WIDTH} + {LEVINE_WIDTH_SLOPE} L)"
LEVINE_SLOPE_TEXT = f"{LEVINE_LN_BASE:.3f}"


def levine_threshold_width(depth: float) -> float:
    """Width at which `depth` equals Levine's threshold L_th = log_3(d): d = 3**L."""
    return LEVINE_BASE**depth


def levine_optimal_width(depth: float) -> float:
    """Levine et al.'s fitted optimal width d*(L) = exp(5.039 + 0.0555 L) (BigScience transcription)."""
    return math.exp(LEVINE_LOG_WIDTH + LEVINE_WIDTH_SLOPE * depth)


def levine_fitted_crossover_n(shallow: float, deep: float) -> float:
    """N at which the deeper of two depths starts to win under Levine's fitted optimum: where its optimal
    depth L*(N) passes their midpoint (a loss symmetric in depth around L* is equal there), N = 12 L d*(L)^2
    at L = (shallow + deep) / 2."""
    return levine_n_at_depth((shallow + deep) / 2)


# ---------------------------------------------------------------- noise: seeds, intervals, what it would take

KAPLAN_ALPHA_N, KAPLAN_ALPHA_D = 0.076, 0.095  # Kaplan et al. 2020, Eq. 1.5 (WebText2, their BPE)
KAPLAN_N_C, KAPLAN_D_C = 8.8e13, 5.4e13  # non-embedding parameters; tokens


def pooled_sd(groups) -> tuple[float, int]:
    """Pooled within-group standard deviation and its degrees of freedom, sum(n_i - 1).

    `groups`: iterable of 1-D samples (e.g. one shape's losses over seeds). Groups of one value
    add nothing; with no replicated group the sd is nan and the dof 0.
    """
    squares, dof = 0.0, 0
    for values in groups:
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        if values.size >= 2:
            squares += float(((values - values.mean()) ** 2).sum())
            dof += values.size - 1
    return (math.sqrt(squares / dof) if dof else math.nan), dof


@dataclass(frozen=True)
class ModeratedVariances:
    """Each group's seed variance shrunk toward a prior fitted to all groups (`moderated_variances`).

    `prior_var` (s0^2) is the variance the groups share, worth `prior_dof` (d0) degrees of freedom: inf where the
    groups' sample variances scatter no more than sampling alone makes them (one variance for every group), small
    where they differ. Each group's posterior variance is (d0 s0^2 + d s^2) / (d0 + d) with d0 + d dof, the dof
    capped at `pooled_dof` (every group's together: the prior is estimated from them, as limma's eBayes caps it).
    """

    prior_var: float  # s0^2; nan without a replicated group
    prior_dof: float  # d0: 0 without a replicated group; inf: the groups' variances are one
    pooled_dof: int  # sum over the groups of (values - 1): the most dof any posterior can have
    variances: tuple[float, ...]  # each group's posterior variance, in the order of the groups
    dofs: tuple[float, ...]  # its degrees of freedom (0: no estimate)

    @property
    def sds(self) -> tuple[float, ...]:
        return tuple(math.sqrt(v) for v in self.variances)


def posterior_variances(prior_var: float, prior_dof: float, pooled_dof: int, variance, dof):
    """Each group's posterior variance and its dof under the prior (s0^2, d0), from its own sample `variance`
    with `dof` (0: a group of one value, which takes the prior): (d0 s0^2 + d s^2) / (d0 + d), min(d0 + d, pooled)."""
    dof = np.asarray(dof, dtype=float)
    own = np.where(dof > 0, np.asarray(variance, dtype=float), 0.0)  # a group of one value has none of its own
    if math.isinf(prior_dof):
        posterior = np.full(dof.shape, prior_var)
    else:
        weight = prior_dof * prior_var if prior_dof > 0 else 0.0  # d0 = 0: no prior (s0^2 may be nan)
        with np.errstate(invalid="ignore", divide="ignore"):  # d0 = d = 0: nan, no estimate
            posterior = (weight + dof * own) / (prior_dof + dof)
    return posterior, np.minimum(prior_dof + dof, pooled_dof)


TRIGAMMA_ITERATIONS = 50  # Newton steps `trigamma_inverse` allows itself (it converges in a handful)


def trigamma_inverse(x: float) -> float:
    """y > 0 with trigamma(y) = x > 0, by Newton's method on 1 / trigamma (Smyth 2004; limma's trigammaInverse).

    1 / trigamma(y) is increasing, convex and nearly y - 1/2 for large y, so Newton's method on it from
    y = 1/2 + 1/x, which lies below the root, climbs to the root without overshooting. Far out, the asymptotes:
    trigamma(y) ~ 1/y for large y, ~ 1/y^2 for small y.
    """
    if not x > 0:
        raise ValueError(f"trigamma takes only positive values, got {x}")
    if x > 1e7:
        return 1 / math.sqrt(x)
    if x < 1e-6:
        return 1 / x
    y = 0.5 + 1 / x
    for _ in range(TRIGAMMA_ITERATIONS):
        tri = float(special.polygamma(1, y))
        step = tri * (1 - tri / x) / float(special.polygamma(2, y))  # (1/x - 1/tri) / d(1/tri)/dy
        y += step
        if -step / y < 1e-8:
            break
    return y


def moderated_variances(groups) -> ModeratedVariances:
    """Empirical-Bayes (moderated) variances of groups of values, e.g. each shape's 100 ln(loss) over its seeds
    (Smyth 2004, as limma's squeezeVar without its robust option): one group's outlying variance (a stalled seed)
    widens its own interval and lowers the prior's weight, but leaves every other group near the prior.

    Each group's sample variance s^2 with d = values - 1 dof is a scaled chi-square draw around the group's
    true variance, whose spread over the groups is a scaled inverse chi-square with d0 dof around s0^2. Its
    log, less E ln(chi2_d / d), e = ln s^2 - digamma(d/2) + ln(d/2), has mean ln s0^2 - digamma(d0/2) + ln(d0/2)
    and variance trigamma(d/2) + trigamma(d0/2): the method of moments solves them for d0 (inf where the e
    scatter no more than sampling makes them) and s0^2. Non-finite values are dropped; groups of one value take
    the prior. With a single replicated group there is no spread to fit: its variance is everyone's (d0 inf),
    which is the pooled variance. A zero variance (values equal to the last bit) enters the fit at 1e-5 of
    the pooled one, not at ln 0; where every variance is zero, the prior is zero.
    """
    samples = [v[np.isfinite(v)] for v in (np.asarray(g, dtype=float) for g in groups)]
    dof = np.array([max(v.size - 1, 0) for v in samples], dtype=float)
    variance = np.array([v.var(ddof=1) if v.size >= 2 else math.nan for v in samples])
    replicated = dof > 0
    pooled = int(dof.sum())
    if not replicated.any():
        prior_var, prior_dof = math.nan, 0.0
    elif replicated.sum() == 1 or not (variance[replicated] > 0).any():
        prior_var, prior_dof = float((dof * np.nan_to_num(variance))[replicated].sum() / pooled), math.inf
    else:
        s2, d = variance[replicated], dof[replicated] / 2
        s2 = np.maximum(s2, 1e-5 * float((s2 * d).sum() / d.sum()))  # a zero variance: far below, not at ln 0
        e = np.log(s2) - special.digamma(d) + np.log(d)
        excess = float(e.var(ddof=1) - special.polygamma(1, d).mean())  # the e's scatter beyond sampling's
        if excess > 0:
            half = trigamma_inverse(excess)
            prior_var, prior_dof = float(np.exp(e.mean() + special.digamma(half) - np.log(half))), 2 * half
        else:
            prior_var, prior_dof = float(np.exp(e.mean())), math.inf
    posterior, posterior_dof = posterior_variances(prior_var, prior_dof, pooled, variance, dof)
    return ModeratedVariances(
        prior_var, prior_dof, pooled, tuple(float(v) for v in posterior), tuple(float(d) for d in posterior_dof)
    )


def t_interval(mean: float, se: float, dof: float) -> tuple[float, float]:
    """Two-sided interval mean -+ t(dof) se at the current `level()` (95% at the default); (nan, nan) without a
    noise estimate (dof < 1)."""
    if dof < 1 or not np.isfinite(se):
        return math.nan, math.nan
    half = t_quantile(dof) * se
    return mean - half, mean + half


def ratio_gain_pct(log_ratio: float) -> float:
    """B's gain over A, 100 (1 - L_B / L_A) %, from 100 ln(L_B / L_A)."""
    return 100 * (1 - math.exp(log_ratio / 100))


def ratio_gain_interval(log_ratio: float, se: float, dof: float) -> dict:
    """B's gain over A (`ratio_gain_pct`): its t interval at the current level from 100 ln(L_B / L_A), its standard
    error and dof, and its sign (1: the interval lies above 0, B wins; -1: below; 0: it straddles 0); nan and sign 0
    without a noise estimate."""
    low, high = t_interval(log_ratio, se, dof)
    out = {"low": ratio_gain_pct(high), "high": ratio_gain_pct(low)}  # the gain falls as the log ratio rises
    return out | {"sign": 1 if out["low"] > 0 else -1 if out["high"] < 0 else 0}


def f_quantile(q: float, dfn: int, dfd: int) -> float:
    """The q quantile of Fisher's F(dfn, dfd); nan without degrees of freedom."""
    return float(stats.f.ppf(q, dfn, dfd)) if dfn >= 1 and dfd >= 1 else math.nan


def redraw_means(means, se, dof, draws: int) -> np.ndarray:
    """Parametric bootstrap of k means: mean + t(dof) se, shape (draws, k), from a generator seeded at 0.

    Student-t draws with the noise estimate's degrees of freedom carry its own uncertainty (`dof`: one
    for every mean, or each mean's own; inf: a known sd, normal draws); the fixed seed makes every interval built
    on them reproducible.
    """
    means, se = np.asarray(means, dtype=float), np.asarray(se, dtype=float)
    dof = np.broadcast_to(np.asarray(dof, dtype=float), means.shape)
    known = np.isinf(dof)
    rng = np.random.default_rng(0)
    errors = rng.standard_t(np.where(known, 1.0, dof), size=(draws, means.size))
    if known.any():  # numpy's t with inf dof is nan: a normal draw instead (after the t's: their stream stays)
        errors[:, known] = rng.standard_normal((draws, int(known.sum())))
    return means[None, :] + errors * se[None, :]


def percentile_interval(values, level: float | None = None) -> tuple[float, float]:
    """The percentile interval of a statistic from its bootstrap values: the (1 -+ level) / 2 quantiles, at the
    current `level()` unless `level` is given (95% at the default)."""
    level = _LEVEL.get() if level is None else level  # `level` the argument hides `level()`
    low, high = np.quantile(np.asarray(values, dtype=float), [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


# ---------------------------------------------------------------- the learning-rate systematic
# Each shape trains at the rate its scan chose, whose loss lies up to the shape's excess above its loss at its
# best rate (`rates`): a shape's true value lies in [measured - excess, measured]. These bound a statistic of
# the shapes over that box, as (down, up): its true value lies in [s - down, s + up].


def systematic_shift(statistic, values, excess) -> tuple[float, float]:
    """(down, up) of `statistic(values)` when each value may lie up to its `excess` (>= 0, the values' units)
    above its true one: each value's own effect, summed by sign. Exact for a statistic linear in the values
    (a mean, a difference, a least-squares coefficient); to first order for a smooth one. A shape whose effect
    cancels (it enters with weights of both signs) adds nothing. (nan, nan) where the statistic or an excess it
    reads is not finite."""
    values = np.asarray(values, dtype=float)
    excess = np.broadcast_to(np.asarray(excess, dtype=float), values.shape)
    base = statistic(values)
    if not np.isfinite(base):
        return math.nan, math.nan
    effects = np.zeros(values.size)
    for i in np.flatnonzero(excess != 0):
        moved = values.copy()
        moved[i] -= excess[i]
        effects[i] = base - statistic(moved)
    if not np.all(np.isfinite(effects)):
        return math.nan, math.nan
    return float(np.clip(effects, 0, None).sum()), float(np.clip(-effects, 0, None).sum())


def spread_shift(values, excess) -> tuple[float, float]:
    """(down, up) of the spread max - min of `values`, each of which may lie up to its `excess` above its true
    one: exactly, over the whole box (the least spread is max(0, max(v - e) - min(v)), the largest
    max over i != j of v_i - (v_j - e_j))."""
    values, excess = np.asarray(values, dtype=float), np.asarray(excess, dtype=float)
    if values.size < 2 or not np.all(np.isfinite(values)) or not np.all(np.isfinite(excess)):
        return math.nan, math.nan
    spread = values.max() - values.min()
    least = max(0.0, float((values - excess).max() - values.min()))
    pairs = values[:, None] - (values - excess)[None, :]
    np.fill_diagonal(pairs, -np.inf)
    return float(spread - least), float(pairs.max() - spread)


def best_of_shift(top: float, top_excess: float, values, excess) -> tuple[float, float]:
    """(down, up) of `top` minus the least of `values` (the best of several), each value and `top` lying up to
    its excess above its true one: exactly."""
    values, excess = np.asarray(values, dtype=float), np.asarray(excess, dtype=float)
    if not (np.isfinite(top_excess) and np.all(np.isfinite(excess))) or values.size == 0:
        return math.nan, math.nan
    return float(top_excess), float(values.min() - (values - excess).min())


TILT_POINTS = 9  # grid points per axis of a tilt's box: its ends and 0 among them (`tilt_shift`)


def tilt_shift(statistic, values, levers, ranges) -> tuple[float, float]:
    """(down, up) of `statistic(values)` when every value moves together by levers @ t / 100, for each axis' tilt t
    anywhere in its `ranges` (per axis (low, high), % per unit of its lever; 0 inside each: the protocol's warm-up
    tilt, `tilt.Carried`): the least and largest value over a grid of the box (TILT_POINTS per axis, its corners
    and 0 among them), less the value at no tilt. On one axis the grid also holds every t at which two values
    cross, so a statistic piecewise linear in the values with its kinks where their order changes (a spread, a
    best-of difference) is read exactly; a statistic linear in them (a mean, a difference, a least-squares
    coefficient), or monotone in such, is exact on any number of axes, its extremes lying at corners. `levers` is
    (values, axes), in the values' units per % of tilt times 100 (ln(depth) for a ln-loss moved by t ln(depth) %).
    (nan, nan) where the statistic, a lever or a range is not finite."""
    values = np.asarray(values, dtype=float)
    levers = np.asarray(levers, dtype=float).reshape(values.size, -1)
    ranges = np.asarray(ranges, dtype=float).reshape(-1, 2)
    base = statistic(values)
    if not (np.isfinite(base) and np.all(np.isfinite(levers)) and np.all(np.isfinite(ranges))):
        return math.nan, math.nan
    axes = [np.union1d(np.linspace(low, high, TILT_POINTS), [0.0]) for low, high in ranges]
    if len(axes) == 1:  # values i and j cross at t = 100 (v_j - v_i) / (lever_i - lever_j)
        lever = levers[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = 100 * (values[None, :] - values[:, None]) / (lever[:, None] - lever[None, :])
        inside = cross[np.isfinite(cross) & (cross > ranges[0, 0]) & (cross < ranges[0, 1])]
        axes[0] = np.union1d(axes[0], inside)
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes))
    moved = np.array([statistic(values + levers @ t / 100) for t in grid])
    if not np.all(np.isfinite(moved)):
        return math.nan, math.nan
    return float(max(0.0, base - moved.min())), float(max(0.0, moved.max() - base))


def welch_dof(variances, dofs) -> float:
    """Satterthwaite's degrees of freedom of a sum of independent variance estimates (`variances`, each a term's
    squared standard error, on its `dofs`): (sum v)^2 / sum(v^2 / dof), not rounded, as Welch's t takes it; inf
    where every term is 0 (no noise to be uncertain about)."""
    variances, dofs = np.asarray(variances, dtype=float), np.asarray(dofs, dtype=float)
    total = float(variances.sum())
    return total**2 / float((variances**2 / dofs).sum()) if total > 0 else math.inf


MOST_GROUPS_FACTOR = 1000.0  # past this many times the N values, no design of this protocol is priced


def half_width_at(half_width: float, count: int, parameters: int):
    """The half-width that a t interval, now `half_width` at the current level over `count` seed means (or seeds)
    fitted with `parameters` coefficients, would have over m of them, its noise held: t(m - parameters) se
    sqrt(count / m), se = half_width / t(count - parameters) (a coefficient's standard error shrinks like
    1 / sqrt(m) when the new ones spread like the old). A function of m (a number or an array)."""
    se = half_width / t_quantile(count - parameters)
    return lambda m: stats.t.ppf(one_sided(), np.asarray(m) - parameters) * se * np.sqrt(count / np.asarray(m))


def groups_factor_needed(half_width: float, room: float, groups: int, parameters: int) -> float:
    """How many times the N values (`groups` now, each a seed mean) a fit of `parameters` coefficients needs for its
    t interval, now of half-width `half_width` at the current level on groups - parameters dof, to come within
    `room` of its point: the least k with `half_width_at`(k groups) <= room, the new N values spread over the same
    span as the old. Unlike a (half-width / room)^2 rule, the t quantile falls with the dof the new N values add,
    which at 2 dof is most of the gain. inf where room <= 0, where nothing is finite, or past MOST_GROUPS_FACTOR."""
    if not (math.isfinite(half_width) and math.isfinite(room)) or room <= 0 or groups - parameters < 1:
        return math.inf
    width = half_width_at(half_width, groups, parameters)

    def reaches(k: float) -> bool:
        return bool(width(k * groups) <= room)

    if reaches(1.0):
        return 1.0
    if not reaches(MOST_GROUPS_FACTOR):
        return math.inf
    low, high = 1.0, MOST_GROUPS_FACTOR  # t se / sqrt(k) falls with k: bisect to 1% of k
    while high / low > 1.01:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if reaches(mid) else (mid, high)
    return high


def seeds_needed_for(half_width: float, room: float, seeds: int) -> int | None:
    """The fewest seeds at which a mean's t interval, now of half-width `half_width` at the current level over
    `seeds` (seeds - 1 dof), comes within `room` of its point, the seed sd held: the least n with t(n - 1) sd /
    sqrt(n) <= room (the quantile falling with the dof, as `groups_factor_needed` has it for N values); None where
    room <= 0, nothing is finite, or past MOST_GROUPS_FACTOR times the seeds."""
    if not (math.isfinite(half_width) and math.isfinite(room)) or room <= 0 or seeds < 2:
        return None
    counts = np.arange(seeds, int(MOST_GROUPS_FACTOR * seeds) + 1)
    reached = half_width_at(half_width, seeds, parameters=1)(counts) <= room
    return int(counts[np.argmax(reached)]) if reached.any() else None


def curvature(x, y) -> tuple[float, float, float]:
    """Quadratic coefficient c of y = a + b x + c x^2 (x centred) with its t-interval at the current `level()`.

    The lack-of-fit test of a straight line: an interval that excludes 0 means curvature. The
    interval is (nan, nan) with fewer than 4 points or 3 distinct x (no degrees of freedom left).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.unique(x).size < 3:
        return math.nan, math.nan, math.nan
    x = x - x.mean()
    design = np.column_stack([np.ones_like(x), x, x**2])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    dof = x.size - 3
    if dof < 1:
        return float(coef[2]), math.nan, math.nan
    residual = y - design @ coef
    cov = np.linalg.inv(design.T @ design) * (residual @ residual / dof)
    low, high = t_interval(float(coef[2]), math.sqrt(cov[2, 2]), dof)
    return float(coef[2]), low, high


def kaplan_loss_nd(n, tokens):
    """Kaplan's L(N, D) = [(N_c / N)^(alpha_N / alpha_D) + D_c / D]^alpha_D (Eq. 1.5; nats, their tokenizer)."""
    n, tokens = np.asarray(n, dtype=float), np.asarray(tokens, dtype=float)
    return ((KAPLAN_N_C / n) ** (KAPLAN_ALPHA_N / KAPLAN_ALPHA_D) + KAPLAN_D_C / tokens) ** KAPLAN_ALPHA_D


def kaplan_local_exponent(n_low: float, n_high: float, tokens: float) -> float:
    """-d ln L / d ln N of Kaplan's L(N, D) between n_low and n_high (a secant) at `tokens` tokens per run."""
    ends = np.log(kaplan_loss_nd([n_low, n_high], tokens))
    return float((ends[0] - ends[1]) / (math.log(n_high) - math.log(n_low)))


def kaplan_path_exponent(n, tokens) -> float:
    """-d ln L / d ln N of Kaplan's L(N, D) along the path the runs take: the least-squares slope of ln L(N_i, D_i)
    against ln N_i over the runs' own parameters and tokens (D grows with N: at D = 20 N it is steeper than at
    any one fixed D)."""
    n, tokens = np.asarray(n, dtype=float), np.asarray(tokens, dtype=float)
    return -fit_line(np.log(n), np.log(kaplan_loss_nd(n, tokens))).slope


def tokens_for_local_exponent(target: float, n_low: float, n_high: float) -> float:
    """Tokens per run at which Kaplan's L(N, D) has local exponent `target` over [n_low, n_high].

    inf when the target is at or above alpha_N (the exponent with unlimited data).
    """
    if target >= KAPLAN_ALPHA_N * 0.999:
        return math.inf
    if target <= kaplan_local_exponent(n_low, n_high, 1.0):
        return 1.0
    low, high = 0.0, 80.0  # ln tokens
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if kaplan_local_exponent(n_low, n_high, math.exp(mid)) < target else (low, mid)
    return math.exp(high)


def levine_n_at_depth(depth: float) -> float:
    """Non-embedding N = 12 L d*(L)^2 of a model at Levine's fitted optimal width d*(L)."""
    return 12.0 * depth * levine_optimal_width(depth) ** 2


def levine_optimal_depth_at(n: float) -> float:
    """The depth L whose optimal width d*(L) = exp(5.039 + 0.0555 L) gives N = 12 L d*^2 (bisection).

    N(L) rises monotonically in L, so the depth is unique; it may be below one layer at small N.
    """
    low, high = 1e-6, 1000.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if levine_n_at_depth(mid) < n else (low, mid)
    return (low + high) / 2


def nearest_depth(depth: float, trained) -> int:
    """The trained depth nearest `depth` in log depth (the grid is roughly geometric)."""
    trained = np.asarray(sorted(trained), dtype=float)
    return int(trained[np.argmin(np.abs(np.log(trained) - math.log(max(depth, 1e-9))))])
