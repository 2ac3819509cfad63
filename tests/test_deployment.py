"""Deployment: conda pins match pyproject, the SLURM profile parses and carries job resources,
the rule graphs docs/usage.md shows are current."""

from __future__ import annotations

import re
import tomllib

import pytest
import yaml
from conftest import REPO, copy_workflow, run_snakemake
from depthwidth.plan import config
from depthwidth.plan import jobs as plan


def pyproject_dependencies() -> dict[str, str]:
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return dict(re.match(r"([A-Za-z0-9_.-]+)(.*)", d).groups() for d in deps)


def test_conda_environment_has_the_same_pins_as_pyproject():
    env = yaml.safe_load((REPO / "envs" / "depthwidth.yaml").read_text())
    pip = next(item["pip"] for item in env["dependencies"] if isinstance(item, dict))
    in_env = dict(re.match(r"([A-Za-z0-9_.-]+)(.*)", d).groups() for d in pip)
    engine = {"snakemake", "snakemake-executor-plugin-slurm"}  # run the workflow; no rule imports them
    expected = {name: spec for name, spec in pyproject_dependencies().items() if name not in engine}
    assert in_env == expected
    python = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert python == ">=3.11" and "python=3.11" in env["dependencies"]


def test_every_job_rule_has_a_conda_environment():
    result = run_snakemake("--lint", "text")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Specify a conda environment" not in result.stdout + result.stderr


def test_slurm_profile_parses_and_training_jobs_carry_resources():
    result = run_snakemake("--profile", "profiles/slurm", "-n", "--forceall", "--configfile", "config/paper.yaml")
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.split("\n\n")
    training = [b for b in blocks if b.lstrip().startswith("rule train_run:") or "\nrule train_run:" in b]
    runs = plan.from_config(config.read(REPO / "config/paper.yaml")).runs
    assert len(training) == len(runs)
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())["sweep"]
    seen = set()
    for block in training:
        job = runs[re.search(r"wildcards: run=(\S+)", block).group(1)]
        if job.tables == (plan.ENTROPY_TABLE,):
            continue
        resources = re.search(r"resources: (.*)", block).group(1)
        assert f"mem_mb={paper['mem_mb']}" in resources and f"runtime={paper['runtime']}" in resources
        # small runs share a GPU (one SLURM shard each, no whole GPU); large ones hold a whole GPU
        shared = "gpu=0, gres=shard:1" in resources
        assert shared != resources.endswith(f"gpu={paper['gpu']}"), resources
        seen.add(shared)
    assert seen == {True, False}


def test_the_workflow_profile_never_overrides_the_slurm_profile():
    # snakemake reads profiles/default after --profile profiles/slurm, and its keys win
    local, slurm = (
        yaml.safe_load((REPO / "profiles" / name / "config.yaml").read_text()) for name in ("default", "slurm")
    )
    clashes = {key: (local[key], slurm[key]) for key in local.keys() & slurm.keys() if local[key] != slurm[key]}
    assert not clashes, f"profiles/default would override profiles/slurm: {clashes}"
    assert "resources" not in local, "a local cap on resources (gpu) would hold SLURM's jobs back too"


def rule_edges(mermaid: str) -> set[tuple[str, str]]:
    """(upstream rule, downstream rule) pairs of a mermaid rule graph (node ids and order vary)."""
    names = dict(re.findall(r"(id\d+)\[(\w+)\]", mermaid))
    return {(names[a], names[b]) for a, b in re.findall(r"(id\d+) --> (id\d+)", mermaid)}


USAGE = REPO / "docs" / "usage.md"


def documented_graph(command: str) -> str:
    """The mermaid block that docs/usage.md shows right after naming `command` (in backticks)."""
    text = USAGE.read_text()
    after = text[text.index(f"`{command}`") :]
    block = after[after.index("```mermaid") :]
    return block[: block.index("```", 3)]


@pytest.mark.parametrize("configfile", ["config/config.yaml", "config/ci.yaml"])
def test_documented_rule_graph_is_current(configfile, tmp_path):
    # the default config's graph is asked for as a user would, without --configfile, in a fresh copy of the
    # workflow: where a scan's rounds have run, the graph also draws round 1 on round 0 (rate_scan -> rate_scan)
    options = [] if configfile == "config/config.yaml" else ["--configfile", configfile]
    command = " ".join(["snakemake --rulegraph mermaid-js", *options])
    result = run_snakemake("--rulegraph", "mermaid-js", *options, cwd=copy_workflow(tmp_path))
    current = rule_edges(result.stdout)
    assert current and rule_edges(documented_graph(command)) == current, (
        f"docs/usage.md's rule graph of {configfile} is stale: paste `{command}`"
    )
    # the default chooses each shape's rate by its scan's checkpoint jobs; ci trains at the recipe's rate
    assert (("train_run", "rate_scan") in current) == (configfile == "config/config.yaml")
