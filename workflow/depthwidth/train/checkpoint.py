"""The state of a training run, and its checkpoint on disk.

A `RunState` is exactly what a checkpoint stores: the step reached, the model and optimizer
state dicts, the random states, the curve and entropy rows so far, and the seconds spent. The
file adds the key it was written under (spec hash, code digest, torch version): a checkpoint
from another spec is refused, one from other code (any edit of a module training runs, or
another torch) is not resumed, so a run never mixes old and new code. Beside it,
`checkpoint.pt.sha256` holds the sha256 of its bytes, verified before the file is loaded: a damaged
checkpoint (or one without its checksum) is not resumed either.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import sys
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch

from depthwidth.contracts import PACKAGE, TRAINING_MODULE, code_files
from depthwidth.io import atomic_path, sha256_file, write_text

CHECKPOINT_NAME = "checkpoint.pt"
CHECKSUM_SUFFIX = ".sha256"  # checkpoint.pt.sha256: the sha256 of checkpoint.pt's bytes


@dataclass
class RunState:
    """Where a run stands after `step` optimizer steps."""

    step: int
    model: dict  # state dict
    optimizer: dict  # state dict
    rng: dict  # torch, numpy (training windows) and python random states
    curve: list[list]  # rows: step, tokens, train_loss, val_loss, lr
    entropy: list[list]  # rows: step, layer, head, entropy
    elapsed: float  # seconds of training so far, over every attempt


@dataclass(frozen=True)
class CheckpointKey:
    """What a checkpoint must match to be resumed."""

    spec_hash: str
    code_digest: str
    torch_version: str


def code_digest(modules: tuple[str, ...] = (TRAINING_MODULE,)) -> str:
    """sha256 over the sources of the code that trains (`modules` and what they import: `contracts.code_files`),
    each under its path in the package."""
    h = hashlib.sha256()
    for path in code_files(*modules, root=PACKAGE):
        h.update(f"{path.relative_to(PACKAGE).as_posix()}\0".encode())
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def current_key(spec_hash: str) -> CheckpointKey:
    """The key a checkpoint of this spec, written by this code and torch, carries."""
    return CheckpointKey(spec_hash, code_digest(), str(torch.__version__))  # a plain str: weights_only loads it


def default_checkpoint_dir(out_dir: str | Path) -> Path:
    """`<out>.ckpt`: beside the output directory, outside the run's declared outputs."""
    out_dir = Path(out_dir)
    return out_dir.with_name(out_dir.name + ".ckpt")


def checksum_path(path: Path) -> Path:
    """Where the sha256 of the checkpoint at `path` is kept: `checkpoint.pt.sha256` beside it."""
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def save_checkpoint(path: Path, key: CheckpointKey, state: RunState) -> None:
    """Write key and state to a temporary file, its sha256 to `checksum_path`, then rename the file
    into place: a kill never leaves a torn checkpoint, nor one without its checksum (a kill between
    the two renames leaves a checksum that does not match, and the next run starts over)."""
    payload = {**vars(key), **{f.name: getattr(state, f.name) for f in fields(RunState)}}
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)
        write_text(checksum_path(path), sha256_file(tmp) + "\n")


def checksum_problem(path: Path) -> str | None:
    """How the checkpoint at `path` fails the sha256 beside it (missing, garbled, different); None if it matches."""
    sidecar = checksum_path(path)
    try:
        recorded = sidecar.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return f"has no checksum ({sidecar} is missing)"
    except (OSError, UnicodeDecodeError):
        recorded = ""
    if not re.fullmatch(r"[0-9a-f]{64}", recorded):
        return f"has a garbled checksum ({sidecar} holds no sha256)"
    if sha256_file(path) != recorded:
        return f"does not match its checksum ({sidecar}): the file is damaged"
    return None


def load_checkpoint(path: Path, key: CheckpointKey) -> RunState | None:
    """The state saved at `path`, or None if there is none or other code wrote it.

    A damaged checkpoint (its bytes differ from its checksum, or it has none) is not loaded: None,
    with a note on stderr. Raises ValueError for an unreadable checkpoint or one written for another spec.
    """
    if not path.is_file():
        return None
    damaged = checksum_problem(path)
    if damaged:
        print(f"depthwidth train: checkpoint {path} {damaged}; starting over from step 0", file=sys.stderr)
        return None
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is a bad input
        raise ValueError(f"{path}: unreadable checkpoint ({err}); delete it to start over") from None
    if not isinstance(saved, dict) or saved.get("spec_hash") != key.spec_hash:
        found = saved.get("spec_hash") if isinstance(saved, dict) else None
        raise ValueError(
            f"{path}: checkpoint belongs to a different spec (hash {str(found)[:12]}, "
            f"this spec {key.spec_hash[:12]}); delete it or use another --checkpoint-dir"
        )
    other = _other_code(saved, key)
    if other:
        print(
            f"depthwidth train: checkpoint {path} was written by other code ({other}); starting over from step 0",
            file=sys.stderr,
        )
        return None
    missing = [f.name for f in fields(RunState) if f.name not in saved]
    if missing:
        raise ValueError(f"{path}: unreadable checkpoint (no {', '.join(missing)}); delete it to start over")
    return RunState(**{f.name: saved[f.name] for f in fields(RunState)})


def _other_code(saved: dict, key: CheckpointKey) -> str:
    """How the code that wrote `saved` differs from this code; empty if it does not."""
    if saved.get("code_digest") != key.code_digest:
        return f"package code {str(saved.get('code_digest'))[:12]}, now {key.code_digest[:12]}"
    if saved.get("torch_version") != key.torch_version:
        return f"torch {saved.get('torch_version')}, now {key.torch_version}"
    return ""


def remove_checkpoint(path: Path) -> None:
    """Delete the checkpoint and its checksum, and their folder once empty (the run has ended)."""
    for file in (path, checksum_path(path)):
        if file.exists():
            file.unlink()
    if path.parent.is_dir() and not any(path.parent.iterdir()):
        shutil.rmtree(path.parent)


def capture_rng(np_rng: np.random.Generator) -> dict:
    """The torch, numpy and python random states, as types torch.load(weights_only=True) reads."""
    py = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "numpy": json.dumps(np_rng.bit_generator.state),
        "python": [py[0], list(py[1]), py[2]],
    }


def restore_rng(state: dict, np_rng: np.random.Generator) -> None:
    """Set the random states captured by `capture_rng`."""
    torch.set_rng_state(state["torch"])
    np_rng.bit_generator.state = json.loads(state["numpy"])
    random.setstate((state["python"][0], tuple(state["python"][1]), state["python"][2]))
