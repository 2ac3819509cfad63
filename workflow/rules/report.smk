# Stage 6: artifact checks over everything this config promises (and, with --report, the HTML report).


# No declared output: `snakemake check` runs the checks every time it is asked, so a file corrupted
# or deleted after the last check is always found (and no code input is needed to rerun it). Its
# inputs make everything the config promises exist first. The report lands in results/check.txt when
# there are no problems; a failing check removes it, so a stale passing report never survives.
rule check:
    input:
        PLAN.targets(),
    log:
        "results/logs/check.log",
    conda:
        CONDA_ENV
    params:
        config=as_json(config),
    shell:
        "python -m depthwidth check results --config-json {params.config:q} --out results/check.txt > {log} 2>&1"
