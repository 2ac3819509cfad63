"""The command line's own behaviour: its version, and a reader that stops early."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

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
