"""What would decide an inconclusive row, from the row's own procedure (issue 53, item 1).

A row's verdict is its rule run on its figure's rows, and the figure's rows are computed from sweep tables. To ask
what k seeds per shape would give, the tables are redrawn at k seeds per shape from the noise of their own shapes,
and the same figure code and the same rule (`judging.judged`, within the learning-rate systematic) run on each
redraw. The noise model, fitted on the tables as built:
- a shape (one shape at one rate: `stalls.seed_groups`) keeps its healthy centre, the mean ln(loss) of its
  finished, unstalled seeds: the plug-in truth;
- a healthy seed lies about it with the shape's moderated sd (`fits.moderated_variances` over the shapes of the
  tables, unstalled seeds, as the figures' intervals use them);
- a seed stalls with the tables' stall fraction (flagged runs over finished runs), its ln excess drawn from those of
  the stalled runs; the redraw is flagged again as `sweep-table` flags (`stalls.flag`);
- each shape's learning-rate excess (`lr_excess_pct`, the systematic) is the shape's as built: seeds do not shrink
  it, since it comes from the scouts that chose the rate.
A shape that two tables share (one run, trained once) is redrawn once and appears in both. The noci rows grow
otherwise (`GROWTHS`: each its own fit and redraw, below): the entropy row by seeds of each attention kind at its
top rate, the SDE row by k x the samples of each sample job, redrawn part by part.

`decide` runs a ladder of seed counts, `sims` redraws each, and reports the least count at which the row decides
(holds or does not hold) in at least `POWER` of the redraws, with the runs and job-minutes it adds (each fresh run
or sample job at the design's registered price, `plan.second.Price`: from the tables' tokens, layers and FLOPs, or
samples and steps, never from measured time, so that every machine asks for the same fresh jobs). A row that stays
inconclusive on a redraw with the noise taken out (`NOISELESS`: every sd x 1e-3, no stalls) is `undecidable` at
this protocol: more seeds cannot decide it, only another design (more N values, other shapes) or a smaller
systematic. Only seeds are priced; N values are not.
Pure functions, then the CLI: `python -m depthwidth decide results/<config>/tables`.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits, stalls, tilt
from depthwidth.claims import judging
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, Need, need
from depthwidth.columns import DECIDE_COLUMNS, LR_CHECK
from depthwidth.contracts import unstalled_path
from depthwidth.io import read_json, write_json, write_text
from depthwidth.plan.second import ENTROPY_FIGURE, SDE_FIGURE, Price, default_design
from depthwidth.plots.shaped_sde_convergence import FUNCTIONALS
from depthwidth.spec import load_schema

POWER = 0.8  # a count decides a row when at least this fraction of its redraws decide it
_KNOBS = load_schema()["properties"]["decide"]["properties"]  # the config's `decide` block: its defaults
SIMS = _KNOBS["sims"]["default"]  # redraws per seed count
MAX_SEEDS = _KNOBS["most_seeds"]["default"]  # seeds per shape past which the ladder stops
NOISELESS = 1e-3  # the sd factor of the redraw that asks whether seeds could decide the row at all
LADDER = (1, 2, 3, 5, 8)  # seeds added to the seeds in hand, then doublings of what is in hand, up to MAX_SEEDS
PRICE = default_design().price  # what a fresh run or sample job is priced at where no config says (the schema's)


@dataclass(frozen=True)
class Shape:
    """One shape at one rate across the tables: its healthy centre and sd of ln(loss), its rows as built (the first
    stands for the shape's columns), the minutes one more of it is priced at and the run that names it."""

    key: tuple[float, ...]
    centre: float
    sd: float
    template: Mapping[str, object]
    seeds: int
    minutes: float
    run: str = ""  # the run that names the shape: its least seed's, the same in every figure that reads it


@dataclass(frozen=True)
class Noise:
    """The tables' noise model: every shape, the stall chance of a seed, and the ln excesses a stall draws from."""

    shapes: tuple[Shape, ...]
    stall_chance: float
    stall_excess: tuple[float, ...]

    @property
    def seeds(self) -> int:
        """The seeds in hand per shape: the least any shape has (the ladder adds to every shape alike)."""
        return min(shape.seeds for shape in self.shapes) if self.shapes else 0

    @property
    def known(self) -> bool:
        """Whether the tables measure their noise: some shape has two healthy seeds (else every sd is nan)."""
        return any(math.isfinite(shape.sd) for shape in self.shapes)


def _key(row: Mapping) -> tuple[float, ...]:
    return tuple(float(row[key]) for key in stalls.SHAPE_KEYS)


RUN_PRICE = ("tokens_seen", "n_layer", "train_flops")  # what prices a fresh run (Price.run_minutes), as tables hold it


def run_minutes(price: Price, row: Mapping) -> float:
    """What one more run like `row` (a sweep or entropy table's row) is priced at; nan where the table lacks it."""
    return price.run_minutes(*(float(row.get(key, math.nan)) for key in RUN_PRICE))


def fit(tables: Mapping[str, pd.DataFrame], price: Price = PRICE) -> Noise:
    """The noise model of `tables` (table id -> sweep table as `sweep-table` writes it), each shape priced by
    `price` at its naming run's tokens, layers and training FLOPs."""
    unique: dict[str, dict] = {}
    for frame in tables.values():
        for row in frame.to_dict("records"):
            unique.setdefault(row["run_id"], row)  # a run two tables share counts once, as its first table has it
    runs = list(unique.values())
    groups = [[runs[i] for i in members] for members in stalls.seed_groups(runs)]
    healthy, excess, finished = [], [], 0
    for members in groups:
        done = [m for m in members if m["status"] == "ok" and math.isfinite(float(m["final_val_loss"]))]
        finished += len(done)
        healthy.append([math.log(float(m["final_val_loss"])) for m in done if not bool(m["stalled"])])
        excess += [math.log1p(float(m["stall_excess_pct"]) / 100) for m in done if bool(m["stalled"])]
    variances = fits.moderated_variances(healthy).variances if groups else ()
    shapes = []
    for members, logs, variance in zip(groups, healthy, variances, strict=True):
        centre = float(np.mean(logs)) if logs else math.nan
        named = min(members, key=lambda m: (int(m["seed"]), str(m["run_id"])))  # the same in every figure
        minutes = run_minutes(price, named)
        shape = Shape(_key(members[0]), centre, math.sqrt(variance), members[0], len(members), minutes, named["run_id"])
        shapes.append(shape)
    chance = len(excess) / finished if finished else 0.0
    return Noise(tuple(shapes), chance, tuple(excess))


def redraw(
    noise: Noise, tables: Mapping[str, pd.DataFrame], seeds: int, rng: np.random.Generator, scale: float = 1.0
) -> dict[str, pd.DataFrame]:
    """`tables` again with `seeds` seeds per shape drawn from `noise` (sd x `scale`; no stalls where `scale` is below
    1), each flagged as `sweep-table` flags; a shape two tables share is drawn once."""
    stall = noise.stall_chance if scale >= 1 else 0.0
    drawn: dict[tuple, list[dict]] = {}
    for index, shape in enumerate(noise.shapes):
        # no replicated shape, no sd: only the noiseless redraw runs, at a 1% stand-in (x NOISELESS: not zero, which
        # the figures' F tests divide by)
        sd = shape.sd if math.isfinite(shape.sd) else 0.01
        logs = shape.centre + scale * sd * rng.standard_normal(seeds)
        stalled = rng.random(seeds) < stall
        if noise.stall_excess:
            logs = logs + np.where(stalled, rng.choice(np.asarray(noise.stall_excess), seeds), 0.0)
        base = dict(shape.template)
        ratio = float(base["best_val_loss"]) / float(base["final_val_loss"]) if "best_val_loss" in base else 1.0
        drawn[shape.key] = [
            {
                **base,
                "run_id": f"redraw-{index}-s{seed}",
                "seed": seed,
                "status": "ok",
                "final_val_loss": math.exp(log),
                "best_val_loss": math.exp(log) * min(ratio, 1.0),
            }
            for seed, log in enumerate(logs)
        ]
    out = {}
    for table_id, frame in tables.items():
        keys = list(dict.fromkeys(_key(row) for row in frame.to_dict("records")))
        rows = [row for key in keys for row in drawn[key]]
        flags = stalls.flag(rows)
        rows = [{**row, "stall_excess_pct": e, "stalled": s} for row, (e, s) in zip(rows, flags, strict=True)]
        out[table_id] = pd.DataFrame(rows, columns=frame.columns)
    return out


# ---------------------------------------------------------------- the entropy row's growth
#
# docs/protocol-choices.md, "The noci rows' second stage": the entropy row grows by fresh seeds of every attention
# kind it reads at its top rate. A kind's seed is its lowest layer's final / initial entropy (head-averaged), read
# in logs; the noise model is each kind's mean log ratio with its own sd, and the diverged share. Each kind's seed is
# priced as its naming run, at its tokens, layers and training FLOPs (the plan reserves the runs: Plan.entropy_second).


def fit_entropy(tables: Mapping[str, pd.DataFrame], price: Price = PRICE) -> Noise:
    """The entropy table's noise model at its top rate: one `Shape` per attention kind (its centre and sd of the log
    entropy ratio over its finished seeds: its own, not moderated over the kinds, since the rule reads each kind's
    own t interval and the kinds' noise differs by far: standard's collapse is the noisy one), the diverged share
    as the stall chance (a diverged seed reads nothing), no stall excess."""
    from depthwidth.claims.noci import entropy_ratios, log_ratios
    from depthwidth.plots.sweep_common import finished

    (frame,) = tables.values()
    top = frame[frame["lr"] == frame["lr"].max()]
    kinds = sorted(set(top["attention"]))
    runs = {kind: top[top["attention"] == kind] for kind in kinds}
    logs = [log_ratios(entropy_ratios(runs[kind])) for kind in kinds]
    shapes, diverged, total = [], 0, 0
    for index, (kind, values) in enumerate(zip(kinds, logs, strict=True)):
        outcome = runs[kind].drop_duplicates("run_id")
        total += len(outcome)
        diverged += int((~finished(outcome)).sum())
        template = outcome.sort_values(["seed", "run_id"]).iloc[0].to_dict()
        centre = float(values.mean()) if values.size else math.nan
        sd = float(values.std(ddof=1)) if values.size >= 2 else math.nan  # the kind's own, as its t interval reads it
        shapes.append(Shape((float(index),), centre, sd, template, len(outcome),
                            run_minutes(price, template), str(template["run_id"])))  # fmt: skip
    return Noise(tuple(shapes), diverged / total if total else 0.0, ())


def redraw_entropy(
    noise: Noise, tables: Mapping[str, pd.DataFrame], seeds: int, rng: np.random.Generator, scale: float = 1.0
) -> dict[str, pd.DataFrame]:
    """The entropy table with its top rate's runs replaced by `seeds` seeds per kind drawn from `noise` (sd x
    `scale`; none diverges where `scale` is below 1): each a one-layer run whose entropy goes from 1 to its drawn
    ratio, the rows the rule reads; the other rates' rows as they were."""
    ((table_id, frame),) = tables.items()
    top = frame["lr"] == frame["lr"].max()
    diverge = noise.stall_chance if scale >= 1 else 0.0
    rows = []
    for index, shape in enumerate(noise.shapes):
        sd = shape.sd if math.isfinite(shape.sd) else 0.01
        logs = shape.centre + scale * sd * rng.standard_normal(seeds)
        lost = rng.random(seeds) < diverge
        for seed, (log, gone) in enumerate(zip(logs, lost, strict=True)):
            base = {**shape.template, "run_id": f"redraw-{index}-s{seed}", "seed": seed, "layer": 0}
            base |= {"status": "diverged", "final_val_loss": math.nan} if gone else {}
            rows += [{**base, "step": 0, "tokens": 0, "entropy": 1.0},
                     {**base, "step": 1, "tokens": 1, "entropy": math.exp(log)}]  # fmt: skip
    drawn = pd.DataFrame(rows, columns=frame.columns)
    return {table_id: pd.concat([frame[~top], drawn], ignore_index=True)}


# ---------------------------------------------------------------- the SDE row's growth
#
# docs/protocol-choices.md, "The noci rows' second stage": the SDE row grows by k x the samples of every simulation it
# reads (each sample job again on k - 1 reserved seeds). Redrawing k x 4000 samples a width would cost more than the
# samples, and the rule's intervals are normal from the figure's fits, so the redraw is part-level: each part's point
# from N(value, (se / sqrt k)^2), its se from its interval at the figure's level, its interval that of the new se, and
# W1's null quantile x 1 / sqrt k. A "shape" is one sample job, named as the plan names it (plan/shaped.py), and
# priced at its samples x steps (T / dt for the SDE, the depth for a finite width).

_SDE_INTERVALS = ("ode_ratio", "stopped_diff")  # per width: a point with its interval (_low, _high)


@dataclass(frozen=True)
class SdeNoise(Noise):
    """The SDE row's noise: its figure's rows, computed once per level (`rows_at`), stand in for every draw."""

    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    rows: dict = field(default_factory=dict)  # level -> the figure's rows there (a cache)

    def rows_at(self, level: float) -> pd.DataFrame:
        if level not in self.rows:
            with fits.at_level(level):
                self.rows[level] = figure_rows(SDE_FIGURE, self.tables)
        return self.rows[level]


def fit_sde(tables: Mapping[str, pd.DataFrame], price: Price = PRICE) -> SdeNoise:
    """The terminal table's sample jobs as the row's shapes (one each: its name, its seeds, its price), no stalls;
    the rows are computed when a redraw first asks at a level."""
    from depthwidth.plan.shaped import sample_name
    from depthwidth.shaped.finite import depth_for

    ((_, frame),) = tables.items()
    shaped = frame[(frame["attention"] == "shaped") & frame["source"].isin(["sde", "finite"])]
    names: dict[str, tuple[int, float]] = {}  # each sample job the figure reads -> its seeds (jobs) in hand, price
    for block, by_block in shaped.groupby("block"):
        steps = sorted(by_block["dt"].dropna().unique(), reverse=True)  # the SDE's dt, then dt / 2
        for (source, n, dt), group in by_block.groupby(["source", "n", "dt"], dropna=False):
            divisor = 1 if source == "finite" else round(steps[0] / dt)
            name = sample_name(str(block), None if source == "sde" else n, divisor)
            seeds = int(group["seed"].nunique())
            T = float(group["T"].iloc[0])
            length = round(T / dt) if source == "sde" else depth_for(T, int(n))  # the job's steps
            names[name] = seeds, price.sample_minutes(str(source), len(group) / seeds, length)
    shapes = tuple(
        Shape((float(i),), 0.0, 1.0, {}, seeds, minutes, name)
        for i, (name, (seeds, minutes)) in enumerate(names.items())
    )
    return SdeNoise(shapes, 0.0, (), tables=dict(tables))


def redraw_sde(
    noise: SdeNoise, tables: Mapping[str, pd.DataFrame], seeds: int, rng: np.random.Generator, scale: float = 1.0
) -> pd.DataFrame:
    """The figure's rows at the current level as `seeds` x the samples of every job (`seeds` relative to the jobs'
    seeds in hand) would give them: each part's point redrawn and its interval narrowed (sd x `scale` too)."""
    rows = noise.rows_at(fits.level()).copy()
    shrink = scale / math.sqrt(seeds / max(noise.seeds, 1))
    z = fits.z_quantile()
    for _, index in rows.groupby("block").groups.items():
        for stat in FUNCTIONALS:
            gap, se = (float(rows.at[index[0], f"limit_gap_{stat}{s}"]) for s in ("", "_se"))
            rows.loc[index, f"limit_gap_{stat}"] = gap + shrink * se * rng.standard_normal()
            rows.loc[index, f"limit_gap_{stat}_se"] = shrink * se
    rows["w1_null_q95"] = rows["w1_null_q95"] * shrink
    for column in _SDE_INTERVALS:
        se = (rows[f"{column}_high"] - rows[f"{column}_low"]) / (2 * z) * shrink
        point = rows[column] + se * rng.standard_normal(len(rows))
        rows[column], rows[f"{column}_low"], rows[f"{column}_high"] = point, point - z * se, point + z * se
    return rows


@dataclass(frozen=True)
class Growth:
    """How a figure's data grows: its noise model's fit and its redraw at k (seeds per shape, or x the samples), the
    unit k counts (`decide_text` words it: "shape", "kind", "samples") and whether the redraw gives the figure's
    rows (a part-level redraw) rather than its tables."""

    fit: Callable
    redraw: Callable
    unit: str = "shape"
    gives_rows: bool = False


SWEEP = Growth(fit, redraw)  # a figure of sweep tables: seeds of its shapes
GROWTHS = {  # the figures whose data grows otherwise
    ENTROPY_FIGURE: Growth(fit_entropy, redraw_entropy, "kind"),
    SDE_FIGURE: Growth(fit_sde, redraw_sde, "samples", gives_rows=True),
}


def figure_rows(figure: str, tables: Mapping[str, pd.DataFrame], unstalled: bool = False):
    """A figure's rows on `tables` (table id -> frame), computed by the figure's own code at the current level
    (`fits.at_level`); with `unstalled`, (rows, the rows without the stalled runs) as the figure command writes
    them (`plots.common.rows`)."""
    from depthwidth.plots import common
    from depthwidth.plots.registry import FIGURES

    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for name, table_id in FIGURES[figure].inputs.items():
            paths[name] = Path(folder) / f"{table_id}.csv"
            tables[table_id].to_csv(paths[name], index=False)
        return common.rows(figure, paths) if unstalled else common.figure_code(figure).data(**paths)


def verdict(claim, tables: Mapping[str, pd.DataFrame], fallback: float) -> str:
    """The row's verdict on `tables` (table id -> frame), its figure's rows computed by the figure's own code."""
    return judging.judged(claim, figure_rows(claim.figure, tables), fallback).main.verdict


@dataclass(frozen=True)
class Step:
    """The redraws at one seed count: how many held, failed and stayed inconclusive."""

    seeds: int
    holds: int
    fails: int
    sims: int

    @property
    def decided(self) -> float:
        return (self.holds + self.fails) / self.sims


@dataclass(frozen=True)
class Decision:
    """What would decide a row: the verdict now (at `level`), the seeds in hand, each step of the ladder (judged at
    `ladder_level`: the look more seeds would be read at), the least seeds per shape that decide it in POWER of the
    redraws (None: not within MAX_SEEDS, or undecidable), whether it is undecidable at this protocol, whether the
    tables measure their noise (`noise_known`: False with one seed per shape, where no ladder can be run), the runs
    and job-minutes the least count adds, and the shapes the row reads, each by one of its runs with its seeds and
    the median minutes of a run (what the second stage prices and asks for: `claims.second`)."""

    claim: str
    verdict: str
    seeds_now: int
    shapes: int
    undecidable: bool
    noise_known: bool = True
    steps: tuple[Step, ...] = ()
    seeds: int | None = None
    runs: int | None = None
    job_minutes: float | None = None
    level: float = fits.LEVEL
    ladder_level: float = fits.LEVEL
    shape_runs: tuple[str, ...] = ()
    shape_seeds: tuple[int, ...] = ()
    shape_minutes: tuple[float, ...] = ()

    @property
    def reached(self) -> Step | None:
        """The step that says what the ladder found: the least count that decides the row, else the most tried."""
        return next((s for s in self.steps if s.seeds == self.seeds), self.steps[-1] if self.steps else None)


def ladder(seeds_now: int, most: int = MAX_SEEDS) -> list[int]:
    """The seed counts tried: a few seeds more, then doublings of the seeds in hand, up to `most`."""
    counts = {seeds_now + add for add in LADDER} | {seeds_now * 2**k for k in range(1, 6)}
    return sorted(c for c in counts if seeds_now < c <= most)


def fitted(figure: str, tables: Mapping[str, pd.DataFrame], price: Price = PRICE) -> tuple[dict, Growth, Noise]:
    """What a figure's decide job works from: the tables the figure reads (of `tables`, by table id), how its data
    grows, and the noise model fitted on them, its shapes priced at `price`."""
    from depthwidth.plots.registry import FIGURES

    read = {table_id: tables[table_id] for table_id in FIGURES[figure].inputs.values()}
    growth = GROWTHS.get(figure, SWEEP)
    return read, growth, growth.fit(read, price)


def decide(
    claim,
    tables: Mapping[str, pd.DataFrame],
    fallback: float = math.nan,
    sims: int = SIMS,
    seed: int = 0,
    most: int = MAX_SEEDS,
    level: float = fits.LEVEL,
    ladder_level: float = fits.LEVEL,
    price: Price = PRICE,
) -> Decision:
    """Decision of `claim` on `tables` (the tables its figure reads, by table id): its verdict now, at `level`, and,
    where that is inconclusive, the least seeds per shape (or multiple of the samples) that decide it at
    `ladder_level` in POWER of `sims` redraws, its fresh jobs at `price`."""
    read, growth, noise = fitted(claim.figure, tables, price)
    with fits.at_level(level):
        now = verdict(claim, read, fallback)
    shapes = noise.shapes
    base = Decision(
        claim.id, now, noise.seeds, len(shapes), undecidable=False, noise_known=noise.known, level=level,
        ladder_level=ladder_level, shape_runs=tuple(str(s.run) for s in shapes),
        shape_seeds=tuple(s.seeds for s in shapes), shape_minutes=tuple(s.minutes for s in shapes),
    )  # fmt: skip
    if now != INCONCLUSIVE:
        return base
    with fits.at_level(ladder_level):
        return _climb(claim, read, noise, base, fallback, sims, seed, most, growth)


def _climb(claim, read, noise: Noise, base: Decision, fallback: float, sims: int, seed: int, most: int, growth: Growth):
    """`base` with what the ladder found: undecidable where the noiseless redraw stays inconclusive; else the most
    seeds tried first (no count where they do not decide the row in POWER of the redraws), then each count up to
    the least that does (at the current level)."""
    rng = np.random.default_rng(seed)

    def judged(redrawn) -> str:
        if growth.gives_rows:
            return judging.judged(claim, redrawn, fallback).main.verdict
        return verdict(claim, redrawn, fallback)

    if judged(growth.redraw(noise, read, max(noise.seeds, 2), rng, NOISELESS)) == INCONCLUSIVE:
        return replace(base, undecidable=True)
    if not noise.known:
        return base
    counts = ladder(noise.seeds, most)
    if not counts:
        return base

    def step(count: int) -> Step:
        verdicts = [judged(growth.redraw(noise, read, count, rng)) for _ in range(sims)]
        return Step(count, verdicts.count(HOLDS), verdicts.count(FAILS), sims)

    # the most seeds first: where they do not decide the row, no fewer will (more seeds narrow every interval)
    top = step(counts[-1])
    if top.decided < POWER:
        return replace(base, steps=(top,))
    steps = []
    for count in counts[:-1]:
        steps.append(step(count))
        if steps[-1].decided >= POWER:
            break
    else:
        steps.append(top)
    count = steps[-1].seeds
    extra = [count - shape.seeds for shape in noise.shapes]
    minutes = sum(n * shape.minutes for n, shape in zip(extra, noise.shapes, strict=True))
    steps = tuple(sorted({s.seeds: s for s in (*steps, top)}.values(), key=lambda s: s.seeds))
    return replace(base, steps=steps, seeds=count, runs=sum(extra), job_minutes=minutes)


# ---------------------------------------------------------------- numbers for the claims table


class StaleDecision(ValueError):
    """A decision whose verdict is not its row's: made from other tables than the figure's (rebuild it)."""

    def __init__(self, claim: str, found: str, figure_says: str):
        self.claim = claim
        super().__init__(
            f"claim {claim}: decide found {found!r} where its figure gives {figure_says!r} (a decision made from other "
            "tables: rebuild it)"
        )


def as_need(decision: Decision, look: int = 1, figure: str = "") -> Need:
    """What would decide the row, as the claims table's `Need` (wording.NEEDS["decide"] words it); `look` 2: the row
    is read at a later look than the one decided on (the first stage's seeds priced it); `figure`, the row's (its
    data grows by seeds of its shapes, or of its attention kinds: `GROWTHS`)."""
    last = decision.reached
    return need(
        "decide",
        look=look,
        unit=GROWTHS.get(figure, SWEEP).unit,
        undecidable=decision.undecidable,
        noise_known=decision.noise_known,
        seeds_now=decision.seeds_now,
        seeds=decision.seeds,
        runs=decision.runs,
        job_minutes=decision.job_minutes,
        tried=last.seeds if last else None,
        decided=last.decided if last else None,
        sims=last.sims if last else None,
    )


def numbers(decision: Decision | None) -> dict[str, float | int | str]:
    """The claims table's decide_* columns: the seeds per shape, the runs and job-minutes that decide the row, and
    whether no seed count can (1/0); empty where no decision was made or none is needed."""
    if decision is None or decision.verdict != INCONCLUSIVE:
        return dict.fromkeys(DECIDE_COLUMNS, "")
    found = (decision.seeds, decision.runs, decision.job_minutes, int(decision.undecidable))
    return {column: "" if value is None else value for column, value in zip(DECIDE_COLUMNS, found, strict=True)}


# ---------------------------------------------------------------- the records: JSON


def to_json(decisions: Sequence[Decision], **settings: int) -> dict:
    return {**settings, "decisions": [asdict(d) for d in decisions]}


def from_json(record: Mapping) -> list[Decision]:
    """The decisions a `decide --json-out` file holds (its steps rebuilt)."""
    tuples = ("shape_runs", "shape_seeds", "shape_minutes")
    return [
        Decision(**{**d, "steps": tuple(Step(**s) for s in d["steps"]), **{k: tuple(d.get(k, ())) for k in tuples}})
        for d in record["decisions"]
    ]


def read_decisions(paths: Sequence[Path]) -> dict[str, Decision]:
    """Every decision the files hold, by claim id; ValueError naming the file that decides a claim twice."""
    out: dict[str, Decision] = {}
    for path in paths:
        record = read_json(path)
        listed = record.get("decisions") if isinstance(record, dict) else None
        if not isinstance(listed, list) or not all(isinstance(d, dict) for d in listed):  # another file's JSON
            raise ValueError(f"{path}: not a `decide --json-out` file (an object whose `decisions` lists objects)")
        for decision in from_json(record):
            if decision.claim in out:
                raise ValueError(f"{path}: decides claim {decision.claim} a second time")
            out[decision.claim] = decision
    return out


# ---------------------------------------------------------------- the CLI


def read_tables(folder: Path | None = None, paths: Sequence[Path] = ()) -> dict[str, pd.DataFrame]:
    """The sweep tables `paths` and every sweep table in `folder` (results/<config>/tables), by table id."""
    from depthwidth.columns import SWEEP_COLUMNS
    from depthwidth.plots.sweep_common import read_columns

    found = sorted(Path(folder).glob("sweep_*.csv")) if folder else []
    return {
        path.stem: read_columns(path, SWEEP_COLUMNS, "a sweep table")
        if path.stem.startswith("sweep_")
        else pd.read_csv(path)
        for path in [*found, *map(Path, paths)]
    }


def lr_fallback(tables: Mapping[str, pd.DataFrame]) -> float:
    """lr_check's systematic (% of the loss) from its sweep table, as the claims take it; nan without one."""
    from depthwidth.contracts import sweep_table
    from depthwidth.plots import lr_check

    table = tables.get(sweep_table(LR_CHECK))
    if table is None:
        return math.nan
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lr_check.csv"
        table.to_csv(path, index=False)
        return judging.lr_systematic_pct(lr_check.data(path))


def rows(decisions: Sequence[Decision]) -> pd.DataFrame:
    """One row per decision, for the terminal and a CSV."""
    out = []
    for d in decisions:
        last = d.reached
        out.append(
            {
                "claim": d.claim,
                "verdict": d.verdict,
                "seeds_now": d.seeds_now,
                "shapes": d.shapes,
                "undecidable": d.undecidable,
                "noise_known": d.noise_known,
                "seeds": d.seeds,
                "decided_at_seeds": last.decided if last else math.nan,
                "holds": last.holds if last else math.nan,
                "fails": last.fails if last else math.nan,
                "sims": last.sims if last else math.nan,
                "runs": d.runs,
                "job_minutes": d.job_minutes,
            }
        )
    return pd.DataFrame(out)


def price_of(text: str) -> Price:
    """--price-json: the config's `decide.price` block as JSON, validated (a missing key takes the schema's)."""
    import json

    from depthwidth.spec import schema_of_package, validated

    schema = schema_of_package()
    try:
        block = validated(json.loads(text), schema["properties"]["decide"]["properties"]["price"], schema)
    except ValueError as err:  # json.JSONDecodeError included
        raise argparse.ArgumentTypeError(f"--price-json: {err}") from None
    return Price(block)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tables", type=Path, nargs="?", help="a built config's tables folder, results/<config>/tables")
    parser.add_argument("--sweep-table", action="append", default=[], type=Path, help="a sweep table, or a noci "
                        "row's table (the entropy table, the SDE terminal table; repeatable; named by its file's stem, "
                        "as the workflow names them)")  # fmt: skip
    parser.add_argument("--claim", action="append", default=[], help="a claim id (repeatable; default: every row "
                        "whose figure reads only the sweep tables given)")  # fmt: skip
    parser.add_argument("--figure", help="every claim of this figure (its tables must be given)")
    parser.add_argument("--sims", type=int, default=SIMS, help=f"redraws per seed count (default {SIMS})")
    parser.add_argument("--most", type=int, default=MAX_SEEDS, help=f"most seeds per shape (default {MAX_SEEDS})")
    parser.add_argument("--seed", type=int, default=0, help="the redraws' random seed")
    parser.add_argument("--out", type=Path, help="also write the rows as CSV")
    parser.add_argument("--json-out", type=Path, help="also write the decisions as JSON (the claims table reads it)")
    parser.add_argument("--level", type=float, default=fits.LEVEL, help="the level the rows are judged at now (the "
                        f"first look's; default {fits.LEVEL})")  # fmt: skip
    parser.add_argument("--ladder-level", type=float, default=None, help="the level more seeds would be judged at "
                        "(the last look's; default: --level)")  # fmt: skip
    parser.add_argument("--tilt", type=tilt.from_argument, default=tilt.Carried(), help=tilt.ARGUMENT_HELP)
    parser.add_argument("--price-json", type=price_of, default=PRICE, help="the config's decide.price block (JSON): "
                        "what a fresh run or sample job is priced at (default: the schema's)")  # fmt: skip
    parser.add_argument("--look-out", type=Path, help="also write the --figure's rows at --level (its other reading, "
                        "without the stalled runs, beside it): the rows look 1 reads")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from depthwidth.claims.registry import BY_ID, CLAIMS
    from depthwidth.plots.registry import FIGURES

    tables = read_tables(args.tables, args.sweep_table)
    if not tables:
        raise FileNotFoundError(f"{args.tables}: no sweep_*.csv tables (build the config first)")
    unknown = [c for c in args.claim if c not in BY_ID]
    if unknown:
        raise ValueError(f"--claim {unknown[0]!r}: no such claim (one of {', '.join(BY_ID)})")
    if args.figure is not None and args.figure not in FIGURES:
        raise ValueError(f"--figure {args.figure!r}: no such figure")
    readable = [c for c in CLAIMS if c.figure in FIGURES and set(FIGURES[c.figure].inputs.values()) <= set(tables)]
    of_figure = [c for c in CLAIMS if c.figure == args.figure] if args.figure else readable
    chosen = [BY_ID[c] for c in args.claim] or of_figure
    missing = [c.id for c in chosen if c not in readable]
    if missing:
        raise ValueError(f"claim {missing[0]}: its figure reads tables not given")
    if args.look_out and args.figure is None:
        raise ValueError("--look-out: needs --figure (the figure whose rows it writes)")
    fallback = lr_fallback(tables)
    ladder_level = args.level if args.ladder_level is None else args.ladder_level
    with tilt.carrying(args.tilt):  # every figure row computed here, redraws included
        levels = args.level, ladder_level
        price = args.price_json
        decisions = [decide(c, tables, fallback, args.sims, args.seed, args.most, *levels, price) for c in chosen]
        if args.look_out:
            with fits.at_level(args.level):
                look, other = figure_rows(args.figure, tables, unstalled=True)
            write_text(args.look_out, look.to_csv(index=False))
            write_text(Path(unstalled_path(args.look_out)), other.to_csv(index=False))
    frame = rows(decisions)
    print(frame.to_string(index=False) if len(frame) else "no claim reads these tables")
    if args.out:
        frame.to_csv(args.out, index=False)
    if args.json_out:
        settings = {"sims": args.sims, "most": args.most, "seed": args.seed, "level": args.level}
        write_json(args.json_out, to_json(decisions, **settings, ladder_level=ladder_level))
    return 0
