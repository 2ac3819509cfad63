"""The learning-rate scan (depthwidth.rates) against planted loss-vs-rate curves: a parabola in log2(rate)
with its best rate where the test puts it and a cliff above which training stalls. Each case runs the
scan round by round, as the workflow does, training nothing: a scout's loss is read off the planted law."""

from __future__ import annotations

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


def scan(law, start=START, bounds=BOUNDS, diverges=lambda k: False, rounds: int = 20):
    """Run a scan to its end on a law; returns the final step and every round's scouts."""
    scouts: dict[int, Scout] = {}
    ks = set(start)
    history = []
    for _ in range(rounds):
        for k in ks - set(scouts):
            scouts[k] = Scout(k, law(k), not diverges(k))
        step = next_step(list(scouts.values()), bounds, STALL)
        history.append(sorted(scouts))
        if step.done:
            return step, history
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


def test_a_scout_that_diverged_is_the_cliff_and_every_scout_diverging_goes_down():
    law = planted(1.0)
    step, _ = scan(law, diverges=lambda k: k >= 3)
    assert step.why == rates.BELOW_CLIFF and 3 in step.stalled and step.chosen == 1  # a factor 2 below 2^1.5
    step, history = scan(law, diverges=lambda k: True)
    assert (step.why, step.chosen) == (rates.NONE_FINISHED, BOUNDS[0])
    assert history[-1][0] == BOUNDS[0]


def test_every_planted_best_and_cliff_ends_in_a_few_rounds_with_a_sound_excess():
    # the probes of config/README.md: best rates 1-3.6x the rule (here 1/4-11x), 1-3% of the loss one factor
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
