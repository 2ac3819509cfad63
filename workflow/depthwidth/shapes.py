"""Model shapes and their parameter counts, without torch (the Snakefile plans sweeps with it).

A shape is (n_layer L, d_model d, n_head, d_ff). Counts follow the model exactly
(`depthwidth.train.model.GPT`, LayerNorm weights without biases, tied LM head):

  non-embedding N = L (4 d^2 + 2 d d_ff + 2 d) + d   (+ L per trainable attention scalar)
  embedding       = vocab d + n_ctx d
  Kaplan          = 2 d L (2 d + d_ff)              (= 12 L d^2 when d_ff = 4 d)

`shape_at(n, ...)` inverts the count: the width whose N is closest to a target.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Shape:
    n_layer: int
    d_model: int
    n_head: int
    d_ff: int

    @property
    def aspect_ratio(self) -> float:
        """Kaplan's aspect ratio d_model / n_layer."""
        return self.d_model / self.n_layer

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head

    @property
    def n_nonembedding(self) -> int:
        """Non-embedding N of this shape (`nonembedding`)."""
        return nonembedding(self.n_layer, self.d_model, self.d_ff)

    def run_id(self) -> str:
        return f"L{self.n_layer}-d{self.d_model}-h{self.n_head}-f{self.d_ff}"

    def to_dict(self) -> dict:
        return asdict(self)


def count_params(
    n_layer: int,
    d_model: int,
    d_ff: int,
    vocab_size: int,
    n_ctx: int,
    bias: bool = False,
    extra_per_layer: int = 0,
) -> dict[str, int]:
    """Parameter counts of the model from its shape alone (see module docstring).

    total: every trainable parameter (tied LM head once); nonembedding: total minus token and
    position embeddings; kaplan: 2 d L (2 d + d_ff). `extra_per_layer` parameters per layer
    (shaped attention's alpha, beta, gamma, tau0 when trainable; QK-LayerNorms) count as non-embedding.
    """
    d, L, f, b = d_model, n_layer, d_ff, int(bias)
    layer_norm = d * (1 + b)
    attention = 4 * d * d + 4 * d * b
    mlp = 2 * d * f + (f + d) * b
    nonembedding = L * (2 * layer_norm + attention + mlp + extra_per_layer) + layer_norm
    embedding = vocab_size * d + n_ctx * d
    return {"total": nonembedding + embedding, "nonembedding": nonembedding, "kaplan": 2 * d * L * (2 * d + f)}


def flops_per_token(n_layer: int, d_model: int, d_ff: int, vocab_size: int, n_ctx: int, nonembedding: int) -> dict:
    """Training FLOPs per token (forward + backward = 3 x forward; 1 multiply-add = 2 FLOPs).

    kaplan: Kaplan's estimate 6 N + 6 L n_ctx d (N non-embedding; the attention term is their
            2 L n_ctx d_attn forward), without the LM head.
    matmul: every matmul the model runs: QKV and output projections, MLP, attention scores
            Q K^T and A V (counted over the full n_ctx x n_ctx square, as the kernels do, not
            the causal half), and the LM head (2 d vocab per token forward).
    """
    d, L, f, T, V = d_model, n_layer, d_ff, n_ctx, vocab_size
    fwd_layer = 2 * (4 * d * d + 2 * d * f) + 2 * 2 * T * d
    fwd = L * fwd_layer + 2 * d * V
    return {"kaplan": float(6 * nonembedding + 6 * L * T * d), "matmul": float(3 * fwd)}


def nonembedding(n_layer: int, d_model: int, d_ff: int) -> int:
    """Non-embedding parameters of a shape (no biases, no trainable scalars)."""
    return count_params(n_layer, d_model, d_ff, vocab_size=0, n_ctx=0)["nonembedding"]


def kaplan_lr(n_nonembedding: float) -> float:
    """Kaplan et al. (2020) learning rate rule LR(N) = 0.003239 - 0.0001395 ln N (N non-embedding)."""
    return 0.003239 - 0.0001395 * math.log(n_nonembedding)


def whole_layers(T: float, n: int) -> int | None:
    """The depth T n of a shaped network of width n run to terminal time T, in blocks; None unless it is
    whole (within 1e-9, relative)."""
    depth = T * n
    return round(depth) if abs(depth - round(depth)) <= 1e-9 * max(1.0, depth) else None


def heads_for(d_model: int, head_dim: int) -> int:
    """Number of heads: the divisor of d_model whose head size is closest to `head_dim` (ties: more heads)."""
    small = [h for h in range(1, math.isqrt(d_model) + 1) if d_model % h == 0]
    divisors = small + [d_model // h for h in small]
    return min(divisors, key=lambda h: (abs(math.log(d_model / h / head_dim)), -h))


def width_for_n(n: float, n_layer: int, ff_ratio: float = 4.0) -> float:
    """The (real) width whose exact non-embedding count at depth `n_layer` is n.

    Solves L (4 + 2 r) d^2 + (2 L + 1) d - n = 0 (d_ff = r d, the count of `nonembedding`).
    """
    a, b = n_layer * (4 + 2 * ff_ratio), 2 * n_layer + 1
    return (-b + math.sqrt(b * b + 4 * a * n)) / (2 * a)


def width_at(n_target: float, n_layer: int, ff_ratio: float, multiple: int) -> int:
    """The multiple of `multiple` whose non-embedding count at depth `n_layer` is closest to n_target."""
    # N ~ L (4 + 2 r) d^2: start from the continuous solution, then compare the neighbours.
    guess = math.sqrt(n_target / (n_layer * (4 + 2 * ff_ratio)))
    low = max(multiple, multiple * math.floor(guess / multiple))
    candidates = [low + k * multiple for k in range(-2, 4) if low + k * multiple >= multiple]
    return min(candidates, key=lambda d: abs(nonembedding(n_layer, d, round(ff_ratio * d)) - n_target))


def shape_at(
    n_target: float,
    n_layer: int,
    ff_ratio: float = 4.0,
    head_dim: int = 32,
    multiple: int = 2,
    tolerance: float = 0.05,
) -> Shape:
    """The shape of depth `n_layer` whose non-embedding N is closest to `n_target`.

    Raises ValueError when no width reaches N within `tolerance` (relative), naming the depth
    and N, so a sweep never runs a shape that is not at its nominal size.
    """
    d = width_at(n_target, n_layer, ff_ratio, multiple)
    d_ff = max(1, round(ff_ratio * d))
    shape = Shape(n_layer, d, heads_for(d, head_dim), d_ff)
    error = nonembedding(n_layer, d, d_ff) / n_target - 1
    if abs(error) > tolerance:
        raise ValueError(
            f"no width reaches N={n_target:.3g} at depth {n_layer} within {tolerance:.0%} "
            f"(closest: d={d}, off by {error:+.1%}); change N, the depth, or the width multiple"
        )
    return shape
