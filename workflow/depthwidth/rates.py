"""`rate-scan`: each shape's peak learning rate, chosen by its own scouts (`sweep.lr_grid`).

A shape's candidate rates are the recipe's rate times a factor on the lattice 2^(k/2), k an integer
(steps of sqrt 2). One seed (the scouts') trains at the starting factors, in steps of 2; each round reads
every scout trained so far and either asks for more or chooses the rate every seed trains at:

- the best scout is the trained factor of least final validation loss among the runs that finished;
- at the lowest factor tried, the scan widens down one step of 2; at the highest, up one step of 2
  (never past `bounds`: there it stops, `at the lower bound` / `at the upper bound`, excess unknown);
- the cliff: a scout above the best that diverged, or whose loss lies more than `stall` (a fraction)
  above the best's, stalled after warm-up and is dropped. Between the best and a stalled neighbour two
  steps up the scan tries the lattice point between them (it places the cliff, and bounds the gain);
  with the stalled point the next lattice point up (`below the cliff`), only the smooth side below is
  fitted: a parabola through the best and its two nearest scouts below (widening down for the second);
- otherwise the best is interior: a parabola in log2(factor) through ln(loss) of the best and its nearest
  scouts below and above;
- the choice is the lattice point nearest the parabola's vertex, or the best scout where the smooth side
  still falls at it; but never within a factor 2 of the lowest stalled scout (MARGIN: the cliff moves
  seed by seed); a choice outside the scouts trained so far is scouted first;
- where that margin would put the choice below the best scout, the scan's confirmation seeds (`confirm`
  of them, from CONFIRM_SEED: seeds no sweep trains) first train at the best scout's rate, once: if one of them stalls
  there (diverges, or ends more than `stall` above the scout), the cliff reaches that rate for some seeds
  and the margin stands; if none does, that rate's point becomes the seeds' mean (the scout's loss alone is
  the least of noisy scouts, low) and the round is read again: a best scout still there is chosen (the
  margin measured to be unneeded), and one that moved keeps the margin.

The excess (% of the loss, >= 0) is how far ln(loss) at the chosen factor (the parabola's, between its
points; else the scout's) lies above the least the scouts allow below the cliff: the parabola's minimum,
or, where the smooth side still falls at the best scout, a bound: that side is convex, so no rate up to
the stalled scout gains more than the descent of the secant from the scout below, continued to it. For
an interior best chosen at its nearest lattice point that is a (x_chosen - x_vertex)^2, at most a/16.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from depthwidth import contracts
from depthwidth.io import write_text

STEP = 2  # lattice indices in one step of the starting grid and of widening: a factor of 2
# The chosen rate stays this many lattice indices (a factor 2) below the lowest stalled scout: the cliff moves
# seed by seed, and one seed's best just below it stalls others (the lr-grid probe, config/README.md). The
# learning-rate rule was fitted with the same margin (every shape at least 2x below its cliff).
MARGIN = 2
# The confirmation seeds are these and the next (`confirm` of them): seeds the sweeps do not train, so that a
# rate chosen because they trained at it does not select the losses of the seeds the rows read.
CONFIRM_SEED = 1000
INTERIOR, LOWER_BOUND, UPPER_BOUND, BELOW_CLIFF, NONE_FINISHED, CONFIRMING = (
    "interior",
    "at the lower bound",
    "at the upper bound",
    "below the cliff",
    "no scout finished",
    "confirming the best scout's rate",
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
    excess_pct: float = math.nan  # ln-loss at the chosen factor above the fitted best below the cliff, x100 (>= 0)
    # the same above the best the scouts allow at or below the ceiling (the margin below the cliff): what
    # the choice gives up among the rates it may take
    excess_stable_pct: float = math.nan
    stalled: tuple[int, ...] = ()
    confirm: int | None = None  # lattice index at which the confirmation seeds are to train (not done)
    confirmed: bool | None = None  # whether they all trained there; None: none were asked for


def _parabola(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Coefficients (a, b, c) of y = a x^2 + b x + c through three points."""
    (x0, y0), (x1, y1), (x2, y2) = points
    d01, d12 = (y1 - y0) / (x1 - x0), (y2 - y1) / (x2 - x1)
    a = (d12 - d01) / (x2 - x0)
    b = d01 - a * (x0 + x1)
    return a, b, y0 - a * x0 * x0 - b * x0


def next_step(
    scouts: list[Scout], bounds: tuple[int, int], stall: float, confirm: int = 0, confirmations: list[Scout] = ()
) -> Step:
    """The next round of a scan from every scout trained so far (module docstring); `bounds` are the
    lowest and highest lattice index the scan may try; `confirmations`: the runs of the scan's `confirm`
    confirmation seeds trained so far (0: the margin below a cliff always stands)."""
    confirmed = _confirmed(scouts, stall, confirmations) if confirm and confirmations else None
    # a scout stalled against the least loss a scout trained to: a seeds' mean (below) does not lift that bar
    least = min((s.loss for s in scouts if s.ok and math.isfinite(s.loss)), default=math.inf)
    # trained there: the seeds' mean at that rate, not its scout's loss alone (the least of noisy scouts is low)
    if confirmed:
        k = confirmations[0].k
        scouts = [_seeds_mean([s, *confirmations]) if s.k == k else s for s in scouts]
    step = _round(scouts, bounds, stall, least, confirm, confirmations, confirmed)
    return replace(step, confirmed=confirmed)


def _round(
    scouts: list[Scout],
    bounds: tuple[int, int],
    stall: float,
    least: float,
    confirm: int,
    confirmations: list[Scout],
    confirmed: bool | None,
) -> Step:
    """`next_step` on the scouts as it reads them (a confirmed rate's point the seeds' mean); a scout above the
    best that did not train within `stall` of `least` (the least loss a scout trained to) has stalled."""
    lo, hi = bounds
    tried = {s.k: s for s in scouts}
    finished = {s.k: s for s in scouts if s.ok and math.isfinite(s.loss)}
    if not finished:  # every scout diverged: go down
        low = min(tried)
        return Step(False, NONE_FINISHED, (max(low - STEP, lo),)) if low > lo else Step(True, NONE_FINISHED, chosen=low)
    best = min(finished.values(), key=lambda s: (s.loss, s.k))
    stalled = tuple(sorted(s.k for s in scouts if s.k > best.k and not _trained(s, least, stall)))
    below = sorted(k for k in finished if k < best.k)
    above = sorted(k for k in tried if k > best.k)
    if not below:
        if best.k > lo:
            return Step(False, INTERIOR, (max(best.k - STEP, lo),), stalled=stalled)
        return Step(True, LOWER_BOUND, chosen=best.k, stalled=stalled)
    if not above:
        if best.k < hi:
            return Step(False, INTERIOR, (min(best.k + STEP, hi),), stalled=stalled)
        return Step(True, UPPER_BOUND, chosen=best.k, stalled=stalled)
    if above[0] in stalled and above[0] - best.k >= STEP:  # where between them is the cliff?
        return Step(False, BELOW_CLIFF, (best.k + (above[0] - best.k) // 2,), stalled=stalled)
    if above[0] in stalled and len(below) < 2 and min(tried) > lo:  # the smooth side needs a second point
        return Step(False, BELOW_CLIFF, (max(min(tried) - STEP, lo),), stalled=stalled)
    fit = _fit(best, [finished[k] for k in below], tried[above[0]], above[0] in stalled)
    ceiling = min(stalled) - MARGIN if stalled else hi
    if confirm and ceiling < min(fit.choice, best.k):  # the margin would take the choice below the best scout
        if len(confirmations) < confirm:
            return Step(False, CONFIRMING, confirm=best.k, stalled=stalled)
        # one confirmation a scan: a best that moved to a rate the margin binds at keeps the margin
        if confirmed and confirmations[0].k == best.k:
            ceiling = best.k
    chosen = max(lo, min(fit.choice, ceiling))
    if not min(finished) <= chosen <= max(finished):
        return Step(False, BELOW_CLIFF, (chosen,), stalled=stalled)  # train it before reading its loss
    why = INTERIOR if fit.choice <= ceiling and above[0] not in stalled else BELOW_CLIFF
    at_choice = fit.log_loss(chosen, finished)
    excess = 100 * max(0.0, at_choice - fit.best_log_loss)
    falling = not math.isfinite(fit.vertex)  # the smooth side still falls at the best scout
    stable = fit.log_loss(ceiling, finished) if falling or fit.vertex > ceiling / 2 else fit.best_log_loss
    return Step(
        True,
        why,
        chosen=chosen,
        vertex_log2=fit.vertex,
        excess_pct=excess,
        excess_stable_pct=100 * max(0.0, at_choice - stable),
        stalled=stalled,
    )


def _trained(run: Scout, reference: float, stall: float) -> bool:
    """Whether a run trained: it finished, at most `stall` (a fraction) above the loss `reference`; else it
    stalled (or diverged)."""
    return run.ok and run.loss <= (1 + stall) * reference


def _confirmed(scouts: list[Scout], stall: float, confirmations: list[Scout]) -> bool:
    """Whether every confirmation seed trained at their rate: none diverged or ended more than `stall` above
    the scout there."""
    scout = next(s for s in scouts if s.k == confirmations[0].k)
    return all(_trained(c, scout.loss, stall) for c in confirmations)


def _seeds_mean(runs: list[Scout]) -> Scout:
    """One point for several seeds' runs at one lattice index: the geometric mean of their losses."""
    return Scout(runs[0].k, math.exp(sum(math.log(r.loss) for r in runs) / len(runs)), True)


@dataclass(frozen=True)
class _Fit:
    """The parabola in log2(factor) through ln(loss) of three scouts (`points`), the lattice index it
    chooses, its vertex (nan if it chose none) and the least ln(loss) it allows below the cliff."""

    points: tuple[tuple[float, float], ...]
    coefficients: tuple[float, float, float]
    choice: int
    vertex: float
    best_log_loss: float

    def log_loss(self, k: int, finished: dict[int, Scout]) -> float:
        """ln(loss) at lattice index k: the parabola's between its points, else the scout's own."""
        x = k / 2
        if self.points[0][0] <= x <= self.points[-1][0]:
            a, b, c = self.coefficients
            return a * x * x + b * x + c
        return math.log(finished[k].loss)


def _fit(best: Scout, below: list[Scout], upper: Scout, cliff: bool) -> _Fit:
    """The interior parabola (the best and its nearest scouts below and above), or, with a stalled scout
    above (`cliff`), the smooth side's: the best and its two nearest scouts below (module docstring)."""
    x, y = best.k / 2, math.log(best.loss)
    side = below[-2:] if cliff else below[-1:]
    points = tuple(sorted([(s.k / 2, math.log(s.loss)) for s in side] + [(x, y)]))
    if not cliff:
        points = (*points, (upper.k / 2, math.log(upper.loss)))
    if len(points) < 3:  # one scout below, at the lower bound: the secant alone
        (x_low, y_low), _ = points
        descent = max(0.0, (y_low - y) / (x - x_low))
        line = (0.0, -descent, y + descent * x)
        return _Fit(points, line, best.k, math.nan, y - descent * (upper.k - best.k) / 2)
    a, b, c = _parabola(list(points))
    vertex = -b / (2 * a) if a > 0 else math.nan
    if math.isfinite(vertex) and vertex < (x if cliff else points[-1][0]):
        return _Fit(points, (a, b, c), round(2 * vertex), vertex, c - b * b / (4 * a))
    # still falling at the best, with the cliff above: the best lies between the best scout and the
    # stalled one; the smooth side is convex, so the secant from the scout below bounds the gain
    (x_low, y_low) = points[-2]
    descent = max(0.0, (y_low - y) / (x - x_low))
    return _Fit(points, (a, b, c), best.k, math.nan, y - descent * (upper.k - best.k) / 2)


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


def round_record(scan: dict, scouts: list[Scout], step: Step, confirmations: list[Scout] = ()) -> dict:
    """What a round writes: the scan, every scout and confirmation run so far, and the step (factors beside
    lattice indices; an unknown number, null)."""
    fields = {key: None if isinstance(v, float) and not math.isfinite(v) else v for key, v in asdict(step).items()}
    record = {"scan": scan, "scouts": [asdict(s) for s in sorted(scouts, key=lambda s: s.k)], **fields}
    record["confirmations"] = [asdict(s) for s in sorted(confirmations, key=lambda s: (s.k, s.loss))]
    record["next_factors"] = [lattice_factor(k) for k in step.next]
    record["chosen_factor"] = None if step.chosen is None else lattice_factor(step.chosen)
    return record


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scan-json", required=True, help="the scan: its id, bounds (lattice indices), stall and confirm (seeds)"
    )
    parser.add_argument(
        "--scout", action="append", default=[], metavar="K=PATH", help="a scout's lattice index and metrics.json"
    )
    parser.add_argument(
        "--confirm",
        action="append",
        default=[],
        metavar="K=PATH",
        help="a confirmation seed's run: its lattice index and metrics.json",
    )
    parser.add_argument("--out", required=True, type=Path, help="this round's record (JSON)")


def run(args: argparse.Namespace) -> int:
    scan = json.loads(args.scan_json)
    scouts, confirmations = (
        [scout_of(Path(path), int(k)) for k, _, path in (a.partition("=") for a in given)]
        for given in (args.scout, args.confirm)
    )
    confirm = scan.get("confirm", 0)
    step = next_step(scouts, tuple(scan["bounds"]), scan["stall"], confirm, confirmations)
    record = round_record(scan, scouts, step, confirmations)
    write_text(args.out, json.dumps(record, indent=1, sort_keys=True) + "\n")
    if step.done and step.chosen is not None:
        what = f"chose x{lattice_factor(step.chosen):g} ({step.why}, excess {step.excess_pct:.3g}%)"
    elif step.confirm is not None:
        what = f"{confirm} confirmation seeds at x{lattice_factor(step.confirm):g} ({step.why})"
    else:
        what = f"next {[f'x{lattice_factor(k):g}' for k in step.next]} ({step.why})"
    print(f"{scan['id']}: {len(scouts)} scouts -> {what}")
    return 0
