"""`python -m depthwidth plan [--configfile C] [--tsv PATH] [--cores N] [--config KEY=VALUE ...]`: the run sheet
of a config, before running it.

One row per training run of the plan: shape, non-embedding N, tokens, tokens per parameter, epochs
over the train split, matmul FLOPs (training plus evaluation forwards, the final one over the whole
validation split once the data is prepared), the estimated time, and
whether its outputs exist; then totals per table and for the whole config, and by role (`roles`): the scans'
scouts, the rows' seeds, the sensitivity block's runs and the shaped training, so that what choosing the rates costs
stands beside what the rows cost.

Time estimates:
- CPU runs (gpu = 0): a calibration on this machine trains every distinct shape of the plan (model
  and batch) for a few steps with the config's context, vocabulary and threads per job (the same step
  code as a real run), and each run takes its shape's achieved FLOP/s. It times `cores // threads`
  copies of each shape side by side, as the workflow runs its jobs (two 1-thread jobs on two cores each
  run slower than one alone), and wall time assumes as many jobs at once.
- GPU runs (gpu > 0): a stated achieved rate per GPU (`--gpu-flops`), reported as GPU-hours.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import time
from pathlib import Path

from depthwidth import shapes
from depthwidth.columns import LR_CHECK
from depthwidth.contracts import ENTROPY_TABLE, sweep_experiment
from depthwidth.glue.contracts import DOWNLOAD_BYTES, PUBLISHED_ROWS
from depthwidth.plan.jobs import Plan, TrainJob

GPU_FLOPS = 5e13  # achieved FLOP/s per GPU assumed for small models (H100/H200 bf16 peak ~ 8e14)
SHEET_COLUMNS = [
    "run", "L", "d", "heads", "n_nonembedding", "tokens", "tokens_per_param", "epochs", "flops", "est_seconds",
    "held_seconds", "done",
]  # fmt: skip


def has_cuda_device() -> bool:
    """Whether this machine has an NVIDIA GPU (its driver makes /dev/nvidia0, ...), without importing torch."""
    import glob

    return bool(glob.glob("/dev/nvidia[0-9]*"))


def gpu_note(plan: Plan, local: bool) -> str | None:
    """One line when the config asks for GPUs (`gpu_keys`) of this machine, running its jobs itself (`local`),
    and it has no CUDA device: those runs then train on the CPU."""
    keys = plan.gpu_keys()
    if keys and local and not has_cuda_device():
        return (
            f"config {plan.name} asks for GPUs ({', '.join(keys)}) but this machine has no CUDA device: its "
            "training runs will run on the CPU"
        )
    return None


def run_tokens(recipe: dict, split: int | None) -> int:
    """Training tokens of a run: its budget, capped at max_epochs passes over the train split when that is known."""
    if split and "max_epochs" in recipe:
        return min(recipe["token_budget"], int(recipe["max_epochs"] * split))
    return recipe["token_budget"]


FORWARD_SHARE = 1 / 3  # of a training token's FLOPs, its forward's: the backward costs twice the forward


def flops_per_token(spec: dict) -> float:
    """Matmul FLOPs of one training token (forward and backward, LM head included) of a run's model."""
    m = spec["model"]
    n = shapes.nonembedding(m["n_layer"], m["d_model"], m["d_ff"])
    return shapes.flops_per_token(m["n_layer"], m["d_model"], m["d_ff"], m["vocab_size"], m["n_ctx"], n)["matmul"]


def run_flops(spec: dict, tokens: int | None = None, val_tokens: int | None = None) -> tuple[float, float]:
    """(FLOPs per training token, total matmul FLOPs of the run: training plus evaluation forwards);
    `tokens` overrides the recipe's token budget (the epoch cap); `val_tokens`, the validation split's
    size when known, adds the final evaluation, which covers all of it."""
    m, r = spec["model"], spec["recipe"]
    per_token = flops_per_token(spec)
    tokens_per_step = r["batch_size"] * m["n_ctx"]
    steps = math.ceil((r["token_budget"] if tokens is None else tokens) / tokens_per_step)
    evals = steps // r["eval_interval"] + 1  # step 0 and every interval (the end: the final evaluation)
    eval_tokens = evals * r["eval_batches"] * tokens_per_step
    if val_tokens:
        from depthwidth.train.loop import validation_starts

        eval_tokens += len(validation_starts(val_tokens, m["n_ctx"])) * m["n_ctx"]
    return per_token, per_token * steps * tokens_per_step + per_token * FORWARD_SHARE * eval_tokens


def split_tokens(data_dir: str) -> dict[str, int] | None:
    """Tokens of the train and val splits of a data folder, when it is prepared (its meta.json)."""
    meta = Path(data_dir) / "meta.json"
    try:
        splits = json.loads(meta.read_text())["splits"]
        return {name: int(splits[name]["tokens"]) for name in ("train", "val")}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def train_tokens(plan: Plan) -> int | None:
    """Tokens of the config's train split, when its data is prepared."""
    splits = split_tokens(plan.data_dir)
    return splits["train"] if splits else None


def done(job: TrainJob) -> bool:
    """Whether the run's metrics.json exists and records the plan's (complete) spec."""
    try:
        ran = json.loads(Path(job.folder, "metrics.json").read_text())["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return ran == job.spec


def sheet(plan: Plan, rate=None, gpu_flops: float = GPU_FLOPS, startup: float = 0.0):
    """The run sheet (a DataFrame). rate(flops_per_token, job) -> achieved FLOP/s of one CPU job;
    startup: seconds each CPU job spends before its first step (interpreter, torch, model)."""
    import pandas as pd

    splits_of = functools.cache(lambda folder: split_tokens(folder) or {})  # a sensitivity vocabulary's is its own
    rows = []
    for run_id, job in plan.priced_runs().items():
        m, r = job.spec["model"], job.spec["recipe"]
        n = shapes.nonembedding(m["n_layer"], m["d_model"], m["d_ff"])
        splits = splits_of(job.spec["data"])
        split = splits.get("train")
        tokens = run_tokens(r, split)
        per_token, flops = run_flops(job.spec, tokens, splits.get("val"))
        # a GPU run holds its share of the GPU meanwhile; a CPU job's threads are priced in its rate
        held = gpu_fraction(job) if job.resources["gpu"] else 1.0
        speed = gpu_flops * held if job.resources["gpu"] else (rate(per_token, job) if rate else None)
        seconds = flops / speed + (0 if job.resources["gpu"] else startup) if speed else math.nan
        rows.append({
            "run": run_id, "L": m["n_layer"], "d": m["d_model"], "heads": m["n_head"], "n_nonembedding": n,
            "tokens": tokens, "tokens_per_param": tokens / n,
            "epochs": tokens / split if split else math.nan, "flops": flops,
            "est_seconds": seconds, "held_seconds": seconds * held,
            "done": done(job),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=SHEET_COLUMNS)


def gpu_fraction(job) -> float:
    """The GPUs a run occupies: its `gpu`, or 1 / runs_per_gpu of one when runs share a GPU (the shared
    GPU's achieved FLOP/s is split between them)."""
    return 1 / job.resources["runs_per_gpu"] if job.scheduler["gres"] else job.resources["gpu"]


def calibrate(plan: Plan, cores: int, seconds_per_shape: float = 1.0) -> tuple[dict[str, float], float]:
    """Achieved FLOP/s of one CPU training job of every distinct shape of the plan (model and batch, as
    `bench sweep` groups them), with `cores // threads` copies running side by side (each in its own
    process, as the workflow's jobs; at most this machine's cores, so `--cores 32` on a smaller machine
    prices a larger one at this machine's per-core rate): {shape key: FLOP/s}, and the calibration's
    wall time (s).

    Every shape is timed, none interpolated: at equal N a deep, narrow model runs at a third of the
    rate of a shallow, wide one on this CPU (bench sweep at N = 50k: L8 d22 13.9% of the one-thread
    peak, L1 d64 42.7%), so no smooth function of N or FLOPs per token gives both.
    """
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    import numpy as np

    cpu = [job for job in plan.priced_runs().values() if not job.resources["gpu"]]
    if not cpu:
        return {}, 0.0
    shapes_of = {shape_key(job.spec): job for job in cpu}
    # the jobs side by side on `cores`; copies beyond this machine's cores would time its contention, not theirs
    parallel = max(1, min(cores, os.cpu_count() or 1) // max(job.resources["threads"] for job in cpu))
    start = time.perf_counter()
    with ProcessPoolExecutor(parallel, mp_context=get_context("spawn")) as pool:
        rates = {
            key: float(np.median(list(pool.map(_measure, [job] * parallel, [seconds_per_shape] * parallel))))
            for key, job in shapes_of.items()
        }
    return rates, time.perf_counter() - start


def shape_key(spec: dict) -> str:
    """What fixes a run's speed: the model (sizes, vocabulary, n_ctx, attention), the batch and the precision."""
    r = spec["recipe"]
    key = {"model": spec["model"], "batch_size": r["batch_size"], "precision": r["precision"]}
    return json.dumps(key, sort_keys=True)


def shape_rate(rates: dict[str, float]):
    """rate(flops_per_token, job): the calibrated FLOP/s of the job's shape."""
    return lambda per_token, job: rates[shape_key(job.spec)]


def startup_seconds() -> float:
    """Wall time of a training command that stops before any work: a new interpreter importing torch
    and the package, as every training job pays once (it dominates runs of a few seconds)."""
    import subprocess
    import sys

    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "depthwidth", "train", "--help"], capture_output=True, check=True)
    return time.perf_counter() - start


def _measure(job: TrainJob, budget: float) -> float:
    """FLOP/s of real training steps of one job's model and recipe, on this machine's CPU."""
    import numpy as np
    import torch

    from depthwidth.train.loop import autocast_for, keep_freed_memory, sample_batch, validate_spec
    from depthwidth.train.model import GPT
    from depthwidth.train.optim import make_optimizer
    from depthwidth.train.step import train_step

    keep_freed_memory()  # as every training job does
    spec = validate_spec({**job.spec, "data": "-"})
    m, r = spec["model"], spec["recipe"]
    torch.set_num_threads(job.resources["threads"])
    torch.manual_seed(0)
    model = GPT(m)
    optimizer = make_optimizer(model, r)
    # long enough for a batch of the longest context (a shorter one made `plan` say `high <= 0`)
    size = max(100_000, r["batch_size"] * (m["n_ctx"] + 1) + 1)
    shard = np.random.default_rng(0).integers(0, m["vocab_size"], size=size, dtype=np.int64)
    rng = np.random.default_rng(0)
    per_token = run_flops(spec)[0]
    tokens = r["batch_size"] * m["n_ctx"]
    autocast = autocast_for(r["precision"], torch.device("cpu"))  # the spec's numerics, as its job runs them

    def step() -> float:
        x, y = sample_batch(shard, rng, r["batch_size"], m["n_ctx"])
        t = time.perf_counter()
        train_step(model, optimizer, x, y, 1e-4, r["grad_clip"], autocast, r.get("z_loss"))
        return time.perf_counter() - t

    step()  # warm-up
    times, deadline = [], time.perf_counter() + budget
    while len(times) < 2 or (time.perf_counter() < deadline and len(times) < 20):
        times.append(step())
    return per_token * tokens / float(np.median(times))


def totals(plan: Plan, frame):
    """Totals per table (a run read by two tables counts in both) and for the config (each run once)."""
    import pandas as pd

    groups = [(table, frame[frame["run"].isin(plan.table_runs(table))]) for table in _run_tables(plan)]
    groups.append(("all (each run once)", frame))
    rows = [
        {
            "table": name,
            "runs": len(part),
            "tokens": int(part["tokens"].sum()),
            "tokens_per_param": _span(part["tokens_per_param"]),
            "epochs": _span(part["epochs"]),
            "flops": part["flops"].sum(),
            "est_job_hours": part["est_seconds"].sum(min_count=1) / 3600,
            "done": int(part["done"].sum()),
        }
        for name, part in groups
    ]
    return pd.DataFrame(rows)


# what a priced run is for (`role`): choosing the rates (a scan's scouts, lr_check's fixed factors), or what the
# rows read (their seeds, the sensitivity block's own runs, the shaped training)
SCOUTS, RATE_CHECK, ROWS, BLOCK, SHAPED = ROLES = (
    "scouts", "rate check", "row seeds", "sensitivity block", "shaped training",
)  # fmt: skip


def scouts(plan: Plan) -> set[str]:
    """Every run a learning-rate scan may train at its reserved scout seed (`sweep.lr_grid.seed`)."""
    scans = plan.scans.values()
    return {run_id for scan in scans for (_, seed), run_id in scan.runs.items() if seed == scan.scout_seed}


def role(plan: Plan, run_id: str, scout_ids: set[str]) -> str:
    """What a priced run is for (one of ROLES): a learning-rate scan's scout (`scout_ids`; a sensitivity shape's
    scan's too), a run of lr_check alone, of the sensitivity block's tables alone, the shaped training, or else a
    seed of a row's table."""
    if run_id in scout_ids:
        return SCOUTS
    if run_id in plan.entropy_runs:
        return SHAPED
    experiments = {sweep_experiment(table) for table in plan.job(run_id).tables}
    if experiments == {LR_CHECK}:
        return RATE_CHECK
    return BLOCK if experiments and experiments <= set(plan.confounds) else ROWS


def roles(plan: Plan, frame):
    """Runs, FLOPs and estimated job-hours of the run sheet `frame` by ROLES (a role with no run left out), each
    with its share of the config's estimate: of the machine time its runs hold (the sheet's `held_seconds`, which
    `_summary` prices GPU-hours by), or of its FLOPs where nothing is timed. The scouts' is a lower bound, as the
    sheet's: a scan that widens trains more scouts, and confirmations are not priced."""
    import pandas as pd

    scout_ids = scouts(plan)
    frame = frame.assign(role=[role(plan, run_id, scout_ids) for run_id in frame["run"]])
    by = frame.groupby("role", sort=False)
    rows = [
        {
            "role": name,
            "runs": len(part),
            "flops": part["flops"].sum(),
            "est_job_hours": part["est_seconds"].sum(min_count=1) / 3600,
            "held": part["held_seconds"].sum(min_count=1),
        }
        for name in ROLES
        if name in by.groups
        for part in [by.get_group(name)]
    ]
    out = pd.DataFrame(rows, columns=["role", "runs", "flops", "est_job_hours", "held"])
    timed = out["held"].notna().all() and out["held"].sum() > 0
    basis = out["held"] if timed else out["flops"]
    return out.drop(columns="held").assign(share=basis / basis.sum())


def _span(values) -> str:
    return "n/a" if values.isna().all() else f"{values.min():.3g}-{values.max():.3g}"


def _run_tables(plan: Plan) -> list[str]:
    return [table for table in plan.tables if sweep_experiment(table) or table == ENTROPY_TABLE]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from depthwidth.plan.config import add_override_arguments

    parser.add_argument("--configfile", type=Path, default=Path("config/config.yaml"), help="a workflow config")
    parser.add_argument("--tsv", type=Path, default=None, help="also write the run sheet here (tab-separated)")
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="cores for CPU jobs side by side")
    parser.add_argument("--gpu-flops", type=float, default=GPU_FLOPS, help="achieved FLOP/s per GPU (GPU runs)")
    parser.add_argument("--no-calibration", action="store_true", help="skip timing; no CPU time estimates")
    add_override_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from depthwidth.io import write_text
    from depthwidth.plan.config import ConfigError, read_overridden
    from depthwidth.plan.jobs import from_config, name_problem
    from depthwidth.plan.validate import fits_problem

    plan = from_config(read_overridden(args.configfile, args.config))
    if problem := fits_problem(plan) or name_problem(plan, [args.configfile]):
        raise ConfigError(problem)  # before the calibration trains any shape
    rate, startup, note = None, 0.0, "no calibration"
    if not args.no_calibration:
        rates, seconds = calibrate(plan, args.cores)
        if rates:
            rate, startup = shape_rate(rates), startup_seconds()
            note = (
                f"calibrated in {seconds + startup:.1f} s on this machine: {len(rates)} shapes at "
                f"{min(rates.values()) / 1e9:.1f}-{max(rates.values()) / 1e9:.1f} GFLOP/s a job; "
                f"{startup:.1f} s start-up per job"
            )
    frame = sheet(plan, rate, args.gpu_flops, startup)
    with pd.option_context("display.max_rows", None, "display.width", 200):
        print(_formatted(frame).to_string(index=False))
        print()
        print(_formatted(totals(plan, frame)).to_string(index=False))
        print()
        shares = roles(plan, frame)
        print(_formatted(shares.assign(share=shares["share"].map(lambda v: f"{100 * v:.0f}%"))).to_string(index=False))
    print(_summary(plan, frame, args, note))
    if args.tsv:
        write_text(args.tsv, frame.to_csv(sep="\t", index=False))
    if plan.glue:
        print_glue(plan, args)
    return 0


def print_glue(plan: Plan, args) -> None:
    """The GLUE stage's jobs and totals (plan/glue_sheet.py), after the training runs'."""
    import pandas as pd

    rate, note = None, "no calibration"
    if not args.no_calibration and not plan.glue.block["gpu"]:
        rate, note = glue_calibrated_rate(plan, plan.glue.block["threads"])
    frame = glue_sheet(plan, rate, startup_seconds() if rate else 0.0, args.gpu_flops)
    with pd.option_context("display.max_rows", None, "display.width", 200):
        print("\n" + _formatted(frame).to_string(index=False))
    print(f"\n{glue_summary(plan, frame)}\n({note})")


def _formatted(frame):
    out = frame.copy()
    for column in ("flops",):
        out[column] = out[column].map(lambda v: f"{v:.3g}")
    for column in ("tokens_per_param", "epochs", "est_seconds", "est_job_hours"):
        if column in out and out[column].dtype.kind == "f":
            out[column] = out[column].map(lambda v: "n/a" if math.isnan(v) else f"{v:.3g}")
    return out


def _summary(plan: Plan, frame, args, note: str) -> str:
    gpu_jobs = [job for job in plan.priced_runs().values() if job.resources["gpu"]]
    job_seconds = frame["est_seconds"].sum(min_count=1)
    lines = [f"\n{args.configfile}: {len(frame)} training runs, {frame['flops'].sum():.3g} matmul FLOPs; {note}"]
    if plan.scans:
        lines.append(
            f"{len(plan.scans)} learning-rate scans (sweep.lr_grid): priced at their first scouts and the other "
            "seeds at one rate, a lower bound (a scan that widens, or chooses between its scouts, trains more)"
        )
    if gpu_jobs:
        on_gpu = frame["run"].isin([job.run_id for job in gpu_jobs])
        gpu_hours = frame["held_seconds"][on_gpu].sum() / 3600
        lines.append(f"GPU estimate: {gpu_hours:.3g} GPU-hours at {args.gpu_flops:.3g} FLOP/s achieved per GPU")
        shared = [job for job in gpu_jobs if job.scheduler["gres"]]
        if shared:
            per_gpu = sorted({job.resources["runs_per_gpu"] for job in shared})
            lines.append(
                f"GPU sharing: {len(shared)} of {len(gpu_jobs)} GPU runs share a GPU, {'/'.join(map(str, per_gpu))} "
                f"at a time (SLURM: --gres={shared[0].scheduler['gres']} each; the estimate splits the GPU's rate "
                "between them, which sharing beats where one small run alone cannot reach it)"
            )
    elif not math.isnan(job_seconds):
        threads = max(job.resources["threads"] for job in plan.priced_runs().values())
        parallel = max(1, args.cores // threads)
        lines.append(
            f"CPU estimate: {job_seconds / 60:.1f} job-minutes; {job_seconds / 60 / parallel:.1f} min wall "
            f"with {parallel} jobs of {threads} thread(s) side by side (training only; data and simulations extra)"
        )
    design = plan.design
    if design.looks == 2:
        lines.append(
            f"second stage (decide.looks 2): at most {design.budget:g} job-minutes more, at most {design.most} fresh "
            f"seeds per shape; the estimate above is the first stage's (the worst case adds the budget: looks at "
            f"{', '.join(f'{100 * level:g}%' for level in design.levels)}; design {design.digest})"
        )
    if train_tokens(plan) is None:
        lines.append(f"epochs: n/a until the data is prepared ({plan.data_dir}/meta.json)")
    slow = bf16_without_units(plan)
    if slow:
        lines.append(
            f"{slow} CPU run(s) at recipe.precision bf16, and this CPU has no bf16 matrix instructions (AVX-512 BF16 "
            "or AMX): torch runs bf16 here on a generic kernel, 5-10x slower than fp32 (docs/performance.md, "
            '"Precision"); --config "sweep={recipe: {precision: fp32}}" prices them in fp32'
        )
    capped = capped_runs(plan, frame)
    short = capped_dose(plan, capped)
    if len(short):
        shapes = ", ".join(dict.fromkeys(f"L{r.L} d{r.d}" for r in short.itertuples()))
        lines.append(
            f"{len(short)} run(s) of the sensitivity block's tokens confound stop at max_epochs ({shapes}): their "
            "pairs are not at sensitivity.tokens_factor x the tokens; leave `tokens` out of those pairs' confounds"
        )
    if len(capped):
        lines.append(
            f"{len(capped)} run(s) stop at max_epochs before their token budget: {capped['tokens_per_param'].min():.3g}"
            f"-{capped['tokens_per_param'].max():.3g} tokens per parameter (N {capped['n_nonembedding'].min():.3g}"
            f"-{capped['n_nonembedding'].max():.3g}); a larger corpus, or fewer N, gives them their budget"
        )
    return "\n".join(lines)


def bf16_without_units(plan: Plan) -> int:
    """How many CPU runs ask for bf16 on a CPU that has no bf16 matrix instructions (0 when none ask)."""
    runs = [
        j for j in plan.priced_runs().values() if not j.resources["gpu"] and j.spec["recipe"]["precision"] == "bf16"
    ]
    return len(runs) if runs and not cpu_has_bf16_units() else 0


def cpu_has_bf16_units() -> bool:
    """Whether oneDNN multiplies bf16 in hardware on this CPU (AVX-512 BF16 or AMX)."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def capped_runs(plan: Plan, frame):
    """The run sheet's rows whose tokens the epoch cap cut below the recipe's budget."""
    jobs = plan.priced_runs()
    budget = frame["run"].map(lambda run: jobs[run].spec["recipe"]["token_budget"])
    return frame[frame["tokens"] < budget]


def capped_dose(plan: Plan, capped):
    """Of the capped runs `capped` (`capped_runs`' rows), those of a sensitivity confound that multiplies the tokens:
    there the confound is not the dose it is named for (its pairs read fewer than `tokens_factor` x the reference's
    tokens)."""
    more = {name for name, confound in plan.confounds.items() if confound.tokens_factor != 1}
    return capped[[bool(more & {sweep_experiment(t) for t in plan.job(run).tables}) for run in capped["run"]]]


# --- the GLUE stage (a config's `glue` block): its download, its two pretrainings (tokens, FLOPs, time, as the
# sweep's runs are priced) and its fine-tunings. A fine-tuning's tokens are its rows x epochs x tokens per row.
# Rows: the task's prepared train.jsonl once fetched, else GLUE's published counts (glue.contracts.PUBLISHED_ROWS).
# Tokens per row: the prepared rows' characters over CHARS_PER_TOKEN, else ROW_CHARS (estimates of this project,
# not GLUE's), at most n_ctx. Each token costs the pretrained shape's training FLOPs per token (LM head included:
# an upper bound), the dev rows a third of that (forward only); time at the shape's measured rate, a fine-tuning
# at FINETUNE_EFFICIENCY of it.

# characters per row before a task is fetched: CoLA's sentences ~40, RTE's two sentences ~350 (an estimate)
ROW_CHARS = {"cola": 40, "rte": 350}
CHARS_PER_TOKEN = 3.0  # English characters per token of a small byte-level BPE (vocab 1024: 3.1 measured on KJV rows)
# a fine-tuning's FLOP/s over its shape's pretraining rate: 27 against 56 GFLOP/s measured at L24 d64 (shaped, one
# thread, 300 rows of ~105 tokens in batches of 32): right-padded batches of changing length, the head, the
# job's start-up
FINETUNE_EFFICIENCY = 0.5
GLUE_COLUMNS = ["job", "kind", "tokens", "flops", "est_seconds", "done"]


def task_rows(job) -> dict[str, tuple[int, float]]:
    """split -> (rows, characters per row) of a fetch job: its prepared files', or the published estimates."""
    out = {}
    for split in ("train", "dev"):
        path = Path(job.folder) / f"{split}.jsonl"
        if path.is_file():
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            chars = sum(len(r["a"]) + len(r["b"] or "") for r in rows) / max(1, len(rows))
            out[split] = (len(rows), chars)
        else:
            out[split] = (PUBLISHED_ROWS[job.task][split], ROW_CHARS[job.task])
    return out


def finetune_tokens(job, pretrain_spec: dict, rows: dict) -> tuple[int, int]:
    """(training tokens, dev tokens) of one fine-tuning."""
    n_ctx, recipe = pretrain_spec["model"]["n_ctx"], job.spec["recipe"]
    (train, train_chars), (dev, dev_chars) = rows["train"], rows["dev"]
    if recipe["max_train_rows"] is not None:
        train = min(train, recipe["max_train_rows"])
    per_row = {
        split: min(n_ctx, max(1.0, chars / CHARS_PER_TOKEN))
        for split, chars in (("train", train_chars), ("dev", dev_chars))
    }
    return int(train * recipe["epochs"] * per_row["train"]), int(dev * per_row["dev"])


def glue_sheet(plan: Plan, rate=None, startup: float = 0.0, gpu_flops: float = GPU_FLOPS):
    """One row per GLUE pretraining and fine-tuning: tokens, FLOPs, estimated seconds (rate(flops_per_token,
    spec) -> FLOP/s of one CPU job, or gpu_flops with glue.gpu), and whether its outputs exist."""
    import pandas as pd

    glue = plan.glue
    splits = split_tokens(plan.data_dir) or {}
    gpu = glue.block["gpu"]

    def seconds(per_token: float, flops: float, spec: dict, efficiency: float = 1.0) -> float:
        speed = gpu_flops if gpu else (rate(per_token, spec) * efficiency if rate else None)
        return flops / speed + (0 if gpu else startup) if speed else math.nan

    frame = []
    for pid, job in glue.pretrained.items():
        tokens = run_tokens(job.spec["recipe"], splits.get("train"))
        per_token, flops = run_flops(job.spec, tokens, splits.get("val"))
        done = all(Path(path).is_file() for path in job.outputs)
        frame.append({"job": pid, "kind": "pretrain", "tokens": tokens, "flops": flops,
                      "est_seconds": seconds(per_token, flops, job.spec), "done": done})  # fmt: skip
    rows = {task: task_rows(job) for task, job in glue.tasks.items()}
    for fid, job in glue.finetuned.items():
        spec = glue.pretrained[job.pretrained].spec
        train, dev = finetune_tokens(job, spec, rows[job.task])
        per_token = flops_per_token(spec)
        flops = per_token * (train + dev * FORWARD_SHARE)
        done = all(Path(path).is_file() for path in job.outputs)
        frame.append({"job": fid, "kind": "finetune", "tokens": train, "flops": flops,
                      "est_seconds": seconds(per_token, flops, spec, FINETUNE_EFFICIENCY), "done": done})  # fmt: skip
    return pd.DataFrame(frame, columns=GLUE_COLUMNS)


def glue_calibrated_rate(plan: Plan, threads: int):
    """rate(flops_per_token, spec) of the GLUE shape (the pretrained model and its batch) measured here, as
    `plan` measures the sweep's shapes; the note it adds."""
    spec = next(iter(plan.glue.pretrained.values())).spec
    job = TrainJob("glue", spec, {"threads": threads, "gpu": 0, "runs_per_gpu": 1, "mem_mb": 0, "runtime": 0}, ())
    measured = _measure(job, 1.0)
    return (lambda per_token, spec: measured), f"GLUE shape measured at {measured / 1e9:.1f} GFLOP/s a job"


def glue_summary(plan: Plan, frame) -> str:
    """The GLUE stage's totals in a few lines: download, pretraining, fine-tuning."""
    glue = plan.glue
    size = sum(DOWNLOAD_BYTES[task] for task in glue.block["tasks"])
    lines = [f"GLUE: downloads {', '.join(glue.block['tasks'])} ({size / 1e6:.2f} MB, once, checked by sha256)"]
    for kind, label in (("pretrain", "pretrainings"), ("finetune", "fine-tunings")):
        part = frame[frame["kind"] == kind]
        minutes = part["est_seconds"].sum(min_count=1) / 60
        time = "no time estimate" if math.isnan(minutes) else f"~{minutes:.1f} job-minutes"
        lines.append(
            f"GLUE {label}: {len(part)} jobs, {int(part['tokens'].sum()):,} tokens, {part['flops'].sum():.3g} matmul "
            f"FLOPs, {time}, {int(part['done'].sum())} done"
        )
    return "\n".join(lines)
