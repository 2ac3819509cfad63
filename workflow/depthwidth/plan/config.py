"""Validation of the workflow config: JSON Schema (types, ranges, defaults) plus cross-field rules.

`validate(config)` returns the config with defaults filled in, or raises `ConfigError` whose
message is one line naming the key and what is wrong. The Snakefile calls it before the DAG
is built; `python -m depthwidth validate-config FILE` does the same from the shell.
"""

from __future__ import annotations

import argparse
import copy
from pathlib import Path

import yaml

from depthwidth.contracts import RESULTS, SHARED_FOLDERS
from depthwidth.data.fetch import checksum_problem
from depthwidth.plan.sweep import sensitivities
from depthwidth.shapes import whole_layers
from depthwidth.spec import ConfigError, schema_of_package, validated


def _cross_field_rules(config: dict) -> None:
    """Rules a JSON Schema cannot express clearly; each failure names its key."""
    if config["name"] in SHARED_FOLDERS:
        raise ConfigError(
            f"config key 'name': {config['name']!r} names a folder every config shares in {RESULTS}/ "
            f"({', '.join(SHARED_FOLDERS)}); a config's results lie in {RESULTS}/<name>/, so choose another"
        )
    data = config["data"]
    if data["corpus"] == "text" and not data["paths"]:
        raise ConfigError("config key 'data.paths': corpus 'text' needs at least one file or folder")
    if data["sha256"] is not None:
        raise ConfigError(
            "config key 'data.sha256': replaced by data.checksum, which names the algorithm: "
            f'checksum: "sha256:{data["sha256"]}"'
        )
    if data["corpus"] == "url":
        if not data["url"]:
            raise ConfigError("config key 'data.url': corpus 'url' needs an address")
        if not data["checksum"]:
            raise ConfigError(
                "config key 'data.checksum': corpus 'url' needs the download's checksum as the publisher gives it, "
                'e.g. "sha256:<64 hex digits>" or "md5:<32 hex digits>"'
            )
        if problem := checksum_problem(data["checksum"]):
            raise ConfigError(f"config key 'data.checksum': {data['checksum']!r}: {problem}")
    elif data["members"]:
        raise ConfigError(f"config key 'data.members': only used with corpus 'url', not {data['corpus']!r}")
    if data["corpus"] != "text" and data["paths"]:
        raise ConfigError(f"config key 'data.paths': only used with corpus 'text', not {data['corpus']!r}")
    for axis, (low, high) in config.get("tilt", {}).items():
        if low > high:
            raise ConfigError(f"config key 'tilt.{axis}': [low, high] with low <= high, got [{low}, {high}]")
    if "sweep" in config:
        _sweep_rules(config["sweep"])
    if config.get("sensitivity"):
        _sensitivity_rules(config)
    for key, block in (("sweep", config.get("sweep")), ("shaped.training", config.get("shaped", {}).get("training"))):
        if block and block["runs_per_gpu"] > 1 and block["gpu"] != 1:
            raise ConfigError(
                f"config key '{key}.runs_per_gpu': {block['runs_per_gpu']} runs can share a GPU only when each "
                f"asks for one (gpu: 1), not gpu: {block['gpu']}"
            )
    simulation = config.get("shaped", {}).get("simulation")
    if simulation:
        _simulation_rules(simulation)
    _glue_rules(config)
    training = config.get("shaped", {}).get("training")
    if training:
        model = training["model"]
        if model["d_model"] % model["n_head"]:
            raise ConfigError(
                f"config key 'shaped.training.model.n_head': {model['n_head']} does not divide "
                f"d_model = {model['d_model']}"
            )


def _sensitivity_rules(config: dict) -> None:
    """A sensitivity block's pairs are points their experiments plan (the rows' own runs are its reference), deeper
    second, each trained under confounds of the block; each confound differs from the config it is a confound of,
    trains a pair, and one at least is run."""
    block, sweep = config["sensitivity"], config.get("sweep")
    for i, pair in enumerate(block["pairs"]):
        key, experiment = f"sensitivity.pairs[{i}]", pair["experiment"]
        planned = (sweep or {}).get(experiment)
        if not planned or not planned["enabled"]:
            raise ConfigError(
                f"config key '{key}.experiment': sweep.{experiment} is not planned (its runs are the reference)"
            )
        if pair["n"] not in planned["n"]:
            raise ConfigError(f"config key '{key}.n': {pair['n']:g} is not one of sweep.{experiment}.n {planned['n']}")
        shallow, deep = pair["depths"]
        if not shallow < deep or not {shallow, deep} <= set(planned["depths"]):
            raise ConfigError(
                f"config key '{key}.depths': {pair['depths']} is not a shallower then a deeper depth of "
                f"sweep.{experiment}.depths {planned['depths']}"
            )
    # a confound's table holds every experiment's pairs, read back by (N, depth): two experiments' shapes there would
    # be one shape to the reading (claims/sensitivity.of_pairs)
    owner: dict[tuple[float, int], str] = {}
    named = set()
    for i, pair in enumerate(block["pairs"]):
        key = (pair["experiment"], float(pair["n"]), tuple(pair["depths"]))
        if key in named:  # read twice, it would count twice in its rows' Bonferroni split
            raise ConfigError(f"config key 'sensitivity.pairs[{i}]': the pair is given twice")
        named.add(key)
        for depth in pair["depths"]:
            first = owner.setdefault((float(pair["n"]), depth), pair["experiment"])
            if first != pair["experiment"]:
                raise ConfigError(
                    f"config key 'sensitivity.pairs[{i}]': depth {depth} at n {pair['n']:g} is a shape of both "
                    f"{first} and {pair['experiment']}: the confounds' tables would read them as one"
                )
    confounds = sensitivities(block | {"enabled": True})  # those it names, whether or not it is enabled
    names = [confound.name for confound in confounds]
    for i, pair in enumerate(block["pairs"]):
        unknown = [name for name in pair.get("confounds") or [] if name not in names]
        if unknown:
            raise ConfigError(
                f"config key 'sensitivity.pairs[{i}].confounds': {', '.join(unknown)} is no confound of the block "
                f"({', '.join(names) or 'none'})"
            )
    idle = [c.name for c in confounds if not any(map(c.trains, block["pairs"]))]
    if idle:
        raise ConfigError(f"config key 'sensitivity.pairs': no pair is trained under {', '.join(idle)}")
    if config["data"]["vocab_size"] in block["vocab_sizes"]:
        raise ConfigError(
            f"config key 'sensitivity.vocab_sizes': {config['data']['vocab_size']} is data.vocab_size, the reference"
        )
    if block["head_dim"] is not None and block["head_dim"] == sweep["head_dim"]:
        raise ConfigError(f"config key 'sensitivity.head_dim': {block['head_dim']} is sweep.head_dim, the reference")
    if block["tokens_factor"] == 1 and not block["vocab_sizes"] and block["head_dim"] is None:
        raise ConfigError(
            "config key 'sensitivity': no confound to run: give tokens_factor (not 1), vocab_sizes or head_dim"
        )


def _glue_rules(config: dict) -> None:
    """A config name that is none of the folders the GLUE stage shares (whether or not this config runs it);
    and the GLUE block's: a shape whose heads divide its width, checksums in pooch's form."""
    from depthwidth.glue.contracts import GLUE_FOLDERS

    if config["name"] in GLUE_FOLDERS:
        raise ConfigError(
            f"config key 'name': {config['name']!r} names a folder the GLUE stage shares in {RESULTS}/ "
            f"({', '.join(GLUE_FOLDERS)}); choose another"
        )
    glue = config.get("glue")
    if not glue:
        return
    if glue["model"]["d_model"] % glue["model"]["n_head"]:
        model = glue["model"]
        raise ConfigError(
            f"config key 'glue.model.n_head': {model['n_head']} does not divide d_model = {model['d_model']}"
        )
    for task in glue["tasks"]:
        checksum = glue["sources"][task]["checksum"]
        if problem := checksum_problem(checksum):
            raise ConfigError(f"config key 'glue.sources.{task}.checksum': {checksum!r}: {problem}")


def _simulation_rules(sim: dict) -> None:
    """Finite widths must hold the m tokens and give an integer depth T n."""
    settings = [("shaped.simulation.widths", n, sim["T"]) for n in sim["widths"]]
    settings.append(("shaped.simulation.trajectory.n", sim["trajectory"]["n"], sim["trajectory"]["T"]))
    for key, n, T in settings:
        if n < sim["m"]:
            raise ConfigError(f"config key '{key}': width {n} is below the number of tokens m = {sim['m']}")
        if whole_layers(T, n) is None:
            raise ConfigError(f"config key '{key}': depth T x n = {T} x {n} is not a whole number of layers")


def _sweep_rules(sweep_config: dict) -> None:
    budgets = [key for key in ("token_budget", "tokens_per_parameter") if key in sweep_config["recipe"]]
    if len(budgets) != 1:
        raise ConfigError(
            "config key 'sweep.recipe.tokens_per_parameter': give exactly one of token_budget (tokens per run) "
            f"and tokens_per_parameter (tokens per run / N), not {' and '.join(budgets) or 'neither'}"
        )
    if "min_tokens" in sweep_config["recipe"] and "tokens_per_parameter" not in sweep_config["recipe"]:
        raise ConfigError(
            "config key 'sweep.recipe.min_tokens': a floor under tokens_per_parameter x N; with token_budget "
            "every run already trains that many tokens"
        )
    if sweep_config.get("literal", {}).get("enabled") and not sweep_config.get("design", {}).get("enabled"):
        raise ConfigError(
            "config key 'sweep.literal': it extends the design to small N and is read with it, so the design "
            "must be enabled"
        )
    ablations = [name for name in ("design", "ffratio", "headdim") if sweep_config.get(name, {}).get("enabled")]
    if ablations and not sweep_config.get("baseline", {}).get("enabled"):
        raise ConfigError(
            f"config key 'sweep.baseline': the ablations {', '.join(ablations)} measure loss against the "
            "baseline L(N) fit, so the baseline must be enabled"
        )


def validate(config: dict, schema: dict | None = None) -> dict:
    """The config with defaults filled in; `ConfigError` (one line, naming the key) if it is invalid."""
    schema = schema_of_package() if schema is None else schema
    config = validated(config, schema, schema)
    _cross_field_rules(config)
    return config


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml.safe_load that refuses a key given twice in one mapping (PyYAML keeps the last one silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read(path: str | Path) -> dict:
    """A YAML config file as a mapping, not yet validated; errors name the file and line."""
    path = Path(path)
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or err.__class__.__name__
        raise ConfigError(f"{path}: not valid YAML{where} ({problem})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a config is a mapping of keys, got {type(raw).__name__}")
    return raw


def merged(config: dict, overrides: dict) -> dict:
    """A copy of `config` with `overrides` merged in, mapping by mapping (as snakemake merges --config)."""
    out = copy.deepcopy(config)
    for key, value in overrides.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if both else copy.deepcopy(value)
    return out


def overrides(pairs: list[str]) -> dict:
    """KEY=VALUE pairs, VALUE in YAML, as snakemake's `--config` takes them: `sweep='{gpu: 1}'`."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--config: expected KEY=VALUE, got {pair!r}")
        if "." in key or ":" in key:  # as snakemake, which fails on one with a traceback (snakemake/snakemake#3907)
            top, _, rest = key.replace(":", ".").partition(".")
            raise ConfigError(
                f"--config {pair}: KEY is a top-level key, and a nested one is given as YAML: "
                f"{top}='{{{rest.replace('.', ': {')}: {value}{'}' * rest.count('.')}}}'"
            )
        try:
            out = merged(out, {key: yaml.safe_load(value)})
        except yaml.YAMLError:
            raise ConfigError(f"--config {key}: not valid YAML: {value!r}") from None
    return out


def yaml_typed(overrides_: dict) -> dict:
    """Snakemake's --config values typed as `overrides` types them. Snakemake reads a top-level value as an int, a
    float or a bool before YAML, but a nested one through YAML's BaseLoader, which leaves every scalar a string
    (`sweep='{gpu: 1}'` gave gpu '1'): each nested string is read again as YAML would read it. What BaseLoader
    lost cannot come back: a quoted number inside a mapping ('{name: "1"}') becomes a number."""

    def typed(value):
        if isinstance(value, dict):
            return {key: typed(item) for key, item in value.items()}
        if isinstance(value, list):
            return [typed(item) for item in value]
        if isinstance(value, str):
            try:
                return yaml.safe_load(value) if value else value
            except yaml.YAMLError:
                return value
        return value

    # a top-level value snakemake typed already (int, float, bool first); only mappings and lists went through YAML
    return {key: typed(value) if isinstance(value, (dict, list)) else value for key, value in overrides_.items()}


def add_override_arguments(parser: argparse.ArgumentParser) -> None:
    """`--config KEY=VALUE ...`, for the commands that read a config file (plan, bench sweep, bench pack)."""
    parser.add_argument(
        "--config",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="config keys to override, as snakemake's --config takes them: sweep='{gpu: 1, runs_per_gpu: 8}'",
    )


def read_overridden(path: str | Path, pairs: list[str]) -> dict:
    """A config file with `--config` pairs merged in (`overrides`), not yet validated."""
    return merged(read(path), overrides(pairs))


def load(path: str | Path) -> dict:
    """Read and validate a YAML config file (defaults filled in; its plan is not built)."""
    return validate(read(path))
