"""`bench pack`: which shapes and process counts it measures, how it picks the count to use, a failing
process reported as such, and a two-process smoke run on CPU (speed itself is measured by the bench)."""

from __future__ import annotations

import time

import pytest
from conftest import REPO
from depthwidth.benchmarks import pack
from depthwidth.benchmarks import sweep as bench
from depthwidth.cli import main
from depthwidth.plan.config import read
from depthwidth.plan.jobs import from_config
from depthwidth.shapes import nonembedding


def _groups(name: str):
    return bench.group_shapes(from_config(read(REPO / "config" / name)))


def _n(group) -> int:
    return nonembedding(*(group.spec["model"][k] for k in ("n_layer", "d_model", "d_ff")))


def test_default_shapes_are_the_smallest_and_largest_of_those_that_share_a_gpu():
    groups = _groups("paper.yaml")  # runs up to N = 1e7 share a GPU eight at a time; larger ones do not
    shared = [g for g in groups if g.runs_per_gpu > 1]
    assert shared and len(shared) < len(groups) and {g.runs_per_gpu for g in shared} == {8}
    smallest, largest = pack.default_shapes(groups)
    assert _n(smallest) == min(map(_n, shared)) and _n(largest) == max(map(_n, shared))
    assert max(map(_n, shared)) <= 1e7 < max(map(_n, groups))


def test_default_shapes_fall_back_to_every_shape_where_none_share():
    groups = _groups("config.yaml")  # CPU: runs_per_gpu 1
    assert all(g.runs_per_gpu == 1 for g in groups)
    smallest, largest = pack.default_shapes(groups)
    assert (_n(smallest), _n(largest)) == (min(map(_n, groups)), max(map(_n, groups)))


def test_default_processes():
    assert pack.default_processes("cuda", 8, 16, 2) == [1, 2, 4, 8]
    assert pack.default_processes("cuda", 6, 16, 2) == [1, 2, 4, 6, 8]  # the config's count is measured too
    assert pack.default_processes("cpu", 1, 2, 1) == [1, 2]  # the jobs that fit side by side
    assert pack.default_processes("cpu", 1, 2, 4) == [1]


def test_parse_processes_refuses_what_is_not_a_count():
    assert pack.parse_processes("4, 1,2,4") == [1, 2, 4]
    for bad in ("0,1", "two", ""):
        with pytest.raises(ValueError, match="--processes"):
            pack.parse_processes(bad)


def test_best_count_is_the_fewest_processes_near_the_best():
    summed = {1: 100.0, 2: 190.0, 4: 200.0, 8: 150.0}
    assert pack.best_count(summed) == 2  # 190 is within 10% of 200
    assert pack.best_count(summed, within=0.0) == 4
    assert pack.best_count({1: 100.0, 2: 80.0}) == 1  # sharing that loses throughput is not used
    with pytest.raises(ValueError):
        pack.best_count({})


def test_a_failing_process_is_reported_and_the_others_stop_waiting():
    spec = dict(_groups("ci.yaml")[0].spec)
    spec["model"] = {**spec["model"], "d_model": 30, "n_head": 4}  # 30 channels do not split into 4 heads
    result = pack.measure(spec, threads=1, device="cpu", count=2, warmup=1, seconds=0.1)
    assert "d_model" in result["error"]


def test_a_killed_process_is_reported_and_the_others_stop_waiting():
    import multiprocessing
    import threading

    def kill_one():
        while not multiprocessing.active_children():
            time.sleep(0.05)
        multiprocessing.active_children()[0].kill()  # before it reaches the barrier (it is importing torch)

    killer = threading.Thread(target=kill_one)
    killer.start()
    result = {}
    spec = _groups("ci.yaml")[0].spec
    measuring = threading.Thread(  # a daemon, as are its processes: a hang fails the test, not the suite
        target=lambda: result.update(pack.measure(spec, threads=1, device="cpu", count=2, warmup=1, seconds=0.1)),
        daemon=True,
    )
    measuring.start()
    measuring.join(timeout=120)
    killer.join()
    assert result == {"error": "a process exited with code -9 and no report"}


def test_smoke_two_processes_on_cpu(capsys):
    argv = ["bench", "pack", "--configfile", str(REPO / "config" / "ci.yaml"), "--device", "cpu"]
    assert main([*argv, "--shapes", "L2-d32-h2-f128", "--processes", "1,2", "--seconds", "0.3", "--warmup", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("L2-d32-h2-f128 ")]
    assert [row[2] for row in rows] == ["1", "2"]  # one row per process count
    assert rows[0][5] == "1.00x" and all(float(row[4].replace(",", "")) > 0 for row in rows)
    assert "L2-d32-h2-f128: use " in out and "job(s) of 1 thread(s) fit these cores" in out
