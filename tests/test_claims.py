"""Claims: verdicts follow the rule in the row; missing data is `not run` or `inconclusive`, never `does not hold`."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest
from depthwidth import claims
from depthwidth.claims import noci, verdicts


def claim(measure) -> verdicts.Claim:
    return verdicts.Claim("x", "P", "s", "m", "v", "r", "fig", measure)


def test_verdict_and_columns_follow_the_measure(tmp_path):
    csv = tmp_path / "fig.csv"
    pd.DataFrame({"a": [1]}).to_csv(csv, index=False)
    for verdict in verdicts.VERDICTS:
        result = verdicts.Result("1", verdict, interval="[0, 2]", noise="sd 1", at_our_scale="ref", needs="more")
        row = claims.evaluate(claim(lambda f, r=result: r), {"fig": csv}, "")
        assert row["verdict"] == verdict and row["interval"] == "[0, 2]" and row["what_it_would_take"] == "more"
        assert set(row) == set(claims.COLUMNS)
    with pytest.raises(ValueError, match="unknown verdict"):
        claims.evaluate(claim(lambda f: verdicts.Result("1", "maybe")), {"fig": csv}, "")


def test_a_measure_that_cannot_run_is_inconclusive_with_the_reason(tmp_path):
    csv = tmp_path / "fig.csv"
    pd.DataFrame({"a": [1]}).to_csv(csv, index=False)

    def needs_two_points(frame):
        raise ValueError("a line needs at least two distinct x values")

    row = claims.evaluate(claim(needs_two_points), {"fig": csv}, "")
    assert row["verdict"] == verdicts.INCONCLUSIVE and "two distinct" in row["our_value"]


def test_a_figure_the_config_does_not_build_is_not_run():
    row = claims.evaluate(claim(lambda f: verdicts.Result("1", verdicts.HOLDS)), {}, "")
    assert row["verdict"] == verdicts.NOT_RUN


def test_interval_gates_decide_only_when_the_interval_clears_the_threshold():
    assert verdicts.below(1.0, 4.9, 5.0) == verdicts.HOLDS
    assert verdicts.below(5.1, 9.0, 5.0) == verdicts.FAILS
    assert verdicts.below(4.0, 6.0, 5.0) == verdicts.INCONCLUSIVE
    assert verdicts.below(float("nan"), float("nan"), 5.0) == verdicts.INCONCLUSIVE  # one seed: no interval
    assert verdicts.above(0.1, 0.3, 0.0) == verdicts.HOLDS and verdicts.above(-0.3, -0.1, 0.0) == verdicts.FAILS
    assert verdicts.combine(verdicts.HOLDS, verdicts.NOT_RUN) == verdicts.INCONCLUSIVE
    assert verdicts.combine(verdicts.INCONCLUSIVE, verdicts.FAILS) == verdicts.FAILS


def test_entropy_claim_needs_both_attention_kinds():
    frame = pd.DataFrame(
        {"attention": ["shaped"] * 2, "lr": [0.1] * 2, "layer": [0, 0], "step": [0, 10], "entropy": [3.0, 2.9]}
    )
    result = noci.entropy_collapse(frame)
    assert result.verdict == verdicts.NOT_RUN and "both attention kinds" in result.value


def test_every_claim_names_a_built_figure_or_a_reason():
    from depthwidth.plots.registry import FIGURES

    for c in claims.CLAIMS:
        assert (c.figure in FIGURES and c.measure) or c.not_run_reason, c.id


def test_caption_is_valid_rst_that_shows_every_value_as_written():
    docutils_core = pytest.importorskip("docutils.core")
    tricky = r"|z| > 1.96; d_ff and lr_check_ read as written; a*b*c; `x`; C:\path"
    row = {column: "" for column in claims.COLUMNS} | {
        "id": "noci_sde_describes_finite", "figure": "shaped_sde_convergence", "paper": "Noci 2023",
        "statement": "a statement", "paper_value": "p", "our_value": tricky, "rule": tricky, "verdict": verdicts.FAILS,
    }  # fmt: skip
    text = claims.caption("shaped_sde_convergence", pd.DataFrame([row]), scale_note="lr x ((d_ff/d)/4)^0.5")
    # halt_level 2: any warning or error (an undefined |z| substitution, an unknown lr_check_ target) raises
    parts = docutils_core.publish_parts(text, writer="html", settings_overrides={"halt_level": 2})
    body = html.unescape(parts["body"])
    assert body.count(tricky) == 2 and "((d_ff/d)/4)^0.5" in body
    assert "<strong>Verdict: does not hold.</strong>" in body  # the caption's own markup still works


def test_the_report_names_the_verdicts_the_rules_give():
    text = (Path(__file__).parents[1] / "workflow" / "report" / "claims.rst").read_text()
    named = set(re.findall(r"``([^`]+)``", text)) - {"python -m depthwidth check results/"}
    assert named == set(verdicts.VERDICTS), named


def test_a_claim_at_each_count_takes_the_papers_verdict_and_says_where_another_count_disagrees():
    from depthwidth.claims import measured
    from depthwidth.claims.verdicts import FAILS, HOLDS, Claim, Result
    from depthwidth.plots.sweep_common import COUNTS, PAPERS_COUNT

    def rule(frame):  # holds where every gain is positive
        return Result("gains", HOLDS if (frame["gain"] > 0).all() else FAILS)

    claim = Claim("c", "p", "s", "m", "v", "r", "f", rule, per_count=True)
    counts = list(COUNTS)
    frame = pd.DataFrame({"count": counts, "gain": [1.0, 1.0, -1.0]})  # only training FLOPs fails
    result = measured(claim, frame, float("nan"))
    assert result.verdict == HOLDS and counts[0] == PAPERS_COUNT
    assert f"at fixed {counts[1]}: holds (gains), at fixed {counts[2]}: does not hold (gains)" in result.value
    assert "the verdict depends on the count" in result.value
    agreed = measured(claim, frame.assign(gain=1.0), float("nan"))
    assert agreed.verdict == HOLDS and "depends" not in agreed.value


def test_claims_with_no_figures_and_an_empty_captions_dir_writes_every_claim_not_run(tmp_path):
    """Every experiment off: the rule passes `--captions-dir` with no value; claims are written, all `not run`."""
    from depthwidth import cli
    from depthwidth.claims import CLAIMS, verdicts

    out = tmp_path / "claims.csv"
    assert cli.main(["claims", "--scale-note", "none", "--out", str(out), "--captions-dir"]) == 0
    table = pd.read_csv(out)
    assert list(table["id"]) == [c.id for c in CLAIMS] and (table["verdict"] == verdicts.NOT_RUN).all()
    assert not list(tmp_path.glob("*.rst"))
