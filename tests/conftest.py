"""Shared fixtures: the repository, the committed corpus slice, and small token shards made from it."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

# One BLAS and OpenMP thread a test process, as the workflow's jobs have at their default threads (1; snakemake sets
# the *_NUM_THREADS per job), before numpy or torch loads: the suite runs a worker per core (`-n auto`), and a second
# thread in each only contends with the other worker (docs/development.md, "Tests"). A test that wants more sets them.
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SLICE = REPO / "tests" / "data" / "corpus"
CI_CONFIG = REPO / "config" / "ci.yaml"
# Files a workflow copy needs; results/ and .snakemake/ stay behind.
WORKFLOW_FILES = ["Snakefile", "workflow", "config", "profiles", "envs", "tests/data"]
# Wall seconds of the session's workflow builds, printed at the end of every run (what CI pays for each).
BUILD_SECONDS: dict[str, float] = {}


def pytest_sessionfinish(session) -> None:
    if hasattr(session.config, "workeroutput"):  # an xdist worker: its builds go back to the controller
        session.config.workeroutput["build_seconds"] = dict(BUILD_SECONDS)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown under -p no:xdist
def pytest_testnodedown(node, error) -> None:
    BUILD_SECONDS.update(getattr(node, "workeroutput", {}).get("build_seconds", {}))


def pytest_terminal_summary(terminalreporter) -> None:
    if BUILD_SECONDS:
        terminalreporter.write_sep("=", "workflow builds")
        for name, seconds in BUILD_SECONDS.items():
            terminalreporter.write_line(f"{seconds:6.0f} s  {name}")


def package_env() -> dict[str, str]:
    """Environment in which `python -m depthwidth` imports this checkout, installed or not."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "workflow"), env.get("PYTHONPATH")]))
    return env


def run_snakemake(*args: str, cwd: Path = REPO, check: bool = False) -> subprocess.CompletedProcess:
    """Run snakemake from this interpreter's environment; output captured as text."""
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        env=package_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def plan_of(path: str | Path):
    """The plan of the config file at `path` (read and validated as the workflow reads it)."""
    from depthwidth.plan.config import read
    from depthwidth.plan.jobs import from_config

    return from_config(read(path))


def readable(job_id: str) -> str:
    """A run or simulation id without its spec digest: `L1-d46-h2-f184-s0-7977e3a056` -> `L1-d46-h2-f184-s0`."""
    name, _, digest = job_id.rpartition("-")
    assert name and len(digest) == 10, f"{job_id} does not end in a spec digest"
    return name


def job_id(ids, name: str) -> str:
    """The one id among `ids` whose readable part is exactly `name` (so `...-s0` never matches `...-lr0.5x-s0`)."""
    found = [job for job in ids if readable(job) == name]
    assert len(found) == 1, f"{len(found)} ids named {name} among {sorted(ids)}"
    return found[0]


def run_id(plan, name: str) -> str:
    """The full id (name and spec digest) of the plan's run whose readable name is `name`."""
    return job_id(plan.runs, name)


def simulation_id(plan, name: str) -> str:
    """The full id of the plan's simulation job whose readable name is `name` (`attention-n16`, `trajectory`)."""
    return job_id(plan.simulations, name)


def run_file(plan, name: str, file: str) -> str:
    """`results/runs/<run id>/<file>` of the plan's run named `name` (contracts.run_dir)."""
    from depthwidth import contracts

    return f"{contracts.run_dir(run_id(plan, name))}/{file}"


def copy_workflow(dest: Path) -> Path:
    """A fresh copy of the workflow (no results) in `dest`, to run it without touching the checkout."""
    for name in WORKFLOW_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="session")
def ci_build(tmp_path_factory) -> Path:
    """The workflow built on config/ci.yaml, once per session: under `pytest -n`, the first worker to ask builds it
    in the workers' common folder and the others wait for it (a lock). Read it; to change it, `cp -a` it first."""
    root = tmp_path_factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # pytest-xdist: .../pytest-N/gw0
    work, done = root / "ci-build", root / "ci-build.done"
    with open(root / "ci-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when a build fails
        if not done.exists():
            shutil.rmtree(work, ignore_errors=True)  # a build that failed in another worker
            start = time.time()
            run_snakemake("--cores", "2", "--configfile", "config/ci.yaml", cwd=copy_workflow(work), check=True)
            BUILD_SECONDS["local ci build (ci_build)"] = time.time() - start
            done.touch()
    return work


@pytest.fixture(scope="session")
def slice_data(tmp_path_factory) -> Path:
    """Token shards of the committed slice (text corpus, vocab 512), prepared once per session."""
    from depthwidth.data import tokens

    out = tmp_path_factory.mktemp("slice-data")
    data = {"corpus": "text", "paths": [str(SLICE)], "val_fraction": 0.25, "vocab_size": 512, "chunk_chars": 20000}
    tokens.prepare(data, out)
    return out
