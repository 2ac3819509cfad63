"""The pre-registered second stage (config `decide`; docs/science.md 5.7): a design fixed before any data.

With `looks: 1` every verdict is read once, on the planned seeds, at the level 1 - alpha. With `looks: 2` the sweep
rows are read twice, the error split between the looks (the plain two-stage split of error spending: by the union
bound the two looks together err at most alpha, half of it in each direction):
- look 1, on the planned seeds, at 1 - first_alpha (99% at the defaults): a row decided there is final;
- between the looks, each row undecided at look 1 and not blocked by its systematic asks for fresh seeds for the
  shapes it reads (`claims.second`), cheapest first, within `max_extra_job_minutes`; the seeds are the reserved
  ones (first_seed, first_seed + 1, ...: no planned run, scout or confirmation may use one), each shape trained at
  the rate its first stage chose;
- look 2, on all the seeds, at 1 - (alpha - first_alpha) (96%).
The noci rows' figures take both looks too (docs/protocol-choices.md, "The noci rows' second stage"): the entropy
row's (`ENTROPY_FIGURE`) grows by fresh seeds of each attention kind at the top rate, the SDE row's (`SDE_FIGURE`) by
the samples of each sample job on fresh seeds. Rows whose data cannot grow here (the rank collapse's trajectory,
GLUE) have one look, at 1 - alpha.
Where the files lie: the `*_path` functions below (apart from contracts.py, which every training job imports).
Pure Python: the plan imports it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from depthwidth import contracts
from depthwidth.plan.sweep import PlanError


@dataclass(frozen=True)
class Design:
    """The config's `decide` block, read as a design: its looks, its error, its second stage's budget and price."""

    block: dict  # the validated `decide` block, whole: its digest names the design

    @property
    def looks(self) -> int:
        return int(self.block["looks"])

    @property
    def spent(self) -> tuple[float, ...]:
        """The two-sided error each look spends: alpha, or first_alpha then the rest."""
        alpha, first = self.block["alpha"], self.block["first_alpha"]
        return (alpha,) if self.looks == 1 else (first, round(alpha - first, 12))

    @property
    def levels(self) -> tuple[float, ...]:
        """The two-sided level of each look."""
        return tuple(level_of(a) for a in self.spent)

    @property
    def one_look(self) -> float:
        """The level of a row that has one look (its data cannot grow): 1 - alpha."""
        return level_of(self.block["alpha"])

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds reserved for the second stage, in the order shapes take them (none with one look)."""
        first, most = self.block["first_seed"], self.block["max_seeds_per_shape"]
        return tuple(range(first, first + most)) if self.looks == 2 else ()

    @property
    def budget(self) -> float:
        """The job-minutes the second stage may take at most."""
        return float(self.block["max_extra_job_minutes"])

    @property
    def most(self) -> int:
        """Fresh seeds a shape may get at most."""
        return int(self.block["max_seeds_per_shape"])

    @property
    def price(self) -> Price:
        """What a fresh run or sample job of the second stage is priced at."""
        return Price(self.block["price"])

    @property
    def digest(self) -> str:
        """What names the design in every row of claims.csv: a digest of the whole block."""
        return contracts.digest(self.block)


@dataclass(frozen=True)
class Price:
    """The registered price of one fresh job of the second stage, in minutes (config `decide.price`;
    docs/protocol-choices.md, "The second stage's price"): a function of what the first stage's tables record alone,
    so that every machine asks for the same fresh jobs. A yardstick measured once, not a forecast: a run's
    evaluations are not priced."""

    block: dict  # the validated `decide.price` block

    def run_minutes(self, tokens: float, layers: float, flops: float) -> float:
        """A training run of `tokens` tokens through `layers` layers and `flops` training matmul FLOPs."""
        p = self.block
        per_token = p["token_seconds"] + p["layer_token_seconds"] * layers
        return (p["startup_seconds"] + tokens * per_token + flops / p["flops_per_second"]) / 60

    def sample_minutes(self, source: str, samples: float, steps: float) -> float:
        """A sample job of `samples` samples of `steps` steps each from `source` (sde or finite)."""
        p = self.block
        return (p["startup_seconds"] + samples * steps * p["sample_step_seconds"][source]) / 60


def level_of(alpha: float) -> float:
    """The two-sided level that spends `alpha` (rounded: 1 - 0.04 is 0.96, not 0.9600000000000001)."""
    return round(1 - alpha, 12)


def default_design() -> Design:
    """The design of the schema's defaults (a config that says nothing of `decide`)."""
    from depthwidth.spec import schema_of_package, validated

    schema = schema_of_package()
    return Design(validated({}, schema["properties"]["decide"], schema))


def design(config: dict) -> Design:
    """The design of a validated config; PlanError naming the key where the split cannot be made."""
    block = config["decide"]
    if block["looks"] == 2 and not block["first_alpha"] < block["alpha"]:
        raise PlanError(
            "decide.first_alpha", f"{block['first_alpha']} spends all of alpha ({block['alpha']}) at the first look"
        )
    if block["looks"] == 2 and not block["sims"]:
        raise PlanError("decide.sims", "0 runs no decide job, and the second stage asks what would decide each row")
    found = Design(dict(block))
    for key, spent, level in zip(("decide.first_alpha", "decide.alpha"), found.spent, found.levels, strict=False):
        if not 0.5 < level < 1:
            key = "decide.alpha" if found.looks == 1 else key
            raise PlanError(key, f"spends {spent:g} at a look: its level {level:g} is not between 0.5 and 1")
    return found


def seed_clash(design: Design, taken: dict[str, set[int]]) -> None:
    """PlanError naming the key whose seeds (`taken`: config key -> seeds) include one the second stage reserves."""
    reserved = set(design.seeds)
    for key, seeds in taken.items():
        clash = sorted(reserved & set(seeds))
        if clash:
            raise PlanError(
                key,
                f"seed {clash[0]} is reserved for the second stage (decide.first_seed {design.block['first_seed']}, "
                f"{design.most} seeds): move one of the two",
            )


# the figures whose rows grow otherwise than by seeds of sweep shapes (claims/decide.GROWTHS redraws them; the plan
# reserves their jobs): the shaped training's, by seeds of each attention kind at its top rate, and the SDE's, by the
# samples of each sample job (its spec on more seeds)
ENTROPY_FIGURE = "shaped_entropy"
SDE_FIGURE = "shaped_sde_convergence"

ASKED_KEY = "shapes"  # the key of a second-stage file that holds the fresh seeds per shape (claims/second.py writes it)


def asked(path: str | Path) -> dict[str, int]:
    """What a second-stage file asks for: a first-stage run of each shape -> its fresh seeds; ValueError naming the
    file where it holds none."""
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(record, dict) or not isinstance(record.get(ASKED_KEY), dict):
        raise ValueError(f"{path}: no {ASKED_KEY!r} mapping of runs to fresh seeds (rebuild it)")
    return {str(run): int(n) for run, n in record[ASKED_KEY].items()}


# ---------------------------------------------------------------- where the files lie


def first_table_path(config: str, table: str) -> str:
    """A sweep table on the first stage's seeds alone: what look 1 and the decide jobs read (looks 2)."""
    return f"{contracts.config_dir(config)}/decide/tables/{table}.csv"


LOOK_SUFFIX = ".look1.csv"  # a figure's rows at look 1: <figure><LOOK_SUFFIX>


def look_path(config: str, figure: str) -> str:
    """A figure's rows at look 1 (its first-stage tables at the first look's level), written by its decide job;
    `contracts.unstalled_path` gives the other reading beside it."""
    return f"{contracts.config_dir(config)}/decide/{figure}{LOOK_SUFFIX}"


def look_figure(path: str | Path) -> str:
    """The figure whose rows at look 1 `path` holds (or their other reading)."""
    return Path(path).name.split(".")[0]


def second_stage_path(config: str) -> str:
    """What the second stage asks for: the seeds each shape gets, and why (the checkpoint `second_stage`)."""
    return f"{contracts.config_dir(config)}/decide/second-stage.json"


def decisions_path(config: str) -> str:
    """The audit trail: each look and row, its statistic, bound, error spent, decision and the runs it asked for."""
    return f"{contracts.config_dir(config)}/decisions.csv"
