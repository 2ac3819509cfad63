"""`rate-scan`: each shape's peak learning rate, chosen by its own scouts (`sweep.lr_grid`).

A shape's candidate rates are the recipe's rate times a factor on the lattice 2^(k/2), k an integer
(steps of sqrt 2). One seed (the scouts', `sweep.lr_grid.seed`: a seed no row trains) trains at the starting
factors, in steps of 2; each round reads every scout trained so far and either asks for more or chooses the
rate every seed trains at:

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
# seed by seed, and one seed's best just below it stalls others (docs/protocol-choices.md, "The learning-rate
# scan"). The learning-rate rule was fitted with the same margin (every shape at least 2x below its cliff).
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
    # the vertex's noise: one seed's scouts place it, so a chosen rate's expected loss above the true best gains
    # a Var(vertex) = vertex_factor_pct x sigma^2 (sigma: a scout's seed sd of ln(loss)), at most vertex_cap_pct (the
    # farthest the fitted points let the choice stray); nan where no vertex was fitted (`vertex_noise`)
    vertex_factor_pct: float = math.nan
    vertex_cap_pct: float = math.nan
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
    least = min((s.loss for s in scouts if _finished(s)), default=math.inf)
    # trained there: the seeds' mean at that rate, not its scout's loss alone (the least of noisy scouts is low)
    if confirmed:
        k = confirmations[0].k
        scouts = [_seeds_mean([s, *confirmations]) if s.k == k else s for s in scouts]
    step = _round(scouts, bounds, stall, least, confirm, confirmations, confirmed)
    if again := set(step.next) & {s.k for s in scouts}:  # the next round would read these scouts and decide the same
        raise AssertionError(f"rates: a round asks again for lattice indices {sorted(again)} it has read")
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
    finished = {s.k: s for s in scouts if _finished(s)}
    if not finished:  # every scout diverged: go down
        low = min(tried)
        return Step(False, NONE_FINISHED, (max(low - STEP, lo),)) if low > lo else Step(True, NONE_FINISHED, chosen=low)
    best = min(finished.values(), key=lambda s: (s.loss, s.k))
    # a scout below the best that did not finish bounds the scan from below as `bounds` do: asked for again, it
    # would be read as before, round after round; the scan reads and chooses only above it
    failed = [k for k in tried if k < best.k and k not in finished]
    if failed:
        lo = max(lo, max(failed) + 1)
        scouts = [s for s in scouts if s.k >= lo]
        tried, finished = {s.k: s for s in scouts}, {s.k: s for s in scouts if _finished(s)}
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
    factor, cap = vertex_noise(fit.points) if math.isfinite(fit.vertex) else (math.nan, math.nan)
    return Step(
        True,
        why,
        chosen=chosen,
        vertex_log2=fit.vertex,
        excess_pct=excess,
        excess_stable_pct=100 * max(0.0, at_choice - stable),
        vertex_factor_pct=factor,
        vertex_cap_pct=cap,
        stalled=stalled,
    )


def vertex_noise(points: tuple[tuple[float, float], ...]) -> tuple[float, float]:
    """How the scouts' seed noise moves the loss at the rate a parabola through `points` (log2 factor, ln loss)
    chooses: each point's ln(loss) off by sigma moves the vertex by its gradient g, so a choice at the fitted vertex
    lies a * Var(vertex) = a sigma^2 sum g^2 above the true best on average (a: the curvature). Returns (100 a sum
    g^2, the factor of sigma^2 in %, and 100 a d^2, d the farthest point from the vertex: a choice among the
    points' rates costs at most that). a and b are linear in the losses, so the vertex -b / 2a has the gradient
    (b a_j - a b_j) / 2a^2, a_j and b_j the parabola's through a unit loss at point j. First order in sigma / a:
    where the noise is large against the curvature the vertex wanders further, up to the cap."""
    a, b, _ = _parabola(list(points))
    vertex = -b / (2 * a)
    gradient = []
    for j in range(len(points)):
        a_j, b_j, _ = _parabola([(x, float(i == j)) for i, (x, _) in enumerate(points)])
        gradient.append((b * a_j - a * b_j) / (2 * a * a))
    farthest = max(abs(x - vertex) for x, _ in points)
    return 100 * a * sum(g * g for g in gradient), 100 * a * farthest**2


def _finished(run: Scout) -> bool:
    """Whether a run finished with a loss to read: one that diverged has none (`scout_of` reads it as nan)."""
    return run.ok and math.isfinite(run.loss)


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


# what the line of a damaged round says to do (a round deleted is not run again while what was built from it stands)
ADVICE = "`snakemake --forcerun rate_scan` runs the rounds again from their runs"


class RoundError(ValueError):
    """A round's file that cannot be read as a round: its message is one line naming the file (`path`), what
    is wrong with it and what to do (`reason`)."""

    def __init__(self, path: Path, problem: str):
        self.path, self.reason = Path(path), f"{problem}; {ADVICE}"
        super().__init__(f"{path}: {self.reason}")


ROUND_FIELDS = ("scan", "scouts", "confirmations", "done", "why", "next", "chosen", "confirm")


def read_round(path: Path, scan: dict | None = None) -> dict:
    """A round's record (`round_record`) from its file, its fields checked (`round_problem`) against the scan
    `scan` (the plan's spec of it; None: the one the record holds); RoundError naming the file if it is
    damaged: a round is recomputed from its scouts, so running it again loses nothing."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RoundError(path, f"not a readable round ({err})") from None
    if problem := round_problem(record, scan):
        raise RoundError(path, problem)
    return record


def round_problem(record: object, scan: dict | None = None) -> str | None:
    """Why `record` is no round of the scan `scan` (None: of the scan it records) that the workflow can read on:
    a field missing or of another kind, a lattice index outside the scan's bounds, or a round not done that
    asks for nothing; None if it is one."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if missing := [key for key in ROUND_FIELDS if key not in record]:
        return f"lacks the fields {missing}"
    if scan is not None and record["scan"] != scan:
        recorded, planned = (json.dumps(spec, sort_keys=True) for spec in (record["scan"], scan))
        return f"records the scan {recorded}, the plan's is {planned}"
    bounds = record["scan"].get("bounds") if isinstance(record["scan"], dict) else None
    if not (isinstance(bounds, list) and len(bounds) == 2 and all(map(_is_index, bounds))):
        return f"its scan's bounds {bounds!r} are not two lattice indices"
    lo, hi = bounds

    def index(value: object) -> bool:
        return _is_index(value) and lo <= value <= hi

    if not isinstance(record["done"], bool):
        return f"done {record['done']!r} is not true or false"
    for key in ("scouts", "confirmations"):
        runs = record[key]
        if not (isinstance(runs, list) and all(map(_is_run_record, runs)) and all(index(r["k"]) for r in runs)):
            return f"{key} is not a list of runs (k within the bounds {bounds}, loss, ok)"
    if twice := sorted({s["k"] for s in record["scouts"] if [t["k"] for t in record["scouts"]].count(s["k"]) > 1}):
        return f"scouts holds lattice index {twice[0]} more than once"
    if not (isinstance(record["next"], list) and all(map(index, record["next"]))):
        return f"next {record['next']!r} is not a list of lattice indices within the bounds {bounds}"
    for key in ("chosen", "confirm"):
        if record[key] is not None and not index(record[key]):
            return f"{key} {record[key]!r} is not a lattice index within the bounds {bounds}"
    if record["done"] and record["chosen"] is None:
        return "done, but chose no lattice index"
    if not record["done"] and not record["next"] and record["confirm"] is None:
        return "not done, and asks for no run"
    return None if scan is None else replay_problem(record, scan)


# the fields a round decides, in the order a difference is named
DECISION_FIELDS = ("done", "chosen", "next", "confirm", "why", "confirmed", "stalled", "excess_pct")


def replay_problem(record: dict, scan: dict) -> str | None:
    """Where a round's record differs from what the scan's rule (`replay`) decides on the scouts and
    confirmation runs it records: the first differing field, both values; None if nowhere."""
    expected = replay(record, scan)
    keys = [*DECISION_FIELDS, *sorted((expected.keys() | record.keys()) - set(DECISION_FIELDS))]
    for key in keys:
        if not same_json(record.get(key), expected.get(key)):
            recorded, rule = json.dumps(record.get(key)), json.dumps(expected.get(key))
            return f"{key} {recorded} recorded, the scan's rule gives {rule} on the scouts it records"
    return None


def same_json(a: object, b: object) -> bool:
    """Whether two JSON values are the same: floats to 1e-9, relative (a mean of logs summed in another order
    differs in its last bits), every other value exactly (a bool is no number)."""
    if isinstance(a, float) or isinstance(b, float):
        return type(a) in (int, float) and type(b) in (int, float) and math.isclose(a, b, rel_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(same_json, a, b))
    return type(a) is type(b) and a == b


def _is_index(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_run_record(run: object) -> bool:
    """Whether `run` is a scout's record: an index, `ok`, and a loss (positive where it finished; null, or any
    number, for a run that did not)."""
    if not (isinstance(run, dict) and set(run) == {"k", "loss", "ok"}):
        return False
    loss, number = run["loss"], type(run["loss"]) in (int, float)
    if run["ok"] is True:
        return _is_index(run["k"]) and number and math.isfinite(loss) and loss > 0
    return _is_index(run["k"]) and run["ok"] is False and (loss is None or number)


def read_rounds(scan_id: str, results: Path = Path(contracts.RESULTS), scan: dict | None = None) -> list[dict]:
    """The rounds of a scan the workflow reads, from the results folder `results`: each in order up to the first
    that chose (later ones, left by an earlier run, are no part of it) or the first not there yet;
    RoundError naming a damaged one (`read_round`, against `scan`)."""
    records, round_ = [], 0
    while True:
        path = results / Path(contracts.rate_round_path(scan_id, round_)).relative_to(contracts.RESULTS)
        try:
            records.append(read_round(path, scan))
        except FileNotFoundError:
            return records
        if records[-1]["done"]:
            return records
        round_ += 1


def final_round(scan_id: str, results: Path = Path(contracts.RESULTS), scan: dict | None = None) -> dict | None:
    """The record of a scan's round that chose (`read_rounds`); None if its rounds have not chosen yet."""
    records = read_rounds(scan_id, results, scan)
    return records[-1] if records and records[-1]["done"] else None


def scout_of(metrics_path: Path, k: int) -> Scout:
    """A scout from its run's metrics.json file (`scout_from`)."""
    return scout_from(json.loads(Path(metrics_path).read_text()), k)


def scout_from(metrics: dict, k: int) -> Scout:
    """A scout from its run's metrics: a run that did not finish (`diverged`, whose final_val_loss is null) has
    no loss to read, nan."""
    loss = metrics["final_val_loss"]
    ok = metrics["status"] == "ok" and type(loss) in (int, float) and math.isfinite(loss)
    return Scout(k, float(loss) if ok else math.nan, ok)


def runs_of(record: dict, key: str) -> list[Scout]:
    """The scouts (`key` "scouts") or confirmation runs ("confirmations") a round records; null loss as nan."""
    return [Scout(r["k"], math.nan if r["loss"] is None else float(r["loss"]), r["ok"]) for r in record[key]]


def run_records(runs: list[Scout]) -> list[dict]:
    """Runs as a round records them: by lattice index, then loss (a run without one, null, last)."""
    order = sorted(runs, key=lambda s: (s.k, not math.isfinite(s.loss), s.loss if math.isfinite(s.loss) else 0))
    return [{"k": s.k, "loss": s.loss if math.isfinite(s.loss) else None, "ok": s.ok} for s in order]


def round_record(scan: dict, scouts: list[Scout], step: Step, confirmations: list[Scout] = ()) -> dict:
    """What a round writes: the scan, every scout and confirmation run so far, and the step (factors beside
    lattice indices; an unknown number, null)."""
    fields = {key: None if isinstance(v, float) and not math.isfinite(v) else v for key, v in asdict(step).items()}
    record = {"scan": scan, "scouts": run_records(scouts), **fields, "confirmations": run_records(confirmations)}
    record["next_factors"] = [lattice_factor(k) for k in step.next]
    record["chosen_factor"] = None if step.chosen is None else lattice_factor(step.chosen)
    return record


def replay(record: dict, scan: dict) -> dict:
    """The record the round `record` should be: `round_record` of the scan's rule (`next_step`) on the scouts
    and confirmation runs it records."""
    scouts, confirmations = runs_of(record, "scouts"), runs_of(record, "confirmations")
    step = next_step(scouts, tuple(scan["bounds"]), scan["stall"], scan.get("confirm", 0), confirmations)
    return json.loads(json.dumps(round_record(scan, scouts, step, confirmations)))  # as its file reads back


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
