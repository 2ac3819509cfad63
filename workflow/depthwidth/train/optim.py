"""The optimizer and its learning-rate schedule.

AdamW with weight decay on matrices only; linear warm-up, then cosine decay to
`lr_final_frac * lr`; the peak is a number or Kaplan et al.'s rule LR(N).
"""

from __future__ import annotations

import math

import torch


def peak_lr(recipe: dict) -> float:
    """The recipe's peak learning rate (the plan resolved a config's "kaplan" to its number)."""
    return float(recipe["lr"])


def lr_at(step: int, peak: float, warmup_steps: int, total_steps: int, final_frac: float) -> float:
    """Learning rate of optimizer step `step` (0-based): linear warm-up, then cosine decay."""
    if step < warmup_steps:
        return peak * (step + 1) / warmup_steps
    span = max(total_steps - warmup_steps, 1)
    progress = min((step - warmup_steps) / span, 1.0)
    return peak * (final_frac + (1 - final_frac) * 0.5 * (1 + math.cos(math.pi * progress)))


def make_optimizer(model: torch.nn.Module, recipe: dict) -> AdamW:
    """AdamW with weight decay on matrices (dim >= 2) and none on gains, biases and scalars."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": recipe["weight_decay"]},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return AdamW(groups, betas=(recipe["beta1"], recipe["beta2"]), eps=recipe["eps"])


class AdamW:
    """AdamW (decoupled weight decay) on torch's fused kernel, the one `torch.optim.AdamW(fused=True)`
    runs: the same update bit for bit (tests/test_train.py), one kernel per parameter group.

    Why not torch.optim: the first construction or step of any torch.optim optimizer imports
    torch._dynamo, about 2 s of every training job's start-up (7% of the smallest sweep job).
    The training loop uses `param_groups` (each with params, lr, weight_decay), `zero_grad`, `step`,
    `state_dict` and `load_state_dict`; the learning rate is set on the groups before each step.
    """

    def __init__(self, groups: list[dict], betas: tuple[float, float], eps: float):
        self.param_groups = [{**group, "params": list(group["params"]), "lr": group.get("lr", 0.0)} for group in groups]
        self.betas, self.eps = betas, eps
        # per group, per parameter: the step count (a float32 scalar, as torch keeps it) and both moments
        self.state = [[_zero_moments(p) for p in group["params"]] for group in self.param_groups]

    def zero_grad(self) -> None:
        """Drop every gradient (the next backward pass allocates them anew)."""
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One update of every parameter that has a gradient."""
        beta1, beta2 = self.betas
        for group, states in zip(self.param_groups, self.state):
            live = [(p, s) for p, s in zip(group["params"], states) if p.grad is not None]
            if not live:
                continue
            steps = [s["step"] for _, s in live]
            torch._foreach_add_(steps, 1)
            torch._fused_adamw_(
                [p for p, _ in live],
                [p.grad for p, _ in live],
                [s["exp_avg"] for _, s in live],
                [s["exp_avg_sq"] for _, s in live],
                [],  # max_exp_avg_sqs: amsgrad is off
                steps,
                amsgrad=False,
                lr=group["lr"],
                beta1=beta1,
                beta2=beta2,
                weight_decay=group["weight_decay"],
                eps=self.eps,
                maximize=False,
                grad_scale=None,
                found_inf=None,
            )

    def state_dict(self) -> dict:
        """The moments and step counts (references, as torch's), and each group's lr and weight decay."""
        hyper = [{k: v for k, v in group.items() if k != "params"} for group in self.param_groups]
        return {"state": self.state, "param_groups": hyper, "betas": self.betas, "eps": self.eps}

    def load_state_dict(self, saved: dict) -> None:
        """Copy a `state_dict` of an optimizer over the same parameters into this one."""
        shapes = [[tuple(p.shape) for p in group["params"]] for group in self.param_groups]
        if [[tuple(s["exp_avg"].shape) for s in states] for states in saved["state"]] != shapes:
            raise ValueError("optimizer state: its parameters do not match the model's")
        for states, saved_states in zip(self.state, saved["state"]):
            for state, saved_state in zip(states, saved_states):
                for key, value in state.items():
                    value.copy_(saved_state[key])
        for group, hyper in zip(self.param_groups, saved["param_groups"]):
            group.update(hyper)
        self.betas, self.eps = tuple(saved["betas"]), saved["eps"]


def _zero_moments(p: torch.Tensor) -> dict[str, torch.Tensor]:
    return {
        "step": torch.zeros((), dtype=torch.float32, device=p.device),
        "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
        "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
    }
