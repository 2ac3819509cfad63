"""One `train` job at a time per run: a second job of a run another job is training waits for it, then keeps
the outputs that job wrote instead of training the run again.

Snakemake locks the outputs of the jobs it plans as it starts, not those of the jobs a checkpoint adds later (a
learning-rate scan's scouts and its chosen runs), so two workflows that share a scan (two configs in one folder)
could both train one of those runs at once, into the same folder and checkpoint. The lock is a file in the run's
checkpoint folder (`<run>.ckpt/lock`, outside its declared outputs), held with flock while the job lives: the
system releases it when the process ends, killed or not. It is removed with the checkpoint folder as the run
ends; a job that waited on a lock file removed meanwhile takes the lock again on the file now at that path.

A module of its own, named by no rule: the command line uses it, and editing it reruns no job.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from depthwidth.contracts import RUN_FILES, digest
from depthwidth.io import read_run_metrics

LOCK = "lock"


@contextlib.contextmanager
def run_lock(checkpoint_dir: Path) -> Iterator[bool]:
    """Hold the run's lock while the block runs; yields whether it waited for another job's."""
    checkpoint_dir = Path(checkpoint_dir)
    path, waited = checkpoint_dir / LOCK, False
    while True:
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"depthwidth train: another job trains this run ({path} is locked): waiting", file=sys.stderr)
            waited = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        if _same_file(fd, path):
            break
        os.close(fd)  # the job that held it ended and removed the file: lock the one at the path now
    try:
        yield waited
    finally:
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # the run's checkpoint folder, once nothing else is left in it
            checkpoint_dir.rmdir()
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def trained(out_dir: Path, spec: dict | None) -> dict | None:
    """The metrics of a run already trained in `out_dir` from this very spec, with the files it records; None
    if it is not (absent, another spec, a file that differs)."""
    try:
        metrics = read_run_metrics(out_dir, tuple(name for name in RUN_FILES if name != "metrics.json"))
    except (OSError, ValueError):
        return None
    ran = metrics.get("spec")
    return metrics if isinstance(ran, dict) and isinstance(spec, dict) and digest(ran) == digest(spec) else None
