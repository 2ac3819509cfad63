"""Shared by the shaped-Transformer figures: reading the terminal-sample table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def read_terminal(path: Path) -> pd.DataFrame:
    """results/<config>/tables/sde_terminal.csv: one row per sample; rho01 empty where the path blew up."""
    return pd.read_csv(path, dtype={"source": str, "attention": str, "block": str})


def finished(samples: pd.DataFrame) -> pd.DataFrame:
    return samples[(samples["status"] == "ok") & samples["rho01"].notna()]


def sde_steps(samples: pd.DataFrame) -> dict[float, pd.DataFrame]:
    """One block's SDE samples by their time step dt (the SDE runs at dt and dt / 2)."""
    sde = samples[samples["source"] == "sde"]
    return {float(dt): group for dt, group in sde.groupby("dt")}
