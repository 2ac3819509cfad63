"""Byte-level BPE tokenizer and token shards (`prepare-data` command).

Output folder (the contract with the training stage):
  tokenizer.json  HF `tokenizers` byte-level BPE, trained on the train split only
  train.bin       token ids, raw little-endian uint16 (uint32 when vocab_size > 65536)
  val.bin         same, validation documents
  meta.json       sources, split rule and membership, bytes/tokens/documents per split,
                  sha256 of each split's text, dtype, vocab_size, provenance
Documents are joined with the end-of-text token, so no window silently spans two documents
without a separator.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np

from depthwidth import corpus
from depthwidth.io import atomic_path, provenance, write_json

EOT = "<|endoftext|>"


def token_dtype(vocab_size: int) -> np.dtype:
    """Smallest unsigned dtype that holds every token id."""
    return np.dtype(np.uint16) if vocab_size <= 2**16 else np.dtype(np.uint32)


def train_tokenizer(texts: list[str], vocab_size: int):
    """A byte-level BPE tokenizer with `vocab_size` entries (EOT included), trained on `texts`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer, length=len(texts))
    return tokenizer


def encode_documents(tokenizer, documents: list[corpus.Document]) -> np.ndarray:
    """Token ids of the documents, each followed by EOT, as one array of the shard dtype."""
    eot = tokenizer.token_to_id(EOT)
    ids: list[int] = []
    for encoding in tokenizer.encode_batch([d.text for d in documents]):
        ids.extend(encoding.ids)
        ids.append(eot)
    return np.asarray(ids, dtype=token_dtype(tokenizer.get_vocab_size()))


def split_summary(documents: list[corpus.Document], tokens: np.ndarray) -> dict:
    """Counts and checksum of one split for meta.json."""
    text = "".join(d.text for d in documents).encode("utf-8")
    return {
        "documents": len(documents),
        "bytes": len(text),
        "tokens": int(tokens.size),
        "sha256": hashlib.sha256(text).hexdigest(),
        "document_ids": [d.id for d in documents],
    }


def prepare(data: dict, out_dir: Path) -> dict:
    """Read the corpus described by `data`, write tokenizer, shards and meta.json to `out_dir`.

    meta.json is written last, so its presence marks a complete folder.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    documents, sources = corpus.load_documents(data, out_dir / "download")
    train_docs, val_docs = corpus.split_documents(documents, data["val_fraction"])
    tokenizer = train_tokenizer([d.text for d in train_docs], data["vocab_size"])
    vocab_size = tokenizer.get_vocab_size()
    shards = {"train": encode_documents(tokenizer, train_docs), "val": encode_documents(tokenizer, val_docs)}
    for split, tokens in shards.items():
        with atomic_path(out_dir / f"{split}.bin") as tmp:
            tokens.tofile(tmp)
    with atomic_path(out_dir / "tokenizer.json") as tmp:
        tokenizer.save(str(tmp))
    meta = {
        "corpus": data["corpus"],
        "sources": sources,
        "vocab_size": vocab_size,
        "eot_id": tokenizer.token_to_id(EOT),
        "dtype": token_dtype(vocab_size).name,
        "split_rule": corpus.SPLIT_RULE,
        "val_fraction": data["val_fraction"],
        "splits": {
            "train": split_summary(train_docs, shards["train"]),
            "val": split_summary(val_docs, shards["val"]),
        },
        "tokenizer_sha256": corpus.sha256_file(out_dir / "tokenizer.json"),
        "seconds": round(time.perf_counter() - started, 2),
        **provenance(),
    }
    write_json(out_dir / "meta.json", meta)
    return meta


def load_shard(data_dir: Path, split: str) -> np.memmap:
    """Memory-mapped token ids of `split` ('train' or 'val'), dtype and length checked against meta.json."""
    data_dir = Path(data_dir)
    meta = json.loads((data_dir / "meta.json").read_text())
    path = data_dir / f"{split}.bin"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    tokens = np.memmap(path, dtype=np.dtype(meta["dtype"]), mode="r")
    expected = meta["splits"][split]["tokens"]
    if tokens.size != expected:
        raise ValueError(f"{path}: holds {tokens.size} tokens, meta.json says {expected}")
    return tokens


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-json", required=True, help="the config's `data` block as JSON")
    parser.add_argument("--out", required=True, type=Path, help="output folder results/data/<name>")


def run(args: argparse.Namespace) -> int:
    data = json.loads(args.data_json)
    meta = prepare(data, args.out)
    for split, summary in meta["splits"].items():
        print(
            f"{split}: {summary['documents']} documents, {summary['bytes']:,} bytes, "
            f"{summary['tokens']:,} tokens ({summary['bytes'] / summary['tokens']:.2f} bytes/token)"
        )
    print(f"vocab {meta['vocab_size']}, dtype {meta['dtype']}, {meta['seconds']} s -> {args.out}")
    return 0
