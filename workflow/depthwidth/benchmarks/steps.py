"""What the benches share: a training step through the engine's own code, and the matmul peak it is
measured against."""

from __future__ import annotations

import time

import torch


def matmul_peak(n: int, device, repeats: int = 6, dtype=None) -> float:
    """Best-of-`repeats` FLOP/s of an n x n x n matmul in `dtype` (None: fp32)."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(repeats + 1):  # the first call warms up
        _sync(device)
        t = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def resolved(spec: dict) -> tuple[dict, float]:
    """A plan's (complete) spec checked as a job checks it, with no data folder, and its peak learning rate."""
    from depthwidth.train.loop import validate_spec
    from depthwidth.train.optim import peak_lr

    spec = validate_spec({**spec, "data": "-"})
    return spec, peak_lr(spec["recipe"])


# How a bench may run the engine's step: as a job on the device does (auto: `train.step.make_step`'s
# choice), eager, replayed from a CUDA graph (`train.step.GraphedStep`), or under
# torch.compile(mode="reduce-overhead") (its own CUDA graphs: the alternative to measure against the graph).
STEPPERS = ("auto", "eager", "graph", "reduce-overhead")


def engine_stepper(spec: dict, shard, rng, device: torch.device | None = None, mode: str = "auto"):
    """A function that trains one batch of the spec's model (drawn from `shard` with `rng`) through the
    engine's own code, as a training job does (`GPT`, `make_optimizer`, the step of `train.step`, the
    recipe's clipping and precision), and returns its seconds. The model is seeded with the spec's seed.
    mode: one of `STEPPERS` (the spec's compile applies to auto and eager)."""
    from depthwidth.train.loop import autocast_for, sample_batch
    from depthwidth.train.model import GPT
    from depthwidth.train.optim import make_optimizer
    from depthwidth.train.step import make_step

    if mode not in STEPPERS:
        raise ValueError(f"bench step: must be one of {', '.join(STEPPERS)}, got {mode!r}")
    device = device or torch.device("cpu")
    spec, lr = resolved(spec)
    m, r = spec["model"], spec["recipe"]
    torch.manual_seed(spec["seed"])
    model = GPT(m).to(device)
    optimizer = make_optimizer(model, r)
    compiled = spec["compile"] and mode in ("auto", "eager")
    if mode == "reduce-overhead":
        call = torch.compile(model, mode="reduce-overhead")
    else:
        call = torch.compile(model) if compiled else model
    autocast = autocast_for(r["precision"], device)
    step_mode = "eager" if mode == "reduce-overhead" else mode
    train = make_step(step_mode, model, call, optimizer, r, m["n_ctx"], device, autocast, compiled)

    def step() -> float:
        t = time.perf_counter()
        x, y = (tensor.to(device) for tensor in sample_batch(shard, rng, r["batch_size"], m["n_ctx"]))
        float(train(x, y, lr))  # float(): waits for the device
        return time.perf_counter() - t

    return step
