"""The Noci rules on hand-built figure frames: rank collapse (standard vs shaped at the last t, the SDE beside
them), the entropy rule and its pieces (the per-seed ratio interval, each kind's gate, what would decide it), and the
SDE rule, each number of their evidence against an independent computation and each boundary from both sides. A few
golden tests hold the words (`claim_rules.text`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from claim_rules import evidence, needs, parts, text
from depthwidth.claims import noci, wording
from depthwidth.claims.registry import BY_ID, SDE_MARGIN_SD, STOPPED_MARGIN
from depthwidth.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, Need, Part, combine
from depthwidth.plan.shaped import SDE_SAMPLES_FACTOR
from depthwidth.plots.shaped_sde_convergence import Z975, stopped_difference
from scipy import stats

RANK, ENTROPY, SDE = "noci_no_rank_collapse", "noci_entropy_collapse", "noci_sde_describes_finite"
RANK_STANDARD_LIMIT = BY_ID[RANK].params["standard_limit"]
RANK_GAP_LIMIT = BY_ID[RANK].params["gap_limit"]
ENTROPY_LIMIT = BY_ID[ENTROPY].params["limit"]


def intervals(e) -> dict[str, tuple[float, float]]:
    """Each part's 95% interval, by name."""
    return {name: (p.low, p.high) for name, p in parts(e).items()}


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
    """The record reads each source at the last t (2 here), the standard's and shaped's among the finite rows and
    the SDE's apart (listed first at every t), and the start at t = 0."""
    found = evidence(RANK, trajectory(t_end=2.0, sde=0.26))
    assert (found.t, found.standard, found.shaped, found.sde, found.start) == (2.0, 0.99, 0.25, 0.26, 0.3)
    assert [p.value for p in found.parts] == [0.99, pytest.approx(0.74), pytest.approx(-0.01)]


def test_rank_collapse_in_words():
    """Golden: the value, the noise and the paper at our scale of a rank-collapse row."""
    said = text(RANK, trajectory(t_end=2.0, sde=0.26))
    assert said.value == ["t=2: standard 0.990, shaped 0.250, SDE 0.260 (start 0.30)"]
    assert said.noise == "sampling: standard error of the mean correlation over networks"
    assert said.at_our_scale == "standard -> 1 with depth at any width; shaped stays at the SDE's value"


def test_rank_collapse_intervals_are_the_standards_and_the_differences_normal_intervals():
    """standard +- z se; (standard - shaped) +- z sqrt(se_std^2 + se_shaped^2), independent of the other's se; shaped -
    SDE against a tenth of the SDE law's sd (its sem x sqrt(paths)); each part against its own limit."""
    found = evidence(RANK, trajectory(std=(0.97, 0.01), shaped=(0.30, 0.02)))
    half_std, half_diff = Z975 * 0.01, Z975 * math.sqrt(0.01**2 + 0.02**2)
    assert pytest.approx(stats.norm.ppf(0.975)) == Z975
    half_sde, margin = Z975 * math.hypot(0.02, 0.001), 0.1 * 0.001 * math.sqrt(1000)
    assert intervals(found) == {
        "standard": pytest.approx((0.97 - half_std, 0.97 + half_std)),
        "difference": pytest.approx((0.67 - half_diff, 0.67 + half_diff)),
        "sde_gap": pytest.approx((-half_sde, half_sde)),
    }
    assert [p.margin for p in found.parts] == [RANK_STANDARD_LIMIT, RANK_GAP_LIMIT, pytest.approx(margin)]
    assert found.verdict == INCONCLUSIVE  # shaped's sem 0.02 leaves its gap to the SDE wider than the margin
    assert [p.verdict for p in found.parts] == [HOLDS, HOLDS, INCONCLUSIVE]
    wide = evidence(RANK, trajectory(std=(0.97, 0.01), shaped=(0.30, 0.02), sde_sem=0.02))
    assert wide.verdict == HOLDS and wide.needs == ()  # the SDE law's sd 0.63: margin +-0.063
    assert parts(wide)["sde_gap"].margin == pytest.approx(0.1 * 0.02 * math.sqrt(1000))


@pytest.mark.parametrize(
    ("sde", "expected"),
    [(0.25, HOLDS), (0.25 + 0.0316 - 0.0025, INCONCLUSIVE), (0.25 + 0.0316 + 0.0229 + 0.005, FAILS), (0.19, FAILS)],
)
def test_shaped_must_stay_at_the_sdes_value_within_a_tenth_of_its_sd(sde, expected):
    """Margin 0.1 x the SDE law's sd (sem 0.01 x sqrt(1000 paths) = 0.316): +-0.0316; the gap's half-width
    1.96 x hypot(0.006, 0.01) = 0.0229: a gap of 0 holds, one whose interval straddles the margin is undecided,
    one whose interval lies past it fails, on either side."""
    found = evidence(RANK, trajectory(sde=sde, sde_sem=0.01))
    gap = parts(found)["sde_gap"]
    assert (found.verdict, gap.verdict) == (expected, expected), intervals(found)
    assert gap.margin == pytest.approx(0.0316, abs=1e-4) and gap.value == pytest.approx(0.25 - sde)


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
    """Undecided, it asks for more sampled networks; decided, for nothing."""
    found = evidence(RANK, trajectory(std=std, shaped=shaped))
    assert found.verdict == expected, intervals(found)
    assert [n.kind for n in found.needs] == (["networks"] if expected == INCONCLUSIVE else [])


def test_a_huge_standard_sem_leaves_rank_collapse_undecided():
    found = evidence(RANK, trajectory(std=(0.99, 0.2)))
    assert found.verdict == INCONCLUSIVE and parts(found)["standard"].verdict == INCONCLUSIVE


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
    assert noci.kind_verdict(attention, low, high, ENTROPY_LIMIT) == expected


def gated(attention: str, values, low: float, high: float) -> Part:
    """A kind's ratio part as the entropy rule reads it: the seeds' geometric mean, its interval gated by its own kind
    (`kind_verdict`)."""
    verdict = noci.kind_verdict(attention, low, high, ENTROPY_LIMIT)
    mean = math.exp(noci.log_ratios(values).mean())
    return Part("ratio", mean, low, high, ENTROPY_LIMIT, verdict, {"attention": attention}, unit="")


def kind_need(attention: str, values, low: float, high: float) -> Need | None:
    return noci.kind_need(attention, np.array(values), gated(attention, values, low, high), 0.03, ENTROPY_LIMIT)


def test_what_decides_a_kind_a_second_seed_then_the_seeds_its_interval_needs():
    """One seed: a second (at the lr read). Decided: nothing. Straddling the limit: the fewest seeds at which the
    t interval of the mean log clears the limit, the quantile falling with the dof they add (scipy, counted here
    seed by seed; (half / margin)^2 times the seeds would hold the quantile at 2 dof), with the distance of the
    geometric mean to the limit. A geometric mean on the limit: no number of seeds decides it (none)."""
    assert kind_need("shaped", [0.5], math.nan, math.nan) == Need("kind_seeds", {"attention": "shaped", "lr": 0.03})
    assert kind_need("standard", [0.1, 0.2], 0.1, 0.2) is None  # decided: collapsed below the limit
    values = [0.15, 0.35, 0.40]  # shaped, straddling the limit
    mean, low, high = noci.ratio_interval(np.array(values))
    sd = (math.log(high) - math.log(low)) / 2 / stats.t.ppf(0.975, 2) * math.sqrt(3)
    least = next(
        n for n in range(3, 10**5) if stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) <= math.log(mean / ENTROPY_LIMIT)
    )
    resolve = kind_need("shaped", values, low, high)
    assert least < math.ceil(3 * ((math.log(high) - math.log(low)) / 2 / math.log(mean / ENTROPY_LIMIT)) ** 2)
    assert resolve.kind == "kind_resolve" and dict(resolve.numbers) == {
        "attention": "shaped",
        "seeds": least,
        "distance": pytest.approx(mean - ENTROPY_LIMIT),
        "limit": ENTROPY_LIMIT,
    }
    at_limit = [ENTROPY_LIMIT / 1.5, ENTROPY_LIMIT * 1.5]  # its geometric mean is the limit
    stuck = kind_need("shaped", at_limit, 0.05, 0.8)
    assert stuck.kind == "kind_resolve" and stuck.numbers["seeds"] is None
    assert stuck.numbers["distance"] == pytest.approx(0.0, abs=1e-12)


def test_a_kind_is_asked_for_seeds_only_where_its_own_gate_leaves_it_open():
    """An interval ending on the limit: standard's collapse is decided (nothing asked); shaped's keeping is not."""
    values = [0.10, 0.15, 0.19]
    assert kind_need("standard", values, 0.1, ENTROPY_LIMIT) is None
    assert kind_need("shaped", values, 0.1, ENTROPY_LIMIT).kind == "kind_resolve"


# ---------------------------------------------------------------- entropy: the rule


def runs(kind: str, finals: list[float], lr: float = 0.1, status: str = "ok") -> list[dict]:
    """Two layers per run, entropy 3.0 at step 0; layer 1 ends at each final value (layer 0 keeps 2.9); a finished
    run's final loss 3.0, a diverged one's none."""
    rows = []
    loss = 3.0 if status == "ok" else math.nan
    for seed, final in enumerate(finals):
        for step, value in ((0, 3.0), (100, final)):
            for layer, entropy in ((0, 2.9 if step else 3.0), (1, value)):
                rows.append(
                    {"attention": kind, "lr": lr, "seed": seed, "run_id": f"{kind}-{lr}-{seed}{status}", "layer": layer}
                    | {"step": step, "entropy": entropy, "status": status, "final_val_loss": loss}
                )
    return rows


def ratios(e) -> dict[str, tuple]:
    """Each kind's ratio part as (value, low, high, verdict), by attention, and shaped / standard's."""
    return {p.at.get("attention", p.name): (p.value, p.low, p.high, p.verdict) for p in e.parts}


def test_entropy_rule_reads_the_largest_lr_its_ratios_and_what_it_left_out():
    """At the largest lr (0.1; standard keeps its entropy at 0.01, not read): each kind's geometric mean ratio with
    its interval, gated by its kind; shaped over standard with the Welch interval; the diverged run left out and
    named; held, but the control not run: it asks for the control."""
    frame = pd.DataFrame(
        runs("standard", [0.3, 0.33, 0.36])
        + runs("shaped", [2.4, 2.5, 2.6])
        + runs("standard", [2.9, 2.9], lr=0.01)  # a smaller lr where standard keeps its entropy: not read
        + runs("shaped", [0.1], status="diverged")
    )
    found = evidence(ENTROPY, frame)
    std_values, shp_values = np.array([0.1, 0.11, 0.12]), np.array([0.8, 2.5 / 3, 2.6 / 3])
    std, shp = noci.ratio_interval(std_values), noci.ratio_interval(shp_values)
    times = noci.keeps_more(shp_values, std_values)
    assert found.verdict == HOLDS and found.lr == 0.1
    said = ratios(found)
    assert list(said) == ["standard", "shaped", "shaped_over_standard"]
    for name, expected in zip(said, (std, shp, times)):
        assert said[name][:3] == pytest.approx(expected) and said[name][3] == HOLDS, name
    assert [p.margin for p in found.parts] == [ENTROPY_LIMIT, ENTROPY_LIMIT, 1.0]
    assert found.kind_seeds == {"standard": 3, "shaped": 3} and found.seeds == 3
    assert found.kinds == ("standard", "shaped") and found.control is None
    assert found.diverged == ("shaped-0.1-0diverged",)
    # held, but the control is not run: it says how to attribute the difference
    assert [n.kind for n in found.needs] == ["control"] and needs(found)["control"] == {"control": "temperature"}


def test_entropy_rule_needs_both_kinds_decided_and_excludes_nothing_when_nothing_diverged():
    frame = pd.DataFrame(runs("standard", [0.3, 0.33, 0.36]) + runs("shaped", [0.3, 0.32, 0.34]))
    found = evidence(ENTROPY, frame)
    assert found.verdict == FAILS  # shaped collapses too: decided whatever the control would say
    assert ratios(found)["shaped"][-1] == FAILS and found.diverged == () and found.needs == ()
    no_seed = evidence(
        ENTROPY, pd.DataFrame(runs("standard", [0.3, 0.33, 0.36]) + runs("shaped", [0.1], status="diverged"))
    )
    assert no_seed.kind_seeds == {"standard": 3, "shaped": 0} and no_seed.verdict == INCONCLUSIVE
    assert math.isnan(ratios(no_seed)["shaped"][0]) and no_seed.diverged == ("shaped-0.1-0diverged",)
    assert needs(no_seed)["kind_seeds"] == {"attention": "shaped", "lr": 0.1}


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


def test_the_sde_rule_holds_when_every_part_does_with_what_it_read():
    """Every functional's limit gap 0.001 +- z 0.002 within +-0.03 (SDE_MARGIN_SD of the SDE's sd 0.3), W1 at the
    smallest width above sampling, the ODE ratio there below 1, nothing stopped: holds, asking for nothing; the
    block's record holds the widths, W1 at both ends, the ratio at both, the rate and the SDE's steps in dt."""
    found = evidence(SDE, convergence())
    assert found.verdict == HOLDS and found.needs == ()
    (block,) = found.blocks
    gaps = [p for p in block.parts if p.name == "limit_gap"]
    assert [p.at["functional"] for p in gaps] == ["mean", "sd", "q25", "q50", "q75"]
    for p in gaps:
        assert (p.value, p.verdict) == (0.001, HOLDS) and p.at["block"] == "attention"
        assert (p.low, p.high) == pytest.approx((0.001 - Z975 * 0.002, 0.001 + Z975 * 0.002))
        assert p.margin == pytest.approx(SDE_MARGIN_SD * 0.3) == block.margin
    assert [p.name for p in block.parts[5:]] == ["w1_seen", "ode_ratio", "stopped_difference"]
    assert all(p.verdict == HOLDS for p in block.parts) and found.parts == block.parts
    # every part says where it was read (claims.csv's rows name the block) and that it is no % of the loss
    assert all(p.at["block"] == "attention" and p.unit != "%" for p in block.parts)
    assert {p.unit for p in block.parts} == {""}
    assert (block.small_n, block.large_n, block.w1_small, block.w1_large, block.w1_null) == (4, 256, 0.09, 0.015, 0.02)
    assert (block.ode_ratio, block.ode_ratio_large) == ((0.15, 0.13, 0.17), 0.03)
    assert (block.rate, block.rate_points) == ((0.9, 0.7, 1.1), 4)
    assert (block.dt, block.dt_coarse, block.dt_bias) == (0.0025, 0.005, (-0.0025, 0.0049))


def test_the_sde_rule_in_words():
    """Golden: the block's value names each gap with its interval, the margin, the SDE's extrapolation in dt, W1 at
    both widths, the ODE ratio and the rate."""
    (value,) = text(SDE, convergence()).value
    assert value.startswith("attention: n -> inf gaps mean +0.0010 [")
    for stat in ("mean", "sd", "q25", "q50", "q75"):
        assert f"{stat} +0.0010 [{0.001 - Z975 * 0.002:+.4f}, {0.001 + Z975 * 0.002:+.4f}]" in value
    assert "(margin +-0.0300)" in value  # SDE_MARGIN_SD of the SDE's sd
    assert (
        "SDE at dt -> 0 from dt 0.005 and 0.0025 (Richardson; the finer step's bias in the mean -0.0025, sd +0.0049)"
        in (value)
    )
    assert "W1 0.090 at n=4 (sampling 95%: 0.020), 0.015 at n=256" in value
    assert "W1 to the SDE / W1 to the drift-only ODE at n=4: 0.15 [0.13, 0.17], at n=256: 0.03" in value
    assert "rate n^-0.90 [0.70, 1.10] over 4 widths (includes 1: yes; 1/2: no)" in value
    assert value.endswith(
        f"stopped finite 0.0%, SDE 0.0% at n=256 (difference +0.0000 [+0.0000, +0.0000], margin +-{STOPPED_MARGIN:.4f})"
    )


@pytest.mark.parametrize("stat", ["mean", "sd", "q25", "q50", "q75"])
def test_every_functionals_limit_gap_is_gated_by_the_margin(stat):
    """margin = SDE_MARGIN_SD x the SDE's sd = 0.03: an interval inside holds, wholly outside fails, across it
    asks for the samples that would place it: (z se / (margin - |gap|))^2; a point outside the margin leaves no room
    (no factor of samples)."""
    margin = SDE_MARGIN_SD * 0.3
    inside = evidence(SDE, convergence(gaps={stat: (margin - 0.005, 0.002)}))
    assert inside.verdict == HOLDS
    outside = evidence(SDE, convergence(gaps={stat: (-(margin + 0.01), 0.004)}))
    assert outside.verdict == FAILS and outside.needs == ()
    for side in (1, -1):  # across either end of the margin: the room is the gap's distance to it
        across = evidence(SDE, convergence(gaps={stat: (side * (margin - 0.005), 0.01)}))
        assert across.verdict == INCONCLUSIVE and [n.kind for n in across.needs] == ["limit_gap"]
        assert needs(across)["limit_gap"] == {
            "block": "attention",
            "functional": stat,
            "margin": pytest.approx(margin),
            "room": pytest.approx(0.005),
            "factor": pytest.approx((Z975 * 0.01 / 0.005) ** 2),
        }
    point_out = needs(evidence(SDE, convergence(gaps={stat: (margin + 0.001, 0.01)})))["limit_gap"]
    assert point_out["functional"] == stat and point_out["room"] == pytest.approx(-0.001)
    assert math.isnan(point_out["factor"])


def test_convergence_must_be_seen_at_the_smallest_width():
    """W1 at the smallest width within sampling: nothing to converge from, inconclusive, with the samples that
    would resolve it ((q95 / W1)^2); at the largest width W1 may sit within sampling."""
    seen = evidence(SDE, convergence(w1=(0.021, 0.001), null_q95=0.02))
    assert seen.verdict == HOLDS
    unseen = evidence(SDE, convergence(w1=(0.01, 0.001), null_q95=0.02))
    assert unseen.verdict == INCONCLUSIVE and [n.kind for n in unseen.needs] == ["w1_seen"]
    assert needs(unseen)["w1_seen"] == {"block": "attention", "n": 4, "factor": pytest.approx(4.0)}
    at = evidence(SDE, convergence(w1=(0.02, 0.001), null_q95=0.02))  # at, not above
    assert at.verdict == INCONCLUSIVE and parts(at)["w1_seen"].margin == 0.02


@pytest.mark.parametrize(
    "ratio,expected", [((0.5, 0.4, 1.0), HOLDS), ((1.05, 1.01, 1.2), FAILS), ((0.9, 0.8, 1.1), INCONCLUSIVE)]
)
def test_the_sde_must_beat_the_drift_only_ode_at_the_smallest_width(ratio, expected):
    found = evidence(SDE, convergence(ode=ratio))
    assert found.verdict == parts(found)["ode_ratio"].verdict == expected
    assert [n.kind for n in found.needs] == (["ode_ratio"] if expected == INCONCLUSIVE else [])
    if expected == INCONCLUSIVE:
        assert needs(found)["ode_ratio"] == {"block": "attention", "n": 4}


def stopped(diff: float, low: float, high: float) -> dict[str, float]:
    """The convergence figure's stopped-fraction difference (finite - SDE) and its interval, as `convergence` takes
    them."""
    return {"stopped_diff": diff, "stopped_diff_low": low, "stopped_diff_high": high}


@pytest.mark.parametrize(
    "interval, expected",
    [
        ((-0.02, -0.03, -0.01), HOLDS),  # inside +-STOPPED_MARGIN
        ((0.02, 0.01, 0.03), HOLDS),  # either sign
        ((-0.1, -0.12, -0.08), FAILS),  # wholly outside: the SDE stops far more often
        ((0.1, 0.08, 0.12), FAILS),  # or far less
        ((-0.03, -0.05, -0.01), INCONCLUSIVE),  # across the margin
        ((0.0, -0.06, 0.06), INCONCLUSIVE),  # across both ends: too few paths
    ],
)
def test_the_stopped_fractions_must_agree_within_their_margin_at_the_largest_width(interval, expected):
    """An equivalence test of finite - SDE stopped fraction against +-STOPPED_MARGIN: inside holds, wholly outside
    fails (asking for nothing), across it asks for the samples that would fit the interval in the room left."""
    found = evidence(SDE, convergence(stopped_finite=0.01, stopped_sde=0.03, **stopped(*interval)))
    part = parts(found)["stopped_difference"]
    assert found.verdict == part.verdict == expected
    assert (part.value, part.low, part.high, part.margin) == (*interval, STOPPED_MARGIN)
    assert found.blocks[0].stopped == (0.01, 0.03)
    if expected != INCONCLUSIVE:
        assert found.needs == ()
        return
    diff, low, high = interval
    room = STOPPED_MARGIN - abs(diff)
    assert needs(found)["stopped"] == {
        "block": "attention",
        "n": 256,
        "margin": STOPPED_MARGIN,
        "room": pytest.approx(room),
        "factor": pytest.approx(((high - low) / 2 / room) ** 2),
    }


def test_the_sde_rule_reads_each_block_and_keeps_the_unextrapolated_reference():
    """Each block is its own record: one whose SDE was not extrapolated in dt has no coarse step, one with no
    resolved rate none; neither decides anything. One block refuted refutes the claim."""
    frame = pd.concat([convergence(), convergence("both", sde_dt_coarse=math.nan, rate=math.nan)], ignore_index=True)
    found = evidence(SDE, frame)
    attention, both = found.blocks
    assert (attention.block, both.block) == ("attention", "both")
    assert attention.dt_coarse == 0.005 and math.isnan(both.dt_coarse) and both.dt == 0.0025
    assert attention.rate[0] == 0.9 and math.isnan(both.rate[0])
    assert found.verdict == HOLDS  # the rule reads each block; a missing rate decides nothing
    assert len(found.parts) == 2 * len(attention.parts)
    failing = pd.concat([convergence(), convergence("both", ode=(1.5, 1.4, 1.6))], ignore_index=True)
    assert evidence(SDE, failing).verdict == FAILS  # one block refuted refutes the claim


def test_the_sde_rule_reads_the_largest_width_of_three():
    """Gaps, rate and stopped fractions are read at the largest width, W1 and the ODE at the smallest."""
    frame = convergence()
    middle = frame.iloc[[0]].assign(
        n=16, w1=0.5, limit_gap_mean=0.5, rate=5.0, stopped_sde=0.5, **stopped(-0.5, -0.6, -0.4)
    )
    found = evidence(SDE, pd.concat([frame, middle], ignore_index=True))
    (block,) = found.blocks
    assert found.verdict == HOLDS and (block.small_n, block.large_n) == (4, 256)
    assert block.rate[0] == 0.9 and block.w1_large == 0.015 and block.w1_small == 0.09
    assert block.stopped == (0.0, 0.0) and parts(found)["stopped_difference"].value == 0.0
    assert block.parts[0].value == 0.001


def test_the_sde_rules_margin_in_words_is_the_registrys():
    """Golden: the paper at our scale states the margins the rule reads (the registry's SDE_MARGIN_SD and
    STOPPED_MARGIN), and the rule's text the stopped fractions' one."""
    at_our_scale = text(SDE, convergence()).at_our_scale
    assert f"within {SDE_MARGIN_SD:g} SDE sd of the SDE's (at dt -> 0)" in at_our_scale
    assert at_our_scale.endswith(f"the stopped fractions agree within +-{STOPPED_MARGIN:.3f}")
    assert f"lies within +-{STOPPED_MARGIN:.3f} (threshold chosen by this project" in wording.fill(
        BY_ID[SDE].rule, BY_ID[SDE]
    )


@pytest.mark.parametrize("first_fails", [True, False])
def test_a_refuted_block_refutes_the_claim_in_either_order_and_asks_for_nothing(first_fails):
    refuted = convergence("attention", ode=(1.5, 1.4, 1.6))
    undecided = convergence("both", **stopped(0.03, 0.01, 0.05))
    blocks = [refuted, undecided] if first_fails else [undecided, refuted]
    found = evidence(SDE, pd.concat(blocks, ignore_index=True))
    assert found.verdict == FAILS and found.needs == ()
    both_undecided = pd.concat([convergence("attention", **stopped(0.03, 0.01, 0.05)), undecided], ignore_index=True)
    asked = evidence(SDE, both_undecided).needs
    assert [(n.kind, n.numbers["block"]) for n in asked] == [("stopped", "attention"), ("stopped", "both")]


def test_the_edges_of_the_sde_rules_gates():
    """A stopped fractions' interval with its ends on the margin is within it, one from the margin outwards is not
    wholly outside; a gap on the margin has no room left; a zero W1 at the smallest width asks for infinitely many
    samples; W1 a quarter of sampling's asks for 16x."""
    assert evidence(SDE, convergence(**stopped(0.0, -STOPPED_MARGIN, STOPPED_MARGIN))).verdict == HOLDS
    on_edge = evidence(SDE, convergence(**stopped(STOPPED_MARGIN + 0.01, STOPPED_MARGIN, 0.1)))
    assert on_edge.verdict == INCONCLUSIVE and math.isnan(needs(on_edge)["stopped"]["factor"])
    margin = SDE_MARGIN_SD * 0.3
    on_margin = needs(evidence(SDE, convergence(gaps={"mean": (margin, 0.01)})))["limit_gap"]
    assert on_margin["room"] == pytest.approx(0.0, abs=1e-15) and math.isnan(on_margin["factor"])
    assert needs(evidence(SDE, convergence(w1=(0.0, 0.0))))["w1_seen"]["factor"] == math.inf
    assert needs(evidence(SDE, convergence(w1=(0.005, 0.001))))["w1_seen"]["factor"] == pytest.approx(16.0)


@pytest.mark.parametrize(
    "low,high,says",
    [(0.4, 0.6, "includes 1: no; 1/2: yes"), (1.0, 1.2, "includes 1: yes; 1/2: no"), (0.3, 0.5, "1/2: yes")],
)
def test_the_rate_says_which_of_1_and_1_2_its_interval_includes_ends_included(low, high, says):
    """Golden: the words read the rate's interval against 1 and 1/2, its ends included."""
    frame = convergence(rate=(low + high) / 2, rate_ci_low=low, rate_ci_high=high)
    assert evidence(SDE, frame).blocks[0].rate == pytest.approx(((low + high) / 2, low, high))
    assert says in text(SDE, frame).value[0]


@pytest.mark.parametrize(
    "shaped, standard",
    [
        ([0.40, 0.55, 0.50, 0.45], [0.05, 0.09, 0.07]),  # standard's logs vary more
        ([0.30, 0.60, 0.45], [0.07, 0.072, 0.071, 0.069]),  # shaped's logs vary more
    ],
)
def test_keeps_more_is_welchs_interval_on_the_logs_taken_back(shaped, standard):
    """Against scipy's Welch test on the log ratios (its degrees of freedom as scipy gives them, not rounded),
    whichever side varies more."""
    a, b = np.log(shaped), np.log(standard)
    welch = stats.ttest_ind(a, b, equal_var=False)
    half = stats.t.ppf(0.975, welch.df) * math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    diff = a.mean() - b.mean()
    assert noci.keeps_more(np.array(shaped), np.array(standard)) == pytest.approx(
        (math.exp(diff), math.exp(diff - half), math.exp(diff + half)), rel=1e-9
    )


def test_keeps_more_with_one_seed_gives_the_ratio_of_geometric_means_and_no_interval():
    ratio, low, high = noci.keeps_more(np.array([0.5]), np.array([0.05, 0.2]))
    assert ratio == pytest.approx(0.5 / math.sqrt(0.05 * 0.2)) and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(v) for v in noci.keeps_more(np.array([]), np.array([0.1, 0.2])))


# ---------------------------------------------------------------- the stopped fractions' gate, on planted truths

PATHS = (10, 40, 160, 640)  # finite paths at the largest width (the SDE runs SDE_SAMPLES_FACTOR times as many)
DRAWS = 200


def old_stopped_gate(finite: int, paths: int, sde: int, sde_paths: int) -> str:
    """The gate this rule had until issue 51 (a48799b): the two-proportion z of the stopped fractions, inconclusive
    beyond the normal 95% quantile and holding within it; a significance test, which no difference can fail."""
    pooled = (finite + sde) / (paths + sde_paths)
    se = math.sqrt(pooled * (1 - pooled) * (1 / paths + 1 / sde_paths))
    z = (finite / paths - sde / sde_paths) / se if se > 0 else 0.0
    return INCONCLUSIVE if abs(z) > Z975 else HOLDS


def shares(found: list[str]) -> dict[str, float]:
    return {v: found.count(v) / len(found) for v in (HOLDS, FAILS, INCONCLUSIVE)}


def planted_stopped(p_finite: float, p_sde: float, paths: int, seed: int = 0):
    """DRAWS planted largest widths, each a block of one figure: `paths` finite paths stopping at rate `p_finite`,
    SDE_SAMPLES_FACTOR times as many SDE paths at `p_sde`, the stopped columns from the counts by the figure's own
    `stopped_difference`, every other part holding. The shares of the rule's verdicts and of the old gate's."""
    rng = np.random.default_rng(seed)
    sde_paths = SDE_SAMPLES_FACTOR * paths
    counts = list(zip(rng.binomial(paths, p_finite, DRAWS), rng.binomial(sde_paths, p_sde, DRAWS)))
    blocks = [
        convergence(f"draw{i}", stopped_finite=f / paths, stopped_sde=s / sde_paths,
                    **stopped(*stopped_difference(int(f), paths, int(s), sde_paths)))
        for i, (f, s) in enumerate(counts)
    ]  # fmt: skip
    found = evidence(SDE, pd.concat(blocks, ignore_index=True))
    gates = [p.verdict for p in found.parts if p.name == "stopped_difference"]
    assert len(gates) == DRAWS and found.verdict == combine(*gates)  # nothing else decides these blocks
    return shares(gates), shares([old_stopped_gate(f, paths, s, sde_paths) for f, s in counts])


def test_planted_equal_stopped_fractions_hold_more_surely_with_more_paths():
    """Finite and SDE paths both stop 2% of the time (the SDE describes them): the rule never fails it, holds more
    often with each 4x of paths, and always at 640 finite paths (the default runs 2000); at 10 paths it cannot
    tell (inconclusive: 0/10 against 1/40 alone gives [-0.13, +0.25])."""
    held = []
    for paths in PATHS:
        new, _ = planted_stopped(0.02, 0.02, paths)
        assert new[FAILS] <= 0.05, (paths, new)
        held.append(new[HOLDS])
    assert held == sorted(held) and held[0] == 0.0 and held[-1] >= 0.95, held


def test_planted_stopped_fractions_three_margins_apart_fail_more_surely_with_more_paths_unlike_the_old_gate():
    """The SDE stops 3 x STOPPED_MARGIN more often than the finite networks (0.5% against 13.2%): the rule never holds
    it and fails it more often with each 4x of paths, always from 160 on. The old significance gate could only turn
    inconclusive: with more paths it did so more surely (always from 160 on), and at 10 paths it held it."""
    p_finite = 0.005
    failed, old_undecided = [], []
    for paths in PATHS:
        new, old = planted_stopped(p_finite, p_finite + 3 * STOPPED_MARGIN, paths)
        assert new[HOLDS] == 0.0 and old[FAILS] == 0.0, (paths, new, old)
        failed.append(new[FAILS])
        old_undecided.append(old[INCONCLUSIVE])
        if paths == PATHS[0]:
            assert old[HOLDS] >= 0.5, old  # the old gate passed a difference it had too few paths to see
    assert failed == sorted(failed) and failed[0] == 0.0 and failed[2:] == [1.0, 1.0], failed
    assert old_undecided == sorted(old_undecided) and old_undecided[2:] == [1.0, 1.0], old_undecided


@pytest.mark.parametrize("p_sde", [0.02, 0.02 + 3 * STOPPED_MARGIN])
def test_too_few_paths_leave_the_stopped_gate_inconclusive_asking_for_more(p_sde):
    """10 finite paths against 40 SDE paths decide neither truth; one such draw asks for a factor of the paths
    that would fit its interval in the margin (its point inside: room left) or none (outside: none would)."""
    new, _ = planted_stopped(0.02, p_sde, PATHS[0])
    assert new[INCONCLUSIVE] == 1.0, new
    interval = stopped_difference(0, 10, 1, 40)  # 0% against 2.5%: [-0.13, +0.25], far wider than +-0.042
    found = evidence(SDE, convergence(**stopped(*interval)))
    asked = needs(found)["stopped"]
    assert found.verdict == INCONCLUSIVE and asked["room"] == pytest.approx(STOPPED_MARGIN - 0.025)
    assert (
        asked["factor"] == pytest.approx(((interval[2] - interval[1]) / 2 / asked["room"]) ** 2)
        and asked["factor"] > 10
    )


def test_what_would_decide_the_stopped_fractions_in_words():
    """Golden: inside the margin, the factor of samples that fits the interval in the room left; outside it, none
    would, and settings where paths rarely stop; the limit gap's and Kaplan's sagitta's words share the reading."""
    inside = text(SDE, convergence(**stopped(0.03, 0.01, 0.05))).needs
    factor = (0.02 / (STOPPED_MARGIN - 0.03)) ** 2
    assert inside == [
        f"attention: the stopped fractions' difference at n=256 straddles +-{STOPPED_MARGIN:.3f}: ~{factor:.1f}x the "
        "samples"
    ]
    outside = text(SDE, convergence(**stopped(-0.05, -0.07, -0.03))).needs
    assert outside == [
        f"attention: the stopped fractions' difference at n=256 straddles +-{STOPPED_MARGIN:.3f}: its point lies "
        "outside: SDE settings where paths rarely stop (larger tau0, smaller T)"
    ]
    gap = {"block": "both", "functional": "sd", "margin": 0.03, "room": 0.01, "factor": 2.25}
    assert wording.NEEDS["limit_gap"](gap) == "both: the sd's limit gap straddles +-0.0300: ~2.2x the samples"
    assert wording.NEEDS["limit_gap"](gap | {"room": -0.01}).endswith("+-0.0300: its point lies outside")
    sagitta = {"low": -0.5, "high": 1.5, "margin": 1.0, "value": 0.5, "toward": 0.0, "room": 0.5, "factor": 3.0}
    sagitta["groups"] = 4
    assert wording.NEEDS["sagitta"](sagitta).endswith(": ~3.0x the N values (now 4) to place it inside")
    many = wording.NEEDS["sagitta"](sagitta | {"factor": 41.3})
    assert many.endswith(": ~41x the N values (now 4) to place it inside")
    outside = sagitta | {"room": -0.1, "value": 1.1}
    assert wording.NEEDS["sagitta"](outside).endswith("so more N values would show the bow")
    blocked = sagitta | {"room": -0.05, "value": 0.94, "toward": 0.11}
    assert wording.NEEDS["sagitta"](blocked).endswith(
        "its point lies 0.06% inside the margin and the systematic reaches 0.11% toward it: no count of N values "
        "places the interval inside (undecidable at this protocol unless it fails)"
    )
