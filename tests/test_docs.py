"""results/README.md is written from the contracts."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO
from depthwidth import contracts, results_readme

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
