"""Every rule on synthetic data built to hold, to fail, and to be inconclusive (pure noise; one seed).

Sweep tables are written with a known loss function and seed noise, turned into figure data by the
figure modules, and judged by the claims' rules, as the pipeline does. Data with no dependence on
shape or size, plus noise, must never make a rule that asserts an effect hold.
"""

from __future__ import annotations

import importlib
import math
import re

import numpy as np
import pandas as pd
import pytest
from depthwidth import claims, fits, shapes
from depthwidth.claims import noci, verdicts
from depthwidth.columns import SWEEP_COLUMNS
from depthwidth.plan import sweep
from depthwidth.plan.shaped import SDE_SAMPLES_FACTOR
from depthwidth.tables.sweep import run_row

BASE = {"head_dim": 16, "width_multiple": 2, "n_tolerance": 0.1}
OFF = {"enabled": False}


def write_table(folder, config: dict, experiment: str, loss, seeds, noise_pct: float, rng) -> str:
    """sweep_<experiment>.csv for `config`, loss(run, N) times seed noise (lognormal, sd in % of the loss)."""
    plan = sweep.plan({**BASE, "seeds": list(seeds), **config})
    rows = []
    for run_id, run in plan[experiment].items():
        counts = shapes.count_params(run.shape.n_layer, run.shape.d_model, run.shape.d_ff, 512, 64)
        value = loss(run, counts["nonembedding"]) * math.exp(rng.normal(0, noise_pct / 100))
        metrics = {
            "n_params_nonembedding": counts["nonembedding"],
            "n_params_total": counts["total"],
            "n_params_kaplan": counts["kaplan"],
            "lr_peak": 0.001,
            "tokens_seen": 1_000_000,
            "tokens_per_parameter": 1_000_000 / counts["nonembedding"],
            "epochs": 1.0,
            "train_flops_matmul": 6.0 * counts["nonembedding"] * 1_000_000,
            "final_val_loss": value,
            "best_val_loss": value,
            "status": "ok",
            "wall_seconds": 1.0,
            "tokens_per_second": 1e3,
        }
        rows.append(run_row(run_id, run, metrics))
    path = folder / f"sweep_{experiment}.csv"
    pd.DataFrame(rows, columns=list(SWEEP_COLUMNS)).to_csv(path, index=False)
    return path


def verdict(claim_id: str, figure: str, inputs: dict, tmp_path) -> dict:
    """The claim's row, computed from the figure module's data (its input tables by name) written to its CSV, as in
    the pipeline."""
    csv = tmp_path / f"{figure}.csv"
    importlib.import_module(f"depthwidth.plots.{figure}").data(**inputs).to_csv(csv, index=False)
    claim = next(c for c in claims.CLAIMS if c.id == claim_id)
    return claims.evaluate(claim, {figure: csv}, "synthetic")


def law(run, n):
    return (1e9 / n) ** 0.1


# ---------------------------------------------------------------- Kaplan Fig. 5

ASPECT = {
    "design": {"enabled": True, "n": [4e5], "depths": [2, 4, 8, 16], "ff_ratio": 4},
    "baseline": {"enabled": True, "aspect_ratio": 16, "n": [1e5, 3e5, 1e6, 3e6]},
    **{k: OFF for k in ("ffratio", "headdim", "lr_check")},
}


def aspect_row(tmp_path, loss, seeds, noise, depths=(2, 4, 8, 16)):
    rng = np.random.default_rng(1)
    config = {**ASPECT, "design": {**ASPECT["design"], "depths": list(depths)}}
    names = {"experiment": "design", "baseline": "baseline"}  # input name -> experiment
    inputs = {name: write_table(tmp_path, config, e, loss, seeds, noise, rng) for name, e in names.items()}
    return verdict("kaplan_aspect_basin", "kaplan_fig5_aspect", inputs, tmp_path)


def test_aspect_basin_holds_on_a_flat_basin_fails_on_a_steep_one(tmp_path):
    wide = (2, 4, 8, 16, 32, 64)  # aspect ratios 64 down to 0.36, 2.8x apart: 22x windows around the best
    row = aspect_row(tmp_path, law, [0, 1, 2], 0.2, wide)
    assert row["verdict"] == verdicts.HOLDS and "PARTIAL" not in row["our_value"], row["our_value"]
    steep = lambda run, n: law(run, n) * (1 + 0.07 * abs(math.log2(run.shape.n_layer / 4)))  # noqa: E731
    assert aspect_row(tmp_path, steep, [0, 1, 2], 0.2)["verdict"] == verdicts.FAILS


def test_a_flat_basin_over_a_narrower_window_than_40x_does_not_hold(tmp_path):
    row = aspect_row(tmp_path, law, [0, 1, 2], 0.2, (2, 4, 8))  # an 8x window, as the default's depths 2-8 give
    assert row["verdict"] == verdicts.INCONCLUSIVE and "PARTIAL" in row["our_value"], row["our_value"]
    assert "40x of aspect ratio" in row["what_it_would_take"]


def test_aspect_basin_with_one_seed_is_inconclusive_and_says_what_would_decide_it(tmp_path):
    row = aspect_row(tmp_path, law, [0], 0.2)
    assert row["verdict"] == verdicts.INCONCLUSIVE
    assert "2 seeds" in row["what_it_would_take"] and "PARTIAL" not in row["our_value"]


FF = {
    "ffratio": {"enabled": True, "n": 4e5, "n_layer": 4, "ratios": [1, 2, 4, 16]},
    "baseline": ASPECT["baseline"],
    **{k: OFF for k in ("design", "headdim", "lr_check")},
}


def ff_row(tmp_path, loss, seeds, noise, seed=2):
    rng = np.random.default_rng(seed)
    names = {"experiment": "ffratio", "baseline": "baseline"}  # input name -> experiment
    inputs = {name: write_table(tmp_path, FF, e, loss, seeds, noise, rng) for name, e in names.items()}
    return verdict("kaplan_ffratio", "kaplan_fig5_ffratio", inputs, tmp_path)


def test_ffratio_tests_both_parts_of_the_statement(tmp_path):
    def paper(run, n):  # flat in [1, 4], 6% worse at 16
        return law(run, n) * (1.06 if run.shape.d_ff / run.shape.d_model > 8 else 1.0)

    def better_at_16(run, n):
        return law(run, n) * (0.95 if run.shape.d_ff / run.shape.d_model > 8 else 1.0)

    assert ff_row(tmp_path, paper, [0, 1, 2], 0.2)["verdict"] == verdicts.HOLDS
    assert ff_row(tmp_path, better_at_16, [0, 1, 2], 0.2)["verdict"] == verdicts.FAILS


@pytest.mark.parametrize("seed", range(5))
def test_ffratio_on_pure_noise_never_holds(tmp_path, seed):
    # part (b) asserts an effect (ratios >= 8 cost loss): noise alone must not make the row hold
    assert ff_row(tmp_path, law, [0, 1, 2], 1.0, seed=seed)["verdict"] != verdicts.HOLDS


# ---------------------------------------------------------------- Kaplan Fig. 6 and L(N)

DESIGN6 = {
    "design": {"enabled": True, "depths": [1, 2, 4, 8], "n": [5e4, 2e5, 8e5, 3.2e6], "ff_ratio": 4},
    **{k: OFF for k in ("ffratio", "headdim", "baseline", "lr_check")},
}


def collapse_row(tmp_path, loss, seeds, noise, seed=3):
    rng = np.random.default_rng(seed)
    inputs = {"design": write_table(tmp_path, DESIGN6, "design", loss, seeds, noise, rng)}
    return verdict("kaplan_depth_collapse", "kaplan_fig6", inputs, tmp_path)


def test_depth_collapse_holds_fails_and_is_inconclusive(tmp_path):
    one_layer_worse = lambda run, n: law(run, n) * (1.08 if run.shape.n_layer == 1 else 1.0)  # noqa: E731
    separated = lambda run, n: one_layer_worse(run, n) * (1 + 0.03 * run.shape.n_layer)  # noqa: E731
    assert collapse_row(tmp_path, one_layer_worse, [0, 1, 2], 0.2)["verdict"] == verdicts.HOLDS
    assert collapse_row(tmp_path, separated, [0, 1, 2], 0.2)["verdict"] == verdicts.FAILS
    assert collapse_row(tmp_path, one_layer_worse, [0], 0.2)["verdict"] == verdicts.INCONCLUSIVE


@pytest.mark.parametrize("seed", range(5))
def test_depth_collapse_on_pure_noise_never_holds(tmp_path, seed):
    assert collapse_row(tmp_path, lambda run, n: 4.0, [0, 1], 0.5, seed)["verdict"] != verdicts.HOLDS


BASELINE = {
    # seven N: the curvature's interval counts N values (each its seeds' mean), 4 residual dof
    "baseline": {"enabled": True, "aspect_ratio": 16, "n": [3e4, 6e4, 1.2e5, 2.5e5, 5e5, 1e6, 3e6]},
    **{k: OFF for k in ("design", "ffratio", "headdim", "lr_check")},
}


def power_row(tmp_path, loss, seeds, noise, seed=4):
    rng = np.random.default_rng(seed)
    inputs = {"baseline": write_table(tmp_path, BASELINE, "baseline", loss, seeds, noise, rng)}
    return verdict("kaplan_power_law", "kaplan_power_law", inputs, tmp_path)


def test_power_law_holds_on_a_power_law_and_fails_on_a_curved_one(tmp_path):
    assert power_row(tmp_path, law, [0, 1], 0.2)["verdict"] == verdicts.HOLDS
    curved = lambda run, n: math.exp(2 - 0.1 * (math.log(n) - 12) ** 2)  # noqa: E731
    assert power_row(tmp_path, curved, [0, 1], 0.2)["verdict"] == verdicts.FAILS


@pytest.mark.parametrize("seed", range(5))
def test_power_law_on_flat_noise_never_holds_and_names_the_tokens_that_would_decide(tmp_path, seed):
    row = power_row(tmp_path, lambda run, n: 4.0, [0], 0.5, seed)
    assert row["verdict"] != verdicts.HOLDS
    if row["verdict"] == verdicts.INCONCLUSIVE:
        assert "tokens per run" in row["what_it_would_take"]


def test_power_law_row_names_both_references():
    local = fits.kaplan_local_exponent(3e4, 3e6, 5e5)
    assert local == pytest.approx(0.006, abs=5e-4)  # SCIENCE.md: ~0.006 at D = 5e5
    assert fits.tokens_for_local_exponent(local, 3e4, 3e6) == pytest.approx(5e5, rel=1e-3)


# ---------------------------------------------------------------- Levine

DESIGN_L = {
    "design": {"enabled": True, "depths": [2, 3, 4], "n": [5e3, 2e4, 8e4, 3.2e5, 1.28e6], "ff_ratio": 4},
    **{k: OFF for k in ("ffratio", "headdim", "baseline", "lr_check")},
}


def threshold_lines(cross_width) -> dict[int, fits.Line]:
    """Per depth: ln L vs ln N, consecutive depths crossing where the deeper has width cross_width(L)."""
    lines = {2: fits.Line(1.0, -0.05, 0.0, 5)}
    for depth in (3, 4):
        log_n = math.log(shapes.nonembedding(depth, round(cross_width(depth)), 4 * round(cross_width(depth))))
        prev = lines[depth - 1]
        slope = prev.slope - 0.02
        lines[depth] = fits.Line(float(prev(log_n)) - slope * log_n, slope, 0.0, 5)
    return lines


def crossover_row(tmp_path, cross_width, seeds, noise, seed=5):
    lines = threshold_lines(cross_width)
    loss = lambda run, n: math.exp(lines[run.shape.n_layer](math.log(n)))  # noqa: E731
    rng = np.random.default_rng(seed)
    inputs = {"design": write_table(tmp_path, DESIGN_L, "design", loss, seeds, noise, rng)}
    return verdict("levine_crossover_slope", "levine_crossover", inputs, tmp_path)


def test_crossover_slope_holds_at_the_threshold_and_fails_at_constant_width(tmp_path):
    # a 95% interval misses the true slope now and then: over ten noise draws it must hold in most
    rows = [crossover_row(tmp_path, lambda depth: 3.0**depth, [0, 1, 2], 0.1, seed) for seed in range(10)]
    assert sum(row["verdict"] == verdicts.HOLDS for row in rows) >= 8, [row["interval"] for row in rows]
    row = crossover_row(tmp_path, lambda depth: 40.0, [0, 1, 2], 0.1)
    assert row["verdict"] == verdicts.FAILS, row
    row = crossover_row(tmp_path, lambda depth: 3.0**depth, [0], 0.1)
    assert row["verdict"] == verdicts.INCONCLUSIVE and "2 seeds" in row["what_it_would_take"]


def test_crossovers_beyond_the_trained_n_are_named_without_an_extrapolated_interval(tmp_path):
    row = crossover_row(tmp_path, lambda depth: 10 * 3.0**depth, [0, 1, 2], 0.1)  # widths 270-810: beyond N's
    assert row["verdict"] == verdicts.INCONCLUSIVE
    beyond = re.findall(r"\d->\d: width \d+ ([^,;]*)\(outside the trained N\)", row["our_value"])
    assert beyond and all(text == "" for text in beyond), row["our_value"]


@pytest.mark.parametrize("seed", range(5))
def test_crossover_slope_on_pure_noise_never_holds(tmp_path, seed):
    rng = np.random.default_rng(seed)
    inputs = {"design": write_table(tmp_path, DESIGN_L, "design", lambda run, n: 4.0, [0, 1], 0.5, rng)}
    assert verdict("levine_crossover_slope", "levine_crossover", inputs, tmp_path)["verdict"] != verdicts.HOLDS


DESIGN_OPT = {
    "design": {"enabled": True, "depths": [1, 2, 4], "n": [6e4, 2e5, 6e5, 2e6], "ff_ratio": 4},
    **{k: OFF for k in ("ffratio", "headdim", "baseline", "lr_check")},
}


def optimum_rows(tmp_path, loss, seeds, noise, seed=6):
    rng = np.random.default_rng(seed)
    inputs = {"design": write_table(tmp_path, DESIGN_OPT, "design", loss, seeds, noise, rng)}
    return (
        verdict("levine_optimal_depth", "levine_optimal_depth", inputs, tmp_path),
        verdict("levine_depth_inefficiency", "levine_optimal_depth", inputs, tmp_path),
    )


def levine_bowl(run, n):
    """Loss with its minimum over depth at Levine's L*(N): a bowl in ln(depth)."""
    best = fits.levine_optimal_depth_at(n)
    return (1e9 / n) ** 0.1 * (1 + 0.05 * (math.log(run.shape.n_layer) - math.log(best)) ** 2)


def test_optimal_depth_follows_levine_and_fails_when_fixed(tmp_path):
    optimum, _ = optimum_rows(tmp_path, levine_bowl, [0, 1, 2], 0.1)
    assert optimum["verdict"] == verdicts.HOLDS, optimum
    deep_wins = lambda run, n: (1e9 / n) ** 0.1 * (1 - 0.03 * math.log2(run.shape.n_layer))  # noqa: E731
    optimum, contrast = optimum_rows(tmp_path, deep_wins, [0, 1, 2], 0.1)
    assert optimum["verdict"] == verdicts.FAILS
    # at these widths no shallower depth reaches its threshold: the contrast has one side and is not decided
    assert contrast["verdict"] == verdicts.INCONCLUSIVE and "no pair above" in contrast["our_value"]
    optimum, inefficiency = optimum_rows(tmp_path, levine_bowl, [0], 0.1)
    assert optimum["verdict"] == inefficiency["verdict"] == verdicts.INCONCLUSIVE


def levine_contrast(run, n):
    """Each layer below the threshold log3(width) takes 4% off the loss; layers above it take nothing."""
    return (1e9 / n) ** 0.1 * math.exp(-0.04 * min(run.shape.n_layer, math.log(run.shape.d_model, 3)))


# the default's depths and N: pairs below the threshold (1->2, 2->3 at the larger N) and above it (4->6, 6->8)
DESIGN_CONTRAST = {
    "design": {"enabled": True, "depths": [1, 2, 3, 4, 6, 8], "n": [2.5e4, 5e4, 1e5], "ff_ratio": 4},
    **{k: OFF for k in ("ffratio", "headdim", "baseline", "lr_check")},
}


def contrast_row(tmp_path, loss, seeds=(0, 1, 2), noise=0.1, seed=6):
    rng = np.random.default_rng(seed)
    inputs = {"design": write_table(tmp_path, DESIGN_CONTRAST, "design", loss, seeds, noise, rng)}
    return verdict("levine_depth_inefficiency", "levine_optimal_depth", inputs, tmp_path)


def test_the_contrast_holds_only_with_both_sides_of_the_threshold(tmp_path):
    contrast = contrast_row(tmp_path, levine_contrast)
    assert contrast["verdict"] == verdicts.HOLDS, contrast["our_value"]

    def above_loses(run, n):  # one side only: depth above the threshold costs 3%, below it gains nothing
        too_deep = run.shape.n_layer > math.log(run.shape.d_model, 3)
        return (1e9 / n) ** 0.1 * (1.03 if too_deep else 1.0)

    contrast = contrast_row(tmp_path, above_loses)
    assert contrast["verdict"] == verdicts.FAILS, contrast["our_value"]  # deepening does not pay below
    assert "deepening pays below: does not hold" in contrast["our_value"]

    def always_pays(run, n):  # the other side missing: deepening pays 2% a layer everywhere
        return (1e9 / n) ** 0.1 * (1 - 0.02 * run.shape.n_layer)

    contrast = contrast_row(tmp_path, always_pays)
    assert contrast["verdict"] == verdicts.FAILS, contrast["our_value"]
    assert "stops paying above (gain <= 0.5%): does not hold" in contrast["our_value"]


def test_optimal_depth_and_inefficiency_on_pure_noise_hold_at_most_at_the_gates_false_positive_rate(tmp_path):
    """A 95% gate on pure noise may hold by chance (about 2.5% one-sided); a biased rule would hold far more."""
    held = 0
    for seed in range(20):
        rows = optimum_rows(tmp_path, lambda run, n: 4.0, [0, 1], 0.5, seed)
        held += sum(row["verdict"] == verdicts.HOLDS for row in rows)
    assert held <= 2


# ---------------------------------------------------------------- Noci


SDE_STEPS = (0.01, 0.005)


def terminal_frame(shift, samples=1500, seed=11, widths=(8, 16, 32, 64, 128), dt_bias=0.0, steps=SDE_STEPS, ode=-0.3):
    """A terminal-sample table: the SDE's law at dt -> 0 is N(0.3, 0.2), at a step dt N(0.3 + dt_bias dt, 0.2)
    (Euler's O(dt) bias), with SDE_SAMPLES_FACTOR times the samples at each step, as planned; finite samples at
    each width N(0.3 + shift(n), 0.2); the drift-only ODE ends at `ode`."""
    rng = np.random.default_rng(seed)
    rows = []
    for block in ("attention",):
        for dt in steps:
            sde = rng.normal(0.3 + dt_bias * dt, 0.2, samples * SDE_SAMPLES_FACTOR)
            rows += [("sde", block, np.nan, dt, r) for r in sde]
            rows.append(("ode", block, np.nan, dt, ode))
        for n in widths:
            rows += [("finite", block, n, np.nan, r) for r in rng.normal(0.3 + shift(n), 0.2, samples)]
    frame = pd.DataFrame(rows, columns=["source", "block", "n", "dt", "rho01"])
    return frame.assign(attention="shaped", status="ok")


def terminal(tmp_path, shift, **kwargs):
    path = tmp_path / "sde_terminal.csv"
    terminal_frame(shift, **kwargs).to_csv(path, index=False)
    return verdict("noci_sde_describes_finite", "shaped_sde_convergence", {"terminal": path}, tmp_path)


@pytest.mark.sde_figure
def test_sde_rule_holds_on_convergence_fails_on_a_gap_and_is_inconclusive_on_one_law(tmp_path):
    row = terminal(tmp_path, lambda n: 4 / n, samples=6000)
    assert row["verdict"] == verdicts.HOLDS, row["our_value"]
    rate = float(re.search(r"rate n\^-([0-9.]+)", row["our_value"]).group(1))
    assert 0.8 < rate < 1.3 and "1/2: no" in row["our_value"], row["our_value"]  # the planted 1 / n, not 1 / sqrt(n)
    for stat in ("mean", "sd", "q25", "q50", "q75"):
        assert f" {stat} " in row["our_value"] or f"gaps {stat} " in row["our_value"], stat
    assert terminal(tmp_path, lambda n: 0.1)["verdict"] == verdicts.FAILS  # a gap that does not close
    row = terminal(tmp_path, lambda n: 0.0)
    assert row["verdict"] == verdicts.INCONCLUSIVE and "samples" in row["what_it_would_take"]


@pytest.mark.sde_figure
def test_ten_times_the_samples_on_a_correct_sde_never_turn_holds_into_does_not_hold(tmp_path):
    """A fail-to-reject test fails for certain once samples resolve the finite-n gap; the equivalence rule does not."""
    few, many = (terminal(tmp_path, lambda n: 4 / n, samples=k, seed=3, widths=(8, 32, 128)) for k in (600, 6000))
    assert few["verdict"] in (verdicts.HOLDS, verdicts.INCONCLUSIVE), few["our_value"]
    assert many["verdict"] == verdicts.HOLDS, many["our_value"]


@pytest.mark.sde_figure
def test_the_sde_reference_is_extrapolated_in_dt(tmp_path):
    """An O(dt) bias of 0.05 at the finer step (2.5x the margin) fails the rule read at that step alone;
    Richardson's 2 F(dt / 2) - F(dt) removes it, and the text says how large it was."""
    kwargs = {"samples": 6000, "dt_bias": 10.0}
    row = terminal(tmp_path, lambda n: 4 / n, **kwargs)
    assert row["verdict"] == verdicts.HOLDS, row["our_value"]
    bias = float(re.search(r"bias in the mean ([+-][0-9.]+)", row["our_value"]).group(1))
    assert bias == pytest.approx(0.05, abs=0.01) and "from dt 0.01 and 0.005" in row["our_value"]
    one_step = terminal(tmp_path, lambda n: 4 / n, steps=(0.005,), **kwargs)
    assert one_step["verdict"] == verdicts.FAILS and "not extrapolated in dt" in one_step["our_value"]


@pytest.mark.sde_figure
def test_the_sde_must_describe_the_smallest_width_better_than_the_drift_only_ode(tmp_path):
    """The figure's W1 ratio (SDE over ODE) against the truth, and the rule's gate on its interval at the smallest n."""
    from depthwidth.plots import shaped_sde_convergence as figure

    path = tmp_path / "sde_terminal.csv"
    terminal_frame(lambda n: 4 / n, samples=6000).to_csv(path, index=False)
    frame = figure.data(terminal=path)
    small = frame.iloc[0]  # n = 8: finite N(0.8, 0.2); W1 to the SDE 0.5, to the ODE's -0.3 E|N(1.1, 0.2)| = 1.1
    assert small["ode_ratio"] == pytest.approx(0.5 / 1.1, rel=0.05)
    assert small["ode_ratio_low"] < small["ode_ratio"] < small["ode_ratio_high"] < small["ode_ratio"] * 1.1
    closer = figure.data(terminal=path).assign(ode_ratio=0.5, ode_ratio_low=0.45, ode_ratio_high=0.55)
    assert noci.sde_convergence(closer).verdict == verdicts.HOLDS
    for (low, high), expected in (((1.05, 1.2), verdicts.FAILS), ((0.9, 1.1), verdicts.INCONCLUSIVE)):
        frame = closer.copy()
        frame.loc[0, ["ode_ratio_low", "ode_ratio_high"]] = low, high
        result = noci.sde_convergence(frame)
        assert result.verdict == expected, result.value
    assert "the SDE and the ODE lie about as close" in result.needs


def entropy_frame(standard, shaped, diverged=(), temperature=None):
    """Two layers per run, entropy 3.0 at step 0; layer 1 ends at the given final value per seed.

    diverged: the attention kind of each diverged run (one row each, excluded by the rule)."""
    rows = []
    kinds = (("standard", standard), ("shaped", shaped), ("temperature", temperature or []))
    for attention, finals in kinds:
        for seed, final in enumerate(finals):
            for step, value in ((0, 3.0), (50, (3.0 + final) / 2), (100, final)):
                for layer, entropy in (
                    (0, 2.9),
                    (1, value),
                ):  # layer 0 keeps its entropy: the lowest ratio is layer 1's
                    rows.append(
                        {
                            "attention": attention,
                            "lr": 0.1,
                            "seed": seed,
                            "run_id": f"{attention}{seed}",
                            "layer": layer,
                            "step": step,
                            "entropy": entropy,
                            "status": "ok",
                        }
                    )
    for seed, attention in enumerate(diverged):
        rows.append(
            {
                "attention": attention,
                "lr": 0.1,
                "seed": 90 + seed,
                "run_id": f"div{seed}",
                "layer": 0,
                "step": 0,
                "entropy": 3.0,
                "status": "diverged",
            }
        )
    low_lr = [{**row, "lr": 0.01, "entropy": 0.01, "run_id": "low" + row["run_id"]} for row in rows]
    return pd.DataFrame(rows + low_lr)  # a smaller lr where everything collapses: the rule reads the largest


COLLAPSED, KEPT = [0.3, 0.33, 0.36], [2.4, 2.5, 2.6]  # final entropy per seed (initial 3.0): ratio 0.1 vs 0.83


def test_entropy_rule_uses_seeds_and_excludes_diverged_runs():
    assert noci.entropy_collapse(entropy_frame(COLLAPSED, KEPT)).verdict == verdicts.HOLDS
    assert noci.entropy_collapse(entropy_frame(KEPT, KEPT)).verdict == verdicts.FAILS
    one = noci.entropy_collapse(entropy_frame([0.3], [2.5], diverged=["standard", "shaped"]))
    assert one.verdict == verdicts.INCONCLUSIVE and "diverged runs excluded: 2" in one.value
    assert "temperature-only control (softmax attention at the shaped temperature): not run" in one.value
    assert "train the control" in one.needs and "at least 2 seeds of standard" in one.needs


def test_entropy_control_like_shaped_credits_the_temperature_like_standard_the_centring():
    like_shaped = noci.entropy_collapse(
        entropy_frame(COLLAPSED, KEPT, temperature=[2.3, 2.4, 2.5], diverged=["temperature"] * 3)
    )
    assert like_shaped.verdict == verdicts.HOLDS and "the temperature alone prevents the collapse" in like_shaped.value
    assert "temperature 0.80 [" in like_shaped.value and "diverged runs excluded: 3" in like_shaped.value
    assert like_shaped.needs == ""  # decided: nothing left to run
    like_standard = noci.entropy_collapse(entropy_frame(COLLAPSED, KEPT, temperature=[0.25, 0.3, 0.35]))
    assert like_standard.verdict == verdicts.HOLDS and "the centring prevents the collapse" in like_standard.value
    # the control never changes the verdict: without a collapse of standard there is nothing to attribute
    nothing = noci.entropy_collapse(entropy_frame(KEPT, KEPT, temperature=[0.3, 0.33, 0.36]))
    assert nothing.verdict == verdicts.FAILS and "no shaped-vs-standard difference to attribute" in nothing.value


def test_entropy_control_undecided_on_one_seed_or_a_straddling_interval():
    one = noci.entropy_collapse(entropy_frame([0.3], [2.5], temperature=[2.5]))
    assert one.verdict == verdicts.INCONCLUSIVE and "temperature-only control: undecided" in one.value
    assert "at least 2 seeds of temperature" in one.needs
    straddles = noci.entropy_collapse(entropy_frame(COLLAPSED, KEPT, temperature=[0.1, 0.6, 1.5]))
    assert straddles.verdict == verdicts.HOLDS and "temperature-only control: undecided" in straddles.value
    assert "seeds of temperature would resolve its distance to the limit" in straddles.needs


def test_rank_collapse_rule_reads_its_intervals():
    def frame(std, shaped, sem):
        rows = [
            ("finite", "standard", 1.0, std, sem),
            ("finite", "shaped", 1.0, shaped, sem),
            ("sde", "shaped", 1.0, shaped, sem),
        ]
        rows += [(s, a, 0.0, 0.3, 0.0) for s, a, *_ in rows]
        return pd.DataFrame(rows, columns=["source", "attention", "t", "mean_rho", "sem_rho"]).assign(alive=1000)

    assert noci.rank_collapse(frame(0.99, 0.3, 0.01)).verdict == verdicts.HOLDS
    assert noci.rank_collapse(frame(0.5, 0.3, 0.01)).verdict == verdicts.FAILS
    assert noci.rank_collapse(frame(0.95, 0.3, 0.2)).verdict == verdicts.INCONCLUSIVE
