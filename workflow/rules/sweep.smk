# Stage 2: training runs (sweeps and shaped-attention training), one job per run;
# then one table per sweep experiment.


rule train_run:
    input:
        data=[f"{DATA_DIR}/{name}" for name in ("meta.json", "train.bin", "val.bin")],
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
        metrics="results/runs/{experiment}/{run}/metrics.json",
        curve="results/runs/{experiment}/{run}/curve.csv",
        entropy="results/runs/{experiment}/{run}/entropy.csv",
    log:
        "results/logs/runs/{experiment}/{run}.log",
    benchmark:
        "results/benchmarks/runs/{experiment}/{run}.tsv"
    conda:
        CONDA_ENV
    threads: run_resources("threads", 1)
    resources:
        mem_mb=run_resources("mem_mb", 2000),
        runtime=run_resources("runtime", 60),
        gpu=run_resources("gpu", 0),
    params:
        spec=run_spec,
        checkpoint=run_checkpoint_dir,
    shell:
        "python -m depthwidth train --spec-json {params.spec:q} "
        "--out results/runs/{wildcards.experiment}/{wildcards.run} --checkpoint-dir {params.checkpoint} "
        "--threads {threads} > {log} 2>&1"


rule sweep_table:
    input:
        metrics=lambda wildcards: run_outputs(wildcards.experiment),
        code=package_code("sweep", "shapes"),
    output:
        "results/tables/sweep_{experiment}.csv",
    log:
        "results/logs/tables/sweep_{experiment}.log",
    conda:
        CONDA_ENV
    params:
        runs=sweep_runs_plan,
    shell:
        "python -m depthwidth sweep-table --experiment {wildcards.experiment} --runs-json {params.runs:q} "
        "--runs-dir results/runs/{wildcards.experiment} --out {output} > {log} 2>&1"
