"""GLUE fine-tuning of shaped against standard Transformers (Noci et al. 2023): fetch CoLA and RTE
(`tasks`), pretrain one model per attention kind with the training engine (`pretrain`), fine-tune each with a
classification head per task and seed (`finetune`), score on dev (`metrics`), collect the scores (`table`).
Where its files lie and its table's columns: `glue.contracts` (torch-free, stdlib-only)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_job_arguments(parser: argparse.ArgumentParser, spec: str, out: str) -> None:
    """The arguments of a GLUE job's command: its complete spec (`spec`: what it is), the folder it writes
    (`out`: what goes there), threads, device and the progress bar."""
    parser.add_argument("--spec-json", required=True, help=f"the complete {spec} (as the workflow passes it)")
    parser.add_argument("--out", required=True, type=Path, help=f"folder: {out}")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
