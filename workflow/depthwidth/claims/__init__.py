"""The claims table: each paper claim, our number, and a verdict computed by the rule in its row.

Every claim reads the CSV of the figure that shows it (`results/<config>/figures/<id>.csv`), so the number in the
table is the number on the figure. Its rule (claims/kaplan.py, levine.py, noci.py, glue.py; registered with its
margins in claims/registry.py) returns numbers; `judge` (claims/judging.py) runs it without and within the
learning-rate systematic;
`wording` alone writes the words. A claim whose figure this config does not build gets the verdict `not run`.
Verdicts are never set by hand.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path

import pandas as pd

from depthwidth.claims import decide, wording
from depthwidth.claims.judging import Judged, Judgement, judged, lr_systematic_pct
from depthwidth.claims.judging import judge as judge  # re-exported, as measure (claims/judging.py)
from depthwidth.claims.judging import measure as measure
from depthwidth.claims.registry import CLAIMS, Claim
from depthwidth.claims.verdicts import INCONCLUSIVE, NOT_RUN, VERDICTS, FigureDataError
from depthwidth.columns import CLAIMS_NUMBER_COLUMNS, CLAIMS_TEXT_COLUMNS
from depthwidth.contracts import unstalled_path
from depthwidth.io import write_text
from depthwidth.plots.sweep_common import PAPERS_COUNT

TEXT_COLUMNS, NUMBER_COLUMNS = list(CLAIMS_TEXT_COLUMNS), list(CLAIMS_NUMBER_COLUMNS)
COLUMNS = TEXT_COLUMNS + NUMBER_COLUMNS

LR_CHECK = "lr_check"  # the protocol check whose CSV gives the learning-rate systematic


# ---------------------------------------------------------------- the table: words from the numbers


def text_columns(j: Judged, unstalled: Judged | None = None, stalled: int = 0) -> dict[str, str]:
    """The text columns of a judged claim's row (wording.render, with the systematic's note, the flip, the
    restatement at the other counts, and the row read without its `stalled` runs, `unstalled`, where it reads
    sweep tables)."""
    main, claim = j.main, j.claim
    text = wording.render(main.plain, claim)
    noise, needs = text.noise, list(text.needs)
    if main.shifted is not None:
        note = wording.systematic_text(main.shifted.carried, main.fallback) or wording.NOTHING_WIDENED
        noise = "; ".join(filter(None, [noise, note]))
        if main.flipped:
            needs.insert(0, wording.flip_text(main.plain.verdict, main.shifted.verdict, main.shifted.carried))
    if unstalled is not None:
        other = wording.render(unstalled.main.plain, claim).headline
        noise = "; ".join([noise, wording.stall_text(stalled, main.verdict, unstalled.main.verdict, other)])
    value = "; ".join(text.value)
    if j.others:
        said = ", ".join(
            f"at fixed {count}: {o.verdict} ({wording.render(o.plain, claim).headline})"
            for count, o in j.others.items()
        )
        if any(o.verdict != main.verdict for o in j.others.values()):
            said += f" -- the verdict depends on the count (at fixed {PAPERS_COUNT}, the papers': {main.verdict})"
        value = f"{value}; {said}"
    return {
        "our_value": value,
        "verdict": main.verdict,
        "verdict_unstalled": "" if unstalled is None else unstalled.main.verdict,
        "paper_at_our_scale": text.at_our_scale,
        "interval": text.interval,
        "noise": noise,
        "what_it_would_take": "; ".join(needs),
    }


def with_decision(j: Judged, decision: decide.Decision | None) -> Judged:
    """`j` with what `decide` found (the row's own procedure redrawn at more seeds) in place of its rule's seed
    estimate (kind "seeds": a difference of two means at a pooled sd, blind to the systematic); as it was where no
    decision was made or the row is decided. decide.StaleDecision where the decision's verdict is not the row's."""
    if decision is None:
        return j
    if decision.verdict != j.main.verdict:
        raise decide.StaleDecision(j.claim.id, decision.verdict, j.main.verdict)
    if j.main.verdict != INCONCLUSIVE:
        return j
    plain = j.main.plain
    needs = (decide.as_need(decision), *(n for n in plain.needs if n.kind != "seeds"))
    return replace(j, main=replace(j.main, plain=replace(plain, needs=needs)))


def number_columns(j: Judgement | None, decision: decide.Decision | None = None) -> dict[str, float | str]:
    """The deciding statistic in numbers (NUMBER_COLUMNS), and what would decide the row (decide.numbers); empty
    where nothing was read."""
    part = j.deciding if j is not None else None
    if part is None:
        blank = {column: "" for column in NUMBER_COLUMNS} | {"seeds": "" if j is None else _seeds(j.plain.seeds)}
        return blank | decide.numbers(decision)
    sys = (part.down, part.up) if part.carried else (math.nan, math.nan)
    return {
        "part": wording.part_label(part),
        "statistic": part.value,
        "low": part.low,
        "high": part.high,
        "margin": part.margin,
        "sys_down": sys[0],
        "sys_up": sys[1],
        "unit": part.unit.strip() or "none",  # a statistic without a unit (a share, a z, a correlation)
        "seeds": _seeds(j.plain.seeds),
        "stalled_runs": "",
    } | decide.numbers(decision)


def _seeds(seeds: int | None) -> int | str:
    return "" if seeds is None else seeds


def row(
    claim: Claim,
    figure_csvs: dict[str, Path],
    scale_note: str,
    fallback: float = math.nan,
    decision: decide.Decision | None = None,
) -> dict:
    """One row of the claims table; `figure_csvs` maps the figures this config built to their CSV; `fallback`, the
    learning-rate systematic (%, `lr_systematic_pct`) for the statistics whose shapes were not scanned; `decision`,
    what `decide` found would decide the row (None: the rule's own estimate stands).

    A figure this config does not build: `not run`. A built figure whose rows cannot support the rule (too few
    shapes or N): `inconclusive`, with what it would take. A figure that lacks a column the rule reads, or holds
    something else than numbers in it: FigureDataError (a defect, never a verdict)."""
    fixed = {
        "id": claim.id,
        "paper": claim.paper,
        "statement": wording.fill(claim.statement, claim),
        "metric": wording.fill(claim.metric, claim),
        "paper_value": wording.fill(claim.paper_value, claim),
        "rule": wording.fill(claim.rule, claim),
        "scale_note": scale_note,
        "figure": claim.figure or "",
    }
    csv = figure_csvs.get(claim.figure)
    if claim.measure is None or csv is None:
        blank = {"paper_at_our_scale": "", "interval": "", "noise": "", "what_it_would_take": ""}
        reason = claim.not_run_reason or "this config does not build its figure"
        blank |= {"verdict_unstalled": ""}
        return {**fixed, **blank, "our_value": reason, "verdict": NOT_RUN, **number_columns(None)}
    frame = read_figure(csv, claim.figure)
    j = judged(claim, frame, fallback)
    if j.main.verdict not in VERDICTS:
        raise ValueError(f"claim {claim.id}: unknown verdict {j.main.verdict!r}")
    j = with_decision(j, decision)
    if "stalled_runs" not in frame.columns or not len(frame):  # a figure of no sweep table: one reading
        return {**fixed, **text_columns(j), **number_columns(j.main, decision)}
    # the other reading: every figure of sweep tables writes its rows without their stalled runs beside its CSV
    stalled = int(frame["stalled_runs"].iloc[0])
    unstalled = judged(claim, read_figure(Path(unstalled_path(csv)), claim.figure), fallback) if stalled else j
    numbers = number_columns(j.main, decision) | {"stalled_runs": stalled}
    return {**fixed, **text_columns(j, unstalled, stalled), **numbers}


def read_figure(csv: Path, figure: str) -> pd.DataFrame:
    """A figure's rows (its CSV); FigureDataError naming it when the file holds no table at all."""
    try:
        return pd.read_csv(csv)
    except pd.errors.EmptyDataError:
        raise FigureDataError(figure, "", f"{csv} is empty: no columns, no rows") from None


def training_range(sweep_tables: list[Path]) -> str:
    """The tokens per non-embedding parameter and the epochs over the train split the sweep runs saw, as a range."""
    frames = [pd.read_csv(path) for path in sweep_tables]
    runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if runs.empty or "epochs" not in runs:
        return ""
    tpp, epochs = runs["tokens_per_parameter"], runs["epochs"]
    return (
        f"{tpp.min():.3g} to {tpp.max():.3g} tokens per non-embedding parameter, "
        f"{epochs.min():.2g} to {epochs.max():.2g} epochs"
    )


def full_scale_note(plan_note: str, sweep_tables: list[Path]) -> str:
    """The plan's scale note, with the range of tokens per parameter and epochs the sweep tables record."""
    measured = training_range(sweep_tables)
    return f"{plan_note}; {measured}" if measured else plan_note


def table(figure_csvs: list[Path], scale_note: str, decisions: list[Path] = ()) -> pd.DataFrame:
    """Every claim, evaluated on the given figure CSVs (`results/<config>/figures/<id>.csv`), with what `decide`
    found would decide each (`decisions`: its JSON files, results/<config>/decide/<figure>.json)."""
    by_figure = {Path(p).stem: Path(p) for p in figure_csvs}
    fallback = lr_systematic_pct(pd.read_csv(by_figure[LR_CHECK])) if LR_CHECK in by_figure else math.nan
    found = decide.read_decisions(decisions)
    rows = [row(c, by_figure, scale_note, fallback, found.get(c.id)) for c in CLAIMS]
    return pd.DataFrame(rows, columns=COLUMNS)


# re-exported for the table's readers (check, findings, the report)
markdown, summary, caption = wording.markdown, wording.summary, wording.caption


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--figure-csv",
        action="append",
        default=[],
        type=Path,
        help="the plotted rows (<id>.csv) of a figure this config built (repeatable)",
    )
    parser.add_argument(
        "--sweep-table", action="append", default=[], type=Path, help="a sweep table this config built (repeatable)"
    )
    parser.add_argument(
        "--decision", action="append", default=[], type=Path, help="what `decide` found for a figure (repeatable)"
    )
    parser.add_argument("--scale-note", required=True, help="what was run, e.g. 'config default: 2 seeds, N 1e5-3e6'")
    parser.add_argument("--out", required=True, type=Path, help="the claims table, claims.csv")
    parser.add_argument("--md", type=Path, default=None, help="claims.md (default: beside --out)")
    parser.add_argument(
        "--captions-dir",
        type=Path,
        nargs="?",
        default=None,
        const=None,
        help="write the report caption of each figure here as <figure>.rst (given empty, as with no figures: none)",
    )


def run(args: argparse.Namespace) -> int:
    scale_note = full_scale_note(args.scale_note, args.sweep_table)
    frame = table(args.figure_csv, scale_note, args.decision)
    write_text(args.out, frame.to_csv(index=False))
    write_text(args.md or args.out.with_suffix(".md"), wording.markdown(frame))
    if args.captions_dir:
        for csv in args.figure_csv:
            write_text(args.captions_dir / f"{csv.stem}.rst", wording.caption(csv.stem, frame, scale_note, csv))
    for r in frame.itertuples():
        print(f"{r.verdict:>28}  {r.id}: {r.our_value}")
    return 0
