"""A sweep experiment's training curves, small enough to plot every run (`sweep-table --curves-out`), CURVES_COLUMNS.

Each run's curve.csv logs the training loss at every step (one batch of 4 x 128 tokens: noisy) and the validation
loss at each evaluation. Kept: the training loss averaged over CURVE_BINS equal spans of the run's tokens (each at
its span's mean tokens; a span with no step is left out), and every evaluation as it is, both in nats per token."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.columns import CURVES_COLUMNS

CURVE_BINS = 64  # training-loss points per run


def curve_rows(run_id: str, curve: pd.DataFrame, bins: int = CURVE_BINS) -> pd.DataFrame:
    """One run's rows: its binned training loss ("train") and its evaluations ("val")."""
    train = curve.dropna(subset=["train_loss"])
    val = curve.dropna(subset=["val_loss"])
    frames = [pd.DataFrame({"run_id": run_id, "kind": "val", "tokens": val["tokens"], "loss": val["val_loss"]})]
    if len(train):
        edges = np.linspace(0, train["tokens"].max(), bins + 1)
        span = np.clip(np.searchsorted(edges, train["tokens"], side="right") - 1, 0, bins - 1)
        means = train.groupby(span).agg(tokens=("tokens", "mean"), loss=("train_loss", "mean"))
        frames.insert(0, means.assign(run_id=run_id, kind="train"))
    return pd.concat(frames, ignore_index=True)[list(CURVES_COLUMNS)]


def table(run_ids, runs_dir: Path) -> pd.DataFrame:
    """The curves of the runs `run_ids` (each folder's curve.csv under `runs_dir`, which `sweep-table` has checked
    against its metrics.json), in their order."""
    frames = [curve_rows(rid, pd.read_csv(Path(runs_dir) / rid / "curve.csv")) for rid in run_ids]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(CURVES_COLUMNS))
