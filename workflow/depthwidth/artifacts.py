"""What a config produces: its training runs, tables and figures, and the tables each figure plots.

Torch-free and Snakemake-free: the rules (workflow/rules/common.smk) build their DAG from it and
`python -m depthwidth check` verifies a results folder against it, so the two cannot disagree.
"""

from __future__ import annotations

from depthwidth import shaped_training
from depthwidth.sweep import plan as plan_sweep
from depthwidth.sweep import train_spec

# figure id -> sweep experiments whose tables it plots
SWEEP_FIGURES = {
    "kaplan_power_law": ["baseline"],
    "kaplan_fig5_aspect": ["aspect", "baseline"],
    "kaplan_fig5_ffratio": ["ffratio", "baseline"],
    "kaplan_fig5_headdim": ["headdim", "baseline"],
    "kaplan_fig6": ["grid"],
    "levine_regimes": ["grid"],
    "levine_crossover": ["grid"],
    "levine_optimal_depth": ["grid"],
}
SDE_TERMINAL = "results/tables/sde_terminal.csv"
TRAJECTORY = "results/tables/shaped_trajectory.csv"
ENTROPY = "results/tables/shaped_entropy.csv"
# figure id -> the table it plots (when the config has a `shaped.simulation` block)
SIMULATION_FIGURES = {
    "shaped_sde_density": SDE_TERMINAL,
    "shaped_sde_convergence": SDE_TERMINAL,
    "shaped_rank_collapse": TRAJECTORY,
}
SHAPED_FIGURES = [*SIMULATION_FIGURES, "shaped_entropy"]
ENTROPY_EXPERIMENT = "shaped_entropy"


def data_dir(config: dict) -> str:
    return f"results/data/{config['data']['name']}"


def sweep_table(experiment: str) -> str:
    return f"results/tables/sweep_{experiment}.csv"


def run_specs(config: dict) -> dict[str, dict[str, dict]]:
    """experiment -> run id -> train spec, for every training run the config asks for."""
    vocab, data = config["data"]["vocab_size"], data_dir(config)
    specs = {}
    if "sweep" in config:
        for experiment, runs in plan_sweep(config["sweep"]).items():
            specs[experiment] = {
                rid: train_spec(run, config["sweep"]["recipe"], data, vocab) for rid, run in runs.items()
            }
    training = config.get("shaped", {}).get("training")
    if training:
        specs[ENTROPY_EXPERIMENT] = shaped_training.plan(training, data, vocab)
    return specs


def figure_inputs(config: dict) -> dict[str, list[str]]:
    """figure id -> the tables it plots, for every figure this config builds."""
    experiments = set(run_specs(config))
    figures = {
        figure: [sweep_table(name) for name in needed]
        for figure, needed in SWEEP_FIGURES.items()
        if set(needed) <= experiments
    }
    if config.get("shaped", {}).get("simulation"):
        figures.update({figure: [table] for figure, table in SIMULATION_FIGURES.items()})
    if ENTROPY_EXPERIMENT in experiments:
        figures["shaped_entropy"] = [ENTROPY]
    return figures


def run_dir(experiment: str, run_id: str) -> str:
    return f"results/runs/{experiment}/{run_id}"
