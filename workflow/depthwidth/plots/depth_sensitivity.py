"""What the depth comparisons survive: each pair of the sensitivity block, the deeper model's gain in bits per byte
as the rows' own runs give it (`reference`) and under each confound of tiny models alone (more tokens, another
vocabulary, smaller heads), with its interval (claims/sensitivity.py; docs/science.md 5.8).

Bits per byte, not nats per token: vocabularies of one text cut it into different tokens, so only a loss per byte
compares across them. The intervals are drawn at the figure's level from each pair's 100 ln(L_deep / L_shallow),
standard error and dof (sensitivity.csv keeps them), so they are the claims' at any look. A confound that trains the
reference's own runs for a pair (heads no divisor of a width comes nearer than its own) tests nothing there: it is
left out of the plot, and its row says so (`same_runs`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from depthwidth import fits
from depthwidth.columns import SENSITIVITY_REFERENCE as REFERENCE

COLUMNS = [
    "pair", "source", "experiment", "n", "shallow", "deep", "gain_pct", "low", "high", "sign", "runs_shallow",
    "runs_deep", "stalled", "same_runs",
]  # fmt: skip


def pair_label(experiment: str, n: float, shallow: int, deep: int) -> str:
    """`1 -> 2 at N = 6,600 (literal)`."""
    return f"{shallow} -> {deep} at N = {n:,.0f} ({experiment})"


def data(sensitivity: Path) -> pd.DataFrame:
    """sensitivity.csv's rows, a pair label each, their intervals and signs at the current level."""
    frame = pd.read_csv(sensitivity)
    rows = []
    for r in frame.itertuples():
        bounds = fits.ratio_gain_interval(r.log_ratio, r.se, r.dof)
        rows.append({
            "pair": pair_label(r.experiment, r.n, r.shallow, r.deep), "source": r.source, "experiment": r.experiment,
            "n": r.n, "shallow": r.shallow, "deep": r.deep, "gain_pct": r.gain_pct, **bounds,
            "runs_shallow": r.runs_shallow, "runs_deep": r.runs_deep, "stalled": r.stalled, "same_runs": r.same_runs,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    from depthwidth.plots.common import legend_outside

    pairs = list(dict.fromkeys(frame["pair"]))
    sources = list(dict.fromkeys(frame["source"]))
    colors = dict(zip(sources, sns.color_palette("colorblind", len(sources))))
    fig, ax = plt.subplots(figsize=(6.5, 0.9 + 0.55 * len(pairs) * max(1, len(sources)) / 2.5))
    step = 0.8 / max(1, len(sources))
    for k, source in enumerate(sources):
        mine = frame[(frame["source"] == source) & (frame["same_runs"] == 0)]
        y = [pairs.index(p) - 0.4 + step * (k + 0.5) for p in mine["pair"]]
        err = [mine["gain_pct"] - mine["low"], mine["high"] - mine["gain_pct"]]
        label = "as trained (the rows' runs)" if source == REFERENCE else source
        ax.errorbar(mine["gain_pct"], y, xerr=err, fmt="o", ms=4, capsize=2, color=colors[source], label=label)
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_yticks(range(len(pairs)), pairs)
    ax.invert_yaxis()
    ax.set_xlabel(f"deeper model's gain in bits per byte, % ({100 * fits.level():g}% interval; > 0: depth wins)")
    legend_outside(ax, "below")
    return fig
