# Stage 2c (opt-in: a config's `glue` block; it downloads): GLUE fine-tuning of shaped against standard
# attention. Each task is fetched and parsed once per source, each attention kind pretrained once (the sweep's
# engine and recipe on this config's corpus, weights kept), and every (kind, task, seed) fine-tuned from its
# kind's weights; the table of dev scores feeds the figure noci_glue and its claim. Jobs are looked up in the
# plan (PLAN.glue: workflow/depthwidth/plan/glue.py) by their id; folders: depthwidth/glue/contracts.py.
# Input functions: glue_jobs.smk.
from depthwidth.glue.contracts import GLUE_TABLE


wildcard_constraints:
    glue_data=one_of(GLUE_JOBS["fetch"], "no-glue-data"),
    pretrained=one_of(GLUE_JOBS["pretrained"], "no-pretrained"),
    finetuned=one_of(GLUE_JOBS["finetuned"], "no-finetuned"),


rule glue_fetch:
    input:
        code=package_code("glue-fetch"),
    output:
        **glue_files(glue_contracts.task_dir("{glue_data}"), glue_contracts.TASK_FILES),
    log:
        contracts.log_path("glue_data", "{glue_data}"),
    conda:
        CONDA_ENV
    params:
        spec=get_glue_spec("fetch"),
        folder=folder_of("meta"),
    shell:
        "python -m depthwidth glue-fetch --spec-json {params.spec:q} --out {params.folder:q} --no-progress "
        "> {log:q} 2>&1"


rule glue_pretrain:
    input:
        data=PLAN.token_files(),
        code=package_code("glue-pretrain"),
    output:
        **glue_files(
            glue_contracts.pretrained_dir("{pretrained}"),
            glue_contracts.PRETRAIN_FILES,
        ),
    log:
        contracts.log_path("pretrained", "{pretrained}"),
    benchmark:
        contracts.benchmark_path("pretrained", "{pretrained}")
    conda:
        CONDA_ENV
    threads: get_glue_resource("threads")
    resources:
        mem_mb=get_glue_resource("mem_mb"),
        runtime=get_glue_resource("runtime"),
        gpu=get_glue_resource("gpu"),
    params:
        spec=get_glue_spec("pretrained"),
        folder=folder_of("metrics"),
    shell:
        "python -m depthwidth glue-pretrain --spec-json {params.spec:q} --out {params.folder:q} "
        "--threads {threads} > {log:q} 2>&1"


rule glue_finetune:
    input:
        unpack(get_finetune_inputs),
        code=package_code("glue-finetune"),
    output:
        **glue_files(
            glue_contracts.finetuned_dir("{finetuned}"), glue_contracts.FINETUNE_FILES
        ),
    log:
        contracts.log_path("finetuned", "{finetuned}"),
    benchmark:
        contracts.benchmark_path("finetuned", "{finetuned}")
    conda:
        CONDA_ENV
    threads: get_glue_resource("threads")
    resources:
        mem_mb=get_glue_resource("mem_mb"),
        runtime=get_glue_resource("runtime"),
        gpu=get_glue_resource("gpu"),
    params:
        spec=get_glue_spec("finetuned"),
        folder=folder_of("metrics"),
    shell:
        "python -m depthwidth glue-finetune --spec-json {params.spec:q} --out {params.folder:q} "
        "--threads {threads} > {log:q} 2>&1"


rule glue_table:
    input:
        metrics=[
            f"{job.folder}/metrics.json" for job in GLUE_JOBS["finetuned"].values()
        ],
        code=package_code("glue-table"),
    output:
        PLAN.table_file(GLUE_TABLE),
    log:
        contracts.log_path(NAME, f"tables/{GLUE_TABLE}"),
    conda:
        CONDA_ENV
    params:
        jobs=as_json(PLAN.glue.table_jobs() if PLAN.glue else {}),
    shell:
        "python -m depthwidth glue-table --jobs-json {params.jobs:q} --out {output:q} > {log:q} 2>&1"
