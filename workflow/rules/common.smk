# Shared by every stage: config validation, paths, and the package code each rule depends on.
import hashlib
import json
import re
import sys
from pathlib import Path

from depthwidth import artifacts
from depthwidth.config import ConfigError, validate as validate_config
from depthwidth.sweep import plan as plan_sweep, run_plan

try:
    config.update(validate_config(config))
except ConfigError as err:
    sys.exit(f"Invalid config: {err}")

PACKAGE = Path(workflow.basedir) / "workflow" / "depthwidth"
CONDA_ENV = str(Path(workflow.basedir) / "envs" / "depthwidth.yaml")
# Jobs import the package from this checkout, installed or not (conda envs, cluster nodes).
shell.prefix("export PYTHONPATH='%s'${{PYTHONPATH:+:$PYTHONPATH}}; " % PACKAGE.parent)
DATA_DIR = artifacts.data_dir(config)


wildcard_constraints:
    corpus=re.escape(config["data"]["name"]),


def package_code(*modules):
    """The package modules a rule runs (so editing one reruns the rule), plus the CLI and I/O."""
    return [str(PACKAGE / f"{name}.py") for name in ("cli", "io", *modules)]


def as_json(obj):
    """A params value the CLI reads back; snakemake reruns the rule when it changes."""
    return json.dumps(obj, sort_keys=True)


def corpus_files(wildcards):
    """Local text files of a `text` corpus, so that editing one rebuilds the shards."""
    data = config["data"]
    if data["corpus"] != "text":
        return []
    files = []
    for entry in map(Path, data["paths"]):
        files += (
            sorted(map(str, entry.rglob("*.txt"))) if entry.is_dir() else [str(entry)]
        )
    return files


# ---- training runs: experiment -> run id -> train spec (planned without torch)
RUN_SPECS = artifacts.run_specs(config)
SWEEP_PLAN = plan_sweep(config["sweep"]) if "sweep" in config else {}
SWEEP_EXPERIMENTS = [e for e in RUN_SPECS if e != artifacts.ENTROPY_EXPERIMENT]


wildcard_constraints:
    experiment="|".join(RUN_SPECS) or "no-runs",
    run=r"[A-Za-z0-9_.+-]+",


def run_spec(wildcards):
    """The train spec of one run, as JSON (a change of recipe or shape reruns the run)."""
    return as_json(RUN_SPECS[wildcards.experiment][wildcards.run])


def run_checkpoint_dir(wildcards):
    """Where a run keeps its resume checkpoint: beside its outputs, keyed by its spec, so that a
    run interrupted under an older config never meets a checkpoint it must refuse."""
    digest = hashlib.sha256(run_spec(wildcards).encode()).hexdigest()[:10]
    return f"results/runs/{wildcards.experiment}/{wildcards.run}.ckpt-{digest}"


def run_resources(key, default):
    """A training job's resource from the block that planned it (sweep or shaped.training)."""

    def resource(wildcards):
        block = (
            config["shaped"]["training"]
            if wildcards.experiment == artifacts.ENTROPY_EXPERIMENT
            else config["sweep"]
        )
        return block.get(key, default)

    return resource


def run_outputs(experiment, name="metrics.json"):
    """One file of every run of an experiment."""
    return [f"results/runs/{experiment}/{run}/{name}" for run in RUN_SPECS[experiment]]


def sweep_runs_plan(wildcards):
    """What the sweep table of one experiment needs to know of its runs (shape, seed, N target)."""
    runs = SWEEP_PLAN[wildcards.experiment]
    return as_json({run_id: run_plan(run) for run_id, run in runs.items()})


def run_outputs_of(experiment, name="metrics.json"):
    """Input function: one file of every run of `experiment` (none when the config has no such runs)."""
    return lambda wildcards: (
        run_outputs(experiment, name) if experiment in RUN_SPECS else []
    )


# ---- shaped Transformer at initialization: simulation settings as command-line options
SIMULATION = config.get("shaped", {}).get("simulation")


wildcard_constraints:
    block="attention|mlp|both",
    source=r"sde|n\d+",


def simulation_options(sde=True, mlp=True, **overrides):
    """The simulation setting as CLI options: only the keys the job uses (dt for the SDE, the
    ReLU slopes for MLP blocks), so editing dt does not rerun the finite networks."""
    sim = {**SIMULATION, **overrides}
    keys = ["T", "tau0", "gamma", "m", "rho0", "samples"]
    keys += ["dt"] if sde else []
    keys += ["c_plus", "c_minus"] if mlp else []
    options = [f"--{key.replace('_', '-')} {sim[key]}" for key in keys]
    return " ".join(options + [f"--seed {config['seed']}"])


def shaped_setting(wildcards):
    return simulation_options(
        sde=wildcards.source == "sde", mlp=wildcards.block != "attention"
    )


def shaped_width(wildcards):
    if wildcards.source == "sde":
        return "--source sde"
    return f"--source finite --n {wildcards.source[1:]}"


def shaped_sample_tables(wildcards):
    """One table per (block, source): the SDE and each finite width."""
    sources = ["sde"] + [f"n{width}" for width in SIMULATION["widths"]]
    return [
        f"results/tables/shaped/{block}/{source}.csv"
        for block in SIMULATION["blocks"]
        for source in sources
    ]


def trajectory_setting(wildcards):
    trajectory = SIMULATION["trajectory"]
    options = simulation_options(
        mlp=trajectory["block"] != "attention",
        T=trajectory["T"],
        samples=trajectory["samples"],
    )
    return f"{options} --n {trajectory['n']} --points {trajectory['points']} --block {trajectory['block']}"


# ---- figures: each figure id, the tables it plots, and the code it runs
FIGURE_INPUTS = artifacts.figure_inputs(config)
SWEEP_FIGURES = artifacts.SWEEP_FIGURES
SHAPED_FIGURES = artifacts.SHAPED_FIGURES
# package modules each figure family runs besides its own plot module
FIGURE_CODE = {
    figure: ["plots/sweep_common", "fits", "shapes"] for figure in SWEEP_FIGURES
}
FIGURE_CODE.update(
    {
        figure: ["plots/shaped_common", "shaped_sim", "fits"]
        for figure in artifacts.SIMULATION_FIGURES
    }
)
FIGURE_CODE["shaped_entropy"] = []


def figure_inputs(wildcards):
    return FIGURE_INPUTS[wildcards.figure]


def figure_code(wildcards):
    """The figure's own module and what it shares with its family (editing one reruns one figure)."""
    own = ["plots/__init__", "plots/common", f"plots/{wildcards.figure}"]
    return package_code(*FIGURE_CODE[wildcards.figure], *own)


def figure_family(wildcards):
    """Report subcategory: which paper the figure replicates."""
    return {"kaplan": "Kaplan 2020", "levine": "Levine 2020", "shaped": "Noci 2023"}[
        wildcards.figure.split("_")[0]
    ]


def figure_targets(*figures):
    """PNG paths of the figures this config enables."""
    return [f"results/figures/{f}.png" for f in figures if f in FIGURE_INPUTS]


wildcard_constraints:
    figure="|".join(FIGURE_INPUTS) or "no-figure",


def check_code(wildcards):
    """Everything `check` reads: the registries, the schemas and every figure's COLUMNS."""
    modules = [
        "check",
        "artifacts",
        "claims",
        "config",
        "sweep",
        "shapes",
        "shaped_sim",
    ]
    modules += ["shaped_training", "fits", "plots/__init__"]
    return package_code(*modules, *(f"plots/{figure}" for figure in FIGURE_INPUTS)) + [
        str(Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
    ]


def scale_note():
    """What this config runs, in one line, for the claims table and the captions."""
    parts = [
        f"config {config['name']}",
        f"corpus {config['data']['name']} (vocab {config['data']['vocab_size']})",
    ]
    if "sweep" in config:
        recipe = config["sweep"]["recipe"]
        runs = sum(len(RUN_SPECS[e]) for e in SWEEP_EXPERIMENTS)
        parts.append(
            f"{runs} sweep runs x {recipe['token_budget']:,} tokens, seeds {config['sweep']['seeds']}"
        )
    if SIMULATION:
        parts.append(
            f"SDE vs finite n={SIMULATION['widths']}, {SIMULATION['samples']} samples, T={SIMULATION['T']}"
        )
    return "; ".join(parts)
