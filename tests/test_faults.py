"""Fault injection: nothing stale and nothing corrupt is accepted, and each fault is one clear line.

Corrupt or garbage data files, out-of-range token ids, a meta.json from an older prepare-data, a
checkpoint written by other code, malformed metrics.json or meta.json, a PNG with a garbage body,
a vocabulary the corpus cannot fill, a `check` pointed at a folder that holds no results; configs
with NaN, infinite or unbounded numbers, run ids that would collide, a key given twice, broken YAML.
The faults that need a built workflow (a deleted run output is rebuilt, `snakemake check` always
runs, a moved checkout keeps its cache, claims.csv edits) are in test_end_to_end.py and the check
tests below.
"""

from __future__ import annotations

import copy
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from conftest import REPO, SLICE, package_env, run_snakemake
from depthwidth import contracts
from depthwidth.cli import main as cli_main
from depthwidth.contracts import RUN_DIGESTS
from depthwidth.data import tokens
from depthwidth.io import file_record, sha256_file
from depthwidth.plan import config
from depthwidth.plan import jobs as plan
from depthwidth.spec import complete, load_schema, run_plan
from depthwidth.train.checkpoint import CHECKPOINT_NAME, CheckpointKey, RunState, load_checkpoint, save_checkpoint
from depthwidth.train.loop import spec_hash, train, training_steps, validate_spec
from depthwidth.train.outputs import derived_metrics

CI_CONFIG = REPO / "config" / "ci.yaml"


def cli(capsys, *argv: str) -> tuple[int, str, list[str]]:
    """Exit code, stdout and stderr lines of `python -m depthwidth ARGV` run in this process."""
    code = cli_main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


def subprocess_cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "depthwidth", *argv], env=package_env(), capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def data(slice_data, tmp_path) -> Path:
    """A private copy of the slice's token shards (vocab 512), free to corrupt."""
    return Path(shutil.copytree(slice_data, tmp_path / "data"))


def tiny_spec(data_dir: Path, steps: int = 12, **recipe) -> dict:
    """A small run's complete spec, as the plan passes it (every default filled in)."""
    batch, ctx = 4, 16
    spec = {
        "data": str(data_dir),
        "seed": 1,
        "model": {"vocab_size": 512, "n_ctx": ctx, "n_layer": 1, "d_model": 16, "n_head": 2},
        "recipe": {
            "token_budget": steps * batch * ctx,
            "batch_size": batch,
            "lr": 1e-3,
            "eval_interval": 5,
            "eval_batches": 1,
            "checkpoint_interval": 0,
            **recipe,
        },
    }
    return complete("train_spec", spec)


def train_cli(capsys, spec: dict, out: Path, *argv: str) -> tuple[int, list[str]]:
    """Exit code and stderr lines of `train --spec-json SPEC --out OUT ARGV --no-progress`."""
    code, _, err = cli(capsys, "train", "--spec-json", json.dumps(spec), "--out", str(out), *argv, "--no-progress")
    return code, err


# ---------------------------------------------------------------------------------------------
# Training refuses corrupt data before its first step


def test_a_shard_overwritten_with_zeros_is_refused(data, tmp_path, capsys):
    size = (data / "train.bin").stat().st_size
    (data / "train.bin").write_bytes(bytes(size))
    code, err = train_cli(capsys, tiny_spec(data), tmp_path / "run")
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"depthwidth train: error: {data / 'train.bin'}: sha256 ")
    assert "differs from the recorded" in err[0] and "rebuild the data" in err[0]
    assert not (tmp_path / "run").exists()


def test_token_ids_beyond_the_vocabulary_are_refused(data, tmp_path, capsys):
    meta = json.loads((data / "meta.json").read_text())
    shard = np.fromfile(data / "val.bin", dtype=np.uint16)
    shard[7] = 600  # >= vocab_size 512: the embedding lookup would fail mid-run
    shard.tofile(data / "val.bin")
    meta["files"]["val.bin"] = file_record(data / "val.bin")  # consistent checksums: only the range is wrong
    (data / "meta.json").write_text(json.dumps(meta))
    code, err = train_cli(capsys, tiny_spec(data), tmp_path / "run")
    assert err == [
        f"depthwidth train: error: {data / 'val.bin'}: token id 600 is out of range for meta.json's vocab_size 512"
    ]
    assert code == 1 and not (tmp_path / "run").exists()


def test_a_meta_json_from_an_older_prepare_data_asks_for_a_rebuild(data, tmp_path, capsys):
    meta = json.loads((data / "meta.json").read_text())
    del meta["files"]
    (data / "meta.json").write_text(json.dumps(meta))
    code, err = train_cli(capsys, tiny_spec(data), tmp_path / "run")
    assert code == 1 and len(err) == 1
    assert err[0].startswith(f"depthwidth train: error: {data / 'meta.json'}: rebuild the data: ")


def test_corrupt_shard_error_is_one_line_without_traceback(data, tmp_path):
    (data / "val.bin").write_bytes(bytes((data / "val.bin").stat().st_size))
    result = subprocess_cli("train", "--spec-json", json.dumps(tiny_spec(data)), "--out", str(tmp_path / "run"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "val.bin: sha256" in result.stderr


# ---------------------------------------------------------------------------------------------
# A checkpoint written by other code is not resumed


def test_a_checkpoint_from_other_code_is_discarded_and_the_run_equals_a_fresh_one(data, tmp_path, capsys, monkeypatch):
    spec = tiny_spec(data, steps=12, checkpoint_interval=5)
    fresh = train(spec, tmp_path / "fresh", threads=1, device="cpu", progress=False)

    ckpt = tmp_path / "ck" / CHECKPOINT_NAME
    old_key = CheckpointKey(spec_hash(validate_spec(spec)), "0" * 64, str(torch.__version__))
    # a state no resume could survive: no weights, and a curve no real run has
    save_checkpoint(ckpt, old_key, RunState(5, {}, {}, {}, [[0, 0, None, 123.0, None]], [], 9.0))
    monkeypatch.setattr("depthwidth.train.loop.remove_checkpoint", lambda path: None)  # keep it to inspect
    capsys.readouterr()
    rerun = train(spec, tmp_path / "rerun", checkpoint_dir=ckpt.parent, threads=1, device="cpu", progress=False)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"depthwidth train: checkpoint {ckpt} was written by other code (package code 000000000000, "
        f"now {validate_and_key(spec).code_digest[:12]}); starting over from step 0"
    ]
    assert (tmp_path / "rerun" / "curve.csv").read_text() == (tmp_path / "fresh" / "curve.csv").read_text()
    assert rerun["final_val_loss"] == fresh["final_val_loss"]
    overwritten = load_checkpoint(ckpt, validate_and_key(spec))  # rewritten by this code at step 10
    assert overwritten is not None and overwritten.step == 10


def test_editing_model_py_between_kill_and_rerun_starts_over(data, tmp_path):
    """The issue as reported: kill after the first checkpoint, change the init std, rerun."""
    package = tmp_path / "code"
    shutil.copytree(
        REPO / "workflow" / "depthwidth", package / "depthwidth", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**os.environ, "PYTHONPATH": str(package)}
    spec = json.dumps(tiny_spec(data, steps=60, checkpoint_interval=5, eval_interval=20))
    out, ckpt = tmp_path / "run", tmp_path / "run.ckpt" / CHECKPOINT_NAME
    cmd = [sys.executable, "-m", "depthwidth", "train", "--spec-json", spec, "--threads", "1", "--no-progress"]
    proc = subprocess.Popen([*cmd, "--out", str(out)], env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ckpt.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert ckpt.exists() and not (out / "metrics.json").exists()

    model = package / "depthwidth" / "train" / "model.py"
    model.write_text(model.read_text().replace("std=0.02)", "std=0.05)"))
    rerun = subprocess.run([*cmd, "--out", str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"depthwidth train: checkpoint {ckpt} was written by other code (package code " in rerun.stderr
    assert "starting over from step 0" in rerun.stderr and "resuming" not in rerun.stderr
    fresh = subprocess.run([*cmd, "--out", str(tmp_path / "fresh")], env=env, capture_output=True, timeout=300)
    assert fresh.returncode == 0
    assert (out / "curve.csv").read_text() == (tmp_path / "fresh" / "curve.csv").read_text()


def flip_middle_byte(blob: bytes) -> bytes:
    middle = len(blob) // 2
    return blob[:middle] + bytes([blob[middle] ^ 0xFF]) + blob[middle + 1 :]


def garbage_middle_4kb(blob: bytes) -> bytes:
    start = len(blob) // 2 - 2048
    return blob[:start] + np.random.default_rng(0).bytes(4096) + blob[start + 4096 :]


@pytest.mark.parametrize("damage", [flip_middle_byte, garbage_middle_4kb], ids=["one-byte", "4kb-garbage"])
def test_a_damaged_checkpoint_starts_over_and_the_run_equals_a_fresh_one(data, tmp_path, capsys, monkeypatch, damage):
    spec = tiny_spec(data, steps=12, checkpoint_interval=5)
    fresh = train(spec, tmp_path / "fresh", threads=1, device="cpu", progress=False)
    ckpt = tmp_path / "ck" / CHECKPOINT_NAME
    with monkeypatch.context() as keep:
        keep.setattr("depthwidth.train.loop.remove_checkpoint", lambda path: None)  # a real checkpoint, left at step 10
        train(spec, tmp_path / "first", checkpoint_dir=ckpt.parent, threads=1, device="cpu", progress=False)
    assert load_checkpoint(ckpt, validate_and_key(spec)).step == 10
    ckpt.write_bytes(damage(ckpt.read_bytes()))
    capsys.readouterr()
    argv = ("--checkpoint-dir", str(ckpt.parent), "--threads", "1", "--device", "cpu")
    code, err = train_cli(capsys, spec, tmp_path / "rerun", *argv)
    assert code == 0 and len(err) == 2, err
    assert err[0] == (
        f"depthwidth train: checkpoint {ckpt} does not match its checksum ({ckpt}.sha256): the file is damaged; "
        "starting over from step 0"
    )
    rerun = json.loads((tmp_path / "rerun" / "metrics.json").read_text())
    assert rerun["status"] == "ok" and rerun["final_val_loss"] == fresh["final_val_loss"]
    assert (tmp_path / "rerun" / "curve.csv").read_text() == (tmp_path / "fresh" / "curve.csv").read_text()
    assert not ckpt.parent.exists()  # the run ended: checkpoint and checksum removed


def test_a_checkpoint_without_a_valid_checksum_starts_over(data, tmp_path, capsys):
    spec = tiny_spec(data)
    key = validate_and_key(spec)
    ckpt = tmp_path / "ck" / CHECKPOINT_NAME
    save_checkpoint(ckpt, key, RunState(5, {}, {}, {}, [], [], 1.0))
    sidecar = ckpt.with_name(CHECKPOINT_NAME + ".sha256")
    sidecar.write_text("not a digest\n")
    assert load_checkpoint(ckpt, key) is None
    assert capsys.readouterr().err.strip().splitlines() == [
        f"depthwidth train: checkpoint {ckpt} has a garbled checksum ({sidecar} holds no sha256); "
        "starting over from step 0"
    ]
    sidecar.unlink()
    assert load_checkpoint(ckpt, key) is None
    assert capsys.readouterr().err.strip().splitlines() == [
        f"depthwidth train: checkpoint {ckpt} has no checksum ({sidecar} is missing); starting over from step 0"
    ]


def test_a_checkpoint_from_another_torch_is_discarded(data, tmp_path, capsys):
    spec = tiny_spec(data)
    key = validate_and_key(spec)
    ckpt = tmp_path / "ck" / CHECKPOINT_NAME
    save_checkpoint(ckpt, CheckpointKey(key.spec_hash, key.code_digest, "1.0.0"), RunState(5, {}, {}, {}, [], [], 1.0))
    assert load_checkpoint(ckpt, key) is None
    assert (
        capsys.readouterr().err.strip().endswith(f"(torch 1.0.0, now {torch.__version__}); starting over from step 0")
    )


def test_a_checkpoint_lacking_state_is_refused_and_kept(data, tmp_path, capsys):
    ckpt = tmp_path / "ck" / CHECKPOINT_NAME
    ckpt.parent.mkdir()
    torch.save({**vars(validate_and_key(tiny_spec(data))), "step": 5}, ckpt)
    ckpt.with_name(CHECKPOINT_NAME + ".sha256").write_text(sha256_file(ckpt))  # intact, as written
    spec = json.dumps(tiny_spec(data))
    code, _, err = cli(
        capsys, "train", "--spec-json", spec, "--out", str(tmp_path / "run"), "--checkpoint-dir", str(ckpt.parent)
    )
    assert code == 1 and err == [
        f"depthwidth train: error: {ckpt}: unreadable checkpoint (no model, optimizer, rng, curve, entropy, elapsed); "
        "delete it to start over"
    ]
    assert ckpt.exists() and not (tmp_path / "run").exists()


def validate_and_key(spec: dict) -> CheckpointKey:
    from depthwidth.train.checkpoint import current_key

    return current_key(spec_hash(validate_spec(spec)))


# ---------------------------------------------------------------------------------------------
# prepare-data: a vocabulary the corpus cannot fill


def prepare_argv(data: dict) -> list[str]:
    """prepare-data of `data` without its progress bars, so that stderr holds its errors and warnings alone."""
    return ["prepare-data", "--data-json", json.dumps(data), "--no-progress"]


def test_a_vocab_size_the_corpus_cannot_fill_is_an_error(tmp_path, capsys):
    data = {"corpus": "text", "paths": [str(SLICE)], "val_fraction": 0.25, "vocab_size": 70000, "chunk_chars": 20000}
    code, _, err = cli(capsys, *prepare_argv(data), "--out", str(tmp_path / "out"))
    assert code == 1 and len(err) == 1
    assert err[0].startswith("depthwidth prepare-data: error: data.vocab_size: 70000 asked, but BPE on this corpus")
    supported = int(err[0].rsplit(" ", 1)[1])
    assert 512 < supported < 70000
    assert not (tmp_path / "out" / "meta.json").exists() and not (tmp_path / "out" / "train.bin").exists()
    data["vocab_size"] = supported  # the size it names works
    assert tokens.prepare(data, tmp_path / "ok")["vocab_size"] == supported


def test_a_validation_split_too_small_for_training_is_refused_before_anything_is_written(tmp_path, capsys):
    min_tokens = ci_plan().min_split_tokens()
    assert min_tokens == 64 + 1  # every ci run has n_ctx 64
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("kjv-08-ruth.txt", "kjv-32-jonah.txt"):
        shutil.copy(SLICE / name, folder / name)
    (folder / "note.txt").write_text("A note of a few words, fewer tokens than one window of the training runs.\n")
    data = {"corpus": "text", "paths": [str(folder)], "val_fraction": 0.01, "vocab_size": 300, "chunk_chars": 20000}
    argv = [*prepare_argv(data), "--min-tokens", str(min_tokens)]
    code, _, err = cli(capsys, *argv, "--out", str(tmp_path / "out"))  # validation: the note alone
    assert code == 1 and len(err) == 1, err
    assert re.fullmatch(
        r"depthwidth prepare-data: error: data\.val_fraction: the validation split has \d\d tokens, but the "
        r"training runs need at least 65 \(--min-tokens: their longest n_ctx \+ 1\); raise data\.val_fraction "
        r"or add text",
        err[0],
    ), err
    assert list((tmp_path / "out").iterdir()) == []
    data["val_fraction"] = 0.3  # what the line advises
    argv[2] = json.dumps(data)
    code, _, err = cli(capsys, *argv, "--out", str(tmp_path / "ok"))
    meta = tokens.read_meta(tmp_path / "ok")
    assert code == 0 and meta["splits"]["val"]["tokens"] >= min_tokens and meta["splits"]["train"]["tokens"] >= 65


def test_a_split_far_from_val_fraction_is_a_one_line_warning_recorded_in_meta(tmp_path, capsys):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("kjv-08-ruth.txt", "sotu-1791-Washington-1.txt"):  # two documents of ~13k characters
        shutil.copy(SLICE / name, folder / name)
    data = {"corpus": "text", "paths": [str(folder)], "val_fraction": 0.1, "vocab_size": 300, "chunk_chars": 20000}
    code, _, err = cli(capsys, *prepare_argv(data), "--out", str(tmp_path / "out"))
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert code == 0 and 0.4 < meta["val_share"] < 0.6  # one of the two documents
    assert err == [f"depthwidth prepare-data: warning: {meta['warnings'][0]}"]
    assert meta["warnings"][0].startswith(
        f"data.val_fraction: the validation split holds {meta['val_share']:.2%} of the characters, "
        "outside [0.5, 2] x val_fraction 0.1 ("
    )
    data["chunk_chars"] = 1000  # what the warning advises: smaller documents split close to val_fraction
    code, _, err = cli(capsys, *prepare_argv(data), "--out", str(tmp_path / "fine"))
    meta = json.loads((tmp_path / "fine" / "meta.json").read_text())
    assert code == 0 and err == [] and meta["warnings"] == [] and 0.1 <= meta["val_share"] <= 0.15


# ---------------------------------------------------------------------------------------------
# check: every problem listed, never a traceback


@pytest.fixture
def results(slice_data, tmp_path) -> Path:
    """A results folder holding only the ci config's data (the slice's shards under its name)."""
    folder = tmp_path / "results"
    shutil.copytree(slice_data, folder / ci_plan().data_dir.removeprefix("results/"))
    return folder


def check_lines(capsys, results: Path) -> tuple[int, list[str]]:
    code, out, err = cli(capsys, "check", str(results), "--configfile", str(CI_CONFIG))
    assert not err, err
    return code, [line.removeprefix("  - ") for line in out.splitlines()[1:]]


def ci_plan() -> plan.Plan:
    return plan.from_config(config.read(CI_CONFIG))


def data_file(results: Path, name: str) -> Path:
    return results / ci_plan().data_dir.removeprefix("results/") / name


def test_check_passes_good_data_and_names_each_corrupt_file(results, capsys):
    _, lines = check_lines(capsys, results)
    assert not [line for line in lines if "/data/" in line]  # the intact data folder has no problem
    train_bin, tokenizer = data_file(results, "train.bin"), data_file(results, "tokenizer.json")
    train_bin.write_bytes(bytes(train_bin.stat().st_size))
    tokenizer.write_bytes(b" " * tokenizer.stat().st_size)  # garbage of the same size
    code, lines = check_lines(capsys, results)
    data_lines = [line for line in lines if "/data/" in line]
    assert code == 1 and len(data_lines) == 2
    assert data_lines[0].startswith(f"{tokenizer}: sha256 ") and data_lines[0].endswith("in meta.json")
    assert data_lines[1].startswith(f"{train_bin}: sha256 ")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.update(dtype="float7"), "dtype must be uint16 or uint32, got 'float7'"),
        (lambda m: m.update(splits={}), "splits.train.tokens missing or not an int"),
        (lambda m: m.pop("files"), "rebuild the data: it records no size and sha256 of train.bin"),
    ],
    ids=["garbage-dtype", "empty-splits", "old-meta"],
)
def test_check_lists_a_malformed_meta_json(results, capsys, change, message):
    path = data_file(results, "meta.json")
    meta = json.loads(path.read_text())
    change(meta)
    path.write_text(json.dumps(meta))
    code, lines = check_lines(capsys, results)
    data_lines = [line for line in lines if "/data/" in line]
    assert code == 1 and len(data_lines) == 1 and data_lines[0].startswith(f"{path}: {message}"), data_lines


def planned_run(results: Path) -> tuple[Path, dict]:
    """The folder and spec of the first run the ci config plans."""
    run_id, job = sorted(ci_plan().runs.items())[0]
    return results / job.folder.removeprefix("results/"), job.spec


def write_run(folder: Path, planned: dict, final: object, curve_last: float, **fields) -> None:
    """A run's curve.csv, entropy.csv and metrics.json (recording their sha256), as training writes them,
    with `fields` overridden."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = validate_spec(planned)
    train_tokens = json.loads(data_file(folder.parents[1], "meta.json").read_text())["splits"]["train"]["tokens"]
    steps = training_steps(spec["recipe"], spec["model"]["n_ctx"], train_tokens)
    derived = derived_metrics(spec, steps, train_tokens)
    tokens = [0, derived["tokens_seen"]]
    curve = pd.DataFrame(
        {"step": [0, steps], "tokens": tokens, "train_loss": [None, 3.0], "val_loss": [4.0, curve_last]}
    )
    curve["lr"] = [None, 1e-3]
    (folder / "curve.csv").write_text(curve.to_csv(index=False))
    (folder / "entropy.csv").write_text("step,layer,head,entropy\n")
    metrics = derived | {"wall_seconds": 1.0, "tokens_per_second": derived["tokens_seen"], "best_val_loss": 2.0}
    metrics |= {"device": "cpu", "package_version": "0", "git_revision": "x", "status": "ok"}
    metrics |= {field: sha256_file(folder / name) for name, field in RUN_DIGESTS.items()}
    metrics |= {"spec": validate_spec(planned), "final_val_loss": final, **fields}
    (folder / "metrics.json").write_text(json.dumps(metrics))


@pytest.mark.parametrize(
    "final, curve_last, fields, message",
    [
        (2.5, 2.5, {"spec": None}, "its spec None is not a spec object"),
        (2.5, 2.5, {"spec": {}}, "its spec {} is not a spec object"),
        ("low", 2.5, {}, "final_val_loss 'low' is not a number or null"),
        (2.5, 2.5, {"status": "fine"}, "status 'fine' is not one of ok, diverged"),
        (2.5, 3.25, {}, "final_val_loss 2.5 is not the last val_loss of curve.csv (3.25)"),
    ],
    ids=["spec-null", "spec-empty", "loss-not-a-number", "bad-status", "loss-not-the-curve's"],
)
def test_check_lists_a_malformed_metrics_json(results, capsys, final, curve_last, fields, message):
    folder, spec = planned_run(results)
    write_run(folder, spec, 2.5, 2.5)
    _, lines = check_lines(capsys, results)
    assert not [line for line in lines if line.startswith(str(folder))]  # the good run passes
    write_run(folder, spec, final, curve_last, **fields)
    code, lines = check_lines(capsys, results)
    assert code == 1 and [line for line in lines if line.startswith(str(folder))] == [
        f"{folder / 'metrics.json'}: {message}"
    ]


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("recipe.warmup_tokens", 5000, "recipe.warmup_tokens: {planned} planned, 5000 ran"),
        ("recipe.lr_final_frac", 0.5, "recipe.lr_final_frac: 0.1 planned, 0.5 ran"),  # a default the plan filled in
        ("recipe.colour", "red", 'recipe.colour: absent planned, "red" ran'),
    ],
    ids=["warmup", "a-default", "an-extra-key"],
)
def test_check_names_the_first_spec_key_a_run_trained_with_that_the_plan_does_not(results, capsys, key, value, message):
    folder, spec = planned_run(results)
    ran = copy.deepcopy(validate_spec(spec))
    section, name = key.split(".")
    planned = ran[section].get(name)
    ran[section][name] = value
    write_run(folder, spec, 2.5, 2.5, spec=ran)
    code, lines = check_lines(capsys, results)
    assert code == 1 and [line for line in lines if line.startswith(str(folder))] == [
        f"{folder / 'metrics.json'}: its spec differs from the plan's at {message.format(planned=planned)}"
    ]


def edit_a_middle_curve_row(folder: Path) -> None:
    curve = folder / "curve.csv"
    lines = curve.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace(",4.0,", ",3.875,")  # the step-0 evaluation; the last row is left as it was
    curve.write_text("".join(lines))


def edit_the_final_loss_and_the_last_curve_row_alike(folder: Path) -> None:
    metrics = json.loads((folder / "metrics.json").read_text())
    (folder / "metrics.json").write_text(json.dumps({**metrics, "final_val_loss": 2.25}))
    curve = folder / "curve.csv"
    head, last = curve.read_text().rstrip("\n").rsplit("\n", 1)
    curve.write_text(f"{head}\n{last.replace(',2.5,', ',2.25,')}\n")


def sweep_table_cli(capsys, results: Path, experiment: str, run_ids: list[str], out: Path) -> tuple[int, list[str]]:
    runs = {run_id: run_plan(ci_plan().sweep[experiment][run_id]) for run_id in run_ids}
    argv = ("--experiment", experiment, "--runs-json", json.dumps(runs), "--runs-dir", str(results / "runs"))
    code, _, err = cli(capsys, "sweep-table", *argv, "--out", str(out))
    return code, err


@pytest.mark.parametrize(
    "edit", [edit_a_middle_curve_row, edit_the_final_loss_and_the_last_curve_row_alike], ids=["mid-file", "alike"]
)
def test_a_hand_edited_curve_is_named_by_check_and_refused_by_the_sweep_table(results, capsys, tmp_path, edit):
    folder, spec = planned_run(results)
    experiment = ci_plan().runs[folder.name].tables[0].removeprefix("sweep_")
    write_run(folder, spec, 2.5, 2.5)
    assert sweep_table_cli(capsys, results, experiment, [folder.name], tmp_path / "before.csv")[0] == 0
    edit(folder)
    code, lines = check_lines(capsys, results)
    assert code == 1 and [line for line in lines if line.startswith(str(folder))] == [
        f"{folder / 'curve.csv'}: differs from the curve_sha256 its metrics.json records"
    ]
    code, err = sweep_table_cli(capsys, results, experiment, [folder.name], tmp_path / "after.csv")
    assert code == 1 and err == [
        f"depthwidth sweep-table: error: {folder / 'curve.csv'}: differs from the curve_sha256 its metrics.json "
        "records; retrain the run or restore the file"
    ]
    assert not (tmp_path / "after.csv").exists()


@pytest.mark.parametrize("name", ["curve.csv", "entropy.csv"])
def test_the_shaped_training_table_refuses_a_run_whose_files_differ_from_its_metrics(results, capsys, tmp_path, name):
    run_id = ci_plan().entropy_runs[0]
    job = ci_plan().runs[run_id]
    folder = results / job.folder.removeprefix("results/")
    write_run(folder, job.spec, 2.5, 2.5)
    with open(folder / name, "a") as f:
        f.write("5,0,0,1.5\n" if name == "entropy.csv" else "6,96,2.0,,0.001\n")
    specs = json.dumps({run_id: job.spec})
    argv = ("--specs-json", specs, "--runs-dir", str(results / "runs"), "--out", str(tmp_path / "t.csv"))
    code, _, err = cli(capsys, "shaped-training-table", *argv)
    field = name.removesuffix(".csv") + "_sha256"
    assert code == 1 and err == [
        f"depthwidth shaped-training-table: error: {folder / name}: differs from the {field} its metrics.json "
        "records; retrain the run or restore the file"
    ]
    assert not (tmp_path / "t.csv").exists()


def test_check_names_a_sweep_table_cell_that_differs_from_its_run(results, capsys):
    runs = sorted(ci_plan().sweep["headdim"])
    for run_id in runs:
        write_run(results / "runs" / run_id, ci_plan().runs[run_id].spec, 2.5, 2.5)
    table = results / contracts.table_path(ci_plan().name, "sweep_headdim").removeprefix("results/")
    assert sweep_table_cli(capsys, results, "headdim", runs, table)[0] == 0
    _, lines = check_lines(capsys, results)
    assert not [line for line in lines if line.startswith(str(table))]  # the table its runs give passes
    frame = pd.read_csv(table)
    frame.loc[frame["run_id"] == runs[1], "final_val_loss"] = 2.25
    table.write_text(frame.to_csv(index=False))
    code, lines = check_lines(capsys, results)
    assert code == 1 and [line for line in lines if line.startswith(str(table))] == [
        f"{table}: {runs[1]}: final_val_loss 2.25, its run's metrics.json gives 2.5"
    ]


def test_check_decodes_pngs_in_full(results, capsys):
    from PIL import Image

    figure = sorted(ci_plan().figures)[0]
    path = results / contracts.figure_path(ci_plan().name, figure, ".png").removeprefix("results/")
    path.parent.mkdir(parents=True)
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), "white").save(buf, format="PNG")
    good = buf.getvalue()
    path.write_bytes(good)
    _, lines = check_lines(capsys, results)
    assert not [line for line in lines if line.startswith(str(path))]
    path.write_bytes(good[:33] + b"\x00garbage" * 20)  # signature and IHDR intact, body garbage
    code, lines = check_lines(capsys, results)
    png_lines = [line for line in lines if line.startswith(str(path))]
    assert code == 1 and len(png_lines) == 1 and png_lines[0].startswith(f"{path}: not a decodable PNG ("), png_lines


def test_a_failing_check_removes_the_report_an_earlier_check_wrote(results, capsys):
    report = results / contracts.check_path(ci_plan().name).removeprefix("results/")
    report.parent.mkdir(parents=True)
    report.write_text("checked 160 artifacts of config ci: 0 problems\n")  # what a passing check left
    code, out, err = cli(capsys, "check", str(results), "--configfile", str(CI_CONFIG), "--out", str(report))
    assert code == 1 and not err and " problems" in out.splitlines()[0]
    assert not report.exists()


def test_check_wants_a_results_folder(tmp_path):
    result = subprocess_cli("check", str(REPO / "workflow"), "--configfile", str(CI_CONFIG))
    assert result.returncode == 1 and "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"depthwidth check: error: {REPO / 'workflow'}: not a results folder (no data/ or runs/ inside); "
        "pass the folder the workflow writes"
    ]


# ---------------------------------------------------------------- bad configs


def raw() -> dict:
    return yaml.safe_load(CI_CONFIG.read_text())


NUMBERS = [
    ("sweep.n_tolerance", math.nan, "sweep.n_tolerance", "not a finite number"),
    ("sweep.recipe.lr", math.inf, "sweep.recipe.lr", "not a finite number"),
    ("shaped.simulation.dt", -math.inf, "shaped.simulation.dt", "not a finite number"),
    ("seed", 2**70, "seed", "greater than the maximum"),
    ("sweep.seeds", [-1], "sweep.seeds.0", "less than the minimum"),
    ("sweep.design.depths", [2, 10**9], "sweep.design.depths.1", "greater than the maximum"),
    ("shaped.training.model.d_model", 10**9, "shaped.training.model.d_model", "greater than the maximum"),
]


@pytest.mark.parametrize("key,value,named,words", NUMBERS, ids=[n[0] for n in NUMBERS])
def test_numbers_are_finite_and_bounded(key, value, named, words):
    changed = copy.deepcopy(raw())
    *parents, last = key.split(".")
    node = changed
    for part in parents:
        node = node[part]
    node[last] = value
    start = time.perf_counter()
    with pytest.raises(config.ConfigError) as info:
        plan.from_config(changed)
    assert f"'{named}'" in str(info.value) and words in str(info.value), str(info.value)
    assert time.perf_counter() - start < 5  # no planning walks a billion widths


def test_duplicate_yaml_keys_and_yaml_errors_name_the_line(tmp_path):
    text = CI_CONFIG.read_text()
    doubled = tmp_path / "doubled.yaml"
    doubled.write_text(text + "\nseed: 3\n" if "\nseed:" in text else text + "\nname: again\n")
    with pytest.raises(config.ConfigError, match=r"doubled.yaml: not valid YAML at line \d+.*given twice"):
        config.read(doubled)
    result = run_snakemake("-n", "--configfile", str(doubled))
    assert result.returncode != 0 and "given twice" in result.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\ndata: [unclosed\n")
    with pytest.raises(config.ConfigError, match=r"broken.yaml: not valid YAML at line 3"):
        config.read(broken)


def test_learning_rates_that_print_alike_get_their_own_runs():
    changed = raw()
    changed["shaped"]["training"]["learning_rates"] = [0.003, 0.0030000001]
    p = plan.from_config(changed)
    assert len(p.entropy_runs) == 2 * len(p.config["shaped"]["training"]["attentions"])


def test_every_number_in_the_schema_is_bounded_on_both_sides():
    # bounds are numbers (a YAML `1.0e6` without a sign would be a string), and every numeric key has two
    unbounded = []

    def walk(node, path):
        if isinstance(node, dict):
            kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
            if {"number", "integer"} & set(kinds):
                for side in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
                    bounds = [node[key] for key in side if key in node]
                    if not bounds or not all(isinstance(b, int | float) for b in bounds):
                        unbounded.append(f"{path} ({side[0]})")
            for key, child in node.items():
                walk(child, f"{path}.{key}")
        elif isinstance(node, list):
            for index, child in enumerate(node):
                walk(child, f"{path}[{index}]")

    walk(load_schema(), "")
    assert not unbounded, unbounded


def test_a_run_folder_copied_to_another_planned_id_is_refused_by_the_sweep_table(results, capsys, tmp_path):
    folder, spec = planned_run(results)
    experiment = ci_plan().runs[folder.name].tables[0].removeprefix("sweep_")
    write_run(folder, spec, 2.5, 2.5)
    other = next(r for r in ci_plan().sweep[experiment] if r != folder.name)
    copy = results / "runs" / other
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)  # `cp -r runs/A runs/B`: B's metrics.json records A's spec
    code, err = sweep_table_cli(capsys, results, experiment, [other], tmp_path / "t.csv")
    assert code == 1 and err == [
        f"depthwidth sweep-table: error: {copy / 'metrics.json'}: records the spec of another run (digest "
        f"{folder.name.rsplit('-', 1)[1]}), not of {other} (a folder copied or renamed?): retrain it"
    ]
    assert not (tmp_path / "t.csv").exists()


def test_a_second_train_job_of_a_run_waits_for_the_first_and_keeps_its_outputs(data, tmp_path):
    """Issue 55, case 12: Snakemake locks no run a checkpoint adds (a scan's scouts and chosen runs), so two
    workflows sharing a scan could train one run at once, into one folder and checkpoint. A job of a run whose
    lock another holds waits for it, and keeps what that one wrote. Here the test is the first job: it holds the
    lock, trains the run while the second waits, and lets go."""
    from depthwidth.runlock import run_lock

    spec = tiny_spec(data, steps=20)
    out, ckpt, log = tmp_path / "run", tmp_path / "run.ckpt", tmp_path / "second.log"
    command = [sys.executable, "-m", "depthwidth", "train", "--spec-json", json.dumps(spec), "--out", str(out),
               "--checkpoint-dir", str(ckpt), "--no-progress"]  # fmt: skip
    with run_lock(ckpt) as waited, open(log, "w") as err:
        assert not waited
        second = subprocess.Popen(command, env=package_env(), stderr=err)
        deadline = time.monotonic() + 120
        while "waiting" not in log.read_text() and second.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert second.poll() is None, log.read_text()  # it waits: it has not trained beside us
        train(spec, out, ckpt, threads=1, progress=False)
    assert second.wait(timeout=300) == 0
    lines = log.read_text().splitlines()
    assert lines == [
        f"depthwidth train: another job trains this run ({ckpt / 'lock'} is locked): waiting",
        f"depthwidth train: the job it waited for trained this run: {out} stands",
    ]
    assert json.loads((out / "metrics.json").read_text())["spec"] == spec
    assert not ckpt.exists()  # the lock went with the checkpoint's folder
