"""Bits per byte: a loss that compares across tokenizers of one text (issue 52, item 4).

A loss in nats per token depends on how many bytes a token holds, so two vocabularies' losses cannot be compared
as they are. Divided by ln 2 and by the validation split's bytes per token (meta.json's UTF-8 bytes of its
documents' texts over its tokens, each document's end-of-text token counted), it is bits per byte of that text,
the same unit for every tokenizer of it. The loss converted is the final one, over every
non-overlapping window of the split (train/loop.py; the tail shorter than a window left out), so the split's bytes
per token are those of the tokens it scores, to within that tail."""

from __future__ import annotations

import functools
import math
from pathlib import Path

from depthwidth.data.tokens import read_meta


def bytes_per_token(meta: dict, split: str = "val") -> float:
    """UTF-8 bytes of a split's text per token (meta.json's `splits.<split>`)."""
    record = meta["splits"][split]
    if not record.get("bytes") or not record.get("tokens"):
        raise ValueError(f"meta.json: splits.{split} records no bytes or no tokens (rebuild the data)")
    return record["bytes"] / record["tokens"]


def data_dir(runs_dir: Path, spec: dict) -> str:
    """The data folder a run's `spec` trained on, as seen from its runs folder: the spec names it from the folder
    above results/ (results/data/<name>), and `runs_dir` is results/runs, wherever that results/ lies."""
    return str(Path(runs_dir).parent.parent / spec["data"])


@functools.cache
def val_bytes_per_token(data_dir: str) -> float:
    """The validation split's bytes per token of the data folder `data_dir` (its meta.json, read once)."""
    return bytes_per_token(read_meta(Path(data_dir)))


def bits_per_byte(nats_per_token: float | None, per_token: float) -> float:
    """A loss in nats per token as bits per byte of text, `per_token` bytes a token; nan for a run that has no loss
    (diverged: None)."""
    return math.nan if nats_per_token is None else nats_per_token / math.log(2) / per_token
