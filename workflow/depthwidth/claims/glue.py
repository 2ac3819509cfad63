"""Noci et al. 2023's GLUE claim: fine-tuned, the shaped model beats its standard baseline. Read per task from
the `noci_glue` figure's rows: the headline score (CoLA's Matthews correlation, RTE's accuracy) of each model
over fine-tuning seeds, and shaped minus standard with its 95% Welch t-interval."""

from __future__ import annotations

import math

import pandas as pd
from scipy import stats

from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, Result, above, combine, interval_text

CHANCE_TEXT = {"mcc": "MCC 0", "accuracy": "50% accuracy"}


def difference(shaped: pd.Series, standard: pd.Series) -> tuple[float, float, float]:
    """Shaped minus standard (means over seeds) and its 95% Welch t-interval (nan under 2 seeds a side)."""
    diff = float(shaped["mean"] - standard["mean"])
    if min(shaped["seeds"], standard["seeds"]) < 2:
        return diff, math.nan, math.nan
    variances = [row["sd"] ** 2 / row["seeds"] for row in (shaped, standard)]
    se = math.sqrt(sum(variances))
    if se == 0:
        return diff, diff, diff
    dof = se**4 / sum(v**2 / (row["seeds"] - 1) for v, row in zip(variances, (shaped, standard)))
    half = float(stats.t.ppf(0.975, dof)) * se
    return diff, diff - half, diff + half


def at_chance(row: pd.Series) -> bool:
    """Whether a model's 95% interval of its score holds chance level (no interval, one seed: not known, False)."""
    return bool(row["low"] <= row["chance"] <= row["high"])


def task_result(task: str, rows: pd.DataFrame) -> tuple[str, str, str, str]:
    """One task's verdict, its text, its interval text and what would decide it."""
    side = {row["attention"]: row for _, row in rows.iterrows()}
    shaped, standard = side["shaped"], side["standard"]
    metric = shaped["metric"]
    diff, low, high = difference(shaped, standard)
    text = (
        f"{task} {metric}: shaped {shaped['mean']:.3f} {interval_text(shaped['low'], shaped['high'], '.3f')}, "
        f"standard {standard['mean']:.3f} {interval_text(standard['low'], standard['high'], '.3f')}, "
        f"shaped - standard {diff:+.3f} {interval_text(low, high, '+.3f')} "
        f"({int(shaped['seeds'])} and {int(standard['seeds'])} seeds)"
    )
    interval = f"{task} shaped - standard {interval_text(low, high, '+.3f')}"
    if at_chance(shaped) and at_chance(standard):
        return (
            INCONCLUSIVE,
            f"{text}; both at chance ({CHANCE_TEXT[metric]}): no effect can show",
            interval,
            f"{task}: models that learn the task (both sit at chance): a deeper or longer pretraining, not more seeds",
        )
    verdict = above(low, high, 0.0)
    needs = ""
    if verdict == INCONCLUSIVE:
        if not math.isfinite(low):
            needs = f"{task}: at least 2 fine-tuning seeds per model (3 for a usable interval)"
        elif diff != 0:
            factor = ((high - low) / 2 / abs(diff)) ** 2
            seeds = math.ceil(max(shaped["seeds"], standard["seeds"]) * factor)
            needs = f"{task}: about {seeds} seeds per model would resolve the difference ({diff:+.3f})"
        else:
            needs = f"{task}: the difference is 0: more seeds would not decide it"
    return verdict, text, interval, needs


def glue_beats(frame: pd.DataFrame) -> Result:
    """Per task, shaped minus standard in the headline score over seeds: holds if every task's 95% interval lies
    above 0, fails if one lies at or below 0; a task where both models sit at chance is inconclusive."""
    primary = frame[frame["primary"].astype(str).str.lower() == "true"]
    if primary.empty:
        raise ValueError("no headline score rows (primary) in the figure's data")
    verdicts, texts, intervals, needs = [], [], [], []
    for task, rows in primary.groupby("task", sort=False):
        verdict, text, interval, need = task_result(task, rows)
        verdicts.append(verdict)
        texts.append(f"{text}: {verdict}")
        intervals.append(interval)
        needs.append(need)
    verdict = combine(*verdicts)
    others = frame[frame["primary"].astype(str).str.lower() != "true"]
    extra = [f"{r.task} {r.metric}: {r.attention} {r.mean:.3f}" for r in others.itertuples()]
    return Result(
        value="; ".join(texts + extra),
        verdict=verdict,
        interval="; ".join(intervals) + " (95% Welch t over fine-tuning seeds)",
        noise="seed-to-seed spread of the dev score (fine-tuning seeds; one pretraining per model)",
        at_our_scale="the paper gives no number at our scale; chance is MCC 0 (CoLA) and 50% accuracy (RTE)",
        needs="; ".join(filter(None, needs)) if verdict != HOLDS and verdict != FAILS else "",
    )
