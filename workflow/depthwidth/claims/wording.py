"""Words last: the one place that turns the rules' numbers (`verdicts.Evidence`) into the text of claims.csv,
claims.md, the report captions and the findings page.

Each rule's record has a renderer (`RENDER`) that gives the five text columns of its row (`Text`); `NEEDS` says
each kind of "what would decide it" and `PART_NAMES` each statistic a systematic widened. Nothing here decides
anything: every number and verdict comes from the record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from depthwidth import fits
from depthwidth.claims import glue, kaplan, levine, noci
from depthwidth.claims.registry import Claim, template_names
from depthwidth.claims.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    VERDICTS,
    Evidence,
    Need,
    Noise,
    Part,
    Unmeasurable,
    furthest_over,
    over_margin,
    widest,
)
from depthwidth.columns import CLAIMS_TEXT_COLUMNS
from depthwidth.stalls import STALL_EXCESS

# ---------------------------------------------------------------- numbers as text


def number_text(value: float, fmt: str = ".2f") -> str:
    return format(value, fmt) if np.isfinite(value) else "nan"


def interval_text(low: float, high: float, fmt: str = ".2f") -> str:
    return (
        f"[{number_text(low, fmt)}, {number_text(high, fmt)}]"
        if np.isfinite(low) and np.isfinite(high)
        else "no interval"
    )


def fill(template: str, claim: Claim) -> str:
    """A registry template with its claim's params and the names every template may use."""
    return template.format(**template_names(), **claim.params)


ONE_SEED = "one seed per shape: the seed noise is not measured"


def noise_text(noise: Noise) -> str:
    """The seed-noise column: pooled sd of the loss (%) with its degrees of freedom, and, where the figure's
    intervals moderated each shape's sd, the prior they shrank it toward and its weight in dof."""
    if not noise.dof:
        return ONE_SEED
    text = f"seed sd {noise.sd:.2f}% of the loss (pooled, {int(noise.dof)} dof; {int(noise.seeds)} seeds per shape)"
    if np.isfinite(noise.prior_sd) and noise.prior_dof == math.inf:
        text += f"; moderated: the shapes' sds scatter as sampling does, one sd ({noise.prior_sd:.2f}%) for every shape"
    elif np.isfinite(noise.prior_sd) and noise.prior_dof > 0:
        text += f"; moderated: each shape's sd shrunk toward {noise.prior_sd:.2f}% with {noise.prior_dof:.1f} prior dof"
    return text


@dataclass(frozen=True)
class Text:
    """A row's text columns. `value` is a list of clauses (joined by '; '): its first, the headline, restates the
    row at another count and opens the summary."""

    value: list[str]
    interval: str = ""
    noise: str = ""
    at_our_scale: str = ""
    needs: list[str] = ()

    @property
    def headline(self) -> str:
        return self.value[0]


# ---------------------------------------------------------------- what would decide it

# what a seeds need resolves (its `what`), by name
EFFECTS = {
    "spread_distance": lambda n: f"the spread's distance to {n['limit']:g}%",
    "cost_difference": lambda n: "the (b) difference",
    "offset": lambda n: "the 1-layer offset",
    "runner_up_gap": lambda n: "the closest runner-up gap (%)",
    "contrast": lambda n: "the contrast (%)",
    "smaller_side_gain": lambda n: "the smaller side's gain (%)",
    "slope_between": lambda n: f"the slope (per layer) between ln 3 and the fitted optimum's {n['fitted']:.3f}",
}


def seeds_text(n: Mapping) -> str:
    """An undecided part that more seeds may resolve, where `decide` did not say how many (config decide.sims 0)."""
    what = f"{EFFECTS[n['what']](n)} ({n['effect']:+.2f})"
    first = "at least 2 seeds per shape to measure the seed noise, then " if n["one_seed"] else ""
    return (
        f"{first}more seeds per shape may resolve {what}; how many is not computed here: `decide` finds it by the "
        "row's own procedure redrawn at more seeds (config decide.sims is 0)"
    )


def _levine_next(n: Mapping) -> str:
    if n["next_depth"] is None:
        return "a deeper trained depth than the one Levine's fit predicts"
    return (
        f"Levine's fit moves the optimum to depth {n['next_depth']} only near N = {n['next_n']:.2g} (trained up to "
        f"{n['n_now']:.2g})"
    )


def _room_fix(n: Mapping, more: str, outside: str) -> str:
    """What would decide an equivalence part that straddles its margin: ~factor x `more` where its point leaves room
    inside, `outside` where it does not."""
    return f"~{n['factor']:.1f}x {more}" if n["room"] > 0 else outside


def _times(factor: float) -> str:
    """A factor of runs or N values as the needs say it: ~3.2x, ~41x; 'over 1000x' past what is priced."""
    if not math.isfinite(factor):
        return f"over {fits.MOST_GROUPS_FACTOR:g}x"
    return f"~{factor:.1f}x" if factor < 10 else f"~{factor:.0f}x"


def _sagitta(n: Mapping) -> str:
    reach = f"the sagitta's interval {interval_text(n['low'], n['high'])}% reaches past +-{n['margin']:g}%"
    inside = n["margin"] - abs(n["value"])
    if n["room"] > 0:
        fix = f"{_times(n['factor'])} the N values (now {n['groups']}) to place it inside"
    elif inside > 0:
        fix = (
            f"its point lies {inside:.2g}% inside the margin and the systematic reaches {n['toward']:.2g}% toward it: "
            "no count of N values places the interval inside (undecidable at this protocol unless it fails)"
        )
    else:
        fix = "its point lies outside, so more N values would show the bow"
    return f"{reach}: {fix}"


def _growth_unseen(n: Mapping) -> str:
    edge = " (the edge of the trained depths)" if n["edge"] else ""
    return (
        f"Levine's fit keeps the optimum at trained depth {n['depth']}{edge} over the trained N, so growth cannot be "
        f"seen here: {_levine_next(n)}"
    )


def _argmin_agrees(n: Mapping) -> str:
    text = "the argmin agrees with it at both ends, a prediction that could have failed (a depth that beats it "
    text += "refutes it)"
    if n["edge"]:
        text += f", but at the edge it only bounds the optimum (at or {n['side']} depth {n['depth']}), not locates it"
    return text


def _kind_resolve(n: Mapping) -> str:
    if n["seeds"] is None:
        return f"{n['attention']} sits at the limit {n['limit']:g}: more seeds would not decide it"
    return (
        f"about {n['seeds']} seeds of {n['attention']} would resolve its distance to the limit ({n['distance']:+.2f})"
    )


def _glue_resolve(n: Mapping) -> str:
    if n["seeds"] is None:
        return f"{n['task']}: the difference is 0: more seeds would not decide it"
    return f"{n['task']}: about {n['seeds']} seeds per model would resolve the difference ({n['difference']:+.3f})"


def _limit_gap(n: Mapping) -> str:
    fix = _room_fix(n, "the samples", "its point lies outside")
    return f"{n['block']}: the {n['functional']}'s limit gap straddles +-{n['margin']:.4f}: {fix}"


def _stopped(n: Mapping) -> str:
    outside = "its point lies outside: SDE settings where paths rarely stop (larger tau0, smaller T)"
    fix = _room_fix(n, "the samples", outside)
    return f"{n['block']}: the stopped fractions' difference at n={n['n']} straddles +-{n['margin']:.3f}: {fix}"


def decide_text(n: Mapping) -> str:
    """What `decide` found (claims/decide.py): the least seeds per shape at which the row's own procedure, redrawn
    from its tables' noise, decides it; or why no count of seeds can; read at look 2, as the first stage priced it."""
    said = _decide_text(n)
    return f"as the first stage's seeds priced it (look 1): {said}" if n.get("look", 1) == 2 else said


@dataclass(frozen=True)
class Unit:
    """What a row grows by (decide.Growth.unit), in words: k of it (`grown`, with {k}), the count now (`now`, with
    {k}), what a seed is counted by (`per`), what one unit counts (`count`: seed, sample), the noise taken out, the
    other design that would be left, and the jobs k adds."""

    grown: str
    now: str
    per: str
    count: str
    noise: str
    other: str
    jobs: str


_UNITS = {
    "shape": Unit("{k} seeds per shape", "{k}", "per shape", "seed", "seed",
                  "more N, other shapes) or a smaller learning-rate systematic", "runs"),
    "kind": Unit("{k} seeds per attention kind", "{k}", "per attention kind", "seed", "seed", "other rates or kinds)",
                 "runs"),
    "samples": Unit("{k}x the samples of each simulation", "{k}x", "per simulation", "sample", "sampling",
                    "other widths or SDE settings)", "simulation jobs"),
}  # fmt: skip


def _decide_text(n: Mapping) -> str:
    unit = _UNITS[n.get("unit", "shape")]
    if n["undecidable"]:
        return (
            f"undecidable at this protocol: with the {unit.noise} noise taken out its rule still gives inconclusive, "
            f"so no count of {unit.count}s decides it; only another design ({unit.other}"
        )
    if not n["noise_known"]:  # one seed per shape or kind (the samples of a simulation always measure theirs)
        return f"{n['seeds_now']} seed {unit.per} measures no seed noise: a second seed {unit.per} would price the rest"
    if n["seeds"] is None:
        return (
            f"not within {unit.grown.format(k=n['tried'])}: there its own procedure, redrawn {n['sims']} times from "
            f"its tables' noise, decides it in {n['decided']:.0%} of the redraws"
        )
    # job-minutes at the design's registered price (plan.second.Price): the same on every machine
    return (
        f"{unit.grown.format(k=n['seeds'])} (now {unit.now.format(k=n['seeds_now'])}: {n['runs']} more {unit.jobs}, "
        f"about {_number(n['job_minutes'])} job-minutes) decide it in {n['decided']:.0%} of {n['sims']} redraws of its "
        "own procedure from its tables' noise"
    )


NEEDS: dict[str, Callable[[Mapping], str]] = {
    "decide": decide_text,
    "seeds": seeds_text,
    "deep_shapes": lambda n: "shapes of depth >= 2 at some N",
    "shapes": lambda n: "trained shapes for this figure",
    "aspect_span": lambda n: (
        f"depths spanning {n['span']:g}x of aspect ratio at each N (tested: {n['tested']:.0f}x; at fixed N the aspect "
        "ratio d/L moves as L^-1.5: depths 2 to ~23)"
    ),
    "second_knob_value": lambda n: f"train a second {n['knob']} value in [{n['low']:g}, {n['high']:g}] for part (a)",
    "large_knob_value": lambda n: f"train {n['knob']} >= {n['at_least']:g} for part (b)",
    "deep_line": lambda n: "at least two shapes of depth >= 2 at distinct N: two design N, or two depths >= 2",
    "one_layer_models": lambda n: "train 1-layer models for part (b), the 1-layer offset",
    "lack_of_fit": lambda n: (
        f"(a) the lack of fit's interval {interval_text(n['low'], n['high'])} straddles the {n['margin']:g}% margin: "
        "more seeds per shape (its upper end shrinks as the seed noise's interval does) or more shapes per depth"
    ),
    "n_values": lambda n: "at least two distinct N for the power law",
    "alpha_tokens": lambda n: (
        f"the interval's half-width is {n['half']:.3f}: Kaplan's L(N, D) predicts a slope that large at "
        f"~{n['tokens']:.2g} tokens per run (now {n['now']:.3g})"
        if np.isfinite(n["tokens"])
        else f"the interval's half-width {n['half']:.3f} exceeds even Kaplan's unlimited-data alpha_N"
    ),
    "alpha_n_values": lambda n: (
        f"or {_times(n['factor'])} the N values (now {n['groups']}) for this alpha ({n['alpha']:.3f}) to clear 0"
    ),
    "curvature_test": lambda n: "at least 4 distinct N, with a residual dof, for the curvature test",
    "sagitta": _sagitta,
    "rms": lambda n: f"an rms residual below {n['limit']:g}% (now {n['rms']:.2f}%): the runs scatter too much",
    "two_depths_two_widths": lambda n: "at least two depths with two widths each",
    "crossover_seeds": lambda n: "at least 2 seeds per shape to give each crossover an interval",
    "interval_seeds": lambda n: "at least 2 seeds per shape for the bootstrap interval",
    "undefined_slope": lambda n: (
        f"in {n['undefined']:.0%} of the redraws a pair does not cross: more seeds or wider N per depth"
    ),
    "common_range": lambda n: "every depth trained over a common range of N",
    "pair_range": lambda n: "two neighbouring depths trained over a shared range of N",
    "bootstrap_seeds": lambda n: (
        "at least 2 seeds per shape for the bootstrap"
        + (f" (the closest runner-up is {n['gap']:.2f}% behind)" if "gap" in n else "")
    ),
    "levine_next": _levine_next,
    "growth_unseen": _growth_unseen,
    "argmin_agrees": _argmin_agrees,
    "undecided": lambda n: "undecided: " + ", ".join(SIDE_NAMES[name](n) for name in n["parts"]),
    "contrast_sides": lambda n: (
        "pairs of depths on both sides of L_th = log3(width) at a shared N: "
        + ("smaller N (narrower deep models)" if n["more"] == "smaller" else "larger N (wider deep models)")
    ),
    "literal_sides": lambda n: (
        f"trained N on both sides of each crossover, a factor {n['factor']:g} or more away from it (smaller N for "
        "'before', larger for 'past')"
    ),
    "literal_block": lambda n: "the literal block: the shallowest depths at N on both sides of N ~ 2e3",
    "simulations": lambda n: "the simulations of this figure",
    "limit_gap": _limit_gap,
    "w1_seen": lambda n: (
        f"{n['block']}: W1 at n={n['n']} is within sampling; ~{n['factor']:.1f}x the samples or smaller n"
    ),
    "ode_ratio": lambda n: f"{n['block']}: at n={n['n']} the SDE and the ODE lie about as close: more samples",
    "stopped": _stopped,
    "networks": lambda n: "more sampled networks",
    "kind_seeds": lambda n: f"at least 2 seeds of {n['attention']} at lr {n['lr']:g} (3 for a usable t-interval)",
    "kind_resolve": _kind_resolve,
    "both_kinds_seeds": lambda n: "more seeds of both kinds: shaped over standard straddles 1",
    "control": lambda n: f"train the control (add {n['control']} to shaped.training.attentions)",
    "glue_chance": lambda n: (
        f"{n['task']}: models that learn the task (both sit at chance): a deeper or longer pretraining, not more seeds"
    ),
    "glue_seeds": lambda n: f"{n['task']}: at least 2 fine-tuning seeds per model (3 for a usable interval)",
    "glue_resolve": _glue_resolve,
}


def needs_text(needs: Iterable[Need]) -> list[str]:
    return [NEEDS[need.kind](need.numbers) for need in needs]


# ---------------------------------------------------------------- the statistics a systematic widened


def _span(at: Mapping) -> str:
    return f"all {at['knob']} values" if math.isinf(at["high"]) else f"{at['knob']} in [{at['low']:g}, {at['high']:g}]"


PART_NAMES: dict[str, Callable[[Mapping], str]] = {
    "spread": lambda at: f"the spread at N={at['n']:.2g}" if "n" in at else f"the spread over {_span(at)}",
    "cost": lambda at: f"{at['knob']} = {at['top']:g} vs the best in [{at['low']:g}, {at['high']:g}]",
    "lack_of_fit": lambda at: "the lack of fit",
    "offset": lambda at: "the 1-layer offset",
    "sagitta": lambda at: "the sagitta",
    "slope": lambda at: "the crossover slope",
    "argmin": lambda at: f"the argmin depth at N={at['n']:.2g}",
    **{name: (lambda at, name=name: f"the {name.replace('_', ' ')}") for name in (*levine.CONTRAST, "gain_before")},
    "gain_past": lambda at: "the gain past",
}
# the sides of the Levine rows that read several, by part name (the contrast's "stops paying" names its margin)
SIDE_NAMES: dict[str, Callable[[Mapping], str]] = {
    "gain_below": lambda n: "deepening pays below",
    "gain_above": lambda n: f"stops paying above (gain <= {n['pays']:g}%)",
    "contrast": lambda n: "the contrast is positive",
    "gain_before": lambda n: "the shallower wins before",
    "gain_past": lambda n: "the deeper wins past",
}


# the other statistics a row may be decided by (claims.csv's `part`)
PART_NAMES.update(
    {
        "alpha": lambda at: "alpha",
        "rms": lambda at: "the rms residual",
        "growth": lambda at: "the share of redraws in which the optimum grows",
        "levine_beaten": lambda at: (
            f"depth {at['depth']}'s loss below L*'s depth {at['levine']}'s at N={at['n']:.2g} (100 ln ratio; "
            "interval split over the depths and ends compared)"
        ),
        "limit_gap": lambda at: f"{at['block']}: the {at['functional']}'s limit gap",
        "w1_seen": lambda at: (
            f"{at['block']}: W1 at the smallest n (margin: its sampling {fits.level_text()} quantile)"
        ),
        "ode_ratio": lambda at: f"{at['block']}: W1 to the SDE / W1 to the drift-only ODE",
        "stopped_difference": lambda at: f"{at['block']}: finite - SDE stopped fraction at the largest n",
        "standard": lambda at: "standard's mean correlation",
        "difference": lambda at: "standard - shaped",
        "sde_gap": lambda at: "shaped - SDE",
        "ratio": lambda at: f"{at['attention']}'s entropy ratio",
        "shaped_over_standard": lambda at: "shaped / standard",
        "shaped_minus_standard": lambda at: f"{at['task']}: shaped - standard",
    }
)


def part_name(part: Part) -> str:
    return PART_NAMES[part.name](part.at)


part_label = part_name


def margin_text(margin: float) -> str:
    return f"; margin {margin:.3g}%" if math.isfinite(margin) else ""


def systematic_text(carried: tuple[Part, ...], fallback: float) -> str:
    """The noise column's systematics: the statistics' own one-sided learning-rate shifts (their largest, and how
    many widened intervals exceed their margin) or the global fallback, and the warm-up's tilt where carried (its
    largest); '' where nothing was widened."""
    own = [p for p in carried if p.own]
    said = []
    if own:
        worst = max(own, key=lambda p: (p.unit == "%", p.down - p.tilt_down + p.up - p.tilt_up))
        said.append(
            "learning-rate systematic from each shape's own scan, one-sided: largest "
            f"-{worst.down - worst.tilt_down:.2f}/+{worst.up - worst.tilt_up:.2f}{worst.unit} ({part_name(worst)}"
            f"{margin_text(worst.margin)}) over {len(own)} " + ("interval" if len(own) == 1 else "intervals")
        )
    if len(own) < len(carried):
        said.append(
            f"learning-rate systematic +-{fallback:.2f}% (lr_check: the largest excess over a shape's best rate; "
            "sweep.lr_grid measures each shape's own)"
        )
    tilted = [p for p in carried if p.tilt_down or p.tilt_up]
    if tilted:
        worst = max(tilted, key=lambda p: (p.unit == "%", p.tilt_down + p.tilt_up))
        said.append(
            f"warm-up tilt (config `tilt`, docs/protocol-choices.md): largest -{worst.tilt_down:.2f}/"
            f"+{worst.tilt_up:.2f}{worst.unit} ({part_name(worst)}) over {len(tilted)} "
            + ("interval" if len(tilted) == 1 else "intervals")
        )
    over = over_margin(carried)
    if over:
        said.append(f"{len(over)} of them wider than their margin")  # of the widened intervals, by either
    return "; ".join(said)


NOTHING_WIDENED = (
    "learning-rate systematic: no interval of this row widened (none was computed, or no shape was scanned and no "
    "lr_check ran)"
)


def stall_text(stalled: int, verdict: str, unstalled: str, headline: str) -> str:
    """The noise column's stall flag: how many of the row's runs stalled and the row read without them (the
    verdict stays the reading with every run, fixed before any was flagged)."""
    if stalled == 0:
        return f"stall flag (> {100 * STALL_EXCESS:g}% above the median of the shape's other seeds): no run stalled"
    runs = "run" if stalled == 1 else "runs"
    same = "the same verdict" if unstalled == verdict else f"{unstalled}, where every run gives {verdict}"
    return (
        f"stall flag (> {100 * STALL_EXCESS:g}% above the median of the shape's other seeds): {stalled} {runs} "
        f"stalled; read without them: {same} ({headline})"
    )


def flip_text(verdict: str, shifted: str, carried: tuple[Part, ...]) -> str:
    """Why a verdict the learning-rate systematic turns is inconclusive, and, where a systematic exceeds its
    statistic's margin, that the row is undecidable at this protocol."""
    largest = widest(carried)
    text = (
        f"the verdict would be {verdict} but turns {shifted} within the learning-rate systematic (each shape's loss "
        f"may lie above its loss at its best rate, by up to {largest.width:.2f}{largest.unit} on a statistic here)"
    )
    worst = furthest_over(carried)
    if worst is not None:
        text += (
            f"; undecidable at this protocol: systematic {worst.width:.2f}% > margin {worst.margin:g}% "
            f"({part_name(worst)})"
        )
    return text + ": every shape of the row trained at its own best rate"


# ---------------------------------------------------------------- each rule's record in words


def bracketing_text(brackets: Iterable[levine.Bracket]) -> str:
    """Which crossovers the trained N bracket, per reading, and for each one they do not, the side without one."""
    prefix = {"threshold": "the threshold's", "fitted": "the fitted optimum's", "literal": ""}
    yes: dict[str, list[str]] = {}
    no: dict[str, list[str]] = {}
    factor = levine.AT_CROSSOVER
    for b in brackets:
        yes.setdefault(b.reading, [])
        no.setdefault(b.reading, [])
        pair = f"{b.shallow}->{b.deep}"
        if not math.isfinite(b.n):
            no[b.reading].append(f"{pair} (at no finite N)")
            continue
        missing = " or ".join(side for side, has in (("below", b.below), ("above", b.above)) if not has)
        (no if missing else yes)[b.reading].append(
            f"{pair} (N ~{b.n:.2g}" + (f": none {factor:g}x {missing})" if missing else ")")
        )

    def said(lists: dict[str, list[str]]) -> str:
        return ", ".join(" ".join(filter(None, (prefix[r], ", ".join(items)))) for r, items in lists.items() if items)

    return (
        f"bracketed by the trained N (one {factor:g}x or more on each side): {said(yes) or 'none'}; "
        f"not: {said(no) or 'none'}"
    )


def aspect_basin(e: kaplan.AspectBasin, claim: Claim) -> Text:
    windows = [
        f"N={w.n:.2g}: {w.spread:.2f}% {interval_text(w.low, w.high)} over {w.span:.0f}x, d/L "
        f"{w.ratio_low:.3g}-{w.ratio_high:.3g} ({w.shapes} shapes)"
        for w in e.windows
    ]
    scale = f"a span of aspect ratios of {e.span:.0f}x was tested (Kaplan's basin: ~{e.span_limit:g}x)" + (
        " -- partial" if e.partial else ""
    )
    if e.outside:
        reach = ", ".join(f"N={w.n:.2g}: d/L {w.ratio_low:.3g}-{w.ratio_high:.3g}" for w in e.outside)
        scale += (
            f"; windows reaching outside Kaplan's basin (d/L {e.basin[0]:g}-{e.basin[1]:g}): {reach} -- the verdict "
            "is about these windows: a spread there is no evidence against his basin"
        )
    return Text(
        value=[f"{'PARTIAL: ' if e.partial else ''}largest spread {e.largest:.2f}%", *windows],
        interval="; ".join(f"{w.spread:.2f}% {interval_text(w.low, w.high)}" for w in e.windows),
        noise=noise_text(e.noise),
        at_our_scale=scale,
        needs=needs_text(e.needs),
    )


def knob_spread(e: kaplan.KnobSpread, claim: Claim) -> Text:
    spread, *cost = e.parts
    value = f"(a) spread {spread.value:.2f}% over {_span(spread.at)} ({e.values} values)"
    interval = f"(a) {interval_text(spread.low, spread.high)}"
    if e.worse_above is not None and not cost:
        value += f"; (b) no {e.knob} >= {e.worse_above:g} trained"
    for b in cost:
        value += f"; (b) {e.knob} = {e.top:g} is {b.value:+.2f}% vs the best in [{e.low:g}, {e.high:g}]"
        interval += f"; (b) {interval_text(b.low, b.high)}"
    return Text(
        value=[value],
        interval=interval,
        noise=noise_text(e.noise),
        at_our_scale="the paper's statement is about shape, not scale: same thresholds",
        needs=needs_text(e.needs),
    )


COUNTING = "the paper's statement is about parameter counting, not scale"


def depth_collapse(e: kaplan.DepthCollapse, claim: Claim) -> Text:
    offset, lack = e.parts
    return Text(
        value=[  # the offset first: (a) alone never decides the row, (b) is what separates Kaplan's Fig. 6
            f"(b) 1-layer offset {number_text(offset.value, '+.2f')}%",
            f"(a) scatter {e.scatter:.2f}%, F = {number_text(e.f)} ({fits.level_text()} quantile "
            f"{number_text(e.f95)}), lack of fit beyond the seed noise {number_text(lack.value)}% rms (margin "
            f"{lack.margin:g}%)",
        ],
        interval=f"(b) 1-layer offset (%) {interval_text(offset.low, offset.high)}; "
        f"(a) lack of fit (% rms) {interval_text(lack.low, lack.high)}",
        noise=noise_text(e.noise),
        at_our_scale=COUNTING,
        needs=needs_text(e.needs),
    )


COVERS = {True: "includes", False: "excludes", None: "no interval"}  # kaplan.covers: whether alpha's interval holds it


def _covers(covered: bool | None, ref: float) -> str:
    return COVERS[covered] if np.isfinite(ref) else "cannot be compared with"


def _meets(meets: bool | None) -> str:
    return {True: "meets", False: "misses", None: "has no interval to compare with"}[meets]


def power_law(e: kaplan.PowerLaw, claim: Claim) -> Text:
    sagitta, alpha, rms = e.parts
    ends = alpha.low, alpha.high
    return Text(
        value=[
            f"alpha = {alpha.value:.3f}",
            f"curvature {e.curvature:+.4f}, a sagitta of {number_text(sagitta.value, '+.2f')}% over the N span",
            f"rms residual {rms.value:.2f}% ({e.points} runs at {e.groups} N)",
        ],
        interval=f"alpha {interval_text(*ends, '.3f')}; "
        f"curvature {interval_text(e.curvature_low, e.curvature_high, '+.4f')}; "
        f"sagitta (%) {interval_text(sagitta.low, sagitta.high)}",
        noise=noise_text(e.noise) + "; the intervals are from the fit's residuals over the N values' seed means (the "
        "seeds of one N share its deviation)",
        at_our_scale=f"alpha_N = {e.kaplan_alpha:.3f} (unlimited data): ours "
        f"{_covers(e.covers_alpha, e.kaplan_alpha)} it; "
        "L(N, D) along the runs' own path (each run's N and tokens, D ~ 20 N): "
        f"{number_text(e.kaplan_path_alpha, '.3f')}: "
        f"ours {_covers(e.covers_path, e.kaplan_path_alpha)} it (at one fixed {e.tokens:.3g} tokens/run it would be "
        f"{e.kaplan_local_alpha:.3f}; their constants belong to WebText2 and their BPE); along any path with D "
        f"proportional to N, Eq. 1.5's exponent lies in [{fits.KAPLAN_ALPHA_N}, {fits.KAPLAN_ALPHA_D}] whatever the "
        f"constants: ours {_meets(e.meets_path_range)} that range",
        needs=needs_text(e.needs),
    )


def crossover_slope(e: levine.CrossoverSlope, claim: Claim) -> Text:
    at_scale = (
        f"threshold: ln 3 = {e.threshold:.3f} per layer (crossover at width 3^L); fitted optimum d*(L): "
        f"{number_text(e.fitted, '.3f')} per layer for the deeper model's width at the crossover (where L* passes "
        f"the pair's midpoint; d*(L) itself rises {fits.LEVINE_WIDTH_SLOPE} per layer)"
    )
    if e.stage == "no_pairs":
        return Text(
            ["no pair of depths with two trained widths each"], at_our_scale=at_scale, needs=needs_text(e.needs)
        )
    at_scale += "; " + bracketing_text(e.brackets)
    pairs = ", ".join(
        f"{c.shallow}->{c.deep}: width {number_text(c.width, '.0f')} "
        # an extrapolated crossover's bootstrap range spans orders of magnitude: it says nothing
        + (
            f"{interval_text(c.low, c.high, '.0f')} (in range"
            + ("" if c.range_holds else "; the bootstrap range misses the point")
            + ")"
            if c.in_range
            else "(outside the trained N)"
        )
        for c in e.crossovers
        if c.crosses
    )
    never = ", ".join(f"{c.shallow}->{c.deep}" for c in e.crossovers if not c.crosses) or "none"
    found = [f"crossovers: {pairs or 'none'}", f"never overtakes: {never}"]
    if e.stage == "no_slope":
        missing = [
            f"{m.shallow}->{m.deep}: the threshold puts it near N ~{m.threshold_n:.2g}, {m.threshold_where} "
            f"the trained N, the fitted optimum near N ~{m.fitted_n:.2g}, {m.fitted_where} it"
            for m in e.missing
        ]
        return Text(
            ["fewer than two in-range crossovers of consecutive depths", *found],
            noise=noise_text(e.noise),
            at_our_scale=at_scale,
            needs=missing + needs_text(e.needs),
        )
    (slope,) = e.parts
    value = [f"slope {slope.value:.3f} per layer", *found]
    if e.stage == "read":
        value.append(
            f"the interval {'includes' if e.includes_threshold else 'excludes'} ln 3 and "
            f"{'includes' if e.includes_fitted else 'excludes'} the fitted optimum's {e.fitted:.3f}"
        )
    return Text(
        value,
        f"slope {interval_text(slope.low, slope.high, '.3f')}",
        noise_text(e.noise),
        at_scale,
        needs_text(e.needs),
    )


def optimal_depth(e: levine.OptimalDepth, claim: Claim) -> Text:
    points = [
        f"N={a.n:.2g}: {a.depth} [{number_text(a.low, 'g')}, {number_text(a.high, 'g')}] vs Levine "
        f"{a.levine_depth:.2f} (nearest trained {a.levine_trained})"
        for a in e.argmins
    ]
    if e.stage == "moves":
        points.append(f"growth in {e.growth:.0%} of redraws, decline in {e.decline:.0%}")
    first, last = e.argmins[0], e.argmins[-1]
    return Text(
        points,
        f"per N above: bootstrap {fits.level_text()} range of the argmin depth",
        noise_text(e.noise),
        f"Levine's fit gives L* = {first.levine_depth:.2f} at N = {first.n:.2g} and {last.levine_depth:.2f} at "
        f"{last.n:.2g}: trained depth {int(first.levine_trained)} -> {int(last.levine_trained)}; "
        + bracketing_text(e.brackets),
        needs_text(e.needs),
    )


def _sides(e: levine.Sided, pays: float) -> str:
    return ", ".join(f"{SIDE_NAMES[p.name]({'pays': pays})}: {p.verdict}" for p in e.parts)


def _needs_with_pays(needs: tuple[Need, ...], pays: float) -> list[str]:
    return [NEEDS[n.kind]({**n.numbers, "pays": pays}) for n in needs]


def depth_contrast(e: levine.Contrast, claim: Claim) -> Text:
    below, above, contrast = e.parts
    value = [
        f"deepening gains {number_text(below.value, '+.2f')}% per layer below the threshold ({e.counts['below']} "
        f"pairs), {number_text(above.value, '+.2f')}% per layer above it ({e.counts['above']})",
        f"contrast {number_text(contrast.value, '+.2f')}% per layer",
        f"{e.across} on neither side (across a threshold, or within {levine.AT_CROSSOVER:g}x in N of one)",
    ]
    if e.missing:
        value.insert(0, f"one side of the contrast is missing (no pair {' or '.join(e.missing)} the threshold)")
    else:
        value.append(_sides(e, claim.params["pays"]))
    return Text(
        value,
        "; ".join(f"{p.name.replace('_', ' ')} (%) {interval_text(p.low, p.high)}" for p in e.parts),
        noise_text(e.noise),
        "each pair of neighbouring depths over its own N, its gain per added layer; below L_th = log3(width): the "
        f"deeper model's N {levine.AT_CROSSOVER:g}x or more past the N where its width is 3^L, above: the "
        "shallower's as far short of its own; " + bracketing_text(e.brackets),
        _needs_with_pays(e.needs, claim.params["pays"]),
    )


def literal_threshold(e: levine.Literal, claim: Claim) -> Text:
    before, past = e.parts
    pairs = [
        f"{p.shallow}->{p.deep}: "
        + ", ".join(
            f"{gain:+.2f}% {side}" if math.isfinite(gain) else f"no point {side}"
            for side, gain in zip(levine.SIDES, (p.before, p.past))
        )
        for p in e.pairs
    ]
    value = [
        f"the deeper model gains {number_text(before.value, '+.2f')}% before its literal crossover "
        f"({e.counts['before']} points), {number_text(past.value, '+.2f')}% past it ({e.counts['past']})",
        *pairs,
    ]
    if e.missing:
        value.insert(0, f"no point {' or '.join(e.missing)} a literal crossover")
    else:
        value.append(_sides(e, claim.params["pays"]))
    crossovers = ", ".join(f"{p.shallow}->{p.deep} at N ~{p.literal_n:.2g}" for p in e.pairs)
    return Text(
        value,
        "; ".join(f"gain {side} (%) {interval_text(p.low, p.high)}" for side, p in zip(levine.SIDES, e.parts)),
        noise_text(e.noise),
        f"literal crossovers (the deeper model's width 3^L): {crossovers}; " + bracketing_text(e.brackets),
        _needs_with_pays(e.needs, claim.params["pays"]),
    )


def _sde_block(b: noci.SdeBlock) -> str:
    stopped = next(p for p in b.parts if p.name == "stopped_difference")
    gaps = [
        f"{p.at['functional']} {p.value:+.4f} {interval_text(p.low, p.high, '+.4f')}"
        for p in b.parts
        if p.name == "limit_gap"
    ]
    rate = (
        f"rate n^-{b.rate[0]:.2f} {interval_text(*b.rate[1:])} over {int(b.rate_points)} widths (includes 1: "
        f"{'yes' if b.rate_includes[0] else 'no'}; 1/2: {'yes' if b.rate_includes[1] else 'no'})"
        if np.isfinite(b.rate[0])
        else "rate: fewer than 3 widths with a resolved gap"
    )
    reference = (
        f"SDE at dt -> 0 from dt {b.dt_coarse:g} and {b.dt:g} (Richardson; the finer step's bias in the mean "
        f"{b.dt_bias[0]:+.4f}, sd {b.dt_bias[1]:+.4f})"
        if np.isfinite(b.dt_coarse)
        else f"SDE at dt {b.dt:g} only (not extrapolated in dt)"
    )
    ode = (
        f"W1 to the SDE / W1 to the drift-only ODE at n={b.small_n}: {b.ode_ratio[0]:.2f} "
        f"{interval_text(*b.ode_ratio[1:])}, at n={b.large_n}: {b.ode_ratio_large:.2f}"
    )
    fitted = (
        f"a + c n^-{b.beta:g}"
        if np.isfinite(b.beta)
        else "a + c n^-1 and a + c n^-0.5 (the rate allows both: the hull)"
    )
    return (
        f"{b.block}: n -> inf gaps {'; '.join(gaps)} (margin +-{b.margin:.4f}); {reference}; W1 {b.w1_small:.3f} at "
        f"n={b.small_n} (sampling {fits.level_text()}: {b.w1_null:.3f}), {b.w1_large:.3f} at n={b.large_n}; {ode}; "
        f"{rate}; the limit from {fitted}; stopped finite {b.stopped[0]:.1%}, SDE {b.stopped[1]:.1%} at n={b.large_n} "
        f"(difference {stopped.value:+.4f} {interval_text(stopped.low, stopped.high, '+.4f')}, margin "
        f"+-{stopped.margin:.4f})"
    )


def sde_convergence(e: noci.SdeConvergence, claim: Claim) -> Text:
    return Text(
        [_sde_block(b) for b in e.blocks],
        f"the limit gaps' {fits.level_text()} intervals per block (above), from a + c n^-beta fits by weighted least "
        "squares (beta per block: above); the ODE ratio's from 200 bootstrap resamples; the stopped fractions' "
        "difference's from their Wilson intervals (Newcombe)",
        "sampling: standard errors of the finite and SDE functionals (the SDE's through its Richardson extrapolation "
        "in dt); W1 against random splits of the pooled samples (200 permutations)",
        "the paper gives no number: agreement 'surprisingly good'; we test that the finite networks' limit lies within "
        f"{claim.params['margin_sd']:g} SDE sd of the SDE's (at dt -> 0) in mean, sd and quartiles, that the "
        "smallest width lies closer to the SDE than to the drift-only ODE, and that at the largest width the stopped "
        f"fractions agree within +-{claim.params['stopped_margin']:.3f}",
        needs_text(e.needs),
    )


def rank_collapse(e: noci.RankCollapse, claim: Claim) -> Text:
    standard, difference, gap = e.parts
    return Text(
        [f"t={e.t:g}: standard {e.standard:.3f}, shaped {e.shaped:.3f}, SDE {e.sde:.3f} (start {e.start:.2f})"],
        f"standard {interval_text(standard.low, standard.high, '.3f')}; standard - shaped "
        f"{interval_text(difference.low, difference.high, '.3f')}; "
        f"shaped - SDE {interval_text(gap.low, gap.high, '.3f')} "
        f"(margin +-{gap.margin:.3f})",
        "sampling: standard error of the mean correlation over networks",
        "standard -> 1 with depth at any width; shaped stays at the SDE's value",
        needs_text(e.needs),
    )


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


def entropy_collapse(e: noci.EntropyCollapse, claim: Claim) -> Text:
    if not math.isfinite(e.lr):
        return Text([f"needs both attention kinds, trained only {list(e.kinds)}"])
    *kinds, times = e.parts
    said = [
        f"{p.at['attention']} {p.value:.2f} {interval_text(p.low, p.high)} ({e.kind_seeds[p.at['attention']]} seeds)"
        if e.kind_seeds[p.at["attention"]]
        else f"{p.at['attention']}: no finished run"
        for p in kinds
    ]
    said.append(f"shaped / standard {number_text(times.value)} {interval_text(times.low, times.high)}")
    control = (
        f"temperature-only control: {attribution(e.verdict, e.control)}"
        if e.control is not None
        else "temperature-only control (softmax attention at the shaped temperature): not run"
    )
    diverged = f"diverged runs excluded: {len(e.diverged)} ({', '.join(e.diverged) or 'none'})"
    intervals = [f"{p.at['attention']} {interval_text(p.low, p.high)}" for p in kinds]
    return Text(
        [f"lr={e.lr:g}: " + ", ".join(said) + " (lowest layer's final / initial entropy)", control, diverged],
        "; ".join([*intervals, f"shaped / standard {interval_text(times.low, times.high)}"]),
        "seed-to-seed spread of the entropy ratio",
        f"the paper gives no number; collapse read as a ratio below {claim.params['limit']:g} at our largest lr",
        needs_text(e.needs),
    )


CHANCE_TEXT = {"mcc": "MCC 0", "accuracy": "50% accuracy"}


def glue_beats(e: glue.GlueBeats, claim: Claim) -> Text:
    said = []
    for t in e.tasks:
        text = (
            f"{t.task} {t.metric}: shaped {t.shaped.mean:.3f} {interval_text(t.shaped.low, t.shaped.high, '.3f')}, "
            f"standard {t.standard.mean:.3f} {interval_text(t.standard.low, t.standard.high, '.3f')}, "
            f"shaped - standard {t.part.value:+.3f} {interval_text(t.part.low, t.part.high, '+.3f')} "
            f"({t.shaped.seeds} and {t.standard.seeds} seeds)"
        )
        if t.chance:
            text += f"; both at chance ({CHANCE_TEXT[t.metric]}): no effect can show"
        said.append(f"{text}: {t.part.verdict}")
    said += [f"{o.task} {o.metric}: {o.attention} {o.mean:.3f}" for o in e.others]
    intervals = "; ".join(
        f"{t.task} shaped - standard {interval_text(t.part.low, t.part.high, '+.3f')}" for t in e.tasks
    )
    return Text(
        said,
        intervals + f" ({fits.level_text()} Welch t over fine-tuning seeds)",
        "seed-to-seed spread of the dev score (fine-tuning seeds; one pretraining per model)",
        "the paper gives no number at our scale; chance is MCC 0 (CoLA) and 50% accuracy (RTE)",
        needs_text(e.needs),
    )


UNMEASURABLE = {
    "no_deep_shapes": "no finished shape of depth >= 2 in the figure",
    "no_shapes": "no finished shape in the figure",
    "no_rows": "no rows in the figure at this count",
    "no_finished_runs": "no finished run in the figure",
    "no_line": "fewer than two shapes of depth >= 2 at distinct N ({deep_shapes}): no line to collapse onto",
    levine.NO_COMMON_RANGE: (
        "no range of N where the depths compared have two trained widths (the optimum: every depth; the contrast: "
        "two neighbouring ones)"
    ),
    "no_literal_pairs": "no pair of consecutive depths trained over a shared range of N",
}


def unmeasurable(e: Unmeasurable, claim: Claim) -> Text:
    return Text(
        [UNMEASURABLE[e.reason].format(**e.numbers)],
        noise=noise_text(e.noise) if e.noise else "",
        at_our_scale=COUNTING if e.reason == "no_line" else "",
        needs=needs_text(e.needs),
    )


RENDER: dict[type, Callable[[Evidence, Claim], Text]] = {
    kaplan.AspectBasin: aspect_basin,
    kaplan.KnobSpread: knob_spread,
    kaplan.DepthCollapse: depth_collapse,
    kaplan.PowerLaw: power_law,
    levine.CrossoverSlope: crossover_slope,
    levine.OptimalDepth: optimal_depth,
    levine.Literal: literal_threshold,
    levine.Contrast: depth_contrast,
    noci.SdeConvergence: sde_convergence,
    noci.RankCollapse: rank_collapse,
    noci.EntropyCollapse: entropy_collapse,
    glue.GlueBeats: glue_beats,
    Unmeasurable: unmeasurable,
}


def render(evidence: Evidence, claim: Claim) -> Text:
    return RENDER[type(evidence)](evidence, claim)


# ---------------------------------------------------------------- the table for humans: claims.md, captions

SUMMARY_WIDTH = 72  # characters of a statement or a reason in the summary (one screen: one short line per claim)


def shorten(text: str, limit: int = SUMMARY_WIDTH) -> str:
    """`text`, or, if it is longer than `limit` characters, cut after the last word that fits, ending in '...'."""
    text = str(text)
    if len(text) <= limit:
        return text
    room = text[: limit - 2]  # one character past the cut: a word ending at the cut is followed by its space
    kept = room.rsplit(" ", 1)[0] if " " in room else room[: limit - 3]
    return kept.rstrip(" ,;:(") + "..."


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: every | escaped."""
    return text.replace("|", "\\|")


def blanked(frame):
    """`frame` with every missing value an empty string (a column read back from CSV with no value is float)."""
    return frame.astype(object).fillna("")


def _float(value) -> float:
    """A number column's cell as read back from claims.csv (every cell text, '' for none) or as computed."""
    return math.nan if value is None or str(value) in ("", "nan") else float(value)


def _number(value: float) -> str:
    return format(value, ".3g")


def number_summary(row: Mapping) -> str:
    """A row's deciding statistic in one line: its name, value, 95% interval, margin and systematic (the numeric
    columns of claims.csv); '' where the row read none."""
    if str(row["part"]) in ("", "nan"):
        return ""
    unit = str(row["unit"]) if str(row["unit"]) not in ("", "nan", "none") else ""
    unit = unit if unit in ("", "%") else f" {unit}"
    value, low, high, margin = (_float(row[c]) for c in ("statistic", "low", "high", "margin"))
    down, up = _float(row["sys_down"]), _float(row["sys_up"])
    text = f"{row['part']}: {_number(value)}{unit}"
    if math.isfinite(low) and math.isfinite(high):
        text += f" [{_number(low)}, {_number(high)}]"
    if math.isfinite(margin):
        text += f" vs {_number(margin)}{unit}"
    if math.isfinite(down) and math.isfinite(up):
        text += f" (systematic -{_number(down)}/+{_number(up)})"
    seeds = _float(row["seeds"])
    return text + (f"; {seeds:g} seeds" if math.isfinite(seeds) else "") + decide_summary(row)


def decide_summary(row: Mapping) -> str:
    """What `decide` found for the row in a few words (its decide_* columns, in the unit its data grows by); '' where
    it found nothing."""
    unit = _UNITS[_unit_of(row)]
    if _float(row["decide_undecidable"]) == 1:
        return f"; no {unit.count} count decides it"
    seeds, runs, minutes = (_float(row[c]) for c in ("decide_seeds", "decide_runs", "decide_job_minutes"))
    if not math.isfinite(seeds):
        return ""
    added = f"+{_number(runs)} {unit.jobs}, ~{_number(minutes)} job-minutes"
    return f"; {unit.grown.format(k=_number(seeds))} decide it ({added})"


def _unit_of(row: Mapping) -> str:
    """What a claims row's data grows by (decide.Growth.unit): its figure's, by the row's id; seeds per shape for an
    id no claim has."""
    from depthwidth.claims.decide import GROWTHS, SWEEP
    from depthwidth.claims.registry import BY_ID

    claim = BY_ID.get(str(row.get("id", "")))
    return GROWTHS.get(claim.figure, SWEEP).unit if claim else SWEEP.unit


def verdict_cell(row) -> str:
    """A row's verdict in bold and, for a row of sweep tables, its stalled runs and its verdict without them; where
    the design had two looks at it, the look that reached it."""
    stalled = _float(row["stalled_runs"])
    look = look_text(row)
    if not math.isfinite(stalled) or not row["verdict_unstalled"]:
        return f"**{row['verdict']}**{look}"
    return f"**{row['verdict']}** ({stalled:g} stalled; without them: {row['verdict_unstalled']}){look}"


def _level(level: float) -> str:
    return f"{100 * level:g}%"


def look_text(row) -> str:
    """' at look k of 2 (level)' for a row the design looked at twice; '' for a row of one look."""
    look, looks, level = (_float(row[c]) for c in ("look", "looks", "level"))
    if not looks > 1:
        return ""
    return f" at look {look:g} of {looks:g} ({_level(level)})"


def design_text(frame) -> str:
    """The design the rows were read at, in one sentence (config `decide`; plan/second.py): its looks and levels, the
    rows each look decided, and its digest."""
    rows = frame[[_float(v) >= 1 for v in frame["look"]]]
    if rows.empty:
        return ""
    design = ", ".join(sorted({str(d) for d in rows["design"]}))
    twice = rows[[_float(v) == 2 for v in rows["looks"]]]
    once = sorted({_level(_float(v)) for v in rows.loc[[_float(v) == 1 for v in rows["looks"]], "level"]})
    said = f"one look at {' and '.join(once)}" if once else ""
    if len(twice):
        decided = twice[twice["verdict"] != INCONCLUSIVE]
        at = [int((decided["look"].map(_float) == k).sum()) for k in (1, 2)]
        counted = lambda n: f"{n} row{'s' * (n != 1)}"  # noqa: E731
        said = "; ".join(filter(None, [
            f"{counted(len(twice))} whose data can grow at two looks, each verdict with the look and level that "
            f"reached it ({at[0]} decided at the first, {at[1]} at the second)",
            f"{counted(len(rows) - len(twice))} at {said}" if said else "",
        ]))  # fmt: skip
    return f"Read at: {said} (design {design}, config `decide`)."


def summary(frame) -> str:
    """One screen (Markdown): where the claims were run, the verdicts counted, and one line per claim: its id, its
    statement (shortened), its verdict and the statistic that decided it (or why none was read). Opens claims.md
    and docs/findings.md."""
    text = blanked(frame)
    notes = [note for note in text["scale_note"].astype(str).unique() if note]
    counts = text["verdict"].value_counts()
    tally = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)
    lines = [f"Run at: {'; '.join(notes)}.", ""] if notes else []
    lines += [f"Verdicts of {len(text)} claims: {tally}.", ""]
    lines += [design, ""] if (design := design_text(text)) else []
    lines += ["| claim | statement | verdict | deciding statistic |", "|---|---|---|---|"]
    for _, row in text.iterrows():
        number = number_summary(row) or shorten(row["our_value"])
        cells = [f"`{row['id']}`", shorten(row["statement"]), verdict_cell(row), number]
        lines.append("| " + " | ".join(map(_cell, cells)) + " |")
    return "\n".join(lines) + "\n"


def markdown(frame, sensitivity=None, survived=None, unread=None) -> str:
    """The claims for humans (results/<config>/claims.md): the one-screen summary, then every column of every claim
    (the scale note, one for every claim, once: in the summary's first line), then, with a sensitivity block, what
    the depth rows survive (`sensitivity_text`: its table and what each row survives, `sensitivity.outcomes`)."""
    titles = [
        "claim", "paper (their scale)", "paper at our scale", "metric", "our value", "interval", "noise", "rule",
        "verdict", "what it survives", "what would decide it", "figure",
    ]  # fmt: skip
    head = "| " + " | ".join(titles) + " |"
    lines = ["# Claims", "", summary(frame), "## Every claim in full", "", head, "|---" * len(titles) + "|"]
    for _, cells in blanked(frame).iterrows():
        row, verdict = cells.astype(str).map(_cell), _cell(verdict_cell(cells))
        lines.append(
            f"| `{row.id}`: {row.statement} | {row.paper}: {row.paper_value} | {row.paper_at_our_scale} | "
            f"{row.metric} | {row.our_value} | {row.interval} | {row.noise} | {row.rule} | {verdict} | "
            f"{_cell(robustness_cell(cells))} | {row.what_it_would_take} | {row.figure} |"
        )
    tail = [] if sensitivity is None else ["", sensitivity_text(sensitivity, survived, unread)]
    return "\n".join(lines + tail) + "\n"


def robustness_cell(row) -> str:
    """What a row's verdict survives (claims.csv's ROBUSTNESS_COLUMNS) in one cell: its verdict at each other count,
    its outcome under each confound of the sensitivity block, and what it depends on; '' where none was read."""
    said = [f"at each count: {row['verdict_by_count']}"] if row["verdict_by_count"] else []
    said += [f"under each confound: {row['by_confound']}"] if row["by_confound"] else []
    if said:
        said.append(f"depends on: {row['depends_on']}" if row["depends_on"] else "depends on none of them")
    return "; ".join(said)


def pair_text(row) -> str:
    """One pair of the sensitivity block: `literal 1 -> 2 at N=2e+03`."""
    return f"{row.experiment} {row.shallow} -> {row.deep} at N={row.n:.3g}"


def sensitivity_text(frame, survived: Mapping[str, Mapping[str, str]], unread: Mapping | None = None) -> str:
    """What the depth rows survive (claims/sensitivity.py, numbers in results/<config>/sensitivity.csv, `survived`:
    claim -> source -> outcome as `sensitivity.outcomes` reads them; `unread`: the rows whose own pairs are undecided
    at their level, as `sensitivity.undecided` gives them): one line per row, then each pair's gain in every source."""
    from depthwidth.claims.sensitivity import OUTCOMES

    level = f"{100 * frame['level'].iloc[0]:g}%" if len(frame) else ""
    lines = ["## What the depth verdicts survive", ""]
    lines += [
        "Each row's verdict above is the pre-registered one. Here, the pairs of depths it decides on, trained again "
        "under each confound of tiny models alone: a row *survives* a confound where every pair keeps its sign (the "
        "deeper wins or loses: its interval at the level the row's verdict was read at, split over the row's pairs), "
        "*depends on* it where a pair turns to the other sign, and is *open* under it otherwise; a confound that "
        "trained only the rows' own runs of its pairs (the same heads) leaves it *untested*. The table gives each "
        f"pair's gain with its {level} interval.",
        "",
    ]
    for claim, by_source in survived.items():
        words = {
            "survives": "survives " + ", ".join(s for s, o in by_source.items() if o == "survives"),
            "depends": "depends on " + ", ".join(s for s, o in by_source.items() if o == "depends"),
            "open": "open under " + ", ".join(s for s, o in by_source.items() if o == "open"),
            "untested": "untested by " + ", ".join(s for s, o in by_source.items() if o == "untested"),
        }
        said = [words[o] for o in OUTCOMES if o in by_source.values()]
        if claim in (unread or {}):  # open because its own pairs are, whatever the confounds do
            level, pairs = unread[claim]
            named = ", ".join(f"{a} -> {b} at N = {n:g}" for _, n, a, b in pairs)
            plural = "s" if len(pairs) > 1 else ""
            said.append(f"its own pair{plural} {named} undecided at {100 * level:.3g}% (its level split over its "
                        "pairs): no confound can keep a sign the row's own runs do not show")  # fmt: skip
        lines.append(f"- `{claim}`: {'; '.join(said)}")
    lines += ["", "| pair | source | the deeper model's gain, bits per byte | heads | runs | tokens per parameter "
              "(epochs) | stalled |"]  # fmt: skip
    lines.append("|---|---|---|---|---|---|---|")
    for row in frame.itertuples():
        gain = f"{row.gain_pct:+.2f}% [{row.low:+.2f}, {row.high:+.2f}]"
        if not math.isfinite(row.low):  # a shape with no run, or no seed noise to read (one seed a shape)
            gain = f"{row.gain_pct:+.2f}% (no interval: one seed)" if math.isfinite(row.gain_pct) else "no runs"
        gain += " (the reference's own runs)" if row.same_runs else ""
        dose = f"{row.tokens_per_parameter:.3g} ({row.epochs:.2g})" if math.isfinite(row.tokens_per_parameter) else "-"
        runs = f"{row.runs_shallow} + {row.runs_deep}"
        lines.append(f"| {pair_text(row)} | {row.source} | {gain} | {row.heads_shallow}, {row.heads_deep} | {runs} | "
                     f"{dose} | {row.stalled} |")  # fmt: skip
    return "\n".join(lines)


def lr_check_summary(frame) -> str:
    """One sentence per shape of the learning-rate check: the best factor and whether the recipe is within 2x."""
    shapes = frame.drop_duplicates(["n_layer", "d_model", "d_ff"])
    said = {
        "yes": "so the recipe is within 2x of the best",
        "no": "so the recipe is not within 2x of the best",
        "unknown": "at the edge of the factors tried, so whether the recipe is within 2x is unknown (widen them)",
    }
    parts = [
        f"L{row.n_layer} d{row.d_model} d_ff {row.d_ff}: best learning rate {row.best_factor:.2g} x the recipe's, "
        f"{said[row.recipe_within_2x]}; at the recipe's rate the loss is {row.excess_pct:.2f}% above the best"
        for row in shapes.itertuples()
    ]
    return "Protocol check, not a paper claim. " + ("; ".join(parts) or "no finished runs") + "."


def depth_sensitivity_summary(frame) -> str:
    """One clause per confound of the depth_sensitivity figure: of the pairs it tests, how many keep the sign the
    rows' own runs give them, turn it, or leave it undecided (each pair at the figure's level; what each depth row
    survives, at its Bonferroni level, is claims.md's)."""
    from depthwidth.claims.sensitivity import sign_counts

    clause = "{kept} of {tested} pairs keep their sign, {turned} turn it, {undecided} undecided"
    parts = [f"{source}: " + clause.format(**counts) for source, counts in sign_counts(frame).items()]
    said = "; ".join(parts) or "no confound tests a pair"
    return f"Robustness check, not a paper claim. Against the rows' own runs, {said} (each row's: claims.md)."


# figure id -> its caption sentence (no claim reads them)
PROTOCOL_CHECKS = {"lr_check": lr_check_summary, "depth_sensitivity": depth_sensitivity_summary}


def rst_text(text: str) -> str:
    """Plain text safe inside an RST paragraph: every inline-markup character (* ` | _ and backslash) escaped."""
    return re.sub(r"([\\*`|_])", r"\\\1", str(text))


def caption(figure: str, frame, scale_note: str, csv=None) -> str:
    """The report caption of one figure (RST): what it stands for, what was run, and its verdicts (or, for a protocol
    check, what its CSV shows). Every value is escaped: it reads as written."""
    import pandas as pd

    from depthwidth.plots.registry import FIGURES

    lines = [f"**{figure}** -- {rst_text(FIGURES[figure].title)}.", "", f"*Run at:* {rst_text(scale_note)}.", ""]
    rows = blanked(frame[frame["figure"] == figure][list(CLAIMS_TEXT_COLUMNS)])
    for row in rows.itertuples():
        row = row._replace(**{field: rst_text(value) for field, value in row._asdict().items() if field != "Index"})
        text = f"- *{row.paper}*: {row.statement}. Paper: {row.paper_value}."
        if row.paper_at_our_scale:
            text += f" At our scale: {row.paper_at_our_scale}."
        text += f" Ours: {row.our_value}."
        if row.interval:
            text += f" Interval: {row.interval}."
        if row.noise:
            text += f" Noise: {row.noise}."
        text += f" Rule: {row.rule}. **Verdict: {row.verdict}.**"
        if row.what_it_would_take:
            text += f" What would decide it: {row.what_it_would_take}."
        lines.append(text)
    if figure in PROTOCOL_CHECKS and csv is not None:
        lines.append(rst_text(PROTOCOL_CHECKS[figure](pd.read_csv(csv))))
    elif rows.empty:
        lines.append("No claim reads this figure; it documents the data behind the others.")
    return "\n".join(lines) + "\n"
