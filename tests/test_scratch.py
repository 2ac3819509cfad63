"""prepare-data leaves nothing behind when killed (issue 36, item 9): SIGTERM removes its shingle folder and
its half-written shards at once; after a SIGKILL the next prepare-data removes them, and a live run's work
folder stays. A child process stands in for a prepare-data at the moment of the kill (its scratch made as
prepare-data makes it), so the kill lands where it should every time."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from conftest import SLICE, package_env
from depthwidth import cli, scratch

# a prepare-data in the middle of its work: scratch as `tokens.scan` and `tokens.write_shards` make it
MID_RUN = textwrap.dedent(
    """
    import sys, tempfile, time
    from pathlib import Path
    from depthwidth import scratch
    from depthwidth.io import atomic_path
    out = Path(sys.argv[1])
    with scratch.prepare_data_scratch(out):
        with tempfile.TemporaryDirectory(prefix="depthwidth-shingles-") as folder:
            (Path(folder) / "part-0.npy").write_bytes(b"0" * 4096)
            with atomic_path(out / "train.bin") as tmp, atomic_path(out / "val.bin") as tmp_val:
                tmp.write_bytes(b"1" * 4096)
                print("ready", flush=True)
                time.sleep(60)
    """
)


def mid_run(tmp_path, out: str = "out"):
    """A child in the middle of a prepare-data into tmp_path/<out> with TMPDIR tmp_path/tmp, once it is ready."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = package_env() | {"TMPDIR": str(tmp_path / "tmp")}
    proc = subprocess.Popen(
        [sys.executable, "-c", MID_RUN, str(tmp_path / out)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "ready"
    return proc


def leftovers(tmp_path) -> list[str]:
    found = [p.relative_to(tmp_path) for p in (tmp_path / "tmp").rglob("*")]
    found += [p.relative_to(tmp_path) for p in (tmp_path / "out").glob(".*.tmp")]
    return sorted(map(str, found))


def test_sigterm_removes_the_shingles_and_the_half_written_shards(tmp_path):
    proc = mid_run(tmp_path)
    assert any("depthwidth-shingles-" in p for p in leftovers(tmp_path))
    assert any(p.startswith("out/.train.bin.") for p in leftovers(tmp_path))
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert leftovers(tmp_path) == []


def test_the_next_run_removes_what_a_sigkill_left_and_keeps_a_live_runs_folder(tmp_path, monkeypatch, capsys):
    killed = mid_run(tmp_path)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    left = leftovers(tmp_path)
    assert any("depthwidth-shingles-" in p for p in left) and any(p.startswith("out/.val.bin.") for p in left)
    live = mid_run(tmp_path, "other")  # a prepare-data of another corpus, still at work
    try:
        (live_folder,) = [p for p in (tmp_path / "tmp").glob("depthwidth-work-*") if not left[0].endswith(p.name)]
        monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
        data = {"corpus": "text", "paths": [str(SLICE)], "val_fraction": 0.25, "vocab_size": 300, "chunk_chars": 20000}
        argv = ["prepare-data", "--data-json", json.dumps(data), "--out", str(tmp_path / "out"), "--no-progress"]
        assert cli.main(argv) == 0
        err = capsys.readouterr().err
        assert f"removed {tmp_path / left[0]}, left by a killed run" in err
        assert "out/.val.bin." in err and "out/.train.bin." in err and "other" not in err
        assert live_folder.is_dir()  # its lock is held: not stale
        remaining = leftovers(tmp_path)
        assert remaining and all(p.startswith(str(live_folder.relative_to(tmp_path))) for p in remaining), remaining
        assert len(list((tmp_path / "other").glob(".*.tmp"))) == 2  # the live run's half-written shards
        assert (tmp_path / "out" / "meta.json").is_file()
    finally:
        live.kill()
        live.wait()


def test_a_work_folder_is_stale_only_once_its_lock_is_free(tmp_path):
    held, free, making = (tmp_path / f"{scratch.WORK_PREFIX}{name}" for name in ("held", "free", "making"))
    for folder in (held, free, making):
        folder.mkdir()
    (free / scratch.LOCK).touch()
    (held / scratch.LOCK).touch()
    with open(held / scratch.LOCK) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a live prepare-data holds it
        assert scratch.remove_stale(tmp_path) == [free]
    assert held.is_dir() and making.is_dir() and not free.exists()
    assert scratch.remove_stale(tmp_path) == [held]  # released: its owner is gone


@pytest.mark.parametrize("name", ["train.bin", "meta.json"])
def test_only_prepare_data_outputs_hidden_temporaries_are_removed_from_the_output_folder(tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    keep = [out / name, out / f".{name}.tmp", out / ".notes.txt.abc.tmp", out / f"{name}.abc.tmp"]
    for path in [*keep, out / f".{name}.abc123.tmp"]:
        path.write_text("x")
    assert scratch.remove_stale(tmp_path / "none", out) == [out / f".{name}.abc123.tmp"]
    assert all(path.exists() for path in keep)
    assert os.listdir(tmp_path) == ["out"]
