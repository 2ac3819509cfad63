"""`rate-scans`: what each learning-rate scan of a config found (`sweep.lr_grid`, depthwidth.rates), one row
a shape: the factors its scouts tried with each one's loss above the best scout's, the factor and peak rate
it chose and why, the excess at the choice (over the best below the cliff, and over the best it may take,
a factor 2 below the cliff), what its confirmation seeds found at the best scout's rate, and its rounds.
Read from the rounds on disk as the workflow reads them (up to the first that chose); a scan still running
shows its last round."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from depthwidth import contracts, rates
from depthwidth.plan.config import add_override_arguments, read_overridden

COLUMNS = (
    "shape",
    "scan",
    "rounds",
    "done",
    "tried",
    "chosen_factor",
    "chosen_lr",
    "why",
    "excess_pct",
    "excess_stable_pct",
    "stalled",
    "confirmed",
)


def rounds(scan, results: Path) -> list[dict]:
    """The rounds of a scan the workflow reads (`rates.read_rounds`: up to the first that chose), under the
    results folder `results`."""
    return rates.read_rounds(scan.id, results, scan.spec)


def scan_row(scan, records: list[dict], base_lr: float) -> dict:
    """One scan's row; `base_lr`: the recipe's rate for its shape (factor 1)."""
    if not records:
        return {"shape": scan.id.rsplit("-", 1)[0], "scan": scan.id, "rounds": 0, "done": False}
    last = records[-1]
    best = min((s["loss"] for s in last["scouts"] if s["ok"] and s["loss"] is not None), default=float("nan"))
    tried = ", ".join(
        f"x{rates.lattice_factor(s['k']):.3g} "
        + (f"{100 * (s['loss'] / best - 1):+.1f}%" if s["ok"] and s["loss"] is not None else "diverged")
        for s in last["scouts"]
    )
    chosen = last["chosen"]
    return {
        "shape": scan.id.rsplit("-", 1)[0],
        "scan": scan.id,
        "rounds": len(records),
        "done": last["done"],
        "tried": tried,
        "chosen_factor": None if chosen is None else rates.lattice_factor(chosen),
        "chosen_lr": None if chosen is None else base_lr * rates.lattice_factor(chosen),
        "why": last["why"],
        "excess_pct": last["excess_pct"],
        "excess_stable_pct": last.get("excess_stable_pct"),
        "stalled": ", ".join(f"x{rates.lattice_factor(k):.3g}" for k in last["stalled"]),
        "confirmed": confirmed(last),
    }


def confirmed(record: dict) -> str:
    """What the confirmation seeds found at the best scout's rate: each one's loss above the scout's there
    (`diverged`), and what came of it: the rate chosen, a seed stalled there (the margin kept), or their mean
    moved the best below it; empty where none were asked for."""
    if not record.get("confirmations"):
        return ""
    k = record["confirmations"][0]["k"]
    scout = next(s["loss"] for s in record["scouts"] if s["k"] == k)
    found = ", ".join(
        f"{100 * (c['loss'] / scout - 1):+.1f}%" if c["ok"] and c["loss"] is not None else "diverged"
        for c in record["confirmations"]
    )
    if record.get("confirmed") is None:  # a round that has not read them yet
        return f"x{rates.lattice_factor(k):.3g}: {found}"
    if not record["confirmed"]:
        outcome = "stalled: margin kept"
    else:
        outcome = "chosen" if record.get("chosen") == k else "trained; their mean moved the best below"
    return f"x{rates.lattice_factor(k):.3g}: {found} ({outcome})"


def table(plan, results: Path) -> pd.DataFrame:
    """Every scan of a plan, in plan order."""
    rows = []
    for scan in plan.scans.values():
        base = plan.job(scan.scout(0)).spec["recipe"]["lr"] if (0, scan.scout_seed) in scan.runs else float("nan")
        rows.append(scan_row(scan, rounds(scan, results), base))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, nargs="?", default=Path(contracts.RESULTS), help="the results folder")
    parser.add_argument("--configfile", type=Path, default=Path("config/config.yaml"), help="the config")
    add_override_arguments(parser)
    parser.add_argument("--csv", type=Path, help="also write the table here")


def run(args: argparse.Namespace) -> int:
    from depthwidth.check import results_folder
    from depthwidth.io import write_text
    from depthwidth.plan.jobs import from_config

    plan = from_config(read_overridden(args.configfile, args.config))
    if not plan.scans:
        print(f"{args.configfile}: no learning-rate scans (sweep.lr_grid is off)")
        return 0
    # a mistyped folder reads as scans that never ran: every row 0 rounds, and exit 0
    frame = table(plan, results_folder(args.results))
    with pd.option_context("display.max_rows", None, "display.width", 250, "display.max_colwidth", 80):
        print(frame.drop(columns=["scan"]).to_string(index=False))
    excess = frame["excess_pct"].dropna()
    print(
        f"\n{len(frame)} scans, {int(frame['done'].sum())} chosen; excess at the choice: median "
        f"{excess.median():.2f}%, largest {excess.max():.2f}% ({len(excess)} known)"
        if len(excess)
        else f"\n{len(frame)} scans, {int(frame['done'].sum())} chosen"
    )
    if args.csv:
        write_text(args.csv, frame.to_csv(index=False))
    return 0
