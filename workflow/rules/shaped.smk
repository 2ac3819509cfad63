# Stage 3: the shaped Transformer. Terminal laws of finite networks at initialization against
# the covariance SDE, the rank-collapse trajectory, and the entropy table of trained models.


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
        setting=shaped_setting,
        width=shaped_width,
    shell:
        "python -m depthwidth shaped-sim samples {params.width} {params.setting} "
        "--block {wildcards.block} --threads {threads} --out {output} > {log} 2>&1"


rule sde_terminal:
    input:
        samples=shaped_sample_tables,
        code=package_code("tables"),
    output:
        "results/tables/sde_terminal.csv",
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
        "results/tables/shaped_trajectory.csv",
    log:
        "results/logs/tables/shaped_trajectory.log",
    benchmark:
        "results/benchmarks/tables/shaped_trajectory.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        setting=trajectory_setting,
    shell:
        "python -m depthwidth shaped-sim trajectory {params.setting} --threads {threads} "
        "--out {output} > {log} 2>&1"


rule shaped_entropy_table:
    input:
        metrics=run_outputs_of(artifacts.ENTROPY_EXPERIMENT),
        entropy=run_outputs_of(artifacts.ENTROPY_EXPERIMENT, "entropy.csv"),
        curves=run_outputs_of(artifacts.ENTROPY_EXPERIMENT, "curve.csv"),
        code=package_code("shaped_training"),
    output:
        "results/tables/shaped_entropy.csv",
    log:
        "results/logs/tables/shaped_entropy.log",
    conda:
        CONDA_ENV
    params:
        specs=as_json(RUN_SPECS.get(artifacts.ENTROPY_EXPERIMENT, {})),
    shell:
        "python -m depthwidth shaped-training-table --specs-json {params.specs:q} "
        "--runs-dir results/runs/shaped_entropy --out {output} > {log} 2>&1"
