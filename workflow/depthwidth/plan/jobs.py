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

import copy
import functools
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from depthwidth import contracts, rates
from depthwidth.columns import LR_CHECK, SENSITIVITY_PREFIX, SENSITIVITY_TABLE, curves_table
from depthwidth.contracts import ENTROPY_TABLE, SDE_TERMINAL, TRAJECTORY, sweep_experiment, sweep_table
from depthwidth.glue.contracts import GLUE_TABLE
from depthwidth.plan import glue as plan_glue
from depthwidth.plan import second, shaped
from depthwidth.plan.config import ConfigError, validate
from depthwidth.plan.sweep import (
    LR_SCALE_TERMS,
    PlanError,
    Sensitivity,
    run_recipe,
    sensitivities,
    train_spec,
)
from depthwidth.plan.sweep import plan as plan_sweep
from depthwidth.plots.registry import FIGURES, PROTOCOL
from depthwidth.spec import Run, complete, run_plan

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
class RateScan:
    """One shape's learning-rate scan (`sweep.lr_grid`, depthwidth.rates): the scouts it starts with and
    every run it may ask for, at each lattice index within its bounds and each seed. Shared by every
    experiment (and config) that plans the shape with the same recipe, data and grid."""

    id: str  # the shape's name and the digest of its scout spec at factor 1 and the grid
    start: tuple[int, ...]  # lattice indices of the first scouts
    bounds: tuple[int, int]  # the lowest and highest lattice index it may try
    stall: float
    scout_seed: int
    confirm_seeds: tuple[int, ...]  # seeds no run trains, that train at the best scout's rate before a margin is taken
    runs: dict[tuple[int, int], str]  # (lattice index, seed) -> run id

    @property
    def spec(self) -> dict:
        """What `rate-scan` reads (its command's --scan-json)."""
        return {"id": self.id, "bounds": list(self.bounds), "stall": self.stall, "confirm": len(self.confirm_seeds)}

    def scout(self, k: int) -> str:
        """The run id of the scout at lattice index k."""
        return self.runs[(k, self.scout_seed)]

    def round_runs(self, previous: dict | None) -> list[tuple[str, int, str]]:
        """What a round reads after the round `previous` wrote (None: the first): (`scout` or `confirm`,
        lattice index, run id) for every scout so far and those it asked for, then every confirmation seed's
        run at each index confirmations were asked for."""
        if previous is None:
            return [("scout", k, self.scout(k)) for k in self.start]
        scouts = {s["k"] for s in previous["scouts"]} | set(previous["next"])
        confirm = {c["k"] for c in previous.get("confirmations", [])}
        confirm |= {previous["confirm"]} if previous.get("confirm") is not None else set()
        return [("scout", k, self.scout(k)) for k in sorted(scouts)] + [
            ("confirm", k, self.runs[(k, seed)]) for k in sorted(confirm) for seed in self.confirm_seeds
        ]

    def round_path(self, round_: int) -> str:
        return contracts.rate_round_path(self.id, round_)


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
        """The schema's `$defs` of its spec (`spec.complete`)."""
        return shaped.SPEC_KINDS[self.command]


@dataclass(frozen=True)
class FigureJob:
    id: str
    paper: str
    title: str
    inputs: dict[str, str]  # input name -> table file


@dataclass(frozen=True)
class Plan:
    config: dict
    runs: dict[str, TrainJob]  # run id -> job
    sweep: dict[str, dict[str, Run]]  # sweep experiment -> run id -> run (shape, seed, N target)
    entropy_runs: tuple[str, ...]  # run ids of the shaped-vs-standard training
    simulations: dict[str, SimulationJob]  # simulation id -> job
    figures: dict[str, FigureJob]
    glue: plan_glue.GluePlan | None = None  # the GLUE stage's jobs, when the config turns it on
    # sweep.lr_grid: each scan, and for each planned sweep run that a scan decides (its id at the recipe's
    # rate, the key in `sweep`), its scan and seed; every run a scan may ask for (`runs` holds its first
    # scouts only: the rest are trained when a scan or a chosen rate asks for them)
    scans: dict[str, RateScan] = field(default_factory=dict)
    scan_of: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)  # experiment -> run id -> (scan, seed)
    candidates: dict[str, TrainJob] = field(default_factory=dict)
    # decide.looks 2: for each planned run no scan decides, its second-stage runs (the reserved seeds, in order);
    # a run a scan decides finds its own in its scan (`second_runs`)
    second_plain: dict[str, tuple[str, ...]] = field(default_factory=dict)
    plain_cells: dict[str, str] = field(default_factory=dict)  # each of those runs -> its shape, whatever its seed
    # decide.looks 2: each sample job's name (plan/shaped.py `sample_name`) -> its second-stage jobs (the reserved
    # seeds, in order), which `sim_candidates` holds
    second_sims: dict[str, tuple[str, ...]] = field(default_factory=dict)
    sim_candidates: dict[str, SimulationJob] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The config's name: its tables, figures and claims lie under contracts.config_dir(name)."""
        return self.config["name"]

    @property
    def data_dir(self) -> str:
        return contracts.data_dir(self.config["data"]["name"], self.config["data"])

    def data_outputs(self, folder: str | None = None) -> dict[str, str]:
        """role -> path of what prepare-data writes for a corpus folder (None: this config's)."""
        return {role: f"{folder or self.data_dir}/{name}" for role, name in contracts.DATA_ROLES.items()}

    def data_blocks(self) -> dict[str, dict]:
        """Every corpus folder this config trains on -> its data block (`data_blocks`)."""
        return data_blocks(self.config)

    def data_files(self) -> list[str]:
        """What prepare-data writes for every corpus folder this config trains on."""
        return [path for folder in self.data_blocks() for path in self.data_outputs(folder).values()]

    def token_files(self, folder: str | None = None) -> list[str]:
        """What training reads of a corpus (None: this config's): the shards and their record, not the tokenizer."""
        return [path for role, path in self.data_outputs(folder).items() if role != "tokenizer"]

    def run_token_files(self, run_id: str) -> list[str]:
        """What one run reads of the corpus its spec names."""
        return self.token_files(self.job(run_id).spec["data"])

    def table_runs(self, table: str) -> list[str]:
        """Run ids a table reads, in plan order (a run a scan decides: its id at the recipe's rate,
        `chosen_run` gives the one trained at its scan's chosen rate)."""
        if table == ENTROPY_TABLE:
            return list(self.entropy_runs)
        return list(self.sweep[sweep_experiment(table)])

    def job(self, run_id: str) -> TrainJob:
        """A run's job: one the config plans, or one its learning-rate scans may ask for."""
        return self.runs[run_id] if run_id in self.runs else self.candidates[run_id]

    def all_run_ids(self) -> list[str]:
        """Every run id a job of this config may train (the `run` wildcard's values)."""
        return [*self.runs, *(run_id for run_id in self.candidates if run_id not in self.runs)]

    def priced_runs(self) -> dict[str, TrainJob]:
        """The runs the run sheet prices: every planned run and, for each learning-rate scan, its other seeds
        at one rate (a lower bound: a scan that widens or chooses between its scouts trains more)."""
        priced = dict(self.runs)
        decided = {pair for runs in self.scan_of.values() for pair in runs.values()}  # (scan id, seed)
        for scan in self.scans.values():
            k = scan.start[len(scan.start) // 2]
            for (index, seed), run_id in scan.runs.items():
                if index == k and seed != scan.scout_seed and (scan.id, seed) in decided:
                    priced.setdefault(run_id, self.candidates[run_id])
        return priced

    def experiment_scans(self, experiment: str) -> list[str]:
        """The scans that decide an experiment's runs, sorted."""
        return sorted({scan_id for scan_id, _ in self.scan_of.get(experiment, {}).values()})

    def chosen_run(self, experiment: str, run_id: str, chosen: Callable[[str], int]) -> str:
        """The run an experiment's table reads for its planned run `run_id`: itself, or, for a run a scan
        decides, the same shape and seed at the lattice index `chosen(scan id)`."""
        decided = self.scan_of.get(experiment, {})
        if run_id not in decided:
            return run_id
        scan_id, seed = decided[run_id]
        return self.scans[scan_id].runs[(chosen(scan_id), seed)]

    def chosen_plan(self, experiment: str, chosen: Callable[[str], int]) -> dict[str, dict]:
        """`sweep_runs` at each scan's chosen rate: run id -> shape, seed, N target, lr factor, and the
        final round of its scan (None for a run no scan decides)."""
        rows = {}
        for run_id, run in self.sweep[experiment].items():
            trained = self.chosen_run(experiment, run_id, chosen)
            scan = self.scan_of.get(experiment, {}).get(run_id, (None,))[0]
            factor = rates.lattice_factor(chosen(scan)) if scan else run.lr_factor
            row = run_plan(Run(run.experiment, run.shape, run.seed, run.n_target, factor))
            rows[trained] = {**row, "lr_scan": scan}
        return rows

    @property
    def tables(self) -> list[str]:
        """Table ids this config builds (the sensitivity block's reading among them: figures read it)."""
        tables = [sweep_table(name) for name in self.sweep] + [curves_table(name) for name in self.sweep]
        tables += [SDE_TERMINAL, TRAJECTORY] if self.simulations else []
        tables += [ENTROPY_TABLE] if self.entropy_runs else []
        return tables + ([GLUE_TABLE] if self.glue else []) + ([SENSITIVITY_TABLE] if self.confounds else [])

    def sweep_tables(self) -> list[str]:
        """The files of this config's sweep tables that the claims read beside the figures (not the sensitivity
        block's: `sensitivity_inputs`)."""
        return [self.table_file(sweep_table(name)) for name in self.sweep if name not in self.confounds]

    @functools.cached_property
    def confounds(self) -> dict[str, Sensitivity]:
        """The sensitivity block's confounds by experiment (sens_tokens, ...), in plan order."""
        return {c.experiment: c for c in sensitivities(self.config.get("sensitivity"))}

    def corpus(self, experiment: str) -> str:
        """The corpus folder a sweep experiment's runs train on: the config's, or a vocabulary confound's own."""
        data = _data_of(self.config, self.confounds.get(experiment))
        return contracts.data_dir(data["name"], data)

    def table_file(self, table: str) -> str:
        """Where a table lies: the trajectory is a simulation's own file, the sensitivity block's reading its own,
        every other table the config's."""
        if table == TRAJECTORY:
            return self.trajectory.output
        if table == SENSITIVITY_TABLE:
            return sensitivity_path(self.name)
        return contracts.table_path(self.name, table)

    @property
    def trajectory(self) -> SimulationJob:
        (job,) = (job for job in self.simulations.values() if job.command == "trajectory")
        return job

    def sweep_runs(self, experiment: str) -> dict[str, dict]:
        """What a sweep table needs to know of its runs: run id -> shape, seed, N target."""
        return {run_id: run_plan(run) for run_id, run in self.sweep[experiment].items()}

    def entropy_specs(self, asked: dict[str, int] | None = None) -> dict[str, dict]:
        """What the entropy table needs to know of its runs: run id -> spec; with `asked` (what the second stage asked
        for: first-stage run id -> fresh seeds), its second-stage runs after the planned ones."""
        planned = {run_id: self.runs[run_id].spec for run_id in self.entropy_runs}
        return planned | {run_id: self.job(run_id).spec for run_id in self.entropy_second(asked or {})}

    def entropy_second(self, asked: dict[str, int]) -> list[str]:
        """The shaped training's second-stage runs that `asked` (first-stage run id -> fresh seeds) gives, in plan
        order: the entries of `asked` that name an entropy run (the others are the sweep's)."""
        return [
            run_id
            for planned in self.entropy_runs
            if asked.get(planned) and planned in self.second_plain
            for run_id in self.second_runs(planned, asked[planned])
        ]

    def corpus_files(self) -> list[str]:
        """Local text files of a `text` corpus (editing one rebuilds the shards); none for other kinds."""
        data = self.config["data"]
        if data["corpus"] != "text":
            return []
        files = []
        for entry in map(Path, data["paths"]):
            files += sorted(map(str, entry.rglob("*.txt"))) if entry.is_dir() else [str(entry)]
        return files

    def corpus_problem(self) -> str | None:
        """Why a `text` corpus cannot be read: a data.paths entry that is no file or folder, or a folder with no
        *.txt file in it (Snakemake said it with a 26-line MissingInputException); None otherwise."""
        if self.config["data"]["corpus"] != "text":
            return None
        for entry in map(Path, self.config["data"]["paths"]):
            if not entry.exists():
                return f"data.paths: {entry}: no such file or folder"
            if entry.is_dir() and next(entry.rglob("*.txt"), None) is None:
                return f"data.paths: {entry}: a folder with no *.txt file in it"
        return None

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

    def simulation(self, sim_id: str) -> SimulationJob:
        """A simulation job: one the config plans, or one its second stage may ask for."""
        return self.simulations[sim_id] if sim_id in self.simulations else self.sim_candidates[sim_id]

    def all_simulation_ids(self) -> list[str]:
        """Every simulation id a job of this config may run (the `simulation` wildcard's values)."""
        return [*self.simulations, *self.sim_candidates]

    def sample_jobs(self) -> dict[str, str]:
        """Each sample job the config plans by its name (`<block>-sde`, `<block>-n<width>`: the SDE row's shapes)."""
        samples = (sim_id for sim_id, job in self.simulations.items() if job.command == "samples")
        return {sim_id.rsplit("-", 1)[0]: sim_id for sim_id in samples}

    def second_simulations(self, name: str, count: int) -> list[str]:
        """The second stage's first `count` jobs of the sample job named `name`: its spec on the reserved seeds.
        KeyError naming it where the plan has none (one look, or no sample job of that name)."""
        self._reserved(name, count)
        if name not in self.second_sims:
            raise KeyError(f"{name}: no second-stage seeds planned (decide.looks 1, or no sample job of that name)")
        return list(self.second_sims[name][:count])

    def sde_second(self, asked: dict[str, int]) -> list[str]:
        """The sample jobs' second-stage jobs that `asked` (a name -> fresh seeds) gives, in plan order: the entries
        of `asked` that name a sample job (the others are runs)."""
        asked_names = [name for name in self.second_sims if asked.get(name)]
        return [sim_id for name in asked_names for sim_id in self.second_simulations(name, asked[name])]

    def sde_samples(self, asked: dict[str, int] | None = None) -> list[str]:
        """The sample tables the terminal table reads: the planned ones and, with `asked`, the second stage's."""
        return self.sample_tables() + [self.simulation(s).output for s in self.sde_second(asked or {})]

    def figure_files(self, figure: str) -> list[str]:
        return contracts.figure_files(self.name, figure)

    def figure_csvs(self) -> list[str]:
        return [contracts.figure_path(self.name, figure, ".csv") for figure in self.figures]

    def claims_files(self) -> tuple[str, str]:
        return contracts.claims_files(self.name)

    def captions(self) -> list[str]:
        return [contracts.caption_path(self.name, figure) for figure in self.figures]

    def decide_figures(self) -> list[str]:
        """The figures whose claims `decide` asks what would decide: those that read sweep tables alone (it redraws
        them); none where the config's `decide.sims` is 0."""
        if not self.config["decide"]["sims"]:
            return []
        sweep = set(self.sweep_tables())
        return [
            figure
            for figure, job in self.figures.items()
            if set(job.inputs.values()) <= sweep and job.paper != PROTOCOL  # a protocol check has no claim
        ]

    def growing_figures(self) -> list[str]:
        """The figures a decide job reads at look 1 and asks what more data would decide: `decide_figures` (sweep
        tables, grown by seeds of their shapes), the entropy figure (grown by seeds of each attention kind at its
        top rate: plan/second.py `ENTROPY_FIGURE`) and the SDE figure (grown by the samples of each sample job:
        `SDE_FIGURE`); none where the config's `decide.sims` is 0."""
        if not self.config["decide"]["sims"]:
            return []
        return self.decide_figures() + [f for f in (second.ENTROPY_FIGURE, second.SDE_FIGURE) if f in self.figures]

    def grows(self, figure: str) -> bool:
        """Whether a second stage may grow `figure`'s data: two looks, and a figure a decide job prices."""
        return self.design.looks == 2 and figure in self.growing_figures()

    def decide_file(self, figure: str) -> str:
        return decide_path(self.name, figure)

    def decide_files(self) -> list[str]:
        return [self.decide_file(figure) for figure in self.growing_figures()]

    def decide_tables(self, figure: str) -> list[str]:
        """The sweep tables a figure's decide job reads: the figure's, and lr_check's, whose systematic stands in
        for the shapes no scan chose a rate for (the claims table takes it from there too); with two looks, as the
        first stage left them (`first_table`). The entropy and SDE figures': their table alone (their rows have no
        learning-rate systematic)."""
        sweep = figure in self.decide_figures()
        lr_check = self.table_file(sweep_table(LR_CHECK)) if LR_CHECK in self.sweep and sweep else None
        inputs = list(dict.fromkeys(self.figures[figure].inputs.values()))
        inputs += [lr_check] if lr_check and lr_check not in inputs else []
        return [self.first_table(path) for path in inputs] if self.design.looks == 2 else inputs

    # ------------------------------------------------------------ the design and its second stage (plan/second.py)

    @functools.cached_property
    def design(self) -> second.Design:
        return second.design(self.config)

    def first_table(self, table_file: str) -> str:
        """Where the first stage's version of a sweep table (given by its file) lies."""
        return second.first_table_path(self.name, Path(table_file).stem)

    def first_tables(self) -> list[str]:
        """The sweep tables on the first stage's seeds, and the entropy and terminal tables where their figures grow
        (looks 2; none with one look)."""
        if self.design.looks == 1:
            return []
        grown = {second.ENTROPY_FIGURE: ENTROPY_TABLE, second.SDE_FIGURE: SDE_TERMINAL}
        others = [self.table_file(table) for figure, table in grown.items() if self.grows(figure)]
        return [self.first_table(path) for path in [*self.sweep_tables(), *others]]

    def tilt_option(self, figure: str) -> str:
        """A figure's and its decide job's `--tilt` (quoted JSON of the config's `tilt`: tilt.from_argument reads
        it), or nothing where no tilt is carried: the config has none, or the figure is not one of sweep tables the
        claims judge (`decide_figures`: a shaped or lr_check figure compares no depths, and is not rebuilt for a
        tilt). (Planning loads no numpy: tilt.py is not imported here.)"""
        block = self.config.get("tilt") or {}
        carries = block and figure in self.decide_figures()
        return f"--tilt {shlex.quote(json.dumps(block, sort_keys=True))}" if carries else ""

    def figure_level(self, figure: str) -> float:
        """The level a figure's intervals are drawn at: its rows' last look's (a figure whose data the second stage
        may grow: `growing_figures`), else the one look's (1 - alpha)."""
        return self.design.levels[-1] if figure in self.growing_figures() else self.design.one_look

    def look_file(self, figure: str) -> str:
        return second.look_path(self.name, figure)

    def look_files(self) -> list[str]:
        """The figures' rows at look 1 with their other reading, which the decide jobs write (with one look, the rows
        its figure has: the claims read the figure's)."""
        return [
            p for f in self.growing_figures() for p in (self.look_file(f), contracts.unstalled_path(self.look_file(f)))
        ]

    def second_stage_file(self) -> list[str]:
        """What the second stage asks for (looks 2), as a list: empty with one look."""
        return [second.second_stage_path(self.name)] if self.design.looks == 2 else []

    def decisions_file(self) -> str:
        return second.decisions_path(self.name)

    def sensitivity_file(self) -> list[str]:
        """What the depth rows survive (claims/sensitivity.py), as a list: empty without a sensitivity block."""
        return [sensitivity_path(self.name)] if self.confounds else []

    def sensitivity_inputs(self) -> dict[str, dict[str, str]]:
        """The tables the sensitivity job reads: `references` (each pair experiment's own table, by experiment) and
        `confounds` (each confound's, by its name: tokens, vocab256, heads)."""
        pairs = self.config["sensitivity"]["pairs"] if self.confounds else []
        return {
            "references": {e: self.table_file(sweep_table(e)) for e in dict.fromkeys(p["experiment"] for p in pairs)},
            "confounds": {c.name: self.table_file(sweep_table(e)) for e, c in self.confounds.items()},
        }

    @functools.cached_property
    def _scan_cells(self) -> dict[str, tuple[str, int]]:
        """Each run a scan may train: (scan id, lattice index)."""
        return {run_id: (scan.id, k) for scan in self.scans.values() for (k, _), run_id in scan.runs.items()}

    def shape_cell(self, run_id: str) -> str:
        """What a run shares with the other seeds of its shape at its rate: its scan and lattice index, or, for a
        run no scan decides, the run itself."""
        cell = self._scan_cells.get(run_id)
        return f"{cell[0]}@{cell[1]}" if cell else self.plain_cells.get(run_id, run_id)

    def second_runs(self, run_id: str, count: int) -> list[str]:
        """The second stage's first `count` runs of the shape of the first-stage run `run_id`, at its rate: the
        reserved seeds in order. KeyError naming the run where the plan has none (one look, or not a sweep run)."""
        seeds = self._reserved(f"run {run_id}", count)
        if run_id in self._scan_cells:
            scan_id, k = self._scan_cells[run_id]
            return [self.scans[scan_id].runs[(k, seed)] for seed in seeds[:count]]
        if run_id not in self.second_plain:
            raise KeyError(f"run {run_id}: no second-stage seeds planned (decide.looks 1, or no run a row grows by)")
        return list(self.second_plain[run_id][:count])

    def _reserved(self, what: str, count: int) -> tuple[int, ...]:
        """The reserved seeds; ValueError naming `what` where `count` of them are more than the design reserves."""
        seeds = self.design.seeds
        if count > len(seeds):
            raise ValueError(f"{what}: {count} second-stage seeds asked, the design reserves {len(seeds)}")
        return seeds

    def second_plan(self, experiment: str, chosen: Callable[[str], int], asked: dict[str, int]) -> dict[str, dict]:
        """An experiment's second-stage runs (run id -> what its table needs, as `chosen_plan`): for each run it
        reads at its chosen rate, the runs `asked` (first-stage run id -> fresh seeds) gives a run of its shape."""
        cells: dict[str, int] = {}
        for run_id, n in asked.items():  # two runs that name one shape: the larger count
            cell = self.shape_cell(run_id)
            cells[cell] = max(n, cells.get(cell, 0))
        rows = {}
        for planned, row in self.chosen_plan(experiment, chosen).items():
            count = cells.pop(self.shape_cell(planned), 0)
            for seed, run_id in zip(self.design.seeds, self.second_runs(planned, count) if count else [], strict=False):
                rows[run_id] = {**row, "seed": seed}
        return rows

    def targets(self) -> list[str]:
        """Every file a rule of this config declares (rule all builds them all, so a deleted one, even
        one no other job reads, is rebuilt): the data, every run's outputs, the simulations, the tables,
        every figure's files, what would decide its rows, the claims and the report captions."""
        runs = [f"{job.folder}/{name}" for job in self.runs.values() for name in contracts.RUN_FILES]
        simulations = [job.output for job in self.simulations.values()]
        tables = [self.table_file(table) for table in self.tables if table != TRAJECTORY]
        tables += self.first_tables()
        figures = [path for figure in self.figures for path in self.figure_files(figure)]
        glue = self.glue.targets() if self.glue else []
        return [
            *self.data_files(),
            *runs,
            *glue,
            *simulations,
            *tables,
            *figures,
            *self.decide_files(),
            *self.look_files(),
            *self.second_stage_file(),
            *self.claims_files(),
            self.decisions_file(),
            *self.captions(),
        ]

    def findings_figures(self) -> list[str]:
        """Every figure this config draws, copied beside its findings page: the headline ones (FINDINGS_FIGURES,
        which the page shows) first, in their order, then the others (each claim links its own)."""
        headline = [figure for figure in contracts.FINDINGS_FIGURES if figure in self.figures]
        return headline + [figure for figure in self.figures if figure not in headline]

    def scale_note(self) -> str:
        """What this config runs, in one line, for the claims table and the captions."""
        config = self.config
        parts = [f"config {config['name']}", f"corpus {config['data']['name']} (vocab {config['data']['vocab_size']})"]
        if self.sweep:
            sweep_runs = {rid for name, runs in self.sweep.items() if name not in self.confounds for rid in runs}
            tokens = _tokens_rule(config["sweep"]["recipe"])
            lr = _lr_rule(config["sweep"]["recipe"])
            if self.scans:
                lr = f"each shape's best of its scan (sweep.lr_grid) around {lr}"
            precision = config["sweep"]["recipe"].get("precision", "fp32")
            parts.append(
                f"{len(sweep_runs)} sweep runs x {tokens}, lr {lr}, {precision}, seeds {config['sweep']['seeds']}"
            )
        sim = config.get("shaped", {}).get("simulation")
        if sim:
            parts.append(f"SDE vs finite n={sim['widths']}, {sim['samples']} samples, T={sim['T']}")
        if self.glue:
            parts.append(self.glue.scale_note())
        return "; ".join(parts)


def decide_path(config: str, figure: str) -> str:
    """What `decide` found for the claims of one figure (JSON; the claims table reads it). Apart from contracts.py,
    which the training imports: a new path there would retrain every run."""
    return f"{contracts.config_dir(config)}/decide/{figure}.json"


def sensitivity_path(config: str) -> str:
    """What the depth rows survive under each confound (claims/sensitivity.py; apart from contracts.py, as
    `decide_path`)."""
    return f"{contracts.config_dir(config)}/sensitivity.csv"


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


@dataclass
class _Grid:
    """The learning-rate scans of one sweep block as the plan builds them."""

    block: dict  # the validated sweep.lr_grid
    seeds: tuple[int, ...]
    second_seeds: tuple[int, ...] = ()  # the seeds the second stage reserves (decide.looks 2)
    scans: dict[str, RateScan] = field(default_factory=dict)
    scan_of: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)
    candidates: dict[str, TrainJob] = field(default_factory=dict)

    def lattice(self, key: str) -> tuple[tuple[int, ...], tuple[int, int]]:
        """The first scouts' and the bounds' lattice indices; PlanError naming the key off the lattice."""
        try:
            start = tuple(sorted(rates.lattice_index(f) for f in self.block["factors"]))
            lo, hi = (rates.lattice_index(f) for f in self.block["bounds"])
        except ValueError as err:
            raise PlanError(f"{key}.lr_grid", str(err)) from None
        if not (lo <= start[0] and start[-1] <= hi):
            raise PlanError(
                f"{key}.lr_grid", f"factors {self.block['factors']} lie outside bounds {self.block['bounds']}"
            )
        return start, (lo, hi)

    def scan(self, run: Run, spec: dict, recipe: dict, resources: dict, table: str) -> RateScan:
        """The scan of a planned run's shape (its spec `spec` at the recipe's rate), made once, with a
        candidate at every lattice index for the scout's seed and for each seed of the runs it decides (a block
        with seeds of its own, as `sweep.literal.seeds`, brings them)."""
        start, bounds = self.lattice("sweep")
        scout_seed = self.block["seed"]
        confirm_seeds = tuple(range(rates.CONFIRM_SEED, rates.CONFIRM_SEED + self.block["confirm"]))
        clash = next((seed for seed in (scout_seed, run.seed) if seed in confirm_seeds), None)
        own = "sweep.seeds" if run.seed in self.seeds else f"sweep.{run.experiment}.seeds"  # a block's own seeds
        if run.experiment.startswith(SENSITIVITY_PREFIX) and run.seed not in self.seeds:
            own = "sensitivity.seeds"  # a pair experiment's own seeds clash first, in its own scans (planned before)
        if clash is not None:
            key = "sweep.lr_grid.seed" if clash == scout_seed else own
            raise PlanError(
                key, f"seed {clash} is a confirmation seed of the learning-rate scans (sweep.lr_grid.confirm)"
            )
        if scout_seed == run.seed:  # the run that chose the rate would be measured by a row
            raise PlanError(
                "sweep.lr_grid.seed", f"seed {scout_seed} is a row's seed ({own}): the scouts need their own"
            )
        scout_spec = {**spec, "seed": scout_seed}
        scan_id = f"{run.shape.run_id()}-{contracts.digest({'scout': scout_spec, 'grid': self.block})}"
        scan = self.scans.setdefault(
            scan_id, RateScan(scan_id, start, bounds, self.block["stall"], scout_seed, confirm_seeds, {})
        )
        for k in range(bounds[0], bounds[1] + 1):
            for seed in sorted({scout_seed, run.seed, *confirm_seeds, *self.second_seeds}):
                if (k, seed) in scan.runs:
                    continue
                at = Run(run.experiment, run.shape, seed, run.n_target, rates.lattice_factor(k))
                job_spec = copy.deepcopy(spec)
                job_spec["seed"] = seed
                job_spec["recipe"]["lr"] = run_recipe(at, recipe, run.shape.n_nonembedding)["lr"]
                run_id = f"{at.run_id}-{contracts.digest(job_spec)}"
                self.candidates[run_id] = TrainJob(run_id, job_spec, resources, (table,))
                scan.runs[(k, seed)] = run_id
        return scan


def _second_seeds(config: dict) -> tuple[int, ...]:
    """The seeds the second stage reserves; PlanError naming the key of a planned seed that is one of them."""
    design = second.design(config)
    block = config.get("sweep", {})
    taken = {"sweep.seeds": set(block.get("seeds", ()))}
    taken |= {
        f"sweep.{name}.seeds": set(b["seeds"]) for name, b in block.items() if isinstance(b, dict) and "seeds" in b
    }
    sensitivity = config.get("sensitivity") or {}
    if sensitivity.get("seeds"):
        taken["sensitivity.seeds"] = set(sensitivity["seeds"])
    training = config.get("shaped", {}).get("training")
    if training:
        taken["shaped.training.seeds"] = set(training["seeds"])
    if config.get("shaped", {}).get("simulation"):
        taken["seed"] = {config["seed"]}  # the simulations' seed
    grid = block.get("lr_grid", {})
    if grid.get("enabled"):
        taken["sweep.lr_grid.seed"] = {grid["seed"]}
        taken["sweep.lr_grid.confirm"] = set(range(rates.CONFIRM_SEED, rates.CONFIRM_SEED + grid["confirm"]))
    second.seed_clash(design, taken)
    return design.seeds


def _plain_second(candidates: dict, run: Run, spec: dict, resources: dict, seeds: tuple[int, ...], table: str) -> tuple:
    """The second-stage candidates of a planned run no scan decides (its spec at each reserved seed), added to
    `candidates`; their ids, in seed order."""
    return tuple(
        _add_run(candidates, Run(run.experiment, run.shape, seed, run.n_target, run.lr_factor).run_id,
                 {**copy.deepcopy(spec), "seed": seed}, resources, table)
        for seed in seeds
    )  # fmt: skip


def _entropy_second(
    candidates: dict, cells: dict, training: dict, planned: dict[str, str], data_dir: str, vocab: int, seeds: tuple
) -> dict[str, tuple[str, ...]]:
    """The second-stage candidates of the shaped training (docs/protocol-choices.md, "The noci rows' second stage"):
    each attention kind at the top rate on each reserved seed, added to `candidates`; each kind's planned run of least
    seed (the one `decide.fit_entropy` names it by; `planned`: the training's run names -> ids) -> their ids, in seed
    order (`cells` maps them all to it)."""
    top, least = max(training["learning_rates"]), min(training["seeds"])
    fresh = shaped.training_specs({**training, "learning_rates": [top], "seeds": list(seeds)}, data_dir, vocab)
    resources = _resources(training, None)
    out = {}
    for attention in training["attentions"]:
        first = planned[shaped.run_id(attention, top, least)]
        names = [shaped.run_id(attention, top, seed) for seed in seeds]
        out[first] = tuple(
            _add_run(candidates, name, _complete_train_spec(fresh[name], "shaped.training"), resources, ENTROPY_TABLE)
            for name in names
        )
        cells.update(dict.fromkeys((first, *out[first]), first))
    return out


def data_blocks(config: dict) -> dict[str, dict]:
    """Every corpus folder a config trains on -> its data block: the config's, then one for each vocabulary of the
    sensitivity block (the same text, tokenized again)."""
    blocks = (_data_of(config, confound) for confound in sensitivities(config.get("sensitivity")))
    return {contracts.data_dir(block["name"], block): block for block in (config["data"], *blocks)}


def _data_of(config: dict, confound: Sensitivity | None) -> dict:
    """The data block a sweep experiment's runs train on: a confound's (its own vocabulary), else the config's."""
    return confound.data(config["data"]) if confound else config["data"]


def _training(config: dict, data_dir: str) -> tuple[dict, dict, tuple, _Grid | None, dict]:
    vocab = config["data"]["vocab_size"]
    runs: dict[str, TrainJob] = {}
    sweep = {}
    grid = None
    second_seeds = _second_seeds(config)
    plain: dict[str, TrainJob] = {}  # second-stage candidates of runs no scan decides
    second_plain: dict[str, tuple[str, ...]] = {}
    plain_cells: dict[str, str] = {}
    if "sweep" in config:
        block = config["sweep"]
        if block.get("lr_grid", {}).get("enabled"):
            grid = _Grid(block["lr_grid"], tuple(block["seeds"]), second_seeds)
            grid.lattice("sweep")
        confounds = {c.experiment: c for c in sensitivities(config.get("sensitivity"))}
        for experiment, planned in plan_sweep(block, config.get("sensitivity")).items():
            confound = confounds.get(experiment)
            key = "sensitivity" if confound else f"sweep.{experiment}"
            recipe = confound.recipe(block["recipe"]) if confound else block["recipe"]
            data = _data_of(config, confound)
            sweep[experiment] = {}
            for name, run in planned.items():
                spec = train_spec(run, recipe, contracts.data_dir(data["name"], data), data["vocab_size"])
                spec = _complete_train_spec(spec, key)
                resources = _resources(block, run.shape.n_nonembedding)
                table = sweep_table(experiment)
                if grid and experiment != LR_CHECK:
                    scan = grid.scan(run, spec, recipe, resources, table)
                    run_id = f"{name}-{contracts.digest(spec)}"
                    grid.scan_of.setdefault(experiment, {})[run_id] = (scan.id, run.seed)
                    sweep[experiment][run_id] = run
                    for k in scan.start:
                        job = grid.candidates[scan.scout(k)]
                        _add_run(runs, job.run_id.rsplit("-", 1)[0], job.spec, resources, table)
                    continue
                run_id = _add_run(runs, name, spec, resources, table)
                sweep[experiment][run_id] = run
                if second_seeds and experiment != LR_CHECK and not confound:  # no row reads these
                    second_plain[run_id] = _plain_second(plain, run, spec, resources, second_seeds, table)
                    cell = f"{run.shape.run_id()}-{contracts.digest({**spec, 'seed': None})}"
                    plain_cells.update(dict.fromkeys((run_id, *second_plain[run_id]), cell))
    training = config.get("shaped", {}).get("training")
    entropy = {}  # the shaped training's run names -> ids
    for name, spec in (shaped.training_specs(training, data_dir, vocab) if training else {}).items():
        spec = _complete_train_spec(spec, "shaped.training")
        entropy[name] = _add_run(runs, name, spec, _resources(training, None), ENTROPY_TABLE)
    if training and second_seeds:
        second_plain |= _entropy_second(plain, plain_cells, training, entropy, data_dir, vocab, second_seeds)
    return (
        runs,
        sweep,
        tuple(entropy.values()),
        grid,
        {"candidates": plain, "second_plain": second_plain, "cells": plain_cells},
    )


def _simulations(config: dict) -> tuple[dict[str, SimulationJob], dict[str, SimulationJob], dict[str, tuple]]:
    """The simulation jobs by id; and, with two looks, each sample job's second-stage jobs (its spec on each reserved
    seed: the SDE row grows by them, docs/protocol-choices.md) by id, and by its name the ids in seed order."""
    sim = config.get("shaped", {}).get("simulation")
    jobs, candidates, second_sims = {}, {}, {}
    reserved = second.design(config).seeds
    for name, (command, spec) in (shaped.simulation_specs(sim, config["seed"]) if sim else {}).items():
        job = _simulation_job(name, command, spec)
        jobs[job.id] = job
        if command == "samples" and reserved:
            fresh = [_simulation_job(name, command, {**spec, "seed": seed}) for seed in reserved]
            candidates |= {f.id: f for f in fresh}
            second_sims[name] = tuple(f.id for f in fresh)
    return jobs, candidates, second_sims


def _simulation_job(name: str, command: str, spec: dict) -> SimulationJob:
    try:
        spec = complete(shaped.SPEC_KINDS[command], spec)
    except ValueError as err:
        raise PlanError("shaped.simulation", str(err)) from None
    return SimulationJob(f"{name}-{contracts.digest(spec)}", command, spec)


def _figures(plan: Plan) -> dict[str, FigureJob]:
    """Every registered figure whose tables this config builds."""
    built = set(plan.tables)
    return {
        figure_id: FigureJob(
            figure_id,
            figure.paper,
            figure.title,
            {name: plan.table_file(table) for name, table in figure.inputs.items()},
        )
        for figure_id, figure in FIGURES.items()
        if set(figure.inputs.values()) <= built
    }


def build(config: dict) -> Plan:
    """The plan of a validated config (`depthwidth.plan.config.validate`). Raises PlanError naming a key."""
    data_dir = contracts.data_dir(config["data"]["name"], config["data"])
    runs, sweep, entropy, grid, plain = _training(config, data_dir)
    scans = (
        (grid.scans, grid.scan_of, {**grid.candidates, **plain["candidates"]})
        if grid
        else ({}, {}, plain["candidates"])
    )
    glue = plan_glue.build(config, data_dir)
    stage2 = (plain["second_plain"], plain["cells"])
    simulations, sim_candidates, second_sims = _simulations(config)
    sims = {"second_sims": second_sims, "sim_candidates": sim_candidates}
    plan = Plan(config, runs, sweep, entropy, simulations, {}, glue, *scans, *stage2, **sims)
    return Plan(config, runs, sweep, entropy, simulations, _figures(plan), glue, *scans, *stage2, **sims)


def name_problem(plan: Plan, configfiles: list, folder: Path = Path("config")) -> str | None:
    """Why the config `plan` (read from `configfiles`) may not take its name: a config file of `folder` (the
    checkout's config/), none of those, has the name too and plans other files. The two would write
    results/<name>/ over each other (and `clean` of one take the other's results for its own); a variant that
    plans the same files (other resources, say) writes the same results. None if no other file does."""
    ours = {Path(path).resolve() for path in configfiles}
    for path in sorted(folder.glob("**/*.yaml")):
        if path.resolve() in ours:
            continue
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
            other = from_config(raw) if isinstance(raw, dict) and raw.get("name") == plan.name else None
        except (OSError, ValueError, yaml.YAMLError):
            continue  # a file that does not plan names no config
        if other is not None and (set(other.targets()), set(other.scans)) != (set(plan.targets()), set(plan.scans)):
            return (
                f"config key 'name': {plan.name!r} is the name of {path} too, which plans other results: the two "
                f"would write {contracts.RESULTS}/{plan.name}/ over each other: give each config its own name"
            )
    return None


def from_config(raw: dict) -> Plan:
    """Validate a config (defaults filled in) and plan it; ConfigError, one line naming the key, if either fails."""
    config = validate(raw)
    try:
        return build(config)
    except PlanError as err:
        raise ConfigError(f"config key '{err.key}': {err.reason}") from None


def one_of(ids, none: str) -> str:
    """A regular expression that matches exactly the strings `ids` (or only `none`, named after no job, if there are
    none): their shared prefixes written once, as a tree, so that matching a name costs its length, not the
    number of names (a Snakemake wildcard constraint is tried on every file the DAG asks for)."""
    tree: dict = {}
    for name in ids:
        node = tree
        for char in name:
            node = node.setdefault(char, {})
        node[""] = {}  # a name ends here
    return _branches(tree) if tree else re.escape(none)


def _branches(node: dict) -> str:
    """The regular expression of a prefix tree's node: its branches, optional where a name ends at it."""
    branches = [re.escape(char) + _branches(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    if "" not in node:
        return body
    return f"(?:{body})?" if len(branches) == 1 else f"{body}?"
