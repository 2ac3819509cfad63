"""`python -m depthwidth bench rounding RUN_DIR...`: how far rounding alone moves a run's final loss.

Retrains each finished run from the spec its metrics.json records, twice, on this machine's own kernels
(DEPTHWIDTH_NUMERICS=native) with only ATen's instruction set changed: ATEN_CPU_CAPABILITY=avx2 and
=avx512 (softmax, layer norm, attention, AdamW's foreach ops: other last bits, the same arithmetic). A run
whose training is chaotic where it matters (a seed near a stall) ends far apart; issue 51 asks that none of
ten row runs moves by more than MOVE_LIMIT. The pinned path (numerics.py) gives one machine's numbers on
every x86 CPU; this measures how much those numbers depend on the rounding they happen to have.

Both retrainings of a run go side by side, one thread each. Needs a CPU with AVX-512 (`lscpu` flags
avx512f); on an AVX2-only CPU it says so and stops.
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

CAPABILITIES = ("avx2", "avx512")
MOVE_LIMIT = 0.1  # % of the loss (issue 51: "moves no final loss by more than 0.1%")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", type=Path, help="finished run directories (their metrics.json)")


def has_avx512() -> bool:
    try:
        return " avx512f" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def retrain(spec: dict, capability: str, out: Path) -> subprocess.Popen:
    env = {**os.environ, "DEPTHWIDTH_NUMERICS": "native", "ATEN_CPU_CAPABILITY": capability}
    command = [sys.executable, "-m", "depthwidth", "train", "--spec-json", json.dumps(spec)]
    command += ["--out", str(out), "--threads", "1", "--device", "cpu"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def final_loss(out: Path) -> float:
    metrics = json.loads((out / "metrics.json").read_text())
    return float(metrics["final_val_loss"]) if metrics.get("status") == "ok" else math.inf


def move_pct(losses: dict[str, float]) -> float:
    """How far the AVX-512 retraining ends from the AVX2 one, % of the AVX2 loss."""
    return 100 * (losses["avx512"] / losses["avx2"] - 1)


def run(args: argparse.Namespace) -> int:
    if not has_avx512():
        print("bench rounding: this CPU has no AVX-512 (/proc/cpuinfo): only one instruction set to run")
        return 2
    print(f"{'run':<44} {'recorded':>9} {'avx2':>9} {'avx512':>9} {'move %':>8}")
    moves = []
    with tempfile.TemporaryDirectory() as tmp:
        for run_dir in args.runs:
            metrics = json.loads((run_dir / "metrics.json").read_text())
            jobs = {c: retrain(metrics["spec"], c, Path(tmp, run_dir.name, c)) for c in CAPABILITIES}
            for capability, job in jobs.items():
                if job.wait() != 0:
                    raise SystemExit(f"bench rounding: {run_dir} at {capability} failed: {job.stderr.read()[-400:]}")
            losses = {c: final_loss(Path(tmp, run_dir.name, c)) for c in CAPABILITIES}
            moves.append(move_pct(losses))
            recorded = float(metrics.get("final_val_loss", math.nan))
            print(
                f"{run_dir.name:<44} {recorded:>9.4f} {losses['avx2']:>9.4f} {losses['avx512']:>9.4f} "
                f"{moves[-1]:>+8.3f}"
            )
    worst = max(abs(m) for m in moves)
    over = sum(abs(m) > MOVE_LIMIT for m in moves)
    print(f"largest move {worst:.3f}% over {len(moves)} runs; {over} above {MOVE_LIMIT}%")
    return 0
