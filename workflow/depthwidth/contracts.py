"""The contracts between stages, written once: where every file lies, its name and columns, the ids of
the tables, the enums the stages share, and how to find the package code each job runs. Torch-free and stdlib-only:
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

import ast
import functools
import hashlib
import json
from pathlib import Path

RESULTS = "results"
# the folders of RESULTS that every config shares (a config's own folder takes its name, so it is none of these)
SHARED_FOLDERS = ("data", "runs", "rates", "simulations", "logs", "benchmarks", "downloads")

# --- data ----------------------------------------------------------------------------------------
DATA_ROLES = {"tokenizer": "tokenizer.json", "train": "train.bin", "val": "val.bin", "meta": "meta.json"}
DATA_FILES = tuple(DATA_ROLES.values())  # what prepare-data writes
RECORDED_DATA_FILES = ("train.bin", "val.bin", "tokenizer.json")  # meta.json records size and sha256 of each

# --- runs ----------------------------------------------------------------------------------------
RUN_FILES = ("metrics.json", "curve.csv", "entropy.csv")
# the files a run writes beside metrics.json, and the metrics.json field that records each one's sha256
RUN_DIGESTS = {"curve.csv": "curve_sha256", "entropy.csv": "entropy_sha256"}
CURVE_COLUMNS = ("step", "tokens", "train_loss", "val_loss", "lr")
ENTROPY_COLUMNS = ("step", "layer", "head", "entropy")
RUN_STATUSES = ("ok", "diverged")
FINISHED = RUN_STATUSES[0]  # the status of a run that finished with a finite loss

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
# A job runs one module of the package (its command's: cli.COMMANDS) and whatever that module imports. Its
# code is read off the import statements (`code_files`), so the rules' code inputs, and the checkpoint's code
# digest, are never a hand-kept list that can miss an import: editing a module reruns exactly the jobs whose
# command reaches it. An import counts wherever it stands (inside a function too), with the __init__ of every
# package above the module (Python runs it first); the command line (cli.py, __main__.py) only dispatches.
PACKAGE = Path(__file__).resolve().parent
PACKAGE_NAME = PACKAGE.name


def module_file(module: str, root: Path = PACKAGE) -> Path | None:
    """The source of a package module under `root` (`depthwidth.train.loop` -> train/loop.py, a package ->
    its __init__.py); None for a name that is no module of the package (a class, another library)."""
    parts = module.split(".")
    if parts[0] != PACKAGE_NAME:
        return None
    base = root.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file() and (len(parts) > 1 or path.name == "__init__.py"):
            return path
    return None


def imported_modules(path: Path, root: Path = PACKAGE) -> frozenset[str]:
    """The package modules the source at `path` imports, anywhere in it: `import a.b` and `from a import b`
    (b a module) name a.b; `from a import name` (name defined in a's __init__) names a."""
    return _imported_modules(path, path.stat().st_mtime_ns, root)


@functools.cache
def _imported_modules(path: Path, mtime_ns: int, root: Path) -> frozenset[str]:
    """`imported_modules`, parsed once per version of the file (a plan asks for the same modules many times)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if module_file(alias.name, root)}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{alias.name}" for alias in node.names}
            modules = {name for name in subs if module_file(name, root)}
            found |= modules
            if len(modules) < len(subs) and module_file(node.module, root):
                found.add(node.module)
    return frozenset(found)


def code_files(*modules: str, root: Path = PACKAGE) -> tuple[Path, ...]:
    """The sources of `modules` and of every package module they import, transitively, each with the
    __init__ of the packages above it, sorted."""
    seen, todo = set(), list(modules)
    while todo:
        module = todo.pop()
        path = module_file(module, root)
        if path is None:
            raise ValueError(f"{module}: no module of the package under {root}")
        if path in seen:
            continue
        seen.add(path)
        parents = [".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)]
        todo.extend([*parents, *imported_modules(path, root)])
    return tuple(sorted(seen))


# The module that trains (a checkpoint's code digest covers it and its imports: `train.checkpoint.code_digest`).
TRAINING_MODULE = f"{PACKAGE_NAME}.train.loop"


def figure_module(figure_id: str) -> str:
    """The module that draws a figure (`data` and `draw`), which the figure command imports by name."""
    return f"{PACKAGE_NAME}.plots.{figure_id}"


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


# A figure's rows read the other way: its sweep tables' stalled runs left out (stalls.flag). The claims judge
# both readings: the verdict is the .csv's (every run), the row's text gives this one's.
UNSTALLED = ".unstalled.csv"
FIGURE_SUFFIXES = (".png", ".pdf", ".csv", UNSTALLED)


def unstalled_path(figure_csv) -> str:
    """The other reading of a figure's CSV (`<figure>.unstalled.csv` beside `<figure>.csv`)."""
    return str(figure_csv).removesuffix(".csv") + UNSTALLED


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
