"""Bits per byte (tables/bits.py): the unit that compares losses across tokenizers of one text, in the sweep tables
and checked by `check` against each run's metrics.json."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import planted
import pytest
from depthwidth import check
from depthwidth.data import tokens
from depthwidth.plan import jobs
from depthwidth.tables import bits
from depthwidth.tables.sweep import run_row


def test_a_uniform_guess_over_bytes_is_eight_bits_per_byte():
    # one byte a token, a uniform guess over 256 values: ln 256 nats a token, 8 bits a byte
    assert bits.bits_per_byte(math.log(256), 1.0) == pytest.approx(8.0)
    # the same text in tokens of 4 bytes, guessed uniformly over 256^4 values: still 8 bits a byte
    assert bits.bits_per_byte(4 * math.log(256), 4.0) == pytest.approx(8.0)
    # a diverged run records no loss: nor bits per byte
    assert math.isnan(bits.bits_per_byte(None, 2.0)) and math.isnan(bits.bits_per_byte(math.nan, 2.0))


def test_bytes_per_token_is_the_val_texts_bytes_over_its_tokens(slice_data):
    """Decoded document by document (byte-level BPE is lossless), the val shard's text has the bytes meta.json
    records, over the tokens it holds (each document's end-of-text token counted)."""
    from tokenizers import Tokenizer

    meta = tokens.read_meta(slice_data)
    ids = np.asarray(tokens.load_shard(slice_data, "val", meta))
    tokenizer = Tokenizer.from_file(str(slice_data / "tokenizer.json"))
    cuts = np.flatnonzero(ids == meta["eot_id"])
    documents = np.split(ids, cuts + 1)
    decoded = sum(len(tokenizer.decode(doc[doc != meta["eot_id"]].tolist()).encode()) for doc in documents if doc.size)
    assert decoded == meta["splits"]["val"]["bytes"]
    assert bits.bytes_per_token(meta) == pytest.approx(decoded / ids.size)
    assert bits.val_bytes_per_token(str(slice_data)) == bits.bytes_per_token(meta)
    with pytest.raises(ValueError, match="splits.val records no bytes"):
        bits.bytes_per_token({"splits": {"val": {"tokens": 10}}})


def test_a_sweep_row_gives_its_loss_in_bits_per_byte():
    plan = jobs.build(planted.default_config())
    run_id, run = next(iter(plan.sweep["design"].items()))
    row = run_row(run_id, run, planted.metrics(run, plan.job(run_id).spec, 5.0), None, bytes_per_token=2.5)
    assert row["final_val_bpb"] == pytest.approx(5.0 / math.log(2) / 2.5)


def test_check_compares_the_bits_per_byte_with_the_runs_loss():
    plan = jobs.build(planted.default_config())
    runs = dict(list(plan.sweep["design"].items())[:3])
    metrics = {rid: planted.metrics(run, plan.job(rid).spec, 5.0 + i) for i, (rid, run) in enumerate(runs.items())}
    per_token = planted.VAL_BYTES_PER_TOKEN
    rows = [run_row(rid, run, metrics[rid], None, bytes_per_token=per_token) for rid, run in runs.items()]
    table = pd.read_csv(io.StringIO(check.sweep_frame(rows).to_csv(index=False)))
    assert check.sweep_rows_problems(table, runs, metrics, None, per_token) == []
    edited = table.copy()
    edited.loc[1, "final_val_bpb"] += 0.01
    (problem,) = check.sweep_rows_problems(edited, runs, metrics, None, per_token)
    assert problem.startswith(f"{table.loc[1, 'run_id']}: final_val_bpb ")
    # data whose bytes per token is unknown (its own problem, from check_data): the column is not compared
    assert check.sweep_rows_problems(edited, runs, metrics, None, math.nan) == []
    # a number off in its last bits (a sum taken in another order) is the same number; one off by 1e-9 is not
    for column in ("final_val_bpb", "n_nonembedding"):
        edited = table.copy()
        edited[column] = edited[column].astype(float)
        edited.loc[1, column] = np.nextafter(edited.loc[1, column], np.inf)
        assert check.sweep_rows_problems(edited, runs, metrics, None, per_token) == [], column
        edited.loc[1, column] *= 1 + 1e-9
        (problem,) = check.sweep_rows_problems(edited, runs, metrics, None, per_token)
        assert problem.startswith(f"{table.loc[1, 'run_id']}: {column} "), column
