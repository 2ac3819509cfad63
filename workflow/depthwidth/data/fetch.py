"""The download of a `url` corpus: `pooch.retrieve` into a cache folder, checked against the publisher's checksum.

`retrieve` fetches `data.url` (http, https or file://) to `data.cache_dir`, verified by `data.checksum`
in pooch's "alg:hex" form (md5, sha1, sha256 or sha512: whatever the publisher gives), with a tqdm bar
for http(s); an archive's `data.members` are unpacked by pooch's Unzip or Untar processor. A file
already in the cache with the right checksum is not downloaded again. Every failure (transport,
checksum, unreadable archive, missing member) is one line naming the config key, and leaves neither a
partial download nor a partial member behind: pooch downloads to a temporary file that it renames only
once the checksum matches, and members are unpacked into a temporary folder, then renamed into place.
"""

from __future__ import annotations

import logging
import re
import shutil
import stat
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

DOWNLOAD_SECONDS = 1800.0  # a whole download's deadline: 30 min, 1 GB at 0.6 MB/s (a trickling server never ends)
SOCKET_TIMEOUT_SECONDS = 60.0  # the longest wait for the connection, the headers or any piece of the body
DOWNLOAD_CHUNK_BYTES = 1 << 16  # the most bytes read at once (a download's, an unpacked member's)
CHECKSUM = re.compile(r"(md5|sha1|sha256|sha512):([0-9a-fA-F]+)")
CHECKSUM_DIGITS = {"md5": 32, "sha1": 40, "sha256": 64, "sha512": 128}
ZIP_SUFFIXES = (".zip",)
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MAX_UNPACKED_BYTES = 16 << 30  # the listed members of an archive together unpack to at most 16 GiB (WikiText-103: 0.5)


class DownloadDeadline(TimeoutError):
    """A download still running at DOWNLOAD_SECONDS."""


def checksum_problem(checksum: object) -> str | None:
    """Why `checksum` is not pooch's "alg:hex" with the algorithm's number of hex digits; or None."""
    match = CHECKSUM.fullmatch(checksum) if isinstance(checksum, str) else None
    if not match:
        return (
            'it must be "md5:<hex>", "sha1:<hex>", "sha256:<hex>" or "sha512:<hex>" (the algorithm the publisher gives)'
        )
    algorithm, digits = match.groups()
    if len(digits) != CHECKSUM_DIGITS[algorithm]:
        return f"a {algorithm} checksum has {CHECKSUM_DIGITS[algorithm]} hex digits, not {len(digits)}"
    return None


def archive_kind(name: str) -> str | None:
    """'zip' or 'tar' by a file name's suffix, None for a plain file."""
    lowered = name.lower()
    if lowered.endswith(ZIP_SUFFIXES):
        return "zip"
    return "tar" if lowered.endswith(TAR_SUFFIXES) else None


def download_name(url: str) -> str:
    """The cached file's name: the last part of the URL's path ('download' when it has none)."""
    return Path(urllib.parse.urlparse(url).path).name or "download"


def file_downloader(url: str, output_file: str, pooch=None) -> None:
    """pooch's downloader interface for a file:// URL (pooch knows only http, ftp, sftp and doi): copy the file."""
    shutil.copyfile(urllib.request.url2pathname(urllib.parse.urlparse(url).path), output_file)


def http_downloader(progress: bool) -> Callable:
    """pooch's downloader interface for http(s): the body streamed by requests and read as its bytes arrive
    (urllib3's `read1`, at most DOWNLOAD_CHUNK_BYTES at a time), with DOWNLOAD_SECONDS checked after every
    read; a tqdm bar if `progress`. (pooch's own reads whole chunks, so a server that sends a byte every 0.5 s
    was still sending at 40 s with a 3 s deadline.)"""

    def download(url: str, output_file: str, pooch=None) -> None:
        import http.client

        import requests
        import urllib3
        from tqdm import tqdm

        deadline = time.monotonic() + DOWNLOAD_SECONDS
        with requests.get(url, stream=True, timeout=SOCKET_TIMEOUT_SECONDS) as response:
            response.raise_for_status()
            total = int(response.headers.get("content-length", 0)) or None
            bar = tqdm(total=total, unit="B", unit_scale=True, ncols=79, disable=not progress, desc="download")
            with open(output_file, "wb") as out, bar:
                try:
                    while chunk := response.raw.read1(DOWNLOAD_CHUNK_BYTES, decode_content=True):
                        out.write(chunk)
                        bar.update(len(chunk))
                        if time.monotonic() > deadline:
                            raise DownloadDeadline(f"not finished after {DOWNLOAD_SECONDS:g} s, {bar.n} bytes in")
                except (urllib3.exceptions.HTTPError, http.client.HTTPException) as err:  # a body cut short
                    raise requests.ConnectionError(err) from err

    return download


def root_cause(err: BaseException) -> BaseException:
    """The innermost exception that `err` wraps (requests and urllib3 keep it in their args or context)."""
    while True:
        inner = [arg for arg in err.args if isinstance(arg, BaseException)] + [err.__cause__, err.__context__]
        inner = [e for e in inner if e is not None and e is not err]
        if not inner:
            return err
        err = inner[0]


def transport_error(err: BaseException) -> str:
    """What went wrong in a download, in a few words, for the one-line error naming data.url."""
    import requests

    if isinstance(err, requests.HTTPError) and err.response is not None:
        return f"HTTP {err.response.status_code} {err.response.reason}"
    if isinstance(err, DownloadDeadline):
        return f"{err} (fetch.DOWNLOAD_SECONDS)"
    root = root_cause(err)
    if isinstance(err, requests.Timeout) or isinstance(root, TimeoutError) or "timed out" in str(root):
        return f"no data for {SOCKET_TIMEOUT_SECONDS:g} s (fetch.SOCKET_TIMEOUT_SECONDS)"
    missing = re.search(r"IncompleteRead\(\d+ bytes read(?:, (\d+) more expected)?\)", str(root))
    if missing:
        short = f", at least {missing[1]} bytes missing" if missing[1] else ""
        return f"the connection closed before the end of the body{short}"
    return f"{type(root).__name__}: {root}" if str(root) else type(root).__name__


def quiet_pooch() -> None:
    """pooch logs each download and extraction at INFO on stderr; keep its warnings only (errors are ours)."""
    import pooch

    pooch.get_logger().setLevel(logging.WARNING)


def download(url: str, checksum: str, cache_dir: Path, progress: bool = False, processor=None):
    """The file at `url` in `cache_dir` (what `processor` returns of it, if given), by `pooch.retrieve`,
    unless a file with the right checksum is already there; a transport failure is a FileNotFoundError and
    a checksum mismatch a ValueError, each one line naming data.url, and neither leaves a file behind."""
    import pooch
    import requests

    quiet_pooch()
    downloader = file_downloader if url.startswith("file:") else http_downloader(progress)
    try:
        return pooch.retrieve(
            url, checksum, fname=download_name(url), path=cache_dir, downloader=downloader, processor=processor
        )
    except ValueError as err:
        got = re.search(r"but got ([0-9a-fA-F]+)", str(err))
        if not got:
            raise
        algorithm = checksum.split(":", 1)[0]
        raise ValueError(f"data.url {url}: its {algorithm} is {got[1]}, data.checksum expects {checksum}") from None
    except (OSError, requests.RequestException) as err:
        raise FileNotFoundError(f"data.url {url}: download failed ({transport_error(err)})") from None


def archive_names(archive: Path, kind: str, url: str) -> set[str]:
    """The file names inside a zip or tar archive; an unreadable (truncated, corrupt) one is a ValueError
    naming data.url."""
    try:
        if kind == "zip":
            with zipfile.ZipFile(archive) as opened:
                return {info.filename for info in opened.infolist() if not info.is_dir()}
        with tarfile.open(archive) as opened:
            return {info.name for info in opened.getmembers() if not info.isdir()}
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
        raise ValueError(
            f"data.url {url}: {archive.name} is not a readable {kind} archive ({err}); it matches data.checksum, "
            "so the checksum is of a broken file: take the publisher's"
        ) from None


def member_name_problem(member: str) -> str | None:
    """Why `member` could land outside the folder it is unpacked into (absolute, or a '..' part); or None."""
    if member.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", member):
        return "is an absolute path"
    if ".." in member.split("/"):
        return "has a '..' part"
    return None


def refuse(member: str, archive: Path, why: str) -> ValueError:
    """The one-line refusal of an archive member."""
    return ValueError(f"data.members: {member!r} in the archive {archive.name} {why}; refused (nothing unpacked)")


def zip_entry_kind(info: zipfile.ZipInfo) -> str:
    """'file', 'folder', 'symlink' or 'special' by a zip entry's Unix mode ('file' when it has no file type,
    as in a zip from Windows or from ZipFile.writestr)."""
    mode = info.external_attr >> 16
    if info.is_dir() or stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "file" if stat.S_IFMT(mode) in (0, stat.S_IFREG) else "special"


def tar_entry_kind(info: tarfile.TarInfo) -> str:
    """'file', 'folder', 'symlink', 'hardlink' or 'special' (device, fifo) of a tar entry."""
    if info.isreg():
        return "file"
    if info.isdir():
        return "folder"
    if info.issym():
        return "symlink"
    return "hardlink" if info.islnk() else "special"


def archive_entries(opened, kind: str) -> list[tuple[str, str, int]]:
    """Every entry of an open zip or tar archive as (name, kind, declared unpacked bytes), in archive order."""
    if kind == "zip":
        return [(info.filename.rstrip("/"), zip_entry_kind(info), info.file_size) for info in opened.infolist()]
    return [(info.name.rstrip("/"), tar_entry_kind(info), info.size) for info in opened.getmembers()]


def check_members(entries: list[tuple[str, str, int]], members: list[str], archive: Path) -> None:
    """Refuse (ValueError naming the member and the archive) a listed member that could write or read outside
    its folder: an absolute path or a '..' part, an entry of that name (or of a folder above it) that is a
    symlink, a hardlink or a device, a name the archive holds twice, or members over MAX_UNPACKED_BYTES."""
    by_name: dict[str, list[tuple[str, int]]] = {}
    for name, entry_kind, size in entries:
        by_name.setdefault(name, []).append((entry_kind, size))
    for member in members:
        why = member_name_problem(member)
        if why:
            raise refuse(member, archive, why)
        parts = member.split("/")
        for depth in range(1, len(parts)):
            above = "/".join(parts[:depth])
            for entry_kind, _ in by_name.get(above, []):
                if entry_kind != "folder":
                    raise refuse(member, archive, f"is under {above!r}, a {entry_kind} in the archive")
        found = by_name[member]
        if len(found) > 1:
            raise refuse(member, archive, f"is in it {len(found)} times (a later entry would replace the first)")
        if found[0][0] != "file":
            raise refuse(member, archive, f"is a {found[0][0]}, not a regular file")
    declared = sum(by_name[member][0][1] for member in members)
    if declared > MAX_UNPACKED_BYTES:
        raise refuse(members[0] if len(members) == 1 else ", ".join(members), archive, unpacked_too_big(declared))


def unpacked_too_big(size: int) -> str:
    """The reason for refusing members that unpack to `size` bytes, over the cap."""
    return f"would unpack to more than {MAX_UNPACKED_BYTES} bytes (at least {size}; fetch.MAX_UNPACKED_BYTES)"


def copy_bounded(source, path: Path, budget: int, member: str, archive: Path) -> int:
    """Copy the stream `source` to the new file `path` (never an existing one or a link), stopping with a
    refusal once more than `budget` bytes came out (the declared sizes may lie); the bytes written."""
    written = 0
    with open(path, "xb") as out:
        while chunk := source.read(DOWNLOAD_CHUNK_BYTES):
            written += len(chunk)
            if written > budget:
                raise refuse(member, archive, unpacked_too_big(MAX_UNPACKED_BYTES - budget + written))
            out.write(chunk)
    return written


def extract(archive: Path, kind: str, members: list[str], folder: Path) -> None:
    """Unpack the listed `members` of `archive` as regular files under `folder` (a new, empty one): each is
    checked first (`check_members`; a tar member also by tarfile's "data" filter, and refused if the filter
    would change where or what it is), then read from the archive and written by us, never by the archive's
    own extraction, so no link, device or folder of the archive is ever created."""
    with zipfile.ZipFile(archive) if kind == "zip" else tarfile.open(archive) as opened:
        check_members(archive_entries(opened, kind), members, archive)
        budget = MAX_UNPACKED_BYTES
        for member in members:
            if kind == "tar":
                info = opened.getmember(member)
                try:
                    filtered = tarfile.data_filter(info, str(folder))
                except tarfile.FilterError as err:
                    raise refuse(member, archive, f"is refused by tarfile's data filter ({err})") from None
                if filtered.name != info.name or not filtered.isreg():
                    raise refuse(member, archive, "would be changed by tarfile's data filter")
                source = opened.extractfile(info)
            else:
                source = opened.open(member)
            path = folder / member
            path.parent.mkdir(parents=True, exist_ok=True)
            with source:
                budget -= copy_bounded(source, path, budget, member, archive)


def steps_under(path: Path, folder: Path) -> list[Path]:
    """Each path from `folder` down to `path` (its folders below `folder`, then `path` itself)."""
    inside = path.relative_to(folder).parts
    return [folder.joinpath(*inside[:i]) for i in range(1, len(inside) + 1)]


def plain_file_under(path: Path, folder: Path) -> bool:
    """Whether `path` is a regular file inside `folder` with no link on the way (an unpacked member as
    `extract` writes it; an older unpacking may have left links)."""
    return not any(step.is_symlink() for step in steps_under(path, folder)) and path.is_file()


def place(unpacked: Path, path: Path, folder: Path) -> None:
    """Move the unpacked member file `unpacked` to `path` under `folder`, first removing any link on the way
    (left by an older unpacking), so the rename never follows one."""
    for step in steps_under(path, folder):
        if step.is_symlink():
            step.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    unpacked.replace(path)


def unpacker(members: list[str], url: str):
    """A pooch processor that unpacks `members` of the downloaded zip or tar archive into the folder
    '<archive>.members' beside it and returns their paths, in the order given. A member not in the
    archive, or one `extract` refuses, is a ValueError naming it, the archive and data.members. Members are
    unpacked into a temporary folder and renamed into place, so a member present there is whole; they are
    unpacked again when the archive was (re)downloaded, or when one is not a plain file there."""

    def process(fname: str, action: str, pooch_instance) -> list[Path]:
        archive = Path(fname)
        kind = archive_kind(archive.name)
        if kind is None:
            raise ValueError(
                f"data.members: {archive.name} is not a zip or tar archive "
                f"(by its name: {', '.join(ZIP_SUFFIXES + TAR_SUFFIXES)})"
            )
        for member in members:
            why = member_name_problem(member)
            if why:
                raise refuse(member, archive, why)
        target = archive.parent / f"{archive.name}.members"
        paths = [target / member for member in members]
        if action == "fetch" and all(plain_file_under(path, target) for path in paths):
            return paths
        names = archive_names(archive, kind, url)
        missing = [member for member in members if member not in names]
        if missing:
            shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
            raise ValueError(f"data.members: {missing[0]!r} is not in the archive {archive.name} (it holds {shown})")
        with tempfile.TemporaryDirectory(prefix=f".{archive.name}.", dir=archive.parent) as tmp:
            try:
                extract(archive, kind, members, Path(tmp))
            except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as err:
                raise ValueError(f"data.url {url}: {archive.name} could not be unpacked ({err})") from None
            for member, path in zip(members, paths):
                place(Path(tmp, member), path, target)
        return paths

    return process


def retrieve(url: str, checksum: str, cache_dir: Path, members: list[str], progress: bool = False) -> list[Path]:
    """The corpus files of a `url` corpus: the download itself, or its archive `members` unpacked (`unpacker`)."""
    if not members:
        return [Path(download(url, checksum, Path(cache_dir), progress))]
    return download(url, checksum, Path(cache_dir), progress, unpacker(members, url))
