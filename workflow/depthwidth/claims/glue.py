"""Noci et al. 2023's GLUE claim (docs/science.md §3.3): fine-tuned, the shaped model beats its standard baseline.
Read per task from the `noci_glue` figure's rows: the headline score (CoLA's Matthews correlation, RTE's accuracy)
of each model over fine-tuning seeds, and shaped minus standard with its 95% Welch t-interval."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from depthwidth import fits
from depthwidth.claims.verdicts import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    Evidence,
    FigureDataError,
    Part,
    Systematic,
    above,
    combine,
    need,
    part,
    reads,
)


def difference(shaped: pd.Series, standard: pd.Series) -> tuple[float, float, float]:
    """Shaped minus standard (means over seeds) and its Welch t-interval at `fits.level()` (95% by default; nan
    under 2 seeds a side)."""
    diff = float(shaped["mean"] - standard["mean"])
    if min(shaped["seeds"], standard["seeds"]) < 2:
        return diff, math.nan, math.nan
    variances = [row["sd"] ** 2 / row["seeds"] for row in (shaped, standard)]
    se = math.sqrt(sum(variances))
    if se == 0:
        return diff, diff, diff
    dof = fits.welch_dof(variances, [row["seeds"] - 1 for row in (shaped, standard)])
    return diff, *fits.t_interval(diff, se, dof)  # Welch's dof (>= the fewer seeds - 1 >= 1)


def at_chance(row: pd.Series) -> bool:
    """Whether a model's 95% interval of its score holds chance level (no interval, one seed: not known, False)."""
    return bool(row["low"] <= row["chance"] <= row["high"])


@dataclass(frozen=True)
class Score:
    """One model's headline score on a task: its mean over fine-tuning seeds with the 95% interval."""

    mean: float
    low: float
    high: float
    seeds: int


@dataclass(frozen=True)
class Task:
    """One task: its metric, each model's score, shaped - standard (`part`, read above 0), whether both sit at
    chance (no effect can show), and the seeds that would resolve the difference (None: it is 0)."""

    task: str
    metric: str
    shaped: Score
    standard: Score
    part: Part
    chance: bool
    seeds_needed: int | None


@dataclass(frozen=True)
class Other:
    """A score beside the headline one (CoLA's F1): the task, the metric, the model and its mean."""

    task: str
    metric: str
    attention: str
    mean: float


@dataclass(frozen=True, kw_only=True)
class GlueBeats(Evidence):
    tasks: tuple[Task, ...]
    others: tuple[Other, ...]


def _score(row: pd.Series) -> Score:
    return Score(float(row["mean"]), float(row["low"]), float(row["high"]), int(row["seeds"]))


def task_result(task: str, rows: pd.DataFrame) -> Task:
    """One task's shaped - standard, read above 0 (inconclusive where both models sit at chance)."""
    side = {row["attention"]: row for _, row in rows.iterrows()}
    shaped, standard = side["shaped"], side["standard"]
    diff, low, high = difference(shaped, standard)
    chance = at_chance(shaped) and at_chance(standard)
    gain = part("shaped_minus_standard", diff, (low, high), margin=0.0, test=above, unit="", task=task)
    seeds = None
    if chance:
        gain = Part(**{**gain.__dict__, "verdict": INCONCLUSIVE})
    elif gain.verdict == INCONCLUSIVE and math.isfinite(low) and diff != 0:
        factor = ((high - low) / 2 / abs(diff)) ** 2
        seeds = math.ceil(max(shaped["seeds"], standard["seeds"]) * factor)
    return Task(task, str(shaped["metric"]), _score(shaped), _score(standard), gain, chance, seeds)


@reads("seeds", "mean", "sd", "low", "high", "chance", labels=("task", "metric", "attention", "primary"))
def glue_beats(frame: pd.DataFrame, systematic: Systematic) -> GlueBeats:
    """Per task, shaped minus standard in the headline score over seeds: holds if every task's 95% interval lies
    above 0, fails if one lies at or below 0; a task where both models sit at chance is inconclusive."""
    primary = frame[frame["primary"].astype(str).str.lower() == "true"]
    if primary.empty:
        raise FigureDataError("noci_glue", "primary", "marks no headline score")
    tasks = tuple(task_result(task, rows) for task, rows in primary.groupby("task", sort=False))
    verdict = combine(*(t.part.verdict for t in tasks))
    others = frame[frame["primary"].astype(str).str.lower() != "true"]
    needs = (
        tuple(_task_need(t) for t in tasks if t.part.verdict == INCONCLUSIVE) if verdict not in (HOLDS, FAILS) else ()
    )
    return GlueBeats(
        verdict=verdict,
        parts=tuple(t.part for t in tasks),
        needs=needs,
        seeds=min((min(t.shaped.seeds, t.standard.seeds) for t in tasks), default=None),
        tasks=tasks,
        others=tuple(Other(r.task, r.metric, r.attention, r.mean) for r in others.itertuples()),
    )


def _task_need(task: Task):
    if task.chance:
        return need("glue_chance", task=task.task)
    if not math.isfinite(task.part.low):
        return need("glue_seeds", task=task.task)
    return need("glue_resolve", task=task.task, seeds=task.seeds_needed, difference=task.part.value)
