# Stage 5: the claims table (paper claim, our number, verdict by the rule in its row) and the
# report captions, which name each figure's paper and title and the verdicts it shows.


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
