"""The numeric path (numerics.py): what `python -m depthwidth` pins, that the libraries take it, what a run records."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import package_env
from depthwidth import numerics
from depthwidth.numerics import NATIVE, PINNED, Pin, decide, precision_of
from test_train import tiny_spec, write_data

X86 = frozenset({"sse2", "avx", "avx2", "fma", "avx512f"})
# where the pinned path can run at all (the tests of its effect need it)
PINNABLE = decide({}, platform.machine(), numerics.cpu_flags(), "fp32", np.__version__).path == PINNED
needs_x86 = pytest.mark.skipif(not PINNABLE, reason="the pinned path needs an x86-64 CPU with AVX2 and FMA")


def test_an_x86_cpu_with_avx2_is_pinned_by_every_control():
    pin = decide({}, "x86_64", X86, "fp32", "2.4.6")
    assert pin == Pin(PINNED, settings=numerics.controls("2.4.6"))
    assert pin.settings == {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_CBWR": "COMPATIBLE,STRICT",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
        "OPENBLAS_CORETYPE": "Haswell",
    }


def test_numpy_before_2_4_names_its_avx512_targets_by_feature():
    assert numerics.controls("1.26.4")["NPY_DISABLE_CPU_FEATURES"].split()[:2] == ["AVX512F", "AVX512CD"]
    assert numerics.controls("2.10.0rc1")["NPY_DISABLE_CPU_FEATURES"].startswith("X86_V4 ")
    assert numerics.controls("0.0") == numerics.controls("1.26.4")  # numpy absent: the older names, no error


@pytest.mark.parametrize(
    "environ, machine, flags, precision, reason",
    [
        ({}, "x86_64", X86, "bf16", "recipe.precision bf16: its matmuls need this CPU's bf16 units"),
        ({"DEPTHWIDTH_NUMERICS": "native"}, "x86_64", X86, "fp32", "DEPTHWIDTH_NUMERICS=native"),
        ({}, "aarch64", frozenset({"asimd"}), "fp32", "aarch64 CPU, not x86-64"),
        ({}, "x86_64", frozenset({"avx", "fma"}), "fp32", "a CPU without AVX2"),
        ({}, "x86_64", None, "fp32", "unknown CPU flags"),
    ],
)
def test_the_native_path_and_why(environ, machine, flags, precision, reason):
    assert decide(environ, machine, flags, precision, "2.4.6") == Pin(NATIVE, reason)


def test_a_control_set_to_another_value_is_overridden_and_kept():
    environ = {"MKL_CBWR": "AUTO", "ATEN_CPU_CAPABILITY": "AVX2", "OPENBLAS_CORETYPE": "SkylakeX"}
    pin = decide(environ, "x86_64", X86, "fp32", "2.4.6")
    assert pin.path == PINNED and pin.settings == numerics.controls("2.4.6")
    assert pin.overridden == {"MKL_CBWR": "AUTO", "OPENBLAS_CORETYPE": "SkylakeX"}  # avx2 is AVX2: no override


def test_an_unknown_switch_value_names_the_variable():
    with pytest.raises(ValueError, match=r"^DEPTHWIDTH_NUMERICS: 'fast' is not one of pinned, native$"):
        decide({"DEPTHWIDTH_NUMERICS": "fast"}, "x86_64", X86, "fp32", "2.4.6")
    result = subprocess.run(
        [sys.executable, "-m", "depthwidth", "validate-config", "config/ci.yaml"],
        env={**package_env(), "DEPTHWIDTH_NUMERICS": "fast"},
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stderr) == (
        1,
        "depthwidth: error: DEPTHWIDTH_NUMERICS: 'fast' is not one of pinned, native\n",
    )


def test_the_record_says_what_ran(monkeypatch):
    pinned = Pin(PINNED, settings=numerics.controls("2.4.6"), overridden={"MKL_CBWR": "AUTO"})
    monkeypatch.setattr(numerics, "_APPLIED", [pinned])
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    ran = numerics.record("AVX2", "cpu")
    assert (ran["path"], ran["machine_bound"], ran["reason"], ran["overridden"]) == (
        PINNED,
        False,
        "",
        {"MKL_CBWR": "AUTO"},
    )
    # pinned, but ATen reports another capability: the variable came too late, or was never read
    late = numerics.record("AVX512", "cpu")
    assert (late["path"], late["machine_bound"]) == (NATIVE, True)
    assert late["reason"] == "ATen runs AVX512, not AVX2 (ATEN_CPU_CAPABILITY 'avx2'; torch loaded first?)"
    gpu = numerics.record("AVX2", "cuda (bf16 autocast)", "bf16")
    assert (gpu["path"], gpu["machine_bound"], gpu["reason"]) == (
        PINNED,
        True,
        "runs on cuda (bf16 autocast): the device's own kernels",
    )
    bf16 = numerics.record("AVX2", "cpu (bf16 autocast)", "bf16")
    assert bf16["machine_bound"] and bf16["reason"].startswith("recipe.precision bf16 on the pinned path")


@pytest.mark.parametrize(
    "argv, precision",
    [
        (["train", "--spec-json", '{"recipe": {"precision": "bf16"}}', "--out", "x"], "bf16"),
        (["train", '--spec-json={"recipe": {"precision": "bf16"}}'], "bf16"),
        (["train", "--spec-json", '{"recipe": {}}'], "fp32"),
        (["train", "--spec-json", "not json"], "fp32"),  # the command reports it
        (["train", "--spec-json"], "fp32"),
        (["shaped-sim", "samples", "--spec-json", '{"recipe": 3}'], "fp32"),
        (["plan", "--configfile", "config/ci.yaml"], "fp32"),
    ],
)
def test_the_precision_of_a_command_line(argv, precision):
    assert precision_of(argv) == precision


def test_the_precision_of_a_spec_file(tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps({"recipe": {"precision": "bf16"}}))
    assert precision_of(["train", "--spec", str(tmp_path / "spec.json")]) == "bf16"
    assert precision_of(["train", "--spec", str(tmp_path / "missing.json")]) == "fp32"


def test_the_module_loads_neither_torch_nor_numpy():
    probe = "import sys, depthwidth.numerics; print(sorted({m.split('.')[0] for m in sys.modules}))"
    out = subprocess.run([sys.executable, "-c", probe], env=package_env(), capture_output=True, text=True, check=True)
    assert not {"torch", "numpy"} & set(json.loads(out.stdout.replace("'", '"')))


# --- the effect: a job started as the workflow starts it ----------------------------------------------------


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    tokens = (np.arange(30_000) % 50 + (rng.random(30_000) < 0.1) * 7).astype(np.uint16) % 64
    return write_data(tmp_path / "data", tokens[:25_000], tokens[25_000:])


def train_job(spec: dict, out: Path, **env: str) -> subprocess.CompletedProcess:
    """`python -m depthwidth train` as a rule runs it, with MKL's verbose mode on and `env` added."""
    return subprocess.run(
        [sys.executable, "-m", "depthwidth", "train", "--spec-json", json.dumps(spec), "--out", str(out)]
        + ["--threads", "1", "--no-progress"],
        env={**package_env(), "MKL_VERBOSE": "1", **env},
        capture_output=True,
        text=True,
        check=True,
    )


def mkl_branches(stdout: str) -> set[str]:
    """The CNR branches MKL's verbose lines report (`CNR:COMPATIBLE,STRICT`); OFF when not in CNR mode."""
    return {word.removeprefix("CNR:") for line in stdout.splitlines() for word in line.split() if word[:4] == "CNR:"}


@needs_x86
def test_a_job_runs_the_pinned_kernels_and_records_them(data_dir, tmp_path):
    result = train_job(tiny_spec(data_dir, steps=4), tmp_path / "run", MKL_CBWR="AUTO", ONEDNN_MAX_CPU_ISA="AVX2")
    assert mkl_branches(result.stdout) == {"COMPATIBLE,STRICT"}  # MKL took the branch, not the environment's
    warnings = [line for line in result.stderr.splitlines() if line.startswith("depthwidth: warning:")]
    assert warnings == [
        "depthwidth: warning: MKL_CBWR='AUTO' overridden with 'COMPATIBLE,STRICT', the pinned numeric path "
        "(numerics.py; DEPTHWIDTH_NUMERICS=native keeps this machine's kernels and numbers)"
    ]
    recorded = json.loads((tmp_path / "run" / "metrics.json").read_text())["numerics"]
    assert recorded == {
        "path": PINNED,
        "machine_bound": False,
        "reason": "",
        "controls": numerics.controls(np.__version__),
        "aten_capability": "AVX2",  # what ATen reports running, whatever the CPU has
        "overridden": {"MKL_CBWR": "AUTO"},
    }


@needs_x86
def test_numpy_and_openblas_take_their_avx2_kernels():
    """numpy's own report of its dispatched loops (no AVX-512 one on), and the kernels its OpenBLAS loaded."""
    probe = (
        "import sys, ctypes, json; from depthwidth import numerics; numerics.pin([]); import numpy as np\n"
        "from numpy._core._multiarray_umath import __cpu_features__ as on, __cpu_dispatch__ as targets\n"
        "lib = next(ctypes.CDLL(p) for p in open('/proc/self/maps').read().split() if 'openblas' in p)\n"
        "name = next(getattr(lib, s) for s in ('scipy_openblas_get_corename64_', 'scipy_openblas_get_corename', "
        "'openblas_get_corename') if hasattr(lib, s)); name.restype = ctypes.c_char_p\n"
        "print(json.dumps([[t for t in targets if on[t]], name().decode()]))"
    )
    out = subprocess.run([sys.executable, "-c", probe], env=package_env(), capture_output=True, text=True, check=True)
    targets, corename = json.loads(out.stdout)
    assert targets and not {"X86_V4", "AVX512_ICL", "AVX512_SPR", "AVX512F", "AVX512_SKX"} & set(targets)
    assert corename.lower() == "haswell"


@needs_x86
def test_onednn_takes_its_avx2_kernels():
    """No fp32 op of a run reaches oneDNN today (ONEDNN_VERBOSE=1 prints nothing); a convolution does."""
    probe = (
        "from depthwidth import numerics; numerics.pin([]); import torch\n"
        "with torch.no_grad(): torch.nn.Conv2d(4, 8, 3)(torch.randn(2, 4, 16, 16))"
    )
    env = {**package_env(), "ONEDNN_VERBOSE": "1"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True).stdout
    assert [line for line in out.splitlines() if ",isa:" in line] == ["onednn_verbose,v1,info,cpu,isa:Intel AVX2"]


def test_a_bf16_run_keeps_this_machines_kernels_and_says_so(data_dir, tmp_path):
    result = train_job(tiny_spec(data_dir, steps=2, precision="bf16"), tmp_path / "run")
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    native = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert metrics["numerics"]["path"] == NATIVE and metrics["numerics"]["machine_bound"] is True
    assert metrics["numerics"]["reason"] == "recipe.precision bf16: its matmuls need this CPU's bf16 units"
    assert metrics["numerics"]["aten_capability"] == native
    assert "COMPATIBLE" not in " ".join(mkl_branches(result.stdout))


def test_a_run_trained_in_process_is_not_pinned(data_dir, tmp_path):
    from depthwidth.train.loop import train

    metrics = train(tiny_spec(data_dir, steps=2), tmp_path / "run", threads=1, progress=False)
    assert metrics["numerics"]["path"] == NATIVE and metrics["numerics"]["machine_bound"] is True
    assert metrics["numerics"]["reason"] == "not started through `python -m depthwidth`"


@needs_x86
def test_a_simulations_summary_records_its_numerics(tmp_path):
    from depthwidth.spec import complete

    spec = complete("sample_spec", {"source": "finite", "block": "both", "n": 8, "samples": 20})
    argv = ["shaped-sim", "samples", "--spec-json", json.dumps(spec), "--out", str(tmp_path / "sim.csv")]
    argv += ["--summary", str(tmp_path / "summary.json")]
    subprocess.run([sys.executable, "-m", "depthwidth", *argv], env=package_env(), capture_output=True, check=True)
    recorded = json.loads((tmp_path / "summary.json").read_text())["numerics"]
    assert (recorded["path"], recorded["machine_bound"], recorded["aten_capability"]) == (PINNED, False, "AVX2")


@needs_x86
def test_the_depthwidth_script_pins_as_python_m_does():
    """The `depthwidth` console script is __main__.console, which pins before the command (it was cli.main: no pin)."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="depthwidth")
    code = (
        "import os, sys; from importlib.metadata import entry_points; sys.argv = ['depthwidth', '--version']; "
        "(ep,) = entry_points(group='console_scripts', name='depthwidth'); ep.load()(); "
        "print(os.environ.get('ATEN_CPU_CAPABILITY'))"
    )
    env = {k: v for k, v in package_env().items() if k not in numerics.controls(np.__version__)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert script.value == "depthwidth.__main__:console"
    assert out.splitlines()[-1] == "avx2"
