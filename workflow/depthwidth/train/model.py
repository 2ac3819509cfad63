"""Decoder-only Transformer (pre-LayerNorm, nanoGPT-style) with three attention kinds.

- `standard`: causal softmax attention through `F.scaled_dot_product_attention`.
- `shaped`: shaped attention (Noci et al. 2023, docs/science.md §4.3) adapted to a causal LM:
      A = alpha I + beta softmax_causal(Q K^T / tau) - gamma C,   output = A V  (per head),
  with C the causal uniform matrix (C[i, j] = 1 / (i + 1) for j <= i, else 0) and
  tau = tau0 sqrt(d_model d_head). At initialization the logits are small, the softmax is close
  to C, and beta = gamma makes A close to alpha I: the attention is centred at the identity.
- `temperature`: the temperature-only control, plain causal softmax attention (no identity, no
  centring) at the shaped temperature: softmax_causal(Q K^T / tau), the same tau as `shaped`.

Also here: parameter counting from the config alone (`count_params`) and the matmul FLOPs per
token (`flops_per_token`), so a sweep planner can pick shapes without building models.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

from depthwidth import shapes
from depthwidth.contracts import ATTENTION_KINDS, ATTENTION_SCALARS, TEMPERED_KINDS

SHAPED_DEFAULTS = {"alpha": 1.0, "beta": 1.0, "gamma": 1.0, "tau0": 1.0, "trainable": False}


@dataclass(frozen=True)
class ModelConfig:
    """Shape of the model. Sizes are counts (tokens, channels, layers)."""

    vocab_size: int
    n_ctx: int  # context length in tokens
    n_layer: int
    d_model: int
    n_head: int
    d_ff: int | None = None  # MLP hidden width; None means 4 * d_model
    attention: str = "standard"
    shaped: dict = field(default_factory=lambda: dict(SHAPED_DEFAULTS))
    bias: bool = False  # biases in Linear and LayerNorm (Kaplan's count excludes them anyway)
    qk_norm: bool = False  # LayerNorm on each head's queries and keys (issue 51's stall pilot; not the papers' GPT)

    def __post_init__(self) -> None:
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        object.__setattr__(self, "shaped", {**SHAPED_DEFAULTS, **self.shaped})
        if self.attention not in ATTENTION_KINDS:
            raise ValueError(f"attention: must be one of {ATTENTION_KINDS}, got {self.attention!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model: {self.d_model} is not divisible by n_head = {self.n_head}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head

    def to_dict(self) -> dict:
        return asdict(self)


def as_config(cfg: ModelConfig | dict) -> ModelConfig:
    """Accept a ModelConfig or a plain dict of its fields."""
    return cfg if isinstance(cfg, ModelConfig) else ModelConfig(**cfg)


# ---------------------------------------------------------------------------------------------
# Layers


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, `standard`, `shaped` or `temperature`, with a fused QKV projection."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_head, self.d_head, self.kind = cfg.n_head, cfg.d_head, cfg.attention
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=cfg.bias)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=cfg.bias)
        self.last_entropy: torch.Tensor | None = None  # [n_head], set when entropy is requested
        if cfg.qk_norm:
            # QK-LayerNorm (Dehghani et al. 2023; Wortsman et al. 2023): the logits q k / sqrt(d_head) can
            # grow only through the two gains, not through the weights feeding q and k, the growth that
            # collapses a stalled run's first-layer attention (config/README.md, "Stalls")
            self.q_norm = nn.LayerNorm(cfg.d_head, bias=cfg.bias)
            self.k_norm = nn.LayerNorm(cfg.d_head, bias=cfg.bias)
        self.qk_norm = cfg.qk_norm
        if self.kind in TEMPERED_KINDS:
            s = cfg.shaped
            # tau = tau0 * sqrt(d_model * d_head): logits shrink with width so the softmax stays
            # O(1/sqrt(width)) away from uniform at initialization.
            self.tau_scale = math.sqrt(cfg.d_model * cfg.d_head)
            for name in ATTENTION_SCALARS[self.kind]:
                value = torch.tensor(float(s[name]))
                if s["trainable"]:
                    self.register_parameter(name, nn.Parameter(value))
                else:
                    self.register_buffer(name, value)

    def heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
        """q, k, v as [B, H, T, d_head] views and the scale of the logits q k^T (what the softmax reads)."""
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_head, self.d_head).permute(2, 0, 3, 1, 4)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.kind in TEMPERED_KINDS:
            return q / (self.tau0 * self.tau_scale), k, v, 1.0  # the temperature is applied to q
        return q, k, v, 1.0 / math.sqrt(self.d_head)

    def forward(self, x: torch.Tensor, return_entropy: bool = False) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v, scale = self.heads(x)
        if return_entropy:
            p = causal_softmax(q, k, scale)
            # Entropy in nats of each query's attention row, averaged over batch and queries.
            self.last_entropy = torch.special.entr(p).sum(-1).mean(dim=(0, 2)).detach()
            y = p @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)

        if self.kind == "shaped":
            # A V = alpha V + beta softmax V - gamma C V;  C V is the running mean of V over time.
            y = self.alpha * v + self.beta * y - self.gamma * causal_mean(v)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


def causal_softmax(q: torch.Tensor, k: torch.Tensor, scale: float) -> torch.Tensor:
    """Row-softmax of scale * q k^T over positions j <= i (explicit [.., T, T] matrix)."""
    T = q.shape[-2]
    logits = (q @ k.transpose(-2, -1)) * scale
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    return logits.masked_fill(~mask, float("-inf")).softmax(dim=-1)


def causal_mean(v: torch.Tensor) -> torch.Tensor:
    """C v with C[i, j] = 1/(i+1) for j <= i: the mean of v over positions 0..i (dim -2)."""
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype).unsqueeze(-1)
    return v.cumsum(dim=-2) / counts


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.d_ff, bias=cfg.bias)
        self.proj = nn.Linear(cfg.d_ff, cfg.d_model, bias=cfg.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    """Pre-LayerNorm residual block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, return_entropy: bool = False) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), return_entropy)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Token + learned position embeddings, n_layer blocks, final LayerNorm, tied LM head."""

    def __init__(self, cfg: ModelConfig | dict):
        super().__init__()
        cfg = self.cfg = as_config(cfg)
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.n_ctx, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model, bias=cfg.bias)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied input/output embedding
        self.apply(self._init_weights)
        # GPT-2: scale the residual-branch output projections by 1/sqrt(2 L) at init.
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None, return_entropy: bool = False):
        """Logits [B, T, vocab] and the mean cross-entropy (nats/token) if targets are given.

        With `return_entropy=True` also returns the attention entropy, a [n_layer, n_head] tensor
        (nats, mean over batch and query positions); that path builds the softmax explicitly.
        """
        B, T = idx.shape
        if self.cfg.n_ctx < T:
            raise ValueError(f"sequence length {T} exceeds n_ctx = {self.cfg.n_ctx}")
        pos = torch.arange(T, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x, return_entropy)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1))
        if return_entropy:
            entropy = torch.stack([b.attn.last_entropy for b in self.blocks])
            return logits, loss, entropy
        return logits, loss

    @torch.no_grad()
    def attention_entropy(self, idx: torch.Tensor) -> torch.Tensor:
        """Attention entropy per layer and head, [n_layer, n_head], in nats."""
        return self(idx, return_entropy=True)[2].float()


# ---------------------------------------------------------------------------------------------
# Counting


def count_params(cfg: ModelConfig | dict) -> dict[str, int]:
    """Parameter counts from the config alone (no model is built); see `shapes.count_params`.

    total: every trainable parameter of `GPT(cfg)` (tied LM head counted once); nonembedding:
    total minus token and position embeddings (so minus the tied LM head too), LayerNorms,
    biases, trainable attention scalars (`contracts.ATTENTION_SCALARS`) and QK-LayerNorms included;
    kaplan: 2 d L (2 d + d_ff).
    """
    cfg = as_config(cfg)
    per_layer = len(ATTENTION_SCALARS[cfg.attention]) if cfg.shaped["trainable"] else 0
    if cfg.qk_norm:  # the query and key LayerNorms' gains (and biases)
        per_layer += 2 * cfg.d_head * (1 + int(cfg.bias))
    return shapes.count_params(cfg.n_layer, cfg.d_model, cfg.d_ff, cfg.vocab_size, cfg.n_ctx, cfg.bias, per_layer)


def n_params_total(model_or_cfg: nn.Module | ModelConfig | dict) -> int:
    """Total trainable parameters, counted on the built model (or closed form from a config)."""
    if isinstance(model_or_cfg, nn.Module):
        return sum(p.numel() for p in model_or_cfg.parameters())  # shared tensors counted once
    return count_params(model_or_cfg)["total"]


def n_params_nonembedding(model_or_cfg: nn.Module | ModelConfig | dict) -> int:
    """Trainable parameters without token and position embeddings (nor the tied LM head)."""
    if isinstance(model_or_cfg, nn.Module):
        emb = model_or_cfg.wte.weight.numel() + model_or_cfg.wpe.weight.numel()
        return n_params_total(model_or_cfg) - emb
    return count_params(model_or_cfg)["nonembedding"]


def n_params_kaplan(model_or_cfg: nn.Module | ModelConfig | dict) -> int:
    """Kaplan's approximation 2 d L (2 d_attn + d_ff)."""
    cfg = model_or_cfg.cfg if isinstance(model_or_cfg, nn.Module) else model_or_cfg
    return count_params(cfg)["kaplan"]


def flops_per_token(cfg: ModelConfig | dict) -> dict[str, float]:
    """Training FLOPs per token, `kaplan` and `matmul` (see `shapes.flops_per_token`)."""
    cfg = as_config(cfg)
    n = count_params(cfg)["nonembedding"]
    return shapes.flops_per_token(cfg.n_layer, cfg.d_model, cfg.d_ff, cfg.vocab_size, cfg.n_ctx, n)
