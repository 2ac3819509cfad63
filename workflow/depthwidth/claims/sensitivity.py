"""What the depth rows' verdicts survive (issue 52; docs/science.md 5.8).

The sensitivity block names pairs of depths at one N of the design or the literal block, the comparisons the depth
rows decide on, and trains their shapes again under each confound of tiny models alone: more tokens, another
vocabulary of the same text, smaller heads (plan.sweep.Sensitivity). For each pair and source (the config's own
runs, the `reference`, then each confound) this module measures the deeper model's gain, 100 (1 - L_deep /
L_shallow) % of the loss in bits per byte (the one unit every vocabulary of a text shares), with an interval at the
current level: the two shapes' mean 100 ln(bpb) over their seeds, each shape's variance moderated toward those
of the other shapes of its experiment in its table (fits.moderated_variances, as the rows' noise model does),
Student's t on the fewer dof of the two.
Every run that finished counts, stalled ones too (the rows' pre-registered reading); the stalled are counted.

A pair's sign is +1 where the interval lies above 0 (the deeper wins), -1 below (it loses), 0 where it straddles.
A depth row's outcome under a confound, over the k pairs it reads (DEPTH_ROWS), each pair's sign taken at the row's
Bonferroni level 1 - (1 - level) / k (so that a row of several pairs is no likelier to move by chance than one of
one): `depends` where a pair's sign under the confound is the opposite of its reference sign, `survives` where every
pair keeps a reference sign that is not 0, `open` otherwise. A pair a confound trains with runs of the reference's own
(heads of `head_dim` channels that no divisor of a width comes nearer than its own, at seeds the reference has) tests
nothing there and is left out; a row none of whose pairs it tests is `untested` by it. The rows' verdicts stay the
pre-registered ones: this says what they are robust to.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import fits
from depthwidth.columns import SENSITIVITY_COLUMNS
from depthwidth.columns import SENSITIVITY_REFERENCE as REFERENCE
from depthwidth.io import write_text
from depthwidth.options import json_option
from depthwidth.plan.sweep import Sensitivity

OUTCOMES = ("survives", "depends", "open", "untested")
# the pairs each depth row decides on: the literal row reads consecutive depths L -> L + 1 wherever they were trained
# (its figure reads the design and the literal block together: levine-cpu's 3 -> 4 pairs are design pairs); the
# design rows read the design's, the depth collapse only those from one layer (its 1-layer offset)
DEPTH_ROWS = {
    "kaplan_depth_collapse": lambda pair: pair["experiment"] == "design" and pair["depths"][0] == 1,
    "levine_crossover_slope": lambda pair: pair["experiment"] == "design",
    "levine_optimal_depth": lambda pair: pair["experiment"] == "design",
    "levine_depth_inefficiency": lambda pair: pair["experiment"] == "design",
    "levine_literal_threshold": lambda pair: pair["depths"][1] == pair["depths"][0] + 1,
}


# what the reading reads of a sweep table (its run_id and dose where it has them)
READ_COLUMNS = ("n_target", "n_layer", "n_head", "status", "final_val_bpb", "stalled")


def shape_values(table: pd.DataFrame) -> dict[tuple[float, int], np.ndarray]:
    """Each shape's (N target, depth) 100 ln(loss in bits per byte) over its runs that finished."""
    ok = table[(table["status"] == "ok") & np.isfinite(table["final_val_bpb"])]
    return {
        (float(n), int(depth)): 100 * np.log(group["final_val_bpb"].to_numpy(dtype=float))
        for (n, depth), group in ok.groupby(["n_target", "n_layer"])
    }


def shape_noise(table: pd.DataFrame) -> tuple[dict[tuple[float, int], np.ndarray], fits.ModeratedVariances]:
    """Each shape's values (`shape_values`) and their moderated variances, every shape of `table` the prior."""
    values = shape_values(table)
    return values, fits.moderated_variances(list(values.values()))


def pair_gain(table: pd.DataFrame, n: float, shallow: int, deep: int, noise: tuple | None = None) -> dict:
    """The deeper model's gain of one pair in one table (module docstring): gain_pct, low, high, sign, each shape's
    heads, the runs read of each shape, the most tokens per parameter and epochs of its runs, and how many of them
    stalled; nan and sign 0 where a shape has no run. Each shape's variance is moderated as `noise` has it
    (`shape_noise` of the shapes it is moderated toward; default: every shape of `table`)."""
    pair = (shallow, deep)
    at_n = table[[math.isclose(float(v), n) for v in table["n_target"]]]
    row = {}
    for name, depth in (("shallow", shallow), ("deep", deep)):
        shape = at_n[at_n["n_layer"] == depth]
        row[f"heads_{name}"] = int(shape["n_head"].max()) if len(shape) else 0
    row |= {"runs_shallow": 0, "runs_deep": 0}
    mine = at_n[at_n["n_layer"].isin(pair)]  # the pair's runs at its N
    for column in ("tokens_per_parameter", "epochs"):  # the dose: what a confound of more tokens gave (or the cap)
        row[column] = float(mine[column].max()) if column in mine and len(mine) else math.nan
    row["stalled"] = int(mine["stalled"].astype(bool).sum())
    row |= {"gain_pct": math.nan, "low": math.nan, "high": math.nan, "sign": 0}
    row |= {"log_ratio": math.nan, "se": math.nan, "dof": 0.0, "same_runs": 0}
    values, moderated = shape_noise(table) if noise is None else noise
    keys = [next((k for k in values if math.isclose(k[0], n) and k[1] == d), None) for d in pair]
    for name, key in zip(("shallow", "deep"), keys):
        row[f"runs_{name}"] = values[key].size if key else 0
    row["runs"] = frozenset(mine["run_id"]) if "run_id" in mine else frozenset()
    if None in keys:
        return row
    index = [list(values).index(key) for key in keys]
    s, d = (values[key] for key in keys)
    se = math.sqrt(sum(moderated.variances[i] / values[key].size for i, key in zip(index, keys)))
    diff = float(d.mean() - s.mean())  # 100 ln(L_deep / L_shallow)
    dof = min(moderated.dofs[i] for i in index)
    row |= {"log_ratio": diff, "se": se, "dof": dof, "gain_pct": fits.ratio_gain_pct(diff)}
    return row | fits.ratio_gain_interval(diff, se, dof)


def of_pairs(table: pd.DataFrame, pairs: list[dict]) -> pd.DataFrame:
    """The rows of a confound's `table` whose shape (N target, depth) one of `pairs` names: one experiment's shapes,
    where a confound table holds every pair's."""
    named = [(float(p["n"]), depth) for p in pairs for depth in p["depths"]]
    mine = [any(math.isclose(float(n), m) and int(depth) == d for m, d in named)
            for n, depth in zip(table["n_target"], table["n_layer"])]  # fmt: skip
    return table[mine]


def gains(pairs: list[dict], references: dict[str, pd.DataFrame], confounds: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every pair's gain (`pair_gain`) in its experiment's reference table, then in each confound's table (by its
    name: tokens, vocab256, heads) that trained it, SENSITIVITY_COLUMNS, at the current level."""
    rows, noise = [], {}
    for source in (REFERENCE, *confounds):
        for pair in pairs:
            if source != REFERENCE and not Sensitivity(source).trains(pair):
                continue
            experiment = pair["experiment"]
            table = references[experiment] if source == REFERENCE else confounds[source]
            if (source, experiment) not in noise:
                # each shape moderated toward its own experiment's shapes, as in the reference (the literal block's
                # widths 4-23 are far noisier than the design's): a confound's table holds every experiment's pairs
                ours = [p for p in pairs if p["experiment"] == experiment]
                noise[source, experiment] = shape_noise(table if source == REFERENCE else of_pairs(table, ours))
            shallow, deep = pair["depths"]
            head = {"source": source, "experiment": experiment, "n": float(pair["n"]), "shallow": shallow, "deep": deep}
            rows.append(head | pair_gain(table, pair["n"], shallow, deep, noise[source, experiment]))
    key = lambda r: (r["experiment"], r["n"], r["shallow"], r["deep"])  # noqa: E731 - a pair's
    runs = {key(r): r["runs"] for r in rows if r["source"] == REFERENCE}
    # a confound that trains some of the reference's own runs (the same heads, fewer seeds) tests nothing there
    for r in rows:
        r["same_runs"] = int(r["source"] != REFERENCE and bool(r["runs"]) and r["runs"] <= runs[key(r)])
    return pd.DataFrame([r | {"level": fits.level()} for r in rows], columns=list(SENSITIVITY_COLUMNS))


PAIR = ["experiment", "n", "shallow", "deep"]  # what names a pair in sensitivity.csv


def against_reference(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """The pairs `source` tests (not with the reference's own runs), by PAIR: its sign (`theirs`) beside the
    reference's (`reference`), as `frame` has them."""
    reference = frame[frame["source"] == REFERENCE].set_index(PAIR)["sign"]
    theirs = frame[(frame["source"] == source) & (frame["same_runs"] == 0)].set_index(PAIR)["sign"]
    return pd.DataFrame({"theirs": theirs, "reference": reference.reindex(theirs.index)})


def sign_counts(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per confound, each pair at the sign `frame` gives it: of the pairs it tests (`tested`), how many keep the
    reference's sign where that is not 0 (`kept`), turn it (`turned`), or neither (`undecided`)."""
    out = {}
    for source in dict.fromkeys(frame.loc[frame["source"] != REFERENCE, "source"]):
        pairs = against_reference(frame, source)
        kept = int(((pairs["theirs"] == pairs["reference"]) & (pairs["reference"] != 0)).sum())
        turned = int((pairs["theirs"] * pairs["reference"] == -1).sum())
        out[source] = {"tested": len(pairs), "kept": kept, "turned": turned, "undecided": len(pairs) - kept - turned}
    return out


def row_pairs(frame: pd.DataFrame, claim: str, level: float | None = None) -> tuple[pd.DataFrame, float]:
    """The rows of `frame` (every source) of the pairs depth row `claim` reads (DEPTH_ROWS), each `sign` read at
    `level` (default: the level `frame`'s intervals were computed at) split over the row's pairs (Bonferroni), and
    that split level; no rows where the row reads none (or is no depth row)."""
    reads = DEPTH_ROWS.get(claim, lambda pair: False)
    mine = frame[[bool(reads({"experiment": e, "depths": (a, b)})) for e, a, b in
                  zip(frame["experiment"], frame["shallow"], frame["deep"])]]  # fmt: skip
    if mine.empty:
        return mine, math.nan
    level = float(mine["level"].iloc[0]) if level is None else level
    split = 1 - (1 - level) / int((mine["source"] == REFERENCE).sum())
    with fits.at_level(split):
        signs = [fits.ratio_gain_interval(r.log_ratio, r.se, r.dof)["sign"] for r in mine.itertuples()]
    return mine.assign(sign=signs), split


def row_outcomes(frame: pd.DataFrame, claim: str, level: float | None = None) -> dict[str, str] | None:
    """Depth row `claim`'s outcome (OUTCOMES) under each confound of `frame`, its pairs' signs read at `level` (the
    level its verdict was read at, its look's; default: the level `frame`'s intervals were computed at) split over the
    row's pairs (`row_pairs`); None where it reads no pair of `frame`."""
    mine, _ = row_pairs(frame, claim, level)
    if mine.empty:
        return None
    out = {}
    for source in [s for s in dict.fromkeys(frame["source"]) if s != REFERENCE]:
        aligned = against_reference(mine, source)
        signs, tested = aligned["theirs"], aligned["reference"]
        if tested.empty:  # the confound trained only the reference's own runs for this row
            out[source] = "untested"
        elif ((signs * tested) == -1).any():
            out[source] = "depends"
        elif (tested != 0).all() and (signs == tested).all():
            out[source] = "survives"
        else:
            out[source] = "open"
    return out


def outcomes(frame: pd.DataFrame, levels: Mapping[str, float] | None = None) -> dict[str, dict[str, str]]:
    """Each depth row that reads a pair of `frame` (DEPTH_ROWS) -> `row_outcomes`, read at the row's own level
    (`levels`: claim -> the level its verdict was read at; a row not in it at the level of `frame`'s intervals)."""
    read = {claim: row_outcomes(frame, claim, (levels or {}).get(claim)) for claim in DEPTH_ROWS}
    return {claim: by_source for claim, by_source in read.items() if by_source is not None}


def undecided(frame: pd.DataFrame, levels: Mapping[str, float] | None = None) -> dict[str, tuple[float, list[tuple]]]:
    """Each depth row whose own (reference) pairs are not all decided at its split level (`row_pairs` at `levels`, as
    `outcomes` reads them) -> (that level, those pairs by PAIR): where they are, no confound can keep a sign the
    reference does not have, and the row is at best open under every confound."""
    out = {}
    for claim in DEPTH_ROWS:
        mine, split = row_pairs(frame, claim, (levels or {}).get(claim))
        reference = mine[(mine["source"] == REFERENCE) & (mine["sign"] == 0)] if len(mine) else mine
        if len(reference):
            out[claim] = (split, [tuple(r) for r in reference[PAIR].itertuples(index=False)])
    return out


def _named_paths(values: list[str], flag: str) -> dict[str, Path]:
    """NAME=PATH arguments as a mapping; SystemExit naming the flag for one without '='."""
    out = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"sensitivity: {flag} {value!r}: give NAME=PATH")
        out[name] = Path(path)
    return out


def _sweep_tables(values: list[str], flag: str) -> dict[str, pd.DataFrame]:
    """NAME=TABLE arguments (`_named_paths`) read; ValueError naming a table that lacks one of READ_COLUMNS."""
    from depthwidth.plots.sweep_common import read_columns

    return {
        name: read_columns(path, READ_COLUMNS, "a sweep table") for name, path in _named_paths(values, flag).items()
    }


def checked_pairs(pairs) -> list[dict]:
    """`--pairs-json`'s pairs checked against the schema's `sensitivity.pairs` (the workflow passes the config's,
    validated), defaults filled in; ValueError naming the option and the key."""
    from depthwidth.spec import ConfigError, schema_of_package, validated

    root = schema_of_package()
    try:
        return validated({"pairs": pairs}, root["properties"]["sensitivity"], root)["pairs"]
    except ConfigError as err:
        raise ValueError(f"--pairs-json: {str(err).replace('config key ', 'key ', 1)}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pairs-json", required=True, help="the config's sensitivity.pairs, validated")
    parser.add_argument("--reference", action="append", default=[], help="EXPERIMENT=TABLE: a pair experiment's "
                        "sweep table, the reference (repeatable)")  # fmt: skip
    parser.add_argument("--confound", action="append", default=[], help="NAME=TABLE: a confound's sweep table "
                        "(tokens, vocab<V>, heads; repeatable, in the plan's order)")  # fmt: skip
    parser.add_argument("--out", required=True, type=Path, help="results/<config>/sensitivity.csv")


def run(args: argparse.Namespace) -> int:
    pairs = checked_pairs(json_option(args.pairs_json, "--pairs-json"))
    references, confounds = _sweep_tables(args.reference, "--reference"), _sweep_tables(args.confound, "--confound")
    missing = sorted({pair["experiment"] for pair in pairs} - references.keys())
    if missing:
        raise SystemExit(f"sensitivity: no --reference table for the pairs' experiment(s) {', '.join(missing)}")
    frame = gains(pairs, references, confounds)
    write_text(args.out, frame.to_csv(index=False))
    # the rows read these at their verdicts' levels (claims.survived_at); here, at the table's own
    print(f"at {fits.level_text()} (claims.csv reads each row at the level of its verdict):")
    for claim, by_source in outcomes(frame).items():
        print(f"{claim}: " + ", ".join(f"{source} {outcome}" for source, outcome in by_source.items()))
    return 0
