"""The GitHub Actions workflow: valid by the linter's workflow schema, and it runs `.ci/run`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"


def lint(path: Path) -> subprocess.CompletedProcess:
    """check-jsonschema (pinned in the test extra) against its vendored GitHub workflow schema."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ci_workflow_passes_the_linter():
    result = lint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_linter_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "ci.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on:", "run-on:"))
    assert lint(broken).returncode == 1


def test_ci_workflow_runs_ci_run_with_python_311():
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    steps = [step for job in jobs.values() for step in job["steps"]]
    assert [step["run"] for step in steps if "run" in step] == ["bash .ci/run"]
    assert any(step.get("with", {}).get("python-version") == "3.11" for step in steps)
    assert all(job["runs-on"].startswith("ubuntu") for job in jobs.values())
