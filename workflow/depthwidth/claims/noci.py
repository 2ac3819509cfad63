"""Noci et al. 2023: the shaped Transformer's covariance SDE against finite networks, rank collapse, and
attention entropy in training (with the temperature-only control), and the claims they decide."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.claims.glue import glue_beats
from depthwidth.claims.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    OURS,
    Claim,
    Result,
    above,
    below,
    combine,
    interval_text,
    number_text,
    within,
)
from depthwidth.plots.shaped_sde_convergence import Z975  # two-sided 95% normal: se from thousands of samples

# "describes" read as: what n -> infinity leaves of the gap between the finite networks' terminal law and
# the SDE's, in its mean and its sd, lies within a tenth of the SDE law's own sd (a standardised difference
# of 0.1, half of what is conventionally called small; chosen by this project)
SDE_MARGIN_SD = 0.1


def _functionals(frame: pd.DataFrame) -> list[str]:
    """The functionals of the terminal law whose limit gaps the figure gives (mean, sd, quartiles)."""
    return [c.removeprefix("limit_gap_") for c in frame.columns if c.startswith("limit_gap_") and not c.endswith("_se")]


def _limit_gaps(block: str, large: pd.Series, names: list[str], margin: float) -> tuple[list, list, list]:
    """Each functional's n -> infinity gap against the margin (equivalence): verdicts, texts, what would decide."""
    verdicts, texts, needs = [], [], []
    for stat in names:
        gap, se = large[f"limit_gap_{stat}"], large[f"limit_gap_{stat}_se"]
        low, high = gap - Z975 * se, gap + Z975 * se
        verdicts.append(within(low, high, margin))
        texts.append(f"{stat} {gap:+.4f} {interval_text(low, high, '+.4f')}")
        if verdicts[-1] == INCONCLUSIVE:
            room = margin - abs(gap)
            needs.append(
                f"{block}: the {stat}'s limit gap straddles +-{margin:.4f}: "
                + (f"~{(Z975 * se / room) ** 2:.1f}x the samples" if room > 0 else "its point lies outside")
            )
    return verdicts, texts, needs


def _sde_block(block: str, group: pd.DataFrame) -> tuple[list[str], str, list[str]]:
    """One block's parts (verdicts), its text and what would decide it."""
    group = group.sort_values("n")
    small, large = group.iloc[0], group.iloc[-1]
    margin = SDE_MARGIN_SD * large["sde_sd"]
    verdicts, texts, needs = _limit_gaps(block, large, _functionals(group), margin)
    seen = HOLDS if small["w1"] > small["w1_null_q95"] else INCONCLUSIVE
    verdicts.append(seen)
    if seen == INCONCLUSIVE:
        factor = (small["w1_null_q95"] / small["w1"]) ** 2 if small["w1"] > 0 else math.inf
        needs.append(f"{block}: W1 at n={int(small['n'])} is within sampling; ~{factor:.1f}x the samples or smaller n")
    # "surprisingly good": at the smallest width the finite law lies closer to the SDE than to the drift-only ODE
    verdicts.append(below(small["ode_ratio_low"], small["ode_ratio_high"], 1.0))
    if verdicts[-1] == INCONCLUSIVE:
        needs.append(f"{block}: at n={int(small['n'])} the SDE and the ODE lie about as close: more samples")
    if abs(large["stopped_z"]) > Z975:
        verdicts.append(INCONCLUSIVE)
        needs.append(
            f"{block}: the stopped fractions differ beyond sampling (z = {large['stopped_z']:.1f}): "
            "SDE settings where paths rarely stop (larger tau0, smaller T)"
        )
    rate = (
        f"rate n^-{large['rate']:.2f} {interval_text(large['rate_ci_low'], large['rate_ci_high'])} over "
        f"{int(large['rate_points'])} widths (includes 1: {_includes(large, 1.0)}; 1/2: {_includes(large, 0.5)})"
        if np.isfinite(large["rate"])
        else "rate: fewer than 3 widths with a resolved gap"
    )
    reference = (
        f"SDE at dt -> 0 from dt {large['sde_dt_coarse']:g} and {large['sde_dt']:g} (Richardson; the finer step's "
        f"bias in the mean {large['sde_dt_bias_mean']:+.4f}, sd {large['sde_dt_bias_sd']:+.4f})"
        if np.isfinite(large["sde_dt_coarse"])
        else f"SDE at dt {large['sde_dt']:g} only (not extrapolated in dt)"
    )
    ode = (
        f"W1 to the SDE / W1 to the drift-only ODE at n={int(small['n'])}: {small['ode_ratio']:.2f} "
        f"{interval_text(small['ode_ratio_low'], small['ode_ratio_high'])}, at n={int(large['n'])}: "
        f"{large['ode_ratio']:.2f}"
    )
    beta = large.get("limit_beta", 1.0)
    fitted = (
        f"a + c n^-{beta:g}" if np.isfinite(beta) else "a + c n^-1 and a + c n^-0.5 (the rate allows both: the hull)"
    )
    text = (
        f"{block}: n -> inf gaps {'; '.join(texts)} (margin +-{margin:.4f}); {reference}; W1 {small['w1']:.3f} at "
        f"n={int(small['n'])} (sampling 95%: {small['w1_null_q95']:.3f}), {large['w1']:.3f} at n={int(large['n'])}; "
        f"{ode}; {rate}; the limit from {fitted}; "
        f"stopped finite {large['stopped_finite']:.1%}, SDE {large['stopped_sde']:.1%}"
    )
    return verdicts, text, needs


def _includes(row: pd.Series, rate: float) -> str:
    return "yes" if row["rate_ci_low"] <= rate <= row["rate_ci_high"] else "no"


def sde_convergence(frame: pd.DataFrame) -> Result:
    """Per block: the finite networks' terminal mean, sd and quartiles extrapolated to n -> infinity lie within
    a margin of the SDE's at dt -> 0 (equivalence), convergence is seen at the smallest n, the SDE describes the
    smallest n better than the drift-only ODE, and the stopped fractions agree."""
    verdicts, parts, needs = [], [], []
    for block, group in frame.groupby("block"):
        block_verdicts, text, block_needs = _sde_block(block, group)
        verdicts += block_verdicts
        parts.append(text)
        needs += block_needs
    verdict = combine(*verdicts)
    return Result(
        value="; ".join(parts),
        verdict=verdict,
        interval="the limit gaps' 95% intervals per block (above), from a + c n^-beta fits by weighted least squares "
        "(beta per block: above); "
        "the ODE ratio's from 200 bootstrap resamples",
        noise="sampling: standard errors of the finite and SDE functionals (the SDE's through its Richardson "
        "extrapolation in dt); W1 against random splits of the pooled samples (200 permutations)",
        at_our_scale="the paper gives no number: agreement 'surprisingly good'; we test that the finite networks' "
        f"limit lies within {SDE_MARGIN_SD:g} SDE sd of the SDE's (at dt -> 0) in mean, sd and quartiles, and that "
        "the smallest width lies closer to the SDE than to the drift-only ODE",
        needs="; ".join(needs) if verdict == INCONCLUSIVE else "",
    )


RANK_STANDARD_LIMIT = 0.9  # standard's terminal correlation must exceed this (chosen by this project)
RANK_GAP_LIMIT = 0.3  # and exceed shaped's by this (chosen by this project)


def rank_collapse(frame: pd.DataFrame) -> Result:
    """Mean correlation at the last recorded t: standard vs shaped finite networks (normal 95% intervals), and shaped
    against the SDE, within a tenth of the SDE law's own sd (SDE_MARGIN_SD, as the SDE claim reads 'describes')."""
    last = frame[frame["t"] == frame["t"].max()]
    finite = last[last["source"] == "finite"].set_index("attention")
    sde_row = last[last["source"] == "sde"].iloc[0]
    start = frame.loc[frame["t"] == frame["t"].min(), "mean_rho"].iloc[0]
    std, shp = finite.loc["standard"], finite.loc["shaped"]
    s_low, s_high = std["mean_rho"] - Z975 * std["sem_rho"], std["mean_rho"] + Z975 * std["sem_rho"]
    diff = std["mean_rho"] - shp["mean_rho"]
    diff_se = math.hypot(std["sem_rho"], shp["sem_rho"])
    d_low, d_high = diff - Z975 * diff_se, diff + Z975 * diff_se
    # shaped stays at the SDE's value: their gap within a tenth of the SDE law's sd (its sem x sqrt(paths))
    margin = SDE_MARGIN_SD * sde_row["sem_rho"] * math.sqrt(sde_row["alive"]) if "alive" in sde_row else math.nan
    gap = shp["mean_rho"] - sde_row["mean_rho"]
    gap_half = Z975 * math.hypot(shp["sem_rho"], sde_row["sem_rho"])
    agrees = within(gap - gap_half, gap + gap_half, margin) if np.isfinite(margin) else INCONCLUSIVE
    verdict = combine(above(s_low, s_high, RANK_STANDARD_LIMIT), above(d_low, d_high, RANK_GAP_LIMIT), agrees)
    return Result(
        value=f"t={last['t'].iloc[0]:g}: standard {std['mean_rho']:.3f}, shaped {shp['mean_rho']:.3f}, "
        f"SDE {sde_row['mean_rho']:.3f} (start {start:.2f})",
        verdict=verdict,
        interval=(
            f"standard {interval_text(s_low, s_high, '.3f')}; standard - shaped {interval_text(d_low, d_high, '.3f')}; "
            f"shaped - SDE {interval_text(gap - gap_half, gap + gap_half, '.3f')} (margin +-{margin:.3f})"
        ),
        noise="sampling: standard error of the mean correlation over networks",
        at_our_scale="standard -> 1 with depth at any width; shaped stays at the SDE's value",
        needs="more sampled networks" if verdict == INCONCLUSIVE else "",
    )


ENTROPY_LIMIT = 0.2  # final / initial entropy below which attention has collapsed (chosen by this project)
CONTROL = "temperature"  # the temperature-only control: softmax attention at the shaped temperature


def entropy_ratios(runs: pd.DataFrame) -> np.ndarray:
    """Per finished run in `runs`: the lowest (over layers) final / initial entropy, head-averaged."""
    finished = runs[runs["status"] == "ok"]
    return np.array(
        [
            float(
                g.groupby(["layer", "step"])["entropy"]
                .mean()
                .unstack("step")
                .pipe(lambda t: t.iloc[:, -1] / t.iloc[:, 0])
                .min()
            )
            for _, g in finished.groupby("run_id")
        ]
    )


RATIO_FLOOR = 1e-6  # an entropy ratio read as at least this (a fully collapsed head has ln ratio -inf)


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
    dof = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1)) if va + vb > 0 else a.size + b.size - 2
    low, high = fits.t_interval(float(a.mean() - b.mean()), math.sqrt(va + vb), max(1, int(dof)))
    return math.exp(a.mean() - b.mean()), math.exp(low), math.exp(high)


def kind_verdict(attention: str, low: float, high: float) -> str:
    """Gate of one kind's ratio interval: standard 'collapses' (below the limit), the others 'keep' (at or above)."""
    if attention == "standard":
        return below(low, high, ENTROPY_LIMIT)
    return above(low, high, ENTROPY_LIMIT - 1e-12)


def attribution(verdict: str, control_keeps: str) -> str:
    """What the temperature-only control says about a shaped-vs-standard difference, both gated alike."""
    if verdict == FAILS:
        return "no shaped-vs-standard difference to attribute"
    if verdict != HOLDS:
        return "undecided: the shaped-vs-standard difference itself is undecided"
    if control_keeps == HOLDS:
        return "keeps its entropy like shaped: the temperature alone prevents the collapse, not the centring"
    if control_keeps == FAILS:
        return "collapses like standard: the centring prevents the collapse, not the temperature"
    return "undecided: its interval straddles the limit or is missing (too few seeds)"


def kind_needs(attention: str, values: np.ndarray, low: float, high: float, lr: float) -> str:
    """What would decide one kind's gate: a second seed, or the seeds its interval (in logs: `ratio_interval`)
    needs to clear the limit."""
    if values.size < 2:
        return f"at least 2 seeds of {attention} at lr {lr:g} (3 for a usable t-interval)"
    if kind_verdict(attention, low, high) != INCONCLUSIVE:
        return ""
    mean = float(np.exp(log_ratios(values).mean()))
    margin, log_margin = mean - ENTROPY_LIMIT, math.log(mean / ENTROPY_LIMIT)
    half = (math.log(high) - math.log(low)) / 2 if low > 0 else math.inf
    factor = fits.runs_factor_needed(half, log_margin) if abs(log_margin) > 1e-9 else math.inf
    if not np.isfinite(factor):
        return f"{attention} sits at the limit {ENTROPY_LIMIT:g}: more seeds would not decide it"
    seeds = math.ceil(values.size * factor)
    return f"about {seeds} seeds of {attention} would resolve its distance to the limit ({margin:+.2f})"


def entropy_collapse(frame: pd.DataFrame) -> Result:
    """At the largest lr: per finished run, the lowest layer's final / initial entropy; t-interval over seeds.

    The verdict is shaped vs standard; the temperature-only control, gated the same way, says whether the
    difference comes from the temperature (it keeps its entropy) or the centring (it collapses).
    """
    kinds = set(frame["attention"])
    if not {"standard", "shaped"} <= kinds:
        return Result(f"needs both attention kinds, trained only {sorted(kinds)}", NOT_RUN)
    top = frame[frame["lr"] == frame["lr"].max()]
    lr = top["lr"].iloc[0]
    diverged = top.drop_duplicates("run_id").query("status != 'ok'")
    parts, intervals, verdicts, needs, ratios = [], [], {}, [], {}
    for attention in [kind for kind in ("standard", "shaped", CONTROL) if kind in kinds]:
        values = ratios[attention] = entropy_ratios(top[top["attention"] == attention])
        mean, low, high = ratio_interval(values)
        verdicts[attention] = kind_verdict(attention, low, high)
        intervals.append(f"{attention} {interval_text(low, high)}")
        parts.append(
            f"{attention} {mean:.2f} {interval_text(low, high)} ({values.size} seeds)"
            if values.size
            else f"{attention}: no finished run"
        )
        needs.append(kind_needs(attention, values, low, high, lr))
    times, t_low, t_high = keeps_more(ratios["shaped"], ratios["standard"])
    differs = above(t_low, t_high, 1.0)  # shaped keeps more of its entropy than standard, directly
    intervals.append(f"shaped / standard {interval_text(t_low, t_high)}")
    parts.append(f"shaped / standard {number_text(times)} {interval_text(t_low, t_high)}")
    if differs == INCONCLUSIVE and min(ratios["shaped"].size, ratios["standard"].size) >= 2:
        needs.append("more seeds of both kinds: shaped over standard straddles 1")
    verdict = combine(verdicts["standard"], verdicts["shaped"], differs)
    if CONTROL in verdicts:
        control = f"temperature-only control: {attribution(verdict, verdicts[CONTROL])}"
    else:
        control = "temperature-only control (softmax attention at the shaped temperature): not run"
        needs.append(f"train the control (add {CONTROL} to shaped.training.attentions)")
    value = f"lr={lr:g}: " + ", ".join(parts) + " (lowest layer's final / initial entropy)"
    value += f"; {control}; diverged runs excluded: {len(diverged)} ({', '.join(diverged['run_id']) or 'none'})"
    control_open = CONTROL not in verdicts or verdicts[CONTROL] == INCONCLUSIVE
    return Result(
        value=value,
        verdict=verdict,
        interval="; ".join(intervals),
        noise="seed-to-seed spread of the entropy ratio",
        at_our_scale=f"the paper gives no number; collapse read as a ratio below {ENTROPY_LIMIT:g} at our largest lr",
        needs="; ".join(filter(None, needs)) if verdict == INCONCLUSIVE or (verdict == HOLDS and control_open) else "",
    )


CLAIMS = [
    Claim(
        "noci_sde_describes_finite",
        "Noci 2023",
        "The covariance SDE describes finite shaped networks at "
        "initialization, and they converge to it as the width grows (depth = T x width)",
        "the gap of the finite networks' terminal correlation law to the SDE's (run at dt and dt / 2, extrapolated "
        "to dt -> 0), in mean, sd and quartiles, extrapolated to n -> infinity (a + c / n), with 95% intervals; "
        "the rate in n; W1 at the smallest n against sampling (permutation 95% quantile) and against the drift-only "
        "ODE's; stopped-path fractions of both sides",
        "agreement 'surprisingly good' at finite size",
        f"per block: holds if every limit gap's 95% interval lies within +-{SDE_MARGIN_SD:g} of the SDE's sd of "
        f"rho_T {OURS}, W1 at the smallest n is above sampling, and there the finite law lies closer (W1) to the "
        "SDE's than to the drift-only ODE's terminal value (the ratio's 95% interval at or below 1); fails if a "
        "limit gap's interval lies wholly outside the margin or the ratio's above 1; inconclusive if one "
        "straddles, the smallest n is already within sampling, or the stopped fractions differ beyond sampling "
        "(|z| > 1.96); both sides conditioned on finishing",
        "shaped_sde_convergence",
        sde_convergence,
    ),
    Claim(
        "noci_no_rank_collapse",
        "Noci 2023",
        "Shaped attention prevents rank collapse; standard softmax attention "
        "with the same residual drives token correlations to 1",
        "mean pairwise correlation at terminal t",
        "standard -> 1; shaped stays away from 1",
        f"holds if the standard's 95% interval is above {RANK_STANDARD_LIMIT:g}, that of (standard - shaped) "
        f"above {RANK_GAP_LIMIT:g} (thresholds chosen by this project, not the paper) and that of (shaped - SDE) "
        f"within +-{SDE_MARGIN_SD:g} of the SDE law's sd (the margin of noci_sde_describes_finite); fails if either "
        "of the first lies at or below its limit or the last wholly outside its margin",
        "shaped_rank_collapse",
        rank_collapse,
    ),
    Claim(
        "noci_entropy_collapse",
        "Noci 2023",
        "In training at large learning rates, standard attention's entropy collapses while shaped attention's does not",
        "lowest layer's final/initial attention entropy at the largest lr, finished runs only: each kind's geometric "
        "mean over seeds with the 95% t-interval of its mean log, and shaped's over standard's with the Welch "
        "interval of the log difference; the same for the temperature-only control (softmax attention at the "
        "shaped temperature)",
        "collapse (entropy -> 0) for standard only",
        f"holds if standard's interval is below {ENTROPY_LIMIT:g}, shaped's at or above {ENTROPY_LIMIT:g} {OURS} and "
        f"shaped's ratio over standard's above 1; fails if standard's is at or above {ENTROPY_LIMIT:g}, shaped's "
        "below, or shaped over standard at or below 1; inconclusive if any straddles its limit or one seed; diverged "
        "runs excluded and counted. The temperature-only control, gated alike, does not "
        "change the verdict: where the claim holds, the control keeping its entropy attributes the difference to "
        "the temperature, collapsing to the centring",
        "shaped_entropy",
        entropy_collapse,
    ),
    Claim(
        "noci_glue",
        "Noci 2023",
        "Fine-tuned on GLUE, the shaped model beats the baseline (most at depth 24 on CoLA and RTE)",
        "per task, the dev headline score (CoLA: Matthews correlation, F1 beside it; RTE: accuracy) of a standard "
        "and a shaped model of one shape, each pretrained once on this config's corpus and fine-tuned over seeds; "
        "shaped - standard with its 95% Welch t-interval over the fine-tuning seeds",
        "shaped > baseline",
        "per task: holds if the 95% interval of shaped - standard lies above 0, fails if it lies at or below 0, "
        "inconclusive if it straddles 0 or has under 2 seeds a side, and inconclusive whenever both models' score "
        "intervals hold chance (MCC 0, RTE 50%): no effect can show at chance; the claim holds if every task "
        "holds and fails if one fails",
        "noci_glue",
        glue_beats,
        not_run_reason="this config has no glue block (GLUE fine-tuning downloads CoLA.zip and RTE.zip, 1.1 MB, "
        "checked against their published sha256): on a machine with network access run "
        "`snakemake --cores all --configfile config/glue.yaml`",
    ),
]
