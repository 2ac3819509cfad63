# Stage 2: training runs (the sweeps and the shaped-attention training), one job per distinct complete
# spec, looked up in the plan by its run id (a readable name and the spec's digest).


rule train_run:
    input:
        data=[path for path in PLAN.data_files() if not path.endswith("tokenizer.json")],
        code=package_code("train"),
    output:
        **{
            Path(name).stem: f"{contracts.run_dir('{run}')}/{name}"
            for name in contracts.RUN_FILES
        },
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


# sweep.lr_grid: a shape's learning-rate scan, one round a job. A round reads every scout so far and asks
# for more or chooses the rate every seed trains at (depthwidth.rates); the tables read each shape's runs at
# its chosen rate (common.smk, `table_run_ids`).
checkpoint rate_scan:
    input:
        unpack(get_scan_inputs),
        code=package_code("rate-scan"),
    output:
        contracts.rate_round_path("{scan}", "{round}"),
    log:
        contracts.log_path("rates", "{scan}-round{round}"),
    conda:
        CONDA_ENV
    params:
        scan=get_scan_spec,
        scouts=get_scan_arguments,
    shell:
        "python -m depthwidth rate-scan --scan-json {params.scan:q} {params.scouts} --out {output:q} > {log:q} 2>&1"
