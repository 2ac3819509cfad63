# Shared by every stage: config validation, paths, and the package code each rule depends on.
import json
import sys
from pathlib import Path

from depthwidth.config import ConfigError, validate as validate_config

try:
    config.update(validate_config(config))
except ConfigError as err:
    sys.exit(f"Invalid config: {err}")

PACKAGE = Path(workflow.basedir) / "workflow" / "depthwidth"
CONDA_ENV = str(Path(workflow.basedir) / "envs" / "depthwidth.yaml")
# Jobs import the package from this checkout, installed or not (conda envs, cluster nodes).
shell.prefix("export PYTHONPATH='%s'${{PYTHONPATH:+:$PYTHONPATH}}; " % PACKAGE.parent)
DATA_DIR = f"results/data/{config['data']['name']}"


wildcard_constraints:
    corpus=r"[A-Za-z0-9_-]+",


def package_code(*modules):
    """The package modules a rule runs (so editing one reruns the rule), plus the CLI and I/O."""
    return [str(PACKAGE / f"{name}.py") for name in ("cli", "io", *modules)]


def as_json(obj):
    """A params value the CLI reads back; snakemake reruns the rule when it changes."""
    return json.dumps(obj, sort_keys=True)


def corpus_files(wildcards):
    """Local text files of a `text` corpus, so that editing one rebuilds the shards."""
    data = config["data"]
    if data["corpus"] != "text":
        return []
    files = []
    for entry in map(Path, data["paths"]):
        files += (
            sorted(map(str, entry.rglob("*.txt"))) if entry.is_dir() else [str(entry)]
        )
    return files
