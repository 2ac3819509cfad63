"""What every claim's rule returns, and the arithmetic of its verdict: a 95% interval against a limit,
parts combined, the seed noise, and the seeds that would decide an inconclusive one."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass

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

_LOSS_SYSTEMATIC = contextvars.ContextVar("loss_systematic_pct", default=0.0)


@contextlib.contextmanager
def loss_systematic(pct: float) -> Iterator[None]:
    """Within it, `loss_interval` widens every interval by +-`pct` (% of the loss)."""
    token = _LOSS_SYSTEMATIC.set(pct)
    try:
        yield
    finally:
        _LOSS_SYSTEMATIC.reset(token)


def loss_interval(low: float, high: float) -> tuple[float, float]:
    """A 95% interval of a loss difference between shapes (% of the loss), widened by the learning-rate
    systematic in force: each shape's loss may lie up to that much above its loss at its best rate, so a
    difference of two (a spread, a gain, a lack of fit) may be off by as much either way."""
    pct = _LOSS_SYSTEMATIC.get()
    return low - pct, high + pct


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
    """Verdict of 'there is an effect (> 0)' from its 95% interval, where an effect of at most `negligible`
    is none: holds if the interval lies above 0, fails if it lies at or below `negligible`."""
    verdict = above(low, high, 0.0)
    return FAILS if verdict == INCONCLUSIVE and high <= negligible else verdict


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


def finished_runs(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] == "ok"] if "status" in frame else frame
