"""The GLUE stage's jobs (Noci et al. 2023's fine-tuning claim), from a config's `glue` block: one fetch per
task, one pretraining per attention kind (standard and shaped, one shape, the sweep's recipe and engine), one
fine-tuning per (attention, task, seed) that reads its kind's pretrained weights, and the table of their scores.

Torch-free. Every spec is complete (the pretraining's is a train spec, checked against the schema), and every
job's folder is named by its spec's digest (`glue.contracts`), so each job is shared by every config that
plans the same spec, and a pretrained model is trained once for every task and seed.
"""

from __future__ import annotations

from dataclasses import dataclass

from depthwidth.contracts import TEMPERED_KINDS, digest
from depthwidth.glue import contracts as glue_contracts
from depthwidth.plan.sweep import PlanError
from depthwidth.spec import complete

ATTENTIONS = ("standard", "shaped")  # the claim's two sides
RESOURCE_KEYS = ("threads", "mem_mb", "runtime", "gpu")


@dataclass(frozen=True)
class GlueJob:
    id: str
    spec: dict  # complete: what its `python -m depthwidth glue-*` command reads
    folder: str
    files: tuple[str, ...]  # the file names it writes in its folder
    task: str | None = None  # fetch and fine-tuning: its task
    pretrained: str | None = None  # fine-tuning: the id of the pretraining it reads

    @property
    def outputs(self) -> list[str]:
        return [f"{self.folder}/{name}" for name in self.files]


@dataclass(frozen=True)
class GluePlan:
    block: dict  # the validated glue block
    tasks: dict[str, GlueJob]  # task -> its fetch
    pretrained: dict[str, GlueJob]  # pretrained id -> its pretraining
    finetuned: dict[str, GlueJob]  # fine-tuning id -> its job

    @property
    def resources(self) -> dict:
        return {key: self.block[key] for key in RESOURCE_KEYS}

    def fetches(self) -> dict[str, GlueJob]:
        """The fetch jobs by id (`<task>-<digest>`)."""
        return {job.id: job for job in self.tasks.values()}

    def table_jobs(self) -> dict[str, str]:
        """What the table reads: fine-tuning id -> pretrained id."""
        return {fid: job.pretrained for fid, job in self.finetuned.items()}

    def targets(self) -> list[str]:
        jobs = [*self.tasks.values(), *self.pretrained.values(), *self.finetuned.values()]
        return [path for job in jobs for path in job.outputs]

    def scale_note(self) -> str:
        model, pretrain = self.block["model"], self.block["pretrain"]["recipe"]
        return (
            f"GLUE {'/'.join(self.block['tasks'])}: standard and shaped L{model['n_layer']} d{model['d_model']} "
            f"pretrained {pretrain['token_budget']:,} tokens, fine-tuned {self.block['finetune']['epochs']} epochs, "
            f"seeds {self.block['finetune']['seeds']}"
        )


def pretrain_spec(block: dict, attention: str, data_dir: str, vocab_size: int) -> dict:
    """The complete train spec of one pretraining."""
    recipe = dict(block["pretrain"]["recipe"])
    n_ctx = recipe.pop("n_ctx")
    model = {**block["model"], "vocab_size": vocab_size, "n_ctx": n_ctx, "attention": attention}
    if attention in TEMPERED_KINDS:
        model["shaped"] = block["shaped"]
    spec = {"data": data_dir, "seed": block["pretrain"]["seed"], "model": model, "recipe": recipe}
    try:
        return complete("train_spec", spec)
    except ValueError as err:
        raise PlanError("glue.pretrain", str(err)) from None


def build(config: dict, data_dir: str) -> GluePlan | None:
    """The GLUE jobs of a validated config; None without a glue block."""
    block = config.get("glue")
    if not block:
        return None
    tasks = {}
    for task in block["tasks"]:
        source = block["sources"][task]
        spec = {"task": task, **source, "cache_dir": block["cache_dir"]}
        tid = glue_contracts.task_id(task, source)
        tasks[task] = GlueJob(tid, spec, glue_contracts.task_dir(tid), glue_contracts.TASK_FILES, task=task)
    pretrained, finetuned = {}, {}
    recipe = {key: value for key, value in block["finetune"].items() if key != "seeds"}
    for attention in ATTENTIONS:
        spec = pretrain_spec(block, attention, data_dir, config["data"]["vocab_size"])
        model = spec["model"]
        pid = f"{attention}-L{model['n_layer']}-d{model['d_model']}-{digest(spec)}"
        pretrained[pid] = GlueJob(pid, spec, glue_contracts.pretrained_dir(pid), glue_contracts.PRETRAIN_FILES)
        for task, fetch in tasks.items():
            for seed in block["finetune"]["seeds"]:
                spec = {
                    "task": task,
                    "attention": attention,
                    "seed": seed,
                    "pretrained": pretrained[pid].folder,
                    "tokenizer": f"{data_dir}/tokenizer.json",
                    "task_data": fetch.folder,
                    "recipe": recipe,
                }
                fid = f"{attention}-{task}-s{seed}-{digest(spec)}"
                folder = glue_contracts.finetuned_dir(fid)
                finetuned[fid] = GlueJob(fid, spec, folder, glue_contracts.FINETUNE_FILES, task=task, pretrained=pid)
    return GluePlan(block, tasks, pretrained, finetuned)
