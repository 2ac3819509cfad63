# Stage 3: the tables of this config, from its runs and simulations: one per sweep experiment (with its runs'
# training curves beside it), the terminal laws of every simulation, and the entropy of the shaped-vs-standard
# training.


rule sweep_table:
    input:
        metrics=get_table_run_files(get_sweep_table, "metrics.json"),
        curves=get_table_run_files(get_sweep_table, "curve.csv"),  # checked against metrics.json
        second_metrics=get_second_run_files("metrics.json"),  # with two looks: the seeds the second stage asked for
        second_curves=get_second_run_files("curve.csv"),
        rounds=get_experiment_rounds,  # the final round of each scan gives its rows' lr_excess_pct
        code=package_code("sweep-table"),
    output:
        table=SWEEP_TABLE,
        curves=CURVES_TABLE,
    log:
        contracts.log_path(NAME, f"tables/{sweep_table('{experiment}')}"),
    conda:
        CONDA_ENV
    params:
        runs=get_sweep_runs,
    shell:
        "python -m depthwidth sweep-table --experiment {wildcards.experiment:q} --runs-json {params.runs:q} "
        "--out {output.table:q} --curves-out {output.curves:q} > {log:q} 2>&1"


# With two looks (config decide.looks): the same table on the first stage's seeds alone, which look 1 reads.
rule sweep_table_first:
    input:
        metrics=get_table_run_files(get_sweep_table, "metrics.json"),
        curves=get_table_run_files(get_sweep_table, "curve.csv"),
        rounds=get_experiment_rounds,
        code=package_code("sweep-table"),
    output:
        table=FIRST_TABLE,
        curves=FIRST_CURVES,
    log:
        contracts.log_path(NAME, f"decide/tables/{sweep_table('{experiment}')}"),
    conda:
        CONDA_ENV
    params:
        runs=get_first_runs,
    shell:
        "python -m depthwidth sweep-table --experiment {wildcards.experiment:q} --runs-json {params.runs:q} "
        "--out {output.table:q} --curves-out {output.curves:q} > {log:q} 2>&1"


rule sde_terminal:
    input:
        samples=get_sde_samples,  # with two looks: the sample jobs the second stage asked for too
        code=package_code("concat-tables"),
    output:
        PLAN.table_file(SDE_TERMINAL),
    log:
        contracts.log_path(NAME, f"tables/{SDE_TERMINAL}"),
    conda:
        CONDA_ENV
    shell:
        "python -m depthwidth concat-tables {input.samples:q} --out {output:q} > {log:q} 2>&1"


# With two looks: the terminal table of the planned sample jobs alone, which look 1 and its decide job read.
rule sde_terminal_first:
    input:
        samples=PLAN.sample_tables(),
        code=package_code("concat-tables"),
    output:
        second.first_table_path(NAME, SDE_TERMINAL),
    log:
        contracts.log_path(NAME, f"decide/tables/{SDE_TERMINAL}"),
    conda:
        CONDA_ENV
    shell:
        "python -m depthwidth concat-tables {input.samples:q} --out {output:q} > {log:q} 2>&1"


rule shaped_entropy_table:
    input:
        metrics=get_table_run_files(ENTROPY_TABLE, "metrics.json"),
        entropy=get_table_run_files(ENTROPY_TABLE, "entropy.csv"),
        curves=get_table_run_files(ENTROPY_TABLE, "curve.csv"),
        second=get_entropy_second_files,  # with two looks: the seeds the second stage asked for
        code=package_code("shaped-training-table"),
    output:
        PLAN.table_file(ENTROPY_TABLE),
    log:
        contracts.log_path(NAME, f"tables/{ENTROPY_TABLE}"),
    conda:
        CONDA_ENV
    params:
        specs=lambda wildcards: as_json(
            PLAN.entropy_specs(stage_asked(second.ENTROPY_FIGURE))
        ),
    shell:
        "python -m depthwidth shaped-training-table --specs-json {params.specs:q} --out {output:q} > {log:q} 2>&1"


# With two looks: the entropy table on the first stage's seeds alone, which look 1 and its decide job read.
rule shaped_entropy_table_first:
    input:
        metrics=get_table_run_files(ENTROPY_TABLE, "metrics.json"),
        entropy=get_table_run_files(ENTROPY_TABLE, "entropy.csv"),
        curves=get_table_run_files(ENTROPY_TABLE, "curve.csv"),
        code=package_code("shaped-training-table"),
    output:
        second.first_table_path(NAME, ENTROPY_TABLE),
    log:
        contracts.log_path(NAME, f"decide/tables/{ENTROPY_TABLE}"),
    conda:
        CONDA_ENV
    params:
        specs=as_json(PLAN.entropy_specs()),
    shell:
        "python -m depthwidth shaped-training-table --specs-json {params.specs:q} --out {output:q} > {log:q} 2>&1"
