"""The warm-up's tilt (depthwidth.tilt) on paired tables planted with a known tilt, none, and the other sign."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from depthwidth import fits, tilt
from depthwidth.claims import verdicts
from depthwidth.cli import main
from depthwidth.tilt import ShapeDelta, pair
from depthwidth.tilt import tilt as slope_of
from scipy import stats

WIDTHS = {1: 23, 2: 16, 3: 13}  # the literal block's shapes at N = 6600
FF_RATIO = 4  # the design's d_ff / d


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
    found = slope_of(pair(*table(deltas)).shapes, "depth")
    x, y = np.log([1, 2, 3]), np.array([0.6, 1.1, 1.5])
    assert found.slope == pytest.approx(np.polyfit(x, y, 1)[0])
    assert found.low <= found.slope <= found.high
    assert found.low > 0 and found.carried == (0.0, found.high)  # one-sided: the interval excludes 0


def test_between_two_depths_the_interval_is_welchs_for_the_difference_of_their_means():
    shallow, deep = [0.1, 0.4, 0.2, 0.6, 0.3], [1.0, 1.9, 1.2, 0.8, 1.6, 1.1, 2.0, 1.4, 0.7]
    found = slope_of(pair(*table({1: shallow, 2: deep})).shapes, "depth")
    welch = stats.ttest_ind(deep, shallow, equal_var=False).confidence_interval(0.95)
    assert found.slope * math.log(2) == pytest.approx(np.mean(deep) - np.mean(shallow))
    assert (found.low * math.log(2), found.high * math.log(2)) == pytest.approx((welch.low, welch.high))


def test_the_other_sign_is_carried_below_and_none_on_both_sides():
    rng = np.random.default_rng(1)
    down = slope_of(pair(*table(planted(-0.8, 0.1, 9, rng))).shapes, "depth")
    assert down.high < 0 and down.carried == (down.low, 0.0)
    none = slope_of(pair(*table(planted(0.0, 0.3, 9, rng))).shapes, "depth")
    assert none.low < 0 < none.high and none.carried == (none.low, none.high)


@pytest.mark.parametrize("pairs", [5, 9])  # a shape's pairs at the design scale and at the literal scale
def test_the_interval_covers_a_planted_tilt_about_as_often_as_its_level(pairs):
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(200):
        found = slope_of(pair(*table(planted(0.4, 0.3, pairs, rng))).shapes, "depth")
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
    found = slope_of(pair(*table(deltas, stalled={(2, 2)})).shapes, "depth")
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
    ff = slope_of(shapes, "ff_ratio")
    assert ff.slope == pytest.approx(2.0) and {s.n_layer for s in ff.shapes} == {4}
    assert math.isnan(ff.low) and math.isnan(ff.high)  # one pair a shape: its variance is unknown
    depth = slope_of(shapes, "depth")
    assert len(depth.shapes) == 3 and all(s.d_ff == FF_RATIO * s.d_model for s in depth.shapes)
    assert slope_of(shapes[:1], "depth") is None  # one depth: no slope
    with pytest.raises(ValueError, match="tilt axis"):
        slope_of(shapes, "width")


@pytest.mark.parametrize("ratio", [4, 2])
def test_the_depth_tilt_reads_the_ratio_every_depth_shares_whatever_it_is(ratio):
    # lr_check's depths at the design's ratio (config `sweep.design.ff_ratio`, 4 by default), its feed-forward
    # shapes at depth 4 at two others: the depth tilt reads the first, the feed-forward tilt every shape of depth 4
    shapes = [ShapeDelta(depth, 32, ratio * 32, (float(depth),), (True,)) for depth in (1, 4, 8)]
    shapes += [ShapeDelta(4, 32, 16, (0.0,), (True,)), ShapeDelta(4, 32, 512, (9.0,), (True,))]
    assert tilt.depth_ratio(shapes) == ratio
    depth = slope_of(shapes, "depth")
    assert [s.n_layer for s in depth.shapes] == [1, 4, 8] and depth.slope == pytest.approx(
        np.polyfit(np.log([1, 4, 8]), [1.0, 4.0, 8.0], 1)[0]
    )
    assert sorted(s.ff_ratio for s in slope_of(shapes, "ff_ratio").shapes) == [0.5, ratio, 16]
    assert tilt.depth_ratio(shapes[3:]) is None and slope_of(shapes[3:], "depth") is None  # one depth, two ratios


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


# ---------------------------------------------------------------- what the rows carry


def test_a_linear_statistic_moves_by_its_range_times_its_lever():
    """A difference of depth 8 and depth 1 (100 ln ratio) under t ln(depth), t in [low, high], moves by exactly
    [low, high] x ln 8: down from the low end, up from the high end."""
    depths = np.array([1, 2, 4, 8.0])
    values = np.log([4.0, 3.9, 3.85, 3.83])
    stat = lambda v: 100 * (v[3] - v[0])  # noqa: E731
    down, up = fits.tilt_shift(stat, values, np.log(depths), [(-1.0, 2.0)])
    assert (down, up) == pytest.approx((math.log(8), 2 * math.log(8)))
    assert fits.tilt_shift(stat, values, np.log(depths), [(0.0, 0.152)]) == pytest.approx((0.0, 0.152 * math.log(8)))


def test_a_spread_is_read_exactly_where_its_least_lies_between_grid_points():
    """The spread |1 + t| of two values for t in [-1.7, 0] is least (0) at t = -1, off the nine-point grid
    (-1.7, -1.4875, ...): the crossing points make its down 1 exactly; on a dense brute force of random values,
    spreads and best-of differences agree to the brute force's step."""
    spread = lambda v: float(v.max() - v.min())  # noqa: E731
    assert fits.tilt_shift(spread, np.array([0.0, 1.0]), np.array([0.0, 100.0]), [(-1.7, 0.0)]) == pytest.approx(
        (1.0, 0.0)
    )
    rng = np.random.default_rng(3)
    best_of = lambda v: float(v[0] - v[1:].min())  # noqa: E731
    for _ in range(20):
        values, levers = rng.normal(0, 1, 6), 100 * np.log(rng.integers(1, 17, 6))
        low, high = -rng.uniform(0, 0.3), rng.uniform(0, 0.3)
        for stat in (spread, best_of):
            dense = np.array([stat(values + levers * t / 100) for t in np.linspace(low, high, 20001)])
            base = stat(values)
            down, up = fits.tilt_shift(stat, values, levers, [(low, high)])
            assert down == pytest.approx(max(0.0, base - dense.min()), abs=1e-4)
            assert up == pytest.approx(max(0.0, dense.max() - base), abs=1e-4)


def test_shapes_take_their_own_scales_tilt_and_an_unmeasured_axis_carries_nothing():
    """A literal shape moves with the literal tilt, a design shape with the design's; outside `carrying`, or with a
    shape on an axis not measured, nothing is carried (nan); depth 1 alone has no lever (0)."""
    values, depth = np.log([4.0, 3.9, 3.0, 2.9]), np.log([1, 2, 1, 2.0])
    axis = tilt.depth_axis(["literal", "literal", "design", "design"])
    stat = lambda v: 100 * ((v[1] - v[0]) + (v[3] - v[2]))  # noqa: E731
    assert all(math.isnan(x) for x in tilt.shift(stat, values, depth, axis))
    with tilt.carrying(tilt.Carried(design=(0.005, 0.152), literal=(-1.47, 1.87))):
        down, up = tilt.shift(stat, values, depth, axis)
        assert (down, up) == pytest.approx((1.47 * math.log(2), (1.87 + 0.152) * math.log(2)))
        assert tilt.shift(stat, values, np.zeros(4), axis) == (0.0, 0.0)
    with tilt.carrying(tilt.Carried(design=(0.005, 0.152))):
        assert all(math.isnan(x) for x in tilt.shift(stat, values, depth, axis))
        assert tilt.row_range("design") == {"tilt_low": 0.0, "tilt_high": 0.152}  # one-sided: 0 to its upper end
        assert all(math.isnan(x) for x in tilt.row_range("literal").values())


def test_the_systematic_adds_the_tilt_to_the_shift_or_the_fallback_and_carries_it_alone_on_a_slope():
    on = verdicts.within_systematic(0.4)
    assert on.shift((0.1, 0.2), "%", (0.0, 0.3)) == pytest.approx((0.1, 0.5, True))
    assert on.shift(verdicts.NO_SHIFT, "%", (0.0, 0.3)) == pytest.approx((0.4, 0.7, False))
    assert on.shift(verdicts.NO_SHIFT, " per layer", (0.01, 0.02)) == pytest.approx((0.01, 0.02, True))
    assert on.shift(verdicts.NO_SHIFT, " per layer") is None
    assert verdicts.WITHOUT.shift((0.1, 0.2), "%", (0.0, 0.3)) is None
    record = verdicts.part("x", 1.0, (0.5, 1.5), on, (0.1, 0.2), tilt=(0.0, 0.3), margin=1.6, test=verdicts.below)
    assert (record.down, record.up, record.tilt_up, record.verdict) == pytest.approx((0.1, 0.5, 0.3, "inconclusive"))


@pytest.mark.parametrize("high, verdict", [(0.152, "does not hold"), (2.0, "inconclusive")])
def test_the_aspect_basins_fail_stands_unless_the_tilt_reaches_its_margin(high, verdict):
    """Depth 16 at ratio 2 against depth 2 at ratio 40, the deep one best by the limit + 1%: depth's tilt [0, high]
    narrows the spread by up to high ln 8. At the measured 0.152 (0.32%) the fail stands; at 2 (4.2%) it cannot."""
    from claim_rules import evidence
    from test_kaplan_rules import ASPECT, ASPECT_LIMIT, ablation, aspect

    shapes = [aspect(2.0, 0.0, depth=16), aspect(40.0, ASPECT_LIMIT + 1.0, depth=2)]
    frame = ablation(shapes, sd=0.1).assign(tilt_low=0.0, tilt_high=high)
    plain, within = evidence(ASPECT, frame), evidence(ASPECT, frame, fallback=math.nan)
    spread = within.parts[0]
    assert plain.verdict == "does not hold" and within.verdict == verdict
    assert (spread.tilt_down, spread.tilt_up) == pytest.approx((high * math.log(8), 0.0))


def test_an_argmin_stands_unless_the_tilt_closes_a_gap():
    """Each other depth's gap to the best closes by up to -t (ln its depth - ln the best's) for t in the range."""
    reach = verdicts.tilt_reach(np.log([1.0, 8.0]), math.log(4), (0.0, 0.152))
    assert reach == pytest.approx([0.152 * math.log(4), 0.0])
    on = verdicts.within_systematic()
    assert verdicts.argmin_part([0.3, 0.1], [0.0, 0.0], on, reach).verdict == "holds"
    assert verdicts.argmin_part([0.2, 0.1], [0.0, 0.0], on, reach).verdict == "inconclusive"
    # unscanned shapes and no fallback: the tilt alone widens it, and the part does not claim a fallback it lacks
    alone = verdicts.argmin_part([0.2, 0.1], [math.nan, math.nan], on, reach)
    assert (alone.verdict, alone.down, alone.tilt_down, alone.own) == pytest.approx(
        ("inconclusive", 0.152 * math.log(4), 0.152 * math.log(4), True)
    )
    assert verdicts.argmin_part([0.2, 0.1], [math.nan, math.nan], on) is None  # nothing to widen it


def test_the_literal_figures_columns_are_what_moving_its_tables_losses_by_the_tilt_does(tmp_path):
    """Independent of the code under test: the literal block's losses multiplied by e^(t ln depth / 100) at each end
    of the literal range move each side's gain by exactly the figure's tilt columns (the design carrying a zero
    range); without a tilt the columns are nan."""
    import pandas as pd
    from depthwidth.plots import levine_literal
    from test_sweep_figures import write_tables

    paths = write_tables(tmp_path, levine=True)
    plain = levine_literal.data(paths["design"], paths["literal"])
    assert plain["gain_past_tilt_up"].isna().all()
    with tilt.carrying(tilt.Carried(design=(0.0, 0.0), literal=(-1.0, 2.0))):
        carried = levine_literal.data(paths["design"], paths["literal"])
    moved = {}
    for t in (-1.0, 2.0):
        literal = pd.read_csv(paths["literal"])
        literal["final_val_loss"] *= np.exp(t * np.log(literal["n_layer"]) / 100)
        literal.to_csv(tmp_path / f"literal{t}.csv", index=False)
        moved[t] = levine_literal.data(paths["design"], tmp_path / f"literal{t}.csv")
    for side in ("before", "past"):
        column = f"gain_{side}_pct"
        base = carried[column].iloc[0]
        ends = [frame[column].iloc[0] - base for frame in moved.values()]
        assert carried[f"gain_{side}_tilt_down"].iloc[0] == pytest.approx(max(0.0, -min(ends)), abs=1e-9)
        assert carried[f"gain_{side}_tilt_up"].iloc[0] == pytest.approx(max(0.0, max(ends)), abs=1e-9)
    assert carried["gain_past_tilt_up"].iloc[0] > 0  # the test reads a tilt that moves something


@pytest.mark.parametrize(
    "text, message",
    [
        ("{bad", "not JSON"),
        ('{"depth": [0, 1]}', "expected an object of design, literal, ff_ratio"),
        ('{"design": [1, 0]}', "design: expected [low, high] with low <= high"),
    ],
)
def test_a_bad_tilt_argument_is_one_line_naming_what_is_wrong(text, message, capsys):
    with pytest.raises(SystemExit):
        main(["figure", "levine_literal", "--out", "x.png", "--tilt", text])
    assert message in capsys.readouterr().err


def test_the_config_carries_its_measured_tilt_and_refuses_an_inverted_one():
    from depthwidth.plan.config import ConfigError, read, validate
    from depthwidth.plan.jobs import from_config

    config = read("config/config.yaml")
    plan = from_config(config)
    carried = tilt.from_argument(plan.tilt_option("levine_literal").removeprefix("--tilt ").strip("'"))
    assert carried == tilt.Carried.from_config(config["tilt"])  # the command reads what the config holds
    assert carried.design[0] <= 0.078 <= carried.design[1]  # the measured slope inside its interval
    assert plan.tilt_option("shaped_entropy") == plan.tilt_option("lr_check") == ""  # no depth compared there
    assert from_config(read("config/ci.yaml")).tilt_option("levine_literal") == ""  # its recipe's: not measured
    same_recipe = from_config(read("config/levine-cpu.yaml"))  # the default's recipe: its measured tilt carried
    theirs = tilt.from_argument(same_recipe.tilt_option("levine_literal").removeprefix("--tilt ").strip("'"))
    assert (theirs.design, theirs.literal) == (carried.design, carried.literal)  # no ff_ratio spread there
    with pytest.raises(ConfigError, match="tilt.design"):
        validate({**config, "tilt": {"design": [0.2, 0.1]}})


def test_the_noise_text_gives_the_learning_rate_shift_and_the_tilts_largest_share_apart():
    """A spread widened by -0.10/+0.20 of learning rate and -0.00/+0.30 of tilt: the learning-rate clause gives its
    own -0.10/+0.20, the tilt's its +0.30, and the count of widened intervals past their margin reads the sum."""
    from depthwidth.claims import wording

    on = verdicts.within_systematic()
    spread = verdicts.part("spread", 1.0, (0.5, 1.5), on, (0.1, 0.2), tilt=(0.0, 0.3), margin=0.4, n=25000.0)
    said = wording.systematic_text((spread,), math.nan)
    assert "one-sided: largest -0.10/+0.20% (the spread at N=2.5e+04; margin 0.4%) over 1 interval" in said
    assert (
        "warm-up tilt (config `tilt`, docs/protocol-choices.md): largest -0.00/+0.30% (the spread at N=2.5e+04)" in said
    )
    assert said.endswith("1 of them wider than their margin")  # 0.1 + 0.2 + 0.3 > 0.4; neither alone is


def test_a_figure_rows_tilt_is_read_from_its_statistics_own_columns_and_is_none_without_them():
    """`figure_tilt` reads `<name>_tilt_down/_up` of the statistic named; a figure drawn without a tilt has no such
    columns, and its statistic carries none (NO_SHIFT), as a config without `tilt` wants."""
    row = {"slope": 1.1, "slope_tilt_down": 0.02, "slope_tilt_up": 0.05, "gap_tilt_down": 9.0, "gap_tilt_up": 9.0}
    assert verdicts.figure_tilt(row, "slope") == (0.02, 0.05)
    assert verdicts.figure_tilt({"slope": 1.1}, "slope") == verdicts.NO_SHIFT
