"""Tables of the shaped-Transformer stage (SCIENCE.md 3.3, figures S1-S3) and their analysis.

Command `python -m depthwidth shaped-sim <table>` (module contract: `add_arguments`, `run`):
- `shaped-sim samples`: terminal samples of one setting (SDE or finite network) as a CSV with
  columns TERMINAL_COLUMNS; the pipeline concatenates them into results/tables/sde_terminal.csv.
- `shaped-sim trajectory`: mean correlation vs t (rank collapse, figure S2) for finite standard
  and shaped networks at one width, plus the SDE mean trajectory, columns TRAJECTORY_COLUMNS.

The analysis functions (`wasserstein1`, `ks_distance`, `kde`) use numpy only, and this module
imports torch only inside the commands, so figure code can import it cheaply.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import time

import numpy as np

from depthwidth.io import write_json, write_text

TERMINAL_COLUMNS = [
    "source",
    "attention",
    "block",
    "n",
    "T",
    "tau0",
    "gamma",
    "m",
    "rho0",
    "seed",
    "sample",
    "rho01",
    "status",
]
TRAJECTORY_COLUMNS = [
    "source",
    "attention",
    "block",
    "n",
    "T",
    "tau0",
    "gamma",
    "m",
    "rho0",
    "seed",
    "t",
    "mean_rho",
    "sem_rho",
    "alive",
    "samples",
]


# ---------------------------------------------------------------- analysis (numpy only)


def _clean_1d(x, name: str) -> np.ndarray:
    """Finite values of a 1-D sample; ValueError naming `name` if none are left."""
    arr = np.asarray(x, dtype=float).ravel()
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        raise ValueError(f"{name} has no finite values")
    return np.sort(arr)


def wasserstein1(x, y) -> float:
    """Wasserstein-1 distance between the empirical laws of 1-D samples x and y (NaNs dropped).

    W1 = integral |F_x(s) - F_y(s)| ds, computed exactly on the merged support.
    """
    x, y = _clean_1d(x, "x"), _clean_1d(y, "y")
    grid = np.sort(np.concatenate([x, y]))
    Fx = np.searchsorted(x, grid[:-1], side="right") / x.size
    Fy = np.searchsorted(y, grid[:-1], side="right") / y.size
    return float(np.sum(np.abs(Fx - Fy) * np.diff(grid)))


def ks_distance(x, y) -> float:
    """Kolmogorov-Smirnov distance sup_s |F_x(s) - F_y(s)| between 1-D samples (NaNs dropped)."""
    x, y = _clean_1d(x, "x"), _clean_1d(y, "y")
    grid = np.concatenate([x, y])
    Fx = np.searchsorted(x, grid, side="right") / x.size
    Fy = np.searchsorted(y, grid, side="right") / y.size
    return float(np.max(np.abs(Fx - Fy)))


def kde(samples, grid, bandwidth: float | None = None) -> np.ndarray:
    """Gaussian kernel density estimate of 1-D `samples` evaluated on `grid` (NaNs dropped).

    bandwidth: kernel standard deviation; default Scott's rule 1.06 sigma N^(-1/5) with
    sigma = min(std, IQR / 1.34). Returns densities with the shape of `grid`.
    """
    x = _clean_1d(samples, "samples")
    grid = np.asarray(grid, dtype=float)
    if bandwidth is None:
        iqr = np.subtract(*np.quantile(x, [0.75, 0.25]))
        sigma = min(np.std(x), iqr / 1.34) if iqr > 0 else np.std(x)
        bandwidth = 1.06 * sigma * x.size ** (-0.2) if sigma > 0 else 1e-3
    if not bandwidth > 0:
        raise ValueError(f"bandwidth must be positive, got {bandwidth}")
    u = (grid.ravel()[:, None] - x[None, :]) / bandwidth
    dens = np.exp(-0.5 * u**2).sum(axis=1) / (x.size * bandwidth * math.sqrt(2 * math.pi))
    return dens.reshape(grid.shape)


# ---------------------------------------------------------------- shared argument handling


def _add_setting_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--block", default="attention", help="attention, mlp or both (a block = one step of 1/n)")
    parser.add_argument("--T", type=float, default=1.0, help="terminal time T = depth / n")
    parser.add_argument("--tau0", type=float, default=2.0, help="temperature constant: tau = tau0 sqrt(n n_k)")
    parser.add_argument("--gamma", type=float, default=math.sqrt(0.5), help="residual branch weight gam (not gam^2)")
    parser.add_argument("--m", type=int, default=4, help="number of tokens")
    parser.add_argument("--rho0", type=float, default=0.3, help="initial pairwise correlation of the tokens")
    parser.add_argument("--c-plus", type=float, default=0.0, help="shaped ReLU: s_+ = 1 + c_plus / sqrt(n)")
    parser.add_argument("--c-minus", type=float, default=-1.0, help="shaped ReLU: s_- = 1 + c_minus / sqrt(n)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=2000, help="number of sample paths")
    parser.add_argument("--dt", type=float, default=0.005, help="SDE step upper bound (used: T / ceil(T / dt))")
    parser.add_argument("--scheme", default="euler", help="SDE scheme: euler or multiplicative (PSD-preserving)")
    parser.add_argument(
        "--blowup-norm",
        type=float,
        default=1e3,
        help="a path (SDE or finite) counts as blown up once some |V_ab| passes this",
    )
    parser.add_argument("--method", default="projected", help="finite sampler: projected (exact in law) or dense")
    parser.add_argument("--n-k", type=int, default=None, help="key dimension of the finite network (default n)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: the batched m x m algebra is fastest single-threaded)",
    )
    parser.add_argument("--summary", default=None, help="optional JSON path: status fractions, wall time, provenance")
    parser.add_argument("--out", required=True, help="output CSV path")


def _validate_setting(args: argparse.Namespace) -> None:
    """Cheap checks before any simulation; each error names its argument."""
    from depthwidth.finite import check_attention
    from depthwidth.sde import BLOCKS, SCHEMES

    if args.block not in BLOCKS:
        raise ValueError(f"--block must be one of {BLOCKS}, got {args.block!r}")
    check_attention(getattr(args, "attention", "shaped"), args.block)
    if not (math.isfinite(args.T) and args.T > 0):
        raise ValueError(f"--T must be positive and finite, got {args.T}")
    if not args.tau0 > 0:
        raise ValueError(f"--tau0 must be positive, got {args.tau0}")
    if not 0 <= args.gamma <= 1:
        raise ValueError(f"--gamma must lie in [0, 1], got {args.gamma}")
    if args.m < 2:
        raise ValueError(f"--m must be at least 2, got {args.m}")
    if not -1.0 / (args.m - 1) < args.rho0 < 1:
        raise ValueError(f"--rho0 must lie in (-1/(m-1), 1), got {args.rho0}")
    if args.samples < 1:
        raise ValueError(f"--samples must be positive, got {args.samples}")
    if not args.dt > 0:
        raise ValueError(f"--dt must be positive, got {args.dt}")
    if args.scheme not in SCHEMES:
        raise ValueError(f"--scheme must be one of {SCHEMES}, got {args.scheme!r}")
    if not args.blowup_norm > 0:
        raise ValueError(f"--blowup-norm must be positive, got {args.blowup_norm}")
    if args.method not in ("projected", "dense"):
        raise ValueError(f"--method must be projected or dense, got {args.method!r}")
    if args.n_k is not None and args.n_k < 1:
        raise ValueError(f"--n-k must be positive, got {args.n_k}")
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads must be positive, got {args.threads}")


def _validate_width(n, T: float, m: int, name: str = "--n") -> None:
    if n is None:
        raise ValueError(f"{name} is required for finite networks")
    if n < m:
        raise ValueError(f"{name} must be at least m = {m}, got {n}")
    if abs(round(T * n) - T * n) > 1e-6 * max(1.0, T * n):
        raise ValueError(f"{name}: T * n must be an integer number of blocks, got T={T}, n={n}")


def _params(args: argparse.Namespace):
    from depthwidth.sde import ShapeParams

    return ShapeParams(gamma=args.gamma, tau0=args.tau0, c_plus=args.c_plus, c_minus=args.c_minus)


def _csv(columns: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buf.getvalue()


def _fmt(x: float) -> str:
    """Float cell: 10 significant digits, empty for NaN."""
    return "" if not math.isfinite(x) else f"{x:.10g}"


# ---------------------------------------------------------------- shaped-samples


def add_samples_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `shaped-sim samples`."""
    parser.add_argument("--source", required=True, help="sde or finite")
    parser.add_argument("--attention", default="shaped", help="shaped or standard (finite only)")
    parser.add_argument("--n", type=int, default=None, help="width of the finite network (finite only)")
    _add_setting_arguments(parser)


def terminal_samples(args: argparse.Namespace) -> tuple[list[list], dict]:
    """Simulate one setting; return CSV rows (TERMINAL_COLUMNS) and a summary dict."""
    import torch

    from depthwidth import finite, sde

    V0 = sde.equicorrelated(args.m, args.rho0)
    p = _params(args)
    start = time.perf_counter()
    if args.source == "sde":
        res = sde.simulate(
            V0,
            args.T,
            args.dt,
            args.block,
            p,
            args.samples,
            args.seed,
            blowup_norm=args.blowup_norm,
            record_every=10**9,
            progress=True,
            scheme=args.scheme,
        )
        extra = {"dt_used": res.dt}
    else:
        res = finite.simulate(
            V0,
            args.n,
            args.T,
            args.block,
            args.attention,
            p,
            args.samples,
            args.seed,
            n_k=args.n_k,
            method=args.method,
            record_every=10**9,
            blowup_norm=args.blowup_norm,
            progress=True,
        )
        extra = {"method": args.method, "n_k": args.n_k or args.n}
    wall = time.perf_counter() - start
    rho = sde.correlation(res.V)[:, 0, 1].numpy()
    status = res.status.numpy()
    rho = np.where(status == sde.OK, rho, np.nan)
    n_cell = "" if args.source == "sde" else str(args.n)
    head = [
        args.source,
        args.attention,
        args.block,
        n_cell,
        _fmt(args.T),
        _fmt(args.tau0),
        _fmt(args.gamma),
        str(args.m),
        _fmt(args.rho0),
        str(args.seed),
    ]
    rows = [head + [str(i), _fmt(float(r)), sde.STATUS_NAMES[int(s)]] for i, (r, s) in enumerate(zip(rho, status))]
    fractions = {name: float(np.mean(status == code)) for code, name in sde.STATUS_NAMES.items()}
    summary = {
        "wall_s": wall,
        "samples": args.samples,
        "status_fraction": fractions,
        "torch_threads": torch.get_num_threads(),
        **extra,
    }
    return rows, summary


def run_samples(args: argparse.Namespace) -> int:
    """`shaped-sim samples`: write the terminal-sample CSV (and optional summary JSON) atomically."""
    if args.source not in ("sde", "finite"):
        raise ValueError(f"--source must be sde or finite, got {args.source!r}")
    _validate_setting(args)
    if args.source == "sde":
        if args.attention != "shaped":
            raise ValueError("--attention must be 'shaped' for --source sde (the SDE is the shaped limit)")
        if args.n is not None:
            raise ValueError("--n must not be given for --source sde")
    else:
        _validate_width(args.n, args.T, args.m)
    import torch

    from depthwidth.io import provenance

    if args.threads:
        torch.set_num_threads(args.threads)
    rows, summary = terminal_samples(args)
    write_text(args.out, _csv(TERMINAL_COLUMNS, rows))
    if args.summary:
        write_json(
            args.summary,
            {
                **summary,
                **provenance(),
                "setting": {k: v for k, v in vars(args).items() if k not in ("out", "summary")},
            },
        )
    frac = summary["status_fraction"]
    print(
        f"{args.source} {args.block} n={args.n}: {args.samples} samples in {summary['wall_s']:.1f}s; "
        f"not_psd {frac['not_psd']:.2%}, blowup {frac['blowup']:.2%} -> {args.out}"
    )
    return 0


# ---------------------------------------------------------------- shaped-trajectory


def add_trajectory_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `shaped-sim trajectory`."""
    parser.add_argument("--n", type=int, required=True, help="width of the finite networks")
    parser.add_argument("--points", type=int, default=32, help="recorded times per curve (besides t = 0)")
    _add_setting_arguments(parser)


def _trajectory_rows(source, attention, args, times, rho_path) -> list[list]:
    """One row per recorded time: mean and standard error over the paths alive at that time."""
    rows = []
    n_cell = "" if source == "sde" else str(args.n)
    head = [
        source,
        attention,
        args.block,
        n_cell,
        _fmt(args.T),
        _fmt(args.tau0),
        _fmt(args.gamma),
        str(args.m),
        _fmt(args.rho0),
        str(args.seed),
    ]
    for t, r in zip(times, rho_path):
        alive = r[np.isfinite(r)]
        mean = float(alive.mean()) if alive.size else math.nan
        sem = float(alive.std(ddof=1) / math.sqrt(alive.size)) if alive.size > 1 else math.nan
        rows.append(head + [_fmt(float(t)), _fmt(mean), _fmt(sem), str(alive.size), str(r.size)])
    return rows


def run_trajectory(args: argparse.Namespace) -> int:
    """`shaped-sim trajectory`: mean correlation vs t for standard and shaped finite networks and the SDE."""
    args.attention = "shaped"
    _validate_setting(args)
    if args.block == "mlp":
        raise ValueError("--block must contain attention (attention or both) for the rank-collapse trajectory")
    _validate_width(args.n, args.T, args.m)
    if args.points < 1:
        raise ValueError(f"--points must be positive, got {args.points}")
    import torch

    from depthwidth import finite, sde

    if args.threads:
        torch.set_num_threads(args.threads)
    V0 = sde.equicorrelated(args.m, args.rho0)
    p = _params(args)
    depth = round(args.T * args.n)
    every = max(1, depth // args.points)
    rows = []
    for attention in ("standard", "shaped"):
        res = finite.simulate(
            V0,
            args.n,
            args.T,
            args.block,
            attention,
            p,
            args.samples,
            args.seed,
            n_k=args.n_k,
            method=args.method,
            record_every=every,
            blowup_norm=args.blowup_norm,
            progress=True,
        )
        rows += _trajectory_rows("finite", attention, args, res.times, res.rho_path)
    steps = sde.n_steps_for(args.T, args.dt)
    res = sde.simulate(
        V0,
        args.T,
        args.dt,
        args.block,
        p,
        args.samples,
        args.seed,
        blowup_norm=args.blowup_norm,
        record_every=max(1, steps // args.points),
        progress=True,
        scheme=args.scheme,
    )
    rows += _trajectory_rows("sde", "shaped", args, res.times, res.rho_path)
    write_text(args.out, _csv(TRAJECTORY_COLUMNS, rows))
    print(f"trajectory n={args.n} {args.block}: {len(rows)} rows -> {args.out}")
    return 0


# ---------------------------------------------------------------- CLI contract


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`python -m depthwidth shaped-sim {samples,trajectory} ...`."""
    sub = parser.add_subparsers(dest="table", required=True)
    add_samples_arguments(sub.add_parser("samples", help="terminal samples of one setting (CSV)"))
    add_trajectory_arguments(sub.add_parser("trajectory", help="mean correlation vs t (CSV)"))


def run(args: argparse.Namespace) -> int:
    return run_samples(args) if args.table == "samples" else run_trajectory(args)
