"""The depth-width sweeps: which runs each experiment trains, and their train specs.

Torch-free: the plan (`plan.jobs`) plans runs with `plan(config["sweep"])`. Experiments (config keys):
  design    N x depth: every depth at every N, width chosen to keep N   (Kaplan Fig. 5 left and Fig. 6,
            Levine's crossover, optimal depth and depth-inefficient regime)
  literal   small N x the shallowest depths, with the design's ratio     (Levine read literally: the deeper
            model wins once its width passes 3^L, at N ~ 2e3 for depths 1 -> 2)
  ffratio   fixed N and depth, d_ff / d varied                            (Kaplan Fig. 5 middle)
  headdim   fixed N, depth and width, head size varied                    (Kaplan Fig. 5 right)
  baseline  fixed aspect ratio d / L across N: the L(N) power law the ablations compare to
  lr_check  fixed N, a few depths and feed-forward ratios, the recipe's learning rate times each factor
            (a protocol check: the distance of the shapes from their best rate, carried into the claims)

The sensitivity block (config `sensitivity`, issue 52) plans, for each confound of tiny models alone, the shapes of
its depth pairs again: experiment `sens_tokens` (the recipe's tokens x `tokens_factor`), `sens_vocab<V>` (a BPE
vocabulary of V tokens on the same text) and `sens_heads` (heads of about `head_dim` channels), each at the seeds
of the experiment the pair comes from; `Sensitivity` says how a confound's runs differ from that experiment's.

Tokens per run: `recipe.token_budget`, or `recipe.tokens_per_parameter` x the shape's non-embedding N but at
least `recipe.min_tokens` (training caps either at `recipe.max_epochs` passes over the train split).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from depthwidth.columns import EXPERIMENTS, LR_CHECK, SENSITIVITY_PREFIX
from depthwidth.shapes import Shape, kaplan_lr, shape_at
from depthwidth.spec import Run


class PlanError(ValueError):
    """A sweep experiment whose shapes cannot be built; `key` is its config key."""

    def __init__(self, key: str, reason: str):
        super().__init__(f"{key}: {reason}")
        self.key, self.reason = key, reason


@dataclass(frozen=True)
class Point:
    """One shape an experiment plans, before seeds: the N it was chosen for and its learning-rate factor."""

    shape: Shape
    n_target: float | None = None
    lr_factor: float = 1.0
    seeds: tuple[int, ...] | None = None  # None: the sweep's seeds


def _design(cfg: dict, sweep: dict) -> list[Point]:
    return [Point(_design_shape(sweep, n, depth), n) for n in cfg["n"] for depth in cfg["depths"]]


def _design_shape(sweep: dict, n: float, depth: int, head_dim: int | None = None) -> Shape:
    """The design's shape of depth `depth` at N `n` (heads of about `head_dim` channels; None: the sweep's)."""
    rounding = _rounding(sweep) | ({"head_dim": head_dim} if head_dim else {})
    return shape_at(n, depth, sweep["design"]["ff_ratio"], **rounding)


def _literal(cfg: dict, sweep: dict) -> list[Point]:
    seeds = tuple(cfg["seeds"]) if cfg.get("seeds") else None
    return [Point(_literal_shape(sweep, n, depth), n, seeds=seeds) for n in cfg["n"] for depth in cfg["depths"]]


def _literal_shape(sweep: dict, n: float, depth: int, head_dim: int | None = None) -> Shape:
    """The literal block's shape of depth `depth` at N `n` (heads of about `head_dim` channels; None: the sweep's)."""
    cfg = sweep["literal"]
    # the smallest widths need finer steps than the design's: a 2-channel step moves N by 20-40% there
    rounding = {**_rounding(sweep), "multiple": cfg["width_multiple"], "tolerance": cfg["n_tolerance"]}
    rounding |= {"head_dim": head_dim} if head_dim else {}
    ff_ratio = sweep["design"]["ff_ratio"]  # one ratio for the design and its extension to small N
    return shape_at(n, depth, ff_ratio, **rounding)


def _ffratio(cfg: dict, sweep: dict) -> list[Point]:
    return [Point(shape_at(cfg["n"], cfg["n_layer"], ratio, **_rounding(sweep)), cfg["n"]) for ratio in cfg["ratios"]]


def _headdim(cfg: dict, sweep: dict) -> list[Point]:
    # One width for every head size: a multiple of all of them, at N within tolerance.
    rounding = {**_rounding(sweep), "multiple": math.lcm(*cfg["head_dims"])}
    base = shape_at(cfg["n"], cfg["n_layer"], 4.0, **rounding)
    return [Point(Shape(base.n_layer, base.d_model, base.d_model // h, base.d_ff), cfg["n"]) for h in cfg["head_dims"]]


def _baseline(cfg: dict, sweep: dict) -> list[Point]:
    if ("n_layer" in cfg) == ("aspect_ratio" in cfg):
        raise ValueError("give one of aspect_ratio and n_layer")
    if "n_layer" in cfg:  # one depth at every N: no step of depth leaves its own residual in L(N)
        return [Point(shape_at(n, cfg["n_layer"], 4.0, **_rounding(sweep)), n) for n in cfg["n"]]
    # N ~ 12 L d^2 with d = A L  =>  L = (N / (12 A^2))^(1/3)
    return [
        Point(shape_at(n, max(1, round((n / (12 * cfg["aspect_ratio"] ** 2)) ** (1 / 3))), 4.0, **_rounding(sweep)), n)
        for n in cfg["n"]
    ]


def _lr_check(cfg: dict, sweep: dict) -> list[Point]:
    # the recipe's own rate (factor 1) at every sweep seed: those runs are the design's and the ablations'
    rounding = _rounding(sweep)
    shapes = [shape_at(cfg["n"], depth, 4.0, **rounding) for depth in cfg["depths"]]
    ff = cfg.get("ff_ratios")
    if ff:
        shapes += [shape_at(cfg["n"], ff["n_layer"], ratio, **rounding) for ratio in ff["ratios"]]
    off = tuple(cfg["seeds"]) if cfg.get("seeds") else None
    return [
        Point(shape, cfg["n"], factor, None if factor == 1 else off) for shape in shapes for factor in cfg["factors"]
    ]


def _rounding(sweep: dict) -> dict:
    return {"head_dim": sweep["head_dim"], "multiple": sweep["width_multiple"], "tolerance": sweep["n_tolerance"]}


_PLANNERS = {
    "design": _design,
    "literal": _literal,
    "ffratio": _ffratio,
    "headdim": _headdim,
    "baseline": _baseline,
    LR_CHECK: _lr_check,
}


@dataclass(frozen=True)
class Sensitivity:
    """One confound of the sensitivity block: how its runs differ from those of the experiment a pair comes from
    (one of tokens_factor != 1, vocab_size, head_dim)."""

    name: str  # tokens, vocab<V>, heads
    tokens_factor: float = 1.0  # x every token count of the recipe (token_budget or tokens_per_parameter, min_tokens)
    vocab_size: int | None = None  # another BPE vocabulary of the same text (None: the config's)
    head_dim: int | None = None  # heads of about this many channels (None: the sweep's head_dim)

    @property
    def experiment(self) -> str:
        return f"{SENSITIVITY_PREFIX}{self.name}"

    def trains(self, pair: dict) -> bool:
        """Whether a pair of the block is trained under this confound (its `confounds`; absent or None: all)."""
        return pair.get("confounds") is None or self.name in pair["confounds"]

    def data(self, data: dict) -> dict:
        """The data block its runs train on: the config's `data`, with this confound's vocabulary if it has one."""
        return data | {"vocab_size": self.vocab_size} if self.vocab_size else data

    def recipe(self, recipe: dict) -> dict:
        """The sweep recipe with this confound's token counts (each x tokens_factor)."""
        if self.tokens_factor == 1:
            return recipe
        keys = ("token_budget", "tokens_per_parameter", "min_tokens")
        return recipe | {key: _scaled(recipe[key], self.tokens_factor) for key in keys if key in recipe}


def _scaled(count, factor: float):
    """A token count times `factor`, an integer where the count is one (token_budget, min_tokens)."""
    return round(count * factor) if isinstance(count, int) else count * factor


def sensitivities(block: dict | None) -> list[Sensitivity]:
    """The confounds a (validated) `sensitivity` block plans, in a fixed order: tokens, each vocabulary, heads."""
    if not block or not block["enabled"]:
        return []
    out = [Sensitivity("tokens", tokens_factor=block["tokens_factor"])] if block["tokens_factor"] != 1 else []
    out += [Sensitivity(f"vocab{size}", vocab_size=size) for size in block["vocab_sizes"]]
    return out + ([Sensitivity("heads", head_dim=block["head_dim"])] if block["head_dim"] else [])


_PAIR_SHAPES = {"design": _design_shape, "literal": _literal_shape}


def sensitivity_points(block: dict, sweep: dict, sensitivity: Sensitivity) -> list[Point]:
    """The shapes of every pair of the block this confound trains (each depth at its N, rounded as its experiment
    rounds), at the block's seeds (absent: its experiment's) and heads of about `sensitivity.head_dim` channels; a
    shape two pairs share once."""
    points = {}
    for pair in filter(sensitivity.trains, block["pairs"]):
        experiment, n = pair["experiment"], pair["n"]
        seeds = block["seeds"] or sweep[experiment].get("seeds") or None
        for depth in pair["depths"]:
            shape = _PAIR_SHAPES[experiment](sweep, n, depth, sensitivity.head_dim)
            points.setdefault((shape, n), Point(shape, n, seeds=tuple(seeds) if seeds else None))
    return list(points.values())


def plan(sweep: dict, sensitivity: dict | None = None) -> dict[str, dict[str, Run]]:
    """Runs of every enabled experiment, then of each confound of the `sensitivity` block, keyed by experiment
    then run id (duplicates merged).

    Raises PlanError naming the experiment (or the sensitivity block) whose shapes cannot be built.
    """
    planned: dict[str, list[Point]] = {}
    for name in EXPERIMENTS:
        cfg = sweep.get(name)
        if not cfg or not cfg["enabled"]:
            continue
        try:
            planned[name] = _PLANNERS[name](cfg, sweep)
        except ValueError as err:
            raise PlanError(f"sweep.{name}", str(err)) from None
    for confound in sensitivities(sensitivity):
        try:
            planned[confound.experiment] = sensitivity_points(sensitivity, sweep, confound)
        except ValueError as err:
            raise PlanError("sensitivity.head_dim" if confound.head_dim else "sensitivity.pairs", str(err)) from None
    runs: dict[str, dict[str, Run]] = {}
    for name, points in planned.items():
        runs[name] = {}
        for point in points:
            for seed in point.seeds or sweep["seeds"]:
                run = Run(name, point.shape, seed, point.n_target, point.lr_factor)
                runs[name].setdefault(run.run_id, run)
    return runs


# The terms of a recipe's `lr_scale`, each: its key (in `lr_scale` and in `lr_scale.at`), its symbol in
# the scale note, and the shape's quantity it scales with.
LR_SCALE_TERMS = {
    "n_layer": ("L", lambda shape: shape.n_layer),
    "d_model": ("d", lambda shape: shape.d_model),
    "ff_ratio": ("(d_ff/d)", lambda shape: shape.d_ff / shape.d_model),
}


def lr_scale(scale: dict | None, shape: Shape) -> float:
    """The recipe's `lr_scale` at a shape: the product over its terms of (quantity / at.key)^key, i.e.
    (n_layer / at.n_layer)^n_layer x (d_model / at.d_model)^d_model x ((d_ff / d_model) / at.ff_ratio)^ff_ratio."""
    if not scale:
        return 1.0
    return math.prod((value(shape) / scale["at"][key]) ** scale[key] for key, (_, value) in LR_SCALE_TERMS.items())


def run_recipe(run: Run, recipe: dict, n: int) -> dict:
    """The sweep recipe as one run of non-embedding N `n` trains it: its token budget from N (at least
    `min_tokens`); its learning
    rate, the recipe's (a number, or Kaplan's LR(N) resolved here) times the shape's `lr_scale` and the
    run's factor. Raises PlanError where Kaplan's rule gives no positive rate."""
    recipe = dict(recipe)
    floor = recipe.pop("min_tokens", 1)
    if "tokens_per_parameter" in recipe:
        recipe["token_budget"] = max(floor, round(recipe.pop("tokens_per_parameter") * n))
    base = kaplan_lr(n) if recipe["lr"] == "kaplan" else recipe["lr"]
    if not base > 0:
        raise PlanError("sweep.recipe.lr", f"Kaplan's LR(N) is {base:.3g} <= 0 at N = {n}, the {run.run_id} run")
    scale = run.lr_factor * lr_scale(recipe.pop("lr_scale", None), run.shape)
    recipe["lr"] = float(f"{scale * base:.6g}") if scale != 1 else base
    return recipe


def train_spec(run: Run, recipe: dict, data_dir: str, vocab_size: int) -> dict:
    """The spec `python -m depthwidth train` reads for one run (one recipe for every sweep run), before the
    schema's defaults are filled in (`plan.jobs` does that)."""
    recipe = run_recipe(run, recipe, run.shape.n_nonembedding)
    n_ctx = recipe.pop("n_ctx")
    model = {"qk_norm": recipe.pop("qk_norm")} if "qk_norm" in recipe else {}  # absent: the plain GPT
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
            **model,
        },
        "recipe": recipe,
    }
