"""Fits recover known parameters from synthetic data."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from depthwidth import fits, shapes
from scipy import optimize, special, stats


def test_power_law_recovers_exponent_and_scale():
    n = np.logspace(5, 8, 12)
    law = fits.fit_power_law(n, (8.8e13 / n) ** 0.076)
    assert law.alpha == pytest.approx(0.076, rel=1e-9)
    assert law.log_n_c == pytest.approx(math.log(8.8e13), rel=1e-9)


def test_power_law_confidence_interval_covers_truth_at_the_nominal_rate():
    rng = np.random.default_rng(0)
    n = np.logspace(5, 7, 8)
    covered = 0
    for _ in range(400):
        loss = (1e10 / n) ** 0.3 * np.exp(rng.normal(0, 0.02, n.size))
        low, high = fits.fit_power_law(n, loss).alpha_ci95
        covered += low <= 0.3 <= high
    assert 0.91 <= covered / 400 <= 0.99


def test_loss_increase_is_zero_on_the_fit_and_ten_percent_above():
    law = fits.PowerLaw(alpha=0.1, log_n_c=math.log(1e12), alpha_ci95=(0.09, 0.11), n_points=5)
    n = np.array([1e6, 1e7])
    np.testing.assert_allclose(fits.loss_increase_percent(law(n), n, law), 0, atol=1e-12)
    np.testing.assert_allclose(fits.loss_increase_percent(1.1 * law(n), n, law), 10)


def test_flat_loss_gives_a_finite_fit():
    n = np.array([2e4, 5e4, 1e5])
    law = fits.fit_power_law(n, [5.2, 5.2001, 5.1999])
    assert np.all(np.isfinite(law(n))) and abs(law.alpha) < 1e-3


def test_crossover_of_two_known_lines():
    # shallow: log L = 2 - 0.05 log N ; deep: log L = 2.5 - 0.08 log N -> equal at log N = 0.5 / 0.03
    shallow = fits.Line(2.0, -0.05, 0.0, 5)
    deep = fits.Line(2.5, -0.08, 0.0, 5)
    log_n = fits.crossover_log_n(shallow, deep)
    assert log_n == pytest.approx(0.5 / 0.03)
    assert shallow(log_n + 1) > deep(log_n + 1) and shallow(log_n - 1) < deep(log_n - 1)
    assert fits.crossover_log_n(deep, shallow) is None


def test_crossover_widths_follow_an_exponential_in_depth():
    # Build per-depth lines whose crossovers sit at width 3**L: the fitted slope is log 3.
    depths = [2, 3, 4, 5]
    log_n_cross = [math.log(shapes.nonembedding(l + 1, 3 ** (l + 1), 4 * 3 ** (l + 1))) for l in depths[:-1]]
    lines = [fits.Line(0.0, -0.05, 0.0, 5)]
    for log_n in log_n_cross:
        prev = lines[-1]
        slope = prev.slope - 0.01
        lines.append(fits.Line(prev(log_n) - slope * log_n, slope, 0.0, 5))
    widths = [
        shapes.width_for_n(math.exp(fits.crossover_log_n(a, b)), deep)
        for a, b, deep in zip(lines, lines[1:], depths[1:])
    ]
    slope = fits.fit_line(depths[1:], np.log(widths)).slope
    assert slope == pytest.approx(math.log(3), rel=1e-9)


def test_line_slope_standard_error_matches_monte_carlo():
    rng = np.random.default_rng(1)
    x = np.arange(10.0)
    fitted = [fits.fit_line(x, 1 + 0.5 * x + rng.normal(0, 0.3, x.size)) for _ in range(2000)]
    empirical = np.std([f.slope for f in fitted])
    typical = np.median([f.slope_se for f in fitted])
    assert typical == pytest.approx(empirical, rel=0.1)


def test_levine_references():
    assert fits.levine_threshold_width(6) == 729
    assert fits.levine_optimal_width(0) == pytest.approx(math.exp(5.039))
    assert shapes.width_for_n(shapes.nonembedding(4, 64, 256), 4) == pytest.approx(64)
    assert shapes.width_for_n(shapes.nonembedding(3, 90, 45), 3, ff_ratio=0.5) == pytest.approx(90)


def test_fit_line_refuses_degenerate_input():
    with pytest.raises(ValueError, match="two distinct"):
        fits.fit_line([1, 1], [2, 3])


# ---------------------------------------------------------------- moderated variances


def moment_fit(groups):
    """Smyth's (2004) method of moments written out apart from fits: the prior dof from a bracketing root finder
    on trigamma, the prior variance from the bias-corrected mean log variance."""
    groups = [np.asarray(g, dtype=float) for g in groups]
    replicated = [g for g in groups if g.size >= 2]
    half = np.array([(g.size - 1) / 2 for g in replicated])
    log_var = np.log([g.var(ddof=1) for g in replicated])
    # E ln(s^2 / sigma^2) = psi(d/2) - ln(d/2) and Var ln(s^2) = psi'(d/2) for a chi-square's s^2 with d dof
    corrected = log_var - special.psi(half) + np.log(half)
    excess = np.sum((corrected - corrected.mean()) ** 2) / (len(replicated) - 1) - np.mean(special.polygamma(1, half))
    if excess <= 0:
        return math.exp(corrected.mean()), math.inf
    x = optimize.brentq(lambda y: special.polygamma(1, y) - excess, 1e-9, 1e9, xtol=1e-14, rtol=1e-14)
    return math.exp(corrected.mean()) * math.exp(special.psi(x)) / x, 2 * x


def test_trigamma_inverse_is_the_root_a_bracketing_solver_finds():
    for x in (1e-5, 0.01, 0.3, 1.0, 1.6449, 7.5, 250.0, 1e5):
        root = optimize.brentq(lambda y, x=x: special.polygamma(1, y) - x, 1e-9, 1e9, xtol=1e-15, rtol=1e-14)
        assert fits.trigamma_inverse(x) == pytest.approx(root, rel=1e-6), x
    assert fits.trigamma_inverse(math.pi**2 / 6) == pytest.approx(1.0, rel=1e-9)  # trigamma(1) = pi^2 / 6
    with pytest.raises(ValueError, match="positive"):
        fits.trigamma_inverse(0.0)


def test_moderated_variances_match_the_method_of_moments_written_out_apart():
    """Groups of 2-5 values whose true sds differ 10x: a finite prior dof, and each posterior the dof-weighted
    mean of the prior and the group's own variance, its dof d0 + d capped at the pooled dof."""
    rng = np.random.default_rng(7)
    groups = [rng.normal(0, sd, n) for sd, n in zip(np.geomspace(0.1, 1.0, 12), [2, 3, 5, 3, 4, 3, 2, 3, 5, 3, 4, 3])]
    groups.append([0.4])  # one value: takes the prior
    prior_var, prior_dof = moment_fit(groups)
    got = fits.moderated_variances(groups)
    assert 0 < prior_dof < 100 and got.prior_dof == pytest.approx(prior_dof, rel=1e-7)
    assert got.prior_var == pytest.approx(prior_var, rel=1e-9)
    pooled = sum(len(g) - 1 for g in groups)
    assert got.pooled_dof == pooled == fits.pooled_sd(groups)[1]
    for g, variance, dof in zip(groups, got.variances, got.dofs):
        own_dof = len(g) - 1
        own = np.var(g, ddof=1) if own_dof else 0.0
        assert variance == pytest.approx((prior_dof * prior_var + own_dof * own) / (prior_dof + own_dof), rel=1e-9)
        assert dof == pytest.approx(min(prior_dof + own_dof, pooled), rel=1e-9)
        assert min(own, prior_var) <= variance <= max(own, prior_var) or not own_dof  # shrunk toward the prior
    assert got.variances[-1] == pytest.approx(prior_var) and got.dofs[-1] == pytest.approx(prior_dof)


def test_moderated_variances_recover_a_planted_prior():
    """Each group's true variance drawn from the prior the method assumes (s0^2 d0 / chi2(d0)), then 2-5 values of
    it: the fit finds s0^2 and d0 again."""
    rng = np.random.default_rng(11)
    groups = 4000
    true = 0.25 * 4 / rng.chisquare(4, groups)
    got = fits.moderated_variances(rng.normal(0, np.sqrt(v), n) for v, n in zip(true, rng.integers(2, 6, groups)))
    assert got.prior_dof == pytest.approx(4.0, rel=0.25)
    assert got.prior_var == pytest.approx(0.25, rel=0.06)


def test_moderated_variances_of_groups_of_one_variance_are_the_pooled_one():
    """200 shapes of 3 seeds at one true sd: the log variances scatter as sampling alone makes them, the prior is
    worth (near) every dof there is, and each shape's moderated sd is the pooled sd to a few percent, whatever its
    own sample sd (which spreads 10x over the shapes)."""
    rng = np.random.default_rng(3)
    groups = [rng.normal(0, 0.35, 3) for _ in range(200)]
    got = fits.moderated_variances(groups)
    pooled, dof = fits.pooled_sd(groups)
    own = np.array([np.std(g, ddof=1) for g in groups])
    assert own.max() / own.min() > 10
    assert got.prior_dof > 100
    np.testing.assert_allclose(got.sds, pooled, rtol=0.06)
    assert min(got.dofs) > 100 and max(got.dofs) <= dof == 400


def test_a_moderated_dof_exceeds_the_groups_own_whenever_the_prior_has_any():
    """d0 > 0: every group's posterior dof is more than its values - 1 (and at most the pooled dof), for shapes of
    3 seeds beside one stalled seed, and for groups of 2-9 values of unequal spreads."""
    rng = np.random.default_rng(5)
    stalled = [*(rng.normal(0, 0.35, 3) for _ in range(6)), [0.1, -0.2, 6.0]]
    uneven = [rng.normal(0, sd, n) for sd, n in zip(np.geomspace(0.05, 2.0, 9), range(2, 11))]
    for groups in (stalled, uneven):
        got = fits.moderated_variances(groups)
        assert got.prior_dof > 0
        own = np.array([len(g) - 1 for g in groups])
        assert (np.array(got.dofs) > own).all() and (np.array(got.dofs) <= own.sum()).all()


def test_moderated_variances_without_two_varying_groups():
    """No replicated group: no estimate (nan, 0 dof). One: its variance is every group's, at its own dof (the
    pooled model). Every variance zero: zero, at the pooled dof. Non-finite values are dropped, as pooled_sd does."""
    none = fits.moderated_variances([[1.0], [2.0], []])
    assert math.isnan(none.prior_var) and none.prior_dof == 0 and none.dofs == (0.0,) * 3
    assert all(math.isnan(v) for v in none.variances)
    one = fits.moderated_variances([[1.0, 2.0, 4.0], [7.0], [3.0, math.nan]])
    assert one.prior_var == pytest.approx(np.var([1.0, 2.0, 4.0], ddof=1)) and one.prior_dof == math.inf
    assert one.variances == (pytest.approx(one.prior_var),) * 3 and one.dofs == (2.0,) * 3
    flat = fits.moderated_variances([[2.0, 2.0], [3.0, 3.0, 3.0], [5.0]])
    assert (flat.prior_var, flat.prior_dof, flat.variances, flat.dofs) == (0.0, math.inf, (0.0,) * 3, (3.0,) * 3)


def test_a_zero_variance_beside_varying_ones_enters_the_fit_finitely():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fits.moderated_variances([[1.0, 1.0, 1.0], [0.0, 0.3, 0.1], [2.0, 2.4, 2.1], [5.0, 5.2, 4.7]])
    assert np.isfinite(got.prior_var) and got.prior_var > 0 and got.prior_dof > 0
    assert all(np.isfinite(got.variances)) and got.variances[0] < min(got.variances[1:])


def test_moderated_variances_are_float64_for_float32_input():
    groups = [F32_Y[:3], F32_Y[3:], F32_X[:4]]
    got = fits.moderated_variances(groups)
    expected = fits.moderated_variances([g.astype(np.float64) for g in groups])
    assert got.prior_var == pytest.approx(expected.prior_var, rel=1e-12)
    assert got.variances == pytest.approx(expected.variances, rel=1e-12)


def moderated_coverage(shapes: int, stall: float, reps: int = 1500) -> float:
    """How often the 95% t-interval of a healthy shape's mean (3 seeds, sd 1) at its moderated sd and dof holds the
    true mean 0, beside a shape whose third seed is `stall` sds high (none: 0)."""
    rng = np.random.default_rng(shapes)
    covered = []
    for _ in range(reps):
        seeds = rng.normal(0, 1, (shapes, 3))
        seeds[-1, 2] += stall
        got = fits.moderated_variances(seeds)
        half = stats.t.ppf(0.975, got.dofs) * np.sqrt(got.variances) / math.sqrt(3)
        healthy = shapes - 1 if stall else shapes  # the stalled shape is no healthy one
        covered.extend((np.abs(seeds.mean(axis=1)) <= half)[:healthy])
    return float(np.mean(covered))


@pytest.mark.parametrize("shapes, stall", [(7, 0.0), (40, 0.0), (7, 11.4)])
def test_moderated_intervals_cover_at_the_nominal_rate(shapes, stall):
    """Equal true sds (where the prior dof, fitted to 7 or 40 shapes of 2 dof each, is often far from inf) and a
    stalled seed (4% at a healthy sd of 0.35%): the healthy shapes' 95% intervals hold their mean 94-97% of the
    time: shrinking toward an estimated prior neither under-covers nor, beside a stall, balloons."""
    assert 0.94 <= moderated_coverage(shapes, stall) <= 0.975


def test_redraws_at_infinite_dof_are_normal():
    draws = fits.redraw_means([0.0, 1.0], [1.0, 0.5], [math.inf, 5.0], 20000)
    assert np.isfinite(draws).all()
    assert draws[:, 0].std() == pytest.approx(1.0, rel=0.03)
    assert stats.kurtosis(draws[:, 0]) == pytest.approx(0.0, abs=0.15)  # a t(5)'s excess kurtosis is 6
    assert draws[:, 1].std() == pytest.approx(0.5 * math.sqrt(5 / 3), rel=0.05)


def test_moderated_redraws_give_the_noisy_shape_its_spread_and_leave_the_quiet_ones_near_the_prior():
    """Six quiet shapes and one 10x noisier (a stalled seed): the noisy shape's redraws spread far more than a
    quiet one's, each at its moderated sd and dof, and the quiet ones' reaches lie closer together than their own
    sds (each shrunk toward the prior)."""
    import pandas as pd
    from depthwidth.plots.sweep_common import Noise, redraws

    own = [0.35, 0.2, 0.3, 0.4, 0.5, 0.35, 3.5]
    means = pd.DataFrame({"log_loss": [1.0] * 7, "seeds": [3] * 7, "sd_pct": own})
    got = fits.moderated_variances([[0.0, s, 2 * s] for s in own])  # sample sds: exactly `own`
    noise = Noise(1.0, 14, math.sqrt(got.prior_var), got.prior_dof)
    spread = np.quantile(np.abs(100 * (redraws(means, noise, draws=20000) - 1.0)), 0.95, axis=0)
    assert spread[6] > 3 * spread[:6].max()
    quiet = stats.t.ppf(0.975, np.array(got.dofs[:6])) * np.array(got.sds[:6]) / math.sqrt(3)
    np.testing.assert_allclose(spread[:6], quiet, rtol=0.08)
    assert spread[:6].max() / spread[:6].min() < 1.5  # their own sds: 2.5x apart


# ---------------------------------------------------------------- quantiles


def test_t_quantile_is_students_and_infinite_without_degrees_of_freedom():
    assert fits.t_quantile(1) == pytest.approx(12.706204736174707, rel=1e-12)  # tables: t(0.975, 1)
    assert fits.t_quantile(10) == pytest.approx(stats.t.ppf(0.975, 10), rel=1e-12)
    assert fits.t_quantile(0) == math.inf
    assert fits.t_quantile(-3) == math.inf


def test_f_quantile_is_fishers_and_nan_without_degrees_of_freedom():
    assert fits.f_quantile(0.95, 1, 1) == pytest.approx(161.44763879758718, rel=1e-10)  # tables: F(0.95; 1, 1)
    assert fits.f_quantile(0.025, 3, 12) == pytest.approx(stats.f.ppf(0.025, 3, 12), rel=1e-12)
    for dfn, dfd in ((0, 5), (5, 0), (0, 0), (-1, 4)):
        assert math.isnan(fits.f_quantile(0.95, dfn, dfd))


# ---------------------------------------------------------------- lines and power laws


def test_line_slope_and_standard_error_match_scipy_linregress():
    rng = np.random.default_rng(3)
    x = np.log(np.logspace(6, 9, 10))
    y = 3 - 0.07 * x + rng.normal(0, 0.01, x.size)
    line, ref = fits.fit_line(x, y), stats.linregress(x, y)
    assert line.slope == pytest.approx(ref.slope, rel=1e-12)
    assert line.intercept == pytest.approx(ref.intercept, rel=1e-12)
    assert line.slope_se == pytest.approx(ref.stderr, rel=1e-10)
    assert line.n_points == 10
    half = stats.t.ppf(0.975, 8) * ref.stderr
    np.testing.assert_allclose(line.slope_ci95, (ref.slope - half, ref.slope + half), rtol=1e-10)
    np.testing.assert_allclose(line([0.0, 1.0]), [ref.intercept, ref.intercept + ref.slope], rtol=1e-12)


def test_line_slope_standard_error_does_not_depend_on_where_x_is_centred():
    # Sxx = sum (x - mean)^2: a shift of x by 1e7 leaves it, and the slope's se, unchanged
    rng = np.random.default_rng(3)
    x = np.log(np.logspace(6, 9, 10))
    y = 3 - 0.07 * x + rng.normal(0, 0.01, x.size)
    near, far = fits.fit_line(x, y), fits.fit_line(x + 1e7, y)
    assert far.slope == pytest.approx(near.slope, rel=1e-8)
    assert far.slope_se == pytest.approx(near.slope_se, rel=1e-6)


def test_line_through_three_points_has_one_degree_of_freedom():
    # by hand: x = 0, 1, 2, y = 0, 2, 1 -> slope 0.5, intercept 0.5, residuals -0.5, 1, -0.5 (sum of squares 1.5)
    line = fits.fit_line([0, 1, 2], [0, 2, 1])
    assert line.slope == pytest.approx(0.5) and line.intercept == pytest.approx(0.5)
    assert line.slope_se == pytest.approx(math.sqrt(1.5 / 1 / 2.0))  # SSR / dof / Sxx, Sxx = 2
    low, high = line.slope_ci95
    assert high - 0.5 == pytest.approx(12.706204736174707 * math.sqrt(0.75), rel=1e-10)
    assert 0.5 - low == pytest.approx(high - 0.5)


def test_line_through_two_points_is_exact_with_an_unbounded_slope_interval():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no residual variance is estimated: nothing is divided by zero dof
        line = fits.fit_line([1.0, 3.0], [2.0, 6.0])
    assert line.slope == pytest.approx(2.0) and line.intercept == pytest.approx(0.0, abs=1e-12)
    assert line.slope_se == math.inf
    assert line.n_points == 2
    assert line.slope_ci95 == (-math.inf, math.inf)


def test_fit_line_refuses_a_single_point():
    with pytest.raises(ValueError, match="two distinct"):
        fits.fit_line([1.0], [2.0])


def test_power_law_of_slope_one_through_two_points():
    # log L = 2 - log N at N = 1, e: alpha exactly 1, N_c = e^2
    law = fits.fit_power_law([1.0, math.e], [math.e**2, math.e])
    assert law.alpha == 1.0
    assert law.log_n_c == pytest.approx(2.0, rel=1e-12)
    assert law.alpha_ci95 == (-math.inf, math.inf)
    assert law.n_points == 2


def test_power_law_of_an_exactly_flat_loss_has_zero_exponent_and_no_finite_scale():
    law = fits.fit_power_law([1e6, 1e7, 1e8], [1.0, 1.0, 1.0])
    assert law.alpha == 0
    assert law.log_n_c == math.inf
    assert law.alpha_ci95 == (0.0, 0.0)


def test_power_law_interval_is_the_negated_slope_interval():
    rng = np.random.default_rng(4)
    n = np.logspace(5, 8, 7)
    loss = (1e11 / n) ** 0.09 * np.exp(rng.normal(0, 0.01, n.size))
    law, line = fits.fit_power_law(n, loss), fits.fit_line(np.log(n), np.log(loss))
    low, high = line.slope_ci95
    assert law.alpha_ci95 == (-high, -low)
    assert law.alpha == -line.slope
    assert law.log_n_c == pytest.approx(line.intercept / law.alpha, rel=1e-12)
    np.testing.assert_allclose(law(n), np.exp(line(np.log(n))), rtol=1e-12)


@pytest.mark.parametrize("n, loss", [([1e6, 0.0], [3.0, 2.0]), ([1e6, 1e7], [3.0, -2.0]), ([-1e6, 1e7], [3.0, 2.0])])
def test_power_law_refuses_nonpositive_n_or_loss(n, loss):
    with pytest.raises(ValueError, match="positive N and loss"):
        fits.fit_power_law(n, loss)


def test_crossover_of_parallel_lines_is_none():
    assert fits.crossover_log_n(fits.Line(2.0, -0.05, 0.0, 5), fits.Line(2.5, -0.05, 0.0, 5)) is None


# ---------------------------------------------------------------- float64 whatever the input's dtype

# Losses come from training logs in float32 and depths from compact integer columns: every function converts its
# inputs to float64 first, so its result is the float64 one to the last few bits.

F32_X = np.array([0.1, 0.35, 0.7, 1.3, 2.9, 3.3, 4.1], dtype=np.float32)
F32_Y = np.array([2.31, 2.2, 2.13, 2.02, 1.97, 1.96, 1.93], dtype=np.float32)
F32_N = np.array([1.3e6, 2.9e6, 7.7e6, 1.9e7, 4.1e7], dtype=np.float32)
F32_LOSS = np.array([3.71, 3.52, 3.33, 3.18, 3.07], dtype=np.float32)


def _as64(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def test_fit_line_and_its_prediction_are_float64_for_float32_input():
    line, ref = fits.fit_line(F32_X, F32_Y), fits.fit_line(*_as64(F32_X, F32_Y))
    assert line.slope == pytest.approx(ref.slope, rel=1e-12)
    assert line.slope_se == pytest.approx(ref.slope_se, rel=1e-12)
    assert ref(F32_X).dtype == np.float64
    np.testing.assert_allclose(ref(F32_X), ref(*_as64(F32_X)), rtol=1e-14)


def test_fit_power_law_and_its_prediction_are_float64_for_float32_input():
    law, ref = fits.fit_power_law(F32_N, F32_LOSS), fits.fit_power_law(*_as64(F32_N, F32_LOSS))
    assert law.alpha == pytest.approx(ref.alpha, rel=1e-12)
    assert law.log_n_c == pytest.approx(ref.log_n_c, rel=1e-12)
    np.testing.assert_allclose(ref(F32_N), ref(*_as64(F32_N)), rtol=1e-14)


def test_object_dtype_columns_are_read_as_floats():
    # a pandas column left as object dtype (e.g. after mixed-type edits) holds Python floats
    x, y = F32_X.astype(float).astype(object), F32_Y.astype(float).astype(object)
    assert fits.fit_line(x, y).slope == pytest.approx(fits.fit_line(*_as64(x, y)).slope, rel=1e-12)
    assert fits.fit_line(F32_X.astype(float), y).slope_se == pytest.approx(fits.fit_line(*_as64(x, y)).slope_se)
    assert fits.curvature(F32_X.astype(float), y) == pytest.approx(fits.curvature(*_as64(x, y)))
    law = fits.fit_power_law(F32_N.astype(float), F32_LOSS.astype(float))
    increase = fits.loss_increase_percent(F32_LOSS.astype(float).astype(object), F32_N, law)
    assert increase.dtype == np.float64


# ---------------------------------------------------------------- curvature


def test_curvature_matches_a_quadratic_polyfit_with_its_t_interval():
    rng = np.random.default_rng(5)
    x = np.linspace(13.0, 20.0, 9)
    y = 4 - 0.1 * x + 0.01 * x**2 + rng.normal(0, 0.02, x.size)
    c, low, high = fits.curvature(x, y)
    coef, cov = np.polyfit(x, y, 2, cov=True)  # cov scaled by SSR / (n - 3)
    half = stats.t.ppf(0.975, x.size - 3) * math.sqrt(cov[0, 0])
    assert c == pytest.approx(coef[0], rel=1e-8)
    assert low == pytest.approx(coef[0] - half, rel=1e-8)
    assert high == pytest.approx(coef[0] + half, rel=1e-8)


def test_curvature_of_an_exact_parabola_is_its_coefficient_with_a_zero_width_interval():
    x = np.array([1.0, 2.0, 3.0, 5.0, 8.0])
    c, low, high = fits.curvature(x, 1 + 2 * x + 0.25 * x**2)
    assert c == pytest.approx(0.25, rel=1e-10)
    assert low == pytest.approx(0.25, rel=1e-9) and high == pytest.approx(0.25, rel=1e-9)


def test_curvature_does_not_depend_on_where_x_lies():
    rng = np.random.default_rng(6)
    x = np.linspace(0.0, 9.0, 10)
    y = 1 + 0.5 * x + 0.05 * x**2 + rng.normal(0, 0.3, x.size)
    here, far = fits.curvature(x, y), fits.curvature(x + 1e4, y)
    np.testing.assert_allclose(far, here, rtol=1e-8)


def test_curvature_with_four_points_has_one_degree_of_freedom():
    # x = -1, 0, 0, 1 (three distinct), y = 1, 0, 0.2, 1: the fit passes through the means at each x, so c = 0.9,
    # SSR = 0.02 and Var(c) = SSR / 1 * [(X'X)^-1]_cc = 0.02 * 1
    c, low, high = fits.curvature([-1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.2, 1.0])
    assert c == pytest.approx(0.9, rel=1e-12)
    half = 12.706204736174707 * math.sqrt(0.02)
    assert low == pytest.approx(0.9 - half, rel=1e-10) and high == pytest.approx(0.9 + half, rel=1e-10)


def test_curvature_with_three_points_has_a_coefficient_but_no_interval():
    c, low, high = fits.curvature([0.0, 1.0, 2.0], [1.0, 2.0, 5.0])  # y = 1 + x^2
    assert c == pytest.approx(1.0, rel=1e-12)
    assert math.isnan(low) and math.isnan(high)


def test_curvature_with_fewer_than_three_distinct_x_is_undefined():
    assert all(math.isnan(v) for v in fits.curvature([1.0, 1.0, 2.0, 2.0, 2.0], [1.0, 1.1, 2.0, 2.1, 1.9]))
    assert all(math.isnan(v) for v in fits.curvature([1.0, 2.0], [1.0, 3.0]))


def test_curvature_is_float64_for_float32_input():
    np.testing.assert_allclose(fits.curvature(F32_X, F32_Y), fits.curvature(*_as64(F32_X, F32_Y)), rtol=1e-12)


# ---------------------------------------------------------------- reference laws


def test_levine_scale_is_twelve_layers_of_width_squared_at_the_fitted_optimum():
    for depth in (0.5, 6.0, 24.0):
        width = math.exp(5.039 + 0.0555 * depth)
        assert fits.levine_n_at_depth(depth) == pytest.approx(12 * depth * width**2, rel=1e-12)
    assert fits.levine_fitted_crossover_n(4, 8) == pytest.approx(fits.levine_n_at_depth(6), rel=1e-12)
    assert fits.levine_fitted_crossover_n(2, 3) == pytest.approx(12 * 2.5 * math.exp(2 * (5.039 + 0.0555 * 2.5)))


@pytest.mark.parametrize("depth", [0.01, 0.5, 3.0, 24.0, 96.0, 700.0])
def test_levine_optimal_depth_inverts_the_scale_even_below_one_layer(depth):
    assert fits.levine_optimal_depth_at(fits.levine_n_at_depth(depth)) == pytest.approx(depth, rel=1e-12)


def test_kaplan_loss_is_their_equation_1_5():
    for n, d in ((1e6, 1e9), (3e8, 2e10), (8.8e13, 5.4e13)):
        expected = ((8.8e13 / n) ** (0.076 / 0.095) + 5.4e13 / d) ** 0.095
        assert fits.kaplan_loss_nd(n, d) == pytest.approx(expected, rel=1e-13)
    assert fits.kaplan_loss_nd(8.8e13, 5.4e13) == pytest.approx(2**0.095, rel=1e-13)


def test_kaplan_loss_is_float64_for_float32_input():
    n, d = np.float32([2**20, 3e7, 1e9]), np.float32([2**30, 1e9, 7e10])
    np.testing.assert_allclose(fits.kaplan_loss_nd(n, d), fits.kaplan_loss_nd(*_as64(n, d)), rtol=1e-14)


def test_kaplan_local_exponent_is_the_secant_of_log_loss():
    n_low, n_high, d = 1e6, 1e8, 1e10
    lo, hi = np.log(fits.kaplan_loss_nd([n_low, n_high], d))
    assert fits.kaplan_local_exponent(n_low, n_high, d) == pytest.approx((lo - hi) / math.log(100), rel=1e-12)
    assert fits.kaplan_local_exponent(n_low, n_high, 1e30) == pytest.approx(0.076, rel=1e-6)  # unlimited data


def test_tokens_for_local_exponent_round_trips_through_the_exponent():
    n_low, n_high = 1e6, 1e8
    for tokens in (1.5, 2e7, 3e9, 1e10):
        target = fits.kaplan_local_exponent(n_low, n_high, tokens)
        assert fits.tokens_for_local_exponent(target, n_low, n_high) == pytest.approx(tokens, rel=1e-3)


def test_tokens_for_local_exponent_edges():
    n_low, n_high = 1e6, 1e8
    # at or above 0.999 alpha_N: no finite number of tokens
    assert fits.tokens_for_local_exponent(fits.KAPLAN_ALPHA_N * 0.999, n_low, n_high) == math.inf
    assert fits.tokens_for_local_exponent(0.076, n_low, n_high) == math.inf
    below = math.nextafter(fits.KAPLAN_ALPHA_N * 0.999, 0)
    assert math.isfinite(fits.tokens_for_local_exponent(below, n_low, n_high))
    # at or below the exponent of a single token: one token
    for n_low, n_high in ((1e6, 1e8), (1e8, 1e9)):
        one = fits.kaplan_local_exponent(n_low, n_high, 1.0)
        assert fits.tokens_for_local_exponent(one, n_low, n_high) == 1.0
        assert fits.tokens_for_local_exponent(one * (1 - 1e-7), n_low, n_high) == 1.0
        assert fits.tokens_for_local_exponent(0.0, n_low, n_high) == 1.0


# ---------------------------------------------------------------- noise


def test_pooled_sd_by_hand():
    # squares: (1, 2, 3) -> 2, (4, 6) -> 2, (7) -> nothing; dof 2 + 1
    sd, dof = fits.pooled_sd([[1.0, 2.0, 3.0], [4.0, 6.0], [7.0]])
    assert dof == 3
    assert sd == pytest.approx(math.sqrt(4 / 3), rel=1e-14)
    sd, dof = fits.pooled_sd([[1.0, math.nan, 3.0], [math.inf, 5.0]])  # non-finite values are dropped
    assert (sd, dof) == (pytest.approx(math.sqrt(2.0)), 1)
    sd, dof = fits.pooled_sd([[1.0], [2.0], []])
    assert math.isnan(sd) and dof == 0


def test_pooled_sd_is_float64_for_float32_input():
    groups = [F32_Y[:3], F32_Y[3:]]
    sd, dof = fits.pooled_sd(groups)
    assert sd == pytest.approx(fits.pooled_sd([g.astype(np.float64) for g in groups])[0], rel=1e-13)
    assert dof == 5


def test_t_interval_edges():
    low, high = fits.t_interval(1.0, 0.5, 1)
    assert (1.0 - low, high - 1.0) == (pytest.approx(12.706204736174707 * 0.5),) * 2
    assert all(math.isnan(v) for v in fits.t_interval(1.0, 0.5, 0))
    assert all(math.isnan(v) for v in fits.t_interval(1.0, math.inf, 5))


def test_redraws_are_means_plus_student_t_times_se_from_a_generator_seeded_at_zero():
    means, se, dof = np.array([1.0, 2.0, -0.5]), np.array([0.1, 0.02, 0.3]), [3, 8, 30]
    draws = fits.redraw_means(means, se, dof, 5)
    expected = means + np.random.default_rng(0).standard_t(np.array(dof, float), size=(5, 3)) * se
    np.testing.assert_array_equal(draws, expected)
    assert draws.dtype == np.float64
    np.testing.assert_array_equal(fits.redraw_means(means, se, 4, 5), fits.redraw_means(means, se, [4, 4, 4], 5))


def test_redraws_of_object_columns_are_float64():
    # numpy's standard_t itself refuses object-dtype degrees of freedom: they are converted first
    means, se, dof = np.array([1.0, 2.0]), np.array([0.1, 0.2]), np.array([5, 9])
    ref = fits.redraw_means(means, se, dof, 7)
    for got in (
        fits.redraw_means(means.astype(object), se, dof, 7),
        fits.redraw_means(means, se.astype(object), dof, 7),
        fits.redraw_means(means, se, dof.astype(object), 7),
    ):
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, ref)


def test_percentile_interval_is_the_two_tail_quantiles():
    values = np.arange(1001.0)
    assert fits.percentile_interval(values) == (pytest.approx(25.0), pytest.approx(975.0))
    assert fits.percentile_interval(values, level=0.5) == (pytest.approx(250.0), pytest.approx(750.0))
    f32 = np.float32([0.1, 0.7, 3.3, 1234.567, 98765.4, 2.5])  # interpolated in float64, not float32
    low, high = np.quantile(f32.astype(np.float64), [0.025, 0.975])
    assert fits.percentile_interval(f32) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))


# ---------------------------------------------------------------- nearest depth


def test_nearest_depth_is_nearest_in_log_depth_whatever_the_integer_dtype():
    grid = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    above, below = 1.001 * math.sqrt(12 * 16), 0.999 * math.sqrt(12 * 16)  # either side of the geometric mean
    for trained in (grid, np.array(grid[::-1], dtype=np.uint8), np.array(grid, dtype=np.int16)):
        assert fits.nearest_depth(above, trained) == 16
        assert fits.nearest_depth(below, trained) == 12
        assert fits.nearest_depth(0.0, trained) == 2
        assert fits.nearest_depth(1000.0, trained) == 48


def test_kaplans_exponent_along_the_runs_path_is_the_derivative_of_eq_1_5_along_it():
    """Along D = 20 N, -d ln L / d ln N = (alpha_N x + alpha_D y) / (x + y), x = (N_c / N)^(alpha_N / alpha_D),
    y = D_c / D: the path's slope, which lies between alpha_D's and alpha_N's pulls, steeper than at a fixed D."""
    n0 = 5e4
    n = n0 * np.array([0.999, 1.0, 1.001])
    x = (fits.KAPLAN_N_C / n0) ** (fits.KAPLAN_ALPHA_N / fits.KAPLAN_ALPHA_D)
    y = fits.KAPLAN_D_C / (20 * n0)
    expected = (fits.KAPLAN_ALPHA_N * x + fits.KAPLAN_ALPHA_D * y) / (x + y)
    assert fits.kaplan_path_exponent(n, 20 * n) == pytest.approx(expected, rel=1e-4)
    wide = np.array([25e3, 5e4, 1e5, 2e5])
    assert fits.kaplan_path_exponent(wide, 20 * wide) > fits.kaplan_local_exponent(25e3, 2e5, 20 * 5e4)
    # at one fixed D the path's slope is the fixed-D secant's (two runs)
    assert fits.kaplan_path_exponent([3e4, 3e6], [5e5, 5e5]) == pytest.approx(fits.kaplan_local_exponent(3e4, 3e6, 5e5))


def test_welchs_dof_is_scipys_for_two_samples_and_infinite_without_noise():
    rng = np.random.default_rng(7)
    for sizes in ((3, 3), (3, 9), (5, 2)):
        a, b = rng.normal(0, 1, sizes[0]), rng.normal(0, 3, sizes[1])
        variances = [a.var(ddof=1) / a.size, b.var(ddof=1) / b.size]
        expected = stats.ttest_ind(a, b, equal_var=False).df
        assert fits.welch_dof(variances, [a.size - 1, b.size - 1]) == pytest.approx(expected, rel=1e-12)
    assert fits.welch_dof([0.0, 0.0], [2, 2]) == math.inf


def test_moderated_variances_of_groups_that_never_vary_have_a_zero_prior_and_zero_variances():
    """Every replicated group's values equal (variance 0): no spread to fit and nothing to take a log of; the prior is
    the pooled variance, 0, at infinite dof, and every group's moderated variance is 0."""
    found = fits.moderated_variances([[1.0, 1.0, 1.0], [2.0, 2.0], [3.0, 3.0, 3.0]])
    assert (found.prior_var, found.prior_dof) == (0.0, math.inf)
    assert found.variances == (0.0, 0.0, 0.0)
