"""`python -m depthwidth bench <what>`: speed benchmarks that print figures.

Each benchmark module (`train`, `sweep`, `pack`, `sde`, `rounding`) defines `add_arguments(parser)` and `run(args)`.
"""

from __future__ import annotations

import argparse
import importlib

BENCHMARKS = {
    "train": "training tokens/s and fraction of matmul peak",
    "sweep": "the config's sweep shapes: engine vs a plain eager loop, projected sweep wall time",
    "pack": "training processes sharing one device: summed tokens/s at 1, 2, 4, 8 and how many to use",
    "sde": "SDE vs finite-network samples/s",
    "rounding": "finished runs retrained with only ATen's instruction set changed: how far each final loss moves",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="benchmark", required=True)
    for name, summary in BENCHMARKS.items():
        module = importlib.import_module(f"depthwidth.benchmarks.{name}")
        module.add_arguments(sub.add_parser(name, help=summary, description=summary))


def run(args: argparse.Namespace) -> int:
    return importlib.import_module(f"depthwidth.benchmarks.{args.benchmark}").run(args)
