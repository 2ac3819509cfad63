"""The plan: one object says every run, simulation, table and figure a config produces; the run sheet."""

from __future__ import annotations

import argparse
import copy
import json
import math
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from conftest import REPO, package_env
from depthwidth import contracts, shapes
from depthwidth.plan import config as cfg
from depthwidth.plan import jobs as plan
from depthwidth.plan import runsheet
from depthwidth.plots.registry import FIGURES
from depthwidth.shaped import simulate as shaped_sim
from depthwidth.spec import complete
from depthwidth.train import model
from depthwidth.train.loop import validate_spec

CONFIGS = sorted((REPO / "config").glob("**/*.yaml"))  # config/protocol's measurements too


def raw(name: str = "ci") -> dict:
    return yaml.safe_load((REPO / "config" / f"{name}.yaml").read_text())


def without_grid(config: dict) -> dict:
    """`config` with each shape at the rule's rate (no sweep.lr_grid): one run per planned id."""
    config["sweep"].pop("lr_grid", None)
    return config


def run_named(p: plan.Plan, name: str) -> plan.TrainJob:
    """The planned run whose readable name (its id before the spec's digest) is `name`."""
    (job,) = (job for run_id, job in p.runs.items() if run_id.rsplit("-", 1)[0] == name)
    return job


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_planned_job_spec_is_complete_and_passes_its_command_schema(path):
    p = plan.from_config(cfg.read(path))
    for run_id, job in {**p.runs, **p.candidates}.items():  # a learning-rate scan's too
        # complete: the job fills in nothing, so the plan's spec (the rule's params) is exactly what runs
        assert complete("train_spec", job.spec) == job.spec, run_id
        assert isinstance(job.spec["recipe"]["lr"], int | float) and job.spec["model"]["d_ff"] is not None
        assert validate_spec(job.spec)["seed"] == job.spec["seed"]
        # the id ends in the spec's digest, and the folder and checkpoint follow the id
        assert run_id == job.run_id and run_id.endswith(f"-{contracts.digest(job.spec)}")
        assert job.folder == contracts.run_dir(run_id) and job.checkpoint_dir == f"{job.folder}.ckpt"
    for sim_id, job in p.simulations.items():
        assert complete(job.kind, job.spec) == job.spec, sim_id
        checked = shaped_sim.sample_spec(job.spec) if job.command == "samples" else shaped_sim.trajectory_spec(job.spec)
        assert checked.seed == p.config["seed"]
        assert sim_id == job.id and sim_id.endswith(f"-{contracts.digest(job.spec)}")
        assert job.output == contracts.simulation_path(sim_id)
    assert len(set(job.folder for job in p.runs.values())) == len(p.runs)
    assert len(set(job.output for job in p.simulations.values())) == len(p.simulations)


def test_a_job_refuses_an_incomplete_spec_naming_the_missing_key():
    job = next(iter(plan.from_config(raw()).runs.values()))
    incomplete = copy.deepcopy(job.spec)
    del incomplete["recipe"]["beta1"]
    with pytest.raises(ValueError) as info:
        validate_spec(incomplete)
    message = str(info.value)
    assert "'recipe.beta1'" in message and "missing" in message and "\n" not in message, message
    sim = plan.from_config(raw()).trajectory
    incomplete = {key: value for key, value in sim.spec.items() if key != "points"}
    with pytest.raises(ValueError, match="^spec key 'points': missing"):
        shaped_sim.trajectory_spec(incomplete)


def test_a_spec_two_experiments_plan_is_trained_once_and_read_by_both():
    p = plan.from_config(without_grid(raw("config")))
    shared = [job for job in p.runs.values() if len(job.tables) > 1]
    assert shared, "the default sweep has shapes that two experiments plan"
    for job in shared:
        for table in job.tables:
            assert job.run_id in p.table_runs(table)
    planned = sum(len(runs) for runs in p.sweep.values()) + len(p.entropy_runs)
    assert len(p.runs) == planned - sum(len(job.tables) - 1 for job in shared)


def test_each_attention_kind_rate_and_seed_is_a_run_and_the_control_leaves_the_others_as_they_were():
    config = raw()
    training = config["shaped"]["training"]
    training.update(attentions=["standard", "shaped", "temperature"], seeds=[0, 1], shaped={"tau0": 0.5})
    p = plan.from_config(config)
    runs = p.runs
    with_control = {rid: runs[rid] for rid in p.entropy_runs}
    kinds = {
        (job.spec["model"]["attention"], job.spec["recipe"]["lr"], job.spec["seed"]) for job in with_control.values()
    }
    assert len(with_control) == len(kinds) == 3 * len(training["learning_rates"]) * 2
    default_shaped = complete("train_spec", {**job_stub(), "model": {**job_stub()["model"]}})["model"]["shaped"]
    for job in with_control.values():
        shaped = job.spec["model"]["shaped"]
        if job.spec["model"]["attention"] == "standard":
            assert shaped == default_shaped  # standard runs ignore the shaped setting: the schema's default, always
        else:
            assert shaped["tau0"] == 0.5  # the control's tau is shaped's
    training["attentions"] = ["standard", "shaped"]
    without = plan.from_config(config)
    assert {rid: runs[rid].spec for rid in without.entropy_runs} == {
        rid: without.runs[rid].spec for rid in without.entropy_runs
    }  # same ids, same specs: cached standard and shaped runs stay valid


def job_stub() -> dict:
    """A minimal train spec (before the schema's defaults)."""
    model = {"vocab_size": 9, "n_ctx": 4, "n_layer": 1, "d_model": 4, "n_head": 1}
    return {"data": "d", "seed": 0, "model": model, "recipe": {"token_budget": 10, "batch_size": 1, "lr": 0.1}}


def test_two_specs_under_one_name_get_two_ids_and_one_spec_planned_twice_is_one_run():
    runs = {}
    first = plan._add_run(runs, "x", {"seed": 0}, {"threads": 1}, "sweep_design")
    again = plan._add_run(runs, "x", {"seed": 0}, {"threads": 2}, "sweep_baseline")
    assert first == again == f"x-{contracts.digest({'seed': 0})}"
    assert runs[first].tables == ("sweep_design", "sweep_baseline") and runs[first].resources == {"threads": 1}
    other = plan._add_run(runs, "x", {"seed": 1}, {"threads": 1}, "sweep_baseline")
    assert other != first and other == f"x-{contracts.digest({'seed': 1})}"
    assert runs[other].spec == {"seed": 1} and runs[first].spec == {"seed": 0}  # neither overwrites the other
    assert runs[other].tables == ("sweep_baseline",) and len(runs) == 2


def test_figures_are_planned_only_when_their_tables_are():
    config = raw()
    config["sweep"]["lr_check"]["enabled"] = False
    p = plan.from_config(config)
    lr_figures = {f for f, figure in FIGURES.items() if "sweep_lr_check" in figure.inputs.values()}
    assert lr_figures and not lr_figures & set(p.figures)
    assert set(p.figures) == {f for f, figure in FIGURES.items() if set(figure.inputs.values()) <= set(p.tables)}
    for figure in p.figures.values():
        assert set(figure.inputs) == set(FIGURES[figure.id].inputs)


def test_targets_name_every_run_output_figure_and_the_claims():
    p = plan.from_config(raw())
    targets = set(p.targets())
    for job in p.runs.values():
        assert {f"{job.folder}/{name}" for name in contracts.RUN_FILES} <= targets
        assert job.folder.startswith("results/runs/")
    for job in p.simulations.values():
        assert job.output in targets and job.output.startswith("results/simulations/")
    figures = {contracts.figure_path(p.name, f, suffix) for f in p.figures for suffix in contracts.FIGURE_SUFFIXES}
    assert figures <= targets and {f"results/{p.name}/figures/{f}.png" for f in p.figures} <= targets
    assert set(contracts.claims_files(p.name)) <= targets and f"results/{p.name}/claims.csv" in targets
    assert {contracts.caption_path(p.name, f) for f in p.figures} <= targets
    assert set(p.data_files()) <= targets


COUNTER = """
import atexit, sys
import depthwidth.plan.jobs
calls = {"plan": 0, "sweep": 0}
def counted(name, function):
    def wrapper(*args, **kwargs):
        calls[name] += 1
        return function(*args, **kwargs)
    return wrapper
depthwidth.plan.jobs.build = counted("plan", depthwidth.plan.jobs.build)
depthwidth.plan.jobs.plan_sweep = counted("sweep", depthwidth.plan.jobs.plan_sweep)
atexit.register(lambda: sys.stderr.write(f"PLANNED {calls['plan']} {calls['sweep']}\\n"))
"""


def test_the_plan_is_computed_once_per_parse(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(COUNTER)
    env = package_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", "config/ci.yaml"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "PLANNED 1 1" in result.stderr, result.stderr[-500:]


# ---------------------------------------------------------------- the run sheet


def test_run_flops_count_training_and_evaluation():
    spec = run_named(plan.from_config(raw()), "L2-d46-h2-f184-s0").spec
    per_token, total = runsheet.run_flops(spec)
    assert per_token == model.flops_per_token(validate_spec(spec)["model"])["matmul"]
    r = spec["recipe"]
    tokens_per_step = r["batch_size"] * spec["model"]["n_ctx"]
    steps = math.ceil(r["token_budget"] / tokens_per_step)
    train = per_token * steps * tokens_per_step
    assert train < total < train * 1.5  # evaluation forwards add a fraction
    # the final evaluation: forwards (1/3 of a training token's FLOPs) over every whole window of the split
    n_ctx = spec["model"]["n_ctx"]
    windows = (10_000 - n_ctx + n_ctx - 1) // n_ctx  # starts 0, n_ctx, ... below 10_000 - n_ctx
    assert runsheet.run_flops(spec, val_tokens=10_000)[1] - total == pytest.approx(per_token / 3 * windows * n_ctx)


def test_run_sheet_rows_and_totals():
    p = plan.from_config(raw())
    sheet = runsheet.sheet(p, rate=lambda per_token, job: 1e9)
    assert list(sheet.columns) == runsheet.SHEET_COLUMNS and len(sheet) == len(p.runs)
    row = sheet.set_index("run").loc[run_named(p, "L2-d46-h2-f184-s0").run_id]
    assert row["tokens_per_param"] == pytest.approx(row["tokens"] / row["n_nonembedding"])
    assert row["est_seconds"] == pytest.approx(row["flops"] / 1e9)
    with_startup = runsheet.sheet(p, rate=lambda per_token, job: 1e9, startup=2.0)
    assert (with_startup["est_seconds"] - sheet["est_seconds"]).round(9).eq(2.0).all()
    totals = runsheet.totals(p, sheet).set_index("table")
    assert totals.loc["all (each run once)", "runs"] == len(p.runs)
    assert totals.loc["sweep_design", "runs"] == len(p.sweep["design"])


def test_the_sheet_by_role_splits_every_priced_run_once_the_scouts_by_their_seed():
    """`plan` says what choosing the rates costs beside what the rows cost: every priced run in one role, the scouts
    exactly the runs at a scan's reserved seed, the shaped training its entropy runs, the block's runs apart."""
    p = plan.from_config(raw("config"))
    sheet = runsheet.sheet(p, rate=lambda per_token, job: 1e9)
    by = runsheet.roles(p, sheet).set_index("role")
    assert list(by.index) == list(runsheet.ROLES) and by["runs"].sum() == len(sheet)
    assert by["share"].sum() == pytest.approx(1) and by["est_job_hours"].sum() == pytest.approx(
        sheet["est_seconds"].sum() / 3600
    )
    seeds = {job.spec["seed"] for run_id, job in p.priced_runs().items() if run_id in runsheet.scouts(p)}
    assert seeds == {scan.scout_seed for scan in p.scans.values()} and seeds.isdisjoint(p.config["sweep"]["seeds"])
    scout_rows = sheet[sheet["run"].isin(runsheet.scouts(p))]
    assert by.loc["scouts", "runs"] == len(scout_rows) > 0
    checks = [rid for rid in sheet["run"] if {t for t in p.job(rid).tables} == {contracts.sweep_table("lr_check")}]
    assert by.loc["rate check", "runs"] == len(set(p.sweep["lr_check"]) & set(checks)) == len(checks) > 0
    assert by.loc["shaped training", "runs"] == len(p.entropy_runs) > 0
    # the block's own scans: a confound whose shape is a row's (one head of 8 is one head of 8) shares the row's scan
    scans = {scan for e in p.confounds for scan in p.experiment_scans(e)}
    scans -= {scan for e in p.sweep if e not in p.confounds for scan in p.experiment_scans(e)}
    block = {rid for sid in scans for (_, seed), rid in p.scans[sid].runs.items() if seed != p.scans[sid].scout_seed}
    assert by.loc["sensitivity block", "runs"] == len(block & set(sheet["run"])) > 0
    ci = plan.from_config(raw("ci"))  # no scans, no block: only the roles it has, shares of its FLOPs
    shares = runsheet.roles(ci, runsheet.sheet(ci)).set_index("role")
    assert list(shares.index) == ["rate check", "row seeds", "shaped training"]
    assert shares["share"].sum() == pytest.approx(1)
    gpu = raw("ci")
    gpu["shaped"]["training"]["gpu"] = 1  # a whole GPU a shaped run, the sweep's runs four to a GPU
    gpu["sweep"] |= {"gpu": 1, "runs_per_gpu": 4}
    g = plan.from_config(gpu)
    held = runsheet.roles(g, runsheet.sheet(g, gpu_flops=1e12)).set_index("role")
    hours = held["est_job_hours"]
    assert held["share"]["row seeds"] == pytest.approx(hours["row seeds"] / 4 / (hours.sum() - 0.75 * hours[:2].sum()))


def test_a_run_is_done_only_when_its_metrics_record_this_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    job = run_named(plan.from_config(raw()), "L2-d46-h2-f184-s0")
    assert not runsheet.done(job)
    folder = tmp_path / job.folder
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"spec": validate_spec(job.spec)}))
    assert runsheet.done(job)
    other = copy.deepcopy(validate_spec(job.spec))
    other["recipe"]["token_budget"] += 1  # a folder whose metrics.json another spec wrote
    (folder / "metrics.json").write_text(json.dumps({"spec": other}))
    assert not runsheet.done(job)


def test_gpu_configs_are_estimated_in_gpu_hours():
    p = plan.from_config(raw("paper"))
    assert all(job.resources["gpu"] for job in p.runs.values())
    sheet = runsheet.sheet(p, rate=None, gpu_flops=1e14).set_index("run")
    # a run that shares its GPU with K - 1 others gets 1/K of the GPU's rate, so takes K times longer
    share = {run: p.runs[run].resources["runs_per_gpu"] if p.runs[run].scheduler["gres"] else 1 for run in sheet.index}
    assert sheet["est_seconds"].to_numpy() == pytest.approx((sheet["flops"] * pd.Series(share) / 1e14).to_numpy())
    # sharing changes wall, not GPU-hours: each run holds 1/K of the GPU for its K-fold time
    assert sheet["held_seconds"].sum() == pytest.approx(sheet["flops"].sum() / 1e14)


def test_small_runs_share_a_gpu_as_shards_and_large_runs_get_a_whole_one():
    config = raw("paper")
    config["sweep"].update(gpu=1, runs_per_gpu=4, runs_per_gpu_max_n=2.0e6)
    p = plan.from_config(config)
    sweep = [job for job in p.runs.values() if job.tables[0].startswith("sweep_")]
    for job in sweep:
        m = job.spec["model"]
        n = shapes.nonembedding(m["n_layer"], m["d_model"], m["d_ff"])
        expected = {"gpu": 0, "gres": "shard:1"} if n <= 2.0e6 else {"gpu": 1, "gres": None}
        assert job.scheduler == expected, (job.run_id, n)
    shared = [job for job in sweep if job.scheduler["gres"]]
    assert 0 < len(shared) < len(sweep)
    assert all(job.resources["runs_per_gpu"] == 4 for job in shared)
    # the shaped training block keeps its own setting: a whole GPU per run
    entropy = [job for job in p.runs.values() if job.tables == (plan.ENTROPY_TABLE,)]
    assert entropy and all(job.scheduler == {"gpu": 1, "gres": None} for job in entropy)
    cpu = plan.from_config(raw("ci"))
    assert all(job.scheduler == {"gpu": 0, "gres": None} for job in cpu.runs.values())


@pytest.mark.parametrize("block", ["sweep", "shaped.training"])
def test_sharing_a_gpu_needs_runs_that_ask_for_one(block):
    config = raw("ci")
    target = config["sweep"] if block == "sweep" else config["shaped"]["training"]
    target.update(runs_per_gpu=4)  # gpu: 0 (the ci default)
    with pytest.raises(cfg.ConfigError, match=rf"'{block}.runs_per_gpu': 4 runs can share a GPU only when"):
        cfg.validate(config)
    target.update(gpu=2)
    with pytest.raises(cfg.ConfigError, match="not gpu: 2"):
        cfg.validate(config)
    target.update(gpu=1)
    assert cfg.validate(config)


def test_each_run_takes_its_own_shapes_calibrated_rate():
    from depthwidth.benchmarks.sweep import shape_key

    p = plan.from_config(raw("ci"))
    keys = sorted({shape_key(job.spec) for job in p.runs.values()})
    rates = {key: 1e9 * (i + 1) for i, key in enumerate(keys)}
    sheet = runsheet.sheet(p, rate=runsheet.shape_rate(rates)).set_index("run")
    for run_id, job in p.runs.items():
        assert sheet.loc[run_id, "est_seconds"] == pytest.approx(
            sheet.loc[run_id, "flops"] / rates[shape_key(job.spec)]
        )


def test_scale_note_states_the_learning_rate_rule():
    config = without_grid(raw("config"))
    assert "lr Kaplan's LR(N) x (L/1)^0.25 x (d/64)^-1 x ((d_ff/d)/4)^0.5," in plan.from_config(config).scale_note()
    config["sweep"]["recipe"]["lr"] = 0.002
    config["sweep"]["recipe"]["lr_scale"] = {"d_model": -1.5, "at": {"n_layer": 1, "d_model": 32}}
    assert "lr 0.002 x (d/32)^-1.5," in plan.from_config(config).scale_note()
    del config["sweep"]["recipe"]["lr_scale"]
    assert "lr 0.002, fp32, seeds" in plan.from_config(config).scale_note()


def test_scale_note_states_the_precision_and_a_learning_rate_scan():
    config = raw("config")
    config["sweep"]["recipe"]["precision"] = "bf16"
    config["sweep"]["lr_grid"] = {"factors": [1, 2, 4]}
    note = plan.from_config(config).scale_note()
    assert "lr each shape's best of its scan (sweep.lr_grid) around Kaplan's LR(N) x" in note
    assert "((d_ff/d)/4)^0.5, bf16, seeds [0, 1, 2]" in note


def test_calibration_times_real_steps_of_every_shape_side_by_side():
    from depthwidth.benchmarks.sweep import shape_key

    config = raw("ci")
    config["sweep"]["baseline"]["n"] = [25000, 50000]
    for experiment in ("design", "literal", "ffratio", "headdim", "lr_check"):
        del config["sweep"][experiment]
    config["shaped"]["training"]["attentions"] = ["standard"]
    p = plan.from_config(config)
    rates, seconds = runsheet.calibrate(p, cores=2, seconds_per_shape=0.1)
    # every distinct shape of the plan, each at a positive, finite rate: two baseline shapes, and the shaped
    # training's standard model, which is the smaller baseline shape (complete specs: one key, timed once)
    assert set(rates) == {shape_key(job.spec) for job in p.runs.values()} and len(rates) == 2
    baseline = shape_key(run_named(p, "L2-d32-h2-f128-s0").spec)
    assert p.entropy_runs and all(shape_key(p.runs[run].spec) == baseline for run in p.entropy_runs)
    assert all(0 < rate < 1e13 for rate in rates.values()) and seconds > 0


def test_config_overrides_merge_as_snakemakes_config_does():
    from snakemake.utils import update_config

    pairs = ["sweep={gpu: 1, runs_per_gpu: 8}", "sweep={recipe: {lr: 0.002}}", "seed=3"]
    ours = cfg.merged(raw("ci"), cfg.overrides(pairs))
    theirs = raw("ci")
    for pair in pairs:  # snakemake applies --config pairs one after another, mapping by mapping
        key, _, value = pair.partition("=")
        update_config(theirs, {key: yaml.safe_load(value)})
    assert ours == theirs
    assert ours["sweep"]["recipe"]["n_ctx"] == raw("ci")["sweep"]["recipe"]["n_ctx"]  # the rest kept
    assert ours["sweep"]["recipe"]["lr"] == 0.002 and ours["sweep"]["gpu"] == 1 and ours["seed"] == 3
    with pytest.raises(cfg.ConfigError, match=r"^--config: expected KEY=VALUE, got 'sweep'$"):
        cfg.overrides(["sweep"])
    with pytest.raises(cfg.ConfigError, match=r"^--config sweep: not valid YAML"):
        cfg.overrides(["sweep={gpu: [1"])


def test_the_plan_command_prices_a_config_with_overrides():
    command = [sys.executable, "-m", "depthwidth", "plan", "--configfile", "config/ci.yaml", "--no-calibration"]
    cpu = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=package_env(), check=True)
    gpu = subprocess.run(
        [*command, "--config", "sweep={gpu: 1, runs_per_gpu: 8}"],
        cwd=REPO, capture_output=True, text=True, env=package_env(), check=True,
    )  # fmt: skip
    assert "GPU estimate" not in cpu.stdout
    assert "GPU estimate" in gpu.stdout and "GPU sharing: " in gpu.stdout
    # ci has one look; two name the second stage's budget beside the first stage's estimate (the worst case adds it)
    assert "second stage" not in cpu.stdout
    two = subprocess.run(
        [*command, "--config", "decide={looks: 2, max_extra_job_minutes: 12.5}"],
        cwd=REPO, capture_output=True, text=True, env=package_env(), check=True,
    )  # fmt: skip
    assert "second stage (decide.looks 2): at most 12.5 job-minutes more, at most 6 fresh seeds per shape" in two.stdout
    assert "looks at 99%, 96%" in two.stdout


def test_calibration_runs_no_more_copies_side_by_side_than_this_machine_has_cores(monkeypatch):
    import concurrent.futures

    workers = []

    class InProcess:  # records how many copies calibrate asks for, and times nothing
        def __init__(self, max_workers, mp_context=None):
            workers.append(max_workers)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, fn, *iterables):
            return [1e9 for _ in zip(*iterables)]

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", InProcess)
    monkeypatch.setattr(runsheet.os, "cpu_count", lambda: 2)
    p = plan.from_config(raw("ci"))
    rates, _ = runsheet.calibrate(p, cores=32)
    assert workers == [2] and set(rates.values()) == {1e9}  # a 32-core estimate at this machine's per-core rate
    runsheet.calibrate(p, cores=1)
    assert workers == [2, 1]


def test_the_run_sheet_names_the_runs_the_epoch_cap_cuts_short(monkeypatch):
    p = plan.from_config(raw("ci"))  # 2 tokens per parameter, at most 4 epochs
    budgets = {run: job.spec["recipe"]["token_budget"] for run, job in p.runs.items()}
    split = sorted(budgets.values())[len(budgets) // 2] // 4  # four epochs of it: the median budget
    monkeypatch.setattr(runsheet, "split_tokens", lambda plan: {"train": split, "val": 1000})
    capped = runsheet.capped_runs(p, runsheet.sheet(p))
    assert set(capped["run"]) == {run for run, budget in budgets.items() if budget > 4 * split} != set()
    assert (capped["tokens"] == 4 * split).all()
    monkeypatch.setattr(runsheet, "split_tokens", lambda plan: None)
    assert runsheet.capped_runs(p, runsheet.sheet(p)).empty  # unknown split: nothing known to be cut


def test_a_tokens_confound_the_epoch_cap_cuts_is_named(monkeypatch):
    pairs = [{"experiment": "literal", "n": n, "depths": [1, 2]} for n in (2000, 6600)]
    p = plan.from_config(raw("ci") | {"sensitivity": {"pairs": pairs, "tokens_factor": 4, "head_dim": 8}})
    budgets = {rid: job.spec["recipe"]["token_budget"] for rid, job in p.priced_runs().items()}
    more = {rid for rid in budgets if "sens_tokens" in {t.removeprefix("sweep_") for t in p.job(rid).tables}}
    split = min(budgets[rid] for rid in more) // 4 - 1  # four epochs of it: under the tokens confound's budgets
    monkeypatch.setattr(runsheet, "split_tokens", lambda folder: {"train": split, "val": 1000})
    sheet = runsheet.sheet(p)
    capped = runsheet.capped_runs(p, sheet)
    short = runsheet.capped_dose(p, capped)
    cut = {rid for rid, budget in budgets.items() if budget > 4 * split}
    assert set(short["run"]) == cut & more != set()
    assert cut - more != set()  # the design's larger runs are cut too, but they are no confound's dose
    said = runsheet._summary(p, sheet, argparse.Namespace(configfile="ci.yaml", cores=2, gpu_flops=1e14), "")
    assert f"{len(short)} run(s) of the sensitivity block's tokens confound stop at max_epochs (L1 d13, " in said
    assert set(capped["run"]) == cut


def test_each_run_is_priced_on_its_own_data_folders_splits(monkeypatch):
    config = raw("ci") | {"sensitivity": {"pairs": [{"experiment": "literal", "n": 2000, "depths": [1, 2]}],
                                          "vocab_sizes": [257]}}  # fmt: skip
    p = plan.from_config(config)
    bytes_folder = {p.job(rid).spec["data"] for rid in p.sweep["sens_vocab257"]}
    assert len(bytes_folder) == 1 and bytes_folder != {p.data_dir}
    sizes = {p.data_dir: {"train": 10**4, "val": 1000}, bytes_folder.pop(): {"train": 4 * 10**4, "val": 4000}}
    monkeypatch.setattr(runsheet, "split_tokens", lambda folder: sizes.get(folder))
    sheet = runsheet.sheet(p).set_index("run")
    for rid in p.sweep["sens_vocab257"]:
        spec = p.job(rid).spec
        splits = sizes[spec["data"]]  # the bytes' folder: 4x the tokens of the same text
        tokens = runsheet.run_tokens(spec["recipe"], splits["train"])
        assert sheet.loc[rid, "epochs"] == pytest.approx(tokens / splits["train"])
        assert sheet.loc[rid, "flops"] == pytest.approx(runsheet.run_flops(spec, tokens, splits["val"])[1])
        assert sheet.loc[rid, "flops"] > runsheet.run_flops(spec, tokens, sizes[p.data_dir]["val"])[1]


def test_the_run_sheet_warns_of_bf16_runs_on_a_cpu_without_bf16_units(monkeypatch):
    config = raw("ci")
    assert runsheet.bf16_without_units(plan.from_config(config)) == 0  # fp32: nothing to say
    config["sweep"]["recipe"]["precision"] = "bf16"
    p = plan.from_config(config)
    bf16 = sum(job.spec["recipe"]["precision"] == "bf16" for job in p.runs.values())
    monkeypatch.setattr(runsheet, "cpu_has_bf16_units", lambda: False)
    assert runsheet.bf16_without_units(p) == bf16 > 0
    monkeypatch.setattr(runsheet, "cpu_has_bf16_units", lambda: True)
    assert runsheet.bf16_without_units(p) == 0
    config["sweep"]["gpu"] = 1  # on a GPU the CPU's units do not matter
    monkeypatch.setattr(runsheet, "cpu_has_bf16_units", lambda: False)
    assert runsheet.bf16_without_units(plan.from_config(config)) == 0


def test_a_wildcards_pattern_matches_exactly_its_ids():
    """plan.jobs.one_of: the `run` wildcard's regular expression, its ids' shared prefixes written once (an
    alternation of 18,006 ids was tried one id after another on every file the DAG asked for)."""
    import re

    from depthwidth.plan.jobs import from_config, one_of

    plan = from_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text()))
    ids = plan.all_run_ids()
    pattern = re.compile(f"(?:{one_of(ids, 'no-run')})")
    assert all(pattern.fullmatch(run_id) for run_id in ids)
    near = [run_id[:-1] for run_id in ids] + [run_id + "0" for run_id in ids] + ["L1-d46", "", "no-run"]
    near += [run_id.replace(".", "x", 1) for run_id in ids if "." in run_id]  # a dot is a dot, not any letter
    assert not any(pattern.fullmatch(other) for other in near if other not in set(ids))
    assert len(one_of(ids, "no-run")) < sum(map(len, ids)) / 2  # shared prefixes: under half the letters
    assert re.fullmatch(one_of([], "no-run"), "no-run")


def test_decide_jobs_are_the_figures_of_sweep_tables_alone_each_with_lr_checks_table():
    p = plan.from_config(cfg.validate(raw("config")))
    sweep = set(p.sweep_tables())
    chosen = p.decide_figures()
    # the figures of sweep tables, but the protocol checks (no claim reads lr_check or the training curves)
    of_sweeps = [f for f, job in p.figures.items() if set(job.inputs.values()) <= sweep]
    assert chosen == [f for f in of_sweeps if p.figures[f].paper != "protocol check"] and "lr_check" in of_sweeps
    assert "kaplan_fig6" in chosen and "training_curves" not in chosen and "shaped_entropy" not in chosen
    lr_check = p.table_file(contracts.sweep_table("lr_check"))
    for figure in chosen:  # two looks (the default): the first stage's tables
        tables = p.decide_tables(figure)
        expected = {p.first_table(t) for t in (*p.figures[figure].inputs.values(), lr_check)}
        assert set(tables) == expected and len(tables) == len(set(tables))
    assert set(p.decide_files()) <= set(p.targets())
    assert p.decide_file("kaplan_fig6") == f"{contracts.config_dir(p.name)}/decide/kaplan_fig6.json"
    off = raw("config") | {"decide": {"sims": 0}}
    assert plan.from_config(cfg.validate(off)).decide_figures() == []
