# Stage 2: training runs (the sweeps and the shaped-attention training), one job per distinct complete
# spec, looked up in the plan by its run id (a readable name and the spec's digest).


rule train_run:
    input:
        data=get_run_data,
        code=package_code("train"),
    output:
        **RUN_FILES,
    log:
        contracts.log_path("runs", "{run}"),
    benchmark:
        contracts.benchmark_path("runs", "{run}")
    conda:
        CONDA_ENV
    threads: get_run_resource("threads")
    resources:
        mem_mb=get_run_resource("mem_mb"),
        runtime=get_run_resource("runtime"),
        gpu=get_run_scheduler("gpu"),
        gres=get_run_scheduler("gres"),
    params:
        spec=get_run_spec,
        checkpoint=get_checkpoint_dir,
        folder=folder_of("metrics"),
    shell:
        "python -m depthwidth train --spec-json {params.spec:q} --out {params.folder:q} "
        "--checkpoint-dir {params.checkpoint:q} --threads {threads} > {log:q} 2>&1"
