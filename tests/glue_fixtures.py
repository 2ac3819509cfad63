"""GLUE fixtures for the tests: CoLA.zip and RTE.zip in GLUE's layout (a few dozen rows each), built in the
test, and a local http.server on 127.0.0.1 that serves them (nothing leaves the machine)."""

from __future__ import annotations

import hashlib
import http.server
import io
import random
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

WORDS = ["the", "a", "lord", "king", "house", "city", "people", "land", "son", "day", "word", "man", "god", "hand"]
WORDS += ["river", "night", "bread", "field"]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def cola_tsv(rows: int, seed: int) -> str:
    """CoLA's train/dev layout, no header: source, label, original label ('*' or empty), sentence."""
    rng = random.Random(seed)
    lines = []
    for i in range(rows):
        label = i % 3 != 0  # two thirds acceptable, as in CoLA
        lines.append(f"gj04\t{int(label)}\t{'' if label else '*'}\t{sentence(rng, rng.randint(3, 9))}")
    return "\n".join(lines) + "\n"


def rte_tsv(rows: int, seed: int) -> str:
    """RTE's layout: header index, sentence1, sentence2, label (entailment or not_entailment)."""
    rng = random.Random(seed)
    lines = ["index\tsentence1\tsentence2\tlabel"]
    for i in range(rows):
        label = "entailment" if i % 2 else "not_entailment"
        lines.append(f"{i}\t{sentence(rng, rng.randint(8, 14))}\t{sentence(rng, rng.randint(3, 6))}\t{label}")
    return "\n".join(lines) + "\n"


def glue_zip(task: str, train: str | None = None, dev: str | None = None) -> bytes:
    """`task`'s zip as GLUE publishes it: <Folder>/train.tsv, dev.tsv, test.tsv (and, for CoLA, original/)."""
    folder = {"cola": "CoLA", "rte": "RTE"}[task]
    make = cola_tsv if task == "cola" else rte_tsv
    files = {"train.tsv": train or make(36, 1), "dev.tsv": dev or make(24, 2), "test.tsv": "index\tsentence\n0\tA.\n"}
    if task == "cola":
        files["original/raw/in_domain_train.tsv"] = files["train.tsv"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(f"{folder}/{name}", text)
    return buffer.getvalue()


def sha256(body: bytes) -> str:
    return f"sha256:{hashlib.sha256(body).hexdigest()}"


@contextmanager
def serving(files: dict[str, bytes]) -> Iterator[str]:
    """The base address (`http://127.0.0.1:<port>`) of `files` (name -> bytes) served in a thread."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = files.get(self.path.lstrip("/"))
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.handle_error = lambda request, address: None
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
