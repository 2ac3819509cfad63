# Stage 2: training runs (sweeps and shaped-attention training), one job per distinct spec;
# then one table per sweep experiment. Every run is looked up in the plan by its id.
import re


wildcard_constraints:
    run="|".join(map(re.escape, PLAN.runs)) or "no-runs",
    experiment="|".join(PLAN.sweep) or "no-sweep",


rule train_run:
    input:
        data=[
            f"{PLAN.data_dir}/{name}" for name in ("meta.json", "train.bin", "val.bin")
        ],
        code=package_code(
            "model",
            "train",
            "shapes",
            "tokens",
            "corpus",
            "checkpoint",
            "optim",
            "outputs",
        ),
    output:
        metrics="results/runs/{run}/metrics.json",
        curve="results/runs/{run}/curve.csv",
        entropy="results/runs/{run}/entropy.csv",
    log:
        "results/logs/runs/{run}.log",
    benchmark:
        "results/benchmarks/runs/{run}.tsv"
    conda:
        CONDA_ENV
    threads: lambda wildcards: PLAN.runs[wildcards.run].resources["threads"]
    resources:
        mem_mb=lambda wildcards: PLAN.runs[wildcards.run].resources["mem_mb"],
        runtime=lambda wildcards: PLAN.runs[wildcards.run].resources["runtime"],
        gpu=lambda wildcards: PLAN.runs[wildcards.run].scheduler["gpu"],
        gres=lambda wildcards: PLAN.runs[wildcards.run].scheduler["gres"],
    params:
        spec=lambda wildcards: as_json(PLAN.runs[wildcards.run].spec),
        checkpoint=lambda wildcards: PLAN.runs[wildcards.run].checkpoint_dir,
    shell:
        "python -m depthwidth train --spec-json {params.spec:q} --out results/runs/{wildcards.run} "
        "--checkpoint-dir {params.checkpoint} --threads {threads} > {log} 2>&1"


rule sweep_table:
    input:
        metrics=run_files("sweep_{experiment}"),
        curves=run_files("sweep_{experiment}", "curve.csv"),  # checked against metrics.json
        code=package_code("sweep", "shapes"),
    output:
        "results/tables/sweep_{experiment}.csv",
    log:
        "results/logs/tables/sweep_{experiment}.log",
    conda:
        CONDA_ENV
    params:
        runs=lambda wildcards: as_json(PLAN.sweep_runs(wildcards.experiment)),
    shell:
        "python -m depthwidth sweep-table --experiment {wildcards.experiment} --runs-json {params.runs:q} "
        "--runs-dir results/runs --out {output} > {log} 2>&1"
