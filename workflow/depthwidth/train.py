"""Train one model from a spec; write `metrics.json` and `curve.csv` (and `entropy.csv`).

`python -m depthwidth train (--spec SPEC.json | --spec-json '{...}') --out DIR
[--checkpoint-dir D] [--threads N] [--device auto|cpu|cuda] [--no-progress]`,
or from Python: `train(spec, out_dir, ...) -> metrics`.

Recipe: AdamW (weight decay on matrices only), linear warm-up then cosine decay to
`lr_final_frac * lr`, gradient clipping, a budget in tokens (steps = ceil(budget / (batch n_ctx))),
evaluation on fixed validation batches at step 0, every `eval_interval` steps and at the end.

Resume: every `checkpoint_interval` steps the whole state (model, optimizer, RNG states, step,
curve so far, spec hash) is written atomically to the checkpoint directory, which by default is
`<out>.ckpt` (a sibling of the output directory, so never inside a rule's declared outputs).
A rerun with the same spec resumes from it and ends with bit-identical losses on CPU; a
checkpoint from another spec is refused. The checkpoint is deleted when the run ends.

Divergence: a non-finite training loss ends the run with status "diverged" (exit code 0).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import hashlib
import io as _io
import json
import math
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from depthwidth.io import atomic_path, provenance, read_json, write_json, write_text
from depthwidth.model import GPT, SHAPED_DEFAULTS, ModelConfig, count_params, flops_per_token
from depthwidth.tokens import load_shard

CHECKPOINT_NAME = "checkpoint.pt"
CURVE_COLUMNS = ("step", "tokens", "train_loss", "val_loss", "lr")

# ---------------------------------------------------------------------------------------------
# Spec: every key, its type, and its default (REQUIRED = must be given)

REQUIRED = object()

SPEC_SCHEMA: dict[str, Any] = {
    "data": (str, REQUIRED),  # directory with train.bin, val.bin, meta.json
    "seed": (int, REQUIRED),
    "compile": (bool, False),  # torch.compile the model
    "log_entropy": (bool, False),  # write entropy.csv (step, layer, head, entropy) at each eval
    "model": {
        "vocab_size": (int, REQUIRED),  # >= meta.json vocab_size
        "n_ctx": (int, REQUIRED),  # context length, tokens
        "n_layer": (int, REQUIRED),
        "d_model": (int, REQUIRED),
        "n_head": (int, REQUIRED),
        "d_ff": ((int, type(None)), None),  # None: 4 d_model
        "attention": (str, "standard"),  # "standard" | "shaped"
        "bias": (bool, False),
        "shaped": {
            "alpha": ((int, float), SHAPED_DEFAULTS["alpha"]),
            "beta": ((int, float), SHAPED_DEFAULTS["beta"]),
            "gamma": ((int, float), SHAPED_DEFAULTS["gamma"]),
            "tau0": ((int, float), SHAPED_DEFAULTS["tau0"]),
            "trainable": (bool, SHAPED_DEFAULTS["trainable"]),
        },
    },
    "recipe": {
        "token_budget": (int, REQUIRED),  # training tokens
        "batch_size": (int, REQUIRED),  # sequences per step
        "lr": ((int, float, str), REQUIRED),  # peak learning rate, or "kaplan": LR(N)
        "lr_final_frac": ((int, float), 0.1),  # cosine decays to lr * lr_final_frac
        "warmup_tokens": (int, 0),  # linear warm-up length, tokens (rounded up to steps)
        "weight_decay": ((int, float), 0.1),  # on matrices (dim >= 2) only
        "beta1": ((int, float), 0.9),
        "beta2": ((int, float), 0.95),
        "eps": ((int, float), 1e-8),
        "grad_clip": ((int, float, type(None)), 1.0),  # max global grad norm; None: no clipping
        "eval_interval": (int, 100),  # steps between evaluations
        "eval_batches": (int, 8),  # fixed validation batches of batch_size sequences
        "checkpoint_interval": (int, 100),  # steps between checkpoints; 0: never
        "log_interval": (int, 1),  # steps between curve rows (eval steps always get one)
    },
}

POSITIVE = {
    "n_ctx",
    "n_layer",
    "d_model",
    "n_head",
    "d_ff",
    "vocab_size",
    "token_budget",
    "batch_size",
    "eval_interval",
    "eval_batches",
    "log_interval",
    "tau0",
}


def validate_spec(spec: dict) -> dict:
    """Check types and values, fill defaults; return the resolved spec.

    Raises ValueError naming the offending key (dotted path, e.g. `recipe.lr`).
    """
    if not isinstance(spec, dict):
        raise ValueError("spec: must be a JSON object")
    resolved = _resolve(spec, SPEC_SCHEMA, "")
    m, r = resolved["model"], resolved["recipe"]
    if m["d_ff"] is None:
        m["d_ff"] = 4 * m["d_model"]
    if m["attention"] not in ("standard", "shaped"):
        raise ValueError(f"model.attention: must be 'standard' or 'shaped', got {m['attention']!r}")
    if m["d_model"] % m["n_head"]:
        raise ValueError(f"model.d_model: {m['d_model']} is not divisible by model.n_head = {m['n_head']}")
    if isinstance(r["lr"], str) and r["lr"] != "kaplan":
        raise ValueError(f"recipe.lr: must be a number or 'kaplan', got {r['lr']!r}")
    if not isinstance(r["lr"], str) and not r["lr"] > 0:
        raise ValueError(f"recipe.lr: must be > 0, got {r['lr']}")
    for key in ("lr_final_frac",):
        if not 0 <= r[key] <= 1:
            raise ValueError(f"recipe.{key}: must be in [0, 1], got {r[key]}")
    for key in ("warmup_tokens", "weight_decay", "checkpoint_interval", "eps"):
        if r[key] < 0:
            raise ValueError(f"recipe.{key}: must be >= 0, got {r[key]}")
    for key in ("beta1", "beta2"):
        if not 0 <= r[key] < 1:
            raise ValueError(f"recipe.{key}: must be in [0, 1), got {r[key]}")
    if r["grad_clip"] is not None and not r["grad_clip"] > 0:
        raise ValueError(f"recipe.grad_clip: must be > 0 or null, got {r['grad_clip']}")
    return resolved


def _resolve(given: dict, schema: dict, prefix: str) -> dict:
    unknown = sorted(set(given) - set(schema))
    if unknown:
        raise ValueError(f"{prefix}{unknown[0]}: unknown key (allowed: {', '.join(sorted(schema))})")
    out = {}
    for key, rule in schema.items():
        name = prefix + key
        if isinstance(rule, dict):
            sub = given.get(key, {})
            if not isinstance(sub, dict):
                raise ValueError(f"{name}: must be an object")
            out[key] = _resolve(sub, rule, name + ".")
            continue
        types, default = rule
        if key not in given:
            if default is REQUIRED:
                raise ValueError(f"{name}: missing required key")
            out[key] = default
            continue
        value = given[key]
        types = types if isinstance(types, tuple) else (types,)
        # bool is an int in Python; only accept it where bool is the declared type
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = "/".join("null" if t is type(None) else t.__name__ for t in types)
            raise ValueError(f"{name}: expected {names}, got {type(value).__name__} {value!r}")
        if key in POSITIVE and value is not None and not value > 0:
            raise ValueError(f"{name}: must be > 0, got {value}")
        out[key] = value
    return out


def spec_hash(spec: dict) -> str:
    """sha256 of the canonical JSON of the resolved spec."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def model_config(spec: dict) -> ModelConfig:
    return ModelConfig(**copy.deepcopy(spec["model"]))


# ---------------------------------------------------------------------------------------------
# Data


def load_shards(data_dir: str | Path) -> tuple[np.memmap, np.memmap, dict]:
    """Memory-mapped train and val shards (dtype and length checked against meta.json) and meta."""
    data_dir = Path(data_dir)
    meta = read_json(data_dir / "meta.json")
    for key, kind in (("dtype", str), ("vocab_size", int), ("splits", dict)):
        if not isinstance(meta.get(key), kind):
            raise ValueError(f"{data_dir / 'meta.json'}: key {key!r} missing or not a {kind.__name__}")
    if meta["dtype"] not in ("uint16", "uint32"):
        raise ValueError(f"{data_dir / 'meta.json'}: dtype must be uint16 or uint32, got {meta['dtype']!r}")
    return load_shard(data_dir, "train"), load_shard(data_dir, "val"), meta


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


# ---------------------------------------------------------------------------------------------
# Optimization


def kaplan_lr(n_nonembedding: int) -> float:
    """Kaplan et al. (2020) learning rate rule LR(N) = 0.003239 - 0.0001395 ln N."""
    return 0.003239 - 0.0001395 * math.log(n_nonembedding)


def lr_at(step: int, peak: float, warmup_steps: int, total_steps: int, final_frac: float) -> float:
    """Learning rate of optimizer step `step` (0-based): linear warm-up, then cosine decay."""
    if step < warmup_steps:
        return peak * (step + 1) / warmup_steps
    span = max(total_steps - warmup_steps, 1)
    progress = min((step - warmup_steps) / span, 1.0)
    return peak * (final_frac + (1 - final_frac) * 0.5 * (1 + math.cos(math.pi * progress)))


def make_optimizer(model: torch.nn.Module, recipe: dict) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices (dim >= 2) and none on gains, biases and scalars."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": recipe["weight_decay"]},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(
        groups,
        lr=0.0,  # set every step by the schedule
        betas=(recipe["beta1"], recipe["beta2"]),
        eps=recipe["eps"],
        fused=True,  # one kernel over all tensors (CPU and CUDA); deterministic
    )


def train_step(model, optimizer, x, y, lr: float, grad_clip: float | None, autocast) -> torch.Tensor:
    """One optimizer step; returns the (detached) training loss."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    with autocast():
        _, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.detach()


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


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device: cuda requested but no CUDA device is available")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"--device: must be auto, cpu or cuda, got {device!r}")
    return torch.device(device)


# ---------------------------------------------------------------------------------------------
# Checkpoints


def default_checkpoint_dir(out_dir: str | Path) -> Path:
    """`<out>.ckpt`: beside the output directory, outside the run's declared outputs."""
    out_dir = Path(out_dir)
    return out_dir.with_name(out_dir.name + ".ckpt")


def save_checkpoint(path: Path, state: dict) -> None:
    """torch.save to a temporary file, then rename: a kill never leaves a torn checkpoint."""
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: Path, expected_hash: str) -> dict | None:
    """The checkpoint at `path` if present; refuse one written for another spec."""
    if not path.is_file():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is a bad input
        raise ValueError(f"{path}: unreadable checkpoint ({err}); delete it to start over") from None
    if state.get("spec_hash") != expected_hash:
        raise ValueError(
            f"{path}: checkpoint belongs to a different spec (hash {str(state.get('spec_hash'))[:12]}, "
            f"this spec {expected_hash[:12]}); delete it or use another --checkpoint-dir"
        )
    return state


def _rng_state(np_rng: np.random.Generator) -> dict:
    # Plain types and tensors only, so torch.load(weights_only=True) can read them back.
    py = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "numpy": json.dumps(np_rng.bit_generator.state),
        "python": [py[0], list(py[1]), py[2]],
    }


def _set_rng_state(state: dict, np_rng: np.random.Generator) -> None:
    torch.set_rng_state(state["torch"])
    np_rng.bit_generator.state = json.loads(state["numpy"])
    random.setstate((state["python"][0], tuple(state["python"][1]), state["python"][2]))


# ---------------------------------------------------------------------------------------------
# Outputs


def _fmt(value: float | None) -> str:
    # repr round-trips a float exactly, so curves compare bit for bit
    return "" if value is None else repr(float(value))


def curve_csv(rows: list[list]) -> str:
    buf = _io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CURVE_COLUMNS)
    for step, tokens, train_loss, val_loss, lr in rows:
        writer.writerow([step, tokens, _fmt(train_loss), _fmt(val_loss), _fmt(lr)])
    return buf.getvalue()


def entropy_csv(rows: list[list]) -> str:
    buf = _io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(("step", "layer", "head", "entropy"))
    for step, layer, head, value in rows:
        writer.writerow([step, layer, head, _fmt(value)])
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# The run


def train(
    spec: dict,
    out_dir: str | Path,
    checkpoint_dir: str | Path | None = None,
    threads: int | None = None,
    device: str = "auto",
    progress: bool = True,
) -> dict:
    """Train the model described by `spec`; write outputs to `out_dir`; return the metrics.

    threads: torch CPU threads (None: torch's default). Bit-identical resume needs the same
    threads and device as the interrupted run. progress: tqdm bar on stderr.
    Raises ValueError (naming the key or file) on a bad spec, data directory or checkpoint,
    before any training work.
    """
    spec = validate_spec(spec)
    digest = spec_hash(spec)
    out_dir = Path(out_dir)
    ckpt_dir = Path(checkpoint_dir) if checkpoint_dir is not None else default_checkpoint_dir(out_dir)
    ckpt_path = ckpt_dir / CHECKPOINT_NAME
    m, r = spec["model"], spec["recipe"]

    train_shard, val_shard, meta = load_shards(spec["data"])
    if meta["vocab_size"] > m["vocab_size"]:
        raise ValueError(
            f"model.vocab_size: {m['vocab_size']} is smaller than the data's vocab_size "
            f"{meta['vocab_size']} ({Path(spec['data']) / 'meta.json'})"
        )
    for name, shard in (("train.bin", train_shard), ("val.bin", val_shard)):
        if len(shard) < m["n_ctx"] + 1:
            raise ValueError(f"{Path(spec['data']) / name}: {len(shard)} tokens, need at least n_ctx + 1")
    resume = load_checkpoint(ckpt_path, digest)

    if threads is not None:
        torch.set_num_threads(threads)
    dev = resolve_device(device)
    use_bf16 = dev.type == "cuda"
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if use_bf16 else contextlib.nullcontext
    if use_bf16:
        torch.backends.cuda.matmul.allow_tf32 = True

    # Model and optimizer (the seed fixes the initialization).
    torch.manual_seed(spec["seed"])
    random.seed(spec["seed"])
    cfg = model_config(spec)
    model = GPT(cfg).to(dev)
    counts = count_params(cfg)
    peak_lr = kaplan_lr(counts["nonembedding"]) if r["lr"] == "kaplan" else float(r["lr"])
    if not peak_lr > 0:
        raise ValueError(f"recipe.lr: Kaplan's rule gives {peak_lr:.3g} <= 0 at N = {counts['nonembedding']}")
    optimizer = make_optimizer(model, r)
    step_model = torch.compile(model) if spec["compile"] else model

    tokens_per_step = r["batch_size"] * m["n_ctx"]
    total_steps = math.ceil(r["token_budget"] / tokens_per_step)
    warmup_steps = math.ceil(r["warmup_tokens"] / tokens_per_step)

    # Fixed validation batches (their own generator) and the training-window generator.
    val_rng = np.random.default_rng([spec["seed"], 1])
    val_batches = [
        tuple(t.to(dev) for t in sample_batch(val_shard, val_rng, r["batch_size"], m["n_ctx"]))
        for _ in range(r["eval_batches"])
    ]
    data_rng = np.random.default_rng([spec["seed"], 0])

    curve: list[list] = []  # rows: step, tokens, train_loss, val_loss, lr
    entropy_rows: list[list] = []  # rows: step, layer, head, entropy
    start_step, elapsed_before, status = 0, 0.0, "ok"
    if resume is not None:
        model.load_state_dict(resume["model"])
        optimizer.load_state_dict(resume["optimizer"])
        _set_rng_state(resume["rng"], data_rng)
        curve, entropy_rows = resume["curve"], resume["entropy"]
        start_step, elapsed_before = resume["step"], resume["elapsed"]
        print(f"depthwidth train: resuming from step {start_step} ({ckpt_path})", file=sys.stderr)

    def record_eval(step: int) -> float:
        val = evaluate(step_model, val_batches, autocast)
        if spec["log_entropy"]:
            model.eval()
            with autocast():
                ent = model.attention_entropy(val_batches[0][0]).cpu()
            model.train()
            entropy_rows.extend(
                [step, layer, head, float(ent[layer, head])]
                for layer in range(ent.shape[0])
                for head in range(ent.shape[1])
            )
        return val

    t0 = time.perf_counter()
    if start_step == 0:
        curve.append([0, 0, None, record_eval(0), None])

    bar = _progress_bar(total_steps, start_step, progress)
    model.train()
    step = start_step
    for step in range(start_step + 1, total_steps + 1):
        x, y = (t.to(dev, non_blocking=True) for t in sample_batch(train_shard, data_rng, r["batch_size"], m["n_ctx"]))
        lr = lr_at(step - 1, peak_lr, warmup_steps, total_steps, r["lr_final_frac"])
        loss = float(train_step(step_model, optimizer, x, y, lr, r["grad_clip"], autocast))
        if not math.isfinite(loss):
            status = "diverged"
            curve.append([step, step * tokens_per_step, loss, None, lr])
            break
        is_eval = step % r["eval_interval"] == 0 or step == total_steps
        if is_eval or step % r["log_interval"] == 0:
            val = record_eval(step) if is_eval else None
            curve.append([step, step * tokens_per_step, loss, val, lr])
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
        if r["checkpoint_interval"] and step % r["checkpoint_interval"] == 0 and step < total_steps:
            save_checkpoint(
                ckpt_path,
                {
                    "spec_hash": digest,
                    "step": step,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "rng": _rng_state(data_rng),
                    "curve": curve,
                    "entropy": entropy_rows,
                    "elapsed": elapsed_before + time.perf_counter() - t0,
                },
            )
    bar.close()
    wall = elapsed_before + time.perf_counter() - t0

    vals = [row[3] for row in curve if row[3] is not None]
    steps_done = step  # a diverged run counts the step whose loss was non-finite
    tokens_seen = steps_done * tokens_per_step
    flops = flops_per_token(cfg)
    final_entropy = None
    if entropy_rows:
        last = max(row[0] for row in entropy_rows)
        final_entropy = [
            [row[3] for row in entropy_rows if row[0] == last and row[1] == layer] for layer in range(m["n_layer"])
        ]
    metrics = {
        "spec": spec,
        "spec_hash": digest,
        "status": status,
        "n_params_total": counts["total"],
        "n_params_nonembedding": counts["nonembedding"],
        "n_params_kaplan": counts["kaplan"],
        "lr_peak": peak_lr,
        "steps": steps_done,
        "tokens_per_step": tokens_per_step,
        "tokens_seen": tokens_seen,
        # the last evaluation is the final one only if the run finished
        "final_val_loss": vals[-1] if status == "ok" else None,
        "best_val_loss": min(vals) if vals else None,
        # Kaplan's C = (6 N + 6 L n_ctx d) per token, N non-embedding (no LM head);
        # train_flops_matmul counts every matmul actually run, LM head included.
        "train_flops_estimate": flops["kaplan"] * tokens_seen,
        "train_flops_matmul": flops["matmul"] * tokens_seen,
        "final_attention_entropy": final_entropy,  # [layer][head], nats; None without log_entropy
        "wall_seconds": wall,
        "tokens_per_second": tokens_seen / wall if wall > 0 else None,
        "device": str(dev) + (" (bf16 autocast)" if use_bf16 else ""),
        "threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        **provenance(),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text(out_dir / "curve.csv", curve_csv(curve))
    # always written (header only without log_entropy), so a rerun never leaves a stale one
    write_text(out_dir / "entropy.csv", entropy_csv(entropy_rows))
    write_json(out_dir / "metrics.json", _json_safe(metrics))
    # The run is complete (ok or diverged): the checkpoint has served its purpose.
    if ckpt_path.exists():
        ckpt_path.unlink()
    if ckpt_dir.is_dir() and not any(ckpt_dir.iterdir()):
        shutil.rmtree(ckpt_dir)
    return metrics


def _json_safe(obj: Any) -> Any:
    """NaN/inf are not JSON: write them as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_safe(v) for v in obj]
    return obj


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
        help="auto: CUDA with bf16 autocast when present, else CPU",
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
    metrics = train(spec, args.out, args.checkpoint_dir, args.threads, args.device, not args.no_progress)
    final = metrics["final_val_loss"]
    print(
        f"depthwidth train: {metrics['status']}, {metrics['tokens_seen']} tokens, "
        f"final val loss {final if final is None else round(final, 4)}, {args.out}",
        file=sys.stderr,
    )
    return 0
