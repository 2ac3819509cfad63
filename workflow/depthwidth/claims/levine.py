"""Levine et al. 2020 (docs/science.md §2): the depth threshold L_th = log3(width), read four ways (the crossover
width of consecutive depths, the optimal depth against N, the gain of deepening below and above the threshold, and
the threshold read literally). Each rule reads its figure's rows and returns numbers (`Evidence`); its margins are
arguments, given by its entry in claims/registry.py."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from depthwidth import fits, tilt
from depthwidth.claims.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NO_SHIFT,
    WITHOUT,
    Evidence,
    Need,
    Noise,
    Part,
    Systematic,
    above,
    argmin_part,
    below,
    combine,
    figure_shift,
    figure_tilt,
    need,
    noise_of,
    part,
    reads,
    seeds_need,
    tilt_reach,
    unmeasurable,
)
from depthwidth.plots.levine_literal import AT_CROSSOVER, SIDES
from depthwidth.plots.levine_optimal_depth import OPTIMUM, STEP
from depthwidth.plots.sweep_common import NOISE_COLUMNS

NOISE = (*NOISE_COLUMNS, "seeds")

# ---------------------------------------------------------------- which crossovers the trained N bracket


@dataclass(frozen=True)
class Bracket:
    """One crossover of one reading ("threshold", "fitted" or "literal"): the pair of depths, the N where the deeper
    starts to win, and whether an N the pair was trained or compared at lies a factor `factor` or more below it and
    above it (a crossover at no finite N: neither)."""

    reading: str
    shallow: int
    deep: int
    n: float
    below: bool
    above: bool
    factor: float = AT_CROSSOVER

    @property
    def bracketed(self) -> bool:
        return self.below and self.above


def brackets(reading: str, crossovers: Iterable[tuple[int, int, float, np.ndarray]]) -> tuple[Bracket, ...]:
    """`Bracket`s of one reading's crossovers, each (shallow, deep, N where the deeper starts to win, the N the pair was
    trained or compared at), all in one count."""
    found = []
    for shallow, deep, n, trained in crossovers:
        finite = math.isfinite(n)
        low = finite and bool(np.any(trained <= n / AT_CROSSOVER))
        high = finite and bool(np.any(trained >= n * AT_CROSSOVER))
        found.append(Bracket(reading, int(shallow), int(deep), float(n), low, high))
    return tuple(found)


# the two readings of a crossover: the columns of a Levine figure that place it
READINGS = {"threshold": "threshold_n", "fitted": "fitted_n"}


def both_readings(pairs: list[tuple[int, int, Mapping]], trained: np.ndarray) -> tuple[Bracket, ...]:
    """`brackets` of both readings (READINGS) of `pairs` (shallow, deep, the figure row that places their crossovers)
    against the N `trained`."""
    return tuple(
        bracket
        for reading, column in READINGS.items()
        for bracket in brackets(reading, [(a, b, float(row[column]), trained) for a, b, row in pairs])
    )


def pair_brackets(frame: pd.DataFrame) -> tuple[Bracket, ...]:
    """`both_readings` over a crossover figure's pairs of consecutive trained depths, against the trained N."""
    consecutive = frame[frame["consecutive"].astype(bool)]
    trained = frame[["n_trained_min", "n_trained_max"]].iloc[0].to_numpy(float)
    return both_readings([(r.shallow, r.deep, r._asdict()) for r in consecutive.itertuples()], trained)


def own_brackets(steps: pd.DataFrame) -> tuple[Bracket, ...]:
    """Both readings' `brackets` of a per-N Levine figure's steps (its `step` rows: a pair of depths at each N of its
    own range), each pair against the N it was compared at."""
    pairs = steps.groupby(["shallow", "depth"])  # a step's `depth` is its deeper one
    return tuple(
        bracket
        for reading, column in READINGS.items()
        for bracket in brackets(
            reading, [(a, b, float(rows[column].iloc[0]), rows["n"].to_numpy(float)) for (a, b), rows in pairs]
        )
    )


def step_brackets(frame: pd.DataFrame) -> tuple[Bracket, ...]:
    """`both_readings` over a per-N Levine figure's steps (each depth from the next shallower), against the N
    compared."""
    depths = sorted(frame["depth"].unique())
    steps = frame.drop_duplicates("depth").set_index("depth")
    return both_readings([(a, b, steps.loc[b]) for a, b in zip(depths, depths[1:])], frame["n"].unique())


# ---------------------------------------------------------------- the crossover slope


@dataclass(frozen=True)
class Crossover:
    """Where the deeper of a pair of depths overtakes: its width with the bootstrap range, whether inside the trained
    N, whether the range holds the point; `crosses` False: it never overtakes."""

    shallow: int
    deep: int
    crosses: bool
    width: float
    low: float
    high: float
    in_range: bool
    range_holds: bool


@dataclass(frozen=True)
class Missing:
    """A consecutive pair with no in-range crossover: where the threshold and Levine's fitted optimum put one, and
    where that lies against the trained N ("below", "inside" or "beyond")."""

    shallow: int
    deep: int
    threshold_n: float
    fitted_n: float
    threshold_where: str
    fitted_where: str


def where(n: float, trained: tuple[float, float]) -> str:
    """Where N lies against the trained range: below, inside (its ends included) or beyond it."""
    return "below" if n < trained[0] else "inside" if n <= trained[1] else "beyond"


@dataclass(frozen=True, kw_only=True)
class CrossoverSlope(Evidence):
    """The slope of ln(crossover width) against depth (parts[0], per layer) against ln 3 (`threshold`) and the
    fitted optimum's slope for the same pairs (`fitted`); `stage` says how far the rule got: "no_pairs", "no_slope"
    (fewer than two in-range crossovers), "no_interval", "undefined" (pairs that do not cross in `defined` of the
    redraws' complement), "read"."""

    stage: str
    threshold: float
    fitted: float
    crossovers: tuple[Crossover, ...] = ()
    missing: tuple[Missing, ...] = ()
    brackets: tuple[Bracket, ...] = ()
    trained: tuple[float, float] = (math.nan, math.nan)
    defined: float = math.nan
    includes_threshold: bool = False
    includes_fitted: bool = False
    noise: Noise | None = None


CROSSOVER_COLUMNS = (
    "shallow", "deep", "consecutive", "crosses", "width_cross", "width_ci_low", "width_ci_high", "in_range",
    "ci_holds_cross", "threshold_n", "fitted_n", "slope", "slope_ci_low", "slope_ci_high", "slope_defined_fraction",
    "slope_sys_down", "slope_sys_up", "fitted_slope", "n_trained_min", "n_trained_max", *NOISE,
)  # fmt: skip


@reads(*CROSSOVER_COLUMNS)
def crossover_slope(frame: pd.DataFrame, systematic: Systematic, *, threshold: float) -> CrossoverSlope:
    """The slope of ln(crossover width) vs depth, its bootstrap interval against `threshold` (ln 3 per layer: the
    crossover at width 3^L) and the slope the same quantity has under Levine's fitted optimum (`fitted_slope`):
    holds if the interval includes the threshold's and excludes the fitted one, fails if it excludes the threshold's."""
    fitted = float(frame["fitted_slope"].iloc[0]) if len(frame) else math.nan
    if frame.empty:
        return CrossoverSlope(
            verdict=INCONCLUSIVE, needs=(need("two_depths_two_widths"),), stage="no_pairs", threshold=threshold,
            fitted=fitted,
        )  # fmt: skip
    first = frame.iloc[0]
    noise = noise_of(first)
    crossovers = tuple(
        Crossover(r.shallow, r.deep, bool(r.crosses), r.width_cross, r.width_ci_low, r.width_ci_high,
                  bool(r.in_range), bool(r.ci_holds_cross))
        for r in frame.itertuples()
    )  # fmt: skip
    known = dict(
        threshold=threshold, fitted=fitted, crossovers=crossovers, brackets=pair_brackets(frame), noise=noise,
        seeds=noise.seeds,
        trained=(float(first["n_trained_min"]), float(first["n_trained_max"])),
    )  # fmt: skip
    if not np.isfinite(first["slope"]):
        consecutive = frame[frame["consecutive"].astype(bool)]
        missing = consecutive[~(consecutive["crosses"].astype(bool) & consecutive["in_range"].astype(bool))]
        trained = known["trained"]
        found = tuple(
            Missing(
                r.shallow, r.deep, r.threshold_n, r.fitted_n, where(r.threshold_n, trained), where(r.fitted_n, trained)
            )
            for r in missing.itertuples()
        )
        needs = (need("crossover_seeds"),) if not noise.dof else ()
        return CrossoverSlope(verdict=INCONCLUSIVE, needs=needs, stage="no_slope", missing=found, **known)
    slope = part(
        "slope",
        first["slope"],
        (first["slope_ci_low"], first["slope_ci_high"]),
        systematic,
        figure_shift(first, "slope"),
        tilt=figure_tilt(first, "slope"),
        unit=" per layer",  # read against two slopes (the threshold's, the fitted optimum's), no margin
    )
    defined = float(first["slope_defined_fraction"])
    if not np.isfinite(slope.low):
        stage, verdict, needs = "no_interval", INCONCLUSIVE, [need("interval_seeds")]
    elif defined < fits.level():  # undefined in more redraws than the interval may leave out
        stage, verdict, needs = "undefined", INCONCLUSIVE, [need("undefined_slope", undefined=1 - defined)]
    else:
        low, high = slope.wide
        includes = {"threshold": low <= threshold <= high, "fitted": low <= fitted <= high}
        verdict = FAILS if not includes["threshold"] else HOLDS if not includes["fitted"] else INCONCLUSIVE
        stage, needs = "read", []
        if verdict == INCONCLUSIVE:  # how many seeds: `decide`'s, by this rule on redrawn tables
            needs.append(seeds_need(noise, slope.value, "slope_between", fitted=fitted))
        known.update(includes_threshold=includes["threshold"], includes_fitted=includes["fitted"])
    return CrossoverSlope(
        verdict=verdict, parts=(replace(slope, verdict=verdict),), needs=tuple(needs), stage=stage, defined=defined,
        **known,
    )  # fmt: skip


# ---------------------------------------------------------------- the optimal depth against N


@dataclass(frozen=True)
class Argmin:
    """The depth of least loss at one N with its bootstrap range (at `fits.level()`), against Levine's fitted optimum
    L*(N) and the trained depth nearest it."""

    n: float
    depth: float
    low: float
    high: float
    levine_depth: float
    levine_trained: int


@dataclass(frozen=True, kw_only=True)
class OptimalDepth(Evidence):
    """Per N, the argmin over trained depths (`argmins`); where L* moves over the trained N, the share of redraws in
    which the optimum grows (`growth`) and declines (`decline`) from the smallest to the largest N; the brackets of
    the steps' crossovers. `stage`: "no_seeds", "moves" or "stays" (L* stays at one trained depth over our N)."""

    stage: str
    argmins: tuple[Argmin, ...]
    growth: float
    decline: float
    brackets: tuple[Bracket, ...]
    noise: Noise


OPTIMAL_COLUMNS = (
    "n", "depth", "loss", "excess_pct", "optimal_depth", "optimal_ci_low", "optimal_ci_high", "optimal_share",
    "runner_up_gap_pct", "below_levine_pct", "below_levine_se_pct", "below_levine_dof", "levine_depth",
    "levine_trained_depth", "growth_share", "decline_share", "threshold_n", "fitted_n", *NOISE,
)  # fmt: skip

# the per-N Levine rows' case: no N has every depth trained on both sides of it (the optimum), no pair of neighbouring
# depths shares a range of N (the contrast)
NO_COMMON_RANGE = "no_common_range"


def decided() -> float:
    """The share of redraws that decides an argmin, or the growth of the optimum, where it gives it: the one-sided
    share of the current level, `fits.one_sided()` (0.975 at the default), read when a rule runs."""
    return fits.one_sided()


def __getattr__(name: str):
    """`levine.DECIDED`: `decided()` at the moment it is read (the level may change between reads)."""
    if name == "DECIDED":
        return decided()
    raise AttributeError(name)  # no words composed here: the name is the message


@reads(*OPTIMAL_COLUMNS, labels=("row",))
def optimal_depth_growth(frame: pd.DataFrame, systematic: Systematic) -> OptimalDepth:
    """The per-N argmin over trained depths (bootstrap) against the depth Levine's fitted optimum gives at our N.

    Where L* moves to a deeper trained depth over our N: holds if the optimum grows in `decided()` of the redraws
    (and each end's argmin stands within the systematic), fails if it declines in as many or both ends are decided
    and do not grow. Where it does not, growth cannot be seen: fails if some depth beats L*'s at either end
    (`_beaten`: a t test of each other depth against L*'s, split over them and the two ends, beyond L*'s depth's own
    learning-rate excess), else inconclusive (never holds). Not the argmin's share of redraws: where depths tie, the
    depth that happens to be least is decided in nearly every redraw. It reads the figure's `optimum` rows (every
    depth at each N they share)."""
    frame = frame[frame["row"] == OPTIMUM]
    if frame.empty:
        return unmeasurable(NO_COMMON_RANGE, need("common_range"))
    per_n = frame.drop_duplicates("n").reset_index(drop=True)
    first, last = per_n.iloc[0], per_n.iloc[-1]
    noise = noise_of(first)
    depths = sorted(frame["depth"].unique())
    p_first, p_last = int(first["levine_trained_depth"]), int(last["levine_trained_depth"])
    argmins = tuple(
        Argmin(r.n, r.optimal_depth, r.optimal_ci_low, r.optimal_ci_high, r.levine_depth, r.levine_trained_depth)
        for r in per_n.itertuples()
    )
    # each end's argmin: whether it stands within the learning-rate systematic (always, outside it), and is decided
    ends = [_argmin_stands(frame, r, systematic) for r in (first, last)] if noise.dof else [None, None]
    parts = [p for p in ends if p is not None]
    robust = [p is None or p.verdict == HOLDS for p in ends]
    share = decided()
    decided_at = [stands and r["optimal_share"] >= share for stands, r in zip(robust, (first, last))]
    agrees = [r["optimal_depth"] == p_first for r in (first, last)]
    gap = float(per_n["runner_up_gap_pct"].min())
    growth, decline = float(first["growth_share"]), float(first["decline_share"])
    further = _levine_next(p_first, depths, float(last["n"]))
    needs = []
    if not noise.dof:
        stage, verdict = "no_seeds", INCONCLUSIVE
        needs.append(need("bootstrap_seeds", gap=gap))
        if p_last == p_first:
            needs.append(further)
    elif p_last > p_first:
        stage = "moves"
        flat_or_down = last["optimal_depth"] <= first["optimal_depth"]
        grows, declines = growth >= share and all(robust), decline >= share or (all(decided_at) and flat_or_down)
        verdict = HOLDS if grows else FAILS if declines else INCONCLUSIVE
        parts.insert(0, Part("growth", growth, margin=share, verdict=verdict, unit=""))
        if verdict == INCONCLUSIVE:
            needs.append(seeds_need(noise, gap, "runner_up_gap"))
    else:
        # the prediction does not move inside the trained N: an argmin that stays put cannot show growth (and
        # at the edge of the trained depths it does not even locate an optimum); one decided elsewhere refutes
        stage = "stays"
        # at each end, the depth nearest to beating L*'s trained depth: beaten there refutes; else growth is unseen
        ends_n = sorted({float(first["n"]), float(last["n"])})
        beaten = [_beaten(frame[frame["n"] == n], p_first, len(ends_n) * (len(depths) - 1), systematic) for n in ends_n]
        beaten = [b for b in beaten if b is not None]
        verdict = FAILS if any(b.verdict == FAILS for b in beaten) else INCONCLUSIVE
        parts = [*beaten, *parts]
        if verdict == INCONCLUSIVE:
            edge = p_first in (depths[0], depths[-1])
            needs.append(need("growth_unseen", depth=p_first, edge=edge, **further.numbers))
            if all(decided_at) and all(agrees):
                side = "below" if p_first == depths[0] else "above"
                needs.append(need("argmin_agrees", depth=p_first, edge=edge, side=side))
    return OptimalDepth(
        verdict=verdict, parts=tuple(parts), needs=tuple(needs), seeds=noise.seeds, stage=stage, argmins=argmins,
        growth=growth, decline=decline, brackets=step_brackets(frame), noise=noise,
    )  # fmt: skip


def _levine_next(depth: int, depths: list[int], n_now: float) -> Need:
    """Where Levine's fitted optimum moves past `depth` toward the next trained depth (log midpoint); a deeper depth
    is needed where none was trained."""
    deeper = [d for d in depths if d > depth]
    if not deeper:
        return need("levine_next", next_depth=None)
    n_next = fits.levine_n_at_depth(math.sqrt(depth * deeper[0]))
    return need("levine_next", next_depth=int(deeper[0]), next_n=n_next, n_now=n_now)


def _beaten(at_n: pd.DataFrame, levine: int, tests: int, systematic: Systematic) -> Part | None:
    """At one N (its optimum rows), whether some depth beats `levine`, the trained depth nearest L*: each other
    depth's loss below its, 100 ln(L_levine / L_depth), with a one-sided t bound at the level split over the `tests`
    comparisons the rule makes (Bonferroni: the other depths at each end), so that depths that tie with L*'s refute
    it in at most 1 - `decided()` of the cases. Within the systematic L*'s depth may lie up to its own excess above
    its loss at its best rate (down), another depth up to its own (up). The part of the depth nearest to beating
    it (the greatest lower end), FAILS where that end lies above 0; None without a noise estimate."""
    others = at_n[(at_n["depth"] != levine) & np.isfinite(at_n["below_levine_se_pct"].to_numpy(float))]
    if others.empty:
        return None
    with fits.at_level(1 - (1 - fits.level()) / tests):
        reach = np.array([fits.t_quantile(dof) for dof in others["below_levine_dof"]]) * others["below_levine_se_pct"]
    gain = others["below_levine_pct"].to_numpy(float)
    own_excess = float(at_n.loc[at_n["depth"] == levine, "excess_pct"].iloc[0])
    shifts = [(own_excess, float(excess)) for excess in others["excess_pct"]]
    low, high = tilt.range_of_rows(at_n)  # 100 ln(L_levine / L_depth) moves by t ln(levine / depth)
    moves = np.outer(np.log(levine / others["depth"].to_numpy(float)), [low, high])
    tilts = [(max(0.0, -m.min()), max(0.0, m.max())) if np.all(np.isfinite(m)) else NO_SHIFT for m in moves]
    candidates = [
        part("levine_beaten", g, (g - r, g + r), systematic, shift, tilt=t, margin=0.0, n=float(n), depth=int(d),
             levine=levine)
        for g, r, shift, t, n, d in zip(gain, reach, shifts, tilts, others["n"], others["depth"])
    ]  # fmt: skip
    nearest = max(candidates, key=lambda c: c.wide[0])
    return replace(nearest, verdict=FAILS if nearest.wide[0] > 0 else INCONCLUSIVE)


def _argmin_stands(frame: pd.DataFrame, row: pd.Series, systematic: Systematic) -> Part | None:
    """Whether the argmin depth at `row`'s N stands within `systematic` (no other depth's excess there reaches its
    gap to the best: `argmin_part`)."""
    at_n = frame[frame["n"] == row["n"]]
    others = at_n[at_n["depth"] != row["optimal_depth"]]
    gaps = 100 * (others["loss"].to_numpy() / float(at_n["loss"].min()) - 1)
    levers = np.log(others["depth"].to_numpy(float))
    reach = tilt_reach(levers, math.log(float(row["optimal_depth"])), tilt.range_of_rows(at_n))
    return argmin_part(gaps, others["excess_pct"].to_numpy(float), systematic, reach, n=float(row["n"]))


# ---------------------------------------------------------------- the gain of deepening at fixed N


@dataclass(frozen=True, kw_only=True)
class Sided(Evidence):
    """A rule of several sides, all needed (parts, each a side's statistic read against its margin), with the
    points each side averages over (`counts`: e.g. pairs below and above the threshold) and the sides that have none
    (`missing`: then every side is inconclusive and no systematic is read)."""

    counts: Mapping[str, int]
    missing: tuple[str, ...]
    noise: Noise
    brackets: tuple[Bracket, ...]


@dataclass(frozen=True, kw_only=True)
class Contrast(Sided):
    """The contrast's sides, with the points on neither (`across`: a pair across a threshold, or within the literal
    row's buffer of one, AT_CROSSOVER in N)."""

    across: int


CONTRAST = ("gain_below", "gain_above", "contrast")
CONTRAST_COLUMNS = (
    *(name + suffix for name in CONTRAST for suffix in ("_pct", "_ci_low", "_ci_high", "_sys_down", "_sys_up")),
    "below_pairs", "above_pairs", "across_pairs", "depth", "shallow", "n", "threshold_n", "fitted_n", *NOISE,
)  # fmt: skip


@reads(*CONTRAST_COLUMNS, labels=("row",))
def depth_contrast(frame: pd.DataFrame, systematic: Systematic, *, pays: float) -> Sided:
    """At fixed N, per added layer: deepening pays below L_th = log3(width) (its gain per layer above `pays` %: at
    most that is none), stops paying above it (at most `pays` per layer), and the contrast is positive. Each pair of
    neighbouring depths is read over its own N (the figure's `step` rows), on a side only beyond the literal row's
    buffer (AT_CROSSOVER in N) around a threshold."""
    steps = frame[frame["row"] == STEP]
    if steps.empty:
        return unmeasurable(NO_COMMON_RANGE, need("pair_range"))
    first = steps.iloc[0]
    counts = {"below": int(first["below_pairs"]), "above": int(first["above_pairs"])}
    missing = tuple(side for side, count in counts.items() if not count)
    tests = {"gain_below": (above, pays), "gain_above": (below, pays), "contrast": (above, 0.0)}
    parts = []
    for name, (test, limit) in tests.items():
        side = _side(first, name, systematic, missing)
        # the contrast is read against 0; the margin its systematic is weighed against is still `pays`
        parts.append(replace(side, margin=pays, verdict=test(*side.wide, limit) if not missing else INCONCLUSIVE))
    more = "smaller" if "above" in missing else "larger"
    return _sided(Contrast, parts, counts, missing, first, need("contrast_sides", more=more), "contrast",
                  parts[2].value, brackets=own_brackets(steps), across=int(first["across_pairs"]))  # fmt: skip


@dataclass(frozen=True)
class LiteralPair:
    """One pair of consecutive depths read literally: where its crossover lies, the deeper's gain before and past."""

    shallow: int
    deep: int
    literal_n: float
    before: float
    past: float


@dataclass(frozen=True, kw_only=True)
class Literal(Sided):
    pairs: tuple[LiteralPair, ...]


@reads(
    *("gain_" + side + suffix for side in SIDES for suffix in ("_pct", "_ci_low", "_ci_high", "_sys_down", "_sys_up")),
    "before_points", "past_points", "shallow", "deep", "n", "literal_n", "pair_gain_before_pct", "pair_gain_past_pct",
    *NOISE,
)  # fmt: skip
def literal_threshold(frame: pd.DataFrame, systematic: Systematic, *, pays: float) -> Literal:
    """Read literally: the shallower of two consecutive depths wins before the deeper one's width reaches 3^L (the
    deeper's loss above the shallower's by more than `pays` %), the deeper wins past it (its gain above `pays` %);
    both sides, over every pair with points on them."""
    if frame.empty:
        return unmeasurable("no_literal_pairs", need("literal_block"))
    pairs = frame.drop_duplicates("deep")
    trained = {deep: frame.loc[frame["deep"] == deep, "n"].to_numpy(float) for deep in pairs["deep"]}
    first = frame.iloc[0]
    counts = {side: int(first[side + "_points"]) for side in SIDES}
    missing = tuple(side for side, count in counts.items() if not count)
    parts = []
    for name in ("gain_before", "gain_past"):
        gain = replace(_side(first, name, systematic, missing), margin=pays)
        low, high = gain.wide
        # the shallower wins before: the deeper's gain below -pays; the deeper wins past: its gain above pays
        verdict = above(-high, -low, pays) if name == "gain_before" else above(low, high, pays)
        parts.append(replace(gain, verdict=verdict if not missing else INCONCLUSIVE))
    return _sided(
        Literal, parts, counts, missing, first, need("literal_sides", factor=AT_CROSSOVER), "smaller_side_gain",
        min(abs(p.value) for p in parts),
        brackets=brackets("literal", [(r.shallow, r.deep, r.literal_n, trained[r.deep]) for r in pairs.itertuples()]),
        pairs=tuple(
            LiteralPair(r.shallow, r.deep, r.literal_n, r.pair_gain_before_pct, r.pair_gain_past_pct)
            for r in pairs.itertuples()
        ),
    )  # fmt: skip


def _side(first: pd.Series, name: str, systematic: Systematic, missing: tuple) -> Part:
    """A side's statistic `name` (`<name>_pct` with its interval): within `systematic`, widened by its own shift,
    unless a side has no point (then nothing is read)."""
    interval = (first[name + "_ci_low"], first[name + "_ci_high"])
    on = WITHOUT if missing else systematic
    return part(name, first[name + "_pct"], interval, on, figure_shift(first, name), tilt=figure_tilt(first, name))


def _sided(kind, parts, counts, missing, first, no_side: Need, what: str, effect: float, **extra) -> Sided:
    """A rule of several sides (`parts`), all needed: combined; for an undecided one, more seeds for `effect` (its
    size in %, named `what`); a side with no point: inconclusive, `no_side` says what would give one."""
    noise = noise_of(first)
    verdict = INCONCLUSIVE if missing else combine(*(p.verdict for p in parts))
    needs = [no_side] if missing else []
    if verdict == INCONCLUSIVE and not missing:
        needs.append(need("undecided", parts=tuple(p.name for p in parts if p.verdict == INCONCLUSIVE)))
        needs.append(seeds_need(noise, effect, what) if noise.dof else need("bootstrap_seeds"))
    return kind(verdict=verdict, parts=tuple(parts), needs=tuple(needs), seeds=noise.seeds, counts=counts,
                missing=missing, noise=noise, **extra)  # fmt: skip
