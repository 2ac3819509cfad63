"""`stalls`: how often seeds stall, and how flat each shape's rate curve is, in an lr_check table.

A stalled run sits on the unigram plateau (about 6.0 nats here) long after its seeds' siblings left it
and ends several % above them (docs/protocol-choices.md, "Stalls": its first layer's attention collapses at the
peak rate and swamps the residual stream). The flag is fixed before any pilot was read:

- a run stalled when its final loss lies more than STALL_EXCESS (3%) above the median of the other seeds
  of its shape at the same rate (diverged runs stall too);
- a shape's chosen rate here is the factor of least seed-mean loss; its seed sd there, in % of the mean;
- the arm's noise: the pooled sd over shapes at their chosen rates (root mean of the variances) against
  the median shape's sd; the target is a ratio of at most POOLED_OVER_MEDIAN (1.5);
- a shape's rate curve is flat when the factors next to its best whose seed-mean loss lies within FLAT
  (0.5%) of the best span at least a factor FLAT_SPAN (2) of rate.

`flag` marks each run of a sweep table (its columns stall_excess_pct and stalled: every figure and claim
reads both readings, with and without the stalled runs); `summarize` is the pure part (a frozen `Arm` per
table); `python -m depthwidth stalls TABLE [TABLE ...]` prints the comparison the pilot of issue 51 reads
(config/protocol/stall-*.yaml), the first table as the reference for the loss deltas.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

STALL_EXCESS = 0.03  # a run this far above the median of its shape's other seeds (same rate) stalled
FLAT = 0.005  # a rate within this of the best seed-mean loss is on the flat top of the curve
FLAT_SPAN = 2.0  # ... and the flat top must span this factor of rate
POOLED_OVER_MEDIAN = 1.5  # the pooled seed sd at the chosen rates may be at most this x the median shape's


def excess_over_others(losses: Sequence[float]) -> tuple[float, ...]:
    """Each run's loss over the median of the others' (a fraction; inf for a diverged run, nan alone)."""
    out = []
    for i, loss in enumerate(losses):
        others = [x for j, x in enumerate(losses) if j != i and math.isfinite(x)]
        if not others:
            out.append(math.nan)
        else:
            out.append(loss / statistics.median(others) - 1 if math.isfinite(loss) else math.inf)
    return tuple(out)


def stalled(losses: Sequence[float]) -> tuple[bool, ...]:
    return tuple(e > STALL_EXCESS for e in excess_over_others(losses))


SHAPE_KEYS = ("n_layer", "d_model", "n_head", "d_head", "d_ff", "lr_factor")  # one shape at one rate: its seeds


def seed_groups(rows: Sequence[dict]) -> list[list[int]]:
    """The indices of a sweep table's rows grouped by shape and rate (SHAPE_KEYS): each group one shape's seeds."""
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(tuple(float(row[key]) for key in SHAPE_KEYS), []).append(i)
    return list(groups.values())


def flag(rows: Sequence[dict]) -> list[tuple[float, bool]]:
    """Each sweep-table row's excess over the median of its shape's other seeds at its rate (%, inf for a run
    that did not finish, nan for a shape with one seed) and whether it stalled, in the rows' order."""
    out: list[tuple[float, bool]] = [(math.nan, False)] * len(rows)
    for members in seed_groups(rows):
        losses = [float(rows[i]["final_val_loss"]) if rows[i]["status"] == "ok" else math.inf for i in members]
        for i, excess in zip(members, excess_over_others(losses), strict=True):
            out[i] = (100 * excess, excess > STALL_EXCESS)
    return out


@dataclass(frozen=True)
class Point:
    factor: float
    losses: tuple[float, ...]  # by seed
    stalls: int

    @property
    def mean(self) -> float:
        return statistics.fmean(self.losses)

    @property
    def sd_pct(self) -> float:
        finite = [x for x in self.losses if math.isfinite(x)]
        return 100 * statistics.stdev(finite) / statistics.fmean(finite) if len(finite) > 1 else math.nan


@dataclass(frozen=True)
class Shape:
    name: str
    points: tuple[Point, ...]  # by factor

    @property
    def best(self) -> Point:
        return min(self.points, key=lambda p: p.mean if math.isfinite(p.mean) else math.inf)

    @property
    def flat_span(self) -> float:
        """Largest / smallest factor of the contiguous points around the best within FLAT of its mean."""
        i = self.points.index(self.best)
        top = self.best.mean * (1 + FLAT)
        lo = hi = i
        while lo > 0 and self.points[lo - 1].mean <= top:
            lo -= 1
        while hi < len(self.points) - 1 and self.points[hi + 1].mean <= top:
            hi += 1
        return self.points[hi].factor / self.points[lo].factor


@dataclass(frozen=True)
class Arm:
    name: str
    shapes: tuple[Shape, ...]

    @property
    def runs(self) -> int:
        return sum(len(p.losses) for s in self.shapes for p in s.points)

    @property
    def stalls(self) -> int:
        return sum(p.stalls for s in self.shapes for p in s.points)

    @property
    def stalls_at_best(self) -> int:
        return sum(s.best.stalls for s in self.shapes)

    @property
    def pooled_sd_pct(self) -> float:
        return math.sqrt(statistics.fmean(s.best.sd_pct**2 for s in self.shapes))

    @property
    def median_sd_pct(self) -> float:
        return statistics.median(s.best.sd_pct for s in self.shapes)

    @property
    def flat_shapes(self) -> int:
        return sum(s.flat_span >= FLAT_SPAN for s in self.shapes)

    @property
    def meets_target(self) -> bool:
        """Pooled sd within POOLED_OVER_MEDIAN of the median, and every shape's curve flat."""
        return self.pooled_sd_pct <= POOLED_OVER_MEDIAN * self.median_sd_pct and self.flat_shapes == len(self.shapes)


def summarize(name: str, rows: Sequence[dict]) -> Arm:
    """An lr_check table's rows (n_layer, d_model, d_ff, lr_factor, seed, final_val_loss, status) as an Arm."""
    by_shape: dict[tuple, dict[float, list]] = {}
    for row in rows:
        key = (int(row["n_layer"]), int(row["d_model"]), int(row["d_ff"]))
        loss = float(row["final_val_loss"]) if row["status"] == "ok" else math.inf
        by_shape.setdefault(key, {}).setdefault(float(row["lr_factor"]), []).append((int(row["seed"]), loss))
    shapes = []
    for (layers, width, d_ff), factors in sorted(by_shape.items()):
        points = []
        for factor, runs in sorted(factors.items()):
            losses = tuple(loss for _, loss in sorted(runs))
            points.append(Point(factor, losses, sum(stalled(losses))))
        shapes.append(Shape(f"L{layers} d{width} f{d_ff}", tuple(points)))
    return Arm(name, tuple(shapes))


# ---------------------------------------------------------------------------------------------
# Words and the command line


def report(arms: Sequence[Arm]) -> str:
    """The arms side by side (markdown), then each shape's curve; loss deltas against the first arm."""
    ref = {s.name: s.best.mean for s in arms[0].shapes}
    lines = [
        "| arm | runs | stalled (at the best rate) | pooled / median seed sd at the best rate | flat shapes "
        "| best loss vs first |",
        "|---|---|---|---|---|---|",
    ]
    for arm in arms:
        delta = statistics.fmean(100 * (s.best.mean / ref[s.name] - 1) for s in arm.shapes if s.name in ref)
        lines.append(
            f"| {arm.name} | {arm.runs} | {arm.stalls} ({arm.stalls_at_best}) | {arm.pooled_sd_pct:.2f}% / "
            f"{arm.median_sd_pct:.2f}% = {arm.pooled_sd_pct / arm.median_sd_pct:.1f}x | "
            f"{arm.flat_shapes} of {len(arm.shapes)} | {delta:+.2f}% |"
        )
    lines += ["", "| arm | shape | " + " | ".join(f"x{p.factor:g}" for p in arms[0].shapes[0].points) + " |"]
    lines.append("|---|---|" + "---|" * len(arms[0].shapes[0].points))
    for arm in arms:
        for s in arm.shapes:
            cells = [
                f"{p.mean:.3f} ({p.sd_pct:.1f}%{', ' + str(p.stalls) + ' stalled' if p.stalls else ''})"
                for p in s.points
            ]
            lines.append(f"| {arm.name} | {s.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tables", nargs="+", type=Path, help="sweep_lr_check.csv of each arm; the first is the reference"
    )


# what `stalls` and `tilt` read of an lr_check table (a sweep table: columns.SWEEP_COLUMNS); tilt reads `stalled` too
# where it is there
READ_COLUMNS = ("n_layer", "d_model", "d_ff", "lr_factor", "seed", "final_val_loss", "status")


def read_rows(path: Path) -> list[dict]:
    """An lr_check table's rows, as text; ValueError naming the file where it lacks READ_COLUMNS or has no run
    (else a KeyError or an empty mean, far from the file, said it)."""
    import csv

    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames or (), list(reader)  # the header read while the file is open
    missing = [column for column in READ_COLUMNS if column not in header]
    if missing:
        raise ValueError(f"{path}: not an lr_check table: no column {', '.join(missing)}")
    if not rows:
        raise ValueError(f"{path}: no runs (a header without rows)")
    return rows


def run(args: argparse.Namespace) -> int:
    print(report([summarize(path.parent.parent.name, read_rows(path)) for path in args.tables]))
    return 0
