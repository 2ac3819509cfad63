"""`validate-config FILE`: check a workflow config and its plan; exit 1 with one line naming the bad key.

Beyond the schema and the plan, what a machine must hold (`fits_problem`): a training run whose memory, counted
from its spec alone, exceeds this machine's is refused before any work, naming the key that makes it so; the
workflow (common.smk) and `plan` refuse alike. The count is a lower bound (weights, gradients, AdamW's two
moments, the logits of one batch and, for attention kinds that form it, the attention matrix of every layer), so
a refused run could never have trained here, while a run it lets through may still need more.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from depthwidth.contracts import ENTROPY_TABLE, sweep_experiment
from depthwidth.plan.config import read
from depthwidth.plan.jobs import Plan, from_config
from depthwidth.shapes import count_params

FP32 = 4  # bytes
STATE_COPIES = 4  # weights, gradients and AdamW's two moments, each a copy of the parameters in fp32
CGROUP_LIMIT = Path("/sys/fs/cgroup/memory.max")  # a container's bound below the machine's memory (cgroup v2)


def machine_memory() -> int:
    """Bytes of memory this machine gives a process: its physical memory, or its cgroup's limit when lower."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        limit = CGROUP_LIMIT.read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def run_memory(spec: dict) -> dict[str, int]:
    """The least memory (bytes) training the run `spec` takes on a CPU, by part (module docstring)."""
    m, r = spec["model"], spec["recipe"]
    counts = count_params(m["n_layer"], m["d_model"], m["d_ff"], m["vocab_size"], m["n_ctx"])
    rows = r["batch_size"] * m["n_ctx"]
    attention = m["attention"] != "standard"  # standard attention runs a fused kernel that forms no T x T matrix
    return {
        "embeddings": STATE_COPIES * FP32 * (counts["total"] - counts["nonembedding"]),
        "layers": STATE_COPIES * FP32 * counts["nonembedding"],
        "logits": 2 * FP32 * rows * m["vocab_size"],  # the logits and their gradient
        "attention": FP32 * rows * m["n_ctx"] * m["n_head"] * m["n_layer"] if attention else 0,
    }


def _key(plan: Plan, run_id: str, spec: dict, part: str) -> str:
    """The config key that makes the largest part (`run_memory`) of a run's memory large."""
    m, r = spec["model"], spec["recipe"]
    model, recipe = _blocks(plan, run_id)
    if part == "embeddings":  # vocab_size x d_model, and n_ctx x d_model
        return "data.vocab_size" if m["vocab_size"] >= m["n_ctx"] else f"{recipe}.n_ctx"
    if part == "layers":  # L x 12 d^2: the model's width (a sweep's from its N)
        return model
    if part == "logits":  # batch_size x n_ctx x vocab_size: the largest of the three
        sizes = {
            "data.vocab_size": m["vocab_size"],
            f"{recipe}.n_ctx": m["n_ctx"],
            f"{recipe}.batch_size": r["batch_size"],
        }
        return max(sizes, key=sizes.get)
    return f"{recipe}.n_ctx"


def _blocks(plan: Plan, run_id: str) -> tuple[str, str]:
    """The config keys of a run's width and of its recipe."""
    if run_id in (plan.glue.pretrained if plan.glue else {}):
        return "glue.model.d_model", "glue.pretrain.recipe"
    (table, *_) = plan.job(run_id).tables
    if table == ENTROPY_TABLE:
        return "shaped.training.model.d_model", "shaped.training.recipe"
    return f"sweep.{sweep_experiment(table)}.n", "sweep.recipe"


def fits_problem(plan: Plan, available: int | None = None) -> str | None:
    """Why a training run of `plan` cannot fit the `available` bytes (this machine's memory): one line naming
    the key, the run's shape and the memory it would need; None if every run fits."""
    available = machine_memory() if available is None else available
    jobs = {**plan.candidates, **plan.runs, **(plan.glue.pretrained if plan.glue else {})}
    worst = None
    for run_id, job in jobs.items():
        parts = run_memory(job.spec)
        gpu = plan.glue.block["gpu"] if run_id in (plan.glue.pretrained if plan.glue else {}) else job.resources["gpu"]
        # a GPU run holds its weights on the host once, as they are built
        need = (parts["embeddings"] + parts["layers"]) // STATE_COPIES if gpu else sum(parts.values())
        if worst is None or need > worst[0]:
            worst = (need, run_id, job.spec, parts)
    if worst is None or worst[0] <= available:
        return None
    need, run_id, spec, parts = worst
    part = max(parts, key=parts.get)
    m, batch = spec["model"], spec["recipe"]["batch_size"]
    shape = f"L{m['n_layer']} d{m['d_model']}, vocab {m['vocab_size']}, n_ctx {m['n_ctx']}, batch {batch}"
    return (
        f"config key '{_key(plan, run_id, spec, part)}': its run {run_id} ({shape}) needs at least "
        f"{_bytes(need)} ({part} {_bytes(parts[part])}), more than this machine's {_bytes(available)}"
    )


def _bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}" if unit != "bytes" else f"{int(n)} bytes"
        n /= 1024
    raise AssertionError


# A config of more runs than this is told its cost before Snakemake builds its DAG, which at 18,006 runs took more
# than 300 s of `snakemake -n` without a word (issue 55); the largest config here plans 189.
RUNS_NOTED = 2000


def cost_note(plan: Plan) -> str | None:
    """What a config of more than RUNS_NOTED runs will cost, in one line: its runs and the tokens they train
    (from the specs, before any epoch cap); None for a smaller one."""
    if len(plan.runs) <= RUNS_NOTED:
        return None
    tokens = sum(job.spec["recipe"]["token_budget"] for job in plan.runs.values())
    return (
        f"config {plan.name} plans {len(plan.runs):,} training runs ({tokens:.3g} tokens) before its scans ask for "
        "more; Snakemake builds a graph of all their jobs before the first runs, minutes at this size: "
        "`python -m depthwidth plan` prices them"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("configfile", type=Path, help="a YAML config, e.g. config/ci.yaml")


def run(args: argparse.Namespace) -> int:
    from depthwidth.plan.config import ConfigError
    from depthwidth.plan.jobs import name_problem

    plan = from_config(read(args.configfile))
    if problem := plan.corpus_problem() or fits_problem(plan) or name_problem(plan, [args.configfile]):
        raise ConfigError(problem)
    print(f"{args.configfile}: valid ({len(plan.runs)} training runs, {len(plan.figures)} figures)")
    if note := cost_note(plan):
        print(note)
    return 0
