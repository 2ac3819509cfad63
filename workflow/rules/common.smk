# Shared by every stage: the validated config and its plan (computed once), the wildcards, where each rule
# writes (its patterns, from depthwidth.contracts), the package code each rule runs, and the input functions
# (`get_*`) that look every job up in the plan. What works around Snakemake itself: workarounds.smk.
import json
import os
import shlex
import sys
from pathlib import Path

# Plan with this checkout's package, whatever else is installed (the jobs import it too, see below).
sys.path.insert(0, str(Path(workflow.basedir, "workflow")))
from depthwidth import contracts, rates
from depthwidth.clean import record as record_config
from depthwidth.cli import COMMANDS
from depthwidth.contracts import (
    ENTROPY_TABLE,
    SDE_TERMINAL,
    sweep_experiment,
    sweep_table,
)
from depthwidth.io import full_disk_note
from depthwidth.columns import curves_table
from depthwidth.plan.config import ConfigError, merged, read as read_config, yaml_typed
from depthwidth.plan.jobs import from_config, name_problem, one_of
from depthwidth.plan import second
from depthwidth.plan.runsheet import gpu_note
from depthwidth.plan.validate import fits_problem

# --config's nested values typed as YAML types them, as `python -m depthwidth plan --config` does
config.update(merged(config, yaml_typed(workflow.config_settings.overwrite_config)))
try:
    # snakemake's YAML reader keeps a duplicated key silently; ours names it
    for path in workflow.configfiles:
        read_config(path)
    PLAN = from_config(config)
except ConfigError as err:
    sys.exit(f"Invalid config: {err}")
config.update(PLAN.config)
NAME = PLAN.name  # what this config concludes lies under contracts.config_dir(NAME)
# Before any job: a corpus too short for the runs or not there, a run this machine cannot hold, a name another
# config has.
problems = [PLAN.split_size_problem()]
if workflow.is_main_process:  # a cluster job re-parses this file on its own node
    problems += [
        PLAN.corpus_problem(),
        fits_problem(PLAN),
        name_problem(PLAN, workflow.configfiles),
    ]
for problem in filter(None, problems):
    sys.exit(f"Invalid config: {problem}")


# Every wildcard, from the plan: a job outside it is no job of this config.
wildcard_constraints:
    run=one_of(PLAN.all_run_ids(), "no-run"),
    scan=one_of(PLAN.scans, "no-scan"),
    round=r"\d+",
    simulation=one_of(PLAN.all_simulation_ids(), "no-simulation"),
    experiment=one_of(PLAN.sweep, "no-sweep"),
    figure=one_of(PLAN.figures, "no-figure"),
    corpus=one_of([Path(folder).name for folder in PLAN.data_blocks()], "no-corpus"),


# Where the rules with wildcards write (contracts.py owns every path).
RUN_FILES = {
    Path(f).stem: f"{contracts.run_dir('{run}')}/{f}" for f in contracts.RUN_FILES
}
DATA_FOLDERS = Path(
    PLAN.data_dir
).parent  # results/data: every corpus folder, one per data block
DATA_FILES = PLAN.data_outputs(f"{DATA_FOLDERS}/{{corpus}}")
RATE_ROUND = contracts.rate_round_path("{scan}", "{round}")
SIMULATION = contracts.simulation_path("{simulation}")
SWEEP_TABLE = contracts.table_path(NAME, sweep_table("{experiment}"))
CURVES_TABLE = contracts.table_path(NAME, curves_table("{experiment}"))
# with two looks (config decide.looks), the sweep tables on the first stage's seeds alone (plan/second.py)
FIRST_TABLE = second.first_table_path(NAME, sweep_table("{experiment}"))
FIRST_CURVES = second.first_table_path(NAME, curves_table("{experiment}"))
FIGURE_FILES = {
    s[1:]: contracts.figure_path(NAME, "{figure}", s) for s in contracts.FIGURE_SUFFIXES
}

CONDA_ENV = "../../envs/depthwidth.yaml"  # relative to the rule files
# Jobs import the package from this checkout, installed or not (conda envs, cluster nodes). The path is
# shell-quoted (a folder named with spaces or an apostrophe); braces are doubled for snakemake's formatting.
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


def get_run_data(wildcards):
    return PLAN.run_token_files(wildcards.run)


def get_data_block(wildcards):
    return as_json(PLAN.data_blocks()[f"{DATA_FOLDERS}/{wildcards.corpus}"])


def get_checkpoint_dir(wildcards):
    return PLAN.job(wildcards.run).checkpoint_dir


def get_run_resource(key):
    return lambda wildcards: PLAN.job(wildcards.run).resources[key]


def get_run_scheduler(key):
    return lambda wildcards: PLAN.job(wildcards.run).scheduler[key]


def get_simulation(key):
    return lambda wildcards: getattr(PLAN.simulation(wildcards.simulation), key)


def get_figure_inputs(wildcards):
    """A figure's tables by input name, and its code: the figure command's and the figure's own module, which
    it imports by name (editing one reruns that figure alone). What a figure takes from the registry (its title
    and input names) reaches the job as params, so the registry is no code of a figure job.
    """
    figure = PLAN.figures[wildcards.figure]
    code = package_code("figure", contracts.figure_module(wildcards.figure))
    return {**figure.inputs, "code": code}


def get_figure_arguments(wildcards, input):
    inputs = PLAN.figures[wildcards.figure].inputs
    return " ".join(
        f"--input {shlex.quote(f'{name}={input[name]}')}" for name in inputs
    )


def get_figure_level(wildcards):
    return PLAN.figure_level(wildcards.figure)


def get_figure_tilt(wildcards):
    return PLAN.tilt_option(wildcards.figure)


def get_decide_inputs(wildcards):
    """A decide job's tables (the figure's and, for a figure of sweep tables, lr_check's) and its code: the decide
    command's, which runs the claims' rules, and the figure's own module, whose `data` it runs on each redraw.
    """
    code = package_code("decide", contracts.figure_module(wildcards.figure))
    return {"tables": PLAN.decide_tables(wildcards.figure), "code": code}


def get_figure(key):
    return lambda wildcards: getattr(PLAN.figures[wildcards.figure], key)


def get_figure_caption(wildcards):
    return contracts.caption_path(NAME, wildcards.figure)
