"""`sweep-table`: one sweep experiment's runs (their metrics.json files) as one table, SWEEP_COLUMNS, and with
`--curves-out` their training curves (tables.curves)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from depthwidth import fits, rates, stalls
from depthwidth.columns import EXPERIMENTS, SENSITIVITY_PREFIX, SWEEP_COLUMNS
from depthwidth.contracts import RESULTS, digest
from depthwidth.io import read_run_metrics, write_text
from depthwidth.options import json_option
from depthwidth.spec import Run, run_from_plan
from depthwidth.tables import bits, curves


def run_row(run_id: str, run: Run, metrics: dict, scan: dict | None, *, bytes_per_token: float) -> dict:
    """One row of a sweep table, SWEEP_COLUMNS: the plan's knobs, the run's measured numbers (its loss also in bits
    per byte, the val split holding `bytes_per_token`), and the final round of its shape's learning-rate scan
    (`scan`, None without one)."""
    shape = run.shape
    excess = scan["excess_pct"] if scan else None
    vertex = {key: _number(scan.get(key) if scan else None) for key in VERTEX_KEYS}  # `frame` reads them
    return vertex | {
        "experiment": run.experiment,
        "run_id": run_id,
        "seed": run.seed,
        "n_target": run.n_target,
        "n_layer": shape.n_layer,
        "d_model": shape.d_model,
        "n_head": shape.n_head,
        "d_head": shape.d_head,
        "d_ff": shape.d_ff,
        "aspect_ratio": shape.aspect_ratio,
        "ff_ratio": shape.d_ff / shape.d_model,
        "n_nonembedding": metrics["n_params_nonembedding"],
        "n_total": metrics["n_params_total"],
        "n_kaplan": metrics["n_params_kaplan"],
        "lr_factor": run.lr_factor,
        "lr_peak": metrics["lr_peak"],
        "lr_scan": scan["scan"]["id"] if scan else "",
        "lr_choice": scan["why"] if scan else "",
        "lr_excess_pct": math.nan if excess is None else excess,  # the smooth part; `frame` adds the vertex's
        "lr_vertex_pct": math.nan,
        "tokens_seen": metrics["tokens_seen"],
        "tokens_per_parameter": metrics["tokens_per_parameter"],
        "epochs": metrics["epochs"],
        "train_flops": metrics["train_flops_matmul"],  # every matmul of training, LM head and attention included
        "final_val_loss": metrics["final_val_loss"],
        "best_val_loss": metrics["best_val_loss"],
        "final_val_bpb": bits.bits_per_byte(metrics["final_val_loss"], bytes_per_token),  # nan: diverged
        "status": metrics["status"],
        "wall_seconds": metrics["wall_seconds"],
        "tokens_per_second": metrics["tokens_per_second"],
    }


def planned_metrics(runs_dir: Path, run_id: str) -> dict:
    """A run's metrics.json (`io.read_run_metrics`), once the spec it records is the one its id names (the id
    ends in the spec's digest); ValueError naming the folder for a run folder copied or renamed to this id."""
    folder = Path(runs_dir) / run_id
    metrics = read_run_metrics(folder)
    recorded = digest(metrics["spec"]) if isinstance(metrics.get("spec"), dict) else None
    if recorded != run_id.rsplit("-", 1)[-1]:
        raise ValueError(
            f"{folder}/metrics.json: records the spec of another run (digest {recorded}), not of {run_id} "
            "(a folder copied or renamed?): retrain it"
        )
    return metrics


def table(runs: dict[str, Run], runs_dir: Path, scans: dict[str, dict] | None = None):
    """The sweep table (a DataFrame) of one experiment from its runs' metrics.json files and, for a run
    trained at its scan's chosen rate, that scan's final round (`scans`: run id -> record); ValueError
    naming the file for a run whose curve.csv is not the one its metrics.json records."""
    scans = scans or {}
    rows = []
    for rid, run in runs.items():
        metrics = planned_metrics(runs_dir, rid)
        per_token = bits.val_bytes_per_token(bits.data_dir(runs_dir, metrics["spec"]))  # the data it trained on
        rows.append(run_row(rid, run, metrics, scans.get(rid), bytes_per_token=per_token))
    return frame(rows)


VERTEX_KEYS = ("vertex_factor_pct", "vertex_cap_pct")  # the scan's final round: how noise moves its vertex


def _number(value) -> float:
    return math.nan if value is None else float(value)


def frame(rows: list[dict]) -> pd.DataFrame:
    """A sweep table of `run_row`s, each run flagged against its shape's other seeds at its rate (stalls.flag), and
    each scanned run's excess completed with its scan's vertex noise (`vertex_pct`)."""
    flags = stalls.flag(rows)
    flagged = [{**row, "stall_excess_pct": excess, "stalled": stall} for row, (excess, stall) in zip(rows, flags)]
    for row, vertex in zip(flagged, vertex_pct(flagged)):
        row["lr_vertex_pct"] = vertex
        row["lr_excess_pct"] = row["lr_excess_pct"] + vertex if math.isfinite(vertex) else row["lr_excess_pct"]
    return pd.DataFrame(flagged, columns=list(SWEEP_COLUMNS))


def vertex_pct(rows: list[dict]) -> list[float]:
    """Each run's expected loss above its shape's true best from the noise of the scouts that placed its rate's
    vertex (`rates.vertex_noise`): the scan's factor x sigma^2, at most its cap, sigma^2 the shape's moderated
    seed variance of ln(loss) (fits.moderated_variances over the table's shapes at their rates, the flagged runs
    left out: a scout is one healthy seed); nan where the scan fitted no vertex or nothing measures sigma."""
    groups = stalls.seed_groups(rows)
    log_losses = [
        [math.log(rows[i]["final_val_loss"]) for i in members if rows[i]["status"] == "ok" and not rows[i]["stalled"]]
        for members in groups
    ]
    variances = fits.moderated_variances(log_losses).variances if groups else ()
    out = [math.nan] * len(rows)
    for members, variance in zip(groups, variances):
        for i in members:
            factor, cap = (rows[i][key] for key in VERTEX_KEYS)
            out[i] = min(factor * variance, cap) if math.isfinite(factor * variance) else math.nan
    return out


def experiment(name: str) -> str:
    """A sweep experiment's name (argparse type): one of EXPERIMENTS or a confound's (plan.sweep.Sensitivity)."""
    if name in EXPERIMENTS or (name.startswith(SENSITIVITY_PREFIX) and len(name) > len(SENSITIVITY_PREFIX)):
        return name
    raise argparse.ArgumentTypeError(f"{name!r} is none of {', '.join(EXPERIMENTS)}, nor {SENSITIVITY_PREFIX}<name>")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--experiment", required=True, type=experiment, help=f"one of {', '.join(EXPERIMENTS)}, "
                        f"or a confound of the sensitivity block ({SENSITIVITY_PREFIX}<name>)")  # fmt: skip
    parser.add_argument("--runs-json", required=True, help="run id -> run_plan(run), as the workflow planned them")
    parser.add_argument("--runs-dir", type=Path, default=Path(RESULTS, "runs"), help="the runs' folder")
    parser.add_argument("--out", required=True, type=Path, help="the table's file (the plan's table_file)")
    parser.add_argument("--curves-out", type=Path, help="also write the runs' training curves (tables.curves)")


def run(args: argparse.Namespace) -> int:
    planned = json_option(args.runs_json, "--runs-json")
    runs = {rid: run_from_plan(args.experiment, row) for rid, row in planned.items()}
    results = Path(args.runs_dir).parent
    scans = {}
    for rid, row in planned.items():
        if row.get("lr_scan"):
            scans[rid] = rates.final_round(row["lr_scan"], results)
            if scans[rid] is None:
                raise SystemExit(f"sweep-table: the learning-rate scan {row['lr_scan']} of run {rid} has not chosen")
    frame = table(runs, args.runs_dir, scans)
    write_text(args.out, frame.to_csv(index=False))
    if args.curves_out:  # the runs' curve.csv files, each checked against its metrics.json by `table`
        write_text(args.curves_out, curves.table(frame["run_id"], args.runs_dir).to_csv(index=False))
    print(f"{args.experiment}: {len(frame)} runs ({(frame.status != 'ok').sum()} not ok) -> {args.out}")
    return 0
