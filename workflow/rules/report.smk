# Stage 6: artifact checks over everything this config promises (and, with --report, the HTML report).


rule check:
    input:
        rules.all.input,
        code=check_code,
    output:
        "results/check.txt",
    log:
        "results/logs/check.log",
    conda:
        CONDA_ENV
    params:
        config=as_json(config),
    shell:
        "python -m depthwidth check results --config-json {params.config:q} --out {output} > {log} 2>&1"
