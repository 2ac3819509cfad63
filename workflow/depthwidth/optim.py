"""The optimizer and its learning-rate schedule.

AdamW with weight decay on matrices only; linear warm-up, then cosine decay to
`lr_final_frac * lr`; the peak is a number or Kaplan et al.'s rule LR(N).
"""

from __future__ import annotations

import math

import torch

from depthwidth.shapes import kaplan_lr


def peak_lr(recipe: dict, n_nonembedding: int) -> float:
    """The recipe's peak learning rate: its number, or Kaplan's rule at N. Raises ValueError if <= 0."""
    peak = kaplan_lr(n_nonembedding) if recipe["lr"] == "kaplan" else float(recipe["lr"])
    if not peak > 0:
        raise ValueError(f"recipe.lr: Kaplan's rule gives {peak:.3g} <= 0 at N = {n_nonembedding}")
    return peak


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
