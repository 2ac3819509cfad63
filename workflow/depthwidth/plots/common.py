"""The one theme of every figure, and the writer of a figure's files (PNG, PDF, CSV, and the CSV of its rows
with the stalled runs left out)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import math
import tempfile
import textwrap
from pathlib import Path

import matplotlib
import matplotlib.ticker
import matplotlib.transforms

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from depthwidth import fits, tilt  # noqa: E402
from depthwidth.contracts import figure_module, unstalled_path  # noqa: E402
from depthwidth.io import atomic_path, write_text  # noqa: E402

PALETTE = {"shaped": "#1b7837", "standard": "#b2182b", "temperature": "#e08214", "sde": "#2166ac", "finite": "#762a83"}


# Readable at the width of a web page (~900 px): no figure wider than PAGE_WIDTH inches (1350 px at 150 dpi, shown
# at 2/3), and no text smaller than SMALL points (11 px there)
PAGE_WIDTH, SMALL = 9.0, 8.0


def apply_theme() -> None:
    rc = {"figure.dpi": 120, "savefig.dpi": 150, "legend.fontsize": SMALL + 0.5, "legend.title_fontsize": SMALL + 1}
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1, rc=rc)


def save_figure(
    fig: plt.Figure,
    table: pd.DataFrame,
    out_png: Path,
    out_pdf: Path | None = None,
    out_csv: Path | None = None,
    unstalled: pd.DataFrame | None = None,
    out_unstalled: Path | None = None,
) -> None:
    """Write the PNG, the PDF and the CSV of the plotted rows (by default `<id>.pdf` and `<id>.csv` beside the
    PNG) atomically, and the rows read without the stalled runs (`unstalled`, by default `<id>.unstalled.csv`:
    the plotted rows again where none is given), then close the figure."""
    out_png = Path(out_png)
    for path, kind in ((out_png, "png"), (Path(out_pdf or out_png.with_suffix(".pdf")), "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=kind, bbox_inches="tight")
    out_csv = Path(out_csv or out_png.with_suffix(".csv"))
    write_text(out_csv, table.to_csv(index=False))
    other = table if unstalled is None else unstalled
    write_text(Path(out_unstalled or unstalled_path(out_csv)), other.to_csv(index=False))
    plt.close(fig)


def _plain_tick(value: float) -> str:
    """A tick label without powers of ten: 6.4, 0.05, 3e5 (up to four significant digits)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else ""
    if 1e-3 <= abs(value) < 1e4:
        return f"{value:.4g}"
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


# a log axis' tick families, coarsest first: the mantissas of each power of ten it ticks
LOG_TICK_MANTISSAS = ((1,), (1, 3), (1, 2, 5), (1, 2, 3, 5), tuple(range(1, 10)))
LEAST_TICKS, MOST_TICKS = 3, 7


def log_ticks(low: float, high: float, base: float = 10.0) -> list[float]:
    """Ticks of a log axis over [low, high]: the coarsest family with LEAST_TICKS inside (every k-th past
    MOST_TICKS), powers of `base` first where it is not 10; else evenly spaced plain numbers (a span under 2x)."""
    low, high = sorted((low, high))
    if not (low > 0 and math.isfinite(high)):
        return []

    def inside(ticks) -> list[float]:
        return [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]

    powers = range(math.floor(math.log(low, base)), math.ceil(math.log(high, base)) + 1)
    families = [inside(base**k for k in powers)] if base != 10 else []
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    families += [inside(m * 10.0**k for k in decades for m in mantissas) for mantissas in LOG_TICK_MANTISSAS]
    for ticks in families:
        if len(ticks) >= LEAST_TICKS:
            return ticks[:: math.ceil(len(ticks) / MOST_TICKS)]
    for bins in range(LEAST_TICKS, 3 * MOST_TICKS):
        ticks = inside(matplotlib.ticker.MaxNLocator(bins, steps=[1, 2, 5, 10]).tick_values(low, high))
        if len(ticks) >= LEAST_TICKS:
            return ticks
    return [low, high]


class LogTicks(matplotlib.ticker.Locator):
    """A log axis' major ticks by `log_ticks`, read at each draw from the axis' view (shared axes share it)."""

    def __init__(self, base: float = 10.0):
        self.base = base

    def __call__(self):
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, vmin, vmax):
        return log_ticks(vmin, vmax, self.base)


def readable_ticks(fig: plt.Figure) -> None:
    """Every log axis a `LogTicks` locator with plain labels ("6.4", "3e5") and no minor ticks; an axis whose draw
    chose its own ticks (not a LogLocator) keeps them."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log" and isinstance(axis.get_major_locator(), matplotlib.ticker.LogLocator):
                axis.set_major_locator(LogTicks(axis.get_transform().base))
                plain_ticks(axis)
                axis.set_minor_locator(matplotlib.ticker.NullLocator())


def plain_ticks(axis) -> None:
    """An axis' tick labels without powers of ten or offsets: 6.4, 0.05, 3e5 (`_plain_tick`)."""
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: _plain_tick(v)))


def legend_outside(ax, side: str = "below", **kwargs):
    """`ax`'s legend off the data: at its right (`side` "right", within the figure: the layout narrows the axes),
    or hung from the figure's bottom edge, which the saved picture grows to hold: centred below `ax` ("below") or
    below the whole figure ("under", for a legend every panel shares). Pass ncol for several columns."""
    if side == "right":
        return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, **kwargs)
    fig = ax.figure
    under = matplotlib.transforms.blended_transform_factory(ax.transAxes, fig.transFigure)
    handles, labels = ax.get_legend_handles_labels()
    anchor = {"below": under, "under": fig.transFigure}[side]
    return fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=anchor, **kwargs)


def legend_in(spare, owner, loc: str = "upper left", **kwargs):
    """`owner`'s legend drawn in the empty grid cell `spare` (frame and ticks hidden), following the cell as the
    layout moves it; left out of the layout, which would otherwise widen `owner`'s margins to reach it."""
    spare.axis("off")
    cell = dict(bbox_to_anchor=spare.bbox, bbox_transform=matplotlib.transforms.IdentityTransform())  # display units
    legend = owner.legend(loc=loc, borderaxespad=0, **cell, **kwargs)
    legend.set_in_layout(False)
    return legend


def finish(fig: plt.Figure, title: str) -> None:
    """A drawn figure made ready to save: readable log ticks, a tight layout, and the title above the panels,
    wrapped to the figure's width."""
    readable_ticks(fig)
    fig.tight_layout()
    text = fig.suptitle(title, fontsize=10, y=1.0, va="bottom")
    renderer, width = fig.canvas.get_renderer(), fig.bbox.width
    for characters in range(len(title) - 1, 30, -4):  # narrower lines until the title is no wider than the figure
        if text.get_window_extent(renderer).width <= width:
            break
        text.set_text(textwrap.fill(title, characters))


HELPER_MODULES = ("__init__", "common", "registry", "shaped_common", "sweep_common")  # plots/ modules that draw none


def figure_code(figure_id: str):
    """The module that draws a figure; ValueError naming the figures there are if none has that id."""
    name = figure_module(figure_id)
    if not figure_id.isidentifier() or importlib.util.find_spec(name) is None:
        # the figures, not the helper modules beside them (a figure job reads no registry: test_structure)
        known = sorted(p.stem for p in Path(__file__).parent.glob("*.py") if p.stem not in HELPER_MODULES)
        raise ValueError(f"unknown figure {figure_id!r}: no module {name} (figures: {', '.join(known)})")
    return importlib.import_module(name)


def render(
    figure_id: str,
    inputs: dict[str, Path],
    out_png: Path,
    title: str | None = None,
    out_pdf: Path | None = None,
    out_csv: Path | None = None,
    out_unstalled: Path | None = None,
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
    table, other = rows(figure_id, {name: Path(inputs[name]) for name in names})
    fig = module.draw(table)
    finish(fig, figure_id if title is None else title)
    save_figure(fig, table, out_png, out_pdf, out_csv, other, out_unstalled)
    return table


def rows(figure_id: str, inputs: dict[str, Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A figure's rows from its input files by name (its module's `data`, the columns it promises checked) and the
    other reading, its sweep tables' stalled runs left out (`unstalled`); both count those runs in `stalled_runs`
    where the figure reads sweep tables, and both say in `level` the level their intervals are at (`fits.level()`:
    a figure of sweep tables is drawn at its last look's, its decide job's rows at look 1's)."""
    module = figure_code(figure_id)
    table = module.data(**inputs)
    missing = [c for c in module.COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"figure {figure_id}: its data lacks the columns {missing}")
    sweeps = flagged_tables(inputs)
    stalled = stalled_runs(sweeps)
    if sweeps:
        table["stalled_runs"] = len(stalled)
    other = unstalled(module, inputs, sweeps, stalled, table)
    return table.assign(**{fits.LEVEL_COLUMN: fits.level()}), other.assign(**{fits.LEVEL_COLUMN: fits.level()})


def flagged_tables(inputs: dict[str, Path]) -> dict[str, pd.DataFrame]:
    """A figure's sweep tables by input name: the CSV inputs that carry the stall flag (none for a figure that
    reads no sweep table)."""
    tables = {name: pd.read_csv(path) for name, path in inputs.items() if path.suffix == ".csv"}
    return {name: t for name, t in tables.items() if {"stalled", "run_id"} <= set(t.columns)}


def stalled_runs(sweeps: dict[str, pd.DataFrame]) -> set[str]:
    """The run ids flagged stalled in a figure's sweep tables (a run two tables share, once)."""
    return {str(rid) for t in sweeps.values() for rid in t.loc[t["stalled"].eq(True), "run_id"]}  # empty: not flagged


def unstalled(
    module, inputs: dict[str, Path], sweeps: dict[str, pd.DataFrame], stalled: set[str], table: pd.DataFrame
) -> pd.DataFrame:
    """The figure's rows with its stalled runs left out of every sweep table it reads (`sweeps`, by input name; its
    rows as they are where none stalled), with `stalled_runs` the count left out."""
    if not stalled:
        return table
    with tempfile.TemporaryDirectory() as tmp:
        paths = dict(inputs)
        for name, frame in sweeps.items():
            paths[name] = Path(tmp, f"{name}.csv")
            frame[~frame["run_id"].astype(str).isin(stalled)].to_csv(paths[name], index=False)
        other = module.data(**paths)
    other["stalled_runs"] = len(stalled)
    return other


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("figure", help="figure id: the module of plots/ that draws it")
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE: an input table by name (repeatable)")
    parser.add_argument("--title", default=None, help="the figure's title (default: its id)")
    parser.add_argument("--out", required=True, type=Path, help="the PNG to write")
    parser.add_argument("--pdf", type=Path, default=None, help="the PDF to write (default: beside the PNG)")
    parser.add_argument("--csv", type=Path, default=None, help="the plotted rows' CSV (default: beside the PNG)")
    parser.add_argument(
        "--unstalled", type=Path, default=None, help="the rows without the stalled runs (default: beside the CSV)"
    )
    parser.add_argument(
        "--level",
        type=float,
        default=fits.LEVEL,
        help=f"the two-sided level of every interval and test the figure computes and draws (default: {fits.LEVEL:g})",
    )
    parser.add_argument("--tilt", type=tilt.from_argument, default=tilt.Carried(), help=tilt.ARGUMENT_HELP)


def run(args: argparse.Namespace) -> int:
    inputs = dict(item.partition("=")[::2] for item in args.input)
    if any(not name or not path for name, path in inputs.items()):
        raise ValueError(f"--input: expected NAME=FILE, got {args.input}")
    with fits.at_level(args.level), tilt.carrying(args.tilt):  # the rows, their intervals, tests and systematics
        table = render(args.figure, inputs, args.out, args.title, args.pdf, args.csv, args.unstalled)
    print(f"{args.figure}: {len(table)} plotted rows -> {args.out}, {args.pdf or 'its .pdf'}, {args.csv or 'its .csv'}")
    return 0
