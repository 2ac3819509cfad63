# Stage 5: the claims table (paper claim, our number, verdict by the rule in its row) and the
# report captions, which name each figure's paper and title and the verdicts it shows; and, asked
# for by name, what the run finds (docs/findings.md).


# What would decide each inconclusive row of a figure of sweep tables: the tables redrawn at more seeds per
# shape from their own noise, the figure's code and the row's rule run on each redraw (config `decide`).
rule decide:
    input:
        unpack(get_decide_inputs),
    output:
        PLAN.decide_file("{figure}"),
    log:
        contracts.log_path(NAME, "decide/{figure}"),
    conda:
        CONDA_ENV
    params:
        tables=lambda wildcards, input: " ".join(
            f"--sweep-table {shlex.quote(path)}" for path in input.tables
        ),
        sims=PLAN.config["decide"]["sims"],
        most=PLAN.config["decide"]["most_seeds"],
        seed=PLAN.config["decide"]["seed"],
    shell:
        "python -m depthwidth decide {params.tables} --figure {wildcards.figure:q} --sims {params.sims} "
        "--most {params.most} --seed {params.seed} --json-out {output:q} > {log:q} 2>&1"


rule claims:
    input:
        figures=PLAN.figure_csvs(),
        decisions=PLAN.decide_files(),
        unstalled=[contracts.unstalled_path(csv) for csv in PLAN.figure_csvs()],  # read beside each figure's CSV
        tables=PLAN.sweep_tables(),
        code=package_code("claims"),
    output:
        csv=report(
            PLAN.claims_files()[0],
            caption="../report/claims.rst",
            category="1. Claims",
        ),
        md=PLAN.claims_files()[1],
        captions=PLAN.captions(),
    log:
        contracts.log_path(NAME, "claims"),
    conda:
        CONDA_ENV
    params:
        figures=lambda wildcards, input: " ".join(
            f"--figure-csv {shlex.quote(path)}" for path in input.figures
        ),
        tables=lambda wildcards, input: " ".join(
            f"--sweep-table {shlex.quote(path)}" for path in input.tables
        ),
        decisions=lambda wildcards, input: " ".join(
            f"--decision {shlex.quote(path)}" for path in input.decisions
        ),
        scale=PLAN.scale_note(),
        # no figures, no captions (and no flag)
        captions=lambda wildcards, output: (
            f"--captions-dir {shlex.quote(os.path.dirname(output.captions[0]))}"
            if output.captions
            else ""
        ),
    shell:
        "python -m depthwidth claims {params.figures} {params.tables} {params.decisions} --scale-note {params.scale:q} "
        "--out {output.csv:q} --md {output.md:q} {params.captions} > {log:q} 2>&1"


# No part of `all`: docs/ holds what a run finds (docs/findings.md for the default config,
# docs/findings-<config>.md for another: contracts.findings_path), committed by hand after a
# full run (`snakemake --cores 2 && snakemake findings`). `check` notes when it no longer matches the claims.
rule findings:
    input:
        claims=PLAN.claims_files()[0],
        figures=[
            contracts.figure_path(NAME, figure) for figure in PLAN.findings_figures()
        ],
        code=package_code("findings"),
    output:
        md=contracts.findings_path(NAME),
        figures=[
            contracts.findings_figure_path(NAME, figure)
            for figure in PLAN.findings_figures()
        ],
    log:
        contracts.log_path(NAME, "findings"),
    conda:
        CONDA_ENV
    params:
        config=NAME,
        figures=lambda wildcards, input: " ".join(
            f"--figure {shlex.quote(path)}" for path in input.figures
        ),
        # beside the findings, named as they are (contracts.findings_figures_dir)
        figures_dir=lambda wildcards, output: os.path.splitext(output.md)[0],
    shell:
        "python -m depthwidth findings {input.claims:q} --config-name {params.config:q} {params.figures} "
        "--out {output.md:q} --figures-dir {params.figures_dir:q} > {log:q} 2>&1"
