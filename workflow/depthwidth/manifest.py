"""`python -m depthwidth manifest results/ --configfile config/ci.yaml`: the sha256 of a config's numbers, to
compare a rebuild with.

tests/data/ci-manifest.json is config/ci.yaml's, built on the pinned numeric path (numerics.py), and
tests/test_ci_manifest.py rebuilds ci and compares, so that CI on either x86 machine fails when a number moves.
Three sections, each a name -> sha256 map: `runs` (each run's curve.csv, as the `curve_sha256` its
metrics.json records and `check` verifies), `tables` (each table the config builds, without the columns that
time a run, `columns.TIMED_COLUMNS`, which no two builds share) and `claims` (claims.csv).
The claims are a section of their own so that a change of claims.csv alone (new columns, same numbers)
regenerates that entry alone: `--write FILE --only claims` refuses when a run or a table moved.

A results folder is described only when `check` finds no problem in it and every run ran on the pinned path:
a manifest of runs trained on a machine's own kernels would hold that machine's numbers.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
from importlib import metadata
from pathlib import Path

from depthwidth import check
from depthwidth.columns import TIMED_COLUMNS
from depthwidth.io import read_json, sha256_file, write_json
from depthwidth.numerics import PINNED
from depthwidth.plan.config import read as read_config
from depthwidth.plan.jobs import Plan, from_config

SECTIONS = ("runs", "tables", "claims")
DEFAULT = Path("tests/data/ci-manifest.json")  # config/ci.yaml's, which the test compares against
# the libraries whose versions enter the numbers (tokenizers: the data's tokens): noted, never compared
VERSIONED = ("torch", "numpy", "scipy", "pandas", "tokenizers")


def describe(results: Path, plan: Plan) -> dict:
    """The manifest of the results folder `results` built from `plan`: its config's name, the numeric path, and
    each section's sha256 by name; ValueError listing what `check` or the numeric path finds wrong."""
    checked = check.check(results, plan)
    metrics = checked.runs  # the runs `check` read, as it read them
    problems = checked.problems + [
        f"{run_id}: trained on the native path ({run.get('numerics', {}).get('reason') or 'no numerics record'})"
        for run_id, run in sorted(metrics.items())
        if run.get("numerics", {}).get("path") != PINNED
    ]
    if problems:
        raise ValueError(f"{results}: no manifest of a results folder with problems: {_first_three(problems)}")
    claims_csv = plan.claims_files()[0]
    return {
        "config": plan.name,
        "numerics": PINNED,
        "runs": {run_id: run["curve_sha256"] for run_id, run in sorted(metrics.items())},
        "tables": {path: table_sha256(checked.file(path)) for path in sorted(map(plan.table_file, plan.tables))},
        "claims": {claims_csv: sha256_file(checked.file(claims_csv))},  # as the findings page records it
        "versions": {name: metadata.version(name) for name in VERSIONED},  # where the manifest is written
    }


def _first_three(lines: list[str]) -> str:
    """The first three of `lines` joined in one line, and how many more there are."""
    return "; ".join(lines[:3]) + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")


def table_sha256(path: Path) -> str:
    """sha256 of a table's bytes without its timed columns (`columns.TIMED_COLUMNS`, cut cell by cell as written);
    the file's own sha256 when it has none."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    keep = [i for i, name in enumerate(rows[0] if rows else []) if name not in TIMED_COLUMNS]
    if not rows or len(keep) == len(rows[0]):
        return sha256_file(path)
    cut = io.StringIO()
    csv.writer(cut, lineterminator="\n").writerows([[row[i] for i in keep] for row in rows])
    return hashlib.sha256(cut.getvalue().encode()).hexdigest()


def differences(expected: dict, got: dict, sections: tuple[str, ...] = SECTIONS) -> list[str]:
    """One line per entry of `sections` that differs between the manifest `expected` and `got` (and per other
    config or numeric path): `runs: <id>: curve sha256 1a2b3c4d5e6f, the manifest's 0f1e2d3c4b5a`."""
    lines = [
        f"{key}: {got.get(key)!r}, the manifest's {expected.get(key)!r}"
        for key in ("config", "numerics")
        if got.get(key) != expected.get(key)
    ]
    for section in sections:
        ours, theirs = got.get(section, {}), expected.get(section, {})
        for name in sorted(ours.keys() | theirs.keys()):
            if name not in theirs:
                lines.append(f"{section}: {name}: built, not in the manifest")
            elif name not in ours:
                lines.append(f"{section}: {name}: in the manifest, not built")
            elif ours[name] != theirs[name]:
                lines.append(f"{section}: {name}: sha256 {ours[name][:12]}, the manifest's {theirs[name][:12]}")
    return lines


def version_notes(expected: dict, got: dict) -> list[str]:
    """The libraries installed at another version than where the manifest `expected` was written (a clue to a
    difference, no difference itself)."""
    theirs = expected.get("versions", {})
    return [
        f"{name} {v} here, {theirs.get(name)} in the manifest"
        for name, v in got["versions"].items()
        if v != theirs.get(name)
    ]


def updated(manifest: dict, got: dict, only: tuple[str, ...]) -> dict:
    """`manifest` with the sections `only` taken from `got`; ValueError naming what moved in the others."""
    moved = differences(manifest, got, tuple(s for s in SECTIONS if s not in only))
    if moved:
        raise ValueError(
            f"--only {' '.join(only)}: the other sections moved too ({_first_three(moved)}); without --only all move"
        )
    return {**manifest, **{section: got[section] for section in only}}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, help="the results folder (results/)")
    parser.add_argument(
        "--configfile", type=Path, default=Path("config/ci.yaml"), help="its config (default config/ci.yaml)"
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--compare", type=Path, help=f"exit 1 listing what differs from this manifest ({DEFAULT})")
    action.add_argument("--write", type=Path, help=f"write the manifest here ({DEFAULT} for config/ci.yaml)")
    parser.add_argument(
        "--only", action="append", choices=SECTIONS, help="with --write: replace only this section (repeatable)"
    )


def read_manifest(path: Path) -> dict:
    """A manifest file; ValueError naming it where it is no JSON object of name -> sha256 sections."""
    manifest = read_json(path)
    bad = [s for s in SECTIONS if not isinstance(manifest, dict) or not isinstance(manifest.get(s, {}), dict)]
    if bad:
        raise ValueError(f"{path}: not a manifest (a JSON object whose {', '.join(bad)} map names to sha256)")
    return manifest


def run(args: argparse.Namespace) -> int:
    if args.only and not args.write:
        raise ValueError("--only: goes with --write")
    # the manifest read first: a bad one is named before the results are hashed
    expected = read_manifest(args.compare) if args.compare else None
    kept = read_manifest(args.write) if args.write and args.only else None
    got = describe(check.results_folder(args.results), from_config(read_config(args.configfile)))
    if args.compare:
        lines = differences(expected, got)
        print(f"{args.results} against {args.compare}: {len(lines)} differences")
        notes = version_notes(expected, got)
        print("".join(f"  - {line}\n" for line in lines) + "".join(f"  note: {n}\n" for n in notes), end="")
        return 1 if lines else 0
    if args.write:
        manifest = updated(kept, got, tuple(args.only)) if args.only else got
        write_json(args.write, manifest)
        print(f"{args.write}: {', '.join(f'{len(manifest[s])} {s}' for s in SECTIONS)} of config {got['config']}")
        return 0
    print(json.dumps(got, indent=2, sort_keys=True))
    return 0
