"""scripts/gpu-check, the GPU acceptance script, on a machine without a GPU: what it says, the config
it runs and how it reads the benches and compares curves (the whole script: `scripts/gpu-check --device cpu`)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys

import pytest
from conftest import REPO, package_env
from depthwidth.plan import config as cfg
from depthwidth.plan import jobs as plan
from depthwidth.plan.runsheet import has_cuda_device

SCRIPT = REPO / "scripts" / "gpu-check"


@pytest.fixture(scope="module")
def gpu_check():
    loader = importlib.machinery.SourceFileLoader("gpu_check", str(SCRIPT))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("gpu_check", loader))
    sys.modules["gpu_check"] = module  # its dataclass looks its module up
    loader.exec_module(module)
    yield module
    del sys.modules["gpu_check"]


@pytest.mark.skipif(has_cuda_device(), reason="this machine has a GPU")
def test_without_cuda_it_says_so_in_one_line_and_exits_2():
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=package_env())
    assert result.returncode == 2 and result.stderr == ""
    assert result.stdout == "gpu-check: no CUDA device here (torch.cuda.is_available() is False); nothing checked\n"


def test_the_ci_copy_trains_every_run_in_bf16_compiled_and_is_a_valid_config(gpu_check, tmp_path):
    check = gpu_check.Check(tmp_path, "cuda", 16)
    path = check.work / gpu_check.scratch_workflow(check)
    for name in gpu_check.WORKFLOW_FILES:
        assert (check.work / name).exists(), name
    p = plan.from_config(cfg.read(path))
    assert p.runs and p.config["name"] == "ci-gpu"
    assert all(job.spec["recipe"]["precision"] == "bf16" for job in p.runs.values())
    assert all(job.spec["compile"] for job in p.runs.values() if job.tables[0].startswith("sweep_"))
    ci = plan.from_config(cfg.read(REPO / "config/ci.yaml"))
    # the same runs as ci, only their numerics changed (so their ids, which end in the spec's digest)
    by_name = {run_id.rsplit("-", 1)[0]: job for run_id, job in p.runs.items()}
    ci_by_name = {run_id.rsplit("-", 1)[0]: job for run_id, job in ci.runs.items()}
    assert sorted(by_name) == sorted(ci_by_name) and len(by_name) == len(p.runs)
    for name, job in by_name.items():
        sweep = job.tables[0].startswith("sweep_")  # the shaped training's recipe has no compile key
        changed = {"recipe": {"precision": "bf16"}, **({"compile": True} if sweep else {})}
        assert job.spec == cfg.merged(ci_by_name[name].spec, changed), name
    rehearsal = gpu_check.Check(tmp_path / "cpu", "cpu", 2)
    assert gpu_check.training_recipe(rehearsal) == {}


def test_the_benches_run_at_the_configs_smallest_and_largest_shapes(gpu_check):
    for config in gpu_check.BENCH_CONFIGS["cuda"]:
        smallest, largest = gpu_check.bench_shapes(config)
        assert smallest != largest
    assert gpu_check.bench_shapes("config/levine.yaml") == (
        "L1-d7-h1-f28",
        "L2-d204-h6-f816",
    )  # the literal block's N = 600 and 9.95e5 (depth 2's 999,804 tops depth 1's 996,192)


def test_it_reads_the_precision_table_out_of_bench_sweep(gpu_check):
    from depthwidth.benchmarks.sweep import PRECISION_HEADER

    text = "\n".join([
        "config/levine.yaml: 1 shape(s); torch 2.13.0", "", "device matmul peaks (H200): fp32 50 GFLOP/s",
        PRECISION_HEADER, "-" * len(PRECISION_HEADER),
        "L2-d354-h6-f1416       4   128   1     5    100,000     10.0%    300,000     30.0%     3.00x   2.90-3.10x",
        "USDT:2026-12-01 23:45:37 6193:6193 SyncActivityProfilerHandler.cpp:52] profiler_start",  # torch's, on stderr
        "token-weighted median bf16/fp32 step speed: 3.00x (above 1: bf16 is faster)",
    ])  # fmt: skip
    rows = gpu_check.precision_rows(text)
    assert rows[0] == PRECISION_HEADER and len(rows) == 2 and rows[1].startswith("L2-d354-h6-f1416")
    assert gpu_check.precision_rows("bench failed before its table") == []


def test_curves_compare_byte_for_byte_then_by_their_largest_loss_difference(gpu_check, tmp_path):
    a, b, c = (tmp_path / f"{name}.csv" for name in "abc")
    a.write_text("step,tokens,train_loss,val_loss\n0,0,6.0,6.1\n50,800,5.0,5.2\n")
    b.write_text(a.read_text())
    c.write_text("step,tokens,train_loss,val_loss\n0,0,6.0,6.1\n50,800,5.0,5.2003\n")
    assert gpu_check.curve_difference(a, b) == "exact"
    assert gpu_check.curve_difference(a, c) == "differs (largest loss difference 0.0003)"
    c.write_text("step,tokens,train_loss,val_loss\n0,0,6.0,6.1\n")
    assert gpu_check.curve_difference(a, c) == "differs (2 against 1 rows)"
