"""`tilt`: what a protocol choice does to comparisons across depth, from two lr_check tables paired run by run.

The warm-up was chosen on shapes the rows read (docs/protocol-choices.md, "The warm-up's tilt", where this
statistic was fixed before its runs): a comparison across depth carries what another defensible choice would have
made of it. Two arms alike but for that choice (config/protocol/warmup-*.yaml) train the same shapes, rate factors
and seeds, so each pair of runs differs only by it:

- each pair's delta = 100 ln(loss in the other arm / loss in the reference arm);
- each shape's mean delta over its pairs (every pair; beside it, the mean over the pairs in which neither run is
  flagged stalled);
- the **tilt**: the least-squares slope of the shapes' mean deltas on ln(depth), over the shapes at d_ff = 4 d
  (`axis` "depth"), or on ln(d_ff / d) over the shapes at the depth of the feed-forward ratios ("ff_ratio");
- its 95% interval: Welch's t interval of the slope, a linear combination of the shapes' means, each with its own
  variance over its pairs (Satterthwaite's degrees of freedom). A percentile interval of redraws of the pairs
  covered a planted tilt only 86-91% of the time at 5-9 pairs a shape, so it was not taken (before any run).

A comparison of depth L_a with L_b > L_a then carries, on 100 ln(loss_b / loss_a), the systematic
[min(0, low), max(0, high)] x ln(L_b / L_a) (`Tilt.carried`). `pair` and `tilt` are pure (frozen records);
`python -m depthwidth tilt REFERENCE OTHER` prints them.
"""

from __future__ import annotations

import argparse
import contextvars
import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from depthwidth import fits

PAIR_KEYS = ("n_layer", "d_model", "d_ff", "lr_factor", "seed")  # one run of an lr_check table


@dataclass(frozen=True)
class ShapeDelta:
    """One shape's paired deltas (100 ln(other / reference), %), and whether each pair is clean (neither run
    flagged stalled)."""

    n_layer: int
    d_model: int
    d_ff: int
    deltas: tuple[float, ...]
    clean: tuple[bool, ...]

    @property
    def mean(self) -> float:
        return float(np.mean(self.deltas))

    @property
    def mean_clean(self) -> float:
        kept = [d for d, ok in zip(self.deltas, self.clean, strict=True) if ok]
        return float(np.mean(kept)) if kept else math.nan

    @property
    def ff_ratio(self) -> float:
        return self.d_ff / self.d_model


@dataclass(frozen=True)
class Pairing:
    shapes: tuple[ShapeDelta, ...]
    unpaired: int  # finished runs of either table without a finished partner in the other


@dataclass(frozen=True)
class Tilt:
    """The slope (% per e-fold of `axis`) with its interval [low, high], and the slope without stalled pairs."""

    axis: str
    shapes: tuple[ShapeDelta, ...]
    slope: float
    low: float
    high: float
    slope_clean: float

    @property
    def carried(self) -> tuple[float, float]:
        """(down, up) per e-fold that a comparison carries: one-sided where the interval excludes 0."""
        return one_sided_range(self.low, self.high)


def one_sided_range(low: float, high: float) -> tuple[float, float]:
    """What a comparison carries of a measured interval [low, high]: [min(0, low), max(0, high)], one-sided where the
    interval excludes 0."""
    return min(0.0, low), max(0.0, high)


# ---------------------------------------------------------------- what the rows carry
# The measured intervals a config's rows carry (config key `tilt`), set around the code that computes a figure's
# rows (`carrying`: the figure and decide jobs), as `fits.at_level` sets the level: the figures write each
# statistic's shift under it (`<name>_tilt_down`, `<name>_tilt_up`), and their rows the carried range of their
# axis (ROW_COLUMNS) where a claim reads shapes itself (a spread, an argmin).

AXES = ("design", "literal", "ff_ratio")  # depth at the design's scale, at the literal block's; ln(d_ff / d)
LITERAL = "literal"  # the sweep experiment whose shapes take the literal scale's tilt; every other the design's
ROW_COLUMNS = ("tilt_low", "tilt_high")  # a figure row's carried range (% per e-fold), nan where none is


@dataclass(frozen=True)
class Carried:
    """The tilts a config's rows carry: per axis (AXES) the measured 95% interval (% per e-fold of its lever), None
    where this protocol's was not measured. A comparison carries [min(0, low), max(0, high)] of it (`range`)."""

    design: tuple[float, float] | None = None
    literal: tuple[float, float] | None = None
    ff_ratio: tuple[float, float] | None = None

    def range(self, axis: str) -> tuple[float, float]:
        """What a statistic on `axis` carries per e-fold: (min(0, low), max(0, high)); (nan, nan) unmeasured."""
        measured = getattr(self, axis)
        return one_sided_range(*measured) if measured else (math.nan, math.nan)

    @property
    def any(self) -> bool:
        return any(getattr(self, axis) for axis in AXES)

    @classmethod
    def from_config(cls, block: dict | None) -> Carried:
        """From the config's `tilt` block (validated: each axis a [low, high] pair), or none."""
        return cls(**{axis: (float(block[axis][0]), float(block[axis][1])) for axis in AXES if axis in (block or {})})


ARGUMENT_HELP = (
    "the warm-up tilts the rows carry, as JSON: each of design, literal, ff_ratio a measured [low, high] (%% per "
    "e-fold; the config's `tilt`); default none"
)


def from_argument(text: str) -> Carried:
    """`--tilt`'s JSON, checked: an object of AXES, each a [low, high] pair of numbers with low <= high."""
    try:
        block = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON ({error})") from None
    if not isinstance(block, dict) or set(block) - set(AXES):
        raise argparse.ArgumentTypeError(f"expected an object of {', '.join(AXES)}, got {text}")
    for axis, pair in block.items():
        ok = isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, int | float) for v in pair)
        if not ok or not math.isfinite(pair[0]) or not pair[0] <= pair[1]:
            raise argparse.ArgumentTypeError(f"{axis}: expected [low, high] with low <= high, got {pair}")
    return Carried.from_config(block)


_CARRIED: contextvars.ContextVar[Carried] = contextvars.ContextVar("depthwidth_tilt", default=Carried())  # noqa: B039 (frozen)


def carried() -> Carried:
    """The tilts the rows computed now carry: none outside a `carrying` block."""
    return _CARRIED.get()


@contextmanager
def carrying(tilts: Carried) -> Iterator[Carried]:
    """Compute every figure row in the block carrying `tilts`; what was carried before is restored on leaving it."""
    token = _CARRIED.set(tilts)
    try:
        yield tilts
    finally:
        _CARRIED.reset(token)


def shift(statistic, values, lever, axis) -> tuple[float, float]:
    """(down, up) of `statistic(values)` (ln losses of shapes) under the carried tilts (`carried()`): each shape's
    ln loss moves by t lever / 100, t anywhere in its axis' range (`fits.tilt_shift`). `lever`: per shape, ln(depth)
    or ln(d_ff / d); `axis`: per shape (or one for all) the axis whose tilt it takes. An axis on which no shape has
    a lever adds nothing; (nan, nan) where one that does was not measured, or none is carried."""
    values = np.asarray(values, dtype=float)
    lever = np.broadcast_to(np.asarray(lever, dtype=float), values.shape)
    axis = np.broadcast_to(np.asarray(axis, dtype=object), values.shape)
    tilts = carried()
    if not tilts.any:
        return math.nan, math.nan
    used = [name for name in AXES if np.any((axis == name) & (lever != 0))]
    if not used:
        return 0.0, 0.0
    levers = np.stack([np.where(axis == name, lever, 0.0) for name in used], axis=1)
    return fits.tilt_shift(statistic, values, levers, [tilts.range(name) for name in used])


def depth_axis(experiments) -> np.ndarray:
    """Per shape the axis its depth tilt is read on: the literal scale's for the literal block's shapes
    (LITERAL), the design's for every other."""
    return np.where(np.asarray(experiments, dtype=object) == LITERAL, "literal", "design")


def row_range(axis: str) -> dict[str, float]:
    """A figure row's ROW_COLUMNS: the range its axis carries (nan: none)."""
    return dict(zip(ROW_COLUMNS, carried().range(axis)))


def range_of_rows(rows) -> tuple[float, float]:
    """The range a figure's rows carry (`row_range`, read back from their first row); (nan, nan) where they carry
    none: no rows, or a figure made without the columns."""
    if len(rows) == 0 or not set(ROW_COLUMNS) <= set(rows.columns):
        return math.nan, math.nan
    return tuple(float(rows[column].iloc[0]) for column in ROW_COLUMNS)


def _key(row: dict) -> tuple:
    return tuple(float(row[k]) for k in PAIR_KEYS)


def _finished(rows: Sequence[dict]) -> dict[tuple, dict]:
    out = {}
    for row in rows:
        if row["status"] == "ok" and math.isfinite(float(row["final_val_loss"])):
            key = _key(row)
            if key in out:
                where = dict(zip(PAIR_KEYS, key, strict=True))
                raise ValueError(f"two runs of one shape, rate factor and seed in one table: {where}")
            out[key] = row
    return out


def _stalled(row: dict) -> bool:
    return str(row.get("stalled", "False")) == "True"


def pair(reference: Sequence[dict], other: Sequence[dict]) -> Pairing:
    """Pair two lr_check tables' finished runs by shape, rate factor and seed (PAIR_KEYS)."""
    ref, oth = _finished(reference), _finished(other)
    common = sorted(ref.keys() & oth.keys())
    by_shape: dict[tuple[int, int, int], list[tuple[float, bool]]] = {}
    for key in common:
        a, b = ref[key], oth[key]
        delta = 100 * math.log(float(b["final_val_loss"]) / float(a["final_val_loss"]))
        by_shape.setdefault((int(key[0]), int(key[1]), int(key[2])), []).append(
            (delta, not (_stalled(a) or _stalled(b)))
        )
    shapes = tuple(
        ShapeDelta(*shape, tuple(d for d, _ in pairs), tuple(c for _, c in pairs))
        for shape, pairs in sorted(by_shape.items())
    )
    return Pairing(shapes, len(ref) + len(oth) - 2 * len(common))


def _weights(x: np.ndarray) -> np.ndarray:
    """The least-squares slope on x as a linear combination of the values: sum(w * y)."""
    xc = x - x.mean()
    return xc / (xc**2).sum()


def depth_ratio(shapes: Sequence[ShapeDelta]) -> float | None:
    """The d_ff / d every depth of `shapes` has, the design's (lr_check's depths are trained at it, its
    feed-forward shapes at one depth at others); None where no one ratio is shared by every depth."""
    by_depth: dict[int, set[float]] = {}
    for s in shapes:
        by_depth.setdefault(s.n_layer, set()).add(s.ff_ratio)
    shared = set.intersection(*by_depth.values()) if by_depth else set()
    return shared.pop() if len(shared) == 1 else None


def members(shapes: Sequence[ShapeDelta], axis: str) -> tuple[tuple[ShapeDelta, ...], np.ndarray]:
    """The shapes a tilt reads, and their ln(depth) (the shapes at the ratio every depth shares, `depth_ratio`) or
    ln(d_ff / d) (every shape of a depth trained at another ratio too)."""
    if axis not in ("depth", "ff_ratio"):
        raise ValueError(f"tilt axis {axis!r}: 'depth' or 'ff_ratio'")
    ratio = depth_ratio(shapes)
    if axis == "depth":
        chosen = [s for s in shapes if s.ff_ratio == ratio]
        return tuple(chosen), np.log([s.n_layer for s in chosen])
    depths = {s.n_layer for s in shapes if s.ff_ratio != ratio}
    chosen = [s for s in shapes if s.n_layer in depths]
    return tuple(chosen), np.log([s.ff_ratio for s in chosen])


def tilt(shapes: Sequence[ShapeDelta], axis: str) -> Tilt | None:
    """The tilt of the shapes' mean deltas along `axis` with its Welch interval (nan where a shape has one pair);
    None where fewer than two values of the axis are paired."""
    chosen, x = members(shapes, axis)
    if len(set(x.tolist())) < 2:
        return None
    w = _weights(x)
    slope = float(w @ [s.mean for s in chosen])
    clean = np.array([s.mean_clean for s in chosen])
    counts = np.array([len(s.deltas) for s in chosen])
    low = high = math.nan
    if counts.min() >= 2:
        parts = w**2 * np.array([np.var(s.deltas, ddof=1) for s in chosen]) / counts  # each mean's share of var
        se = math.sqrt(parts.sum())
        dof = fits.welch_dof(parts, counts - 1)
        low, high = fits.t_interval(slope, se, dof)  # at fits.level(): 95% by default
    return Tilt(axis, chosen, slope, low, high, float(w @ clean) if np.all(np.isfinite(clean)) else math.nan)


# ---------------------------------------------------------------------------------------------
# Words and the command line


def report(pairing: Pairing, tilts: Sequence[Tilt]) -> str:
    lines = [
        "| shape | pairs | mean delta | without stalled pairs |",
        "|---|---|---|---|",
    ]
    for s in pairing.shapes:
        lines.append(
            f"| L{s.n_layer} d{s.d_model} f{s.d_ff} | {len(s.deltas)} ({sum(not c for c in s.clean)} stalled) "
            f"| {s.mean:+.2f}% | {s.mean_clean:+.2f}% |"
        )
    lines.append(f"\nunpaired finished runs: {pairing.unpaired}")
    for t in tilts:
        down, up = t.carried
        lines.append(
            f"{t.axis} tilt: {t.slope:+.3f}% per e-fold, {fits.level():.0%} [{t.low:+.3f}, {t.high:+.3f}] "
            f"(without stalled pairs {t.slope_clean:+.3f}); carried per e-fold: [{down:+.3f}, {up:+.3f}], "
            f"over a factor 8: [{down * math.log(8):+.2f}, {up * math.log(8):+.2f}]%"
        )
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reference", type=Path, help="sweep_lr_check.csv of the chosen protocol")
    parser.add_argument("other", type=Path, help="sweep_lr_check.csv of the alternative, same shapes, rates and seeds")


def run(args: argparse.Namespace) -> int:
    from depthwidth.stalls import read_rows

    pairing = pair(read_rows(args.reference), read_rows(args.other))
    if not pairing.shapes:
        print(f"tilt: no run of {args.other} has a partner in {args.reference} (same shape, rate factor and seed)")
        return 1
    found = [tilt(pairing.shapes, axis) for axis in ("depth", "ff_ratio")]
    print(report(pairing, [t for t in found if t is not None]))
    return 0
