"""Operating characteristics of every sweep row under the noise the default run really has (issue 51, item 6).

Each planted law (tests/planted.py) is judged twice over: once noiseless, which is the row's truth (holds, does
not hold, or inconclusive where the rule's design or its systematic cannot decide it even without noise), and
on DRAWS noise draws of the default's real noise (`planted.REAL_NOISE`: each width family's seed sd and stall
mixture, scouts and confirmation seeds included). A row decides wrongly when it decides against its truth, or
decides where its truth is inconclusive. The table (per row and law: how often it holds, fails, stays
inconclusive, and decides wrongly) prints with `-s`.

About 40 minutes on one core (the figures' bootstraps: ~10 s a draw), so it runs on demand, as the cluster tests
do: `DEPTHWIDTH_OC=1 pytest tests/test_operating_characteristics.py -s`. The table it gave is in
config/README.md ("Stalls"). A row over the bound is named in OVER_BOUND with its measured rate. A stall is a bias
(one seed 3-11% high moves its shape's mean one way), not noise: the moderated variances (item 4's first half) give
the stalled shape a wide interval and leave the healthy ones narrow, which a mean shifted by a stall can then escape;
the pre-registered stall flag (item 4's second half) is what must empty OVER_BOUND.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import planted
import pytest
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE

pytestmark = pytest.mark.skipif(
    os.environ.get("DEPTHWIDTH_OC") != "1", reason="about 40 minutes: DEPTHWIDTH_OC=1 runs it (its table: -s)"
)

DRAWS = 20  # the least
WRONG_BOUND = 0.05  # no row may decide wrongly on more than 5% of draws, on any law
ROWS = [
    "kaplan_aspect_basin", "kaplan_ffratio", "kaplan_headdim", "kaplan_depth_collapse", "kaplan_power_law",
    "levine_crossover_slope", "levine_optimal_depth", "levine_depth_inefficiency", "levine_literal_threshold",
]  # fmt: skip
# (row, law) -> the wrong-decision rate over the bound, measured on the moderated variances (issue 51, item 4's first
# half) on the laws kaplan_basin and levine only (draws 0-19, 2026-12-05); the other laws were not rerun. ffratio on
# kaplan_basin: draws 5 and 15 hold (a stall in a ratio-8+ shape reads as a cost), as under Bartlett's switch before.
# The crossover slope: draws 2 and 15, and 0 and 5, fail where no crossover lies in the trained N (a stalled narrow
# shape steepens its depth's line into a crossover at width ~30); under Bartlett's switch, inconclusive
OVER_BOUND: dict[tuple[str, str], float] = {
    ("kaplan_ffratio", "kaplan_basin"): 0.10,
    ("levine_crossover_slope", "kaplan_basin"): 0.10,
    ("levine_crossover_slope", "levine"): 0.10,
}


def wrong(truth: str, verdict: str) -> bool:
    return verdict != INCONCLUSIVE and verdict != truth


def characteristics(folder: Path, draws: int = DRAWS) -> dict[str, dict]:
    """law -> {truth: row -> verdict, counts: row -> Counter of verdicts over the draws}."""
    out = {}
    for name, law in sorted(planted.LAWS.items()):
        sd, planted.SEED_SD = planted.SEED_SD, 0.0
        try:
            truth = planted.sweep_verdicts(folder / f"{name}-truth", law, planted.NOISE_SEED, ROWS)
        finally:
            planted.SEED_SD = sd
        counts = {row: Counter() for row in ROWS}
        planted.REAL_NOISE = True
        try:
            for draw in range(draws):
                for row, verdict in planted.sweep_verdicts(folder / f"{name}-{draw}", law, draw, ROWS).items():
                    counts[row][verdict] += 1
        finally:
            planted.REAL_NOISE = False
        out[name] = {"truth": truth, "counts": counts}
    return out


def table(found: dict[str, dict], draws: int = DRAWS) -> str:
    short = {HOLDS: "H", FAILS: "F", INCONCLUSIVE: "I"}
    lines = [
        "| row | law | truth (noiseless) | holds | fails | inconclusive | wrong |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in ROWS:
        for law, result in found.items():
            truth, c = result["truth"][row], result["counts"][row]
            bad = sum(n for verdict, n in c.items() if wrong(truth, verdict))
            lines.append(
                f"| {row} | {law} | {short[truth]} | {c[HOLDS]} | {c[FAILS]} | {c[INCONCLUSIVE]} | "
                f"{bad}/{draws}{' **over**' if bad > WRONG_BOUND * draws else ''} |"
            )
    return "\n".join(lines)


def test_no_row_decides_wrongly_on_more_than_five_percent_under_the_real_noise(tmp_path):
    found = characteristics(tmp_path)
    print("\n" + table(found))
    over = {}
    for row in ROWS:
        for law, result in found.items():
            bad = sum(n for v, n in result["counts"][row].items() if wrong(result["truth"][row], v))
            if bad > WRONG_BOUND * DRAWS:
                over[(row, law)] = bad / DRAWS
    assert over.keys() == OVER_BOUND.keys(), over
