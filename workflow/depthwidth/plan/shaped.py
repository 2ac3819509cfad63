"""The shaped Transformer's jobs: the simulations at initialization (terminal laws of the SDE and of
finite networks, the rank-collapse trajectory) and the training with standard vs shaped attention
across learning rates (figure S4), as specs before the schema's defaults are filled in (`plan.jobs`).

A third kind, `temperature` (softmax attention at the shaped temperature, no centring), is the
temperature-only control: it tells whether a difference comes from the temperature or the centring.

Torch-free: `training_specs(config["shaped"]["training"], ...)`. Every run
trains the same model shape with one attention kind at one peak learning rate and logs the
attention entropy per layer and head at each evaluation.
"""

from __future__ import annotations

from depthwidth.columns import MLP_KEYS, SDE_KEYS, SETTING_KEYS
from depthwidth.contracts import TEMPERED_KINDS

# each `shaped-sim` subcommand and the schema's `$defs` of its job's spec
SPEC_KINDS = {"samples": "sample_spec", "trajectory": "trajectory_spec"}


def run_id(attention: str, lr: float, seed: int) -> str:
    # repr: the shortest text that reads back as the same float, so distinct rates get distinct ids
    return f"{attention}-lr{float(lr)!r}-s{seed}"


def training_specs(training: dict, data_dir: str, vocab_size: int) -> dict[str, dict]:
    """Train specs of every (attention kind, learning rate, seed), keyed by run id."""
    recipe = dict(training["recipe"])
    n_ctx = recipe.pop("n_ctx")
    specs = {}
    for attention in training["attentions"]:
        for lr in training["learning_rates"]:
            for seed in training["seeds"]:
                model = {**training["model"], "vocab_size": vocab_size, "n_ctx": n_ctx, "attention": attention}
                if attention in TEMPERED_KINDS:  # `temperature` reads tau0, the shaped temperature
                    model["shaped"] = training["shaped"]
                specs[run_id(attention, lr, seed)] = {
                    "data": data_dir,
                    "seed": seed,
                    "log_entropy": True,
                    "model": model,
                    "recipe": {**recipe, "lr": lr},
                }
    return specs


def _setting(sim: dict, seed: int, sde: bool, mlp: bool, **overrides) -> dict:
    """The keys one simulation job uses (editing dt does not rerun the finite networks)."""
    sim = {**sim, **overrides}
    keys = [*SETTING_KEYS, *(SDE_KEYS if sde else ()), *(MLP_KEYS if mlp else ())]
    return {**{key: sim[key] for key in keys}, "seed": seed}


# the SDE runs at dt and at dt / 2 (name suffix -> divisor of dt): the figure extrapolates its law to dt -> 0
SDE_STEPS = {"": 1, "-half": 2}
# with the samples of a finite width (`samples`) times this: the extrapolation 2 F(dt / 2) - F(dt) has sqrt(5)
# times the standard error of one run, and 4x the samples bring it to 1.1x (an SDE path costs ~1 ms)
SDE_SAMPLES_FACTOR = 4


def sample_name(block: str, n: int | None = None, divisor: int = 1) -> str:
    """A sample job's name: `<block>-n<width>` for finite networks (`n`), else the SDE's at dt / `divisor`
    (`<block>-sde`, `<block>-sde-half`: SDE_STEPS)."""
    if n is not None:
        return f"{block}-n{int(n)}"
    (suffix,) = (suffix for suffix, d in SDE_STEPS.items() if d == divisor)
    return f"{block}-sde{suffix}"


def simulation_specs(sim: dict, seed: int) -> dict[str, tuple[str, dict]]:
    """Every simulation job of a (validated) `shaped.simulation` block: name -> (`shaped-sim` subcommand,
    spec); names are `<block>-sde`, `<block>-sde-half` (dt / 2), `<block>-n<width>` (`sample_name`) and
    `trajectory`."""
    jobs = {}
    for block in sim["blocks"]:
        mlp = block != "attention"
        for divisor in SDE_STEPS.values():
            setting = _setting(
                sim, seed, True, mlp, dt=sim["dt"] / divisor, samples=sim["samples"] * SDE_SAMPLES_FACTOR
            )
            jobs[sample_name(block, divisor=divisor)] = ("samples", {"source": "sde", "block": block, **setting})
        for n in sim["widths"]:
            spec = {"source": "finite", "block": block, "n": n, **_setting(sim, seed, False, mlp)}
            jobs[sample_name(block, n)] = ("samples", spec)
    trajectory = sim["trajectory"]
    setting = _setting(
        sim, seed, True, trajectory["block"] != "attention", T=trajectory["T"], samples=trajectory["samples"]
    )
    spec = {**setting, "n": trajectory["n"], "points": trajectory["points"], "block": trajectory["block"]}
    jobs["trajectory"] = ("trajectory", spec)
    return jobs
