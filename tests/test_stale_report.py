"""A `snakemake --report` that fails (here: nothing built yet) leaves no report, not the old one looking current
(issue 36, item 9); and only a report Snakemake wrote goes: `--report README.md` deleted the README before
snakemake refused the name (issue 55, case 7). On a copy of the workflow; the report fails before any job could
run."""

from __future__ import annotations

import zipfile

import pytest
from conftest import copy_workflow, run_snakemake

OLD_REPORT = "<!doctype html>\n<html><head><title>Snakemake Report</title></head><body>an earlier build</body></html>"


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("stale-report"))


def report(work, *args: str):
    return run_snakemake(*args, "--configfile", "config/ci.yaml", cwd=work)


def test_a_failed_report_leaves_no_old_report(work):
    old = work / "results" / "ci" / "report.html"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text(OLD_REPORT)
    result = report(work, "--report", "results/ci/report.html")
    assert result.returncode != 0 and "marked for report but does not exist" in result.stderr
    assert "depthwidth: removed the old results/ci/report.html; a failed report leaves none" in result.stderr
    assert not old.exists()
    # the --report=FILE form, a zipped report, and nothing but the report is touched
    claims, zipped = work / "results" / "ci" / "claims.md", work / "results" / "ci" / "report.zip"
    claims.write_text("x")
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("report/report.html", OLD_REPORT)
    assert report(work, "--report=results/ci/report.zip").returncode
    assert not zipped.exists() and claims.read_text() == "x"


@pytest.mark.parametrize("name", ["README.md", "docs/findings.md", "results/ci/notes.html", "results/ci/notes.zip"])
def test_a_file_that_is_no_snakemake_report_is_never_deleted(work, name):
    path, before = work / name, b"<html><head><title>my own notes</title></head></html>"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(before)
    result = report(work, "--report", name)
    assert result.returncode != 0 and "depthwidth: removed" not in result.stderr
    assert path.read_bytes() == before
