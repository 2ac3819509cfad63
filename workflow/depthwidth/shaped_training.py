"""Training with standard vs shaped attention across learning rates (figure S4): runs and table.

A third kind, `temperature` (softmax attention at the shaped temperature, no centring), is the
temperature-only control: it tells whether a difference comes from the temperature or the centring.

Torch-free: the Snakefile plans runs with `plan(config["shaped"]["training"], ...)`. Every run
trains the same model shape with one attention kind at one peak learning rate and logs the
attention entropy per layer and head at each evaluation.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from depthwidth.io import read_run_metrics, write_text
from depthwidth.shapes import TEMPERED_KINDS

TABLE_COLUMNS = ["attention", "lr", "seed", "run_id", "step", "tokens", "layer", "entropy", "final_val_loss", "status"]


def run_id(attention: str, lr: float, seed: int) -> str:
    # repr: the shortest text that reads back as the same float, so distinct rates get distinct ids
    return f"{attention}-lr{float(lr)!r}-s{seed}"


def plan(training: dict, data_dir: str, vocab_size: int) -> dict[str, dict]:
    """Train specs of every (attention kind, learning rate, seed), keyed by run id."""
    recipe = dict(training["recipe"])
    n_ctx = recipe.pop("n_ctx")
    specs = {}
    for attention in training["attentions"]:
        for lr in training["learning_rates"]:
            for seed in training["seeds"]:
                model = {**training["model"], "vocab_size": vocab_size, "n_ctx": n_ctx, "attention": attention}
                if attention in TEMPERED_KINDS:  # `temperature` reads tau0, the shaped temperature
                    model["shaped"] = training["shaped"]
                specs[run_id(attention, lr, seed)] = {
                    "data": data_dir,
                    "seed": seed,
                    "log_entropy": True,
                    "model": model,
                    "recipe": {**recipe, "lr": lr},
                }
    return specs


def table(specs: dict[str, dict], runs_dir: Path):
    """One row per (run, evaluation step, layer): entropy averaged over heads, plus the run's outcome.
    ValueError naming the file for a run whose curve.csv or entropy.csv is not the one its metrics.json records."""
    import pandas as pd  # here, not at import: the Snakefile plans runs with this module

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
                status=metrics["status"],
            )
        )
    return pd.concat(frames, ignore_index=True)[TABLE_COLUMNS]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--specs-json", required=True, help="run id -> train spec, as the workflow planned them")
    parser.add_argument("--runs-dir", required=True, type=Path, help="results/runs/shaped_entropy")
    parser.add_argument("--out", required=True, type=Path, help="results/tables/shaped_entropy.csv")


def run(args: argparse.Namespace) -> int:
    frame = table(json.loads(args.specs_json), args.runs_dir)
    write_text(args.out, frame.to_csv(index=False))
    print(f"shaped training: {frame['run_id'].nunique()} runs, {len(frame)} rows -> {args.out}")
    return 0
