"""Byte-level BPE tokenizer and token shards (`prepare-data` command).

Output folder (the contract with the training stage):
  tokenizer.json  HF `tokenizers` byte-level BPE, trained on the train split only
  train.bin       token ids, raw little-endian uint16 (uint32 when vocab_size > 65536)
  val.bin         same, validation documents
  meta.json       sources, split rule and membership (`split_groups`: the groups of near copies
                  that the split keeps on one side), bytes/tokens/documents per split
                  and per source,
                  sha256 of each split's text, dtype, vocab_size, provenance, `files`:
                  the size and sha256 of train.bin, val.bin and tokenizer.json, `val_share`:
                  validation's share of the characters, and `warnings` (also printed to stderr):
                  a line when that share is far from val_fraction (VAL_SHARE_RANGE); a text
                  corpus's source lists the path, size and sha256 of each of its `files`,
                  which `source_problems` compares with the files as they are now
Documents are joined with the end-of-text token, so no window silently spans two documents
without a separator. `load_shard` verifies a shard against meta.json (size, sha256, token ids
below vocab_size) before training reads it; a vocab_size the corpus cannot fill is an error.

Memory: prepare-data streams the corpus, reading it three times (the split, the tokenizer, the
shards: `prepare`), and holds each document's id and character count, one file's text (documents
`chunks`) or one article (`wikitext`), the tokenizer's word counts, one batch of ENCODE_BATCH_CHARS
characters being encoded (its Encoding objects take ~35 bytes per character), and one of the 16 parts
of the near-copy index (corpus.ShingleIndex: 12 bytes per 8-word shingle, in a temporary folder in
TMPDIR). Measured with /usr/bin/time -v on synthetic WikiText-shaped files (scripts/synthetic_wikitext.py:
articles of ~3.7 KB of Zipf-distributed random words, a planted near copy every 500 articles;
documents: wikitext, vocab_size 4096) on a 2-core machine shared with other jobs: 50 MB (13,350
articles, 7.1M shingles) peaks at 0.22 GB in 130 s; 540 MB, WikiText-103's size (144,026 articles, 77M
shingles, 139M tokens), at 0.38 GB in 16 min (near copies 6.7, tokenizer 2.1, encode 7.1), every
planted copy grouped. Before streaming it held every document (~8 bytes per byte of text by the earlier
measurement: ~4.4 GB at 540 MB, not measured there), and its in-memory near-copy index alone took 3.1 GB
and 3 min at 540 MB (measured; the partitioned index: 0.25 GB and the same 288 pairs).
A `chunks` document is at most ~2 x chunk_chars characters (corpus.file_documents), so the shingles (a
word list, ~200 bytes per character of one document at a time) and the tokenizer never see a long one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from depthwidth.contracts import RECORDED_DATA_FILES
from depthwidth.data import corpus
from depthwidth.io import atomic_path, file_problem, file_record, provenance, read_json, sha256_file, write_json

EOT = "<|endoftext|>"
# prepare-data warns when validation's share of the characters is outside these multiples of val_fraction.
# SPLIT_RULE stays within [1, 1.5] x on a corpus of many comparable split groups; beyond a factor of 2
# either way a few large groups (or a source of two) decided the split, and the validation loss is
# measured on a sample of another size than the config asks for.
VAL_SHARE_RANGE = (0.5, 2.0)
ENCODE_BATCH_CHARS = 1 << 20  # characters per encode call: its Encoding objects take ~35 bytes per character


def token_dtype(vocab_size: int) -> np.dtype:
    """Smallest unsigned dtype that holds every token id."""
    return np.dtype(np.uint16) if vocab_size <= 2**16 else np.dtype(np.uint32)


def train_tokenizer(texts: Iterable[str], vocab_size: int, length: int | None = None):
    """A byte-level BPE tokenizer with `vocab_size` entries (EOT included), trained on `texts` (an
    iterator is read once; `length`: how many, for the progress of the caller's iterator only)."""
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
    tokenizer.train_from_iterator(texts, trainer=trainer, length=length)
    return tokenizer


def document_batches(documents: Iterable[corpus.Document], max_chars: int) -> Iterator[list[corpus.Document]]:
    """Consecutive documents in batches, each closed once its characters reach `max_chars`."""
    current, size = [], 0
    for doc in documents:
        current.append(doc)
        size += len(doc.text)
        if size >= max_chars:
            yield current
            current, size = [], 0
    if current:
        yield current


class SplitSummary:
    """Counts and checksum of one split for meta.json, accumulated document by document (`add`)."""

    def __init__(self):
        self.digest, self.bytes, self.tokens, self.by_source, self.ids = hashlib.sha256(), 0, 0, {}, []

    def add(self, doc: corpus.Document, length: int) -> None:
        """Count one document of `length` tokens (its EOT included)."""
        text = doc.text.encode("utf-8")
        self.digest.update(text)
        self.bytes += len(text)
        self.tokens += length
        entry = self.by_source.setdefault(corpus.source_of(doc.id), {"documents": 0, "tokens": 0})
        entry["documents"] += 1
        entry["tokens"] += length
        self.ids.append(doc.id)

    def record(self) -> dict:
        """The split's entry of meta.json: `sha256` of its documents' texts concatenated (UTF-8); `by_source`:
        documents and tokens of each source."""
        return {
            "documents": len(self.ids),
            "bytes": self.bytes,
            "tokens": self.tokens,
            "sha256": self.digest.hexdigest(),
            "by_source": self.by_source,
            "document_ids": self.ids,
        }


def encode_splits(tokenizer, documents: Iterable[corpus.Document], in_val: dict[str, bool], out: dict, bar) -> dict:
    """Encode the documents, each followed by EOT, appending each one's ids in the shard dtype to the open
    file `out["val"]` or `out["train"]` by `in_val[doc.id]`; the `SplitSummary` of each split. Encoded
    ENCODE_BATCH_CHARS characters at a time, so only one batch's ids are held."""
    eot = tokenizer.token_to_id(EOT)
    dtype = token_dtype(tokenizer.get_vocab_size())
    summaries = {"train": SplitSummary(), "val": SplitSummary()}
    for batch in document_batches(documents, ENCODE_BATCH_CHARS):
        for doc, encoding in zip(batch, tokenizer.encode_batch([d.text for d in batch]), strict=True):
            ids = encoding.ids
            ids.append(eot)
            split = "val" if in_val[doc.id] else "train"
            np.asarray(ids, dtype=dtype).tofile(out[split])
            summaries[split].add(doc, len(ids))
        bar.update(len(batch))
    return summaries


def group_members(groups: dict[str, str]) -> list[list[str]]:
    """The split groups of more than one document, each as its sorted document ids, sorted."""
    members: dict[str, list[str]] = {}
    for doc_id, group in groups.items():
        members.setdefault(group, []).append(doc_id)
    return sorted(sorted(m) for m in members.values() if len(m) > 1)


def val_share(chars: dict[str, int], in_val: dict[str, bool]) -> float:
    """Validation's share of the characters of all documents (`chars`: each document id's)."""
    return sum(size for doc_id, size in chars.items() if in_val[doc_id]) / sum(chars.values())


def split_warnings(share: float, val_fraction: float) -> list[str]:
    """One line if validation's share of the characters is outside VAL_SHARE_RANGE x val_fraction; else none."""
    low, high = VAL_SHARE_RANGE
    if low * val_fraction <= share <= high * val_fraction:
        return []
    return [
        f"data.val_fraction: the validation split holds {share:.2%} of the characters, outside "
        f"[{low:g}, {high:g}] x val_fraction {val_fraction:g} (the split moves whole groups of documents, "
        "and a few large ones decided it; add documents, or lower data.chunk_chars for a text or url corpus)"
    ]


def split_size_problem(tokens_per_split: dict[str, int], min_tokens: int) -> str | None:
    """Why a split is too small for training (fewer than `min_tokens` tokens), naming data.val_fraction; or None."""
    for split, name, advice in (("val", "validation", "raise"), ("train", "train", "lower")):
        if tokens_per_split[split] < min_tokens:
            return (
                f"data.val_fraction: the {name} split has {tokens_per_split[split]} tokens, but the training runs "
                f"need at least {min_tokens} (--min-tokens: their longest n_ctx + 1); {advice} data.val_fraction "
                "or add text"
            )
    return None


def progress_bar(progress: bool, desc: str, total: int | None = None, unit: str = "doc"):
    """A tqdm bar on stderr (nothing drawn unless `progress`)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not progress, dynamic_ncols=True)


def counted(items: Iterable, bar) -> Iterator:
    """The items, one bar step each as they are read."""
    for item in items:
        bar.update()
        yield item


def scan(documents: Iterable[corpus.Document], bar) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """One pass over the corpus: each document id's characters, in corpus order, and the near-copy pairs
    (`corpus.ShingleIndex`); a repeated document id is an error naming it."""
    chars: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="depthwidth-shingles-") as folder:
        index = corpus.ShingleIndex(Path(folder))
        for doc in documents:
            if doc.id in chars:
                raise ValueError(f"corpus has duplicate document ids: [{doc.id!r}]")
            chars[doc.id] = len(doc.text)
            index.add(doc.text)
            bar.update()
        ids = list(chars)
        return chars, [(ids[i], ids[j]) for i, j in index.pairs()]


def split_plan(data: dict, stream, progress: bool) -> tuple[dict[str, int], dict[str, str], dict[str, bool]]:
    """Each document id's characters, split group and side (True: val), by SPLIT_RULE, from one pass."""
    with progress_bar(progress, "near copies") as bar:
        chars, pairs = scan(stream(), bar)
    groups = corpus.linked_groups(list(chars), pairs)
    sides = corpus.group_sides(chars, groups, data["val_fraction"])
    return chars, groups, {doc_id: sides[groups[doc_id]] for doc_id in chars}


def fit_tokenizer(data: dict, stream, in_val: dict[str, bool], progress: bool):
    """The BPE tokenizer trained on the train split's documents, read in one pass; a vocab_size the split
    cannot fill is a ValueError naming data.vocab_size."""
    train_count = sum(not side for side in in_val.values())
    with progress_bar(progress, "tokenizer", len(in_val)) as bar:
        texts = (d.text for d in counted(stream(), bar) if not in_val[d.id])
        tokenizer = train_tokenizer(texts, data["vocab_size"], train_count)
    vocab_size = tokenizer.get_vocab_size()
    if vocab_size < data["vocab_size"]:
        raise ValueError(
            f"data.vocab_size: {data['vocab_size']} asked, but BPE on this corpus's train split learns only "
            f"{vocab_size} tokens; set data.vocab_size to at most {vocab_size}"
        )
    return tokenizer


def write_shards(tokenizer, stream, in_val: dict[str, bool], out_dir: Path, min_tokens: int, progress: bool) -> dict:
    """Encode the corpus into train.bin and val.bin (`encode_splits`), each renamed into place only once both
    are whole and hold at least `min_tokens` tokens (`split_size_problem`, a ValueError); their summaries."""
    with ExitStack() as stack:
        tmp = {split: stack.enter_context(atomic_path(out_dir / f"{split}.bin")) for split in ("train", "val")}
        files = {split: stack.enter_context(open(path, "wb")) for split, path in tmp.items()}
        with progress_bar(progress, "encode", len(in_val)) as bar:
            summaries = encode_splits(tokenizer, stream(), in_val, files, bar)
        for f in files.values():
            f.close()
        problem = split_size_problem({split: summary.tokens for split, summary in summaries.items()}, min_tokens)
        if problem:
            raise ValueError(problem)
    return {split: summary.record() for split, summary in summaries.items()}


def prepare(data: dict, out_dir: Path, min_tokens: int = 0, progress: bool = False) -> dict:
    """Read the corpus described by `data`, write tokenizer, shards and meta.json to `out_dir`.

    The corpus is streamed: read once for the split (`split_plan`), once to train the tokenizer on the
    train split, once to encode (see the module docstring for the memory this takes). A split of fewer
    than `min_tokens` tokens (`split_size_problem`), like a vocab_size the corpus cannot fill, is a
    ValueError raised before any of these files is written. meta.json is written last, so its presence
    marks a complete folder. `progress`: tqdm bars on stderr.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    stream, sources = corpus.corpus_source(data, progress)
    chars, groups, in_val = split_plan(data, stream, progress)
    if data["corpus"] != "builtin":
        sources[0]["documents"] = len(chars)
    tokenizer = fit_tokenizer(data, stream, in_val, progress)
    splits = write_shards(tokenizer, stream, in_val, out_dir, min_tokens, progress)
    with atomic_path(out_dir / "tokenizer.json") as tmp:
        tokenizer.save(str(tmp))
    share = val_share(chars, in_val)
    vocab_size = tokenizer.get_vocab_size()
    meta = {
        "corpus": data["corpus"],
        "sources": sources,
        "vocab_size": vocab_size,
        "eot_id": tokenizer.token_to_id(EOT),
        "dtype": token_dtype(vocab_size).name,
        "split_rule": corpus.SPLIT_RULE,
        "val_fraction": data["val_fraction"],
        "split_groups": group_members(groups),
        "val_share": round(share, 6),
        "warnings": split_warnings(share, data["val_fraction"]),
        "splits": splits,
        "tokenizer_sha256": sha256_file(out_dir / "tokenizer.json"),
        "files": {name: file_record(out_dir / name) for name in RECORDED_DATA_FILES},
        "seconds": round(time.perf_counter() - started, 2),
        **provenance(),
    }
    write_json(out_dir / "meta.json", meta)
    return meta


def meta_problem(meta: object) -> str | None:
    """What makes a parsed meta.json unusable (a missing or malformed key), or None."""
    if not isinstance(meta, dict):
        return "not a JSON object"
    for key, kind in (("dtype", str), ("vocab_size", int), ("splits", dict)):
        if not isinstance(meta.get(key), kind):
            return f"key {key!r} missing or not a {kind.__name__}"
    if meta["dtype"] not in ("uint16", "uint32"):
        return f"dtype must be uint16 or uint32, got {meta['dtype']!r}"
    for split in ("train", "val"):
        if not isinstance(meta["splits"].get(split), dict) or not isinstance(meta["splits"][split].get("tokens"), int):
            return f"splits.{split}.tokens missing or not an int"
    files = meta.get("files")
    if not isinstance(files, dict) or not all(isinstance(files.get(name), dict) for name in RECORDED_DATA_FILES):
        return (
            "rebuild the data: it records no size and sha256 of "
            f"{', '.join(RECORDED_DATA_FILES)} (written by an older prepare-data)"
        )
    return None


def source_problems(meta: dict, root: str | Path = ".") -> list[str]:
    """One line per local corpus file that meta.json records (text corpora: `sources[].files`) whose
    content is no longer what the data was prepared from; relative paths are taken from `root` (the
    folder prepare-data ran in). None for other corpora and for a meta.json that records no files."""
    sources = meta.get("sources") if isinstance(meta.get("sources"), list) else []
    files = [f for s in sources if isinstance(s, dict) and isinstance(s.get("files"), list) for f in s["files"]]
    return [problem for record in files if (problem := source_file_problem(record, root))]


def source_file_problem(record: object, root: str | Path) -> str | None:
    """How one recorded corpus file ({path, bytes, sha256}) differs from the file now, in one line; or None."""
    if not (isinstance(record, dict) and isinstance(record.get("path"), str)):
        return f"meta.json: corpus file record {record!r} has no path; rebuild the data"
    path = record["path"]
    differs = file_problem(Path(root, path), record)
    if differs == "missing":
        return f"corpus file {path} is missing (the data was prepared from it); rerun with --forcerun prepare_data"
    if differs:
        return f"corpus file {path} changed since the data was prepared ({differs}); rerun with --forcerun prepare_data"
    return None


def read_meta(data_dir: Path) -> dict:
    """The data folder's meta.json, its keys checked; raises ValueError naming the file."""
    path = Path(data_dir) / "meta.json"
    meta = read_json(path)
    problem = meta_problem(meta)
    if problem:
        raise ValueError(f"{path}: {problem}")
    return meta


def load_shard(data_dir: Path, split: str, meta: dict | None = None) -> np.memmap:
    """Memory-mapped token ids of `split` ('train' or 'val'), verified against meta.json.

    Raises (naming the file) unless the shard has meta.json's token count, size and sha256 and
    every token id is below its vocab_size.
    """
    data_dir = Path(data_dir)
    meta = read_meta(data_dir) if meta is None else meta
    path = data_dir / f"{split}.bin"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: file not found")
    tokens = np.memmap(path, dtype=np.dtype(meta["dtype"]), mode="r")
    expected = meta["splits"][split]["tokens"]
    if tokens.size != expected:
        raise ValueError(f"{path}: holds {tokens.size} tokens, meta.json says {expected}")
    problem = file_problem(path, meta["files"][path.name])
    if problem:
        raise ValueError(f"{path}: {problem} in meta.json; rebuild the data")
    top = int(tokens.max()) if tokens.size else -1
    if top >= meta["vocab_size"]:
        raise ValueError(f"{path}: token id {top} is out of range for meta.json's vocab_size {meta['vocab_size']}")
    return tokens


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-json", required=True, help="the config's `data` block as JSON")
    parser.add_argument("--out", required=True, type=Path, help="output folder results/data/<name>-<digest>")
    parser.add_argument(
        "--min-tokens",
        type=int,
        default=0,
        help="refuse, writing nothing, unless train.bin and val.bin each hold at least this many tokens "
        "(the workflow passes its plan's min_split_tokens: the training runs' longest n_ctx + 1)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    data = json.loads(args.data_json)
    meta = prepare(data, args.out, args.min_tokens, not args.no_progress)
    for split, summary in meta["splits"].items():
        print(
            f"{split}: {summary['documents']} documents, {summary['bytes']:,} bytes, "
            f"{summary['tokens']:,} tokens ({summary['bytes'] / summary['tokens']:.2f} bytes/token)"
        )
    print(f"vocab {meta['vocab_size']}, dtype {meta['dtype']}, {meta['seconds']} s -> {args.out}")
    for warning in meta["warnings"]:
        print(f"depthwidth prepare-data: warning: {warning}", file=sys.stderr)
    return 0
