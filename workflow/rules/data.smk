# Stage 1: a real English corpus, split by groups of near-copy documents, BPE-tokenized into uint16/uint32 shards.


rule prepare_data:
    input:
        code=package_code("prepare-data"),
        text=PLAN.corpus_files(),
    output:
        **PLAN.data_outputs(),
    log:
        contracts.log_path("data", Path(PLAN.data_dir).name),
    benchmark:
        contracts.benchmark_path("data", Path(PLAN.data_dir).name)
    conda:
        CONDA_ENV
    threads: 2
    params:
        # the data block alone: the shards are shared by every config on it (whatever their runs' n_ctx,
        # which the plan checks against the built shards: common.smk)
        data=as_json(config["data"]),
        folder=folder_of("meta"),
    shell:
        "python -m depthwidth prepare-data --data-json {params.data:q} --out {params.folder:q} > {log:q} 2>&1"


rule data:
    input:
        PLAN.data_files(),
