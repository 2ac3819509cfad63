"""The shaped-entropy figure (S4): one series per trained attention kind, the control dashed, the data beside it."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from depthwidth.plots import common

matplotlib.use("Agg")

KINDS = {"standard": 0.3, "shaped": 2.5, "temperature": 1.2}  # final entropy per kind (initial 3.0)


def entropy_table(path):
    rows = []
    for attention, final in KINDS.items():
        for lr in (0.003, 0.03):
            for layer in (0, 1):
                for step, entropy in ((0, 3.0), (10, final)):
                    rows.append(
                        {
                            "attention": attention,
                            "lr": lr,
                            "seed": 0,
                            "run_id": f"{attention}-{lr}",
                            "step": step,
                            "tokens": 640 * step,
                            "layer": layer,
                            "entropy": entropy,
                            "final_val_loss": 4.0 + lr,
                            "final_val_bpb": (4.0 + lr) / np.log(2) / 2.9,  # bits per byte at 2.9 bytes a token
                            "status": "ok",
                            "n_layer": 2,
                            "tokens_seen": 6400,
                            "train_flops": 1e9,
                            "wall_seconds": 60.0,
                        }
                    )
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_each_attention_kind_is_a_series_and_the_control_is_dashed(tmp_path, monkeypatch):
    drawn = {}
    save = common.save_figure

    def keep(fig, table, *paths):  # the PNG, and the PDF and CSV (None: beside it)
        drawn["fig"] = fig
        save(fig, table, *paths)

    monkeypatch.setattr(common, "save_figure", keep)
    table = common.render(
        "shaped_entropy", {"entropy": entropy_table(tmp_path / "e.csv")}, tmp_path / "shaped_entropy.png"
    )
    assert set(table["attention"]) == set(KINDS)
    first = drawn["fig"].axes[0]
    finals = {(line.get_linestyle(), round(float(line.get_ydata()[-1]), 3)) for line in first.get_lines()}
    assert finals == {("-", 0.3), ("-", 2.5), ("--", 1.2)}  # one final value per kind (both layers alike)
    assert [t.get_text() for t in first.get_legend().get_texts()] == sorted(KINDS)
    loss_panel = drawn["fig"].axes[-1]
    assert sorted(t.get_text() for t in loss_panel.get_legend().get_texts()) == sorted(KINDS)
    assert set(pd.read_csv(tmp_path / "shaped_entropy.csv")["attention"]) == set(KINDS)


# ---------------------------------------------------------------- the limit's exponent, from the measured rate


def test_the_limit_takes_the_exponent_the_measured_rate_allows_and_both_where_it_cannot_tell():
    from depthwidth.plots.shaped_sde_convergence import LIMIT_BETAS, limit_betas

    assert LIMIT_BETAS == (1.0, 0.5)
    assert limit_betas(0.7, 1.1) == (1.0,) and limit_betas(0.3, 0.8) == (0.5,)
    assert limit_betas(0.4, 1.2) == (1.0, 0.5) and limit_betas(1.2, 1.5) == (1.0, 0.5)  # both, or neither
    assert limit_betas(float("nan"), float("nan")) == (1.0, 0.5)  # no rate measured


def converging(beta: float, widths=(4, 8, 16, 32, 64, 128, 256), se: float = 1e-4) -> pd.DataFrame:
    """A block whose every functional approaches the SDE's 0 as 0.3 n^-beta, with standard errors `se`."""
    import numpy as np
    from depthwidth.plots.shaped_sde_convergence import FUNCTIONALS

    n = np.asarray(widths, dtype=float)
    rows = pd.DataFrame({"n": n})
    for stat in FUNCTIONALS:
        rows[f"finite_{stat}"], rows[f"finite_{stat}_se"] = 0.3 * n**-beta, se
        rows[f"sde_{stat}"], rows[f"sde_{stat}_se"] = 0.0, se
    return rows


def test_a_block_converging_as_n_to_the_minus_half_is_fitted_at_one_half_and_leaves_no_gap():
    """The rate recovers the planted exponent; the limit fitted at it leaves a gap of 0 within its interval, where
    a + c / n (the fit before) would leave a gap many standard errors away."""
    from depthwidth.plots.shaped_sde_convergence import Z975, block_limits, limit

    rows = converging(0.5)
    out = block_limits(rows)
    assert abs(out["rate"] - 0.5) < 1e-6 and out["limit_beta"] == 0.5
    for stat in ("mean", "sd", "q50"):
        assert abs(out[f"limit_gap_{stat}"]) <= Z975 * out[f"limit_gap_{stat}_se"]
    biased, biased_se = limit(rows["n"], rows["finite_mean"], rows["finite_mean_se"], 1.0)
    assert biased > 3 * biased_se
    assert block_limits(converging(1.0))["limit_beta"] == 1.0


def test_where_the_rate_allows_both_exponents_the_gap_is_the_hull_of_both_fits():
    from depthwidth.plots.shaped_sde_convergence import Z975, block_limits, limit

    rows = converging(0.75, se=0.05)  # no width's gap resolved (> 2 se): no rate, so both exponents
    out = block_limits(rows)
    assert np.isnan(out["rate"]) and np.isnan(out["limit_beta"])
    ends = []
    for beta in (1.0, 0.5):
        a, a_se = limit(rows["n"], rows["finite_mean"], rows["finite_mean_se"], beta)
        half = Z975 * np.hypot(a_se, 0.05)
        ends += [a - half, a + half]
    centre, half = out["limit_gap_mean"], Z975 * out["limit_gap_mean_se"]
    assert (centre - half, centre + half) == pytest.approx((min(ends), max(ends)))


# ---------------------------------------------------------------- the stopped fractions' difference


@pytest.mark.parametrize(
    "counts, interval",
    [
        ((56, 70, 48, 80), (0.0524, 0.3339)),
        ((9, 10, 3, 10), (0.1705, 0.8090)),
        ((6, 7, 2, 7), (0.0582, 0.8062)),
        ((5, 56, 0, 29), (-0.0381, 0.1926)),
        ((0, 10, 0, 20), (-0.1611, 0.2775)),
        ((10, 10, 0, 20), (0.6791, 1.0)),
    ],
)
def test_the_stopped_fractions_difference_is_newcombes_hybrid_score_interval(counts, interval):
    """Newcombe (1998, Stat. Med. 17: 873, Table II, method 10) to his four decimals, the zero counts and a fraction
    of 1 included, where a Wald interval collapses to a point."""
    from depthwidth.plots.shaped_sde_convergence import stopped_difference

    a, total_a, b, total_b = counts
    diff, low, high = stopped_difference(*counts)
    assert diff == pytest.approx(a / total_a - b / total_b)
    assert (low, high) == pytest.approx(interval, abs=5e-5)


def test_a_side_without_paths_has_no_stopped_fractions_difference():
    from depthwidth.plots.shaped_sde_convergence import stopped_difference

    assert all(np.isnan(v) for v in stopped_difference(0, 0, 1, 40))
