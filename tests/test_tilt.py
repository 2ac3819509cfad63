"""The warm-up's tilt (depthwidth.tilt) on paired tables planted with a known tilt, none, and the other sign."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from depthwidth.cli import main
from depthwidth.tilt import FF_RATIO, ShapeDelta, pair, tilt
from scipy import stats

WIDTHS = {1: 23, 2: 16, 3: 13}  # the literal block's shapes at N = 6600


def table(deltas: dict[int, list[float]], *, base: float = 5.0, factors=(1, 2, 4), stalled=(), failed=()) -> tuple:
    """A reference and an other lr_check table (d_ff = 4 d) whose pairs' 100 ln ratios are `deltas` per depth,
    spread over `factors` and seeds in order; `stalled` and `failed` name (depth, index) pairs."""
    ref, oth = [], []
    for depth, values in deltas.items():
        for i, delta in enumerate(values):
            key = {
                "n_layer": depth,
                "d_model": WIDTHS[depth],
                "d_ff": FF_RATIO * WIDTHS[depth],
                "lr_factor": factors[i % len(factors)],
                "seed": i // len(factors),
            }
            loss = base + 0.1 * depth + 0.01 * i  # any reference loss: the delta is the ratio's
            ref.append({**key, "final_val_loss": loss, "status": "ok", "stalled": "False"})
            oth.append(
                {
                    **key,
                    "final_val_loss": loss * math.exp(delta / 100),
                    "status": "failed" if (depth, i) in failed else "ok",
                    "stalled": str((depth, i) in stalled),
                }
            )
    return ref, oth


def planted(slope: float, sd: float, pairs: int, rng: np.random.Generator) -> dict[int, list[float]]:
    return {d: list(slope * math.log(d) + 0.7 + rng.normal(0, sd, pairs)) for d in WIDTHS}


def test_the_tilt_is_the_slope_of_the_shapes_mean_delta_on_ln_depth():
    deltas = {1: [0.5, 0.7, 0.6], 2: [1.0, 1.2, 1.1], 3: [1.4, 1.6, 1.5]}
    found = tilt(pair(*table(deltas)).shapes, "depth")
    x, y = np.log([1, 2, 3]), np.array([0.6, 1.1, 1.5])
    assert found.slope == pytest.approx(np.polyfit(x, y, 1)[0])
    assert found.low <= found.slope <= found.high
    assert found.low > 0 and found.carried == (0.0, found.high)  # one-sided: the interval excludes 0


def test_between_two_depths_the_interval_is_welchs_for_the_difference_of_their_means():
    shallow, deep = [0.1, 0.4, 0.2, 0.6, 0.3], [1.0, 1.9, 1.2, 0.8, 1.6, 1.1, 2.0, 1.4, 0.7]
    found = tilt(pair(*table({1: shallow, 2: deep})).shapes, "depth")
    welch = stats.ttest_ind(deep, shallow, equal_var=False).confidence_interval(0.95)
    assert found.slope * math.log(2) == pytest.approx(np.mean(deep) - np.mean(shallow))
    assert (found.low * math.log(2), found.high * math.log(2)) == pytest.approx((welch.low, welch.high))


def test_the_other_sign_is_carried_below_and_none_on_both_sides():
    rng = np.random.default_rng(1)
    down = tilt(pair(*table(planted(-0.8, 0.1, 9, rng))).shapes, "depth")
    assert down.high < 0 and down.carried == (down.low, 0.0)
    none = tilt(pair(*table(planted(0.0, 0.3, 9, rng))).shapes, "depth")
    assert none.low < 0 < none.high and none.carried == (none.low, none.high)


@pytest.mark.parametrize("pairs", [5, 9])  # a shape's pairs at the design scale and at the literal scale
def test_the_interval_covers_a_planted_tilt_about_as_often_as_its_level(pairs):
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(200):
        found = tilt(pair(*table(planted(0.4, 0.3, pairs, rng))).shapes, "depth")
        covered += found.low <= 0.4 <= found.high
    assert 0.92 <= covered / 200 <= 0.98, covered  # 0.95 nominal; 200 draws: sd 1.5%


def test_pairs_need_shape_factor_and_seed_alike_and_both_runs_finished():
    ref, oth = table({1: [0.1, 0.2, 0.3, 0.4], 2: [0.5, 0.6]}, failed={(2, 1)})
    oth = [row for row in oth if not (row["n_layer"] == 1 and row["seed"] == 1)]  # depth 1's fourth pair: gone
    pairing = pair(ref, oth)
    by_depth = {s.n_layer: s for s in pairing.shapes}
    assert by_depth[1].deltas == pytest.approx((0.1, 0.2, 0.3)) and by_depth[2].deltas == pytest.approx((0.5,))
    assert pairing.unpaired == 2  # the reference's runs without a finished partner
    twice = ref + [dict(ref[0])]
    with pytest.raises(ValueError, match="two runs of one shape, rate factor and seed"):
        pair(twice, oth)


def test_stalled_pairs_count_in_the_tilt_and_are_left_out_only_beside_it():
    deltas = {1: [0.0, 0.0, 0.0], 2: [0.0, 0.0, 6.0], 3: [0.0, 0.0, 0.0]}
    found = tilt(pair(*table(deltas, stalled={(2, 2)})).shapes, "depth")
    assert [s.mean for s in found.shapes] == pytest.approx([0.0, 2.0, 0.0])
    assert found.slope_clean == pytest.approx(0.0) and found.slope != pytest.approx(0.0)


def test_the_feed_forward_tilt_reads_the_ratios_at_their_depth_and_the_depth_tilt_only_d_ff_4d():
    shapes = [
        ShapeDelta(1, 64, 256, (0.0,), (True,)),
        ShapeDelta(8, 32, 128, (1.0,), (True,)),
        ShapeDelta(4, 40, 160, (2.0,), (True,)),
        ShapeDelta(4, 50, 25, (2.0 - 2 * math.log(8),), (True,)),  # ratio 0.5
        ShapeDelta(4, 14, 224, (2.0 + 2 * math.log(4),), (True,)),  # ratio 16
    ]
    ff = tilt(shapes, "ff_ratio")
    assert ff.slope == pytest.approx(2.0) and {s.n_layer for s in ff.shapes} == {4}
    assert math.isnan(ff.low) and math.isnan(ff.high)  # one pair a shape: its variance is unknown
    depth = tilt(shapes, "depth")
    assert len(depth.shapes) == 3 and all(s.d_ff == FF_RATIO * s.d_model for s in depth.shapes)
    assert tilt(shapes[:1], "depth") is None  # one depth: no slope
    with pytest.raises(ValueError, match="tilt axis"):
        tilt(shapes, "width")


def test_the_command_prints_the_shapes_and_the_carried_tilt(tmp_path, capsys):
    paths = []
    for name, rows in zip(("ref", "oth"), table({1: [0.1, 0.2, 0.3], 2: [0.6, 0.7, 0.8], 3: [0.9, 1.0, 1.1]})):
        path = tmp_path / f"{name}.csv"
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        paths.append(str(path))
    assert main(["tilt", *paths]) == 0
    out = capsys.readouterr().out
    assert "| L2 d16 f64 | 3 (0 stalled) | +0.70% | +0.70% |" in out
    assert "depth tilt: +" in out and "ff_ratio" not in out
    apart = tmp_path / "apart.csv"
    text = Path(paths[1]).read_text().replace(",0,", ",90,")  # every run of the other arm on a seed the first lacks
    apart.write_text(text)
    assert main(["tilt", paths[0], str(apart)]) == 1
    assert "no run of" in capsys.readouterr().out
