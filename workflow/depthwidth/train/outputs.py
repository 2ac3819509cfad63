"""What a finished run writes: `metrics.json`, `curve.csv` and `entropy.csv`.

`run_metrics` turns a finished `RunState` into the metrics dict; `write_outputs` writes the
three files atomically, metrics.json last, recording the sha256 of the other two (`curve_sha256`,
`entropy_sha256`), so an edited curve is found. Floats are written with repr, so curves compare
bit for bit.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from pathlib import Path
from typing import Any

import torch

from depthwidth import numerics
from depthwidth.contracts import CURVE_COLUMNS, ENTROPY_COLUMNS, RUN_DIGESTS, digest
from depthwidth.io import provenance, write_bytes, write_json
from depthwidth.train.checkpoint import RunState
from depthwidth.train.model import ModelConfig, count_params, flops_per_token
from depthwidth.train.optim import peak_lr


def _fmt(value: float | None) -> str:
    # repr round-trips a float exactly, so curves compare bit for bit
    return "" if value is None else repr(float(value))


def curve_csv(rows: list[list]) -> str:
    """curve.csv: one row per logged step; val_loss empty between evaluations."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CURVE_COLUMNS)
    for step, tokens, train_loss, val_loss, lr in rows:
        writer.writerow([step, tokens, _fmt(train_loss), _fmt(val_loss), _fmt(lr)])
    return buf.getvalue()


def entropy_csv(rows: list[list]) -> str:
    """entropy.csv: attention entropy (nats) per evaluation, layer and head."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(ENTROPY_COLUMNS)
    for step, layer, head, value in rows:
        writer.writerow([step, layer, head, _fmt(value)])
    return buf.getvalue()


def status_of(curve: list[list]) -> str:
    """'diverged' if the run ended on a non-finite training loss (its last row), else 'ok'."""
    last_loss = curve[-1][2]
    return "diverged" if last_loss is not None and not math.isfinite(last_loss) else "ok"


def final_attention_entropy(rows: list[list], n_layer: int) -> list[list[float]] | None:
    """[layer][head] entropy at the last evaluation; None without entropy rows."""
    if not rows:
        return None
    last = max(row[0] for row in rows)
    return [[row[3] for row in rows if row[0] == last and row[1] == layer] for layer in range(n_layer)]


def spec_hash(spec: dict) -> str:
    """sha256 of the canonical JSON of the (complete) spec, whole (`contracts.digest`)."""
    return digest(spec, length=64)


def derived_metrics(spec: dict, steps: int, train_tokens: int) -> dict:
    """The metrics that follow from a run's spec, its optimizer steps and the train shard's size (in tokens):
    parameter counts, peak learning rate, tokens, epochs and FLOPs. Training writes them, `check` recomputes
    them from the same function."""
    cfg = ModelConfig(**spec["model"])
    counts, flops = count_params(cfg), flops_per_token(cfg)
    tokens_per_step = spec["recipe"]["batch_size"] * spec["model"]["n_ctx"]
    tokens_seen = steps * tokens_per_step  # a diverged run counts the step whose loss was non-finite
    return {
        "spec_hash": spec_hash(spec),
        "n_params_total": counts["total"],
        "n_params_nonembedding": counts["nonembedding"],
        "n_params_kaplan": counts["kaplan"],
        "lr_peak": peak_lr(spec["recipe"]),
        "steps": steps,
        "tokens_per_step": tokens_per_step,
        "tokens_seen": tokens_seen,
        "tokens_per_parameter": tokens_seen / counts["nonembedding"],  # non-embedding parameters
        "train_tokens": train_tokens,
        "epochs": tokens_seen / train_tokens,  # passes over the train shard
        # Kaplan's C = (6 N + 6 L n_ctx d) per token, N non-embedding (no LM head);
        # train_flops_matmul counts every matmul actually run, LM head included.
        "train_flops_estimate": flops["kaplan"] * tokens_seen,
        "train_flops_matmul": flops["matmul"] * tokens_seen,
    }


def run_metrics(spec: dict, key: dict, state: RunState, device: str, train_tokens: int) -> dict:
    """The metrics of a finished run. key: the run's code_digest (its spec_hash is the spec's); train_tokens: the
    train shard's size (for `epochs`)."""
    derived = derived_metrics(spec, state.step, train_tokens)
    status = status_of(state.curve)
    vals = [row[3] for row in state.curve if row[3] is not None]
    tokens_seen = derived["tokens_seen"]
    return {
        "spec": spec,
        "code_digest": key["code_digest"],
        "status": status,
        **derived,
        # the last evaluation (on the whole validation shard) is the final one only if the run finished
        "final_val_loss": vals[-1] if status == "ok" else None,
        "best_val_loss": min(vals) if vals else None,
        "final_attention_entropy": final_attention_entropy(state.entropy, spec["model"]["n_layer"]),  # nats; None
        "wall_seconds": state.elapsed,
        "tokens_per_second": tokens_seen / state.elapsed if state.elapsed > 0 else None,
        "device": device,
        "threads": torch.get_num_threads(),
        # the kernels it ran on (numerics.py): the pinned x86 path, or this machine's own (machine_bound)
        "numerics": numerics.record(torch.backends.cpu.get_cpu_capability(), device, spec["recipe"]["precision"]),
        "torch_version": torch.__version__,
        **provenance(),
    }


def json_safe(obj: Any) -> Any:
    """NaN/inf are not JSON: write them as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_safe(v) for v in obj]
    return obj


def write_outputs(out_dir: Path, state: RunState, metrics: dict) -> dict:
    """curve.csv, entropy.csv (header only without log_entropy, so no stale one survives), then
    metrics.json with the sha256 of each file's bytes as written; returns the metrics written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"curve.csv": curve_csv(state.curve).encode(), "entropy.csv": entropy_csv(state.entropy).encode()}
    for name, data in files.items():
        write_bytes(out_dir / name, data)
    metrics = {**metrics, **{RUN_DIGESTS[name]: hashlib.sha256(data).hexdigest() for name, data in files.items()}}
    write_json(out_dir / "metrics.json", json_safe(metrics))
    return metrics
