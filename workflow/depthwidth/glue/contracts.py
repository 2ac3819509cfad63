"""The GLUE stage's contracts, written once: its shared folders, file names, table id and columns, the
tasks' published sources. Torch-free and stdlib-only (the plan, the rules, the jobs and `check` import it).

It lives apart from `depthwidth.contracts`, which the training imports (its digest keys every training run's
checkpoint and its rule's inputs: `contracts.code_files`), so that editing the GLUE stage retrains nothing.

Files, relative to the working directory:
  results/glue_data/<task>-<digest>/{train.jsonl,dev.jsonl,meta.json}   one task's parsed rows, per source
  results/pretrained/<attention>-<digest>/{model.pt,metrics.json,curve.csv}   one pretraining, per complete
                                                                            train spec (its checkpoint: .ckpt)
  results/finetuned/<attention>-<task>-s<seed>-<digest>/metrics.json     one fine-tuning, per complete spec
  results/<config>/tables/glue.csv                                        the scores of one config
"""

from __future__ import annotations

from depthwidth.contracts import RESULTS, digest

GLUE_TABLE = "glue"  # the table id (results/<config>/tables/glue.csv)
# the folders of RESULTS the GLUE stage shares between configs (no config may take their names)
GLUE_FOLDERS = ("glue_data", "pretrained", "finetuned")
TASK_FILES = ("train.jsonl", "dev.jsonl", "meta.json")  # what glue-fetch writes, meta.json last
PRETRAIN_FILES = (
    "model.pt",
    "curve.csv",
    "entropy.csv",
    "metrics.json",
)  # what glue-pretrain writes, metrics.json last
FINETUNE_FILES = ("metrics.json",)
SPLITS = ("train", "dev")  # GLUE's test labels are not public: scores are on dev

# The published archives: sizes and sha256 as tensorflow/datasets' url_checksums/glue.txt records them (and
# huggingface/datasets' dataset_infos.json for CoLA); config/README.md, "glue", says where. Not fetched here.
SOURCES = {
    "cola": {
        "url": "https://dl.fbaipublicfiles.com/glue/data/CoLA.zip",
        "checksum": "sha256:f212fcd832b8f7b435fb991f101abf89f96b933ab400603bf198960dfc32cbff",
    },
    "rte": {
        "url": "https://dl.fbaipublicfiles.com/glue/data/RTE.zip",
        "checksum": "sha256:6bf86de103ecd335f3441bd43574d23fef87ecc695977a63b82d5efb206556ee",
    },
}
DOWNLOAD_BYTES = {"cola": 376971, "rte": 697150}  # 1.07 MB together
PUBLISHED_ROWS = {"cola": {"train": 8551, "dev": 1043}, "rte": {"train": 2490, "dev": 277}}
# each task's headline score and its chance level (a constant classifier: MCC 0; RTE's two classes: 50%)
PRIMARY = {"cola": "mcc", "rte": "accuracy"}
CHANCE = {"mcc": 0.0, "f1": float("nan"), "accuracy": 0.5}
REPORTED = {"cola": ("mcc", "f1"), "rte": ("accuracy",)}  # the scores the figure shows per task

TABLE_COLUMNS = (
    "task",
    "attention",
    "seed",
    "finetune_id",
    "pretrained_id",
    "pretrain_val_loss",
    "n_train",
    "n_dev",
    "tp",
    "fp",
    "tn",
    "fn",
    "mcc",
    "f1",
    "accuracy",
)


def task_id(task: str, source: dict) -> str:
    """One task's parsed rows are named by the task and the digest of where they come from (url and checksum)."""
    return f"{task}-{digest({'task': task, **source})}"


def task_dir(task_id: str) -> str:
    return f"{RESULTS}/glue_data/{task_id}"


def pretrained_dir(pretrain_id: str) -> str:
    return f"{RESULTS}/pretrained/{pretrain_id}"


def finetuned_dir(finetune_id: str) -> str:
    return f"{RESULTS}/finetuned/{finetune_id}"
