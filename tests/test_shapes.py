"""Shapes hit their parameter budget; counts agree with the built model and with Kaplan."""

from __future__ import annotations

import math

import pytest
from conftest import REPO
from depthwidth import shapes
from depthwidth.plan import config as cfg
from depthwidth.plan import sweep


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
    for experiment, runs in sweep.plan(config["sweep"]).items():
        # the literal block has a tolerance of its own (its widths are 5-36 channels)
        tolerance = config["sweep"][experiment].get("n_tolerance", config["sweep"]["n_tolerance"])
        for run in runs.values():
            if run.n_target is None:
                continue
            n = shapes.nonembedding(run.shape.n_layer, run.shape.d_model, run.shape.d_ff)
            assert abs(n / run.n_target - 1) <= tolerance, (experiment, run.run_id)


def test_learning_rate_is_kaplans_rule_times_the_shape_scale_and_the_runs_factor():
    recipe = {"lr": "kaplan", "n_ctx": 128, "batch_size": 4, "token_budget": 1000}
    scale = {"n_layer": 0.25, "d_model": -1, "ff_ratio": 0.5, "at": {"n_layer": 1, "d_model": 64, "ff_ratio": 4}}

    def recipe_of(run: sweep.Run, recipe: dict) -> dict:
        return sweep.run_recipe(run, recipe, run.shape.n_nonembedding)

    deep = shapes.Shape(n_layer=8, d_model=22, n_head=1, d_ff=88)
    n = shapes.nonembedding(8, 22, 88)
    # an independent computation: 8^0.25 x 64 / 22 x LR(N) (d_ff = 4 d: no feed-forward term), and the
    # lr_check factor on top
    expected = 8**0.25 * 64 / 22 * (0.003239 - 0.0001395 * math.log(n))
    for factor in (1, 0.5, 4):
        run = sweep.Run("lr_check", deep, 0, 50000, factor)
        lr = recipe_of(run, {**recipe, "lr_scale": scale})["lr"]
        assert lr == pytest.approx(factor * expected, rel=1e-5)
    # a small feed-forward ratio lowers the rate: d_ff = d / 2 is 1/8 of the reference ratio, x (1/8)^0.5
    narrow_ff = shapes.Shape(n_layer=4, d_model=50, n_head=2, d_ff=25)
    n = shapes.nonembedding(4, 50, 25)
    expected = 4**0.25 * 64 / 50 * (1 / 8) ** 0.5 * (0.003239 - 0.0001395 * math.log(n))
    lr = recipe_of(sweep.Run("ffratio", narrow_ff, 0, 50000), {**recipe, "lr_scale": scale})["lr"]
    assert lr == pytest.approx(expected, rel=1e-5)
    # at the reference shape the scale is 1: the plan resolves Kaplan's rule to its number at the run's N
    # (the job never sees "kaplan")
    reference = sweep.Run("design", shapes.Shape(1, 64, 2, 256), 0)
    n = shapes.nonembedding(1, 64, 256)
    lr = recipe_of(reference, {**recipe, "lr_scale": scale})["lr"]
    assert isinstance(lr, float) and lr == pytest.approx(0.003239 - 0.0001395 * math.log(n), rel=1e-12)
    # without a scale, a number stays that number
    assert recipe_of(sweep.Run("design", deep, 0), {**recipe, "lr": 0.002})["lr"] == 0.002
    # the spec never carries lr_scale (the train command does not know it)
    assert "lr_scale" not in recipe_of(sweep.Run("design", deep, 0), {**recipe, "lr_scale": scale})


def test_kaplans_rule_without_a_positive_rate_is_a_plan_error_naming_the_key():
    # LR(N) <= 0 for N >= exp(0.003239 / 0.0001395) ~ 1.2e10: the plan refuses it rather than training at it
    huge = sweep.Run("design", shapes.Shape(1, 64, 2, 256), 0)
    with pytest.raises(sweep.PlanError) as info:
        sweep.run_recipe(huge, {"lr": "kaplan", "n_ctx": 128, "batch_size": 4, "token_budget": 1000}, 10**11)
    assert info.value.key == "sweep.recipe.lr" and "<= 0" in info.value.reason
