"""Sweep figures from synthetic sweep tables with a known law: files, columns, recovered numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from depthwidth import claims, shapes, sweep
from depthwidth.plots import FIGURES, common

ALPHA = 0.2
SWEEP = {
    "seeds": [0, 1],
    "head_dim": 16,
    "width_multiple": 2,
    "n_tolerance": 0.05,
    "aspect": {"enabled": True, "n": [2e5, 8e5], "depths": [1, 2, 4, 8], "ff_ratio": 4},
    "ffratio": {"enabled": True, "n": 4e5, "n_layer": 4, "ratios": [0.5, 1, 4, 16]},
    "headdim": {"enabled": True, "n": 2e5, "n_layer": 4, "head_dims": [8, 16, 32]},
    "grid": {"enabled": True, "depths": [1, 2, 3, 4], "widths": [32, 64, 128, 256], "ff_ratio": 4},
    "baseline": {"enabled": True, "aspect_ratio": 16, "n": [1e5, 3e5, 1e6, 3e6]},
}


CROSS_LOG_N = 12.0  # every pair of grid depths crosses at N = e^12, inside the grid's N range


def synthetic_loss(run: sweep.Run, n: int) -> float:
    """Ablations: L(N) = (1e9 / N)^ALPHA, 8% worse at depth 1. Grid: log L = a_L - alpha_L log N with
    deeper nets steeper (alpha_L = 0.1 + 0.01 L) and a_L placing every crossover at CROSS_LOG_N.
    A little seed noise on top."""
    noise = 1 + 0.002 * (run.seed - 0.5)
    depth = run.shape.n_layer
    if run.experiment == "grid":
        alpha = 0.1 + 0.01 * depth
        return math.exp(2 + 0.01 * CROSS_LOG_N * depth - alpha * math.log(n)) * noise
    penalty = 1.08 if depth == 1 else 1.0
    return (1e9 / n) ** ALPHA * penalty * noise


def write_tables(folder) -> dict[str, str]:
    paths = {}
    for experiment, runs in sweep.plan(SWEEP).items():
        rows = []
        for run in runs.values():
            counts = shapes.count_params(run.shape.n_layer, run.shape.d_model, run.shape.d_ff, 512, 64)
            loss = synthetic_loss(run, counts["nonembedding"])
            metrics = {
                "n_params_nonembedding": counts["nonembedding"],
                "n_params_total": counts["total"],
                "n_params_kaplan": counts["kaplan"],
                "tokens_seen": 1000,
                "final_val_loss": loss,
                "best_val_loss": loss,
                "status": "ok",
                "wall_seconds": 1.0,
                "tokens_per_second": 1e3,
            }
            rows.append(sweep.run_row(run, metrics))
        paths[experiment] = folder / f"sweep_{experiment}.csv"
        pd.DataFrame(rows, columns=sweep.TABLE_COLUMNS).to_csv(paths[experiment], index=False)
    return paths


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return write_tables(tmp_path_factory.mktemp("tables"))


SWEEP_FIGURES = [f for f, figure in FIGURES.items() if all(t.startswith("sweep_") for t in figure.inputs.values())]


def inputs(figure, tables):
    """The figure's inputs by name, from the sweep tables by experiment."""
    return {name: tables[table.removeprefix("sweep_")] for name, table in FIGURES[figure].inputs.items()}


@pytest.mark.parametrize("figure", sorted(SWEEP_FIGURES))
def test_figure_writes_png_pdf_and_its_data(figure, tables, tmp_path):
    out = tmp_path / f"{figure}.png"
    plotted = common.render(figure, inputs(figure, tables), out)
    for suffix in (".png", ".pdf", ".csv"):
        assert out.with_suffix(suffix).stat().st_size > 0
    written = pd.read_csv(out.with_suffix(".csv"))
    assert list(written.columns) == list(plotted.columns) and len(written) == len(plotted)


def test_power_law_figure_recovers_the_exponent(tables, tmp_path):
    plotted = common.render("kaplan_power_law", inputs("kaplan_power_law", tables), tmp_path / "p.png")
    assert plotted["alpha"].iloc[0] == pytest.approx(ALPHA, rel=0.02)


def test_aspect_increase_is_flat_except_depth_one(tables, tmp_path):
    plotted = common.render("kaplan_fig5_aspect", inputs("kaplan_fig5_aspect", tables), tmp_path / "a.png")
    deep = plotted[plotted["n_layer"] > 1]["increase_pct"]
    assert deep.abs().max() < 1.0
    assert plotted[plotted["n_layer"] == 1]["increase_pct"].mean() == pytest.approx(8.0, abs=1.0)


def test_crossovers_of_known_depth_laws_are_recovered(tables, tmp_path):
    plotted = common.render("levine_crossover", inputs("levine_crossover", tables), tmp_path / "c.png")
    used = plotted[plotted["used_in_fit"]]
    assert sorted(zip(used["shallow"], used["deep"])) == [(1, 2), (2, 3), (3, 4)]
    np.testing.assert_allclose(np.log(used["n_cross"]), CROSS_LOG_N, atol=1e-3)
    widths = [shapes.width_for_n(math.exp(CROSS_LOG_N), depth) for depth in (2, 3, 4)]
    expected = np.polyfit([2, 3, 4], np.log(widths), 1)[0]
    assert plotted["slope"].iloc[0] == pytest.approx(expected, abs=1e-3)


def test_optimal_depth_moves_from_shallowest_to_deepest_across_the_crossover(tables, tmp_path):
    plotted = common.render("levine_optimal_depth", inputs("levine_optimal_depth", tables), tmp_path / "o.png")
    below, above = plotted[plotted["log_n"] < CROSS_LOG_N - 0.5], plotted[plotted["log_n"] > CROSS_LOG_N + 0.5]
    assert (below["optimal_depth"] == 1).all() and (above["optimal_depth"] == 4).all()
    away = pd.concat([below, above])  # at the crossover itself every depth ties
    assert (away["optimal_share"] > 0.9).all()  # seed noise of 0.2% cannot move these optima
    row = claims.evaluate(
        next(c for c in claims.CLAIMS if c.id == "levine_optimal_depth"),
        {"levine_optimal_depth": tmp_path / "o.csv"},
        "synthetic",
    )
    assert row["verdict"] == claims.HOLDS, row


def test_crossover_rows_keep_pairs_that_never_cross(tables, tmp_path):
    plotted = common.render("levine_crossover", inputs("levine_crossover", tables), tmp_path / "c.png")
    assert len(plotted) == 6 and plotted["crosses"].all()  # all pairs, each with a bootstrap interval
    assert (plotted["width_ci_low"] <= plotted["width_cross"]).all()
    assert (plotted["width_cross"] <= plotted["width_ci_high"]).all()


def test_unknown_figure_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown figure"):
        common.render("kaplan_fig99", {}, tmp_path / "x.png")
