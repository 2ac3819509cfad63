"""One optimizer step of a run, eager or replayed from a CUDA graph.

`train_step` is the step every CPU run takes: set the learning rate, drop the gradients, forward,
backward, clip, AdamW. On CUDA at batch 4 x 128 that step is launch-bound: a few hundred small kernels
whose launches cost more than their work (the README's H200 figures). `GraphedStep` captures the part
of the step that is the same every step (forward, backward and the clipping, `loss_and_gradients`) once
in a CUDA graph and replays it, one launch, on fixed input buffers; the learning rate, which changes
every step, stays outside the graph with AdamW (one fused kernel per parameter group). The kernels are
the eager step's, so a graphed run gives the eager run's numbers (scripts/gpu-check compares the two
curves byte for byte).

On the CPU there are no graphs: `GraphedStep` there re-executes `loss_and_gradients` where CUDA would
replay it, through the same buffers and in the same order, so the plumbing (warm-up, inputs copied into
fixed buffers, the gradients the optimizer reads, the learning rate set outside) is tested on every
machine (tests/test_train.py; `gpu-check --device cpu`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

# Eager steps before the capture: the first steps allocate the optimizer's and the libraries' lazy
# state (cuBLAS workspaces, autograd buffers), which a capture must not. PyTorch's own recipe takes 3.
WARMUP_STEPS = 3

STEP_MODES = ("auto", "eager", "graph")  # `train --step`: auto is graph on CUDA without torch.compile


def loss_and_gradients(model, x, y, grad_clip: float | None, autocast, z_loss: float | None = None) -> torch.Tensor:
    """Forward and backward on (x, y), then clip the gradients' global norm to `grad_clip`; returns the
    (detached) cross-entropy. With `z_loss` the objective adds z_loss x mean(logsumexp(logits)^2) (PaLM),
    which pulls the output logits' normaliser towards 1. The gradients must be None before (they are
    assigned, not accumulated)."""
    with autocast():
        logits, loss = model(x, y)
    if z_loss is None:
        loss.backward()
    else:
        (loss + z_loss * torch.logsumexp(logits.float(), dim=-1).square().mean()).backward()
    if grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    return loss.detach()


def set_lr(optimizer, lr: float) -> None:
    """The learning rate of every parameter group's next update."""
    for group in optimizer.param_groups:
        group["lr"] = lr


def train_step(model, optimizer, x, y, lr: float, grad_clip: float | None, autocast, z_loss=None) -> torch.Tensor:
    """One optimizer step at learning rate `lr`; returns the (detached) training loss."""
    set_lr(optimizer, lr)
    optimizer.zero_grad()
    loss = loss_and_gradients(model, x, y, grad_clip, autocast, z_loss)
    optimizer.step()
    return loss


class GraphedStep:
    """`train_step` as a callable `(x, y, lr) -> loss` whose forward, backward and clipping are captured
    in a CUDA graph after `WARMUP_STEPS` eager steps and replayed from then on (re-executed on the CPU).

    After the capture the parameters' `.grad` are the graph's own output buffers: nothing may set them
    to None (the optimizer here never does), or the next replay writes where nobody reads.
    """

    def __init__(self, model, optimizer, grad_clip, autocast, batch_shape: tuple[int, int], device, z_loss=None):
        self.model, self.optimizer, self.grad_clip, self.autocast = model, optimizer, grad_clip, autocast
        self.z_loss = z_loss
        self.device = torch.device(device)
        self.x = torch.zeros(batch_shape, dtype=torch.int64, device=self.device)  # the graph's fixed inputs
        self.y = torch.zeros_like(self.x)
        self.loss: torch.Tensor | None = None  # the graph's fixed output
        self.replay: Callable[[], None] | None = None
        self.eager_steps = 0

    @property
    def captured(self) -> bool:
        return self.replay is not None

    def __call__(self, x: torch.Tensor, y: torch.Tensor, lr: float) -> torch.Tensor:
        if not self.captured and self.eager_steps < WARMUP_STEPS:
            self.eager_steps += 1
            return self._warmup_step(x, y, lr)
        if not self.captured:
            self._capture()
        self.x.copy_(x, non_blocking=True)
        self.y.copy_(y, non_blocking=True)
        self.replay()
        set_lr(self.optimizer, lr)
        self.optimizer.step()
        return self.loss.clone()

    def _warmup_step(self, x, y, lr: float) -> torch.Tensor:
        """An eager step, on a side stream on CUDA (as a capture wants its lazy state made off the
        capturing stream)."""
        if self.device.type != "cuda":
            return train_step(self.model, self.optimizer, x, y, lr, self.grad_clip, self.autocast, self.z_loss)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            loss = train_step(self.model, self.optimizer, x, y, lr, self.grad_clip, self.autocast, self.z_loss)
        torch.cuda.current_stream(self.device).wait_stream(side)
        return loss

    def _capture(self) -> None:
        """Record forward, backward and clipping on the fixed buffers (CUDA), or keep them to re-execute (CPU)."""
        self.optimizer.zero_grad()  # the capture allocates the gradients anew, in the graph's memory

        def forward_backward() -> torch.Tensor:
            return loss_and_gradients(self.model, self.x, self.y, self.grad_clip, self.autocast, self.z_loss)

        if self.device.type == "cuda":
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.loss = forward_backward()
            self.replay = graph.replay
        else:

            def replay() -> None:
                self.optimizer.zero_grad()
                self.loss = forward_backward()

            self.replay = replay


def make_step(mode: str, model, step_model, optimizer, recipe: dict, n_ctx: int, device, autocast, compiled: bool):
    """The run's step, `(x, y, lr) -> loss`: `GraphedStep` for `mode` graph, or auto on CUDA without
    torch.compile; else `train_step` on `step_model` (the model or its torch.compile wrapper)."""
    if mode not in STEP_MODES:
        raise ValueError(f"--step: must be one of {', '.join(STEP_MODES)}, got {mode!r}")
    graphed = mode == "graph" or (mode == "auto" and torch.device(device).type == "cuda" and not compiled)
    if graphed and compiled:
        raise ValueError("--step graph: the spec's compile is true; a CUDA graph and torch.compile exclude each other")
    if graphed:
        batch = (recipe["batch_size"], n_ctx)
        return GraphedStep(model, optimizer, recipe["grad_clip"], autocast, batch, device, recipe.get("z_loss"))

    def eager(x, y, lr: float) -> torch.Tensor:
        return train_step(step_model, optimizer, x, y, lr, recipe["grad_clip"], autocast, recipe.get("z_loss"))

    return eager
