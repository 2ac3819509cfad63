"""`python -m depthwidth glue-table --jobs-json '{"<finetune id>": "<pretrained id>", ...}' --out glue.csv`:
one row per fine-tuning (task, attention, seed) with its dev confusion counts and scores, from each job's
metrics.json (`glue.contracts.finetuned_dir`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from depthwidth.glue.contracts import TABLE_COLUMNS, finetuned_dir
from depthwidth.io import read_json, write_text
from depthwidth.options import json_option


def row(finetune_id: str, pretrained_id: str, metrics: dict) -> dict:
    """A table row from one fine-tuning's metrics.json."""
    return {
        "task": metrics["task"],
        "attention": metrics["attention"],
        "seed": metrics["seed"],
        "finetune_id": finetune_id,
        "pretrained_id": pretrained_id,
        "pretrain_val_loss": metrics["pretrain_val_loss"],
        "n_train": metrics["n_train"],
        "n_dev": metrics["n_dev"],
        **{key: metrics["confusion"][key] for key in ("tp", "fp", "tn", "fn")},
        **{key: metrics[key] for key in ("mcc", "f1", "accuracy")},
    }


def table(jobs: dict[str, str], root: Path = Path(".")):
    import pandas as pd

    rows = [row(fid, pid, read_json(root / finetuned_dir(fid) / "metrics.json")) for fid, pid in jobs.items()]
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs-json", required=True, help="fine-tuning id -> pretrained id, as JSON")
    parser.add_argument("--out", required=True, type=Path, help="the table, results/<config>/tables/glue.csv")


def run(args: argparse.Namespace) -> int:
    frame = table(json_option(args.jobs_json, "--jobs-json"))
    write_text(args.out, frame.to_csv(index=False))
    print(f"depthwidth glue-table: {len(frame)} rows -> {args.out}")
    return 0
