"""A sweep experiment's training curves (tables/curves.py): the binned training loss against an independent
computation, every evaluation kept, and `check` holding the curves table to its sweep table's runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from depthwidth.columns import CURVES_COLUMNS, curves_table
from depthwidth.tables import curves


def logged(steps: int = 1000, every: int = 200, batch: int = 512) -> pd.DataFrame:
    """A curve.csv as the training logs it: step 0 an evaluation alone, then a training loss every step and an
    evaluation every `every` steps."""
    rng = np.random.default_rng(0)
    step = np.arange(steps + 1)
    train = 3 + 3 * np.exp(-step / 300) + 0.1 * rng.standard_normal(step.size)
    val = np.where(step % every == 0, 3 + 3 * np.exp(-step / 300), np.nan)
    return pd.DataFrame({"step": step, "tokens": step * batch, "train_loss": np.where(step > 0, train, np.nan),
                         "val_loss": val, "lr": 1e-3})  # fmt: skip


def test_the_training_loss_is_averaged_over_equal_spans_of_tokens_and_every_evaluation_kept():
    curve = logged()
    rows = curves.curve_rows("r", curve, bins=10)
    assert list(rows.columns) == list(CURVES_COLUMNS) and set(rows["run_id"]) == {"r"}
    val = rows[rows["kind"] == "val"]
    expected = curve.dropna(subset=["val_loss"])
    assert (
        val["tokens"].tolist() == expected["tokens"].tolist() and val["loss"].tolist() == expected["val_loss"].tolist()
    )
    train = rows[rows["kind"] == "train"]
    assert len(train) == 10
    # independently: span k holds the steps whose tokens lie in [k T / 10, (k + 1) T / 10), the last one closed
    logged_train = curve.dropna(subset=["train_loss"])
    top = logged_train["tokens"].max()
    for k, (tokens, loss) in enumerate(zip(train["tokens"], train["loss"])):
        inside = (logged_train["tokens"] >= k * top / 10) & (
            (logged_train["tokens"] < (k + 1) * top / 10) if k < 9 else True
        )
        assert loss == pytest.approx(logged_train.loc[inside, "train_loss"].mean())
        assert tokens == pytest.approx(logged_train.loc[inside, "tokens"].mean())
    # 64 spans by default: a run of 1000 steps is 64 points, 6 evaluations
    assert (curves.curve_rows("r", curve)["kind"] == "train").sum() == curves.CURVE_BINS


def test_a_run_with_fewer_steps_than_spans_keeps_one_point_a_step():
    rows = curves.curve_rows("short", logged(steps=20, every=10))
    assert (rows["kind"] == "train").sum() == 20 and (rows["kind"] == "val").sum() == 3


def test_table_reads_each_runs_curve_in_order(tmp_path):
    for rid in ("b", "a"):
        (tmp_path / rid).mkdir()
        logged(steps=50, every=25).to_csv(tmp_path / rid / "curve.csv", index=False)
    table = curves.table(["b", "a"], tmp_path)
    assert list(dict.fromkeys(table["run_id"])) == ["b", "a"]
    assert curves.table([], tmp_path).columns.tolist() == list(CURVES_COLUMNS)
    assert curves_table("design") == "curves_design"
