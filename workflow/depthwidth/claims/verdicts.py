"""The arithmetic of a verdict, in numbers: a 95% interval read against a margin, parts combined, the learning-rate
systematic a loss statistic carries, and the records every rule returns (`Part`, `Need`, `Evidence`).

Rules (claims/kaplan.py, levine.py, noci.py, glue.py) are pure functions from a figure's rows and a `Systematic` to
an `Evidence` record; `claims.wording` alone turns records into words. docs/science.md §5 says how verdicts are read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from depthwidth.columns import VERDICTS
from depthwidth.plots.sweep_common import NOISE_COLUMNS

HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = VERDICTS

# ---------------------------------------------------------------- verdict arithmetic


def below(low: float, high: float, limit: float) -> str:
    """Verdict of 'the quantity is at most `limit`' from its 95% interval [low, high]."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return INCONCLUSIVE
    return HOLDS if high <= limit else FAILS if low > limit else INCONCLUSIVE


def above(low: float, high: float, limit: float) -> str:
    """Verdict of 'the quantity exceeds `limit`' from its 95% interval [low, high]: holds if the interval lies above
    it, fails if it lies at or below it. Where `limit` is the largest effect that counts as none (a bias of that
    size, as an N-correction or a learning-rate excess leaves, must not pass for one), this is the test of an
    effect: an interval above 0 but not above `limit` shows one too small to count."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return INCONCLUSIVE
    return HOLDS if low > limit else FAILS if high <= limit else INCONCLUSIVE


def within(low: float, high: float, margin: float) -> str:
    """Verdict of 'the quantity is negligible, within +-`margin`' (an equivalence test) from its 95% interval.

    Holds only if the whole interval lies inside the margin; fails if it lies wholly outside. Failing to
    tell the quantity from 0 is not evidence that it is negligible: a wide interval is inconclusive.
    """
    if not (np.isfinite(low) and np.isfinite(high)):
        return INCONCLUSIVE
    if -margin <= low and high <= margin:
        return HOLDS
    return FAILS if low > margin or high < -margin else INCONCLUSIVE


def combine(*verdicts: str) -> str:
    """All parts of a statement: fails if one fails, holds if all hold, not run if none ran, else inconclusive."""
    if FAILS in verdicts:
        return FAILS
    if all(v == HOLDS for v in verdicts):
        return HOLDS
    if all(v == NOT_RUN for v in verdicts):
        return NOT_RUN
    return INCONCLUSIVE


# ---------------------------------------------------------------- the learning-rate systematic

NO_SHIFT = (math.nan, math.nan)


@dataclass(frozen=True)
class Systematic:
    """The learning-rate systematic a rule runs within, an explicit argument of every rule that compares losses
    across shapes. Each shape's loss lies up to its scan's excess above its loss at its best rate, so a statistic's
    true value lies up to its own one-sided shift (down, up) off the measured one (`fits.systematic_shift`); a
    statistic whose shapes were not scanned takes `fallback` (% of the loss, lr_check's, both ways; nan: none).
    `on` False: no interval is widened (`claims.judge` runs each rule both ways: a verdict the systematic turns is
    inconclusive)."""

    on: bool
    fallback: float = math.nan

    def shift(
        self, own: tuple[float, float], unit: str = "%", tilt: tuple[float, float] = NO_SHIFT
    ) -> tuple[float, float, bool] | None:
        """(down, up, whether the learning-rate shift is the statistic's own) that a statistic with its `own` shift
        (NO_SHIFT: its shapes were not scanned) and its warm-up `tilt` (NO_SHIFT: none carried) is widened by: the
        two added, each where it is known; None where nothing widens it (off, or neither shift nor fallback in its
        unit, a slope having no fallback, and no tilt)."""
        if not self.on:
            return None
        down, up = own
        if math.isfinite(down) and math.isfinite(up):
            lr = (float(down), float(up), True)
        elif unit == "%" and math.isfinite(self.fallback):
            lr = (self.fallback, self.fallback, False)
        else:
            lr = None
        carried = all(math.isfinite(end) for end in tilt)
        if lr is None and not carried:
            return None
        lr = lr or (0.0, 0.0, True)
        return (lr[0] + tilt[0], lr[1] + tilt[1], lr[2]) if carried else lr


WITHOUT = Systematic(on=False)


def within_systematic(fallback: float = math.nan) -> Systematic:
    return Systematic(on=True, fallback=fallback)


# ---------------------------------------------------------------- what a rule returns


@dataclass(frozen=True)
class Part:
    """One statistic a verdict reads: its value and 95% interval [low, high] (before the systematic), the margin it
    is read against, the verdict of that reading, and the learning-rate systematic it carries: its true value lies up
    to `down` below and `up` above (`carried`: whether a systematic widened it; `own`: from its shapes' scans, else
    the config's fallback). `name` says which statistic it is and `at` where (e.g. {"n": 25000}): wording.PART_NAMES
    turns both into words. `unit` is "%" for a statistic in % of the loss."""

    name: str
    value: float = math.nan
    low: float = math.nan
    high: float = math.nan
    margin: float = math.nan
    verdict: str = INCONCLUSIVE
    at: Mapping[str, float | str] = field(default_factory=dict)
    down: float = math.nan
    up: float = math.nan
    own: bool = False
    carried: bool = False
    unit: str = "%"
    tilt_down: float = 0.0  # of down and up, what the warm-up's tilt adds (`tilt.Carried`)
    tilt_up: float = 0.0

    @property
    def width(self) -> float:
        """How far the systematic widens its interval, down and up together (0 where none does)."""
        return self.down + self.up if self.carried else 0.0

    @property
    def wide(self) -> tuple[float, float]:
        """Its interval widened by the systematic it carries."""
        return (self.low - self.down, self.high + self.up) if self.carried else (self.low, self.high)


def part(
    name: str,
    value: float,
    interval: tuple[float, float],
    systematic: Systematic = WITHOUT,
    shift: tuple[float, float] = NO_SHIFT,
    *,
    tilt: tuple[float, float] = NO_SHIFT,
    margin: float = math.nan,
    test: Callable[[float, float, float], str] | None = None,
    unit: str = "%",
    **at: float | str,
) -> Part:
    """A `Part` whose interval carries the systematic `systematic` gives its learning-rate `shift` and its warm-up
    `tilt` (`Systematic.shift`), read by `test` (below, above, within) against `margin` on the widened interval;
    without a test its verdict is set by its rule (`dataclasses.replace`)."""
    low, high = (float(end) for end in interval)
    carried = systematic.shift(shift, unit, tilt)
    down, up, own = carried if carried else (math.nan, math.nan, False)
    tilted = carried is not None and all(math.isfinite(end) for end in tilt)
    tilt_down, tilt_up = (float(tilt[0]), float(tilt[1])) if tilted else (0.0, 0.0)
    record = Part(
        name, float(value), low, high, margin, INCONCLUSIVE, at, down, up, own, carried is not None, unit,
        tilt_down, tilt_up,
    )  # fmt: skip
    return record if test is None else _read(record, test)


def _read(record: Part, test: Callable[[float, float, float], str]) -> Part:
    return replace(record, verdict=test(*record.wide, record.margin))


def argmin_part(gaps_pct, excess_pct, systematic: Systematic, tilt_pct=None, **at: float) -> Part | None:
    """Whether an argmin over shapes stays the argmin within `systematic`: each other shape's loss lies above the
    best's by `gaps_pct` (%), and may lie up to its excess (`excess_pct`; nan where unscanned: the fallback) above
    its loss at its best rate, while the best's own excess only lowers it further; the warm-up's tilt may lower each
    gap by up to its `tilt_pct` (% per shape, `tilt_reach`; None or nan: none carried). The part: the reach of the
    runner-up closest to overtaking (`down`) against its gap (`margin`), HOLDS where no reach attains its gap; None
    where nothing can move it (off, no other shape, or neither an excess nor a tilt known)."""
    gaps, excess = np.asarray(gaps_pct, dtype=float), np.asarray(excess_pct, dtype=float)
    tilt = np.broadcast_to(np.asarray(math.nan if tilt_pct is None else tilt_pct, dtype=float), gaps.shape)
    if not systematic.on or gaps.size == 0:
        return None
    tilted = bool(np.all(np.isfinite(tilt)))
    own = bool(np.all(np.isfinite(excess))) or not math.isfinite(systematic.fallback)  # no fallback: none of it
    if not np.all(np.isfinite(excess)):
        if not (math.isfinite(systematic.fallback) or tilted):
            return None
        excess = np.full(gaps.size, systematic.fallback if math.isfinite(systematic.fallback) else 0.0)
    tilt = tilt if tilted else np.zeros(gaps.size)
    reach = excess + tilt
    closest = int(np.argmin(gaps - reach))
    verdict = HOLDS if bool(np.all(gaps > reach)) else INCONCLUSIVE
    return Part(
        "argmin", math.nan, math.nan, math.nan, float(gaps[closest]), verdict, at, float(reach[closest]), 0.0, own,
        True, "%", float(tilt[closest]), 0.0,
    )  # fmt: skip


def tilt_reach(lever_others, lever_best, carried: tuple[float, float]) -> np.ndarray:
    """How far the warm-up's tilt may lower each other shape's gap to the best (%): the tilt t in `carried` (its
    range, % per e-fold, 0 inside) moves each gap by t (lever_other - lever_best), so up to max(0, -t (...)) at an
    end of the range; nan where the range is (none carried)."""
    delta = np.asarray(lever_others, dtype=float) - float(lever_best)
    low, high = carried
    return np.maximum(0.0, np.maximum(-low * delta, -high * delta))


def widest(parts) -> Part:
    """Of the parts a systematic widened, the one it widens most, a loss statistic's (%) before a slope's (its own
    unit)."""
    return max(parts, key=lambda p: (p.unit == "%", p.width))


def over_margin(parts) -> list[Part]:
    """The widened parts whose systematic alone is wider than their margin: undecidable at this protocol."""
    return [p for p in parts if p.width > p.margin]


def furthest_over(parts) -> Part | None:
    """Of the parts wider than their margin, the one furthest past it; None where none is."""
    over = over_margin(parts)
    return max(over, key=lambda p: p.width - p.margin) if over else None


@dataclass(frozen=True)
class Need:
    """What would decide an undecided part, in numbers: `kind` names the remedy, `numbers` size it (seeds, a factor
    of runs, tokens; wording.NEEDS says each kind in words)."""

    kind: str
    numbers: Mapping[str, float | int | str | None] = field(default_factory=dict)


def need(kind: str, **numbers: float | int | str | None) -> Need:
    return Need(kind, numbers)


@dataclass(frozen=True)
class Noise:
    """The seed noise of a sweep figure's row: the pooled sd of the loss (%) with its degrees of freedom, the seeds per
    shape, and the prior of the moderated variances its intervals took (sweep_common.noise_model): the sd (%) each
    shape's own was shrunk toward and its weight in dof (inf: one sd for every shape; nan: the figure has none)."""

    sd: float
    dof: int
    seeds: int
    prior_sd: float = math.nan
    prior_dof: float = math.nan


def noise_of(row: pd.Series, seeds: int | None = None) -> Noise:
    """A sweep figure row's seed noise (its own `seeds` column unless given; a figure that only pools has no prior)."""
    sd, dof, prior_sd, prior_dof = NOISE_COLUMNS
    seeds = int(row["seeds"]) if seeds is None else seeds
    prior = float(row.get(prior_sd, math.nan)), float(row.get(prior_dof, math.nan))
    return Noise(float(row[sd]), int(row[dof]), seeds, *prior)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """What a rule found, in numbers: the verdict, the parts it read (in the order it read them), what would decide
    it, and the seeds it read. Each rule's record adds the numbers its row states (subclasses, one per rule)."""

    verdict: str
    parts: tuple[Part, ...] = ()
    needs: tuple[Need, ...] = ()
    seeds: int | None = None  # seeds per shape (or per model) the rule read; None: no seeds (simulations)

    @property
    def carried(self) -> tuple[Part, ...]:
        """The parts a learning-rate systematic widened, in the order the rule read them."""
        return tuple(p for p in self.parts if p.carried)


@dataclass(frozen=True, kw_only=True)
class Unmeasurable(Evidence):
    """A rule's verdict where its figure's rows cannot support it (too few shapes, depths or N): `reason` names the
    case (wording.UNMEASURABLE), `numbers` size it."""

    reason: str
    numbers: Mapping[str, float | int | str] = field(default_factory=dict)
    noise: Noise | None = None


def unmeasurable(reason: str, *needs: Need, noise: Noise | None = None, **numbers: float | int | str) -> Unmeasurable:
    seeds = noise.seeds if noise else None
    return Unmeasurable(verdict=INCONCLUSIVE, needs=needs, seeds=seeds, reason=reason, numbers=numbers, noise=noise)


# ---------------------------------------------------------------- what a rule reads


class FigureDataError(ValueError):
    """A figure's rows lack a column a rule reads, or hold something else than a number in it: a defect of the
    pipeline, never a verdict."""

    def __init__(self, figure: str, column: str, problem: str = "missing"):
        what = f"column {column!r} {problem}" if column else problem
        super().__init__(f"figure {figure}: {what} (the rule of its claim reads it)")
        self.figure, self.column = figure, column


def reads(*numbers: str, labels: tuple[str, ...] = (), named_by: tuple[str, ...] = ()):
    """Declares the figure columns a rule reads: `numbers` must hold numbers (or flags), `labels` anything, and
    `named_by` the parameters of the rule whose value names a column of numbers (e.g. the knob of an ablation);
    `require` checks a figure's rows against them before the rule runs."""

    def declare(rule):
        @functools.wraps(rule)
        def wrapped(*args, **kwargs):
            return rule(*args, **kwargs)

        wrapped.columns = (tuple(numbers), tuple(labels), tuple(named_by))
        return wrapped

    return declare


def require(frame: pd.DataFrame, figure: str, rule, params: Mapping[str, object]) -> pd.DataFrame:
    """`frame`, once it holds every column `rule` reads (`reads`, with `params` naming the columns its parameters
    name) with numbers where it reads numbers; else FigureDataError naming the figure and the first column at fault."""
    numbers, labels, named_by = getattr(rule, "columns", ((), (), ()))
    numbers = (*numbers, *(str(params[name]) for name in named_by))
    for column in (*numbers, *labels):
        if column not in frame.columns:
            raise FigureDataError(figure, column)
    for column in numbers:
        values = frame[column]
        typed = pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)
        if not typed and not values.map(pd.api.types.is_number).all():
            raise FigureDataError(figure, column, "holds something else than numbers")
    return frame


# ---------------------------------------------------------------- shared by the sweep rules


def seeds_need(noise: Noise, effect: float, what: str, **at: float | str) -> Need:
    """What an undecided part of a sweep rule leaves open: `what` (`effect`, in %), which more seeds per shape may
    resolve. How many is `decide`'s to find, by the row's own procedure redrawn at more seeds (claims.with_decision
    puts its answer in this need's place); no formula here stands in for it (a difference of two means at a pooled
    sd asked for 3 seeds with 3 in hand, and was blind to the systematic). `one_seed`: the seed noise is not measured
    yet."""
    return need("seeds", effect=effect, what=what, one_seed=not noise.dof, **at)


def excess_of(shapes: pd.DataFrame) -> np.ndarray:
    """Each row's learning-rate excess (% of the loss, `lr_excess_pct`: its loss at its scan's choice over its
    best); nan where its shape was not scanned (sweep.lr_grid off)."""
    column = shapes["lr_excess_pct"] if "lr_excess_pct" in shapes else pd.Series(np.nan, index=shapes.index)
    return pd.to_numeric(column, errors="coerce").to_numpy(float)


def figure_shift(row, name: str) -> tuple[float, float]:
    """A figure row's learning-rate systematic of its statistic `name`: (`<name>_sys_down`, `<name>_sys_up`)."""
    return float(row[name + "_sys_down"]), float(row[name + "_sys_up"])


def figure_tilt(row, name: str) -> tuple[float, float]:
    """A figure row's warm-up tilt of its statistic `name`: (`<name>_tilt_down`, `<name>_tilt_up`); NO_SHIFT where
    its figure carries none (a config without a measured tilt, or a figure made before the tilt was carried)."""
    if name + "_tilt_down" not in row:
        return NO_SHIFT
    return float(row[name + "_tilt_down"]), float(row[name + "_tilt_up"])
