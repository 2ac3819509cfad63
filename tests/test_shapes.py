"""Shapes hit their parameter budget; counts agree with the built model and with Kaplan."""

from __future__ import annotations

import pytest
from conftest import REPO
from depthwidth import config as cfg
from depthwidth import shapes, sweep


@pytest.mark.parametrize("n", [1e5, 3e5, 1e6, 1e7])
@pytest.mark.parametrize("depth", [1, 2, 4, 8, 12])
def test_shape_at_hits_n_within_tolerance(n, depth):
    shape = shapes.shape_at(n, depth, ff_ratio=4, head_dim=16, multiple=2)
    assert abs(shapes.nonembedding(shape.n_layer, shape.d_model, shape.d_ff) / n - 1) <= 0.05
    assert shape.d_model % shape.n_head == 0 and shape.n_layer == depth


def test_shape_at_refuses_an_unreachable_n():
    with pytest.raises(ValueError, match="depth 48"):
        shapes.shape_at(2e4, 48, multiple=8)


def test_kaplan_count_is_close_for_wide_models_and_exact_in_form():
    counts = shapes.count_params(n_layer=6, d_model=512, d_ff=2048, vocab_size=4096, n_ctx=128)
    assert counts["kaplan"] == 12 * 6 * 512**2
    assert counts["nonembedding"] / counts["kaplan"] == pytest.approx(1, abs=0.01)
    assert counts["total"] - counts["nonembedding"] == (4096 + 128) * 512


def test_heads_pick_the_closest_head_size():
    assert shapes.heads_for(256, 32) == 8
    assert shapes.heads_for(96, 32) == 3
    assert shapes.heads_for(7, 32) == 1


@pytest.mark.parametrize("path", sorted((REPO / "config").glob("*.yaml")), ids=lambda p: p.name)
def test_every_config_plans_runs_at_their_nominal_n(path):
    config = cfg.load(path)
    if "sweep" not in config:
        pytest.skip("config has no sweep block")
    tolerance = config["sweep"]["n_tolerance"]
    for experiment, runs in sweep.plan(config["sweep"]).items():
        for run in runs.values():
            if run.n_target is None:
                continue
            n = shapes.nonembedding(run.shape.n_layer, run.shape.d_model, run.shape.d_ff)
            assert abs(n / run.n_target - 1) <= tolerance, (experiment, run.run_id)
