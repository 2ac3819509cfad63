"""`python -m depthwidth bench rounding RUN_DIR...`: how far rounding alone moves a run's final loss.

Retrains each finished run from the spec its metrics.json records, twice, on this machine's own kernels
(DEPTHWIDTH_NUMERICS=native) with only ATen's instruction set changed: ATEN_CPU_CAPABILITY=avx2 (the pinned
path's) and another (softmax, layer norm, attention, AdamW's foreach ops: other last bits, the same
arithmetic): avx512 on a CPU that has it, else default (ATen's kernels built without vector extensions). A run
whose training is chaotic where it matters (a seed near a stall) ends far apart; issue 51 asks that none of
ten row runs moves by more than MOVE_LIMIT. The pinned path (numerics.py) gives one machine's numbers on
every x86 CPU; this measures how much those numbers depend on the rounding they happen to have. Either other
set is a change of rounding alone, but not the same change (vectorised against scalar is not AVX-512 against
AVX2), so their moves need not agree: the output names the one it ran.

Both retrainings of a run go side by side, one thread each.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REFERENCE = "avx2"  # the pinned path's ATen kernels (numerics.controls)
MOVE_LIMIT = 0.1  # % of the loss (issue 51: "moves no final loss by more than 0.1%")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", type=Path, help="finished run directories (their metrics.json)")


def has_avx512() -> bool:
    try:
        return " avx512f" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def capabilities() -> tuple[str, str]:
    """The reference instruction set and the other one this CPU can run."""
    return (REFERENCE, "avx512" if has_avx512() else "default")


def retrain(spec: dict, capability: str, out: Path) -> subprocess.Popen:
    env = {**os.environ, "DEPTHWIDTH_NUMERICS": "native", "ATEN_CPU_CAPABILITY": capability}
    command = [sys.executable, "-m", "depthwidth", "train", "--spec-json", json.dumps(spec)]
    command += ["--out", str(out), "--threads", "1", "--device", "cpu"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def final_loss(out: Path) -> float:
    metrics = json.loads((out / "metrics.json").read_text())
    return float(metrics["final_val_loss"]) if metrics.get("status") == "ok" else math.inf


def move_pct(losses: dict[str, float], other: str) -> float:
    """How far the retraining at the `other` instruction set ends from the reference one, % of the reference loss."""
    return 100 * (losses[other] / losses[REFERENCE] - 1)


def read_metrics(run_dir: Path) -> dict:
    """A finished run's metrics.json; ValueError naming it where it records no spec to retrain from."""
    from depthwidth.io import read_json

    metrics = read_json(run_dir / "metrics.json")
    if not isinstance(metrics, dict) or not isinstance(metrics.get("spec"), dict):
        raise ValueError(f"{run_dir / 'metrics.json'}: no 'spec' to retrain from (a finished run's metrics.json)")
    return metrics


def run(args: argparse.Namespace) -> int:
    every = {run_dir: read_metrics(run_dir) for run_dir in args.runs}  # all read before the first retraining
    sets = capabilities()
    other = sets[1]
    print(f"{'run':<44} {'recorded':>9} {REFERENCE:>9} {other:>9} {'move %':>8}")
    moves = []
    with tempfile.TemporaryDirectory() as tmp:
        for run_dir in args.runs:
            metrics = every[run_dir]
            jobs = {c: retrain(metrics["spec"], c, Path(tmp, run_dir.name, c)) for c in sets}
            for capability, job in jobs.items():
                if job.wait() != 0:
                    raise SystemExit(f"bench rounding: {run_dir} at {capability} failed: {job.stderr.read()[-400:]}")
            losses = {c: final_loss(Path(tmp, run_dir.name, c)) for c in sets}
            moves.append(move_pct(losses, other))
            recorded = float(metrics.get("final_val_loss", math.nan))
            print(
                f"{run_dir.name:<44} {recorded:>9.4f} {losses[REFERENCE]:>9.4f} {losses[other]:>9.4f} "
                f"{moves[-1]:>+8.3f}"
            )
    worst = max(abs(m) for m in moves)
    over = sum(abs(m) > MOVE_LIMIT for m in moves)
    print(f"largest move {worst:.3f}% over {len(moves)} runs; {over} above {MOVE_LIMIT}%")
    return 0
