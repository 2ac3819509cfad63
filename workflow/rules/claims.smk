# Stage 5: the claims table (paper claim, our number, verdict by the rule in its row) and the
# report captions, which name each figure's paper and title and the verdicts it shows; and, asked
# for by name, what the run finds (docs/findings.md).


rule claims:
    input:
        figures=[f"results/figures/{figure}.csv" for figure in PLAN.figures],
        tables=[
            f"results/tables/{table}.csv"
            for table in PLAN.tables
            if table.startswith("sweep_")
        ],
        code=package_code("claims", "fits", "plots/__init__"),
    output:
        csv=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="1. Claims",
        ),
        md="results/claims.md",
        captions=[caption_path(figure) for figure in PLAN.figures],
    log:
        "results/logs/claims.log",
    conda:
        CONDA_ENV
    params:
        figures=lambda wildcards, input: " ".join(
            f"--figure-csv {path}" for path in input.figures
        ),
        tables=lambda wildcards, input: " ".join(
            f"--sweep-table {path}" for path in input.tables
        ),
        scale=PLAN.scale_note(),
    shell:
        "python -m depthwidth claims {params.figures} {params.tables} --scale-note {params.scale:q} "
        "--out {output.csv} --captions-dir results/report/captions > {log} 2>&1"


# No part of `all`: docs/ holds what the default run finds, committed by hand after a full default run
# (`snakemake --cores 2 && snakemake findings`). `check` notes when it no longer matches results/claims.csv.
rule findings:
    input:
        claims="results/claims.csv",
        figures=[f"results/figures/{figure}.png" for figure in PLAN.findings_figures()],
        code=package_code("findings", "claims", "plots/__init__"),
    output:
        md=FINDINGS,
        figures=[findings_figure_path(figure) for figure in PLAN.findings_figures()],
    log:
        "results/logs/findings.log",
    conda:
        CONDA_ENV
    params:
        config=config["name"],
        figures=lambda wildcards, input: " ".join(
            f"--figure {path}" for path in input.figures
        ),
    # the figures land in the command's default --figures-dir, FINDINGS_FIGURES_DIR, as output.figures say
    shell:
        "python -m depthwidth findings {input.claims} --config-name {params.config:q} {params.figures} "
        "--out {output.md} > {log} 2>&1"
