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
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from depthwidth import fits
from depthwidth.claims import decide, second, wording
from depthwidth.claims.judging import Judged, Judgement, judged, lr_systematic_pct
from depthwidth.claims.judging import judge as judge  # re-exported, as measure (claims/judging.py)
from depthwidth.claims.judging import measure as measure
from depthwidth.claims.registry import CLAIMS, Claim
from depthwidth.claims.sensitivity import outcomes, row_outcomes, undecided
from depthwidth.claims.verdicts import INCONCLUSIVE, NOT_RUN, VERDICTS, FigureDataError
from depthwidth.columns import (
    CLAIMS_NUMBER_COLUMNS,
    CLAIMS_TEXT_COLUMNS,
    DECISIONS_COLUMNS,
    LOOK_COLUMNS,
    LR_CHECK,
    ROBUSTNESS_COLUMNS,
    SENSITIVITY_COLUMNS,
)
from depthwidth.contracts import unstalled_path
from depthwidth.io import write_text
from depthwidth.options import json_option
from depthwidth.plan.second import LOOK_SUFFIX, Design, default_design, look_figure
from depthwidth.plots.sweep_common import PAPERS_COUNT, read_columns

TEXT_COLUMNS, NUMBER_COLUMNS = list(CLAIMS_TEXT_COLUMNS), list(CLAIMS_NUMBER_COLUMNS)
COLUMNS = TEXT_COLUMNS + list(ROBUSTNESS_COLUMNS) + NUMBER_COLUMNS


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


def robustness(j: Judged | None, confounds: Mapping[str, str] | None = None) -> dict[str, str]:
    """ROBUSTNESS_COLUMNS of a judged claim: its verdict at each other count it is read at (`j.others`), its outcome
    under each confound of the sensitivity block (`confounds`: experiment -> survives, depends, open or untested;
    claims/sensitivity.py) and what the verdict depends on: each count where it is another verdict, each confound
    where a pair's sign flipped. The row's verdict stays the pre-registered one; blank for a claim not read."""
    by_count = {count: o.verdict for count, o in j.others.items()} if j is not None else {}
    by_confound = dict(confounds or {})
    depends = [c for c, verdict in by_count.items() if verdict != j.main.verdict]
    depends += [source for source, outcome in by_confound.items() if outcome == "depends"]
    pairs = lambda mapping: "; ".join(f"{name}={value}" for name, value in mapping.items())  # noqa: E731
    return {"verdict_by_count": pairs(by_count), "by_confound": pairs(by_confound), "depends_on": "; ".join(depends)}


def survived_at(sensitivity: pd.DataFrame | None, levels: Mapping[str, float]) -> dict[str, dict[str, str]]:
    """What each depth row survives (sensitivity.outcomes) read at its verdict's level (`levels`: claim -> its look's
    level), so that its robustness is held to the level its verdict was: {} without a sensitivity block."""
    return {} if sensitivity is None else outcomes(sensitivity, levels)


def survival(sensitivity: pd.DataFrame | None, frame: pd.DataFrame) -> tuple[dict, dict]:
    """What each depth row of the claims table `frame` survives (`survived_at`), and where its own pairs are not
    decided at its level (sensitivity.undecided), each read at the level of the row's verdict: what claims.md says."""
    if sensitivity is None:
        return {}, {}
    levels = levels_of(frame)
    return survived_at(sensitivity, levels), undecided(sensitivity, levels)


def levels_of(frame: pd.DataFrame) -> dict[str, float]:
    """Each row of a claims table that was read: its id -> the level of the look that read its verdict."""
    read = pd.to_numeric(frame["level"], errors="coerce")
    return {str(claim): float(level) for claim, level in zip(frame["id"], read) if math.isfinite(level)}


def with_decision(j: Judged, decision: decide.Decision | None, look: int = 1) -> Judged:
    """`j` with what `decide` found (the row's own procedure redrawn at more seeds) in place of its rule's needs of
    kind "seeds" (which part more seeds may resolve, not how many); as it was where no decision was made or the row
    is decided. decide.StaleDecision where the decision's verdict is not the row's."""
    if decision is None:
        return j
    if decision.verdict != j.main.verdict:
        raise decide.StaleDecision(j.claim.id, decision.verdict, j.main.verdict)
    if j.main.verdict != INCONCLUSIVE:
        return j
    plain = j.main.plain
    needs = (decide.as_need(decision, look, j.claim.figure), *(n for n in plain.needs if n.kind != "seeds"))
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


class LookError(ValueError):
    """The looks of a design cannot be read as given: a decision, a figure's rows at look 1 or the second stage missing,
    or made at another design (one line naming the claim or the file)."""


@dataclass(frozen=True)
class Look:
    """Where a row is read: its look (1 or 2) of how many (`of`), the two-sided level, and the figure rows it reads
    (the figure's CSV, or at look 1 of two, the rows its decide job wrote from the first stage's tables)."""

    number: int
    of: int
    level: float
    csv: Path

    def columns(self, design: str) -> dict[str, float | int | str]:
        return dict(zip(LOOK_COLUMNS, (self.number, self.of, self.level, design), strict=True))


def read_at(claim: Claim, look: Look, fallback: float) -> Judged:
    """`claim` judged on the rows `look` reads, at its level (the rules and the figure rows read it: fits.at_level).
    LookError where the rows say their intervals are at another level (`fits.LEVEL_COLUMN`): a figure drawn for
    another design, whose intervals the rule would read at the wrong level."""
    frame = read_figure(look.csv, claim.figure)
    drawn = fits.level_of_rows(frame)  # nan: rows that do not say, read as they are
    if math.isfinite(drawn) and not math.isclose(drawn, look.level, abs_tol=1e-9):
        raise LookError(
            f"claim {claim.id}: {look.csv} holds intervals at {drawn:g}, read at look {look.number}'s "
            f"{look.level:g}: rebuild it"
        )
    with fits.at_level(look.level):
        return judged(claim, frame, fallback)


def looks_of(
    claim: Claim,
    csv: Path,
    design: Design,
    decision: decide.Decision | None,
    look_csv: Path | None,
    fallback: float,
) -> list[tuple[Look, Judged]]:
    """The looks a row had, each with its judgement, the last the one that reached its verdict: one where its data
    cannot grow (no decide job) or the design has one look; with two, look 1 on the first stage's rows and, where it
    left the row open, look 2 on all of them. decide.StaleDecision where look 1's verdict is not the decision's."""
    if decision is None or design.looks == 1:  # one look, at 1 - alpha
        look = Look(1, 1, design.one_look, csv)
        return [(look, read_at(claim, look, fallback))]
    if look_csv is None:
        raise LookError(f"claim {claim.id}: two looks, and no rows of {claim.figure} at look 1 given (--look)")
    if (decision.level, decision.ladder_level) != (design.levels[0], design.levels[-1]):
        raise LookError(
            f"claim {claim.id}: decided at {decision.level:g} (its ladder at {decision.ladder_level:g}), where the "
            f"design's looks are at {design.levels[0]:g} and {design.levels[-1]:g}: rebuild its decide job"
        )
    first = Look(1, 2, design.levels[0], look_csv)
    j1 = read_at(claim, first, fallback)
    if decision.verdict != j1.main.verdict:
        raise decide.StaleDecision(claim.id, decision.verdict, j1.main.verdict)
    if j1.main.verdict != INCONCLUSIVE:
        return [(first, j1)]
    last = Look(2, 2, design.levels[1], csv)
    return [(first, j1), (last, read_at(claim, last, fallback))]


def row(
    claim: Claim,
    figure_csvs: dict[str, Path],
    scale_note: str,
    fallback: float = math.nan,
    decision: decide.Decision | None = None,
    design: Design | None = None,
    look_csv: Path | None = None,
) -> dict:
    """One row of the claims table; `figure_csvs` maps the figures this config built to their CSV; `fallback`, the
    learning-rate systematic (%, `lr_systematic_pct`) for the statistics whose shapes were not scanned; `decision`,
    what `decide` found would decide the row (None: the rule's own estimate stands); `design`, the looks it is read
    at (default: one look at 95%), and `look_csv` the figure's rows at look 1 of two.

    A figure this config does not build: `not run`. A built figure whose rows cannot support the rule (too few
    shapes or N): `inconclusive`, with what it would take. A figure that lacks a column the rule reads, or holds
    something else than numbers in it: FigureDataError (a defect, never a verdict)."""
    return row_and_looks(claim, figure_csvs, scale_note, fallback, decision, design, look_csv)[0]


def fixed_columns(claim: Claim, scale_note: str) -> dict[str, str]:
    """The columns of a claim that its data do not move, its texts filled at the current level (fits.at_level)."""
    return {
        "id": claim.id,
        "paper": claim.paper,
        "statement": wording.fill(claim.statement, claim),
        "metric": wording.fill(claim.metric, claim),
        "paper_value": wording.fill(claim.paper_value, claim),
        "rule": wording.fill(claim.rule, claim),
        "scale_note": scale_note,
        "figure": claim.figure or "",
    }


def row_and_looks(
    claim: Claim,
    figure_csvs: dict[str, Path],
    scale_note: str,
    fallback: float = math.nan,
    decision: decide.Decision | None = None,
    design: Design | None = None,
    look_csv: Path | None = None,
    sensitivity: pd.DataFrame | None = None,
) -> tuple[dict, list[tuple[Look, Judged]]]:
    """`row`, and the looks it was read at with their judgements (decisions.csv writes them); `sensitivity`: a
    sensitivity block's gains (sensitivity.csv), whose outcomes for the row (`robustness`) are read at the level of
    the look that read its verdict."""
    design = design or default_design()
    csv = figure_csvs.get(claim.figure)
    if claim.measure is None or csv is None:
        blank = {"paper_at_our_scale": "", "interval": "", "noise": "", "what_it_would_take": ""}
        reason = claim.not_run_reason or "this config does not build its figure"
        blank |= {"verdict_unstalled": ""}
        numbers = number_columns(None) | dict.fromkeys(LOOK_COLUMNS, "")
        fixed = fixed_columns(claim, scale_note)
        return {**fixed, **blank, "our_value": reason, "verdict": NOT_RUN, **robustness(None), **numbers}, []
    looks = looks_of(claim, Path(csv), design, decision, look_csv, fallback)
    look, j = looks[-1]
    if j.main.verdict not in VERDICTS:
        raise ValueError(f"claim {claim.id}: unknown verdict {j.main.verdict!r}")
    if look.number == 1 or j.main.verdict == INCONCLUSIVE:  # what would decide it: look 1's ladder
        j = with_decision(j, decision, look.number)
    else:  # decided at look 2: nothing more would decide it, whatever look 1 left open
        decision = None
    frame = read_figure(look.csv, claim.figure)
    confounds = row_outcomes(sensitivity, claim.id, look.level) if sensitivity is not None else None
    with fits.at_level(look.level):
        fixed = fixed_columns(claim, scale_note)  # its metric and rule at the level they were read at
        if "stalled_runs" not in frame.columns or not len(frame):  # a figure of no sweep table: one reading
            numbers = number_columns(j.main, decision) | look.columns(design.digest)
            return {**fixed, **text_columns(j), **robustness(j, confounds), **numbers}, looks
        # the other reading: every figure of sweep tables writes its rows without their stalled runs beside its CSV
        stalled = int(frame["stalled_runs"].iloc[0])
        other = Path(unstalled_path(look.csv))
        unstalled = judged(claim, read_figure(other, claim.figure), fallback) if stalled else j
        numbers = number_columns(j.main, decision) | {"stalled_runs": stalled} | look.columns(design.digest)
        return {**fixed, **text_columns(j, unstalled, stalled), **robustness(j, confounds), **numbers}, looks


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


def tables(
    figure_csvs: list[Path],
    scale_note: str,
    decisions: list[Path] = (),
    design: Design | None = None,
    look_csvs: list[Path] = (),
    second_stage: Path | None = None,
    sensitivity: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every claim, evaluated on the given figure CSVs (`results/<config>/figures/<id>.csv`) at the looks of `design`
    (default: one, at 95%), with what `decide` found would decide each (`decisions`: its JSON files,
    results/<config>/decide/<figure>.json; with two looks, look 1 reads the rows beside them, `look_csvs`); and the
    audit trail of the looks (decisions.csv), with what the second stage asked for each row (`second_stage`); with a
    sensitivity block's gains (`sensitivity`), what each depth row survives at its look's level (`row_outcomes`)."""
    design = design or default_design()
    by_figure = {Path(p).stem: Path(p) for p in figure_csvs}
    by_look = {look_figure(p): Path(p) for p in look_csvs if str(p).endswith(LOOK_SUFFIX)}
    fallback = lr_systematic_pct(pd.read_csv(by_figure[LR_CHECK])) if LR_CHECK in by_figure else math.nan
    found = decide.read_decisions(decisions)
    if design.looks == 2 and second_stage is None and found:
        raise LookError("two looks: the second stage's file is needed (--second-stage)")
    allocation, made_by = second.read(second_stage) if second_stage else (None, design.digest)
    if made_by != design.digest:
        raise LookError(f"{second_stage}: made by the design {made_by}, the claims read at {design.digest}")
    if design.looks == 2:  # a row of a figure read at two looks needs look 1's decision
        missing = [c.id for c in CLAIMS if c.figure in by_look and c.id not in found and c.measure is not None]
        if missing:
            raise LookError(f"claim {missing[0]}: two looks, and no decision of it given (its figure's decide job)")
    asks = {a.claim: a for a in allocation.asks} if allocation else {}
    rows, trail = [], []
    for c in CLAIMS:
        decision = found.get(c.id)
        out, looks = row_and_looks(
            c, by_figure, scale_note, fallback, decision, design, by_look.get(c.figure), sensitivity
        )
        rows.append(out)
        if decision is not None:
            trail += trail_rows(c, looks, design, asks.get(c.id))
    return pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(trail, columns=list(DECISIONS_COLUMNS))


def table(figure_csvs: list[Path], scale_note: str, decisions: list[Path] = ()) -> pd.DataFrame:
    """The claims table alone, at one look at 95% (`tables`)."""
    return tables(figure_csvs, scale_note, decisions)[0]


def trail_rows(claim: Claim, looks: list[tuple[Look, Judged]], design: Design, ask) -> list[dict]:
    """decisions.csv's rows of one claim: one per look of the design, each with the statistic it read, the error
    it spent and what it decided; look 1 with what the second stage asked for the row (`ask`: claims.second.Ask);
    a look not reached (the row was decided before it) with the reason `stopped`."""
    out = []
    for number, (level, spent) in enumerate(zip(design.levels, design.spent, strict=True), start=1):
        reached = [j for look, j in looks if look.number == number]
        base = {"look": number, "claim": claim.id, "level": level, "alpha_spent": spent, "design": design.digest}
        if not reached:
            out.append(base | {"reason": second.STOPPED})
            continue
        numbers = number_columns(reached[0].main)
        base |= {k: numbers[k] for k in ("part", "statistic", "low", "high", "margin", "sys_down", "sys_up")}
        base["decision"] = reached[0].main.verdict
        if number == 1 and ask is not None:
            base |= {"reason": ask.reason, "seeds_asked": "" if ask.seeds is None else ask.seeds}
            base |= {"runs_asked": ask.runs, "job_minutes_asked": ask.job_minutes}
        out.append(base)
    return out


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
    parser.add_argument("--look", action="append", default=[], type=Path, help="a figure's rows at look 1, "
                        "results/<config>/decide/<figure>.look1.csv (repeatable; two looks)")  # fmt: skip
    parser.add_argument("--second-stage", type=Path, default=None, help="what the second stage asked for (two looks)")
    parser.add_argument("--design-json", default=None, help="the config's `decide` block, validated: the design "
                        "(plan/second.py; default: one look at 95%%)")  # fmt: skip
    parser.add_argument("--sensitivity", type=Path, default=None, help="what the depth rows survive under each "
                        "confound (results/<config>/sensitivity.csv; a sensitivity block)")  # fmt: skip
    parser.add_argument("--decisions-out", type=Path, default=None, help="the looks' audit trail (decisions.csv)")
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
    from depthwidth.plots.registry import FIGURES

    unknown = [path for path in args.figure_csv if Path(path).stem not in FIGURES]
    if unknown:  # read by its name: one no figure has would leave its claims "not run", and say nothing
        raise ValueError(f"--figure-csv {unknown[0]}: no figure is named {Path(unknown[0]).stem!r} (a figure's CSV is "
                         "results/<config>/figures/<figure>.csv)")  # fmt: skip
    scale_note = full_scale_note(args.scale_note, args.sweep_table)
    design = Design(json_option(args.design_json, "--design-json")) if args.design_json else None
    sensitivity = (
        read_columns(args.sensitivity, SENSITIVITY_COLUMNS, "a sensitivity table") if args.sensitivity else None
    )
    frame, trail = tables(args.figure_csv, scale_note, args.decision, design, args.look, args.second_stage, sensitivity)

    write_text(args.out, frame.to_csv(index=False))
    if args.decisions_out:
        write_text(args.decisions_out, trail.to_csv(index=False))
    write_text(
        args.md or args.out.with_suffix(".md"), wording.markdown(frame, sensitivity, *survival(sensitivity, frame))
    )
    if args.captions_dir:
        for csv in args.figure_csv:
            write_text(args.captions_dir / f"{csv.stem}.rst", wording.caption(csv.stem, frame, scale_note, csv))
    for r in frame.itertuples():
        print(f"{r.verdict:>28}  {r.id}: {r.our_value}")
    return 0
