"""`python -m depthwidth bench pack`: how many training runs should share one device.

Small runs leave a GPU idle (docs/scale-out.md, "GPU sharing"): the paper config packs its runs up to
N = 1e7 `runs_per_gpu` to a GPU. This measures what that buys, on the machine at hand:

1. The shapes: by default the smallest and the largest (by non-embedding N) of the config's sweep
   shapes whose runs share a GPU, or of all its sweep shapes where none do; `--shapes` names others
   (run ids or L-d-h-f labels, as `bench sweep`).
2. For each K in `--processes`: K processes at once, each training one run of the shape through the
   engine's own step (`steps.engine_stepper`: the run's model, batch, learning rate, gradient
   clipping and precision) with the run's threads, on random tokens. Each warms up, waits
   for the others at a barrier, trains for `--seconds`, and reports its tokens and its peak memory
   (CUDA: `max_memory_allocated`; CPU: the process's peak RSS).
3. Per K: tokens/s summed over the K processes (what the device delivers to the plan), per process,
   and the sum against K = 1. A K whose processes fail (out of memory, say) prints the error.
4. Per shape, the K to use: the smallest whose summed tokens/s is within `--within` of the best
   measured; beside it the config's `runs_per_gpu`.
"""

from __future__ import annotations

import argparse
import os
import queue
import resource
import time
from pathlib import Path

TOLERANCE = 0.10  # default --within: a K this close to the best summed tokens/s is as good


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from depthwidth.plan.config import add_override_arguments

    parser.add_argument("--configfile", type=Path, default=Path("config/paper.yaml"), help="a workflow config")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument(
        "--processes",
        default=None,
        help="comma-separated process counts (default: 1, 2, 4, 8 and the config's runs_per_gpu on CUDA; "
        "1 and the jobs that fit side by side (cores // threads) on CPU)",
    )
    parser.add_argument("--shapes", default=None, help="run ids or L-d-h-f labels (default: smallest and largest)")
    parser.add_argument("--seconds", type=float, default=20.0, help="timed training per measurement, all at once")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per process before the barrier")
    parser.add_argument("--within", type=float, default=TOLERANCE, help="fraction of the best that counts as best")
    add_override_arguments(parser)


# ---------------------------------------------------------------------------------------------
# What to measure, and what to use


def default_shapes(groups: list) -> list:
    """The smallest and the largest shape (non-embedding N) of the groups that share a GPU, or of all."""
    from depthwidth.shapes import nonembedding

    shared = [g for g in groups if g.runs_per_gpu > 1] or groups
    by_n = sorted(shared, key=lambda g: nonembedding(*(g.spec["model"][k] for k in ("n_layer", "d_model", "d_ff"))))
    return by_n[:1] if len(by_n) == 1 else [by_n[0], by_n[-1]]


def default_processes(device_type: str, runs_per_gpu: int, cores: int, threads: int) -> list[int]:
    """CUDA: 1, 2, 4, 8 and the config's runs_per_gpu; CPU: 1 and the jobs of `threads` that fit in `cores`."""
    if device_type == "cuda":
        return sorted({1, 2, 4, 8, runs_per_gpu})
    from depthwidth.benchmarks.sweep import side_by_side

    return sorted({1, side_by_side(cores, threads)})


def parse_processes(text: str) -> list[int]:
    try:
        counts = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"--processes: expected comma-separated integers, got {text!r}") from None
    if not counts or counts[0] < 1:
        raise ValueError(f"--processes: counts must be >= 1, got {text!r}")
    return counts


def best_count(summed: dict[int, float], within: float = TOLERANCE) -> int:
    """The smallest process count whose summed tokens/s is at least (1 - within) x the best measured."""
    if not summed:
        raise ValueError("best_count: no measurement succeeded")
    best = max(summed.values())
    return min(k for k, rate in summed.items() if rate >= (1 - within) * best)


# ---------------------------------------------------------------------------------------------
# One measurement: K processes at once


def _worker(spec: dict, threads: int, device: str, warmup: int, seconds: float, barrier, results) -> None:
    """One process of a measurement: warm up, wait for the others, train `seconds`, report
    (tokens, seconds, peak memory bytes), or ("error", text)."""
    try:
        import numpy as np
        import torch

        from depthwidth.benchmarks.steps import engine_stepper
        from depthwidth.train.loop import keep_freed_memory

        keep_freed_memory()
        torch.set_num_threads(threads)
        dev = torch.device(device)
        vocab = spec["model"]["vocab_size"]
        shard = np.random.default_rng(0).integers(0, vocab, 500_000).astype(np.int64)
        step = engine_stepper(spec, shard, np.random.default_rng(spec["seed"]), dev)
        for _ in range(warmup):
            step()
        barrier.wait()
        steps, start = 0, time.perf_counter()
        while not steps or time.perf_counter() - start < seconds:
            step()  # returns after the device has finished the step
            steps += 1
        elapsed = time.perf_counter() - start
        if dev.type == "cuda":
            peak = torch.cuda.max_memory_allocated(dev)
        else:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
        tokens = steps * spec["recipe"]["batch_size"] * spec["model"]["n_ctx"]
        results.put((tokens, elapsed, peak))
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which prints it
        barrier.abort()  # the others stop waiting
        results.put(("error", f"{type(err).__name__}: {err}".splitlines()[0]))


def measure(spec: dict, threads: int, device: str, count: int, warmup: int, seconds: float) -> dict:
    """`count` processes training `spec` at once: summed and per-process tokens/s, peak memory per process,
    or the first error."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")  # CUDA cannot be forked; spawn is also what a scheduler's jobs are
    barrier, results = ctx.Barrier(count), ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(spec, threads, device, warmup, seconds, barrier, results), daemon=True)
        for _ in range(count)
    ]
    for proc in procs:
        proc.start()
    reports = []
    while len(reports) < count:
        try:
            reports.append(results.get(timeout=1.0))
        except queue.Empty:
            crashed = [proc.exitcode for proc in procs if proc.exitcode not in (None, 0)]  # killed, no report
            if crashed:
                barrier.abort()  # the others stop waiting for it
                if not any(proc.is_alive() for proc in procs) and results.empty():
                    reports.append(("error", f"a process exited with code {crashed[0]} and no report"))
                    break
    for proc in procs:
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
    failures = [r[1] for r in reports if r[0] == "error"]
    if failures:  # the cause, not the others' broken barrier
        causes = [text for text in failures if not text.startswith("BrokenBarrierError")]
        return {"error": causes[0] if causes else "a process failed"}
    rates = [tokens / elapsed for tokens, elapsed, _ in reports]
    return {"summed": sum(rates), "per_process": sum(rates) / count, "peak_mib": max(r[2] for r in reports) / 2**20}


# ---------------------------------------------------------------------------------------------
# The command


HEADER = (
    f"{'shape':<18} {'thr':>3} {'procs':>5} {'tok/s each':>11} {'tok/s summed':>13} {'x one':>6} {'peak MiB each':>13}"
)


def run(args: argparse.Namespace) -> int:
    import torch

    from depthwidth.benchmarks.sweep import group_shapes, select, side_by_side
    from depthwidth.plan.config import read_overridden
    from depthwidth.plan.jobs import from_config
    from depthwidth.train.loop import resolve_device

    if not 0 <= args.within < 1:
        raise ValueError(f"--within: must be in [0, 1), got {args.within}")
    requested = parse_processes(args.processes) if args.processes else None
    device = resolve_device(args.device)
    groups = group_shapes(from_config(read_overridden(args.configfile, args.config)))
    if not groups:
        raise ValueError(f"{args.configfile}: the config plans no sweep runs")
    shapes = select(groups, args.shapes) if args.shapes else default_shapes(groups)
    cores = os.cpu_count() or 1
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"{cores} cores"
    print(f"{args.configfile}: device {device} ({name}), torch {torch.__version__}; {len(shapes)} shape(s)")
    print(f"{args.seconds:g} s of training per measurement, all processes at once")
    print(HEADER)
    print("-" * len(HEADER))
    for group in shapes:
        counts = requested or default_processes(device.type, group.runs_per_gpu, cores, group.threads)
        summed = {}
        for count in counts:
            result = measure(group.spec, group.threads, str(device), count, args.warmup, args.seconds)
            lead = f"{group.label:<18} {group.threads:>3} {count:>5}"
            if "error" in result:
                print(f"{lead}  failed: {result['error']}", flush=True)
                continue
            summed[count] = result["summed"]
            one = f"{result['summed'] / summed[1]:>5.2f}x" if 1 in summed else f"{'-':>6}"
            print(
                f"{lead} {result['per_process']:>11,.0f} {result['summed']:>13,.0f} {one} {result['peak_mib']:>13,.0f}",
                flush=True,
            )
        if summed:
            planned = (
                f"the config has runs_per_gpu {group.runs_per_gpu}"
                if device.type == "cuda"
                else f"{side_by_side(cores, group.threads)} job(s) of {group.threads} thread(s) fit these cores"
            )
            print(
                f"{group.label}: use {best_count(summed, args.within)} at once (the fewest processes within "
                f"{100 * args.within:g}% of the best summed tokens/s); {planned}"
            )
    return 0
