"""Operating characteristics of every sweep row under the noise the default run really has (issue 51, item 6).

Each planted law (tests/planted.py) is judged twice over: once noiseless, which is the row's truth (holds, does
not hold, or inconclusive where the rule's design or its systematic cannot decide it even without noise), and
on DRAWS noise draws of the default's real noise (`planted.REAL_NOISE`: each width family's seed sd and stall
mixture, scouts and confirmation seeds included). A row decides wrongly when it decides against its truth, or
decides where its truth is inconclusive. The table (per row and law: how often it holds, fails, stays
inconclusive, and decides wrongly) prints with `-s`.

210 judged draws, about 2 s of CPU each (the figures' bootstraps): some 8 minutes on an idle core (it took 50 on a
loaded one), so it runs on demand, as the cluster tests do: `DEPTHWIDTH_OC=1 pytest
tests/test_operating_characteristics.py -s`. The table it gave is in docs/protocol-choices.md ("Stalls"). A row
over the bound is named in OVER_BOUND with its measured rate. A stall is a bias
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
from test_planted_laws import CLAIM_ORDER

pytestmark = pytest.mark.skipif(
    os.environ.get("DEPTHWIDTH_OC") != "1", reason="about 8 minutes: DEPTHWIDTH_OC=1 runs it (its table: -s)"
)

DRAWS = 20  # the least
WRONG_BOUND = 0.05  # no row may decide wrongly on more than 5% of draws, on any law
ROWS = CLAIM_ORDER  # the sweep rows
# (row, law) -> the wrong-decision rate over the bound. Under the noise the default's protocol had before (cfc36f2:
# 60k-token warm-up, 14 of 198 runs stalled) the feed-ratio row held in 2 draws of 20 on six laws whose noiseless
# truth fails it, the power law failed 3 of 20 under `literal`, the crossover slope failed 2 of 20 under
# kaplan_basin and levine (a stalled narrow shape steepened its depth's line into a crossover). Under the noise of
# the protocol of 851c93c (180k-token warm-up, scouts on a seed of their own: 2 of 198 stalled; planted.py's
# NOISE_FAMILIES), measured 2026-12-06 on the AMD machine, draws 0-19 of every law: all of those are within the
# bound; the power law fails 2 of 20 draws of a constant loss (its noiseless truth inconclusive: a sagitta of 0
# against a 1% margin, whose interval the five N values' residual scatter sets). 2 of 20 is also what a true 5%
# gives one time in four: more draws would say which.
OVER_BOUND: dict[tuple[str, str], float] = {
    ("kaplan_power_law", "seed_noise"): 0.10,
}


def wrong_draws(truth: str, verdicts: Counter) -> int:
    """Draws that decided (held or failed) against the noiseless truth, or where the truth is inconclusive."""
    return sum(n for verdict, n in verdicts.items() if verdict != INCONCLUSIVE and verdict != truth)


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
            bad = wrong_draws(truth, c)
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
            bad = wrong_draws(result["truth"][row], result["counts"][row])
            if bad > WRONG_BOUND * DRAWS:
                over[(row, law)] = bad / DRAWS
    assert over.keys() == OVER_BOUND.keys(), over
