# Shared by every stage: the validated config, its plan (computed once), the wildcards, the package code
# each rule runs, and the input functions (`get_*`) that look every job up in the plan.
import json
import os
import re
import shlex
import sys
import threading
from pathlib import Path

# Plan with this checkout's package, whatever else is installed (the jobs import it too, see below).
sys.path.insert(0, str(Path(workflow.basedir, "workflow")))
from depthwidth import contracts
from depthwidth.clean import record as record_config
from depthwidth.cli import COMMANDS
from depthwidth.contracts import (
    ENTROPY_TABLE,
    SDE_TERMINAL,
    sweep_experiment,
    sweep_table,
)
from depthwidth.plan.config import ConfigError, read as read_config
from depthwidth.plan.jobs import from_config
from depthwidth.plan.runsheet import has_cuda_device
from snakemake.exceptions import IncompleteCheckpointException

try:
    # snakemake's YAML reader keeps a duplicated key silently; ours names it
    for path in workflow.configfiles:
        read_config(path)
    PLAN = from_config(config)
except ConfigError as err:
    sys.exit(f"Invalid config: {err}")
if problem := PLAN.split_size_problem():
    sys.exit(f"Invalid config: {problem}")
config.update(PLAN.config)
NAME = PLAN.name  # what this config concludes lies under contracts.config_dir(NAME)


# Every wildcard, from the plan: a job outside it is no job of this config.
def _one_of(ids, none):
    return "|".join(map(re.escape, ids)) or none


wildcard_constraints:
    run=_one_of(PLAN.all_run_ids(), "no-run"),
    scan=_one_of(PLAN.scans, "no-scan"),
    round=r"\d+",
    simulation=_one_of(PLAN.simulations, "no-simulation"),
    experiment=_one_of(PLAN.sweep, "no-sweep"),
    figure=_one_of(PLAN.figures, "no-figure"),


CONDA_ENV = "../../envs/depthwidth.yaml"  # relative to the rule files
# Jobs import the package from this checkout, installed or not (conda envs, cluster nodes).
# The path is shell-quoted (a checkout may sit under a folder named with spaces or an apostrophe);
# braces are doubled for snakemake's formatting.
shell.prefix(
    "export PYTHONPATH=%s${{PYTHONPATH:+:$PYTHONPATH}}; "
    % shlex.quote(str(contracts.PACKAGE.parent)).replace("{", "{{").replace("}", "}}")
)


def package_code(command, *modules):
    """The package files a rule's command runs: its module (cli.COMMANDS), any `modules` it imports by name at
    run time, and everything they import (contracts.code_files), so editing one reruns exactly the rules that
    run it; paths relative to the working directory, so that a moved or copied checkout keeps its cache.
    """
    runs = COMMANDS[command][0]
    return [os.path.relpath(path) for path in contracts.code_files(runs, *modules)]


def as_json(obj):
    """A params value the CLI reads back; snakemake reruns the rule when it changes."""
    return json.dumps(obj, sort_keys=True)


def folder_of(output_name):
    """params function: the folder of a declared output (commands that write a folder take it from there)."""
    return lambda wildcards, output: os.path.dirname(output[output_name])


# --- input functions and params: each job looked up in the plan -----------------------------------------
def get_run_spec(wildcards):
    return as_json(PLAN.job(wildcards.run).spec)


def get_checkpoint_dir(wildcards):
    return PLAN.job(wildcards.run).checkpoint_dir


def get_run_resource(key):
    return lambda wildcards: PLAN.job(wildcards.run).resources[key]


def get_run_scheduler(key):
    return lambda wildcards: PLAN.job(wildcards.run).scheduler[key]


# --- the learning-rate scans (sweep.lr_grid): each round a checkpoint, read once it is done --------------
class ScansIncomplete(IncompleteCheckpointException):
    """Every scan round an input function is waiting for at once (snakemake's own exception names one),
    so that the scans of all shapes run side by side."""


def read_json(path):
    return json.loads(Path(path).read_text())


def scan_rounds(scan_id):
    """The records of a scan's rounds, in order, up to its last; ScansIncomplete for the round not done."""
    records, round_ = [], 0
    while True:
        path = checkpoints.rate_scan.get(scan=scan_id, round=round_).output[0]
        records.append(read_json(path))
        if records[-1]["done"]:
            return records
        round_ += 1


def chosen_lattice_indices(scan_ids):
    """Each scan's chosen lattice index; ScansIncomplete naming every round still to run."""
    chosen, waiting = {}, []
    for scan_id in scan_ids:
        try:
            chosen[scan_id] = scan_rounds(scan_id)[-1]["chosen"]
        except IncompleteCheckpointException as err:
            waiting.append(err.targetfile)
    if waiting:
        raise ScansIncomplete(checkpoints.rate_scan.rule, waiting)
    return chosen


def previous_round(wildcards):
    """The record of the round before this one (None for the first), and its path ([] for the first)."""
    if int(wildcards.round) == 0:
        return None, []
    path = checkpoints.rate_scan.get(
        scan=wildcards.scan, round=int(wildcards.round) - 1
    ).output[0]
    return read_json(path), [path]


def get_scan_inputs(wildcards):
    """A scan round's runs: the first scouts, or every run so far and those its previous round asked for."""
    record, previous = previous_round(wildcards)
    runs = PLAN.scans[wildcards.scan].round_runs(record)
    return {
        "runs": [f"{contracts.run_dir(run_id)}/metrics.json" for _, _, run_id in runs],
        "previous": previous,
    }


def get_scan_arguments(wildcards):
    record, _ = previous_round(wildcards)
    runs = PLAN.scans[wildcards.scan].round_runs(record)
    return " ".join(
        shlex.quote(f"--{option}={k}={contracts.run_dir(run_id)}/metrics.json")
        for option, k, run_id in runs
    )


def get_scan_spec(wildcards):
    return as_json(PLAN.scans[wildcards.scan].spec)


def table_run_ids(table):
    """The runs a table reads, each run a scan decides at its scan's chosen rate."""
    experiment = sweep_experiment(table)
    if experiment is None:
        return PLAN.table_runs(table)
    chosen = chosen_lattice_indices(PLAN.experiment_scans(experiment))
    return [
        PLAN.chosen_run(experiment, run_id, chosen.get)
        for run_id in PLAN.table_runs(table)
    ]


def get_table_run_files(table, name):
    """One file (`name`) of every run a table (a table id, or a function of the wildcards) reads."""
    return lambda wildcards: [
        f"{contracts.run_dir(run)}/{name}"
        for run in table_run_ids(table(wildcards) if callable(table) else table)
    ]


def get_sweep_table(wildcards):
    return sweep_table(wildcards.experiment)


def get_sweep_runs(wildcards):
    try:
        chosen = chosen_lattice_indices(PLAN.experiment_scans(wildcards.experiment))
    except (
        ScansIncomplete
    ) as err:  # a params function may name one round, one of the job's inputs
        raise IncompleteCheckpointException(err.rule, err.targetfile[0]) from None
    return as_json(PLAN.chosen_plan(wildcards.experiment, chosen.get))


def get_simulation(key):
    return lambda wildcards: getattr(PLAN.simulations[wildcards.simulation], key)


def get_figure_inputs(wildcards):
    """A figure's tables by input name, and its code: the figure command's and the figure's own module, which
    it imports by name (editing a figure's module reruns that figure alone). The registry (plots/registry.py)
    is no code of a figure job: what a figure takes from it, its title and its input names, reaches the job as
    params, so editing one entry reruns that figure alone."""
    figure = PLAN.figures[wildcards.figure]
    return {
        **figure.inputs,
        "code": package_code("figure", contracts.figure_module(wildcards.figure)),
    }


def get_figure_arguments(wildcards, input):
    return " ".join(
        f"--input {shlex.quote(f'{name}={input[name]}')}"
        for name in PLAN.figures[wildcards.figure].inputs
    )


def get_figure_title(wildcards):
    return PLAN.figures[wildcards.figure].title


def get_figure_caption(wildcards):
    return contracts.caption_path(NAME, wildcards.figure)


def get_figure_paper(wildcards):
    return PLAN.figures[wildcards.figure].paper


def snakemake_processes_here():
    """Process ids of the other snakemake processes on this machine whose working directory is this one
    (from /proc; none where there is no /proc)."""
    here, found = os.getcwd(), []
    # the process table (Linux), not a data path, which is what the lint's absolute-path rule is about
    process_table = Path(os.sep, "proc")
    for proc in process_table.glob("[0-9]*"):
        if int(proc.name) == os.getpid():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            cwd = os.readlink(proc / "cwd")
        except OSError:  # gone, or another user's
            continue
        program = [Path(arg).name for arg in argv[:3]]
        if cwd == here and (
            program[:1] == ["snakemake"]
            or "snakemake" in program[1:2]
            or argv[1:3] == ["-m", "snakemake"]
        ):
            found.append(int(proc.name))
    return sorted(found)


def lock_note():
    """One line when snakemake's lock folder holds a lock as this run starts: snakemake refuses to run if
    the locks overlap this run's files and advises `--unlock`, which is right only when no other snakemake
    still runs here (else both would write the same files). Says which case this is."""
    if not any(Path(".snakemake", "locks").glob("*.lock")):
        return None
    pids = snakemake_processes_here()
    if pids:
        return (
            f"depthwidth: .snakemake/locks holds a lock of snakemake process {', '.join(map(str, pids))}, running "
            "in this folder: if this run cannot lock the directory, wait for that one (or stop it) rather than "
            "`snakemake --unlock`, which would let both write the same files"
        )
    return (
        "depthwidth: .snakemake/locks holds a lock and no snakemake process runs in this folder on this machine: "
        "a killed run left it; if this run cannot lock the directory, `snakemake --unlock` removes it (check "
        "first that no run on another machine shares this folder)"
    )


if workflow.is_main_process and (note := lock_note()):
    print(note, file=sys.stderr)


def report_requested():
    """The file `snakemake --report [FILE]` was asked to write, if this process was started to write one."""
    args = sys.argv[1:]
    for i, arg in enumerate(args):
        if arg.startswith("--report="):
            return arg.partition("=")[2]
        if arg == "--report":
            given = args[i + 1] if i + 1 < len(args) else ""
            return given if given and not given.startswith("-") else "report.html"
    return None


# snakemake writes the report in place, and one that fails (a figure not built yet) left the old report
# looking current: it goes first, so a failed --report leaves none
OLD_REPORT = report_requested() if workflow.is_main_process else None
if OLD_REPORT and Path(OLD_REPORT).is_file():
    Path(OLD_REPORT).unlink()
    print(
        f"depthwidth: removed the old {OLD_REPORT}; a failed report leaves none",
        file=sys.stderr,
    )


def record_this_config():
    """results/<name>/config.json, written as a run starts (onstart: not on a dry run),
    which `python -m depthwidth clean` of another config reads to spare this one's."""
    try:
        record_config(PLAN)
    except OSError as err:  # a read-only results folder: only clean reads it
        print(f"depthwidth: config not recorded: {err}", file=sys.stderr)


def gpu_warning():
    """One line, before any job runs, when the config asks for GPUs that this machine (running its
    jobs itself) does not have: those runs then train on the CPU."""
    keys = PLAN.gpu_keys()
    if keys and workflow.local_exec and not has_cuda_device():
        return (
            f"depthwidth: config {NAME} asks for GPUs ({', '.join(keys)}) but this machine "
            "has no CUDA device: its training runs will run on the CPU"
        )
    return None


def stop_scheduler_timers():
    """End the timers snakemake's scheduler left waiting: it arms one on every pass of its loop
    (max-jobs-per-timespan, a minute in profiles/default) and, as they are not daemon threads, the
    process would wait for the last of them before it exits."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
