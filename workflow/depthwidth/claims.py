"""The claims table: each paper claim, our number, and a verdict computed by the rule in its row.

Every claim reads the CSV of the figure that shows it (`results/figures/<id>.csv`), so the
number in the table is the number on the figure. A claim whose figure this config does not
build gets the verdict `not run`. Verdicts are never set by hand.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.io import write_text

COLUMNS = ["id", "paper", "statement", "metric", "paper_value", "our_value", "rule", "verdict", "scale_note", "figure"]
HOLDS, FAILS, NOT_RUN = "holds", "does not hold at this scale", "not run"


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    statement: str
    metric: str
    paper_value: str
    rule: str
    figure: str | None  # the figure whose CSV the claim reads; None: cannot be run here
    # -> (our value, whether the rule holds); holds None: the data cannot decide (verdict `not run`)
    measure: Callable[[pd.DataFrame], tuple[str, bool | None]] | None
    not_run_reason: str = ""


def _finished(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] == "ok"] if "status" in frame else frame


def aspect_basin(frame: pd.DataFrame) -> tuple[str, bool]:
    """Largest spread of loss increase within a 40x aspect-ratio window around each N's best shape."""
    runs = _finished(frame)
    runs = runs[runs["n_layer"] >= 2].groupby(["n_target", "aspect_ratio"], as_index=False)["increase_pct"].mean()
    spreads = []
    for _, by_n in runs.groupby("n_target"):
        best = by_n.loc[by_n["increase_pct"].idxmin(), "aspect_ratio"]
        window = by_n[(by_n["aspect_ratio"] >= best / math.sqrt(40)) & (by_n["aspect_ratio"] <= best * math.sqrt(40))]
        spreads.append(window["increase_pct"].max() - window["increase_pct"].min())
    worst = max(spreads)
    return f"{worst:.2f}% (max spread over {len(spreads)} N values)", worst <= 5.0


def knob_spread(knob: str, low: float, high: float, limit: float) -> Callable[[pd.DataFrame], tuple[str, bool]]:
    """Spread (max - min) of the seed-mean loss increase over knob values in [low, high]."""

    def measure(frame: pd.DataFrame) -> tuple[str, bool]:
        runs = _finished(frame)
        means = runs[(runs[knob] >= low) & (runs[knob] <= high)].groupby(knob)["increase_pct"].mean()
        spread = means.max() - means.min()
        span = f"all {knob} values" if math.isinf(high) else f"{knob} in [{low:g}, {high:g}]"
        return f"{spread:.2f}% over {span} ({len(means)} values)", spread <= limit

    return measure


def depth_collapse(frame: pd.DataFrame) -> tuple[str, bool]:
    """Residual scatter around one power law: non-embedding vs total counts (depth >= 2); 1-layer offset."""
    deep = frame[frame["n_layer"] >= 2]
    scatter = {}
    for count, runs in deep.groupby("count"):
        line = fits.fit_line(np.log(runs["params"]), np.log(runs["loss"]))
        scatter[count] = 100 * float(np.sqrt(np.mean((np.log(runs["loss"]) - line(np.log(runs["params"]))) ** 2)))
    nonemb = frame[frame["count"] == "non-embedding"]
    line = fits.fit_line(
        np.log(nonemb.loc[nonemb["n_layer"] >= 2, "params"]), np.log(nonemb.loc[nonemb["n_layer"] >= 2, "loss"])
    )
    one = nonemb[nonemb["n_layer"] == 1]
    offset = 100 * float(np.mean(np.log(one["loss"]) - line(np.log(one["params"])))) if len(one) else float("nan")
    value = (
        f"scatter {scatter['non-embedding']:.2f}% (non-emb.) vs {scatter['with embeddings']:.2f}% (total); "
        f"1-layer offset {offset:+.2f}%"
    )
    holds = scatter["non-embedding"] < scatter["with embeddings"] and (
        not len(one) or offset > scatter["non-embedding"]
    )
    return value, holds


def power_law(frame: pd.DataFrame) -> tuple[str, bool]:
    alpha, low, high = frame[["alpha", "alpha_ci_low", "alpha_ci_high"]].iloc[0]
    runs = _finished(frame)
    residual = np.log(runs["final_val_loss"]) - np.log(runs["loss_fit"])
    rms = 100 * float(np.sqrt(np.mean(residual**2)))
    return f"alpha = {alpha:.3f} [{low:.3f}, {high:.3f}] (95% CI), rms residual {rms:.2f}%", low > 0 and rms < 2.0


def crossover_slope(frame: pd.DataFrame) -> tuple[str, bool]:
    if frame.empty or not np.isfinite(frame["slope"].iloc[0]):
        return "fewer than two crossovers between consecutive depths", False
    slope, low, high = frame[["slope", "slope_ci_low", "slope_ci_high"]].iloc[0]
    return (f"{slope:.3f} [{low:.3f}, {high:.3f}] per layer (log 3 = {math.log(3):.3f}; Levine's fit 0.0555)", low > 0)


def optimal_depth_growth(frame: pd.DataFrame) -> tuple[str, bool]:
    """The optimal depth must rise by at least one grid step of depth from the smallest to the largest N."""
    if frame.empty or not np.isfinite(frame["slope"].iloc[0]):
        return "no range of N where every depth has trained runs", False
    slope = frame["slope"].iloc[0]
    first, last = frame["optimal_depth"].iloc[0], frame["optimal_depth"].iloc[-1]
    step = frame["depth_step"].iloc[0]
    value = f"{slope:.2f} layers per e-fold of N; optimal depth {first:.2f} -> {last:.2f} (grid step {step:g})"
    return value, bool(slope > 0 and last - first >= step)


SWEEP_CLAIMS = [
    Claim(
        "kaplan_aspect_basin",
        "Kaplan 2020 (Fig. 5)",
        "At fixed non-embedding N, loss is nearly flat over a ~40x range of aspect ratio d/L",
        "largest spread of loss increase (%) within a 40x aspect-ratio window around the best shape",
        "within ~3% (e.g. (6, 4288) vs (48, 1600))",
        "holds if spread <= 5%",
        "kaplan_fig5_aspect",
        aspect_basin,
    ),
    Claim(
        "kaplan_ffratio",
        "Kaplan 2020 (Fig. 5)",
        "Feed-forward ratio d_ff/d between 1 and 4 barely matters at fixed N",
        "spread of loss increase (%) for d_ff/d in [1, 4]",
        "~0%",
        "holds if spread <= 2%",
        "kaplan_fig5_ffratio",
        knob_spread("ff_ratio", 1, 4, 2.0),
    ),
    Claim(
        "kaplan_headdim",
        "Kaplan 2020 (Fig. 5)",
        "Head dimension barely matters at fixed N and width",
        "spread of loss increase (%) over head dimensions",
        "within ~2%",
        "holds if spread <= 2%",
        "kaplan_fig5_headdim",
        knob_spread("d_head", 0, math.inf, 2.0),
    ),
    Claim(
        "kaplan_depth_collapse",
        "Kaplan 2020 (Fig. 6)",
        "Counted in non-embedding N, depths >= 2 collapse onto one trend; 1-layer models fall above it",
        "rms scatter (%) of log loss around one power law, non-embedding vs total counts; 1-layer offset",
        "collapse with non-embedding N; depths separate with embeddings",
        "holds if non-embedding scatter < total scatter and the 1-layer offset exceeds it",
        "kaplan_fig6",
        depth_collapse,
    ),
    Claim(
        "kaplan_power_law",
        "Kaplan 2020 (Eq. 1.5)",
        "Loss follows a power law in non-embedding N",
        "exponent alpha_N with 95% CI; rms residual (%)",
        "alpha_N = 0.076 (WebText2; constants not comparable)",
        "holds if the CI excludes 0 and the rms residual < 2%",
        "kaplan_power_law",
        power_law,
    ),
    Claim(
        "levine_crossover_slope",
        "Levine 2020",
        "The width at which the deeper of two depths starts to win grows exponentially with depth",
        "slope of log(crossover width) vs depth, per layer, 95% CI",
        "log 3 = 1.099 (threshold L = log3 d); 0.0555 (fitted optimum)",
        "holds if the CI lies above 0",
        "levine_crossover",
        crossover_slope,
    ),
    Claim(
        "levine_optimal_depth",
        "Levine 2020",
        "The optimal depth grows with model size (roughly like log N)",
        "optimal depth at the smallest and largest N; slope vs ln N",
        "> 0 (~80 layers at 175B)",
        "holds if the slope > 0 and the optimal depth rises by at least the smallest depth step of the grid",
        "levine_optimal_depth",
        optimal_depth_growth,
    ),
]


def sde_convergence(frame: pd.DataFrame) -> tuple[str, bool]:
    """Per block: W1 at the largest n, its sampling floor, and the log-log slope vs n."""
    parts, holds = [], True
    for block, group in frame.groupby("block"):
        last = group.loc[group["n"].idxmax()]
        slope = group["w1_slope"].iloc[0]
        parts.append(
            f"{block}: W1 {last['w1']:.3f} at n={int(last['n'])} (floor {last['w1_floor']:.3f}), slope {slope:.2f}"
        )
        holds &= bool(slope < 0 and last["w1"] < 0.05)
    return "; ".join(parts), holds


def rank_collapse(frame: pd.DataFrame) -> tuple[str, bool]:
    """Mean correlation at the last recorded t: standard vs shaped finite networks, and the SDE."""
    last = frame[frame["t"] == frame["t"].max()]
    finite = last[last["source"] == "finite"].set_index("attention")["mean_rho"]
    sde = last.loc[last["source"] == "sde", "mean_rho"]
    start = frame.loc[frame["t"] == frame["t"].min(), "mean_rho"].iloc[0]
    value = (
        f"t={last['t'].iloc[0]:g}: standard {finite['standard']:.3f}, shaped {finite['shaped']:.3f}, "
        f"SDE {sde.iloc[0]:.3f} (start {start:.2f})"
    )
    return value, bool(finite["standard"] >= 0.9 and finite["shaped"] <= finite["standard"] - 0.3)


def entropy_collapse(frame: pd.DataFrame) -> tuple[str, bool | None]:
    """At the largest learning rate: lowest-layer entropy at the end / at step 0, per attention kind."""
    if set(frame["attention"]) != {"standard", "shaped"}:
        return f"needs both attention kinds, trained only {sorted(set(frame['attention']))}", None
    top = frame[frame["lr"] == frame["lr"].max()]
    ratios = {}
    for attention, runs in top.groupby("attention"):
        per_layer = runs.groupby(["layer", "step"])["entropy"].mean().unstack("step")
        ratios[attention] = float((per_layer.iloc[:, -1] / per_layer.iloc[:, 0]).min())
    value = f"lr={top['lr'].iloc[0]:g}: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(ratios.items()))
    holds = ratios["standard"] < 0.2 and ratios["shaped"] >= 0.2
    return value + " (lowest layer's final / initial entropy)", holds


SHAPED_CLAIMS = [
    Claim(
        "noci_sde_describes_finite",
        "Noci 2023",
        "The covariance SDE describes finite shaped networks at "
        "initialization, and they converge to it as the width grows (depth = T x width)",
        "Wasserstein-1 distance of the terminal correlation law, finite n vs SDE; log-log slope in n",
        "agreement 'surprisingly good' at finite size",
        "holds if W1 falls with n (slope < 0) and is < 0.05 at the largest n, for every block",
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
        "holds if standard >= 0.9 and shaped <= standard - 0.3",
        "shaped_rank_collapse",
        rank_collapse,
    ),
    Claim(
        "noci_entropy_collapse",
        "Noci 2023",
        "In training at large learning rates, standard attention's entropy collapses while shaped attention's does not",
        "lowest layer's final/initial attention entropy, largest lr",
        "collapse (entropy -> 0) for standard only",
        "holds if standard < 0.2 and shaped >= 0.2",
        "shaped_entropy",
        entropy_collapse,
    ),
    Claim(
        "noci_glue",
        "Noci 2023",
        "Fine-tuned on GLUE, the shaped model beats the baseline (most at depth 24 on CoLA and RTE)",
        "GLUE scores",
        "shaped > baseline",
        "not evaluated",
        None,
        None,
        not_run_reason="needs pretrained weights and GLUE data, which cannot be fetched in this project",
    ),
]

CLAIMS: list[Claim] = [*SWEEP_CLAIMS, *SHAPED_CLAIMS]


def evaluate(claim: Claim, figure_csvs: dict[str, Path], scale_note: str) -> dict:
    """One row of the claims table; `figure_csvs` maps the figures this config built to their CSV."""
    row = {
        "id": claim.id,
        "paper": claim.paper,
        "statement": claim.statement,
        "metric": claim.metric,
        "paper_value": claim.paper_value,
        "rule": claim.rule,
        "scale_note": scale_note,
        "figure": claim.figure or "",
    }
    csv = figure_csvs.get(claim.figure)
    if claim.measure is None or csv is None:
        reason = claim.not_run_reason or "this config does not build its figure"
        return {**row, "our_value": reason, "verdict": NOT_RUN}
    try:
        value, holds = claim.measure(pd.read_csv(csv))
    except (ValueError, KeyError, IndexError, np.linalg.LinAlgError, pd.errors.EmptyDataError) as err:
        # the figure's data cannot support this measure (e.g. too few points): say so, keep going
        return {**row, "our_value": f"cannot be measured on {csv.name}: {err}", "verdict": NOT_RUN}
    if holds is None:
        return {**row, "our_value": value, "verdict": NOT_RUN}
    return {**row, "our_value": value, "verdict": HOLDS if holds else FAILS}


def table(figure_csvs: list[Path], scale_note: str) -> pd.DataFrame:
    """Every claim, evaluated on the given figure CSVs (`results/figures/<id>.csv`)."""
    by_figure = {Path(p).stem: Path(p) for p in figure_csvs}
    return pd.DataFrame([evaluate(c, by_figure, scale_note) for c in CLAIMS], columns=COLUMNS)


def markdown(frame: pd.DataFrame) -> str:
    """The claims table for humans (results/claims.md)."""
    lines = ["| claim | paper | paper value | our value | rule | verdict |", "|---|---|---|---|---|---|"]
    for row in frame.itertuples():
        lines.append(
            f"| {row.statement} | {row.paper} | {row.paper_value} | {row.our_value} | {row.rule} | **{row.verdict}** |"
        )
    return "\n".join(lines) + "\n"


def caption(figure: str, frame: pd.DataFrame, scale_note: str) -> str:
    """The report caption of one figure (RST): what it stands for, what was run, and its verdicts."""
    from depthwidth.plots import FIGURES

    lines = [f"**{figure}** -- {FIGURES[figure].title}.", "", f"*Run at:* {scale_note}.", ""]
    rows = frame[frame["figure"] == figure]
    for row in rows.itertuples():
        lines += [
            f"- *{row.paper}*: {row.statement}. Paper: {row.paper_value}. Ours: {row.our_value}. "
            f"Rule: {row.rule}. **Verdict: {row.verdict}.**"
        ]
    if rows.empty:
        lines.append("No claim reads this figure; it documents the data behind the others.")
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--figure-csv",
        action="append",
        default=[],
        type=Path,
        help="results/figures/<id>.csv of a figure this config built (repeatable)",
    )
    parser.add_argument("--scale-note", required=True, help="what was run, e.g. 'config default: 2 seeds, N 1e5-3e6'")
    parser.add_argument("--out", required=True, type=Path, help="results/claims.csv (claims.md is written beside it)")
    parser.add_argument(
        "--captions-dir", type=Path, default=None, help="write the report caption of each figure here as <figure>.rst"
    )


def run(args: argparse.Namespace) -> int:
    frame = table(args.figure_csv, args.scale_note)
    write_text(args.out, frame.to_csv(index=False))
    write_text(args.out.with_suffix(".md"), markdown(frame))
    if args.captions_dir:
        for csv in args.figure_csv:
            write_text(args.captions_dir / f"{csv.stem}.rst", caption(csv.stem, frame, args.scale_note))
    for row in frame.itertuples():
        print(f"{row.verdict:>28}  {row.id}: {row.our_value}")
    return 0
