"""No function in the package is longer than MAX_LINES lines (nanoGPT-sized pieces)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "depthwidth"
MAX_LINES = 80


def function_lengths(root: Path) -> dict[str, int]:
    """'path:name' -> lines from `def` (decorators included) to the end of the body, for every function."""
    lengths = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lengths[f"{path.relative_to(root)}:{node.name}"] = node.end_lineno - start + 1
    return lengths


def test_the_measure_counts_lines(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n" + "    x = 1\n" * 81 + "\n\n@property\ndef g():\n    pass\n")
    assert function_lengths(tmp_path) == {"m.py:f": 82, "m.py:g": 3}


def test_no_function_is_longer_than_80_lines():
    lengths = function_lengths(PACKAGE)
    assert len(lengths) > 100  # it saw the package
    long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert not long, f"functions over {MAX_LINES} lines: {long}"
