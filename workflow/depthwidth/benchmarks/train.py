"""`python -m depthwidth bench train`: training tokens/s and the fraction of the matmul peak.

1. The matmul peak of this machine in the step's precision (`--precision`, fp32 or bf16): best of
   several large square matmuls (n^3 multiply-adds = 2 n^3 FLOPs each).
2. For each shape, timed training steps through the same code as a real run (memmapped shard,
   `sample_batch`, `train_step`, fused AdamW, gradient clipping). Achieved FLOP/s counts every
   matmul (`model.flops_per_token(...)["matmul"]`: QKV and output projections, MLP, Q K^T and
   A V over the full n_ctx square, LM head; forward + backward = 3 x forward).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
from pathlib import Path

from depthwidth.benchmarks.steps import matmul_peak

SHAPES = ((2, 64), (4, 128), (6, 256))  # (n_layer, d_model)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--steps", type=int, default=8, help="timed steps per shape (after 2 warm-up steps)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (slow first step)")
    parser.add_argument(
        "--precision", choices=("fp32", "bf16"), default="fp32", help="recipe.precision; %% peak is of its own dtype"
    )
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    parser.add_argument("--attention", choices=("standard", "shaped"), default="standard")
    parser.add_argument("--batch", type=int, default=32, help="sequences per step")
    parser.add_argument("--n-ctx", type=int, default=128, help="context length, tokens")
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--matmul-n", type=int, default=2048, help="size of the square peak matmuls")
    parser.add_argument(
        "--shapes", default=",".join(f"{L}x{d}" for L, d in SHAPES), help="comma-separated LxD shapes, e.g. 2x64,6x256"
    )


def bench_shape(n_layer: int, d_model: int, args, device, shard) -> dict:
    """Median step time of `args.steps` training steps at one shape (after 2 warm-up steps)."""
    import numpy as np

    from depthwidth.benchmarks.steps import engine_stepper
    from depthwidth.spec import complete
    from depthwidth.train.model import count_params, flops_per_token

    spec = complete(
        "train_spec",
        {
            "data": "-",
            "seed": 0,
            "compile": args.compile,
            "model": {
                "vocab_size": args.vocab,
                "n_ctx": args.n_ctx,
                "n_layer": n_layer,
                "d_model": d_model,
                "n_head": max(1, d_model // 64),
                "attention": args.attention,
            },
            "recipe": {
                "token_budget": 1,
                "batch_size": args.batch,
                "lr": 1e-3,
                "grad_clip": 1.0,
                "precision": args.precision,
            },  # fmt: skip
        },
    )
    step = engine_stepper(spec, shard, np.random.default_rng(0), device)
    warmup = step() + step()
    times = [step() for _ in range(args.steps)]
    sec = float(np.median(times))
    tokens = args.batch * args.n_ctx
    cfg = spec["model"]
    flops = flops_per_token(cfg)["matmul"] * tokens
    return {
        "L": n_layer,
        "d": d_model,
        "N_nonemb": count_params(cfg)["nonembedding"],
        "step_s": sec,
        "tok_s": tokens / sec,
        "flop_s": flops / sec,
        "warmup_s": warmup,
    }


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import torch

    from depthwidth.train.loop import MATMUL_DTYPES, resolve_device

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    try:
        shapes = [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes.split(",")]
    except ValueError:
        raise ValueError(f"--shapes: expected LxD,LxD,..., got {args.shapes!r}") from None

    peak = matmul_peak(args.matmul_n, device, dtype=MATMUL_DTYPES[args.precision])
    print(
        f"device {device}, threads {torch.get_num_threads()}, torch {torch.__version__}, "
        f"compile {args.compile}, attention {args.attention}, precision {args.precision}"
    )
    print(f"{args.precision} matmul peak ({args.matmul_n}^3, best of 6): {peak / 1e9:.1f} GFLOP/s")

    with tempfile.TemporaryDirectory() as tmp:
        # A memmapped uint16 shard, so data loading is part of what is timed.
        path = Path(tmp) / "train.bin"
        np.random.default_rng(0).integers(0, args.vocab, 2_000_000, dtype=np.uint16).tofile(path)
        shard = np.memmap(path, dtype=np.uint16, mode="r")
        header = (
            f"{'L':>3} {'d':>5} {'N_nonemb':>10} {'step s':>8} {'tokens/s':>10} "
            f"{'GFLOP/s':>9} {'% peak':>7} {'warm-up s':>10}"
        )
        print(header)
        print("-" * len(header))
        for n_layer, d_model in shapes:
            r = bench_shape(n_layer, d_model, args, device, shard)
            print(
                f"{r['L']:>3} {r['d']:>5} {r['N_nonemb']:>10,} {r['step_s']:>8.3f} {r['tok_s']:>10,.0f} "
                f"{r['flop_s'] / 1e9:>9.1f} {100 * r['flop_s'] / peak:>6.1f}% {r['warmup_s']:>10.1f}"
            )
            sys.stdout.flush()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB (Linux)
    print(f"peak RSS {rss:.0f} MiB (pid {os.getpid()})")
    return 0
