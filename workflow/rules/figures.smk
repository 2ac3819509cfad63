# Stage 4: one figure per paper figure or claim (PNG, PDF, and the plotted rows as CSV).
# Each figure is looked up in the plan: its paper, its title, its inputs by name, the code it runs.


wildcard_constraints:
    figure="|".join(PLAN.figures) or "no-figure",


rule figure:
    input:
        unpack(figure_inputs),
    output:
        png=report(
            "results/figures/{figure}.png",
            caption="../report/figure.rst",
            category="2. Figures",
            subcategory=lambda wildcards: PLAN.figures[wildcards.figure].paper,
        ),
        pdf="results/figures/{figure}.pdf",
        csv="results/figures/{figure}.csv",
    log:
        "results/logs/figures/{figure}.log",
    conda:
        CONDA_ENV
    params:
        inputs=lambda wildcards, input: " ".join(
            f"--input {name}={input[name]}"
            for name in PLAN.figures[wildcards.figure].inputs
        ),
        title=lambda wildcards: PLAN.figures[wildcards.figure].title,
    shell:
        "python -m depthwidth figure {wildcards.figure} {params.inputs} --title {params.title:q} "
        "--out {output.png} > {log} 2>&1"


# One target per paper figure: `snakemake --cores 2 kaplan_fig6`.
for figure_id in PLAN.figures:

    rule:
        name:
            figure_id
        input:
            f"results/figures/{figure_id}.png",
