"""Levine: log(width where the deeper of two depths starts to win) vs depth.

Per depth, log loss is fitted against log N; two depths cross where their lines meet. Theory:
the crossover width grows exponentially with depth, log d ~ L log 3 at the threshold; Levine's
fitted optimum grows like 0.0555 L.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from depthwidth import fits, shapes
from depthwidth.plots.sweep_common import depth_lines, n_range, read_table

REFERENCE_SLOPES = {"log 3 per layer (threshold)": math.log(3), "0.0555 per layer (fitted optimum)": 0.0555}


# the columns draw() and the claims read; the figure's CSV must have them
COLUMNS = [
    "shallow",
    "deep",
    "consecutive",
    "width_cross",
    "log_width_cross",
    "in_range",
    "used_in_fit",
    "slope",
    "intercept",
    "slope_ci_low",
    "slope_ci_high",
]


def data(inputs):
    (grid,) = inputs
    runs = read_table(grid)
    lines = depth_lines(runs)
    spans = n_range(runs)
    ff_ratio = float(runs["ff_ratio"].iloc[0])  # one ratio for the whole grid
    rows = []
    for shallow, deep in itertools.combinations(sorted(lines), 2):
        log_n = fits.crossover_log_n(lines[shallow], lines[deep])
        if log_n is None or abs(log_n) > 700:  # never, or at an N no float can hold
            continue
        n = math.exp(log_n)
        lo, hi = (
            max(spans.loc[shallow, "min"], spans.loc[deep, "min"]),
            min(spans.loc[shallow, "max"], spans.loc[deep, "max"]),
        )
        rows.append(
            {
                "shallow": shallow,
                "deep": deep,
                "consecutive": deep == _next(sorted(lines), shallow),
                "n_cross": n,
                "width_cross": shapes.width_for_n(n, deep, ff_ratio),
                "in_range": lo <= n <= hi,
            }
        )
    frame = pd.DataFrame(rows, columns=["shallow", "deep", "consecutive", "n_cross", "width_cross", "in_range"])
    frame["log_width_cross"] = np.log(frame["width_cross"])
    # only crossovers between neighbouring depths that happen inside the N both have trained
    used = frame[frame["consecutive"] & frame["in_range"]]
    frame["used_in_fit"] = frame.index.isin(used.index)
    if len(used) >= 2:
        line = fits.fit_line(used["deep"], used["log_width_cross"])
        frame["slope"], frame["intercept"] = line.slope, line.intercept
        frame["slope_ci_low"], frame["slope_ci_high"] = line.slope_ci95
    else:
        frame["slope"] = frame["intercept"] = frame["slope_ci_low"] = frame["slope_ci_high"] = np.nan
    return frame


def _next(depths: list[int], depth: int) -> int | None:
    later = [d for d in depths if d > depth]
    return later[0] if later else None


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for used, style in (
        (False, dict(color="0.7", s=14, label="other pairs, or outside the trained N")),
        (True, dict(color="k", s=30, label="consecutive depths, in range (fitted)")),
    ):
        pairs = frame[frame["used_in_fit"] == used]
        ax.scatter(pairs["deep"], pairs["log_width_cross"], **style)
    if len(frame) and np.isfinite(frame["slope"].iloc[0]):
        x = np.array([frame["deep"].min(), frame["deep"].max()])
        slope, intercept = frame["slope"].iloc[0], frame["intercept"].iloc[0]
        ax.plot(x, intercept + slope * x, color="C0", label=f"fit: slope {slope:.3f} per layer")
        center_x, center_y = x.mean(), intercept + slope * x.mean()
        for (name, ref), color in zip(REFERENCE_SLOPES.items(), ("C3", "C2")):
            ax.plot(x, center_y + ref * (x - center_x), ls="--", color=color, label=name)
    ax.set(xlabel="depth of the deeper model", ylabel="log(width at crossover)")
    ax.legend(fontsize=8)
    return fig
