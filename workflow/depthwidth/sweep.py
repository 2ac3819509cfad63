"""The depth-width sweeps: which runs each experiment trains, their train specs, and their table.

Torch-free: the Snakefile plans runs with `plan(config["sweep"])`. Experiments (config keys):
  aspect    fixed non-embedding N, depth varied, width chosen to keep N   (Kaplan Fig. 5 left)
  ffratio   fixed N and depth, d_ff / d varied                            (Kaplan Fig. 5 middle)
  headdim   fixed N, depth and width, head size varied                    (Kaplan Fig. 5 right)
  grid      depth x width                                                 (Kaplan Fig. 6, Levine)
  baseline  fixed aspect ratio d / L across N: the L(N) power law the ablations compare to
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

from depthwidth.io import read_json, write_text
from depthwidth.shapes import Shape, heads_for, shape_at

EXPERIMENTS = ("aspect", "ffratio", "headdim", "grid", "baseline")

TABLE_COLUMNS = [
    "experiment",
    "run_id",
    "seed",
    "n_target",
    "n_layer",
    "d_model",
    "n_head",
    "d_head",
    "d_ff",
    "aspect_ratio",
    "ff_ratio",
    "n_nonembedding",
    "n_total",
    "n_kaplan",
    "tokens_seen",
    "final_val_loss",
    "best_val_loss",
    "status",
    "wall_seconds",
    "tokens_per_second",
]


class PlanError(ValueError):
    """A sweep experiment whose shapes cannot be built; `key` is its config key."""

    def __init__(self, key: str, reason: str):
        super().__init__(f"{key}: {reason}")
        self.key, self.reason = key, reason


@dataclass(frozen=True)
class Run:
    """One training run of a sweep: its shape, seed, and the N it was chosen for (None for grid)."""

    experiment: str
    shape: Shape
    seed: int
    n_target: float | None = None

    @property
    def run_id(self) -> str:
        return f"{self.shape.run_id()}-s{self.seed}"


def _aspect(cfg: dict, sweep: dict) -> list[tuple[Shape, float | None]]:
    return [(shape_at(n, depth, cfg["ff_ratio"], **_rounding(sweep)), n) for n in cfg["n"] for depth in cfg["depths"]]


def _ffratio(cfg: dict, sweep: dict) -> list[tuple[Shape, float | None]]:
    return [(shape_at(cfg["n"], cfg["n_layer"], ratio, **_rounding(sweep)), cfg["n"]) for ratio in cfg["ratios"]]


def _headdim(cfg: dict, sweep: dict) -> list[tuple[Shape, float | None]]:
    # One width for every head size: a multiple of all of them, at N within tolerance.
    rounding = {**_rounding(sweep), "multiple": math.lcm(*cfg["head_dims"])}
    base = shape_at(cfg["n"], cfg["n_layer"], 4.0, **rounding)
    return [(Shape(base.n_layer, base.d_model, base.d_model // h, base.d_ff), cfg["n"]) for h in cfg["head_dims"]]


def _grid(cfg: dict, sweep: dict) -> list[tuple[Shape, float | None]]:
    shapes = []
    for depth in cfg["depths"]:
        for width in cfg["widths"]:
            d_ff = round(cfg["ff_ratio"] * width)
            shapes.append((Shape(depth, width, heads_for(width, sweep["head_dim"]), d_ff), None))
    return shapes


def _baseline(cfg: dict, sweep: dict) -> list[tuple[Shape, float | None]]:
    # N ~ 12 L d^2 with d = A L  =>  L = (N / (12 A^2))^(1/3)
    return [
        (shape_at(n, max(1, round((n / (12 * cfg["aspect_ratio"] ** 2)) ** (1 / 3))), 4.0, **_rounding(sweep)), n)
        for n in cfg["n"]
    ]


def _rounding(sweep: dict) -> dict:
    return {"head_dim": sweep["head_dim"], "multiple": sweep["width_multiple"], "tolerance": sweep["n_tolerance"]}


_PLANNERS = {"aspect": _aspect, "ffratio": _ffratio, "headdim": _headdim, "grid": _grid, "baseline": _baseline}


def plan(sweep: dict) -> dict[str, dict[str, Run]]:
    """Runs of every enabled experiment, keyed by experiment then run id (duplicates merged).

    Raises PlanError naming the experiment whose shapes cannot be built.
    """
    runs: dict[str, dict[str, Run]] = {}
    for name in EXPERIMENTS:
        cfg = sweep.get(name)
        if not cfg or not cfg["enabled"]:
            continue
        try:
            shapes = _PLANNERS[name](cfg, sweep)
        except ValueError as err:
            raise PlanError(f"sweep.{name}", str(err)) from None
        runs[name] = {}
        for shape, n_target in shapes:
            for seed in sweep["seeds"]:
                run = Run(name, shape, seed, n_target)
                runs[name].setdefault(run.run_id, run)
    return runs


def train_spec(run: Run, recipe: dict, data_dir: str, vocab_size: int) -> dict:
    """The spec `python -m depthwidth train` reads for one run (one recipe for every sweep run)."""
    recipe = dict(recipe)
    n_ctx = recipe.pop("n_ctx")
    return {
        "data": data_dir,
        "seed": run.seed,
        "compile": recipe.pop("compile", False),
        "model": {
            "vocab_size": vocab_size,
            "n_ctx": n_ctx,
            "n_layer": run.shape.n_layer,
            "d_model": run.shape.d_model,
            "n_head": run.shape.n_head,
            "d_ff": run.shape.d_ff,
            "attention": "standard",
        },
        "recipe": recipe,
    }


def run_row(run: Run, metrics: dict) -> dict:
    """One row of a sweep table: the plan's knobs and the run's measured numbers."""
    shape = run.shape
    return {
        "experiment": run.experiment,
        "run_id": run.run_id,
        "seed": run.seed,
        "n_target": run.n_target,
        "n_layer": shape.n_layer,
        "d_model": shape.d_model,
        "n_head": shape.n_head,
        "d_head": shape.d_head,
        "d_ff": shape.d_ff,
        "aspect_ratio": shape.aspect_ratio,
        "ff_ratio": shape.d_ff / shape.d_model,
        "n_nonembedding": metrics["n_params_nonembedding"],
        "n_total": metrics["n_params_total"],
        "n_kaplan": metrics["n_params_kaplan"],
        "tokens_seen": metrics["tokens_seen"],
        "final_val_loss": metrics["final_val_loss"],
        "best_val_loss": metrics["best_val_loss"],
        "status": metrics["status"],
        "wall_seconds": metrics["wall_seconds"],
        "tokens_per_second": metrics["tokens_per_second"],
    }


def table(runs: dict[str, Run], runs_dir: Path):
    """The sweep table (a DataFrame) of one experiment from its runs' metrics.json files."""
    import pandas as pd  # here, not at import: the Snakefile plans runs with this module

    rows = [run_row(run, read_json(Path(runs_dir) / run_id / "metrics.json")) for run_id, run in runs.items()]
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def run_plan(run: Run) -> dict:
    """A run as plain JSON (the table rule's params: what the table needs, nothing more)."""
    return {"shape": run.shape.to_dict(), "seed": run.seed, "n_target": run.n_target}


def run_from_plan(experiment: str, plan_row: dict) -> Run:
    return Run(experiment, Shape(**plan_row["shape"]), plan_row["seed"], plan_row["n_target"])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--experiment", required=True, choices=EXPERIMENTS)
    parser.add_argument("--runs-json", required=True, help="run id -> run_plan(run), as the workflow planned them")
    parser.add_argument("--runs-dir", required=True, type=Path, help="results/runs/<experiment>")
    parser.add_argument("--out", required=True, type=Path, help="results/tables/sweep_<experiment>.csv")


def run(args: argparse.Namespace) -> int:
    runs = {rid: run_from_plan(args.experiment, row) for rid, row in json.loads(args.runs_json).items()}
    frame = table(runs, args.runs_dir)
    write_text(args.out, frame.to_csv(index=False))
    print(f"{args.experiment}: {len(frame)} runs ({(frame.status != 'ok').sum()} not ok) -> {args.out}")
    return 0
