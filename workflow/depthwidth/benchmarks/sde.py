"""`python -m depthwidth bench sde`: cost of SDE paths vs finite networks for the same samples.

Prints samples x steps per second for the covariance SDE (Euler-Maruyama, float64), the literal
finite network (`dense`, float32) and the exact-in-law `projected` sampler at width n, all for
block `attention`, m tokens, T = 1, and the cost ratio per terminal sample (same T).
"""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--samples", type=int, default=2000, help="SDE and projected samples")
    parser.add_argument("--dense-samples", type=int, default=32, help="dense-network samples (cost is extrapolated)")
    parser.add_argument("--n", type=int, default=256, help="width of the finite networks")
    parser.add_argument("--m", type=int, default=4, help="number of tokens")
    parser.add_argument("--dt", type=float, default=0.005, help="SDE step")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run(args: argparse.Namespace) -> int:
    for name in ("samples", "dense_samples", "n", "threads"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be positive, got {value}")
    if args.m < 2 or args.n < args.m:
        raise ValueError(f"--m must be at least 2 and at most --n, got m={args.m}, n={args.n}")
    if not args.dt > 0:
        raise ValueError(f"--dt must be positive, got {args.dt}")
    import torch

    from depthwidth import spec
    from depthwidth.shaped import finite, sde

    if args.threads:
        torch.set_num_threads(args.threads)
    # the schema's default setting (what a config that sets none simulates)
    setting = spec.complete("sample_spec", {"source": "sde", "attention": "shaped", "block": "attention", "n": None})
    T, block = setting["T"], setting["block"]
    V0 = sde.equicorrelated(args.m, setting["rho0"])
    p = sde.ShapeParams(setting["gamma"], setting["tau0"], setting["c_plus"], setting["c_minus"])
    steps = sde.n_steps_for(T, args.dt)
    depth = finite.depth_for(T, args.n)
    # Warm-up (first-call allocations), then the timed runs.
    sde.simulate(V0, sde.Paths(0.05, args.dt, block, p, 8, seed=0))
    t_sde = _timed(lambda: sde.simulate(V0, sde.Paths(T, args.dt, block, p, args.samples, seed=0), record_every=10**9))
    t_dense = _timed(
        lambda: finite.simulate(
            V0,
            finite.Networks(args.n, T, block, "shaped", p, args.dense_samples, seed=0, method="dense"),
            record_every=10**9,
        )
    )
    t_proj = _timed(
        lambda: finite.simulate(
            V0,
            finite.Networks(args.n, T, block, "shaped", p, args.samples, seed=0, method="projected"),
            record_every=10**9,
        )
    )
    per_sample = {
        "sde": t_sde / args.samples,
        "dense": t_dense / args.dense_samples,
        "projected": t_proj / args.samples,
    }
    rate = {
        "sde": args.samples * steps / t_sde,
        "dense": args.dense_samples * depth / t_dense,
        "projected": args.samples * depth / t_proj,
    }
    print(f"bench sde: block={block} m={args.m} T={T} threads={torch.get_num_threads()}")
    print(
        f"  SDE                  dt={args.dt:g} ({steps} steps): {rate['sde']:12.4g} samples x steps / s"
        f"   {per_sample['sde'] * 1e3:9.4g} ms / terminal sample"
    )
    print(
        f"  finite dense     n={args.n} ({depth} layers): {rate['dense']:12.4g} samples x layers / s"
        f"   {per_sample['dense'] * 1e3:9.4g} ms / terminal sample"
    )
    print(
        f"  finite projected n={args.n} ({depth} layers): {rate['projected']:12.4g} samples x layers / s"
        f"   {per_sample['projected'] * 1e3:9.4g} ms / terminal sample"
    )
    print(
        f"  cost ratio per terminal sample: dense / SDE = {per_sample['dense'] / per_sample['sde']:.4g}, "
        f"projected / SDE = {per_sample['projected'] / per_sample['sde']:.4g}"
    )
    return 0
