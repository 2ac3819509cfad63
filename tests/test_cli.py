"""The command line's own behaviour: its version, its help, and a reader that stops early."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest
from conftest import REPO, package_env


def test_version_is_pyprojects():
    out = subprocess.run([sys.executable, "-m", "depthwidth", "--version"], env=package_env(), capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert re.fullmatch(rf"depthwidth {re.escape(version)}\n", out)


def test_a_reader_that_stops_early_gets_no_traceback():
    """`python -m depthwidth --help | head -0`: the pipe is closed before the help is written."""
    proc = subprocess.Popen([sys.executable, "-m", "depthwidth", "--help"], env=package_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    proc.stdout.close()  # before the child, still importing, writes a byte
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert err == ""


def test_bench_help_names_every_bench_command():
    out = subprocess.run([sys.executable, "-m", "depthwidth", "bench", "--help"], env=package_env(),
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    description = out.split("\n\n")[1]
    assert all(f"`bench {name}`" in description for name in ("train", "sweep", "pack", "sde")), description


@pytest.mark.parametrize(
    "command",
    [[sys.executable, "scripts/synthetic_wikitext.py", "--help"], [sys.executable, "scripts/gpu-check", "--help"],
     ["bash", "scripts/cluster-up", "--help"]],
    ids=["synthetic_wikitext", "gpu-check", "cluster-up"],
)  # fmt: skip
def test_a_scripts_help_is_whole_and_does_nothing_else(command):
    """synthetic_wikitext.py --help raised IndexError, gpu-check's help stopped mid-sentence, and cluster-up took no
    arguments: its --help would have installed and started SLURM."""
    result = subprocess.run(command, cwd=REPO, env=package_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "usage:" in result.stdout and "installing" not in result.stdout
    description = result.stdout.split("\n\n")[1] if command[0] != "bash" else result.stdout
    assert description.rstrip().endswith((".", ")")), description  # a whole sentence, not a cut line


@pytest.mark.parametrize("table", ["samples", "trajectory"])
def test_shaped_sims_help_names_a_schema_definition_that_exists(table):
    from depthwidth.spec import load_schema

    out = subprocess.run([sys.executable, "-m", "depthwidth", "shaped-sim", table, "--help"], env=package_env(),
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    (named,) = re.findall(r"\$defs/(\w+)", out)  # it said trajector_spec
    assert named in load_schema()["$defs"]


def test_an_unknown_figure_lists_the_figures_not_the_helper_modules(capsys):
    from depthwidth.cli import main
    from depthwidth.plots.registry import FIGURES

    assert main(["figure", "nosuch", "--out", "unused.png"]) == 1
    listed = capsys.readouterr().err.split("(figures: ")[1].rstrip(")\n").split(", ")
    assert listed == sorted(FIGURES)  # it listed common, registry, sweep_common and shaped_common too


@pytest.mark.parametrize("command", [["validate-config", "{folder}"], ["stalls", "{file}/sweep_lr_check.csv"]])
def test_a_path_that_is_a_folder_or_under_a_file_is_one_line_naming_it(tmp_path, capsys, command):
    """A folder where a file is read, or a path under a file: one line naming the path, no traceback."""
    from depthwidth.cli import main

    file = tmp_path / "file.csv"
    file.write_text("a\n1\n")
    argv = [arg.format(folder=tmp_path, file=file) for arg in command]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"depthwidth {command[0]}: error: ") and err.count("\n") == 1 and str(tmp_path) in err, err


@pytest.mark.parametrize(
    "command",
    [
        ["check", "{tmp}", "--config-json"],
        ["claims", "--scale-note", "x", "--out", "{tmp}/claims.csv", "--design-json"],
        ["sensitivity", "--out", "{tmp}/sensitivity.csv", "--pairs-json"],
        ["shaped-training-table", "--out", "{tmp}/entropy.csv", "--specs-json"],
        ["sweep-table", "--experiment", "design", "--out", "{tmp}/sweep_design.csv", "--runs-json"],
    ],
)
def test_a_json_option_that_is_not_json_is_one_line_naming_the_option(tmp_path, capsys, command):
    """Each --*-json option names itself where its text is no JSON (it was json's bare 'Expecting value: ...')."""
    from depthwidth.cli import main

    (tmp_path / "runs").mkdir()  # check's results folder: it reads the config only after finding one
    assert main([arg.format(tmp=tmp_path) for arg in command] + ['{"a":']) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"depthwidth {command[0]}: error: {command[-1]}: not valid JSON (") and err.count("\n") == 1
    assert not any(tmp_path.glob("*.csv"))


@pytest.mark.parametrize("figure, inputs", [("lr_check", ["lr_check"]), ("levine_literal", ["design", "literal"])])
def test_a_figure_given_a_table_that_is_no_sweep_table_names_the_file_and_its_missing_columns(
    tmp_path, capsys, figure, inputs
):
    """A figure's sweep table without a sweep table's columns: one line naming the file and the columns it lacks (it
    was a KeyError's traceback from inside the figure: 'status', 'n_nonembedding')."""
    from depthwidth.cli import main

    bad = tmp_path / "bad.csv"
    bad.write_text("run_id,status\nr,ok\n")
    argv = ["figure", figure, "--out", str(tmp_path / "f.png")]
    for name in inputs:
        argv += ["--input", f"{name}={bad}"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("depthwidth figure: error: ") and err.count("\n") == 1, err
    assert str(bad) in err and "n_layer" in err and "run_id" not in err.split("no column")[1]
