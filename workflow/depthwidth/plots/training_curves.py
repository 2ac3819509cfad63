"""Protocol: how every run of the design trained, one panel per N: its training loss against tokens seen (binned,
tables.curves) and its evaluations, coloured by depth, a stalled run (stalls.flag) dashed.

Not a paper claim. It shows what the tables reduce to one number: whether the runs converge alike, how far the
deepest and narrowest lag early, and what a stall looks like (a run on the unigram plateau, about 6 nats here,
long after its seeds' siblings left it)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from depthwidth.plots.sweep_common import read_table

COLUMNS = ["n_target", "n_layer", "d_model", "seed", "run_id", "stalled", "kind", "tokens", "loss"]


def data(design: Path, curves: Path) -> pd.DataFrame:
    """Each design run's curve rows with its shape, N target, seed and stall flag (the design's sweep table and
    curves table by path)."""
    runs = read_table(design)[["run_id", "n_target", "n_layer", "d_model", "seed", "stalled"]]
    rows = pd.read_csv(curves).merge(runs, on="run_id", how="inner")  # a run left out of the table: of its curve too
    return rows.sort_values(["n_target", "n_layer", "seed", "kind", "tokens"], ignore_index=True)[COLUMNS]


def _tokens(value: float) -> str:
    """A token count as a tick label: 0, 500k, 1.5M."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    return f"{value / 1e3:g}k" if abs(value) >= 1e3 else f"{value:g}"


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.ticker import FuncFormatter

    from depthwidth.plots.common import legend_in, legend_outside

    targets = sorted(frame["n_target"].unique())
    depths = sorted(frame["n_layer"].unique())
    palette = dict(zip(depths, sns.color_palette("viridis", len(depths))))
    # a 2-column grid, readable at page width: one panel per N, the legend in a spare cell when there is one
    columns = min(2, len(targets))
    rows = -(-len(targets) // columns)
    fig, grid = plt.subplots(rows, columns, figsize=(9, 3.6 * rows), sharey=True, squeeze=False)
    cells = list(grid.flat)
    for ax, target in zip(cells, targets):
        panel = frame[frame["n_target"] == target]
        for (depth, _), run in panel.groupby(["n_layer", "run_id"], sort=False):
            color, stalled = palette[depth], bool(run["stalled"].iloc[0])
            train, val = run[run["kind"] == "train"], run[run["kind"] == "val"]
            style = {"lw": 1.6, "ls": "--"} if stalled else {"lw": 0.9, "ls": "-"}
            ax.plot(train["tokens"], train["loss"], color=color, **style)
            ax.plot(val["tokens"], val["loss"], color=color, ls="none", marker="o", ms=2.5)
        ax.set_title(f"N = {target:,.0f}")
        ax.set_xlabel("tokens seen")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _tokens(v)))
        ax.set_ylabel("loss (nats/token)" if ax.get_subplotspec().is_first_col() else "")
    spare = cells[len(targets) :]
    for ax in spare[1:]:
        ax.axis("off")
    owner = cells[0]  # empty lines: the legend's entries
    for depth in depths:
        owner.plot([], [], color=palette[depth], lw=2, label=f"depth {depth}")
    owner.plot([], [], color="0.3", ls="--", lw=1.6, label="stalled run")
    owner.plot([], [], color="0.3", ls="none", marker="o", ms=3, label="evaluation")
    if spare:
        legend_in(spare[0], owner, ncol=2)
    else:
        legend_outside(owner, "under", ncol=min(len(depths) + 2, 5))
    return fig
