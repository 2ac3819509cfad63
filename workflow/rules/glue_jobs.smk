# The GLUE stage's input functions and params (rules: glue.smk): each job looked up in the plan (PLAN.glue) by
# its wildcard, as common.smk looks up the others.
from depthwidth.glue import contracts as glue_contracts

GLUE_JOBS = {
    "fetch": PLAN.glue.fetches() if PLAN.glue else {},
    "pretrained": PLAN.glue.pretrained if PLAN.glue else {},
    "finetuned": PLAN.glue.finetuned if PLAN.glue else {},
}


def glue_job(kind, wildcards):
    return GLUE_JOBS[kind][getattr(wildcards, "glue_data" if kind == "fetch" else kind)]


def get_glue_spec(kind):
    return lambda wildcards: as_json(glue_job(kind, wildcards).spec)


def get_glue_resource(key):
    return lambda wildcards: PLAN.glue.resources[key]


def get_finetune_inputs(wildcards):
    job = glue_job("finetuned", wildcards)
    return {
        "model": GLUE_JOBS["pretrained"][job.pretrained].outputs,
        "task": PLAN.glue.tasks[job.task].outputs,
        "tokenizer": job.spec["tokenizer"],
    }


def glue_files(folder, names):
    return {Path(name).stem: f"{folder}/{name}" for name in names}
