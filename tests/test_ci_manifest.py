"""config/ci.yaml rebuilt gives the committed manifest (tests/data/ci-manifest.json): every run's curve, every
table and claims.csv byte for byte, on any x86-64 CPU with AVX2 (the pinned numeric path, numerics.py).

When this fails on a machine and the change is intended, regenerate (docs/performance.md, "Same numbers on every x86
machine"): `snakemake --cores 2 --configfile config/ci.yaml && python -m depthwidth manifest results
--configfile config/ci.yaml --write tests/data/ci-manifest.json` (`--only claims` for a change of claims.csv alone).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, package_env
from depthwidth import manifest

MANIFEST = REPO / manifest.DEFAULT
CI = ["--configfile", "config/ci.yaml"]


def manifest_cli(work: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "depthwidth", "manifest", "results", *CI, *argv],
        cwd=work,
        env=package_env(),
        capture_output=True,
        text=True,
    )


def test_ci_rebuilds_the_committed_manifest(ci_build):
    result = manifest_cli(ci_build, "--compare", str(MANIFEST))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].endswith(": 0 differences")


def test_the_manifest_covers_every_run_table_and_claims_csv():
    from conftest import plan_of

    plan, committed = plan_of(REPO / "config/ci.yaml"), json.loads(MANIFEST.read_text())
    assert (committed["config"], committed["numerics"]) == (plan.name, "x86-avx2")
    assert set(committed["runs"]) >= set(plan.runs)  # and the runs a scan chose, where ci has scans
    assert sorted(committed["tables"]) == sorted(map(plan.table_file, plan.tables))
    assert list(committed["claims"]) == [plan.claims_files()[0]]


def test_differences_name_each_moved_entry():
    expected = {"config": "ci", "numerics": "x86-avx2", "runs": {"a": "1" * 64, "b": "2" * 64}, "tables": {}}
    got = {**expected, "runs": {"a": "3" * 64, "c": "4" * 64}, "claims": {"results/ci/claims.csv": "5" * 64}}
    assert manifest.differences(expected, got) == [
        f"runs: a: sha256 {'3' * 12}, the manifest's {'1' * 12}",
        "runs: b: in the manifest, not built",
        "runs: c: built, not in the manifest",
        "claims: results/ci/claims.csv: built, not in the manifest",
    ]
    assert manifest.differences(expected, {**expected, "numerics": "native"}) == [
        "numerics: 'native', the manifest's 'x86-avx2'"
    ]
    # other library versions are a clue, never a difference
    versions = {"numpy": "2.4.6", "torch": "2.13.0"}
    assert manifest.differences({**expected, "versions": versions}, {**expected, "versions": {}}) == []
    assert manifest.version_notes({"versions": versions}, {"versions": {**versions, "numpy": "2.5.0"}}) == [
        "numpy 2.5.0 here, 2.4.6 in the manifest"
    ]


def test_only_claims_replaces_the_claims_and_refuses_when_a_number_moved():
    committed = {"config": "ci", "numerics": "x86-avx2", "runs": {"a": "1"}, "tables": {"t": "2"}, "claims": {"c": "3"}}
    rebuilt = {**committed, "claims": {"c": "4"}}
    assert manifest.updated(committed, rebuilt, ("claims",)) == rebuilt
    with pytest.raises(ValueError, match=r"^--only claims: the other sections moved too \(tables: t: sha256 5, "):
        manifest.updated(committed, {**rebuilt, "tables": {"t": "5"}}, ("claims",))


def test_write_only_claims_and_a_run_off_the_pinned_path(ci_build, tmp_path):
    work = tmp_path / "work"
    subprocess.run(["cp", "-a", str(ci_build), str(work)], check=True)
    stale = json.loads(MANIFEST.read_text())
    claims_csv = next(iter(stale["claims"]))
    stale["claims"][claims_csv] = "0" * 64  # as after a change of claims.csv's columns
    written = tmp_path / "manifest.json"
    written.write_text(json.dumps(stale))
    result = manifest_cli(work, "--write", str(written), "--only", "claims")
    assert result.returncode == 0, result.stderr
    assert json.loads(written.read_text()) == json.loads(MANIFEST.read_text())
    # a run trained on the machine's own kernels is no part of a manifest
    run = sorted((work / "results" / "runs").glob("*/metrics.json"))[0]
    metrics = json.loads(run.read_text())
    metrics["numerics"] = {**metrics["numerics"], "path": "native", "reason": "DEPTHWIDTH_NUMERICS=native"}
    run.write_text(json.dumps(metrics))
    result = manifest_cli(work)
    assert result.returncode == 1 and result.stderr.strip().splitlines() == [
        "depthwidth manifest: error: results: no manifest of a results folder with problems: "
        f"{run.parent.name}: trained on the native path (DEPTHWIDTH_NUMERICS=native)"
    ]


def test_a_results_folder_with_problems_is_refused_naming_them(slice_data, tmp_path):
    """The manifest reads the runs as `check` reads them: it called check.chosen_rates with a checker and a plan
    after chosen_rates came to take the scans' rounds, a TypeError on every results folder (ci's build too)."""
    from test_faults import ci_plan

    plan, results = ci_plan(), tmp_path / "results"
    shutil.copytree(slice_data, results / plan.data_dir.removeprefix("results/"))  # the data alone, no runs yet
    with pytest.raises(ValueError, match=r"^.*results: no manifest of a results folder with problems: .*missing"):
        manifest.describe(results, plan)


@pytest.mark.parametrize("text", ["[1, 2]", '{"runs": ["a"]}', "{", ""])
@pytest.mark.parametrize("option", [["--compare"], ["--only", "claims", "--write"]])
def test_a_manifest_that_is_no_json_object_of_sections_is_named_before_the_results_are_read(tmp_path, capsys, text,
                                                                                            option):  # fmt: skip
    """--compare (or --write with --only) reads its manifest first and names it: a JSON list was an AttributeError's
    traceback after every run of the results folder was hashed."""
    from depthwidth.cli import main

    path = tmp_path / "manifest.json"
    path.write_text(text)
    assert main(["manifest", str(tmp_path / "no-results"), *option, str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"depthwidth manifest: error: {path}: not ") and err.count("\n") == 1, err
