# Stage 5: the claims table (paper claim, our number, verdict by the rule in its row) and the
# report captions, which name each figure's paper and title and the verdicts it shows; and, asked
# for by name, what the run finds (docs/findings.md).


# What would decide each inconclusive row of a figure of sweep tables: the tables redrawn at more seeds per
# shape from their own noise, the figure's code and the row's rule run on each redraw (config `decide`).
# With two looks (config decide.looks) it reads the first stage's tables, judges the rows at look 1's level, prices
# more seeds at look 2's and writes the figure's rows at look 1 beside its JSON.
rule decide:
    input:
        unpack(get_decide_inputs),
    output:
        json=PLAN.decide_file("{figure}"),
        look=second.look_path(NAME, "{figure}"),
        look_unstalled=contracts.unstalled_path(second.look_path(NAME, "{figure}")),
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
        levels=f"--level {PLAN.design.levels[0]} --ladder-level {PLAN.design.levels[-1]}",
        tilt=get_figure_tilt,
        price=as_json(PLAN.design.block["price"]),
    shell:
        "python -m depthwidth decide {params.tables} --figure {wildcards.figure:q} --sims {params.sims} "
        "--most {params.most} --seed {params.seed} {params.levels} {params.tilt} --price-json {params.price:q} "
        "--json-out {output.json:q} --look-out {output.look:q} > {log:q} 2>&1"


# With two looks: the fresh seeds the rows look 1 left open ask for, within the design's budget (claims/second.py);
# the sweep tables then read them (rule sweep_table).
checkpoint second_stage:
    input:
        decisions=PLAN.decide_files(),
        code=package_code("second-stage"),
    output:
        second.second_stage_path(NAME),
    log:
        contracts.log_path(NAME, "decide/second-stage"),
    conda:
        CONDA_ENV
    params:
        decisions=lambda wildcards, input: " ".join(
            f"--decision {shlex.quote(path)}" for path in input.decisions
        ),
        budget=PLAN.design.budget,
        most=PLAN.design.most,
        design=PLAN.design.digest,
    shell:
        "python -m depthwidth second-stage {params.decisions} --budget {params.budget} --most {params.most} "
        "--design {params.design} --out {output:q} > {log:q} 2>&1"


if PLAN.confounds:
    SENSITIVITY_INPUTS = (
        PLAN.sensitivity_inputs()
    )  # the rows' tables and the confounds', by name

    # What the depth rows survive: each pair of the sensitivity block in the rows' own tables and in each confound's.
    rule sensitivity:
        input:
            references=list(SENSITIVITY_INPUTS["references"].values()),
            confounds=list(SENSITIVITY_INPUTS["confounds"].values()),
            code=package_code("sensitivity"),
        output:
            PLAN.sensitivity_file(),
        log:
            contracts.log_path(NAME, "sensitivity"),
        conda:
            CONDA_ENV
        params:
            pairs=as_json(PLAN.config["sensitivity"]["pairs"]),
            tables=" ".join(
                f"--{kind} {shlex.quote(f'{name}={path}')}"
                for kind, flag in (
                    ("reference", "references"),
                    ("confound", "confounds"),
                )
                for name, path in SENSITIVITY_INPUTS[flag].items()
            ),
        shell:
            "python -m depthwidth sensitivity --pairs-json {params.pairs:q} {params.tables} --out {output:q} "
            "> {log:q} 2>&1"


rule claims:
    input:
        figures=PLAN.figure_csvs(),
        decisions=PLAN.decide_files(),
        looks=PLAN.look_files(),  # with two looks: each figure's rows at look 1 and their other reading
        second=PLAN.second_stage_file(),
        unstalled=[contracts.unstalled_path(csv) for csv in PLAN.figure_csvs()],  # read beside each figure's CSV
        tables=PLAN.sweep_tables(),
        sensitivity=PLAN.sensitivity_file(),  # what the depth rows survive (a sensitivity block)
        code=package_code("claims"),
    output:
        csv=report(
            PLAN.claims_files()[0],
            caption="../report/claims.rst",
            category="1. Claims",
        ),
        md=PLAN.claims_files()[1],
        decisions=PLAN.decisions_file(),
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
        looks=lambda wildcards, input: " ".join(
            f"--look {shlex.quote(path)}"
            for path in input.looks
            if not path.endswith(contracts.UNSTALLED)
        )
        + "".join(f" --second-stage {shlex.quote(path)}" for path in input.second)
        + "".join(f" --sensitivity {shlex.quote(path)}" for path in input.sensitivity),
        design=as_json(PLAN.design.block),
        scale=PLAN.scale_note(),
        # no figures, no captions (and no flag)
        captions=lambda wildcards, output: (
            f"--captions-dir {shlex.quote(os.path.dirname(output.captions[0]))}"
            if output.captions
            else ""
        ),
    shell:
        "python -m depthwidth claims {params.figures} {params.tables} {params.decisions} {params.looks} "
        "--design-json {params.design:q} --scale-note {params.scale:q} --out {output.csv:q} --md {output.md:q} "
        "--decisions-out {output.decisions:q} {params.captions} > {log:q} 2>&1"


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
