"""Atomic file output and provenance shared by every stage.

Every artifact is written to a temporary file in the destination folder and renamed
into place, so a killed job never leaves a half-written file under its final name.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from depthwidth import __version__
from depthwidth.contracts import RUN_DIGESTS

# A write that fails while its folder has less than this free was stopped by a full disk: torch and
# numpy report one as "unexpected pos" or "N requested and 0 written", without the system's errno.
LOW_SPACE_BYTES = 1 << 20


class NoSpaceError(OSError):
    """A write that a full disk stopped; its text is one line naming the file."""

    def __str__(self) -> str:
        return str(self.strerror)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` if the block succeeds.

    A failure on a full disk raises NoSpaceError naming `path`, whatever the writer raised.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        tmp = Path(name)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; artifacts are as readable as any file
        yield tmp
        os.replace(tmp, path)
    except Exception as err:
        free = _free_bytes(path.parent)
        if _full_disk(err, free):
            raise NoSpaceError(
                errno.ENOSPC, f"{path}: no space left on device ({free:,} bytes free there); free some and rerun"
            ) from None
        raise
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()


def _full_disk(err: Exception, free: int) -> bool:
    """Whether a full disk stopped the write that raised `err` (torch and numpy raise RuntimeError or
    OSError without errno, the tokenizers library a bare Exception naming 'os error 28')."""
    if getattr(err, "errno", None) == errno.ENOSPC or "os error 28" in str(err):
        return True
    return type(err) in (OSError, RuntimeError, Exception) and free < LOW_SPACE_BYTES


def _free_bytes(folder: Path) -> int:
    """Bytes an unprivileged writer may still use in `folder`'s file system."""
    stat = os.statvfs(folder)
    return stat.f_bavail * stat.f_frsize


def full_disk_note(folder: str | os.PathLike) -> str | None:
    """What to say when a workflow whose jobs write under `folder` failed while its disk is (nearly) full: a job's
    error line goes to its log on that same disk, so it may be lost (an empty log, or one cut short); None if
    `folder` is not there or has room."""
    folder = Path(folder)
    if not folder.is_dir() or (free := _free_bytes(folder)) >= LOW_SPACE_BYTES:
        return None
    return (
        f"{folder}/ has {free:,} bytes free: a job stopped by the full disk may have left its log empty or cut "
        "short (its error could not be written there); free some and rerun"
    )


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write `obj` as indented, key-sorted JSON to `path` atomically."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file, naming the file in the error if it is missing or malformed."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: file not found") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_file_problem(folder: str | os.PathLike, metrics: dict, name: str) -> str | None:
    """How the run's file `name` (a RUN_DIGESTS key) differs from the sha256 its metrics.json records;
    None if it does not."""
    field, path = RUN_DIGESTS[name], Path(folder) / name
    if not path.is_file():
        return "missing"
    if not isinstance(metrics.get(field), str):
        return f"its metrics.json records no {field} (older code wrote it: retrain the run)"
    if sha256_file(path) != metrics[field]:
        return f"differs from the {field} its metrics.json records"
    return None


def read_run_metrics(folder: str | os.PathLike, names: tuple[str, ...] = ("curve.csv",)) -> dict:
    """A run's metrics.json, once its files `names` are the ones it records (`run_file_problem`);
    ValueError naming the file otherwise, so a hand-edited run never reaches a table."""
    path = Path(folder) / "metrics.json"
    metrics = read_json(path)
    if not isinstance(metrics, dict):
        raise ValueError(f"{path}: not a JSON object")
    for name in names:
        problem = run_file_problem(folder, metrics, name)
        if problem:
            raise ValueError(f"{Path(folder) / name}: {problem}; retrain the run or restore the file")
    return metrics


def file_record(path: str | os.PathLike) -> dict:
    """Size in bytes and sha256 of a file, as meta files record them."""
    return {"bytes": Path(path).stat().st_size, "sha256": sha256_file(path)}


def file_problem(path: str | os.PathLike, record: dict) -> str | None:
    """How the file at `path` differs from its `file_record` (missing, size, sha256); None if it does not."""
    path = Path(path)
    if not path.is_file():
        return "missing"
    size = path.stat().st_size
    if size != record.get("bytes"):
        return f"{size} bytes, recorded {record.get('bytes')}"
    digest = sha256_file(path)
    if digest != record.get("sha256"):
        return f"sha256 {digest[:12]}... differs from the recorded {str(record.get('sha256'))[:12]}..."
    return None


def git_revision() -> str:
    """The git revision of the package's checkout, or 'unknown' outside a git tree."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def provenance() -> dict[str, str]:
    """Package version and git revision, stamped into every metrics and meta file."""
    return {"package_version": __version__, "git_revision": git_revision()}
