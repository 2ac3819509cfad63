"""The covariance SDE of docs/science.md §3.2 against one-step Monte-Carlo of the finite model (§3.4).

Each moment test also shows that it could fail: a deliberately wrong coefficient is rejected
by the same tolerance that accepts the formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from depthwidth.shaped import finite, sde
from depthwidth.shaped.sde import ShapeParams

N_WIDTH = 4096  # one-step tests: O(1/sqrt(n)) bias ~ 1.6%
REL_TOL = 0.04  # relative slack for that bias (attention, MLP: c = 1 + O(1/sqrt(n)))
V_TEST = torch.tensor([[1.2, 0.5, 0.1], [0.5, 0.9, -0.2], [0.1, -0.2, 0.7]], dtype=torch.float64)
PARAMS = ShapeParams(gamma=math.sqrt(0.5), tau0=1.0, c_plus=0.0, c_minus=-1.0)


def _accepts(estimate, se, target, rel=REL_TOL) -> bool:
    """|estimate - target| < 4 SE + rel * max|target|, entrywise."""
    slack = 4 * se + rel * target.abs().max()
    return bool(((estimate - target).abs() < slack).all())


@pytest.fixture(scope="module")
def attention_logits():
    """Logits Q K^T / sqrt(n_k) at V_TEST, n_k = n: Q = L Zq, K = L Zk are exact in law."""
    g = torch.Generator().manual_seed(11)
    n_samples, L = 3000, torch.linalg.cholesky(V_TEST)
    Zq = torch.randn(n_samples, 3, N_WIDTH, dtype=torch.float64, generator=g)
    Zk = torch.randn(n_samples, 3, N_WIDTH, dtype=torch.float64, generator=g)
    return L @ (Zq @ Zk.transpose(-2, -1)) @ L.T / math.sqrt(N_WIDTH)


def test_attention_drift_matches_one_step_monte_carlo(attention_logits):
    # E over W_V exactly: E[V' | A] = lam^2 V + gam^2 A V A^T; antithetic z -> -z (W_Q -> -W_Q).
    V, p, n = V_TEST, PARAMS, N_WIDTH
    est = 0
    for sign in (1, -1):
        A = finite.attention_matrix(sign * attention_logits, "shaped", p.tau0 * math.sqrt(n))
        est = est + 0.5 * n * p.gamma**2 * (A @ V @ A.transpose(-2, -1) - V)
    mc, se = est.mean(0), est.std(0) / math.sqrt(est.shape[0])
    b = sde.attention_drift(V, p.gamma, p.tau0)
    assert _accepts(mc, se, b)
    assert (mc.abs() / se).max() > 20  # the drift is resolved away from zero
    assert not _accepts(mc, se, 2 * b)
    assert not _accepts(mc, se, 0.7 * b)


def test_attention_logit_noise_matches_diffusion(attention_logits):
    # Conditional mean over W_V isolates the logit noise: sqrt(n) gam^2 (A V A^T - V) has
    # covariance (gam^4 / tau0^2)(V_ac P_bd + ...), the second term of the attention diffusion.
    V, p, n = V_TEST, PARAMS, N_WIDTH
    A = finite.attention_matrix(attention_logits, "shaped", p.tau0 * math.sqrt(n))
    x = (math.sqrt(n) * p.gamma**2 * (A @ V @ A.transpose(-2, -1) - V)).reshape(-1, 9)
    x = x - x.mean(0)
    prods = x[:, :, None] * x[:, None, :]
    cov, se = prods.mean(0), prods.std(0) / math.sqrt(x.shape[0])
    pair = p.gamma**2 * (2 - p.gamma**2) * sde._gaussian_pair_cov(V)
    logit_term = (sde.attention_diffusion_cov(V, p.gamma, p.tau0) - pair).reshape(9, 9)
    assert _accepts(cov, se, logit_term, rel=0.05)
    assert not _accepts(cov, se, 2 * logit_term, rel=0.05)


def test_mlp_drift_matches_one_step_monte_carlo():
    # Exact mean over W_2: E[V' | P] = lam^2 V + gam^2 c P P^T / n. Variance cut: antithetic
    # W_1 -> -W_1 and control variate H H^T / n (mean V exactly), where H = X W_1 / sqrt(n) = L Z.
    V, p, n, n_samples = V_TEST, PARAMS, N_WIDTH, 3000
    g = torch.Generator().manual_seed(12)
    H = torch.linalg.cholesky(V) @ torch.randn(n_samples, 3, n, dtype=torch.float64, generator=g)
    s_plus, s_minus, c = finite.relu_slopes(n, p.c_plus, p.c_minus)
    PP = 0
    for sign in (1, -1):
        P = finite.shaped_relu(sign * H, s_plus, s_minus)
        PP = PP + 0.5 * P @ P.transpose(-2, -1) / n
    k = c * (1 + (p.c_plus + p.c_minus) / math.sqrt(n))  # regression slope of PP on HH^T/n
    est = n * p.gamma**2 * (c * PP - k * (H @ H.transpose(-2, -1) / n - V) - V)
    mc, se = est.mean(0), est.std(0) / math.sqrt(n_samples)
    b = sde.mlp_drift(V, p.gamma, p.c_plus, p.c_minus)
    assert _accepts(mc, se, b)
    assert (mc.abs() / se).max() > 100
    assert not _accepts(mc, se, 1.25 * b)
    assert not _accepts(mc, se, 0.75 * b)


@pytest.mark.parametrize("block", ["attention", "mlp"])
def test_one_step_diffusion_matches_formula(block):
    # Full one-step samples of the finite network (projected sampler, exact in law; checked
    # against the dense literal model in test_finite.py) at n = 4096.
    V, p, n, n_samples = V_TEST, PARAMS, N_WIDTH, 4000
    Vs = finite.one_step(V, n, block, "shaped", p, n_samples, seed=13)
    x = (math.sqrt(n) * (Vs - V)).reshape(-1, 9)
    x = x - x.mean(0)
    prods = x[:, :, None] * x[:, None, :]
    cov, se = prods.mean(0), prods.std(0) / math.sqrt(n_samples)
    formula = sde.diffusion_cov(V, block, p).reshape(9, 9)
    assert _accepts(cov, se, formula)
    wrong = (2 * p.gamma**2 if block == "attention" else p.gamma**2 * (2 - p.gamma**2)) * sde._gaussian_pair_cov(V)
    assert not _accepts(cov, se, wrong.reshape(9, 9))


@pytest.mark.parametrize("block", ["attention", "mlp", "both"])
def test_structured_noise_has_diffusion_covariance(block):
    V, p, n_samples = V_TEST, ShapeParams(gamma=0.8, tau0=0.7, c_plus=0.0, c_minus=-1.0), 200_000
    L = torch.linalg.cholesky(V).expand(n_samples, 3, 3)
    g = torch.Generator().manual_seed(14)
    x = sde.sample_noise(L, V.expand(n_samples, 3, 3), block, p, g).reshape(-1, 9)
    assert torch.allclose(x.reshape(-1, 3, 3), x.reshape(-1, 3, 3).transpose(-2, -1))
    assert (x.mean(0).abs() < 5 * x.std(0) / math.sqrt(n_samples)).all()
    x = x - x.mean(0)
    prods = x[:, :, None] * x[:, None, :]
    cov, se = prods.mean(0), prods.std(0) / math.sqrt(n_samples)
    formula = sde.diffusion_cov(V, block, p).reshape(9, 9)
    assert _accepts(cov, se, formula, rel=0.005)
    assert not _accepts(cov, se, 1.05 * formula, rel=0.005)


def test_ito_correction_is_mean_of_kvk():
    V, p, n_samples = V_TEST, ShapeParams(gamma=0.8, tau0=0.7, c_plus=0.0, c_minus=-1.0), 100_000
    L = torch.linalg.cholesky(V).expand(n_samples, 3, 3)
    K = sde.noise_generator(L, V.expand(n_samples, 3, 3), "both", p, torch.Generator().manual_seed(15))
    kvk = K @ V @ K.transpose(-2, -1)
    mc, se = kvk.mean(0), kvk.std(0) / math.sqrt(n_samples)
    assert _accepts(mc, se, sde.ito_correction(V, "both", p), rel=0.005)


def test_infinite_temperature_gives_zero_attention_drift():
    V = V_TEST
    assert torch.equal(sde.attention_drift(V, 0.7, math.inf), torch.zeros_like(V))
    # Only the linear-residual pair term remains in the diffusion.
    pair = 0.49 * (2 - 0.49) * sde._gaussian_pair_cov(V)
    assert torch.allclose(sde.attention_diffusion_cov(V, 0.7, math.inf), pair)
    assert sde.attention_drift(V, 0.7, 1.0).abs().max() > 0.01


def test_zero_gamma_freezes_the_sde():
    V0 = sde.equicorrelated(4, 0.3)
    res = sde.simulate(
        V0, sde.Paths(1.0, 0.01, "both", ShapeParams(gamma=0.0, tau0=1.0, c_plus=0.0, c_minus=-1.0), 50, seed=0)
    )
    assert torch.equal(res.V, V0.expand(50, 4, 4))
    assert (res.status == sde.OK).all()


@pytest.mark.parametrize("scheme", ["euler", "multiplicative"])
def test_simulate_is_seeded_symmetric_and_flags_failures(scheme):
    V0 = sde.equicorrelated(4, 0.3)
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=1.0, c_plus=0.0, c_minus=-1.0)
    a = sde.simulate(V0, sde.Paths(1.0, 0.01, "attention", p, 400, seed=3, scheme=scheme))
    b = sde.simulate(V0, sde.Paths(1.0, 0.01, "attention", p, 400, seed=3, scheme=scheme))
    assert torch.equal(a.V, b.V) and torch.equal(a.status, b.status)
    assert torch.equal(a.V, a.V.transpose(-2, -1))
    ok = a.status == sde.OK
    assert torch.isfinite(a.V[ok]).all() and (torch.linalg.eigvalsh(a.V[ok])[:, 0] > -1e-12).all()
    # tau0 = 1 has a few percent of blow-ups (docs/science.md §3.2); they are caught, not propagated.
    assert 0.0 < 1 - a.fraction(sde.OK) < 0.2
    assert np.isnan(a.rho_path[-1, ~ok.numpy()]).all()
    if scheme == "multiplicative":
        assert a.fraction(sde.NOT_PSD) == 0.0


def test_schemes_agree_in_law():
    from scipy import stats

    V0 = sde.equicorrelated(4, 0.3)
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=2.0, c_plus=0.0, c_minus=-1.0)
    rho = {}
    for scheme in ("euler", "multiplicative"):
        res = sde.simulate(
            V0, sde.Paths(1.0, 0.01, "attention", p, 3000, seed=4 if scheme == "euler" else 5, scheme=scheme)
        )
        rho[scheme] = sde.correlation(res.V)[:, 0, 1][res.status == sde.OK].numpy()
    assert stats.ks_2samp(rho["euler"], rho["multiplicative"]).statistic < 0.05  # two-sample 1e-3 level ~ 0.05


def test_bad_arguments_raise():
    V0 = sde.equicorrelated(3, 0.1)
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=1.0, c_plus=0.0, c_minus=-1.0)
    with pytest.raises(ValueError, match="block"):
        sde.simulate(V0, sde.Paths(1.0, 0.01, "mlpp", p, 10, 0))
    with pytest.raises(ValueError, match="dt"):
        sde.simulate(V0, sde.Paths(1.0, 0.0, "mlp", p, 10, 0))
    with pytest.raises(ValueError, match="scheme"):
        sde.simulate(V0, sde.Paths(1.0, 0.01, "mlp", p, 10, 0, scheme="rk4"))
    with pytest.raises(ValueError, match="gamma"):
        ShapeParams(gamma=1.5, tau0=1.0, c_plus=0.0, c_minus=-1.0)
    with pytest.raises(ValueError, match="rho0"):
        sde.equicorrelated(3, -0.6)
