# Stage 1: a real English corpus, split by groups of near-copy documents, BPE-tokenized into uint16/uint32 shards.
import re


wildcard_constraints:
    corpus=re.escape(config["data"]["name"]),


rule prepare_data:
    input:
        code=package_code("corpus", "fetch", "tokens"),
        text=PLAN.corpus_files(),
    output:
        tokenizer="results/data/{corpus}/tokenizer.json",
        train="results/data/{corpus}/train.bin",
        val="results/data/{corpus}/val.bin",
        meta="results/data/{corpus}/meta.json",
    log:
        "results/logs/data/{corpus}.log",
    benchmark:
        "results/benchmarks/data/{corpus}.tsv"
    conda:
        CONDA_ENV
    threads: 2
    params:
        data=as_json(config["data"]),
        min_tokens=PLAN.min_split_tokens(),  # a split too small for the runs is refused here
    shell:
        "python -m depthwidth prepare-data --data-json {params.data:q} --min-tokens {params.min_tokens} "
        "--out results/data/{wildcards.corpus} > {log} 2>&1"


rule data:
    input:
        f"{PLAN.data_dir}/meta.json",
