# Shared by every stage: the validated config, its plan (computed once), and the package code a rule runs.
import json
import os
import shlex
import sys
import threading
from pathlib import Path

# Plan with this checkout's package, whatever else is installed (the jobs import it too, see below).
sys.path.insert(0, str(Path(workflow.basedir, "workflow")))
from depthwidth.config import ConfigError, read as read_config
from depthwidth.plan import (
    FINDINGS,
    caption_path,
    findings_figure_path,
    from_config,
    run_folder,
)
from depthwidth.runsheet import has_cuda_device

try:
    # snakemake's YAML reader keeps a duplicated key silently; ours names it
    for path in workflow.configfiles:
        read_config(path)
    PLAN = from_config(config)
except ConfigError as err:
    sys.exit(f"Invalid config: {err}")
config.update(PLAN.config)

# Paths are relative to the working directory, so that a moved or copied checkout keeps its cache.
PACKAGE = Path(workflow.basedir, "workflow", "depthwidth")
CONDA_ENV = "../../envs/depthwidth.yaml"  # relative to the rule files
# Jobs import the package from this checkout, installed or not (conda envs, cluster nodes).
# The path is shell-quoted (a checkout may sit under a folder named with spaces or an apostrophe);
# braces are doubled for snakemake's formatting.
shell.prefix(
    "export PYTHONPATH=%s${{PYTHONPATH:+:$PYTHONPATH}}; "
    % shlex.quote(str(PACKAGE.parent.resolve())).replace("{", "{{").replace("}", "}}")
)


def package_code(*modules):
    """The package modules a rule runs (so editing one reruns the rule), plus the CLI and I/O; a name
    that is a subpackage (a folder) stands for every module in it."""
    paths = []
    for name in ("cli", "io", *modules):
        folder = PACKAGE / name
        paths += (
            sorted(folder.glob("*.py")) if folder.is_dir() else [PACKAGE / f"{name}.py"]
        )
    return [os.path.relpath(path) for path in paths]


def as_json(obj):
    """A params value the CLI reads back; snakemake reruns the rule when it changes."""
    return json.dumps(obj, sort_keys=True)


def run_files(table, name="metrics.json"):
    """Input function: one file of every run that a table (an id with wildcards) reads."""
    return lambda wildcards: [
        f"{run_folder(run)}/{name}"
        for run in PLAN.table_runs(table.format(**wildcards))
    ]


def figure_inputs(wildcards):
    """A figure's tables by input name, and its code (editing one module reruns one figure). The
    registry (plots/__init__.py) is no input: what a figure takes from it, its title and its input
    names, reaches the job as params, so editing one entry reruns that figure alone."""
    figure = PLAN.figures[wildcards.figure]
    return {**figure.inputs, "code": package_code("plots/common", *figure.code)}


def gpu_warning():
    """One line, before any job runs, when the config asks for GPUs that this machine (running its
    jobs itself) does not have: those runs then train on the CPU."""
    keys = PLAN.gpu_keys()
    if keys and workflow.local_exec and not has_cuda_device():
        return (
            f"depthwidth: config {config['name']} asks for GPUs ({', '.join(keys)}) but this machine "
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
