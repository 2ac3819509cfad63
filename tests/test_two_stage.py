"""The two-stage design end to end on planted tables (issue 53, items 2 and 5): a row undecided at look 1 that the
second stage decides, a row blocked by its systematic that asks for nothing, and, on demand, the operating
characteristics of both stages under the noise the default really has.

A pipeline here is what the workflow runs, on synthetic tables: the default's sweep tables planted from a law
(tests/planted.py, REAL_NOISE: each width family's seed sd and stall mixture), look 1 (`decide.decide` at the first
look's level, its ladder at the last look's), the allocation (`claims.second.allocate`, the design's budget and
seeds per shape), the fresh seeds drawn from the same law at each shape's chosen rate and flagged with the rest
(`stalls.flag`), and look 2 at the last look's level on all the seeds. The pipelines price every run at one minute
(`A_MINUTE`, not the registered price of the planted runs' tokens and FLOPs: the operating characteristics in
config/README.md were measured so), so the budget of 30 job-minutes buys 30 fresh seeds.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import planted
import pytest
from depthwidth import fits, rates, shapes, stalls
from depthwidth.claims import decide, second
from depthwidth.claims.registry import BY_ID
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE
from depthwidth.contracts import ENTROPY_TABLE, SDE_TERMINAL, sweep_experiment
from depthwidth.plan import jobs
from depthwidth.spec import run_from_plan
from test_planted_laws import CLAIM_ORDER


def flat_price(minutes: float) -> decide.Price:
    """A price of `minutes` a job whatever its size: startup alone."""
    free = {"token_seconds": 0.0, "layer_token_seconds": 0.0, "flops_per_second": math.inf}
    return decide.Price({**decide.PRICE.block, **free, "startup_seconds": 60.0 * minutes,
                         "sample_step_seconds": {"sde": 0.0, "finite": 0.0}})  # fmt: skip


A_MINUTE = flat_price(1.0)


SIMS = 10  # redraws per seed count of the ladder here (the workflow's 40): it prices the stage, the levels bound it


def two_looks(**block) -> dict:
    """The default config with two looks (and `block` in its decide block), validated."""
    config = planted.default_config()
    return {**config, "decide": {**config["decide"], "looks": 2, **block}}


@dataclass(frozen=True)
class Outcome:
    """One row's end in one pipeline: its verdict, the look that reached it, and the fresh runs the stage trained
    (for every row alike: the stage is global)."""

    verdict: str
    look: int
    reason: str
    runs: int


def fresh_rows(
    plan: jobs.Plan, tables: dict[str, pd.DataFrame], law, asked: dict[str, int], rng: np.random.Generator
) -> dict[str, pd.DataFrame]:
    """`tables` with the fresh seeds `asked` (a run naming each shape -> its seeds): each drawn once from `law` at the
    shape's chosen rate (its row's `lr_factor`) with the family's noise, added to every table that reads the shape,
    and every table flagged again as `sweep-table` flags it."""
    drawn: dict[str, dict] = {}
    out = {}
    for table_id, frame in tables.items():
        experiment = sweep_experiment(table_id)
        if experiment is None or experiment == "lr_check" or not asked:
            out[table_id] = frame
            continue
        chosen = {
            row["lr_scan"]: row["lr_factor"] for row in frame.to_dict("records") if isinstance(row["lr_scan"], str)
        }
        template = {str(row["run_id"]): row for row in frame.to_dict("records")}
        at = lambda scan, chosen=chosen: rates.lattice_index(chosen[scan])  # noqa: E731
        rows = [dict(r) for r in frame.to_dict("records")]
        for run_id, plan_row in plan.second_plan(experiment, at, asked).items():
            if run_id not in drawn:
                run = run_from_plan(experiment, plan_row)
                shape = run.shape
                first = next(r for r in template.values() if plan.shape_cell(r["run_id"]) == plan.shape_cell(run_id))
                n = shapes.nonembedding(shape.n_layer, shape.d_model, shape.d_ff)
                term = planted.lr_term(shape, run.lr_factor, None, run.seed)
                loss = law(run, n) * math.exp(term + planted.seed_draw(shape, rng))
                drawn[run_id] = {**first, "run_id": run_id, "seed": run.seed, "final_val_loss": loss,
                                 "best_val_loss": loss}  # fmt: skip
            rows.append(dict(drawn[run_id]))
        flags = stalls.flag(rows)
        rows = [{**r, "stall_excess_pct": e, "stalled": s} for r, (e, s) in zip(rows, flags, strict=True)]
        out[table_id] = pd.DataFrame(rows, columns=frame.columns)
    return out


def pipeline(folder: Path, law, draw: int, config: dict, rows=CLAIM_ORDER, sims: int = SIMS) -> dict[str, Outcome]:
    """Both stages of the design `config` on tables planted from `law` (noise draw `draw`): row -> Outcome."""
    plan = jobs.build(config)
    design = plan.design
    first, last = design.levels
    paths = planted.write_tables(folder, law, cfg=config, seed=draw)
    tables = {table_id: pd.read_csv(path) for table_id, path in paths.items()}
    fallback = decide.lr_fallback(tables)
    decisions = []
    for claim_id in rows:
        claim = BY_ID[claim_id]
        most = min(config["decide"]["most_seeds"], 3 + design.most)  # no count past what the stage may train
        decisions.append(decide.decide(claim, tables, fallback, sims, draw, most, first, last, A_MINUTE))
    allocation = second.allocate(decisions, design.budget, design.most)
    final = fresh_rows(plan, tables, law, allocation.shapes, np.random.default_rng([draw, 2]))
    reasons = {ask.claim: ask.reason for ask in allocation.asks}
    out = {}
    for d in decisions:
        if d.verdict != INCONCLUSIVE:
            out[d.claim] = Outcome(d.verdict, 1, reasons[d.claim], allocation.runs)
            continue
        with fits.at_level(last):
            verdict = decide.verdict(BY_ID[d.claim], final, fallback)
        out[d.claim] = Outcome(verdict, 2, reasons[d.claim], allocation.runs)
    return out


# ---------------------------------------------------------------- a row the second stage decides, one it never asks


def test_a_row_open_at_look_one_is_decided_at_look_two_and_a_blocked_row_asks_for_nothing(tmp_path):
    """The head-size row on a law where head size costs 4% (its truth: does not hold), with a seed sd of 0.8%
    (three times the real), at which look 1 at 99% leaves it open: the stage asks for seeds for its shapes and look 2
    decides it. The power law on Kaplan's basin is undecidable at this protocol (its sagitta's interval straddles the
    margin with the noise taken out): it asks for nothing."""
    config = two_looks(max_extra_job_minutes=60)
    saved = planted.NOISE_FAMILIES, planted.REAL_NOISE
    planted.REAL_NOISE = True
    planted.NOISE_FAMILIES = tuple((w, 0.008, 0.0, 0.0, 0.0) for w, *_ in saved[0]) + ((10_000, 0.008, 0.0, 0.0, 0.0),)
    try:
        headdim = pipeline(tmp_path / "head", planted.head_costly, 1, config, rows=["kaplan_headdim"])
    finally:
        planted.NOISE_FAMILIES, planted.REAL_NOISE = saved
    row = headdim["kaplan_headdim"]
    assert (row.look, row.reason, row.verdict) == (2, second.ASKED, FAILS)
    assert 0 < row.runs <= 60
    blocked = pipeline(tmp_path / "basin", planted.kaplan_basin, 1, config, rows=["kaplan_power_law"])
    assert blocked["kaplan_power_law"] == Outcome(INCONCLUSIVE, 2, second.UNDECIDABLE, 0)


# ---------------------------------------------------------------- the entropy row: fresh seeds of its kinds

ENTROPY = BY_ID["noci_entropy_collapse"]
ENTROPY_SEEDS = 3  # the default's shaped.training.seeds


def entropy_pipeline(law: dict, draw: int, config: dict, sims: int = SIMS) -> Outcome:
    """Both stages of the design `config` on an entropy table planted from `law` (ENTROPY_SEEDS seeds a kind, noise
    draw `draw`): look 1, the allocation, each kind's fresh seeds asked (the reserved ones) drawn from the same law at
    the top rate and added to the table, and look 2 on all of it."""
    design = jobs.build(config).design
    first, last = design.levels
    rng = np.random.default_rng([draw, 3])
    table = planted.entropy_table(ENTROPY_SEEDS, rng, law)
    most = min(config["decide"]["most_seeds"], ENTROPY_SEEDS + design.most)
    d = decide.decide(ENTROPY, {ENTROPY_TABLE: table}, math.nan, sims, draw, most, first, last, A_MINUTE)
    allocation = second.allocate([d], design.budget, design.most)
    (ask,) = allocation.asks
    if d.verdict != INCONCLUSIVE:
        return Outcome(d.verdict, 1, ask.reason, allocation.runs)
    kind_of = {run: str(table.loc[table["run_id"] == run, "attention"].iloc[0]) for run in d.shape_runs}
    top = (max(planted.ENTROPY_RATES),)
    fresh = [
        planted.entropy_table(design.seeds[:n], rng, {kind_of[run]: law[kind_of[run]]}, top)
        for run, n in allocation.shapes.items()
    ]
    with fits.at_level(last):
        verdict = decide.verdict(ENTROPY, {ENTROPY_TABLE: pd.concat([table, *fresh], ignore_index=True)}, math.nan)
    return Outcome(verdict, 2, ask.reason, allocation.runs)


def test_the_entropy_row_open_at_look_one_asks_for_seeds_of_its_kinds_and_look_two_decides_it():
    """Standard attention collapses to 0.12 of its entropy, noisily (planted.ENTROPY_LAWS["collapse"]): at 3 seeds a
    kind look 1 (99%) leaves the row open in some draws; there the stage asks for fresh seeds of the kinds within the
    default's budget (a run a job-minute here), and look 2 (96%) on all the seeds decides it, never wrongly; a draw no
    count within the design's seeds decides asks for nothing and stays open."""
    config = two_looks()
    outcomes = [entropy_pipeline(planted.ENTROPY_LAWS["collapse"], draw, config) for draw in range(8)]
    asked = [o for o in outcomes if o.reason == second.ASKED]
    assert asked and all(o.look == 2 and 0 < o.runs <= 30 for o in asked)
    # a row open at look 1 that no count within the design's seeds decides asks for nothing, and stays open
    assert all(o.runs == 0 and o.verdict == INCONCLUSIVE for o in outcomes if o.reason == second.NO_COUNT)
    assert all(o.verdict != FAILS for o in outcomes)
    assert sum(o.verdict == HOLDS for o in asked) > len(asked) / 2
    # the law without noise: the rule's truth, which the operating characteristics count errors against
    assert entropy_truth(planted.ENTROPY_LAWS["collapse"]) == HOLDS
    assert entropy_truth(planted.ENTROPY_LAWS["no_collapse"]) == FAILS


def entropy_truth(law: dict) -> str:
    """The entropy row's verdict on `law` without noise (every kind's seeds at its mean; look 2's level)."""
    quiet = {kind: (mean, 1e-9) for kind, (mean, _) in law.items()}
    with fits.at_level(0.96):
        return decide.verdict(ENTROPY, {ENTROPY_TABLE: planted.entropy_table(ENTROPY_SEEDS, law=quiet)}, math.nan)


ENTROPY_DRAWS = 70  # per entropy law: 3 laws, 210 pipelines


@pytest.mark.skipif(os.environ.get("DEPTHWIDTH_OC") != "1", reason="about 6 minutes: DEPTHWIDTH_OC=1 runs it")
def test_the_entropy_row_errs_at_most_the_bound_through_both_stages():
    """The entropy row through both stages of the default's design, ENTROPY_DRAWS pipelines on each law of
    planted.ENTROPY_LAWS: its false-hold and false-fail rates at most BOUND over all of them (-s prints the table)."""
    config = two_looks()
    got = [(name, entropy_truth(law), entropy_pipeline(law, draw, config))
           for name, law in planted.ENTROPY_LAWS.items() for draw in range(ENTROPY_DRAWS)]  # fmt: skip
    print("\n" + oc_table(got))
    not_holds = [o for _, t, o in got if t != HOLDS]
    not_fails = [o for _, t, o in got if t != FAILS]
    assert sum(o.verdict == HOLDS for o in not_holds) / len(not_holds) <= BOUND
    assert sum(o.verdict == FAILS for o in not_fails) / len(not_fails) <= BOUND


# ---------------------------------------------------------------- the SDE row: more samples of each sample job

SDE_ROW = BY_ID["noci_sde_describes_finite"]
SDE_SAMPLES = 2000  # a finite width's samples at look 1 (the default's 4000, halved to keep the pipelines cheap)
SAMPLE_JOB = flat_price(0.135)  # one sample job's, the default's mean (its 18 took 2.4 job-minutes)
# each law of the finite networks' terminal mean against the SDE's (tests/test_verdicts.terminal_frame: the SDE's law
# N(0.3, 0.2), so the limit gap's margin is 0.1 x 0.2 = 0.02), with the row's truth by construction
SDE_LAWS = {
    "converging": (lambda n: 4 / n, HOLDS),  # closes on the SDE as 4 / n: every limit gap 0
    "gap": (lambda n: 0.03, FAILS),  # a location gap of 0.03 that never closes: the mean's limit gap outside
    "on_margin": (lambda n: 0.02, INCONCLUSIVE),  # a gap on the margin itself
}


def sde_pipeline(shift, draw: int, config: dict, sims: int = SIMS) -> Outcome:
    """Both stages of the design `config` on a terminal table planted from `shift` (SDE_SAMPLES a width, noise draw
    `draw`): look 1, the allocation (each sample job priced at SAMPLE_JOB), the fresh samples asked (each job
    again on the seeds asked, drawn from the same law) added to the table, and look 2 on all of it."""
    from test_verdicts import terminal_frame

    design = jobs.build(config).design
    first, last = design.levels
    table = terminal_frame(shift, samples=SDE_SAMPLES, seed=draw).assign(seed=0)
    most = min(config["decide"]["most_seeds"], 1 + design.most)
    d = decide.decide(SDE_ROW, {SDE_TERMINAL: table}, math.nan, sims, draw, most, first, last, SAMPLE_JOB)
    allocation = second.allocate([d], design.budget, design.most)
    (ask,) = allocation.asks
    if d.verdict != INCONCLUSIVE:
        return Outcome(d.verdict, 1, ask.reason, allocation.runs)
    extra = max(allocation.shapes.values(), default=0)  # the ladder asks every job alike
    fresh = [terminal_frame(shift, samples=SDE_SAMPLES * extra, seed=[draw, 5]).assign(seed=3000)] if extra else []
    with fits.at_level(last):
        verdict = decide.verdict(SDE_ROW, {SDE_TERMINAL: pd.concat([table, *fresh], ignore_index=True)}, math.nan)
    return Outcome(verdict, 2, ask.reason, allocation.runs)


SDE_DRAWS = 70  # per SDE law: 3 laws, 210 pipelines


@pytest.mark.skipif(os.environ.get("DEPTHWIDTH_OC") != "1", reason="about 40 minutes: DEPTHWIDTH_OC=1 runs it")
def test_the_sde_row_errs_at_most_the_bound_through_both_stages():
    """The SDE row through both stages of the default's design, SDE_DRAWS pipelines on each law of SDE_LAWS: its
    false-hold and false-fail rates at most BOUND over all of them (-s prints the table)."""
    config = two_looks()
    got = [(name, truth, sde_pipeline(shift, draw, config))
           for name, (shift, truth) in SDE_LAWS.items() for draw in range(SDE_DRAWS)]  # fmt: skip
    print("\n" + oc_table(got))
    not_holds = [o for _, t, o in got if t != HOLDS]
    not_fails = [o for _, t, o in got if t != FAILS]
    assert sum(o.verdict == HOLDS for o in not_holds) / len(not_holds) <= BOUND
    assert sum(o.verdict == FAILS for o in not_fails) / len(not_fails) <= BOUND


def oc_table(got: list) -> str:
    """Per law (and over all): its truth, pipelines, the shares that held, failed and were decided at look 2, and the
    fresh jobs per pipeline, as markdown; `got` holds (law, truth, Outcome) per pipeline."""
    rows = []
    for name in [*dict.fromkeys(n for n, _, _ in got), "all"]:
        mine = [(t, o) for n, t, o in got if name in (n, "all")]
        rows.append({
            "law": name, "truth": mine[0][0] if name != "all" else "", "pipelines": len(mine),
            "holds": sum(o.verdict == HOLDS for _, o in mine) / len(mine),
            "fails": sum(o.verdict == FAILS for _, o in mine) / len(mine),
            "decided_at_look_2": sum(o.look == 2 and o.verdict != INCONCLUSIVE for _, o in mine) / len(mine),
            "runs_per_pipeline": float(np.mean([o.runs for _, o in mine])),
        })  # fmt: skip
    return pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f")


# ---------------------------------------------------------------- the operating characteristics, on demand

DRAWS = 20  # per law: 10 laws, 200 pipelines
BOUND = 0.025  # the issue's: each row's false-hold and false-fail rate at most 2.5%
# (row, rate) over the bound, as measured (AMD, draws 0-19 of every law; the table is config/README.md's): none since
# the optimal depth reads a t test of each depth against L*'s (it failed 5 of 120 flat-truth pipelines, 4.2%, where a
# near-tie of depths was read as an argmin decided elsewhere). The laws share their noise draws, so 200 pipelines
# are not 200 independent trials of a row.
OVER_BOUND: dict[tuple[str, str], float] = {}


def characteristics(folder: Path, draws: int = DRAWS) -> tuple[dict, dict]:
    """Per law: each row's noiseless truth (`planted.sweep_verdicts` with no noise, at one look) and its outcomes
    over `draws` pipelines of the default's two-look design."""
    config = two_looks()
    truths, outcomes = {}, {}
    for name, law in sorted(planted.LAWS.items()):
        sd, planted.SEED_SD = planted.SEED_SD, 0.0
        try:
            truths[name] = planted.sweep_verdicts(folder / f"{name}-truth", law, planted.NOISE_SEED, CLAIM_ORDER)
        finally:
            planted.SEED_SD = sd
        planted.REAL_NOISE = True
        try:
            outcomes[name] = [pipeline(folder / f"{name}-{d}", law, d, config) for d in range(draws)]
        finally:
            planted.REAL_NOISE = False
    return truths, outcomes


def summary(truths: dict, outcomes: dict) -> pd.DataFrame:
    """Per row: pipelines, its false-hold and false-fail rates (over the pipelines whose truth is not holds, resp.
    not fails), its power (decided as its truth, over the pipelines whose truth is decided), the share decided at
    look 2, and the fresh runs the stage trained per pipeline, on average."""
    out = []
    for row in CLAIM_ORDER:
        got = [(truths[law][row], o[row]) for law in outcomes for o in outcomes[law]]
        not_holds = [o for t, o in got if t != HOLDS]
        not_fails = [o for t, o in got if t != FAILS]
        decided = [(t, o) for t, o in got if t != INCONCLUSIVE]
        out.append({
            "row": row,
            "pipelines": len(got),
            "false_hold": sum(o.verdict == HOLDS for o in not_holds) / max(len(not_holds), 1),
            "false_fail": sum(o.verdict == FAILS for o in not_fails) / max(len(not_fails), 1),
            "power": sum(o.verdict == t for t, o in decided) / len(decided) if decided else math.nan,
            "decided_at_look_2": sum(o.look == 2 and o.verdict != INCONCLUSIVE for _, o in got) / len(got),
            "runs_per_pipeline": float(np.mean([o.runs for _, o in got])),
        })  # fmt: skip
    return pd.DataFrame(out)


@pytest.mark.skipif(os.environ.get("DEPTHWIDTH_OC") != "1", reason="about an hour: DEPTHWIDTH_OC=1 runs it (-s: table)")
def test_both_stages_err_at_most_the_bound_per_row_under_the_real_noise(tmp_path):
    truths, outcomes = characteristics(tmp_path)
    frame = summary(truths, outcomes)
    print("\n" + frame.to_markdown(index=False, floatfmt=".3f"))
    assert (frame["pipelines"] >= 200).all()
    over = {
        (row.row, rate): round(float(getattr(row, rate)), 3)
        for row in frame.itertuples()
        for rate in ("false_hold", "false_fail")
        if getattr(row, rate) > BOUND
    }
    assert over == OVER_BOUND, over


def test_the_summary_counts_errors_against_the_truth():
    truths = {"a": {row: HOLDS for row in CLAIM_ORDER}, "b": {row: FAILS for row in CLAIM_ORDER}}
    ok, bad = Outcome(HOLDS, 1, second.DECIDED, 0), Outcome(HOLDS, 2, second.ASKED, 4)
    outcomes = {"a": [{row: ok for row in CLAIM_ORDER}], "b": [{row: bad for row in CLAIM_ORDER}]}
    frame = summary(truths, outcomes).set_index("row")
    first = frame.loc[CLAIM_ORDER[0]]
    # law b's truth is fails, its one pipeline held: a false hold of 1 in 1; no false fail
    assert (first["false_hold"], first["false_fail"], first["power"]) == (1.0, 0.0, 0.5)
    assert (first["decided_at_look_2"], first["runs_per_pipeline"]) == (0.5, 2.0)
