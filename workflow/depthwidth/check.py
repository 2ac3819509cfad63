"""`python -m depthwidth check results/ --configfile C`: every artifact the config promises, against its schema.

Checks the corpus shards against meta.json, each run's metrics.json and curve.csv, each table's
columns and values, each figure's PNG, PDF and data CSV, and the claims table (one row per claim,
each verdict recomputed by its rule from the figures' data). Exits 1 with the list of problems.
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import claims, sweep
from depthwidth import config as config_module
from depthwidth.plan import ENTROPY_TABLE, SDE_TERMINAL, TRAJECTORY, Plan, from_config, table_path
from depthwidth.shaped_sim import TERMINAL_COLUMNS, TRAJECTORY_COLUMNS
from depthwidth.shaped_training import TABLE_COLUMNS as ENTROPY_COLUMNS

META_FIELDS = ["corpus", "sources", "vocab_size", "eot_id", "dtype", "split_rule", "val_fraction", "splits"]
METRICS_FIELDS = [
    "spec",
    "n_params_total",
    "n_params_nonembedding",
    "n_params_kaplan",
    "tokens_seen",
    "final_val_loss",
    "best_val_loss",
    "train_flops_estimate",
    "wall_seconds",
    "tokens_per_second",
    "device",
    "status",
    "package_version",
    "git_revision",
]
CURVE_COLUMNS = ["step", "tokens", "train_loss", "val_loss", "lr"]
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF"}


class Checker:
    """Collects problems (one line each) while checking the artifacts under `root` (the workdir)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.problems: list[str] = []
        self.checked = 0

    def problem(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def exists(self, path: str) -> bool:
        self.checked += 1
        if not (self.root / path).is_file():
            self.problem(path, "missing")
            return False
        return True

    def csv(self, path: str, columns: list[str], exact: bool = True, allow_empty: bool = False) -> pd.DataFrame | None:
        """The table at `path` if it exists and has the columns (exactly, or at least).

        allow_empty: a header without rows is valid (a figure can honestly have nothing to plot,
        e.g. no crossover between depths).
        """
        if not self.exists(path):
            return None
        try:
            frame = pd.read_csv(self.root / path)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            self.problem(path, f"unreadable CSV ({err.__class__.__name__})")
            return None
        got = list(frame.columns)
        if (exact and got != list(columns)) or (not exact and not set(columns) <= set(got)):
            missing = [c for c in columns if c not in got]
            self.problem(
                path,
                f"columns {got} do not match the schema (missing {missing})"
                if missing
                else f"columns {got} differ from the schema {list(columns)}",
            )
            return None
        if frame.empty and not allow_empty:
            self.problem(path, "no rows")
            return None
        return frame

    def json(self, path: str, fields: list[str]) -> dict | None:
        if not self.exists(path):
            return None
        try:
            obj = json.loads((self.root / path).read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.problem(path, "not valid JSON")
            return None
        missing = [f for f in fields if f not in obj]
        if missing:
            self.problem(path, f"lacks the fields {missing}")
            return None
        return obj


def check_data(c: Checker, plan: Plan) -> None:
    folder = plan.data_dir
    c.exists(f"{folder}/tokenizer.json")
    meta = c.json(f"{folder}/meta.json", META_FIELDS)
    if meta is None:
        return
    itemsize = np.dtype(meta["dtype"]).itemsize
    for split in ("train", "val"):
        path = f"{folder}/{split}.bin"
        if c.exists(path):
            size = (c.root / path).stat().st_size
            if size != meta["splits"][split]["tokens"] * itemsize:
                c.problem(path, f"{size} bytes, meta.json says {meta['splits'][split]['tokens']} x {itemsize}")


def check_runs(c: Checker, plan: Plan) -> None:
    for job in plan.runs.values():
        folder, spec = job.folder, job.spec
        metrics = c.json(f"{folder}/metrics.json", METRICS_FIELDS)
        if metrics is not None:
            if metrics["status"] not in ("ok", "diverged"):
                c.problem(f"{folder}/metrics.json", f"status {metrics['status']!r} is not ok or diverged")
            if metrics["status"] == "ok" and not np.isfinite(metrics["final_val_loss"] or np.nan):
                c.problem(f"{folder}/metrics.json", "status ok but final_val_loss is not finite")
            if metrics["spec"]["seed"] != spec["seed"] or any(
                metrics["spec"]["model"][k] != v for k, v in spec["model"].items() if k != "shaped" and v is not None
            ):
                c.problem(f"{folder}/metrics.json", "its spec is not the one the config plans for this run")
        c.csv(f"{folder}/curve.csv", CURVE_COLUMNS)
        if ENTROPY_TABLE in job.tables:
            c.csv(f"{folder}/entropy.csv", ["step", "layer", "head", "entropy"])


def check_tables(c: Checker, plan: Plan) -> None:
    for experiment, runs in plan.sweep.items():
        path = table_path(f"sweep_{experiment}")
        table = c.csv(path, sweep.TABLE_COLUMNS)
        if table is not None and sorted(table["run_id"]) != sorted(runs):
            c.problem(path, "its runs are not the runs the config plans")
    if plan.simulations:
        terminal = c.csv(table_path(SDE_TERMINAL), TERMINAL_COLUMNS)
        if terminal is not None:
            ok = terminal[terminal["status"] == "ok"]["rho01"]
            if not ok.between(-1 - 1e-9, 1 + 1e-9).all():
                c.problem(table_path(SDE_TERMINAL), "a finished sample has |rho01| > 1")
            if not set(terminal["status"]) <= {"ok", "not_psd", "blowup"}:
                c.problem(table_path(SDE_TERMINAL), f"unknown status values {sorted(set(terminal['status']))}")
        c.csv(table_path(TRAJECTORY), TRAJECTORY_COLUMNS)
    if plan.entropy_runs:
        c.csv(table_path(ENTROPY_TABLE), ENTROPY_COLUMNS)


def check_figures(c: Checker, plan: Plan) -> list[Path]:
    """Each figure's PNG, PDF and CSV; returns the CSVs that passed (the claims read them)."""
    good = []
    for figure in plan.figures:
        for suffix, magic in MAGIC.items():
            path = f"results/figures/{figure}{suffix}"
            if c.exists(path) and (c.root / path).read_bytes()[: len(magic)] != magic:
                c.problem(path, f"not a {suffix[1:].upper()} file")
        columns = importlib.import_module(f"depthwidth.plots.{figure}").COLUMNS
        if c.csv(f"results/figures/{figure}.csv", columns, exact=False, allow_empty=True) is not None:
            good.append(c.root / f"results/figures/{figure}.csv")
    return good


def check_claims(c: Checker, figure_csvs: list[Path]) -> None:
    stored = c.csv("results/claims.csv", claims.COLUMNS)
    if stored is None:
        return
    expected = claims.table(figure_csvs, scale_note="")
    if sorted(stored["id"]) != sorted(expected["id"]):
        c.problem("results/claims.csv", f"claims {sorted(stored['id'])} differ from {sorted(expected['id'])}")
        return
    merged = stored.merge(expected, on="id", suffixes=("", "_recomputed"))
    for row in merged.itertuples():
        if row.verdict != row.verdict_recomputed:
            c.problem(
                "results/claims.csv", f"{row.id}: verdict {row.verdict!r}, its rule gives {row.verdict_recomputed!r}"
            )


def check(root: Path, plan: Plan) -> Checker:
    """Run every check of the artifacts a plan promises under `root` (the folder that holds results/)."""
    c = Checker(root)
    check_data(c, plan)
    check_runs(c, plan)
    check_tables(c, plan)
    check_claims(c, check_figures(c, plan))
    return c


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, help="the results/ folder to check")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--configfile",
        type=Path,
        default=Path("config/config.yaml"),
        help="the config the results were built with (default config/config.yaml)",
    )
    source.add_argument("--config-json", help="the config as JSON (as the workflow's `check` rule passes it)")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")


def run(args: argparse.Namespace) -> int:
    from depthwidth.io import write_text

    raw = json.loads(args.config_json) if args.config_json else config_module.read(args.configfile)
    plan = from_config(raw)
    c = check(args.results.resolve().parent, plan)
    lines = [f"checked {c.checked} artifacts of config {plan.config['name']}: {len(c.problems)} problems"]
    lines += [f"  - {p}" for p in c.problems]
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.out and not c.problems:
        write_text(args.out, report)
    return 1 if c.problems else 0
