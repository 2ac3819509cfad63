"""The job spec's contract, below every stage: the package's JSON Schema (`config.schema.yaml`: every key of a
config and of each job's spec, its bounds and default), and the checks that fill a spec in or refuse it.

`complete(kind, spec)` is what the plan passes a job (every default filled in); `require_complete(kind, spec)` is
what a job accepts (a spec the plan would not change). Stages (data/, train/, shaped/, tables/) import this module,
never plan/; `plan.config.validate` checks a whole config with the same machinery and adds its cross-field rules.
Errors are `ConfigError`, one line naming the key.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml

from depthwidth.shapes import Shape

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
    if error.validator in ("oneOf", "anyOf"):  # jsonschema says only "not valid under any of the given schemas"
        forms = [_form(option) for option in error.validator_value]
        if all(forms):
            return f"config key '{_key(path)}': {error.instance!r} is none of the allowed forms: {' or '.join(forms)}"
    return f"config key '{_key(path)}': {error.message}"


def _form(schema: dict) -> str | None:
    """One allowed form of a value in words (`lr`: a number > 0 and <= 1000000, or 'kaplan'); None if not simple."""
    if "const" in schema:
        return repr(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(map(repr, schema["enum"]))
    kind = {"number": "a number", "integer": "an integer", "string": "a string", "null": "null"}.get(schema.get("type"))
    if kind is None:
        return None
    ops = (("exclusiveMinimum", ">"), ("minimum", ">="), ("exclusiveMaximum", "<"), ("maximum", "<="))
    bounds = [f"{op} {schema[key]:,}" for key, op in ops if key in schema]
    return kind + (" " + " and ".join(bounds) if bounds else "")


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


@functools.cache
def schema_of_package() -> dict:
    """The package's schema, read once per process (every job spec of a plan is checked against it)."""
    return load_schema()


_VALIDATORS: dict[int, tuple[dict, jsonschema.Draft202012Validator]] = {}


def _validator(schema: dict, root: dict) -> jsonschema.Draft202012Validator:
    """One validator per schema node (built once: a plan checks hundreds of job specs at parse time)."""
    cached = _VALIDATORS.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _VALIDATORS[id(schema)] = (schema, jsonschema.Draft202012Validator({**schema, "$defs": root["$defs"]}))
    return cached[1]


def validated(instance: dict, schema: dict, root: dict) -> dict:
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
    root = schema_of_package()
    try:
        completed = validated(spec, root["$defs"][kind], root)
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


# ---------------------------------------------------------------------------------------------
# A sweep's planned run, as the plan records it and its table reads it


@dataclass(frozen=True)
class Run:
    """One training run of a sweep: its shape, seed, the N it was chosen for, and its learning-rate factor."""

    experiment: str
    shape: Shape
    seed: int
    n_target: float | None = None
    lr_factor: float = 1.0  # x the recipe's learning rate (lr_check); 1 everywhere else

    @property
    def run_id(self) -> str:
        lr = "" if self.lr_factor == 1 else f"-lr{self.lr_factor:g}x"
        return f"{self.shape.run_id()}{lr}-s{self.seed}"


def run_plan(run: Run) -> dict:
    """A run as plain JSON (the table rule's params: what the table needs, nothing more)."""
    return {"shape": run.shape.to_dict(), "seed": run.seed, "n_target": run.n_target, "lr_factor": run.lr_factor}


def run_from_plan(experiment: str, plan_row: dict) -> Run:
    row = plan_row
    return Run(experiment, Shape(**row["shape"]), row["seed"], row["n_target"], row["lr_factor"])
