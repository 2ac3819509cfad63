"""`validate-config FILE`: check a workflow config and its plan; exit 1 with one line naming the bad key."""

from __future__ import annotations

import argparse
from pathlib import Path

from depthwidth.plan.config import read
from depthwidth.plan.jobs import from_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("configfile", type=Path, help="a YAML config, e.g. config/ci.yaml")


def run(args: argparse.Namespace) -> int:
    plan = from_config(read(args.configfile))
    print(f"{args.configfile}: valid ({len(plan.runs)} training runs, {len(plan.figures)} figures)")
    return 0
