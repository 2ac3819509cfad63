"""A `snakemake --report` that fails (here: nothing built yet) leaves no report, not the old one looking current
(issue 36, item 9). On a copy of the workflow; the report fails before any job could run."""

from __future__ import annotations

from conftest import copy_workflow, run_snakemake


def test_a_failed_report_leaves_no_old_report(tmp_path):
    work = copy_workflow(tmp_path)
    report = work / "results" / "ci" / "report.html"
    report.parent.mkdir(parents=True)
    report.write_text("<html>the report of an earlier build</html>")
    result = run_snakemake("--report", "results/ci/report.html", "--configfile", "config/ci.yaml", cwd=work)
    assert result.returncode != 0 and "marked for report but does not exist" in result.stderr
    assert "depthwidth: removed the old results/ci/report.html; a failed report leaves none" in result.stderr
    assert not report.exists()
    # the --report=FILE form, and nothing but the report is touched
    claims, zipped = work / "results" / "ci" / "claims.md", work / "results" / "ci" / "report.zip"
    claims.write_text("x"), zipped.write_text("an earlier report")
    assert run_snakemake("--report=results/ci/report.zip", "--configfile", "config/ci.yaml", cwd=work).returncode
    assert not zipped.exists() and claims.read_text() == "x"
