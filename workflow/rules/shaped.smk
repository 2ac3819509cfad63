# Stage 2b: the shaped Transformer at initialization. Each simulation job (the terminal law of the
# covariance SDE or of finite networks of one width, or the rank-collapse trajectory) is looked up in
# the plan by its id (a readable name and its complete spec's digest).


rule shaped_simulation:
    input:
        code=package_code("shaped-sim"),
    output:
        SIMULATION,
    log:
        contracts.log_path("simulations", "{simulation}"),
    benchmark:
        contracts.benchmark_path("simulations", "{simulation}")
    conda:
        CONDA_ENV
    threads: 1
    params:
        command=get_simulation("command"),
        spec=lambda wildcards: as_json(get_simulation("spec")(wildcards)),
    shell:
        "python -m depthwidth shaped-sim {params.command:q} --spec-json {params.spec:q} --threads {threads} "
        "--out {output:q} > {log:q} 2>&1"
