"""Train one model from a spec; write `metrics.json` and `curve.csv` (and `entropy.csv`).

`python -m depthwidth train (--spec SPEC.json | --spec-json '{...}') --out DIR
[--checkpoint-dir D] [--threads N] [--device auto|cpu|cuda] [--no-progress]`,
or from Python: `train(spec, out_dir, ...) -> metrics`.

Recipe (`optim.py`): AdamW (weight decay on matrices only), linear warm-up then cosine decay to
`lr_final_frac * lr`, gradient clipping, a budget in tokens (steps = ceil(budget / (batch n_ctx)),
capped by `max_epochs` at floor(max_epochs x train-shard tokens / (batch n_ctx)), at least one),
evaluation on `eval_batches` fixed sampled validation batches at step 0 and every `eval_interval`
steps, and at the end on the whole validation shard: every non-overlapping n_ctx window, the same
for every run and seed, token-weighted (the last curve row and metrics.json's final_val_loss).
The shards are verified against meta.json (size, sha256, token ids) before the first step.
Numerics: `recipe.precision`, fp32 throughout (the default) or bf16 autocast around every forward pass
on CPU or CUDA (`autocast_for`); weights, gradients and AdamW state are fp32 either way.

Resume (`checkpoint.py`): every `checkpoint_interval` steps the run state (model, optimizer, RNG
states, step, curve so far) is written atomically to the checkpoint directory, which by default
is `<out>.ckpt` (a sibling of the output directory, so never inside a rule's declared outputs).
A rerun with the same spec and code resumes from it and ends with bit-identical losses on CPU; a
checkpoint from another spec is refused, one from other code (package modules or torch), or one
whose bytes differ from the sha256 written beside it (`checkpoint.pt.sha256`, checked before the
file is loaded), is discarded with a note on stderr. The checkpoint is deleted when the run ends.

Divergence: a non-finite training loss ends the run with status "diverged" (exit code 0).
Outputs (`outputs.py`): the metrics of the finished state, curve.csv and entropy.csv (metrics.json
records the sha256 of both).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import ctypes
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from depthwidth.data.tokens import load_shard, read_meta
from depthwidth.io import read_json
from depthwidth.train.checkpoint import (
    CHECKPOINT_NAME,
    RunState,
    capture_rng,
    current_key,
    default_checkpoint_dir,
    load_checkpoint,
    remove_checkpoint,
    restore_rng,
    save_checkpoint,
)
from depthwidth.train.model import GPT, ModelConfig
from depthwidth.train.optim import AdamW, lr_at, make_optimizer, peak_lr
from depthwidth.train.outputs import run_metrics, spec_hash, write_outputs
from depthwidth.train.step import STEP_MODES, GraphedStep, make_step

# ---------------------------------------------------------------------------------------------
# Spec: the schema's `$defs/train_spec` (workflow/depthwidth/config.schema.yaml) gives every key and
# its bounds; the plan fills in every default, so the spec a job gets is the whole of what it runs.


def validate_spec(spec: dict) -> dict:
    """The spec, once it is valid and complete (`spec.require_complete`: the job fills in nothing).

    Raises ValueError naming the offending key (`spec key 'recipe.beta1': missing ...`).
    """
    from depthwidth.spec import require_complete

    return require_complete("train_spec", spec)


def model_config(spec: dict) -> ModelConfig:
    return ModelConfig(**copy.deepcopy(spec["model"]))


# ---------------------------------------------------------------------------------------------
# Data


def load_shards(spec: dict) -> tuple[np.memmap, np.memmap]:
    """The verified train and val shards of the spec's data folder (see `tokens.load_shard`)."""
    data_dir, m = Path(spec["data"]), spec["model"]
    meta = read_meta(data_dir)
    if meta["vocab_size"] > m["vocab_size"]:
        raise ValueError(
            f"model.vocab_size: {m['vocab_size']} is smaller than the data's vocab_size "
            f"{meta['vocab_size']} ({data_dir / 'meta.json'})"
        )
    shards = []
    for split in ("train", "val"):
        shard = load_shard(data_dir, split, meta)
        if len(shard) < m["n_ctx"] + 1:
            raise ValueError(f"{data_dir / f'{split}.bin'}: {len(shard)} tokens, need at least n_ctx + 1")
        shards.append(shard)
    return shards[0], shards[1]


def sample_batch(
    shard: np.ndarray, rng: np.random.Generator, batch_size: int, n_ctx: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random windows of n_ctx + 1 tokens: inputs x and next-token targets y, [batch, n_ctx] int64.

    One vectorized gather from the memmap; no per-token Python work.
    """
    starts = rng.integers(0, len(shard) - n_ctx, size=batch_size)
    window = np.asarray(shard[starts[:, None] + np.arange(n_ctx + 1)], dtype=np.int64)
    tokens = torch.from_numpy(window)
    return tokens[:, :-1], tokens[:, 1:]


def validation_starts(n_tokens: int, n_ctx: int) -> np.ndarray:
    """Starts of the non-overlapping windows that cover a shard of n_tokens: window i predicts
    tokens i n_ctx + 1 ... (i + 1) n_ctx, each target once; the tail shorter than a window is left out."""
    return np.arange(0, n_tokens - n_ctx, n_ctx, dtype=np.int64)


def training_steps(recipe: dict, n_ctx: int, train_tokens: int) -> int:
    """Optimizer steps of a run: ceil(token_budget / tokens per step), capped at
    floor(max_epochs x train_tokens / tokens per step) (at least 1) when max_epochs is set."""
    tokens_per_step = recipe["batch_size"] * n_ctx
    steps = math.ceil(recipe["token_budget"] / tokens_per_step)
    if recipe.get("max_epochs") is not None:
        steps = min(steps, max(1, math.floor(recipe["max_epochs"] * train_tokens / tokens_per_step)))
    return steps


# ---------------------------------------------------------------------------------------------
# Steps


@torch.no_grad()
def evaluate(model, batches, autocast) -> float:
    """Mean validation cross-entropy (nats/token) over fixed batches."""
    model.eval()
    total = 0.0
    for x, y in batches:
        with autocast():
            total += float(model(x, y)[1])
    model.train()
    return total / len(batches)


@torch.no_grad()
def evaluate_full(model, shard: np.ndarray, n_ctx: int, batch_size: int, device, autocast) -> float:
    """Mean validation cross-entropy (nats/token) over every window of `validation_starts`, in
    batches of `batch_size` windows, accumulated in float64 and weighted by tokens."""
    model.eval()
    starts = validation_starts(len(shard), n_ctx)
    total = 0.0
    for first in range(0, len(starts), batch_size):
        chunk = starts[first : first + batch_size]
        window = torch.from_numpy(np.asarray(shard[chunk[:, None] + np.arange(n_ctx + 1)], dtype=np.int64))
        x, y = window[:, :-1].to(device), window[:, 1:].to(device)
        with autocast():
            total += float(model(x, y)[1]) * len(chunk)
    model.train()
    return total / len(starts)


# Windows per forward pass of the final evaluation, at least: the recipe's batch when larger. A whole
# validation split at batch 4 runs ~15% slower per token on one thread (bench: 16 windows or more).
FULL_EVAL_WINDOWS = 16

# glibc mallopt parameters, and the largest block malloc may keep for reuse (glibc's own ceiling).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX = -1, -3, 32 << 20


def keep_freed_memory() -> bool:
    """Make this process's malloc keep freed blocks of up to 32 MiB for reuse instead of handing
    them back to the kernel; False where the C library is not glibc.

    A training step frees and reallocates the same activation buffers every step. By default glibc
    serves the larger ones with fresh mmap pages each time: ~600 page faults and ~1.7 ms of kernel
    time per step at L3 d26, batch 4 (about 10% of the step). Memory use stays at its peak instead
    of shrinking between steps.
    """
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols, the C library's among them
        return bool(
            libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_MAX)
            and libc.mallopt(_M_TRIM_THRESHOLD, 4 * _MMAP_THRESHOLD_MAX)
        )
    except (OSError, AttributeError, TypeError):
        return False


# The dtype each `recipe.precision` (the schema's enum) multiplies in, and its autocast dtype: None runs the
# step in fp32 throughout.
MATMUL_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
AUTOCAST_DTYPES = {p: None if dtype is torch.float32 else dtype for p, dtype in MATMUL_DTYPES.items()}


def autocast_for(precision: str, device: torch.device) -> Callable:
    """A factory of the context every forward pass of a run at `precision` runs in: autocast to the
    precision's dtype on the device's type (CPU or CUDA), or no context at all for fp32 (the fp32 step
    is today's, bit for bit). Weights, gradients and optimizer state stay fp32 either way."""
    dtype = AUTOCAST_DTYPES[precision]
    if dtype is None:
        return contextlib.nullcontext
    return lambda: torch.autocast(device.type, dtype=dtype)


def precision_label(device: torch.device, precision: str) -> str:
    """The device as metrics.json records it, with the autocast dtype if any: `cpu`, `cuda (bf16 autocast)`."""
    return str(device) + (f" ({precision} autocast)" if AUTOCAST_DTYPES[precision] is not None else "")


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device: cuda requested but no CUDA device is available")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"--device: must be auto, cpu or cuda, got {device!r}")
    return torch.device(device)


# ---------------------------------------------------------------------------------------------
# The run


@dataclass
class TrainingSetup:
    """The fixed parts of a run, built before its first step: model, optimizer, schedule, data."""

    spec: dict
    device: torch.device
    autocast: Callable
    model: GPT
    step_model: torch.nn.Module  # the model, or its torch.compile wrapper
    optimizer: AdamW
    step: Callable  # (x, y, lr) -> loss: one optimizer step (`step.make_step`: eager, or a CUDA graph)
    peak_lr: float
    total_steps: int
    warmup_steps: int
    train_shard: np.ndarray
    val_shard: np.ndarray  # the final evaluation covers all of it
    val_batches: list[tuple[torch.Tensor, torch.Tensor]]
    data_rng: np.random.Generator  # draws the training windows

    @property
    def tokens_per_step(self) -> int:
        return self.spec["recipe"]["batch_size"] * self.spec["model"]["n_ctx"]

    @property
    def device_label(self) -> str:
        graphed = self.device.type == "cuda" and isinstance(self.step, GraphedStep)
        return precision_label(self.device, self.spec["recipe"]["precision"]) + (" [CUDA graph]" if graphed else "")


def build_run(
    spec: dict, dev: torch.device, train_shard: np.ndarray, val_shard: np.ndarray, step_mode: str = "auto"
) -> TrainingSetup:
    """Seed, then build model, optimizer, schedule and the fixed validation batches (in this order).

    step_mode (`step.STEP_MODES`): auto takes a CUDA graph on CUDA without torch.compile, eager elsewhere."""
    m, r = spec["model"], spec["recipe"]
    autocast = autocast_for(r["precision"], dev)
    if dev.type == "cuda" and AUTOCAST_DTYPES[r["precision"]] is not None:
        torch.backends.cuda.matmul.allow_tf32 = True  # the fp32 matmuls autocast leaves (as before precision was a key)
    torch.manual_seed(spec["seed"])  # the seed fixes the initialization
    random.seed(spec["seed"])
    cfg = model_config(spec)
    model = GPT(cfg).to(dev)
    peak = peak_lr(r)
    optimizer = make_optimizer(model, r)
    tokens_per_step = r["batch_size"] * m["n_ctx"]
    val_rng = np.random.default_rng([spec["seed"], 1])  # fixed validation batches: their own generator
    val_batches = [
        tuple(t.to(dev) for t in sample_batch(val_shard, val_rng, r["batch_size"], m["n_ctx"]))
        for _ in range(r["eval_batches"])
    ]
    step_model = torch.compile(model) if spec["compile"] else model
    return TrainingSetup(
        spec=spec,
        device=dev,
        autocast=autocast,
        model=model,
        step_model=step_model,
        optimizer=optimizer,
        step=make_step(step_mode, model, step_model, optimizer, r, m["n_ctx"], dev, autocast, spec["compile"]),
        peak_lr=peak,
        total_steps=training_steps(r, m["n_ctx"], len(train_shard)),
        warmup_steps=math.ceil(r["warmup_tokens"] / tokens_per_step),
        train_shard=train_shard,
        val_shard=val_shard,
        val_batches=val_batches,
        data_rng=np.random.default_rng([spec["seed"], 0]),
    )


def snapshot(run: TrainingSetup, step: int, curve: list[list], entropy: list[list], elapsed: float) -> RunState:
    """The run's state after `step` steps (what a checkpoint stores)."""
    return RunState(
        step=step,
        model=run.model.state_dict(),
        optimizer=run.optimizer.state_dict(),
        rng=capture_rng(run.data_rng),
        curve=curve,
        entropy=entropy,
        elapsed=elapsed,
    )


def restore(run: TrainingSetup, state: RunState) -> None:
    """Put the run where `state` left it: weights, optimizer moments, random states."""
    run.model.load_state_dict(state.model)
    run.optimizer.load_state_dict(state.optimizer)
    restore_rng(state.rng, run.data_rng)


def record_eval(run: TrainingSetup, step: int, entropy: list[list], full: bool = False) -> float:
    """Validation loss at `step` (full: on the whole validation shard, else on the sampled batches);
    with log_entropy, append each layer's and head's attention entropy."""
    if full:
        r, n_ctx = run.spec["recipe"], run.spec["model"]["n_ctx"]
        batch = max(r["batch_size"], FULL_EVAL_WINDOWS)
        val = evaluate_full(run.step_model, run.val_shard, n_ctx, batch, run.device, run.autocast)
    else:
        val = evaluate(run.step_model, run.val_batches, run.autocast)
    if run.spec["log_entropy"]:
        run.model.eval()
        with run.autocast():
            ent = run.model.attention_entropy(run.val_batches[0][0]).cpu()
        run.model.train()
        entropy.extend(
            [step, layer, head, float(ent[layer, head])]
            for layer in range(ent.shape[0])
            for head in range(ent.shape[1])
        )
    return val


def run_steps(run: TrainingSetup, state: RunState, save: Callable[[RunState], None], bar) -> RunState:
    """Train from `state` to the end of the budget or the first non-finite loss; return the final state.

    `save` receives the state every checkpoint_interval steps (never at the last step).
    """
    r, n_ctx = run.spec["recipe"], run.spec["model"]["n_ctx"]
    curve, entropy = list(state.curve), list(state.entropy)
    t0 = time.perf_counter()
    if state.step == 0:
        curve.append([0, 0, None, record_eval(run, 0, entropy), None])
    run.model.train()
    step = state.step
    for step in range(state.step + 1, run.total_steps + 1):
        batch = sample_batch(run.train_shard, run.data_rng, r["batch_size"], n_ctx)
        x, y = (t.to(run.device, non_blocking=True) for t in batch)
        lr = lr_at(step - 1, run.peak_lr, run.warmup_steps, run.total_steps, r["lr_final_frac"])
        loss = float(run.step(x, y, lr))
        if not math.isfinite(loss):
            curve.append([step, step * run.tokens_per_step, loss, None, lr])  # ends the run: diverged
            break
        is_eval = step % r["eval_interval"] == 0 or step == run.total_steps
        if is_eval or step % r["log_interval"] == 0:
            val = record_eval(run, step, entropy, full=step == run.total_steps) if is_eval else None
            curve.append([step, step * run.tokens_per_step, loss, val, lr])
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
        if r["checkpoint_interval"] and step % r["checkpoint_interval"] == 0 and step < run.total_steps:
            save(snapshot(run, step, curve, entropy, state.elapsed + time.perf_counter() - t0))
    return snapshot(run, step, curve, entropy, state.elapsed + time.perf_counter() - t0)


def train(
    spec: dict,
    out_dir: str | Path,
    checkpoint_dir: str | Path | None = None,
    threads: int | None = None,
    device: str = "auto",
    progress: bool = True,
    step_mode: str = "auto",
) -> dict:
    """Train the model described by `spec`; write outputs to `out_dir`; return the metrics.

    threads: torch CPU threads (None: torch's default). Bit-identical resume needs the same
    threads and device as the interrupted run. progress: tqdm bar on stderr. step_mode: `step.STEP_MODES`
    (a graphed step gives the eager step's numbers; `graph` on the CPU rehearses it).
    Raises ValueError (naming the key or file) on a bad spec, data directory or checkpoint,
    before any training work.
    """
    spec = validate_spec(spec)
    keep_freed_memory()
    out_dir = Path(out_dir)
    ckpt_dir = Path(checkpoint_dir) if checkpoint_dir is not None else default_checkpoint_dir(out_dir)
    ckpt_path = ckpt_dir / CHECKPOINT_NAME
    key = current_key(spec_hash(spec))
    train_shard, val_shard = load_shards(spec)
    saved = load_checkpoint(ckpt_path, key)
    if threads is not None:
        torch.set_num_threads(threads)
    run = build_run(spec, resolve_device(device), train_shard, val_shard, step_mode)
    if saved is not None:
        restore(run, saved)
        print(f"depthwidth train: resuming from step {saved.step} ({ckpt_path})", file=sys.stderr)
    state = saved if saved is not None else snapshot(run, 0, [], [], 0.0)
    bar = _progress_bar(run.total_steps, state.step, progress)
    state = run_steps(run, state, lambda s: save_checkpoint(ckpt_path, key, s), bar)
    bar.close()
    metrics = run_metrics(spec, vars(key), state, run.device_label, len(train_shard))
    metrics = write_outputs(out_dir, state, metrics)
    remove_checkpoint(ckpt_path)  # the run is complete (ok or diverged): the checkpoint has served
    return metrics


def _progress_bar(total: int, initial: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        desc="train",
        unit="step",
        file=sys.stderr,
        disable=not enabled,
        mininterval=1.0,
        dynamic_ncols=True,
    )


# ---------------------------------------------------------------------------------------------
# Command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", type=Path, help="run spec JSON file (model, recipe, data, seed)")
    source.add_argument("--spec-json", help="the run spec as an inline JSON string (as workflow rules pass it)")
    parser.add_argument("--out", required=True, type=Path, help="output directory: metrics.json, curve.csv")
    parser.add_argument(
        "--checkpoint-dir",
        type=Path,
        default=None,
        help="where the resume checkpoint lives (default: <out>.ckpt, beside --out)",
    )
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="auto: CUDA when present, else CPU (the spec's recipe.precision decides fp32 or bf16 autocast)",
    )
    parser.add_argument(
        "--step",
        choices=STEP_MODES,
        default="auto",
        help="auto: a CUDA graph on CUDA (unless the spec compiles), else eager; graph on a CPU rehearses the graph",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    if args.spec is not None:
        spec = read_json(args.spec)
    else:
        try:
            spec = json.loads(args.spec_json)
        except json.JSONDecodeError as err:
            raise ValueError(f"--spec-json: not valid JSON ({err})") from None
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads: must be >= 1, got {args.threads}")
    metrics = train(spec, args.out, args.checkpoint_dir, args.threads, args.device, not args.no_progress, args.step)
    final = metrics["final_val_loss"]
    print(
        f"depthwidth train: {metrics['status']}, {metrics['tokens_seen']} tokens, "
        f"final val loss {final if final is None else round(final, 4)}, {args.out}",
        file=sys.stderr,
    )
    return 0
