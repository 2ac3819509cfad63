"""What the second stage asks for (config `decide`, looks 2; the design: plan/second.py, docs/science.md 5.7).

After look 1 each sweep row has a decision (`claims.decide`): decided, undecidable at this protocol (its systematic
alone keeps it open: no seeds can decide it), or the least seeds per shape that decide it at look 2's level in 80% of
redraws, with the job-minutes they cost at the design's registered price (`plan.second.Price`). `allocate` turns these
into fresh seeds per shape, a deterministic function of the first stage's numbers: the rows that can be decided,
cheapest first (ties by claim id), each taken whole if what it adds (the seeds its shapes lack beyond those an earlier
row asked for) fits in what is left of the budget and no shape needs more than `most` fresh seeds, else passed over.
Rows share shapes: a shape asked for by two rows gets the larger count, once. Pure decisions returning frozen records;
the I/O and the CLI at the end (`python -m depthwidth second-stage`).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from depthwidth.claims.decide import Decision, read_decisions
from depthwidth.claims.verdicts import INCONCLUSIVE
from depthwidth.io import read_json, write_json
from depthwidth.plan.second import ASKED_KEY

# why a row asks what it asks (decisions.csv's `reason`)
DECIDED, UNDECIDABLE, NOISE_UNKNOWN, NO_COUNT, TOO_MANY, OVER_BUDGET, ASKED = (
    "decided",  # decided at look 1: final
    "undecidable",  # its systematic alone keeps it open: seeds cannot decide it
    "noise_unknown",  # one seed per shape: no noise to price seeds from
    "no_count",  # no seed count up to decide.most_seeds decides it in 80% of redraws
    "too_many_seeds",  # the count that would decide it needs more fresh seeds per shape than the design allows
    "over_budget",  # what it adds does not fit in what is left of the budget
    "asked",  # its shapes get the seeds it needs
)
REASONS = (DECIDED, UNDECIDABLE, NOISE_UNKNOWN, NO_COUNT, TOO_MANY, OVER_BUDGET, ASKED)
STOPPED = "stopped"  # decisions.csv: a look the row never reached (decided before it)


@dataclass(frozen=True)
class Ask:
    """One row's part of the second stage: why it asks what it asks, the seeds per shape its decision found (None:
    none), and the runs and job-minutes it added to the stage (0 unless it was asked for)."""

    claim: str
    reason: str
    seeds: int | None = None
    runs: int = 0
    job_minutes: float = 0.0


@dataclass(frozen=True)
class Allocation:
    """The second stage: each row's ask, the fresh seeds per shape (a first-stage run of the shape -> seeds), the
    job-minutes they take and the budget they were taken from."""

    asks: tuple[Ask, ...]
    shapes: Mapping[str, int] = field(default_factory=dict)
    job_minutes: float = 0.0
    budget: float = 0.0

    @property
    def runs(self) -> int:
        return sum(self.shapes.values())


def _reason(decision: Decision) -> str | None:
    """Why a row asks for nothing, where it does not ask on its merits; None for a row the ladder priced."""
    if decision.verdict != INCONCLUSIVE:
        return DECIDED
    if decision.undecidable:
        return UNDECIDABLE
    if not decision.noise_known:
        return NOISE_UNKNOWN
    return NO_COUNT if decision.seeds is None else None


def allocate(decisions: Sequence[Decision], budget: float, most: int) -> Allocation:
    """The fresh seeds per shape the rows `decisions` (look 1's) ask for within `budget` job-minutes, at most `most`
    per shape. A shape is named by its run of least seed (`decide.fit`), the same in every figure that reads it."""
    for d in decisions:
        bad = [run for run, m in zip(d.shape_runs, d.shape_minutes, strict=True) if not math.isfinite(m)]
        if d.verdict == INCONCLUSIVE and bad:
            raise ValueError(
                f"claim {d.claim}: shape {bad[0]} has no price (its table's tokens_seen, n_layer, train_flops)"
            )
    asks = {d.claim: Ask(d.claim, reason) for d in decisions if (reason := _reason(d))}
    have: dict[str, int] = {}  # shape -> fresh seeds asked so far
    minutes_of: dict[str, float] = {}
    spent = 0.0
    priced = sorted((d for d in decisions if d.claim not in asks), key=lambda d: (d.job_minutes, d.claim))
    for d in priced:
        want: dict[str, int] = {}
        for run, seeds, minutes in zip(d.shape_runs, d.shape_seeds, d.shape_minutes, strict=True):
            want[run] = max(want.get(run, 0), d.seeds - seeds)
            minutes_of.setdefault(run, minutes)
        if max(want.values(), default=0) > most:
            asks[d.claim] = Ask(d.claim, TOO_MANY, d.seeds)
            continue
        added = {shape: n - have.get(shape, 0) for shape, n in want.items() if n > have.get(shape, 0)}
        cost = sum(n * minutes_of[shape] for shape, n in added.items())
        if spent + cost > budget:
            asks[d.claim] = Ask(d.claim, OVER_BUDGET, d.seeds)
            continue
        have |= {shape: have.get(shape, 0) + n for shape, n in added.items()}
        spent += cost
        asks[d.claim] = Ask(d.claim, ASKED, d.seeds, sum(added.values()), cost)
    order = [d.claim for d in decisions]
    return Allocation(tuple(asks[c] for c in order), dict(sorted(have.items())), spent, float(budget))


# ---------------------------------------------------------------- the record: JSON


def to_json(allocation: Allocation, design: str) -> dict:
    record = asdict(allocation)
    return {"design": design, "asks": record["asks"], ASKED_KEY: record["shapes"], **_totals(allocation)}


def _totals(allocation: Allocation) -> dict:
    return {"runs": allocation.runs, "job_minutes": allocation.job_minutes, "budget": allocation.budget}


def from_json(record: Mapping) -> Allocation:
    """The allocation a `second-stage` file holds."""
    asks = tuple(Ask(**a) for a in record["asks"])
    return Allocation(asks, dict(record[ASKED_KEY]), float(record["job_minutes"]), float(record["budget"]))


def read(path: Path) -> tuple[Allocation, str]:
    """A second-stage file: its allocation and the digest of the design that made it."""
    record = read_json(path)
    keys = ("asks", ASKED_KEY, "job_minutes", "budget", "design")
    missing = [key for key in keys if key not in record] if isinstance(record, dict) else list(keys)
    if missing:  # another file's JSON
        raise ValueError(f"{path}: not a `second-stage` file (no {', '.join(missing)})")
    return from_json(record), str(record["design"])


# ---------------------------------------------------------------- the CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--decision", action="append", default=[], type=Path, help="a decide job's JSON (repeatable)")
    parser.add_argument("--budget", type=float, required=True, help="job-minutes the stage may take at most")
    parser.add_argument("--most", type=int, required=True, help="fresh seeds a shape may get at most")
    parser.add_argument("--design", required=True, help="the digest of the design (plan/second.py), recorded")
    parser.add_argument("--out", type=Path, required=True, help="the second stage's JSON")


def run(args: argparse.Namespace) -> int:
    decisions = list(read_decisions(args.decision).values())
    allocation = allocate(decisions, args.budget, args.most)
    write_json(args.out, to_json(allocation, args.design))
    for ask in allocation.asks:
        print(f"{ask.reason:>15}  {ask.claim}: {ask.runs} runs, {ask.job_minutes:.1f} job-minutes")
    print(f"second stage: {allocation.runs} runs, {allocation.job_minutes:.1f} of {allocation.budget:g} job-minutes")
    return 0
