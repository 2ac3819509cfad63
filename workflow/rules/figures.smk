# Stage 4: one figure per paper figure or claim (PNG, PDF, and the plotted rows as CSV).
# Each figure is looked up in the plan: its paper, its title, its inputs by name, the code it runs.


rule figure:
    input:
        unpack(get_figure_inputs),
    output:
        png=report(
            FIGURE_FILES["png"],
            caption="../report/figure.rst",
            category="2. Figures",
            subcategory=get_figure("paper"),
        ),
        pdf=FIGURE_FILES["pdf"],
        csv=FIGURE_FILES["csv"],
        unstalled=FIGURE_FILES["unstalled.csv"],
    log:
        contracts.log_path(NAME, "figures/{figure}"),
    conda:
        CONDA_ENV
    params:
        inputs=get_figure_arguments,
        title=get_figure("title"),
        caption=get_figure_caption,  # for the report: figure.rst includes it
        level=get_figure_level,  # its intervals' level: its rows' last look's (plan/second.py)
        tilt=get_figure_tilt,  # the warm-up tilts its rows carry (config `tilt`; sweep figures only)
    shell:
        "python -m depthwidth figure {wildcards.figure:q} {params.inputs} --title {params.title:q} --level {params.level} "
        "{params.tilt} --out {output.png:q} --pdf {output.pdf:q} --csv {output.csv:q} --unstalled {output.unstalled:q} > {log:q} 2>&1"


# One target per paper figure: `snakemake --cores 2 kaplan_fig6`.
for figure_id in PLAN.figures:

    rule:
        name:
            figure_id
        input:
            contracts.figure_path(NAME, figure_id, ".png"),
