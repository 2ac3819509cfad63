"""`python -m depthwidth findings`: docs/findings.md (another config's: docs/findings-<config>.md,
`contracts.findings_path`), what a built run finds, with its figures.

Read from the run's `results/<config>/claims.csv` (and the PNG of every figure the run drew, copied into
`docs/findings/`, or `docs/findings-<config>/`, where each claim links its own; the headline ones,
`contracts.FINDINGS_FIGURES`, are shown at the end): a title, the config and scale it came from,
the sha256 of the claims.csv it was made from, the one-screen summary of claims.md, then each claim with its verdict,
our value, interval and what would decide it, and the figures. Its first line is a record (an HTML comment, JSON:
config, claims_sha256, verdicts) that `check` reads to say when the file no longer matches the claims
it came from. `snakemake findings` runs it; it is no part of `all` (docs/ is committed by hand).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pandas as pd

from depthwidth import claims
from depthwidth.claims import wording
from depthwidth.contracts import FINDINGS_FIGURES, findings_figures_dir, findings_path
from depthwidth.io import sha256_file, write_bytes, write_text

RECORD = "<!-- depthwidth findings: {} -->"  # the first line of findings.md; {} is the record's JSON


def record_line(config: str, claims_sha256: str, frame: pd.DataFrame) -> str:
    """The first line of findings.md: the config, the claims.csv's sha256 and every claim's verdict."""
    verdicts = dict(zip(frame["id"].astype(str), frame["verdict"].astype(str), strict=True))
    return RECORD.format(json.dumps({"config": config, "claims_sha256": claims_sha256, "verdicts": verdicts}))


def read_record(text: str) -> dict | None:
    """The record on the first line of a findings.md's `text`; None if it has none or it is not readable."""
    head, tail = RECORD.split("{}")
    first = text.split("\n", 1)[0]
    if not (first.startswith(head) and first.endswith(tail)):
        return None
    try:
        record = json.loads(first[len(head) : -len(tail)])
    except json.JSONDecodeError:
        return None
    keys = {"config": str, "claims_sha256": str, "verdicts": dict}
    ok = isinstance(record, dict) and all(isinstance(record.get(key), kind) for key, kind in keys.items())
    return record if ok else None


def read_claims(path: Path) -> pd.DataFrame:
    """The claims table at `path`, every cell as text; FileNotFoundError or ValueError naming it when it is
    missing or not one."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such claims table (build the run first: snakemake --cores 2)")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)  # every cell as written, empty ones ''
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not a readable CSV ({err.__class__.__name__})") from None
    if list(frame.columns) != claims.COLUMNS:
        raise ValueError(f"{path}: columns {list(frame.columns)} are not the claims table's {claims.COLUMNS}")
    return frame


def claim_section(row: pd.Series, links: dict[str, str], config: str) -> str:
    """One claim: its statement, verdict, our value, interval, what it survives (its verdict at the other counts and
    under each confound: `wording.robustness_cell`, as claims.md's column), what would decide it and its figure (a
    link to its copy, or the path of config `config`'s figure when it was not copied)."""
    lines = [f"### `{row['id']}`: {row['verdict']}", "", f"{row['paper']}: {row['statement']}.", ""]
    items = {
        "Paper": row["paper_value"],
        "Paper at our scale": row["paper_at_our_scale"],
        "Ours": row["our_value"],
        "Interval": row["interval"],
        "Noise": row["noise"],
        "What it survives": wording.robustness_cell(row),
        "What would decide it": row["what_it_would_take"],
    }
    lines += [f"- {name}: {value}" for name, value in items.items() if value]
    figure = row["figure"]
    if figure:
        shown = f"[{figure}]({links[figure]})" if figure in links else f"`{figure}`, not drawn by config {config}"
        lines.append(f"- Figure: {shown}")
    return "\n".join(lines) + "\n"


def markdown(frame: pd.DataFrame, config: str, source: str, claims_sha256: str, links: dict[str, str]) -> str:
    """findings.md from the claims table `frame` (every cell text, as `read_claims` gives it): the record,
    the title, where it came from, the summary, each claim, the figures (`links`: figure id -> its copy's
    path relative to findings.md)."""
    from depthwidth.plots.registry import FIGURES

    parts = [
        record_line(config, claims_sha256, frame),
        f"# What the {config} run finds",
        f"Made by `snakemake findings` from `{source}` (sha256 `{claims_sha256}`) of config `{config}`. "
        "`python -m depthwidth check results/` says when it no longer matches that file.",
        "## Summary",
        claims.summary(frame).rstrip("\n"),
        "## Each claim",
        *(claim_section(row, links, config).rstrip("\n") for _, row in frame.iterrows()),
    ]
    headline = {figure: link for figure, link in links.items() if figure in FINDINGS_FIGURES}
    if headline:
        parts.append("## Figures")
        parts += [f"### {FIGURES[figure].title}\n\n![{figure}]({link})" for figure, link in headline.items()]
    if others := [f"[{figure}]({link})" for figure, link in links.items() if figure not in headline]:
        parts.append(f"The run's other figures: {', '.join(others)}.")
    return "\n\n".join(parts) + "\n"


def copy_figures(pngs: list[Path], folder: Path, out: Path) -> dict[str, str]:
    """Copy each figure's PNG into `folder`; figure id -> the copy's path relative to `out`'s folder."""
    from depthwidth.plots.registry import FIGURES

    links = {}
    for png in pngs:
        if png.stem not in FIGURES or png.suffix != ".png":
            raise ValueError(f"{png}: not a figure's PNG (results/<config>/figures/<id>.png)")
        if not png.is_file():
            raise FileNotFoundError(f"{png}: no such figure (build the run first: snakemake --cores 2)")
        write_bytes(folder / png.name, png.read_bytes())
        links[png.stem] = Path(os.path.relpath(folder / png.name, out.parent)).as_posix()
    return links


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("claims", type=Path, help="the built run's results/<config>/claims.csv")
    parser.add_argument("--config-name", required=True, help="the name of the config the run was built with")
    parser.add_argument(
        "--figure",
        action="append",
        default=[],
        type=Path,
        help="a figure's PNG to copy beside the page (repeatable): every figure the run drew",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help=f"the file to write (default {findings_path('<config>')}, the default config's "
        f"{findings_path('default')})",
    )
    parser.add_argument(
        "--figures-dir", type=Path, help=f"where the figures are copied (default {findings_figures_dir('<config>')})"
    )


def run(args: argparse.Namespace) -> int:
    args.out = args.out or Path(findings_path(args.config_name))
    args.figures_dir = args.figures_dir or Path(findings_figures_dir(args.config_name))
    frame = read_claims(args.claims)
    links = copy_figures(args.figure, args.figures_dir, args.out)
    text = markdown(frame, args.config_name, args.claims.as_posix(), sha256_file(args.claims), links)
    write_text(args.out, text)
    print(f"{args.out}: {len(frame)} claims of config {args.config_name}, {len(links)} figures in {args.figures_dir}")
    return 0
