"""What every claim's rule returns, and the arithmetic of its verdict: a 95% interval against a limit,
parts combined, the seed noise, and the seeds that would decide an inconclusive one."""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.columns import VERDICTS

HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = VERDICTS
ONE_SEED = "one seed per shape: the seed noise is not measured"
OURS = "(threshold chosen by this project, not the paper)"


@dataclass(frozen=True)
class Result:
    """What a rule found: our number, the verdict, and the columns that say how sure it is.

    interval: the 95% interval the verdict was read from; noise: the noise estimate behind it;
    at_our_scale: what the paper's equations give at our scale (next to its own numbers);
    needs: for an inconclusive verdict, what would decide it, computed from the noise and the effect.
    """

    value: str
    verdict: str
    interval: str = ""
    noise: str = ""
    at_our_scale: str = ""
    needs: str = ""


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    statement: str
    metric: str
    paper_value: str
    rule: str
    figure: str | None  # the figure whose CSV the claim reads; None: cannot be run here
    measure: Callable[[pd.DataFrame], Result] | None
    not_run_reason: str = ""
    # whether its verdict is read from losses compared across shapes (in % of the loss), each trained at the
    # recipe's rate: then it must survive the learning-rate systematic (`loss_interval`)
    lr_systematic: bool = False
    # whether its figure computes it at each of the three counts (a `count` column): the verdict is the papers'
    # count's (non-embedding N), the value restates it at total parameters and at training FLOPs
    per_count: bool = False


# ---------------------------------------------------------------- the learning-rate systematic


@dataclass(frozen=True)
class Widening:
    """One interval a rule widened by the learning-rate systematic: what it is, how far its true value may lie
    below (`down`) and above (`up`) the measured one (% of the loss, or the statistic's unit), the margin its
    verdict reads it against, and whether the shift is the statistic's own (from its shapes' scans) or the
    config's one global fallback (lr_check's, both ways)."""

    what: str
    down: float
    up: float
    margin: float
    own: bool
    unit: str = "%"

    @property
    def width(self) -> float:
        return self.down + self.up


@dataclass
class Systematic:
    """The learning-rate systematic in force: `fallback` (% of the loss, both ways; nan: none) for a statistic
    with no shift of its own, and every interval widened so far."""

    fallback: float
    widened: list[Widening] = field(default_factory=list)


_LOSS_SYSTEMATIC: contextvars.ContextVar[Systematic | None] = contextvars.ContextVar("loss_systematic", default=None)
NO_SHIFT = (math.nan, math.nan)


@contextlib.contextmanager
def loss_systematic(fallback_pct: float) -> Iterator[Systematic]:
    """Within it, `loss_interval` widens each interval by its statistic's own one-sided shift, or by
    +-`fallback_pct` (% of the loss) where it has none; yields the record of what it widened."""
    systematic = Systematic(fallback_pct)
    token = _LOSS_SYSTEMATIC.set(systematic)
    try:
        yield systematic
    finally:
        _LOSS_SYSTEMATIC.reset(token)


def loss_interval(
    low: float,
    high: float,
    shift: tuple[float, float] = NO_SHIFT,
    margin: float = math.nan,
    what: str = "",
    record: bool = True,
    unit: str = "%",
) -> tuple[float, float]:
    """A 95% interval of a loss statistic (a difference, a spread, a gain, a lack of fit: % of the loss), widened by
    the learning-rate systematic in force (`loss_systematic`): each shape's loss lies up to its excess above its
    loss at its best rate, so the statistic's true value lies up to shift = (down, up) below or above the measured
    one (`fits.systematic_shift`, one-sided, zero for a shape that cancels). A statistic with no shift of its own
    (nan: its shapes were not scanned) takes the fallback both ways. Outside `loss_systematic`: unchanged.
    `record`: whether the row's record of what it widened lists it (not for a second level of one statistic);
    `unit`: the statistic's, where it is not a % of the loss (a slope): its shift has no fallback then."""
    systematic = _LOSS_SYSTEMATIC.get()
    if systematic is None:
        return low, high
    down, up = shift
    own = math.isfinite(down) and math.isfinite(up)
    if not own:
        if not math.isfinite(systematic.fallback) or unit != "%":
            return low, high
        down = up = systematic.fallback
    if record:
        systematic.widened.append(Widening(what, down, up, margin, own, unit))
    return low - down, high + up


def figure_shift(row, name: str) -> tuple[float, float]:
    """A figure row's learning-rate systematic of its statistic `name`: (`<name>_sys_down`, `<name>_sys_up`);
    NO_SHIFT where the figure gives none."""
    return float(row.get(f"{name}_sys_down", math.nan)), float(row.get(f"{name}_sys_up", math.nan))


def argmin_stands(decided: bool, gaps_pct, excess_pct, what: str) -> bool:
    """Whether an argmin over shapes, `decided` over the seeds, stays the argmin within the learning-rate systematic
    in force: each other shape's loss lies above the best's by `gaps_pct` (%), and may lie up to its excess
    (`excess_pct`; nan where unscanned: the fallback) above its loss at its best rate, while the best's own
    excess only lowers it further. Records the excess of the runner-up closest to overtaking against its gap.
    Outside `loss_systematic`: `decided`."""
    systematic = _LOSS_SYSTEMATIC.get()
    gaps, excess = np.asarray(gaps_pct, dtype=float), np.asarray(excess_pct, dtype=float)
    if systematic is None or gaps.size == 0:
        return decided
    own = bool(np.all(np.isfinite(excess)))
    if not own:
        if not math.isfinite(systematic.fallback):
            return decided
        excess = np.full(gaps.size, systematic.fallback)
    closest = int(np.argmin(gaps - excess))
    systematic.widened.append(Widening(what, float(excess[closest]), 0.0, float(gaps[closest]), own))
    return decided and bool(np.all(gaps > excess))


# ---------------------------------------------------------------- verdict arithmetic


def below(low: float, high: float, limit: float) -> str:
    """Verdict of 'the quantity is at most `limit`' from its 95% interval [low, high]."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return INCONCLUSIVE
    return HOLDS if high <= limit else FAILS if low > limit else INCONCLUSIVE


def above(low: float, high: float, limit: float) -> str:
    """Verdict of 'the quantity exceeds `limit`' from its 95% interval [low, high]."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return INCONCLUSIVE
    return HOLDS if low > limit else FAILS if high <= limit else INCONCLUSIVE


def exceeds(low: float, high: float, negligible: float) -> str:
    """Verdict of 'there is an effect' from its 95% interval, where an effect of at most `negligible` is none:
    holds if the interval lies above `negligible`, fails if it lies at or below it. (An interval above 0 but
    not above `negligible` shows an effect too small to count: a bias of that size, as an N-correction or a
    learning-rate excess leaves, must not pass for one.)"""
    return above(low, high, negligible)


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


def noise_text(sd: float, dof: int, seeds: int, heterogeneity_p: float = np.nan, per_shape: bool = False) -> str:
    """The seed-noise column: pooled sd of the loss (%) with its degrees of freedom, and, where the figure
    tested it, Bartlett's p that every shape has that sd (below fits.HETEROGENEITY_ALPHA: each its own)."""
    if not dof:
        return ONE_SEED
    text = f"seed sd {sd:.2f}% of the loss (pooled, {int(dof)} dof; {int(seeds)} seeds per shape)"
    if np.isfinite(heterogeneity_p):
        text += (
            f"; the shapes' seed variances differ (Bartlett p = {heterogeneity_p:.2g}): each shape's own sd in the "
            "bootstrap"
            if per_shape
            else f"; one sd for every shape (Bartlett p = {heterogeneity_p:.2g})"
        )
    return text


def heterogeneity(row) -> tuple[float, bool]:
    """A figure row's Bartlett p and whether its bootstrap took each shape's own sd (nan, False if untested)."""
    p = row.get("noise_heterogeneity_p", np.nan)
    return float(p), bool(row.get("noise_per_shape", False)) and np.isfinite(p)


def seeds_text(sd: float, margin: float, seeds: int, shapes: int, what: str) -> str:
    """'needs about k seeds' for an effect `margin` (in the units of sd) to clear the noise."""
    k = fits.seeds_needed(sd, margin, seeds_now=max(seeds, 2), shapes=max(shapes, 1))
    if k is None:
        return f"more than 100 seeds per shape: {what} ({margin:+.2f}) sits at the threshold, within any noise"
    return f"about {k} seeds per shape would resolve {what} ({margin:+.2f}) at seed sd {sd:.2f}"


def number_text(value: float, fmt: str = ".2f") -> str:
    return format(value, fmt) if np.isfinite(value) else "nan"


def interval_text(low: float, high: float, fmt: str = ".2f") -> str:
    return (
        f"[{number_text(low, fmt)}, {number_text(high, fmt)}]"
        if np.isfinite(low) and np.isfinite(high)
        else "no interval"
    )


def excess_of(shapes: pd.DataFrame) -> np.ndarray:
    """Each row's learning-rate excess (% of the loss, `lr_excess_pct`: its loss at its scan's choice over its
    best); nan where its shape was not scanned (sweep.lr_grid off)."""
    column = shapes["lr_excess_pct"] if "lr_excess_pct" in shapes else pd.Series(np.nan, index=shapes.index)
    return pd.to_numeric(column, errors="coerce").to_numpy(float)


def finished_runs(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] == "ok"] if "status" in frame else frame
