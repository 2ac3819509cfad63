"""`python -m depthwidth check results/ --configfile C`: every artifact the config promises, against its schema.

The argument is the results folder itself. Checks the data folder against meta.json (keys,
and the size and sha256 of every file it records), each run's metrics.json (fields, types,
its whole spec against the plan's and its id, every count, rate and FLOPs figure recomputed from that spec,
final loss against its curve.csv), curve.csv and entropy.csv
(against the sha256 metrics.json records), each table's columns and values (a sweep table's rows
against its runs' metrics.json), each figure's PNG (decoded in full), PDF and data CSV, and the
claims table and claims.md (every row recomputed by its rule from the figures' data). Exits 1
with the list of problems.

It also notes (a note, not a problem: the exit status stays 0) whether docs/findings.md beside the
results folder, made for the config being checked, was made from this claims.csv (the sha256 its first
line records): when it was, the committed findings reproduce here byte for byte; when not, that file
describes the run committed with it, which a run off the pinned numeric path (numerics.py) may honestly
differ from.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import claims, contracts, fits, rates, tilt
from depthwidth.claims import decide, findings, sensitivity
from depthwidth.claims import second as second_stage
from depthwidth.claims.registry import BY_ID
from depthwidth.columns import (
    CURVES_COLUMNS,
    DECISIONS_COLUMNS,
    ENTROPY_TABLE_COLUMNS,
    LR_CHECK,
    SENSITIVITY_COLUMNS,
    SWEEP_COLUMNS,
    TERMINAL_COLUMNS,
    TRAJECTORY_COLUMNS,
    curves_table,
)
from depthwidth.contracts import (
    CURVE_COLUMNS,
    ENTROPY_COLUMNS,
    ENTROPY_TABLE,
    RUN_DIGESTS,
    RUN_STATUSES,
    SDE_TERMINAL,
    TRAJECTORY,
    digest,
    sweep_table,
)
from depthwidth.data import tokens
from depthwidth.glue.contracts import GLUE_TABLE, SPLITS
from depthwidth.glue.contracts import TABLE_COLUMNS as GLUE_TABLE_COLUMNS
from depthwidth.io import file_problem, run_file_problem, sha256_file
from depthwidth.options import json_option
from depthwidth.plan.config import add_override_arguments, read_overridden
from depthwidth.plan.jobs import Plan, from_config
from depthwidth.plan.second import ENTROPY_FIGURE, SDE_FIGURE, look_figure
from depthwidth.shaped.sde import STATUS_NAMES
from depthwidth.spec import ABSENT, Run, run_from_plan, spec_differences
from depthwidth.tables import bits
from depthwidth.tables.sweep import frame as sweep_frame
from depthwidth.tables.sweep import run_row
from depthwidth.train.loop import training_steps
from depthwidth.train.outputs import derived_metrics

META_FIELDS = ["corpus", "sources", "vocab_size", "eot_id", "dtype", "split_rule", "val_fraction", "splits"]
METRICS_FIELDS = [
    "spec",
    "spec_hash",
    "steps",
    "tokens_per_step",
    "train_tokens",
    "train_flops_matmul",
    "n_params_total",
    "n_params_nonembedding",
    "n_params_kaplan",
    "tokens_seen",
    "tokens_per_parameter",
    "epochs",
    "final_val_loss",
    "best_val_loss",
    "train_flops_estimate",
    "wall_seconds",
    "tokens_per_second",
    "device",
    "status",
    "lr_peak",
    "curve_sha256",
    "entropy_sha256",
    "package_version",
    "git_revision",
]
# numbers in every metrics.json (null allowed only where a run can honestly have none)
METRICS_NUMBERS = ["n_params_total", "n_params_nonembedding", "n_params_kaplan", "tokens_seen", "train_flops_estimate"]
METRICS_NUMBERS_OR_NULL = ["final_val_loss", "best_val_loss", "wall_seconds", "tokens_per_second"]
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF"}


class Checker:
    """Collects problems (one line each), and notes that are no problem, while checking the artifacts in
    the results folder `results`.

    Artifacts are named as the workflow names them (`results/...`, contracts.RESULTS); problems name them
    under `label` (the folder as the user gave it).
    """

    def __init__(self, results: Path, label: str = "results"):
        self.results = Path(results)
        self.label = label.rstrip("/") or "/"
        self.problems: list[str] = []
        self.notes: list[str] = []  # worth saying, no reason to fail
        self.checked = 0
        self.runs: dict[str, dict] = {}  # the metrics.json of every run it read, by run id (`read_runs`)
        self.asked: dict[str, int] = {}  # with two looks: what the second stage asked for (`read_second_stage`)

    def file(self, path: str) -> Path:
        """Where the artifact `results/...` lies."""
        return self.results / Path(path).relative_to(contracts.RESULTS)

    def problem(self, path: str, message: str) -> None:
        inside = path.startswith(f"{contracts.RESULTS}/")
        name = f"{self.label}/{Path(path).relative_to(contracts.RESULTS)}" if inside else path
        self.problems.append(f"{name}: {' '.join(str(message).split())}")  # one line, whatever the message

    def exists(self, path: str) -> bool:
        self.checked += 1
        if not self.file(path).is_file():
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
            frame = pd.read_csv(self.file(path))
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
            obj = json.loads(self.file(path).read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            self.problem(path, "not valid JSON")
            return None
        if not isinstance(obj, dict):
            self.problem(path, "not a JSON object")
            return None
        missing = [f for f in fields if f not in obj]
        if missing:
            self.problem(path, f"lacks the fields {missing}")
            return None
        return obj


def check_data(c: Checker, plan: Plan) -> dict[str, int | None]:
    """Each corpus folder the config trains on (`check_corpus`): its train split's size in tokens, by folder."""
    return {folder: check_corpus(c, folder) for folder in plan.data_blocks()}


def check_corpus(c: Checker, folder: str) -> int | None:
    """meta.json's keys, and every file it records (train.bin, val.bin, tokenizer.json) by size and sha256;
    returns the train split's size in tokens if meta.json is valid."""
    c.exists(f"{folder}/tokenizer.json")
    meta = c.json(f"{folder}/meta.json", META_FIELDS)
    if meta is None:
        return None
    problem = tokens.meta_problem(meta)
    if problem:
        c.problem(f"{folder}/meta.json", problem)
        return None
    for problem in tokens.source_problems(meta, root=c.results.parent):  # a corpus file edited since
        c.problem(f"{folder}/meta.json", problem)
    itemsize = np.dtype(meta["dtype"]).itemsize
    for split in ("train", "val"):
        path = f"{folder}/{split}.bin"
        if c.exists(path):
            size = c.file(path).stat().st_size
            if size != meta["splits"][split]["tokens"] * itemsize:
                c.problem(path, f"{size} bytes, meta.json says {meta['splits'][split]['tokens']} x {itemsize}")
    for name, record in sorted(meta["files"].items()):
        differs = file_problem(c.file(f"{folder}/{name}"), record) if isinstance(record, dict) else "no record"
        if differs and not (differs == "missing" and name in contracts.RECORDED_DATA_FILES):  # those are listed above
            c.problem(f"{folder}/{name}", f"{differs} in meta.json")
    return meta["splits"]["train"]["tokens"]


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def metrics_problems(metrics: dict) -> list[str]:
    """What is wrong with the types and status of one run's metrics.json."""
    problems = [f"{key} {metrics[key]!r} is not a number" for key in METRICS_NUMBERS if not _is_number(metrics[key])]
    problems += [
        f"{key} {metrics[key]!r} is not a number or null"
        for key in METRICS_NUMBERS_OR_NULL
        if metrics[key] is not None and not _is_number(metrics[key])
    ]
    if metrics["status"] not in RUN_STATUSES:
        problems.append(f"status {metrics['status']!r} is not one of {', '.join(RUN_STATUSES)}")
    final = metrics["final_val_loss"]
    if metrics["status"] == "ok" and (final is None or (_is_number(final) and not math.isfinite(final))):
        problems.append("status ok but final_val_loss is not finite")
    return problems


def spec_problem(ran: object, planned: dict) -> str | None:
    """How the spec a run recorded differs from the plan's (complete) spec for it; None if they are the same."""
    if not isinstance(ran, dict) or not isinstance(ran.get("model"), dict):
        return f"its spec {ran!r} is not a spec object"
    differences = spec_differences(planned, ran)
    if not differences:
        return None
    shown = "; ".join(f"{key}: {_text(want)} planned, {_text(got)} ran" for key, want, got in differences[:3])
    more = f"; and {len(differences) - 3} more" if len(differences) > 3 else ""
    return f"its spec differs from the plan's at {shown}{more}"


def _text(value: object) -> str:
    return "absent" if value is ABSENT else json.dumps(value, sort_keys=True)


def id_problem(run_id: str, ran: object, plan: Plan) -> str | None:
    """Why a run's folder records the spec of another run the plan has (each id ends in its spec's digest):
    the folder was copied or renamed to this id. Names both ids; None otherwise (a spec the plan does not
    have at all is `spec_problem`'s)."""
    if not isinstance(ran, dict) or not isinstance(ran.get("model"), dict):
        return None
    found = digest(ran)
    theirs = [other for other in plan.runs if other != run_id and other.endswith(f"-{found}")]
    if run_id.endswith(f"-{found}") or not theirs:
        return None
    return f"records the spec of run {theirs[0]}, its folder's id is {run_id} (a folder copied or renamed?): retrain it"


# where the recomputed value of each derived field comes from, for the problem's line
DERIVED_SOURCES = {"steps": "curve.csv's last step", "train_tokens": "the data's meta.json"}


def derived_problems(metrics: dict, spec: dict, curve: pd.DataFrame | None, train_tokens: int | None) -> list[str]:
    """Each field of a run's metrics.json that follows from its (planned) `spec` (`derived_metrics`: counts,
    peak rate, tokens, epochs, FLOPs, spec_hash) and differs from what that function gives, from the steps of its
    curve.csv and the train split's size `train_tokens` (the recorded ones where those are unknown); and the
    relations no run can have."""
    steps = _last_step(curve)
    recorded_steps, recorded_tokens = metrics["steps"], metrics["train_tokens"]
    steps = steps if steps is not None else recorded_steps
    train_tokens = train_tokens if train_tokens is not None else recorded_tokens
    if not (_is_whole(steps) and _is_whole(train_tokens) and train_tokens > 0):
        return [f"steps {recorded_steps!r} and train_tokens {recorded_tokens!r} are not positive whole numbers"]
    expected = derived_metrics(spec, int(steps), int(train_tokens))
    if _is_number(metrics["wall_seconds"]) and metrics["wall_seconds"] > 0:
        expected["tokens_per_second"] = expected["tokens_seen"] / metrics["wall_seconds"]
    problems = [
        f"{field} {metrics[field]!r} recorded, {DERIVED_SOURCES.get(field, 'its spec')} gives {want!r}"
        for field, want in expected.items()
        if not _same_value(metrics[field], want) and (field not in METRICS_NUMBERS or _is_number(metrics[field]))
    ]
    planned = training_steps(spec["recipe"], spec["model"]["n_ctx"], int(train_tokens))
    if metrics["status"] == "ok" and steps != planned:
        problems.append(f"a finished run of {steps} steps; its recipe trains {planned} steps on this data")
    total, nonembedding = metrics["n_params_total"], metrics["n_params_nonembedding"]
    if _is_number(total) and _is_number(nonembedding) and nonembedding > total:
        problems.append(f"n_params_nonembedding {nonembedding!r} exceeds n_params_total {total!r}")
    return problems


def _last_step(curve: pd.DataFrame | None) -> int | None:
    """The last step curve.csv logs (the run's optimizer steps), or None without a readable one."""
    if curve is None:
        return None
    steps = pd.to_numeric(curve["step"], errors="coerce").dropna()
    return int(steps.iloc[-1]) if len(steps) and float(steps.iloc[-1]).is_integer() else None


def _is_whole(value: object) -> bool:
    return _is_number(value) and float(value).is_integer() and value >= 0


def _same_value(recorded: object, expected: object) -> bool:
    """Whether a recorded metric (or a table's cell) is the recomputed one: the same string, or the same number (floats
    to 1e-12, relative: JSON round-trips them, but a reordered sum may differ in the last bit)."""
    if isinstance(expected, str) or not _is_number(recorded):
        return recorded == expected
    return math.isclose(recorded, expected, rel_tol=1e-12)


def final_loss_problem(metrics: dict, curve: pd.DataFrame) -> str | None:
    """A finished run's final_val_loss must be the last val_loss of its curve.csv."""
    if metrics["status"] != "ok" or not _is_number(metrics["final_val_loss"]):
        return None
    vals = pd.to_numeric(curve["val_loss"], errors="coerce").dropna()
    last = float(vals.iloc[-1]) if len(vals) else None
    if last is None or not math.isclose(last, metrics["final_val_loss"], rel_tol=1e-9):
        return f"final_val_loss {metrics['final_val_loss']} is not the last val_loss of curve.csv ({last})"
    return None


def run_problems(run_id: str, metrics: dict, plan: Plan, curve: pd.DataFrame | None, train_tokens: int | None):
    """What is wrong with one run's metrics.json: its types, its id, its spec against the plan's, the fields
    that follow from that spec, its final loss against its `curve`."""
    problems = metrics_problems(metrics)
    copied = id_problem(run_id, metrics["spec"], plan)
    if copied:
        return [*problems, copied]  # its spec, and all that follows from it, is another run's
    spec = plan.job(run_id).spec
    differs = spec_problem(metrics["spec"], spec)
    problems += [differs] if differs else derived_problems(metrics, spec, curve, train_tokens)
    final = final_loss_problem(metrics, curve) if curve is not None else None
    return problems + ([final] if final else [])


def scan_rounds(c: Checker, plan: Plan) -> dict[str, list[dict]]:
    """Each learning-rate scan's rounds (sweep.lr_grid) as the workflow reads them (`rates.read_rounds`: up to
    the first that chose, each checked against the plan's scan and recomputed by its rule from the scouts it
    records); a damaged round is a problem, and its scan's rounds stop before it."""
    rounds = {}
    for scan in plan.scans.values():
        c.checked += 1
        try:
            rounds[scan.id] = rates.read_rounds(scan.id, c.results, scan.spec)
        except rates.RoundError as err:
            c.problem(f"{contracts.RESULTS}/{err.path.relative_to(c.results).as_posix()}", err.reason)
            continue
        if not rounds[scan.id] or not rounds[scan.id][-1]["done"]:
            c.problem(scan.round_path(0).rsplit("/", 1)[0], "its learning-rate scan has not chosen a rate")
    return rounds


def chosen_rates(rounds: dict[str, list[dict]]) -> dict[str, int]:
    """Each scan's chosen lattice index, from its rounds (`scan_rounds`); a scan that has not chosen has none."""
    return {scan_id: records[-1]["chosen"] for scan_id, records in rounds.items() if records and records[-1]["done"]}


def round_run_ids(plan: Plan, rounds: dict[str, list[dict]]) -> dict[str, list[tuple[str, int, str]]]:
    """What each round read, by its file: (`scout` or `confirm`, lattice index, run id) (`RateScan.round_runs`
    of the round before it)."""
    read = {}
    for scan_id, records in rounds.items():
        scan = plan.scans[scan_id]
        for round_, previous in enumerate([None, *records][: len(records)]):  # a scan killed before round 0: none
            read[scan.round_path(round_)] = scan.round_runs(previous)
    return read


def check_scouts(c: Checker, plan: Plan, rounds: dict[str, list[dict]], metrics: dict[str, dict]) -> None:
    """Each round's scouts and confirmation runs as the runs it read give them (`rates.run_records` of each
    run's metrics.json, whose final loss `check_runs` holds to its curve.csv); the decision a round takes from
    them `rates.read_round` recomputes."""
    for path, runs in round_run_ids(plan, rounds).items():
        if not all(run_id in metrics for _, _, run_id in runs):
            continue  # a run whose metrics.json cannot be read is named where it lies
        record = json.loads(c.file(path).read_text(encoding="utf-8"))
        for key, kind in (("scouts", "scout"), ("confirmations", "confirm")):
            read = [rates.scout_from(metrics[run_id], k) for option, k, run_id in runs if option == kind]
            expected, recorded = rates.run_records(read), record[key]
            differs = [i for i in range(max(len(expected), len(recorded))) if not _same_item(recorded, expected, i)]
            if differs:
                i = differs[0]
                got, want = (json.dumps(rows[i]) if i < len(rows) else "nothing" for rows in (recorded, expected))
                c.problem(path, f"{key}[{i}] {got} recorded, the runs the round read give {want}")


def _same_item(a: list, b: list, i: int) -> bool:
    return i < len(a) and i < len(b) and rates.same_json(a[i], b[i])


def rate_at(plan: Plan, chosen: dict[str, int]) -> Callable[[str], int]:
    """Each scan's rate as the tables read it: the one it chose, or its first scout's where it has not chosen."""
    return lambda scan: chosen.get(scan, plan.scans[scan].start[0])


def second_rows(plan: Plan, experiment: str, at: Callable[[str], int], asked: dict[str, int] | None) -> dict:
    """The second stage's runs of an experiment's shapes (`Plan.second_plan`); none with one look, nothing asked, or
    for lr_check, which reads no second stage."""
    return plan.second_plan(experiment, at, asked) if asked and experiment != LR_CHECK else {}


def table_runs(plan: Plan, experiment: str, chosen: dict[str, int], asked: dict[str, int] | None = None) -> dict:
    """The runs a sweep table reads (run id -> Run): each run a scan decides at its scan's chosen rate (`chosen`; a
    run of a scan that has not chosen is left out) and, with two looks, the second stage's runs of its shapes
    (`asked`: what the second stage asked for; None or empty: the first stage's table)."""
    at = rate_at(plan, chosen)
    rows = plan.chosen_plan(experiment, at) | second_rows(plan, experiment, at, asked)
    return {
        run_id: run_from_plan(experiment, row)
        for run_id, row in rows.items()
        if row["lr_scan"] is None or row["lr_scan"] in chosen
    }


def read_second_stage(c: Checker, plan: Plan) -> dict[str, int]:
    """What the second stage asked for (two looks; {} with one, or where its file is missing or unreadable: a
    problem named), each first-stage run a run of the plan."""
    if plan.design.looks == 1:
        return {}
    (path,) = plan.second_stage_file()
    if not c.exists(path):
        return {}
    try:
        allocation, made_by = second_stage.read(c.file(path))
    except (ValueError, KeyError, TypeError) as error:
        c.problem(path, f"not a second stage's record ({type(error).__name__}: {error})")
        return {}
    if made_by != plan.design.digest:
        c.problem(path, f"made by the design {made_by}, the config's is {plan.design.digest} (rebuild it)")
    decided = [c.file(p) for p in plan.decide_files() if c.exists(p)]
    try:
        found = list(decide.read_decisions(decided).values())
    except (ValueError, KeyError, TypeError):
        found = None  # check_decisions names the file
    if found is not None and len(decided) == len(plan.decide_files()):
        again = second_stage.allocate(found, plan.design.budget, plan.design.most)
        if again != allocation:
            c.problem(path, f"asks for {allocation.shapes}, the decisions and the design give {again.shapes}")
    try:
        for shape, count in allocation.shapes.items():  # a run, or a sample job by name (the SDE row's)
            if shape in plan.second_sims:
                plan.second_simulations(shape, count)
            else:
                plan.second_runs(shape, count)
    except (KeyError, ValueError) as error:
        c.problem(path, f"asks for what the plan has not: {error}")
        return {}
    return dict(allocation.shapes)


def check_runs(
    c: Checker, plan: Plan, train_tokens: dict, chosen: dict[str, int], scouts: set[str] = frozenset()
) -> dict[str, dict]:
    """Each run's metrics.json, curve.csv and entropy.csv (`train_tokens`: each corpus folder's train split's size,
    None where unknown):
    every run the config plans, every run its tables read at a scan's chosen rate, and every run its scans'
    rounds read (`scouts`); returns the metrics.json that could be read, by run id."""
    read = {}
    jobs = dict(plan.runs)
    for experiment in plan.sweep:
        jobs.update((run_id, plan.job(run_id)) for run_id in table_runs(plan, experiment, chosen, c.asked))
    jobs.update((run_id, plan.job(run_id)) for run_id in plan.entropy_second(c.asked))
    jobs.update((run_id, plan.job(run_id)) for run_id in sorted(scouts - jobs.keys()))
    for run_id, job in jobs.items():
        folder = job.folder
        metrics = c.json(f"{folder}/metrics.json", METRICS_FIELDS)
        curve = c.csv(f"{folder}/curve.csv", CURVE_COLUMNS)
        if metrics is not None:
            read[run_id] = metrics
            for problem in run_problems(run_id, metrics, plan, curve, train_tokens.get(job.spec["data"])):
                c.problem(f"{folder}/metrics.json", problem)
        if ENTROPY_TABLE in job.tables:
            c.csv(f"{folder}/entropy.csv", ENTROPY_COLUMNS)
        for name in RUN_DIGESTS if metrics is not None else ():
            problem = run_file_problem(c.file(folder), metrics, name)
            if problem and problem != "missing":  # a missing file is reported where it is read
                c.problem(f"{folder}/{name}", problem)
    return read


def read_runs(c: Checker, plan: Plan, train_tokens: dict) -> tuple[dict[str, list[dict]], dict[str, dict]]:
    """Each scan's rounds (`scan_rounds`) and the runs `check` reads (`check_runs`: those the config plans, those
    its tables read at each scan's chosen rate, and every run a round read), by run id."""
    rounds = scan_rounds(c, plan)
    scouts = {run_id for runs in round_run_ids(plan, rounds).values() for _, _, run_id in runs}
    c.asked = read_second_stage(c, plan)
    return rounds, check_runs(c, plan, train_tokens, chosen_rates(rounds), scouts)


def check_tables(c: Checker, plan: Plan, metrics: dict[str, dict], rounds: dict[str, list[dict]]) -> None:
    """Each table's columns and values; a sweep table's rows against its runs' `metrics` (by run id) and,
    at a learning-rate scan's chosen rate, its scan's final round (of its `rounds`)."""
    chosen = chosen_rates(rounds)
    for experiment in plan.sweep:
        per_token = val_bytes_per_token(c, plan.corpus(experiment))  # a vocabulary confound's: a corpus of its own
        # the table on every seed and, with two looks, on the first stage's alone (the rows' tables: no look reads a
        # sensitivity's)
        versions = [(plan.table_file(sweep_table(experiment)), plan.table_file(curves_table(experiment)), c.asked)]
        if plan.design.looks == 2 and experiment not in plan.confounds:
            first = (plan.table_file(sweep_table(experiment)), plan.table_file(curves_table(experiment)))
            versions.append((*map(plan.first_table, first), {}))
        for path, curves_path, asked in versions:
            runs = table_runs(plan, experiment, chosen, asked)
            check_sweep_table(c, plan, experiment, (path, curves_path), runs, metrics, rounds, per_token)
    if plan.simulations:
        path = plan.table_file(SDE_TERMINAL)
        terminal = c.csv(path, TERMINAL_COLUMNS)
        check_sample_jobs(c, plan, path, terminal, c.asked)
        if plan.grows(SDE_FIGURE):
            first = plan.first_table(path)
            check_sample_jobs(c, plan, first, c.csv(first, TERMINAL_COLUMNS), {})
        if terminal is not None:
            ok = terminal[terminal["status"] == "ok"]["rho01"]
            if not ok.between(-1 - 1e-9, 1 + 1e-9).all():
                c.problem(path, "a finished sample has |rho01| > 1")
            if not set(terminal["status"]) <= set(STATUS_NAMES.values()):
                c.problem(path, f"unknown status values {sorted(set(terminal['status']))}")
        c.csv(plan.table_file(TRAJECTORY), TRAJECTORY_COLUMNS)
    if plan.entropy_runs:
        # the table on every seed and, where its figure grows (two looks), on the first stage's alone
        versions = [(plan.table_file(ENTROPY_TABLE), plan.entropy_specs(c.asked))]
        if plan.grows(ENTROPY_FIGURE):
            versions.append((plan.first_table(plan.table_file(ENTROPY_TABLE)), plan.entropy_specs()))
        for path, specs in versions:
            table = c.csv(path, ENTROPY_TABLE_COLUMNS)
            if table is not None and set(table["run_id"].astype(str)) != set(specs):
                c.problem(path, "its runs are not the runs the config plans")


def check_sample_jobs(c: Checker, plan: Plan, path: str, terminal: pd.DataFrame | None, asked: dict[str, int]) -> None:
    """A terminal table holds each planned sample job on its seed and, with `asked`, on the fresh seeds the second
    stage asked for it: the seeds per job name (`decide.fit_sde`'s reading) against the plan's."""
    if terminal is None:
        return
    expected = {name: 1 + asked.get(name, 0) for name in plan.sample_jobs()}
    found = {shape.run: shape.seeds for shape in decide.fit_sde({SDE_TERMINAL: terminal}).shapes}
    if found != expected:
        differ = sorted(name for name in expected.keys() | found.keys() if found.get(name) != expected.get(name))
        c.problem(path, f"its sample jobs are not the ones the config plans (seeds of {differ[0]}: "
                  f"{found.get(differ[0], 0)}, planned {expected.get(differ[0], 0)})")  # fmt: skip


def check_sweep_table(c: Checker, plan: Plan, experiment: str, paths, runs, metrics, rounds, per_token) -> None:
    """One sweep table and its curves (`paths`) against its `runs`, their `metrics` and their scans' `rounds`."""
    path, curves_path = paths
    chosen = chosen_rates(rounds)
    table = c.csv(path, SWEEP_COLUMNS)
    if table is not None and sorted(table["run_id"]) != sorted(runs):
        c.problem(path, "its runs are not the runs the config plans")
    elif table is not None:
        at = rate_at(plan, chosen)
        trained = {
            plan.chosen_run(experiment, run_id, at): rounds[scan_id][-1]
            for run_id, (scan_id, _) in plan.scan_of.get(experiment, {}).items()
            if scan_id in chosen
        }
        trained |= {  # a second-stage run: its scan's round too
            run_id: rounds[row["lr_scan"]][-1]
            for run_id, row in second_rows(plan, experiment, at, c.asked).items()
            if row["lr_scan"] in chosen and run_id in runs
        }
        for problem in sweep_rows_problems(table, runs, metrics, trained, per_token):
            c.problem(path, problem)
    curves = c.csv(curves_path, CURVES_COLUMNS)
    if curves is not None and set(curves["run_id"].astype(str)) != set(runs):
        c.problem(curves_path, "its runs are not the runs of its sweep table")


def val_bytes_per_token(c: Checker, folder: str) -> float:
    """A corpus folder's val bytes per token (`tables.bits`), nan where its meta.json cannot say (`check_data` reports
    why)."""
    try:
        return bits.bytes_per_token(tokens.read_meta(c.file(folder)))
    except (ValueError, FileNotFoundError, TypeError):  # read_meta checked splits.val; bytes_per_token its counts
        return math.nan


def sweep_rows_problems(
    table: pd.DataFrame,
    runs: dict[str, Run],
    metrics: dict[str, dict],
    scans: dict[str, dict] | None = None,
    bytes_per_token: float = math.nan,
) -> list[str]:
    """Where a sweep table's rows differ from the rows its runs' metrics.json (and, for a run at a scan's
    chosen rate, its scan's final round, `scans` by run id; the data's val `bytes_per_token`) give
    (`tables.sweep.run_row`), one line per differing cell; runs whose metrics.json could not be read are left out,
    and so is the loss in bits per byte where the data's bytes per token is unknown (nan)."""
    scans = scans or {}
    rows = [
        run_row(run_id, run, metrics[run_id], scans.get(run_id), bytes_per_token=bytes_per_token)
        for run_id, run in runs.items()
        if run_id in metrics
    ]
    unknown = {"final_val_bpb"} if math.isnan(bytes_per_token) else set()
    compared = [column for column in SWEEP_COLUMNS if column != "run_id" and column not in unknown]
    # through CSV and back, so both sides have the types read_csv gives
    expected = pd.read_csv(io.StringIO(sweep_frame(rows).to_csv(index=False)))
    merged = table.astype({"run_id": str}).merge(expected, on="run_id", suffixes=("", "_from_run"))
    return [
        f"{row['run_id']}: {column} {row[column]!r}, its run's metrics.json gives {row[f'{column}_from_run']!r}"
        for row in merged.to_dict("records")
        for column in compared
        # both missing, or the same to 1e-12 (the excess's vertex part sums moderated variances in the table's order)
        if not (_same(row[column], row[f"{column}_from_run"]) or _same_value(row[column], row[f"{column}_from_run"]))
    ]


# --- the GLUE stage (glue/contracts.py): its tasks' rows, pretrained models, fine-tunings and table -----------
TASK_META_FIELDS = ["task", "url", "checksum", "splits"]
FINETUNE_FIELDS = ["spec", "task", "attention", "seed", "n_train", "n_dev", "confusion", "mcc", "f1", "accuracy"]
FINETUNE_FIELDS += ["pretrained_sha256", "pretrain_val_loss", "task_meta_sha256"]


def check_glue(c: Checker, plan: Plan, train_tokens: int | None) -> None:
    """Every GLUE artifact the plan promises: each task's rows against its meta.json, each pretrained model as a
    run (spec, derived fields, curve) and its weights against the sha256 it records, each fine-tuning's spec and
    scores recomputed from its confusion counts, and the table's rows against the fine-tunings' metrics.json."""
    rows = {task: check_glue_task(c, job) for task, job in plan.glue.tasks.items()}
    pretrained = {pid: check_pretrained(c, job, train_tokens) for pid, job in plan.glue.pretrained.items()}
    finetuned = {}
    for fid, job in plan.glue.finetuned.items():
        metrics = c.json(f"{job.folder}/metrics.json", FINETUNE_FIELDS)
        if metrics is not None:
            finetuned[fid] = metrics
            for problem in finetune_problems(metrics, job, pretrained.get(job.pretrained), rows.get(job.task)):
                c.problem(f"{job.folder}/metrics.json", problem)
    check_glue_table(c, plan, finetuned)


def check_glue_task(c: Checker, job) -> dict | None:
    """A task's meta.json (its source the plan's) and each split's file against the sha256 and rows it records;
    the rows of each split, by split, if all is well."""
    meta = c.json(f"{job.folder}/meta.json", TASK_META_FIELDS)
    if meta is None:
        return None
    planned = {key: job.spec[key] for key in ("task", "url", "checksum")}
    recorded = {key: meta[key] for key in planned}
    if recorded != planned:
        c.problem(f"{job.folder}/meta.json", f"records the source {recorded}, the plan's is {planned}")
        return None
    counts = {}
    for split in SPLITS:
        path, splits = f"{job.folder}/{split}.jsonl", meta["splits"]
        record = splits.get(split) if isinstance(splits, dict) else None
        record = record if isinstance(record, dict) else {}
        if not c.exists(path):
            continue
        if sha256_file(c.file(path)) != record.get("sha256"):
            c.problem(path, "differs from the sha256 its meta.json records")
            continue
        counts[split] = len(c.file(path).read_text(encoding="utf-8").splitlines())
        if counts[split] != record.get("rows"):
            c.problem(path, f"{counts[split]} rows, its meta.json records {record.get('rows')!r}")
    return counts if len(counts) == len(SPLITS) else None


def check_pretrained(c: Checker, job, train_tokens: int | None) -> dict | None:
    """A pretrained model's metrics.json as a run's (types, spec against the plan's, derived fields, final loss
    against curve.csv), its curve.csv and entropy.csv, and model.pt against the sha256 it records; its metrics."""
    metrics = c.json(f"{job.folder}/metrics.json", [*METRICS_FIELDS, "model_sha256"])
    curve = c.csv(f"{job.folder}/curve.csv", CURVE_COLUMNS)
    model = f"{job.folder}/model.pt"
    if metrics is None:
        return None
    problems = metrics_problems(metrics)
    differs = spec_problem(metrics["spec"], job.spec)
    problems += [differs] if differs else derived_problems(metrics, job.spec, curve, train_tokens)
    final = final_loss_problem(metrics, curve) if curve is not None else None
    for problem in [*problems, *([final] if final else [])]:
        c.problem(f"{job.folder}/metrics.json", problem)
    for name in RUN_DIGESTS:
        problem = run_file_problem(c.file(job.folder), metrics, name)
        if problem:
            c.problem(f"{job.folder}/{name}", problem)
    if c.exists(model) and sha256_file(c.file(model)) != metrics["model_sha256"]:
        c.problem(model, "differs from the model_sha256 its metrics.json records")
    return metrics


def finetune_problems(metrics: dict, job, pretrained: dict | None, rows: dict | None) -> list[str]:
    """What is wrong with one fine-tuning's metrics.json: its spec against the plan's, its scores against its
    confusion counts, its dev rows against the task's, its pretrained model against that model's record."""
    from depthwidth.glue import metrics as glue_metrics

    differences = spec_differences(job.spec, metrics["spec"])
    if differences:
        shown = "; ".join(f"{key}: {_text(want)} planned, {_text(got)} ran" for key, want, got in differences[:3])
        return [f"its spec differs from the plan's at {shown}"]
    problems = []
    for key in ("task", "attention", "seed"):
        if metrics[key] != job.spec[key]:
            problems.append(f"{key} {metrics[key]!r}, its spec gives {job.spec[key]!r}")
    counts = metrics["confusion"]
    if not (
        isinstance(counts, dict) and sorted(counts) == ["fn", "fp", "tn", "tp"] and all(map(_is_whole, counts.values()))
    ):
        return [*problems, f"confusion {counts!r} is not four whole counts tp, fp, tn, fn"]
    if sum(counts.values()) != metrics["n_dev"]:
        problems.append(f"its confusion counts sum to {sum(counts.values())}, n_dev is {metrics['n_dev']!r}")
    for name, value in glue_metrics.scores(counts).items():
        if not _same_value(metrics[name], value):
            problems.append(f"{name} {metrics[name]!r}, its confusion counts give {value!r}")
    if rows is not None:
        cap = job.spec["recipe"]["max_train_rows"]
        expected = {"n_dev": rows["dev"], "n_train": rows["train"] if cap is None else min(cap, rows["train"])}
        problems += [
            f"{key} {metrics[key]!r}, the task's rows give {want}"
            for key, want in expected.items()
            if metrics[key] != want
        ]
    if pretrained is not None:
        if metrics["pretrained_sha256"] != pretrained.get("model_sha256"):
            problems.append("fine-tuned from another model.pt than its pretrained model's (pretrained_sha256)")
        if not _same(metrics["pretrain_val_loss"], pretrained.get("final_val_loss")):
            problems.append(
                f"pretrain_val_loss {metrics['pretrain_val_loss']!r}, its pretrained model's is "
                f"{pretrained.get('final_val_loss')!r}"
            )
    return problems


def check_glue_table(c: Checker, plan: Plan, finetuned: dict[str, dict]) -> None:
    """The GLUE table: its columns, its fine-tunings the plan's, each row as its metrics.json gives it."""
    from depthwidth.glue import table as glue_table

    path = plan.table_file(GLUE_TABLE)
    table = c.csv(path, list(GLUE_TABLE_COLUMNS))
    if table is None:
        return
    jobs = plan.glue.table_jobs()
    if sorted(map(str, table["finetune_id"])) != sorted(jobs):
        c.problem(path, "its fine-tunings are not the ones the config plans")
        return
    rows = [glue_table.row(fid, jobs[fid], metrics) for fid, metrics in finetuned.items()]
    expected = pd.read_csv(io.StringIO(pd.DataFrame(rows, columns=list(GLUE_TABLE_COLUMNS)).to_csv(index=False)))
    merged = table.astype({"finetune_id": str}).merge(expected, on="finetune_id", suffixes=("", "_from_job"))
    for row in merged.to_dict("records"):
        for column in GLUE_TABLE_COLUMNS:
            if column != "finetune_id" and not _same(row[column], row[f"{column}_from_job"]):
                c.problem(
                    path,
                    f"{row['finetune_id']}: {column} {row[column]!r}, its metrics.json gives "
                    f"{row[f'{column}_from_job']!r}",
                )


def image_problem(path: Path) -> str | None:
    """Why the PNG at `path` cannot be decoded in full, or None."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.load()
            kind = image.format
    except Exception as err:  # noqa: BLE001 - decoders raise many kinds; any of them means a broken file
        return f"not a decodable PNG ({err.__class__.__name__}: {err})"
    return None if kind == "PNG" else f"a {kind} image, not a PNG"


def check_figures(c: Checker, plan: Plan) -> list[Path]:
    """Each figure's PNG, PDF and CSV; returns the CSVs that passed (the claims read them)."""
    good = []
    for figure in plan.figures:
        for suffix, magic in MAGIC.items():
            path = contracts.figure_path(plan.name, figure, suffix)
            if not c.exists(path):
                continue
            if c.file(path).read_bytes()[: len(magic)] != magic:
                c.problem(path, f"not a {suffix[1:].upper()} file")
            elif suffix == ".png" and (problem := image_problem(c.file(path))):
                c.problem(path, problem)
        columns = importlib.import_module(f"depthwidth.plots.{figure}").COLUMNS
        path = contracts.figure_path(plan.name, figure, ".csv")
        rows = c.csv(path, columns, exact=False, allow_empty=True)
        if rows is None:
            continue
        level, drawn = plan.figure_level(figure), fits.level_of_rows(rows)
        if len(rows) and math.isnan(drawn):
            c.problem(path, f"records no {fits.LEVEL_COLUMN!r} of its intervals (drawn by older code): redraw it")
        elif len(rows) and not math.isclose(drawn, level, abs_tol=1e-9):
            c.problem(path, f"its intervals are at {drawn:g}, where the config draws {figure} at {level:g}")
        else:
            good.append(c.file(path))
    return good


def check_decisions(c: Checker, plan: Plan) -> list[Path]:
    """What `decide` found for each figure whose data may grow (`Plan.growing_figures`): a record of decisions, each of
    a claim the figure shows; returns the files that passed (the claims read them)."""
    good = []
    for figure in plan.growing_figures():
        path = plan.decide_file(figure)
        if not c.exists(path):
            continue
        try:
            found = decide.read_decisions([c.file(path)])
        except (ValueError, KeyError, TypeError) as error:  # not JSON, or not decisions: a key or field amiss
            c.problem(path, f"not a record of decisions ({type(error).__name__}: {error})")
            continue
        strays = [claim for claim in found if claim not in BY_ID or BY_ID[claim].figure != figure]
        if strays:
            c.problem(path, f"decides {strays[0]}, no claim of the figure {figure}")
            continue
        tables = [c.file(table) for table in plan.decide_tables(figure)]
        mispriced = mispriced_shape(plan, figure, found.values(), tables) if all(t.is_file() for t in tables) else None
        if mispriced:
            c.problem(path, mispriced)
            continue
        good.append(c.file(path))
    return good


def mispriced_shape(plan: Plan, figure: str, decisions, tables: list[Path]) -> str | None:
    """What is wrong where a decision prices a shape otherwise than the design's price does on the tables its decide
    job read (a decision made at another price asks for other fresh jobs); None where every shape is priced so."""
    _, _, noise = decide.fitted(figure, decide.read_tables(paths=tables), plan.design.price)
    priced = {shape.run: shape.minutes for shape in noise.shapes}
    for d in decisions:
        for run, minutes in zip(d.shape_runs, d.shape_minutes, strict=True):
            price = priced.get(run, math.nan)
            if not (_same(minutes, price) or _same_value(minutes, price)):
                return (
                    f"claim {d.claim} prices {run} at {minutes:.6g} job-minutes, the design's price (decide.price) at "
                    f"{price:.6g} (rebuild it)"
                )
    return None


def check_claims(c: Checker, plan: Plan, figure_csvs: list[Path], scale_note: str, decisions: list[Path]) -> None:
    """claims.csv, claims.md and decisions.csv: every row, every column, as the claims' rules compute it from the
    figures' data (with two looks, the rows at look 1 too), what `decide` found, what the second stage asked for,
    the design and the plan's scale note."""
    claims_csv, claims_md = plan.claims_files()
    stored = c.csv(claims_csv, claims.COLUMNS)
    if stored is None:
        return
    looks = [c.file(path) for path in check_looks(c, plan)]
    second = [c.file(path) for path in plan.second_stage_file() if c.exists(path)]
    gains = check_sensitivity(c, plan)
    try:
        computed, trail = claims.tables(
            figure_csvs, scale_note, decisions, plan.design, looks, *second[:1], sensitivity=gains
        )
    except decide.StaleDecision as error:
        c.problem(plan.decide_file(BY_ID[error.claim].figure), str(error))
        return
    except (claims.LookError, FileNotFoundError) as error:  # a look's rows, a decision or the second stage amiss
        c.problem(claims_csv, f"cannot be recomputed: {error}")
        return
    check_trail(c, plan, trail)
    ids, expected_ids = sorted(map(str, stored["id"])), sorted(computed["id"])
    if ids != expected_ids:
        c.problem(claims_csv, f"claims {ids} differ from {expected_ids}")
        return
    # through CSV and back, so both sides have the types read_csv gives
    expected = pd.read_csv(io.StringIO(computed.to_csv(index=False)))
    merged = stored.merge(expected, on="id", suffixes=("", "_recomputed"))
    for row in merged.to_dict("records"):
        for column in claims.COLUMNS:
            if column == "id" or _same(row[column], row[f"{column}_recomputed"]):
                continue
            c.problem(
                claims_csv,
                f"{row['id']}: {column} {row[column]!r}, its rule gives {row[f'{column}_recomputed']!r}",
            )
    said = claims.markdown(computed, gains, *claims.survival(gains, computed))
    if c.exists(claims_md) and c.file(claims_md).read_text() != said:
        c.problem(claims_md, "differs from the claims table its rules compute (rebuild it)")


def check_sensitivity(c: Checker, plan: Plan) -> pd.DataFrame | None:
    """sensitivity.csv (a sensitivity block) as claims/sensitivity.py computes it from the rows' tables and the
    confounds'; returns the recomputed frame (None without a block, or where a table cannot be read)."""
    if not plan.sensitivity_file():
        return None
    (path,) = plan.sensitivity_file()
    inputs = plan.sensitivity_inputs()
    tables = {}
    for kind, files in inputs.items():
        tables[kind] = {name: c.csv(file, SWEEP_COLUMNS) for name, file in files.items()}
        if any(table is None for table in tables[kind].values()):  # reported by check_tables
            return None
    computed = sensitivity.gains(plan.config["sensitivity"]["pairs"], tables["references"], tables["confounds"])
    expected = pd.read_csv(io.StringIO(computed.to_csv(index=False)))  # through CSV and back, as stored and read
    stored = c.csv(path, SENSITIVITY_COLUMNS)
    if stored is not None:
        for i, (row, want) in enumerate(zip(stored.to_dict("records"), expected.to_dict("records"))):
            moved = [key for key in SENSITIVITY_COLUMNS if not _same(row[key], want[key])]
            if moved:
                c.problem(path, f"row {i + 1}: {', '.join(moved)} differ from the tables' (rebuild it)")
        if len(stored) != len(expected):
            c.problem(path, f"{len(stored)} rows, the block's pairs and sources make {len(expected)}")
    return expected


def check_looks(c: Checker, plan: Plan) -> list[str]:
    """Each figure's rows at look 1 (two looks) and their other reading, against the figure's code run on the first
    stage's tables at look 1's level; returns the rows (not the other reading) that passed."""
    good = []
    for path in plan.look_files():
        figure = look_figure(path)
        columns = importlib.import_module(f"depthwidth.plots.{figure}").COLUMNS
        stored = c.csv(path, columns, exact=False, allow_empty=True)
        tables = [c.file(table) for table in plan.decide_tables(figure)]
        if stored is None or not all(table.is_file() for table in tables):  # a missing table: check_tables names it
            continue
        with fits.at_level(plan.design.levels[0]), tilt.carrying(tilt.Carried.from_config(plan.config.get("tilt"))):
            rows = decide.figure_rows(figure, decide.read_tables(paths=tables), unstalled=True)
        other = path.endswith(contracts.UNSTALLED)
        expected = pd.read_csv(io.StringIO(rows[other].to_csv(index=False)))
        if list(stored.columns) != list(expected.columns) or len(stored) != len(expected):
            c.problem(path, f"is not the rows of {figure} on the first stage's tables at {plan.design.levels[0]:g}")
            continue
        differ = [
            (i, column)
            for column in expected.columns
            for i, (mine, theirs) in enumerate(zip(stored[column], expected[column], strict=True))
            if not (_same(mine, theirs) or _same_value(mine, theirs))
        ]
        if differ:
            i, column = differ[0]
            c.problem(path, f"row {i + 1}: {column} differs from {figure}'s rows on the first stage's tables")
        elif not other:
            good.append(path)
    return good


def check_trail(c: Checker, plan: Plan, trail: pd.DataFrame) -> None:
    """decisions.csv against the looks' audit trail the claims compute."""
    path = plan.decisions_file()
    stored = c.csv(path, list(DECISIONS_COLUMNS), allow_empty=True)  # a config of no sweep figure: no look
    if stored is None:
        return
    expected = pd.read_csv(io.StringIO(trail.to_csv(index=False)))
    if len(stored) != len(expected) or list(stored["claim"]) != list(expected["claim"]):
        c.problem(path, f"its rows {len(stored)} are not the {len(expected)} looks and rows the claims compute")
        return
    for (i, mine), (_, theirs) in zip(stored.iterrows(), expected.iterrows(), strict=True):
        for column in DECISIONS_COLUMNS:
            if not (_same(mine[column], theirs[column]) or _same_value(mine[column], theirs[column])):
                c.problem(path, f"row {i + 1} ({mine['claim']}, look {mine['look']}): {column} {mine[column]!r}, "
                          f"the claims give {theirs[column]!r}")  # fmt: skip


def findings_note(c: Checker, plan: Plan) -> str | None:
    """Whether docs/findings.md (beside the results folder), made for this config, was made from the config's
    claims.csv: the sha256 its first line records against the file's. Says so when they match (the committed
    findings reproduce here byte for byte) and when they differ (which verdicts moved); None if either file is
    absent or the findings are another config's."""
    config_name, claims_path = plan.name, plan.claims_files()[0]
    findings_md = contracts.findings_path(config_name)
    path, claims_csv = c.results.parent / findings_md, c.file(claims_path)
    if not (path.is_file() and claims_csv.is_file()):
        return None
    name = (Path(c.label).parent / findings_md).as_posix()
    shown = f"{c.label}/{Path(claims_path).relative_to(contracts.RESULTS)}"
    record = findings.read_record(path.read_text(encoding="utf-8", errors="replace"))
    if record is None:
        return f"{name}: records no claims.csv it was made from (its first line); rerun `snakemake findings`"
    if record["config"] != config_name:
        return None
    ours, theirs = sha256_file(claims_csv), record["claims_sha256"]
    if theirs == ours:
        return f"{name}: made from this {shown} (sha256 {ours[:12]}): its findings reproduce here byte for byte"
    return (
        f"{name}: made from another claims.csv than {shown} ({_verdicts_moved(claims_csv, record['verdicts'])}), "
        f"sha256 {theirs[:12]} where this one is {ours[:12]}; it describes the run it was made from: rerun "
        "`snakemake findings` to describe this one"
    )


def _verdicts_moved(claims_csv: Path, theirs: dict) -> str:
    """Which verdicts of the claims table at `claims_csv` differ from a findings record's `theirs`."""
    try:
        frame = pd.read_csv(claims_csv, dtype=str)
        ours = dict(zip(frame["id"], frame["verdict"], strict=True))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, KeyError):
        ours = {}  # an unreadable table is a problem check_claims names
    changed = sorted(key for key in theirs.keys() | ours.keys() if theirs.get(key) != ours.get(key))
    return f"the verdicts of {', '.join(changed)} differ" if changed else "same verdicts, other values differ"


def _same(a: object, b: object) -> bool:
    return (pd.isna(a) and pd.isna(b)) if pd.isna(a) or pd.isna(b) else a == b


def check(results: Path, plan: Plan, label: str = "results") -> Checker:
    """Run every check of the artifacts a plan promises in the results folder `results`; note whether
    docs/findings.md beside it still matches its claims."""
    c = Checker(results, label)
    train_tokens = check_data(c, plan)
    rounds, metrics = read_runs(c, plan, train_tokens)
    c.runs = metrics
    check_scouts(c, plan, rounds, metrics)
    check_tables(c, plan, metrics, rounds)
    if plan.glue:
        check_glue(c, plan, train_tokens[plan.data_dir])
    sweep_tables = [c.file(path) for path in plan.sweep_tables()]
    sweep_tables = [path for path in sweep_tables if path.is_file()]  # a missing one is reported by check_tables
    scale_note = claims.full_scale_note(plan.scale_note(), sweep_tables)
    check_claims(c, plan, check_figures(c, plan), scale_note, check_decisions(c, plan))
    if note := findings_note(c, plan):
        c.notes.append(note)
    return c


def results_folder(path: Path) -> Path:
    """`path` if it is a results folder (holds data/ or runs/); else ValueError naming it."""
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such results folder")
    if not any((path / name).is_dir() for name in ("data", "runs")):
        raise ValueError(
            f"{path}: not a results folder (no data/ or runs/ inside); pass the folder the workflow writes"
        )
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, help="the results folder to check (results/)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--configfile",
        type=Path,
        default=Path("config/config.yaml"),
        help="the config the results were built with (default config/config.yaml)",
    )
    source.add_argument("--config-json", help="the config as JSON (as the workflow's `check` rule passes it)")
    add_override_arguments(parser)
    parser.add_argument(
        "--out", type=Path, default=None, help="also write the report here if there are no problems (else remove it)"
    )


def run(args: argparse.Namespace) -> int:
    from depthwidth.io import write_text

    results = results_folder(args.results)
    if args.config_json:
        raw = json_option(args.config_json, "--config-json")
    else:
        raw = read_overridden(args.configfile, args.config)
    plan = from_config(raw)
    c = check(results, plan, label=str(args.results))
    lines = [f"checked {c.checked} artifacts of config {plan.config['name']}: {len(c.problems)} problems"]
    lines += [f"  - {p}" for p in c.problems]
    lines += [f"  note: {n}" for n in c.notes]
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.out and not c.problems:
        write_text(args.out, report)
    elif args.out:
        args.out.unlink(missing_ok=True)  # no stale report of an earlier check survives a failing one
    return 1 if c.problems else 0
