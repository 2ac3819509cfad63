"""The learning-rate scan (depthwidth.rates) against planted loss-vs-rate curves: a parabola in log2(rate)
with its best rate where the test puts it and a cliff above which training stalls. Each case runs the
scan round by round, as the workflow does, training nothing: a scout's loss is read off the planted law."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from depthwidth import rates
from depthwidth.rates import Scout, lattice_factor, lattice_index, next_step

BOUNDS = (-6, 8)  # factors 1/8 to 16, the schema's default
START = (0, 2, 4)  # factors 1, 2 and 4
STALL = 0.04
CLIFF_JUMP = 0.15  # a stalled run ends 15% worse than the best below the cliff (the probes: 4-19%)


def planted(best_log2: float, curvature: float = 0.03, cliff_log2: float = math.inf, base: float = 3.0):
    """The law: ln(loss) = ln(base) + curvature (log2 f - best_log2)^2 below the cliff; at and above it,
    the run stalls after warm-up on a plateau CLIFF_JUMP above the least loss below the cliff."""
    least = base * math.exp(curvature * max(0.0, best_log2 - cliff_log2) ** 2)

    def loss(k: int) -> float:
        x = k / 2
        if x >= cliff_log2:
            return least * (1 + CLIFF_JUMP)
        return base * math.exp(curvature * (x - best_log2) ** 2)

    return loss


def scan(law, start=START, bounds=BOUNDS, diverges=lambda k: False, rounds: int = 20, seeds=None):
    """Run a scan to its end on a law; returns the final step and every round's scouts. `seeds`: the
    confirmation seeds' law, k -> their scouts at k (None: the scan confirms nothing)."""
    scouts: dict[int, Scout] = {}
    confirmations: list[Scout] = []
    ks = set(start)
    history = []
    for _ in range(rounds):
        for k in ks - set(scouts):
            # a run that diverged has no loss (train writes null; `scout_of` reads it as nan)
            scouts[k] = Scout(k, math.nan, False) if diverges(k) else Scout(k, law(k), True)
        step = next_step(list(scouts.values()), bounds, STALL, 0 if seeds is None else 2, confirmations)
        history.append(sorted(scouts))
        if step.done:
            return step, history
        if step.confirm is not None:  # the confirmation seeds train at the best scout's rate, once
            assert seeds is not None and not step.next and not confirmations
            assert step.confirm == min(scouts.values(), key=lambda s: s.loss).k
            confirmations = seeds(step.confirm)
            continue
        assert step.next and not set(step.next) & set(scouts), "a round asks for scouts it has"
        assert all(bounds[0] <= k <= bounds[1] for k in step.next)
        ks = set(scouts) | set(step.next)
    raise AssertionError(f"no choice after {rounds} rounds: {history}")


def _log_law(law, x: float) -> float:
    # the law at a real log2 factor x (the lattice index 2x need not be whole)
    return math.log(law(2 * x))


@pytest.mark.parametrize("best_log2", [-0.3, 0.0, 0.4, 0.75, 1.0, 1.6, 2.2])
def test_an_interior_best_is_found_at_the_lattice_point_nearest_it_with_its_exact_excess(best_log2):
    law = planted(best_log2)
    step, _ = scan(law)
    assert step.why == rates.INTERIOR
    assert step.chosen == round(2 * best_log2)
    # three noiseless points on the parabola give it back exactly
    assert step.vertex_log2 == pytest.approx(best_log2, abs=1e-9)
    assert step.excess_pct == pytest.approx(100 * 0.03 * (step.chosen / 2 - best_log2) ** 2, abs=1e-9)
    assert 0 <= step.excess_pct <= 100 * 0.03 / 16 + 1e-12  # at most a quarter step off: a/16


def test_a_best_below_the_first_scouts_widens_down_a_factor_2_a_round():
    step, history = scan(planted(-2.2))
    assert step.why == rates.INTERIOR and step.chosen == -4
    assert history[0] == [0, 2, 4] and history[1] == [-2, 0, 2, 4] and history[2] == [-4, -2, 0, 2, 4]
    assert step.vertex_log2 == pytest.approx(-2.2)


def test_a_best_past_the_upper_bound_stops_there_with_its_excess_unknown():
    step, history = scan(planted(6.0))
    assert (step.why, step.chosen) == (rates.UPPER_BOUND, BOUNDS[1])
    assert math.isnan(step.excess_pct)
    assert history[-1] == [0, 2, 4, 6, 8]


def test_a_best_past_the_lower_bound_stops_there():
    step, _ = scan(planted(-5.0))
    assert (step.why, step.chosen) == (rates.LOWER_BOUND, BOUNDS[0]) and math.isnan(step.excess_pct)


def least_below_cliff(law, cliff_log2: float) -> float:
    """The least ln(loss) of a planted law below its cliff (a fine scan of log2 factors)."""
    xs = np.linspace(-8, min(cliff_log2, 10), 40001)[:-1]
    return min(math.log(law(2 * x)) for x in xs)


@pytest.mark.parametrize(
    "best_log2, cliff_log2",
    [(1.4, 1.2), (1.9, 1.7), (0.8, 0.75), (2.0, 1.0), (0.6, 2.0), (0.2, 1.4)],
)
def test_the_choice_stays_a_factor_2_below_the_cliff_and_its_excess_bounds_what_that_costs(best_log2, cliff_log2):
    law = planted(best_log2, cliff_log2=cliff_log2)
    step, history = scan(law)
    assert step.stalled and step.chosen <= min(step.stalled) - 2  # never within a factor 2 of a stall
    assert min(step.stalled) / 2 >= cliff_log2
    if step.why == rates.BELOW_CLIFF:  # the cliff decided: the scan placed it to half a step
        assert (min(step.stalled) - 1) / 2 < cliff_log2
    truth = 100 * (math.log(law(step.chosen)) - least_below_cliff(law, cliff_log2))
    assert -1e-9 <= truth <= step.excess_pct + 1e-9  # the excess bounds the cost, whatever the margin gives up
    assert 0 <= step.excess_stable_pct <= step.excess_pct + 1e-12
    if best_log2 + 1 <= min(step.stalled) / 2 - 0.25:  # the best lies clear of the margin: nothing given up
        assert step.why == rates.INTERIOR and step.chosen == round(2 * best_log2)
    else:
        assert step.why == rates.BELOW_CLIFF
    assert all(k in history[-1] for k in START)


def test_seeds_that_train_at_the_best_scout_lift_the_margin_and_one_that_stalls_keeps_it():
    lifted = 0
    for best_log2, cliff_log2 in [(1.4, 1.2), (1.9, 1.7), (0.8, 0.75), (2.0, 1.0), (0.6, 2.0), (0.2, 1.4), (1.1, 1.25)]:
        law = planted(best_log2, cliff_log2=cliff_log2)
        kept, history = scan(law)  # no confirmation: the margin always stands
        assert kept.confirmed is None
        # the confirmation seeds share the scout's landscape (their noise is 1%, under the 4% stall)
        step, _ = scan(law, seeds=lambda k, law=law: [Scout(k, law(k) * 1.01, True), Scout(k, law(k) * 0.99, True)])
        truth = 100 * (math.log(law(step.chosen)) - least_below_cliff(law, cliff_log2))
        assert -1e-9 <= truth <= step.excess_pct + 1e-9  # the excess still bounds the cost
        best = min(history[-1], key=law)  # the best scout
        if step.confirmed is None:  # nothing to confirm: the same choice
            assert (step.chosen, step.excess_pct) == (kept.chosen, kept.excess_pct)
            assert not kept.chosen == min(kept.stalled, default=99) - 2 < best
            continue
        lifted += 1
        # the margin took the choice below the best scout; the seeds trained there, so it is the choice
        assert kept.chosen == min(kept.stalled) - 2 < best
        assert step.confirmed is True and step.chosen == best and step.excess_pct <= kept.excess_pct
        assert step.why == rates.BELOW_CLIFF and step.stalled == kept.stalled
        # one seed of two stalling there (4.5% above the scout), or diverging, keeps the margin
        for factor, ok in ((1.045, True), (1.0, False)):
            seeds = lambda k, law=law, factor=factor, ok=ok: [Scout(k, law(k), True), Scout(k, law(k) * factor, ok)]  # noqa: E731
            again, _ = scan(law, seeds=seeds)
            assert (again.chosen, again.excess_pct, again.confirmed) == (kept.chosen, kept.excess_pct, False)
    assert lifted >= 3


def test_the_confirmation_is_asked_once_at_the_best_scout_and_read_as_the_seeds_mean_there():
    # best 2x, 2.83x stalled: the margin would choose 1.41x, below the best scout
    scouts = [Scout(0, 3.06, True), Scout(1, 3.03, True), Scout(2, 3.0, True), Scout(3, 3.4, True), Scout(4, 3.5, True)]
    asked = next_step(scouts, BOUNDS, STALL, confirm=2)
    assert (asked.done, asked.why, asked.confirm, asked.next) == (False, rates.CONFIRMING, 2, ())
    assert next_step(scouts, BOUNDS, STALL, 2, [Scout(2, 3.01, True)]).confirm == 2  # one of two seeds is not enough
    done = next_step(scouts, BOUNDS, STALL, 2, [Scout(2, 3.005, True), Scout(2, 3.01, True)])
    assert (done.done, done.chosen, done.confirmed) == (True, 2, True)
    # a seed 4.1% above the scout stalled there: the margin stands, on the scouts as they were
    kept = next_step(scouts, BOUNDS, STALL, 2, [Scout(2, 3.01, True), Scout(2, 3.121, True)])
    assert (kept.done, kept.chosen, kept.confirmed, kept.excess_pct) == (
        True,
        1,
        False,
        next_step(scouts, BOUNDS, STALL).excess_pct,
    )
    # both trained (3.119 < 3.0 x 1.04), but the seeds' mean there (3.043) lies above 1.41x's scout: the best
    # moved below it, and the margin keeps the choice there, with its excess from the seeds' mean
    moved = next_step(scouts, BOUNDS, STALL, 2, [Scout(2, 3.01, True), Scout(2, 3.119, True)])
    assert (moved.done, moved.chosen, moved.confirmed) == (True, 1, True)
    mean = math.exp((math.log(3.0) + math.log(3.01) + math.log(3.119)) / 3)
    plain = next_step([*scouts[:2], Scout(2, mean, True), *scouts[3:]], BOUNDS, STALL)
    assert moved == dataclasses.replace(plain, confirmed=True)
    # at exactly `stall` above the scout a seed still trained; a hair above, it stalled
    edge = (1 + STALL) * 3.0
    assert next_step(scouts, BOUNDS, STALL, 2, [Scout(2, 2.99, True), Scout(2, edge, True)]).confirmed is True
    assert next_step(scouts, BOUNDS, STALL, 2, [Scout(2, 2.99, True), Scout(2, edge * 1.0001, True)]).confirmed is False
    # a stall two steps above the best leaves the best within the margin's reach: nothing to confirm
    two_up = [
        Scout(0, 3.06, True),
        Scout(1, 3.03, True),
        Scout(2, 3.0, True),
        Scout(3, 3.02, True),
        Scout(4, 3.5, True),
    ]
    assert (
        next_step(two_up, BOUNDS, STALL, 2) == next_step(two_up, BOUNDS, STALL)
        and next_step(two_up, BOUNDS, STALL).done
    )
    # one confirmation a scan: their mean (3.053) moves the best to 1.41x, where a bump at 2x (5% above it)
    # stalls and the margin binds again; it is kept there, not lifted by seeds that trained at another rate
    bumpy = [Scout(-2, 3.2, True), Scout(0, 3.1, True), Scout(1, 3.05, True), Scout(2, 3.2, True), Scout(3, 3.04, True)]
    bumpy.append(Scout(4, 3.5, True))
    assert next_step(bumpy, BOUNDS, STALL, 2).confirm == 3
    again = next_step(bumpy, BOUNDS, STALL, 2, [Scout(3, 3.06, True), Scout(3, 3.06, True)])
    assert (again.done, again.confirmed, again.stalled, again.chosen) == (True, True, (2, 4), 0)
    # the seeds' mean moves the best to the lower bound: the round says the seeds trained, whatever step it takes
    low = [Scout(0, 3.01, True), Scout(1, 3.0, True), Scout(2, 3.2, True)]
    assert next_step(low, (0, 8), STALL, 2).confirm == 1
    bound = next_step(low, (0, 8), STALL, 2, [Scout(1, 3.02, True), Scout(1, 3.03, True)])
    assert (bound.why, bound.chosen, bound.confirmed) == (rates.LOWER_BOUND, 0, True)
    # a scout that stalled against the scout's loss still has when the seeds' mean (3.02) lifts the best's
    lifted = [*scouts[:3], Scout(3, 3.13, True), Scout(4, 3.5, True)]  # 3.13 > 3.0 x 1.04, < 3.02 x 1.04
    seeds = [Scout(2, 3.03, True), Scout(2, 3.03, True)]
    kept_stall = next_step(lifted, BOUNDS, STALL, 2, seeds)
    assert (kept_stall.stalled, kept_stall.chosen, kept_stall.confirmed) == ((3, 4), 2, True)
    # a scan that confirms nothing ignores such runs
    assert next_step(scouts, BOUNDS, STALL) == next_step(scouts, BOUNDS, STALL, 0, [Scout(2, 3.0, True)] * 2)


def test_a_scout_that_diverged_is_the_cliff_and_every_scout_diverging_goes_down():
    law = planted(1.0)
    step, _ = scan(law, diverges=lambda k: k >= 3)
    assert step.why == rates.BELOW_CLIFF and 3 in step.stalled and step.chosen == 1  # a factor 2 below 2^1.5
    step, history = scan(law, diverges=lambda k: True)
    assert (step.why, step.chosen) == (rates.NONE_FINISHED, BOUNDS[0])
    assert history[-1][0] == BOUNDS[0]


def test_every_planted_best_and_cliff_ends_in_a_few_rounds_with_a_sound_excess():
    # the probes of docs/protocol-choices.md: best rates 1-3.6x the rule (here 1/4-11x), 1-3% of the loss one factor
    # 2 from the best (4-9.5% at 2-16x); a stalled run's plateau, 15% above the best, then lies above every
    # scout that trained (a plateau below a trained scout cannot be told from a best: the scan would take it)
    gen = np.random.default_rng(0)
    for _ in range(300):
        best = gen.uniform(-2, 3.5)
        cliff = best + gen.uniform(-1, 3)
        curvature = gen.uniform(0.005, 0.03)
        law = planted(best, curvature, cliff)
        step, history = scan(law)
        assert len(history) <= 8
        assert BOUNDS[0] <= step.chosen <= BOUNDS[1]
        if step.stalled:
            assert step.chosen <= min(step.stalled) - 2 and step.chosen / 2 < cliff - 0.5
        if step.why in (rates.INTERIOR, rates.BELOW_CLIFF):
            truth = 100 * (math.log(law(step.chosen)) - least_below_cliff(law, cliff))
            assert truth <= step.excess_pct + 1e-6
        if step.why == rates.INTERIOR:  # the parabola is the law: the excess is exact
            assert step.excess_pct == pytest.approx(100 * curvature * (step.chosen / 2 - best) ** 2, abs=1e-9)


def test_the_lattice_is_powers_of_sqrt_2_and_a_factor_off_it_is_named():
    assert [lattice_factor(k) for k in (-2, 0, 1, 2, 4)] == pytest.approx([0.5, 1, math.sqrt(2), 2, 4])
    assert [lattice_index(f) for f in (0.125, 1, 1.41421, 2.82843, 16)] == [-6, 0, 1, 3, 8]
    with pytest.raises(ValueError, match="3 is not a power of sqrt"):
        lattice_index(3)
    with pytest.raises(ValueError, match="no positive factor"):
        lattice_index(0)


def test_the_command_reads_its_scouts_and_writes_a_round_with_null_for_an_unknown(tmp_path: Path):
    law = planted(6.0)
    args = []
    for k in (-2, 0, 2, 4):  # a negative index too: the workflow passes `--scout=K=PATH`, never a bare `-2=...`
        path = tmp_path / f"m{k}.json"
        path.write_text(json.dumps({"final_val_loss": law(k), "status": "ok"}))
        args.append(f"--scout={k}={path}")
    out = tmp_path / "rates" / "round0.json"
    from depthwidth.cli import main

    scan_spec = json.dumps({"id": "L1-d8", "bounds": [0, 4], "stall": STALL})
    assert main(["rate-scan", "--scan-json", scan_spec, *args, "--out", str(out)]) == 0
    text = out.read_text()
    assert "NaN" not in text  # strict JSON
    record = json.loads(text)
    assert record["done"] and record["why"] == rates.UPPER_BOUND and record["chosen_factor"] == 4
    assert record["excess_pct"] is None and [s["k"] for s in record["scouts"]] == [-2, 0, 2, 4]


def test_the_command_asks_for_the_confirmation_seeds_and_reads_them(tmp_path: Path):
    from depthwidth.cli import main

    def metrics(name: str, loss: float, status: str = "ok") -> str:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"final_val_loss": loss, "status": status}))
        return str(path)

    losses = {0: 3.06, 1: 3.03, 2: 3.0, 3: 3.4, 4: 3.5}  # best 2x, 2.83x stalled
    scouts = [f"--scout={k}={metrics(f's{k}', loss)}" for k, loss in losses.items()]
    spec = json.dumps({"id": "L4-d32", "bounds": list(BOUNDS), "stall": STALL, "confirm": 2})
    out = tmp_path / "round0.json"
    assert main(["rate-scan", "--scan-json", spec, *scouts, "--out", str(out)]) == 0
    asked = json.loads(out.read_text())
    assert (asked["done"], asked["confirm"], asked["confirmations"], asked["next"]) == (False, 2, [], [])
    for status, confirmed, chosen in (("ok", True, 2), ("diverged", False, 1)):
        confirm = [f"--confirm=2={metrics('c1', 3.01)}", f"--confirm=2={metrics('c2', 3.02, status)}"]
        assert main(["rate-scan", "--scan-json", spec, *scouts, *confirm, "--out", str(out)]) == 0
        record = json.loads(out.read_text())
        assert (record["done"], record["confirmed"], record["chosen"]) == (True, confirmed, chosen)
        assert [(c["k"], c["ok"]) for c in record["confirmations"]] == [(2, True), (2, status == "ok")]


def test_a_diverged_scout_and_a_diverged_confirmation_seed_are_read_as_train_writes_them(tmp_path: Path):
    """Issue 55, case 1: train writes `"final_val_loss": null` for a diverged run; the round reads it as a run
    that did not finish (it was a TypeError, and every scan with one failed)."""
    from depthwidth.cli import main

    def metrics(name: str, loss: float | None, status: str = "ok") -> str:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"final_val_loss": loss, "status": status}))
        return str(path)

    spec = json.dumps({"id": "L1-d8", "bounds": list(BOUNDS), "stall": STALL, "confirm": 2})
    out = tmp_path / "round0.json"
    diverged = [f"--scout={k}={metrics(f's{k}', None, 'diverged')}" for k in START]
    assert main(["rate-scan", "--scan-json", spec, *diverged, "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["why"] == rates.NONE_FINISHED and record["next"] == [-2]
    assert record["scouts"] == [{"k": k, "loss": None, "ok": False} for k in START]
    # best 2x, 2.83x stalled: the confirmation seeds train at 2x, and one of them diverges there
    losses = {0: 3.06, 1: 3.03, 2: 3.0, 3: 3.4, 4: 3.5}
    scouts = [f"--scout={k}={metrics(f'c{k}', loss)}" for k, loss in losses.items()]
    confirm = [f"--confirm=2={metrics('seed1', 3.01)}", f"--confirm=2={metrics('seed2', None, 'diverged')}"]
    assert main(["rate-scan", "--scan-json", spec, *scouts, *confirm, "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert (record["done"], record["confirmed"], record["chosen"]) == (True, False, 1)  # the margin stands
    assert record["confirmations"] == [{"k": 2, "loss": 3.01, "ok": True}, {"k": 2, "loss": None, "ok": False}]
    assert rates.replay(record, json.loads(spec)) == record


def test_a_scout_below_the_best_that_diverged_bounds_the_scan_which_never_asks_for_it_again():
    """Issue 55, case 2: with the scout below the best diverged, the round asked for that index again, and the
    next round read the same scouts and decided the same, for ever."""
    scouts = [Scout(0, math.nan, False), Scout(2, 3.0, True), Scout(4, 3.1, True)]
    step = next_step(scouts, BOUNDS, STALL)
    assert (step.done, step.next) == (False, (1,))  # between the diverged scout and the best
    step = next_step([*scouts, Scout(1, 3.2, True)], BOUNDS, STALL)
    assert step.done and step.why == rates.INTERIOR and step.chosen == round(2 * step.vertex_log2) == 3
    # one step below the best diverged: the best is at the lowest rate the scan may read
    step = next_step([Scout(1, math.nan, False), *scouts[1:]], BOUNDS, STALL)
    assert (step.done, step.why, step.chosen) == (True, rates.LOWER_BOUND, 2)


@pytest.mark.parametrize("seed", range(3))
def test_every_scan_ends_whatever_its_scouts_diverge_at(seed):
    # any set of lattice points diverging (below the best, above it, between scouts) still ends the scan:
    # a round never asks for a scout it has (`scan` asserts it), and the lattice is finite
    gen = np.random.default_rng(seed)
    for _ in range(200):
        law = planted(gen.uniform(-2, 3.5), gen.uniform(0.005, 0.03), gen.uniform(-1, 5))
        doomed = {k for k in range(BOUNDS[0], BOUNDS[1] + 1) if gen.uniform() < 0.3}
        step, history = scan(law, diverges=doomed.__contains__, rounds=BOUNDS[1] - BOUNDS[0] + 2)
        assert step.chosen is not None and BOUNDS[0] <= step.chosen <= BOUNDS[1]
        # never a rate that diverged (but for a scan where every scout did)
        assert step.chosen not in doomed & set(history[-1]) or step.why == rates.NONE_FINISHED


def round_file(tmp_path: Path, record: object, name: str = "round0.json") -> Path:
    path = tmp_path / name
    path.write_text(record if isinstance(record, str) else json.dumps(record))
    return path


GOOD_ROUND = {
    "scan": {"id": "L1-d8", "bounds": [-6, 8], "stall": STALL, "confirm": 0},
    "scouts": [
        {"k": 0, "loss": 3.1, "ok": True},
        {"k": 2, "loss": 3.0, "ok": True},
        {"k": 4, "loss": None, "ok": False},
    ],
    "confirmations": [],
    "done": False,
    "why": rates.INTERIOR,
    "next": [-2],
    "chosen": None,
    "confirm": None,
}


@pytest.mark.parametrize(
    "damage, message",
    [
        ({"chosen": 99, "done": True}, "chosen 99 is not a lattice index within the bounds [-6, 8]"),
        ({"done": None}, "done None is not true or false"),
        ({"next": [], "done": False}, "not done, and asks for no run"),
        ({"next": ["2"]}, "next ['2'] is not a list of lattice indices within the bounds [-6, 8]"),
        ({"scouts": [{"k": 0, "loss": "3.1", "ok": True}]}, "scouts is not a list of runs"),
        ({"scouts": [{"k": 0, "loss": -3.1, "ok": True}]}, "scouts is not a list of runs"),  # ln of it
        ({"scouts": [{"k": 0, "loss": 3.1, "ok": True}] * 2}, "scouts holds lattice index 0 more than once"),
        ({"done": True}, "done, but chose no lattice index"),
    ],
)
def test_a_damaged_round_is_one_line_naming_its_file(tmp_path, damage, message):
    """Issue 55, case 10: `chosen: 99` was `KeyError: (99, 0)`, a missing `done` `KeyError: 'done'`."""
    assert rates.read_round(round_file(tmp_path, GOOD_ROUND)) == GOOD_ROUND
    path = round_file(tmp_path, {**GOOD_ROUND, **damage})
    with pytest.raises(rates.RoundError) as raised:
        rates.read_round(path)
    assert str(raised.value).startswith(f"{path}: {message}") and "\n" not in str(raised.value)
    assert str(raised.value).endswith(f"; {rates.ADVICE}")


def test_a_truncated_or_missing_field_round_names_its_file(tmp_path):
    text = json.dumps(GOOD_ROUND)
    path = round_file(tmp_path, text[: len(text) // 2])
    with pytest.raises(rates.RoundError, match=rf"^{path}: not a readable round \(.*\); `snakemake --forcerun"):
        rates.read_round(path)
    path = round_file(tmp_path, {k: v for k, v in GOOD_ROUND.items() if k != "done"})
    with pytest.raises(rates.RoundError, match=rf"^{path}: lacks the fields \['done'\]"):
        rates.read_round(path)
    other = {**GOOD_ROUND["scan"], "stall": 0.5}
    with pytest.raises(rates.RoundError, match="records the scan .* the plan's is"):
        rates.read_round(round_file(tmp_path, GOOD_ROUND), other)


def test_a_round_whose_choice_its_scouts_do_not_give_is_refused():
    """Issue 55, case 3: a final round's `chosen` edited 7 -> 6 was read as the scan's choice; the round is
    the scan's rule on the scouts it records, so it is recomputed wherever it is read."""
    law, scan_spec = planted(3.3), GOOD_ROUND["scan"]
    scouts = [{"k": k, "loss": law(k), "ok": True} for k in (4, 6, 8)]
    record = rates.replay({"scouts": scouts, "confirmations": []}, scan_spec)
    assert (record["done"], record["chosen"]) == (True, 7)
    assert rates.round_problem(record, scan_spec) is None
    assert rates.round_problem({**record, "chosen": 6}, scan_spec) == (
        "chosen 6 recorded, the scan's rule gives 7 on the scouts it records"
    )
    forged = {**record, "excess_pct": record["excess_pct"] / 2}  # the excess alone, the choice kept
    assert rates.round_problem(forged, scan_spec).startswith("excess_pct ")
    assert rates.round_problem({**record, "chosen": 6}) is None  # without the plan's scan: the fields alone


@pytest.mark.parametrize("curvature, vertex", [(0.01, 0.0), (0.004, 0.3), (0.02, -0.4)])
def test_the_vertex_noise_is_what_noise_on_the_scouts_does_to_the_choice(curvature, vertex):
    """The expected loss above the true best of a choice at a vertex fitted through three noisy scouts: the factor
    of sigma^2 (analytic on the symmetric design, 100 / (8 a), and by simulation: scouts drawn with sd sigma around
    a known parabola, the mean of a (fitted vertex - true)^2, at a noise small against the curvature: the factor is
    the first order), and the cap, a at the farthest point's distance."""
    xs = (-1.0, 0.0, 1.0)
    points = tuple((x, curvature * (x - vertex) ** 2 + 1.5) for x in xs)
    factor, cap = rates.vertex_noise(points)
    if vertex == 0.0:
        assert factor == pytest.approx(100 / (8 * curvature), rel=1e-5)
    assert cap == pytest.approx(100 * curvature * max(abs(x - vertex) for x in xs) ** 2)
    sigma, rng = 0.0001, np.random.default_rng(7)
    y = np.array([p[1] for p in points]) + sigma * rng.standard_normal((20000, 3))
    a = (y[:, 2] + y[:, 0] - 2 * y[:, 1]) / 2  # the parabola through x = -1, 0, 1
    fitted = (y[:, 0] - y[:, 2]) / (4 * a)
    simulated = 100 * curvature * np.mean((fitted - vertex) ** 2)
    assert simulated == pytest.approx(factor * sigma**2, rel=0.05)


def test_a_round_that_fits_a_vertex_records_its_noise_and_one_at_a_bound_does_not():
    interior = next_step([Scout(0, 4.10, True), Scout(2, 4.00, True), Scout(4, 4.08, True)], (-6, 8), 0.04)
    assert interior.done and interior.why == rates.INTERIOR
    points = tuple((k / 2, math.log(loss)) for k, loss in ((0, 4.10), (2, 4.00), (4, 4.08)))
    assert (interior.vertex_factor_pct, interior.vertex_cap_pct) == pytest.approx(rates.vertex_noise(points))
    bound = next_step([Scout(-6, 4.0, True), Scout(-4, 4.1, True), Scout(-2, 4.2, True)], (-6, 8), 0.04)
    assert bound.why == rates.LOWER_BOUND and math.isnan(bound.vertex_factor_pct) and math.isnan(bound.vertex_cap_pct)
