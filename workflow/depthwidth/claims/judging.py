"""A claim judged on its figure's rows, in numbers: its rule run without and within the learning-rate systematic, at
the papers' count and at the others. The claims table (claims/__init__.py) words it; `decide` runs it on redrawn
tables. Numbers only: nothing here writes prose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from depthwidth.claims.registry import Claim
from depthwidth.claims.verdicts import (
    INCONCLUSIVE,
    WITHOUT,
    Evidence,
    FigureDataError,
    Part,
    require,
    within_systematic,
)
from depthwidth.plots.sweep_common import PAPERS_COUNT


def lr_systematic_pct(frame: pd.DataFrame) -> float:
    """The learning-rate systematic (% of the loss): the largest excess of a checked shape's loss at the
    recipe's rate over its loss at its best rate (`plots.lr_check`); nan with no shape checked."""
    excess = frame.drop_duplicates(["n_layer", "d_model", "d_ff"])["excess_pct"] if len(frame) else []
    excess = [value for value in excess if math.isfinite(value)]
    return max(0.0, *excess) if excess else math.nan


@dataclass(frozen=True)
class Judgement:
    """A claim judged on one count's rows: its rule's evidence without the learning-rate systematic (`plain`) and
    within it (`shifted`, None for a claim that compares no losses across shapes), and the verdict: the rule's, or
    inconclusive where the systematic turns it."""

    plain: Evidence
    shifted: Evidence | None
    fallback: float

    @property
    def verdict(self) -> str:
        if self.shifted is None or not self.shifted.carried or self.shifted.verdict == self.plain.verdict:
            return self.plain.verdict
        return INCONCLUSIVE

    @property
    def flipped(self) -> bool:
        return self.verdict != self.plain.verdict

    @property
    def deciding(self) -> Part | None:
        """The statistic that decided the row, or keeps it undecided: the first the rule read (within the systematic,
        where it read one) whose verdict is the row's; else the first it read; None if it read none."""
        parts = (self.shifted or self.plain).parts
        return next((p for p in parts if p.verdict == self.verdict), parts[0] if parts else None)


def measure(claim: Claim, rows: pd.DataFrame, systematic) -> Evidence:
    return claim.measure(rows, systematic, **claim.params)


def judge(claim: Claim, rows: pd.DataFrame, fallback: float = math.nan) -> Judgement:
    """`claim`'s rule on `rows`, once without the learning-rate systematic and, for a claim that compares losses
    across shapes, once within it (each statistic's own one-sided shift from its shapes' scans, else
    +-`fallback`% (lr_check's))."""
    plain = measure(claim, rows, WITHOUT)
    shifted = measure(claim, rows, within_systematic(fallback)) if claim.lr_systematic else None
    return Judgement(plain, shifted, fallback)


@dataclass(frozen=True)
class Judged:
    """A claim judged on its figure: at the papers' count (`main`) and, for a claim computed at each count, at the
    others (`others`: count -> judgement)."""

    claim: Claim
    main: Judgement
    others: dict[str, Judgement]


def judged(claim: Claim, frame: pd.DataFrame, fallback: float = math.nan) -> Judged:
    """The claim on its figure's rows: at each count where its figure has one (the verdict is the papers' count's)."""
    require(frame, claim.figure, claim.measure, claim.params)
    if not claim.per_count:
        return Judged(claim, judge(claim, frame, fallback), {})
    if "count" not in frame.columns:
        raise FigureDataError(claim.figure, "count")
    by_count = {count: rows for count, rows in frame.groupby("count", sort=False)}
    main = judge(claim, by_count.pop(PAPERS_COUNT, frame.iloc[:0]), fallback)
    return Judged(claim, main, {count: judge(claim, rows, fallback) for count, rows in by_count.items()})
