"""Validation of the workflow config: JSON Schema (types, ranges, defaults) plus cross-field rules.

`validate(config)` returns the config with defaults filled in, or raises `ConfigError` whose
message is one line naming the key and what is wrong. The Snakefile calls it before the DAG
is built; `python -m depthwidth validate-config FILE` does the same from the shell.
"""

from __future__ import annotations

import argparse
import copy
import functools
import math
import re
from pathlib import Path

import jsonschema
import yaml

from depthwidth.contracts import RESULTS, SHARED_FOLDERS
from depthwidth.data.fetch import checksum_problem
from depthwidth.shapes import whole_layers

SCHEMA_PATH = Path(__file__).resolve().parent / "config.schema.yaml"


class ConfigError(ValueError):
    """A config that cannot run; the message names the key."""


def load_schema(path: Path = SCHEMA_PATH) -> dict:
    """The schema (trusted package data: libyaml's safe loader where present, 10x faster at parse time)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506


def _properties(schema: dict, root: dict) -> dict:
    """The properties a schema node declares, its local `$ref` and `allOf` parts included."""
    parts = [schema, *schema.get("allOf", [])]
    found = {}
    for part in parts:
        if "$ref" in part:
            found.update(_properties(_resolve(part["$ref"], root), root))
        found.update(part.get("properties", {}))
    return found


def _resolve(ref: str, root: dict) -> dict:
    node = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def _key(path) -> str:
    return ".".join(str(part) for part in path) or "<top level>"


def _fill_defaults(instance, schema: dict, root: dict) -> None:
    """Insert schema defaults for missing keys, recursively through nested objects and local `$ref`s."""
    if not isinstance(instance, dict):
        return
    for key, sub in _properties(schema, root).items():
        sub = _resolve(sub["$ref"], root) | sub if "$ref" in sub else sub
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(instance[key], sub, root)


def _check_finite(value, path: list) -> None:
    """NaN and infinity pass JSON Schema's bounds (every comparison with NaN is false): refuse them by key."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"config key '{_key(path)}': {value} is not a finite number")
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in children:
        _check_finite(child, [*path, key])


def _describe(error: jsonschema.ValidationError, root: dict) -> str | None:
    """One line for a schema violation, naming the offending key itself."""
    path = list(error.absolute_path)
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        allowed = sorted(_properties(error.schema, root))
        extra = sorted(set(error.instance) - set(allowed))
        if not extra:  # a declared key that failed its own check; that error names it
            return None
        return f"config key '{_key(path + [extra[0]])}': unknown key (allowed here: {', '.join(allowed)})"
    if error.validator == "required":
        missing = re.match(r"'([^']+)'", error.message)
        name = missing.group(1) if missing else "?"
        return f"config key '{_key(path + [name])}': missing (required)"
    if error.validator == "maxLength":  # the message would repeat the whole string
        length, limit = len(error.instance), error.validator_value
        return f"config key '{_key(path)}': {length} characters, longer than the maximum of {limit}"
    if isinstance(error.instance, str) and _YAML11_FLOAT.match(error.instance):
        return f"config key '{_key(path)}': {error.message}: {_yaml11_hint(error.instance)}"
    return f"config key '{_key(path)}': {error.message}"


def _yaml11_hint(text: str) -> str:
    """Why YAML read `text` (say 1e13) as a string, and how to write that number so that it reads as one."""
    value = float(text)
    mantissa, exponent = f"{value:e}".split("e")
    mantissa = f"{float(mantissa):g}"
    written = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{int(exponent):+d}"
    if value.is_integer() and abs(value) < 1e18:
        written += f" or {int(value)}"
    return (
        f"YAML 1.1 reads {text} as text, not a number (its exponent form needs a dot and a signed exponent): "
        f"write {written}"
    )


# what YAML 1.1 (PyYAML) reads as a string though it looks like a number: 1e13, 2E-5, 3.5e7 (no dot or no sign)
_YAML11_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+\Z")


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
    if "sweep" in config:
        _sweep_rules(config["sweep"])
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


@functools.cache
def _schema() -> dict:
    """The package's schema, read once per process (every job spec of a plan is checked against it)."""
    return load_schema()


def validate(config: dict, schema: dict | None = None) -> dict:
    """The config with defaults filled in; `ConfigError` (one line, naming the key) if it is invalid."""
    schema = _schema() if schema is None else schema
    config = _validated(config, schema, schema)
    _cross_field_rules(config)
    return config


_VALIDATORS: dict[int, tuple[dict, jsonschema.Draft202012Validator]] = {}


def _validator(schema: dict, root: dict) -> jsonschema.Draft202012Validator:
    """One validator per schema node (built once: a plan checks hundreds of job specs at parse time)."""
    cached = _VALIDATORS.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _VALIDATORS[id(schema)] = (schema, jsonschema.Draft202012Validator({**schema, "$defs": root["$defs"]}))
    return cached[1]


def _validated(instance: dict, schema: dict, root: dict) -> dict:
    """A copy of `instance` checked against `schema` (finite numbers, then the schema), defaults filled in."""
    _check_finite(instance, [])
    instance = copy.deepcopy(instance)
    validator = _validator(schema, root)
    errors = sorted(
        validator.iter_errors(instance), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path)))
    )
    messages = [message for message in (_describe(error, root) for error in errors) if message]
    if messages:
        raise ConfigError(messages[0])
    _fill_defaults(instance, schema, root)
    return instance


JOB_SPECS = ("train_spec", "sample_spec", "trajectory_spec")  # the schema's `$defs` of one job's spec


def complete(kind: str, spec: dict) -> dict:
    """A job's spec (`kind`: one of JOB_SPECS) checked against the schema, every default filled in, and
    for a train spec d_ff (4 d_model when null) resolved: what the plan passes the job. ValueError naming
    the key (`spec key 'gamma': ...`)."""
    if not isinstance(spec, dict):
        raise ValueError("spec: must be a JSON object")
    root = _schema()
    try:
        completed = _validated(spec, root["$defs"][kind], root)
    except ConfigError as err:
        raise ValueError(str(err).replace("config key", "spec key", 1)) from None
    if kind == "train_spec":
        model = completed["model"]
        if model["d_ff"] is None:
            model["d_ff"] = 4 * model["d_model"]
        if model["d_model"] % model["n_head"]:
            raise ValueError(
                f"spec key 'model.d_model': {model['d_model']} is not divisible by model.n_head = {model['n_head']}"
            )
    return completed


def require_complete(kind: str, spec: dict) -> dict:
    """A job's spec as the job runs it: valid, and complete as the plan makes it (`complete`), since a job
    fills in no default itself; ValueError naming the first key it lacks or that the plan would change."""
    completed = complete(kind, spec)
    for key, planned, given in spec_differences(completed, spec):
        what = "missing" if given is ABSENT else f"{given!r}, where the plan gives {planned!r}"
        raise ValueError(f"spec key '{key}': {what} (a job's spec is complete: the plan fills in every default)")
    return spec


ABSENT = object()  # a key one side lacks


def spec_differences(planned: object, ran: object, key: str = "") -> list[tuple[str, object, object]]:
    """The keys (dotted) where two specs differ, with each side's value (ABSENT where a side lacks it)."""
    if isinstance(planned, dict) and isinstance(ran, dict):
        found = []
        for name in sorted(planned.keys() | ran.keys()):
            sub = f"{key}.{name}" if key else name
            found += spec_differences(planned.get(name, ABSENT), ran.get(name, ABSENT), sub)
        return found
    same = planned == ran and type(planned) is type(ran)
    return [] if same else [(key or "<spec>", planned, ran)]


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
        try:
            out = merged(out, {key: yaml.safe_load(value)})
        except yaml.YAMLError:
            raise ConfigError(f"--config {key}: not valid YAML: {value!r}") from None
    return out


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
