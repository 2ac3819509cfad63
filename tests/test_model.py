"""The model: causality, shaped and temperature attention against independent computations, entropy, counts."""

from __future__ import annotations

import math

import pytest
import torch
from depthwidth.train.model import (
    GPT,
    ModelConfig,
    count_params,
    flops_per_token,
    n_params_kaplan,
    n_params_nonembedding,
    n_params_total,
)
from torch.utils.flop_counter import FlopCounterMode


def tiny(attention="standard", **kw) -> ModelConfig:
    base = dict(vocab_size=50, n_ctx=16, n_layer=2, d_model=32, n_head=4, attention=attention)
    return ModelConfig(**{**base, **kw})


def sharpen(model: GPT, factor: float) -> None:
    """Scale the Q and K weights up so the softmax is far from uniform (a meaningful test)."""
    with torch.no_grad():
        for block in model.blocks:
            d = model.cfg.d_model
            block.attn.qkv.weight[: 2 * d] *= factor


@pytest.mark.parametrize("attention", ["standard", "shaped", "temperature"])
@pytest.mark.parametrize("entropy_path", [False, True])
def test_causal_changing_a_future_token_leaves_past_logits_unchanged(attention, entropy_path):
    torch.manual_seed(0)
    model = GPT(tiny(attention)).eval()
    sharpen(model, 30.0)
    idx = torch.randint(0, 50, (3, 16))
    t = 7
    changed = idx.clone()
    changed[:, t + 1] = (idx[:, t + 1] + 1) % 50
    with torch.no_grad():
        a = model(idx, return_entropy=entropy_path)[0]
        b = model(changed, return_entropy=entropy_path)[0]
    torch.testing.assert_close(a[:, : t + 1], b[:, : t + 1], rtol=0, atol=1e-6)
    # ... while the changed position and later ones do move (so the check above can fail).
    assert (a[:, t + 1 :] - b[:, t + 1 :]).abs().max() > 1e-3


def causal_uniform(T: int) -> torch.Tensor:
    """C[i, j] = 1/(i+1) for j <= i, built entry by entry (independent of the model code)."""
    C = torch.zeros(T, T)
    for i in range(T):
        for j in range(i + 1):
            C[i, j] = 1.0 / (i + 1)
    return C


def reference_attention(attn, x: torch.Tensor, cfg: ModelConfig, beta: float) -> torch.Tensor:
    """Shaped attention written out with explicit T x T matrices, one head at a time."""
    s = cfg.shaped
    B, T, d = x.shape
    dh = cfg.d_head
    Wq, Wk, Wv = attn.qkv.weight.split(d, dim=0)
    tau = s["tau0"] * math.sqrt(d * dh)
    C = causal_uniform(T)
    I = torch.eye(T)
    heads = []
    for h in range(cfg.n_head):
        sl = slice(h * dh, (h + 1) * dh)
        q, k, v = x @ Wq[sl].T, x @ Wk[sl].T, x @ Wv[sl].T
        logits = q @ k.transpose(1, 2) / tau
        logits = logits.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), -math.inf)
        A = s["alpha"] * I + beta * torch.softmax(logits, dim=-1) - s["gamma"] * C
        heads.append(A @ v)
    return torch.cat(heads, dim=-1) @ attn.proj.weight.T


@pytest.mark.parametrize("beta", [0.0, 0.8])
def test_shaped_attention_matches_explicit_formula(beta):
    cfg = tiny("shaped", shaped={"alpha": 0.7, "beta": beta, "gamma": 0.4, "tau0": 0.05})
    torch.manual_seed(1)
    model = GPT(cfg).eval()
    sharpen(model, 20.0)
    attn = model.blocks[0].attn
    x = torch.randn(2, cfg.n_ctx, cfg.d_model)
    expected = reference_attention(attn, x, cfg, beta)
    with torch.no_grad():
        got_fast = attn(x)
        got_explicit = attn(x, return_entropy=True)
    torch.testing.assert_close(got_fast, expected, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got_explicit, expected, rtol=1e-4, atol=1e-5)
    if beta == 0.0:
        # The identity-centred map alone: no dependence on the queries and keys at all.
        with torch.no_grad():
            attn.qkv.weight[: 2 * cfg.d_model].normal_()
        torch.testing.assert_close(attn(x).detach(), expected, rtol=1e-4, atol=1e-5)


def test_shaped_scalars_trainable_or_fixed():
    fixed = GPT(tiny("shaped"))
    trainable = GPT(tiny("shaped", shaped={"trainable": True}))
    names_fixed = {n for n, _ in fixed.named_parameters()}
    names_train = {n for n, _ in trainable.named_parameters()}
    assert names_train - names_fixed == {
        f"blocks.{i}.attn.{s}" for i in range(2) for s in ("alpha", "beta", "gamma", "tau0")
    }
    assert "blocks.0.attn.alpha" in dict(fixed.named_buffers())


@pytest.mark.parametrize("tau0", [0.05, 2.0])
def test_temperature_attention_is_standard_attention_with_logits_rescaled(tau0):
    """softmax(q k^T / tau) with tau = tau0 sqrt(d d_head): the standard layer (1 / sqrt(d_head)) with
    its query weights scaled by sqrt(d_head) / tau gives the same output, and neither adds a centring."""
    cfg = tiny("temperature", shaped={"tau0": tau0, "alpha": 5.0, "gamma": 3.0})  # alpha, gamma: unused
    torch.manual_seed(2)
    tempered = GPT(cfg).eval()
    sharpen(tempered, 20.0)
    standard = GPT(tiny("standard")).eval()
    standard.load_state_dict(tempered.state_dict(), strict=False)  # tempered holds one extra buffer, tau0
    tau = tau0 * math.sqrt(cfg.d_model * cfg.d_head)
    with torch.no_grad():
        for block in standard.blocks:
            block.attn.qkv.weight[: cfg.d_model] *= math.sqrt(cfg.d_head) / tau
    x = torch.randn(2, cfg.n_ctx, cfg.d_model)
    expected = standard.blocks[0].attn(x).detach()
    with torch.no_grad():
        got_fast = tempered.blocks[0].attn(x)
        got_explicit = tempered.blocks[0].attn(x, return_entropy=True)
        standard.blocks[0].attn(x, return_entropy=True)
    torch.testing.assert_close(got_fast, expected, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got_explicit, expected, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(tempered.blocks[0].attn.last_entropy, standard.blocks[0].attn.last_entropy)
    # not the standard layer itself: at the unscaled query weights the output differs
    with torch.no_grad():
        for block in standard.blocks:
            block.attn.qkv.weight[: cfg.d_model] *= tau / math.sqrt(cfg.d_head)
    assert not torch.allclose(standard.blocks[0].attn(x).detach(), expected, rtol=1e-3, atol=1e-4)


def test_temperature_attention_keeps_tau0_alone():
    fixed = GPT(tiny("temperature"))
    trainable = GPT(tiny("temperature", shaped={"trainable": True}))
    names_fixed = {n for n, _ in fixed.named_parameters()}
    assert {n for n, _ in trainable.named_parameters()} - names_fixed == {f"blocks.{i}.attn.tau0" for i in range(2)}
    assert set(dict(fixed.named_buffers())) == {f"blocks.{i}.attn.tau0" for i in range(2)}


def test_entropy_of_uniform_causal_attention_and_same_logits_on_both_paths():
    torch.manual_seed(0)
    cfg = tiny("standard")
    model = GPT(cfg).eval()
    idx = torch.randint(0, 50, (2, 16))
    with torch.no_grad():
        fast, _ = model(idx)
        explicit, _, ent = model(idx, return_entropy=True)
        for block in model.blocks:  # zero queries: every row is uniform over positions 0..i
            block.attn.qkv.weight[: cfg.d_model].zero_()
        uniform = model.attention_entropy(idx)
    torch.testing.assert_close(fast, explicit, rtol=1e-5, atol=1e-5)
    assert ent.shape == (cfg.n_layer, cfg.n_head)
    expected = sum(math.log(i + 1) for i in range(cfg.n_ctx)) / cfg.n_ctx
    torch.testing.assert_close(uniform, torch.full((2, 4), expected), rtol=0, atol=1e-5)
    assert (ent < expected).all()  # random weights are sharper than uniform (max entropy)


CONFIGS = [
    dict(),
    dict(bias=True),
    dict(attention="shaped", shaped={"trainable": True}),
    dict(d_ff=48, n_layer=3, bias=True, attention="shaped"),
    dict(attention="temperature", shaped={"trainable": True}),
    dict(qk_norm=True, n_layer=2),
    dict(qk_norm=True, bias=True, attention="shaped", shaped={"trainable": True}),
]


@pytest.mark.parametrize("kw", CONFIGS)
def test_closed_form_counts_equal_built_model(kw):
    cfg = tiny(**kw)
    model = GPT(cfg)
    counts = count_params(cfg)
    built = sum(p.numel() for p in model.parameters())
    assert counts["total"] == built == n_params_total(model) == n_params_total(cfg)
    emb = model.wte.weight.numel() + model.wpe.weight.numel()
    assert counts["nonembedding"] == built - emb == n_params_nonembedding(model)
    assert model.lm_head.weight is model.wte.weight  # tied: the head adds no parameters
    assert n_params_kaplan(model) == counts["kaplan"]


def test_kaplan_approximation():
    cfg = dict(vocab_size=1000, n_ctx=64, n_layer=4, d_model=512, n_head=8)
    counts = count_params(cfg)
    assert counts["kaplan"] == 12 * 4 * 512**2  # d_ff = 4 d
    assert abs(counts["nonembedding"] / counts["kaplan"] - 1) < 0.01  # norms are all it misses
    # far from the approximation at tiny width, where norms and biases weigh more
    small = count_params(dict(vocab_size=10, n_ctx=8, n_layer=1, d_model=8, n_head=1, bias=True))
    assert small["nonembedding"] / small["kaplan"] - 1 > 0.05


def test_matmul_flops_match_torch_flop_counter():
    cfg = tiny(n_ctx=32, d_model=64, vocab_size=300, n_layer=3)
    model = GPT(cfg)
    B = 2
    idx = torch.randint(0, cfg.vocab_size, (B, cfg.n_ctx))
    # The explicit-softmax path runs Q K^T and A V as plain matmuls, which the counter sees
    # (it does not count the fused CPU SDPA kernel).
    with FlopCounterMode(display=False) as counter:
        model(idx, idx, return_entropy=True)[1].backward()
    expected = flops_per_token(cfg)["matmul"] * B * cfg.n_ctx
    assert counter.get_total_flops() == pytest.approx(expected, rel=0.01)


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="d_model"):
        tiny(d_model=30)
    with pytest.raises(ValueError, match="attention"):
        tiny(attention="linear")


def test_qk_norm_makes_attention_blind_to_the_scale_of_queries_and_keys():
    """QK-LayerNorm's point (the stall pilot, docs/protocol-choices.md): growing the weights that feed q and k
    cannot sharpen the attention; without it the same growth does."""
    x = torch.randint(0, 50, (2, 16))
    moved = {}
    for qk_norm in (True, False):
        torch.manual_seed(0)
        model = GPT(tiny(qk_norm=qk_norm, n_layer=1))
        before = model(x)[0]
        sharpen(model, 30.0)
        moved[qk_norm] = float((model(x)[0] - before).abs().max())
    assert moved[True] < 1e-3 < 1e-2 < moved[False]  # what is left with it: LayerNorm's eps (1e-5) at init


def test_qk_norm_off_builds_the_papers_gpt_bit_for_bit():
    torch.manual_seed(0)
    plain = GPT(tiny())
    torch.manual_seed(0)
    off = GPT(tiny(qk_norm=False))
    assert plain.state_dict().keys() == off.state_dict().keys()
    assert all(torch.equal(a, b) for a, b in zip(plain.state_dict().values(), off.state_dict().values()))
