"""`concat-tables`: stack CSV tables with identical columns into one, atomically."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from depthwidth.io import write_text


def concat(paths: list[Path]) -> pd.DataFrame:
    """Rows of every table in order; tables whose columns differ are an error naming the file."""
    frames = [pd.read_csv(path, dtype=str, keep_default_na=False) for path in paths]
    for path, frame in zip(paths[1:], frames[1:]):
        if list(frame.columns) != list(frames[0].columns):
            raise ValueError(
                f"{path}: columns {list(frame.columns)} differ from {paths[0]}'s {list(frames[0].columns)}"
            )
    return pd.concat(frames, ignore_index=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tables", nargs="+", type=Path, help="CSV files with the same columns")
    parser.add_argument("--out", required=True, type=Path)


def run(args: argparse.Namespace) -> int:
    frame = concat(args.tables)
    write_text(args.out, frame.to_csv(index=False))
    print(f"{len(args.tables)} tables, {len(frame)} rows -> {args.out}")
    return 0
