"""The download of a url corpus (fetch.py): pooch, checksums, archive members, and every failure as one line."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import re
import socket
import stat
import struct
import tarfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from depthwidth.cli import main as cli_main
from depthwidth.data import fetch, tokens
from depthwidth.plan import config
from depthwidth.plan.config import ConfigError


def article(title: str, seed: int, words: int = 300) -> str:
    """A WikiText-format article of distinct-looking words: title line, a section heading, paragraphs."""
    import random

    rng = random.Random(seed)
    body = [" ".join(f"w{seed}x{rng.randrange(10**6)}" for _ in range(words // 2)) for _ in range(2)]
    return f" = {title} = \n \n {body[0]} \n \n = = Section = = \n \n {body[1]} \n \n"


MEMBERS = {
    "wikitext-tiny/wiki.train.raw": " \n" + "".join(article(f"Train {i}", i) for i in range(12)),
    "wikitext-tiny/wiki.valid.raw": " \n" + "".join(article(f"Valid {i}", 100 + i) for i in range(3)),
    "wikitext-tiny/README": "not a corpus file\n",
}


def archive_bytes(kind: str) -> bytes:
    """MEMBERS as a zip or a tar.gz archive."""
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, text in MEMBERS.items():
                archive.writestr(name, text)
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            for name, text in MEMBERS.items():
                info = tarfile.TarInfo(name)
                info.size = len(text.encode())
                archive.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


SUFFIX = {"zip": "corpus.zip", "tar": "corpus.tar.gz"}


def published(tmp_path: Path, kind: str, body: bytes | None = None) -> tuple[str, str]:
    """The file:// address of an archive (`body`, default the whole archive of MEMBERS) and its sha256 checksum."""
    body = archive_bytes(kind) if body is None else body
    path = tmp_path / "publisher" / SUFFIX[kind]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(body)
    return path.as_uri(), f"sha256:{hashlib.sha256(body).hexdigest()}"


def data_block(tmp_path: Path, url: str, checksum: str, **change) -> dict:
    members = ["wikitext-tiny/wiki.train.raw", "wikitext-tiny/wiki.valid.raw"]
    data = {"corpus": "url", "url": url, "checksum": checksum, "members": members, "documents": "wikitext"}
    data |= {"cache_dir": str(tmp_path / "cache"), "val_fraction": 0.2, "vocab_size": 300, "chunk_chars": 20000}
    return data | change


def prepare_data(capsys, data: dict, out: Path) -> tuple[int, list[str]]:
    """Exit code and stderr lines of `prepare-data` on `data` (no progress bars)."""
    code = cli_main(["prepare-data", "--data-json", json.dumps(data), "--out", str(out), "--no-progress"])
    return code, capsys.readouterr().err.splitlines()


def files_under(folder: Path) -> list[str]:
    """Every file below `folder`, relative, sorted (hidden temporary files included)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_an_archive_corpus_gives_shards_of_its_members_articles_and_is_cached(tmp_path, capsys, kind):
    url, checksum = published(tmp_path, kind)
    data = data_block(tmp_path, url, checksum)
    code, err = prepare_data(capsys, data, tmp_path / "out")
    assert (code, err) == (0, [])
    meta = tokens.read_meta(tmp_path / "out")
    assert meta["sources"] == [
        {"source": "url", "url": url, "checksum": checksum, "members": data["members"], "documents": 15}
    ]
    ids = meta["splits"]["train"]["document_ids"] + meta["splits"]["val"]["document_ids"]
    assert sorted(ids) == [f"text/wikitext-tiny/wiki.train.raw#{i:05d}" for i in range(12)] + [
        f"text/wikitext-tiny/wiki.valid.raw#{i:05d}" for i in range(3)
    ]
    for split in ("train", "val"):
        assert tokens.load_shard(tmp_path / "out", split).size == meta["splits"][split]["tokens"] > 0
    name = SUFFIX[kind]
    assert files_under(tmp_path / "cache") == [name] + [f"{name}.members/{m}" for m in sorted(data["members"])]
    (tmp_path / "publisher" / name).unlink()  # a second preparation reads the cache
    assert prepare_data(capsys, data, tmp_path / "again") == (0, [])
    assert (tmp_path / "again" / "train.bin").read_bytes() == (tmp_path / "out" / "train.bin").read_bytes()


def test_the_publishers_algorithm_is_used(tmp_path):
    url, _ = published(tmp_path, "zip")
    md5 = hashlib.md5(archive_bytes("zip")).hexdigest()
    paths = fetch.retrieve(url, f"md5:{md5}", tmp_path / "cache", ["wikitext-tiny/wiki.valid.raw"])
    assert [p.read_text() for p in paths] == [MEMBERS["wikitext-tiny/wiki.valid.raw"]]


def test_a_wrong_checksum_is_one_line_and_leaves_nothing(tmp_path, capsys):
    url, checksum = published(tmp_path, "zip")
    wrong = "sha256:" + "0" * 64
    code, err = prepare_data(capsys, data_block(tmp_path, url, wrong), tmp_path / "out")
    got = checksum.split(":")[1]
    assert code == 1 and err == [
        f"depthwidth prepare-data: error: data.url {url}: its sha256 is {got}, data.checksum expects {wrong}"
    ]
    assert files_under(tmp_path / "cache") == [] and files_under(tmp_path / "out") == []


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_a_truncated_archive_is_one_line_and_leaves_no_member(tmp_path, capsys, kind):
    whole = archive_bytes(kind)
    url, checksum = published(tmp_path, kind, whole[: len(whole) * 2 // 3])  # its checksum is of the broken file
    code, err = prepare_data(capsys, data_block(tmp_path, url, checksum), tmp_path / "out")
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"depthwidth prepare-data: error: data.url {url}: {SUFFIX[kind]} is not a readable {kind}")
    assert files_under(tmp_path / "cache") == [SUFFIX[kind]] and files_under(tmp_path / "out") == []


def test_a_member_whose_bytes_are_damaged_is_one_line_and_leaves_no_member(tmp_path, capsys):
    """A zip whose directory is whole but one member's compressed bytes are not (the checksum is of that file)."""
    body = bytearray(archive_bytes("zip"))
    with zipfile.ZipFile(io.BytesIO(bytes(body))) as archive:
        info = archive.getinfo("wikitext-tiny/wiki.train.raw")
    data_start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    body[data_start + info.compress_size // 2] ^= 0xFF
    url, checksum = published(tmp_path, "zip", bytes(body))
    code, err = prepare_data(capsys, data_block(tmp_path, url, checksum), tmp_path / "out")
    assert code == 1 and len(err) == 1 and f"data.url {url}: corpus.zip could not be unpacked (" in err[0], err
    assert files_under(tmp_path / "cache") == ["corpus.zip"] and files_under(tmp_path / "out") == []
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["corpus.zip"]  # no temporary folder left


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_a_missing_member_is_one_line_naming_it_and_the_archive(tmp_path, capsys, kind):
    url, checksum = published(tmp_path, kind)
    data = data_block(tmp_path, url, checksum, members=["wikitext-tiny/wiki.train.raw", "wikitext-tiny/wiki.test.raw"])
    code, err = prepare_data(capsys, data, tmp_path / "out")
    assert code == 1 and err == [
        f"depthwidth prepare-data: error: data.members: 'wikitext-tiny/wiki.test.raw' is not in the archive "
        f"{SUFFIX[kind]} (it holds wikitext-tiny/README, wikitext-tiny/wiki.train.raw, wikitext-tiny/wiki.valid.raw)"
    ]
    assert files_under(tmp_path / "cache") == [SUFFIX[kind]] and files_under(tmp_path / "out") == []


def test_a_missing_file_url_is_one_line(tmp_path, capsys):
    url = (tmp_path / "nowhere.zip").as_uri()
    code, err = prepare_data(capsys, data_block(tmp_path, url, "sha256:" + "0" * 64), tmp_path / "out")
    assert (
        code == 1
        and len(err) == 1
        and err[0].startswith(f"depthwidth prepare-data: error: data.url {url}: download failed (FileNotFoundError: ")
    )
    assert files_under(tmp_path / "cache") == []


def readme_data_block() -> dict:
    """The WikiText-103 `data` block that config/README.md gives for configs to paste."""
    text = (REPO / "config" / "README.md").read_text()
    block = re.search(r"<!-- wikitext-103 data block -->\n```yaml\n(.*?)```", text, flags=re.S)
    assert block, "config/README.md lost its WikiText-103 data block"
    return yaml.safe_load(block[1])


def test_the_wikitext_103_block_of_the_config_readme_is_valid_and_names_the_public_checksum():
    ci = config.load(REPO / "config" / "ci.yaml")
    block = readme_data_block()
    data = config.validate(ci | block)["data"]
    assert data["url"].endswith("/wikitext-103-raw-v1.zip") and data["documents"] == "wikitext"
    assert data["checksum"] == "sha256:91c00ae287f0d699e18605c84afc9e45c192bc6b7797ff8837e5474655a33794"
    assert data["members"] == [f"wikitext-103-raw/wiki.{split}.raw" for split in ("train", "valid", "test")]


@pytest.mark.parametrize("name", ["levine", "paper"])
def test_the_configs_on_wikitext_103_fetch_it_as_the_readme_block_does(name):
    data = yaml.safe_load((REPO / "config" / f"{name}.yaml").read_text())["data"]
    fetched = ("corpus", "url", "checksum", "members", "documents", "cache_dir")  # vocab_size and name are theirs
    assert {key: data[key] for key in fetched} == {key: readme_data_block()["data"][key] for key in fetched}


BODY = b"Some public-domain text.\n" * 40  # 1000 bytes


@contextmanager
def serving(respond: Callable[[http.server.BaseHTTPRequestHandler], None]) -> Iterator[str]:
    """The address of a file served on 127.0.0.1 by `respond(handler)`, in a thread stopped on exit."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            respond(self)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # daemon handler threads
    server.handle_error = lambda request, address: None  # a client that gave up is no test failure
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/corpus.txt"
    finally:
        server.shutdown()
        server.server_close()


def headers(handler, **fields) -> None:
    handler.send_response(200)
    for name, value in fields.items():
        handler.send_header(name.replace("_", "-"), str(value))
    handler.end_headers()


def chunked_cut_short(handler) -> None:
    headers(handler, Transfer_Encoding="chunked")
    handler.wfile.write(b"%x\r\n%s\r\n" % (len(BODY), BODY) + b"400\r\n" + BODY[:100])  # then the connection closes


def length_cut_short(handler) -> None:
    headers(handler, Content_Length=len(BODY))
    handler.wfile.write(BODY[:300])


def trickle(handler) -> None:
    """A byte every 0.1 s (so no socket timeout), for at most 10 s."""
    headers(handler, Content_Length=len(BODY))
    for byte in BODY[:100]:
        handler.wfile.write(bytes([byte]))
        time.sleep(0.1)


def stall(handler) -> None:
    headers(handler, Content_Length=len(BODY))
    handler.wfile.write(BODY[:10])
    time.sleep(2)


def reset(handler) -> None:
    headers(handler, Content_Length=len(BODY))
    handler.wfile.write(BODY[:10])
    time.sleep(0.2)
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.rfile.close(), handler.wfile.close(), handler.connection.close()  # linger 0: a reset, not an end


def not_found(handler) -> None:
    handler.send_error(404)


TRANSPORT_FAULTS = [
    (chunked_cut_short, "the connection closed before the end of the body)"),
    (length_cut_short, "the connection closed before the end of the body, at least 700 bytes missing)"),
    (trickle, "not finished after 0.5 s, "),
    (stall, "no data for 0.5 s (fetch.SOCKET_TIMEOUT_SECONDS))"),
    (reset, "ConnectionResetError: [Errno "),
    (not_found, "HTTP 404 Not Found)"),
]


@pytest.mark.parametrize("respond, detail", TRANSPORT_FAULTS, ids=[f.__name__ for f, _ in TRANSPORT_FAULTS])
def test_a_failed_download_is_one_line_naming_data_url_and_leaves_nothing(tmp_path, monkeypatch, respond, detail):
    monkeypatch.setattr(fetch, "DOWNLOAD_SECONDS", 0.5)
    monkeypatch.setattr(fetch, "SOCKET_TIMEOUT_SECONDS", 0.5)
    with serving(respond) as url:
        started = time.monotonic()
        with pytest.raises(FileNotFoundError) as info:
            fetch.download(url, f"sha256:{hashlib.sha256(BODY).hexdigest()}", tmp_path / "cache")
    assert time.monotonic() - started < 3  # the deadline and the socket timeout bound it
    message = str(info.value)
    assert message.startswith(f"data.url {url}: download failed (") and detail in message, message
    assert "\n" not in message and files_under(tmp_path / "cache") == []


def slow_trickle(handler) -> None:
    """A byte every 0.5 s, 40 of them (far below a 64 KiB read), of a body of 1000 bytes."""
    headers(handler, Content_Length=len(BODY))
    for byte in BODY[:40]:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.5)


def test_a_trickling_download_ends_at_its_deadline_with_its_reads_at_their_full_size(tmp_path, monkeypatch):
    """Issue 55, case 8: the deadline was checked after each 64 KiB read, so a server sending a byte every 0.5 s
    was still downloading at 40 s with a 3 s deadline."""
    monkeypatch.setattr(fetch, "DOWNLOAD_SECONDS", 1.0)
    assert fetch.DOWNLOAD_CHUNK_BYTES == 1 << 16  # the reads of a real download
    with serving(slow_trickle) as url:
        started = time.monotonic()
        with pytest.raises(FileNotFoundError, match=r"download failed \(not finished after 1 s, \d+ bytes in"):
            fetch.download(url, f"sha256:{hashlib.sha256(BODY).hexdigest()}", tmp_path / "cache")
        assert time.monotonic() - started < 5  # the deadline, and one byte's wait past it
    assert files_under(tmp_path / "cache") == []


def test_a_download_that_fails_is_one_line_from_prepare_data(tmp_path, capsys):
    with serving(not_found) as url:
        code, err = prepare_data(capsys, data_block(tmp_path, url, "sha256:" + "0" * 64, members=[]), tmp_path / "out")
    assert code == 1 and err == [
        f"depthwidth prepare-data: error: data.url {url}: download failed (HTTP 404 Not Found)"
    ]
    assert files_under(tmp_path) == []


def test_a_whole_download_over_http_is_kept(tmp_path):
    def whole(handler):
        headers(handler, Content_Length=len(BODY))
        handler.wfile.write(BODY)

    with serving(whole) as url:
        path = fetch.download(url, f"sha256:{hashlib.sha256(BODY).hexdigest()}", tmp_path / "cache", progress=True)
    assert Path(path).read_bytes() == BODY and files_under(tmp_path / "cache") == ["corpus.txt"]


# --- hostile archives (issue 36, item 1): a checksum proves who published an archive, not that it is safe


def hostile_tar(entries: list[tarfile.TarInfo | tuple[str, str]]) -> bytes:
    """A .tar.gz of `entries`: (name, text) regular files, or TarInfo entries (links, folders) as given."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                archive.addfile(entry)
            else:
                info = tarfile.TarInfo(entry[0])
                info.size = len(entry[1].encode())
                archive.addfile(info, io.BytesIO(entry[1].encode()))
    return buffer.getvalue()


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


TRAIN, VALID = "wikitext-tiny/wiki.train.raw", "wikitext-tiny/wiki.valid.raw"


@pytest.mark.parametrize(
    ("case", "refused", "why"),
    [
        ("folder is a symlink", TRAIN, "is under 'wikitext-tiny', a symlink in the archive"),
        ("member is a symlink", TRAIN, "is a symlink, not a regular file"),
        ("member is a hardlink", TRAIN, "is a hardlink, not a regular file"),
        ("a later entry replaces it", TRAIN, "is in it 2 times"),
    ],
)
def test_a_hostile_tar_is_one_line_naming_the_member_and_writes_nothing_outside(tmp_path, capsys, case, refused, why):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "key").write_text("a secret that must not reach the corpus\n")
    (outside / "wiki.train.raw").write_text("the user's own file\n")
    valid = (VALID, MEMBERS[VALID])
    entries = {
        "folder is a symlink": [link("wikitext-tiny", str(outside)), (TRAIN, MEMBERS[TRAIN]), valid],
        "member is a symlink": [link(TRAIN, str(outside / "key")), valid],
        "member is a hardlink": [link(TRAIN, str(outside / "key"), tarfile.LNKTYPE), valid],
        "a later entry replaces it": [(TRAIN, MEMBERS[TRAIN]), link(TRAIN, str(outside / "wiki.train.raw")), valid],
    }[case]
    before = {path: path.read_bytes() for path in outside.iterdir()}
    url, checksum = published(tmp_path, "tar", hostile_tar(entries))
    code, err = prepare_data(capsys, data_block(tmp_path, url, checksum), tmp_path / "out")
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(
        f"depthwidth prepare-data: error: data.members: '{refused}' in the archive {SUFFIX['tar']} "
    )
    assert why in err[0] and err[0].endswith("refused (nothing unpacked)"), err[0]
    assert {path: path.read_bytes() for path in outside.iterdir()} == before  # nothing written outside
    assert files_under(tmp_path / "cache") == [SUFFIX["tar"]] and files_under(tmp_path / "out") == []
    assert not [path for path in (tmp_path / "cache").rglob("*") if path.is_symlink()]


def hostile_zip(entries: list[tuple[str, str, int]]) -> bytes:
    """A .zip of (name, content, Unix file type) entries: a symlink's content is its target, as zip stores it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content, kind in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = (kind | 0o644) << 16
            archive.writestr(info, content)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("member is a symlink", "is a symlink, not a regular file"),
        ("folder is a symlink", "is under 'wikitext-tiny', a symlink in the archive"),
        (
            "member is a fifo",
            "special, not a regular file",
        ),  # fetch says "is a special, not ...": left for a data/ change
    ],
)
def test_a_hostile_zip_is_one_line_naming_the_member_and_writes_nothing_outside(tmp_path, capsys, case, why):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "key").write_text("a secret that must not reach the corpus\n")
    valid = (VALID, MEMBERS[VALID], stat.S_IFREG)
    entries = {
        "member is a symlink": [(TRAIN, str(outside / "key"), stat.S_IFLNK), valid],
        "folder is a symlink": [
            ("wikitext-tiny", str(outside), stat.S_IFLNK),
            (TRAIN, MEMBERS[TRAIN], stat.S_IFREG),
            valid,
        ],
        "member is a fifo": [(TRAIN, "", stat.S_IFIFO), valid],
    }[case]
    before = {path: path.read_bytes() for path in outside.iterdir()}
    url, checksum = published(tmp_path, "zip", hostile_zip(entries))
    code, err = prepare_data(capsys, data_block(tmp_path, url, checksum), tmp_path / "out")
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"depthwidth prepare-data: error: data.members: '{TRAIN}' in the archive {SUFFIX['zip']} ")
    assert why in err[0] and err[0].endswith("refused (nothing unpacked)"), err[0]
    assert {path: path.read_bytes() for path in outside.iterdir()} == before
    assert files_under(tmp_path / "cache") == [SUFFIX["zip"]] and files_under(tmp_path / "out") == []
    assert not [path for path in (tmp_path / "cache").rglob("*") if path.is_symlink()]


def test_members_that_would_unpack_past_the_cap_are_refused_before_anything_is_kept(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fetch, "MAX_UNPACKED_BYTES", 1000)
    big = "word " * 2000  # 10 kB that gzip makes small
    url, checksum = published(tmp_path, "tar", hostile_tar([(TRAIN, big), (VALID, MEMBERS[VALID])]))
    code, err = prepare_data(capsys, data_block(tmp_path, url, checksum), tmp_path / "out")
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"depthwidth prepare-data: error: data.members: '{TRAIN}, {VALID}' in the archive ")
    assert "would unpack to more than 1000 bytes" in err[0] and "fetch.MAX_UNPACKED_BYTES" in err[0]
    assert files_under(tmp_path / "cache") == [SUFFIX["tar"]] and files_under(tmp_path / "out") == []


@pytest.mark.parametrize("member", ["../evil.txt", "wikitext-tiny/../../evil.txt", "/tmp/evil.txt"])
def test_a_member_outside_the_cache_is_refused_by_the_schema_naming_the_key(member):
    data = yaml.safe_load((REPO / "config/ci.yaml").read_text())
    data["data"] = {"name": "hostile", "corpus": "url", "url": "https://example.invalid/x.zip",
                    "checksum": "sha256:" + "0" * 64, "members": [member], "documents": "wikitext"}  # fmt: skip
    with pytest.raises(ConfigError, match=r"^config key 'data\.members\.0': "):
        config.validate(data)
