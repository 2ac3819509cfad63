"""Whether the cluster tests (tests/test_cluster.py) may submit jobs to the SLURM they find, and why not.

They submit sbatch jobs, so they run only against the single-node SLURM that scripts/cluster-up started
(its slurm.conf says `ClusterName=depthwidth` and opens with the line `# Written by scripts/cluster-up`),
never against a scheduler of the user's that `sinfo` happens to reach (say, on a cluster's login node),
unless asked: DEPTHWIDTH_CLUSTER_TESTS=1 runs them against any SLURM, DEPTHWIDTH_CLUSTER_TESTS=0 never.
Either way the node must be idle and define the `shard` gres the tests' GPU-sharing jobs ask for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ENV = "DEPTHWIDTH_CLUSTER_TESTS"
CLUSTER_NAME = "depthwidth"  # scripts/cluster-up's ClusterName
CONF_HEADER = "# Written by scripts/cluster-up"  # the first line of the slurm.conf it writes


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=30, env=env)


def slurm_config(env: dict[str, str]) -> dict[str, str]:
    """`scontrol show config` as key -> value (empty when it fails)."""
    out = _run(["scontrol", "show", "config"], env)
    if out.returncode != 0:
        return {}
    pairs = (line.partition("=") for line in out.stdout.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, _, value in pairs}


def started_by_cluster_up(env: dict[str, str]) -> str | None:
    """None if the SLURM reached is the one scripts/cluster-up started; else what it is instead."""
    config = slurm_config(env)
    name, conf = config.get("ClusterName", "?"), config.get("SLURM_CONF", "")
    try:
        first = Path(conf).read_text(encoding="utf-8", errors="replace").partition("\n")[0] if conf else ""
    except OSError:
        first = ""
    if name == CLUSTER_NAME and first.startswith(CONF_HEADER):
        return None
    return f"cluster {name!r}, configured by {conf or 'an unknown slurm.conf'}"


def why_not(env: dict[str, str] | None = None) -> str | None:
    """Why the cluster tests cannot run here (None: they can)."""
    env = dict(os.environ if env is None else env)
    asked = env.get(ENV, "")
    if asked == "0":
        return f"{ENV}=0"
    if shutil.which("sinfo", path=env.get("PATH")) is None:
        return "no SLURM here (sinfo not found): start one with scripts/cluster-up"
    if asked != "1" and (other := started_by_cluster_up(env)):
        return (
            f"the SLURM here is not the one scripts/cluster-up starts ({other}): the cluster tests submit jobs, "
            f"so they run there only with {ENV}=1"
        )
    state = _run(["sinfo", "--noheader", "--format", "%T"], env)
    if state.returncode != 0 or not set(state.stdout.split()) & {"idle", "mixed"}:
        seen = (state.stdout + state.stderr).strip() or "nothing"
        return f"no idle SLURM node (sinfo: {seen}): run scripts/cluster-up"
    gres = _run(["sinfo", "--noheader", "--format", "%G"], env)
    if "shard" not in gres.stdout:
        seen = gres.stdout.strip() or "none"
        return f"this SLURM defines no shard gres (sinfo gres: {seen}); scripts/cluster-up's node has gpu:1,shard:4"
    return None
