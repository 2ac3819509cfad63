"""`python -m depthwidth glue-fetch --spec-json '{...}' --out DIR`: one GLUE task's train and dev rows.

The task's zip is fetched through the corpora's pooch path (`data.fetch`: the publisher's checksum, its
train.tsv and dev.tsv unpacked as regular files under the download cache), then each TSV is parsed into
`{train,dev}.jsonl` (one row a line: `a`, `b` (RTE's second sentence, null for CoLA) and `label`, 0 or 1),
and `meta.json` (the source, row and label counts, each file's sha256) is written last.

The TSVs (GLUE's layout, read as huggingface/datasets reads them: tab-separated, no quoting):
  CoLA: no header; source, label (0 or 1), original label ('*' or empty), sentence
  RTE: header `index sentence1 sentence2 label`; label entailment (0) or not_entailment (1)
Every failure is one line naming the task's config key or the file and line, and writes nothing: fetch's
messages (which name the corpus's `data.*` keys) are reworded to name `glue.sources.<task>`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from depthwidth.glue.contracts import SPLITS
from depthwidth.io import atomic_path, write_json
from depthwidth.options import json_option


@dataclass(frozen=True)
class Task:
    folder: str  # the archive's top folder (CoLA, RTE)
    header: tuple[str, ...] | None  # the first line's fields, or None for no header
    fields: int  # tab-separated fields per row
    labels: dict[str, int]  # label text -> class
    label_field: int
    text_fields: tuple[int, ...]  # the sentence (CoLA) or the two sentences (RTE)

    @property
    def archive(self) -> str:
        return f"{self.folder}.zip"

    def member(self, split: str) -> str:
        return f"{self.folder}/{split}.tsv"


TASKS = {
    "cola": Task("CoLA", None, 4, {"0": 0, "1": 1}, 1, (3,)),
    "rte": Task(
        "RTE", ("index", "sentence1", "sentence2", "label"), 4, {"entailment": 0, "not_entailment": 1}, 3, (1, 2)
    ),
}


def parse_tsv(task: str, text: str, name: str) -> list[dict]:
    """The rows of one TSV of `task` (`parse_rows` of its lines)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last row
    return list(parse_rows(task, lines, name))


def parse_rows(task: str, lines: Iterable[str], name: str) -> Iterator[dict]:
    """The rows of one TSV of `task`, one line at a time (`lines`: without their newline); ValueError naming
    `name` and the line of the first malformed row, or a TSV without rows."""
    spec = TASKS[task]
    found = False
    for number, line in enumerate(lines, start=1):
        fields = line.removesuffix("\r").split("\t")
        where = f"{name} line {number}"
        if number == 1 and spec.header is not None:
            if tuple(fields) != spec.header:
                raise ValueError(f"{where}: expected the header {' '.join(spec.header)!r}, got {line[:80]!r}")
            continue
        if len(fields) != spec.fields:
            raise ValueError(f"{where}: expected {spec.fields} tab-separated fields, found {len(fields)}")
        label = fields[spec.label_field]
        if label not in spec.labels:
            raise ValueError(f"{where}: label {label[:40]!r} is none of {', '.join(spec.labels)}")
        texts = [fields[i] for i in spec.text_fields]
        if not all(t.strip() for t in texts):
            raise ValueError(f"{where}: an empty sentence")
        found = True
        yield {"a": texts[0], "b": texts[1] if len(texts) > 1 else None, "label": spec.labels[label]}
    if not found:
        raise ValueError(f"{name}: no rows")


def reworded(message: str, task: str) -> str:
    """fetch's message, naming the GLUE task's keys instead of the corpus's."""
    key = f"glue.sources.{task}"
    for old, new in (("data.url", f"{key}.url"), ("data.checksum", f"{key}.checksum"), ("data.members", f"{key}")):
        message = message.replace(old, new)
    return message


def fetch_task(spec: dict, progress: bool = False) -> dict[str, Path]:
    """The task's train.tsv and dev.tsv, downloaded (or found in the cache) and unpacked; ValueError or
    FileNotFoundError, one line naming glue.sources.<task>."""
    from depthwidth.data import fetch

    task = TASKS[spec["task"]]
    members = [task.member(split) for split in SPLITS]
    url = spec["url"]
    if fetch.archive_kind(fetch.download_name(url)) != "zip":
        raise ValueError(f"glue.sources.{spec['task']}.url {url}: expected GLUE's {task.archive}, a zip archive")
    try:
        paths = fetch.download(url, spec["checksum"], Path(spec["cache_dir"]), progress, fetch.unpacker(members, url))
    except ValueError as err:
        raise ValueError(reworded(str(err), spec["task"])) from None
    except FileNotFoundError as err:
        raise FileNotFoundError(reworded(str(err), spec["task"])) from None
    return dict(zip(SPLITS, map(Path, paths)))


def file_lines(path: Path, name: str) -> Iterator[str]:
    """The lines of a UTF-8 file, read one at a time, without their newline; ValueError naming `name` and the
    byte of the first that is not UTF-8."""
    offset = 0
    with open(path, "rb") as text:
        for raw in text:
            try:
                yield raw.removesuffix(b"\n").decode("utf-8")
            except UnicodeDecodeError as err:
                raise ValueError(f"{name}: not UTF-8 text (byte {offset + err.start})") from None
            offset += len(raw)


def write_split(rows: Iterator[dict], path: Path) -> dict:
    """Write `rows` to the temporary file `path`, one JSON a line, as they come; their count, label counts and
    the file's sha256."""
    digest, labels = hashlib.sha256(), [0, 0]
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            line = json.dumps(row, ensure_ascii=False) + "\n"
            out.write(line)
            digest.update(line.encode("utf-8"))
            labels[row["label"]] += 1
    return {"rows": sum(labels), "label_counts": labels, "sha256": digest.hexdigest()}


def prepare(spec: dict, out: Path, progress: bool = False) -> dict:
    """Fetch, parse and write one task's rows (`out`/{train,dev}.jsonl, then meta.json); the meta. Each TSV is
    read and written a line at a time (a whole one in memory took 11 times its size), into temporary files
    renamed only once both splits parsed, so a malformed one leaves neither."""
    missing = [key for key in ("task", "url", "checksum", "cache_dir") if key not in spec]
    if missing or spec.get("task") not in TASKS:
        raise ValueError(
            f"spec: needs task (one of {', '.join(TASKS)}), url, checksum and cache_dir; got {sorted(spec)}"
        )
    task = TASKS[spec["task"]]
    paths = fetch_task(spec, progress)
    meta = {"task": spec["task"], "url": spec["url"], "checksum": spec["checksum"], "splits": {}}
    with contextlib.ExitStack() as files:
        for split in SPLITS:
            tmp = files.enter_context(atomic_path(out / f"{split}.jsonl"))
            name = f"{task.archive}:{task.member(split)}"
            rows = parse_rows(spec["task"], file_lines(paths[split], name), name)
            meta["splits"][split] = {"member": task.member(split), **write_split(rows, tmp)}
    write_json(out / "meta.json", meta)
    return meta


def read_split(folder: Path, split: str) -> list[dict]:
    """The rows of a prepared task's split."""
    return [json.loads(line) for line in (Path(folder) / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spec-json", required=True, help='{"task": "cola", "url": ..., "checksum": ..., "cache_dir": ...}'
    )
    parser.add_argument("--out", required=True, type=Path, help="the task's folder: train.jsonl, dev.jsonl, meta.json")
    parser.add_argument("--no-progress", action="store_true", help="no download bar")


def run(args: argparse.Namespace) -> int:
    spec = json_option(args.spec_json, "--spec-json")
    meta = prepare(spec, args.out, progress=not args.no_progress)
    counts = ", ".join(f"{split} {meta['splits'][split]['rows']} rows" for split in SPLITS)
    print(f"depthwidth glue-fetch: {spec['task']}: {counts} -> {args.out}")
    return 0
