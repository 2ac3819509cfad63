# Stage 4: one figure per paper figure or claim (PNG, PDF, and the plotted rows as CSV).


rule figure:
    input:
        tables=figure_inputs,
        code=figure_code,
    output:
        png=report(
            "results/figures/{figure}.png",
            caption="../report/figure.rst",
            category="2. Figures",
            subcategory=figure_family,
        ),
        pdf="results/figures/{figure}.pdf",
        csv="results/figures/{figure}.csv",
    log:
        "results/logs/figures/{figure}.log",
    conda:
        CONDA_ENV
    params:
        inputs=lambda wildcards, input: " ".join(
            f"--input {path}" for path in input.tables
        ),
    shell:
        "python -m depthwidth figure {wildcards.figure} {params.inputs} --out {output.png} > {log} 2>&1"


# One target per paper figure: `snakemake --cores 2 kaplan_fig6`.
rule kaplan_power_law:
    input:
        figure_targets("kaplan_power_law"),


rule kaplan_fig5_aspect:
    input:
        figure_targets("kaplan_fig5_aspect"),


rule kaplan_fig5_ffratio:
    input:
        figure_targets("kaplan_fig5_ffratio"),


rule kaplan_fig5_headdim:
    input:
        figure_targets("kaplan_fig5_headdim"),


rule kaplan_fig6:
    input:
        figure_targets("kaplan_fig6"),


rule levine_regimes:
    input:
        figure_targets("levine_regimes"),


rule levine_crossover:
    input:
        figure_targets("levine_crossover"),


rule levine_optimal_depth:
    input:
        figure_targets("levine_optimal_depth"),


rule shaped_sde_density:
    input:
        figure_targets("shaped_sde_density"),


rule shaped_rank_collapse:
    input:
        figure_targets("shaped_rank_collapse"),


rule shaped_sde_convergence:
    input:
        figure_targets("shaped_sde_convergence"),


rule shaped_entropy:
    input:
        figure_targets("shaped_entropy"),


rule sweep_figures:
    input:
        figure_targets(*SWEEP_FIGURES),


rule shaped_figures:
    input:
        figure_targets(*SHAPED_FIGURES),
