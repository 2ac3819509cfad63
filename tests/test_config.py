"""Config validation: the shipped configs pass; malformed ones stop before any job, naming the key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from conftest import REPO, run_snakemake
from depthwidth.contracts import ATTENTION_KINDS
from depthwidth.plan import config as cfg
from depthwidth.plan.jobs import from_config
from depthwidth.spec import complete, load_schema

CONFIGS = sorted((REPO / "config").glob("*.yaml"))


def base() -> dict:
    return yaml.safe_load((REPO / "config" / "ci.yaml").read_text())


def with_change(path: str, value) -> dict:
    """ci.yaml with the dotted key set to `value` (or deleted when value is DELETE)."""
    config = copy.deepcopy(base())
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return config


DELETE = object()

# (dotted key to change, new value, key the message must name, words it must contain)
MALFORMED = [
    ("bogus", 1, "bogus", "unknown key"),
    ("data.vocab", 512, "data.vocab", "unknown key"),
    ("name", DELETE, "name", "missing"),
    ("data.corpus", DELETE, "data.corpus", "missing"),
    ("data.corpus", "web", "data.corpus", "is not one of"),
    ("data.vocab_size", "big", "data.vocab_size", "is not of type 'integer'"),
    ("data.vocab_size", 100, "data.vocab_size", "less than the minimum"),
    ("data.val_fraction", 0, "data.val_fraction", "less than or equal to the minimum"),
    ("data.val_fraction", 1.5, "data.val_fraction", "greater than or equal to the maximum"),
    ("data.sources", [], "data.sources", "should be non-empty"),
    ("data.sources", ["sotu", "wiki"], "data.sources.1", "is not one of"),
    ("data.sources", ["kjv", "kjv"], "data.sources", "non-unique"),
    ("data.max_bytes_per_source", -5, "data.max_bytes_per_source", "less than the minimum"),
    ("data.name", "a/b", "data.name", "does not match"),
    ("seed", -1, "seed", "less than the minimum"),
    ("data.paths", ["corpus/"], "data.paths", "only used with corpus 'text'"),
    ("shaped.simulation.m", 20, "shaped.simulation.widths", "below the number of tokens"),
    ("shaped.simulation.T", 0.55, "shaped.simulation.widths", "not a whole number of layers"),
    ("sweep.design.n", [14000], "sweep.design", "no width reaches"),
    ("sweep.baseline.enabled", False, "sweep.baseline", "must be enabled"),
    ("shaped.training.attentions", ["standard", "linear"], "shaped.training.attentions.1", "is not one of"),
    (
        "sweep.recipe.lr_scale",
        {"ff_ratio": 0.5, "at": {"n_layer": 1, "d_model": 64, "ff_ratio": 0}},
        "sweep.recipe.lr_scale.at.ff_ratio",
        "less than or equal to the minimum",
    ),
    ("sweep.baseline.n", [25000, 25000], "sweep.baseline.n", "has non-unique elements"),
    # a trailing newline (Python's `$` matches before one) and a name too long for a file name (issue 36, item 7)
    ("name", "ci\n", "name", "does not match"),
    ("data.name", "english-ci\n", "data.name", "does not match"),
    ("name", "n" * 300, "name", "300 characters, longer than the maximum of 64"),
    ("data.name", "d" * 65, "data.name", "65 characters, longer than the maximum of 64"),
    # what YAML 1.1 reads as text (issue 36, item 9): the message says why, and how to write the number
    ("data.max_bytes_per_source", "1e13", "data.max_bytes_per_source", "reads 1e13 as text, not a number"),
    ("sweep.recipe.lr", "3e-4", "sweep.recipe.lr", "write 3.0e-4"),
]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_configs_are_valid(path):
    config = cfg.load(path)
    assert config["name"] == path.stem or path.name == "config.yaml"


def test_defaults_are_filled():
    config = cfg.validate({"name": "x", "data": {"name": "e", "corpus": "builtin"}})
    assert config["data"]["vocab_size"] == 4096 and config["data"]["val_fraction"] == 0.1
    assert config["seed"] == 0


@pytest.mark.parametrize("key,value,named,words", MALFORMED, ids=[m[0] + ":" + str(m[1])[:12] for m in MALFORMED])
def test_malformed_config_names_the_key(key, value, named, words):
    with pytest.raises(cfg.ConfigError) as info:
        from_config(with_change(key, value))
    message = str(info.value)
    assert f"'{named}'" in message and words in message, message
    assert "\n" not in message


def test_config_and_train_spec_accept_exactly_the_model_attention_kinds():
    schema = load_schema()
    in_spec = schema["$defs"]["train_spec"]["properties"]["model"]["properties"]["attention"]["enum"]
    training = schema["properties"]["shaped"]["properties"]["training"]["properties"]["attentions"]
    assert tuple(in_spec) == tuple(training["items"]["enum"]) == tuple(training["default"]) == ATTENTION_KINDS
    spec = {"data": "d", "seed": 0, "recipe": {"token_budget": 10, "batch_size": 1, "lr": 0.1}}
    spec["model"] = {"vocab_size": 9, "n_ctx": 4, "n_layer": 1, "d_model": 4, "n_head": 1, "attention": "temperature"}
    assert complete("train_spec", spec)["model"]["shaped"]["tau0"] == 1.0
    spec["model"]["attention"] = "linear"
    with pytest.raises(ValueError, match="spec key 'model.attention': 'linear' is not one of"):
        complete("train_spec", spec)


def test_cross_field_rules_name_their_key():
    text = with_change("data.corpus", "text")
    with pytest.raises(cfg.ConfigError, match="'data.paths': corpus 'text' needs"):
        cfg.validate(text)
    url = with_change("data.corpus", "url")
    url["data"]["url"] = "file:///tmp/x.zip"
    with pytest.raises(
        cfg.ConfigError, match="^config key 'data.checksum': corpus 'url' needs the download's checksum"
    ):
        cfg.validate(url)
    url["data"]["checksum"] = "sha256:" + "ab" * 31
    with pytest.raises(
        cfg.ConfigError, match="^config key 'data.checksum': .*a sha256 checksum has 64 hex digits, not 62$"
    ):
        cfg.validate(url)
    url["data"]["checksum"] = "crc32:abcd"
    with pytest.raises(cfg.ConfigError, match="^config key 'data.checksum': 'crc32:abcd': it must be \"md5:<hex>\""):
        cfg.validate(url)
    url["data"]["checksum"] = "md5:" + "ab" * 16  # the publisher's algorithm, whichever pooch knows
    assert cfg.validate(url)["data"]["members"] == []
    url["data"]["sha256"] = "ab" * 32  # the key before data.checksum: refused, naming its replacement
    with pytest.raises(
        cfg.ConfigError, match=f"^config key 'data.sha256': replaced by data.checksum, .*\"sha256:{'ab' * 32}\"$"
    ):
        cfg.validate(url)
    members = with_change("data.members", ["a/wiki.train.raw"])
    with pytest.raises(
        cfg.ConfigError, match="^config key 'data.members': only used with corpus 'url', not 'builtin'$"
    ):
        cfg.validate(members)


@pytest.mark.parametrize("key,value,named,words", MALFORMED[:12], ids=[m[0] for m in MALFORMED[:12]])
def test_snakemake_stops_on_malformed_config_before_any_job(tmp_path, key, value, named, words):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(with_change(key, value)))
    result = run_snakemake("-n", "--configfile", str(path))
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("Invalid config:")]
    assert len(lines) == 1 and f"'{named}'" in lines[0], result.stderr
    assert "Job stats" not in result.stdout


def test_unreadable_configs_are_named(tmp_path):
    with pytest.raises(cfg.ConfigError, match="nothere.yaml: config file not found"):
        cfg.load(tmp_path / "nothere.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("data: [unclosed\n")
    with pytest.raises(cfg.ConfigError, match="broken.yaml: not valid YAML"):
        cfg.load(broken)


def test_no_schema_pattern_ends_at_python_dollar_which_lets_a_trailing_newline_through():
    patterns = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                patterns.append(node["pattern"])
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(load_schema())
    assert len(patterns) >= 3 and not [p for p in patterns if "$" in p], patterns
    config = base()
    config["name"] = "a" * 64  # the longest name the schema takes
    assert from_config(config).name == "a" * 64


def test_a_number_yaml_reads_as_text_is_named_with_how_to_write_it(tmp_path):
    path = tmp_path / "big.yaml"
    text = (
        (REPO / "config" / "ci.yaml").read_text().replace("max_bytes_per_source: 400000", "max_bytes_per_source: 1e13")
    )
    path.write_text(text)
    with pytest.raises(cfg.ConfigError) as info:
        cfg.validate(cfg.read(path))
    assert str(info.value) == (
        "config key 'data.max_bytes_per_source': '1e13' is not of type 'integer', 'null': YAML 1.1 reads 1e13 as "
        "text, not a number (its exponent form needs a dot and a signed exponent): write 1.0e+13 or 10000000000000"
    )
    path.write_text(text.replace("1e13", "1.0e+13"))
    assert cfg.validate(cfg.read(path))["data"]["max_bytes_per_source"] == 1e13


def test_check_takes_config_overrides_and_no_command_takes_an_abbreviated_option(tmp_path, capsys):
    """Issue 55, case 12: `check --config` was argparse's "ambiguous option" (--configfile or --config-json)."""
    from depthwidth.cli import main

    (tmp_path / "results" / "runs").mkdir(parents=True)
    config = str(REPO / "config" / "ci.yaml")
    assert main(["check", str(tmp_path / "results"), "--configfile", config, "--config", "seed=1"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("checked ") and "of config ci: " in out.splitlines()[0] and err == ""
    with pytest.raises(SystemExit):  # --no-calib is no option: abbreviations are never read as one
        main(["plan", "--configfile", config, "--no-calib"])
    assert "unrecognized arguments: --no-calib" in capsys.readouterr().err


@pytest.mark.parametrize(
    "pair, form",
    [("sweep.seeds=[0, 1]", "sweep='{seeds: [0, 1]}'"), ("sweep:design.n=[1e4]", "sweep='{design: {n: [1e4]}}'")],
)
def test_a_dotted_config_override_is_one_line_that_shows_the_nested_form(capsys, pair, form):
    """Issue 55, case 12: a dotted `--config a.b=1`; snakemake itself fails on it with a traceback before it reads
    the Snakefile (snakemake/snakemake#3907), the package's commands say what works for both."""
    from depthwidth.cli import main

    assert main(["plan", "--configfile", str(REPO / "config" / "ci.yaml"), "--no-calibration", "--config", pair]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"depthwidth plan: error: --config {pair}: KEY is a top-level key, and a nested one is given as " \
        f"YAML: {form}"  # fmt: skip


# Issue 55, case 9: sizes the schema allows that no run can train here ended in tracebacks (`plan` and `train`
# allocating 51.5 GB, the tokenizer trainer aborting at 283 GB, `plan` saying `high <= 0`)
TOO_BIG = [
    ("shaped.training.model.d_model", 65536, "shaped.training.model.d_model"),
    ("data.vocab_size", 4294967296, "data.vocab_size"),
    ("sweep.recipe.n_ctx", 1048576, "sweep.recipe.n_ctx"),
]


@pytest.mark.parametrize("key, value, named", TOO_BIG, ids=[t[0] for t in TOO_BIG])
def test_a_config_this_machine_cannot_hold_is_refused_by_validate_config_and_plan(tmp_path, capsys, key, value, named):
    from depthwidth.cli import main

    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump({**with_change(key, value), "name": "big"}))
    for command in (["validate-config", str(path)], ["plan", "--configfile", str(path)]):
        assert main(command) == 1  # `plan` refuses before its calibration builds any model
        out, err = capsys.readouterr()
        (line,) = err.splitlines()
        assert line.startswith(f"depthwidth {command[0]}: error: config key '{named}': its run ") and out == ""
        assert " needs at least " in line and "more than this machine's " in line and "iB" in line


def test_snakemake_refuses_a_config_this_machine_cannot_hold_before_any_job(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump({**with_change("shaped.training.model.d_model", 65536), "name": "big"}))
    result = run_snakemake("-n", "--configfile", str(path))
    lines = [line for line in result.stderr.splitlines() if line.startswith("Invalid config:")]
    assert result.returncode != 0 and "Job stats" not in result.stdout
    assert len(lines) == 1 and lines[0].startswith("Invalid config: config key 'shaped.training.model.d_model': ")


def test_the_memory_a_run_needs_is_a_bound_every_shipped_config_fits():
    from depthwidth.plan.validate import fits_problem, run_memory

    spec = from_config(base()).runs[next(iter(from_config(base()).runs))].spec
    parts = run_memory(spec)
    m = spec["model"]
    assert parts["logits"] == 2 * 4 * spec["recipe"]["batch_size"] * m["n_ctx"] * m["vocab_size"]
    assert parts["attention"] == 0  # standard attention forms no T x T matrix
    for path in CONFIGS:
        assert fits_problem(from_config(cfg.read(path)), available=16 << 30) is None, path  # 16 GiB is plenty
    assert fits_problem(from_config(base()), available=1 << 20).startswith("config key ")  # 1 MiB is not


def test_a_second_config_file_of_one_name_is_refused_by_the_workflow_and_validate_config(tmp_path, capsys, monkeypatch):
    """Issue 55, case 6: two config files with one name wrote results/<name>/ over each other."""
    from conftest import copy_workflow
    from depthwidth.cli import main

    work = copy_workflow(tmp_path / "work")
    twin = base()
    twin["sweep"]["seeds"] = [0, 1]
    (work / "config" / "twin.yaml").write_text(yaml.safe_dump(twin))
    said = (
        "config key 'name': 'ci' is the name of config/ci.yaml too, which plans other results: the two would write "
        "results/ci/ over each other: give each config its own name"
    )
    result = run_snakemake("-n", "--configfile", "config/twin.yaml", cwd=work)
    assert result.returncode != 0 and f"Invalid config: {said}" in result.stderr.splitlines()
    monkeypatch.chdir(work)
    assert main(["validate-config", "config/twin.yaml"]) == 1
    assert capsys.readouterr().err.splitlines() == [f"depthwidth validate-config: error: {said}"]
    assert main(["validate-config", "config/ci.yaml"]) == 1  # each of the two names the other
    assert main(["validate-config", "config/levine.yaml"]) == 0
    # a variant that plans the same files under the name (other resources: ci-cluster.yaml) writes the same results
    twin = base()
    twin["sweep"]["threads"] = 2
    (work / "config" / "twin.yaml").write_text(yaml.safe_dump(twin))
    assert main(["validate-config", "config/twin.yaml"]) == 0 and main(["validate-config", "config/ci.yaml"]) == 0


def test_a_config_of_thousands_of_runs_says_its_cost_before_snakemake_builds_its_graph(tmp_path, capsys):
    """Issue 55, case 12: 1000 seeds (18,006 runs) left `snakemake -n` building its DAG for more than 300 s, with
    no word, while validate-config answered at once. The cost is said first, in one line, past RUNS_NOTED runs
    (here 120 seeds, 2,166 runs: a tenth of the planning time of 1000 seeds)."""
    from depthwidth.cli import main
    from depthwidth.plan.validate import RUNS_NOTED

    config = {**base(), "name": "many"}
    config["sweep"]["seeds"] = list(range(120))
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["validate-config", str(path)]) == 0
    note = capsys.readouterr().out.splitlines()[1]
    assert note.startswith("config many plans 2,166 training runs (") and " tokens) " in note and RUNS_NOTED < 2166
    assert main(["validate-config", str(REPO / "config" / "config.yaml")]) == 0  # under RUNS_NOTED: nothing to say
    assert len(capsys.readouterr().out.splitlines()) == 1
    result = run_snakemake("--list-rules", "--configfile", str(path))  # parses the workflow, builds no DAG
    assert result.returncode == 0 and f"depthwidth: {note}" in result.stderr.splitlines()


@pytest.mark.parametrize(
    "pair",
    ["sweep={gpu: 1}", "sweep={seeds: [0, 1, 2]}", "recipe={lr: 0.001, precision: bf16}", "name=x", "seed=1",
     "data={paths: [a b.txt], max_chars: null}", "shaped={trainable: true}"],
)  # fmt: skip
def test_snakemakes_overrides_are_typed_as_plans(pair):
    """A nested --config value reached the schema as text in snakemake (YAML's BaseLoader): '1' is not an integer."""
    from snakemake.cli import parse_config

    assert cfg.yaml_typed(parse_config([pair])) == cfg.overrides([pair])


@pytest.mark.parametrize("pair", ["seed=1", "sweep={gpu: 1}"])
def test_an_override_without_a_configfile_applies_to_the_default_config(pair):
    """`snakemake -n --config seed=1` failed with "config key 'name': missing": any --config emptied the default.
    Every job planned (--forceall), so that a checkout whose default is built plans its claims too."""
    result = run_snakemake("-n", "--forceall", "--config", pair)
    assert result.returncode == 0, result.stderr
    assert "results/default/claims.csv" in result.stdout


def text_corpus_config(tmp_path, paths) -> Path:
    """config/ci.yaml on a `text` corpus of `paths`."""
    config = yaml.safe_load((REPO / "config" / "ci.yaml").read_text())
    config["data"] = {"name": "mytext", "corpus": "text", "paths": [str(p) for p in paths], "vocab_size": 512,
                      "val_fraction": 0.25}  # fmt: skip
    path = tmp_path / "text.yaml"
    path.write_text(yaml.safe_dump({**config, "name": "text"}))
    return path


@pytest.mark.parametrize("entry, says", [("nothere.txt", "no such file or folder"),
                                         ("empty", "a folder with no *.txt file in it")])  # fmt: skip
def test_a_text_corpus_that_is_not_there_is_one_line_from_validate_config_and_snakemake(tmp_path, capsys, entry, says):
    """validate-config called such a config valid; snakemake said it in a 26-line MissingInputException."""
    from depthwidth.cli import main

    (tmp_path / "empty").mkdir()
    path = text_corpus_config(tmp_path, [tmp_path / entry])
    assert main(["validate-config", str(path)]) == 1
    out, err = capsys.readouterr()
    assert err == f"depthwidth validate-config: error: data.paths: {tmp_path / entry}: {says}\n" and out == ""
    result = run_snakemake("-n", "--configfile", str(path))
    lines = [line for line in result.stderr.splitlines() if "Invalid config" in line]
    assert result.returncode != 0 and lines == [f"Invalid config: data.paths: {tmp_path / entry}: {says}"]
    assert "MissingInputException" not in result.stderr + result.stdout


def test_a_value_of_none_of_a_keys_forms_names_each_form(tmp_path, capsys):
    """`lr: fast` said only "'fast' is not valid under any of the given schemas"."""
    from depthwidth.cli import main

    path = tmp_path / "fast.yaml"
    path.write_text(yaml.safe_dump(with_change("sweep.recipe.lr", "fast")))
    assert main(["validate-config", str(path)]) == 1
    assert capsys.readouterr().err == (
        "depthwidth validate-config: error: config key 'sweep.recipe.lr': 'fast' is none of the allowed forms: "
        "a number > 0 and <= 1,000,000 or 'kaplan'\n"
    )
