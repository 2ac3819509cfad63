"""The findings, published: claims.md opens with a one-screen summary; `findings` writes docs/findings.md
with the sha256 of the claims.csv it came from and copies its figures; `check` notes when they part."""

from __future__ import annotations

import argparse
from contextlib import chdir
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO
from depthwidth import check, claims, contracts
from depthwidth.claims import findings, verdicts, wording
from depthwidth.cli import main as cli_main
from depthwidth.io import sha256_file
from depthwidth.plan import config
from depthwidth.plan import jobs as plan

CI_CONFIG = REPO / "config" / "ci.yaml"
SCALE = "config ci; 14 sweep runs x 2 tokens per non-embedding parameter, seeds [0]"
# kaplan_depth_collapse, noci_sde_describes_finite and kaplan_aspect_basin read them; the third is no headline figure
FIGURES = ("kaplan_fig6", "shaped_sde_density", "kaplan_fig5_aspect")
CI = plan.from_config(config.read(CI_CONFIG))  # its claims and figures lie under results/ci/
# ci's findings and their figures under docs/: not the default's (docs/findings.md), which they would overwrite
MD, FOLDER = Path(contracts.findings_path(CI.name)).name, Path(contracts.findings_figures_dir(CI.name)).name


def claims_frame() -> pd.DataFrame:
    """Every claim, not run (no figure CSVs), but the first three with other verdicts and long values."""
    frame = claims.table([], SCALE)
    frame.loc[0, ["verdict", "our_value"]] = verdicts.HOLDS, "alpha = 0.071; curvature +0.01 | a bar"
    frame.loc[1, ["verdict", "our_value"]] = verdicts.FAILS, "spread " + "0.5% and more " * 20
    frame.loc[2, ["verdict", "interval"]] = verdicts.INCONCLUSIVE, "[0.1, 0.3]"
    return frame


def summary_rows(text: str) -> list[list[str]]:
    """The cells of the summary table's rows in `text` (escaped bars read back as bars)."""
    lines = text.splitlines()
    start = lines.index("| claim | statement | verdict | deciding statistic |") + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("| `"):
            break
        rows.append([cell.strip() for cell in line.replace("\\|", "\0").strip("|").split("|")])
    return [[cell.replace("\0", "|") for cell in row] for row in rows]


def test_claims_md_opens_with_one_line_per_claim():
    frame = claims_frame()
    text = claims.markdown(frame)
    assert text.startswith("# Claims\n\nRun at: " + SCALE + ".\n")
    assert text.index("| claim | statement | verdict | deciding statistic |") < text.index("## Every claim in full")
    rows = summary_rows(text)
    assert [(row[0], row[2]) for row in rows] == [(f"`{i}`", f"**{v}**") for i, v in zip(frame["id"], frame["verdict"])]
    # a row that read no statistic shows its value, cut at a word
    assert rows[0][3] == "alpha = 0.071; curvature +0.01 | a bar"
    assert rows[1][3].endswith("...") and len(rows[1][3]) <= wording.SUMMARY_WIDTH
    counts = frame["verdict"].value_counts()
    assert (
        f"Verdicts of {len(frame)} claims: 1 holds, 1 does not hold, 1 inconclusive, {counts['not run']} not run."
        in text
    )
    assert len(text[: text.index("## Every claim in full")].splitlines()) <= 30  # one screen
    full = text[text.index("## Every claim in full") :]
    assert "alpha = 0.071; curvature +0.01 \\| a bar" in full  # the full table keeps every value, escaped


def test_shorten_cuts_at_a_word_and_keeps_short_text():
    assert wording.shorten("short; rest") == "short; rest"
    assert wording.shorten("one two three four", limit=12) == "one two..."


def build_findings(tmp_path, frame: pd.DataFrame) -> tuple:
    """A results folder with `frame` as the ci config's claims.csv and two of its headline PNGs; run
    `findings` on it as the rule does."""
    results = tmp_path / contracts.RESULTS
    (tmp_path / contracts.run_dir("x")).parent.mkdir(parents=True)
    csv = tmp_path / CI.claims_files()[0]
    csv.parent.mkdir(parents=True)
    frame.to_csv(csv, index=False)
    pngs = []
    for figure in FIGURES:
        pngs.append(tmp_path / contracts.figure_path(CI.name, figure))
        pngs[-1].parent.mkdir(parents=True, exist_ok=True)
        pngs[-1].write_bytes(b"\x89PNG\r\n\x1a\n" + figure.encode())
    docs = tmp_path / "docs"
    argv = ["findings", str(csv), "--config-name", "ci", *(f"--figure={png}" for png in pngs)]
    with chdir(tmp_path):  # the findings land where the rule puts them, by default: docs/findings-ci.md
        assert cli_main(argv) == 0
    return results, docs


def test_findings_records_its_claims_and_copies_its_figures(tmp_path, capsys):
    frame = claims_frame()
    depth = frame.index[frame["id"] == "levine_depth_inefficiency"][0]  # a depth row a sensitivity block read
    frame.loc[depth, ["verdict", "verdict_by_count"]] = verdicts.FAILS, "total=does not hold; flops=inconclusive"
    frame.loc[depth, ["by_confound", "depends_on"]] = "sens_tokens=depends; sens_heads=survives", "flops; sens_tokens"
    results, docs = build_findings(tmp_path, frame)
    text = (docs / MD).read_text()
    digest = sha256_file(tmp_path / CI.claims_files()[0])
    record = findings.read_record(text)
    assert record == {"config": "ci", "claims_sha256": digest, "verdicts": dict(zip(frame["id"], frame["verdict"]))}
    assert f"sha256 `{digest}`" in text and "# What the ci run finds" in text and f"Run at: {SCALE}." in text
    assert [row[0] for row in summary_rows(text)] == [f"`{i}`" for i in frame["id"]]
    for figure in FIGURES:
        assert (docs / FOLDER / f"{figure}.png").read_bytes() == (
            tmp_path / contracts.figure_path(CI.name, figure)
        ).read_bytes()
        # the headline figures are shown, every other figure linked
        shown = f"![{figure}]({FOLDER}/{figure}.png)" in text
        assert shown == (figure in contracts.FINDINGS_FIGURES)
    assert f"The run's other figures: [kaplan_fig5_aspect]({FOLDER}/kaplan_fig5_aspect.png)." in text
    depth = text[text.index("### `kaplan_depth_collapse`: not run") :].split("\n### ")[0]
    assert f"- Figure: [kaplan_fig6]({FOLDER}/kaplan_fig6.png)" in depth
    basin = text[text.index("### `kaplan_aspect_basin`: ") :].split("\n### ")[0]
    assert f"- Figure: [kaplan_fig5_aspect]({FOLDER}/kaplan_fig5_aspect.png)" in basin
    head = text[text.index(f"### `{frame.loc[2, 'id']}`: inconclusive") :].split("\n### ")[0]
    assert "- Interval: [0.1, 0.3]" in head and f"- Ours: {frame.loc[2, 'our_value']}" in head
    # a figure the run did not draw is named as such, with no path to a file that is not there
    assert "- Figure: `noci_glue`, not drawn by config ci" in text
    # what a depth row survives, in one line, as claims.md says it; no such line where nothing was read
    inefficiency = text[text.index("### `levine_depth_inefficiency`: does not hold") :].split("\n### ")[0]
    survives = [line for line in inefficiency.splitlines() if line.startswith("- What it survives: ")]
    assert survives == [
        "- What it survives: at each count: total=does not hold; flops=inconclusive; under each confound: "
        "sens_tokens=depends; sens_heads=survives; depends on: flops; sens_tokens"
    ]
    assert text.count("- What it survives: ") == 1
    assert "results/" not in text.split("## Each claim")[1]


def test_findings_refuses_a_table_that_is_not_the_claims(tmp_path, capsys):
    csv = tmp_path / "claims.csv"
    pd.DataFrame({"id": ["x"]}).to_csv(csv, index=False)
    assert cli_main(["findings", str(csv), "--config-name", "ci", "--out", str(tmp_path / "f.md")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"depthwidth findings: error: {csv}: columns ['id'] are not")
    assert not (tmp_path / "f.md").exists()


def test_check_notes_whether_findings_were_made_from_these_claims(tmp_path):
    frame = claims_frame()
    results, docs = build_findings(tmp_path, frame)
    checker = check.Checker(results)
    claims_csv = tmp_path / CI.claims_files()[0]
    built = sha256_file(claims_csv)
    assert check.findings_note(checker, CI) == (
        f"docs/{MD}: made from this {CI.claims_files()[0]} (sha256 {built[:12]}): its findings reproduce here "
        "byte for byte"
    )
    frame.loc[3, "verdict"] = verdicts.HOLDS
    frame.to_csv(claims_csv, index=False)
    note = check.findings_note(checker, CI)
    assert note.startswith(f"docs/{MD}: made from another claims.csv than {CI.claims_files()[0]} ")
    assert f"(the verdicts of {frame.loc[3, 'id']} differ), sha256 {built[:12]} where this one is " in note
    assert sha256_file(claims_csv)[:12] in note
    assert "rerun `snakemake findings`" in note and "\n" not in note
    # another config's findings are not this run's: its own claims.csv (the same table) is no match, nor a note
    default = plan.from_config(config.read(REPO / "config" / "config.yaml"))
    other_claims = tmp_path / default.claims_files()[0]
    other_claims.parent.mkdir(parents=True)
    frame.to_csv(other_claims, index=False)
    assert check.findings_note(checker, default) is None
    frame.loc[3, ["verdict", "interval"]] = verdicts.NOT_RUN, "[1, 2]"
    frame.to_csv(claims_csv, index=False)
    assert "(same verdicts, other values differ)" in check.findings_note(checker, CI)
    (docs / MD).write_text("# hand-written findings\n")
    assert "records no claims.csv it was made from" in check.findings_note(checker, CI)


def test_a_findings_note_is_no_problem(tmp_path, capsys, monkeypatch):
    frame = claims_frame()
    results, _ = build_findings(tmp_path, frame)
    frame.loc[0, "verdict"] = verdicts.FAILS
    frame.to_csv(tmp_path / CI.claims_files()[0], index=False)
    checker = check.check(results, CI, label=str(results))
    assert len(checker.notes) == 1 and checker.notes[0].startswith(f"{tmp_path}/docs/{MD}: made from another")
    assert not [problem for problem in checker.problems if MD in problem]
    # with no other problem (this folder has many: no data, no runs), the note alone leaves the exit status 0
    monkeypatch.setattr(check, "check", lambda *args, **kwargs: checker)
    checker.problems.clear()
    capsys.readouterr()  # what `findings` printed
    out = tmp_path / "check.txt"
    args = argparse.Namespace(results=results, config_json=None, configfile=CI_CONFIG, config=[], out=out)
    assert check.run(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(": 0 problems") and lines[1:] == [f"  note: {checker.notes[0]}"]
    assert out.read_text().splitlines() == lines


@pytest.mark.parametrize(("name", "noci"), [("config", True), ("ci", True), ("levine", False)])
def test_findings_copy_every_figure_each_config_draws_the_headline_first(name, noci):
    built = plan.from_config(config.read(REPO / "config" / f"{name}.yaml"))
    drawn = built.findings_figures()
    # levine.yaml trains sweeps only: it draws no Noci figure
    headline = [figure for figure in contracts.FINDINGS_FIGURES if noci or not figure.startswith("shaped_")]
    assert drawn[: len(headline)] == headline and len(headline) >= 4
    assert sorted(drawn) == sorted(built.figures) and len(set(drawn)) == len(drawn)


def test_each_config_writes_its_own_findings_and_only_the_default_writes_docs_findings_md():
    assert contracts.findings_path("default") == "docs/findings.md"
    assert contracts.findings_figure_path("default", "kaplan_fig6") == "docs/findings/kaplan_fig6.png"
    assert contracts.findings_path("ci") == "docs/findings-ci.md"
    assert contracts.findings_figure_path("ci", "kaplan_fig6") == "docs/findings-ci/kaplan_fig6.png"
