"""The Noci rules on hand-built figure frames: rank collapse (standard vs shaped at the last t, the SDE beside
them) and the entropy rule's pieces (the per-seed ratio interval, each kind's gate, what would decide it),
each number against an independent computation and each boundary from both sides."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from depthwidth.claims import noci
from depthwidth.claims.noci import ENTROPY_LIMIT, RANK_GAP_LIMIT, RANK_STANDARD_LIMIT, Z975
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE
from scipy import stats

# ---------------------------------------------------------------- rank collapse


def trajectory(std=(0.99, 0.004), shaped=(0.25, 0.006), sde=None, start=0.3, t_end=1.0, sde_sem=0.001):
    """A rank-collapse figure: three sources at t = 0 (all at `start`), t_end / 2 and t_end; (mean, sem) at t_end,
    1000 paths each, the SDE's mean at t_end `sde` (None: shaped's); the SDE row listed first at every t, so a rule
    that reads 'the first row' instead of 'the SDE's' is caught."""
    sde = shaped[0] if sde is None else sde
    rows = []
    for t in (0.0, t_end / 2, t_end):
        at_end = t == t_end
        rows += [
            ("sde", "shaped", t, sde if at_end else start + 0.01 * t, sde_sem),
            ("finite", "standard", t, std[0] if at_end else start + t / 2, std[1]),
            ("finite", "shaped", t, shaped[0] if at_end else start, shaped[1]),
        ]
    return pd.DataFrame(rows, columns=["source", "attention", "t", "mean_rho", "sem_rho"]).assign(alive=1000)


def test_rank_collapse_reads_the_last_t_of_each_source_and_the_start():
    result = noci.rank_collapse(trajectory(t_end=2.0, sde=0.26))
    assert result.value == "t=2: standard 0.990, shaped 0.250, SDE 0.260 (start 0.30)"
    assert result.noise == "sampling: standard error of the mean correlation over networks"
    assert result.at_our_scale == "standard -> 1 with depth at any width; shaped stays at the SDE's value"


def test_rank_collapse_intervals_are_the_standards_and_the_differences_normal_intervals():
    """standard +- z se; (standard - shaped) +- z sqrt(se_std^2 + se_shaped^2), independent of the other's se."""
    result = noci.rank_collapse(trajectory(std=(0.97, 0.01), shaped=(0.30, 0.02)))
    half_std, half_diff = Z975 * 0.01, Z975 * math.sqrt(0.01**2 + 0.02**2)
    assert pytest.approx(stats.norm.ppf(0.975)) == Z975
    half_sde, margin = Z975 * math.hypot(0.02, 0.001), 0.1 * 0.001 * math.sqrt(1000)
    assert result.interval == (
        f"standard [{0.97 - half_std:.3f}, {0.97 + half_std:.3f}]; "
        f"standard - shaped [{0.67 - half_diff:.3f}, {0.67 + half_diff:.3f}]; "
        f"shaped - SDE [{-half_sde:.3f}, {half_sde:.3f}] (margin +-{margin:.3f})"
    )
    assert result.verdict == INCONCLUSIVE  # shaped's sem 0.02 leaves its gap to the SDE wider than the margin
    wide = noci.rank_collapse(trajectory(std=(0.97, 0.01), shaped=(0.30, 0.02), sde_sem=0.02))
    assert wide.verdict == HOLDS and wide.needs == ""  # the SDE law's sd 0.63: margin +-0.063


@pytest.mark.parametrize(
    ("sde", "expected"),
    [(0.25, HOLDS), (0.25 + 0.0316 - 0.0025, INCONCLUSIVE), (0.25 + 0.0316 + 0.0229 + 0.005, FAILS), (0.19, FAILS)],
)
def test_shaped_must_stay_at_the_sdes_value_within_a_tenth_of_its_sd(sde, expected):
    """Margin 0.1 x the SDE law's sd (sem 0.01 x sqrt(1000 paths) = 0.316): +-0.0316; the gap's half-width
    1.96 x hypot(0.006, 0.01) = 0.0229: a gap of 0 holds, one whose interval straddles the margin is undecided,
    one whose interval lies past it fails, on either side."""
    result = noci.rank_collapse(trajectory(sde=sde, sde_sem=0.01))
    assert result.verdict == expected, result.interval


@pytest.mark.parametrize(
    "std,shaped,expected",
    [
        ((0.99, 0.001), (0.25, 0.001), HOLDS),
        # the standard's interval must lie above the limit: just above holds, touching it straddles
        ((RANK_STANDARD_LIMIT + 0.003, 0.001), (0.25, 0.001), HOLDS),
        ((RANK_STANDARD_LIMIT + 0.001, 0.001), (0.25, 0.001), INCONCLUSIVE),
        ((RANK_STANDARD_LIMIT - 0.003, 0.001), (0.25, 0.001), FAILS),
        # the gap's interval must lie above its limit, whatever the standard does
        ((0.99, 0.001), (0.99 - RANK_GAP_LIMIT - 0.004, 0.001), HOLDS),
        ((0.99, 0.001), (0.99 - RANK_GAP_LIMIT, 0.001), INCONCLUSIVE),
        ((0.99, 0.001), (0.99 - RANK_GAP_LIMIT + 0.004, 0.001), FAILS),
        # a wide shaped sem alone widens the gap's interval across the limit
        ((0.99, 0.001), (0.99 - RANK_GAP_LIMIT - 0.01, 0.02), INCONCLUSIVE),
        # shaped collapsing like standard: the gap fails even though the standard holds
        ((0.99, 0.001), (0.98, 0.001), FAILS),
    ],
)
def test_rank_collapse_needs_both_the_standards_collapse_and_the_gap(std, shaped, expected):
    result = noci.rank_collapse(trajectory(std=std, shaped=shaped))
    assert result.verdict == expected, result.interval
    assert result.needs == ("more sampled networks" if expected == INCONCLUSIVE else "")


def test_a_huge_standard_sem_leaves_rank_collapse_undecided():
    assert noci.rank_collapse(trajectory(std=(0.99, 0.2))).verdict == INCONCLUSIVE


# ---------------------------------------------------------------- entropy: the pieces


@pytest.mark.parametrize("values", [[0.2, 0.4], [0.1, 0.3, 0.35], [0.5, 0.52, 0.61, 0.7]])
def test_ratio_interval_is_the_geometric_mean_and_the_t_interval_of_the_mean_log_taken_back(values):
    mean, low, high = noci.ratio_interval(np.array(values))
    logs = np.log(values)
    half = stats.t.ppf(0.975, len(values) - 1) * np.std(logs, ddof=1) / math.sqrt(len(values))
    assert mean == pytest.approx(stats.gmean(values))
    assert (low, high) == pytest.approx((math.exp(logs.mean() - half), math.exp(logs.mean() + half)))
    assert 0 < low < mean < high  # a ratio's interval never reaches below 0 (a plain t-interval did: [-0.09, 0.32])


def test_shaped_over_standard_is_the_welch_interval_of_the_log_difference_taken_back():
    shaped, standard = np.array([0.5, 0.6, 0.55]), np.array([0.05, 0.09, 0.07])
    times, low, high = noci.keeps_more(shaped, standard)
    welch = stats.ttest_ind(np.log(shaped), np.log(standard), equal_var=False)
    assert times == pytest.approx(stats.gmean(shaped) / stats.gmean(standard))
    assert welch.pvalue < 0.05 and 1 < low < times < high
    assert all(math.isnan(v) for v in noci.keeps_more(shaped, standard[:1])[1:])


def test_ratio_interval_of_one_seed_has_its_mean_and_no_interval_and_of_none_nothing():
    mean, low, high = noci.ratio_interval(np.array([0.4]))
    assert mean == 0.4 and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(v) for v in noci.ratio_interval(np.array([])))


@pytest.mark.parametrize(
    "attention,low,high,expected",
    [
        ("standard", 0.05, ENTROPY_LIMIT, HOLDS),  # collapse: at or below the limit
        ("standard", 0.05, ENTROPY_LIMIT + 0.01, INCONCLUSIVE),
        ("standard", ENTROPY_LIMIT + 0.01, 0.5, FAILS),
        ("shaped", ENTROPY_LIMIT, 0.9, HOLDS),  # keeps its entropy: at or above the limit (its edge included)
        ("shaped", ENTROPY_LIMIT - 0.01, 0.9, INCONCLUSIVE),
        ("temperature", 0.05, ENTROPY_LIMIT - 0.01, FAILS),
        ("shaped", math.nan, math.nan, INCONCLUSIVE),
    ],
)
def test_each_kinds_gate_reads_the_limit_from_its_own_side(attention, low, high, expected):
    assert noci.kind_verdict(attention, low, high) == expected


def test_what_decides_a_kind_a_second_seed_then_the_seeds_its_interval_needs():
    one = noci.kind_needs("shaped", np.array([0.5]), math.nan, math.nan, 0.03)
    assert one == "at least 2 seeds of shaped at lr 0.03 (3 for a usable t-interval)"
    two = noci.kind_needs("standard", np.array([0.1, 0.2]), 0.1, 0.2, 0.03)  # decided: collapsed below the limit
    assert two == ""
    values = np.array([0.15, 0.35, 0.40])  # shaped, straddling the limit: (half / margin)^2 times the seeds, in logs
    mean, low, high = noci.ratio_interval(values)
    factor = ((math.log(high) - math.log(low)) / 2 / math.log(mean / ENTROPY_LIMIT)) ** 2
    assert noci.kind_needs("shaped", values, low, high, 0.03) == (
        f"about {math.ceil(3 * factor)} seeds of shaped would resolve its distance to the limit "
        f"({mean - ENTROPY_LIMIT:+.2f})"
    )
    at_limit = np.array([ENTROPY_LIMIT / 1.5, ENTROPY_LIMIT * 1.5])  # its geometric mean is the limit
    assert noci.kind_needs("shaped", at_limit, 0.05, 0.8, 0.03) == (
        f"shaped sits at the limit {ENTROPY_LIMIT:g}: more seeds would not decide it"
    )


def test_the_kind_gate_in_kind_needs_is_the_attentions_own():
    """An interval ending on the limit: standard's collapse is decided (nothing asked); shaped's keeping is not."""
    values = np.array([0.10, 0.15, 0.19])
    assert noci.kind_needs("standard", values, 0.1, ENTROPY_LIMIT, 0.03) == ""
    assert noci.kind_needs("shaped", values, 0.1, ENTROPY_LIMIT, 0.03).startswith("about")


# ---------------------------------------------------------------- entropy: the rule


def runs(kind: str, finals: list[float], lr: float = 0.1, status: str = "ok") -> list[dict]:
    """Two layers per run, entropy 3.0 at step 0; layer 1 ends at each final value (layer 0 keeps 2.9)."""
    rows = []
    for seed, final in enumerate(finals):
        for step, value in ((0, 3.0), (100, final)):
            for layer, entropy in ((0, 2.9 if step else 3.0), (1, value)):
                rows.append(
                    {"attention": kind, "lr": lr, "seed": seed, "run_id": f"{kind}-{lr}-{seed}{status}", "layer": layer}
                    | {"step": step, "entropy": entropy, "status": status}
                )
    return rows


def test_entropy_rule_reads_the_largest_lr_its_ratios_and_says_what_it_read():
    frame = pd.DataFrame(
        runs("standard", [0.3, 0.33, 0.36])
        + runs("shaped", [2.4, 2.5, 2.6])
        + runs("standard", [2.9, 2.9], lr=0.01)  # a smaller lr where standard keeps its entropy: not read
        + runs("shaped", [0.1], status="diverged")
    )
    result = noci.entropy_collapse(frame)
    std_values, shp_values = np.array([0.1, 0.11, 0.12]), np.array([0.8, 2.5 / 3, 2.6 / 3])
    std, shp = noci.ratio_interval(std_values), noci.ratio_interval(shp_values)
    times = noci.keeps_more(shp_values, std_values)
    assert result.verdict == HOLDS
    assert result.value.startswith(
        f"lr=0.1: standard {std[0]:.2f} [{std[1]:.2f}, {std[2]:.2f}] (3 seeds), "
        f"shaped {shp[0]:.2f} [{shp[1]:.2f}, {shp[2]:.2f}] (3 seeds), "
        f"shaped / standard {times[0]:.2f} [{times[1]:.2f}, {times[2]:.2f}]"
    )
    assert result.value.endswith("diverged runs excluded: 1 (shaped-0.1-0diverged)")
    assert result.interval == (
        f"standard [{std[1]:.2f}, {std[2]:.2f}]; shaped [{shp[1]:.2f}, {shp[2]:.2f}]; "
        f"shaped / standard [{times[1]:.2f}, {times[2]:.2f}]"
    )
    assert result.noise == "seed-to-seed spread of the entropy ratio"
    assert result.at_our_scale == (
        f"the paper gives no number; collapse read as a ratio below {ENTROPY_LIMIT:g} at our largest lr"
    )
    # held, but the control is not run: it says how to attribute the difference
    assert result.needs == "train the control (add temperature to shaped.training.attentions)"


def test_entropy_rule_needs_both_kinds_decided_and_excludes_nothing_when_nothing_diverged():
    frame = pd.DataFrame(runs("standard", [0.3, 0.33, 0.36]) + runs("shaped", [0.3, 0.32, 0.34]))
    result = noci.entropy_collapse(frame)
    assert result.verdict == FAILS  # shaped collapses too: decided whatever the control would say
    assert result.value.endswith("diverged runs excluded: 0 (none)") and result.needs == ""
    no_seed = noci.entropy_collapse(
        pd.DataFrame(runs("standard", [0.3, 0.33, 0.36]) + runs("shaped", [0.1], status="diverged"))
    )
    assert "shaped: no finished run" in no_seed.value and no_seed.verdict == INCONCLUSIVE


# ---------------------------------------------------------------- the SDE rule, on figure rows


def convergence(block="attention", gaps=None, w1=(0.09, 0.015), null_q95=0.02, ode=(0.15, 0.13, 0.17), **per_block):
    """Two widths (4 and 256) of one block as the convergence figure writes them: every functional's limit gap
    0.001 +- 0.002 (or `gaps`: stat -> (gap, se)), the SDE's sd 0.3 (margin 0.03), W1 at both widths, the ODE
    ratio at the smallest, nothing stopped; `per_block` overrides any other per-block column."""
    from depthwidth.plots.shaped_sde_convergence import COLUMNS, FUNCTIONALS

    block_values = {column: 0.0 for column in COLUMNS} | {"sde_sd": 0.3, "sde_dt": 0.0025, "sde_dt_coarse": 0.005}
    block_values |= {"rate": 0.9, "rate_ci_low": 0.7, "rate_ci_high": 1.1, "rate_points": 4}
    block_values |= {"sde_dt_bias_mean": -0.0025, "sde_dt_bias_sd": 0.0049}
    for stat in FUNCTIONALS:
        gap, se = (gaps or {}).get(stat, (0.001, 0.002))
        block_values |= {f"limit_gap_{stat}": gap, f"limit_gap_{stat}_se": se}
    rows = []
    for i, n in enumerate((4, 256)):
        ratio = ode if i == 0 else (0.03, 0.02, 0.04)
        rows.append(
            block_values
            | {"block": block, "n": n, "w1": w1[i], "w1_null_q95": null_q95}
            | dict(zip(("ode_ratio", "ode_ratio_low", "ode_ratio_high"), ratio))
            | per_block
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def test_the_sde_rule_holds_when_every_part_does_and_says_what_it_read():
    result = noci.sde_convergence(convergence())
    assert result.verdict == HOLDS and result.needs == ""
    assert result.value.startswith("attention: n -> inf gaps mean +0.0010 [")
    for stat in ("mean", "sd", "q25", "q50", "q75"):
        assert f"{stat} +0.0010 [{0.001 - Z975 * 0.002:+.4f}, {0.001 + Z975 * 0.002:+.4f}]" in result.value
    assert "(margin +-0.0300)" in result.value  # SDE_MARGIN_SD of the SDE's sd
    assert (
        "SDE at dt -> 0 from dt 0.005 and 0.0025 (Richardson; the finer step's bias in the mean -0.0025, sd +0.0049)"
        in (result.value)
    )
    assert "W1 0.090 at n=4 (sampling 95%: 0.020), 0.015 at n=256" in result.value
    assert "W1 to the SDE / W1 to the drift-only ODE at n=4: 0.15 [0.13, 0.17], at n=256: 0.03" in result.value
    assert "rate n^-0.90 [0.70, 1.10] over 4 widths (includes 1: yes; 1/2: no)" in result.value


@pytest.mark.parametrize("stat", ["mean", "sd", "q25", "q50", "q75"])
def test_every_functionals_limit_gap_is_gated_by_the_margin(stat):
    """margin = SDE_MARGIN_SD x the SDE's sd = 0.03: an interval inside holds, wholly outside fails, across it
    asks for the samples that would place it: (z se / (margin - |gap|))^2."""
    margin = noci.SDE_MARGIN_SD * 0.3
    inside = noci.sde_convergence(convergence(gaps={stat: (margin - 0.005, 0.002)}))
    assert inside.verdict == HOLDS
    outside = noci.sde_convergence(convergence(gaps={stat: (-(margin + 0.01), 0.004)}))
    assert outside.verdict == FAILS and outside.needs == ""
    across = noci.sde_convergence(convergence(gaps={stat: (margin - 0.005, 0.01)}))
    factor = (Z975 * 0.01 / 0.005) ** 2
    assert across.verdict == INCONCLUSIVE
    assert across.needs == f"attention: the {stat}'s limit gap straddles +-{margin:.4f}: ~{factor:.1f}x the samples"
    point_out = noci.sde_convergence(convergence(gaps={stat: (margin + 0.001, 0.01)}))
    assert point_out.needs == f"attention: the {stat}'s limit gap straddles +-{margin:.4f}: its point lies outside"


def test_convergence_must_be_seen_at_the_smallest_width():
    """W1 at the smallest width within sampling: nothing to converge from, inconclusive, with the samples that
    would resolve it ((q95 / W1)^2); at the largest width W1 may sit within sampling."""
    seen = noci.sde_convergence(convergence(w1=(0.021, 0.001), null_q95=0.02))
    assert seen.verdict == HOLDS
    unseen = noci.sde_convergence(convergence(w1=(0.01, 0.001), null_q95=0.02))
    assert unseen.verdict == INCONCLUSIVE
    assert unseen.needs == "attention: W1 at n=4 is within sampling; ~4.0x the samples or smaller n"
    assert noci.sde_convergence(convergence(w1=(0.02, 0.001), null_q95=0.02)).verdict == INCONCLUSIVE  # at, not above


@pytest.mark.parametrize(
    "ratio,expected", [((0.5, 0.4, 1.0), HOLDS), ((1.05, 1.01, 1.2), FAILS), ((0.9, 0.8, 1.1), INCONCLUSIVE)]
)
def test_the_sde_must_beat_the_drift_only_ode_at_the_smallest_width(ratio, expected):
    result = noci.sde_convergence(convergence(ode=ratio))
    assert result.verdict == expected
    assert ("the SDE and the ODE lie about as close" in result.needs) == (expected == INCONCLUSIVE)


def test_stopped_fractions_that_differ_beyond_sampling_leave_it_undecided():
    """|z| above the two-sided 95% normal quantile, of either sign, at the largest width."""
    for z, expected in ((1.9, HOLDS), (-1.9, HOLDS), (2.0, INCONCLUSIVE), (-7.0, INCONCLUSIVE)):
        result = noci.sde_convergence(convergence(stopped_z=z, stopped_finite=0.01, stopped_sde=0.034))
        assert result.verdict == expected, z
        assert ("the stopped fractions differ beyond sampling" in result.needs) == (expected == INCONCLUSIVE)
    assert (
        result.needs.endswith("(z = -7.0): SDE settings where paths rarely stop (larger tau0, smaller T)")
        and "stopped finite 1.0%, SDE 3.4%" in result.value
    )


def test_the_sde_rule_reads_each_block_and_names_the_unextrapolated_reference():
    frame = pd.concat([convergence(), convergence("both", sde_dt_coarse=math.nan, rate=math.nan)], ignore_index=True)
    result = noci.sde_convergence(frame)
    attention, both = result.value.split("; both: ")
    assert attention.startswith("attention:") and "Richardson" in attention
    assert "SDE at dt 0.0025 only (not extrapolated in dt)" in both
    assert "rate: fewer than 3 widths with a resolved gap" in both
    assert result.verdict == HOLDS  # the rule reads each block; a missing rate decides nothing
    failing = pd.concat([convergence(), convergence("both", ode=(1.5, 1.4, 1.6))], ignore_index=True)
    assert noci.sde_convergence(failing).verdict == FAILS  # one block refuted refutes the claim


def test_the_sde_rule_reads_the_largest_width_of_three_and_says_how_it_was_measured():
    """Gaps, rate and stopped fractions are read at the largest width, W1 and the ODE at the smallest."""
    frame = convergence()
    middle = frame.iloc[[0]].assign(n=16, w1=0.5, stopped_z=9.0, limit_gap_mean=0.5, rate=5.0)
    result = noci.sde_convergence(pd.concat([frame, middle], ignore_index=True))
    assert result.verdict == HOLDS and "rate n^-0.90" in result.value and "0.015 at n=256" in result.value
    assert result.interval == (
        "the limit gaps' 95% intervals per block (above), from a + c n^-beta fits by weighted least squares "
        "(beta per block: above); the ODE "
        "ratio's from 200 bootstrap resamples"
    )
    assert result.noise.startswith("sampling: standard errors of the finite and SDE functionals (the SDE's through")
    assert f"within {noci.SDE_MARGIN_SD:g} SDE sd of the SDE's (at dt -> 0)" in result.at_our_scale


@pytest.mark.parametrize("first_fails", [True, False])
def test_a_refuted_block_refutes_the_claim_in_either_order_and_asks_for_nothing(first_fails):
    refuted = convergence("attention", ode=(1.5, 1.4, 1.6))
    undecided = convergence("both", stopped_z=3.0)
    blocks = [refuted, undecided] if first_fails else [undecided, refuted]
    result = noci.sde_convergence(pd.concat(blocks, ignore_index=True))
    assert result.verdict == FAILS and result.needs == ""
    both_undecided = pd.concat([convergence("attention", stopped_z=3.0), undecided], ignore_index=True)
    needs = noci.sde_convergence(both_undecided).needs
    assert needs.startswith("attention: the stopped fractions") and "; both: the stopped fractions" in needs


def test_the_edges_of_the_sde_rules_gates():
    """|z| equal to the normal quantile is within sampling; a gap on the margin has no room left; a zero W1
    at the smallest width asks for infinitely many samples; W1 a quarter of sampling's asks for 16x."""
    assert noci.sde_convergence(convergence(stopped_z=Z975)).verdict == HOLDS
    margin = noci.SDE_MARGIN_SD * 0.3
    on_margin = noci.sde_convergence(convergence(gaps={"mean": (margin, 0.01)}))
    assert on_margin.needs == f"attention: the mean's limit gap straddles +-{margin:.4f}: its point lies outside"
    assert noci.sde_convergence(convergence(w1=(0.0, 0.0))).needs.endswith("~infx the samples or smaller n")
    assert noci.sde_convergence(convergence(w1=(0.005, 0.001))).needs.endswith("~16.0x the samples or smaller n")


@pytest.mark.parametrize(
    "low,high,says",
    [(0.4, 0.6, "includes 1: no; 1/2: yes"), (1.0, 1.2, "includes 1: yes; 1/2: no"), (0.3, 0.5, "1/2: yes")],
)
def test_the_rate_says_which_of_1_and_1_2_its_interval_includes_ends_included(low, high, says):
    result = noci.sde_convergence(convergence(rate=(low + high) / 2, rate_ci_low=low, rate_ci_high=high))
    assert says in result.value


@pytest.mark.parametrize(
    "shaped, standard",
    [
        ([0.40, 0.55, 0.50, 0.45], [0.05, 0.09, 0.07]),  # standard's logs vary more
        ([0.30, 0.60, 0.45], [0.07, 0.072, 0.071, 0.069]),  # shaped's logs vary more
    ],
)
def test_keeps_more_is_welchs_interval_on_the_logs_taken_back(shaped, standard):
    """Against scipy's Welch test on the log ratios (its degrees of freedom, floored as the rule floors them),
    whichever side varies more."""
    a, b = np.log(shaped), np.log(standard)
    welch = stats.ttest_ind(a, b, equal_var=False)
    half = stats.t.ppf(0.975, math.floor(welch.df)) * math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    diff = a.mean() - b.mean()
    assert noci.keeps_more(np.array(shaped), np.array(standard)) == pytest.approx(
        (math.exp(diff), math.exp(diff - half), math.exp(diff + half)), rel=1e-9
    )


def test_keeps_more_with_one_seed_gives_the_ratio_of_geometric_means_and_no_interval():
    ratio, low, high = noci.keeps_more(np.array([0.5]), np.array([0.05, 0.2]))
    assert ratio == pytest.approx(0.5 / math.sqrt(0.05 * 0.2)) and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(v) for v in noci.keeps_more(np.array([]), np.array([0.1, 0.2])))
