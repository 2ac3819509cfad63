"""The plan: everything one config produces, built once from the validated config, without torch.

Each training run (its JSON spec, resources, and the tables that read it), each simulation job (its
JSON spec), each table and figure with its named inputs, and the targets. The workflow rules look
things up in it the way catalog workflows look up a sample sheet; `check`, the claims' scale note and
`python -m depthwidth plan` (the run sheet) read the same object.

Files, relative to the working directory:
  results/data/<corpus>/{tokenizer.json,train.bin,val.bin,meta.json}
  results/runs/<run id>/{metrics.json,curve.csv,entropy.csv}   one folder per distinct spec: a run that
                                                               two experiments plan is trained once
  results/tables/<table id>.csv       sweep_<experiment>, sde_terminal, shaped_trajectory, shaped_entropy
  results/tables/shaped/<block>/<source>.csv                  one terminal-law simulation job each
  results/figures/<figure id>.{png,pdf,csv}, results/claims.{csv,md}, results/report/captions/<id>.rst
  docs/findings.md, docs/findings/<figure id>.png    `snakemake findings` only (no part of `all`): what a
                                                     built run finds, committed by hand after a default run
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from depthwidth import shaped_training
from depthwidth.plots import FIGURES
from depthwidth.shapes import nonembedding
from depthwidth.sweep import LR_SCALE_TERMS, PlanError, Run, run_plan, train_spec
from depthwidth.sweep import plan as plan_sweep

DATA_FILES = ("tokenizer.json", "train.bin", "val.bin", "meta.json")  # what prepare-data writes
RUN_FILES = ("metrics.json", "curve.csv", "entropy.csv")
FIGURE_SUFFIXES = (".png", ".pdf", ".csv")
CLAIMS_FILES = ("results/claims.csv", "results/claims.md")
FINDINGS, FINDINGS_FIGURES_DIR = "docs/findings.md", "docs/findings"
# the headline figures docs/findings.md shows, in this order (those a config draws)
FINDINGS_FIGURES = (
    "kaplan_power_law",
    "kaplan_fig6",
    "levine_optimal_depth",
    "levine_crossover",
    "shaped_sde_density",
    "shaped_entropy",
)
# a training block's keys for its jobs (defaults and units: the config schema)
RESOURCE_KEYS = ("threads", "mem_mb", "runtime", "gpu", "runs_per_gpu")
GPU_SHARE = "shard:1"  # the SLURM generic resource a run that shares a GPU asks for (one GPU shard)
ENTROPY_TABLE = "shaped_entropy"
SDE_TERMINAL, TRAJECTORY = "sde_terminal", "shaped_trajectory"
# simulation keys each job reads: dt only for the SDE, the ReLU slopes only for blocks with an MLP
SETTING_KEYS = ("T", "tau0", "gamma", "m", "rho0", "samples")


@dataclass(frozen=True)
class TrainJob:
    run_id: str
    spec: dict  # what `python -m depthwidth train --spec-json` reads
    resources: dict  # threads, mem_mb, runtime (minutes), gpu, runs_per_gpu
    tables: tuple[str, ...]  # table ids that read this run

    @property
    def scheduler(self) -> dict:
        """What the job asks of the scheduler beyond threads, memory and time: whole GPUs (`gpu`), or,
        when several runs share one GPU, no whole GPU and one SLURM GPU shard (`gres`)."""
        shared = self.resources["gpu"] and self.resources["runs_per_gpu"] > 1
        return {"gpu": 0, "gres": GPU_SHARE} if shared else {"gpu": self.resources["gpu"], "gres": None}

    @property
    def folder(self) -> str:
        return run_folder(self.run_id)

    @property
    def checkpoint_dir(self) -> str:
        """Beside the run's outputs, keyed by its spec: a run interrupted under an older config never
        meets a checkpoint it must refuse."""
        digest = hashlib.sha256(json.dumps(self.spec, sort_keys=True).encode()).hexdigest()[:10]
        return f"{self.folder}.ckpt-{digest}"


@dataclass(frozen=True)
class SimulationJob:
    id: str  # "<block>/<source>" (terminal law) or "trajectory"
    command: str  # `shaped-sim` subcommand: samples | trajectory
    spec: dict  # what `python -m depthwidth shaped-sim <command> --spec-json` reads

    @property
    def output(self) -> str:
        return table_path(TRAJECTORY) if self.command == "trajectory" else f"results/tables/shaped/{self.id}.csv"


@dataclass(frozen=True)
class FigureJob:
    id: str
    paper: str
    title: str
    inputs: dict[str, str]  # input name -> table file
    code: tuple[str, ...]  # package modules it runs, its own included


@dataclass(frozen=True)
class Plan:
    config: dict
    runs: dict[str, TrainJob]  # run id -> job
    sweep: dict[str, dict[str, Run]]  # sweep experiment -> run id -> run (shape, seed, N target)
    entropy_runs: tuple[str, ...]  # run ids of the shaped-vs-standard training
    simulations: dict[str, SimulationJob]
    figures: dict[str, FigureJob]

    @property
    def data_dir(self) -> str:
        return f"results/data/{self.config['data']['name']}"

    def table_runs(self, table: str) -> list[str]:
        """Run ids a table reads, in plan order."""
        if table == ENTROPY_TABLE:
            return list(self.entropy_runs)
        return list(self.sweep[table.removeprefix("sweep_")])

    @property
    def tables(self) -> list[str]:
        """Table ids this config builds."""
        tables = [f"sweep_{name}" for name in self.sweep]
        tables += [SDE_TERMINAL, TRAJECTORY] if self.simulations else []
        return tables + ([ENTROPY_TABLE] if self.entropy_runs else [])

    def sweep_runs(self, experiment: str) -> dict[str, dict]:
        """What a sweep table needs to know of its runs: run id -> shape, seed, N target."""
        return {run_id: run_plan(run) for run_id, run in self.sweep[experiment].items()}

    def corpus_files(self) -> list[str]:
        """Local text files of a `text` corpus (editing one rebuilds the shards); none for other kinds."""
        data = self.config["data"]
        if data["corpus"] != "text":
            return []
        files = []
        for entry in map(Path, data["paths"]):
            files += sorted(map(str, entry.rglob("*.txt"))) if entry.is_dir() else [str(entry)]
        return files

    def min_split_tokens(self) -> int:
        """The fewest tokens each of train.bin and val.bin must hold for every planned run to train: the
        longest n_ctx + 1 (one window and its next-token targets); 0 without runs. prepare-data refuses less."""
        return max((job.spec["model"]["n_ctx"] + 1 for job in self.runs.values()), default=0)

    def gpu_keys(self) -> list[str]:
        """The config's training blocks that ask for GPUs (`sweep.gpu`, `shaped.training.gpu`)."""
        blocks = {"sweep": self.config.get("sweep"), "shaped.training": self.config.get("shaped", {}).get("training")}
        return [f"{key}.gpu" for key, block in blocks.items() if block and block["gpu"]]

    def sample_tables(self) -> list[str]:
        return [job.output for job in self.simulations.values() if job.command == "samples"]

    def targets(self) -> list[str]:
        """Every file a rule of this config declares (rule all builds them all, so a deleted one, even
        one no other job reads, is rebuilt): the data, every run's outputs, the tables, the simulation
        samples, every figure's files, the claims and the report captions."""
        data = [f"{self.data_dir}/{name}" for name in DATA_FILES]
        runs = [f"{job.folder}/{name}" for job in self.runs.values() for name in RUN_FILES]
        tables = [*map(table_path, self.tables), *self.sample_tables()]
        figures = [path for figure in self.figures for path in figure_files(figure)]
        return [*data, *runs, *tables, *figures, *CLAIMS_FILES, *map(caption_path, self.figures)]

    def findings_figures(self) -> list[str]:
        """The headline figures (FINDINGS_FIGURES) this config draws: those docs/findings.md shows."""
        return [figure for figure in FINDINGS_FIGURES if figure in self.figures]

    def scale_note(self) -> str:
        """What this config runs, in one line, for the claims table and the captions."""
        config = self.config
        parts = [f"config {config['name']}", f"corpus {config['data']['name']} (vocab {config['data']['vocab_size']})"]
        if self.sweep:
            sweep_runs = {rid for runs in self.sweep.values() for rid in runs}
            tokens = _tokens_rule(config["sweep"]["recipe"])
            lr = _lr_rule(config["sweep"]["recipe"])
            parts.append(f"{len(sweep_runs)} sweep runs x {tokens}, lr {lr}, seeds {config['sweep']['seeds']}")
        sim = config.get("shaped", {}).get("simulation")
        if sim:
            parts.append(f"SDE vs finite n={sim['widths']}, {sim['samples']} samples, T={sim['T']}")
        return "; ".join(parts)


def _tokens_rule(recipe: dict) -> str:
    """The sweep's tokens per run in words: a fixed budget or a multiple of N, and the epoch cap."""
    if "tokens_per_parameter" in recipe:
        rule = f"{recipe['tokens_per_parameter']:g} tokens per non-embedding parameter"
    else:
        rule = f"{recipe['token_budget']:,} tokens"
    return rule + (f" (at most {recipe['max_epochs']:g} epochs)" if "max_epochs" in recipe else "")


def _lr_rule(recipe: dict) -> str:
    """The sweep's peak learning rate in words: a number or Kaplan's LR(N), times its shape scale."""
    rule = "Kaplan's LR(N)" if recipe["lr"] == "kaplan" else f"{recipe['lr']:g}"
    scale = recipe.get("lr_scale")
    if scale:
        for key, (symbol, _) in LR_SCALE_TERMS.items():
            if scale[key]:
                rule += f" x ({symbol}/{scale['at'][key]:g})^{scale[key]:g}"
    return rule


def figure_files(figure: str) -> list[str]:
    """The files a figure job writes: the picture, its PDF and the rows it plots."""
    return [f"results/figures/{figure}{suffix}" for suffix in FIGURE_SUFFIXES]


def findings_figure_path(figure: str) -> str:
    """Where `snakemake findings` copies a headline figure's PNG, beside docs/findings.md."""
    return f"{FINDINGS_FIGURES_DIR}/{figure}.png"


def caption_path(figure: str) -> str:
    """A figure's report caption (written by the claims job, which knows its verdicts)."""
    return f"results/report/captions/{figure}.rst"


def run_folder(run_id: str) -> str:
    return f"results/runs/{run_id}"


def table_path(table: str) -> str:
    return f"results/tables/{table}.csv"


def _resources(block: dict, n_nonembedding: int | None) -> dict:
    """A (validated) training block's resources for one run of non-embedding N `n_nonembedding` (None: the
    block has one shape); runs above `runs_per_gpu_max_n` get a GPU of their own."""
    resources = {key: block[key] for key in RESOURCE_KEYS}
    max_n = block.get("runs_per_gpu_max_n")
    if max_n is not None and n_nonembedding is not None and n_nonembedding > max_n:
        resources["runs_per_gpu"] = 1
    return resources


def _add_run(runs: dict, run_id: str, spec: dict, resources: dict, table: str, key: str) -> None:
    """Record a run; the same id planned twice must be the same spec (then it is trained once)."""
    if run_id in runs:
        if runs[run_id].spec != spec:
            raise PlanError(key, f"two different runs get the id {run_id!r}; make their settings differ more")
        job = runs[run_id]
        runs[run_id] = TrainJob(run_id, spec, job.resources, (*job.tables, table))
    else:
        runs[run_id] = TrainJob(run_id, spec, resources, (table,))


def _training(config: dict) -> tuple[dict, dict, tuple]:
    data_dir, vocab = f"results/data/{config['data']['name']}", config["data"]["vocab_size"]
    runs: dict[str, TrainJob] = {}
    sweep = {}
    if "sweep" in config:
        block = config["sweep"]
        sweep = plan_sweep(block)
        for experiment, planned in sweep.items():
            for run_id, run in planned.items():
                spec = train_spec(run, block["recipe"], data_dir, vocab)
                resources = _resources(block, nonembedding(run.shape.n_layer, run.shape.d_model, run.shape.d_ff))
                _add_run(runs, run_id, spec, resources, f"sweep_{experiment}", f"sweep.{experiment}")
    training = config.get("shaped", {}).get("training")
    entropy = shaped_training.plan(training, data_dir, vocab) if training else {}
    for run_id, spec in entropy.items():
        _add_run(runs, run_id, spec, _resources(training, None), ENTROPY_TABLE, "shaped.training")
    return runs, sweep, tuple(entropy)


def _setting(sim: dict, seed: int, sde: bool, mlp: bool, **overrides) -> dict:
    """The keys one simulation job uses (editing dt does not rerun the finite networks)."""
    sim = {**sim, **overrides}
    keys = [*SETTING_KEYS, *(["dt"] if sde else []), *(["c_plus", "c_minus"] if mlp else [])]
    return {**{key: sim[key] for key in keys}, "seed": seed}


def _simulations(config: dict) -> dict[str, SimulationJob]:
    sim = config.get("shaped", {}).get("simulation")
    if not sim:
        return {}
    jobs = {}
    for block in sim["blocks"]:
        mlp = block != "attention"
        jobs[f"{block}/sde"] = SimulationJob(
            f"{block}/sde", "samples", {"source": "sde", "block": block, **_setting(sim, config["seed"], True, mlp)}
        )
        for n in sim["widths"]:
            spec = {"source": "finite", "block": block, "n": n, **_setting(sim, config["seed"], False, mlp)}
            jobs[f"{block}/n{n}"] = SimulationJob(f"{block}/n{n}", "samples", spec)
    trajectory = sim["trajectory"]
    setting = _setting(
        sim, config["seed"], True, trajectory["block"] != "attention", T=trajectory["T"], samples=trajectory["samples"]
    )
    spec = {**setting, "n": trajectory["n"], "points": trajectory["points"], "block": trajectory["block"]}
    jobs["trajectory"] = SimulationJob("trajectory", "trajectory", spec)
    return jobs


def _figures(tables: list[str]) -> dict[str, FigureJob]:
    """Every registered figure whose tables this config builds."""
    return {
        figure_id: FigureJob(
            figure_id,
            figure.paper,
            figure.title,
            {name: table_path(table) for name, table in figure.inputs.items()},
            (*figure.code, f"plots/{figure_id}"),
        )
        for figure_id, figure in FIGURES.items()
        if set(figure.inputs.values()) <= set(tables)
    }


def build(config: dict) -> Plan:
    """The plan of a validated config (`depthwidth.config.validate`). Raises PlanError naming a key."""
    runs, sweep, entropy = _training(config)
    simulations = _simulations(config)
    plan = Plan(config, runs, sweep, entropy, simulations, {})
    return Plan(config, runs, sweep, entropy, simulations, _figures(plan.tables))


def from_config(raw: dict) -> Plan:
    """Validate a config (defaults filled in) and plan it; ConfigError, one line naming the key, if either fails."""
    from depthwidth.config import ConfigError, validate

    config = validate(raw)
    try:
        return build(config)
    except PlanError as err:
        raise ConfigError(f"config key '{err.key}': {err.reason}") from None
