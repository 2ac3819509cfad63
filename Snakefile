# The depth-width replication: corpus -> training runs and SDE simulations -> tables -> figures -> claims
# -> report. Read the rule files in order; each is one stage, and its package folder has its name
# (workflow/depthwidth/<stage>/). The plan (workflow/depthwidth/plan/jobs.py) says what this config
# produces; the rules look every job up in it. Where every file lies: workflow/depthwidth/contracts.py.
from snakemake.utils import min_version

min_version("9.19")


# The default config applies when no --configfile is given (`--config key=value` alone overrides it);
# a --configfile replaces it, never merges.
if not workflow.config_settings.configfiles:

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/workarounds.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/rates.smk"
include: "workflow/rules/glue_jobs.smk"
include: "workflow/rules/glue.smk"
include: "workflow/rules/shaped.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/claims.smk"


# Cheap jobs run on the submitting node, never as cluster jobs (and GLUE's 1 MB download: compute nodes may have no network).
localrules:
    all,
    data,
    rate_scan,
    sweep_table,
    sweep_table_first,
    sde_terminal,
    shaped_entropy_table,
    glue_fetch,
    glue_table,
    figure,
    decide,
    second_stage,
    claims,
    findings,
    check,


# Said once, before the first job runs: GPUs asked of a machine without one; and the config recorded for
# `python -m depthwidth clean` (results/<name>/config.json), or why it could not be.
onstart:
    for note in (gpu_note(PLAN, workflow.local_exec), record_config(PLAN)):
        if note:
            print(f"depthwidth: {note}", file=sys.stderr)


# Once the last job is done, ok or not, snakemake exits at once (workarounds.smk, stop_scheduler_timers).
onsuccess:
    stop_scheduler_timers()


# A job that failed on a full disk may have left its log empty: its error line had no room there either.
onerror:
    if note := full_disk_note(contracts.RESULTS):
        print(f"depthwidth: {note}", file=sys.stderr)
    stop_scheduler_timers()


# Everything: the data, every run's outputs (a deleted one is rebuilt), every figure, the claims.
rule all:
    default_target: True
    input:
        PLAN.targets(),


include: "workflow/rules/report.smk"
