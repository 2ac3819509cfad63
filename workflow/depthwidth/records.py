"""`records pack | unpack`: a config's trained and simulated records in one archive, and back.

What takes hours is the training and the simulation; everything after them (tables, figures, decisions, claims,
the report) is recomputed from their records in minutes. `records pack F --configfile C` writes, as one
tar.xz F, every record config C has finished (of every run it may train: second-stage runs and scouts
included):
- data/: every prepared corpus a run reads (tokenizer and token shards: not free to make, and newer shards
  would make every run that reads them train again);
- simulations/: each simulation's table;
- runs/: each finished run's metrics.json, curve.csv and entropy.csv (not its checkpoint: a run without
  metrics.json has not finished and is left out; it trains again, or resumes where its checkpoint survived);
- rates/: each learning-rate scan's rounds.
The archive is the same bytes for the same records (members sorted, times and owners zeroed).

`records unpack F` puts them back under results/ on another machine, another checkout or after a clean: a
member that exists with the same bytes is kept, one that differs is refused (nothing is written then: one line
naming it), and every member ends with one modification time, now. Snakemake reruns a job whose inputs are newer
than its outputs; a checkout's code files are older than now, and the records, which feed each other (data to
runs to rounds), share one time, so `snakemake` trains nothing it has a record of and rebuilds the rest.
"""

from __future__ import annotations

import argparse
import io
import lzma
import os
import tarfile
import time
from pathlib import Path, PurePosixPath

from depthwidth import contracts
from depthwidth.clean import corpora
from depthwidth.plan.config import add_override_arguments, read_overridden
from depthwidth.plan.jobs import Plan, from_config

KINDS = ("data", "simulations", "runs", "rates")  # the archive's top folders, in the order they feed each other


class RecordsError(ValueError):
    """An archive that cannot be unpacked as it is: one line naming the member or the file."""


def members(plan: Plan, root: Path) -> list[Path]:
    """The finished records of `plan` under `root` (the folder that holds results/), relative to results/, in the
    order of KINDS and sorted within each."""
    results = root / contracts.RESULTS
    found: dict[str, list[Path]] = {kind: [] for kind in KINDS}
    for corpus in corpora(plan):  # a vocabulary confound's too
        folder = root / corpus
        if (folder / "meta.json").is_file():  # the data job writes its meta last
            found["data"] += [p for p in folder.iterdir() if p.is_file()]
    jobs = map(plan.simulation, plan.all_simulation_ids())  # the second stage's too
    found["simulations"] = [root / job.output for job in jobs if (root / job.output).is_file()]
    for run_id in plan.all_run_ids():
        folder = root / plan.job(run_id).folder
        if (folder / "metrics.json").is_file():  # train writes metrics.json last: a run without it has not finished
            found["runs"] += [folder / name for name in contracts.RUN_FILES if (folder / name).is_file()]
    for scan in plan.scans.values():
        found["rates"] += sorted((root / scan.round_path(0)).parent.glob("round*.json"))
    return [p.relative_to(results) for kind in KINDS for p in sorted(set(found[kind]))]


def pack(plan: Plan, root: Path, out: Path) -> list[Path]:
    """Write `plan`'s finished records under `root` to the tar.xz `out`; returns the members written."""
    files = members(plan, root)
    if not files:  # a --root or --configfile that misses (another config's results) would pack an empty archive
        raise ValueError(f"{root / contracts.RESULTS}: no finished record of config {plan.name} to pack")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    try:
        with tarfile.open(tmp, "w:xz") as archive:
            for relative in files:
                data = (root / contracts.RESULTS / relative).read_bytes()
                info = tarfile.TarInfo(relative.as_posix())
                info.size, info.mtime, info.mode = len(data), 0, 0o644  # the same bytes for the same records
                archive.addfile(info, io.BytesIO(data))
        os.replace(tmp, out)
    finally:  # a failed write (say, `out` is a folder) leaves no half archive beside it
        tmp.unlink(missing_ok=True)
    return files


def _member_path(info: tarfile.TarInfo) -> PurePosixPath:
    """A member's path under results/; RecordsError naming it where it is no file under one of KINDS."""
    path = PurePosixPath(info.name)
    outside = path.is_absolute() or ".." in path.parts or len(path.parts) < 2 or path.parts[0] not in KINDS
    if outside or not info.isfile():
        raise RecordsError(f"{info.name}: not a record (a file under {', '.join(f'{k}/' for k in KINDS)})")
    return path


def unpack(archive_path: Path, root: Path) -> tuple[int, int]:
    """Put the records of `archive_path` under `root`/results/ (module docstring): (written, kept as they were).
    RecordsError, with nothing written, where a member is no record or an existing file differs from it."""
    results = root / contracts.RESULTS
    try:
        with tarfile.open(archive_path, "r:xz") as archive:
            infos = archive.getmembers()
            records = [(_member_path(info), archive.extractfile(info).read()) for info in infos]
    except (tarfile.TarError, EOFError, lzma.LZMAError) as error:  # not a tar.xz, or one cut short
        raise RecordsError(f"{archive_path}: not a readable tar.xz archive ({error})") from None
    for path, data in records:
        target = results / path
        if target.exists() and target.read_bytes() != data:
            raise RecordsError(f"{target}: differs from the archive's {path} (move it away to unpack)")
    written = 0
    for path, data in records:
        target = results / path
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(target.name + ".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
            written += 1
    now = time.time()
    for path, _ in records:  # one time for all: each feeds the next, none is newer than what it feeds
        os.utime(results / path, (now, now))
    return written, len(records) - written


# ---------------------------------------------------------------- the CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("pack", "unpack"), help="pack a config's records, or unpack an archive")
    parser.add_argument("archive", type=Path, help="the tar.xz to write (pack) or read (unpack)")
    parser.add_argument("--configfile", type=Path, default=Path("config/config.yaml"), help="pack: the config")
    parser.add_argument("--root", type=Path, default=Path("."), help="the folder that holds results/ (default: .)")
    add_override_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if args.action == "pack":
        plan = from_config(read_overridden(args.configfile, args.config))
        files = pack(plan, args.root, args.archive)
        kinds = {kind: sum(1 for f in files if f.parts[0] == kind) for kind in KINDS}
        runs = len({f.parts[1] for f in files if f.parts[0] == "runs"})
        print(
            f"{args.archive}: {len(files)} files of {plan.name} ({runs} runs; "
            + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
            + f"), {args.archive.stat().st_size / 1e6:.1f} MB"
        )
        return 0
    try:
        written, kept = unpack(args.archive, args.root)
    except RecordsError as error:
        raise SystemExit(f"records unpack: {error}") from None
    print(f"{args.archive}: {written} files written, {kept} kept as they were, under {args.root / contracts.RESULTS}")
    return 0
