"""Tokenizer and token shards: round trip, dtype, lengths against meta.json, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, SLICE, package_env
from depthwidth.data import corpus, tokens
from depthwidth.io import file_record, sha256_file
from tokenizers import Tokenizer


def test_shards_match_meta(slice_data):
    meta = json.loads((slice_data / "meta.json").read_text())
    assert meta["dtype"] == "uint16" and meta["vocab_size"] == 512
    for split in ("train", "val"):
        path = slice_data / f"{split}.bin"
        assert path.stat().st_size == meta["splits"][split]["tokens"] * 2
        shard = tokens.load_shard(slice_data, split)
        assert shard.dtype == np.uint16 and shard.max() < meta["vocab_size"]
        # one end-of-text token closes every document
        assert int((shard == meta["eot_id"]).sum()) == meta["splits"][split]["documents"]
    assert meta["splits"]["train"]["documents"] + meta["splits"]["val"]["documents"] == 12
    for summary in meta["splits"].values():  # per source counts add up to the split's
        assert sum(s["tokens"] for s in summary["by_source"].values()) == summary["tokens"]
        assert sum(s["documents"] for s in summary["by_source"].values()) == summary["documents"]
    assert meta["split_groups"] == [] and meta["split_rule"] == corpus.SPLIT_RULE  # the slice has no near copies
    assert meta["warnings"] == [] and 0.25 <= meta["val_share"] <= 1.5 * 0.25  # SPLIT_RULE's bounds
    # size and sha256 of every file, as training and `check` verify them
    for name in ("train.bin", "val.bin", "tokenizer.json"):
        data = (slice_data / name).read_bytes()
        assert meta["files"][name] == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}, name


def test_round_trip_decodes_to_the_original_documents(slice_data):
    meta = json.loads((slice_data / "meta.json").read_text())
    tokenizer = Tokenizer.from_file(str(slice_data / "tokenizer.json"))
    by_id = {d.id: d.text for d in corpus.text_documents([SLICE])}
    shard = np.asarray(tokens.load_shard(slice_data, "val"))
    pieces = np.split(shard, np.flatnonzero(shard == meta["eot_id"]) + 1)[:-1]
    decoded = [tokenizer.decode(piece[:-1].tolist()) for piece in pieces]
    assert decoded == [by_id[i] for i in meta["splits"]["val"]["document_ids"]]
    text = "".join(decoded).encode()
    assert hashlib.sha256(text).hexdigest() == meta["splits"]["val"]["sha256"]


def test_preparing_twice_gives_identical_bytes(slice_data, tmp_path):
    data = {"corpus": "text", "paths": [str(SLICE)], "val_fraction": 0.25, "vocab_size": 512, "chunk_chars": 20000}
    tokens.prepare(data, tmp_path)
    for name in ("train.bin", "val.bin", "tokenizer.json"):
        assert (tmp_path / name).read_bytes() == (slice_data / name).read_bytes(), name


def test_shard_dtype_widens_past_uint16():
    assert tokens.token_dtype(65536) == np.uint16
    assert tokens.token_dtype(65537) == np.uint32


def test_truncated_shard_is_refused(slice_data, tmp_path):
    copy = tmp_path / "data"
    shutil.copytree(slice_data, copy)
    with open(copy / "val.bin", "r+b") as f:
        f.truncate(10)
    with pytest.raises(ValueError, match="val.bin: holds 5 tokens"):
        tokens.load_shard(copy, "val")


def test_tokenizer_depends_on_train_documents_only(slice_data, tmp_path):
    meta = json.loads((slice_data / "meta.json").read_text())
    assert set(meta["splits"]["train"]["document_ids"]).isdisjoint(meta["splits"]["val"]["document_ids"])
    folder = tmp_path / "corpus"
    shutil.copytree(SLICE, folder)
    val_file = folder / meta["splits"]["val"]["document_ids"][0].removeprefix("text/")
    val_file.write_text(val_file.read_text() + " zyzzyva quokka xylophone " * 200)
    data = {"corpus": "text", "paths": [str(folder)], "val_fraction": 0.25, "vocab_size": 512, "chunk_chars": 20000}
    tokens.prepare(data, tmp_path / "out")
    assert (tmp_path / "out" / "tokenizer.json").read_bytes() == (slice_data / "tokenizer.json").read_bytes()
    assert (tmp_path / "out" / "val.bin").read_bytes() != (slice_data / "val.bin").read_bytes()


# The process's own peak RSS in MB: VmHWM (getrusage's ru_maxrss would include the parent's peak, kept across exec).
PEAK_RSS_SCRIPT = """
import json, re, sys
from pathlib import Path
from depthwidth.data import tokens
tokens.prepare(json.loads(sys.argv[1]), sys.argv[2])
print(int(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1)) // 1024)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc (Linux)")
def test_one_long_line_among_small_files_needs_little_memory(tmp_path):
    """A 2 MB single-line file among the slice's files: prepare-data peaks below 300 MB RSS (it took
    ~0.5 GB, ~200 bytes per byte of the line, while the line was one document for the shingles and the tokenizer)."""
    folder = tmp_path / "corpus"
    shutil.copytree(SLICE, folder)
    rng = random.Random(0)
    (folder / "long.txt").write_text(" ".join(f"w{rng.randrange(10**5)}" for _ in range(320_000)) + "\n")
    data = {"corpus": "text", "paths": [str(folder)], "val_fraction": 0.25, "vocab_size": 512, "chunk_chars": 20000}
    run = subprocess.run(
        [sys.executable, "-c", PEAK_RSS_SCRIPT, json.dumps(data), str(tmp_path / "out")],
        env=package_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert int(run.stdout.split()[-1]) < 300, f"peak RSS {run.stdout.split()[-1]} MB"


def test_encoding_in_batches_gives_the_same_shards(slice_data, tmp_path, monkeypatch):
    monkeypatch.setattr(tokens, "ENCODE_BATCH_CHARS", 3000)  # a few documents per batch
    data = {"corpus": "text", "paths": [str(SLICE)], "val_fraction": 0.25, "vocab_size": 512, "chunk_chars": 20000}
    tokens.prepare(data, tmp_path)
    for name in ("train.bin", "val.bin"):
        assert (tmp_path / name).read_bytes() == (slice_data / name).read_bytes(), name


def test_meta_records_each_corpus_file_and_an_edit_that_keeps_the_mtime_is_named(tmp_path, monkeypatch):
    shutil.copytree(SLICE, tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)  # the config names the folder relative to the workflow's folder
    data = {"corpus": "text", "paths": ["corpus"], "val_fraction": 0.25, "vocab_size": 512, "chunk_chars": 20000}
    tokens.prepare(data, tmp_path / "out")
    meta = tokens.read_meta(tmp_path / "out")
    (source,) = meta["sources"]
    assert source["files"] == [{"path": f"corpus/{f.name}", **file_record(f)} for f in sorted(SLICE.glob("*.txt"))]
    monkeypatch.chdir(REPO)
    assert tokens.source_problems(meta, tmp_path) == [] and tokens.meta_problem(meta) is None

    edited = tmp_path / "corpus" / "kjv-65-jude.txt"
    recorded, stat = sha256_file(edited), edited.stat()
    edited.write_text(edited.read_text().replace("Jude", "Jade", 1))  # same size
    os.utime(edited, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the old mtime: snakemake sees nothing
    (tmp_path / "corpus" / "kjv-64-3-john.txt").unlink()
    assert tokens.source_problems(meta, tmp_path) == [
        "corpus file corpus/kjv-64-3-john.txt is missing (the data was prepared from it); "
        "rerun with --forcerun prepare_data",
        f"corpus file corpus/kjv-65-jude.txt changed since the data was prepared (sha256 {sha256_file(edited)[:12]}"
        f"... differs from the recorded {recorded[:12]}...); rerun with --forcerun prepare_data",
    ]


def test_a_meta_json_without_corpus_file_records_has_no_source_problems(slice_data):
    meta = tokens.read_meta(slice_data)
    for source in meta["sources"]:
        del source["files"]  # as prepare-data wrote it before it recorded them, and as builtin and url corpora have it
    assert tokens.meta_problem(meta) is None and tokens.source_problems(meta) == []
    meta["sources"][0]["files"] = [{"bytes": 3}]
    assert tokens.source_problems(meta) == ["meta.json: corpus file record {'bytes': 3} has no path; rebuild the data"]


def test_prepare_data_draws_a_bar_per_pass_unless_no_progress(tmp_path, capsys):
    from depthwidth.cli import main as cli_main

    data = {"corpus": "text", "paths": [str(SLICE)], "val_fraction": 0.25, "vocab_size": 512, "chunk_chars": 20000}
    argv = ["prepare-data", "--data-json", json.dumps(data)]
    assert cli_main([*argv, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert all(f"{bar}: 100%" in err for bar in ("tokenizer", "encode")) and "near copies: 12doc" in err, err
    assert cli_main([*argv, "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
