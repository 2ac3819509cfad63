"""The front door and the pages behind it, held to what they describe: the README's verdict table is the
committed findings' table and its figure a committed findings figure, its install and test commands are what
CI runs, every relative link resolves to a committed file, and results/README.md is written from the
contracts."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from depthwidth import contracts, results_readme

README = REPO / "README.md"


def committed() -> set[str]:
    """The repository's committed files (git ls-files), as paths relative to its root."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return set(filter(None, out.split("\0")))


# --- tables -----------------------------------------------------------------------------------------


def cells(line: str) -> list[str]:
    """The cells of one markdown table row (an escaped \\| stays inside its cell)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def claims_table(text: str, where: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the first markdown table whose first column is `claim`."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|") and cells(line)[0] == "claim"), None)
    assert start is not None, f"{where}: no table whose first column is `claim`"
    assert set(lines[start + 1].replace("|", "").strip()) <= set("-: "), f"{where}: no separator under the header"
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(cells(line))
    return cells(lines[start]), rows


def in_columns(header: list[str], rows: list[list[str]], columns: list[str]) -> list[list[str]]:
    return [[row[header.index(column)] for column in columns] for row in rows]


def test_readme_verdict_table_is_the_committed_findings_table():
    findings = REPO / contracts.findings_path(contracts.FINDINGS_CONFIG)
    ours, our_rows = claims_table(README.read_text(), "README.md")
    theirs, their_rows = claims_table(findings.read_text(), str(findings))
    assert {"claim", "verdict"} <= set(ours), ours
    assert set(ours) <= set(theirs), f"README.md's table has columns docs/findings.md's has not: {ours}"
    # the same rows in the same order, every cell the README shows as the findings show it
    assert in_columns(ours, our_rows, ours) == in_columns(theirs, their_rows, ours), (
        "README.md's verdict table differs from docs/findings.md's: copy the rows over"
    )


def test_the_table_comparison_notices_a_moved_verdict():
    findings = (REPO / contracts.findings_path(contracts.FINDINGS_CONFIG)).read_text()
    header, rows = claims_table(findings, "findings")
    moved = findings.replace("| **holds** |", "| **does not hold** |", 1)
    assert moved != findings
    assert in_columns(*claims_table(moved, "moved"), header) != in_columns(header, rows, header)


def test_readme_shows_one_committed_findings_figure():
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", README.read_text())
    headline = [contracts.findings_figure_path(contracts.FINDINGS_CONFIG, f) for f in contracts.FINDINGS_FIGURES]
    assert len(images) == 1 and images[0] in headline, images
    assert images[0] in committed()


# --- links ------------------------------------------------------------------------------------------


def pages() -> list[str]:
    """The pages whose links must resolve: README.md, every committed docs/*.md and results/README.md."""
    files = committed()
    docs = sorted(f for f in files if re.fullmatch(r"docs/[^/]+\.md", f))
    assert docs, "no committed docs/*.md"
    return ["README.md", *docs, "results/README.md"]


def relative_links(text: str) -> list[str]:
    """The link targets of a markdown page that point into the repository (inline and reference links, images;
    not inside code), their anchors dropped; a bare anchor (#section) is no file."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # fenced blocks
    text = re.sub(r"(`+).*?\1", "", text, flags=re.S)  # code spans
    targets = re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text)
    targets += re.findall(r"^\s*\[[^\]]+\]:\s*<?([^\s>]+)", text, flags=re.M)
    links = []
    for target in targets:
        if re.match(r"[a-z][a-z0-9+.-]*:", target, flags=re.I):  # https:, mailto:, ...
            continue
        path = target.split("#", 1)[0]
        if path:
            links.append(path)
    return links


def unresolved(page: str, files: set[str]) -> list[str]:
    """The relative links of `page` that name no committed file (nor a folder of committed files)."""
    bad = []
    for link in relative_links((REPO / page).read_text()):
        resolved = (REPO / page).parent / link
        try:
            rel = resolved.resolve().relative_to(REPO.resolve()).as_posix()
        except ValueError:
            bad.append(f"{link} (outside the repository)")
            continue
        if rel not in files and not any(f.startswith(f"{rel}/") for f in files):
            bad.append(link)
    return bad


@pytest.mark.parametrize("page", pages())
def test_every_relative_link_resolves_to_a_committed_file(page):
    assert not unresolved(page, committed()), f"{page}: links to no committed file: {unresolved(page, committed())}"


def test_link_check_catches_a_broken_link_and_skips_code_and_urls(tmp_path, monkeypatch):
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text(
        "[ok](../README.md#install) [folder](findings) [gone](findings/nope.png) ![img](../docs/x.png)\n"
        "[web](https://example.org/a.md) [anchor](#top) `[code](missing.md)`\n```\n[block](missing2.md)\n```\n"
        "[ref]: ../LICENSE\n[badref]: ../NOTICE\n[out](../../elsewhere.md)\n"
    )
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    files = {"README.md", "LICENSE", "docs/findings/a.png"}
    assert unresolved("docs/page.md", files) == [
        "findings/nope.png",
        "../docs/x.png",
        "../../elsewhere.md (outside the repository)",
        "../NOTICE",
    ]


# --- install and test: what CI runs ------------------------------------------------------------------


def section_commands(text: str, heading: str) -> list[str]:
    """The command lines of the first bash block under `## heading`, comments dropped."""
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert block, f"README.md, {heading}: no bash block"
    lines = (re.sub(r"\s+#.*$", "", line).strip() for line in block.group(1).splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_readme_install_and_test_are_what_ci_runs():
    text = README.read_text()
    install = section_commands(text, "Install")
    exports = dict(line.removeprefix("export ").split("=", 1) for line in install if line.startswith("export "))
    commands = [line for line in install if not line.startswith("export ")]
    test = section_commands(text, "Test")[0]
    ci_line = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert " && ".join([*commands, test]) == ci_line
    # torch first, pinned as pyproject pins it, so that nothing before it pulls torch's CUDA build
    assert commands[-1].split(" && ")[0] == "pip install torch==2.13.0"
    assert "torch==2.13.0" in (REPO / "pyproject.toml").read_text()
    # what the README exports (torch's CPU index), the CI job sets in its environment
    jobs = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())["jobs"]
    env = {k: v for job in jobs.values() for step in job["steps"] for k, v in step.get("env", {}).items()}
    assert exports and all(env.get(key) == value for key, value in exports.items()), (exports, env)


# --- results/README.md ------------------------------------------------------------------------------


def test_results_readme_is_written_from_the_contracts():
    assert (REPO / "results" / "README.md").read_text() == results_readme.text(), (
        "results/README.md is stale: python -m depthwidth.results_readme > results/README.md"
    )


def test_results_readme_names_every_shared_folder_and_every_config_file():
    text = results_readme.text()
    for folder in contracts.SHARED_FOLDERS:
        assert f"`{folder}/" in text, folder
    checkpoint = Path(contracts.checkpoint_dir("<run id>")).relative_to(contracts.RESULTS).as_posix()
    assert f"`{checkpoint}/`" in text
    config = "<config>"
    for path in (
        contracts.table_path(config, "<table id>"),
        *contracts.claims_files(config),
        contracts.caption_path(config, "<figure id>"),
        contracts.check_path(config),
        contracts.report_path(config),
    ):
        assert f"`{Path(path).relative_to(contracts.RESULTS).as_posix()}`" in text, path


# --- citations of a section: `docs/x.md, "Section"` names a heading of that page -----------------------

CITATION = re.compile(
    r"(?P<page>(?:docs/[\w.-]+|config/README|results/README|README)\.md)(?:\]\([^)\s]*\))?\)?"
    r"(?:,\s*|\s+\()\"(?P<section>[\w`][^\"]{0,119})\""  # a section's name starts with a word
)


def headings(text: str) -> list[str]:
    """A markdown page's headings as a reader sees them: the #'s and the backticks dropped."""
    return [line.lstrip("#").strip().replace("`", "") for line in text.splitlines() if re.match(r"#{1,6} ", line)]


def dangling_citations(texts: dict[str, str], pages: dict[str, str]) -> list[str]:
    """Each `page, "Section"` citation in `texts` (file -> text) whose page (file -> text) has no heading that
    starts with the section's words: a section that moved or was renamed and left its citations behind."""
    bad = []
    for name, text in texts.items():
        for match in CITATION.finditer(text):
            page = match["page"]
            section = re.sub(r"\s+(?:#\s*)?", " ", match["section"]).replace("`", "").strip()
            if page not in pages or not any(h.startswith(section) for h in headings(pages[page])):
                bad.append(f"{name}: {page}, {section!r}")
    return bad


# Citations left in modules that jobs run: editing one reruns every job whose code it is (a rule's code input, a
# checkpoint's code digest: contracts.code_files), all training for train/model.py, which a comment is not worth.
# Each moves with the next real change of its module; the test fails once it has (drop it here then).
AWAITING_A_CODE_CHANGE = {
    "workflow/depthwidth/train/model.py: config/README.md, 'Stalls'",  # now docs/protocol-choices.md
}


def test_every_cited_section_is_a_heading_of_the_page_it_names():
    files = committed()
    texts = {}
    for name in sorted(files):
        if not re.search(r"\.(md|py|ya?ml|smk)$|^Snakefile$|^scripts/", name) or name.startswith("tests/data/"):
            continue
        if name == Path(__file__).relative_to(REPO).as_posix():  # this file's examples cite made-up pages
            continue
        try:
            texts[name] = (REPO / name).read_text()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
    pages = {name: text for name, text in texts.items() if name.endswith(".md")}
    dangling = dangling_citations(texts, pages)
    bad = [citation for citation in dangling if citation not in AWAITING_A_CODE_CHANGE]
    assert not bad, "cited sections no page has (moved or renamed?):\n" + "\n".join(bad)
    fixed = AWAITING_A_CODE_CHANGE - set(dangling)
    assert not fixed, f"cited right now, drop from AWAITING_A_CODE_CHANGE: {sorted(fixed)}"


def test_citation_check_reads_each_form_and_catches_a_moved_section():
    pages = {"docs/a.md": "# A\n\n## `glue`: fine-tuning\n\n### Stalls: what they are\n", "README.md": "## Install\n"}
    texts = {
        "x.py": '# docs/a.md, "Stalls" and docs/a.md ("glue"), [docs/a.md](../docs/a.md), "Stalls: what\n# they are"',
        "y.md": 'README.md, "Install"; docs/a.md, "Precision"; docs/b.md, "Stalls"; README.md, "install"',
    }
    assert dangling_citations(texts, pages) == [
        "y.md: docs/a.md, 'Precision'",
        "y.md: docs/b.md, 'Stalls'",
        "y.md: README.md, 'install'",
    ]
