# Stage 6: artifact checks over everything this config promises (and, with --report, the HTML report,
# `snakemake --report results/<config>/report.html`).


# Its inputs make everything the config promises exist first, so it reruns when any of them changes; the
# report lands in its declared file only when there are no problems (a failing check leaves none).
# `snakemake --forcerun check check` checks again what nothing has changed.
rule check:
    input:
        PLAN.targets(),
        rounds=lambda wildcards: round_files(PLAN.scans),  # check recomputes each round
        code=package_code("check"),
    output:
        contracts.check_path(NAME),
    log:
        contracts.log_path(NAME, "check"),
    conda:
        CONDA_ENV
    params:
        config=as_json(config),
        # the results folder (contracts.RESULTS): the one that holds this config's folder
        results=lambda wildcards, output: os.path.dirname(os.path.dirname(output[0])),
    shell:
        "python -m depthwidth check {params.results:q} --config-json {params.config:q} --out {output:q} > {log:q} 2>&1"
