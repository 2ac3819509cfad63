"""The cluster tests submit jobs only to the SLURM scripts/cluster-up started, or to any SLURM when asked
(DEPTHWIDTH_CLUSTER_TESTS=1), and skip with the reason on one without an idle node or the `shard` gres
(issue 36, item 8). Against fake `sinfo` and `scontrol` commands: no scheduler is touched."""

from __future__ import annotations

import os
import stat

import cluster_guard
import pytest
from conftest import REPO

CLUSTER_UP_HEADER = (REPO / "scripts" / "cluster-up").read_text()


def fake_slurm(tmp_path, cluster: str, conf_first_line: str, state: str = "idle", gres: str = "gpu:1,shard:4"):
    """A PATH with fake `sinfo` and `scontrol` that describe one SLURM; the environment to call them in."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(f"{conf_first_line}\nClusterName={cluster}\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "sinfo": f'case "$*" in *%T*) echo {state};; *%G*) echo "{gres}";; esac',
        "scontrol": f'[ "$*" = "show config" ] && printf "ClusterName = {cluster}\\nSLURM_CONF = {conf}\\n"',
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    env = {key: value for key, value in os.environ.items() if key != cluster_guard.ENV}
    return env | {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"}


def test_cluster_up_writes_what_the_guard_recognises():
    assert f"ClusterName={cluster_guard.CLUSTER_NAME}\n" in CLUSTER_UP_HEADER
    assert f'cat >"$CONF" <<CONF\n{cluster_guard.CONF_HEADER}' in CLUSTER_UP_HEADER
    assert "shard:4" in CLUSTER_UP_HEADER


def test_the_cluster_that_cluster_up_started_runs_the_tests(tmp_path):
    env = fake_slurm(tmp_path, "depthwidth", "# Written by scripts/cluster-up: one node")
    assert cluster_guard.why_not(env) is None
    assert cluster_guard.why_not(env | {cluster_guard.ENV: "0"}) == "DEPTHWIDTH_CLUSTER_TESTS=0"


@pytest.mark.parametrize(
    "cluster,first_line",
    [("production", "# site config"), ("depthwidth", "# site config"), ("production", cluster_guard.CONF_HEADER)],
)
def test_any_other_slurm_is_left_alone_unless_asked(tmp_path, cluster, first_line):
    env = fake_slurm(tmp_path, cluster, first_line)
    reason = cluster_guard.why_not(env)
    assert reason is not None and reason.startswith("the SLURM here is not the one scripts/cluster-up starts")
    assert f"cluster {cluster!r}" in reason and "DEPTHWIDTH_CLUSTER_TESTS=1" in reason
    assert cluster_guard.why_not(env | {cluster_guard.ENV: "1"}) is None  # asked explicitly


@pytest.mark.parametrize("asked", ["", "1"])
def test_a_slurm_without_the_shard_gres_skips(tmp_path, asked):
    env = fake_slurm(tmp_path, "depthwidth", cluster_guard.CONF_HEADER, gres="gpu:1") | {cluster_guard.ENV: asked}
    assert cluster_guard.why_not(env) == (
        "this SLURM defines no shard gres (sinfo gres: gpu:1); scripts/cluster-up's node has gpu:1,shard:4"
    )


def test_no_idle_node_and_no_slurm_skip(tmp_path):
    env = fake_slurm(tmp_path, "depthwidth", cluster_guard.CONF_HEADER, state="down")
    assert cluster_guard.why_not(env) == "no idle SLURM node (sinfo: down): run scripts/cluster-up"
    bare = {"PATH": str(tmp_path / "nothing")}
    assert cluster_guard.why_not(bare) == "no SLURM here (sinfo not found): start one with scripts/cluster-up"
