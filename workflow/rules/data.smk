# Stage 1: a real English corpus, split by groups of near-copy documents, BPE-tokenized into uint16/uint32 shards.


rule prepare_data:
    input:
        code=package_code("prepare_data"),
        text=PLAN.corpus_files(),
    output:
        **dict(zip(("tokenizer", "train", "val", "meta"), PLAN.data_files())),
    log:
        contracts.log_path("data", Path(PLAN.data_dir).name),
    benchmark:
        contracts.benchmark_path("data", Path(PLAN.data_dir).name)
    conda:
        CONDA_ENV
    threads: 2
    params:
        data=as_json(config["data"]),
        min_tokens=PLAN.min_split_tokens(),  # a split too small for the runs is refused here
        folder=folder_of("meta"),
    shell:
        "python -m depthwidth prepare-data --data-json {params.data:q} --min-tokens {params.min_tokens} "
        "--out {params.folder} > {log} 2>&1"


rule data:
    input:
        PLAN.data_files(),
