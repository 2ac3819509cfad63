"""`rate-scan`: each shape's peak learning rate, chosen by its own scouts (`sweep.lr_grid`).

A shape's candidate rates are the recipe's rate times a factor on the lattice 2^(k/2), k an integer
(steps of sqrt 2). One seed (the scouts') trains at the starting factors, in steps of 2; each round reads
every scout trained so far and either asks for more or chooses the rate every seed trains at:

- the best scout is the trained factor of least final validation loss among the runs that finished;
- at the lowest factor tried, the scan widens down one step of 2; at the highest, up one step of 2
  (never past `bounds`: there it stops, `at the lower bound` / `at the upper bound`, excess unknown);
- the cliff: a scout above the best that diverged, or whose loss lies more than `stall` (a fraction)
  above the best's, stalled after warm-up and is dropped. Between the best and a stalled neighbour two
  steps up the scan tries the lattice point between them; with the stalled point the next lattice point
  up (`below the cliff`), only the smooth side below is fitted: a parabola through the best and its two
  nearest scouts below (widening down for the second), whose vertex, if it lies below the best, is
  chosen as for an interior best; else the best lies within half a step below the cliff;
- otherwise the best is interior: a parabola in log2(factor) through ln(loss) of the best and its nearest
  scouts below and above; the chosen factor is the lattice point nearest its vertex.

The excess (% of the loss, >= 0) is how far the loss at the chosen factor lies above the fitted best:
a (x_chosen - x_vertex)^2 for a fitted vertex (at most a/16: the lattice's half step is 1/4 in log2);
for a best within half a step below the cliff, a bound: the smooth side is convex, so nothing in that
half step gains more than the descent of the secant from the scout below, continued to the cliff.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from depthwidth import contracts
from depthwidth.io import write_text

STEP = 2  # lattice indices in one step of the starting grid and of widening: a factor of 2
INTERIOR, LOWER_BOUND, UPPER_BOUND, BELOW_CLIFF, NONE_FINISHED = (
    "interior",
    "at the lower bound",
    "at the upper bound",
    "below the cliff",
    "no scout finished",
)


def lattice_factor(k: int) -> float:
    """The learning-rate factor of lattice index k: 2^(k/2)."""
    return 2.0 ** (k / 2)


def lattice_index(factor: float) -> int:
    """The lattice index of a factor 2^(k/2); ValueError if the factor is not on the lattice."""
    if not factor > 0:
        raise ValueError(f"{factor!r} is no positive factor")
    k = round(2 * math.log2(factor))
    if not math.isclose(lattice_factor(k), factor, rel_tol=1e-5):
        raise ValueError(f"{factor:g} is not a power of sqrt(2) (1, 1.41421, 2, 2.82843, 4, ...)")
    return k


@dataclass(frozen=True)
class Scout:
    """One scout: its lattice index, final validation loss (nats) and whether it finished (`ok`)."""

    k: int
    loss: float
    ok: bool


@dataclass(frozen=True)
class Step:
    """What a round of the scan decides: more scouts (`next`), or the factor the seeds train at."""

    done: bool
    why: str
    next: tuple[int, ...] = ()
    chosen: int | None = None  # lattice index
    vertex_log2: float = math.nan  # log2 factor of the fitted best
    excess_pct: float = math.nan  # ln-loss at the chosen factor above the fitted best, x100 (>= 0)
    stalled: tuple[int, ...] = ()


def _parabola(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Coefficients (a, b, c) of y = a x^2 + b x + c through three points."""
    (x0, y0), (x1, y1), (x2, y2) = points
    d01, d12 = (y1 - y0) / (x1 - x0), (y2 - y1) / (x2 - x1)
    a = (d12 - d01) / (x2 - x0)
    b = d01 - a * (x0 + x1)
    return a, b, y0 - a * x0 * x0 - b * x0


def next_step(scouts: list[Scout], bounds: tuple[int, int], stall: float) -> Step:
    """The next round of a scan from every scout trained so far (module docstring); `bounds` are the
    lowest and highest lattice index the scan may try."""
    lo, hi = bounds
    tried = {s.k: s for s in scouts}
    finished = [s for s in scouts if s.ok and math.isfinite(s.loss)]
    if not finished:  # every scout diverged: go down
        low = min(tried)
        return Step(False, NONE_FINISHED, (max(low - STEP, lo),)) if low > lo else Step(True, NONE_FINISHED, chosen=low)
    best = min(finished, key=lambda s: (s.loss, s.k))
    stalled = tuple(sorted(s.k for s in scouts if s.k > best.k and (not s.ok or not s.loss <= (1 + stall) * best.loss)))
    below = [s for s in finished if s.k < best.k]
    above = sorted(k for k in tried if k > best.k)
    if not below:
        if best.k > lo:
            return Step(False, INTERIOR, (max(best.k - STEP, lo),), stalled=stalled)
        return Step(True, LOWER_BOUND, chosen=best.k, stalled=stalled)
    if not above:
        if best.k < hi:
            return Step(False, INTERIOR, (min(best.k + STEP, hi),), stalled=stalled)
        return Step(True, UPPER_BOUND, chosen=best.k, stalled=stalled)
    lower = max(below, key=lambda s: s.k)
    x, x_low = best.k / 2, lower.k / 2
    y, y_low = math.log(best.loss), math.log(lower.loss)
    upper = above[0]
    if upper in stalled:
        if upper - best.k >= STEP:
            return Step(False, BELOW_CLIFF, (best.k + (upper - best.k) // 2,), stalled=stalled)
        return _below_cliff(best, sorted(below, key=lambda s: s.k), upper, min(tried), lo, stalled)
    a, b, c = _parabola([(x_low, y_low), (x, y), (upper / 2, math.log(tried[upper].loss))])
    vertex = -b / (2 * a)
    chosen = round(2 * vertex)
    excess = a * (chosen / 2 - vertex) ** 2
    return Step(True, INTERIOR, chosen=chosen, vertex_log2=vertex, excess_pct=100 * excess, stalled=stalled)


def _below_cliff(best: Scout, below: list[Scout], cliff: int, lowest: int, lo: int, stalled: tuple) -> Step:
    """The best scout with the stalled one half a step above it: the smooth side decides. A parabola
    through the best and its two nearest scouts below: if its vertex lies below the best, the lattice
    point nearest it, as for an interior best; else the best lies between the best scout and the cliff,
    and the secant from the scout below bounds what that half step could gain (module docstring).
    With one scout below, the scan first widens down for a second."""
    if len(below) < 2 and lowest > lo:
        return Step(False, BELOW_CLIFF, (max(lowest - STEP, lo),), stalled=stalled)
    x, y = best.k / 2, math.log(best.loss)
    if len(below) >= 2:
        a, b, _ = _parabola([(s.k / 2, math.log(s.loss)) for s in below[-2:]] + [(x, y)])
        if a > 0 and -b / (2 * a) < x:
            vertex = -b / (2 * a)
            chosen = round(2 * vertex)
            excess = 100 * a * (chosen / 2 - vertex) ** 2
            return Step(True, BELOW_CLIFF, chosen=chosen, vertex_log2=vertex, excess_pct=excess, stalled=stalled)
    x_low, y_low = below[-1].k / 2, math.log(below[-1].loss)
    descent = max(0.0, (y_low - y) / (x - x_low))  # the secant's fall per log2, continued up to the cliff
    return Step(True, BELOW_CLIFF, chosen=best.k, excess_pct=100 * descent * (cliff - best.k) / 2, stalled=stalled)


# ---------------------------------------------------------------- the command


def final_round(scan_id: str, results: Path = Path(contracts.RESULTS)) -> dict | None:
    """The record of a scan's last round (the one that chose), read from the results folder `results`;
    None if its rounds are not all there yet."""
    round_ = 0
    while (path := results / Path(contracts.rate_round_path(scan_id, round_)).relative_to(contracts.RESULTS)).is_file():
        record = json.loads(path.read_text())
        if record["done"]:
            return record
        round_ += 1
    return None


def scout_of(metrics_path: Path, k: int) -> Scout:
    """A scout from its run's metrics.json."""
    metrics = json.loads(Path(metrics_path).read_text())
    return Scout(k, float(metrics["final_val_loss"]), metrics["status"] == "ok")


def round_record(scan: dict, scouts: list[Scout], step: Step) -> dict:
    """What a round writes: the scan, every scout so far, and the step (factors beside lattice indices;
    an unknown number, null)."""
    fields = {key: None if isinstance(v, float) and not math.isfinite(v) else v for key, v in asdict(step).items()}
    record = {"scan": scan, "scouts": [asdict(s) for s in sorted(scouts, key=lambda s: s.k)], **fields}
    record["next_factors"] = [lattice_factor(k) for k in step.next]
    record["chosen_factor"] = None if step.chosen is None else lattice_factor(step.chosen)
    return record


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scan-json", required=True, help="the scan: its id, bounds (lattice indices) and stall")
    parser.add_argument(
        "--scout", action="append", default=[], metavar="K=PATH", help="a scout's lattice index and metrics.json"
    )
    parser.add_argument("--out", required=True, type=Path, help="this round's record (JSON)")


def run(args: argparse.Namespace) -> int:
    scan = json.loads(args.scan_json)
    scouts = []
    for item in args.scout:
        k, _, path = item.partition("=")
        scouts.append(scout_of(Path(path), int(k)))
    step = next_step(scouts, tuple(scan["bounds"]), scan["stall"])
    write_text(args.out, json.dumps(round_record(scan, scouts, step), indent=1, sort_keys=True) + "\n")
    what = (
        f"chose x{lattice_factor(step.chosen):g} ({step.why}, excess {step.excess_pct:.3g}%)"
        if step.done and step.chosen is not None
        else f"next {[f'x{lattice_factor(k):g}' for k in step.next]} ({step.why})"
    )
    print(f"{scan['id']}: {len(scouts)} scouts -> {what}")
    return 0
