"""The registry of claims: one declarative entry per claim, its paper and statement, the figure whose rows it reads,
its rule, the margins and settings the rule is called with (`params`), and the paper's value.

The rule text in each entry is a template: `wording` fills it from the entry's `params`, the same numbers the rule
reads, so the rule column can only say what the code does. Every threshold here was chosen by this project, not the
papers, unless its comment says otherwise; docs/science.md gives each claim's source.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from statistics import NormalDist

from depthwidth import fits
from depthwidth.claims import glue, kaplan, levine, noci
from depthwidth.plots.levine_literal import AT_CROSSOVER


@dataclass(frozen=True)
class Claim:
    """One claim. `statement`, `metric`, `paper_value` and `rule` are templates (`wording.fill`, with `params` and the
    names of `template_names()`); `figure` None: no figure of ours can test it. `lr_systematic`: its verdict is
    read from losses compared across shapes (in % of the loss), so it must survive the learning-rate systematic
    (`claims.judge`); `per_count`: its figure computes it at each of the three counts (a `count` column): the verdict
    is the papers' count's (non-embedding N), the value restates it at total parameters and training FLOPs."""

    id: str
    paper: str
    statement: str
    metric: str
    paper_value: str
    rule: str
    figure: str | None
    measure: Callable | None
    params: Mapping[str, float | str] = field(default_factory=dict)
    not_run_reason: str = ""
    lr_systematic: bool = False
    per_count: bool = False


KAPLAN, LEVINE, NOCI = "Kaplan 2020", "Levine 2020", "Noci 2023"

KAPLAN_ASPECT_SPAN = 40.0  # Kaplan Fig. 5: "a factor ~40" of aspect ratio (the paper's number)
KAPLAN_BASIN = (10.0, 300.0)  # Kaplan Fig. 5: where the flat basin lies, d/L roughly 10 to 300 (the paper's figure)
# "barely matters" is read as a spread of 2% of the loss (Kaplan's head-dimension "within ~2%"), the scale every
# other equivalence margin of the Kaplan rows is set against
BARELY = 2.0
# Levine's "stops paying" read as: deepening gains at most 0.5% of the loss per added layer (an equivalence margin, a
# quarter of BARELY; the literal row's pairs are one layer apart); a gain of at most that much is no win either way
# (the depth and literal rows)
PAYS_MARGIN = 0.5
# "describes" read as: what n -> infinity leaves of the gap between the finite networks' terminal law and the SDE's
# lies within a tenth of the SDE law's own sd (a standardised difference of 0.1, half of what is conventionally
# called small); the rank-collapse row reads "shaped stays at the SDE's value" alike
SDE_MARGIN_SD = 0.1
# Both laws are conditioned on paths that finished, so a difference delta of stopped fractions is mass one law leaves
# out and the other keeps. Taken from one tail, it moves a quartile of the conditioned law by 0.75 delta / f(q) (f the
# density there): 2.4 delta sd for a normal law. The stopped fractions agree when that move stays within the limit
# gaps' own margin, SDE_MARGIN_SD sd: delta <= SDE_MARGIN_SD phi(z_0.75) / 0.75 = 0.042 of the paths (an absolute
# difference of fractions, finite - SDE, at the largest width)
STOPPED_MARGIN = SDE_MARGIN_SD * NormalDist().pdf(NormalDist().inv_cdf(0.75)) / 0.75

CLAIMS: list[Claim] = [
    Claim(
        "kaplan_aspect_basin",
        KAPLAN + " (Fig. 5)",
        "At fixed non-embedding N, loss is nearly flat over a ~{span:g}x range of aspect ratio d/L",
        "largest spread of the seed-mean loss increase (%) within the widest aspect-ratio window of at most {span:g}x "
        "around the best shape (depth >= 2), per N; restated at total parameters and at training FLOPs (each "
        "run's increase over the L fit in that count)",
        "within a few percent over ~40x ((6, 4288) within 3% of (48, 1600))",
        "holds if the {level} interval of the spread (the spread -+ the noise's own, over redraws of the seed means: "
        "every pair at once) lies at or below {limit:g}% ('a few percent' read as {limit:g}%: threshold chosen by "
        "this project, not the paper) at every N; does not hold if it lies above (at one N: its 1 - {miss:g}/k "
        "interval, k the N tested); inconclusive if it straddles {limit:g}% or one seed; PARTIAL if the widest "
        "window of at most {span:g}x around the best shape spans under {partial_below:g}x, and then never holds (a "
        "narrower flat window is no evidence of a {span:g}x one). The verdict is about the window tested: one "
        "reaching outside Kaplan's basin (d/L {basin[0]:g}-{basin[1]:g}) is named, and a spread there is no evidence "
        "against his basin",
        "kaplan_fig5_aspect",
        kaplan.aspect_basin,
        # Kaplan's "a few percent" read as 5%; a window spanning under half of Kaplan's factor tests a narrower claim
        # ("~40x" read as within the factor of 2 a discrete grid of depths leaves)
        dict(limit=5.0, span=KAPLAN_ASPECT_SPAN, partial_below=KAPLAN_ASPECT_SPAN / 2, basin=KAPLAN_BASIN),
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "kaplan_ffratio",
        KAPLAN + " (Fig. 5)",
        "(a) Feed-forward ratio d_ff/d between {low:g} and {high:g} barely matters at fixed N; (b) ratios of "
        "{worse_above:g} and above cost a few percent",
        "(a) spread of the seed-mean loss increase (%) for d_ff/d in [{low:g}, {high:g}]; (b) largest ratio >= "
        "{worse_above:g} vs the best in [{low:g}, {high:g}]",
        "(a) ~0%; (b) a few % worse",
        "both parts, {level} intervals from redraws of the seed means (moderated seed sds): (a) holds if the spread's "
        "interval is at or below {limit:g}% {ours}, fails above; (b) holds if the difference's interval is above "
        "{cost:g}%, fails if it lies at or below it (a cost that small is not 'a few percent') {ours}",
        "kaplan_fig5_ffratio",
        kaplan.knob_spread,
        # "a few percent" of cost is false if the cost is at most 1%
        dict(knob="ff_ratio", low=1.0, high=4.0, limit=BARELY, worse_above=8.0, cost=1.0),
        lr_systematic=True,
    ),
    Claim(
        "kaplan_headdim",
        KAPLAN + " (Fig. 5)",
        "Head dimension barely matters at fixed N and width",
        "spread of the seed-mean loss increase (%) over head dimensions",
        "within ~2%",
        "holds if the spread's {level} interval (the spread -+ the noise's own, over redraws of the seed means) is "
        "at or below {limit:g}%; fails above; inconclusive if it straddles {limit:g}% or one seed",
        "kaplan_fig5_headdim",
        kaplan.knob_spread,
        dict(knob="d_head", low=0.0, high=float("inf"), limit=BARELY),  # Kaplan's "within ~2%"
        lr_systematic=True,
    ),
    Claim(
        "kaplan_depth_collapse",
        KAPLAN + " (Fig. 6)",
        "Counted in non-embedding N, depths >= 2 collapse onto one trend; 1-layer models fall above it",
        "(a) lack of fit (% rms beyond the seed noise, from the F statistic) of the depth >= 2 seed means around "
        "one power law in non-embedding N; (b) 1-layer offset (%) from it; restated at total parameters (the "
        "paper's contrast) and at training FLOPs",
        "collapse with non-embedding N (1-layer models apart); depths separate with embeddings",
        "(a) holds if the {level} interval of the depth >= 2 means' lack of fit beyond the seed noise (% rms, from "
        "F against F(k-2, seed dof)) lies at or below {margin:g}% {ours}, fails if it lies above, inconclusive if it "
        "straddles it; (b) holds if the offset's {level} t-interval (the seed noise and the deep shapes' lack of fit "
        "beyond it) lies above {margin:g}%, fails if it lies at or below it (no further off the trend than (a) allows "
        "the deeper ones); both needed",
        "kaplan_fig6",
        kaplan.depth_collapse,
        dict(margin=BARELY),  # "collapse onto one trend": within BARELY rms of one power law beyond the seed noise
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "kaplan_power_law",
        KAPLAN + " (Eq. 1.5)",
        "Loss follows a power law in non-embedding N",
        "exponent alpha_N with {level} CI; rms residual; curvature of ln L in ln N (lack of fit) and its sagitta "
        "over the N span, with {level} CIs",
        "alpha_N = {kaplan_alpha_n} (WebText2, their BPE; their constants are not ours)",
        "holds if alpha's interval is above 0, the runs' rms residual is below {rms_limit:g}% and the {level} "
        "interval of the sagitta (the bow of ln L from a straight line at the middle of the N span) lies within "
        "+-{curvature:g}% {ours}; fails if the sagitta's interval lies wholly outside it (not a power law) or "
        "alpha's at or below 0; inconclusive otherwise (a curvature merely not detected is not a straight line)",
        "kaplan_power_law",
        kaplan.power_law,
        # the fit's rms residual below BARELY, and its curvature "not detectable" read as the sagitta (how far ln L
        # bows from the straight line at the middle of the trained N span) within +-1% of the loss, half of it
        dict(rms_limit=BARELY, curvature=BARELY / 2),
        lr_systematic=True,
    ),
    Claim(
        "levine_crossover_slope",
        LEVINE,
        "The width at which the deeper of two depths starts to win grows exponentially with depth, ln 3 per layer "
        "(threshold L_th = log3 d)",
        "slope of ln(crossover width) vs depth over consecutive in-range pairs, bootstrap {level} CI; every pair's "
        "crossover width with its interval; pairs that never cross; restated with the depths compared at fixed "
        "total parameters and at fixed training FLOPs",
        "ln 3 = {threshold:.3f} per layer (threshold); under the fitted optimum d*(L) = {levine_optimum} the deeper "
        "model's width at the crossover rises 0.03-0.11 per layer (computed for the pairs measured)",
        "holds if the slope's interval includes ln 3 and excludes the fitted optimum's slope for the same pairs; "
        "fails if it excludes ln 3; inconclusive if it includes both, or no slope or interval",
        "levine_crossover",
        levine.crossover_slope,
        dict(threshold=fits.LEVINE_LN_BASE),  # Levine's threshold: the crossover at width 3^L (the paper's)
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "levine_optimal_depth",
        LEVINE,
        "The optimal depth grows with model size as the fitted optimum d*(L) = {levine_optimum}, N = 12 L d*^2, says",
        "argmin over trained depths at each trained N (bootstrap over seeds) vs the trained depth nearest Levine's "
        "L*(N)",
        "~80 layers at 175B; L* = 1 at N = 3.2e5, 2 at 7.1e5, 4 at 1.8e6",
        "where L* moves to a deeper trained depth over our N: holds if the optimum grows from the smallest to the "
        "largest N in >= {decided:.1%} of redraws, fails if it declines in >= {decided:.1%} or both ends' argmins are "
        "decided (>= {decided:.1%}) and do not grow; where it does not, growth cannot be seen: fails if another depth "
        "beats L*'s at either end (a one-sided t bound on its lead, split over the other depths and both ends, above 0 "
        "beyond its systematic: both depths' learning-rate excess and the warm-up tilt), else inconclusive (never "
        "holds)",
        "levine_optimal_depth",
        levine.optimal_depth_growth,
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "levine_depth_inefficiency",
        LEVINE,
        "At fixed N, deepening pays below the threshold L_th = log3(width) and stops paying above it",
        "mean loss gain (%) per added layer of each depth over the next shallower trained depth at the same N, each "
        "pair over its own trained N, for pairs below the threshold (the deeper model's N {at_crossover:g}x or more "
        "past the N where its width is 3^L) and above it (the shallower's {at_crossover:g}x or more short of its "
        "own), and their per-N contrast (below - above); bootstrap {level} CIs",
        "below L_th depth is efficient (gain > 0); above it deepening is no better than widening",
        "holds if the gain per layer below has its interval above {pays:g}% {ours}, the gain per layer above has its "
        "interval at or below {pays:g}% and the contrast has its interval above 0; fails if the gain below lies at or "
        "below {pays:g}%, the gain above lies above {pays:g}%, or the contrast at or below 0; inconclusive if one is "
        "undecided or a side has no pair (pairs across a threshold or within {at_crossover:g}x in N of one, the "
        "literal row's buffer, are on neither side and counted)",
        "levine_optimal_depth",
        levine.depth_contrast,
        dict(pays=PAYS_MARGIN),
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "levine_literal_threshold",
        LEVINE,
        "Read literally, the threshold L_th = log3(width) says the deeper of two consecutive depths wins once its "
        "width passes 3^L: the shallower wins before, the deeper past it",
        "mean loss gain (%) of the deeper model over the shallower at the trained N before each pair's literal "
        "crossover (N below 1/{at_crossover:g} of it) and past it (above {at_crossover:g}x), over the pairs of the "
        "design and its small-N block; bootstrap {level} CIs",
        "the deeper model's width 3^L: N ~ 2.0e3 for depths 1 -> 2, 2.6e4 for 2 -> 3, 3.2e5 for 3 -> 4 (d_ff = 4 d)",
        "holds if the gain past the crossover has its interval above {pays:g}% and the gain before it below "
        "-{pays:g}%; fails if either lies within {pays:g}% of no win for its side (the deeper not better than that "
        "past, or not worse than that before) {ours}; inconclusive otherwise, or with a side with no point (points "
        "within a factor {at_crossover:g} of a crossover are on neither side)",
        "levine_literal",
        levine.literal_threshold,
        dict(pays=PAYS_MARGIN),
        lr_systematic=True,
        per_count=True,
    ),
    Claim(
        "noci_sde_describes_finite",
        NOCI,
        "The covariance SDE describes finite shaped networks at initialization, and they converge to it as the width "
        "grows (depth = T x width)",
        "the gap of the finite networks' terminal correlation law to the SDE's (run at dt and dt / 2, extrapolated "
        "to dt -> 0), in mean, sd and quartiles, extrapolated to n -> infinity (a + c / n), with {level} intervals; "
        "the rate in n; W1 at the smallest n against sampling (permutation {level} quantile) and against the "
        "drift-only ODE's; stopped-path fractions of both sides",
        "agreement 'surprisingly good' at finite size",
        "per block: holds if every limit gap's {level} interval lies within +-{margin_sd:g} of the SDE's sd of rho_T "
        "{ours}, W1 at the smallest n is above sampling, and there the finite law lies closer (W1) to the SDE's than "
        "to the drift-only ODE's terminal value (the ratio's {level} interval at or below 1), and at the largest n the "
        "difference of the stopped-path fractions (finite - SDE; Newcombe's {level} interval) lies within "
        "+-{stopped_margin:.3f} {ours}; fails if a limit gap's interval or the stopped fractions' difference lies "
        "wholly outside its margin, or the ratio's above 1; inconclusive if one straddles or the smallest n is already "
        "within sampling; both sides conditioned on finishing",
        "shaped_sde_convergence",
        noci.sde_convergence,
        dict(margin_sd=SDE_MARGIN_SD, stopped_margin=STOPPED_MARGIN),
    ),
    Claim(
        "noci_no_rank_collapse",
        NOCI,
        "Shaped attention prevents rank collapse; standard softmax attention with the same residual drives token "
        "correlations to 1",
        "mean pairwise correlation at terminal t",
        "standard -> 1; shaped stays away from 1",
        "holds if the standard's {level} interval is above {standard_limit:g}, that of (standard - shaped) above "
        "{gap_limit:g} (thresholds chosen by this project, not the paper) and that of (shaped - SDE) within "
        "+-{margin_sd:g} of the SDE law's sd (the margin of noci_sde_describes_finite); fails if either of the first "
        "lies at or below its limit or the last wholly outside its margin",
        "shaped_rank_collapse",
        noci.rank_collapse,
        dict(standard_limit=0.9, gap_limit=0.3, margin_sd=SDE_MARGIN_SD),
    ),
    Claim(
        "noci_entropy_collapse",
        NOCI,
        "In training at large learning rates, standard attention's entropy collapses while shaped attention's does not",
        "lowest layer's final/initial attention entropy at the largest lr, finished runs only: each kind's geometric "
        "mean over seeds with the {level} t-interval of its mean log, and shaped's over standard's with the Welch "
        "interval of the log difference; the same for the temperature-only control (softmax attention at the "
        "shaped temperature)",
        "collapse (entropy -> 0) for standard only",
        "holds if standard's interval is below {limit:g}, shaped's at or above {limit:g} {ours} and shaped's ratio "
        "over standard's above 1; fails if standard's is at or above {limit:g}, shaped's below, or shaped over "
        "standard at or below 1; inconclusive if any straddles its limit or one seed; diverged runs excluded and "
        "counted. The temperature-only control, gated alike, does not change the verdict: where the claim holds, the "
        "control keeping its entropy attributes the difference to the temperature, collapsing to the centring",
        "shaped_entropy",
        noci.entropy_collapse,
        dict(limit=0.2),  # the final / initial entropy below which attention has collapsed
    ),
    Claim(
        "noci_glue",
        NOCI,
        "Fine-tuned on GLUE, the shaped model beats the baseline (most at depth 24 on CoLA and RTE)",
        "per task, the dev headline score (CoLA: Matthews correlation, F1 beside it; RTE: accuracy) of a standard "
        "and a shaped model of one shape, each pretrained once on this config's corpus and fine-tuned over seeds; "
        "shaped - standard with its {level} Welch t-interval over the fine-tuning seeds",
        "shaped > baseline",
        "per task: holds if the {level} interval of shaped - standard lies above 0, fails if it lies at or below 0, "
        "inconclusive if it straddles 0 or has under 2 seeds a side, and inconclusive whenever both models' score "
        "intervals hold chance (MCC 0, RTE 50%): no effect can show at chance; the claim holds if every task "
        "holds and fails if one fails",
        "noci_glue",
        glue.glue_beats,
        not_run_reason="this config has no glue block (GLUE fine-tuning downloads CoLA.zip and RTE.zip, 1.1 MB, "
        "checked against their published sha256): on a machine with network access run "
        "`snakemake --cores all --configfile config/glue.yaml`",
    ),
]

BY_ID = {claim.id: claim for claim in CLAIMS}


def template_names() -> dict:
    """The names every template may use beside its claim's params, read when a template is filled: the level's
    (`level`: "95%" at the default; `miss`: 1 - level, 0.05; `decided`: levine's share of redraws, 0.975) follow
    `fits.level()` at that moment."""
    return {
        "ours": "(threshold chosen by this project, not the paper)",
        "kaplan_alpha_n": fits.KAPLAN_ALPHA_N,
        "levine_optimum": fits.LEVINE_OPTIMUM_TEXT,
        "at_crossover": AT_CROSSOVER,
        "decided": levine.decided(),
        "level": fits.level_text(),
        "miss": round(1 - fits.level(), 12),
    }
