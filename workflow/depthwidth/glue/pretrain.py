"""`python -m depthwidth glue-pretrain --spec-json '{...}' --out DIR`: pretrain one model for GLUE and keep it.

The sweep's engine, unchanged (`train.loop`: `validate_spec`, `load_shards`, `build_run`, `run_steps`; the
spec is a complete train spec, so the recipe is the sweep's), with the run's resume checkpoint beside the
output folder (`<out>.ckpt`, removed at the end). Unlike `train`, which keeps only its numbers, it writes the
final weights: `model.pt` (a state dict, read back with `torch.load(..., weights_only=True)`), then the
run's `curve.csv`, `entropy.csv` and `metrics.json` (`train.outputs`), which records model.pt's sha256.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import torch

from depthwidth.glue import add_job_arguments
from depthwidth.io import sha256_file, write_bytes
from depthwidth.options import json_option
from depthwidth.train import checkpoint
from depthwidth.train.loop import (
    _progress_bar,
    build_run,
    keep_freed_memory,
    load_shards,
    resolve_device,
    run_steps,
    snapshot,
    validate_spec,
)
from depthwidth.train.outputs import run_metrics, spec_hash, write_outputs

MODEL_NAME = "model.pt"
# the code a pretraining runs: this module and what it imports, the training code among it (its checkpoint is
# resumed only by the same)
PRETRAIN_MODULE = __name__


def pretrain(spec: dict, out: Path, threads: int | None = None, device: str = "auto", progress: bool = True) -> dict:
    """Train the spec's model, save its weights and the run's outputs in `out`; the metrics."""
    spec = validate_spec(spec)
    keep_freed_memory()
    out = Path(out)
    ckpt_path = Path(f"{out}.ckpt") / checkpoint.CHECKPOINT_NAME
    key = checkpoint.CheckpointKey(spec_hash(spec), checkpoint.code_digest((PRETRAIN_MODULE,)), str(torch.__version__))
    train_shard, val_shard = load_shards(spec)
    saved = checkpoint.load_checkpoint(ckpt_path, key)
    if threads is not None:
        torch.set_num_threads(threads)
    run = build_run(spec, resolve_device(device), train_shard, val_shard)
    if saved is not None:
        run.model.load_state_dict(saved.model)
        run.optimizer.load_state_dict(saved.optimizer)
        checkpoint.restore_rng(saved.rng, run.data_rng)
        print(f"depthwidth glue-pretrain: resuming from step {saved.step} ({ckpt_path})", file=sys.stderr)
    state = saved if saved is not None else snapshot(run, 0, [], [], 0.0)
    bar = _progress_bar(run.total_steps, state.step, progress)
    state = run_steps(run, state, lambda s: checkpoint.save_checkpoint(ckpt_path, key, s), bar)
    bar.close()
    out.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()  # saved through a buffer: torch names the archive's records after the file written
    torch.save({name: tensor.cpu() for name, tensor in run.model.state_dict().items()}, buffer)
    write_bytes(out / MODEL_NAME, buffer.getvalue())  # atomically, so the same weights give the same bytes
    metrics = run_metrics(spec, {"code_digest": key.code_digest}, state, run.device_label, len(train_shard))
    metrics = write_outputs(out, state, {**metrics, "model_sha256": sha256_file(out / MODEL_NAME)})
    checkpoint.remove_checkpoint(ckpt_path)
    return metrics


def load_pretrained(folder: Path, device: torch.device):
    """The pretrained GPT in `folder` and its metrics; ValueError naming the file if model.pt is not the one
    metrics.json records (by sha256) or does not fit its spec's model."""
    from depthwidth.io import read_json
    from depthwidth.train.model import GPT

    folder = Path(folder)
    metrics = read_json(folder / "metrics.json")
    path = folder / MODEL_NAME
    if sha256_file(path) != metrics.get("model_sha256"):
        raise ValueError(f"{path}: its sha256 is not the one {folder / 'metrics.json'} records (rerun its pretraining)")
    model = GPT(metrics["spec"]["model"])
    try:
        model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    except (RuntimeError, KeyError) as err:
        raise ValueError(f"{path}: does not fit the model of its spec ({str(err).splitlines()[0]})") from None
    return model.to(device), metrics


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_job_arguments(parser, "train spec", "model.pt, metrics.json, curve.csv, entropy.csv")


def run(args: argparse.Namespace) -> int:
    spec = json_option(args.spec_json, "--spec-json")
    metrics = pretrain(spec, args.out, args.threads, args.device, not args.no_progress)
    print(
        f"depthwidth glue-pretrain: {metrics['status']}, {metrics['tokens_seen']} tokens, "
        f"final val loss {metrics['final_val_loss']}, {args.out}",
        file=sys.stderr,
    )
    return 0
