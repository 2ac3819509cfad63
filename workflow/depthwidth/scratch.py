"""What a killed `prepare-data` would leave behind, removed: on SIGTERM at once, after SIGKILL at the next start.

prepare-data writes its shingle index in a temporary folder (`depthwidth-shingles-*`) and its outputs under
hidden temporary names beside them (`.train.bin.*.tmp`, `io.atomic_path`); both are removed by the `finally`
that made them. `prepare_data_scratch` makes that hold for a kill too:

- SIGTERM (snakemake stopping a job, `kill`) raises SystemExit, so every `finally` runs;
- the temporary folders go in a work folder of this process, `$TMPDIR/depthwidth-work-*/`, whose lock file
  it holds (flock) while it lives; the next start removes every work folder whose lock no process holds, so
  one left by a SIGKILL goes and a live one of another prepare-data stays;
- the output folder's hidden temporaries of a killed run are removed at the next start (snakemake runs one
  job per output folder at a time).

A module of its own, named by no rule: the command line uses it, and editing it reruns no job.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from depthwidth.contracts import DATA_FILES

WORK_PREFIX = "depthwidth-work-"
LOCK = ".lock"
OUTPUTS = DATA_FILES  # what prepare-data writes atomically


def _owner_gone(folder: Path) -> bool:
    """Whether no live process holds `folder`'s lock (a folder without a lock file is being made: kept)."""
    try:
        with open(folder / LOCK) as lock:  # never created here: a folder being made has none yet
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True  # closing the file releases the lock
    except (BlockingIOError, FileNotFoundError, PermissionError, NotADirectoryError):
        return False


def remove_stale(base: Path, out_dir: Path | None = None) -> list[Path]:
    """Remove the work folders under `base` that no live process holds, and the hidden temporaries of
    prepare-data's outputs in `out_dir`; what was removed."""
    removed = []
    for folder in sorted(base.glob(f"{WORK_PREFIX}*")):
        if folder.is_dir() and not folder.is_symlink() and _owner_gone(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    if out_dir is not None and out_dir.is_dir():
        for name in OUTPUTS:
            for tmp in out_dir.glob(f".{name}.*.tmp"):
                tmp.unlink(missing_ok=True)
                removed.append(tmp)
    return removed


def _exit_on_sigterm(signum, frame) -> None:
    sys.exit(128 + signum)


@contextlib.contextmanager
def prepare_data_scratch(out_dir: Path) -> Iterator[Path]:
    """Run prepare-data inside this: stale scratch removed first, its own in a locked work folder (tempfile's
    default folder meanwhile), SIGTERM turned into SystemExit; the work folder removed on the way out."""
    base = Path(tempfile.gettempdir())
    for path in remove_stale(base, Path(out_dir)):
        print(f"depthwidth prepare-data: removed {path}, left by a killed run", file=sys.stderr)
    folder = Path(tempfile.mkdtemp(prefix=WORK_PREFIX, dir=base))
    lock = open(folder / LOCK, "a")  # noqa: SIM115 - held for the whole run
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    previous_handler = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    previous_tempdir, tempfile.tempdir = tempfile.tempdir, str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = previous_tempdir
        signal.signal(signal.SIGTERM, previous_handler)
        shutil.rmtree(folder, ignore_errors=True)
        lock.close()
