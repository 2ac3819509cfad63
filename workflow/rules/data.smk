# Stage 1: a real English corpus, split by groups of near-copy documents, BPE-tokenized into uint16/uint32 shards.
# One folder per data block a config trains on: its own, and one per vocabulary of its sensitivity block (the same
# text tokenized again).


rule prepare_data:
    input:
        code=package_code("prepare-data"),
        text=PLAN.corpus_files(),
    output:
        **DATA_FILES,
    log:
        contracts.log_path("data", "{corpus}"),
    benchmark:
        contracts.benchmark_path("data", "{corpus}")
    conda:
        CONDA_ENV
    threads: 2
    params:
        # the data block alone: the shards are shared by every config on it (whatever their runs' n_ctx,
        # which the plan checks against the built shards: common.smk)
        data=get_data_block,
        folder=folder_of("meta"),
    shell:
        "python -m depthwidth prepare-data --data-json {params.data:q} --out {params.folder:q} > {log:q} 2>&1"


rule data:
    input:
        PLAN.data_files(),
