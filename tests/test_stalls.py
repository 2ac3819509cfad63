"""The stall pilot's summary (depthwidth.stalls) on tables built to make each number come out known."""

from __future__ import annotations

import math

import pytest
from depthwidth.stalls import STALL_EXCESS, excess_over_others, flag, stalled, summarize


def rows(shape: tuple[int, int, int], curve: dict[float, list[float]], status: dict | None = None) -> list[dict]:
    layers, width, d_ff = shape
    return [
        {
            "n_layer": layers,
            "d_model": width,
            "d_ff": d_ff,
            "lr_factor": factor,
            "seed": seed,
            "final_val_loss": loss,
            "status": (status or {}).get((factor, seed), "ok"),
        }
        for factor, losses in curve.items()
        for seed, loss in enumerate(losses)
    ]


def test_a_run_stalls_past_the_fixed_excess_over_its_siblings_median_and_a_divergence_stalls():
    assert excess_over_others([4.0, 4.0, 4.2]) == pytest.approx((4.0 / 4.1 - 1, 4.0 / 4.1 - 1, 0.05))
    edge = 4.0 * (1 + STALL_EXCESS)
    assert stalled([4.0, 4.0, edge * 0.999]) == (False, False, False)
    assert stalled([4.0, 4.0, edge * 1.001]) == (False, False, True)
    assert stalled([4.0, 4.1, math.inf]) == (False, False, True)


def test_best_rate_flat_span_and_the_pooled_over_median_sd():
    healthy = {1: [4.40, 4.41, 4.42], 2: [4.30, 4.31, 4.32], 4: [4.31, 4.32, 4.33], 8: [4.60, 4.61, 4.62]}
    steep = {1: [4.50, 4.50, 4.50], 2: [4.40, 4.41, 4.39], 4: [4.60, 4.60, 4.60], 8: [5.0, 5.0, 5.0]}
    stalling = {1: [4.6, 4.6, 4.6], 2: [4.4, 4.4, 4.8], 4: [4.55, 5.1, 4.55], 8: [5.2, 5.2, 5.2]}
    arm = summarize("t", rows((1, 64, 256), healthy) + rows((4, 32, 128), steep) + rows((8, 22, 88), stalling))
    by = {s.name: s for s in arm.shapes}
    assert by["L1 d64 f256"].best.factor == 2 and by["L1 d64 f256"].flat_span == 2  # 4x is within 0.5%
    assert by["L4 d32 f128"].flat_span == 1  # a sharp optimum
    assert by["L8 d22 f88"].best.factor == 2 and by["L8 d22 f88"].best.stalls == 1
    assert arm.stalls == 2 and arm.stalls_at_best == 1 and arm.runs == 36
    sds = [s.best.sd_pct for s in arm.shapes]
    assert arm.pooled_sd_pct == pytest.approx(math.sqrt(sum(x * x for x in sds) / 3))
    assert arm.median_sd_pct == pytest.approx(sorted(sds)[1])
    assert arm.pooled_sd_pct > 1.5 * arm.median_sd_pct and not arm.meets_target


def test_a_diverged_run_is_a_stall_and_leaves_its_rate_out_of_the_best():
    curve = {1: [4.4, 4.4, 4.4], 2: [4.3, 4.3, 4.3], 4: [4.1, 4.1, 4.1]}
    arm = summarize("t", rows((2, 32, 128), curve, status={(4, 1): "diverged"}))
    shape = arm.shapes[0]
    assert shape.points[2].stalls == 1 and shape.best.factor == 2


def test_the_planted_real_noise_stalls_as_often_and_as_far_as_the_default_run_measured():
    """tests/planted.py's stall mixture, read back through the flag: at the narrow families the flag finds the
    share of seeds the default run's flagged (2/81, 0/44); the healthy seeds keep their family's sd; the wide
    family draws what the planted tables always drew."""
    import numpy as np
    import planted
    from depthwidth.plan.sweep import Shape

    rng = np.random.default_rng(0)
    draws = 15000
    for shape, chance, sd in ((Shape(3, 13, 1, 52), 2 / 81, 0.0033), (Shape(3, 26, 1, 104), 0 / 44, 0.0025)):
        planted.REAL_NOISE = True
        try:
            noise = np.array([planted.seed_draw(shape, rng) for _ in range(draws)])
        finally:
            planted.REAL_NOISE = False
        loss = 4.0 * np.exp(noise.reshape(-1, 3))  # shapes of three seeds, as the default's
        flagged = np.array([stalled(list(seeds)) for seeds in loss])
        assert flagged.mean() == pytest.approx(chance, abs=0.012), shape
        assert np.std(noise[noise < 0.02]) == pytest.approx(sd, rel=0.1)
    wide = Shape(3, 64, 2, 256)
    assert (
        planted.seed_draw(wide, np.random.default_rng(1))
        == planted.SEED_SD * np.random.default_rng(1).standard_normal()
    )


def table_row(width: int, factor: float, seed: int, loss: float, status: str = "ok", head: int = 1) -> dict:
    return {"n_layer": 2, "d_model": width, "n_head": head, "d_head": width // head, "d_ff": 4 * width,
            "lr_factor": factor, "seed": seed, "final_val_loss": loss, "status": status}  # fmt: skip


def test_a_sweep_tables_runs_are_flagged_against_their_own_shapes_seeds_at_their_own_rate():
    """Each run against the median of the other seeds of its shape at its rate, in the rows' order: 5% above two
    siblings flags, 2.9% does not; a run that did not finish flags; the same losses at another rate, or in another
    shape (another width, another head count), are other groups; a shape of one seed cannot be read (nan)."""
    edge = 4.0 * (1 + STALL_EXCESS)
    rows = [
        table_row(32, 1.0, 0, 4.0), table_row(32, 1.0, 1, 4.2), table_row(32, 1.0, 2, 4.0),  # seed 1 5% above
        table_row(32, 2.0, 0, 4.0), table_row(32, 2.0, 1, edge * 0.999), table_row(32, 2.0, 2, 4.0),
        table_row(32, 1.0, 0, 4.4, head=2), table_row(32, 1.0, 1, 4.4, head=2), table_row(32, 1.0, 2, 4.4, head=2),
        table_row(24, 1.0, 0, 4.0), table_row(24, 1.0, 1, math.nan, "diverged"), table_row(24, 1.0, 2, 4.05),
        table_row(16, 1.0, 0, 9.0),
    ]  # fmt: skip
    excess, flags = zip(*flag(rows), strict=True)
    assert flags == (False, True, False) + (False,) * 3 + (False,) * 3 + (False, True, False) + (False,)
    assert excess[1] == pytest.approx(5.0) and excess[4] == pytest.approx(100 * ((1 + STALL_EXCESS) * 0.999 - 1))
    assert excess[6:9] == (0.0, 0.0, 0.0)  # 10% above the one-head shape's seeds: another shape, not a stall
    assert excess[10] == math.inf and math.isnan(excess[12])
    said = [(f"{e:.9g}", f) for e, f in flag(rows)]  # (nan is no nan's equal)
    assert [(f"{e:.9g}", f) for e, f in flag(rows[::-1])] == said[::-1]  # the rows' order does not matter


def scanned(row: dict, factor: float, cap: float, smooth: float = 0.1) -> dict:
    """A table row of a scanned run as `run_row` gives it: the smooth excess and its scan's vertex noise."""
    extra = {"vertex_factor_pct": factor, "vertex_cap_pct": cap, "lr_excess_pct": smooth, "lr_vertex_pct": math.nan}
    return {**row, **extra, "run_id": f"{row['d_model']}-{row['lr_factor']}-{row['seed']}"}


def test_a_scanned_runs_excess_adds_its_vertex_noise_at_its_shapes_moderated_seed_variance():
    """lr_vertex_pct = the scan's factor x the shape's moderated variance of ln(loss) over its healthy seeds, at most
    the cap; lr_excess_pct = the smooth excess plus it; a stalled seed is left out of the variance (a scout is one
    healthy seed); a run without a fitted vertex keeps its excess alone."""
    from depthwidth import fits
    from depthwidth.tables.sweep import frame

    wide = [scanned(table_row(32, 2.0, s, loss), 50.0, 1.0) for s, loss in enumerate((4.00, 4.02, 3.99))]
    narrow = [scanned(table_row(16, 2.0, s, loss), 50.0, 0.0005) for s, loss in enumerate((4.40, 4.43, 4.38))]
    stalled = [scanned(table_row(24, 2.0, s, loss), 50.0, 1.0) for s, loss in enumerate((4.2, 4.21, 4.6))]
    plain = [scanned(table_row(20, 2.0, s, loss), math.nan, math.nan) for s, loss in enumerate((4.3, 4.31, 4.29))]
    table = frame(wide + narrow + stalled + plain)
    healthy = [[math.log(r["final_val_loss"]) for r in rows] for rows in (wide, narrow, stalled[:2], plain)]
    variances = fits.moderated_variances(healthy).variances
    vertex = table["lr_vertex_pct"].to_numpy()
    assert vertex[:3] == pytest.approx([50.0 * variances[0]] * 3) and 50.0 * variances[0] < 1.0
    assert vertex[3:6] == pytest.approx([0.0005] * 3) and 50.0 * variances[1] > 0.0005  # capped
    assert vertex[6:9] == pytest.approx([50.0 * variances[2]] * 3) and table["stalled"].tolist()[6:9] == [0, 0, 1]
    assert all(math.isnan(v) for v in vertex[9:])
    assert table["lr_excess_pct"].to_numpy()[:9] == pytest.approx(0.1 + vertex[:9])
    assert table["lr_excess_pct"].tolist()[9:] == [0.1] * 3


@pytest.mark.parametrize("command", ["stalls", "tilt"])
@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "a,b\n1,2\n",
            "not an lr_check table: no column n_layer, d_model, d_ff, lr_factor, seed, final_val_loss, status",
        ),
        (
            "n_layer,d_model,d_ff,lr_factor,seed,final_val_loss\n1,8,32,1,0,5.0\n",
            "not an lr_check table: no column status",
        ),
        ("n_layer,d_model,d_ff,lr_factor,seed,final_val_loss,status\n", "no runs (a header without rows)"),
        ("", "not an lr_check table: no column n_layer"),
    ],
)
def test_a_table_without_the_columns_or_runs_read_is_one_line_naming_the_file(tmp_path, capsys, command, text, said):
    """`stalls` and `tilt` read their tables with one reader (stalls.read_rows): a table lacking a column they read,
    or with no run, is one line naming the file and what it lacks (it was a KeyError's traceback, or fmean's
    "requires at least one data point")."""
    from depthwidth.cli import main

    bad = tmp_path / "sweep_lr_check.csv"
    bad.write_text(text)
    tables = [str(bad)] if command == "stalls" else [str(bad), str(bad)]  # tilt: a reference and an other
    assert main([command, *tables]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"depthwidth {command}: error: {bad}: {said}") and err.count("\n") == 1, err
    assert out == ""
