"""A lock left in .snakemake/locks: the workflow says, before snakemake's own LockException and its advice to
`--unlock`, whether a snakemake process still runs in this folder (then --unlock would let two runs write the
same files) or none does (a killed run's lock, which --unlock removes) (issue 36, item 9). On a dry run of a
copy of the workflow, with a stand-in process named snakemake for the live case."""

from __future__ import annotations

import subprocess

import pytest
from conftest import copy_workflow, run_snakemake


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("locked"))
    (work / ".snakemake" / "locks").mkdir(parents=True)
    (work / ".snakemake" / "locks" / "0.output.lock").write_text("results/ci/claims.csv\n")
    return work


def notes(work) -> list[str]:
    result = run_snakemake("-n", "--configfile", "config/ci.yaml", cwd=work, check=True)
    return [line for line in result.stderr.splitlines() if line.startswith("depthwidth: .snakemake/locks")]


def test_a_lock_no_snakemake_holds_is_called_stale(locked):
    assert notes(locked) == [
        "depthwidth: .snakemake/locks holds a lock and no snakemake process runs in this folder on this machine: "
        "a killed run left it; if this run cannot lock the directory, `snakemake --unlock` removes it (check "
        "first that no run on another machine shares this folder)"
    ]


def test_a_lock_of_a_snakemake_running_here_says_wait_not_unlock(locked, tmp_path):
    fake = tmp_path / "snakemake"
    fake.write_text("#!/bin/sh\nsleep 120\n")
    fake.chmod(0o755)
    live = subprocess.Popen([str(fake)], cwd=locked)
    try:
        (note,) = notes(locked)
    finally:
        live.kill()
        live.wait()
    assert note.startswith(f"depthwidth: .snakemake/locks holds a lock of snakemake process {live.pid}, running")
    assert "wait for that one (or stop it) rather than `snakemake --unlock`" in note


def test_a_lock_whose_snakemake_was_killed_but_whose_jobs_still_train_says_wait(locked, tmp_path):
    """Issue 55, case 12: after `kill -9` of snakemake its jobs still train, and the note called the lock stale
    (so `--unlock` and a second run would write the same runs). A stand-in job: a `python -m depthwidth train`
    process in the folder."""
    import os
    import sys

    fake = tmp_path / "fake" / "depthwidth"
    fake.mkdir(parents=True)
    # a regular package: a namespace package (no __init__.py) loses to the installed depthwidth wherever it
    # stands on the path, and the real `train` exits at once on these arguments (the test then raced it)
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text("import time\ntime.sleep(120)\n")
    env = {**os.environ, "PYTHONPATH": str(fake.parent)}
    job = subprocess.Popen([sys.executable, "-m", "depthwidth", "train", "--spec-json", "{}"], cwd=locked, env=env)
    checker = subprocess.Popen([sys.executable, "-m", "depthwidth", "check"], cwd=locked, env=env)  # reads only
    try:
        (note,) = notes(locked)
    finally:
        for process in (job, checker):
            process.kill()
            process.wait()
    assert note == (
        "depthwidth: .snakemake/locks holds a lock and no snakemake process runs in this folder, but the jobs of a "
        f"killed one still do (python -m depthwidth, process {job.pid}): wait for them to end (or stop them) "
        "before `snakemake --unlock`, or two processes will write the same files"
    )
