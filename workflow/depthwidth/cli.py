"""The one command line through which the workflow (and people) call the package.

`python -m depthwidth <command> [options]`. Each command lives in its own module, which
defines `add_arguments(parser)` and `run(args) -> int`; only the chosen command's module is
imported, so light commands never pay for importing torch.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from depthwidth import runlock, scratch
from depthwidth.io import NoSpaceError

# command name -> (module, one-line summary)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate-config": ("depthwidth.plan.validate", "check a workflow config file; exit 1 naming the bad key"),
    "plan": ("depthwidth.plan.runsheet", "print the run sheet of a config: runs, tokens, FLOPs, estimated time"),
    "prepare-data": ("depthwidth.data.tokens", "read a corpus, train the BPE tokenizer, write token shards"),
    "train": ("depthwidth.train.loop", "train one model from a spec JSON; write metrics.json and curve.csv"),
    "rate-scan": ("depthwidth.rates", "one round of a shape's learning-rate scan: more scouts, or the chosen rate"),
    "rate-scans": ("depthwidth.rate_scans", "what each learning-rate scan of a config tried and chose"),
    "stalls": ("depthwidth.stalls", "stalled seeds and flat rate curves in lr_check tables, side by side"),
    "tilt": (
        "depthwidth.tilt",
        "what a protocol choice does to depth comparisons: two lr_check tables paired run by run",
    ),
    "shaped-sim": ("depthwidth.shaped.simulate", "shaped-Transformer tables: `samples` (terminal law) or `trajectory`"),
    "shaped-training-table": (
        "depthwidth.tables.entropy",
        "collect the shaped-vs-standard training runs into one table",
    ),
    "concat-tables": ("depthwidth.tables.concat", "stack CSV tables with the same columns"),
    "sweep-table": ("depthwidth.tables.sweep", "collect one sweep experiment's metrics.json files into a table"),
    "glue-fetch": ("depthwidth.glue.tasks", "fetch one GLUE task (CoLA, RTE) and parse its train and dev TSVs"),
    "glue-pretrain": ("depthwidth.glue.pretrain", "pretrain one model for GLUE from a train spec; keep its weights"),
    "glue-finetune": ("depthwidth.glue.finetune", "fine-tune a pretrained model on one GLUE task and seed; dev scores"),
    "glue-table": ("depthwidth.glue.table", "collect the GLUE fine-tunings' dev scores into one table"),
    "figure": ("depthwidth.plots.common", "draw one figure (PNG, PDF and the plotted rows as CSV)"),
    "claims": ("depthwidth.claims", "evaluate every paper claim on the figures' data: claims.csv and claims.md"),
    "decide": (
        "depthwidth.claims.decide",
        "what would decide each inconclusive row: its own rule on its tables redrawn at more seeds per shape",
    ),
    "second-stage": (
        "depthwidth.claims.second",
        "what the second stage asks for: fresh seeds per shape for the rows look 1 left open, within the budget",
    ),
    "sensitivity": (
        "depthwidth.claims.sensitivity",
        "the depth pairs' gains under each confound of the sensitivity block, and what each depth row survives",
    ),
    "findings": (
        "depthwidth.claims.findings",
        "write docs/findings.md from a built run's claims.csv and copy its headline figures beside it",
    ),
    "check": (
        "depthwidth.check",
        "verify every artifact a config promises against its schema; exit 1 listing problems",
    ),
    "manifest": (
        "depthwidth.manifest",
        "the sha256 of a config's runs, tables and claims: print, compare with or write a manifest",
    ),
    "bench": (
        "depthwidth.benchmarks",
        "print speed figures: `bench train`, `bench sweep`, `bench pack` or `bench sde`",
    ),
    "records": (
        "depthwidth.records",
        "pack a config's trained and simulated records in one archive, or unpack one under results/",
    ),
    "clean": (
        "depthwidth.clean",
        "delete what one config built and no other known config plans (results/<name>/, its runs, corpus, simulations)",
    ),
}


# Commands that read the checkout they run in (its config, its results) as the workflow's jobs would: an
# installed copy with other code would report what those jobs never did. (The jobs themselves run the
# checkout's package: the rules put it first on PYTHONPATH.)
CHECKOUT_COMMANDS = ("check", "plan", "clean", "manifest")


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items()]
    return "usage: python -m depthwidth <command> [options] | --version\n\ncommands:\n" + "\n".join(lines)


def stale_install(checkout: Path) -> str | None:
    """Why this package must not run in `checkout`: it is an installed copy (not a checkout's own
    workflow/depthwidth) whose modules differ from those of the checkout, so it would plan or
    check with other code than the workflow's jobs run. None if it may."""
    here = Path(__file__).resolve().parent
    theirs = checkout / "workflow" / "depthwidth"
    if not theirs.is_dir() or theirs.resolve() == here:
        return None
    if (here.parents[1] / "Snakefile").is_file():  # a checkout's own package: the caller chose it
        return None
    ours, other = ({p.relative_to(d): p.read_bytes() for p in d.rglob("*.py")} for d in (here, theirs))
    differ = sorted(str(name) for name in ours.keys() | other.keys() if ours.get(name) != other.get(name))
    if not differ:
        return None
    return (
        f"the installed depthwidth ({here}) differs from this checkout's {theirs} ({differ[0]}"
        f"{f' and {len(differ) - 1} more' if len(differ) > 1 else ''}); "
        "run `pip install -e .` here, or `PYTHONPATH=workflow python -m depthwidth ...`"
    )


def version() -> str:
    """The installed package's version (pyproject.toml's, the one place it is written)."""
    from importlib import metadata

    try:
        return metadata.version("depthwidth")
    except metadata.PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in {"-h", "--help"}:
        print(_usage())
        return 0
    if argv[0] in {"-V", "--version"}:
        print(f"depthwidth {version()}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"depthwidth: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    if name in CHECKOUT_COMMANDS and (problem := stale_install(Path.cwd())):
        print(f"depthwidth {name}: error: {problem}", file=sys.stderr)
        return 1
    module_name, summary = COMMANDS[name]
    module = importlib.import_module(module_name)
    # no abbreviations: `check --config` was "ambiguous" between --configfile and --config-json
    parser = argparse.ArgumentParser(prog=f"python -m depthwidth {name}", description=summary, allow_abbrev=False)
    module.add_arguments(parser)
    args = parser.parse_args(rest)
    try:
        if name == "prepare-data":  # nothing of a killed run left behind (scratch.py)
            with scratch.prepare_data_scratch(args.out):
                return int(module.run(args) or 0)
        if name == "train":  # one job at a time per run (runlock.py)
            return _train_alone(module, args)
        return int(module.run(args) or 0)
    except (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError, NoSpaceError) as err:
        # Input errors (a path that is missing, a folder, under a file, unreadable) and a full disk: one clear line,
        # no traceback; each names its path.
        print(f"depthwidth {name}: error: {err}", file=sys.stderr)
        return 1


def _train_alone(module, args: argparse.Namespace) -> int:
    """`train` holding its run's lock; a job that waited for another's keeps the outputs that one wrote."""
    from depthwidth.train.checkpoint import default_checkpoint_dir

    with runlock.run_lock(args.checkpoint_dir or default_checkpoint_dir(args.out)) as waited:
        if waited and args.spec_json and runlock.trained(args.out, _json_or_none(args.spec_json)) is not None:
            print(f"depthwidth train: the job it waited for trained this run: {args.out} stands", file=sys.stderr)
            return 0
        return int(module.run(args) or 0)


def _json_or_none(text: str) -> dict | None:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None  # the command names it
