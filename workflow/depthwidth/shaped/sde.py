"""Covariance SDE of the shaped Transformer at initialization (docs/science.md §3.2).

The state is the token covariance V = X X^T / n, an (m, m) symmetric positive-definite
matrix; time t = layer / n (one step of 1/n per sub-layer, or per block for `both`).
All functions take batched covariances of shape (..., m, m) and are pure; `simulate`
integrates the SDE with Euler-Maruyama in float64, vectorized over samples.

Blocks: `attention` (shaped attention sub-layer), `mlp` (shaped ReLU sub-layer) and `both`
(one block = attention then MLP in one time step of 1/n; drifts and diffusions add).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
import torch

from depthwidth.columns import BLOCKS

# Status codes of a sample path (shared with `finite`).
OK, NOT_PSD, BLOWUP = 0, 1, 2
STATUS_NAMES = {OK: "ok", NOT_PSD: "not_psd", BLOWUP: "blowup"}


@dataclass(frozen=True)
class ShapeParams:
    """Shaping constants of one setting (a job's spec gives each; their defaults are the schema's `setting`).

    gamma: residual branch weight gam (lam^2 + gam^2 = 1), in [0, 1].
    tau0: attention temperature constant (tau = tau0 sqrt(n n_k)); math.inf allowed.
    c_plus, c_minus: shaped-ReLU slopes s_pm = 1 + c_pm / sqrt(n).
    """

    gamma: float
    tau0: float
    c_plus: float
    c_minus: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must lie in [0, 1], got {self.gamma}")
        if not self.tau0 > 0.0:
            raise ValueError(f"tau0 must be positive, got {self.tau0}")
        for name in ("c_plus", "c_minus"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be finite, got {getattr(self, name)}")

    @property
    def lam(self) -> float:
        """Skip-branch weight lam = sqrt(1 - gam^2)."""
        return math.sqrt(max(0.0, 1.0 - self.gamma**2))


def stream_seed(seed: int, *keys: str | int) -> int:
    """A 63-bit seed for the random stream named by (seed, *keys).

    The SDE and each finite width draw arrays of the same shapes; seeding them all with the
    user's seed would reuse the same numbers and correlate samples that must be independent.
    """
    words = [int(seed) & 0xFFFFFFFF] + [zlib.crc32(str(k).encode()) for k in keys]
    return int(np.random.SeedSequence(words).generate_state(2, np.uint64)[0] >> np.uint64(1))


def check_sampling(n_samples: int, record_every: int, blowup_norm: float) -> None:
    """Arguments every sampler (SDE or finite network) shares; each error names its argument."""
    if n_samples < 1:
        raise ValueError(f"n_samples must be positive, got {n_samples}")
    if record_every < 1:
        raise ValueError(f"record_every must be positive, got {record_every}")
    if not blowup_norm > 0:
        raise ValueError(f"blowup_norm must be positive, got {blowup_norm}")


def check_block(block: str) -> str:
    """Return `block` if it names a known block, else raise ValueError naming it."""
    if block not in BLOCKS:
        raise ValueError(f"block must be one of {BLOCKS}, got {block!r}")
    return block


def equicorrelated(m: int, rho0: float, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """V0 = (1 - rho0) I + rho0 11^T: m unit-norm tokens with pairwise correlation rho0."""
    if m < 2:
        raise ValueError(f"m must be at least 2, got {m}")
    if not -1.0 / (m - 1) < rho0 < 1.0:
        raise ValueError(f"rho0 must lie in (-1/(m-1), 1) for a positive-definite V0, got {rho0}")
    return (1.0 - rho0) * torch.eye(m, dtype=dtype) + rho0 * torch.ones(m, m, dtype=dtype)


def correlation(V: torch.Tensor) -> torch.Tensor:
    """rho_ab = V_ab / sqrt(V_aa V_bb), shape (..., m, m)."""
    d = torch.diagonal(V, dim1=-2, dim2=-1).clamp_min(0).sqrt()
    return V / (d[..., :, None] * d[..., None, :])


def mean_offdiag_correlation(V: torch.Tensor) -> torch.Tensor:
    """Mean of rho_ab over the m(m-1) ordered pairs a != b, shape (...)."""
    m = V.shape[-1]
    rho = correlation(V)
    total = rho.sum((-2, -1)) - torch.diagonal(rho, dim1=-2, dim2=-1).sum(-1)
    return total / (m * (m - 1))


def _centering(m: int, like: torch.Tensor) -> torch.Tensor:
    """C = I - 11^T / m, the projector orthogonal to the all-ones vector."""
    return torch.eye(m, dtype=like.dtype, device=like.device) - 1.0 / m


def attention_drift(V: torch.Tensor, gam: float, tau0: float) -> torch.Tensor:
    """Drift per unit t of the shaped attention sub-layer, shape (..., m, m).

    b_att = (gam^2 / tau0^2) [S V + V S^T + V <V, Vt> / m^2],
    S_ab = V_aa (Vt_bb - tr(Vt) / m) / (2m),  Vt = C V C.
    """
    m = V.shape[-1]
    C = _centering(m, V)
    Vt = C @ V @ C
    diag_V = torch.diagonal(V, dim1=-2, dim2=-1)
    diag_Vt = torch.diagonal(Vt, dim1=-2, dim2=-1)
    tr_Vt = diag_Vt.sum(-1, keepdim=True)
    S = diag_V[..., :, None] * (diag_Vt - tr_Vt / m)[..., None, :] / (2 * m)
    inner = (V * Vt).sum((-2, -1))[..., None, None]
    return (gam**2 / tau0**2) * (S @ V + V @ S.transpose(-2, -1) + V * inner / m**2)


def _gaussian_pair_cov(V: torch.Tensor) -> torch.Tensor:
    """The 4-index tensor V_ac V_bd + V_ad V_bc, indexed [..., a, b, c, d]."""
    return torch.einsum("...ac,...bd->...abcd", V, V) + torch.einsum("...ad,...bc->...abcd", V, V)


def attention_diffusion_cov(V: torch.Tensor, gam: float, tau0: float) -> torch.Tensor:
    """Cov(dV_ab, dV_cd) / dt of the shaped attention sub-layer, indexed [..., a, b, c, d].

    gam^2 (2 - gam^2) (V_ac V_bd + V_ad V_bc)
    + (gam^4 / tau0^2) (V_ac P_bd + V_ad P_bc + V_bc P_ad + V_bd P_ac),  P = V Vt V / m^2.
    """
    m = V.shape[-1]
    C = _centering(m, V)
    P = V @ C @ V @ C @ V / m**2
    ein = torch.einsum
    logits = (
        ein("...ac,...bd->...abcd", V, P)
        + ein("...ad,...bc->...abcd", V, P)
        + ein("...bc,...ad->...abcd", V, P)
        + ein("...bd,...ac->...abcd", V, P)
    )
    return gam**2 * (2 - gam**2) * _gaussian_pair_cov(V) + (gam**4 / tau0**2) * logits


def relu_nu(rho: torch.Tensor, c_plus: float, c_minus: float) -> torch.Tensor:
    """nu(rho) = (c_+ - c_-)^2 / (2 pi) (sqrt(1 - rho^2) - rho arccos rho); zero at rho = 1."""
    rho = rho.clamp(-1.0, 1.0)
    return (c_plus - c_minus) ** 2 / (2 * math.pi) * (torch.sqrt(1 - rho**2) - rho * torch.arccos(rho))


def mlp_drift(V: torch.Tensor, gam: float, c_plus: float, c_minus: float) -> torch.Tensor:
    """Drift per unit t of the shaped ReLU MLP sub-layer: gam^2 sqrt(V_aa V_bb) nu(rho_ab)."""
    d = torch.diagonal(V, dim1=-2, dim2=-1).clamp_min(0).sqrt()
    scale = d[..., :, None] * d[..., None, :]
    return gam**2 * scale * relu_nu(V / scale, c_plus, c_minus)


def mlp_diffusion_cov(V: torch.Tensor, gam: float) -> torch.Tensor:
    """Cov(dV_ab, dV_cd) / dt of the shaped MLP sub-layer: 2 gam^2 (V_ac V_bd + V_ad V_bc)."""
    return 2 * gam**2 * _gaussian_pair_cov(V)


def drift(V: torch.Tensor, block: str, p: ShapeParams) -> torch.Tensor:
    """Drift per unit t of one block, shape (..., m, m)."""
    check_block(block)
    out = torch.zeros_like(V)
    if block in ("attention", "both"):
        out = out + attention_drift(V, p.gamma, p.tau0)
    if block in ("mlp", "both"):
        out = out + mlp_drift(V, p.gamma, p.c_plus, p.c_minus)
    return out


def diffusion_cov(V: torch.Tensor, block: str, p: ShapeParams) -> torch.Tensor:
    """Cov(dV_ab, dV_cd) / dt of one block, indexed [..., a, b, c, d]."""
    check_block(block)
    out = torch.zeros(V.shape + V.shape[-2:], dtype=V.dtype, device=V.device)
    if block in ("attention", "both"):
        out = out + attention_diffusion_cov(V, p.gamma, p.tau0)
    if block in ("mlp", "both"):
        out = out + mlp_diffusion_cov(V, p.gamma)
    return out


def _pair_variance(block: str, p: ShapeParams) -> float:
    """Coefficient k of k (V_ac V_bd + V_ad V_bc) in the block's diffusion."""
    g2 = p.gamma**2
    k = 0.0
    if block in ("attention", "both"):
        k += g2 * (2 - g2)
    if block in ("mlp", "both"):
        k += 2 * g2
    return k


def noise_generator(
    L: torch.Tensor, V: torch.Tensor, block: str, p: ShapeParams, generator: torch.Generator | None = None
) -> torch.Tensor:
    """One draw of K (..., m, m) such that noise = K V + V K^T has covariance `diffusion_cov`.

    K = sqrt(k / 2) L M L^{-1} + (gam^2 / tau0) S1, with L L^T = V, M and M3 iid N(0, 1) (m, m),
    S1 = L M3 L^T C / m, and k the pair coefficient of the block (`_pair_variance`). Then
    K V + V K^T = sqrt(k / 2) L (M + M^T) L^T + (gam^2 / tau0) (S1 V + V S1^T): docs/science.md §3.2's
    lam gam (G + G^T) and gam^2 L (M2 + M2^T) L^T / sqrt(2) (and the MLP's noise) are independent
    Gaussians of one structure, so one M carries them all. No square root of the 4-index tensor.
    """
    check_block(block)
    m = V.shape[-1]
    M = torch.randn(V.shape, dtype=V.dtype, device=V.device, generator=generator)
    # L M L^{-1}: solve X L = M for X, then left-multiply by L.
    K = math.sqrt(_pair_variance(block, p) / 2) * (L @ torch.linalg.solve_triangular(L, M, upper=False, left=False))
    if block in ("attention", "both") and math.isfinite(p.tau0) and p.gamma > 0:
        M3 = torch.randn(V.shape, dtype=V.dtype, device=V.device, generator=generator)
        K = K + (p.gamma**2 / p.tau0) * (L @ M3 @ L.transpose(-2, -1) @ _centering(m, V) / m)
    return K


def sample_noise(
    L: torch.Tensor, V: torch.Tensor, block: str, p: ShapeParams, generator: torch.Generator | None = None
) -> torch.Tensor:
    """One draw of the structured noise K V + V K^T (..., m, m), covariance `diffusion_cov`."""
    K = noise_generator(L, V, block, p, generator)
    KV = K @ V
    return KV + KV.transpose(-2, -1)


def ito_correction(V: torch.Tensor, block: str, p: ShapeParams) -> torch.Tensor:
    """E[K V K^T] (..., m, m) for the K of `noise_generator`: a scalar multiple of V.

    E[M A M^T] = tr(A) I gives (k / 2) m V from the pair term and
    (gam^2 / tau0)^2 <V, Vt> / m^2 V from the logit term; the cross term has mean zero.
    """
    m = V.shape[-1]
    coef = torch.full(V.shape[:-2], _pair_variance(block, p) / 2 * m, dtype=V.dtype, device=V.device)
    if block in ("attention", "both") and math.isfinite(p.tau0):
        C = _centering(m, V)
        coef = coef + (p.gamma**2 / p.tau0) ** 2 * (V * (C @ V @ C)).sum((-2, -1)) / m**2
    return coef[..., None, None] * V


SCHEMES = ("euler", "multiplicative")


def euler_step(V, L, h, block, p, generator) -> torch.Tensor:
    """Euler-Maruyama: V + b(V) h + sqrt(h) (K V + V K^T)."""
    return V + drift(V, block, p) * h + math.sqrt(h) * sample_noise(L, V, block, p, generator)


def multiplicative_step(V, L, h, block, p, generator) -> torch.Tensor:
    """PSD-preserving step V <- G V G^T with G = I + sqrt(h) K + h J.

    J = (b - E[K V K^T]) V^{-1} / 2 makes the O(h) mean J V + V J^T + E[K V K^T] equal the drift b,
    so the first two moments of the increment agree with Euler-Maruyama to O(h) (weak order 1),
    while G V G^T stays positive semi-definite by construction.
    """
    m = V.shape[-1]
    K = noise_generator(L, V, block, p, generator)
    R = drift(V, block, p) - ito_correction(V, block, p)
    # J = R V^{-1} / 2 (R and V symmetric): solve V J^T = R / 2.
    J = torch.cholesky_solve(0.5 * R, L).transpose(-2, -1)
    G = torch.eye(m, dtype=V.dtype, device=V.device) + math.sqrt(h) * K + h * J
    return G @ V @ G.transpose(-2, -1)


@dataclass
class SDEResult:
    """Output of `simulate`.

    V: (N, m, m) terminal covariances (the last state before failure for failed paths).
    status: (N,) int64 codes OK / NOT_PSD / BLOWUP (see STATUS_NAMES).
    times: (K,) recorded times t in [0, T].
    rho_path: (K, N) mean off-diagonal correlation of each path, NaN once the path failed.
    dt: the step actually used (T / number of steps).
    """

    V: torch.Tensor
    status: torch.Tensor
    times: np.ndarray
    rho_path: np.ndarray
    dt: float

    @property
    def mean_rho(self) -> np.ndarray:
        """(K,) mean correlation over the paths still alive at each recorded time."""
        return np.nanmean(self.rho_path, axis=1)

    def fraction(self, code: int) -> float:
        """Fraction of paths with status `code`."""
        return float((self.status == code).double().mean())


def n_steps_for(T: float, dt: float) -> int:
    """Number of Euler steps: T / dt rounded up, so the used step T / steps is <= dt."""
    if not T >= 0 or not math.isfinite(T):
        raise ValueError(f"T must be finite and non-negative, got {T}")
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt}")
    return max(1, math.ceil(T / dt - 1e-9)) if T > 0 else 0


def drift_only(V0: torch.Tensor, T: float, dt: float, block: str, p: ShapeParams) -> torch.Tensor:
    """The terminal V of the drift-only ODE dV/dt = b(V) (the SDE without its noise) from V0 (..., m, m) to T,
    Euler steps of at most dt: the deterministic limit that ignores the fluctuations of order depth / width."""
    check_block(block)
    steps = n_steps_for(T, dt)
    V = V0.to(torch.float64).clone()
    for _ in range(steps):
        V = V + drift(V, block, p) * (T / steps)
    return V


@dataclass(frozen=True)
class Paths:
    """What `simulate` runs: `samples` paths of the covariance SDE of one block to time T, steps of at most dt."""

    T: float
    dt: float
    block: str
    params: ShapeParams
    samples: int
    seed: int
    blowup_norm: float = 1e3
    scheme: str = "euler"


def simulate(V0: torch.Tensor, run: Paths, record_every: int = 1, progress: bool = False) -> SDEResult:
    """Euler-Maruyama paths of the covariance SDE from V0 (m, m) to time T.

    Each step: L = cholesky(V); V <- V + b(V) dt + sqrt(dt) noise(L, V); V <- (V + V^T) / 2.
    A path stops (frozen, flagged) when V leaves the PSD cone (Cholesky fails: NOT_PSD) or when
    an entry becomes non-finite or exceeds `run.blowup_norm` in absolute value (BLOWUP).
    The mean correlation of every path is recorded every `record_every` steps and at T.
    scheme: `euler` (Euler-Maruyama as above) or `multiplicative` (`multiplicative_step`, which
    cannot leave the PSD cone, so only BLOWUP remains; same SDE, weak order 1).
    """
    T, dt, block, params, n_samples = run.T, run.dt, run.block, run.params, run.samples
    seed, blowup_norm, scheme = run.seed, run.blowup_norm, run.scheme
    check_block(block)
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    step = euler_step if scheme == "euler" else multiplicative_step
    check_sampling(n_samples, record_every, blowup_norm)
    steps = n_steps_for(T, dt)
    h = T / steps if steps else 0.0
    gen = torch.Generator().manual_seed(stream_seed(seed, "sde"))
    V = V0.to(torch.float64).expand(n_samples, *V0.shape[-2:]).clone()
    status = torch.full((n_samples,), OK, dtype=torch.int64)
    alive = torch.ones(n_samples, dtype=torch.bool)
    times, path = [0.0], [mean_offdiag_correlation(V)]
    iterator = range(1, steps + 1)
    if progress:
        from tqdm import tqdm

        iterator = tqdm(iterator, desc=f"sde {block}", unit="step", mininterval=2.0)
    for k in iterator:
        L, info = torch.linalg.cholesky_ex(V)
        bad = alive & (info != 0)
        status[bad] = NOT_PSD
        alive &= ~bad
        V_new = step(V, L, h, block, params, gen)
        V_new = 0.5 * (V_new + V_new.transpose(-2, -1))
        finite = torch.isfinite(V_new).all(-1).all(-1)
        huge = V_new.abs().amax((-2, -1)) > blowup_norm
        blown = alive & (~finite | huge)
        status[blown] = BLOWUP
        alive &= ~blown
        V = torch.where(alive[:, None, None], V_new, V)
        if k % record_every == 0 or k == steps:
            times.append(k * h)
            path.append(torch.where(alive, mean_offdiag_correlation(V), torch.nan))
    # The last Euler step may itself leave the PSD cone.
    _, info = torch.linalg.cholesky_ex(V)
    status[alive & (info != 0)] = NOT_PSD
    rho_path = torch.stack(path).numpy()
    rho_path[-1, (status != OK).numpy()] = np.nan
    return SDEResult(V=V, status=status, times=np.asarray(times), rho_path=rho_path, dt=h)
