"""The one theme of every figure, and the writer of a figure's three files (PNG, PDF, CSV)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import math
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from depthwidth.contracts import figure_module  # noqa: E402
from depthwidth.io import atomic_path, write_text  # noqa: E402

PALETTE = {"shaped": "#1b7837", "standard": "#b2182b", "temperature": "#e08214", "sde": "#2166ac", "finite": "#762a83"}


def apply_theme() -> None:
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1, rc={"figure.dpi": 120, "savefig.dpi": 150})


def save_figure(
    fig: plt.Figure, table: pd.DataFrame, out_png: Path, out_pdf: Path | None = None, out_csv: Path | None = None
) -> None:
    """Write the PNG, the PDF and the CSV of the plotted rows (by default `<id>.pdf` and `<id>.csv` beside the
    PNG) atomically, then close the figure."""
    out_png = Path(out_png)
    for path, kind in ((out_png, "png"), (Path(out_pdf or out_png.with_suffix(".pdf")), "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=kind, bbox_inches="tight")
    write_text(Path(out_csv or out_png.with_suffix(".csv")), table.to_csv(index=False))
    plt.close(fig)


def _plain_tick(value: float) -> str:
    """A tick label without powers of ten: 6.4, 0.05, 3e5 (up to four significant digits)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else ""
    if 1e-3 <= abs(value) < 1e4:
        return f"{value:.4g}"
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def figure_code(figure_id: str):
    """The module that draws a figure; ValueError naming the figures there are if none has that id."""
    name = figure_module(figure_id)
    if not figure_id.isidentifier() or importlib.util.find_spec(name) is None:
        known = sorted(p.stem for p in Path(__file__).parent.glob("*.py") if not p.stem.startswith("_"))
        raise ValueError(f"unknown figure {figure_id!r}: no module {name} (modules: {', '.join(known)})")
    return importlib.import_module(name)


def render(
    figure_id: str,
    inputs: dict[str, Path],
    out_png: Path,
    title: str | None = None,
    out_pdf: Path | None = None,
    out_csv: Path | None = None,
) -> pd.DataFrame:
    """Build one figure from its input files, by the names its module's `data` takes, with the module of the
    figure's id (`contracts.figure_module`).

    title: the suptitle (default: the figure id). The workflow passes the registry's (plots/registry.py), which
    this command never reads, so that editing one title or input of the registry reruns that figure alone.
    """
    module = figure_code(figure_id)
    names = list(inspect.signature(module.data).parameters)
    if sorted(inputs) != sorted(names):
        raise ValueError(f"figure {figure_id}: inputs {sorted(inputs)} given, it reads {names}")
    apply_theme()
    table = module.data(**{name: Path(inputs[name]) for name in names})
    missing = [c for c in module.COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"figure {figure_id}: its data lacks the columns {missing}")
    fig = module.draw(table)
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: _plain_tick(v))
    for ax in fig.axes:  # plain tick labels on log axes ("6.4", "3e5"); minor labels only within a decade
        for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            if axis.get_scale() == "log":
                axis.set_major_formatter(plain)
                wide = high >= 10 * low
                axis.set_minor_formatter(matplotlib.ticker.NullFormatter() if wide else plain)
    fig.tight_layout()
    fig.suptitle(figure_id if title is None else title, fontsize=10, y=1.02)
    save_figure(fig, table, out_png, out_pdf, out_csv)
    return table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("figure", help="figure id: the module of plots/ that draws it")
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE: an input table by name (repeatable)")
    parser.add_argument("--title", default=None, help="the figure's title (default: its id)")
    parser.add_argument("--out", required=True, type=Path, help="the PNG to write")
    parser.add_argument("--pdf", type=Path, default=None, help="the PDF to write (default: beside the PNG)")
    parser.add_argument("--csv", type=Path, default=None, help="the plotted rows' CSV (default: beside the PNG)")


def run(args: argparse.Namespace) -> int:
    inputs = dict(item.partition("=")[::2] for item in args.input)
    if any(not name or not path for name, path in inputs.items()):
        raise ValueError(f"--input: expected NAME=FILE, got {args.input}")
    table = render(args.figure, inputs, args.out, args.title, args.pdf, args.csv)
    print(f"{args.figure}: {len(table)} plotted rows -> {args.out}, {args.pdf or 'its .pdf'}, {args.csv or 'its .csv'}")
    return 0
