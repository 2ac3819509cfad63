"""Shared by the sweep figures: reading sweep tables, the L(N) baseline fit, per-depth fits, seed noise.

Seed noise is in percent of the loss (the sd of 100 ln L over a shape's seeds). A figure states it as the pooled
within-shape sd (`fits.pooled_sd`) with sum(seeds - 1) degrees of freedom, and its intervals and bootstraps give
each shape its moderated sd (`fits.moderated_variances`: its own variance shrunk toward a prior fitted to all the
figure's shapes, so one stalled seed widens its own shape's interval, not every shape's). With one seed per shape
it is nan with 0 degrees of freedom, and every interval built on it is nan.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from depthwidth import fits, shapes, tilt
from depthwidth.columns import SWEEP_COLUMNS
from depthwidth.contracts import FINISHED

# A sweep figure's seed noise (`Noise`), the columns every figure that bootstraps over seeds writes and the claims
# read: the pooled sd (%) and its dof, the moderated variances' prior sd (%) and its prior dof (inf: one sd for every
# shape)
NOISE_COLUMNS = ("noise_sd_pct", "noise_dof", "noise_prior_sd_pct", "noise_prior_dof")
# each shape's moderated sd (%) and its dof, on each of its rows, where a figure keeps a row per run (`with_seed_stats`)
SHAPE_NOISE_COLUMNS = ("noise_shape_sd_pct", "noise_shape_dof")

# the columns every Kaplan Fig. 5 panel writes after its knob (the claims read them)
INCREASE_COLUMNS = [
    "n_layer", "d_model", "seed", "status", "final_val_loss", "loss_fit", "increase_pct", "increase_pct_mean",
    "increase_pct_sd", "increase_pct_ci_low", "increase_pct_ci_high", "seeds", *NOISE_COLUMNS, *SHAPE_NOISE_COLUMNS,
    "baseline_rms_pct",
]  # fmt: skip


# The three counts a depth comparison can hold fixed, each with its sweep-table column: the papers'
# non-embedding N (Kaplan, Levine), every parameter (the embeddings are 1152 d here: 1.5 N at L1 d64, 0.5 N
# at L8 d22), and the matmul FLOPs of training (the LM head and the attention scores included)
COUNTS = {"non-embedding N": "n_nonembedding", "total parameters": "n_total", "training FLOPs": "train_flops"}
PAPERS_COUNT = "non-embedding N"
COMPARED = "n_compared"  # a figure's column: each run's (or shape's) value of the count it holds fixed


def compared(runs: pd.DataFrame, count: str) -> pd.DataFrame:
    """The runs with `n_compared`, their value of `count` (a key of COUNTS, as a float): the count a figure's
    arithmetic at fixed N holds fixed. Every other column keeps what it holds (`n_nonembedding` stays N)."""
    return runs.assign(**{COMPARED: runs[COUNTS[count]].astype(float)})


def targets(runs: pd.DataFrame, count: str) -> np.ndarray:
    """The design's target values of `count`: its target non-embedding N (`n_target`) at the papers' count; none
    at another, where the design set no targets (the figures compare at trained values instead)."""
    if count != PAPERS_COUNT or "n_target" not in runs:
        return np.array([])
    return runs["n_target"].dropna().unique().astype(float)


def at_each_count(runs: pd.DataFrame, rows_at, columns: list[str]) -> pd.DataFrame:
    """A figure's rows at each count in turn (`rows_at(runs, count)`, a frame of `columns` but `count`), stacked
    with their `count`; counts with no rows are left out."""
    frames = [rows_at(runs, count).assign(count=count) for count in COUNTS]
    frames = [frame for frame in frames if len(frame)]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def along(x: np.ndarray, y: np.ndarray, at):
    """y at `at` on the broken line through the points (x, y), x increasing, at least two: straight between
    neighbouring points, and beyond the first or the last point along the first or the last segment (never held
    at an end)."""
    at = np.asarray(at, dtype=float)
    with np.errstate(invalid="ignore"):  # a nan `at` is nan on every branch
        first = y[0] + (y[1] - y[0]) * (at - x[0]) / (x[1] - x[0])
        last = y[-2] + (y[-1] - y[-2]) * (at - x[-2]) / (x[-1] - x[-2])
    return np.where(at < x[0], first, np.where(at > x[-1], last, np.interp(at, x, y)))


def sorted_shapes(means: pd.DataFrame) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per depth: its shapes' rows of `means` in order of the compared count, and their ln(count). What `read_at`
    reads on every bootstrap redraw, worked out once."""
    layers, count = means["n_layer"].to_numpy(), means[COMPARED].to_numpy()
    out = {}
    for depth in np.unique(layers):
        idx = np.flatnonzero(layers == depth)
        order = idx[np.argsort(count[idx])]
        out[int(depth)] = order, np.log(count[order])
    return out


def read_at(means, values: np.ndarray, ns: np.ndarray, depths: list[int]) -> np.ndarray:
    """Each depth's per-shape `values` (one per row of `means`, e.g. ln loss) at each compared count in `ns`
    (rows: ns; columns: depths): straight in ln(count) between its trained shapes (`along`). `means`: the shape
    means, or their `sorted_shapes` (a bootstrap's loop passes that)."""
    shapes_of = sorted_shapes(means) if isinstance(means, pd.DataFrame) else means
    out = np.empty((len(ns), len(depths)))
    log_ns = np.log(ns)
    for j, depth in enumerate(depths):
        order, log_count = shapes_of[depth]
        out[:, j] = along(log_count, values[order], log_ns)
    return out


@dataclass(frozen=True)
class Conversion:
    """Between the compared count and the papers' non-embedding N, per depth, and so a depth's width at a value
    of the compared count: the one conversion every Levine figure reads widths and N through.

    At the papers' count the two counts are one. At another, a depth's ln N is read off its trained shapes against
    ln(count) (`along`): straight between neighbouring shapes and, beyond its least and its greatest, along the
    end segment (a crossover or a threshold may lie outside the trained range; no value is held at an end).
    A width is always the real width whose non-embedding N that is (`shapes.width_for_n`).
    """

    count: str  # a key of COUNTS
    ff_ratio: float  # d_ff / d_model of the shapes
    trained: dict[int, tuple[np.ndarray, np.ndarray]]  # depth -> ln count, ln N of its shapes (at another count)

    def log_n_papers(self, depth: int, n) -> np.ndarray:
        """ln(non-embedding N) of the model of `depth` whose compared count is `n`."""
        if self.count == PAPERS_COUNT:
            return np.log(np.asarray(n, dtype=float))
        log_count, log_n = self.trained[depth]
        return along(log_count, log_n, np.log(n))

    def n_papers(self, depth: int, n) -> np.ndarray:
        """Non-embedding N of the model of `depth` whose compared count is `n` (`n` itself at the papers' count)."""
        if self.count == PAPERS_COUNT:
            return np.asarray(n, dtype=float)
        with np.errstate(over="ignore"):  # beyond any float: inf
            return np.exp(self.log_n_papers(depth, n))

    def n_compared(self, depth: int, n_papers) -> np.ndarray:
        """The compared count of the model of `depth` whose non-embedding N is `n_papers`."""
        if self.count == PAPERS_COUNT:
            return np.asarray(n_papers, dtype=float)
        log_count, log_n = self.trained[depth]
        with np.errstate(over="ignore"):
            return np.exp(along(log_n, log_count, np.log(n_papers)))

    def width(self, depth: int, n: float) -> float:
        """The width of the model of `depth` whose compared count is `n`; nan where no finite width has it."""
        n_papers = float(self.n_papers(depth, n))
        width = shapes.width_for_n(n_papers, depth, self.ff_ratio) if math.isfinite(n_papers) else math.nan
        return width if math.isfinite(width) and width > 0 else math.nan


def conversion(means: pd.DataFrame, count: str, ff_ratio: float) -> Conversion:
    """The Conversion at `count` (a key of COUNTS) from shape means (`shape_means`): at another count than the
    papers', each depth with two trained values of it reads N off its shapes."""
    trained = {}
    if count != PAPERS_COUNT:
        for depth, by_depth in means.sort_values(COMPARED).groupby("n_layer"):
            if by_depth[COMPARED].nunique() >= 2:
                columns = (by_depth[c].to_numpy(float) for c in (COMPARED, "n_nonembedding"))
                trained[int(depth)] = tuple(np.log(values) for values in columns)
    return Conversion(count, ff_ratio, trained)


def threshold_n(depth: int, ff_ratio: float) -> float:
    """Non-embedding N at which a model of depth `depth` has width 3^depth: Levine's threshold read literally,
    where the deeper of depths `depth` - 1 and `depth` starts to win (d_ff = ff_ratio d, not rounded)."""
    width = fits.levine_threshold_width(depth)
    return float(shapes.nonembedding(depth, width, ff_ratio * width))


def crossover_ns(shallow: int, deep: int, convert: Conversion) -> tuple[float, float]:
    """Where the deeper of two depths starts to win, in the compared count of `convert`: by the threshold read
    literally (the deeper model at width 3^L: `threshold_n`) and by Levine's fitted optimum (L* at the pair's
    midpoint: `fits.levine_fitted_crossover_n`)."""
    literal = threshold_n(deep, convert.ff_ratio)
    fitted = fits.levine_fitted_crossover_n(shallow, deep)
    return float(convert.n_compared(deep, literal)), float(convert.n_compared(deep, fitted))


NO_LINES = "no two depths with two trained N each"  # what a design of one N leaves the crossover figures


def say_nothing_to_draw(ax, text: str) -> None:
    """An empty panel that says why (a degenerate design: the claims read the same empty rows as inconclusive)."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.3")
    ax.set(xticks=[], yticks=[])


def read_table(path: Path) -> pd.DataFrame:
    """A sweep table (results/<config>/tables/sweep_<experiment>.csv); ValueError naming the file where it lacks a
    column of one (`read_columns`)."""
    return read_columns(path, SWEEP_COLUMNS, "a sweep table")


def read_columns(path: Path, columns, what: str) -> pd.DataFrame:
    """The table at `path`, which must have `columns` (it is `what`, "a sweep table"); ValueError naming the file
    and the columns it lacks (the readers' KeyError named neither), or that it is empty."""
    try:
        table = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: empty, not {what}") from None
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise ValueError(f"{path}: not {what}: no column {', '.join(missing)}")
    return table


def finished(frame: pd.DataFrame) -> pd.Series:
    """Which rows of a table of runs (a status and a final loss each) finished with a finite loss: the one test of
    a finished run wherever a loss is read."""
    return (frame["status"] == FINISHED) & np.isfinite(pd.to_numeric(frame["final_val_loss"], errors="coerce"))


def ok(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs that finished with a finite loss; diverged runs are reported, never fitted."""
    return frame[finished(frame)]


def baseline_law(baseline: pd.DataFrame, count: str = PAPERS_COUNT) -> fits.PowerLaw:
    """L fitted as a power law of `count` (a key of COUNTS) on the fixed-aspect-ratio family, 1-layer models
    excluded as in Kaplan."""
    runs = ok(baseline)
    runs = runs[runs["n_layer"] > 1] if (runs["n_layer"] > 1).sum() >= 2 else runs
    return fits.fit_power_law(runs[COUNTS[count]], runs["final_val_loss"])


SHAPE = ["n_layer", "d_model", "n_head", "d_ff"]  # a run's shape; its seeds repeat it


def seed_noise_pct(runs: pd.DataFrame, keys: list[str] = SHAPE) -> tuple[float, int]:
    """Pooled seed sd of 100 ln(final loss) over the finished runs of each shape (%), and its dof."""
    finished = ok(runs)
    return fits.pooled_sd(100 * np.log(g["final_val_loss"]) for _, g in finished.groupby(keys))


def with_seed_stats(rows: pd.DataFrame, value: str, keys: list[str] = SHAPE) -> pd.DataFrame:
    """Add, per shape, the seed mean of `value` and its t-interval at `fits.level()` (95% by default) at the shape's
    moderated seed sd and dof (`noise_model`: its own sd shrunk toward the prior of all the figure's shapes).

    Columns added: `<value>_mean`, `<value>_sd` (the shape's own), `<value>_ci_low`, `<value>_ci_high`,
    `seeds` (finished seeds of the shape), NOISE_COLUMNS (the figure's) and SHAPE_NOISE_COLUMNS (the shape's
    moderated sd of 100 ln L and its dof). `value` must be in percent of the loss (as 100 ln L is).
    """
    rows = rows.copy()
    noise = noise_model(rows, keys)
    finished = ok(rows).assign(_log_loss_pct=lambda f: 100 * np.log(f["final_val_loss"]))
    stats = finished.groupby(keys).agg(
        mean=(value, "mean"), seeds=(value, "count"), sd=(value, "std"), own_pct=("_log_loss_pct", "std")
    )
    stats = stats.reset_index().rename(columns={"mean": f"{value}_mean", "sd": f"{value}_sd"})
    shape_sd, shape_dof = noise.of_shapes(stats.pop("own_pct"), stats["seeds"])
    half = [fits.t_quantile(d) * s if d else np.nan for s, d in zip(shape_sd, shape_dof)] / np.sqrt(stats["seeds"])
    stats[f"{value}_ci_low"] = stats[f"{value}_mean"] - half
    stats[f"{value}_ci_high"] = stats[f"{value}_mean"] + half
    stats["noise_shape_sd_pct"], stats["noise_shape_dof"] = shape_sd, shape_dof
    rows = rows.merge(stats, on=keys, how="left")
    rows["seeds"] = rows["seeds"].fillna(0).astype(int)
    return rows.assign(**noise.columns())


def loss_increase(experiment: pd.DataFrame, baseline: pd.DataFrame, count: str = PAPERS_COUNT) -> pd.DataFrame:
    """The experiment's runs with the baseline's fit L(count) at their own `count` (a key of COUNTS), the loss
    increase over it in percent, and seed statistics (the runs grouped by their target N, `n_target`).

    Also `baseline_rms_pct`: the rms residual (%) of the baseline runs around the fit, a stand-in
    for the noise when one seed leaves the seed noise unmeasured (it also holds any lack of fit).
    """
    law, column = baseline_law(baseline, count), COUNTS[count]
    rows = experiment.copy()
    rows["loss_fit"] = law(rows[column])
    rows["increase_pct"] = fits.loss_increase_percent(rows["final_val_loss"], rows[column], law)
    rows["alpha"] = law.alpha
    base = ok(baseline)
    rows["baseline_rms_pct"] = 100 * float(
        np.sqrt(np.mean((np.log(base["final_val_loss"]) - np.log(law(base[column]))) ** 2))
    )
    return with_seed_stats(rows, "increase_pct", keys=["n_target", *SHAPE])


def loss_increase_at_each_count(experiment: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """`loss_increase` at each count (a key of COUNTS) in turn, stacked with its `count`: each run's increase over
    the baseline's power law in that count, at the run's own count. The runs stay grouped by their target
    non-embedding N (`n_target`): at another count a group's shapes differ in count, and the fit takes it out."""
    frames = [loss_increase(experiment, baseline, count).assign(count=count) for count in COUNTS]
    return pd.concat(frames, ignore_index=True)


def compared_depths(means: pd.DataFrame) -> list[int]:
    """The depths with two trained values of the compared count (a line each), sorted."""
    return sorted(int(d) for d, g in means.groupby("n_layer") if g[COMPARED].nunique() >= 2)


def shared_range(trained: pd.DataFrame, depths) -> tuple[float, float]:
    """The range of the compared count that every one of `depths` was trained over, from `trained` (shape means,
    or finished runs: `n_layer` and `n_compared`); empty (low > high) where they share none, (1, 0) under two."""
    if len(depths) < 2:
        return 1.0, 0.0
    span = trained[trained["n_layer"].isin(depths)].groupby("n_layer")[COMPARED].agg(["min", "max"])
    return span["min"].max(), span["max"].min()


def pair_ns(
    means: pd.DataFrame, targets: dict[int, np.ndarray], shallow: int, deep: int, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where two depths are compared, over their own range of the compared count (`shared_range` of the two, never
    one shared with other depths: a depth trained over a narrower range would move the pair's comparisons), and
    what each comparison stands for (its key): the design targets both were trained at (`targets`, per depth),
    each moved into that range (a shape's N misses its target by a few percent), the target its key; with none
    shared (another count, where there are no targets), `values` inside that range, each its own key. None where
    the two share no range."""
    low, high = shared_range(means, [shallow, deep])
    if not low < high:
        return np.array([]), np.array([])
    shared = np.intersect1d(targets.get(shallow, []), targets.get(deep, []))
    if len(shared):
        ns, first = np.unique(np.clip(shared, low, high), return_index=True)
        return shared[first], ns
    keys = np.unique(values[(values >= low) & (values <= high)])
    return keys, keys


def step_gains(means: pd.DataFrame, points: pd.DataFrame) -> Callable[[np.ndarray], np.ndarray]:
    """A function of the shape means' ln(loss) (the means' own, or a redraw): the deeper model's gain per added layer
    at each point (a pair `shallow` -> `deep` at the compared count `n`), 100 (1 - (L_deep / L_shallow)^(1 / (deep -
    shallow))), each depth's ln(loss) interpolated in ln(count) (`read_at`): a step of one layer and one of eight
    read on one scale (for one layer, the gain itself). The rows it reads are worked out once, not per redraw."""
    shapes_of = sorted_shapes(means)
    pairs = [
        (pair, points.index.get_indexer(idx), points.loc[idx, "n"].to_numpy())
        for pair, idx in points.groupby(["shallow", "deep"]).groups.items()
    ]

    def gains(log_loss: np.ndarray) -> np.ndarray:
        out = np.empty(len(points))
        for (shallow, deep), at, ns in pairs:
            table = read_at(shapes_of, log_loss, ns, [shallow, deep])
            out[at] = 100 * (1 - np.exp((table[:, 1] - table[:, 0]) / (deep - shallow)))
        return out

    return gains


def shape_means(grid: pd.DataFrame) -> pd.DataFrame:
    """Per grid shape (n_layer, d_model) of runs with `n_compared` (`compared`): the compared count and the
    non-embedding N, the seed mean of ln(loss) (`log_loss`), the finished `seeds`, the shape's own seed sd of
    100 ln(loss) (`sd_pct`, nan with one seed), its learning-rate excess (`excess_pct`, % of the loss: its loss
    at its scan's choice over its best; nan unscanned) and the axis whose warm-up tilt its depth takes
    (`tilt_axis`: `tilt.depth_axis`)."""
    finished = ok(grid).assign(log_loss=lambda f: np.log(f["final_val_loss"]))
    finished["excess_pct"] = finished.get("lr_excess_pct", np.nan)
    finished["tilt_axis"] = tilt.depth_axis(finished.get("experiment", "design"))
    return finished.groupby(["n_layer", "d_model"], as_index=False).agg(
        n_compared=(COMPARED, "mean"),
        log_loss=("log_loss", "mean"),
        seeds=("seed", "count"),
        sd_pct=("log_loss", lambda v: 100 * v.std(ddof=1) if len(v) >= 2 else np.nan),
        excess_pct=("excess_pct", "mean"),
        n_nonembedding=("n_nonembedding", "mean"),
        tilt_axis=("tilt_axis", "first"),
    )


def side_shifts(statistic, means: pd.DataFrame, names: tuple[str, ...]) -> dict[str, float]:
    """The learning-rate systematic of each of a figure's side statistics (`statistic(log_loss)` returns them in
    the order of `names`, in %): `<name>_sys_down` and `<name>_sys_up` (`fits.systematic_shift` over the shapes'
    excesses), and its warm-up tilt (`tilt_columns`)."""
    out = {}
    for k, name in enumerate(names):
        down, up = fits.systematic_shift(
            lambda log_loss, k=k: statistic(log_loss)[k], means["log_loss"].to_numpy(), means["excess_pct"] / 100
        )
        out[f"{name}_sys_down"], out[f"{name}_sys_up"] = down, up
        out |= tilt_columns(name, lambda log_loss, k=k: statistic(log_loss)[k], means)
    return out


def tilt_columns(name: str, statistic, means: pd.DataFrame) -> dict[str, float]:
    """`<name>_tilt_down` and `<name>_tilt_up`: the warm-up tilt of `statistic(log_loss)` over the shape means, each
    shape's ln loss moved by t ln(depth) on its `tilt_axis` (`tilt.shift`; nan where none is carried)."""
    down, up = tilt.shift(statistic, means["log_loss"].to_numpy(), np.log(means["n_layer"]), means["tilt_axis"])
    return {f"{name}_tilt_down": down, f"{name}_tilt_up": up}


def depth_rows(means: pd.DataFrame) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per depth with two or more values of the compared count: its shapes' ln(count) and their rows of `means`.
    What `lines_from_means` reads on every bootstrap redraw, worked out once."""
    out = {}
    for depth, idx in means.groupby("n_layer").groups.items():
        runs = means.loc[idx]
        if runs[COMPARED].nunique() >= 2:
            out[int(depth)] = np.log(runs[COMPARED]).to_numpy(), means.index.get_indexer(idx)
    return out


def lines_from_means(
    means: pd.DataFrame, log_loss: np.ndarray | None = None, rows: dict | None = None
) -> dict[int, fits.Line]:
    """Per depth: ln(loss) against ln(compared count) over the shape means (or over `log_loss`, a redraw of them).
    `rows`: the means' `depth_rows`, where a loop over redraws worked them out once."""
    values = means["log_loss"].to_numpy() if log_loss is None else log_loss
    rows = depth_rows(means) if rows is None else rows
    return {depth: fits.fit_line(log_count, values[at]) for depth, (log_count, at) in rows.items()}


def depth_lines(grid: pd.DataFrame) -> dict[int, fits.Line]:
    """Per depth: log(loss) against log(non-embedding N), seeds averaged, on finished runs."""
    return lines_from_means(shape_means(compared(grid, PAPERS_COUNT)))


BOOTSTRAP_DRAWS = 400


class Noise(NamedTuple):
    """The seed noise of a figure's shapes (`noise_model`): what it states, and what each shape's interval and
    bootstrap take (`of_shapes`)."""

    sd_pct: float  # pooled seed sd of 100 ln(loss), %
    dof: int  # its degrees of freedom, sum(seeds - 1): the most any shape's moderated sd has
    prior_sd_pct: float  # the moderated variances' prior sd, %: where each shape's own sd is shrunk toward
    prior_dof: float  # what the prior is worth in dof (inf: one sd for every shape; 0: no noise estimate)

    def columns(self) -> dict[str, float]:
        """The figure columns that carry it (NOISE_COLUMNS)."""
        return dict(zip(NOISE_COLUMNS, self))

    def of_shapes(self, own_sd_pct, seeds) -> tuple[np.ndarray, np.ndarray]:
        """Each shape's moderated seed sd (%) and its dof, from its own sd (nan with one seed) and its seeds
        (`fits.posterior_variances`)."""
        seeds = np.asarray(seeds, dtype=float)
        own = np.asarray(own_sd_pct, dtype=float) ** 2
        variance, dof = fits.posterior_variances(self.prior_sd_pct**2, self.prior_dof, self.dof, own, seeds - 1)
        return np.sqrt(variance), dof

    def redraws(self, means: pd.DataFrame) -> np.ndarray | None:
        """Bootstrap redraws of the shape means' ln(loss) under this noise (`redraws`)."""
        return redraws(means, self)


def redraws(means: pd.DataFrame, noise: Noise, draws: int = BOOTSTRAP_DRAWS) -> np.ndarray | None:
    """Bootstrap redraws of the shape means of ln(loss) (`shape_means`): mean + t(dof) sd / sqrt(seeds) at each
    shape's moderated sd and dof (`Noise.of_shapes`), shape (draws, shapes).

    A parametric bootstrap over seeds: resampling two seeds per shape would halve the variance of a mean on
    average, a model of the seed sd does not; Student-t draws with its degrees of freedom carry its own
    uncertainty. None without a noise estimate (dof 0). The generator is seeded: the figure's numbers are
    reproducible.
    """
    if not noise.dof or not np.isfinite(noise.sd_pct):
        return None
    seeds = means["seeds"].to_numpy(float)
    sd, dof = noise.of_shapes(means["sd_pct"], seeds)
    return fits.redraw_means(means["log_loss"], sd / 100 / np.sqrt(seeds), dof, draws)


def noise_model(runs: pd.DataFrame, keys: list[str]) -> Noise:
    """The seed noise of the finished runs' shapes (runs grouped by `keys`), of 100 ln(final loss): the pooled sd
    (%) with its dof, and the moderated variances' prior sd (%) and prior dof (`fits.moderated_variances`)."""
    finished = ok(runs)
    groups = [100 * np.log(g["final_val_loss"]) for _, g in finished.groupby(keys)]
    sd, dof = fits.pooled_sd(groups)
    moderated = fits.moderated_variances(groups)
    return Noise(sd, dof, math.sqrt(moderated.prior_var), moderated.prior_dof)


def error_bars(center, low, high, rtol: float = 1e-9) -> np.ndarray | None:
    """Error bars for matplotlib's `errorbar` from an interval [low, high] around each point: shape (2, n).

    A side that is not finite gets no bar (nan: matplotlib draws the point without it). A point outside
    its own interval (a bootstrap range of an unstable estimate can miss the estimate) gets no bar at all:
    matplotlib refuses a negative bar, and a clipped one would claim a range the interval does not hold.
    A side short of zero by rounding only (an interval equal to its point) is a bar of length zero.
    None when no point has a bar.
    """
    center, low, high = (np.asarray(v, dtype=float) for v in (center, low, high))
    bars = np.vstack([center - low, high - center])
    rounding = rtol * np.maximum(1.0, np.abs(center))
    bars = np.where((bars < 0) & (bars >= -rounding), 0.0, bars)
    bars[:, (bars < 0).any(axis=0)] = np.nan
    bars[~np.isfinite(bars)] = np.nan
    return None if np.isnan(bars).all() else bars


def holds_point(center, low, high, rtol: float = 1e-9) -> np.ndarray:
    """Whether each point lies inside its interval [low, high] (to rounding); False for a nan bound."""
    center, low, high = (np.asarray(v, dtype=float) for v in (center, low, high))
    rounding = rtol * np.maximum(1.0, np.abs(center))
    return (low <= center + rounding) & (center - rounding <= high)


def increase_legend_title(frame: pd.DataFrame) -> str:
    """The legend title of `draw_increase`'s lines: the N they are at, and the seeds behind each point."""
    runs = ok(frame)
    return f"N (non-emb.); {int(runs['seeds'].max()) if len(runs) else 0} seed(s)"


def draw_increase(frame: pd.DataFrame, knob: str, label: str, hue: str = "n_target", ax=None, legend: bool = True):
    """Loss increase (%) over the L(N) fit vs a shape knob, one line per N: seed means with error bars at
    `fits.level()`, 95% by default (on `ax`, or a figure of its own; `legend`: the lines' legend at the axes' right,
    else the caller places it).

    The error bars are the t-intervals at each shape's moderated seed sd (none with one seed: the caption says so).
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    from depthwidth.plots.common import legend_outside

    fig, ax = plt.subplots(figsize=(6.5, 4)) if ax is None else (ax.figure, ax)
    shapes = ok(frame).drop_duplicates([hue, knob, *SHAPE]).sort_values(knob)
    values = sorted(shapes[hue].unique())
    colors = dict(zip(values, sns.color_palette("viridis", len(values))))
    for value, by_n in shapes.groupby(hue):
        mean = by_n["increase_pct_mean"]
        ax.errorbar(
            by_n[knob],
            mean,
            yerr=error_bars(mean, by_n["increase_pct_ci_low"], by_n["increase_pct_ci_high"]),
            marker="o",
            capsize=3,
            color=colors[value],
            label=f"{value:.2g}",
        )
    diverged = frame[~finished(frame)]
    if len(diverged):
        ax.scatter(
            diverged[knob],
            [shapes["increase_pct_mean"].max()] * len(diverged),
            marker="x",
            color="red",
            label=f"diverged ({len(diverged)})",
        )
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(label)
    ax.set_ylabel(f"loss increase over L(N) fit (%)\nseed mean, {fits.level_text()} CI")
    if legend:
        legend_outside(ax, "right", title=increase_legend_title(frame))
    return fig
