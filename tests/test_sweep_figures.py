"""Sweep figures from synthetic sweep tables with a known law: files, columns, recovered numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from depthwidth import artifacts, shapes, sweep
from depthwidth.plots import common

ALPHA = 0.2
SWEEP = {
    "seeds": [0, 1], "head_dim": 16, "width_multiple": 2, "n_tolerance": 0.05,
    "aspect": {"enabled": True, "n": [2e5, 8e5], "depths": [1, 2, 4, 8], "ff_ratio": 4},
    "ffratio": {"enabled": True, "n": 4e5, "n_layer": 4, "ratios": [0.5, 1, 4, 16]},
    "headdim": {"enabled": True, "n": 2e5, "n_layer": 4, "head_dims": [8, 16, 32]},
    "grid": {"enabled": True, "depths": [1, 2, 3, 4], "widths": [32, 64, 128, 256], "ff_ratio": 4},
    "baseline": {"enabled": True, "aspect_ratio": 16, "n": [1e5, 3e5, 1e6, 3e6]},
}


def synthetic_loss(run: sweep.Run, n: int) -> float:
    """L(N) = (1e9 / N)^ALPHA, worse for depth 1, with a little seed noise."""
    penalty = 1.08 if run.shape.n_layer == 1 else 1.0
    noise = 1 + 0.002 * (run.seed - 0.5)
    return (1e9 / n) ** ALPHA * penalty * noise


def write_tables(folder) -> dict[str, str]:
    paths = {}
    for experiment, runs in sweep.plan(SWEEP).items():
        rows = []
        for run in runs.values():
            counts = shapes.count_params(run.shape.n_layer, run.shape.d_model, run.shape.d_ff, 512, 64)
            loss = synthetic_loss(run, counts["nonembedding"])
            metrics = {"n_params_nonembedding": counts["nonembedding"], "n_params_total": counts["total"],
                       "n_params_kaplan": counts["kaplan"], "tokens_seen": 1000, "final_val_loss": loss,
                       "best_val_loss": loss, "status": "ok", "wall_seconds": 1.0, "tokens_per_second": 1e3}
            rows.append(sweep.run_row(run, metrics))
        paths[experiment] = folder / f"sweep_{experiment}.csv"
        pd.DataFrame(rows, columns=sweep.TABLE_COLUMNS).to_csv(paths[experiment], index=False)
    return paths


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return write_tables(tmp_path_factory.mktemp("tables"))


INPUTS = artifacts.SWEEP_FIGURES


@pytest.mark.parametrize("figure", sorted(INPUTS))
def test_figure_writes_png_pdf_and_its_data(figure, tables, tmp_path):
    out = tmp_path / f"{figure}.png"
    plotted = common.render(figure, [tables[name] for name in INPUTS[figure]], out)
    for suffix in (".png", ".pdf", ".csv"):
        assert out.with_suffix(suffix).stat().st_size > 0
    written = pd.read_csv(out.with_suffix(".csv"))
    assert list(written.columns) == list(plotted.columns) and len(written) == len(plotted)


def test_power_law_figure_recovers_the_exponent(tables, tmp_path):
    plotted = common.render("kaplan_power_law", [tables["baseline"]], tmp_path / "p.png")
    assert plotted["alpha"].iloc[0] == pytest.approx(ALPHA, rel=0.02)


def test_aspect_increase_is_flat_except_depth_one(tables, tmp_path):
    plotted = common.render("kaplan_fig5_aspect", [tables["aspect"], tables["baseline"]], tmp_path / "a.png")
    deep = plotted[plotted["n_layer"] > 1]["increase_pct"]
    assert deep.abs().max() < 1.0
    assert plotted[plotted["n_layer"] == 1]["increase_pct"].mean() == pytest.approx(8.0, abs=1.0)


def test_unknown_figure_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown figure"):
        common.render("kaplan_fig99", [], tmp_path / "x.png")
