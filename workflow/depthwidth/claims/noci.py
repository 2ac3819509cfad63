"""Noci et al. 2023 (docs/science.md §3): the shaped Transformer's covariance SDE against finite networks, rank
collapse, and attention entropy in training (with the temperature-only control). Each rule reads its figure's rows
and returns numbers (`Evidence`); its margins are arguments, given by its entry in claims/registry.py."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.claims.verdicts import (
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    Evidence,
    Part,
    Systematic,
    above,
    below,
    combine,
    need,
    part,
    reads,
    unmeasurable,
    within,
)
from depthwidth.plots.shaped_sde_convergence import FUNCTIONALS
from depthwidth.plots.sweep_common import finished, ok

# ---------------------------------------------------------------- S1 / S3: the SDE describes finite networks


@dataclass(frozen=True)
class SdeBlock:
    """One block's comparison (parts: each functional's limit gap against `margin`, then W1 at the smallest width
    against sampling, the SDE-vs-ODE ratio there, and the stopped fractions' difference at the largest width against
    its equivalence margin), with the numbers its row states: the widths, W1 at both ends and its sampling quantile,
    the ratio at both ends, the rate of convergence in n with its interval and whether it holds 1 and 1/2
    (`rate_includes`), the SDE's steps in dt and their bias, the limit's exponent (nan: the hull of 1 and 1/2), and the
    stopped fractions (finite, SDE)."""

    block: str
    margin: float
    small_n: int
    large_n: int
    w1_small: float
    w1_large: float
    w1_null: float
    ode_ratio: tuple[float, float, float]
    ode_ratio_large: float
    rate: tuple[float, float, float]
    rate_includes: tuple[bool, bool]
    rate_points: int
    dt: float
    dt_coarse: float
    dt_bias: tuple[float, float]
    beta: float
    stopped: tuple[float, float]
    parts: tuple[Part, ...]


@dataclass(frozen=True, kw_only=True)
class SdeConvergence(Evidence):
    """Every block's comparison (`blocks`), the parts of all of them in order."""

    blocks: tuple[SdeBlock, ...]


SDE_COLUMNS = (
    "n", "w1", "w1_null_q95", "ode_ratio", "ode_ratio_low", "ode_ratio_high", "stopped_finite", "stopped_sde",
    "stopped_diff", "stopped_diff_low", "stopped_diff_high", "sde_sd", "sde_dt", "sde_dt_coarse", "sde_dt_bias_mean",
    "sde_dt_bias_sd", "rate", "rate_ci_low", "rate_ci_high", "rate_points", "limit_beta",
    *("limit_gap_" + stat + suffix for stat in FUNCTIONALS for suffix in ("", "_se")),
)  # fmt: skip


@reads(*SDE_COLUMNS, labels=("block",))
def sde_convergence(
    frame: pd.DataFrame, systematic: Systematic, *, margin_sd: float, stopped_margin: float
) -> SdeConvergence:
    """Per block: the finite networks' terminal mean, sd and quartiles extrapolated to n -> infinity lie within
    `margin_sd` of the SDE law's sd of the SDE's at dt -> 0 (equivalence), convergence is seen at the smallest n,
    the SDE describes the smallest n better than the drift-only ODE, and at the largest n the stopped fractions agree
    within `stopped_margin` (equivalence: a difference wholly outside it fails)."""
    if frame.empty:
        return unmeasurable("no_rows", need("simulations"))
    blocks = tuple(_sde_block(str(block), group, margin_sd, stopped_margin) for block, group in frame.groupby("block"))
    parts = tuple(p for b in blocks for p in b.parts)
    verdict = combine(*(p.verdict for p in parts))
    needs = tuple(_sde_needs(b) for b in blocks) if verdict == INCONCLUSIVE else ()
    return SdeConvergence(verdict=verdict, parts=parts, needs=tuple(n for ns in needs for n in ns), blocks=blocks)


def _sde_block(block: str, group: pd.DataFrame, margin_sd: float, stopped_margin: float) -> SdeBlock:
    group = group.sort_values("n")
    small, large = group.iloc[0], group.iloc[-1]
    margin = margin_sd * float(large["sde_sd"])
    gaps = [_limit_gap(large, stat, margin, block) for stat in FUNCTIONALS]
    seen = Part("w1_seen", float(small["w1"]), margin=float(small["w1_null_q95"]), unit="", at={"block": block})
    seen = replace(seen, verdict=HOLDS if seen.value > seen.margin else INCONCLUSIVE)
    ratio = (float(small["ode_ratio"]), float(small["ode_ratio_low"]), float(small["ode_ratio_high"]))
    # "surprisingly good": at the smallest width the finite law lies closer to the SDE than to the drift-only ODE
    ode = part("ode_ratio", ratio[0], ratio[1:], margin=1.0, test=below, unit="", block=block)
    rate = (float(large["rate"]), float(large["rate_ci_low"]), float(large["rate_ci_high"]))
    # both laws are conditioned on finishing: stopped fractions that differ leave different mass out of each, so they
    # must agree within a margin (an equivalence test, which more samples decide either way), not merely within sampling
    diff = (large["stopped_diff"], large["stopped_diff_low"], large["stopped_diff_high"])
    stopped = part("stopped_difference", diff[0], diff[1:], margin=stopped_margin, test=within, unit="", block=block)
    return SdeBlock(
        block=block, margin=margin, small_n=int(small["n"]), large_n=int(large["n"]), w1_small=float(small["w1"]),
        w1_large=float(large["w1"]), w1_null=float(small["w1_null_q95"]), ode_ratio=ratio,
        ode_ratio_large=float(large["ode_ratio"]),
        rate=rate,
        rate_includes=(bool(rate[1] <= 1.0 <= rate[2]), bool(rate[1] <= 0.5 <= rate[2])),
        rate_points=int(large["rate_points"]), dt=float(large["sde_dt"]), dt_coarse=float(large["sde_dt_coarse"]),
        dt_bias=(float(large["sde_dt_bias_mean"]), float(large["sde_dt_bias_sd"])), beta=float(large["limit_beta"]),
        stopped=(float(large["stopped_finite"]), float(large["stopped_sde"])), parts=(*gaps, seen, ode, stopped),
    )  # fmt: skip


def _limit_gap(large: pd.Series, stat: str, margin: float, block: str) -> Part:
    """A functional's n -> infinity gap to the SDE (the figure's weighted a + c n^-beta fit) within +-`margin`, its
    normal interval (at `fits.level()`) from the fit's standard error."""
    gap, se = large["limit_gap_" + stat], large["limit_gap_" + stat + "_se"]
    return part("limit_gap", gap, _normal(gap, se), margin=margin, test=within, unit="", block=block, functional=stat)


def _sde_needs(block: SdeBlock) -> list:
    """What would decide one block's undecided parts: samples, or smaller n, or SDE settings where paths rarely stop."""
    needs = []
    for p in block.parts:
        if p.verdict != INCONCLUSIVE:
            continue
        if p.name == "limit_gap":
            room, factor = _room(p)
            needs.append(need("limit_gap", block=block.block, functional=p.at["functional"], margin=p.margin,
                              room=room, factor=factor))  # fmt: skip
        elif p.name == "w1_seen":
            factor = (p.margin / p.value) ** 2 if p.value > 0 else math.inf
            needs.append(need("w1_seen", block=block.block, n=block.small_n, factor=factor))
        elif p.name == "ode_ratio":
            needs.append(need("ode_ratio", block=block.block, n=block.small_n))
        else:  # the stopped fractions' difference
            room, factor = _room(p)
            needs.append(need("stopped", block=block.block, n=block.large_n, margin=p.margin, room=room, factor=factor))
    return needs


def _room(p: Part) -> tuple[float, float]:
    """An equivalence part's room (its margin less its point's distance from 0) and the factor of samples that
    would fit its interval in it, (half-width / room)^2 (nan where its point lies outside: no room)."""
    room = p.margin - abs(p.value)
    return room, ((p.high - p.low) / 2 / room) ** 2 if room > 0 else math.nan


# ---------------------------------------------------------------- S2: rank collapse


@dataclass(frozen=True, kw_only=True)
class RankCollapse(Evidence):
    """At the last recorded t: the mean correlation of standard and shaped finite networks and of the SDE, from its
    start (`start`); parts: standard above its limit, standard - shaped above its gap, shaped - SDE within the margin
    (a tenth of the SDE law's sd)."""

    t: float
    start: float
    standard: float
    shaped: float
    sde: float


@reads("t", "mean_rho", "sem_rho", "alive", labels=("source", "attention"))
def rank_collapse(
    frame: pd.DataFrame, systematic: Systematic, *, standard_limit: float, gap_limit: float, margin_sd: float
) -> RankCollapse:
    """Mean correlation at the last recorded t: standard above `standard_limit` and above shaped by `gap_limit` (normal
    95% intervals), and shaped within `margin_sd` of the SDE law's sd of the SDE (as the SDE claim reads
    'describes')."""
    last = frame[frame["t"] == frame["t"].max()]
    finite = last[last["source"] == "finite"].set_index("attention")
    sde_rows = last[last["source"] == "sde"]
    if frame.empty or sde_rows.empty or not {"standard", "shaped"} <= set(finite.index):
        return unmeasurable("no_rows", need("simulations"))
    sde = sde_rows.iloc[0]
    std, shp = finite.loc["standard"], finite.loc["shaped"]
    standard = part("standard", std["mean_rho"], _normal(std["mean_rho"], std["sem_rho"]), margin=standard_limit,
                    test=above, unit="")  # fmt: skip
    diff = std["mean_rho"] - shp["mean_rho"]
    difference = part("difference", diff, _normal(diff, math.hypot(std["sem_rho"], shp["sem_rho"])), margin=gap_limit,
                      test=above, unit="")  # fmt: skip
    # shaped stays at the SDE's value: their gap within a tenth of the SDE law's sd (its sem x sqrt(paths))
    margin = margin_sd * sde["sem_rho"] * math.sqrt(sde["alive"])
    gap = shp["mean_rho"] - sde["mean_rho"]
    agrees = part("sde_gap", gap, _normal(gap, math.hypot(shp["sem_rho"], sde["sem_rho"])), margin=margin,
                  test=within, unit="")  # fmt: skip
    if not np.isfinite(margin):
        agrees = replace(agrees, verdict=INCONCLUSIVE)
    verdict = combine(standard.verdict, difference.verdict, agrees.verdict)
    start = frame.loc[frame["t"] == frame["t"].min(), "mean_rho"].iloc[0]
    return RankCollapse(
        verdict=verdict, parts=(standard, difference, agrees),
        needs=(need("networks"),) if verdict == INCONCLUSIVE else (), t=float(last["t"].iloc[0]), start=float(start),
        standard=float(std["mean_rho"]), shaped=float(shp["mean_rho"]), sde=float(sde["mean_rho"]),
    )  # fmt: skip


def _normal(mean: float, se: float) -> tuple[float, float]:
    """The two-sided normal interval mean -+ z se at `fits.level()` (se of thousands of paths: normal, not t)."""
    z = fits.z_quantile()
    return mean - z * se, mean + z * se


# ---------------------------------------------------------------- S4: entropy collapse in training

CONTROL = "temperature"  # the temperature-only control: softmax attention at the shaped temperature
KINDS = ("standard", "shaped", CONTROL)
RATIO_FLOOR = 1e-6  # an entropy ratio read as at least this (a fully collapsed head has ln ratio -inf)


def entropy_ratios(runs: pd.DataFrame) -> np.ndarray:
    """Per finished run in `runs`: the lowest (over layers) final / initial entropy, head-averaged."""
    done = ok(runs)
    return np.array(
        [
            float(
                g.groupby(["layer", "step"])["entropy"]
                .mean()
                .unstack("step")
                .pipe(lambda t: t.iloc[:, -1] / t.iloc[:, 0])
                .min()
            )
            for _, g in done.groupby("run_id")
        ]
    )


def log_ratios(values: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(np.asarray(values, dtype=float), RATIO_FLOOR))


def ratio_interval(values: np.ndarray) -> tuple[float, float, float]:
    """The per-seed ratios' geometric mean and its 95% interval: the t-interval of their mean logarithm, taken
    back (a ratio cannot be negative; its interval cannot either); (nan, nan) under 2 seeds."""
    if values.size == 0:
        return math.nan, math.nan, math.nan
    logs = log_ratios(values)
    se = logs.std(ddof=1) / math.sqrt(logs.size) if logs.size >= 2 else math.nan
    low, high = fits.t_interval(float(logs.mean()), se, logs.size - 1)
    return math.exp(logs.mean()), math.exp(low), math.exp(high)


def keeps_more(shaped: np.ndarray, standard: np.ndarray) -> tuple[float, float, float]:
    """How many times standard's entropy ratio shaped's is (geometric means), with the 95% Welch interval of the
    difference of their mean logarithms, taken back; nan under 2 seeds of either."""
    a, b = log_ratios(shaped), log_ratios(standard)
    if a.size < 2 or b.size < 2:
        return (math.exp(a.mean() - b.mean()) if a.size and b.size else math.nan), math.nan, math.nan
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    dof = fits.welch_dof([va, vb], [a.size - 1, b.size - 1])  # not rounded down, as Welch's t takes it
    low, high = fits.t_interval(float(a.mean() - b.mean()), math.sqrt(va + vb), dof)
    return math.exp(a.mean() - b.mean()), math.exp(low), math.exp(high)


def kind_verdict(attention: str, low: float, high: float, limit: float) -> str:
    """Gate of one kind's ratio interval: standard 'collapses' (below the limit), the others 'keep' (at or above)."""
    if attention == "standard":
        return below(low, high, limit)
    return above(low, high, limit - 1e-12)


def kind_need(attention: str, values: np.ndarray, ratio: Part, lr: float, limit: float):
    """What would decide one kind's gate: a second seed, or the seeds its interval (in logs: `ratio_interval`)
    needs to clear the limit; None where it is decided."""
    if values.size < 2:
        return need("kind_seeds", attention=attention, lr=lr)
    if ratio.verdict != INCONCLUSIVE:
        return None
    mean = ratio.value  # the geometric mean of the seeds' ratios
    log_margin = math.log(mean / limit)
    half = (math.log(ratio.high) - math.log(ratio.low)) / 2 if ratio.low > 0 else math.inf
    seeds = fits.seeds_needed_for(half, abs(log_margin), values.size) if abs(log_margin) > 1e-9 else None
    return need("kind_resolve", attention=attention, seeds=seeds, distance=mean - limit, limit=limit)


@dataclass(frozen=True, kw_only=True)
class EntropyCollapse(Evidence):
    """At the largest lr (`lr`): per kind (standard, shaped, the control where trained; parts, with shaped / standard
    last) the geometric mean of the lowest layer's final / initial entropy over finished seeds (`kind_seeds`: their
    count per kind), the control's verdict (`control`: None where not trained), the diverged runs left out, and
    `kinds`, the attention kinds read (where standard or shaped is missing: every kind the figure has, sorted)."""

    lr: float
    kind_seeds: Mapping[str, int]
    control: str | None
    diverged: tuple[str, ...]
    kinds: tuple[str, ...]


@reads("lr", "step", "layer", "entropy", "final_val_loss", labels=("attention", "run_id", "status"))
def entropy_collapse(frame: pd.DataFrame, systematic: Systematic, *, limit: float) -> EntropyCollapse:
    """At the largest lr: per finished run, the lowest layer's final / initial entropy; t-interval over seeds.
    Standard's below `limit`, shaped's at or above it, and shaped's over standard's above 1.

    The verdict is shaped vs standard; the temperature-only control, gated the same way, says whether the
    difference comes from the temperature (it keeps its entropy) or the centring (it collapses)."""
    trained = tuple(sorted(set(frame["attention"])))
    kinds = tuple(kind for kind in KINDS if kind in trained)
    if not {"standard", "shaped"} <= set(kinds):
        return EntropyCollapse(verdict=NOT_RUN, lr=math.nan, kind_seeds={}, control=None, diverged=(), kinds=trained)
    top = frame[frame["lr"] == frame["lr"].max()]
    lr = float(top["lr"].iloc[0])
    outcome = top.drop_duplicates("run_id")
    diverged = tuple(outcome[~finished(outcome)]["run_id"])
    parts, needs, ratios = [], [], {}
    for attention in kinds:
        values = ratios[attention] = entropy_ratios(top[top["attention"] == attention])
        mean, low, high = ratio_interval(values)
        gate = kind_verdict(attention, low, high, limit)
        ratio = Part("ratio", mean, low, high, limit, gate, {"attention": attention},
                     unit="")  # fmt: skip
        parts.append(ratio)
        needs.append(kind_need(attention, values, ratio, lr, limit))
    times, t_low, t_high = keeps_more(ratios["shaped"], ratios["standard"])
    differs = part("shaped_over_standard", times, (t_low, t_high), margin=1.0, test=above, unit="")
    parts.append(differs)
    if differs.verdict == INCONCLUSIVE and min(ratios["shaped"].size, ratios["standard"].size) >= 2:
        needs.append(need("both_kinds_seeds"))
    verdict = combine(*(p.verdict for p in parts[:2]), differs.verdict)
    control = next((p.verdict for p in parts if p.at.get("attention") == CONTROL), None)
    if control is None:
        needs.append(need("control", control=CONTROL))
    control_open = control in (None, INCONCLUSIVE)
    keep = verdict == INCONCLUSIVE or (verdict == HOLDS and control_open)
    return EntropyCollapse(
        verdict=verdict, parts=tuple(parts), needs=tuple(n for n in needs if n is not None) if keep else (), lr=lr,
        seeds=min(ratios["standard"].size, ratios["shaped"].size),
        kind_seeds={kind: int(ratios[kind].size) for kind in kinds}, control=control, diverged=diverged, kinds=kinds,
    )  # fmt: skip
