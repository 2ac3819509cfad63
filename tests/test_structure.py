"""The package's structure as promises: the plan is torch-free, no module imports itself round a cycle, a
training job runs only the code its checkpoint digest covers, a changed default reruns exactly the jobs
it changes, two configs share one checkout without losing a file, and the report builds."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, package_env, run_snakemake
from depthwidth import columns, contracts
from depthwidth.cli import COMMANDS
from depthwidth.plan.config import read
from depthwidth.plan.jobs import from_config
from depthwidth.spec import complete

PACKAGE = REPO / "workflow" / "depthwidth"


def loaded_modules(code: str) -> set[str]:
    """The depthwidth, torch, numpy and pandas modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(m for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], env=package_env(), capture_output=True, text=True, check=True)
    return {
        m
        for m in json.loads(out.stdout.splitlines()[-1])
        if m.split(".")[0] in ("depthwidth", "torch", "numpy", "pandas")
    }


def test_planning_loads_no_torch_numpy_or_pandas():
    modules = loaded_modules(
        "from depthwidth.plan.config import read\nfrom depthwidth.plan.jobs import from_config\n"
        "from depthwidth.plan import runsheet\nfrom_config(read('config/config.yaml'))"
    )
    assert "depthwidth.plan.jobs" in modules
    assert not {m for m in modules if m.split(".")[0] in ("torch", "numpy", "pandas")}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle (as a path that comes back to its start) found by depth-first search."""
    found, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def package_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    # a package's __init__ is not an edge to its own modules (importing `a.b` runs `a` first, not a cycle)
    return {name: set(contracts.imported_modules(path)) - {name} for name, path in files.items()}


STAGES = ("data", "train", "shaped", "tables")  # the stages: DESIGN, "Stage code does not import plan/"


def package_of(module: str) -> str:
    """The top-level part of the package a module is in: `plan` for depthwidth.plan.jobs, `io` for depthwidth.io."""
    return module.split(".")[1] if "." in module else module


def package_level(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between the package's parts (its folders and top-level modules)."""
    parts: dict[str, set[str]] = {}
    for module, imported in graph.items():
        edges = parts.setdefault(package_of(module), set())
        edges |= {package_of(other) for other in imported} - {package_of(module)}
    for edges in list(parts.values()):
        for other in edges:
            parts.setdefault(other, set())
    return parts


def test_no_stage_imports_the_plan_and_the_packages_have_no_cycle():
    graph = package_level(package_graph())
    assert cycles(graph) == []
    for stage in STAGES:
        assert "plan" not in graph[stage], stage
    # the plan reaches into stages only where it must (the note of issue 39 says why each)
    assert {part for part in graph["plan"] if part in STAGES} == {"data", "train"}


def test_the_package_level_check_finds_a_planted_cycle_and_a_stage_that_imports_the_plan():
    graph = {"depthwidth.plan.jobs": {"depthwidth.train.loop"}, "depthwidth.train.loop": {"depthwidth.plan.config"}}
    parts = package_level(graph)
    assert parts == {"plan": {"train"}, "train": {"plan"}}
    assert cycles(parts) == [["plan", "train", "plan"]] and "plan" in parts["train"]


def test_every_rule_lists_the_code_of_the_command_it_runs():
    """Each rule's code input is package_code(<command>) of the very command its shell line runs, given in the
    rule or by the input function (`get_*`) it calls."""
    rules = REPO / "workflow" / "rules"
    functions = {
        match.group(1): match.group(2)
        for smk in rules.glob("*.smk")
        for match in re.finditer(r"\ndef (get_\w+)\((.*?)(?=\n(?:def|rule|checkpoint) |\Z)", smk.read_text(), re.S)
    }
    checked = 0
    for smk in sorted(rules.glob("*.smk")):
        for block in re.split(r"\n(?=(?:rule|checkpoint) \w+:)", smk.read_text())[1:]:
            ran = re.findall(r'"python -m depthwidth ([\w-]+) ', block)
            texts = [block, *(functions.get(name, "") for name in re.findall(r"\b(get_\w+)\b", block))]
            listed = [command for text in texts for command in re.findall(r'package_code\("([\w-]+)"', text)]
            assert listed == ran, (smk.name, block[:40], listed, ran)
            checked += bool(ran)
    assert checked >= 12  # every rule that runs a command (a renamed pattern would check nothing)


def test_every_registered_figure_takes_its_registry_inputs_by_name():
    """The figure command reads a figure's input names off its module's data() (it never imports the registry,
    so a title edit reruns one figure): the registry, which the plan reads, must name the same inputs."""
    import importlib
    import inspect

    from depthwidth.plots.registry import FIGURES

    for figure, entry in FIGURES.items():
        module = importlib.import_module(contracts.figure_module(figure))
        assert list(inspect.signature(module.data).parameters) == list(entry.inputs), figure
    figure_job = set(contracts.code_files(COMMANDS["figure"][0], contracts.figure_module("kaplan_fig6")))
    assert contracts.PACKAGE / "plots" / "registry.py" not in figure_job
    assert contracts.PACKAGE / "plots" / "kaplan_fig6.py" in figure_job


def test_a_module_imported_anywhere_is_code_of_the_job_that_imports_it(tmp_path):
    """contracts.code_files follows imports inside functions, `from a import b` (b a module) and the
    packages above a module; a module nothing imports is no one's code."""
    package = tmp_path / "depthwidth"
    for name, text in {
        "__init__.py": "",
        "io.py": "from depthwidth import __version__\n",
        "claims/__init__.py": "from depthwidth.claims import kaplan\n",
        "claims/kaplan.py": "def f():\n    from depthwidth.plots import sweep_common\n",
        "plots/__init__.py": "FIGURES = {}\n",
        "plots/sweep_common.py": "import depthwidth.io\n",
        "plots/unused.py": "",
        "shaped/__init__.py": "",
        "shaped/sde.py": "",
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    files = {p.relative_to(package).as_posix() for p in contracts.code_files("depthwidth.claims", root=package)}
    assert files == {
        "__init__.py", "io.py", "claims/__init__.py", "claims/kaplan.py", "plots/__init__.py", "plots/sweep_common.py"
    }  # fmt: skip
    kaplan = package / "claims" / "kaplan.py"
    kaplan.write_text(kaplan.read_text() + "from depthwidth.shaped import sde\n")  # planted
    files = {p.relative_to(package).as_posix() for p in contracts.code_files("depthwidth.claims", root=package)}
    assert {"shaped/__init__.py", "shaped/sde.py"} <= files and "plots/unused.py" not in files
    with pytest.raises(ValueError, match="depthwidth.nowhere: no module of the package"):
        contracts.code_files("depthwidth.nowhere", root=package)


def test_cycle_finder_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycles():
    graph = package_graph()
    assert {"depthwidth.plan.jobs", "depthwidth.benchmarks.steps", "depthwidth.contracts"} <= set(graph)
    assert cycles(graph) == []


@pytest.mark.parametrize("module", ["contracts.py", "columns.py"])
def test_the_contracts_import_nothing_of_the_package_or_beyond_the_standard_library(module):
    tree = ast.parse((PACKAGE / module).read_text())
    roots = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    roots |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert roots <= set(sys.stdlib_module_names) | {"__future__"}


def dispatch_modules() -> set[str]:
    """What the command line loads by itself: it dispatches to a command's module, never changes a number."""
    loaded = loaded_modules("import depthwidth.cli")
    return {m for m in loaded if m.startswith("depthwidth")} | {"depthwidth.__main__"}


def test_a_training_job_runs_only_the_code_its_checkpoint_digest_covers(slice_data, tmp_path):
    """The modules a whole training job loads (the spec check, the loop, the data, the outputs) are those its
    checkpoint digest covers (contracts.code_files of the training module), apart from the command line,
    which only dispatches; none of them is of plan/."""
    spec = complete(
        "train_spec",
        {
            "data": str(slice_data),
            "seed": 0,
            "model": {"vocab_size": 512, "n_ctx": 16, "n_layer": 1, "d_model": 16, "n_head": 2},
            "recipe": {"token_budget": 256, "batch_size": 2, "lr": 1e-3, "eval_interval": 4, "eval_batches": 1},
        },
    )
    code = (
        "import sys\nfrom depthwidth.cli import main\n"
        f"code = main(['train', '--spec-json', {json.dumps(json.dumps(spec))}, '--out', {str(tmp_path / 'run')!r}])\n"
        "assert code == 0"
    )
    loaded = {m for m in loaded_modules(code) if m.startswith("depthwidth")}
    covered = {module_name(path) for path in contracts.code_files(contracts.TRAINING_MODULE)}
    assert (tmp_path / "run" / "metrics.json").is_file()
    assert {"depthwidth.train.loop", "depthwidth.data.tokens", "depthwidth.shapes", "depthwidth.spec"} <= loaded
    assert loaded - dispatch_modules() <= covered, sorted(loaded - dispatch_modules() - covered)
    assert not {m for m in loaded if m.startswith("depthwidth.plan")}  # a stage never imports the plan


def test_a_simulation_job_runs_only_the_code_its_rule_lists(tmp_path):
    """Like a training job: a simulation job loads exactly the modules its rule lists as code input (its
    command's module and what that imports), apart from the command line."""
    spec = complete("sample_spec", {"source": "finite", "block": "both", "n": 8, "samples": 20})
    out = tmp_path / "sim.csv"
    argv = ["shaped-sim", "samples", "--spec-json", json.dumps(spec), "--out", str(out)]
    code = f"from depthwidth.cli import main\nassert main({argv!r}) == 0"
    loaded = {m for m in loaded_modules(code) if m.startswith("depthwidth")}
    listed = {module_name(path) for path in contracts.code_files(COMMANDS["shaped-sim"][0])}
    assert out.is_file() and "depthwidth.shaped.finite" in loaded
    assert loaded - dispatch_modules() <= listed, sorted(loaded - dispatch_modules() - listed)


# --- a changed default reruns exactly the jobs it changes ------------------------------------------------
def planned_jobs(work: Path, *options: str) -> dict[str, list[str]]:
    """What `snakemake -n` plans in `work` (ci config): rule -> its jobs' wildcards (or '' without any)."""
    result = run_snakemake("-n", "--configfile", "config/ci.yaml", *options, cwd=work, check=True)
    jobs: dict[str, list[str]] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule:
            wildcards = re.search(r"wildcards: (.*)", block)
            jobs.setdefault(rule.group(1), []).append(wildcards.group(1) if wildcards else "")
    return jobs


def edit_default(work: Path, path: list[str], value) -> None:
    """Set one default in the copy's schema (`path`: keys down to the key's definition)."""
    schema_file = work / "workflow" / "depthwidth" / "config.schema.yaml"
    schema = yaml.safe_load(schema_file.read_text())
    node = schema
    for key in path:
        node = node[key]
    node["default"] = value
    schema_file.write_text(yaml.safe_dump(schema, sort_keys=False))


def ci_plan():
    return from_config(read(REPO / "config" / "ci.yaml"))


def test_editing_a_default_reruns_exactly_the_jobs_it_changes(ci_build, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(ci_build, work, symlinks=True)
    assert planned_jobs(work) == {}  # built: nothing to do

    plan = ci_plan()
    entropy = sorted(plan.entropy_runs)
    assert len(entropy) == 6
    assert plan.config["sweep"]["recipe"]["checkpoint_interval"] == 50  # the sweep sets it, the shaped training not

    # the recipe's checkpoint_interval: only the runs that take its default (the shaped training) change, so
    # only they, their table, their figure and the claims rerun; the sweep and the simulations stay
    edit_default(work, ["$defs", "recipe", "properties", "checkpoint_interval"], 60)
    jobs = planned_jobs(work)
    trained = sorted(w.removeprefix("run=") for w in jobs.pop("train_run"))
    assert [t.rsplit("-", 1)[0] for t in trained] == [t.rsplit("-", 1)[0] for t in entropy]
    assert not set(trained) & set(plan.runs)  # new ids: the old spec's folder and checkpoint are never met
    assert sorted(jobs) == ["all", "claims", "decide", "figure", "shaped_entropy_table"]
    assert jobs["figure"] == jobs["decide"] == ["figure=shaped_entropy"]  # its decide job reads the entropy table
    edit_default(work, ["$defs", "recipe", "properties", "checkpoint_interval"], 100)  # back as it was
    assert planned_jobs(work) == {}

    # a simulation job's default: every simulation, the terminal table, the shaped figures, no training
    edit_default(work, ["$defs", "job", "properties", "blowup_norm"], 999.0)
    jobs = planned_jobs(work)
    assert "train_run" not in jobs
    assert len(jobs["shaped_simulation"]) == len(plan.simulations) == 11  # 2 blocks x (2 SDE steps + 3 widths) + 1
    assert sorted(jobs["figure"]) == [
        "figure=shaped_rank_collapse",
        "figure=shaped_sde_convergence",
        "figure=shaped_sde_density",
    ]
    assert jobs["decide"] == ["figure=shaped_sde_convergence"]  # the SDE row's decide job reads the terminal table


def test_a_planted_import_in_a_claims_module_makes_the_claims_job_list_that_file(ci_build, tmp_path):
    """With snakemake asked only whether a job's set of input files changed, a built ci plans nothing; once
    a claims module imports a module no rule ran before (inside a function), the jobs that run the claims' rules,
    and they alone, list that file: the claims job and every decide job."""
    work = tmp_path / "work"
    shutil.copytree(ci_build, work, symlinks=True)
    assert planned_jobs(work, "--rerun-triggers", "input") == {}
    kaplan = work / "workflow" / "depthwidth" / "claims" / "kaplan.py"
    kaplan.write_text(kaplan.read_text() + "\n\ndef _planted():\n    from depthwidth.benchmarks import sde  # noqa\n")
    decide = sorted(f"figure={figure}" for figure in ci_plan().growing_figures())
    planned = planned_jobs(work, "--rerun-triggers", "input")
    assert planned | {"decide": sorted(planned.get("decide", []))} == {"claims": [""], "decide": decide, "all": [""]}
    assert decide
    shutil.copy2(REPO / "workflow" / "depthwidth" / "claims" / "kaplan.py", kaplan)  # the import gone: as built
    assert planned_jobs(work, "--rerun-triggers", "input") == {}


# --- two configs in one checkout ---------------------------------------------------------------------------
def digests(root: Path, paths: list[str]) -> dict[str, str]:
    return {path: hashlib.sha256((root / path).read_bytes()).hexdigest() for path in paths}


def test_two_configs_that_share_shapes_but_not_the_corpus_keep_every_file(ci_build, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(ci_build, work, symlinks=True)
    first = ci_plan()
    before = digests(work, first.targets())

    other = yaml.safe_load((REPO / "config" / "ci.yaml").read_text())
    other["name"] = "ci-vocab384"
    other["data"]["vocab_size"] = 384  # another corpus (tokenizer), the same shapes, seeds and simulations
    for experiment in ("ffratio", "headdim", "lr_check", "literal"):  # the design and its baseline suffice
        del other["sweep"][experiment]
    # each at the smallest the schema allows (one N, two depths; two N): 3 runs to train, not 8, and still every
    # table, figure, decision and claim of the two, each built and checked
    other["sweep"]["design"] = {"n": [25000], "depths": [1, 2]}
    other["sweep"]["baseline"]["n"] = [25000, 50000]
    del other["shaped"]["training"]
    (work / "config" / "other.yaml").write_text(yaml.safe_dump(other))
    second = from_config(other)
    shared = set(second.runs) & set(first.runs)
    assert len(second.runs) == 3 and not shared  # runs of its own: never vacuous
    assert {r.rsplit("-", 1)[0] for r in second.runs} <= {r.rsplit("-", 1)[0] for r in first.runs}
    assert set(second.simulations) == set(first.simulations)  # identical specs: one file, read by both

    result = run_snakemake("--cores", "2", "--configfile", "config/other.yaml", cwd=work, check=True)
    assert "rule shaped_simulation" not in result.stdout + result.stderr  # the first config's are reused
    assert digests(work, first.targets()) == before  # nothing of the first config moved or was lost
    assert all((work / path).is_file() for path in second.targets())
    for config in ("config/ci.yaml", "config/other.yaml"):
        check = subprocess.run(
            [sys.executable, "-m", "depthwidth", "check", "results", "--configfile", config],
            cwd=work,
            env=package_env(),
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stdout + check.stderr


def test_the_report_builds_with_every_figure_and_the_claims(ci_build, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(ci_build, work, symlinks=True)
    plan = ci_plan()
    report = contracts.report_path(plan.name)
    run_snakemake("--configfile", "config/ci.yaml", "--report", report, cwd=work, check=True)
    html = (work / report).read_text(errors="replace")
    assert len(html) > 100_000
    for figure in plan.figures:
        assert f"{figure}.png" in html, figure
    assert "claims.csv" in html


@pytest.mark.parametrize("kind", ["train_spec", "sample_spec", "trajectory_spec"])
def test_every_planned_spec_is_complete(kind):
    plan = from_config(read(REPO / "config" / "config.yaml"))
    specs = (
        [job.spec for job in plan.runs.values()]
        if kind == "train_spec"
        else [job.spec for job in plan.simulations.values() if job.kind == kind]
    )
    assert specs and all(complete(kind, spec) == spec for spec in specs)


@pytest.mark.parametrize("name", contracts.SHARED_FOLDERS)
def test_a_config_may_not_be_named_after_a_shared_results_folder(name):
    from depthwidth.plan.config import ConfigError, validate

    config = read(REPO / "config" / "ci.yaml")
    with pytest.raises(ConfigError, match=f"config key 'name': '{name}' names a folder every config shares"):
        validate({**config, "name": name})
    validate({**config, "name": f"{name}2"})


def test_the_schemas_enums_are_the_contracts():
    """The schema (data, not code) names the attention kinds and the blocks again: held equal to contracts."""
    from depthwidth.spec import load_schema

    schema = load_schema()
    props = schema["properties"]
    spec = schema["$defs"]
    assert tuple(props["shaped"]["properties"]["training"]["properties"]["attentions"]["items"]["enum"]) == (
        contracts.ATTENTION_KINDS
    )
    assert (
        tuple(spec["train_spec"]["properties"]["model"]["properties"]["attention"]["enum"]) == contracts.ATTENTION_KINDS
    )
    assert tuple(props["shaped"]["properties"]["simulation"]["properties"]["blocks"]["items"]["enum"]) == columns.BLOCKS
    assert tuple(spec["sample_spec"]["properties"]["block"]["enum"]) == columns.BLOCKS
    assert tuple(spec["sample_spec"]["properties"]["attention"]["enum"]) == columns.SIMULATION_ATTENTIONS
