"""Validation of the workflow config: JSON Schema (types, ranges, defaults) plus cross-field rules.

`validate(config)` returns the config with defaults filled in, or raises `ConfigError` whose
message is one line naming the key and what is wrong. The Snakefile calls it before the DAG
is built; `python -m depthwidth validate-config FILE` does the same from the shell.
"""

from __future__ import annotations

import argparse
import copy
import re
from pathlib import Path

import jsonschema
import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A config that cannot run; the message names the key."""


def load_schema(path: Path = SCHEMA_PATH) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _key(path) -> str:
    return ".".join(str(part) for part in path) or "<top level>"


def _fill_defaults(instance, schema: dict) -> None:
    """Insert schema defaults for missing keys, recursively through nested objects."""
    if not isinstance(instance, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(instance[key], sub)


def _describe(error: jsonschema.ValidationError) -> str:
    """One line for a schema violation, naming the offending key itself."""
    path = list(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"config key '{_key(path + [extra[0]])}': unknown key (allowed here: {', '.join(allowed)})"
    if error.validator == "required":
        missing = re.match(r"'([^']+)'", error.message)
        name = missing.group(1) if missing else "?"
        return f"config key '{_key(path + [name])}': missing (required)"
    return f"config key '{_key(path)}': {error.message}"


def _cross_field_rules(config: dict) -> None:
    """Rules a JSON Schema cannot express clearly; each failure names its key."""
    data = config["data"]
    if data["corpus"] == "text" and not data["paths"]:
        raise ConfigError("config key 'data.paths': corpus 'text' needs at least one file or folder")
    if data["corpus"] == "url":
        if not data["url"]:
            raise ConfigError("config key 'data.url': corpus 'url' needs an address")
        if not (data["sha256"] and re.fullmatch(r"[0-9a-fA-F]{64}", data["sha256"])):
            raise ConfigError("config key 'data.sha256': corpus 'url' needs the file's sha256 (64 hex digits)")
    if data["corpus"] != "text" and data["paths"]:
        raise ConfigError(f"config key 'data.paths': only used with corpus 'text', not {data['corpus']!r}")
    if "sweep" in config:
        _sweep_rules(config["sweep"])
    simulation = config.get("shaped", {}).get("simulation")
    if simulation:
        _simulation_rules(simulation)
    training = config.get("shaped", {}).get("training")
    if training:
        model = training["model"]
        if model["d_model"] % model["n_head"]:
            raise ConfigError(
                f"config key 'shaped.training.model.n_head': {model['n_head']} does not divide "
                f"d_model = {model['d_model']}"
            )


def _simulation_rules(sim: dict) -> None:
    """Finite widths must hold the m tokens and give an integer depth T n."""
    settings = [("shaped.simulation.widths", n, sim["T"]) for n in sim["widths"]]
    settings.append(("shaped.simulation.trajectory.n", sim["trajectory"]["n"], sim["trajectory"]["T"]))
    for key, n, T in settings:
        if n < sim["m"]:
            raise ConfigError(f"config key '{key}': width {n} is below the number of tokens m = {sim['m']}")
        if abs(T * n - round(T * n)) > 1e-9 * max(1.0, T * n):
            raise ConfigError(f"config key '{key}': depth T x n = {T} x {n} is not a whole number of layers")


def _sweep_rules(sweep_config: dict) -> None:
    from depthwidth.sweep import PlanError, plan

    ablations = [name for name in ("aspect", "ffratio", "headdim") if sweep_config.get(name, {}).get("enabled")]
    if ablations and not sweep_config.get("baseline", {}).get("enabled"):
        raise ConfigError(
            f"config key 'sweep.baseline': the ablations {', '.join(ablations)} measure loss against the "
            "baseline L(N) fit, so the baseline must be enabled"
        )
    try:
        plan(sweep_config)
    except PlanError as err:
        raise ConfigError(f"config key '{err.key}': {err.reason}") from None


def validate(config: dict, schema: dict | None = None) -> dict:
    """The config with defaults filled in; `ConfigError` (one line, naming the key) if it is invalid."""
    schema = load_schema() if schema is None else schema
    config = copy.deepcopy(config)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(
        validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path)))
    )
    if errors:
        raise ConfigError(_describe(errors[0]))
    _fill_defaults(config, schema)
    _cross_field_rules(config)
    return config


def load(path: str | Path) -> dict:
    """Read and validate a YAML config file."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({err.__class__.__name__})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a config is a mapping of keys, got {type(raw).__name__}")
    return validate(raw)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("configfile", type=Path, help="a YAML config, e.g. config/ci.yaml")


def run(args: argparse.Namespace) -> int:
    load(args.configfile)
    print(f"{args.configfile}: valid")
    return 0
