"""The numeric path of every job: the same kernels, so the same numbers, on any x86-64 CPU with AVX2.

torch, numpy and their BLAS libraries each pick their kernels by the CPU's instruction set when they load,
and kernels for different instruction sets round differently: between an AMD EPYC and an Intel Xeon (both
AVX-512) the default run's final losses moved by up to 2.8% and 3 of 13 verdicts changed (issue 50).
`python -m depthwidth` (__main__.py) therefore sets each library's control before any of them loads:

- ATEN_CPU_CAPABILITY=avx2: ATen's vectorized kernels (softmax, layer norm, attention, the optimizer's
  foreach ops) and the C++ that torch.compile generates.
- MKL_CBWR=COMPATIBLE,STRICT: MKL, torch's BLAS (`torch.__config__.show()`: BLAS_INFO=mkl), so every
  fp32 matmul. MKL runs a named branch (AVX2, AVX512) on Intel CPUs only; on an AMD CPU it silently
  takes its AUTO branch (MKL_VERBOSE=1 says CNR:AUTO, and MKL_ENABLE_INSTRUCTIONS changes nothing there),
  so the one branch both vendors run is COMPATIBLE (SSE2 without the approximate rcpps/rsqrtps).
  STRICT keeps gemm bitwise the same whatever the thread count.
- ONEDNN_MAX_CPU_ISA=AVX2: oneDNN (bf16 matmuls, convolutions; ONEDNN_VERBOSE=1 shows no fp32 op of
  ours reaching it today, so this guards a future one).
- NPY_DISABLE_CPU_FEATURES: numpy's AVX-512 loops compute exp, log and power with SVML (other last bits
  than its AVX2 loops) and sort equal values in another order; the fits and claims read them.
- OPENBLAS_CORETYPE=Haswell: the AVX2 kernels of numpy's and scipy's OpenBLAS (lstsq and dot in the fits).

Threads stay as they are: each job's --threads, and the *_NUM_THREADS snakemake sets per job.

`pin` decides (`decide`, a pure function returning a frozen `Pin`) and applies; `record` is what a job's
metrics.json and a simulation's summary keep. The native path (the machine's own kernels, its own numbers)
is kept by a bf16 run (its matmuls need the CPU's bf16 units: AVX-512 BF16 or AMX), by DEPTHWIDTH_NUMERICS=
native, on a CPU without AVX2 and FMA and off x86-64. A control the environment already set to another
value is overridden, with a warning and the old value recorded: these variables are process-wide and are
set by environment scripts (oneAPI's setvars, conda activation, cluster modules) for other programs, and
a run that silently took the machine's kernels would carry the same run id and cache entry as a pinned
one while holding other numbers; DEPTHWIDTH_NUMERICS=native is the one explicit way out.

Importable without torch or numpy (it must run before either loads).
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

PINNED = "x86-avx2"  # the one path every x86-64 CPU with AVX2 runs
NATIVE = "native"  # the machine's own kernels: its own numbers
SWITCH = "DEPTHWIDTH_NUMERICS"  # `native` keeps the machine's kernels; unset or `pinned` pins
X86_MACHINES = ("x86_64", "amd64")
NEEDED_FLAGS = ("avx2", "fma")  # what the pinned kernels execute (OpenBLAS's Haswell kernels use FMA)

# numpy's dispatch targets above AVX2: numpy >= 2.4 groups them by x86-64 level, earlier versions by feature
NUMPY_AVX512 = {
    (2, 4): "X86_V4 AVX512_ICL AVX512_SPR",
    (0, 0): "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR",
}


def controls(numpy_version: str) -> dict[str, str]:
    """The variables of the pinned path and their values (numpy names its dispatch targets by version)."""
    major, minor, *_ = [int(re.match(r"\d*", part).group() or 0) for part in numpy_version.split(".")] + [0, 0]
    npy = next(names for since, names in NUMPY_AVX512.items() if (major, minor) >= since)
    return {
        "ATEN_CPU_CAPABILITY": "avx2",  # ATen's vectorized kernels (softmax, norms, attention, AdamW), inductor's C++
        "MKL_CBWR": "COMPATIBLE,STRICT",  # every fp32 matmul: the one MKL branch Intel and AMD CPUs both run
        "ONEDNN_MAX_CPU_ISA": "AVX2",  # bf16 matmuls, convolutions
        "NPY_DISABLE_CPU_FEATURES": npy,  # numpy's AVX-512 loops: SVML's exp, log and power, another sort order
        "OPENBLAS_CORETYPE": "Haswell",  # numpy's and scipy's OpenBLAS (the fits' lstsq): its AVX2 kernels
    }


@dataclass(frozen=True)
class Pin:
    """What a job's numerics are: the path, why it is native (empty when pinned), the variables set, and
    the values the environment had for them before (overridden)."""

    path: str
    reason: str = ""
    settings: dict[str, str] = field(default_factory=dict)
    overridden: dict[str, str] = field(default_factory=dict)


def decide(
    environ: Mapping[str, str], machine: str, cpu_flags: frozenset[str] | None, precision: str, numpy_version: str
) -> Pin:
    """The numeric path of a job at `precision` on this machine (`platform.machine()`, the CPU's flags or
    None where unknown) in `environ`; ValueError naming DEPTHWIDTH_NUMERICS if it has another value."""
    asked = environ.get(SWITCH, "") or "pinned"
    if asked not in ("pinned", NATIVE):
        raise ValueError(f"{SWITCH}: {asked!r} is not one of pinned, native")
    if asked == NATIVE:
        return Pin(NATIVE, f"{SWITCH}=native")
    if precision != "fp32":
        return Pin(NATIVE, f"recipe.precision {precision}: its matmuls need this CPU's bf16 units")
    if machine.lower() not in X86_MACHINES:
        return Pin(NATIVE, f"{machine} CPU, not x86-64")
    if cpu_flags is None:
        return Pin(NATIVE, "unknown CPU flags")
    missing = [flag.upper() for flag in NEEDED_FLAGS if flag not in cpu_flags]
    if missing:
        return Pin(NATIVE, f"a CPU without {' and '.join(missing)}")
    settings = controls(numpy_version)
    overridden = {
        name: environ[name]
        for name, value in settings.items()
        if name in environ and environ[name].strip().lower() != value.lower()
    }
    return Pin(PINNED, settings=settings, overridden=overridden)


def precision_of(argv: Sequence[str]) -> str:
    """The recipe.precision of the job spec a command line passes (`--spec-json JSON` or `--spec FILE`);
    fp32 when it passes none or one without it (a spec that cannot be read is the command's to report)."""
    for i, arg in enumerate(argv):
        name, _, inline = arg.partition("=")
        if name not in ("--spec-json", "--spec"):
            continue
        text = inline if inline else (argv[i + 1] if i + 1 < len(argv) else "")
        try:
            spec = json.loads(text if name == "--spec-json" else Path(text).read_text())
        except (OSError, ValueError):
            return "fp32"
        recipe = spec.get("recipe") if isinstance(spec, dict) else None
        return str(recipe.get("precision", "fp32")) if isinstance(recipe, dict) else "fp32"
    return "fp32"


def cpu_flags() -> frozenset[str] | None:
    """The CPU's feature flags from /proc/cpuinfo (Linux); None where there is none."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return None
    line = next((line for line in text.splitlines() if line.startswith("flags")), None)
    return frozenset(line.split(":", 1)[1].split()) if line else None


def _numpy_version() -> str:
    try:
        return metadata.version("numpy")
    except metadata.PackageNotFoundError:
        return "0.0"


_APPLIED: list[Pin] = []  # the pin this process runs on (set once, by `pin`)


def pin(argv: Sequence[str], environ: dict[str, str] | None = None) -> Pin:
    """Decide this job's numeric path and set its variables in `environ` (os.environ), warning on stderr
    for each one that had another value. Must run before torch or numpy loads."""
    environ = os.environ if environ is None else environ
    decided = decide(environ, platform.machine(), cpu_flags(), precision_of(argv), _numpy_version())
    for name, old in decided.overridden.items():
        print(
            f"depthwidth: warning: {name}={old!r} overridden with {decided.settings[name]!r}, the pinned numeric "
            f"path (numerics.py; {SWITCH}=native keeps this machine's kernels and numbers)",
            file=sys.stderr,
        )
    environ.update(decided.settings)
    _APPLIED[:] = [decided]
    return decided


def record(capability: str, device: str, precision: str = "fp32") -> dict:
    """What metrics.json (and a simulation's summary) records of the numerics a job ran on: the path, whether
    its numbers are this machine's own (machine_bound) and why, each control's value, ATen's capability
    (`torch.backends.cpu.get_cpu_capability()`) and the environment's overridden values. A job not started
    through `python -m depthwidth`, or whose ATen does not run AVX2 (torch loaded before the pin), is native.
    precision: a run's recipe.precision (a simulation's float64 has no autocast: fp32)."""
    applied = _APPLIED[0] if _APPLIED else Pin(NATIVE, "not started through `python -m depthwidth`")
    path, reason = applied.path, applied.reason
    if path == PINNED and capability != "AVX2":
        aten = os.environ.get("ATEN_CPU_CAPABILITY")
        path, reason = NATIVE, f"ATen runs {capability}, not AVX2 (ATEN_CPU_CAPABILITY {aten!r}; torch loaded first?)"
    if not device.startswith("cpu"):
        reason = f"runs on {device}: the device's own kernels"
    elif precision != "fp32" and path == PINNED:
        reason = f"recipe.precision {precision} on the pinned path: bf16 rounds by the CPU's bf16 units"
    return {
        "path": path,
        "machine_bound": bool(reason),
        "reason": reason,
        "controls": {name: os.environ.get(name) for name in controls(_numpy_version())},
        "aten_capability": capability,
        "overridden": dict(applied.overridden),
    }
