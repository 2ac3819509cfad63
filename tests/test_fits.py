"""Fits recover known parameters from synthetic data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from depthwidth import fits, shapes


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


def test_bartlett_refuses_one_variance_for_groups_whose_spreads_differ_and_accepts_equal_ones():
    rng = np.random.default_rng(1)
    equal = [rng.normal(0, 0.2, 3) for _ in range(30)]
    unequal = equal[:29] + [rng.normal(0, 2.0, 3)]  # one shape 10x noisier, as a bimodal seed makes it
    assert fits.variance_heterogeneity_p(unequal) < fits.HETEROGENEITY_ALPHA
    assert fits.variance_heterogeneity_p(equal) > fits.HETEROGENEITY_ALPHA
    assert np.isnan(fits.variance_heterogeneity_p([[1.0, 2.0]]))  # one group: nothing to compare
    assert np.isnan(fits.variance_heterogeneity_p([[1.0], [2.0, 2.0], [3.0, 3.0]]))  # nothing varies


def test_per_shape_redraws_give_the_noisy_shape_its_own_spread():
    import pandas as pd
    from depthwidth.plots.sweep_common import redraws

    means = pd.DataFrame({"log_loss": [1.0, 1.0], "seeds": [3, 3], "sd_pct": [0.1, 3.0]})
    pooled = redraws(means, 2.1, 4, per_shape=False, draws=4000)
    own = redraws(means, 2.1, 4, per_shape=True, draws=4000)
    assert pooled[:, 0].std() == pytest.approx(pooled[:, 1].std(), rel=0.15)
    assert own[:, 1].std() > 10 * own[:, 0].std()  # t(2) draws: heavier tails, so compare loosely
