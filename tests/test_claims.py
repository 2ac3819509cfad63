"""Claims: verdicts follow the rule in the row; missing data is `not run` or `inconclusive`, never `does not hold`;
a figure without what its rule reads is an error, never a verdict."""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from claim_rules import evidence
from depthwidth import claims
from depthwidth.claims import verdicts, wording
from depthwidth.claims.registry import Claim


@dataclass(frozen=True, kw_only=True)
class Fixed(verdicts.Evidence):
    """A hand-made rule's record: its verdict, one part (a spread of 1% in [0, 2]) and what would decide it."""


def fixed_words(e: Fixed, claim: Claim) -> wording.Text:
    (p,) = e.parts
    return wording.Text([f"{p.value:g}"], f"[{p.low:g}, {p.high:g}]", "sd 1", "ref", wording.needs_text(e.needs))


@pytest.fixture(autouse=True)
def words(monkeypatch):
    """The hand-made rules' records are worded like any rule's (wording.RENDER)."""
    monkeypatch.setitem(wording.RENDER, Fixed, fixed_words)


def rule_of(verdict: str):
    """A rule that reads column `a` and gives `verdict`, a part of 1 in [0, 2] against a margin of 2 (%)."""

    @verdicts.reads("a")
    def rule(frame: pd.DataFrame, systematic: verdicts.Systematic) -> Fixed:
        spread = verdicts.part("spread", 1.0, (0.0, 2.0), systematic, margin=2.0, n=1e5)
        return Fixed(verdict=verdict, parts=(spread,), needs=(verdicts.need("shapes"),), seeds=3)

    return rule


def claim(measure, **fields) -> Claim:
    return Claim("x", "P", "s", "m", "v", "r", "fig", measure, **fields)


def test_verdict_and_columns_follow_the_measure(tmp_path):
    """Whatever the rule's verdict, the row gives it, with its words (wording.render) and its deciding part in
    numbers; a verdict that is none of the table's is an error."""
    csv = tmp_path / "fig.csv"
    pd.DataFrame({"a": [1]}).to_csv(csv, index=False)
    for verdict in verdicts.VERDICTS:
        row = claims.row(claim(rule_of(verdict)), {"fig": csv}, "")
        assert row["verdict"] == verdict and row["interval"] == "[0, 2]"
        assert row["what_it_would_take"] == wording.NEEDS["shapes"]({}) == "trained shapes for this figure"
        assert (row["statistic"], row["low"], row["high"], row["margin"], row["seeds"]) == (1.0, 0.0, 2.0, 2.0, 3)
        assert set(row) == set(claims.COLUMNS)
    with pytest.raises(ValueError, match="unknown verdict"):
        claims.row(claim(rule_of("maybe")), {"fig": csv}, "")


def test_a_measure_that_cannot_run_is_inconclusive_with_the_reason(tmp_path):
    """A rule whose figure's rows cannot support it (here: none) returns its case, never a verdict from nothing:
    inconclusive, the reason as the value and what would decide it; a figure CSV with no table at all, or one
    without the column its rule reads, is an error naming the figure."""
    csv = tmp_path / "fig.csv"
    pd.DataFrame({"a": []}).to_csv(csv, index=False)

    @verdicts.reads("a")
    def needs_rows(frame: pd.DataFrame, systematic: verdicts.Systematic) -> verdicts.Evidence:
        if frame.empty:
            return verdicts.unmeasurable("no_rows", verdicts.need("simulations"))
        return rule_of(verdicts.HOLDS)(frame, systematic)

    row = claims.row(claim(needs_rows), {"fig": csv}, "")
    assert row["verdict"] == verdicts.INCONCLUSIVE and row["our_value"] == wording.UNMEASURABLE["no_rows"]
    assert row["what_it_would_take"] == "the simulations of this figure" and row["part"] == ""
    csv.write_text("")
    with pytest.raises(verdicts.FigureDataError, match=r"figure fig: .*fig.csv is empty: no columns, no rows"):
        claims.row(claim(needs_rows), {"fig": csv}, "")
    pd.DataFrame({"b": [1]}).to_csv(csv, index=False)
    with pytest.raises(verdicts.FigureDataError, match="figure fig: column 'a' missing"):
        claims.row(claim(needs_rows), {"fig": csv}, "")


def test_a_figure_the_config_does_not_build_is_not_run():
    row = claims.row(claim(rule_of(verdicts.HOLDS)), {}, "")
    assert row["verdict"] == verdicts.NOT_RUN and row["our_value"] == "this config does not build its figure"
    assert row["part"] == row["statistic"] == row["seeds"] == ""  # nothing was read


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
    ).assign(run_id="shaped0", status="ok", final_val_loss=4.0)
    e = evidence("noci_entropy_collapse", frame)
    assert e.verdict == verdicts.NOT_RUN and e.kinds == ("shaped",) and math.isnan(e.lr) and e.parts == ()


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
    """Judged at each count, the verdict is the papers' count's; the row restates the others' verdicts and, where
    one disagrees, says the verdict depends on the count (a golden wording test)."""
    from depthwidth.claims.verdicts import FAILS, HOLDS
    from depthwidth.plots.sweep_common import COUNTS, PAPERS_COUNT

    @verdicts.reads("gain")
    def rule(frame, systematic):  # holds where every gain is positive
        gains = verdicts.part("spread", 1.0, (0.0, 2.0), systematic, n=1e5)
        return Fixed(verdict=HOLDS if (frame["gain"] > 0).all() else FAILS, parts=(gains,))

    per_count = claim(rule, per_count=True)
    counts = list(COUNTS)
    frame = pd.DataFrame({"count": counts, "gain": [1.0, 1.0, -1.0]})  # only training FLOPs fails
    judged = claims.judged(per_count, frame, math.nan)
    assert counts[0] == PAPERS_COUNT and judged.main.verdict == HOLDS
    assert {count: j.verdict for count, j in judged.others.items()} == {counts[1]: HOLDS, counts[2]: FAILS}
    value = claims.text_columns(judged)["our_value"]
    assert value == (
        f"1; at fixed {counts[1]}: holds (1), at fixed {counts[2]}: does not hold (1) -- the verdict depends on the "
        f"count (at fixed {PAPERS_COUNT}, the papers': holds)"
    )
    agreed = claims.judged(per_count, frame.assign(gain=1.0), math.nan)
    assert agreed.main.verdict == HOLDS and all(j.verdict == HOLDS for j in agreed.others.values())
    assert "depends" not in claims.text_columns(agreed)["our_value"]


def test_claims_with_no_figures_and_an_empty_captions_dir_writes_every_claim_not_run(tmp_path):
    """Every experiment off: the rule passes `--captions-dir` with no value; claims are written, all `not run`."""
    from depthwidth import cli
    from depthwidth.claims import CLAIMS, verdicts

    out = tmp_path / "claims.csv"
    assert cli.main(["claims", "--scale-note", "none", "--out", str(out), "--captions-dir"]) == 0
    table = pd.read_csv(out)
    assert list(table["id"]) == [c.id for c in CLAIMS] and (table["verdict"] == verdicts.NOT_RUN).all()
    assert not list(tmp_path.glob("*.rst"))
