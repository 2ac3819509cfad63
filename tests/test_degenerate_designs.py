"""Valid configs at the edge of what the schema lets through (issue 36, item 5): one design N, one design N
with a single depth >= 2, one seed, no lr_check. Every sweep figure such a config plans is drawn and every
claim gets a verdict with its reason (`inconclusive` where the design cannot decide it), never a crash: on
planted tables of the Levine law (tests/planted.py), each degenerate design a change of the default config."""

from __future__ import annotations

import pandas as pd
import planted
import pytest
from depthwidth import cli
from depthwidth.claims import CLAIMS, levine, verdicts
from depthwidth.claims.verdicts import Unmeasurable
from depthwidth.plan import config, jobs
from depthwidth.plots import common
from depthwidth.plots.registry import FIGURES


def one_n(cfg: dict) -> None:
    cfg["sweep"]["design"]["n"] = [50000]
    without_design_pairs(cfg)


def one_n_two_depths(cfg: dict) -> None:
    one_n(cfg)
    cfg["sweep"]["design"]["depths"] = [1, 2]


def without_design_pairs(cfg: dict) -> None:
    """The sensitivity block's design pairs (at N = 25k, depths to 6) name points a smaller design does not plan."""
    block = cfg.get("sensitivity")
    if block:
        block["pairs"] = [pair for pair in block["pairs"] if pair["experiment"] != "design"]


def one_seed(cfg: dict) -> None:
    cfg["sweep"]["seeds"] = [0]


def no_lr_check(cfg: dict) -> None:
    cfg["sweep"]["lr_check"]["enabled"] = False


DESIGNS = {f.__name__: f for f in (one_n, one_n_two_depths, one_seed, no_lr_check)}


@pytest.fixture(scope="module", params=sorted(DESIGNS))
def built(request, tmp_path_factory):
    """The design's planted tables, every sweep figure it plans (a raised error fails the test), the claims."""
    cfg = planted.default_config()
    DESIGNS[request.param](cfg)
    cfg = config.validate(cfg)
    plan = jobs.from_config(cfg)
    folder = tmp_path_factory.mktemp(request.param)
    tables = planted.write_tables(folder, planted.levine, cfg)
    figures = sorted(f for f in plan.figures if all(t.startswith("sweep_") for t in FIGURES[f].inputs.values()))
    for figure in figures:
        common.render(figure, {n: tables[t] for n, t in FIGURES[figure].inputs.items()}, folder / f"{figure}.png")
    args = [arg for figure in figures for arg in ("--figure-csv", str(folder / f"{figure}.csv"))]
    args += [arg for path in tables.values() for arg in ("--sweep-table", str(path))]
    args += ["--scale-note", "planted", "--out", str(folder / "claims.csv"), "--captions-dir", str(folder)]
    assert cli.main(["claims", *args]) == 0
    rows = pd.read_csv(folder / "claims.csv").set_index("id")
    return {"design": request.param, "folder": folder, "figures": figures, "rows": rows}


def test_every_planned_sweep_figure_is_drawn(built):
    assert "levine_crossover" in built["figures"] and "kaplan_fig6" in built["figures"]
    assert ("lr_check" in built["figures"]) == (built["design"] != "no_lr_check")
    for figure in built["figures"]:
        for suffix in (".png", ".pdf", ".csv"):
            assert (built["folder"] / f"{figure}{suffix}").stat().st_size > 0, (figure, suffix)


def test_every_claim_has_a_verdict_and_every_undecided_one_says_why(built):
    rows = built["rows"]
    assert list(rows.index) == [c.id for c in CLAIMS] and set(rows["verdict"]) <= set(verdicts.VERDICTS)
    sweep = [c.id for c in CLAIMS if c.figure in built["figures"]]
    assert (rows.loc[sweep, "verdict"] != verdicts.NOT_RUN).all(), rows.loc[sweep, "verdict"]
    # every row read has its numbers: the statistic that decided it, or none and why
    assert not planted.unnumbered(rows.loc[sweep]), rows.loc[sweep, ["part", "statistic", "our_value"]].to_string()
    undecided = rows.loc[sweep][rows.loc[sweep, "verdict"] == verdicts.INCONCLUSIVE]
    assert (undecided["what_it_would_take"].fillna("").str.len() > 0).all(), undecided["our_value"]


def test_one_design_n_leaves_every_levine_row_that_needs_a_line_per_depth_inconclusive(built):
    if not built["design"].startswith("one_n"):
        pytest.skip("a property of the designs of one N")
    crossover = pd.read_csv(built["folder"] / "levine_crossover.csv")
    optimal = pd.read_csv(built["folder"] / "levine_optimal_depth.csv")
    assert crossover.empty and optimal.empty  # no depth has two N: no line, no shared N
    rows = built["rows"]
    for claim in ("levine_crossover_slope", "levine_optimal_depth", "levine_depth_inefficiency"):
        assert rows.loc[claim, "verdict"] == verdicts.INCONCLUSIVE, (claim, rows.loc[claim, "our_value"])
        assert pd.isna(rows.loc[claim, "part"]), claim  # no statistic read
    crossover = planted.judged(built["folder"], "levine_crossover_slope").main.plain
    assert crossover.stage == "no_pairs" and [n.kind for n in crossover.needs] == ["two_depths_two_widths"]
    for claim in ("levine_optimal_depth", "levine_depth_inefficiency"):
        found = planted.judged(built["folder"], claim).main.plain
        assert isinstance(found, Unmeasurable) and found.reason == levine.NO_COMMON_RANGE, claim


def test_one_shape_of_depth_two_or_more_has_no_collapse_line_and_says_so(built):
    fig6 = pd.read_csv(built["folder"] / "kaplan_fig6.csv")
    row = built["rows"].loc["kaplan_depth_collapse"]
    found = planted.judged(built["folder"], "kaplan_depth_collapse").main.plain
    if built["design"] != "one_n_two_depths":
        assert fig6["line_slope"].notna().all() and not isinstance(found, Unmeasurable)
        assert [p.name for p in found.parts] == ["offset", "lack_of_fit"]
        return
    assert fig6["line_slope"].isna().all() and (fig6["deep_shapes"] == 1).all()
    assert row["verdict"] == verdicts.INCONCLUSIVE and pd.isna(row["part"])
    assert isinstance(found, Unmeasurable) and (found.reason, dict(found.numbers)) == ("no_line", {"deep_shapes": 1})
    assert [n.kind for n in found.needs] == ["deep_line"]  # two design N, or two depths >= 2


def test_the_loss_rows_take_their_shapes_own_systematic_and_without_lr_check_never_its_fallback(built):
    """Every design scans its shapes (the default's sweep.lr_grid): its loss rows carry their own shapes' shifts;
    without lr_check no row takes a global +-fallback."""
    carried = [
        p
        for claim in CLAIMS
        if claim.lr_systematic and claim.figure in built["figures"]
        for p in planted.judged(built["folder"], claim.id).main.shifted.carried
    ]
    assert any(p.own for p in carried)
    fallback = [p for p in carried if not p.own]
    assert not (fallback and built["design"] == "no_lr_check"), [(p.name, p.down) for p in fallback]
