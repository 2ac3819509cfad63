"""Claims: verdicts follow the rule in the row; unmeasurable data gives `not run`, never a crash."""

from __future__ import annotations

import pandas as pd
from depthwidth import claims


def claim(measure) -> claims.Claim:
    return claims.Claim("x", "P", "s", "m", "v", "r", "fig", measure)


def test_verdict_follows_the_measure(tmp_path):
    csv = tmp_path / "fig.csv"
    pd.DataFrame({"a": [1]}).to_csv(csv, index=False)
    assert claims.evaluate(claim(lambda f: ("1", True)), {"fig": csv}, "")["verdict"] == claims.HOLDS
    assert claims.evaluate(claim(lambda f: ("1", False)), {"fig": csv}, "")["verdict"] == claims.FAILS
    assert claims.evaluate(claim(lambda f: ("1", None)), {"fig": csv}, "")["verdict"] == claims.NOT_RUN


def test_a_measure_that_cannot_run_gives_not_run_with_the_reason(tmp_path):
    csv = tmp_path / "fig.csv"
    pd.DataFrame({"a": [1]}).to_csv(csv, index=False)

    def needs_two_points(frame):
        raise ValueError("a line needs at least two distinct x values")

    row = claims.evaluate(claim(needs_two_points), {"fig": csv}, "")
    assert row["verdict"] == claims.NOT_RUN and "two distinct" in row["our_value"]


def test_a_figure_the_config_does_not_build_is_not_run():
    row = claims.evaluate(claim(lambda f: ("1", True)), {}, "")
    assert row["verdict"] == claims.NOT_RUN


def test_entropy_claim_needs_both_attention_kinds():
    frame = pd.DataFrame(
        {"attention": ["shaped"] * 2, "lr": [0.1] * 2, "layer": [0, 0], "step": [0, 10], "entropy": [3.0, 2.9]}
    )
    value, holds = claims.entropy_collapse(frame)
    assert holds is None and "both attention kinds" in value


def test_entropy_collapse_rule_on_known_curves():
    rows = []
    for attention, final in (("standard", 0.3), ("shaped", 2.5)):
        for layer in (0, 1):
            rows += [
                {"attention": attention, "lr": 0.1, "layer": layer, "step": 0, "entropy": 3.0},
                {"attention": attention, "lr": 0.1, "layer": layer, "step": 100, "entropy": final + layer},
            ]
    value, holds = claims.entropy_collapse(pd.DataFrame(rows))
    assert holds and "standard 0.10" in value


def test_every_claim_names_a_built_figure_or_a_reason():
    from depthwidth.plots import FIGURES

    for c in claims.CLAIMS:
        assert (c.figure in FIGURES and c.measure) or c.not_run_reason, c.id
