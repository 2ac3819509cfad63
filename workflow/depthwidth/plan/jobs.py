"""The plan: every job one config produces, built once from the validated config, without torch.

Each training run and simulation job carries its *complete* spec: checked against the schema with every
default filled in, N and the learning rate resolved, so what Snakemake sees (the rule's params) is exactly
what runs, and a changed default reruns exactly the jobs it changes. A job's id ends in its spec's digest,
so its folder or file (contracts.run_dir, contracts.simulation_path) is a function of the spec: two
different specs never share one, and a spec two configs plan is built once and read by both. Each table
and figure with its named inputs, and the targets. The workflow rules look things up in it the way
catalog workflows look up a sample sheet; `check`, the claims' scale note and `python -m depthwidth plan`
(the run sheet) read the same object. Where the files lie: `depthwidth.contracts`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from depthwidth import contracts
from depthwidth.contracts import ENTROPY_TABLE, SDE_TERMINAL, TRAJECTORY, sweep_experiment, sweep_table
from depthwidth.glue.contracts import GLUE_TABLE
from depthwidth.plan import glue as plan_glue
from depthwidth.plan import shaped
from depthwidth.plan.config import ConfigError, complete, validate
from depthwidth.plan.sweep import LR_SCALE_TERMS, PlanError, Run, run_plan, train_spec
from depthwidth.plan.sweep import plan as plan_sweep
from depthwidth.plots import FIGURES

# a training block's keys for its jobs (defaults and units: the config schema)
RESOURCE_KEYS = ("threads", "mem_mb", "runtime", "gpu", "runs_per_gpu")
GPU_SHARE = "shard:1"  # the SLURM generic resource a run that shares a GPU asks for (one GPU shard)


@dataclass(frozen=True)
class TrainJob:
    run_id: str  # a readable name and the spec's digest
    spec: dict  # complete: what `python -m depthwidth train --spec-json` reads
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
        return contracts.run_dir(self.run_id)

    @property
    def checkpoint_dir(self) -> str:
        return contracts.checkpoint_dir(self.run_id)


@dataclass(frozen=True)
class SimulationJob:
    id: str  # a readable name (`<block>-sde`, `<block>-n<width>`, `trajectory`) and the spec's digest
    command: str  # `shaped-sim` subcommand: samples | trajectory
    spec: dict  # complete: what `python -m depthwidth shaped-sim <command> --spec-json` reads

    @property
    def output(self) -> str:
        return contracts.simulation_path(self.id)

    @property
    def kind(self) -> str:
        """The schema's `$defs` of its spec (`plan.config.complete`)."""
        return shaped.SPEC_KINDS[self.command]


@dataclass(frozen=True)
class FigureJob:
    id: str
    paper: str
    title: str
    inputs: dict[str, str]  # input name -> table file
    code: tuple[str, ...]  # package files and folders it runs, its own module included


@dataclass(frozen=True)
class Plan:
    config: dict
    runs: dict[str, TrainJob]  # run id -> job
    sweep: dict[str, dict[str, Run]]  # sweep experiment -> run id -> run (shape, seed, N target)
    entropy_runs: tuple[str, ...]  # run ids of the shaped-vs-standard training
    simulations: dict[str, SimulationJob]  # simulation id -> job
    figures: dict[str, FigureJob]
    glue: plan_glue.GluePlan | None = None  # the GLUE stage's jobs, when the config turns it on

    @property
    def name(self) -> str:
        """The config's name: its tables, figures and claims lie under contracts.config_dir(name)."""
        return self.config["name"]

    @property
    def data_dir(self) -> str:
        return contracts.data_dir(self.config["data"]["name"], self.config["data"])

    def data_files(self) -> list[str]:
        return [f"{self.data_dir}/{name}" for name in contracts.DATA_FILES]

    def table_runs(self, table: str) -> list[str]:
        """Run ids a table reads, in plan order."""
        if table == ENTROPY_TABLE:
            return list(self.entropy_runs)
        return list(self.sweep[sweep_experiment(table)])

    @property
    def tables(self) -> list[str]:
        """Table ids this config builds."""
        tables = [sweep_table(name) for name in self.sweep]
        tables += [SDE_TERMINAL, TRAJECTORY] if self.simulations else []
        return tables + ([ENTROPY_TABLE] if self.entropy_runs else []) + ([GLUE_TABLE] if self.glue else [])

    def sweep_tables(self) -> list[str]:
        """The files of this config's sweep tables (the claims read them beside the figures)."""
        return [self.table_file(sweep_table(name)) for name in self.sweep]

    def table_file(self, table: str) -> str:
        """Where a table lies: the trajectory is a simulation's own file, every other table the config's."""
        if table == TRAJECTORY:
            return self.trajectory.output
        return contracts.table_path(self.name, table)

    @property
    def trajectory(self) -> SimulationJob:
        (job,) = (job for job in self.simulations.values() if job.command == "trajectory")
        return job

    def sweep_runs(self, experiment: str) -> dict[str, dict]:
        """What a sweep table needs to know of its runs: run id -> shape, seed, N target."""
        return {run_id: run_plan(run) for run_id, run in self.sweep[experiment].items()}

    def entropy_specs(self) -> dict[str, dict]:
        """What the entropy table needs to know of its runs: run id -> spec."""
        return {run_id: self.runs[run_id].spec for run_id in self.entropy_runs}

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
        longest n_ctx + 1 (one window and its next-token targets); 0 without runs."""
        jobs = [*self.runs.values(), *(self.glue.pretrained.values() if self.glue else [])]
        return max((job.spec["model"]["n_ctx"] + 1 for job in jobs), default=0)

    def split_size_problem(self, results_root: Path = Path(".")) -> str | None:
        """Why this config's runs cannot train on its prepared corpus (a split under `min_split_tokens`),
        read from the shards' meta.json once they exist; None if they fit or are not prepared yet (a run
        then refuses a short split at its start). The shards' job knows nothing of the runs: the corpus is
        shared by every config with the same data block, whatever their n_ctx."""
        meta_path = results_root / self.data_dir / "meta.json"
        try:
            splits = json.loads(meta_path.read_text())["splits"]
            counts = {split: int(splits[split]["tokens"]) for split in ("train", "val")}
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or unreadable: prepare-data rebuilds it, and `check` names a broken one
        need = self.min_split_tokens()
        for split, tokens in counts.items():
            if tokens < need:
                return (
                    f"data.val_fraction: the {split} split of {meta_path} has {tokens} tokens, but this config's "
                    f"runs need at least {need} (their longest n_ctx + 1); "
                    f"{'raise' if split == 'val' else 'lower'} data.val_fraction, add text, or shorten n_ctx"
                )
        return None

    def gpu_keys(self) -> list[str]:
        """The config's training blocks that ask for GPUs (`sweep.gpu`, `shaped.training.gpu`)."""
        blocks = {"sweep": self.config.get("sweep"), "shaped.training": self.config.get("shaped", {}).get("training")}
        blocks["glue"] = self.config.get("glue")
        return [f"{key}.gpu" for key, block in blocks.items() if block and block["gpu"]]

    def sample_tables(self) -> list[str]:
        return [job.output for job in self.simulations.values() if job.command == "samples"]

    def figure_files(self, figure: str) -> list[str]:
        return contracts.figure_files(self.name, figure)

    def figure_csvs(self) -> list[str]:
        return [contracts.figure_path(self.name, figure, ".csv") for figure in self.figures]

    def claims_files(self) -> tuple[str, str]:
        return contracts.claims_files(self.name)

    def captions(self) -> list[str]:
        return [contracts.caption_path(self.name, figure) for figure in self.figures]

    def targets(self) -> list[str]:
        """Every file a rule of this config declares (rule all builds them all, so a deleted one, even
        one no other job reads, is rebuilt): the data, every run's outputs, the simulations, the tables,
        every figure's files, the claims and the report captions."""
        runs = [f"{job.folder}/{name}" for job in self.runs.values() for name in contracts.RUN_FILES]
        simulations = [job.output for job in self.simulations.values()]
        tables = [self.table_file(table) for table in self.tables if table != TRAJECTORY]
        figures = [path for figure in self.figures for path in self.figure_files(figure)]
        glue = self.glue.targets() if self.glue else []
        return [
            *self.data_files(),
            *runs,
            *glue,
            *simulations,
            *tables,
            *figures,
            *self.claims_files(),
            *self.captions(),
        ]

    def findings_figures(self) -> list[str]:
        """The headline figures (FINDINGS_FIGURES) this config draws: those docs/findings.md shows."""
        return [figure for figure in contracts.FINDINGS_FIGURES if figure in self.figures]

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
        if self.glue:
            parts.append(self.glue.scale_note())
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


def _resources(block: dict, n_nonembedding: int | None) -> dict:
    """A (validated) training block's resources for one run of non-embedding N `n_nonembedding` (None: the
    block has one shape); runs above `runs_per_gpu_max_n` get a GPU of their own."""
    resources = {key: block[key] for key in RESOURCE_KEYS}
    max_n = block.get("runs_per_gpu_max_n")
    if max_n is not None and n_nonembedding is not None and n_nonembedding > max_n:
        resources["runs_per_gpu"] = 1
    return resources


def _complete_train_spec(spec: dict, key: str) -> dict:
    try:
        return complete("train_spec", spec)
    except ValueError as err:
        raise PlanError(key, str(err)) from None


def _add_run(runs: dict, name: str, spec: dict, resources: dict, table: str) -> str:
    """Record a run under its id (its name and its complete spec's digest) and return the id; a spec
    planned twice is one run, trained once."""
    run_id = f"{name}-{contracts.digest(spec)}"
    job = runs.get(run_id)
    runs[run_id] = TrainJob(run_id, spec, job.resources if job else resources, (*(job.tables if job else ()), table))
    return run_id


def _training(config: dict, data_dir: str) -> tuple[dict, dict, tuple]:
    vocab = config["data"]["vocab_size"]
    runs: dict[str, TrainJob] = {}
    sweep = {}
    if "sweep" in config:
        block = config["sweep"]
        for experiment, planned in plan_sweep(block).items():
            key = f"sweep.{experiment}"
            sweep[experiment] = {}
            for name, run in planned.items():
                spec = _complete_train_spec(train_spec(run, block["recipe"], data_dir, vocab), key)
                resources = _resources(block, run.shape.n_nonembedding)
                sweep[experiment][_add_run(runs, name, spec, resources, sweep_table(experiment))] = run
    training = config.get("shaped", {}).get("training")
    entropy = []
    for name, spec in (shaped.training_specs(training, data_dir, vocab) if training else {}).items():
        spec = _complete_train_spec(spec, "shaped.training")
        entropy.append(_add_run(runs, name, spec, _resources(training, None), ENTROPY_TABLE))
    return runs, sweep, tuple(entropy)


def _simulations(config: dict) -> dict[str, SimulationJob]:
    sim = config.get("shaped", {}).get("simulation")
    jobs = {}
    for name, (command, spec) in (shaped.simulation_specs(sim, config["seed"]) if sim else {}).items():
        try:
            spec = complete(shaped.SPEC_KINDS[command], spec)
        except ValueError as err:
            raise PlanError("shaped.simulation", str(err)) from None
        job = SimulationJob(f"{name}-{contracts.digest(spec)}", command, spec)
        jobs[job.id] = job
    return jobs


def _figures(plan: Plan) -> dict[str, FigureJob]:
    """Every registered figure whose tables this config builds."""
    return {
        figure_id: FigureJob(
            figure_id,
            figure.paper,
            figure.title,
            {name: plan.table_file(table) for name, table in figure.inputs.items()},
            (*figure.code, f"plots/{figure_id}.py"),
        )
        for figure_id, figure in FIGURES.items()
        if set(figure.inputs.values()) <= set(plan.tables)
    }


def build(config: dict) -> Plan:
    """The plan of a validated config (`depthwidth.plan.config.validate`). Raises PlanError naming a key."""
    data_dir = contracts.data_dir(config["data"]["name"], config["data"])
    runs, sweep, entropy = _training(config, data_dir)
    glue = plan_glue.build(config, data_dir)
    plan = Plan(config, runs, sweep, entropy, _simulations(config), {}, glue)
    return Plan(config, runs, sweep, entropy, plan.simulations, _figures(plan), glue)


def from_config(raw: dict) -> Plan:
    """Validate a config (defaults filled in) and plan it; ConfigError, one line naming the key, if either fails."""
    config = validate(raw)
    try:
        return build(config)
    except PlanError as err:
        raise ConfigError(f"config key '{err.key}': {err.reason}") from None
