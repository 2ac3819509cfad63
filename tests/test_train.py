"""The training loop: outputs, determinism, resume after SIGKILL, divergence, bad input, the code it runs."""

from __future__ import annotations

import contextlib
import copy
import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from depthwidth import contracts
from depthwidth.cli import COMMANDS
from depthwidth.cli import main as cli_main
from depthwidth.io import file_record, sha256_file
from depthwidth.shapes import kaplan_lr
from depthwidth.spec import complete
from depthwidth.train.checkpoint import (
    CHECKPOINT_NAME,
    CheckpointKey,
    RunState,
    code_digest,
    default_checkpoint_dir,
    save_checkpoint,
)
from depthwidth.train.loop import (
    evaluate_full,
    model_config,
    sample_batch,
    spec_hash,
    train,
    validate_spec,
    validation_starts,
)
from depthwidth.train.model import GPT
from depthwidth.train.optim import AdamW, lr_at, make_optimizer, peak_lr
from depthwidth.train.step import train_step

WORKFLOW = Path(__file__).resolve().parents[1] / "workflow"
VOCAB = 64


def write_data(d: Path, train_tokens: np.ndarray, val_tokens: np.ndarray, vocab: int = VOCAB) -> Path:
    """A data folder as prepare-data writes it: uint16 shards and a meta.json recording their size and sha256."""
    d.mkdir(parents=True, exist_ok=True)
    train_tokens.astype(np.uint16).tofile(d / "train.bin")
    val_tokens.astype(np.uint16).tofile(d / "val.bin")
    (d / "tokenizer.json").write_text("{}")
    meta = {
        "dtype": "uint16",
        "vocab_size": vocab,
        "splits": {"train": {"tokens": len(train_tokens)}, "val": {"tokens": len(val_tokens)}},
        "files": {name: file_record(d / name) for name in ("train.bin", "val.bin", "tokenizer.json")},
    }
    (d / "meta.json").write_text(json.dumps(meta))
    return d


@pytest.fixture(autouse=True)
def _restore_threads():
    """train(threads=...) sets torch's global thread count; put it back after each test."""
    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """Synthetic uint16 shards: a repeating ramp with 10% random tokens (learnable, not trivial)."""
    rng = np.random.default_rng(0)
    n = 60_000
    ramp = np.arange(n) % 50
    tokens = np.where(rng.random(n) < 0.1, rng.integers(0, VOCAB, n), ramp).astype(np.uint16)
    return write_data(tmp_path / "data", tokens[:50_000], tokens[50_000:])


def tiny_spec(data_dir: Path, steps: int = 30, **recipe) -> dict:
    """A small run's complete spec: as the plan passes it, every default filled in."""
    return complete("train_spec", minimal_spec(data_dir, steps, **recipe))


def minimal_spec(data_dir: Path, steps: int = 30, **recipe) -> dict:
    """The same run, only the keys without a default and those this file sets (no job runs it as it is)."""
    batch, ctx = 8, 16
    return {
        "data": str(data_dir),
        "seed": 3,
        "model": {"vocab_size": VOCAB, "n_ctx": ctx, "n_layer": 2, "d_model": 32, "n_head": 4},
        "recipe": {
            "token_budget": steps * batch * ctx,
            "batch_size": batch,
            "lr": 3e-3,
            "warmup_tokens": 3 * batch * ctx,
            "eval_interval": 10,
            "eval_batches": 2,
            "checkpoint_interval": 0,
            **recipe,
        },
    }


def read_curve(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def losses(metrics: dict) -> tuple:
    return metrics["final_val_loss"], metrics["best_val_loss"], metrics["tokens_seen"], metrics["status"]


def subprocess_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(WORKFLOW), env.get("PYTHONPATH")]))
    return env


# ---------------------------------------------------------------------------------------------


def test_outputs_and_metrics(data_dir, tmp_path):
    spec = tiny_spec(data_dir, steps=25, token_budget=25 * 8 * 16 - 5)  # not a whole step
    spec["log_entropy"] = True
    spec["model"]["attention"] = "shaped"
    out = tmp_path / "run"
    torch.set_num_threads(2)  # not the 1 the run asks for (the suite's processes start at 1): train sets it
    m = train(spec, out, threads=1, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["curve.csv", "entropy.csv", "metrics.json"]
    on_disk = json.loads((out / "metrics.json").read_text())
    assert on_disk["final_val_loss"] == m["final_val_loss"]
    assert on_disk["curve_sha256"] == m["curve_sha256"] == sha256_file(out / "curve.csv")  # the bytes as written
    assert on_disk["entropy_sha256"] == m["entropy_sha256"] == sha256_file(out / "entropy.csv")
    assert m["status"] == "ok" and m["steps"] == 25  # ceil(budget / tokens per step)
    assert m["tokens_seen"] == 25 * 8 * 16
    assert m["spec"] == spec and m["spec"]["recipe"]["lr_final_frac"] == 0.1  # the complete spec, as it ran
    for key in (
        "n_params_total",
        "n_params_nonembedding",
        "n_params_kaplan",
        "train_flops_estimate",
        "wall_seconds",
        "tokens_per_second",
        "device",
        "threads",
        "package_version",
        "git_revision",
    ):
        assert key in m, key
    assert m["threads"] == 1

    rows = read_curve(out / "curve.csv")
    assert list(rows[0]) == ["step", "tokens", "train_loss", "val_loss", "lr"]
    assert [int(r["step"]) for r in rows] == list(range(26))
    evals = [int(r["step"]) for r in rows if r["val_loss"]]
    assert evals == [0, 10, 20, 25]  # start, every eval_interval, end
    assert float(rows[-1]["val_loss"]) == m["final_val_loss"]
    assert m["best_val_loss"] == min(float(r["val_loss"]) for r in rows if r["val_loss"])
    assert m["final_val_loss"] < float(rows[0]["val_loss"]) - 0.5  # it learns
    assert float(rows[-1]["lr"]) == pytest.approx(3e-3 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 21 / 22))))

    ent = read_curve(out / "entropy.csv")
    assert len(ent) == 4 * 2 * 4  # evals x layers x heads
    assert np.array(m["final_attention_entropy"]).shape == (2, 4)
    assert not default_checkpoint_dir(out).exists()


def test_same_seed_same_metrics_other_seed_differs(data_dir, tmp_path):
    spec = tiny_spec(data_dir, steps=20)
    a = train(spec, tmp_path / "a", threads=1, progress=False)
    b = train(spec, tmp_path / "b", threads=1, progress=False)
    assert losses(a) == losses(b)
    assert (tmp_path / "a" / "curve.csv").read_text() == (tmp_path / "b" / "curve.csv").read_text()
    other = copy.deepcopy(spec)
    other["seed"] = 4
    c = train(other, tmp_path / "c", threads=1, progress=False)
    assert c["final_val_loss"] != a["final_val_loss"]


def test_resume_after_sigkill_is_bit_identical(data_dir, tmp_path):
    # checkpoints 50 steps apart: the kill lands well before the second one, never between its two renames
    # (a checksum written, the checkpoint not yet: the rerun would start over, as it should, not resume)
    spec = tiny_spec(data_dir, steps=300, checkpoint_interval=50, eval_interval=50)
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    out = tmp_path / "resumed"
    ckpt = default_checkpoint_dir(out) / CHECKPOINT_NAME
    cmd = [
        sys.executable,
        "-m",
        "depthwidth",
        "train",
        "--spec",
        str(spec_path),
        "--out",
        str(out),
        "--threads",
        "1",
        "--device",
        "cpu",
        "--no-progress",
    ]

    proc = subprocess.Popen(cmd, env=subprocess_env(), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ckpt.exists():
        assert proc.poll() is None, f"run ended before its first checkpoint: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "no checkpoint within 60 s"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "metrics.json").exists()
    killed_at = torch.load(ckpt, weights_only=True)["step"]
    assert 0 < killed_at < 300

    done = subprocess.run(cmd, env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "resuming from step" in done.stderr
    assert not ckpt.exists() and not ckpt.parent.exists()

    # the reference run as a job runs it, uninterrupted: the same command, so the same numeric path (numerics.py)
    at = cmd.index("--out") + 1
    subprocess.run([*cmd[:at], str(tmp_path / "reference"), *cmd[at + 1 :]], env=subprocess_env(), check=True)
    reference = json.loads((tmp_path / "reference" / "metrics.json").read_text())
    resumed = json.loads((out / "metrics.json").read_text())
    assert losses(resumed) == losses(reference)
    assert (out / "curve.csv").read_text() == (tmp_path / "reference" / "curve.csv").read_text()


def test_divergence_ends_with_status_diverged_and_exit_0(data_dir, tmp_path, capsys):
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(tiny_spec(data_dir, steps=30, lr=1e6, checkpoint_interval=1)))
    out = tmp_path / "run"
    code = cli_main(["train", "--spec", str(spec_path), "--out", str(out), "--threads", "1", "--no-progress"])
    assert code == 0
    m = json.loads((out / "metrics.json").read_text())
    assert m["status"] == "diverged"
    assert m["final_val_loss"] is None
    assert m["steps"] < 30
    rows = read_curve(out / "curve.csv")
    assert rows[-1]["train_loss"] == "nan" and int(rows[-1]["step"]) == m["steps"]
    assert not default_checkpoint_dir(out).exists()


def test_checkpoint_from_another_spec_is_refused(data_dir, tmp_path, capsys):
    spec = tiny_spec(data_dir)
    other = copy.deepcopy(spec)
    other["recipe"]["lr"] = 1e-3
    out = tmp_path / "run"
    ckpt = tmp_path / "ck" / CHECKPOINT_NAME
    key = CheckpointKey(spec_hash(validate_spec(other)), code_digest(), str(torch.__version__))
    save_checkpoint(ckpt, key, RunState(5, {}, {}, {}, [], [], 1.0))
    with pytest.raises(ValueError, match=str(ckpt)):
        train(spec, out, checkpoint_dir=ckpt.parent, progress=False)
    assert not out.exists()  # refused before writing anything
    assert ckpt.exists()  # and the foreign checkpoint is left alone

    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    code = cli_main(["train", "--spec", str(spec_path), "--out", str(out), "--checkpoint-dir", str(ckpt.parent)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and str(ckpt) in err[0] and "different spec" in err[0]


BAD_SPECS = [
    (lambda s: s["model"].update(n_layers=2), "model.n_layers"),  # unknown key
    (lambda s: s.update(colour="red"), "colour"),
    (lambda s: s["recipe"].pop("lr"), "recipe.lr"),  # missing
    (lambda s: s.pop("seed"), "seed"),
    (lambda s: s["model"].update(d_model="32"), "model.d_model"),  # wrong type
    (lambda s: s["model"].update(n_layer=True), "model.n_layer"),
    (lambda s: s["model"].update(n_head=5), "model.d_model"),  # not divisible
    (lambda s: s["model"].update(attention="linear"), "model.attention"),
    (lambda s: s["model"].update(shaped={"tau": 1.0}), "model.shaped.tau"),
    (lambda s: s["recipe"].update(lr="fast"), "recipe.lr"),
    (lambda s: s["recipe"].update(lr="kaplan"), "recipe.lr"),  # the plan resolves Kaplan's rule, not the job
    (lambda s: s["model"].update(d_ff=None), "model.d_ff"),  # the plan resolves 4 d_model, not the job
    (lambda s: s["recipe"].update(batch_size=0), "recipe.batch_size"),
    (lambda s: s["recipe"].update(lr_final_frac=2.0), "recipe.lr_final_frac"),
    (lambda s: s.update(model=[]), "model"),
    (lambda s: s["recipe"].update(eps=float("nan")), "recipe.eps"),  # not finite
    (lambda s: s.update(seed=-1), "seed"),
    (lambda s: s["model"].update(d_model=10**9), "model.d_model"),  # bounded, before any allocation
    (lambda s: s["recipe"].update(max_epochs=0), "recipe.max_epochs"),  # exclusive minimum
    (lambda s: s["recipe"].update(max_epochs=101), "recipe.max_epochs"),
    (lambda s: s["recipe"].update(precision="fp16"), "recipe.precision"),
]


@pytest.mark.parametrize("mutate, key", BAD_SPECS)
def test_spec_validation_names_the_key(data_dir, mutate, key):
    spec = tiny_spec(data_dir)
    mutate(spec)
    with pytest.raises(ValueError) as err:
        validate_spec(spec)
    assert f"spec key '{key}'" in str(err.value) and "\n" not in str(err.value), str(err.value)


def leaves(spec: dict, prefix: str = "") -> list[str]:
    """The dotted keys of a spec's leaves (a mapping's keys, not its items)."""
    found = []
    for key, value in spec.items():
        name = f"{prefix}{key}"
        found += leaves(value, f"{name}.") if isinstance(value, dict) and value else [name]
    return found


def without(spec: dict, dotted: str) -> dict:
    spec = copy.deepcopy(spec)
    *parents, last = dotted.split(".")
    node = spec
    for key in parents:
        node = node[key]
    del node[last]
    return spec


def test_a_job_refuses_an_incomplete_spec_naming_the_missing_key(data_dir, tmp_path, capsys):
    spec = tiny_spec(data_dir)
    defaulted = sorted(set(leaves(spec)) - set(leaves(minimal_spec(data_dir))))
    assert {"compile", "recipe.beta1", "model.d_ff", "model.shaped.tau0", "recipe.precision"} <= set(defaulted)
    assert validate_spec(spec) == spec  # the complete spec passes as it is
    for key in defaulted:  # the job fills in no default: each one left out is named
        with pytest.raises(ValueError) as err:
            validate_spec(without(spec, key))
        message = str(err.value)
        assert message.startswith(f"spec key '{key}': missing") and "\n" not in message, (key, message)
    # a spec with only the keys that have no default is refused before any work: one line, exit 1, nothing written
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"^spec key '\S+': missing"):
        train(minimal_spec(data_dir), out, progress=False)
    capsys.readouterr()
    code = cli_main(["train", "--spec-json", json.dumps(minimal_spec(data_dir)), "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "missing" in err[0] and not out.exists()


def test_spec_defaults_are_the_schemas_and_the_models():
    # one schema for the config and the train spec; the model's own defaults agree with it
    from depthwidth.spec import load_schema
    from depthwidth.train.model import SHAPED_DEFAULTS

    shaped = load_schema()["$defs"]["shaped_attention"]["properties"]
    assert {key: rule["default"] for key, rule in shaped.items()} == SHAPED_DEFAULTS


def test_inline_spec_json_equals_spec_file(data_dir, tmp_path):
    spec = tiny_spec(data_dir, steps=6)
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    base = ["--threads", "1", "--no-progress"]
    assert cli_main(["train", "--spec", str(spec_path), "--out", str(tmp_path / "a"), *base]) == 0
    assert cli_main(["train", "--spec-json", json.dumps(spec), "--out", str(tmp_path / "b"), *base]) == 0
    assert (tmp_path / "a" / "curve.csv").read_text() == (tmp_path / "b" / "curve.csv").read_text()
    assert cli_main(["train", "--spec-json", "{not json", "--out", str(tmp_path / "c")]) == 1


def test_bad_data_and_vocab_are_named(data_dir, tmp_path, capsys):
    spec = tiny_spec(data_dir)
    spec["model"]["vocab_size"] = VOCAB - 1
    with pytest.raises(ValueError, match="model.vocab_size"):
        train(spec, tmp_path / "run", progress=False)
    (data_dir / "val.bin").unlink()
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(tiny_spec(data_dir)))
    code = cli_main(["train", "--spec", str(spec_path), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "val.bin" in err[0]
    assert not (tmp_path / "run").exists()


def test_lr_schedule_and_kaplan_rule():
    peak, warm, total = 1e-3, 10, 110
    assert lr_at(0, peak, warm, total, 0.1) == pytest.approx(1e-4)
    assert lr_at(9, peak, warm, total, 0.1) == pytest.approx(peak)
    assert lr_at(10, peak, warm, total, 0.1) == pytest.approx(peak)
    assert lr_at(60, peak, warm, total, 0.1) == pytest.approx(peak * 0.55)  # half-way: mean
    assert lr_at(110, peak, warm, total, 0.0) == pytest.approx(0.0, abs=1e-15)
    assert lr_at(5, peak, 0, 10, 0.0) == pytest.approx(peak * 0.5)  # no warm-up
    assert kaplan_lr(1e6) == pytest.approx(0.003239 - 0.0001395 * math.log(1e6))
    assert kaplan_lr(1e8) < kaplan_lr(1e6)
    assert peak_lr({"lr": 0.002}) == 0.002  # the job's peak is the spec's number (the plan resolved Kaplan's rule)


def test_sample_batch_windows(data_dir):
    shard = np.memmap(data_dir / "train.bin", dtype=np.uint16, mode="r")
    x, y = sample_batch(shard, np.random.default_rng(0), 64, 16)
    assert x.shape == y.shape == (64, 16) and x.dtype == torch.int64
    assert torch.equal(x[:, 1:], y[:, :-1])  # targets are the inputs shifted by one
    # every row (inputs then the last target) is a contiguous window of n_ctx + 1 shard tokens
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(shard), 17)
    rows = torch.cat([x, y[:, -1:]], dim=1).numpy()
    assert all((windows == row).all(axis=1).any() for row in rows)


def test_the_code_digest_covers_every_module_a_training_run_loads_and_the_rule_lists_the_same():
    """The code digest covers every package module a training run loads, read off its imports; the train_run
    rule's code input is the same list (its command's module and what that imports)."""
    probe = (
        "import sys, depthwidth.train.loop\n"
        "print('\\n'.join(m.__file__ for n, m in sys.modules.items() if n.startswith('depthwidth')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=subprocess_env(), capture_output=True, text=True, check=True
    )
    loaded = {Path(line).resolve() for line in out.stdout.split()}
    covered = set(contracts.code_files(contracts.TRAINING_MODULE))
    assert loaded and loaded <= covered, sorted(map(str, loaded - covered))  # (covered: imports inside functions too)
    rule = (WORKFLOW / "rules" / "train.smk").read_text().split("rule train_run:")[1].split("\nrule ")[0]
    assert re.search(r'code=package_code\("train"\)', rule) and "python -m depthwidth train " in rule, rule
    assert COMMANDS["train"][0] == contracts.TRAINING_MODULE


def test_code_digest_follows_every_file_of_the_training_code_and_a_planted_import(tmp_path, monkeypatch):
    import depthwidth.train.checkpoint as checkpoint_module

    package = WORKFLOW / "depthwidth"
    fake = tmp_path / "depthwidth"
    for path in [*contracts.code_files(contracts.TRAINING_MODULE), package / "plots" / "__init__.py"]:
        copy_to = fake / path.relative_to(package)
        copy_to.parent.mkdir(parents=True, exist_ok=True)
        copy_to.write_bytes(path.read_bytes())
    (fake / "plots" / "common.py").write_text("x = 1\n")
    real = code_digest()
    monkeypatch.setattr(checkpoint_module, "PACKAGE", fake)
    digest = code_digest()
    assert digest == real  # the same sources, elsewhere: the same digest
    files = contracts.code_files(contracts.TRAINING_MODULE, root=fake)
    assert {path.relative_to(fake).parts[0] for path in files} >= {"train", "data", "shapes.py", "io.py", "spec.py"}
    for path in files:  # an edit of any file of the training code: another digest
        original = path.read_bytes()
        path.write_bytes(original + b"\n# an edit\n")
        assert code_digest() != digest, path
        path.write_bytes(original)
    assert code_digest() == digest
    (fake / "plots" / "common.py").write_text("x = 2\n")  # code training does not run: no change
    assert code_digest() == digest
    (fake / "train" / "added.py").write_text("x = 1\n")  # nor does a module nothing imports
    assert code_digest() == digest
    step = fake / "train" / "step.py"
    step.write_text(step.read_text() + "\n\ndef planted():\n    from depthwidth.plots import common  # noqa\n")
    planted = code_digest()
    assert planted != digest and fake / "plots" / "common.py" in contracts.code_files(
        contracts.TRAINING_MODULE, root=fake
    )
    (fake / "plots" / "common.py").write_text("x = 3\n")  # now imported, if only inside a function: it counts
    assert code_digest() != planted


def test_validation_windows_cover_each_target_once():
    for n_tokens, n_ctx in [(100, 16), (97, 16), (17, 16), (1000, 1)]:
        starts = validation_starts(n_tokens, n_ctx)
        targets = np.concatenate([np.arange(s + 1, s + n_ctx + 1) for s in starts])
        assert len(np.unique(targets)) == len(targets)  # no target twice
        assert targets.max() < n_tokens  # every window fits
        assert len(targets) == (n_tokens - 1) // n_ctx * n_ctx  # only the tail shorter than a window is left


def test_full_validation_is_the_token_mean_over_all_windows_in_any_batching(data_dir):
    spec = validate_spec(tiny_spec(data_dir))
    torch.manual_seed(0)
    model = GPT(model_config(spec)).eval()
    shard = np.fromfile(data_dir / "val.bin", dtype=np.uint16)[:1000]
    n_ctx = spec["model"]["n_ctx"]
    starts = validation_starts(len(shard), n_ctx)
    windows = torch.from_numpy(shard[starts[:, None] + np.arange(n_ctx + 1)].astype(np.int64))
    with torch.no_grad():
        logits, _ = model(windows[:, :-1], windows[:, 1:])
        by_hand = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))
    for batch_size in (1, 7, len(starts)):
        full = evaluate_full(model, shard, n_ctx, batch_size, torch.device("cpu"), contextlib.nullcontext)
        assert full == pytest.approx(float(by_hand), rel=1e-5)


def test_final_val_loss_is_the_full_split_whatever_the_sampled_batches(data_dir, tmp_path):
    a = train(tiny_spec(data_dir, steps=12, eval_batches=1), tmp_path / "a", threads=1, progress=False)
    b = train(tiny_spec(data_dir, steps=12, eval_batches=3), tmp_path / "b", threads=1, progress=False)
    first = [float(read_curve(tmp_path / run / "curve.csv")[0]["val_loss"]) for run in ("a", "b")]
    assert first[0] != first[1]  # the interim evaluations sample different windows
    assert a["final_val_loss"] == b["final_val_loss"]  # the final one covers the same, whole split
    assert float(read_curve(tmp_path / "a" / "curve.csv")[-1]["val_loss"]) == a["final_val_loss"]


def test_max_epochs_caps_the_tokens_and_metrics_count_epochs(data_dir, tmp_path):
    budget_steps, tokens_per_step, train_tokens = 30, 8 * 16, 50_000
    capped = train(tiny_spec(data_dir, steps=budget_steps, max_epochs=0.05), tmp_path / "a", threads=1, progress=False)
    assert capped["steps"] == math.floor(0.05 * train_tokens / tokens_per_step) == 19
    assert capped["tokens_seen"] <= 0.05 * train_tokens
    assert capped["epochs"] == pytest.approx(capped["tokens_seen"] / train_tokens)
    assert capped["tokens_per_parameter"] == capped["tokens_seen"] / capped["n_params_nonembedding"]
    assert read_curve(tmp_path / "a" / "curve.csv")[-1]["step"] == "19"  # the schedule ends at the cap
    free = train(tiny_spec(data_dir, steps=budget_steps, max_epochs=100), tmp_path / "b", threads=1, progress=False)
    assert free["steps"] == budget_steps  # a cap above the budget changes nothing


# ---------------------------------------------------------------------------------------------
# Precision: fp32 or bf16 autocast, as the spec's recipe says

# Largest |final val loss (bf16) - final val loss (fp32)| allowed, nats. Measured on this spec's model (2 layers,
# width 32, 30 steps), seeds 0-4: differences -3e-5 to +1.2e-4 nats, while the seeds' own final losses spread
# 3.130-3.189 (sd 0.03 nats). 2e-3 is 16x the largest difference seen and 1/15 of the seed sd: bf16 may
# round differently, not train a different model.
BF16_LOSS_TOLERANCE = 2e-3


def test_precision_enum_is_the_schemas_and_each_has_an_autocast_dtype():
    from depthwidth.spec import load_schema
    from depthwidth.train.loop import AUTOCAST_DTYPES

    rule = load_schema()["$defs"]["recipe"]["properties"]["precision"]
    assert rule["enum"] == list(AUTOCAST_DTYPES) and rule["default"] == "fp32"
    assert AUTOCAST_DTYPES["fp32"] is None  # fp32 runs without any autocast context: the step as it always was


def test_bf16_ends_within_tolerance_of_fp32_and_is_really_bf16(data_dir, tmp_path):
    fp32 = train(tiny_spec(data_dir), tmp_path / "fp32", threads=1, progress=False)
    bf16 = train(tiny_spec(data_dir, precision="bf16"), tmp_path / "bf16", threads=1, progress=False)
    assert fp32["spec"]["recipe"]["precision"] == "fp32" and fp32["device"] == "cpu"  # the default
    assert bf16["device"] == "cpu (bf16 autocast)"
    assert abs(bf16["final_val_loss"] - fp32["final_val_loss"]) <= BF16_LOSS_TOLERANCE
    assert bf16["final_val_loss"] != fp32["final_val_loss"]  # the matmuls did round to bf16
    assert bf16["final_val_loss"] < float(read_curve(tmp_path / "bf16" / "curve.csv")[0]["val_loss"]) - 0.5


def test_bf16_is_bit_identical_across_reruns_and_a_resume(data_dir, tmp_path, capsys, monkeypatch):
    spec = tiny_spec(data_dir, steps=12, checkpoint_interval=5, precision="bf16")
    fresh = train(spec, tmp_path / "fresh", threads=1, progress=False)
    again = train(spec, tmp_path / "again", threads=1, progress=False)
    assert (tmp_path / "again" / "curve.csv").read_text() == (tmp_path / "fresh" / "curve.csv").read_text()
    assert losses(again) == losses(fresh)

    ckpt = tmp_path / "ck" / CHECKPOINT_NAME
    with monkeypatch.context() as keep:
        keep.setattr("depthwidth.train.loop.remove_checkpoint", lambda path: None)  # a real checkpoint, left at step 10
        train(spec, tmp_path / "first", checkpoint_dir=ckpt.parent, threads=1, progress=False)
    assert torch.load(ckpt, weights_only=True)["step"] == 10
    capsys.readouterr()
    resumed = train(spec, tmp_path / "resumed", checkpoint_dir=ckpt.parent, threads=1, progress=False)
    assert f"resuming from step 10 ({ckpt})" in capsys.readouterr().err
    assert (tmp_path / "resumed" / "curve.csv").read_text() == (tmp_path / "fresh" / "curve.csv").read_text()
    assert losses(resumed) == losses(fresh)


# ---------------------------------------------------------------------------------------------
# The graphed step (train/step.py): rehearsed on the CPU, where the graph is re-executed


@pytest.mark.parametrize("recipe", [{}, {"precision": "bf16"}, {"grad_clip": None}])
def test_the_graphed_step_rehearsed_on_the_cpu_gives_the_eager_curve_byte_for_byte(data_dir, tmp_path, recipe):
    spec = tiny_spec(data_dir, steps=14, **recipe)
    eager = train(spec, tmp_path / "eager", threads=1, progress=False, step_mode="eager")
    graphed = train(spec, tmp_path / "graph", threads=1, progress=False, step_mode="graph")
    assert (tmp_path / "graph" / "curve.csv").read_bytes() == (tmp_path / "eager" / "curve.csv").read_bytes()
    assert losses(graphed) == losses(eager)
    label = "cpu (bf16 autocast)" if "precision" in recipe else "cpu"
    assert graphed["device"] == eager["device"] == label  # no graph on a CPU


def test_a_graphed_step_replays_on_its_own_buffers_after_the_warm_up_and_matches_eager_steps():
    from depthwidth.train.step import WARMUP_STEPS, GraphedStep

    recipe = {"weight_decay": 0.1, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8}
    ours, theirs = _tiny_model(0), _tiny_model(0)
    graphed = GraphedStep(ours, make_optimizer(ours, recipe), 1.0, contextlib.nullcontext, (3, 16), "cpu")
    eager_opt = make_optimizer(theirs, recipe)
    gen = torch.Generator().manual_seed(1)
    for i in range(WARMUP_STEPS + 4):
        x, y = torch.randint(0, 64, (2, 3, 16), generator=gen)  # a new batch and rate every step
        assert graphed.captured == (i > WARMUP_STEPS)
        loss = graphed(x, y, 1e-2 * (i + 1))
        assert torch.equal(loss, train_step(theirs, eager_opt, x, y, 1e-2 * (i + 1), 1.0, contextlib.nullcontext))
        assert torch.equal(graphed.x, x) == graphed.captured  # the warm-up steps take the batch directly
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(a, b)
    assert graphed.captured and graphed.loss is not None


def test_the_step_modes_refuse_what_they_cannot_do(data_dir, tmp_path):
    from depthwidth.train.step import make_step

    model = _tiny_model(0)
    recipe = {"weight_decay": 0.1, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "grad_clip": 1.0, "batch_size": 3}
    optimizer = make_optimizer(model, recipe)
    with pytest.raises(ValueError, match="--step: must be one of auto, eager, graph, got 'fast'"):
        make_step("fast", model, model, optimizer, recipe, 16, "cpu", contextlib.nullcontext, False)
    with pytest.raises(ValueError, match="compile is true"):
        make_step("graph", model, model, optimizer, recipe, 16, "cpu", contextlib.nullcontext, True)
    auto = make_step("auto", model, model, optimizer, recipe, 16, "cpu", contextlib.nullcontext, False)
    assert not hasattr(auto, "captured")  # auto is eager on the CPU


# ---------------------------------------------------------------------------------------------
# The optimizer and the process's memory


def _tiny_model(seed: int) -> GPT:
    torch.manual_seed(seed)
    return GPT({"vocab_size": 64, "n_ctx": 16, "n_layer": 2, "d_model": 16, "n_head": 2})


def _steps(model, optimizer, n: int, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    for i in range(n):
        x, y = torch.randint(0, 64, (2, 3, 16), generator=gen)
        train_step(model, optimizer, x, y, 1e-2 * (i + 1), 1.0, contextlib.nullcontext)


def test_adamw_equals_torch_fused_adamw_bit_for_bit_and_resumes_from_its_state_dict():
    recipe = {"weight_decay": 0.1, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8}
    ours, theirs = _tiny_model(0), _tiny_model(0)
    groups = [
        {"params": [p for p in theirs.parameters() if p.dim() >= 2], "weight_decay": 0.1},
        {"params": [p for p in theirs.parameters() if p.dim() < 2], "weight_decay": 0.0},
    ]
    reference = torch.optim.AdamW(groups, lr=0.0, betas=(0.9, 0.95), eps=1e-8, fused=True)
    opt = make_optimizer(ours, recipe)
    assert isinstance(opt, AdamW)
    _steps(ours, opt, 6, seed=1)
    _steps(theirs, reference, 6, seed=1)
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(a, b)
    assert any(not torch.equal(a, b) for a, b in zip(ours.parameters(), _tiny_model(0).parameters()))  # it trained

    # A fresh optimizer loaded from the state dict continues exactly as the original does.
    saved_model = copy.deepcopy(ours.state_dict())
    saved = copy.deepcopy(opt.state_dict())
    _steps(ours, opt, 3, seed=2)
    resumed = _tiny_model(5)
    resumed.load_state_dict(saved_model)
    resumed_opt = make_optimizer(resumed, recipe)
    resumed_opt.load_state_dict(saved)
    _steps(resumed, resumed_opt, 3, seed=2)
    for a, b in zip(ours.parameters(), resumed.parameters(), strict=True):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match="do not match"):
        make_optimizer(
            GPT({"vocab_size": 64, "n_ctx": 16, "n_layer": 1, "d_model": 16, "n_head": 2}), recipe
        ).load_state_dict(saved)


def test_a_training_step_does_not_import_torch_dynamo():
    """torch.optim imports torch._dynamo on first use (~2 s per job); the training path must not."""
    probe = (
        "import sys, contextlib, torch\n"
        "from depthwidth.train.model import GPT\n"
        "from depthwidth.train.optim import make_optimizer\n"
        "from depthwidth.train.step import train_step\n"
        "m = GPT({'vocab_size': 64, 'n_ctx': 16, 'n_layer': 1, 'd_model': 16, 'n_head': 2})\n"
        "o = make_optimizer(m, {'weight_decay': 0.1, 'beta1': 0.9, 'beta2': 0.95, 'eps': 1e-8})\n"
        "x = torch.randint(0, 64, (2, 16))\n"
        "train_step(m, o, x, x, 1e-3, 1.0, contextlib.nullcontext)\n"
        "o.load_state_dict(o.state_dict())\n"
        "print('torch._dynamo' in sys.modules, 'torch.optim' in sys.modules)\n"
        "torch.optim.AdamW(m.parameters(), fused=True).step()\n"  # the control: torch.optim does import it
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=subprocess_env(), capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True", "True"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc")
def test_keep_freed_memory_stops_the_page_faults_of_reallocated_buffers():
    """Churning 16 MiB of buffers: no page faults with the setting; the control, a malloc that serves
    every large block from fresh mmap pages (glibc's behaviour until its dynamic threshold grows, which
    depends on the process's history), faults in every page of every buffer."""
    probe = (
        "import ctypes, resource, sys, torch\n"
        "from depthwidth.train.loop import keep_freed_memory\n"
        "if sys.argv[1] == 'keep': assert keep_freed_memory()\n"
        "else: assert ctypes.CDLL(None).mallopt(-3, 128 << 10)\n"  # M_MMAP_THRESHOLD: glibc's initial 128 KiB, fixed
        "def churn(n):\n"
        "    for _ in range(n):\n"
        "        held = [torch.ones(1 << 20) for _ in range(4)]\n"  # 16 MiB of activations, freed together
        "        del held\n"
        "churn(5)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "churn(50)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n"
    )
    faults = {}
    for mode in ("mmap", "keep"):
        out = subprocess.run(
            [sys.executable, "-c", probe, mode], env=subprocess_env(), capture_output=True, text=True, check=True
        )
        faults[mode] = int(out.stdout)
    assert faults["mmap"] > 50 * 3000  # 4 buffers x 1024 pages of 4 KiB, fresh every time
    assert faults["keep"] < 500


def test_z_loss_adds_palm_s_term_to_the_gradient_and_leaves_the_logged_loss_the_cross_entropy(data_dir):
    from depthwidth.train.step import loss_and_gradients

    torch.manual_seed(0)
    model = GPT(model_config(tiny_spec(data_dir)))
    x, y = sample_batch(np.fromfile(data_dir / "train.bin", dtype=np.uint16), np.random.default_rng(0), 4, 16)
    logged = loss_and_gradients(model, x, y, None, contextlib.nullcontext, z_loss=0.5)
    got = [p.grad.clone() for p in model.parameters()]
    logits, ce = model(x, y)
    objective = ce + 0.5 * (logits.logsumexp(-1) ** 2).mean()  # written out independently
    want = torch.autograd.grad(objective, list(model.parameters()), retain_graph=True)
    assert float(logged) == pytest.approx(float(ce), abs=1e-6)
    assert all(torch.allclose(g, w, atol=1e-6) for g, w in zip(got, want))
    plain = torch.autograd.grad(ce, list(model.parameters()))
    assert not all(torch.allclose(g, p, atol=1e-6) for g, p in zip(got, plain))  # the term is there


def test_z_loss_and_qk_norm_reach_a_run_and_absent_change_nothing(data_dir, tmp_path):
    runs = {}
    for name, section, extra in (
        ("plain", "recipe", {}),
        ("z", "recipe", {"z_loss": 1e-2}),
        ("qk", "model", {"qk_norm": True}),
    ):
        spec = tiny_spec(data_dir, steps=12)
        spec[section].update(extra)
        train(spec, tmp_path / name, progress=False)
        runs[name] = read_curve(tmp_path / name / "curve.csv")
    first = [float(r["train_loss"]) for r in runs["plain"] if r["train_loss"]][0]
    assert float([r for r in runs["z"] if r["train_loss"]][0]["train_loss"]) == first  # same model at step 1
    assert runs["z"] != runs["plain"] and runs["qk"] != runs["plain"]
    assert "qk_norm" not in tiny_spec(data_dir)["model"] and "z_loss" not in tiny_spec(data_dir)["recipe"]
