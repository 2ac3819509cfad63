"""Finite shaped (and standard) Transformers at initialization (docs/science.md §3.1).

Tokens are rows: X in R^{m x n}, V = X X^T / n. Weights iid N(0, 1), fresh per layer and per
sample. Key dimension n_k = n unless given. Sub-layers:
- attention: X <- lam X + gam A X W_V / sqrt(n), with
  shaped   A = I + softmax(Q K^T / tau) - 11^T / m,  tau = tau0 sqrt(n n_k),
  standard A = softmax(Q K^T / sqrt(n_k)),  Q = X W_Q / sqrt(n), K = X W_K / sqrt(n);
- mlp: X <- lam X + gam sqrt(c) phi(X W_1 / sqrt(n)) W_2 / sqrt(n) (shaped leaky ReLU);
- both: one block = attention then MLP; a block is one time step t = 1/n, so depth
  d = T n blocks (2 T n sub-layers), matching the SDE where the two drifts and diffusions add.

Two samplers of the same network:
- `dense`: the literal model above with full weight matrices (float32 by default; cost
  O(m n^2) per sub-layer and sample). Used to validate `projected` and in the benchmark.
- `projected`: exact in distribution, cost O(m^3) per attention sub-layer and O(m^2 n) per
  MLP sub-layer (Gaussian Gram matrices drawn as Bartlett factors). By rotation invariance of
  iid Gaussian weights, the law of the next V given X depends only on V = L L^T:
  X W / sqrt(n) has the law of L Z (Z iid m x n), and with P the pre-mixing rows
  (A X for attention, phi(X W_1 / sqrt(n)) for the MLP) and F any factor of P P^T / n,
      V' = lam^2 V + lam g (L Z_1^T F^T + F Z_1 L^T) / sqrt(n) + g^2 F (Z Z^T / n) F^T,
  where Z is iid m x n, Z_1 its first m columns and g = gam (attention) or gam sqrt(c) (MLP).
  (Write X = sqrt(n) L O with O O^T = I and rotate W_V so that O's and P's row spaces are the
  first m coordinates.) So V_l is a Markov chain with the same transition as the network.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import torch

from depthwidth.columns import SIMULATION_ATTENTIONS
from depthwidth.shaped.sde import (
    BLOWUP,
    NOT_PSD,
    OK,
    ShapeParams,
    check_block,
    check_sampling,
    mean_offdiag_correlation,
    stream_seed,
)

METHODS = ("projected", "dense")


def check_attention(attention: str, block: str) -> str:
    """Validate the attention kind; the pure-MLP block exists only in its shaped form."""
    if attention not in SIMULATION_ATTENTIONS:
        raise ValueError(f"attention must be one of {SIMULATION_ATTENTIONS}, got {attention!r}")
    if block == "mlp" and attention != "shaped":
        raise ValueError("attention must be 'shaped' for block 'mlp' (the MLP has no attention)")
    return attention


def relu_slopes(n: int, c_plus: float, c_minus: float) -> tuple[float, float, float]:
    """(s_+, s_-, c): slopes s_pm = 1 + c_pm / sqrt(n) and the norm constant c = 2 / (s_+^2 + s_-^2)."""
    s_plus, s_minus = 1 + c_plus / math.sqrt(n), 1 + c_minus / math.sqrt(n)
    return s_plus, s_minus, 2.0 / (s_plus**2 + s_minus**2)


def shaped_relu(x: torch.Tensor, s_plus: float, s_minus: float) -> torch.Tensor:
    """phi(x) = s_+ max(x, 0) + s_- min(x, 0)."""
    return s_minus * x + (s_plus - s_minus) * torch.relu(x)


def attention_matrix(logits: torch.Tensor, attention: str, tau_factor: float) -> torch.Tensor:
    """A from logits z = Q K^T / sqrt(n_k), shape (..., m, m).

    shaped: I + softmax(z / tau_factor) - 11^T / m with tau_factor = tau0 sqrt(n);
    standard: softmax(z).
    """
    if attention == "standard":
        return torch.softmax(logits, dim=-1)
    m = logits.shape[-1]
    eye = torch.eye(m, dtype=logits.dtype, device=logits.device)
    return eye + torch.softmax(logits / tau_factor, dim=-1) - 1.0 / m


def initial_tokens(
    V0: torch.Tensor, n: int, n_samples: int, generator: torch.Generator, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """X0 (N, m, n) with X0 X0^T / n = V0 exactly: sqrt(n) L0 O, O a random orthonormal frame."""
    m = V0.shape[-1]
    if n < m:
        raise ValueError(f"n must be at least m = {m}, got {n}")
    G = torch.randn(n_samples, n, m, dtype=torch.float64, generator=generator)
    O = torch.linalg.qr(G).Q.transpose(-2, -1)  # (N, m, n), O O^T = I
    L0 = torch.linalg.cholesky(V0.to(torch.float64))
    return (math.sqrt(n) * L0 @ O).to(dtype)


def _randn(shape: tuple[int, ...], like: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    return torch.randn(shape, dtype=like.dtype, device=like.device, generator=generator)


def dense_attention_layer(
    X: torch.Tensor, attention: str, p: ShapeParams, n_k: int, generator: torch.Generator
) -> torch.Tensor:
    """One literal attention sub-layer on X (N, m, n) with fresh W_Q, W_K (n x n_k), W_V (n x n)."""
    N, m, n = X.shape
    root_n = math.sqrt(n)
    Q = X @ _randn((N, n, n_k), X, generator) / root_n
    K = X @ _randn((N, n, n_k), X, generator) / root_n
    logits = Q @ K.transpose(-2, -1) / math.sqrt(n_k)
    A = attention_matrix(logits, attention, p.tau0 * root_n)
    Y = X @ _randn((N, n, n), X, generator) / root_n
    return p.lam * X + p.gamma * (A @ Y)


def dense_mlp_layer(X: torch.Tensor, p: ShapeParams, generator: torch.Generator) -> torch.Tensor:
    """One literal shaped-ReLU MLP sub-layer on X (N, m, n) with fresh W_1, W_2 (n x n)."""
    N, m, n = X.shape
    s_plus, s_minus, c = relu_slopes(n, p.c_plus, p.c_minus)
    H = shaped_relu(X @ _randn((N, n, n), X, generator) / math.sqrt(n), s_plus, s_minus)
    return p.lam * X + p.gamma * math.sqrt(c) * (H @ _randn((N, n, n), X, generator)) / math.sqrt(n)


def wishart_factor(
    N: int, m: int, dof: int, like: torch.Tensor, generator: torch.Generator, rng: np.random.Generator
) -> torch.Tensor:
    """Bartlett factor B (N, m, m), lower triangular, with B B^T ~ Wishart_m(dof, I); dof >= m.

    B_ii = sqrt(chi2(dof - i)), B_ij ~ N(0, 1) below the diagonal; B B^T has the law of Z Z^T
    for Z iid (m, dof), at O(m^2) cost instead of O(m dof).
    """
    B = torch.tril(_randn((N, m, m), like, generator), diagonal=-1)
    chi2 = rng.chisquare(dof - np.arange(m), size=(N, m))
    return B + torch.diag_embed(torch.from_numpy(np.sqrt(chi2)).to(like.dtype))


def gaussian_gram(
    N: int, m: int, k: int, like: torch.Tensor, generator: torch.Generator, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """(Z_1, Z Z^T) for Z iid N(0, 1) of shape (N, m, k), k >= m; Z_1 = Z[..., :m].

    Z Z^T = Z_1 Z_1^T + Z_2 Z_2^T with the rest Z_2 drawn as a Bartlett factor when k - m >= m.
    """
    if k - m < m:
        Z = _randn((N, m, k), like, generator)
        return Z[..., :m], Z @ Z.transpose(-2, -1)
    Z1 = _randn((N, m, m), like, generator)
    B = wishart_factor(N, m, k - m, like, generator, rng)
    return Z1, Z1 @ Z1.transpose(-2, -1) + B @ B.transpose(-2, -1)


def _mix(V, L, F, g, lam, n, generator, rng) -> torch.Tensor:
    """V' = lam^2 V + lam g (L Z_1^T F^T + F Z_1 L^T) / sqrt(n) + g^2 F (Z Z^T / n) F^T (module doc)."""
    N, m, _ = V.shape
    Z1, ZZ = gaussian_gram(N, m, n, V, generator, rng)
    cross = L @ Z1.transpose(-2, -1) @ F.transpose(-2, -1)
    Ft = F.transpose(-2, -1)
    return lam**2 * V + lam * g * (cross + cross.transpose(-2, -1)) / math.sqrt(n) + g**2 * F @ (ZZ / n) @ Ft


def projected_attention_step(
    V: torch.Tensor,
    L: torch.Tensor,
    attention: str,
    p: ShapeParams,
    n: int,
    n_k: int,
    generator: torch.Generator,
    rng: np.random.Generator,
) -> torch.Tensor:
    """Next V (N, m, m) after one attention sub-layer, exact in law, given V = L L^T.

    Q = L Zq and K = L Zk in law, so the logits are L (Zq Zk^T) L^T / sqrt(n_k); given Zk the
    rows of Zq Zk^T are iid N(0, Zk Zk^T), so Zq Zk^T = G B^T with G iid (m, m) and B a
    Bartlett factor of Zk Zk^T (direct draw when n_k < m).
    """
    N, m, _ = V.shape
    if n_k >= m:
        ZqZk = _randn((N, m, m), V, generator) @ wishart_factor(N, m, n_k, V, generator, rng).transpose(-2, -1)
    else:
        Zq, Zk = _randn((N, m, n_k), V, generator), _randn((N, m, n_k), V, generator)
        ZqZk = Zq @ Zk.transpose(-2, -1)
    logits = L @ ZqZk @ L.transpose(-2, -1) / math.sqrt(n_k)
    A = attention_matrix(logits, attention, p.tau0 * math.sqrt(n))
    return _mix(V, L, A @ L, p.gamma, p.lam, n, generator, rng)


def projected_mlp_step(
    V: torch.Tensor, L: torch.Tensor, p: ShapeParams, n: int, generator: torch.Generator, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Next V (N, m, m) after one MLP sub-layer, exact in law, and where P P^T / n was not PSD.

    The n hidden units are drawn explicitly (P P^T / n has no closed-form law): O(m n) per step.
    They are drawn in float32 (4x faster draws): the O(1/n) drift of P P^T / n is far above
    float32 rounding (~1e-7) at any width used here; the Gram matrix is accumulated in float64.
    """
    N, m, _ = V.shape
    s_plus, s_minus, c = relu_slopes(n, p.c_plus, p.c_minus)
    H = L.float() @ torch.randn((N, m, n), dtype=torch.float32, device=V.device, generator=generator)
    P = shaped_relu(H, s_plus, s_minus)
    P = P.to(V.dtype)
    F, not_psd = psd_factor(P @ P.transpose(-2, -1) / n)
    return _mix(V, L, F, p.gamma * math.sqrt(c), p.lam, n, generator, rng), not_psd


@dataclass
class FiniteResult:
    """Output of `simulate`.

    V: (N, m, m) covariances X X^T / n at depth T n blocks (the last state before a flag).
    status: (N,) int64 codes: OK, NOT_PSD (a Gram matrix was not PSD) or BLOWUP (|V_ab| passed
    the threshold or turned non-finite).
    times: (K,) recorded times t = block / n.
    rho_path: (K, N) mean off-diagonal correlation of each sample, NaN once it was flagged.
    """

    V: torch.Tensor
    status: torch.Tensor
    times: np.ndarray
    rho_path: np.ndarray

    @property
    def mean_rho(self) -> np.ndarray:
        """(K,) mean correlation over samples at each recorded time."""
        return np.nanmean(self.rho_path, axis=1)


def depth_for(T: float, n: int) -> int:
    """Number of blocks d = round(T n); raises unless T n is (close to) an integer."""
    if not T >= 0 or not math.isfinite(T):
        raise ValueError(f"T must be finite and non-negative, got {T}")
    d = round(T * n)
    if abs(d - T * n) > 1e-6 * max(1.0, T * n):
        raise ValueError(f"T * n must be an integer number of blocks, got T={T}, n={n}")
    return d


def psd_factor(V: torch.Tensor, rel_tol: float = 1e-10) -> tuple[torch.Tensor, torch.Tensor]:
    """A factor F (N, m, m) with F F^T = V for PSD V, and a bool (N,) marking non-PSD input.

    Cholesky where it succeeds; for (numerically) singular V, e.g. after rank collapse, the
    eigen-factor U diag(sqrt(w)) with tiny negative eigenvalues clipped. The projected sampler
    is exact for any factor, so the choice does not change the law. Marked: eigenvalues below
    -rel_tol * trace, or non-finite entries.
    """
    F, info = torch.linalg.cholesky_ex(V)
    bad = info != 0
    if not bad.any():
        return F, bad
    Vb = torch.nan_to_num(V[bad], nan=0.0, posinf=0.0, neginf=0.0)
    w, U = torch.linalg.eigh(Vb)
    scale = torch.diagonal(Vb, dim1=-2, dim2=-1).sum(-1, keepdim=True).abs()
    F[bad] = U * w.clamp_min(0).sqrt()[..., None, :]
    not_psd = torch.zeros_like(bad)
    not_psd[bad] = (w[..., 0] < -rel_tol * scale[..., 0]) | ~torch.isfinite(V[bad]).all(-1).all(-1)
    return F, not_psd


def _projected_block(V, block, attention, p, n, n_k, gen, rng):
    """One block of the projected sampler: (next V, True where a Gram matrix was not PSD)."""
    failed = torch.zeros(V.shape[0], dtype=torch.bool)
    if block in ("attention", "both"):
        L, not_psd = psd_factor(V)
        failed |= not_psd
        V = projected_attention_step(V, L, attention, p, n, n_k, gen, rng)
    if block in ("mlp", "both"):
        L, not_psd = psd_factor(V)
        failed |= not_psd
        V, not_psd = projected_mlp_step(V, L, p, n, gen, rng)
        failed |= not_psd
    return 0.5 * (V + V.transpose(-2, -1)), failed


def _dense_block(X, block, attention, p, n_k, gen):
    """One block of the literal network on X (N, m, n)."""
    if block in ("attention", "both"):
        X = dense_attention_layer(X, attention, p, n_k, gen)
    if block in ("mlp", "both"):
        X = dense_mlp_layer(X, p, gen)
    return X


def _run_chunk(state, run: Networks, depth: int, record_every: int, streams: tuple, pbar):
    """Simulate one chunk of samples of `run` (its n_k resolved) from `state` (X for dense, V for projected),
    drawing from `streams` (the torch generator, the numpy one of the chi-square draws).

    Returns (V_T, status, rho rows). A sample whose |V_ab| passes `blowup_norm` (or turns
    non-finite) is flagged BLOWUP and frozen, as in the SDE: past saturation of the softmax its
    norm grows geometrically and would overflow. A non-PSD Gram matrix flags NOT_PSD.
    """
    method, block, attention, p, n, n_k = run.method, run.block, run.attention, run.params, run.n, run.n_k
    gen, rng = streams
    gram = (lambda X: X @ X.transpose(-2, -1) / n) if method == "dense" else (lambda V: V)
    V = gram(state)
    status = torch.full((V.shape[0],), OK, dtype=torch.int64)
    rows = [mean_offdiag_correlation(V).double()]
    for layer in range(1, depth + 1):
        alive = status == OK
        if method == "dense":
            new = _dense_block(state, block, attention, p, n_k, gen)
        else:
            new, failed = _projected_block(state, block, attention, p, n, n_k, gen, rng)
            status[alive & failed] = NOT_PSD
        V_new = gram(new)
        blown = (status == OK) & (
            ~torch.isfinite(V_new).all(-1).all(-1) | (V_new.abs().amax((-2, -1)) > run.blowup_norm)
        )
        status[blown] = BLOWUP
        keep = status == OK
        state = torch.where(keep[:, None, None], new, state)
        V = torch.where(keep[:, None, None], V_new, V)
        if layer % record_every == 0 or layer == depth:
            rows.append(torch.where(keep, mean_offdiag_correlation(V).double(), torch.nan))
        if pbar is not None:
            pbar.update(V.shape[0])
    return V.double(), status, torch.stack(rows)


@dataclass(frozen=True)
class Networks:
    """What `simulate` runs: `samples` finite networks of width n and depth T n blocks of one kind."""

    n: int
    T: float
    block: str
    attention: str
    params: ShapeParams
    samples: int
    seed: int
    n_k: int | None = None
    method: str = "projected"
    blowup_norm: float = 1e3
    chunk: int | None = None
    dtype: torch.dtype | None = None


def simulate(V0: torch.Tensor, run: Networks, record_every: int = 1, progress: bool = False) -> FiniteResult:
    """Sample finite networks of width n and depth T n blocks from V0 (m, m).

    method: `projected` (exact in law, float64 by default) or `dense` (literal weights,
    float32 by default). record_every: in blocks. blowup_norm: a sample whose |V_ab| passes it
    is flagged BLOWUP and frozen (the SDE's rule, so both sides are conditioned alike).
    chunk: samples per batch (the dense default bounds one weight tensor to ~64 MB).
    Same seed, method, chunk and dtype give the same numbers.
    """
    n, T, block, attention, n_samples, seed = run.n, run.T, run.block, run.attention, run.samples, run.seed
    n_k, method, blowup_norm, chunk, dtype = run.n_k, run.method, run.blowup_norm, run.chunk, run.dtype
    check_block(block)
    check_attention(attention, block)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    check_sampling(n_samples, record_every, blowup_norm)
    m = V0.shape[-1]
    if n < m:
        raise ValueError(f"n must be at least m = {m}, got {n}")
    n_k = n if n_k is None else int(n_k)
    if n_k < 1:
        raise ValueError(f"n_k must be positive, got {n_k}")
    depth = depth_for(T, n)
    if dtype is None:
        dtype = torch.float32 if method == "dense" else torch.float64
    if chunk is None:
        chunk = max(1, (1 << 24) // (n * max(n, n_k))) if method == "dense" else n_samples
    # Own streams per width (independent of the SDE's and other widths'); the attention kind is
    # left out so standard and shaped share their draws (common random numbers).
    gen = torch.Generator().manual_seed(stream_seed(seed, "finite", n))
    rng = np.random.default_rng(stream_seed(seed, "finite-chi2", n))  # chi-square draws of the Bartlett factors
    pbar = None
    if progress:
        from tqdm import tqdm

        pbar = tqdm(total=n_samples * depth, desc=f"finite n={n} {block}", unit="path-block", mininterval=2.0)
    Vs, statuses, rows = [], [], []
    for start in range(0, n_samples, chunk):
        size = min(chunk, n_samples - start)
        if method == "dense":
            state = initial_tokens(V0, n, size, gen, dtype)
        else:
            state = V0.to(dtype).expand(size, m, m).clone()
        resolved = dataclasses.replace(run, n_k=n_k)
        V, status, r = _run_chunk(state, resolved, depth, record_every, (gen, rng), pbar)
        Vs.append(V)
        statuses.append(status)
        rows.append(r)
    if pbar is not None:
        pbar.close()
    recorded = [0] + [k for k in range(1, depth + 1) if k % record_every == 0 or k == depth]
    rho_path = torch.cat(rows, dim=1).numpy()
    status = torch.cat(statuses)
    return FiniteResult(V=torch.cat(Vs), status=status, times=np.asarray(recorded) / n, rho_path=rho_path)


def one_step(
    V: torch.Tensor,
    n: int,
    block: str,
    attention: str,
    params: ShapeParams,
    n_samples: int,
    seed: int,
    n_k: int | None = None,
    method: str = "projected",
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Samples (N, m, m) of V after one block of width n started from V (m, m)."""
    networks = Networks(n, 1.0 / n, block, attention, params, n_samples, seed, n_k=n_k, method=method, dtype=dtype)
    res = simulate(V, networks)
    return res.V
