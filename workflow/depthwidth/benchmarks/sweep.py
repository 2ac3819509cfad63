"""`python -m depthwidth bench sweep`: the sweep's own shapes, engine against a plain eager loop, side by side.

1. The shapes: the config's sweep runs grouped by model shape, batch and n_ctx (seed and learning rate
   do not change the speed); each shape weighs the tokens its runs train (`runsheet.run_tokens`, with the
   epoch cap once the data is prepared) and costs their matmul FLOPs (`runsheet.run_flops`).
2. The one-thread fp32 matmul peak, measured once as `bench train` does, with `torch.set_num_threads(1)`.
3. Per shape, at the config's threads per job: the engine (the package's own step code: `GPT`,
   `make_optimizer`, `train_step`, the recipe's gradient clipping) and a plain reference (`PlainGPT`
   below: nn.Linear, an explicit causal softmax, `torch.optim.AdamW(foreach=False)`, `loss.backward`,
   `clip_grad_norm_`) of the same sizes and batch. Steps alternate engine, reference, engine, ... so
   both share any load on the machine; each side's time is the median step after the warm-up steps.
   GFLOP/s counts every matmul of the step (`shapes.flops_per_token(...)["matmul"]`).
4. Per shape, the GEMMs inside the engine's step (`gemm_time`): a few more engine steps under
   torch.profiler, the self time of every mm, addmm and bmm call and its FLOPs from its input shapes.
   Their rate is what the matmul library reaches at the shape, in the step (operands as the step
   leaves them in cache); their share of the median step is what all other work leaves to them.
   The attention's score matmuls run inside the SDPA kernel, so they are not among them.
5. The medians over shapes weighted by their tokens, and the projected wall time of the selected runs:
   (sum of run FLOPs / the shape's measured rate + one start-up per job) / (cores // threads) jobs
   side by side.

6. With `--compare-bf16`, per shape: the engine's step at `recipe.precision` fp32 and bf16, alternating step by
   step (`time_precisions`), each side's tokens/s and its share of its own one-thread matmul peak (`precision_peaks`:
   the best of the n^3 square and [2048 x k] @ [k x k] panels, k = 64 to 512), the bf16/fp32 speed ratio and
   its spread over the alternated pairs. `--models 2x128,2x512` times those shapes on the config's first run's
   recipe instead of the config's own. `--device cuda` prints only this table, timed on the GPU, each side
   against the GPU's own n^3 matmul peak in its dtype (the MFU of each precision).

7. With `--compare-steps`, per shape: the engine's step eager and replayed from a CUDA graph (`train.step.GraphedStep`,
   what a job on CUDA runs; re-executed on a CPU, where the figure says what the rehearsal costs), alternating, and
   with `--reduce-overhead` also under torch.compile(mode="reduce-overhead") (its own CUDA graphs; one compile
   per shape, so for a few shapes): tokens/s of each and its ratio to eager (issue 37: whichever is faster).

The engine runs at the spec's `recipe.precision`; the fp32 peak is the first table's yardstick either way.

The process keeps freed memory for reuse (`train.keep_freed_memory`, as every training job does), so both
sides run without the page faults of reallocated buffers; the ratio is what the step code itself gains.

Peak RSS is this process's maximum so far (`ru_maxrss`), read after each shape: one process trains every
shape, so a row shows the largest of the shapes up to it (both models of every shape so far).
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from depthwidth.benchmarks.steps import engine_stepper, matmul_peak, resolved
from depthwidth.plan.runsheet import run_flops, run_tokens, shape_key, startup_seconds, train_tokens


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from depthwidth.plan.config import add_override_arguments

    parser.add_argument("--configfile", type=Path, default=Path("config/config.yaml"), help="a workflow config")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per shape and side (after the warm-up)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per shape and side")
    parser.add_argument("--seconds", type=float, default=30.0, help="cap on one shape's timed steps, both sides")
    parser.add_argument("--shapes", default="all", help="'all', or comma-separated run ids (or L-d-h-f labels)")
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="cores for jobs side by side")
    parser.add_argument(
        "--matmul-n", type=int, default=2048, help="size of the square peak matmuls (as bench train), the widest panel"
    )
    parser.add_argument("--startup", type=float, default=None, help="seconds of start-up per job (default: measure)")
    parser.add_argument(
        "--models",
        default=None,
        help="LxD,LxD,...: time these shapes instead of the config's, on its first sweep run's recipe (2x128,2x512)",
    )
    parser.add_argument(
        "--compare-steps",
        action="store_true",
        help="also time each shape's step eager and replayed from a CUDA graph (re-executed on a CPU), alternating",
    )
    parser.add_argument(
        "--reduce-overhead",
        action="store_true",
        help="with --compare-steps: also torch.compile(mode='reduce-overhead') (a compile per shape: few shapes)",
    )
    parser.add_argument(
        "--compare-bf16",
        action="store_true",
        help="also time each shape's step at fp32 and at bf16, alternating, against each one's one-thread matmul peak",
    )
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cuda: only the fp32-against-bf16 table, on the GPU against its own matmul peaks (the plain reference "
        "and the GEMM profile are CPU tools)",
    )
    add_override_arguments(parser)


# ---------------------------------------------------------------------------------------------
# The plan's shapes


@dataclass(frozen=True)
class ShapeGroup:
    """Sweep runs that share model shape, batch and n_ctx: what they train and what it costs."""

    label: str  # L<layers>-d<width>-h<heads>-f<d_ff>, and -v<vocabulary> off the config's (a sensitivity block's)
    spec: dict  # the first run's spec (its seed and learning rate)
    threads: int  # torch threads per job (the runs' resources)
    run_ids: tuple[str, ...]
    tokens: int  # training tokens of all its runs
    flops: float  # matmul FLOPs of all its runs (training and evaluation)
    runs_per_gpu: int = 1  # runs that share one GPU (the runs' resources; 1 where they do not share)


def shape_label(spec: dict, vocab_size: int | None = None) -> str:
    """`L1-d64-h2-f256`; `-v4096` after it where the run's vocabulary is not `vocab_size` (the config's)."""
    m = spec["model"]
    vocab = "" if vocab_size in (None, m["vocab_size"]) else f"-v{m['vocab_size']}"
    return f"L{m['n_layer']}-d{m['d_model']}-h{m['n_head']}-f{m['d_ff']}{vocab}"


def group_shapes(plan, split: int | None = None) -> list[ShapeGroup]:
    """The distinct shapes of the runs the plan prices (`Plan.priced_runs`: with learning-rate scans, their first
    scouts and the other seeds at one rate) but its shaped-attention training, in plan order; split: train-split
    tokens (epoch cap)."""
    members: dict[str, list] = {}
    for run_id, job in plan.priced_runs().items():
        if run_id not in plan.entropy_runs:
            members.setdefault(shape_key(job.spec), []).append(job)
    groups = []
    for jobs in members.values():
        tokens = [run_tokens(job.spec["recipe"], split) for job in jobs]
        flops = sum(run_flops(job.spec, n)[1] for job, n in zip(jobs, tokens, strict=True))
        threads = max(job.resources["threads"] for job in jobs)
        share = max(job.resources["runs_per_gpu"] if job.scheduler["gres"] else 1 for job in jobs)
        ids = tuple(job.run_id for job in jobs)
        label = shape_label(jobs[0].spec, plan.config["data"]["vocab_size"])
        groups.append(ShapeGroup(label, jobs[0].spec, threads, ids, sum(tokens), flops, share))
    return groups


def select(groups: list[ShapeGroup], wanted: str) -> list[ShapeGroup]:
    """The groups `--shapes` names: all, or those holding one of the comma-separated run ids or labels."""
    if wanted == "all":
        return groups
    names = [name.strip() for name in wanted.split(",") if name.strip()]
    known = {name for g in groups for name in (g.label, *g.run_ids)}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"--shapes: no sweep run or shape {unknown}; known shapes: {[g.label for g in groups]}")
    return [g for g in groups if {g.label, *g.run_ids} & set(names)]


def model_groups(template: ShapeGroup, models: str) -> list[ShapeGroup]:
    """Shapes that `--models` names (`LxD`, comma-separated) on the template's recipe, batch, n_ctx, vocabulary
    and threads, with d_ff = 4 d and the most heads (dividing d) no smaller than the template's head size; each
    weighs as one run of the template's token budget."""
    m = template.spec["model"]
    d_head = m["d_model"] // m["n_head"]
    groups = []
    for text in models.split(","):
        try:
            n_layer, d_model = (int(v) for v in text.strip().lower().split("x"))
        except ValueError:
            raise ValueError(f"--models: expected LxD,LxD,..., got {models!r}") from None
        n_head = max(h for h in range(1, max(1, d_model // d_head) + 1) if d_model % h == 0)  # heads of d_head or more
        model = {**m, "n_layer": n_layer, "d_model": d_model, "n_head": n_head, "d_ff": 4 * d_model}
        spec = {**template.spec, "model": model}
        label, tokens = shape_label(spec), template.spec["recipe"]["token_budget"]
        groups.append(ShapeGroup(label, spec, template.threads, (label,), tokens, run_flops(spec)[1]))
    return groups


def weighted_median(values, weights) -> float:
    """The lower weighted median: the smallest value whose cumulative weight (values sorted) reaches half the total."""
    pairs = sorted(zip(values, weights, strict=True))
    total = sum(w for _, w in pairs)
    if not pairs or total <= 0:
        raise ValueError("weighted_median: needs at least one positive weight")
    cumulative = 0.0
    for value, weight in pairs:
        cumulative += weight
        if cumulative >= total / 2:
            return value
    return pairs[-1][0]


def side_by_side(cores: int, threads: int) -> int:
    """Jobs of `threads` threads that run at once on `cores` cores (at least one)."""
    return max(1, cores // threads)


def projected_seconds(groups: list[ShapeGroup], rates: list[float], startup: float, parallel: int) -> float:
    """Wall time of the groups' runs: (FLOPs / FLOP/s of each shape + start-up per job) / jobs side by side."""
    job_seconds = sum(g.flops / rate + startup * len(g.run_ids) for g, rate in zip(groups, rates, strict=True))
    return job_seconds / max(1, parallel)


# ---------------------------------------------------------------------------------------------
# The plain reference: a minimal GPT, written independently of depthwidth.train.model


class PlainAttention(nn.Module):
    def __init__(self, d_model: int, n_head: int, n_ctx: int, bias: bool):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)
        self.register_buffer("mask", torch.tril(torch.ones(n_ctx, n_ctx, dtype=torch.bool)), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.n_head)
        scores = scores.masked_fill(~self.mask[:T, :T], float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class PlainBlock(nn.Module):
    def __init__(self, d_model: int, n_head: int, d_ff: int, n_ctx: int, bias: bool):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model, bias=bias)
        self.attn = PlainAttention(d_model, n_head, n_ctx, bias)
        self.norm2 = nn.LayerNorm(d_model, bias=bias)
        self.up = nn.Linear(d_model, d_ff, bias=bias)
        self.down = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class PlainGPT(nn.Module):
    """Token and position embeddings, pre-LayerNorm blocks, final LayerNorm, LM head tied to the embedding."""

    def __init__(self, model: dict):
        super().__init__()
        d, bias = model["d_model"], bool(model.get("bias", False))
        d_ff = model.get("d_ff") or 4 * d
        self.tok = nn.Embedding(model["vocab_size"], d)
        self.pos = nn.Embedding(model["n_ctx"], d)
        self.blocks = nn.ModuleList(
            PlainBlock(d, model["n_head"], d_ff, model["n_ctx"], bias) for _ in range(model["n_layer"])
        )
        self.norm = nn.LayerNorm(d, bias=bias)
        self.head = nn.Linear(d, model["vocab_size"], bias=False)
        self.head.weight = self.tok.weight
        for p in self.parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def plain_optimizer(model: nn.Module, recipe: dict) -> torch.optim.AdamW:
    """AdamW, one tensor at a time (foreach=False, not fused), decay on matrices only as the recipe does."""
    params = list(model.parameters())
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": recipe["weight_decay"]},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    betas = (recipe["beta1"], recipe["beta2"])
    return torch.optim.AdamW(groups, lr=recipe["lr"], betas=betas, eps=recipe["eps"], foreach=False)


# ---------------------------------------------------------------------------------------------
# Timing


def steppers(spec: dict, shard) -> tuple:
    """(engine step, reference step): each trains one batch of the spec's model and returns its seconds."""
    import numpy as np

    from depthwidth.train.loop import sample_batch

    rngs = [np.random.default_rng([spec["seed"], side]) for side in (0, 1)]
    engine_step = engine_stepper(spec, shard, rngs[0])
    spec, lr = resolved(spec)
    m, r = spec["model"], spec["recipe"]
    torch.manual_seed(spec["seed"])
    plain = PlainGPT(m)
    plain_opt = plain_optimizer(plain, {**r, "lr": lr})

    def plain_step() -> float:
        t = time.perf_counter()
        x, y = sample_batch(shard, rngs[1], r["batch_size"], m["n_ctx"])
        loss = plain(x, y)
        plain_opt.zero_grad(set_to_none=True)
        loss.backward()
        if r["grad_clip"] is not None:
            torch.nn.utils.clip_grad_norm_(plain.parameters(), r["grad_clip"])
        plain_opt.step()
        float(loss.detach())
        return time.perf_counter() - t

    return engine_step, plain_step


GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm")


def gemm_flops(name: str, shapes: list) -> float:
    """FLOPs of one GEMM call (2 per multiply-add) from its input shapes: mm [M, K] [K, N],
    addmm (bias, [M, K], [K, N]), bmm [B, M, K] [B, K, N]."""
    a, b = shapes[1:3] if name == "aten::addmm" else shapes[:2]
    batch = a[0] if name == "aten::bmm" else 1
    return 2.0 * batch * a[-2] * a[-1] * b[-1]


def gemm_time(step, steps: int) -> tuple[float, float]:
    """(FLOPs, seconds) per call of `step` spent in GEMMs: torch.profiler's self time of every
    mm, addmm and bmm over `steps` calls, FLOPs from their recorded input shapes."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(steps):
            step()
    calls = [event for event in prof.events() if event.name in GEMM_OPS]
    flops = sum(gemm_flops(event.name, event.input_shapes) for event in calls)
    seconds = sum(event.self_cpu_time_total for event in calls) * 1e-6  # the profiler counts microseconds
    return flops / steps, seconds / steps


def time_shape(group: ShapeGroup, shard, steps: int, warmup: int, seconds: float) -> dict:
    """Median step seconds of engine and reference, alternating; tokens/s, GFLOP/s, the engine's
    in-step GEMM rate and share of its step, and ru_maxrss so far."""
    import numpy as np

    torch.set_num_threads(group.threads)
    engine_step, plain_step = steppers(group.spec, shard)
    for _ in range(warmup):
        engine_step(), plain_step()
    engine, plain = [], []
    deadline = time.perf_counter() + seconds
    while len(engine) < max(1, steps) and (not engine or time.perf_counter() < deadline):
        engine.append(engine_step())
        plain.append(plain_step())
    m, r = group.spec["model"], group.spec["recipe"]
    tokens = r["batch_size"] * m["n_ctx"]
    per_token = run_flops(group.spec)[0]
    engine_s, plain_s = float(np.median(engine)), float(np.median(plain))
    gemm_flops_step, gemm_s = gemm_time(engine_step, max(1, min(steps, 5)))
    return {
        "steps": len(engine),
        "engine_tok_s": tokens / engine_s,
        "engine_flop_s": per_token * tokens / engine_s,
        "plain_tok_s": tokens / plain_s,
        "plain_flop_s": per_token * tokens / plain_s,
        "ratio": plain_s / engine_s,
        "gemm_flop_s": gemm_flops_step / gemm_s if gemm_s > 0 else float("nan"),
        "gemm_share": gemm_s / engine_s,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KiB on Linux
    }


def one_thread_peak(n: int, dtype=None) -> float:
    """Matmul FLOP/s of one thread in `dtype` (None: fp32): `steps.matmul_peak` at torch.set_num_threads(1)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return matmul_peak(n, torch.device("cpu"), dtype=dtype)
    finally:
        torch.set_num_threads(threads)


# ---------------------------------------------------------------------------------------------
# fp32 against bf16

COMPARED = ("fp32", "bf16")  # the `recipe.precision` values the comparison times, in that order


def at_precision(spec: dict, precision: str) -> dict:
    """The spec with its recipe's precision replaced."""
    return {**spec, "recipe": {**spec["recipe"], "precision": precision}}


def alternate(steppers: dict, steps: int, warmup: int, seconds: float) -> dict[str, list[float]]:
    """Each stepper's step seconds, the steppers called in turn step by step (after `warmup` untimed
    rounds) so all share any load: at least one round, `steps` rounds unless `seconds` run out first."""
    for _ in range(warmup):
        for step in steppers.values():
            step()
    times = {name: [] for name in steppers}
    first = next(iter(steppers))
    deadline = time.perf_counter() + seconds
    while len(times[first]) < max(1, steps) and (not times[first] or time.perf_counter() < deadline):
        for name, step in steppers.items():
            times[name].append(step())
    return times


def time_precisions(group: ShapeGroup, shard, steps: int, warmup: int, seconds: float, device=None) -> dict:
    """The engine's step at fp32 and at bf16 (one model seed, one batch sequence each), alternating step by
    step so both share any load: tokens/s and FLOP/s of each from its median step, their ratio (bf16 speed /
    fp32 speed) and its spread, the lowest and highest ratio of one alternated pair of steps."""
    import numpy as np

    torch.set_num_threads(group.threads)
    seed = group.spec["seed"]
    stepper = {
        p: engine_stepper(at_precision(group.spec, p), shard, np.random.default_rng([seed]), device) for p in COMPARED
    }
    times = alternate(stepper, steps, warmup, seconds)
    m, r = group.spec["model"], group.spec["recipe"]
    tokens, per_token = r["batch_size"] * m["n_ctx"], run_flops(group.spec)[0]
    median = {p: float(np.median(times[p])) for p in COMPARED}
    pairs = [a / b for a, b in zip(times["fp32"], times["bf16"], strict=True)]
    return {
        "steps": len(times["fp32"]),
        **{f"{p}_tok_s": tokens / median[p] for p in COMPARED},
        **{f"{p}_flop_s": per_token * tokens / median[p] for p in COMPARED},
        "ratio": median["fp32"] / median["bf16"],
        "ratio_lo": min(pairs),
        "ratio_hi": max(pairs),
    }


PRECISION_HEADER = (
    f"{'shape':<18} {'batch':>5} {'n_ctx':>5} {'thr':>3} {'steps':>5} {'fp32 tok/s':>10} {'% fp32 pk':>9} "
    f"{'bf16 tok/s':>10} {'% bf16 pk':>9} {'bf16/fp32':>9} {'pair min-max':>13}"
)


def precision_row(group: ShapeGroup, r: dict, peaks: dict[str, float]) -> str:
    """One row of the fp32-against-bf16 table; each side's FLOP/s as a share of its own one-thread matmul peak."""
    m = group.spec["model"]
    return (
        f"{group.label:<18} {group.spec['recipe']['batch_size']:>5} {m['n_ctx']:>5} {group.threads:>3} "
        f"{r['steps']:>5} {r['fp32_tok_s']:>10,.0f} {100 * r['fp32_flop_s'] / peaks['fp32']:>8.1f}% "
        f"{r['bf16_tok_s']:>10,.0f} {100 * r['bf16_flop_s'] / peaks['bf16']:>8.1f}% {r['ratio']:>8.2f}x "
        f"{r['ratio_lo']:>6.2f}-{r['ratio_hi']:.2f}x"
    )


PANEL_ROWS, PANEL_WIDTHS = 2048, (64, 128, 256, 512)  # the [rows x n] @ [n x n] matmuls of a step's widths


def panel_peak(dtype, widest: int, repeats: int = 6) -> float:
    """One thread's best FLOP/s over [2048 x n] @ [n x n] matmuls in `dtype`, n = 64 to 512 and at most `widest`
    (a step's GEMM shapes: tokens x width by width x width), each the best of `repeats` after a warm-up call."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    best = 0.0
    try:
        for n in [n for n in PANEL_WIDTHS if n <= widest] or PANEL_WIDTHS[:1]:
            a, b = torch.randn(PANEL_ROWS, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
            seconds = float("inf")
            for _ in range(repeats + 1):
                t = time.perf_counter()
                a @ b
                seconds = min(seconds, time.perf_counter() - t)
            best = max(best, 2 * PANEL_ROWS * n * n / seconds)
    finally:
        torch.set_num_threads(threads)
    return best


def precision_peaks(n: int) -> dict[str, float]:
    """Per compared precision, one thread's matmul peak: the best of the n^3 square (as `one_thread_peak`)
    and the [2048 x k] @ [k x k] panels up to k = n (`panel_peak`), so that neither figure rests on one size."""
    from depthwidth.train.loop import MATMUL_DTYPES

    return {p: max(one_thread_peak(n, MATMUL_DTYPES[p]), panel_peak(MATMUL_DTYPES[p], n)) for p in COMPARED}


def device_peaks(n: int, device) -> dict[str, float]:
    """Per compared precision, the device's n^3 matmul peak (`steps.matmul_peak`)."""
    from depthwidth.train.loop import MATMUL_DTYPES

    return {p: matmul_peak(n, device, dtype=MATMUL_DTYPES[p]) for p in COMPARED}


def compare_precisions(groups: list[ShapeGroup], shard, args, device=None) -> None:
    """Print each precision's matmul peak (one CPU thread's, or the GPU's), then fp32 against bf16 per shape
    and the token-weighted median ratio."""
    rates = ", ".join(f"{p} {{:.1f}} GFLOP/s" for p in COMPARED)
    if device is not None and device.type == "cuda":
        peaks = device_peaks(args.matmul_n, device)
        probe = f"{torch.cuda.get_device_name(device)}, {args.matmul_n}^3, best of 6"
        print(f"\ndevice matmul peaks ({probe}): {rates.format(*(peaks[p] / 1e9 for p in COMPARED))}")
    else:
        peaks = precision_peaks(args.matmul_n)
        widths = "/".join(str(n) for n in PANEL_WIDTHS if n <= args.matmul_n)
        probe = f"best of {args.matmul_n}^3 and [{PANEL_ROWS} x n] @ [n x n], n = {widths}"
        print(f"\none-thread matmul peaks ({probe}): {rates.format(*(peaks[p] / 1e9 for p in COMPARED))}")
    print(PRECISION_HEADER)
    print("-" * len(PRECISION_HEADER))
    results = []
    for group in groups:
        results.append(time_precisions(group, shard, args.steps, args.warmup, args.seconds, device))
        print(precision_row(group, results[-1], peaks))
        sys.stdout.flush()
    ratio = weighted_median([r["ratio"] for r in results], [g.tokens for g in groups])
    print(f"token-weighted median bf16/fp32 step speed: {ratio:.2f}x (above 1: bf16 is faster)")


# ---------------------------------------------------------------------------------------------
# Eager against graphed steps


def time_steps(group: ShapeGroup, shard, modes: tuple[str, ...], steps: int, warmup: int, seconds: float, device):
    """The engine's step in each of `modes` (`steps.STEPPERS`; one model seed, one batch sequence each),
    alternating: tokens/s of each from its median step. The warm-up covers a graph's capture (its eager
    steps, then the capture) and a compile's first calls."""
    import numpy as np

    from depthwidth.train.step import WARMUP_STEPS

    torch.set_num_threads(group.threads)
    seed = group.spec["seed"]
    stepper = {mode: engine_stepper(group.spec, shard, np.random.default_rng([seed]), device, mode) for mode in modes}
    times = alternate(stepper, steps, max(warmup, WARMUP_STEPS + 3), seconds)
    m, r = group.spec["model"], group.spec["recipe"]
    tokens = r["batch_size"] * m["n_ctx"]
    return {"steps": len(times[modes[0]]), **{mode: tokens / float(np.median(times[mode])) for mode in modes}}


def compare_steps(groups: list[ShapeGroup], shard, args, device) -> None:
    """Print each shape's tokens/s eager, graphed (and under reduce-overhead), and the graphed/eager ratio;
    then the token-weighted median ratio of each against eager."""
    modes = ("eager", "graph", "reduce-overhead") if args.reduce_overhead else ("eager", "graph")
    header = f"{'shape':<18} {'batch':>5} {'n_ctx':>5} {'steps':>5} " + " ".join(f"{m + ' tok/s':>21}" for m in modes)
    header += " " + " ".join(f"{m + '/eager':>21}" for m in modes[1:])
    print(f"\nthe step eager against replayed ({device}; on a CPU the graph is re-executed, a rehearsal)")
    print(header)
    print("-" * len(header))
    ratios = {mode: [] for mode in modes[1:]}
    for group in groups:
        r = time_steps(group, shard, modes, args.steps, args.warmup, args.seconds, device)
        m = group.spec["model"]
        line = f"{group.label:<18} {group.spec['recipe']['batch_size']:>5} {m['n_ctx']:>5} {r['steps']:>5} "
        line += " ".join(f"{r[mode]:>21,.0f}" for mode in modes)
        for mode in modes[1:]:
            ratios[mode].append(r[mode] / r["eager"])
            line += f" {ratios[mode][-1]:>20.2f}x"
        print(line)
        sys.stdout.flush()
    for mode, values in ratios.items():
        median = weighted_median(values, [g.tokens for g in groups])
        print(f"token-weighted median {mode}/eager step speed: {median:.2f}x")


# ---------------------------------------------------------------------------------------------
# The command


HEADER = (
    f"{'shape':<18} {'runs':>4} {'batch':>5} {'n_ctx':>5} {'thr':>3} {'plan tokens':>12} {'steps':>5} "
    f"{'tok/s':>9} {'GFLOP/s':>8} {'% peak':>7} {'ref tok/s':>9} {'ref GF/s':>8} {'eng/ref':>7} "
    f"{'GEMM %pk':>8} {'GEMM/step':>9} {'maxRSS MiB':>10}"
)


def row(group: ShapeGroup, r: dict, peak: float) -> str:
    m = group.spec["model"]
    return (
        f"{group.label:<18} {len(group.run_ids):>4} {group.spec['recipe']['batch_size']:>5} {m['n_ctx']:>5} "
        f"{group.threads:>3} {group.tokens:>12,} {r['steps']:>5} {r['engine_tok_s']:>9,.0f} "
        f"{r['engine_flop_s'] / 1e9:>8.2f} {100 * r['engine_flop_s'] / peak:>6.1f}% {r['plain_tok_s']:>9,.0f} "
        f"{r['plain_flop_s'] / 1e9:>8.2f} {r['ratio']:>6.2f}x {100 * r['gemm_flop_s'] / peak:>7.1f}% "
        f"{100 * r['gemm_share']:>8.1f}% {r['rss_mib']:>10.0f}"
    )


def summary(groups: list[ShapeGroup], results: list[dict], peak: float, startup: float, cores: int) -> list[str]:
    """Token-weighted medians and the projected wall time, engine and reference."""
    weights = [g.tokens for g in groups]
    gflops = weighted_median([r["engine_flop_s"] / 1e9 for r in results], weights)
    ratio = weighted_median([r["ratio"] for r in results], weights)
    gemm = weighted_median([r["gemm_flop_s"] for r in results], weights)
    gemm_share = weighted_median([r["gemm_share"] for r in results], weights)
    threads = max(g.threads for g in groups)
    parallel = side_by_side(cores, threads)
    engine = projected_seconds(groups, [r["engine_flop_s"] for r in results], startup, parallel)
    plain = projected_seconds(groups, [r["plain_flop_s"] for r in results], startup, parallel)
    runs = sum(len(g.run_ids) for g in groups)
    return [
        f"token-weighted median: engine {gflops:.2f} GFLOP/s = {100 * gflops * 1e9 / peak:.1f}% of the one-thread "
        f"peak; engine/reference {ratio:.2f}x",
        f"GEMMs inside the engine's step (mm, addmm, bmm; the attention scores run in SDPA): token-weighted median "
        f"{100 * gemm / peak:.1f}% of the one-thread peak, {100 * gemm_share:.1f}% of the step's time",
        f"projected wall time of these {runs} runs ({sum(g.flops for g in groups):.3g} matmul FLOPs), "
        f"{parallel} job(s) of {threads} thread(s) side by side on {cores} cores, {startup:.1f} s start-up per job: "
        f"engine {_duration(engine)}, reference {_duration(plain)}",
        "maxRSS: this process's peak so far (ru_maxrss after each shape: both models of every shape up to that row)",
    ]


def _duration(seconds: float) -> str:
    """Seconds, minutes or hours, whichever reads best."""
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from depthwidth.plan.config import read_overridden
    from depthwidth.plan.jobs import from_config
    from depthwidth.train.loop import keep_freed_memory, resolve_device

    keep_freed_memory()
    device = resolve_device(args.device)
    if args.reduce_overhead and not args.compare_steps:
        raise ValueError("--reduce-overhead: only with --compare-steps")
    plan = from_config(read_overridden(args.configfile, args.config))
    groups = select(group_shapes(plan, train_tokens(plan)), args.shapes)
    if not groups:
        raise ValueError(f"{args.configfile}: the config plans no sweep runs")
    if args.models:
        groups = model_groups(groups[0], args.models)
    vocab = max(g.spec["model"]["vocab_size"] for g in groups)
    shard = np.random.default_rng(0).integers(0, vocab, 500_000).astype(np.uint16 if vocab <= 65536 else np.int64)
    if device.type == "cuda":
        print(f"{args.configfile}: {len(groups)} shape(s); torch {torch.__version__}")
        if args.compare_steps:
            compare_steps(groups, shard, args, device)
        if args.compare_bf16 or not args.compare_steps:
            compare_precisions(groups, shard, args, device)
        return 0
    peak = one_thread_peak(args.matmul_n)
    startup = startup_seconds() if args.startup is None else args.startup
    print(f"{args.configfile}: {len(groups)} shape(s); torch {torch.__version__}")
    print(f"one-thread fp32 matmul peak ({args.matmul_n}^3, best of 6): {peak / 1e9:.1f} GFLOP/s")
    print(HEADER)
    print("-" * len(HEADER))
    results, threads = [], torch.get_num_threads()
    try:
        for group in groups:
            results.append(time_shape(group, shard, args.steps, args.warmup, args.seconds))
            print(row(group, results[-1], peak))
            sys.stdout.flush()
        print("\n".join(summary(groups, results, peak, startup, args.cores)))
        if args.compare_bf16:
            compare_precisions(groups, shard, args)
        if args.compare_steps:
            compare_steps(groups, shard, args, device)
    finally:
        torch.set_num_threads(threads)
    return 0
