"""`python -m depthwidth glue-finetune --spec-json '{...}' --out DIR`: fine-tune one pretrained model on one
GLUE task with one seed, and score it on dev.

The classifier is the pretrained causal model without its LM head, then a linear head on one state: the last
token's (`pooling: last`; the causal model has read the whole input there) or the mean over the input's tokens
(`mean`). An input is the corpus's BPE tokens of the sentence (CoLA) or of the two sentences joined by the
end-of-text token (RTE), its last n_ctx tokens when longer. Every weight is trained: AdamW at `lr`, linear
warm-up over `warmup_frac` of the steps then linear decay to 0, the gradient norm clipped at 1, `epochs` passes
over the train rows (the first `max_train_rows` when set) in an order the seed draws, which also draws the head's
initial weights; fp32.

Writes `metrics.json`: the spec, the dev confusion counts (class 1 positive) and the scores computed from
them (`glue.metrics`: MCC, F1, accuracy), the pretrained model's sha256, and the training's last loss.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from depthwidth import numerics
from depthwidth.glue import add_job_arguments
from depthwidth.glue import metrics as glue_metrics
from depthwidth.glue.contracts import PRIMARY
from depthwidth.glue.pretrain import MODEL_NAME, load_pretrained
from depthwidth.glue.tasks import TASKS, read_split
from depthwidth.io import provenance, sha256_file, write_json
from depthwidth.options import json_option

SPEC_KEYS = ("task", "attention", "seed", "pretrained", "tokenizer", "task_data", "recipe")
RECIPE_KEYS = ("lr", "epochs", "batch_size", "weight_decay", "warmup_frac", "pooling", "max_train_rows")
POOLINGS = ("last", "mean")
EVAL_BATCH = 64


def check_spec(spec: object) -> dict:
    """The spec, if it has exactly the keys a fine-tuning reads (the plan fills in every one); ValueError
    naming the first key missing or unknown."""
    if not isinstance(spec, dict) or not isinstance(spec.get("recipe"), dict):
        raise ValueError("spec: must be a JSON object with a recipe object")
    for where, keys, given in (("", SPEC_KEYS, spec), ("recipe.", RECIPE_KEYS, spec["recipe"])):
        for key in keys:
            if key not in given:
                raise ValueError(f"spec key '{where}{key}': missing (a job's spec is complete)")
        for key in given:
            if key not in keys:
                raise ValueError(f"spec key '{where}{key}': unknown key (allowed: {', '.join(keys)})")
    if spec["task"] not in TASKS:
        raise ValueError(f"spec key 'task': {spec['task']!r} is none of {', '.join(TASKS)}")
    if spec["recipe"]["pooling"] not in POOLINGS:
        raise ValueError(f"spec key 'recipe.pooling': {spec['recipe']['pooling']!r} is none of {', '.join(POOLINGS)}")
    return spec


class Classifier(nn.Module):
    """The pretrained GPT's embeddings, blocks and final LayerNorm, then a linear head on one pooled state."""

    def __init__(self, gpt: nn.Module, classes: int, pooling: str):
        super().__init__()
        self.gpt, self.pooling = gpt, pooling
        self.head = nn.Linear(gpt.cfg.d_model, classes)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, idx: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Logits [batch, classes] of right-padded inputs `idx` [batch, T] of `lengths` real tokens each."""
        gpt = self.gpt
        x = gpt.wte(idx) + gpt.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in gpt.blocks:
            x = block(x)
        states = gpt.ln_f(x)
        if self.pooling == "last":  # causal: padding after the last token changes nothing before it
            pooled = states[torch.arange(len(idx), device=idx.device), lengths - 1]
        else:
            mask = (torch.arange(idx.shape[1], device=idx.device)[None, :] < lengths[:, None]).to(states.dtype)
            pooled = (states * mask[..., None]).sum(1) / lengths[:, None].to(states.dtype)
        return self.head(pooled)


def encode(rows: list[dict], tokenizer_path: Path, n_ctx: int) -> list[list[int]]:
    """Each row's token ids: a, or a <eot> b; the last n_ctx when longer."""
    from tokenizers import Tokenizer

    from depthwidth.data.tokens import EOT

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    eot = tokenizer.token_to_id(EOT)
    encoded = []
    for row in rows:
        ids = tokenizer.encode(row["a"]).ids
        if row["b"] is not None:
            ids = [*ids, eot, *tokenizer.encode(row["b"]).ids]
        encoded.append((ids or [eot])[-n_ctx:])
    return encoded


def batch_of(encoded: list[list[int]], picks, device) -> tuple[torch.Tensor, torch.Tensor]:
    """The inputs `picks` right-padded with token 0 to the longest, and their lengths."""
    chosen = [encoded[int(i)] for i in picks]
    width = max(map(len, chosen))
    idx = torch.zeros(len(chosen), width, dtype=torch.long)
    for row, ids in enumerate(chosen):
        idx[row, : len(ids)] = torch.tensor(ids)
    return idx.to(device), torch.tensor([len(ids) for ids in chosen], device=device)


def lr_factor(step: int, total: int, warmup: int) -> float:
    """Linear warm-up over `warmup` steps, then linear decay to 0 at `total`."""
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def train_classifier(model: Classifier, encoded, labels, recipe: dict, seed: int, device, progress=True) -> list[float]:
    """Fine-tune every weight of `model`; the training loss of each step (a tqdm bar on stderr: the job's log)."""
    from tqdm import tqdm

    generator = torch.Generator().manual_seed(seed)
    batch = recipe["batch_size"]
    per_epoch = math.ceil(len(encoded) / batch)
    total = per_epoch * recipe["epochs"]
    warmup = math.ceil(recipe["warmup_frac"] * total)
    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe["lr"], weight_decay=recipe["weight_decay"])
    targets = torch.tensor(labels, device=device)
    losses = []
    model.train()
    bar = tqdm(total=total, desc="fine-tune", unit="step", file=sys.stderr, disable=not progress, mininterval=1.0)
    for step in range(total):
        if step % per_epoch == 0:
            order = torch.randperm(len(encoded), generator=generator)
        picks = order[(step % per_epoch) * batch : (step % per_epoch + 1) * batch]
        idx, lengths = batch_of(encoded, picks, device)
        for group in optimizer.param_groups:
            group["lr"] = recipe["lr"] * lr_factor(step, total, warmup)
        loss = F.cross_entropy(model(idx, lengths), targets[picks.to(device)])
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(float(loss.detach()))
        bar.update(1)
        bar.set_postfix(loss=f"{losses[-1]:.4f}", refresh=False)
    bar.close()
    return losses


@torch.no_grad()
def predict(model: Classifier, encoded, device) -> list[int]:
    model.eval()
    predictions = []
    for first in range(0, len(encoded), EVAL_BATCH):
        idx, lengths = batch_of(encoded, range(first, min(first + EVAL_BATCH, len(encoded))), device)
        predictions += model(idx, lengths).argmax(-1).tolist()
    return predictions


def finetune(spec: dict, out: Path, threads: int | None = None, device: str = "auto", progress: bool = True) -> dict:
    """Fine-tune and score one (pretrained model, task, seed); write and return metrics.json."""
    from depthwidth.train.loop import resolve_device

    spec = check_spec(spec)
    for key, path in (("tokenizer", Path(spec["tokenizer"])), ("task_data", Path(spec["task_data"]) / "meta.json")):
        if not path.is_file():  # before any work: the tokenizer library would stop with a traceback
            raise FileNotFoundError(f"spec key '{key}': {path}: file not found")
    recipe, start = spec["recipe"], time.perf_counter()
    if threads is not None:
        torch.set_num_threads(threads)
    dev = resolve_device(device)
    train_rows, dev_rows = (read_split(Path(spec["task_data"]), split) for split in ("train", "dev"))
    if recipe["max_train_rows"] is not None:
        train_rows = train_rows[: recipe["max_train_rows"]]
    torch.manual_seed(spec["seed"])
    gpt, pretrained = load_pretrained(Path(spec["pretrained"]), dev)
    n_ctx = gpt.cfg.n_ctx
    model = Classifier(gpt, 2, recipe["pooling"]).to(dev)  # the head is drawn from the seed, after the weights load
    encoded = encode(train_rows, Path(spec["tokenizer"]), n_ctx)
    labels = [r["label"] for r in train_rows]
    losses = train_classifier(model, encoded, labels, recipe, spec["seed"], dev, progress)
    predictions = predict(model, encode(dev_rows, Path(spec["tokenizer"]), n_ctx), dev)
    counts = glue_metrics.confusion([r["label"] for r in dev_rows], predictions)
    result = {
        "spec": spec,
        "task": spec["task"],
        "attention": spec["attention"],
        "seed": spec["seed"],
        "n_train": len(train_rows),
        "n_dev": len(dev_rows),
        "confusion": counts,
        **glue_metrics.scores(counts),
        "primary": PRIMARY[spec["task"]],
        "steps": len(losses),
        "final_train_loss": losses[-1] if losses else None,
        "pretrained_sha256": sha256_file(Path(spec["pretrained"]) / MODEL_NAME),
        "pretrain_val_loss": pretrained["final_val_loss"],
        "task_meta_sha256": sha256_file(Path(spec["task_data"]) / "meta.json"),
        "wall_seconds": time.perf_counter() - start,
        "device": str(dev),
        "numerics": numerics.record(torch.backends.cpu.get_cpu_capability(), str(dev)),  # its kernels (numerics.py)
        "torch_version": torch.__version__,
        **provenance(),
    }
    write_json(
        Path(out) / "metrics.json",
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in result.items()},
    )
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_job_arguments(parser, "fine-tuning spec", "metrics.json")


def run(args: argparse.Namespace) -> int:
    spec = json_option(args.spec_json, "--spec-json")
    result = finetune(spec, args.out, args.threads, args.device, not args.no_progress)
    scores = ", ".join(f"{name} {result[name]:.4f}" for name in ("mcc", "f1", "accuracy"))
    print(
        f"depthwidth glue-finetune: {spec['attention']} {spec['task']} seed {spec['seed']}: {scores}", file=sys.stderr
    )
    return 0
