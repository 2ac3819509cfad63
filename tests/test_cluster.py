"""The ci workflow through `--profile profiles/slurm` on a real SLURM scheduler (`scripts/cluster-up`).

One SLURM run of the ci config serves every test: results equal those of the session's local
build of the same config (`ci_build`, which the end-to-end tests share, so CI builds it once),
job resources as `scontrol show job` reports them, a cancelled training job retried from its
checkpoint, a cluster without accounting database or account, and a status query that keeps
failing. The SLURM run starts from the local build's prepared data, simulation tables and all but six
of its training runs, so its cluster jobs are those six runs (four sweep runs, the cancelled one among
them, and two shaped training runs: each kind of job the profile gives its own resources), and every
table, figure and claim is rebuilt from a mix of SLURM's runs and the local ones; CI pays for six runs,
not for a second copy of 24 runs and the simulations. Run alone with `pytest -m cluster`; they run only
against the SLURM that scripts/cluster-up started, or any SLURM with DEPTHWIDTH_CLUSTER_TESTS=1
(tests/cluster_guard.py), and skip with the reason elsewhere (no SLURM, another scheduler, no idle node, no
`shard` gres).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import cluster_guard
import pandas as pd
import pytest
import yaml
from conftest import BUILD_SECONDS, CI_CONFIG, REPO, copy_workflow, package_env, plan_of, run_id
from depthwidth import contracts
from depthwidth.contracts import ATTENTION_KINDS
from depthwidth.plan.jobs import from_config

REASON = cluster_guard.why_not()
pytestmark = [pytest.mark.cluster, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

CONFIG = "config/ci-cluster.yaml"
# The first status query comes 40 s after a submission by default, and the interval grows by 10 s per
# check in which no job finished (right for a real cluster); the tests ask after 2 s and at most
# every 5 s to stay within minutes.
FAST = [
    "--slurm-failfast-init-seconds-before-status-checks",
    "2",
    "--slurm-failfast-max-seconds-between-status-checks",
    "5",
]
# Distinct resources per training block, to read them back from the scheduler.
# The sweep's runs share the node's one GPU (a shard each, of the 4 scripts/cluster-up defines); the
# shaped training runs ask for the whole GPU.
SWEEP_RESOURCES = {"mem_mb": 1500, "runtime": 20, "gpu": 1, "runs_per_gpu": 4}
SHAPED_RESOURCES = {"mem_mb": 1000, "runtime": 15, "gpu": 1}
CI_PLAN = plan_of(CI_CONFIG)  # the resources of ci-cluster.yaml change no spec: its runs have the same ids
NAME = CI_PLAN.name  # ci-cluster.yaml keeps the name: its tables, figures and claims lie under results/ci/
RUN_ID = run_id(CI_PLAN, "L3-d38-h2-f152-s0")  # 103 steps: cancelled at its checkpoint of step 50, it resumes halfway
RUN, RUN_CHECKPOINT = contracts.run_dir(RUN_ID), contracts.checkpoint_dir(RUN_ID)
# The runs SLURM trains: the cheapest of each kind (sweep runs share a GPU, shaped training runs ask for a whole
# one), and the run the cancellation test resumes (RUN_ID). The others are the local build's.
TRAINED = sorted(
    run_id(CI_PLAN, name)
    for name in ("L1-d13-h1-f52-s0", "L2-d9-h1-f36-s0", "L2-d32-h2-f128-s0", "L3-d38-h2-f152-s0")
    + ("shaped-lr0.003-s0", "shaped-lr0.03-s0")
)


def write_config(work: Path) -> None:
    """config/ci.yaml with explicit resources for the sweep and shaped training jobs."""
    config = yaml.safe_load((work / "config/ci.yaml").read_text())
    config["sweep"].update(SWEEP_RESOURCES)
    config["shaped"]["training"].update(SHAPED_RESOURCES)
    (work / CONFIG).write_text(yaml.safe_dump(config))


def scontrol_jobs() -> list[dict[str, str]]:
    """Every job slurmctld still knows (finished ones for MinJobAge), as key=value fields."""
    out = subprocess.run(
        ["scontrol", "show", "job", "--oneliner"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    jobs = []
    for line in out.splitlines():
        # values may hold spaces only in Comment/Command-like fields we do not parse; split on key=
        fields = dict(re.findall(r"(\w[\w/:]*)=(\S*)", line))
        if "JobId" in fields:
            jobs.append(fields)
    return jobs


def train_jobs(work: Path) -> list[dict[str, str]]:
    return [
        job for job in scontrol_jobs() if job["WorkDir"] == str(work) and job["Comment"].startswith("rule_train_run")
    ]


def without_resources(config: dict) -> dict:
    """A config without the training blocks' scheduler resources, which no result depends on."""
    config = copy.deepcopy(config)
    for block in (config["sweep"], config["shaped"]["training"]):
        for key in SWEEP_RESOURCES | SHAPED_RESOURCES:
            block.pop(key, None)
    return config


def local_inputs(local: Path) -> list[str]:
    """What the SLURM run takes from the local build: the prepared data, the simulations (results/simulations/) and
    every training run's folder but those of TRAINED."""
    plan = from_config(yaml.safe_load((local / "config/ci.yaml").read_text()))
    runs = [contracts.run_dir(run) for run in sorted(set(plan.runs) - set(TRAINED))]
    return [plan.data_dir, *(job.output for job in plan.simulations.values()), *runs]


def copy_fresh(src: Path, dest: Path) -> None:
    """Copy a file or folder with new modification times (newer than the workflow's code: up to date)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, copy_function=shutil.copy)
    else:
        shutil.copy(src, dest)


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory, ci_build):
    """The ci workflow through the SLURM profile, from the local build's data and simulation tables."""
    work = copy_workflow(tmp_path_factory.mktemp("slurm"))
    write_config(work)
    taken = local_inputs(ci_build)
    for path in taken:
        copy_fresh(ci_build / path, work / path)
    start = time.time()
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--profile", "profiles/slurm", "--configfile", CONFIG, *FAST],
        cwd=work,
        env=package_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    BUILD_SECONDS["SLURM run of the ci config's training (cluster_run)"] = time.time() - start
    jobs = train_jobs(work)  # finished jobs stay known for MinJobAge (3600 s in scripts/cluster-up)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    return {
        "work": work,
        "local": ci_build,
        "log": log,
        "jobs": jobs,
        "start": start,
        "taken": taken,
    }


TIMING = ["wall_seconds", "tokens_per_second"]  # how fast a run went: differs between any two runs


def table(path: Path) -> pd.DataFrame:
    """A CSV as written (strings), without its timing columns."""
    return pd.read_csv(path, dtype=str, keep_default_na=False).drop(columns=TIMING, errors="ignore")


def compared_files(root: Path) -> list[str]:
    """Tables, figure data and claims: every CSV a reader of the results sees (the trajectory table is a
    simulation's file, taken from the local build)."""
    paths = [
        *root.glob(contracts.table_path(NAME, "*")),
        *root.glob(contracts.figure_path(NAME, "*", ".csv")),
        *root.glob(contracts.simulation_path("*")),
        root / contracts.claims_files(NAME)[0],
    ]
    return sorted(str(p.relative_to(root)) for p in paths)


def test_training_jobs_run_as_sbatch_jobs_and_results_equal_a_local_run(cluster_run):
    work, local = cluster_run["work"], cluster_run["local"]
    configs = [yaml.safe_load((work / CONFIG).read_text()), yaml.safe_load((local / "config/ci.yaml").read_text())]
    assert configs[0] != configs[1] and without_resources(configs[0]) == without_resources(configs[1])
    runs = sorted(p.parent.relative_to(work) for p in work.glob(f"{contracts.run_dir('*')}/metrics.json"))
    assert len(runs) >= 10 and {run.name for run in runs} == set(CI_PLAN.runs)
    jobs = cluster_run["jobs"]
    trained = sorted(job["Comment"].removeprefix("rule_train_run_wildcards_") for job in jobs)
    assert trained == TRAINED, "every training run the local build did not give is one SLURM job"
    assert {job["JobState"] for job in jobs} == {"COMPLETED"} and {job["ExitCode"] for job in jobs} == {"0:0"}
    # all are ready at the start and go to the scheduler at once (no local cap holds GPU jobs back)
    submitted = sorted(datetime.fromisoformat(job["SubmitTime"]) for job in jobs)
    assert (submitted[-1] - submitted[0]).total_seconds() < 15, [job["SubmitTime"] for job in jobs]
    ours = [job for job in scontrol_jobs() if job["WorkDir"] == str(work)]
    assert len(ours) == len(jobs), (
        "the cluster jobs are the training runs (data, simulations and the other runs came from the local build)"
    )
    taken = cluster_run["taken"]
    files = compared_files(work)
    assert files == compared_files(local) and contracts.claims_files(NAME)[0] in files and len(files) > 20
    rebuilt = [f for f in files if not any(f == t or f.startswith(f"{t}/") for t in taken)]
    assert len(rebuilt) > 20 and all((work / f).stat().st_mtime >= cluster_run["start"] for f in rebuilt)
    different = [f for f in rebuilt if not table(work / f).equals(table(local / f))]
    assert not different, f"SLURM and local results differ: {different}"
    for run in map(contracts.run_dir, TRAINED):
        assert (work / run / "metrics.json").stat().st_mtime >= cluster_run["start"], run
        ours, theirs = (json.loads((root / run / "metrics.json").read_text()) for root in (work, local))
        for key in ("final_val_loss", "best_val_loss", "tokens_seen"):
            assert ours[key] == theirs[key], (run, key)


def overlaps(jobs: list[dict[str, str]]) -> list[bool]:
    """For consecutive jobs in start order: whether the later one started before the earlier one ended."""
    spans = sorted((datetime.fromisoformat(job["StartTime"]), datetime.fromisoformat(job["EndTime"])) for job in jobs)
    return [later[0] < earlier[1] for earlier, later in zip(spans, spans[1:])]


def test_training_job_resources_reach_the_scheduler(cluster_run):
    jobs = cluster_run["jobs"]
    kinds = "|".join(ATTENTION_KINDS)
    shaped = [job for job in jobs if re.search(rf"({kinds})-lr", job["Comment"])]  # plan.shaped.training_specs
    sweep = [job for job in jobs if job not in shaped]
    assert shaped and sweep
    for job, resources in [(job, SHAPED_RESOURCES) for job in shaped] + [(job, SWEEP_RESOURCES) for job in sweep]:
        assert job["MinMemoryNode"] == f"{resources['mem_mb']}M", job
        assert job["TimeLimit"] == f"00:{resources['runtime']:02d}:00", job
        assert job["NumCPUs"] == "1" and job["CPUs/Task"] == "1", job  # threads: 1
        # --gres (a shard) is a per-node request, --gpus (a whole GPU) a per-job one
        shares = resources.get("runs_per_gpu", 1) > 1
        assert (job.get("TresPerNode"), job.get("TresPerJob")) == (
            ("gres:shard:1", None) if shares else (None, "gres:gpu:1")
        ), job
    # sweep runs ran side by side on the one GPU, which two whole-GPU jobs never do
    assert any(overlaps(sweep)), sweep
    assert not any(overlaps(shaped)), shaped
    print("\nscontrol show job (a sweep and a shaped training job):")
    for job in (sweep[0], shaped[0]):
        keys = ("JobId", "JobState", "NumCPUs", "CPUs/Task", "MinMemoryNode", "TimeLimit", "TresPerNode", "TresPerJob")
        print(" ".join(f"{k}={job[k]}" for k in keys if k in job))


def test_profile_needs_no_accounting_database_and_no_account(cluster_run):
    # the premise: this cluster has no accounting database, so sacct cannot answer
    sacct = subprocess.run(["sacct", "--noheader"], capture_output=True, text=True)
    assert sacct.returncode != 0
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    assert profile["executor"] == "slurm-failfast" and profile["slurm-failfast-status-command"] == "squeue"
    log = cluster_run["log"]
    assert "Falling back to 'sacct'" not in log and "MinJobAge" not in log
    assert "accounting storage is disabled" not in log.lower()
    # the plugin's account warnings, which docs/scale-out.md explains; nothing else about accounts
    page = (REPO / "docs" / "scale-out.md").read_text()
    documented = re.findall(r"^> `(.+?)`", page, flags=re.M)
    assert len(documented) == 3
    account_lines = [line for line in log.splitlines() if "account" in line.lower()]
    assert account_lines and all(any(line.startswith(d.split("...")[0]) for d in documented) for line in account_lines)


def test_cancelled_training_job_is_retried_and_resumes_from_its_checkpoint(cluster_run):
    work = cluster_run["work"]
    reference = json.loads((work / RUN / "metrics.json").read_text())
    curve = (work / RUN / "curve.csv").read_text()
    for name in ("metrics.json", "curve.csv"):
        (work / RUN / name).unlink()

    def checkpoints() -> list[Path]:  # beside the run's folder, named by its run id (so by its spec)
        return list(work.glob(f"{RUN_CHECKPOINT}/checkpoint.pt"))

    def running_job() -> str | None:
        out = subprocess.run(["squeue", "--noheader", "--format=%i|%Z|%k|%T"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            job_id, workdir, comment, state = line.split("|")
            if workdir == str(work) and comment.startswith("rule_train_run") and state == "RUNNING":
                return job_id
        return None

    job = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--profile", "profiles/slurm", "--configfile", CONFIG, *FAST]
        + [f"{RUN}/metrics.json"],
        cwd=work,
        env=package_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.time() + 120
        while not checkpoints() and time.time() < deadline and job.poll() is None:
            time.sleep(0.05)
        (checkpoint,) = checkpoints()
        cancelled = running_job()
        assert cancelled, "the training job was not running when its first checkpoint appeared"
        subprocess.run(["scancel", cancelled], check=True)
        log, _ = job.communicate(timeout=300)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 0, log
    assert f"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED'" in log
    states = {j["JobId"]: j["JobState"] for j in train_jobs(work) if int(j["JobId"]) >= int(cancelled)}
    assert states[cancelled] == "CANCELLED" and list(states.values()).count("COMPLETED") == 1, states
    assert "resuming from step 50" in (work / contracts.log_path("runs", RUN_ID)).read_text()
    assert (work / RUN / "curve.csv").read_text() == curve
    resumed = json.loads((work / RUN / "metrics.json").read_text())
    for key in ("final_val_loss", "best_val_loss", "tokens_seen", "status"):
        assert resumed[key] == reference[key], key
    assert not checkpoint.parent.exists()


def test_a_status_query_that_keeps_failing_ends_the_run_with_a_clear_error(cluster_run, tmp_path):
    work = cluster_run["work"]
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "squeue").write_text("#!/bin/sh\necho 'squeue: error: Unable to contact slurm controller' >&2\nexit 1\n")
    (shim / "squeue").chmod(0o755)
    (work / RUN / "metrics.json").unlink()
    env = package_env()
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    args = ["--profile", "profiles/slurm", "--configfile", CONFIG, *FAST, "--slurm-failfast-status-attempts", "2"]
    start = time.time()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "snakemake", *args, f"{RUN}/metrics.json"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("snakemake still waiting 60 s after its status queries started failing")
    seconds = time.time() - start
    log = result.stdout + result.stderr
    message = (
        "SLURM status query ('squeue') failed in 2 checks in a row (status_attempts=2); giving up, 1 job(s) cancelled"
    )
    assert result.returncode != 0 and message in log.splitlines(), log
    # the job nobody watches any more is cancelled, not left running (the real squeue)
    squeue = ["squeue", "--noheader", "--states=PENDING,RUNNING", "--format=%Z"]
    left = subprocess.run(squeue, capture_output=True, text=True, check=True).stdout.split()
    assert str(work) not in left
    print(f"\nfailing status query: run ended after {seconds:.0f} s with: {message}")
