"""Finite networks at initialization (docs/science.md §3.1), their agreement with the SDE, and the tables."""

from __future__ import annotations

import argparse
import csv
import json
import math

import numpy as np
import pytest
import torch
from depthwidth import columns
from depthwidth.shaped import finite, sde
from depthwidth.shaped import simulate as shaped_sim
from depthwidth.shaped.sde import ShapeParams
from depthwidth.spec import complete
from scipy import stats

V0 = sde.equicorrelated(4, 0.3)
KS_CRIT = 0.062  # two-sample KS at the 1e-3 level for 2000 vs 2000 samples: 1.95 sqrt(2 / 2000)


def _rho01(res) -> np.ndarray:
    return sde.correlation(res.V)[:, 0, 1][res.status == sde.OK].numpy()


def _log_norm(res) -> np.ndarray:
    return torch.log(res.V[:, 0, 0])[res.status == sde.OK].numpy()


def test_initial_tokens_have_the_requested_covariance():
    X = finite.initial_tokens(V0, 16, 5, torch.Generator().manual_seed(0), torch.float64)
    assert X.shape == (5, 4, 16)
    assert torch.allclose(X @ X.transpose(-2, -1) / 16, V0.expand(5, 4, 4), atol=1e-12)


@pytest.mark.parametrize(
    "block,attention", [("attention", "shaped"), ("attention", "standard"), ("mlp", "shaped"), ("both", "shaped")]
)
def test_projected_sampler_matches_dense_network_in_law(block, attention):
    # The projected sampler claims exactness in law (rotation invariance); the dense one is the
    # literal model with full weight matrices. 16 blocks of width 16, 2000 paths each.
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=0.5, c_minus=-2.0, c_plus=0.0)
    dense = finite.simulate(
        V0, finite.Networks(16, 1.0, block, attention, p, 2000, seed=1, method="dense", dtype=torch.float64)
    )
    proj = finite.simulate(V0, finite.Networks(16, 1.0, block, attention, p, 2000, seed=2, method="projected"))
    # Past softmax saturation a few paths grow past the blow-up threshold; equally often in both.
    frac = [float((r.status != sde.OK).double().mean()) for r in (dense, proj)]
    assert abs(frac[0] - frac[1]) < 0.015
    assert stats.ks_2samp(_rho01(dense), _rho01(proj)).statistic < KS_CRIT
    assert stats.ks_2samp(_log_norm(dense), _log_norm(proj)).statistic < KS_CRIT
    # The same comparison rejects a mis-scaled residual branch.
    wrong = finite.simulate(
        V0,
        finite.Networks(
            16,
            1.0,
            block,
            attention,
            ShapeParams(gamma=0.55, tau0=0.5, c_minus=-2.0, c_plus=0.0),
            2000,
            seed=2,
            method="projected",
        ),
    )
    assert stats.ks_2samp(_log_norm(dense), _log_norm(wrong)).statistic > KS_CRIT


def test_infinite_temperature_or_zero_queries_make_attention_linear():
    logits = torch.randn(7, 4, 4, dtype=torch.float64)
    eye = torch.eye(4, dtype=torch.float64).expand(7, 4, 4)
    assert torch.equal(finite.attention_matrix(logits, "shaped", math.inf), eye)
    assert torch.allclose(finite.attention_matrix(0 * logits, "shaped", 1.0), eye)  # W_Q = 0
    # Then E[V' | A] = lam^2 V + gam^2 A V A^T = V: one literal layer has zero mean increment.
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=math.inf, c_plus=0.0, c_minus=-1.0)
    n, n_samples = 64, 4000
    Vs = finite.one_step(V0, n, "attention", "shaped", p, n_samples, seed=3, method="dense")
    x = n * (Vs - V0)
    assert ((x.mean(0)).abs() < 4 * x.std(0) / math.sqrt(n_samples) + 1e-9).all()


@pytest.mark.parametrize("method", ["dense", "projected"])
@pytest.mark.parametrize("block", ["attention", "mlp", "both"])
def test_zero_gamma_freezes_finite_networks(method, block):
    p = ShapeParams(gamma=0.0, tau0=1.0, c_plus=0.0, c_minus=-1.0)
    res = finite.simulate(
        V0, finite.Networks(8, 1.0, block, "shaped", p, 20, seed=0, method=method, dtype=torch.float64)
    )
    assert torch.allclose(res.V, V0.expand(20, 4, 4), atol=1e-12)


def test_finite_networks_approach_the_sde_as_width_grows():
    # Shaped MLP with a strong non-linearity (c_- = -2), so finite-width corrections are visible.
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=2.0, c_minus=-2.0, c_plus=0.0)
    ref = sde.simulate(V0, sde.Paths(1.0, 0.01, "mlp", p, 6000, seed=1))
    assert ref.fraction(sde.OK) == 1.0
    w1 = {
        n: stats.wasserstein_distance(
            _rho01(finite.simulate(V0, finite.Networks(n, 1.0, "mlp", "shaped", p, 3000, seed=2))), _rho01(ref)
        )
        for n in (8, 32, 128)
    }
    assert w1[8] > w1[32]
    assert w1[8] > w1[128] + 0.015  # over seeds 1-5 the margin was 0.035 to 0.052
    assert w1[128] < 0.06  # 0.017 to 0.044 over seeds 1-5


def test_standard_attention_collapses_rank_and_shaped_does_not():
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=2.0, c_plus=0.0, c_minus=-1.0)
    std = finite.simulate(V0, finite.Networks(32, 1.0, "attention", "standard", p, 300, seed=4), record_every=8)
    shp = finite.simulate(V0, finite.Networks(32, 1.0, "attention", "shaped", p, 300, seed=4), record_every=8)
    assert (std.status == sde.OK).all()  # rank-one V is handled, not flagged
    assert np.all(np.diff(std.mean_rho) > -1e-3)  # rises with depth
    assert std.mean_rho[-1] > 0.99
    assert shp.mean_rho[-1] < 0.5


def test_psd_factor_handles_singular_and_rejects_indefinite():
    v = torch.tensor([1.0, 2.0, -1.0, 0.5], dtype=torch.float64)
    rank_one = torch.outer(v, v)
    indefinite = torch.diag(torch.tensor([1.0, 1.0, 1.0, -0.5], dtype=torch.float64))
    F, bad = finite.psd_factor(torch.stack([V0, rank_one, indefinite]))
    assert bad.tolist() == [False, False, True]
    assert torch.allclose(F[:2] @ F[:2].transpose(-2, -1), torch.stack([V0, rank_one]), atol=1e-12)


def test_finite_networks_are_seeded():
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=1.0, c_plus=0.0, c_minus=-1.0)
    a = finite.simulate(V0, finite.Networks(16, 0.5, "both", "shaped", p, 50, seed=7))
    b = finite.simulate(V0, finite.Networks(16, 0.5, "both", "shaped", p, 50, seed=7))
    assert torch.equal(a.V, b.V)


def test_bad_finite_arguments_raise():
    p = ShapeParams(gamma=math.sqrt(0.5), tau0=1.0, c_plus=0.0, c_minus=-1.0)
    with pytest.raises(ValueError, match="attention"):
        finite.simulate(V0, finite.Networks(16, 1.0, "mlp", "standard", p, 10, 0))
    with pytest.raises(ValueError, match="n must be at least"):
        finite.simulate(V0, finite.Networks(3, 1.0, "attention", "shaped", p, 10, 0))
    with pytest.raises(ValueError, match="integer number of blocks"):
        finite.simulate(V0, finite.Networks(16, 0.3, "attention", "shaped", p, 10, 0))
    with pytest.raises(ValueError, match="method"):
        finite.simulate(V0, finite.Networks(16, 1.0, "attention", "shaped", p, 10, 0, method="fast"))


def test_the_density_figure_estimates_a_normal_density():
    from depthwidth.plots.shaped_sde_density import density

    rng = np.random.default_rng(1)
    grid = np.linspace(-4, 4, 401)
    assert np.isnan(density(np.array([0.5]), grid)).all()  # one finished sample: no density
    dens = density(rng.normal(size=4000), grid)
    assert np.trapezoid(dens, grid) == pytest.approx(1.0, abs=0.01)
    assert np.max(np.abs(dens - np.exp(-(grid**2) / 2) / math.sqrt(2 * math.pi))) < 0.03


# ---------------------------------------------------------------- the commands


def _complete(table: str, spec: dict) -> dict:
    """A job's spec as the plan passes it: every default of its schema filled in."""
    from depthwidth.plan.shaped import SPEC_KINDS

    return complete(SPEC_KINDS[table], spec)


def _run(table: str, spec: dict, out) -> int:
    parser = argparse.ArgumentParser()
    shaped_sim.add_arguments(parser)
    return shaped_sim.run(parser.parse_args([table, "--spec-json", json.dumps(spec), "--out", str(out)]))


def test_samples_command_writes_the_terminal_table(tmp_path):
    out = tmp_path / "t.csv"
    for source, extra in (("sde", {}), ("finite", {"n": 16})):
        spec = _complete("samples", {"source": source, "block": "attention", "samples": 30, **extra})
        assert _run("samples", spec, out) == 0
        rows = list(csv.DictReader(out.open()))
        assert tuple(rows[0]) == columns.TERMINAL_COLUMNS
        samples = [r for r in rows if r["source"] == source]
        assert len(samples) == 30
        assert (rows[0]["n"], rows[0]["dt"]) == (("", "0.005") if source == "sde" else ("16", ""))
        ok = [float(r["rho01"]) for r in samples if r["status"] == "ok"]
        assert ok and all(-1 <= r <= 1 for r in ok)
        # an SDE job adds its drift-only ODE's terminal value, one row; a finite job none
        odes = [r for r in rows if r["source"] == "ode"]
        assert len(odes) == (source == "sde") and len(rows) == 30 + len(odes)


def test_trajectory_command_writes_standard_shaped_and_sde(tmp_path):
    out = tmp_path / "traj.csv"
    assert _run("trajectory", _complete("trajectory", {"n": 16, "samples": 40, "points": 4}), out) == 0
    rows = list(csv.DictReader(out.open()))
    assert tuple(rows[0]) == columns.TRAJECTORY_COLUMNS
    assert {(r["source"], r["attention"]) for r in rows} == {
        ("finite", "standard"),
        ("finite", "shaped"),
        ("sde", "shaped"),
    }


SDE = {"source": "sde", "block": "attention"}


@pytest.mark.parametrize(
    "table,spec,change,name",
    [
        ("samples", SDE, {"n": 16}, "'n'"),
        ("samples", SDE, {"source": "finite"}, "'n'"),
        ("samples", {**SDE, "source": "finite", "n": 16}, {"gamma": 2}, "'gamma'"),
        ("samples", SDE, {"block": "mlps"}, "'block'"),
        ("samples", SDE, {"attention": "standard"}, "'attention'"),
        ("samples", SDE, {"dt": -1}, "'dt'"),
        ("samples", SDE, {"dt": float("nan")}, "'dt'"),
        ("samples", SDE, {"rho0": -0.5}, "'rho0'"),
        ("samples", SDE, {"bogus": 1}, "'bogus'"),
        ("trajectory", {"n": 16}, {"block": "mlp"}, "'block'"),
    ],
)
def test_bad_job_specs_name_the_key(tmp_path, table, spec, change, name):
    # a complete spec (as the plan passes it) with one bad value: the job names that key
    out = tmp_path / "x.csv"
    with pytest.raises(ValueError, match=f"spec key {name}"):
        _run(table, {**_complete(table, spec), **change}, out)
    assert not out.exists()


@pytest.mark.parametrize("table,spec", [("samples", {**SDE, "source": "finite", "n": 16}), ("trajectory", {"n": 16})])
def test_a_job_refuses_an_incomplete_spec_naming_the_missing_key(tmp_path, table, spec):
    # the job fills in no default: each key the plan would fill in, left out, is named in one line
    out = tmp_path / "x.csv"
    complete = _complete(table, spec)
    defaulted = sorted(set(complete) - set(spec))
    assert {"T", "tau0", "gamma", "m", "rho0", "samples", "seed", "scheme"} <= set(defaulted)
    for key in defaulted:
        with pytest.raises(ValueError) as info:
            _run(table, {k: v for k, v in complete.items() if k != key}, out)
        message = str(info.value)
        assert message.startswith(f"spec key '{key}': missing") and "\n" not in message, (key, message)
    assert not out.exists()


def test_job_specs_share_the_configs_defaults_and_bounds():
    # one schema: a setting the config leaves out gets the same default as a job spec that leaves it out
    from depthwidth.plan import config

    minimal = {"name": "x", "data": {"name": "e", "corpus": "builtin"}, "shaped": {"simulation": {"widths": [4, 8]}}}
    sim = config.validate(minimal)["shaped"]["simulation"]
    job = complete("sample_spec", SDE)
    for key in ("samples", "T", "tau0", "gamma", "m", "rho0", "c_plus", "c_minus", "dt"):
        assert sim[key] == job[key], key
    minimal["shaped"]["simulation"]["gamma"] = 1.5  # and the same bound refuses it in both
    with pytest.raises(config.ConfigError, match="'shaped.simulation.gamma'"):
        config.validate(minimal)


def test_the_drift_only_ode_is_the_drift_integrated_and_converges_at_euler_order_1():
    """Set against scipy's adaptive integrator on the same drift: the Euler ODE's error halves with dt."""
    from scipy.integrate import solve_ivp

    p = ShapeParams(tau0=2.0, gamma=math.sqrt(0.5), c_plus=0.0, c_minus=-1.0)
    for block in ("attention", "both"):

        def rhs(_t, v, block=block):
            V = torch.tensor(v.reshape(4, 4))
            return sde.drift(V, block, p).numpy().ravel()

        exact = solve_ivp(rhs, (0.0, 1.0), V0.numpy().ravel(), rtol=1e-10, atol=1e-12).y[:, -1].reshape(4, 4)
        errors = [np.abs(sde.drift_only(V0, 1.0, dt, block, p).numpy() - exact).max() for dt in (0.02, 0.01)]
        assert errors[1] < 2e-3 and 1.7 < errors[0] / errors[1] < 2.3, errors
    assert torch.equal(sde.drift_only(V0, 0.0, 0.01, "mlp", p), V0.to(torch.float64))  # T = 0 leaves V0
