"""`bench sweep`: the plan's shapes and their token weights, the weighted median, the plain reference's size,
and a one-step smoke run that prints the table (speed itself is measured by the bench, not here)."""

from __future__ import annotations

import argparse
import dataclasses
import math

import pytest
import torch
from conftest import REPO, package_env
from depthwidth.benchmarks import rounding
from depthwidth.benchmarks import sweep as bench
from depthwidth.cli import main
from depthwidth.plan.config import read, read_overridden
from depthwidth.plan.jobs import from_config
from depthwidth.plan.runsheet import run_tokens
from depthwidth.spec import complete


def _plan(name: str):
    return from_config(read(REPO / "config" / name))


def _sweep_ids(plan) -> set[str]:
    """The sweep runs the plan prices: its planned runs or, for a shape it scans, the scouts and seeds it will train
    at the least (not the rule-rate ids its tables are planned under)."""
    scanned = {run_id for decided in plan.scan_of.values() for run_id in decided}
    planned = {run_id for runs in plan.sweep.values() for run_id in runs} - scanned
    return planned | {run_id for run_id in plan.priced_runs() if run_id not in plan.entropy_runs}


def _run_id(plan, name: str) -> str:
    """The id of the planned run whose readable name (the id before its spec's digest) is `name`."""
    (run_id,) = (run_id for run_id in plan.runs if run_id.rsplit("-", 1)[0] == name)
    return run_id


CI_RUN = _run_id(_plan("ci.yaml"), "L2-d32-h2-f128-s0")  # the id --shapes takes: a name and the spec's digest


@pytest.mark.parametrize("name", ["ci.yaml", "config.yaml"])
def test_shapes_partition_the_sweep_runs_and_weigh_all_their_tokens(name):
    plan = _plan(name)
    groups = bench.group_shapes(plan)
    ids = [run_id for g in groups for run_id in g.run_ids]
    assert sorted(ids) == sorted(_sweep_ids(plan))  # every sweep run once, no shaped-training run
    assert len({g.label for g in groups}) == len(groups)  # distinct shapes
    for g in groups:
        models = {bench.shape_key(plan.job(run_id).spec) for run_id in g.run_ids}
        assert models == {bench.shape_key(g.spec)}
    assert sum(g.tokens for g in groups) == sum(plan.job(i).spec["recipe"]["token_budget"] for i in _sweep_ids(plan))
    # the epoch cap, once the data is known, weighs what the runs will really train
    capped = bench.group_shapes(plan, split=30_000)
    expected = sum(run_tokens(plan.job(i).spec["recipe"], 30_000) for i in _sweep_ids(plan))
    assert sum(g.tokens for g in capped) == expected < sum(g.tokens for g in groups)


def test_seeds_and_learning_rates_share_a_shape():
    plan = _plan("config.yaml")  # seeds [0, 1, 2]; lr_check at five factors
    groups = {g.label: g for g in bench.group_shapes(plan)}
    assert all(len(g.run_ids) >= 2 for g in groups.values())
    lr_shapes = {plan.sweep["lr_check"][run_id].shape.run_id() for run_id in plan.sweep["lr_check"]}
    for label in lr_shapes:
        assert any("-lr0.5x-" in run_id for run_id in groups[label].run_ids)


def test_select_by_run_id_or_label_and_refuse_unknown_names():
    plan = _plan("ci.yaml")
    groups = bench.group_shapes(plan)
    by_id = bench.select(groups, _run_id(plan, "L1-d64-h4-f256-lr2x-s0"))
    assert [g.label for g in by_id] == ["L1-d64-h4-f256"] and len(by_id[0].run_ids) == 3  # design, 0.5x, 2x
    by_label = bench.select(groups, "L2-d32-h2-f128")
    both = f"{_run_id(plan, 'L1-d64-h4-f256-s0')}, L2-d32-h2-f128"
    assert bench.select(groups, both) == [*by_label, by_id[0]]  # plan order: L2-d32 is the design's N = 25k
    assert bench.select(groups, "all") == groups
    with pytest.raises(ValueError, match="L9-nope"):
        bench.select(groups, "L9-nope")


def test_weighted_median_by_hand():
    assert bench.weighted_median([1, 2, 3, 4], [1, 1, 1, 10]) == 4  # the heavy value wins
    assert bench.weighted_median([30, 10, 20], [1, 3, 1]) == 10  # 3 of 5 at or below 10
    assert bench.weighted_median([1, 2, 3], [1, 1, 1]) == 2  # equal weights: the median
    assert bench.weighted_median([5, 1], [1, 1]) == 1  # an exact half: the lower value
    with pytest.raises(ValueError):
        bench.weighted_median([1], [0])


def test_projected_seconds_divides_job_time_by_jobs_side_by_side():
    spec = {"model": {}, "recipe": {}}
    groups = [bench.ShapeGroup("a", spec, 1, ("a0", "a1"), 10, 100.0), bench.ShapeGroup("b", spec, 1, ("b0",), 5, 60.0)]
    # (100 / 10 + 2 x 1) + (60 / 20 + 1 x 1) = 16 job-seconds, two jobs at a time
    assert bench.projected_seconds(groups, [10.0, 20.0], 1.0, 2) == pytest.approx(8.0)


def test_gemm_flops_by_hand():
    assert bench.gemm_flops("aten::mm", [[512, 26], [26, 1024]]) == 2 * 512 * 26 * 1024
    assert bench.gemm_flops("aten::addmm", [[78], [512, 26], [26, 78]]) == 2 * 512 * 26 * 78  # bias first
    assert bench.gemm_flops("aten::bmm", [[4, 128, 32], [4, 32, 128]]) == 4 * 2 * 128 * 32 * 128


@pytest.mark.parametrize("bias", [False, True])
def test_gemm_time_counts_every_gemm_of_the_engines_step(bias):
    """The profiled GEMMs of one step are the model's matmul FLOPs less the attention scores (which run in
    SDPA): 3 x (L x 2 (4 d^2 + 2 d d_ff) + 2 d vocab) per token, forward and both backward products."""
    import numpy as np

    L, d, d_ff, vocab, n_ctx, batch = 2, 32, 96, 97, 16, 3
    model = {"vocab_size": vocab, "n_ctx": n_ctx, "n_layer": L, "d_model": d, "n_head": 2, "d_ff": d_ff, "bias": bias}
    recipe = {"batch_size": batch, "token_budget": 10_000, "lr": 1e-3, "warmup_tokens": 0}
    spec = complete("train_spec", {"data": "unused", "model": model, "recipe": recipe, "seed": 0})
    engine_step, _ = bench.steppers(spec, np.random.default_rng(0).integers(0, vocab, 1000).astype(np.uint16))
    engine_step()
    flops, seconds = bench.gemm_time(engine_step, 2)
    assert flops == 3 * (L * 2 * (4 * d * d + 2 * d * d_ff) + 2 * d * vocab) * batch * n_ctx
    assert seconds > 0


@pytest.mark.parametrize(
    "model",
    [
        {"n_layer": 2, "d_model": 32, "n_head": 2, "d_ff": 128},
        {"n_layer": 3, "d_model": 48, "n_head": 4, "d_ff": 24},
        {"n_layer": 1, "d_model": 64, "n_head": 1, "d_ff": None, "bias": True},
    ],
)
def test_the_reference_has_the_engines_parameters(model):
    from depthwidth.train.model import GPT, n_params_total

    model = {"vocab_size": 97, "n_ctx": 16, "attention": "standard", **model}
    plain = bench.PlainGPT(model)
    assert sum(p.numel() for p in plain.parameters()) == n_params_total(GPT(model))
    assert plain.head.weight is plain.tok.weight  # tied, as the engine's LM head
    idx, targets = torch.randint(0, 97, (2, 3, 16), generator=torch.Generator().manual_seed(0))
    loss = float(plain(idx, targets).detach())
    assert abs(loss - math.log(97)) < 0.2  # near-uniform predictions at init: a working forward


def test_smoke_prints_the_table(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no prepared data: budgets without the epoch cap
    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # not the one thread the bench times at (the suite's processes start at 1)
    argv = ["bench", "sweep", "--configfile", str(REPO / "config" / "ci.yaml"), "--steps", "1", "--warmup", "1"]
    assert main([*argv, "--shapes", CI_RUN, "--matmul-n", "128", "--startup", "1"]) == 0
    assert torch.get_num_threads() == 2  # the bench leaves torch's threads as it found them
    torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert "one-thread fp32 matmul peak" in out and "eng/ref" in out
    line = next(line for line in out.splitlines() if line.startswith("L2-d32-h2-f128 "))
    assert "49,472" in line  # the run's token budget: 2 tokens per parameter of N = 24,736
    assert "token-weighted median" in out and "projected wall time of these 1 runs" in out
    assert "GEMM %pk" in out and "GEMMs inside the engine's step" in out


def test_smoke_compares_fp32_and_bf16_per_shape(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["bench", "sweep", "--configfile", str(REPO / "config" / "ci.yaml"), "--steps", "2", "--warmup", "1"]
    assert main([*argv, "--shapes", CI_RUN, "--matmul-n", "64", "--startup", "1", "--compare-bf16"]) == 0
    out = capsys.readouterr().out
    peaks = next(line for line in out.splitlines() if line.startswith("one-thread matmul peaks"))
    assert "fp32" in peaks and "bf16" in peaks and "n = 64)" in peaks
    rows = [line.split() for line in out.splitlines() if line.startswith("L2-d32-h2-f128 ")]
    assert len(rows) == 2  # the engine-against-reference table, then the precision table
    fp32_tok_s, bf16_tok_s, ratio = (float(rows[1][i].replace(",", "").rstrip("x")) for i in (5, 7, 9))
    assert ratio == pytest.approx(bf16_tok_s / fp32_tok_s, abs=0.006)  # tokens / median step each side; 2 decimals
    assert "token-weighted median bf16/fp32 step speed" in out


def test_smoke_compares_the_eager_and_the_graphed_step_per_shape(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    made = []
    real = bench.engine_stepper

    def spy(spec, shard, rng, device=None, mode="auto"):
        made.append(mode)
        return real(spec, shard, rng, device, mode)

    monkeypatch.setattr(bench, "engine_stepper", spy)
    argv = ["bench", "sweep", "--configfile", str(REPO / "config" / "ci.yaml"), "--steps", "2", "--warmup", "1"]
    assert main([*argv, "--shapes", CI_RUN, "--matmul-n", "64", "--startup", "1", "--compare-steps"]) == 0
    out = capsys.readouterr().out
    assert made[-2:] == ["eager", "graph"]
    table = out[out.index("the step eager against replayed") :]
    rows = [line.split() for line in table.splitlines() if line.startswith("L2-d32-h2-f128 ")]
    assert len(rows) == 1 and rows[0][3] == "2"  # the timed steps, after a warm-up past the graph's capture
    eager, graphed, ratio = (float(rows[0][i].replace(",", "").rstrip("x")) for i in (4, 5, 6))
    assert ratio == pytest.approx(graphed / eager, abs=0.006)
    assert "token-weighted median graph/eager step speed" in table
    assert main([*argv, "--shapes", CI_RUN, "--reduce-overhead"]) == 1
    assert "--reduce-overhead: only with --compare-steps" in capsys.readouterr().err


def test_models_option_builds_the_named_shapes_on_the_first_runs_recipe():
    template = bench.group_shapes(_plan("config.yaml"))[0]  # L1-d46-h2-f184: head size 23
    groups = bench.model_groups(template, "2x128, 3x46")
    assert [g.label for g in groups] == ["L2-d128-h4-f512", "L3-d46-h2-f184"]  # 128 / 23 heads: 4 divide 128
    assert all(g.spec["recipe"] == template.spec["recipe"] and g.threads == template.threads for g in groups)
    assert groups[0].spec["model"]["vocab_size"] == template.spec["model"]["vocab_size"]
    assert groups[0].tokens == template.spec["recipe"]["token_budget"] and groups[0].run_ids == ("L2-d128-h4-f512",)
    with pytest.raises(ValueError, match="--models"):
        bench.model_groups(template, "2x")


def _autocast_seen(monkeypatch) -> list:
    """Patch train_step to record, per call, whether CPU autocast is on inside the step's context, and its dtype."""
    import depthwidth.train.step

    seen, real = [], depthwidth.train.step.train_step

    def spy(model, optimizer, x, y, lr, grad_clip, autocast, z_loss=None):
        with autocast():
            seen.append((torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")))
        return real(model, optimizer, x, y, lr, grad_clip, autocast, z_loss)

    monkeypatch.setattr(depthwidth.train.step, "train_step", spy)
    return seen


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_bench_and_plan_calibration_time_the_step_at_the_specs_precision(monkeypatch, precision):
    import numpy as np
    from depthwidth.plan import runsheet

    job = _plan("ci.yaml").runs[CI_RUN]
    spec = bench.at_precision(job.spec, precision)
    seen = _autocast_seen(monkeypatch)
    bench.engine_stepper(spec, np.random.default_rng(0).integers(0, 512, 10_000), np.random.default_rng(0))()
    runsheet._measure(dataclasses.replace(job, spec=spec), budget=0.0)
    on = precision == "bf16"
    assert seen and all(entry[0] == on for entry in seen)  # autocast on exactly when the spec says bf16
    assert not on or all(entry[1] == torch.bfloat16 for entry in seen)


def test_bench_train_smoke_prints_the_shape(capsys):
    argv = ["bench", "train", "--shapes", "2x32", "--steps", "1", "--batch", "2", "--n-ctx", "16", "--vocab", "256"]
    assert main([*argv, "--matmul-n", "64"]) == 0
    row = next(line.split() for line in capsys.readouterr().out.splitlines() if line.split()[:2] == ["2", "32"])
    assert row[2] == "24,736"  # N = 2 (2 x 32 + 4 x 32^2 + 2 x 32 x 128) + 32, no biases


def test_bench_train_times_the_step_at_the_precision_it_is_given(capsys, monkeypatch):
    from depthwidth.benchmarks import train as bench_train

    peaks = []
    real_peak = bench_train.matmul_peak
    monkeypatch.setattr(
        bench_train,
        "matmul_peak",
        lambda n, device, dtype=None: peaks.append(dtype) or real_peak(n, device, dtype=dtype),
    )
    argv = ["bench", "train", "--shapes", "2x32", "--steps", "1", "--batch", "2", "--n-ctx", "16", "--vocab", "256"]
    assert main([*argv, "--matmul-n", "64", "--precision", "bf16"]) == 0
    out = capsys.readouterr().out
    assert peaks == [torch.bfloat16] and "precision bf16" in out and "bf16 matmul peak (64^3" in out


def test_bench_sweep_on_cuda_without_one_says_so_in_one_line(tmp_path, monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"^--device: cuda requested but no CUDA device is available$"):
        bench.run(argparse.Namespace(device="cuda"))


def test_bench_sweep_times_the_config_with_its_overrides(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["bench", "sweep", "--configfile", str(REPO / "config" / "ci.yaml"), "--steps", "1", "--warmup", "1"]
    override = "sweep={recipe: {batch_size: 3}}"
    overridden = from_config(read_overridden(REPO / "config" / "ci.yaml", [override]))
    run_id = _run_id(overridden, "L2-d32-h2-f128-s0")
    assert run_id != CI_RUN  # another batch: another spec, so another id
    argv += ["--shapes", run_id, "--matmul-n", "64", "--startup", "1"]
    assert main([*argv, "--config", override]) == 0
    row = next(line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("L2-d32-h2-f128 "))
    assert row[2] == "3"  # the batch column: the override's, not ci's 16


def test_bench_rounding_retrains_the_recorded_spec_at_each_instruction_set(slice_data, tmp_path, capsys, monkeypatch):
    """A run trained natively at AVX2 and the bench: its AVX2 retraining reproduces the recorded final loss to the last
    digit (the same spec, seed and kernels), its other one (AVX-512 where the CPU has it, else ATen's default kernels)
    is the other rounding, and the move printed is theirs."""
    spec = complete(
        "train_spec",
        {
            "data": str(slice_data),
            "seed": 3,
            "model": {"vocab_size": 512, "n_ctx": 16, "n_layer": 2, "d_model": 16, "n_head": 2},
            "recipe": {"token_budget": 40 * 64, "batch_size": 4, "lr": 3e-3, "eval_interval": 20, "eval_batches": 2},
        },
    )
    monkeypatch.setenv("PYTHONPATH", package_env()["PYTHONPATH"])  # the bench's retrainings import this checkout
    made = rounding.retrain(spec, "avx2", tmp_path / "tiny")
    assert made.wait() == 0, made.stderr.read()
    recorded = rounding.final_loss(tmp_path / "tiny")
    assert main(["bench", "rounding", str(tmp_path / "tiny")]) == 0
    out = capsys.readouterr().out.splitlines()
    reference, other = rounding.capabilities()
    assert reference == "avx2" and other == ("avx512" if rounding.has_avx512() else "default")
    assert out[0].split() == ["run", "recorded", reference, other, "move", "%"]
    line = next(x for x in out if x.startswith("tiny "))
    _, shown, avx2, changed, move = line.split()
    assert float(shown) == float(avx2) == pytest.approx(recorded, abs=5e-5)
    losses = {"avx2": float(avx2), other: float(changed)}
    assert float(move) == pytest.approx(rounding.move_pct(losses, other), abs=2e-3)
    assert rounding.move_pct({"avx2": 2.0, other: 2.02}, other) == pytest.approx(1.0)  # % of the reference's loss


@pytest.mark.parametrize(("text", "said"), [(None, "file not found"), ("{", "not valid JSON"), ("[]", "no 'spec'"),
                                            ('{"status": "ok"}', "no 'spec' to retrain from")])  # fmt: skip
def test_bench_rounding_reads_every_runs_metrics_before_it_retrains_one(tmp_path, capsys, monkeypatch, text, said):
    """A run folder whose metrics.json is missing, no JSON or has no spec is one line naming the file, before the
    first run retrains (it was a KeyError's or TypeError's traceback, or json's bare message, after the runs
    before it had trained)."""
    monkeypatch.setattr(rounding, "retrain", lambda *a: pytest.fail("retrained before reading every run"))
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder in (good, bad):
        folder.mkdir()
    (good / "metrics.json").write_text('{"spec": {}, "status": "ok"}')
    if text is not None:
        (bad / "metrics.json").write_text(text)
    assert main(["bench", "rounding", str(good), str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"depthwidth bench: error: {bad / 'metrics.json'}: {said}") and err.count("\n") == 1, err
