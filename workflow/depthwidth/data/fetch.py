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
DOWNLOAD_CHUNK_BYTES = 1 << 16  # the deadline is checked each time this many bytes have arrived
CHECKSUM = re.compile(r"(md5|sha1|sha256|sha512):([0-9a-fA-F]+)")
CHECKSUM_DIGITS = {"md5": 32, "sha1": 40, "sha256": 64, "sha512": 128}
ZIP_SUFFIXES = (".zip",)
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


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


def deadline_bar(progress: bool):
    """A tqdm bar for pooch's HTTPDownloader that raises DownloadDeadline once DOWNLOAD_SECONDS have passed
    (checked at every DOWNLOAD_CHUNK_BYTES received); drawn only if `progress`."""
    from tqdm import tqdm

    deadline = time.monotonic() + DOWNLOAD_SECONDS

    class DeadlineBar(tqdm):
        def update(self, n=1):
            if time.monotonic() > deadline:
                raise DownloadDeadline(f"not finished after {DOWNLOAD_SECONDS:g} s, {self.n + n} bytes in")
            return super().update(n)

        def __bool__(self):  # pooch updates the bar only if it is truthy; tqdm's is False while total is 0
            return True

    return DeadlineBar(unit="B", unit_scale=True, ncols=79, disable=not progress, desc="download")


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
    missing = re.search(r"IncompleteRead\(\d+ bytes read, (\d+) more expected\)", str(root))
    if missing:
        return f"the connection closed before the end of the body, at least {missing[1]} bytes missing"
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
    if url.startswith("file:"):
        downloader: Callable = file_downloader
    else:
        downloader = pooch.HTTPDownloader(
            progressbar=deadline_bar(progress), timeout=SOCKET_TIMEOUT_SECONDS, chunk_size=DOWNLOAD_CHUNK_BYTES
        )
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
            return {info.name for info in opened.getmembers() if info.isfile()}
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
        raise ValueError(
            f"data.url {url}: {archive.name} is not a readable {kind} archive ({err}); it matches data.checksum, "
            "so the checksum is of a broken file: take the publisher's"
        ) from None


def unpacker(members: list[str], url: str):
    """A pooch processor that unpacks `members` of the downloaded zip or tar archive into the folder
    '<archive>.members' beside it and returns their paths, in the order given. A member not in the
    archive is a ValueError naming it, the archive and data.members. Members are unpacked by pooch's Unzip
    or Untar into a temporary folder and renamed into place, so a member present there is whole; they are
    unpacked again when the archive was (re)downloaded."""

    def process(fname: str, action: str, pooch_instance) -> list[Path]:
        import pooch

        archive = Path(fname)
        kind = archive_kind(archive.name)
        if kind is None:
            raise ValueError(
                f"data.members: {archive.name} is not a zip or tar archive "
                f"(by its name: {', '.join(ZIP_SUFFIXES + TAR_SUFFIXES)})"
            )
        target = archive.parent / f"{archive.name}.members"
        paths = [target / member for member in members]
        if action == "fetch" and all(path.is_file() for path in paths):
            return paths
        names = archive_names(archive, kind, url)
        missing = [member for member in members if member not in names]
        if missing:
            shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
            raise ValueError(f"data.members: {missing[0]!r} is not in the archive {archive.name} (it holds {shown})")
        with tempfile.TemporaryDirectory(prefix=f".{archive.name}.", dir=archive.parent) as tmp:
            processor = pooch.Unzip if kind == "zip" else pooch.Untar
            try:
                processor(members=members, extract_dir=tmp)(fname, "download", pooch_instance)
            except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as err:
                raise ValueError(f"data.url {url}: {archive.name} could not be unpacked ({err})") from None
            for member, path in zip(members, paths):
                path.parent.mkdir(parents=True, exist_ok=True)
                Path(tmp, member).replace(path)
        return paths

    return process


def retrieve(url: str, checksum: str, cache_dir: Path, members: list[str], progress: bool = False) -> list[Path]:
    """The corpus files of a `url` corpus: the download itself, or its archive `members` unpacked (`unpacker`)."""
    if not members:
        return [Path(download(url, checksum, Path(cache_dir), progress))]
    return download(url, checksum, Path(cache_dir), progress, unpacker(members, url))
