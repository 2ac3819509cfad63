"""The dev scores, from the confusion counts of a binary classifier (class 1 the positive one: CoLA's
acceptable, RTE's not_entailment). Torch-free: `check` recomputes every score from the recorded counts."""

from __future__ import annotations

import math
from collections.abc import Iterable


def confusion(labels: Iterable[int], predictions: Iterable[int]) -> dict[str, int]:
    """tp, fp, tn, fn of `predictions` against `labels` (both 0 or 1, same length)."""
    labels, predictions = list(labels), list(predictions)
    if len(labels) != len(predictions):
        raise ValueError(f"{len(labels)} labels but {len(predictions)} predictions")
    counts = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
    for label, predicted in zip(labels, predictions):
        if label not in (0, 1) or predicted not in (0, 1):
            raise ValueError(f"labels and predictions are 0 or 1, got {label!r} and {predicted!r}")
        counts[("t" if label == predicted else "f") + ("p" if predicted else "n")] += 1
    return counts


def mcc(c: dict[str, int]) -> float:
    """Matthews correlation, (tp tn - fp fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn)); 0 when a margin is empty
    (a constant classifier: GLUE's and scikit-learn's convention)."""
    tp, fp, tn, fn = c["tp"], c["fp"], c["tn"], c["fn"]
    denominator = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return (tp * tn - fp * fn) / math.sqrt(denominator) if denominator else 0.0


def f1(c: dict[str, int]) -> float:
    """F1 of the positive class, 2 tp / (2 tp + fp + fn); 0 when there is no positive label or prediction."""
    denominator = 2 * c["tp"] + c["fp"] + c["fn"]
    return 2 * c["tp"] / denominator if denominator else 0.0


def accuracy(c: dict[str, int]) -> float:
    """The fraction predicted right; nan with no rows."""
    n = sum(c.values())
    return (c["tp"] + c["tn"]) / n if n else math.nan


def scores(c: dict[str, int]) -> dict[str, float]:
    return {"mcc": mcc(c), "f1": f1(c), "accuracy": accuracy(c)}
