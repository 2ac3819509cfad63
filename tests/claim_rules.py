"""Running one claim's rule in a test, as the claims table runs it: with its registry params, without the
learning-rate systematic or within one (`fallback`: lr_check's, % of the loss; nan: none), on rows checked against
what the rule reads (`verdicts.require`). Rule tests assert the numbers (`evidence`); a few hold the words (`text`,
`row`)."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
from depthwidth import claims
from depthwidth.claims import registry, verdicts, wording


def claim(claim_id: str, **params) -> registry.Claim:
    """The registered claim, its params updated by `params` (a test's own margins)."""
    entry = registry.BY_ID[claim_id]
    return replace(entry, params={**entry.params, **params}) if params else entry


def systematic(fallback: float | None) -> verdicts.Systematic:
    return verdicts.WITHOUT if fallback is None else verdicts.within_systematic(fallback)


def evidence(claim_id: str, frame: pd.DataFrame, fallback: float | None = None, **params) -> verdicts.Evidence:
    """The claim's rule on `frame` (one count's rows), without the systematic, or within it where `fallback` is
    given (nan: each statistic's own shift only)."""
    entry = claim(claim_id, **params)
    verdicts.require(frame, entry.figure, entry.measure, entry.params)
    return entry.measure(frame, systematic(fallback), **entry.params)


def text(claim_id: str, frame: pd.DataFrame, fallback: float | None = None, **params) -> wording.Text:
    """The words of the rule's evidence on `frame` (`wording.render`)."""
    return wording.render(evidence(claim_id, frame, fallback, **params), claim(claim_id, **params))


def judged(claim_id: str, frame: pd.DataFrame, fallback: float = math.nan, **params) -> claims.Judged:
    """The claim judged as the table judges it: without and within the systematic, at each count of `frame`."""
    return claims.judged(claim(claim_id, **params), frame, fallback)


def row(claim_id: str, frame: pd.DataFrame, fallback: float = math.nan, **params) -> dict[str, str]:
    """The text columns of the claim's row in claims.csv (`claims.text_columns`)."""
    return claims.text_columns(judged(claim_id, frame, fallback, **params))


def needs(e: verdicts.Evidence) -> dict[str, dict]:
    """What would decide it, by kind: kind -> its numbers (the first need of each kind)."""
    found: dict[str, dict] = {}
    for need in e.needs:
        found.setdefault(need.kind, dict(need.numbers))
    return found


def parts(e: verdicts.Evidence) -> dict[str, verdicts.Part]:
    """The parts the rule read, by name (the first of each name)."""
    found: dict[str, verdicts.Part] = {}
    for p in e.parts:
        found.setdefault(p.name, p)
    return found
