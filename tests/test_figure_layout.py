"""Figures a reader can read at the width of a web page (issue 54 item 5), asserted as properties of the drawn
figures, not pixels: every log axis labels at least three ticks, no legend lies over the data of any panel, no
figure is wider than a page or squatter than a strip, and no text is smaller than the house's smallest size.

Each figure is drawn the way the workflow draws it (`common.render`: its module's `draw`, then the ticks, layout
and title), from the rows its `data` makes of planted sweep tables (tests/planted.py, the default design) or from
small hand-made rows for the shaped and GLUE figures; the figure is caught where `render` would save it.
"""

from __future__ import annotations

import functools
import inspect

import matplotlib
import numpy as np
import pandas as pd
import planted
import pytest
from depthwidth.plots import common
from depthwidth.plots.registry import FIGURES

matplotlib.use("Agg")

SWEEP_FIGURES = sorted(
    f for f, spec in FIGURES.items() if all(t.startswith(("sweep_", "curves_")) for t in spec.inputs.values())
)
LAWS = ("levine", "depth_never_pays")  # the default design with crossovers inside its N, and one with none
MAX_ASPECT = 2.2  # width / height: a five-panel strip (2680 x 587 px, 4.6) is unreadable at page width


def entropy_rows(rates=(0.001, 0.003, 0.01, 0.03), layers=4, diverged=0.03) -> pd.DataFrame:
    """The entropy table of the default's design: three attention kinds at four rates, one run each, an entropy per
    layer falling with the tokens (faster at larger rates, least for shaped); standard diverges at `diverged`."""
    rows = []
    for attention, fall in (("standard", 0.9), ("shaped", 0.2), ("temperature", 0.5)):
        for lr in rates:
            failed = attention == "standard" and lr == diverged
            for layer in range(layers):
                for step in range(0, 11):
                    entropy = 3.9 * (1 - fall * min(1.0, lr / 0.03) * step / 10 * (layer + 1) / layers)
                    rows.append({
                        "attention": attention, "lr": lr, "seed": 0, "run_id": f"{attention}-{lr}", "step": step,
                        "tokens": 50_000 * step, "layer": layer, "entropy": entropy,
                        "final_val_loss": np.nan if failed else 5.0 - 10 * lr + {"standard": 0.1}.get(attention, 0),
                        "status": "diverged" if failed else "ok",
                    })  # fmt: skip
    return pd.DataFrame(rows)


def density_rows() -> pd.DataFrame:
    """Terminal densities of two blocks: finite widths 4..256 and the SDE on a grid over [-1, 1], the ODE's point."""
    rho = np.linspace(-1, 1, 200)
    rows = []
    for block, peak in (("attention", 0.8), ("both", 0.9)):
        for source, n in [("finite", n) for n in (4, 8, 16, 32, 64, 128, 256)] + [("sde", np.nan)]:
            density = 0.3 + np.exp(-((rho - peak) ** 2) / 0.05) * (1 if source == "sde" else 0.8)
            stopped = 0.02 if source == "sde" else 0.0
            rows.append(pd.DataFrame({"block": block, "source": source, "n": n, "rho": rho, "density": density,
                                      "samples": 300, "blowup_fraction": stopped}))  # fmt: skip
        rows.append(pd.DataFrame({"block": [block], "source": "ode", "n": np.nan, "rho": 0.3, "density": np.nan,
                                  "samples": 1, "blowup_fraction": 0.0}))  # fmt: skip
    return pd.concat(rows, ignore_index=True)


def convergence_rows() -> pd.DataFrame:
    """W1 and KS to the SDE, their null quantile and W1 to the ODE, per block and width (the ci run's scale)."""
    n = np.array([4, 8, 16, 32, 64, 128, 256])
    blocks = []
    for block, slope in (("attention", 0.9), ("both", 0.5)):
        w1 = 0.3 * n**-slope
        blocks.append(pd.DataFrame({"block": block, "n": n, "w1": w1, "ks": 1.3 * w1, "w1_null_q95": 0.02,
                                    "w1_ode": 0.55, "w1_slope": -slope}))  # fmt: skip
    return pd.concat(blocks, ignore_index=True)


def collapse_rows() -> pd.DataFrame:
    """Mean correlation against t = layer / n: standard rising to 1, shaped and its SDE staying near 0.3."""
    t = np.linspace(0, 1, 17)
    curves = {"finite standard (n = 32)": ("finite", "standard", 1 - 0.7 * np.exp(-20 * t)),
              "finite shaped (n = 32)": ("finite", "shaped", 0.3 - 0.03 * t),
              "SDE (shaped)": ("sde", "shaped", 0.3 + 0.01 * t)}  # fmt: skip
    return pd.concat(
        pd.DataFrame({"source": s, "attention": a, "n": 32, "t": t, "mean_rho": rho, "sem_rho": 0.02, "curve": c})
        for c, (s, a, rho) in curves.items()
    )


def glue_rows() -> pd.DataFrame:
    """Three GLUE panels (CoLA MCC and F1, RTE accuracy), standard and shaped, three seeds each."""
    rows = []
    for task, metric, chance, base in (
        ("cola", "mcc", 0.0, 0.1),
        ("cola", "f1", np.nan, 0.7),
        ("rte", "accuracy", 0.5, 0.55),
    ):
        for attention, gain in (("standard", 0.0), ("shaped", 0.03)):
            values = base + gain + np.array([-0.01, 0.0, 0.012])
            rows.append({
                "task": task, "metric": metric, "attention": attention, "primary": metric != "f1", "seeds": 3,
                "mean": values.mean(), "sd": values.std(ddof=1), "low": values.mean() - 0.03,
                "high": values.mean() + 0.03, "chance": chance, "values": " ".join(f"{v:.6g}" for v in values),
            })  # fmt: skip
    return pd.DataFrame(rows)


def sensitivity_rows() -> pd.DataFrame:
    """The default's sensitivity block drawn: four literal pairs in five sources, heads training the reference's own
    runs at two of them, and a pair of one seed a shape (no interval)."""
    rows = []
    sources = ("reference", "tokens", "vocab257", "vocab4096", "heads")
    for k, source in enumerate(sources):
        for i, (n, shallow, deep) in enumerate([(600, 1, 2), (2000, 1, 2), (6600, 1, 2), (6600, 2, 3)]):
            gain = -2.0 + 0.6 * k - 0.3 * i
            half = np.nan if (source, i) == ("tokens", 0) else 0.4 + 0.3 * k
            rows.append({"pair": f"{shallow} -> {deep} at N = {n:,} (literal)", "source": source, "n": float(n),
                         "experiment": "literal", "shallow": shallow, "deep": deep, "gain_pct": gain,
                         "low": gain - half, "high": gain + half, "sign": 0, "runs_shallow": 3, "runs_deep": 3,
                         "stalled": 0, "same_runs": int(source == "heads" and i < 2)})  # fmt: skip
    return pd.DataFrame(rows)


HAND_MADE = {
    "shaped_entropy": entropy_rows,
    "shaped_entropy (ci: two rates)": functools.partial(entropy_rows, rates=(0.003, 0.03), layers=2, diverged=None),
    "shaped_sde_density": density_rows,
    "shaped_sde_convergence": convergence_rows,
    "shaped_rank_collapse": collapse_rows,
    "noci_glue": glue_rows,
    "depth_sensitivity": sensitivity_rows,
}


@pytest.fixture(scope="module")
def planted_rows(tmp_path_factory) -> dict[str, pd.DataFrame]:
    """Each sweep figure's rows (its module's `data`) from the planted tables of each law in LAWS."""
    rows = {}
    for law in LAWS:
        tables = planted.write_tables(tmp_path_factory.mktemp(law), planted.LAWS[law], curves_too=True)
        for figure in SWEEP_FIGURES:
            module = common.figure_code(figure)
            rows[f"{figure} ({law})"] = module.data(**{n: tables[t] for n, t in FIGURES[figure].inputs.items()})
    return rows


def rendered(figure: str, rows: pd.DataFrame):
    """The figure `common.render` draws from `rows`, caught where it would be saved (no file written)."""
    module = common.figure_code(figure)
    rows = rows.reindex(columns=list(dict.fromkeys([*module.COLUMNS, *rows.columns])))  # hand-made: the rest nan
    caught = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "data", functools.wraps(module.data)(lambda **_: rows))
        patch.setattr(common, "save_figure", lambda fig, *_: caught.setdefault("fig", fig))
        names = inspect.signature(module.data).parameters
        common.render(figure, {name: "unread" for name in names}, "unsaved.png", title=FIGURES[figure].title)
    fig = caught["fig"]
    fig.canvas.draw()
    return fig


CASES = [f"{figure} ({law})" for law in LAWS for figure in SWEEP_FIGURES] + list(HAND_MADE)


@pytest.fixture(scope="module", params=CASES)
def drawn(request, planted_rows):
    case = request.param
    rows = planted_rows[case] if case in planted_rows else HAND_MADE[case]()
    fig = rendered(case.split(" ")[0], rows)
    yield case, fig
    matplotlib.pyplot.close(fig)


def shown_ticks(axis) -> list:
    """The tick labels (Text) an axis draws: of its major and minor ticks inside its view, visible and not empty."""
    low, high = sorted(axis.get_view_interval())
    shown = []
    for locs, ticks in (
        (axis.get_majorticklocs(), axis.get_major_ticks),
        (axis.get_minorticklocs(), axis.get_minor_ticks),
    ):
        for loc, tick in zip(locs, ticks(len(locs))):
            if low - 1e-9 * abs(low) <= loc <= high + 1e-9 * abs(high):
                shown += [
                    label for label in (tick.label1, tick.label2) if label.get_visible() and label.get_text().strip()
                ]
    return shown


def drawn_texts(fig) -> list:
    """Every text the figure draws: its title, each panel's title, axis labels, notes and the tick labels inside its
    view, and each legend's title and entries."""
    texts = list(fig.texts)
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    for legend in legends:
        texts += [legend.get_title(), *legend.get_texts()]
    for ax in fig.axes:
        texts += [*ax.texts, ax.title]
        if ax.axison:
            texts += [ax.xaxis.label, ax.yaxis.label, *shown_ticks(ax.xaxis), *shown_ticks(ax.yaxis)]
            texts += [ax.xaxis.get_offset_text(), ax.yaxis.get_offset_text()]
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def test_every_log_axis_labels_three_ticks(drawn):
    """A log axis with one label ("1e5") gives no scale: every log axis shows >= 3, but one whose labels a shared
    neighbour carries (a grid's inner column)."""
    case, fig = drawn
    for ax in fig.axes:
        for axis, shared in ((ax.xaxis, ax.get_shared_x_axes()), (ax.yaxis, ax.get_shared_y_axes())):
            if not ax.axison or axis.get_scale() != "log":
                continue
            labels = [label.get_text() for label in shown_ticks(axis)]
            hidden_by_sharing = not labels and len(shared.get_siblings(ax)) > 1
            assert hidden_by_sharing or len(labels) >= 3, f"{case}: {axis.axis_name} axis labels {labels}"


def data_points(ax, step: float = 3.0) -> np.ndarray:
    """The display points (pixels) of what `ax` plots in data coordinates, inside its frame: the vertices of its
    lines, markers and collections (error bars, bands), and points every `step` pixels along each segment between
    them. Reference lines across the axes (axhline, axvline) and spans are left out: they are not data points."""
    paths = []
    for line in ax.lines:
        if line.get_visible() and line.get_transform() == ax.transData:
            paths.append(ax.transData.transform(np.asarray(line.get_xydata(), dtype=float)))
    for collection in ax.collections:
        if not collection.get_visible():
            continue
        offsets = np.asarray(collection.get_offsets(), dtype=float)
        if offsets.size and collection.get_offset_transform() == ax.transData:
            paths.extend(ax.transData.transform(offsets)[:, None, :])
        if collection.get_transform() == ax.transData:
            paths.extend(ax.transData.transform(path.vertices) for path in collection.get_paths())
    points = [np.empty((0, 2))]
    for path in paths:
        path = path[np.all(np.isfinite(path), axis=1)]
        points.append(path)
        for a, b in zip(path, path[1:]):
            points.append(a + np.linspace(0, 1, int(np.hypot(*(b - a)) // step) + 2)[:, None] * (b - a))
    points = np.concatenate(points)
    return points[[ax.bbox.contains(x, y) for x, y in points]] if len(points) else points


def test_no_legend_lies_over_data(drawn):
    """A legend over the points hides them: no legend (of a panel or of the figure) covers a data point of any
    panel."""
    case, fig = drawn
    renderer = fig.canvas.get_renderer()
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            points = data_points(ax)
            covered = (
                (points[:, 0] > box.x0) & (points[:, 0] < box.x1) & (points[:, 1] > box.y0) & (points[:, 1] < box.y1)
            )
            title = ax.get_title().splitlines()[0] if ax.get_title() else "a panel"
            assert not covered.any(), f"{case}: a legend covers {covered.sum()} data points of {title!r}"


def test_every_figure_fits_a_page_and_is_no_strip(drawn):
    """Shown 900 px wide, a figure wider than PAGE_WIDTH inches (at 150 dpi) shrinks its text below reading size,
    and a strip of panels shrinks it further: the saved extent (the tight box `save_figure` writes) is at most a page
    wide and at most MAX_ASPECT times as wide as high."""
    case, fig = drawn
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    assert box.width <= common.PAGE_WIDTH + 0.1, f"{case}: {box.width:.1f} in wide"
    assert box.width / box.height <= MAX_ASPECT, f"{case}: {box.width:.1f} x {box.height:.1f} in"


def test_no_text_is_smaller_than_the_house_small_size(drawn):
    """Legends at 7 points, shown at two thirds of their size, are 10 px letters: nothing drawn is smaller than
    common.SMALL points."""
    case, fig = drawn
    texts = drawn_texts(fig)
    small = sorted({(t.get_fontsize(), t.get_text()[:30]) for t in texts if t.get_fontsize() < common.SMALL})
    assert not small, f"{case}: text under {common.SMALL} pt: {small[:5]}"


def test_the_entropy_figure_is_a_grid():
    """The five-panel strip of issue 54 (four rates and the loss panel in a row) is a grid of two rows, the loss
    panel still the last panel."""
    fig = rendered("shaped_entropy", entropy_rows())
    panels = [ax for ax in fig.axes if ax.axison]
    rows = {round(ax.get_position().y0, 3) for ax in panels}
    assert len(panels) == 5 and len(rows) == 2
    assert fig.axes[-1].get_xlabel() == "peak learning rate"
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize(("low", "high", "base"), [(2.3e4, 2.1e5, 10), (3.1e11, 2.6e12, 10), (3.5, 5.1, 10),
                                                   (2.07, 2.67, 10), (0.02, 0.4, 10), (0.7, 100, 2), (15, 34, 2),
                                                   (1e-3, 1e6, 10)])  # fmt: skip
def test_log_ticks_label_three_to_seven_plain_values_inside_the_range(low, high, base):
    """`common.log_ticks`, the locator behind every log axis: 3 to MOST_TICKS ticks, all inside the range, each
    label a plain number ("3e4", "0.05", "2.2")."""
    ticks = common.log_ticks(low, high, base)
    assert common.LEAST_TICKS <= len(ticks) <= common.MOST_TICKS
    assert all(low <= t <= high for t in ticks) and ticks == sorted(ticks)
    labels = [common._plain_tick(t) for t in ticks]
    assert all(len(label) <= 5 for label in labels), labels


def test_no_two_texts_overlap(drawn):
    """Titles run into each other, tick labels touch: no two texts drawn (labels, titles, ticks, legend entries)
    overlap by more than a pixel."""
    case, fig = drawn
    renderer = fig.canvas.get_renderer()
    texts = drawn_texts(fig)
    boxes = [(t.get_text()[:30], t.get_window_extent(renderer).expanded(1, 1).padded(-1)) for t in texts]
    clashes = [(a, b) for i, (a, box) in enumerate(boxes) for b, other in boxes[i + 1 :] if box.overlaps(other)]
    assert not clashes, f"{case}: {clashes[:3]}"
