"""`shaped-training-table`: the shaped-vs-standard training runs (figure S4) as one table,
ENTROPY_TABLE_COLUMNS: attention entropy per evaluation and layer, and each run's outcome."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from depthwidth.columns import ENTROPY_TABLE_COLUMNS
from depthwidth.contracts import RESULTS
from depthwidth.io import read_run_metrics, write_text
from depthwidth.options import json_option
from depthwidth.tables import bits


def table(specs: dict[str, dict], runs_dir: Path):
    """One row per (run, evaluation step, layer): entropy averaged over heads, plus the run's outcome.
    ValueError naming the file for a run whose curve.csv or entropy.csv is not the one its metrics.json records."""
    frames = []
    for rid, spec in specs.items():
        metrics = read_run_metrics(Path(runs_dir) / rid, ("curve.csv", "entropy.csv"))
        entropy = pd.read_csv(Path(runs_dir) / rid / "entropy.csv")
        curve = pd.read_csv(Path(runs_dir) / rid / "curve.csv")[["step", "tokens"]]
        per_layer = entropy.groupby(["step", "layer"], as_index=False)["entropy"].mean().merge(curve, on="step")
        frames.append(
            per_layer.assign(
                attention=spec["model"]["attention"],
                lr=spec["recipe"]["lr"],
                seed=spec["seed"],
                run_id=rid,
                final_val_loss=metrics["final_val_loss"],
                final_val_bpb=bits.bits_per_byte(
                    metrics["final_val_loss"], bits.val_bytes_per_token(bits.data_dir(runs_dir, spec))
                ),
                status=metrics["status"],
                n_layer=spec["model"]["n_layer"],
                tokens_seen=metrics["tokens_seen"],
                train_flops=metrics["train_flops_matmul"],
                wall_seconds=metrics["wall_seconds"],
            )
        )
    return pd.concat(frames, ignore_index=True)[list(ENTROPY_TABLE_COLUMNS)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--specs-json", required=True, help="run id -> train spec, as the workflow planned them")
    parser.add_argument("--runs-dir", type=Path, default=Path(RESULTS, "runs"), help="the runs' folder")
    parser.add_argument("--out", required=True, type=Path, help="the table's file (the plan's table_file)")


def run(args: argparse.Namespace) -> int:
    frame = table(json_option(args.specs_json, "--specs-json"), args.runs_dir)
    write_text(args.out, frame.to_csv(index=False))
    print(f"shaped training: {frame['run_id'].nunique()} runs, {len(frame)} rows -> {args.out}")
    return 0
