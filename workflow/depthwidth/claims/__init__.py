"""The claims table: each paper claim, our number, and a verdict computed by the rule in its row.

Every claim reads the CSV of the figure that shows it (`results/<config>/figures/<id>.csv`), so the
number in the table is the number on the figure. A claim whose figure this config does not
build gets the verdict `not run`. Verdicts are never set by hand.

The claims and their rules live by paper (`kaplan`, `levine`, `noci`), on the verdict arithmetic
they share (`verdicts`); this module holds the table, its Markdown, the report captions and the command.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.claims import kaplan, levine, noci
from depthwidth.claims.verdicts import INCONCLUSIVE, NOT_RUN, VERDICTS, Claim, Result, Widening, loss_systematic
from depthwidth.io import write_text
from depthwidth.plots.sweep_common import PAPERS_COUNT

COLUMNS = [
    "id",
    "paper",
    "statement",
    "metric",
    "paper_value",
    "paper_at_our_scale",
    "our_value",
    "interval",
    "noise",
    "rule",
    "verdict",
    "what_it_would_take",
    "scale_note",
    "figure",
]
CLAIMS: list[Claim] = [*kaplan.CLAIMS, *levine.CLAIMS, *noci.CLAIMS]


LR_CHECK = "lr_check"  # the protocol check whose CSV gives the learning-rate systematic


def lr_systematic_pct(frame: pd.DataFrame) -> float:
    """The learning-rate systematic (% of the loss): the largest excess of a checked shape's loss at the
    recipe's rate over its loss at its best rate (`plots.lr_check`); nan with no shape checked."""
    excess = frame.drop_duplicates(["n_layer", "d_model", "d_ff"])["excess_pct"] if len(frame) else []
    excess = [value for value in excess if math.isfinite(value)]
    return max(0.0, *excess) if excess else math.nan


def margin_text(margin: float) -> str:
    return f"; margin {margin:.3g}%" if math.isfinite(margin) else ""


def widest(widened: list[Widening]) -> Widening:
    """The widest widening, a loss statistic's (%) before a slope's (another unit)."""
    return max(widened, key=lambda w: (w.unit == "%", w.width))


def systematic_text(widened: list[Widening], fallback: float) -> str:
    """The noise column's learning-rate systematic: the statistics' own one-sided shifts (their largest, and
    how many exceed their margin), or the global fallback; '' where nothing was widened."""
    own = [w for w in widened if w.own]
    parts = []
    if own:
        worst = widest(own)
        parts.append(
            "learning-rate systematic from each shape's own scan, one-sided: largest "
            f"-{worst.down:.2f}/+{worst.up:.2f}{worst.unit} ({worst.what}{margin_text(worst.margin)}) over {len(own)} "
            + ("interval" if len(own) == 1 else "intervals")
        )
        over = [w for w in own if w.width > w.margin]
        if over:
            parts.append(f"{len(over)} of them wider than their margin")
    if len(own) < len(widened):
        parts.append(
            f"learning-rate systematic +-{fallback:.2f}% (lr_check: the largest excess over a shape's best rate; "
            "sweep.lr_grid measures each shape's own)"
        )
    return "; ".join(parts)


NOTHING_WIDENED = (
    "learning-rate systematic: no interval of this row widened (none was computed, or no shape was scanned and no "
    "lr_check ran)"
)


def with_systematic(claim: Claim, frame: pd.DataFrame, result: Result, fallback: float) -> Result:
    """`result`, or inconclusive where the rule's verdict changes when each loss statistic it reads may lie off by
    its learning-rate systematic: its own one-sided shift from its shapes' scans (`loss_interval`), else
    +-`fallback`% (lr_check's). Its noise column says the systematic; a verdict the systematic turns says so,
    and where that systematic exceeds the statistic's margin, that the row is undecidable at this protocol."""
    if not claim.lr_systematic:
        return result
    with loss_systematic(fallback) as systematic:
        shifted = claim.measure(frame).verdict
    widened = systematic.widened
    note = systematic_text(widened, fallback) or NOTHING_WIDENED
    result = dataclasses.replace(result, noise="; ".join(filter(None, [result.noise, note])))
    if not widened or shifted == result.verdict:  # nothing widened: the rerun is the rule itself
        return result
    largest = widest(widened)
    flip = (
        f"the verdict would be {result.verdict} but turns {shifted} within the learning-rate systematic (each "
        f"shape's loss may lie above its loss at its best rate, by up to {largest.width:.2f}{largest.unit} on a "
        "statistic here)"
    )
    over = [w for w in widened if w.width > w.margin]
    if over:
        worst = max(over, key=lambda w: w.width - w.margin)
        flip += (
            f"; undecidable at this protocol: systematic {worst.width:.2f}% > margin {worst.margin:g}% ({worst.what})"
        )
    flip += ": every shape of the row trained at its own best rate"
    return dataclasses.replace(result, verdict=INCONCLUSIVE, needs="; ".join(filter(None, [flip, result.needs])))


def measured(claim: Claim, frame: pd.DataFrame, systematic: float) -> Result:
    """The claim's rule on its figure's rows, within the learning-rate systematic; for a claim computed at
    each count, on the papers' count, its value restating the verdict and the headline number (the value up to
    its first '; ') at the other counts."""

    def judged(rows: pd.DataFrame) -> Result:
        return with_systematic(claim, rows, claim.measure(rows), systematic)

    if not claim.per_count:
        return judged(frame)
    by_count = {count: rows for count, rows in frame.groupby("count", sort=False)}
    result = judged(by_count.pop(PAPERS_COUNT, frame.iloc[:0]))
    others = {count: judged(rows) for count, rows in by_count.items()}
    said = ", ".join(f"at fixed {count}: {o.verdict} ({o.value.split('; ')[0]})" for count, o in others.items())
    differs = [count for count, other in others.items() if other.verdict != result.verdict]
    if differs:
        said += f" -- the verdict depends on the count (at fixed {PAPERS_COUNT}, the papers': {result.verdict})"
    return dataclasses.replace(result, value=f"{result.value}; {said}" if said else result.value)


def evaluate(claim: Claim, figure_csvs: dict[str, Path], scale_note: str, systematic: float = math.nan) -> dict:
    """One row of the claims table; `figure_csvs` maps the figures this config built to their CSV;
    `systematic`, the learning-rate systematic (%, `lr_systematic_pct`) the claims read from losses carry.

    A figure this config does not build: `not run`. A built figure whose data cannot support the
    measure (too few points, an empty table): `inconclusive`, with the reason. Never `does not hold`.
    """
    row = {
        "id": claim.id,
        "paper": claim.paper,
        "statement": claim.statement,
        "metric": claim.metric,
        "paper_value": claim.paper_value,
        "rule": claim.rule,
        "scale_note": scale_note,
        "figure": claim.figure or "",
    }
    blank = {"paper_at_our_scale": "", "interval": "", "noise": "", "what_it_would_take": ""}
    csv = figure_csvs.get(claim.figure)
    if claim.measure is None or csv is None:
        reason = claim.not_run_reason or "this config does not build its figure"
        return {**row, **blank, "our_value": reason, "verdict": NOT_RUN}
    try:
        result = measured(claim, pd.read_csv(csv), systematic)
    except (ValueError, KeyError, IndexError, np.linalg.LinAlgError, pd.errors.EmptyDataError) as err:
        # the figure's data cannot support this measure (e.g. too few points): say so, keep going
        return {
            **row,
            **blank,
            "our_value": f"cannot be measured on {csv.name}: {err}",
            "verdict": INCONCLUSIVE,
            "what_it_would_take": "more trained shapes or runs for this figure",
        }
    if result.verdict not in VERDICTS:
        raise ValueError(f"claim {claim.id}: unknown verdict {result.verdict!r}")
    return {
        **row,
        "our_value": result.value,
        "verdict": result.verdict,
        "paper_at_our_scale": result.at_our_scale,
        "interval": result.interval,
        "noise": result.noise,
        "what_it_would_take": result.needs,
    }


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


def table(figure_csvs: list[Path], scale_note: str) -> pd.DataFrame:
    """Every claim, evaluated on the given figure CSVs (`results/<config>/figures/<id>.csv`)."""
    by_figure = {Path(p).stem: Path(p) for p in figure_csvs}
    systematic = lr_systematic_pct(pd.read_csv(by_figure[LR_CHECK])) if LR_CHECK in by_figure else math.nan
    return pd.DataFrame([evaluate(c, by_figure, scale_note, systematic) for c in CLAIMS], columns=COLUMNS)


SUMMARY_WIDTH = 72  # characters of a statement or a number in the summary (one screen: one short line per claim)


def shorten(text: str, limit: int = SUMMARY_WIDTH) -> str:
    """`text` up to its first '; ' and, if that is longer than `limit` characters, cut after the last
    word that fits, ending in '...'."""
    first = str(text).split("; ")[0]
    if len(first) <= limit:
        return first
    room = first[: limit - 2]  # one character past the cut: a word ending at the cut is followed by its space
    kept = room.rsplit(" ", 1)[0] if " " in room else room[: limit - 3]
    return kept.rstrip(" ,;:(") + "..."


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: every | escaped."""
    return text.replace("|", "\\|")


def blanked(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every missing value an empty string (a column read back from CSV with no value is float)."""
    return frame.astype(object).fillna("")


def summary(frame: pd.DataFrame) -> str:
    """One screen (Markdown): where the claims were run, the verdicts counted, and one line per claim:
    its id, its statement and our number, both shortened, and its verdict. Opens claims.md and docs/findings.md."""
    text = blanked(frame).astype(str)
    notes = [note for note in text["scale_note"].unique() if note]
    counts = text["verdict"].value_counts()
    tally = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)
    lines = [f"Run at: {'; '.join(notes)}.", ""] if notes else []
    lines += [f"Verdicts of {len(text)} claims: {tally}.", ""]
    lines += ["| claim | statement | verdict | our number |", "|---|---|---|---|"]
    for row in text.itertuples():
        cells = [f"`{row.id}`", shorten(row.statement), f"**{row.verdict}**", shorten(row.our_value)]
        lines.append("| " + " | ".join(map(_cell, cells)) + " |")
    return "\n".join(lines) + "\n"


def markdown(frame: pd.DataFrame) -> str:
    """The claims for humans (results/<config>/claims.md): the one-screen summary, then every column of every claim
    (the scale note, one for every claim, once: in the summary's first line)."""
    titles = [
        "claim", "paper (their scale)", "paper at our scale", "metric", "our value", "interval", "noise", "rule",
        "verdict", "what would decide it", "figure",
    ]  # fmt: skip
    head = "| " + " | ".join(titles) + " |"
    lines = ["# Claims", "", summary(frame), "## Every claim in full", "", head, "|---" * len(titles) + "|"]
    for row in blanked(frame).astype(str).map(_cell).itertuples():
        lines.append(
            f"| `{row.id}`: {row.statement} | {row.paper}: {row.paper_value} | {row.paper_at_our_scale} | "
            f"{row.metric} | {row.our_value} | {row.interval} | {row.noise} | {row.rule} | **{row.verdict}** | "
            f"{row.what_it_would_take} | {row.figure} |"
        )
    return "\n".join(lines) + "\n"


def lr_check_summary(frame: pd.DataFrame) -> str:
    """One sentence per shape of the learning-rate check: the best factor and whether the recipe is within 2x."""
    shapes = frame.drop_duplicates(["n_layer", "d_model", "d_ff"])
    said = {
        "yes": "so the recipe is within 2x of the best",
        "no": "so the recipe is not within 2x of the best",
        "unknown": "at the edge of the factors tried, so whether the recipe is within 2x is unknown (widen them)",
    }
    parts = [
        f"L{row.n_layer} d{row.d_model} d_ff {row.d_ff}: best learning rate {row.best_factor:.2g} x the recipe's, "
        f"{said[row.recipe_within_2x]}; at the recipe's rate the loss is {row.excess_pct:.2f}% above the best"
        for row in shapes.itertuples()
    ]
    return "Protocol check, not a paper claim. " + ("; ".join(parts) or "no finished runs") + "."


PROTOCOL_CHECKS = {LR_CHECK: lr_check_summary}  # figure id -> its caption sentence (no claim reads them)


def rst_text(text: str) -> str:
    """Plain text safe inside an RST paragraph: every inline-markup character (* ` | _ and backslash) escaped."""
    return re.sub(r"([\\*`|_])", r"\\\1", str(text))


def caption(figure: str, frame: pd.DataFrame, scale_note: str, csv: Path | None = None) -> str:
    """The report caption of one figure (RST): what it stands for, what was run, and its verdicts
    (or, for a protocol check, what its CSV shows). Every value is escaped: it reads as written."""
    from depthwidth.plots.registry import FIGURES

    lines = [f"**{figure}** -- {rst_text(FIGURES[figure].title)}.", "", f"*Run at:* {rst_text(scale_note)}.", ""]
    rows = blanked(frame[frame["figure"] == figure])
    for row in rows.itertuples():
        row = row._replace(**{field: rst_text(value) for field, value in row._asdict().items() if field != "Index"})
        text = f"- *{row.paper}*: {row.statement}. Paper: {row.paper_value}."
        if row.paper_at_our_scale:
            text += f" At our scale: {row.paper_at_our_scale}."
        text += f" Ours: {row.our_value}."
        if row.interval:
            text += f" Interval: {row.interval}."
        if row.noise:
            text += f" Noise: {row.noise}."
        text += f" Rule: {row.rule}. **Verdict: {row.verdict}.**"
        if row.what_it_would_take:
            text += f" What would decide it: {row.what_it_would_take}."
        lines.append(text)
    if figure in PROTOCOL_CHECKS and csv is not None:
        lines.append(rst_text(PROTOCOL_CHECKS[figure](pd.read_csv(csv))))
    elif rows.empty:
        lines.append("No claim reads this figure; it documents the data behind the others.")
    return "\n".join(lines) + "\n"


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
    frame = table(args.figure_csv, scale_note)
    write_text(args.out, frame.to_csv(index=False))
    write_text(args.md or args.out.with_suffix(".md"), markdown(frame))
    if args.captions_dir:
        for csv in args.figure_csv:
            write_text(args.captions_dir / f"{csv.stem}.rst", caption(csv.stem, frame, scale_note, csv))
    for row in frame.itertuples():
        print(f"{row.verdict:>28}  {row.id}: {row.our_value}")
    return 0
