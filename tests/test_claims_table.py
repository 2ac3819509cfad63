"""The claims table itself (`depthwidth.claims`): the learning-rate systematic and the verdicts it flips, the
per-count restatement, one row per claim with its deciding statistic in numbers, the figure defects that raise,
claims.csv / claims.md / the report captions and the command that writes them, each checked against hand-built
claims and figure CSVs and an independent computation."""

from __future__ import annotations

import argparse
import ast
import html
import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from depthwidth import claims, stalls
from depthwidth.claims import decide, registry, second, verdicts, wording
from depthwidth.claims.registry import Claim
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, NOT_RUN, below
from depthwidth.cli import main as cli_main
from depthwidth.plan.second import Design, default_design
from depthwidth.plots import lr_check as lr_check_figure
from depthwidth.plots.registry import FIGURES
from depthwidth.plots.sweep_common import COUNTS, PAPERS_COUNT

TOTAL, FLOPS = (count for count in COUNTS if count != PAPERS_COUNT)  # the counts the papers did not hold fixed
LIMIT = 1.0  # the hand-made rule: the spread of the loss (%) is at most LIMIT
SEEDS = (
    "more seeds per shape may resolve the spread's distance to 1% (+0.50); how many is not computed here: `decide` "
    "finds it by the row's own procedure redrawn at more seeds (config decide.sims is 0)"
)
NOT_MEASURED = wording.NOTHING_WIDENED
BLANK = ("paper_at_our_scale", "interval", "noise", "what_it_would_take")


def measured_note(systematic: float) -> str:
    return (
        f"learning-rate systematic +-{systematic:.2f}% (lr_check: the largest excess over a shape's best rate; "
        "sweep.lr_grid measures each shape's own)"
    )


def flip_sentence(was: str, turns: str, systematic: float) -> str:
    return (
        f"the verdict would be {was} but turns {turns} within the learning-rate systematic (each shape's loss may "
        f"lie above its loss at its best rate, by up to {2 * systematic:.2f}% on a statistic here): every shape of "
        "the row trained at its own best rate"
    )


@dataclass(frozen=True, kw_only=True)
class Spread(verdicts.Evidence):
    """The hand-made rule's record: the spread it read (nan: no rows)."""

    spread: float


@verdicts.reads("spread", "half")
def spread_rule(frame: pd.DataFrame, systematic: verdicts.Systematic, *, limit: float = LIMIT) -> Spread:
    """Holds where the spread's interval (+-half, widened by the systematic in force) lies at or below `limit`."""
    if frame.empty:
        return Spread(verdict=INCONCLUSIVE, needs=(verdicts.need("shapes"),), spread=math.nan)
    spread, half = float(frame["spread"].iloc[0]), float(frame["half"].iloc[0])
    part = verdicts.part("spread", spread, (spread - half, spread + half), systematic, margin=limit, test=below, n=1e5)
    seeds = verdicts.need("seeds", effect=0.5, what="spread_distance", one_seed=False, limit=limit)
    needs = () if part.verdict == HOLDS else (seeds,)
    return Spread(verdict=part.verdict, parts=(part,), needs=needs, seeds=3, spread=spread)


def render_spread(e: Spread, claim: Claim) -> wording.Text:
    if not e.parts:
        return wording.Text(["no rows"], needs=wording.needs_text(e.needs))
    (part,) = e.parts
    return wording.Text(
        [f"spread {e.spread:.2f}%"],
        interval=f"[{part.low:.2f}, {part.high:.2f}]",
        noise="seed sd 0.10%",
        needs=wording.needs_text(e.needs),
    )


@pytest.fixture(autouse=True)
def spread_words(monkeypatch):
    """The hand-made rule's record is worded like any rule's (wording.RENDER)."""
    monkeypatch.setitem(wording.RENDER, Spread, render_spread)


def expected_verdict(spread: float, half: float, systematic: float = 0.0) -> str:
    """The rule's verdict, computed here: the interval spread +- (half + systematic) against LIMIT."""
    low, high = spread - half - systematic, spread + half + systematic
    return HOLDS if high <= LIMIT else FAILS if low > LIMIT else INCONCLUSIVE


def claim(measure=spread_rule, *, id="c", figure="fig", **options) -> Claim:
    return Claim(id, "Paper 2020", f"statement of {id}", "metric", "paper value", "rule", figure, measure, **options)


def spreads(**by_count: tuple[float, float]) -> pd.DataFrame:
    """A per-count figure: one row per count (spread, half)."""
    return pd.DataFrame(
        [{"count": count, "spread": s, "half": h} for count, (s, h) in by_count.items()],
        columns=["count", "spread", "half"],
    )


def one_count(spread: float, half: float) -> pd.DataFrame:
    return pd.DataFrame({"spread": [spread], "half": [half]})


def write_csv(path, frame: pd.DataFrame):
    frame.to_csv(path, index=False)
    return path


def lr_check_frame(shapes) -> pd.DataFrame:
    """lr_check.csv rows: each shape (n_layer, d_model, d_ff, best factor, at edge, within 2x, excess %) at three
    factors, its best factor and excess repeated on each row as the figure writes them."""
    rows = [
        dict(zip(lr_check_figure.SHAPE, shape[:3]), lr_factor=factor, lr_peak=1e-3 * factor, loss_mean=4.0,
             seeds=2, gap_pct=0.1, best_factor=shape[3], best_at_edge=shape[4], recipe_within_2x=shape[5],
             excess_pct=shape[6])
        for shape in shapes
        for factor in (0.5, 1.0, 2.0)
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=lr_check_figure.COLUMNS)


LR_SHAPES = [(2, 128, 512, 1.3, False, "yes", 0.21), (8, 64, 256, 2.0, True, "unknown", 0.5)]
LR_SHAPES_NO = [(4, 96, 384, 3.1, False, "no", 0.37)]


def table_row(**values) -> dict:
    return {column: "" for column in claims.COLUMNS} | values


def words(c: Claim, frame: pd.DataFrame, systematic: float = math.nan) -> dict[str, str]:
    return claims.text_columns(claims.judged(c, frame, systematic))


# ---------------------------------------------------------------- the learning-rate systematic


def test_the_systematic_is_the_largest_excess_over_the_shapes():
    frame = lr_check_frame([*LR_SHAPES, *LR_SHAPES_NO])
    assert claims.lr_systematic_pct(frame) == 0.5  # max of 0.21, 0.5, 0.37
    assert claims.lr_systematic_pct(lr_check_frame(LR_SHAPES_NO)) == 0.37  # one shape: its excess
    assert claims.lr_systematic_pct(lr_check_frame([(2, 128, 512, 1.0, False, "yes", 1e-9)])) == 1e-9


def test_the_systematic_is_never_negative_and_skips_shapes_without_an_excess():
    assert claims.lr_systematic_pct(lr_check_frame([(2, 128, 512, 1.0, False, "yes", -0.2)])) == 0.0
    assert claims.lr_systematic_pct(lr_check_frame([(2, 128, 512, 1, True, "unknown", np.nan), *LR_SHAPES_NO])) == 0.37


def test_the_systematic_is_nan_with_no_shape_checked():
    assert math.isnan(claims.lr_systematic_pct(lr_check_frame([])))  # the figure's empty table
    assert math.isnan(claims.lr_systematic_pct(pd.DataFrame()))  # no columns at all
    assert math.isnan(claims.lr_systematic_pct(lr_check_frame([(2, 128, 512, 1, True, "unknown", np.nan)])))


def test_a_claim_not_read_from_losses_ignores_the_systematic():
    frame = one_count(0.5, 0.2)  # flips within a 0.5% systematic if the claim read losses
    for systematic in (0.5, math.nan):
        judgement = claims.judge(claim(), frame, systematic)
        assert judgement.shifted is None and judgement.verdict == HOLDS and not judgement.flipped
        assert words(claim(), frame, systematic)["noise"] == "seed sd 0.10%"


def test_the_rule_is_called_once_without_and_once_within_the_systematic():
    seen = []

    @verdicts.reads("spread", "half")
    def rule(frame, systematic, **params):
        seen.append((len(frame), systematic))
        return spread_rule(frame, systematic, **params)

    frame = pd.concat([one_count(0.1, 0.2)] * 3, ignore_index=True)
    judgement = claims.judge(claim(rule, lr_systematic=True), frame, 0.75)
    assert seen == [(3, verdicts.WITHOUT), (3, verdicts.within_systematic(0.75))]
    assert judgement.plain.parts[0].wide == pytest.approx((-0.1, 0.3))  # without: the rule's own interval
    assert judgement.shifted.parts[0].wide == pytest.approx((-0.85, 1.05))  # within: widened both ways by 0.75


def test_without_an_lr_check_the_noise_says_the_systematic_was_not_measured():
    lr = claim(lr_systematic=True)
    judgement = claims.judge(lr, one_count(0.1, 0.2), math.nan)
    assert judgement.shifted.carried == () and judgement.verdict == HOLDS  # nothing to widen: the verdict stays
    assert words(lr, one_count(0.1, 0.2))["noise"] == f"seed sd 0.10%; {NOT_MEASURED}"
    failing = words(lr, one_count(1.5, 0.2))
    assert failing["verdict"] == FAILS and failing["what_it_would_take"] == SEEDS


@pytest.mark.parametrize(
    ("spread", "half", "systematic"),
    [
        (0.1, 0.2, 0.5),  # holds, and still holds within the systematic
        (0.5, 0.2, 0.5),  # holds, inconclusive within it
        (1.5, 0.2, 0.5),  # does not hold, inconclusive within it
        (1.0, 0.5, 0.25),  # inconclusive either way
        (1.5, 0.2, 0.25),  # does not hold either way
    ],
)
def test_a_verdict_that_changes_within_the_systematic_turns_inconclusive(spread, half, systematic):
    lr = claim(lr_systematic=True)
    frame = one_count(spread, half)
    was, turns = expected_verdict(spread, half), expected_verdict(spread, half, systematic)
    judgement = claims.judge(lr, frame, systematic)
    assert judgement.plain.verdict == was and judgement.shifted.verdict == turns
    assert judgement.verdict == (was if turns == was else INCONCLUSIVE) and judgement.flipped == (turns != was)
    (carried,) = judgement.shifted.carried
    assert (carried.down, carried.up, carried.own) == (systematic, systematic, False)
    row = words(lr, frame, systematic)
    assert (
        row["our_value"] == f"spread {spread:.2f}%" and row["interval"] == f"[{spread - half:.2f}, {spread + half:.2f}]"
    )
    assert row["noise"] == f"seed sd 0.10%; {measured_note(systematic)}"
    plain_needs = "" if was == HOLDS else SEEDS
    flip = [flip_sentence(was, turns, systematic)] if turns != was else []
    assert row["what_it_would_take"] == "; ".join(filter(None, [*flip, plain_needs]))


def test_the_deciding_part_is_the_first_whose_verdict_is_the_rows():
    frame = one_count(0.5, 0.2)
    judgement = claims.judge(claim(lr_systematic=True), frame, 0.5)
    assert judgement.verdict == INCONCLUSIVE and judgement.deciding is judgement.shifted.parts[0]
    plain = claims.judge(claim(), frame)
    assert plain.verdict == HOLDS and plain.deciding is plain.plain.parts[0]
    assert claims.judge(claim(), frame.iloc[:0]).deciding is None  # no rows: nothing read


# ---------------------------------------------------------------- claims computed at each count


def per_count_claim(**options) -> Claim:
    return claim(per_count=True, **options)


def test_a_claim_at_one_count_reads_all_rows_within_the_systematic():
    row = words(claim(lr_systematic=True), one_count(0.5, 0.2), 0.5)
    assert row["verdict"] == INCONCLUSIVE and row["our_value"] == "spread 0.50%"
    assert row["what_it_would_take"] == flip_sentence(HOLDS, INCONCLUSIVE, 0.5)


def test_at_the_papers_count_only_the_value_is_the_rules():
    judged = claims.judged(per_count_claim(), spreads(**{PAPERS_COUNT: (0.1, 0.2)}))
    assert judged.others == {} and judged.main.verdict == HOLDS and judged.main.plain.spread == 0.1
    assert words(per_count_claim(), spreads(**{PAPERS_COUNT: (0.1, 0.2)}))["our_value"] == "spread 0.10%"


def test_counts_that_agree_are_restated_without_a_warning():
    frame = spreads(**{PAPERS_COUNT: (0.1, 0.2), TOTAL: (0.3, 0.2), FLOPS: (0.2, 0.1)})
    judged = claims.judged(per_count_claim(), frame)
    assert judged.main.verdict == HOLDS and {c: j.verdict for c, j in judged.others.items()} == {
        TOTAL: HOLDS,
        FLOPS: HOLDS,
    }
    assert {c: j.plain.spread for c, j in judged.others.items()} == {TOTAL: 0.3, FLOPS: 0.2}
    row = words(per_count_claim(), frame)
    assert (
        row["our_value"]
        == f"spread 0.10%; at fixed {TOTAL}: holds (spread 0.30%), at fixed {FLOPS}: holds (spread 0.20%)"
    )


def test_another_count_is_restated_by_its_headline_only(monkeypatch):
    def detailed(e, c):
        return wording.Text([f"spread {e.spread:.2f}%", "N=1e5: detail"])

    monkeypatch.setitem(wording.RENDER, Spread, detailed)
    frame = spreads(**{PAPERS_COUNT: (0.1, 0.2), TOTAL: (0.3, 0.2)})
    assert (
        words(per_count_claim(), frame)["our_value"]
        == f"spread 0.10%; N=1e5: detail; at fixed {TOTAL}: holds (spread 0.30%)"
    )


def test_a_count_that_disagrees_is_named_and_the_papers_count_decides():
    frame = spreads(**{PAPERS_COUNT: (1.5, 0.2), TOTAL: (0.3, 0.2), FLOPS: (1.5, 0.2)})
    judged = claims.judged(per_count_claim(), frame)
    assert judged.main.verdict == FAILS and judged.others[TOTAL].verdict == HOLDS
    row = words(per_count_claim(), frame)
    assert row["verdict"] == FAILS and row["what_it_would_take"] == SEEDS
    assert row["our_value"] == (
        f"spread 1.50%; at fixed {TOTAL}: holds (spread 0.30%), at fixed {FLOPS}: does not hold (spread 1.50%) -- the "
        f"verdict depends on the count (at fixed {PAPERS_COUNT}, the papers': does not hold)"
    )


def test_each_count_is_judged_within_the_systematic():
    frame = spreads(**{PAPERS_COUNT: (0.1, 0.2), TOTAL: (0.5, 0.2), FLOPS: (0.1, 0.1)})
    judged = claims.judged(per_count_claim(lr_systematic=True), frame, 0.5)
    turns = expected_verdict(0.5, 0.2, 0.5)  # the total-parameter count: holds, inconclusive within 0.5%
    assert turns == INCONCLUSIVE != expected_verdict(0.5, 0.2)
    assert judged.main.verdict == HOLDS and judged.others[TOTAL].verdict == turns and judged.others[TOTAL].flipped
    row = words(per_count_claim(lr_systematic=True), frame, 0.5)
    assert row["noise"] == f"seed sd 0.10%; {measured_note(0.5)}"
    assert row["our_value"] == (
        f"spread 0.10%; at fixed {TOTAL}: {turns} (spread 0.50%), at fixed {FLOPS}: holds (spread 0.10%) -- the "
        f"verdict depends on the count (at fixed {PAPERS_COUNT}, the papers': holds)"
    )


def test_without_the_papers_count_the_rule_reads_no_rows():
    frame = spreads(**{TOTAL: (0.1, 0.2)})
    judged = claims.judged(per_count_claim(lr_systematic=True), frame, 0.5)
    assert judged.main.verdict == INCONCLUSIVE and judged.main.plain.parts == ()
    row = words(per_count_claim(lr_systematic=True), frame, 0.5)
    assert row["what_it_would_take"] == "trained shapes for this figure"
    assert row["our_value"] == (
        f"no rows; at fixed {TOTAL}: holds (spread 0.10%) -- the verdict depends on the count "
        f"(at fixed {PAPERS_COUNT}, the papers': inconclusive)"
    )


def test_a_per_count_figure_without_a_count_column_is_a_defect():
    with pytest.raises(verdicts.FigureDataError, match="figure fig: column 'count' missing"):
        claims.judged(per_count_claim(), one_count(0.1, 0.2))


# ---------------------------------------------------------------- one row


def test_a_claim_whose_figure_is_not_built_is_not_run_with_blank_columns(tmp_path):
    csv = write_csv(tmp_path / "fig.csv", one_count(0.1, 0.2))
    rows = {
        "no figure built": claims.row(claim(), {}, "note"),
        "no figure at all": claims.row(claim(figure=None, not_run_reason="needs a GPU cluster"), {}, "note"),
        "no rule": claims.row(claim(None, not_run_reason="the paper gives no number"), {"fig": csv}, "note"),
    }
    for row in rows.values():
        assert list(row) == list(dict.fromkeys(row)) and set(row) == set(claims.COLUMNS)
        assert row["verdict"] == NOT_RUN and all(row[column] == "" for column in BLANK)
        assert all(row[column] == "" for column in claims.NUMBER_COLUMNS)
        assert (row["id"], row["paper"], row["scale_note"]) == ("c", "Paper 2020", "note")
    assert rows["no figure built"]["our_value"] == "this config does not build its figure"
    assert rows["no figure built"]["figure"] == "fig"
    assert rows["no figure at all"]["our_value"] == "needs a GPU cluster" and rows["no figure at all"]["figure"] == ""
    assert rows["no rule"]["our_value"] == "the paper gives no number"


@pytest.mark.parametrize(
    ("frame", "column", "problem"),
    [
        (pd.DataFrame({"sprad": [0.1], "half": [0.2]}), "spread", "missing"),  # a misspelt column
        (pd.DataFrame({"spread": ["0.1%"], "half": [0.2]}), "spread", "holds something else than numbers"),
        (pd.DataFrame({"spread": [0.1]}), "half", "missing"),
    ],
)
def test_a_figure_that_lacks_what_the_rule_reads_raises_naming_the_figure_and_column(tmp_path, frame, column, problem):
    csv = write_csv(tmp_path / "fig.csv", frame)
    with pytest.raises(verdicts.FigureDataError) as raised:
        claims.row(claim(), {"fig": csv}, "note")
    assert (raised.value.figure, raised.value.column) == ("fig", column)
    assert str(raised.value) == f"figure fig: column {column!r} {problem} (the rule of its claim reads it)"


def test_a_row_of_sweep_tables_keeps_the_verdict_of_every_run_and_gives_the_one_without_its_stalls(tmp_path):
    """The figure's rows with every run decide (fixed in advance); its rows without the flagged runs
    (`<figure>.unstalled.csv`) are judged by the same rule into verdict_unstalled, the count into stalled_runs, and the
    noise column says both; no stalled run: the same verdict without reading the second file; a figure of no sweep
    table (no stalled_runs column): one reading, both columns blank."""
    csv = write_csv(tmp_path / "fig.csv", one_count(1.5, 0.2).assign(stalled_runs=2))  # a stall lifts the spread
    write_csv(tmp_path / "fig.unstalled.csv", one_count(0.5, 0.2).assign(stalled_runs=2))
    row = claims.row(claim(), {"fig": csv}, "note")
    assert (row["verdict"], row["verdict_unstalled"], row["stalled_runs"]) == (FAILS, HOLDS, 2)
    assert row["our_value"] == "spread 1.50%"  # the numbers are every run's
    flag = f"stall flag (> {100 * stalls.STALL_EXCESS:g}% above the median of the shape's other seeds)"
    said = f"{flag}: 2 runs stalled; read without them: holds, where every run gives {FAILS} (spread 0.50%)"
    assert row["noise"] == f"seed sd 0.10%; {said}"
    none = write_csv(tmp_path / "none.csv", one_count(0.5, 0.2).assign(stalled_runs=0))  # no .unstalled.csv beside
    row = claims.row(claim(figure="none"), {"none": none}, "note")
    assert (row["verdict"], row["verdict_unstalled"], row["stalled_runs"]) == (HOLDS, HOLDS, 0)
    assert row["noise"] == f"seed sd 0.10%; {flag}: no run stalled"
    plain = claims.row(claim(), {"fig": write_csv(tmp_path / "plain.csv", one_count(0.5, 0.2))}, "note")
    assert (plain["verdict"], plain["verdict_unstalled"], plain["stalled_runs"]) == (HOLDS, "", "")


def test_an_empty_figure_file_raises_naming_it(tmp_path):
    csv = tmp_path / "fig.csv"
    csv.write_text("")
    with pytest.raises(verdicts.FigureDataError, match=f"figure fig: .*{csv} is empty"):
        claims.row(claim(), {"fig": csv}, "note")


def test_a_measured_row_carries_the_rules_columns_the_systematic_and_the_numbers(tmp_path):
    csv = write_csv(tmp_path / "fig.csv", one_count(0.5, 0.2))
    row = claims.row(claim(lr_systematic=True), {"fig": csv}, "note", 0.5)
    assert row == table_row(
        id="c", paper="Paper 2020", statement="statement of c", metric="metric", paper_value="paper value",
        rule="rule", scale_note="note", figure="fig", our_value="spread 0.50%", verdict=INCONCLUSIVE,
        interval="[0.30, 0.70]", noise=f"seed sd 0.10%; {measured_note(0.5)}",
        what_it_would_take=flip_sentence(HOLDS, INCONCLUSIVE, 0.5), part="the spread at N=1e+05",
        statistic=0.5, low=pytest.approx(0.3), high=pytest.approx(0.7), margin=LIMIT, sys_down=0.5, sys_up=0.5,
        unit="%", seeds=3, look=1, looks=1, level=0.95, design=default_design().digest,
    )  # fmt: skip
    unmeasured = claims.row(claim(lr_systematic=True), {"fig": csv}, "note")
    assert unmeasured["verdict"] == HOLDS and unmeasured["noise"] == f"seed sd 0.10%; {NOT_MEASURED}"
    assert math.isnan(unmeasured["sys_down"]) and math.isnan(unmeasured["sys_up"])  # nothing widened it


def test_a_claims_rule_text_is_filled_from_the_params_its_rule_reads():
    templated = claim(params={"limit": 2.5})
    templated = Claim(**{**templated.__dict__, "rule": "holds if at most {limit:g}% {ours}"})
    assert (
        wording.fill(templated.rule, templated)
        == "holds if at most 2.5% (threshold chosen by this project, not the paper)"
    )
    for c in registry.CLAIMS:  # every template fills, from its own params and the shared names alone
        for template in (c.statement, c.metric, c.paper_value, c.rule):
            assert "{" not in wording.fill(template, c)


# ---------------------------------------------------------------- the scale note


def sweep_tables(tmp_path):
    first = write_csv(
        tmp_path / "design.csv", pd.DataFrame({"tokens_per_parameter": [1.25, 40.0], "epochs": [0.25, 0.5]})
    )
    second = write_csv(tmp_path / "baseline.csv", pd.DataFrame({"tokens_per_parameter": [3.0], "epochs": [2.0]}))
    return [first, second]


RANGE = "1.25 to 40 tokens per non-embedding parameter, 0.25 to 2 epochs"


def test_the_training_range_spans_every_sweep_table(tmp_path):
    tables = sweep_tables(tmp_path)
    assert claims.training_range(tables) == RANGE
    assert claims.training_range(tables[1:]) == "3 to 3 tokens per non-embedding parameter, 2 to 2 epochs"
    assert claims.full_scale_note("config ci", tables) == f"config ci; {RANGE}"


def test_without_runs_or_epochs_there_is_no_training_range(tmp_path):
    header_only = write_csv(tmp_path / "empty.csv", pd.DataFrame(columns=["tokens_per_parameter", "epochs"]))
    no_epochs = write_csv(tmp_path / "old.csv", pd.DataFrame({"tokens_per_parameter": [2.0]}))
    for tables in ([], [header_only], [no_epochs]):
        assert claims.training_range(tables) == ""
        assert claims.full_scale_note("config ci", tables) == "config ci"


# ---------------------------------------------------------------- the table


@pytest.fixture
def few_claims(monkeypatch):
    """Three claims in place of the papers': one read from losses at each count, one whose figure this config
    does not build, one that cannot be run here."""
    chosen = [
        claim(id="a", figure="kaplan_fig6", lr_systematic=True, per_count=True),
        claim(id="b", figure="levine_regimes"),
        claim(None, id="n", figure=None, not_run_reason="needs a GPU cluster"),
    ]
    monkeypatch.setattr(claims, "CLAIMS", chosen)
    return chosen


def figure_csvs(tmp_path, lr_check: bool = True):
    fig6 = write_csv(tmp_path / "kaplan_fig6.csv", spreads(**{PAPERS_COUNT: (0.5, 0.2), TOTAL: (0.1, 0.2)}))
    if not lr_check:
        return [fig6]
    return [fig6, write_csv(tmp_path / "lr_check.csv", lr_check_frame([*LR_SHAPES, *LR_SHAPES_NO]))]


def test_the_table_has_one_row_per_claim_in_its_columns(tmp_path, few_claims):
    frame = claims.table([str(path) for path in figure_csvs(tmp_path)], "config ci")
    assert list(frame.columns) == claims.COLUMNS
    assert list(frame["id"]) == ["a", "b", "n"] and set(frame["scale_note"]) == {"config ci"}
    assert list(frame["verdict"]) == [INCONCLUSIVE, NOT_RUN, NOT_RUN]
    assert list(frame["figure"]) == ["kaplan_fig6", "levine_regimes", ""]


def test_the_table_reads_the_systematic_from_the_lr_check(tmp_path, few_claims):
    systematic = max(shape[-1] for shape in [*LR_SHAPES, *LR_SHAPES_NO])
    row = claims.table(figure_csvs(tmp_path), "config ci").iloc[0]
    assert row["verdict"] == INCONCLUSIVE == expected_verdict(0.5, 0.2, systematic) != expected_verdict(0.5, 0.2)
    assert row["noise"] == f"seed sd 0.10%; {measured_note(systematic)}"
    assert row["what_it_would_take"] == flip_sentence(HOLDS, INCONCLUSIVE, systematic)
    assert row["our_value"] == (
        f"spread 0.50%; at fixed {TOTAL}: holds (spread 0.10%) -- the verdict depends on the count (at fixed "
        f"{PAPERS_COUNT}, the papers': inconclusive)"
    )


def test_without_an_lr_check_the_table_says_the_systematic_is_not_measured(tmp_path, few_claims):
    row = claims.table(figure_csvs(tmp_path, lr_check=False), "config ci").iloc[0]
    assert row["verdict"] == HOLDS and row["noise"] == f"seed sd 0.10%; {NOT_MEASURED}"


# ---------------------------------------------------------------- the summary and claims.md


def test_a_short_text_is_kept_whole():
    assert wording.shorten("alpha = 0.071; curvature +0.01; rms 0.2%") == "alpha = 0.071; curvature +0.01; rms 0.2%"
    assert wording.shorten("a value with no parts") == "a value with no parts"
    assert wording.shorten(0.25) == "0.25"


def test_text_of_exactly_the_width_is_kept_and_one_more_character_is_cut_at_a_word():
    width = wording.SUMMARY_WIDTH
    exact = "one two three " + "y" * (width - 14)
    assert len(exact) == width and wording.shorten(exact) == exact
    assert wording.shorten(exact + "z") == "one two three..."


def test_a_cut_keeps_every_whole_word_that_fits_and_no_more():
    text = "a" * 63 + " bcde fghij klmno"  # 'bcde' ends at 68: with '...' 71 characters; 'fghij' would make 77
    assert wording.shorten(text) == "a" * 63 + " bcde..."
    for limit in range(20, 90):
        cut = wording.shorten(text + " pqrst uvw", limit)
        assert len(cut) <= limit or cut == text + " pqrst uvw"


def test_a_cut_drops_the_punctuation_before_the_ellipsis_and_only_that():
    assert wording.shorten("w" * 60 + ", (" + "q" * 20) == "w" * 60 + "..."
    assert wording.shorten("w" * 60 + ": " + "q" * 20) == "w" * 60 + "..."
    assert wording.shorten("w" * 60 + " MAX, " + "q" * 20) == "w" * 60 + " MAX..."  # a letter stays


def test_a_cut_keeps_a_word_that_fills_the_width_exactly():
    text = "the loss increase over the L(N) fit stays within a few percent across a wide range of aspect ratios"
    assert len("the loss increase over the L(N) fit stays within a few percent across...") == wording.SUMMARY_WIDTH
    assert wording.shorten(text) == "the loss increase over the L(N) fit stays within a few percent across..."


def test_a_cut_through_one_long_word_fills_the_width_exactly():
    word = "x" * (2 * wording.SUMMARY_WIDTH)  # no space to cut at: the word itself is cut
    assert wording.shorten(word) == "x" * (wording.SUMMARY_WIDTH - 3) + "..."
    assert len(wording.shorten(word, limit=10)) == 10


def test_a_cell_escapes_every_bar():
    assert wording._cell("|z| > 1.96 | x") == "\\|z\\| > 1.96 \\| x"
    assert wording._cell("no bars") == "no bars"


def summary_frame() -> pd.DataFrame:
    long = "the loss increase over the L(N) fit stays within a few percent for most aspect ratios"
    numbers = dict(part="the spread at N=2.5e+04", statistic=0.0713, low=0.0, high=0.2, margin=5.0, unit="%", seeds=3)
    return pd.DataFrame(
        [
            table_row(id="a", statement="short", verdict=HOLDS, our_value="alpha = 0.071; rms 0.2%", scale_note="ci",
                      **numbers, sys_down=0.01, sys_up=0.02),
            table_row(id="b", statement=long, verdict=INCONCLUSIVE, our_value="|z| = 1.2", scale_note="ci",
                      part="shaped - SDE", statistic=-0.05, low=np.nan, high=np.nan, margin=np.nan, unit=""),
            table_row(id="c", statement="s", verdict=HOLDS, our_value=np.nan, scale_note=np.nan),
            table_row(id="d", statement="t", verdict=NOT_RUN, our_value="not built", scale_note="local"),
        ]
    )  # fmt: skip


SUMMARY = """Run at: ci; local.

Verdicts of 4 claims: 2 holds, 1 inconclusive, 1 not run.

| claim | statement | verdict | deciding statistic |
|---|---|---|---|
| `a` | short | **holds** | the spread at N=2.5e+04: 0.0713% [0, 0.2] vs 5% (systematic -0.01/+0.02); 3 seeds |
| `b` | the loss increase over the L(N) fit stays within a few percent for... | **inconclusive** | shaped - SDE: -0.05 |
| `c` | s | **holds** |  |
| `d` | t | **not run** | not built |
"""


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row, escaped bars read back as bars."""
    assert line.startswith("| ") and line.endswith(" |"), line
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line[1:-1])]


def test_the_summary_is_the_scale_the_tally_and_one_line_per_claim():
    frame = summary_frame()
    text = claims.summary(frame)
    assert text == SUMMARY
    lines = text.splitlines()
    rows = [cells(line) for line in lines[lines.index("|---|---|---|---|") + 1 :]]
    assert [row[0] for row in rows] == [f"`{i}`" for i in frame["id"]]
    assert [row[2] for row in rows] == [f"**{v}**" for v in frame["verdict"]]
    assert all(len(row[1]) <= wording.SUMMARY_WIDTH for row in rows)
    tally = frame["verdict"].value_counts()
    assert f"{tally[HOLDS]} holds, {tally[INCONCLUSIVE]} inconclusive, {tally[NOT_RUN]} not run" in text


def test_the_summary_reads_the_numbers_back_from_claims_csv_as_written(tmp_path):
    """findings.md makes the summary from claims.csv read back as text (every cell a string, '' for none)."""
    csv = write_csv(tmp_path / "claims.csv", summary_frame()[claims.COLUMNS])
    as_text = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert claims.summary(as_text) == SUMMARY == claims.summary(pd.read_csv(csv))


def test_a_summary_without_a_scale_note_opens_with_the_tally():
    frame = summary_frame().assign(scale_note="")
    assert claims.summary(frame) == SUMMARY.split("\n", 2)[2]


FULL_HEAD = (
    "| claim | paper (their scale) | paper at our scale | metric | our value | interval | noise | rule | verdict "
    "| what it survives | what would decide it | figure |"
)


def test_claims_md_is_the_summary_then_every_column_of_every_claim():
    frame = summary_frame()
    frame.loc[0, ["paper", "paper_value", "interval", "noise", "rule"]] = "K 2020", "~2%", "[0.1, 0.3]", np.nan, "a|b"
    text = claims.markdown(frame)
    assert text.startswith("# Claims\n\n" + claims.summary(frame) + "\n## Every claim in full\n\n" + FULL_HEAD + "\n")
    lines = text.splitlines()
    full = lines[lines.index(FULL_HEAD) :]
    assert full[1] == "|---" * 12 + "|" and len(full) == 2 + len(frame) and text.endswith(" |\n")
    rows = [cells(full[0]), *map(cells, full[2:])]
    assert all(len(row) == 12 for row in rows)
    assert rows[1] == [
        "`a`: short", "K 2020: ~2%", "", "", "alpha = 0.071; rms 0.2%", "[0.1, 0.3]", "", "a|b", "**holds**", "", "",
        "",
    ]  # fmt: skip
    assert [row[4] for row in rows[2:]] == ["|z| = 1.2", "", "not built"]  # every value in full, nan as blank
    assert [row[8] for row in rows[1:]] == [f"**{v}**" for v in frame["verdict"]]


def test_claims_md_shows_every_column_of_every_claim():
    numbers = dict(statistic=1.25, low=0.75, high=1.75, margin=2.5, sys_down=0.125, sys_up=0.375, unit="%", seeds=7)
    decided = dict(decide_seeds=9, decide_runs=66, decide_job_minutes=12.5, decide_undecidable=0)
    row = {column: f"<{column}>" for column in claims.COLUMNS} | {"verdict": HOLDS} | numbers | {"stalled_runs": 3}
    row |= decided | {"look": 2, "looks": 2, "level": 0.96}
    text = claims.markdown(pd.DataFrame([row]))
    assert "; 9 seeds per shape decide it (+66 runs, ~12.5 job-minutes)" in text
    assert "; no seed count decides it" in claims.markdown(pd.DataFrame([row | {"decide_undecidable": 1}]))
    # the look that reached the verdict, in the verdict's cell; the design in the summary's head
    assert f"**{HOLDS}** (3 stalled; without them: <verdict_unstalled>) at look 2 of 2 (96%)" in text
    assert (
        "Read at: 1 row whose data can grow at two looks, each verdict with the look and level that reached it (0 "
        "decided at the first, 1 at the second)" in text
    )
    both = claims.markdown(pd.DataFrame([row, row | {"look": 1, "verdict": INCONCLUSIVE}, row | {"looks": 1}]))
    assert "Read at: 2 rows whose data can grow at two looks" in both and "(0 decided at the first, 1 at the" in both
    assert "; 1 row at one look at 96% (design <design>" in both
    assert "(design <design>, config `decide`)" in text
    said = ("look", "looks", "level")  # in words, above
    shown = {column: value if isinstance(value, str) else format(value, "g") for column, value in row.items()}
    assert [column for column in claims.COLUMNS if column not in said and shown[column] not in text] == []
    one = claims.markdown(pd.DataFrame([row | {"look": 1, "looks": 1, "level": 0.95}]))
    assert "Read at: one look at 95% (design <design>" in one and "at look 1" not in one
    assert f"**{HOLDS}** (3 stalled; without them: <verdict_unstalled>)" in text  # in the summary and the full table
    # a row of no sweep table (or a figure that did not run) has one reading: the verdict alone
    alone = claims.markdown(pd.DataFrame([row | {"stalled_runs": "", "verdict_unstalled": "", "looks": 1}]))
    assert "stalled;" not in alone and f"| **{HOLDS}** |" in alone


# ---------------------------------------------------------------- the report captions


def lr_check_sentence(shapes) -> str:
    said = {
        "yes": "so the recipe is within 2x of the best",
        "no": "so the recipe is not within 2x of the best",
        "unknown": "at the edge of the factors tried, so whether the recipe is within 2x is unknown (widen them)",
    }
    parts = [
        f"L{n} d{d} d_ff {f}: best learning rate {best:.2g} x the recipe's, {said[within]}; at the recipe's rate "
        f"the loss is {excess:.2f}% above the best"
        for n, d, f, best, _, within, excess in shapes
    ]
    return "Protocol check, not a paper claim. " + "; ".join(parts) + "."


def test_the_lr_check_caption_says_each_shapes_best_rate_once():
    shapes = [*LR_SHAPES, *LR_SHAPES_NO]
    text = wording.lr_check_summary(lr_check_frame(shapes))
    assert text == lr_check_sentence(shapes)
    assert text.count("best learning rate") == len(shapes)
    assert "L2 d128 d_ff 512: best learning rate 1.3 x the recipe's, so the recipe is within 2x of the best;" in text
    assert "L4 d96 d_ff 384: best learning rate 3.1 x the recipe's, so the recipe is not within 2x" in text
    assert "L8 d64 d_ff 256: best learning rate 2 x the recipe's, at the edge of the factors tried" in text


def test_an_lr_check_without_runs_says_so():
    assert wording.lr_check_summary(lr_check_frame([])) == "Protocol check, not a paper claim. no finished runs."


def rendered(text: str) -> str:
    """The HTML body docutils makes of `text`; any warning or error raises."""
    docutils_core = pytest.importorskip("docutils.core")
    parts = docutils_core.publish_parts(text, writer="html", settings_overrides={"halt_level": 2})
    return html.unescape(parts["body"])


def caption_frame(tmp_path) -> pd.DataFrame:
    """Rows as claims.csv gives them back (blank columns read as nan)."""
    rows = [
        table_row(
            id="a", paper="Kaplan 2020", statement="depth matters little", paper_value="within 2%",
            paper_at_our_scale="1.5%", our_value="spread 0.50%", interval="[0.30, 0.70]", noise="seed sd 0.10%",
            rule="holds if at most 1%", verdict=HOLDS, what_it_would_take="about 6 seeds", figure="kaplan_fig6",
        ),
        table_row(id="b", paper="Kaplan 2020", statement="s_b", paper_value="v", our_value="x*y", rule="r",
                  verdict=INCONCLUSIVE, figure="kaplan_fig6"),
        table_row(id="o", paper="Levine 2020", statement="other", verdict=NOT_RUN, figure="levine_regimes"),
    ]  # fmt: skip
    return pd.read_csv(write_csv(tmp_path / "claims.csv", pd.DataFrame(rows, columns=claims.COLUMNS)))


NOTE = "lr x ((d_ff/d)/4)^0.5"


def test_a_caption_lists_the_figures_claims_with_the_columns_they_have(tmp_path):
    frame = caption_frame(tmp_path)
    text = claims.caption("kaplan_fig6", frame, NOTE, csv=tmp_path / "kaplan_fig6.csv")
    assert text == (
        f"**kaplan_fig6** -- {FIGURES['kaplan_fig6'].title}.\n\n*Run at:* lr x ((d\\_ff/d)/4)^0.5.\n\n"
        "- *Kaplan 2020*: depth matters little. Paper: within 2%. At our scale: 1.5%. Ours: spread 0.50%. "
        "Interval: [0.30, 0.70]. Noise: seed sd 0.10%. Rule: holds if at most 1%. **Verdict: holds.** "
        "What would decide it: about 6 seeds.\n"
        "- *Kaplan 2020*: s\\_b. Paper: v. Ours: x\\*y. Rule: r. **Verdict: inconclusive.**\n"
    )
    body = rendered(text)
    assert body.count("<li>") == 2 and "<strong>Verdict: inconclusive.</strong>" in body
    assert "s_b. Paper: v. Ours: x*y." in body and NOTE in body and "other" not in body


def test_a_figure_no_claim_reads_says_it_documents_the_data(tmp_path):
    frame = caption_frame(tmp_path)
    for csv in (None, tmp_path / "kaplan_power_law.csv"):
        text = claims.caption("kaplan_power_law", frame, "ci", csv=csv)
        assert text == (
            f"**kaplan_power_law** -- {FIGURES['kaplan_power_law'].title}.\n\n*Run at:* ci.\n\n"
            "No claim reads this figure; it documents the data behind the others.\n"
        )
        assert "documents the data behind the others" in rendered(text)


def test_the_lr_check_caption_is_the_protocol_sentence_from_its_csv(tmp_path):
    frame = caption_frame(tmp_path)
    csv = write_csv(tmp_path / "lr_check.csv", lr_check_frame(LR_SHAPES))
    text = claims.caption("lr_check", frame, "ci", csv=csv)
    head = f"**lr_check** -- {FIGURES['lr_check'].title}.\n\n*Run at:* ci.\n\n"
    assert text == head + wording.rst_text(lr_check_sentence(LR_SHAPES)) + "\n"
    assert lr_check_sentence(LR_SHAPES) in " ".join(rendered(text).split())  # d_ff reads as written
    no_csv = claims.caption("lr_check", frame, "ci")
    assert no_csv == head + "No claim reads this figure; it documents the data behind the others.\n"


# ---------------------------------------------------------------- the command


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="claims")
    claims.add_arguments(made)
    return made


def test_the_command_requires_the_scale_note_and_the_output(tmp_path, capsys):
    out = str(tmp_path / "claims.csv")
    for argv, missing in ((["--out", out], "--scale-note"), (["--scale-note", "ci"], "--out")):
        with pytest.raises(SystemExit) as exit_:
            cli_main(["claims", *argv])
        assert exit_.value.code == 2 and missing in capsys.readouterr().err
    options = {action.option_strings[0]: action for action in parser()._actions if action.dest != "help"}
    assert set(options) == {
        "--figure-csv", "--sweep-table", "--decision", "--scale-note", "--out", "--md", "--captions-dir", "--look",
        "--second-stage", "--design-json", "--decisions-out", "--sensitivity",
    }  # fmt: skip
    assert {name for name, action in options.items() if action.required} == {"--scale-note", "--out"}
    assert all(action.help for action in options.values())  # --help says what each option is


def test_a_figure_csv_named_by_no_figure_is_one_line_naming_it(tmp_path, capsys):
    """A --figure-csv whose name is no figure's: one line naming it (it was ignored, and every claim of the figure
    meant said "not run")."""
    stray = write_csv(tmp_path / "kaplan_fig6_old.csv", one_count(0.5, 0.1))
    out = tmp_path / "claims.csv"
    assert cli_main(["claims", "--scale-note", "ci", "--out", str(out), "--figure-csv", str(stray)]) == 1
    err = capsys.readouterr().err
    said = f"--figure-csv {stray}: no figure is named 'kaplan_fig6_old' (a figure's CSV is results/<config>/figures/"
    assert err.startswith(f"depthwidth claims: error: {said}") and err.count("\n") == 1, err
    assert not (tmp_path / "claims.csv").exists()


def test_the_options_parse_to_paths_and_repeat():
    args = parser().parse_args(
        ["--figure-csv", "a.csv", "--figure-csv", "b.csv", "--sweep-table", "s.csv", "--sweep-table", "t.csv",
         "--scale-note", "ci", "--out", "x/claims.csv", "--md", "y/claims.md", "--captions-dir", "z",
         "--decision", "d/a.json", "--decision", "d/b.json"]
    )  # fmt: skip
    assert args.figure_csv == [Path("a.csv"), Path("b.csv")]
    assert args.decision == [Path("d/a.json"), Path("d/b.json")]
    assert args.sweep_table == [Path("s.csv"), Path("t.csv")]
    assert (args.out, args.md, args.captions_dir) == (Path("x/claims.csv"), Path("y/claims.md"), Path("z"))
    assert args.scale_note == "ci"
    bare = parser().parse_args(["--scale-note", "ci", "--out", "claims.csv"])
    assert (bare.figure_csv, bare.sweep_table, bare.md, bare.captions_dir) == ([], [], None, None)


def test_the_command_writes_claims_csv_md_and_a_caption_per_figure(tmp_path, few_claims, capsys):
    csvs, tables = figure_csvs(tmp_path), sweep_tables(tmp_path)
    out, captions = tmp_path / "results" / "claims.csv", tmp_path / "captions"
    argv = ["claims", "--scale-note", "config ci", "--out", str(out), "--captions-dir", str(captions)]
    argv += [arg for csv in csvs for arg in ("--figure-csv", str(csv))]
    argv += [arg for table in tables for arg in ("--sweep-table", str(table))]
    assert cli_main(argv) == 0
    note = f"config ci; {RANGE}"
    frame = pd.read_csv(out, keep_default_na=False)
    assert list(frame.columns) == claims.COLUMNS and list(frame["id"]) == ["a", "b", "n"]
    assert list(frame["verdict"]) == [INCONCLUSIVE, NOT_RUN, NOT_RUN] and set(frame["scale_note"]) == {note}
    assert frame.loc[0, "noise"] == f"seed sd 0.10%; {measured_note(0.5)}"
    md = out.with_suffix(".md").read_text()
    assert md == claims.markdown(pd.read_csv(out)) and md.startswith(f"# Claims\n\nRun at: {note}.\n")
    assert sorted(path.name for path in captions.iterdir()) == ["kaplan_fig6.rst", "lr_check.rst"]
    fig6 = (captions / "kaplan_fig6.rst").read_text()
    assert f"*Run at:* {wording.rst_text(note)}." in fig6 and "- *Paper 2020*: statement of a." in fig6
    lr = (captions / "lr_check.rst").read_text()
    assert lr.endswith(wording.rst_text(lr_check_sentence([*LR_SHAPES, *LR_SHAPES_NO])) + "\n")
    for caption in (fig6, lr):
        rendered(caption)
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        f"{INCONCLUSIVE:>28}  a: {frame.loc[0, 'our_value']}",
        f"{NOT_RUN:>28}  b: this config does not build its figure",
        f"{NOT_RUN:>28}  n: needs a GPU cluster",
    ]


def test_the_command_writes_claims_md_where_told_and_no_captions_unasked(tmp_path, few_claims):
    out, md = tmp_path / "claims.csv", tmp_path / "elsewhere" / "summary.md"
    assert cli_main(["claims", "--scale-note", "config ci", "--out", str(out), "--md", str(md)]) == 0
    frame = pd.read_csv(out, keep_default_na=False)
    assert list(frame["verdict"]) == [NOT_RUN] * 3 and set(frame["scale_note"]) == {"config ci"}
    assert md.read_text() == claims.markdown(pd.read_csv(out))
    assert sorted(path.name for path in tmp_path.rglob("*") if path.is_file()) == ["claims.csv", "summary.md"]


# ---------------------------------------------------------------- numbers first, words last (issue 49)

CLAIMS_DIR = Path(claims.__file__).parent
RULE_MODULES = ("kaplan.py", "levine.py", "noci.py", "glue.py", "registry.py")


def parsed(name: str) -> ast.Module:
    return ast.parse((CLAIMS_DIR / name).read_text())


@pytest.mark.parametrize("name", RULE_MODULES)
def test_no_rule_composes_words(name):
    """A rule returns numbers: no f-string (prose or not) in a rule module or the registry; wording.py writes."""
    found = [node.lineno for node in ast.walk(parsed(name)) if isinstance(node, ast.JoinedStr)]
    assert found == [], f"claims/{name}: f-strings at lines {found}"


def test_the_check_finds_a_planted_f_string():
    module = ast.parse('def rule(frame):\n    return f"spread {frame}"\n')
    assert any(isinstance(node, ast.JoinedStr) for node in ast.walk(module))


@pytest.mark.parametrize("name", sorted(p.name for p in CLAIMS_DIR.glob("*.py")))
def test_no_claims_module_catches_a_key_error_or_carries_state_in_a_context_variable(name):
    """A misspelt column is an error, never a verdict (nothing catches KeyError or everything); the systematic is an
    argument, never a ContextVar."""
    tree = parsed(name)
    handlers = [node for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler)]
    caught = [ast.unparse(h.type) if h.type is not None else "everything" for h in handlers]
    assert not [c for c in caught if "KeyError" in c or c in ("everything", "Exception", "BaseException")], caught
    imports = {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom) for alias in node.names
    }
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "contextvars" not in imports | modules and "ContextVar" not in imports


@pytest.fixture(scope="module")
def planted_figures(tmp_path_factory):
    """Every sweep figure of the default design drawn on planted tables of the Levine law (tests/planted.py)."""
    import planted
    from depthwidth.plots import common

    folder = tmp_path_factory.mktemp("planted")
    tables = planted.write_tables(folder, planted.levine)
    figures = {}
    for claim in registry.CLAIMS:
        figure = claim.figure
        if figure in FIGURES and figure not in figures and all(t in tables for t in FIGURES[figure].inputs.values()):
            common.render(figure, {n: tables[t] for n, t in FIGURES[figure].inputs.items()}, folder / f"{figure}.png")
            figures[figure] = pd.read_csv(folder / f"{figure}.csv")
    return figures


def test_every_rule_reads_only_the_columns_it_declares(planted_figures):
    """Each sweep rule, judged on its figure's rows cut down to the columns it declares (`verdicts.reads`), gives the
    same evidence as on the whole figure: a column read but not declared would raise KeyError here."""
    judged = 0
    for claim in registry.CLAIMS:
        if claim.figure not in planted_figures:
            continue
        numbers, labels, named_by = claim.measure.columns
        assert set(numbers).isdisjoint(labels) and set(named_by) <= set(claim.params), claim.id
        frame = planted_figures[claim.figure]
        declared = [*numbers, *labels, *(claim.params[name] for name in named_by)]
        kept = frame[[c for c in frame.columns if c in declared or c == "count"]]
        # compared as written out (nan is not equal to itself)
        assert repr(claims.judged(claim, kept, 0.25)) == repr(claims.judged(claim, frame, 0.25)), claim.id
        judged += 1
    assert judged == 9  # the Kaplan and Levine rows


# ---------------------------------------------------------------- two looks (config decide.looks; plan/second.py)


def two_looks() -> Design:
    return Design({**default_design().block, "looks": 2})


def look_decision(verdict: str) -> decide.Decision:
    return decide.Decision("c", verdict, 3, 4, undecidable=False, level=0.99, ladder_level=0.96)


def test_a_row_decided_at_look_one_is_final_and_read_from_the_first_stage(tmp_path):
    first = write_csv(tmp_path / "fig.look1.csv", one_count(0.5, 0.2))  # holds at look 1: [0.3, 0.7] <= 1
    final = write_csv(tmp_path / "fig.csv", one_count(0.95, 0.2))  # look 2 would say inconclusive: never read
    out, looks = claims.row_and_looks(
        claim(), {"fig": final}, "note", math.nan, look_decision(HOLDS), two_looks(), first
    )
    assert (out["verdict"], out["look"], out["looks"], out["level"]) == (HOLDS, 1, 2, 0.99)
    assert out["statistic"] == 0.5 and [look.number for look, _ in looks] == [1]
    trail = claims.trail_rows(claim(), looks, two_looks(), None)
    assert [(r["look"], r.get("decision"), r.get("reason")) for r in trail] == [(1, HOLDS, None), (2, None, "stopped")]
    assert [r["alpha_spent"] for r in trail] == [0.01, 0.04]


def test_a_row_open_at_look_one_is_read_at_look_two_on_every_seed(tmp_path):
    first = write_csv(tmp_path / "fig.look1.csv", one_count(0.9, 0.2))  # open at look 1: [0.7, 1.1] straddles 1
    final = write_csv(tmp_path / "fig.csv", one_count(0.5, 0.1))  # holds on every seed
    out, looks = claims.row_and_looks(
        claim(), {"fig": final}, "note", math.nan, look_decision(INCONCLUSIVE), two_looks(), first
    )
    assert (out["verdict"], out["look"], out["level"], out["statistic"]) == (HOLDS, 2, 0.96, 0.5)
    assert out["decide_seeds"] == ""  # decided: nothing would decide it
    ask = second.Ask("c", second.ASKED, 5, 8, 12.5)
    trail = claims.trail_rows(claim(), looks, two_looks(), ask)
    assert [(r["look"], r["decision"], r["statistic"]) for r in trail] == [(1, INCONCLUSIVE, 0.9), (2, HOLDS, 0.5)]
    assert (trail[0]["reason"], trail[0]["seeds_asked"], trail[0]["runs_asked"]) == (second.ASKED, 5, 8)
    assert "reason" not in trail[1]
    # a decision that is not look 1's verdict was made from other tables
    with pytest.raises(decide.StaleDecision):
        claims.row_and_looks(claim(), {"fig": final}, "note", math.nan, look_decision(HOLDS), two_looks(), first)


def test_the_look_sets_the_level_the_rule_reads(tmp_path):
    """A rule that reads the level (as every interval does, fits.at_level) is judged at its look's."""

    @verdicts.reads("spread", "half")
    def at_level(frame, systematic, *, limit: float = LIMIT) -> Spread:
        from depthwidth import fits

        spread = float(frame["spread"].iloc[0])
        half = {0.99: 0.6, 0.96: 0.2, 0.95: 0.1}[fits.level()]
        part = verdicts.part("spread", spread, (spread - half, spread + half), margin=limit, test=below, n=1e5)
        return Spread(verdict=part.verdict, parts=(part,), seeds=3, spread=spread)

    csv = write_csv(tmp_path / "fig.csv", one_count(0.7, 0.0))
    one = claims.row(claim(at_level), {"fig": csv}, "note")  # one look at 95%: [0.6, 0.8] <= 1 holds
    assert (one["verdict"], one["level"]) == (HOLDS, 0.95)
    first = write_csv(tmp_path / "fig.look1.csv", one_count(0.7, 0.0))  # at 99%: [0.1, 1.3], open
    out = claims.row(claim(at_level), {"fig": csv}, "note", math.nan, look_decision(INCONCLUSIVE), two_looks(), first)
    assert (out["verdict"], out["look"], out["low"], out["high"]) == (HOLDS, 2, pytest.approx(0.5), pytest.approx(0.9))


def test_a_decision_made_at_another_level_is_refused_naming_the_claim(tmp_path):
    first = write_csv(tmp_path / "fig.look1.csv", one_count(0.5, 0.2))
    final = write_csv(tmp_path / "fig.csv", one_count(0.5, 0.2))
    one_look = replace(look_decision(HOLDS), level=0.95, ladder_level=0.95)  # made by a design of one look
    with pytest.raises(claims.LookError, match=r"claim c: decided at 0.95 .*looks are at 0.99 and 0.96"):
        claims.row(claim(), {"fig": final}, "note", math.nan, one_look, two_looks(), first)
    with pytest.raises(claims.LookError, match=r"claim c: two looks, and no rows of fig at look 1"):
        claims.row(claim(), {"fig": final}, "note", math.nan, look_decision(HOLDS), two_looks(), None)


def test_what_a_row_survives_is_read_at_the_level_of_the_look_that_read_its_verdict(tmp_path, monkeypatch):
    """A depth row's outcome under a confound (by_confound) is read at its verdict's level: a reference pair whose
    deeper model loses at 96% (t = 2.86 on 10 dof) but not at 99% leaves the row open under the confound where its
    verdict was read at look 1 (99%), and surviving it where it was read at look 2 (96%). Its metric and rule say
    that level too (they said the default's 95%)."""
    from depthwidth.claims import sensitivity
    from depthwidth.columns import SENSITIVITY_COLUMNS

    monkeypatch.setitem(sensitivity.DEPTH_ROWS, "c", lambda pair: True)
    pair = {"experiment": "literal", "n": 2000.0, "shallow": 1, "deep": 2, "same_runs": 0, "level": 0.95, "dof": 10.0}
    gains = pd.DataFrame(
        [
            pair | {"source": "reference", "log_ratio": 2.0, "se": 0.7},
            pair | {"source": "tokens", "log_ratio": 2.0, "se": 0.1},
        ],
        columns=list(SENSITIVITY_COLUMNS),
    )
    first = write_csv(tmp_path / "fig.look1.csv", one_count(0.5, 0.2))  # holds at look 1
    final = write_csv(tmp_path / "fig.csv", one_count(0.5, 0.1))
    c = replace(claim(), metric="bootstrap {level} CIs", rule="holds if its {level} interval ...")
    at_one, _ = claims.row_and_looks(
        c, {"fig": final}, "note", math.nan, look_decision(HOLDS), two_looks(), first, gains
    )
    open_first = write_csv(tmp_path / "open.look1.csv", one_count(0.9, 0.2))  # open at look 1, holds at look 2
    at_two, _ = claims.row_and_looks(
        c, {"fig": final}, "note", math.nan, look_decision(INCONCLUSIVE), two_looks(), open_first, gains
    )
    assert (at_one["level"], at_one["by_confound"]) == (0.99, "tokens=open")
    assert (at_two["level"], at_two["by_confound"]) == (0.96, "tokens=survives")
    assert (at_one["metric"], at_two["rule"]) == ("bootstrap 99% CIs", "holds if its 96% interval ...")
    not_run, _ = claims.row_and_looks(c, {}, "note", math.nan, None, two_looks(), None, gains)
    assert not_run["metric"] == "bootstrap 95% CIs"  # never read: the default level


def test_the_table_at_two_looks_reads_look_one_then_look_two_and_the_trail_says_what_the_stage_asked(
    tmp_path, monkeypatch
):
    """`claims.tables` with the design of two looks: a row open at look 1 (its decide job's rows, 99%) and decided on
    every seed at look 2 (the figure's CSV, 96%) says look 2; decisions.csv gives both looks, look 1 with what the
    second stage asked for the row (its file, made by this design); a row open at both looks keeps what look 1's
    decision found would decide it. Without the stage's file, or with one made by another design, the table refuses
    to be read, naming it."""
    monkeypatch.setattr(claims, "CLAIMS", [claim()])
    figure = write_csv(tmp_path / "fig.csv", one_count(0.5, 0.1))
    look = write_csv(tmp_path / "fig.look1.csv", one_count(0.9, 0.2))
    decided = tmp_path / "fig.json"
    decided.write_text(
        json.dumps(
            decide.to_json(
                [
                    replace(
                        look_decision(INCONCLUSIVE),
                        seeds=5,
                        runs=8,
                        job_minutes=12.5,
                        steps=(decide.Step(5, 30, 4, 40),),
                    )
                ]
            )
        )
    )
    design = two_looks()
    ask = second.Allocation((second.Ask("c", second.ASKED, 5, 8, 12.5),), {"run-a": 2}, 12.5, design.budget)
    stage = tmp_path / "second-stage.json"
    stage.write_text(json.dumps(second.to_json(ask, design.digest)))
    frame, trail = claims.tables([figure], "note", [decided], design, [look], stage)
    row = frame.iloc[0]
    assert (row["verdict"], row["look"], row["looks"], row["level"], row["design"]) == (
        HOLDS,
        2,
        2,
        0.96,
        design.digest,
    )
    assert list(trail["look"]) == [1, 2] and list(trail["decision"]) == [INCONCLUSIVE, HOLDS]
    assert (trail["reason"].iloc[0], trail["seeds_asked"].iloc[0], trail["runs_asked"].iloc[0]) == (second.ASKED, 5, 8)
    open_still = write_csv(tmp_path / "fig.csv", one_count(0.9, 0.2))  # open at look 2 too: look 1's count stands
    row = claims.tables([open_still], "note", [decided], design, [look], stage)[0].iloc[0]
    assert (row["verdict"], row["look"], row["decide_seeds"], row["decide_runs"]) == (INCONCLUSIVE, 2, 5, 8)
    assert "in 85% of 40 redraws" in row["what_it_would_take"]  # look 1's ladder: 34 of 40 decided at 5 seeds
    with pytest.raises(claims.LookError, match="two looks: the second stage's file is needed"):
        claims.tables([figure], "note", [decided], design, [look], None)
    other = tmp_path / "other-stage.json"
    other.write_text(json.dumps(second.to_json(ask, "another-design")))
    with pytest.raises(claims.LookError, match=f"{re.escape(str(other))}: made by the design another-design"):
        claims.tables([figure], "note", [decided], design, [look], other)


def test_rows_whose_intervals_are_at_another_level_than_their_look_are_refused_naming_the_file(tmp_path):
    """A figure's rows record their intervals' level (`fits.LEVEL_COLUMN`, as plots.common.rows writes it): rows
    drawn at 95% (a design of one look) read at look 2's 96% would be judged on intervals of the wrong width, so
    they are refused, naming the claim, the file and both levels; rows at the look's level, or from before the
    column, are read."""
    first = write_csv(tmp_path / "fig.look1.csv", one_count(0.9, 0.2).assign(level=0.99))
    final = write_csv(tmp_path / "fig.csv", one_count(0.5, 0.1).assign(level=0.95))
    said = rf"claim c: {re.escape(str(final))} holds intervals at 0.95, read at look 2's 0.96"
    with pytest.raises(claims.LookError, match=said):
        claims.row(claim(), {"fig": final}, "note", math.nan, look_decision(INCONCLUSIVE), two_looks(), first)
    stale = write_csv(tmp_path / "fig.look1.csv", one_count(0.9, 0.2).assign(level=0.95))
    said = rf"claim c: {re.escape(str(stale))} holds intervals at 0.95, read at look 1's 0.99"
    with pytest.raises(claims.LookError, match=said):
        claims.row(claim(), {"fig": final}, "note", math.nan, look_decision(INCONCLUSIVE), two_looks(), stale)
    at_level = write_csv(tmp_path / "fig.csv", one_count(0.5, 0.1).assign(level=0.96))
    first = write_csv(tmp_path / "fig.look1.csv", one_count(0.9, 0.2).assign(level=0.99))
    out = claims.row(claim(), {"fig": at_level}, "note", math.nan, look_decision(INCONCLUSIVE), two_looks(), first)
    assert (out["verdict"], out["look"]) == (HOLDS, 2)
    unrecorded = write_csv(tmp_path / "old.csv", one_count(0.5, 0.1))
    assert claims.row(claim(), {"fig": unrecorded}, "note")["verdict"] == HOLDS


def judged_at_counts(verdict: str, **others: str) -> claims.Judged:
    """A literal-row judgement with `verdict` at the papers' count and each of `others` (count -> verdict)."""
    at = lambda v: claims.Judgement(verdicts.Evidence(verdict=v), None, math.nan)  # noqa: E731
    claim = registry.BY_ID["levine_literal_threshold"]
    return claims.Judged(claim, at(verdict), {count.replace("_", " "): at(v) for count, v in others.items()})


def test_a_row_says_its_verdict_at_each_count_and_under_each_confound_and_what_it_depends_on():
    """The robustness columns: the verdict at each other count in `count=verdict` pairs, the outcome under each
    confound likewise, and what the verdict depends on: a count where it is another verdict, a confound whose pair
    flipped its sign (depends); a count that agrees, a confound survived, open or untested, is not named."""
    found = judged_at_counts(FAILS, total_parameters=INCONCLUSIVE, training_FLOPs=FAILS)
    confounds = {"sens_tokens": "survives", "sens_vocab257": "depends", "sens_heads": "open"}
    confounds |= {"sens_vocab4096": "untested"}
    assert claims.robustness(found, confounds) == {
        "verdict_by_count": "total parameters=inconclusive; training FLOPs=does not hold",
        "by_confound": "sens_tokens=survives; sens_vocab257=depends; sens_heads=open; sens_vocab4096=untested",
        "depends_on": "total parameters; sens_vocab257",
    }
    steady = claims.robustness(judged_at_counts(FAILS, total_parameters=FAILS), {"sens_tokens": "survives"})
    assert steady["depends_on"] == "" and steady["by_confound"] == "sens_tokens=survives"
    assert claims.robustness(None) == dict.fromkeys(("verdict_by_count", "by_confound", "depends_on"), "")
    row = {"verdict_by_count": "total parameters=holds", "by_confound": "", "depends_on": "total parameters"}
    assert wording.robustness_cell(row) == "at each count: total parameters=holds; depends on: total parameters"
    assert wording.robustness_cell(row | {"depends_on": ""}).endswith("; depends on none of them")
    assert wording.robustness_cell(dict.fromkeys(row, "")) == ""
