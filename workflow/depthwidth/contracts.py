"""The contracts between stages, written once: where every file lies, its name and columns, the ids of
the tables, the enums the stages share, and the package code each job runs. Torch-free and stdlib-only:
the plan, the rules (through the plan), the jobs, `check` and the tests import it.

Files, relative to the working directory (RESULTS):
  data/<corpus>-<digest>/{tokenizer.json,train.bin,val.bin,meta.json}   one folder per data block
  runs/<run id>/{metrics.json,curve.csv,entropy.csv}      one folder per complete train spec: the id ends in
                                                          the spec's digest, so two specs never share one and
                                                          a spec two configs plan is trained once
  rates/<scan id>/round<r>.json                           a shape's learning-rate scan (sweep.lr_grid), round by round
  simulations/<simulation id>.csv                         one file per complete simulation spec, likewise
  <config>/tables/<table id>.csv                          sweep_<experiment>, sde_terminal, shaped_entropy
  <config>/figures/<figure id>.{png,pdf,csv}, <config>/claims.{csv,md}, <config>/captions/<figure id>.rst,
  <config>/check.txt, <config>/report.html                what one config concludes from them
  logs/..., benchmarks/...                                per job, under the same names
docs/findings.md, docs/findings/<figure id>.png           `snakemake findings` only: what a built run finds
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

RESULTS = "results"
# the folders of RESULTS that every config shares (a config's own folder takes its name, so it is none of these)
SHARED_FOLDERS = ("data", "runs", "rates", "simulations", "logs", "benchmarks", "downloads")

# --- data ----------------------------------------------------------------------------------------
DATA_FILES = ("tokenizer.json", "train.bin", "val.bin", "meta.json")  # what prepare-data writes
RECORDED_DATA_FILES = ("train.bin", "val.bin", "tokenizer.json")  # meta.json records size and sha256 of each

# --- runs ----------------------------------------------------------------------------------------
RUN_FILES = ("metrics.json", "curve.csv", "entropy.csv")
# the files a run writes beside metrics.json, and the metrics.json field that records each one's sha256
RUN_DIGESTS = {"curve.csv": "curve_sha256", "entropy.csv": "entropy_sha256"}
CURVE_COLUMNS = ("step", "tokens", "train_loss", "val_loss", "lr")
ENTROPY_COLUMNS = ("step", "layer", "head", "entropy")
RUN_STATUSES = ("ok", "diverged")

# --- enums shared by the plan, the model and the training (columns.py has the later stages' enums) ---
# Attention kinds: softmax at 1/sqrt(d_head); Noci's shaped attention; and the temperature-only control,
# softmax at the shaped temperature tau = tau0 sqrt(d d_head), no centring.
ATTENTION_KINDS = ("standard", "shaped", "temperature")
# each kind's scalars (trainable with `shaped.trainable`); the kinds with tau0 are the tempered ones
ATTENTION_SCALARS = {"standard": (), "shaped": ("alpha", "beta", "gamma", "tau0"), "temperature": ("tau0",)}
TEMPERED_KINDS = tuple(kind for kind, scalars in ATTENTION_SCALARS.items() if "tau0" in scalars)

# --- tables: their ids (columns.py has their columns) ---------------------------------------------
SWEEP_PREFIX = "sweep_"
SDE_TERMINAL, TRAJECTORY, ENTROPY_TABLE = "sde_terminal", "shaped_trajectory", "shaped_entropy"


def sweep_table(experiment: str) -> str:
    """The table id of a sweep experiment."""
    return f"{SWEEP_PREFIX}{experiment}"


def sweep_experiment(table: str) -> str | None:
    """The experiment of a sweep table id; None for any other table."""
    return table.removeprefix(SWEEP_PREFIX) if table.startswith(SWEEP_PREFIX) else None


# --- the code each job runs ------------------------------------------------------------------------
# Package folders and shared modules, relative to the package. Editing one reruns the jobs that run it
# (the rules list these files as inputs); TRAINING_CODE is also the checkpoint's code digest, so a
# checkpoint written by other training code is never resumed.
SHARED_CODE = ("io.py", "contracts.py")  # the command line only dispatches: editing it reruns nothing
TRAINING_CODE = ("train", "data", "shapes.py", "io.py", "contracts.py")
CODE = {
    "prepare_data": ("data",),
    "train_run": TRAINING_CODE,
    "shaped_simulation": ("shaped", "shapes.py", "columns.py"),
    # a row is built from the planned Run
    "sweep_table": ("tables/sweep.py", "plan/sweep.py", "shapes.py", "columns.py", "rates.py"),
    "entropy_table": ("tables/entropy.py", "columns.py"),
    "concat_tables": ("tables/concat.py",),
    "rate_scan": ("rates.py",),
    "figure": ("plots/common.py",),  # and each figure's own code (plots.FIGURES)
    "claims": ("claims", "fits.py", "plots/__init__.py", "columns.py"),
    "check": ("check.py", "columns.py", "rates.py"),
}


PACKAGE = Path(__file__).resolve().parent


def code_files(entries: tuple[str, ...]) -> list[Path]:
    """The package's source files that `entries` name (a module, `io.py`, or every module of a folder,
    `train`), sorted and without repeats."""
    files = set()
    for entry in entries:
        path = PACKAGE / entry
        files.update(path.glob("*.py") if path.is_dir() else [path])
    return sorted(files)


# --- paths ----------------------------------------------------------------------------------------
def digest(spec: dict, length: int = 10) -> str:
    """A short sha256 of a JSON spec's canonical form (sorted keys): what names its folder or file."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:length]


def data_dir(name: str, data_block: dict) -> str:
    """The folder of one corpus: its name, and the digest of the whole (validated) data block."""
    return f"{RESULTS}/data/{name}-{digest(data_block)}"


def run_dir(run_id: str) -> str:
    return f"{RESULTS}/runs/{run_id}"


def checkpoint_dir(run_id: str) -> str:
    """Beside the run's outputs (kept out of them, so snakemake never deletes it before the job starts)."""
    return f"{run_dir(run_id)}.ckpt"


def rate_round_path(scan_id: str, round_: int | str) -> str:
    """One round of a shape's learning-rate scan (depthwidth.rates): its scouts and what it decided."""
    return f"{RESULTS}/rates/{scan_id}/round{round_}.json"


def simulation_path(simulation_id: str) -> str:
    return f"{RESULTS}/simulations/{simulation_id}.csv"


def config_dir(config: str) -> str:
    """Everything one config concludes: its tables, figures, claims, captions, report and check."""
    return f"{RESULTS}/{config}"


def table_path(config: str, table: str) -> str:
    return f"{config_dir(config)}/tables/{table}.csv"


FIGURE_SUFFIXES = (".png", ".pdf", ".csv")


def figure_path(config: str, figure: str, suffix: str = ".png") -> str:
    return f"{config_dir(config)}/figures/{figure}{suffix}"


def figure_files(config: str, figure: str) -> list[str]:
    """The files a figure job writes: the picture, its PDF and the rows it plots."""
    return [figure_path(config, figure, suffix) for suffix in FIGURE_SUFFIXES]


def claims_files(config: str) -> tuple[str, str]:
    """claims.csv and claims.md."""
    return f"{config_dir(config)}/claims.csv", f"{config_dir(config)}/claims.md"


def caption_path(config: str, figure: str) -> str:
    """A figure's report caption (written by the claims job, which knows its verdicts)."""
    return f"{config_dir(config)}/captions/{figure}.rst"


def check_path(config: str) -> str:
    return f"{config_dir(config)}/check.txt"


def report_path(config: str) -> str:
    return f"{config_dir(config)}/report.html"


def log_path(kind: str, name: str) -> str:
    """A job's log: kind is its stage (data, runs, simulations) or a config's name (tables, figures, claims)."""
    return f"{RESULTS}/logs/{kind}/{name}.log"


def benchmark_path(kind: str, name: str) -> str:
    return f"{RESULTS}/benchmarks/{kind}/{name}.tsv"


# What a built run finds, committed by hand: the default config's in docs/findings.md (figures in
# docs/findings/), any other config's in docs/findings-<name>.md (figures in docs/findings-<name>/), so
# that no config's findings overwrite another's.
FINDINGS_CONFIG = "default"
# the headline figures docs/findings.md shows, in this order (those a config draws)
FINDINGS_FIGURES = (
    "kaplan_power_law",
    "kaplan_fig6",
    "levine_optimal_depth",
    "levine_crossover",
    "levine_literal",
    "shaped_sde_density",
    "shaped_entropy",
)


def findings_figures_dir(config: str) -> str:
    """The folder of a config's findings figures: docs/findings for the default, docs/findings-<config> else."""
    return "docs/findings" if config == FINDINGS_CONFIG else f"docs/findings-{config}"


def findings_path(config: str) -> str:
    """A config's findings: docs/findings.md for the default, docs/findings-<config>.md for any other."""
    return f"{findings_figures_dir(config)}.md"


def findings_figure_path(config: str, figure: str) -> str:
    """Where `snakemake findings` copies a config's headline figure's PNG, beside its findings."""
    return f"{findings_figures_dir(config)}/{figure}.png"
