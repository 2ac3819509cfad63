"""Tables of the shaped-Transformer stage (docs/science.md §3.3, figures S1-S3) and their analysis.

Command `python -m depthwidth shaped-sim <table>` (module contract: `add_arguments`, `run`):
- `shaped-sim samples`: terminal samples of one setting (SDE or finite network) as a CSV with
  columns TERMINAL_COLUMNS; the pipeline concatenates them into the config's sde_terminal table.
- `shaped-sim trajectory`: mean correlation vs t (rank collapse, figure S2) for finite standard
  and shaped networks at one width, plus the SDE mean trajectory, columns TRAJECTORY_COLUMNS.

It imports torch only inside the commands. The figures compare the samples with scipy.stats
(`wasserstein_distance`, `ks_2samp`, `gaussian_kde`).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from depthwidth.columns import TERMINAL_COLUMNS, TRAJECTORY_COLUMNS
from depthwidth.io import write_json, write_text
from depthwidth.shapes import whole_layers

# ---------------------------------------------------------------- job specs


@dataclass(frozen=True)
class Setting:
    """What every simulation job reads (schema `$defs/setting` and `$defs/job`, shared with the config)."""

    samples: int
    T: float
    tau0: float
    gamma: float  # gam, not gam^2
    m: int
    rho0: float
    c_plus: float
    c_minus: float
    dt: float
    seed: int
    scheme: str
    blowup_norm: float
    method: str
    n_k: int | None


@dataclass(frozen=True)
class SampleSpec(Setting):
    """One `shaped-sim samples` job (schema `$defs/sample_spec`)."""

    source: str  # sde | finite
    block: str  # attention | mlp | both (a block = one step of 1/n)
    attention: str
    n: int | None


@dataclass(frozen=True)
class TrajectorySpec(Setting):
    """One `shaped-sim trajectory` job (schema `$defs/trajectory_spec`)."""

    n: int
    block: str
    points: int


def sample_spec(spec: dict) -> SampleSpec:
    """A checked SampleSpec from a complete JSON spec (the plan fills in every default); ValueError naming
    the key (`spec key 'n': ...`)."""
    from depthwidth.spec import require_complete

    job = SampleSpec(**require_complete("sample_spec", spec))
    _check_setting(job)
    if job.source == "sde":
        if job.attention != "shaped":
            raise ValueError("spec key 'attention': must be 'shaped' for source sde (the SDE is the shaped limit)")
        if job.n is not None:
            raise ValueError("spec key 'n': must be null for source sde")
    else:
        _check_width(job.n, job.T, job.m)
    return job


def trajectory_spec(spec: dict) -> TrajectorySpec:
    """A checked TrajectorySpec from a complete JSON spec; ValueError naming the key."""
    from depthwidth.spec import require_complete

    job = TrajectorySpec(**require_complete("trajectory_spec", spec))
    _check_setting(job)
    _check_width(job.n, job.T, job.m)
    return job


def _check_setting(job: SampleSpec | TrajectorySpec) -> None:
    """What the schema cannot say: bounds that depend on two keys."""
    from depthwidth.shaped.finite import check_attention

    check_attention(getattr(job, "attention", "shaped"), job.block)
    if not -1.0 / (job.m - 1) < job.rho0 < 1:
        raise ValueError(f"spec key 'rho0': must lie in (-1/(m-1), 1) = ({-1 / (job.m - 1):.3g}, 1), got {job.rho0}")


def _check_width(n: int | None, T: float, m: int) -> None:
    if n is None:
        raise ValueError("spec key 'n': required for finite networks")
    if n < m:
        raise ValueError(f"spec key 'n': must be at least m = {m}, got {n}")
    if whole_layers(T, n) is None:
        raise ValueError(f"spec key 'n': T * n must be a whole number of blocks, got T={T}, n={n}")


def _params(job: SampleSpec | TrajectorySpec):
    from depthwidth.shaped.sde import ShapeParams

    return ShapeParams(gamma=job.gamma, tau0=job.tau0, c_plus=job.c_plus, c_minus=job.c_minus)


def _csv(columns: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buf.getvalue()


def _fmt(x: float) -> str:
    """Float cell: 10 significant digits, empty for NaN."""
    return "" if not math.isfinite(x) else f"{x:.10g}"


def _head(source: str, attention: str, job: SampleSpec | TrajectorySpec) -> list[str]:
    """The setting columns of a table row (TERMINAL_COLUMNS and TRAJECTORY_COLUMNS begin with them): n for
    the finite networks, dt for the SDE and its drift-only ODE."""
    finite = source == "finite"
    n_cell, dt_cell = (str(job.n), "") if finite else ("", _fmt(job.dt))
    shape = [_fmt(job.tau0), _fmt(job.gamma), str(job.m), _fmt(job.rho0)]
    return [source, attention, job.block, n_cell, _fmt(job.T), dt_cell, *shape, str(job.seed)]


# ---------------------------------------------------------------- shaped-sim samples


def _simulate_sde(job, record_every: int):
    from depthwidth.shaped import sde

    V0 = sde.equicorrelated(job.m, job.rho0)
    paths = sde.Paths(job.T, job.dt, job.block, _params(job), job.samples, job.seed, job.blowup_norm, job.scheme)
    return sde.simulate(V0, paths, record_every=record_every, progress=True)


def _simulate_finite(job, attention: str, record_every: int):
    from depthwidth.shaped import finite, sde

    V0 = sde.equicorrelated(job.m, job.rho0)
    networks = finite.Networks(
        job.n, job.T, job.block, attention, _params(job), job.samples, job.seed, job.n_k, job.method, job.blowup_norm
    )
    return finite.simulate(V0, networks, record_every=record_every, progress=True)


def _ode_row(job: SampleSpec) -> list[str]:
    """The drift-only ODE's terminal correlation (the SDE without its noise, same V0 and step) as one row:
    the deterministic limit the SDE is set against."""
    from depthwidth.shaped import sde

    V = sde.drift_only(sde.equicorrelated(job.m, job.rho0), job.T, job.dt, job.block, _params(job))
    rho = float(sde.correlation(V)[0, 1])
    status = sde.OK if np.isfinite(rho) else sde.BLOWUP
    return [*_head("ode", job.attention, job), "0", _fmt(rho), sde.STATUS_NAMES[status]]


def terminal_samples(job: SampleSpec) -> tuple[list[list], dict]:
    """Simulate one setting; return CSV rows (TERMINAL_COLUMNS) and a summary dict. An SDE job adds one row,
    its drift-only ODE's."""
    import torch

    from depthwidth import numerics
    from depthwidth.shaped import sde

    start = time.perf_counter()
    if job.source == "sde":
        res = _simulate_sde(job, record_every=10**9)
        extra = {"dt_used": res.dt}
    else:
        res = _simulate_finite(job, job.attention, record_every=10**9)
        extra = {"method": job.method, "n_k": job.n_k or job.n}
    wall = time.perf_counter() - start
    status = res.status.numpy()
    rho = np.where(status == sde.OK, sde.correlation(res.V)[:, 0, 1].numpy(), np.nan)
    head = _head(job.source, job.attention, job)
    rows = [[*head, str(i), _fmt(float(r)), sde.STATUS_NAMES[int(s)]] for i, (r, s) in enumerate(zip(rho, status))]
    if job.source == "sde":
        rows.append(_ode_row(job))
    fractions = {name: float(np.mean(status == code)) for code, name in sde.STATUS_NAMES.items()}
    summary = {
        "wall_s": wall,
        "samples": job.samples,
        "status_fraction": fractions,
        "torch_threads": torch.get_num_threads(),
        "numerics": numerics.record(torch.backends.cpu.get_cpu_capability(), "cpu"),  # numerics.py
        **extra,
    }
    return rows, summary


def run_samples(job: SampleSpec, out: Path, summary_path: Path | None = None) -> int:
    """`shaped-sim samples`: write the terminal-sample CSV (and optional summary JSON) atomically."""
    from depthwidth.io import provenance

    rows, summary = terminal_samples(job)
    write_text(out, _csv(TERMINAL_COLUMNS, rows))
    if summary_path:
        write_json(summary_path, {**summary, **provenance(), "setting": asdict(job)})
    frac = summary["status_fraction"]
    print(
        f"{job.source} {job.block} n={job.n}: {job.samples} samples in {summary['wall_s']:.1f}s; "
        f"not_psd {frac['not_psd']:.2%}, blowup {frac['blowup']:.2%} -> {out}"
    )
    return 0


# ---------------------------------------------------------------- shaped-sim trajectory


def _trajectory_rows(source: str, attention: str, job: TrajectorySpec, times, rho_path) -> list[list]:
    """One row per recorded time: mean and standard error over the paths alive at that time."""
    rows = []
    head = _head(source, attention, job)
    for t, r in zip(times, rho_path):
        alive = r[np.isfinite(r)]
        mean = float(alive.mean()) if alive.size else math.nan
        sem = float(alive.std(ddof=1) / math.sqrt(alive.size)) if alive.size > 1 else math.nan
        rows.append(head + [_fmt(float(t)), _fmt(mean), _fmt(sem), str(alive.size), str(r.size)])
    return rows


def run_trajectory(job: TrajectorySpec, out: Path) -> int:
    """`shaped-sim trajectory`: mean correlation vs t for standard and shaped finite networks and the SDE."""
    from depthwidth.shaped import sde

    every = max(1, round(job.T * job.n) // job.points)
    rows = []
    for attention in ("standard", "shaped"):
        res = _simulate_finite(job, attention, record_every=every)
        rows += _trajectory_rows("finite", attention, job, res.times, res.rho_path)
    res = _simulate_sde(job, record_every=max(1, sde.n_steps_for(job.T, job.dt) // job.points))
    rows += _trajectory_rows("sde", "shaped", job, res.times, res.rho_path)
    write_text(out, _csv(TRAJECTORY_COLUMNS, rows))
    print(f"trajectory n={job.n} {job.block}: {len(rows)} rows -> {out}")
    return 0


# ---------------------------------------------------------------- CLI contract


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`python -m depthwidth shaped-sim {samples,trajectory} --spec-json '{...}' --out FILE`."""
    sub = parser.add_subparsers(dest="table", required=True)
    for name, schema, help_text in (
        ("samples", "sample_spec", "terminal samples of one setting (CSV)"),
        ("trajectory", "trajectory_spec", "mean correlation vs t"),
    ):
        command = sub.add_parser(name, help=help_text)
        command.add_argument("--spec-json", required=True, help=f"the job spec (schema $defs/{schema})")
        command.add_argument("--out", required=True, type=Path, help="output CSV path")
        command.add_argument("--threads", type=int, default=1, help="torch threads (1: the m x m algebra is fastest)")
        if name == "samples":
            command.add_argument("--summary", type=Path, default=None, help="also write status fractions and timing")


def run(args: argparse.Namespace) -> int:
    try:
        spec = json.loads(args.spec_json)
    except json.JSONDecodeError as err:
        raise ValueError(f"--spec-json: not valid JSON ({err})") from None
    if args.threads < 1:
        raise ValueError(f"--threads: must be >= 1, got {args.threads}")
    job = sample_spec(spec) if args.table == "samples" else trajectory_spec(spec)
    import torch

    torch.set_num_threads(args.threads)
    if args.table == "samples":
        return run_samples(job, args.out, args.summary)
    return run_trajectory(job, args.out)
