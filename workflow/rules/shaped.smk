# Stage 3: the shaped Transformer. Terminal laws of finite networks at initialization against
# the covariance SDE, the rank-collapse trajectory, and the entropy table of trained models.
# Each simulation job is looked up in the plan by its id (`<block>/<source>` or `trajectory`).
from depthwidth.plan import ENTROPY_TABLE, SDE_TERMINAL, TRAJECTORY, table_path


wildcard_constraints:
    block="attention|mlp|both",
    source=r"sde|n\d+",


rule shaped_samples:
    input:
        code=package_code("sde", "finite", "shaped_sim"),
    output:
        "results/tables/shaped/{block}/{source}.csv",
    log:
        "results/logs/shaped/{block}/{source}.log",
    benchmark:
        "results/benchmarks/shaped/{block}/{source}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        spec=lambda wildcards: as_json(
            PLAN.simulations[f"{wildcards.block}/{wildcards.source}"].spec
        ),
    shell:
        "python -m depthwidth shaped-sim samples --spec-json {params.spec:q} --threads {threads} "
        "--out {output} > {log} 2>&1"


rule sde_terminal:
    input:
        samples=PLAN.sample_tables(),
        code=package_code("tables"),
    output:
        table_path(SDE_TERMINAL),
    log:
        "results/logs/tables/sde_terminal.log",
    conda:
        CONDA_ENV
    shell:
        "python -m depthwidth concat-tables {input.samples} --out {output} > {log} 2>&1"


rule shaped_trajectory:
    input:
        code=package_code("sde", "finite", "shaped_sim"),
    output:
        table_path(TRAJECTORY),
    log:
        "results/logs/tables/shaped_trajectory.log",
    benchmark:
        "results/benchmarks/tables/shaped_trajectory.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        spec=as_json(PLAN.simulations["trajectory"].spec) if PLAN.simulations else "",
    shell:
        "python -m depthwidth shaped-sim trajectory --spec-json {params.spec:q} --threads {threads} "
        "--out {output} > {log} 2>&1"


rule shaped_entropy_table:
    input:
        metrics=run_files(ENTROPY_TABLE),
        entropy=run_files(ENTROPY_TABLE, "entropy.csv"),
        curves=run_files(ENTROPY_TABLE, "curve.csv"),
        code=package_code("shaped_training"),
    output:
        table_path(ENTROPY_TABLE),
    log:
        "results/logs/tables/shaped_entropy.log",
    conda:
        CONDA_ENV
    params:
        specs=as_json({run: PLAN.runs[run].spec for run in PLAN.entropy_runs}),
    shell:
        "python -m depthwidth shaped-training-table --specs-json {params.specs:q} "
        "--runs-dir results/runs --out {output} > {log} 2>&1"
