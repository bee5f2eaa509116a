"""Many processes, killed processes and stuck locks: one download, never a bad cache."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import gluon_hub

from cachetestlib import ref_for, temp_leftovers

FETCH = """
import sys
from gluon_hub import FileRef, fetch
ref = FileRef(hash=sys.argv[1], size=int(sys.argv[2]), filename="files/blob.bin")
print(fetch(ref, progress=False))
"""


def _spawn(ref, env):
    return subprocess.Popen(
        [sys.executable, "-c", FETCH, ref.hash, str(ref.size)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_concurrent_processes_download_once(server, cache_env, monkeypatch):
    data = os.urandom(500_000)
    ref = ref_for(data)
    # The body waits, so that every process is started while the first one downloads.
    server.add("files/blob.bin", data, delay=1.0)
    env = {**os.environ, "GLUON_HUB_MIRRORS": server.url}
    procs = [_spawn(ref, env) for _ in range(8)]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in outputs]
    paths = {out.strip() for out, _ in outputs}
    assert len(paths) == 1
    assert open(paths.pop(), "rb").read() == data
    assert server.body_requests() == 1
    assert temp_leftovers(cache_env) == []


def test_sigkill_mid_download_then_rerun_resumes(server, cache_env, monkeypatch):
    data = os.urandom(4 << 20)
    ref = ref_for(data)
    server.add("files/blob.bin", data, throttle=(128 << 10, 0.05))  # about 1.6 s in all
    env = {**os.environ, "GLUON_HUB_MIRRORS": server.url}
    proc = _spawn(ref, env)
    entry = cache_env / "files" / "sha256" / ref.digest
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        parts = list(entry.glob(".*.part")) if entry.exists() else []
        if parts and parts[0].stat().st_size >= 1 << 20:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = parts[0].stat().st_size
    assert 0 < kept < len(data)
    assert not (entry / "blob.bin").exists()

    server.files["/files/blob.bin"].throttle = None
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    assert gluon_hub.fetch(ref).read_bytes() == data
    last = server.requests()[-1]
    assert last.range == f"bytes={kept}-" and last.status == 206
    assert last.body == len(data) - kept
    assert temp_leftovers(cache_env) == []


def test_a_stuck_lock_delays_but_does_not_block(server, cache_env, monkeypatch, caplog):
    data = os.urandom(10_000)
    ref = ref_for(data)
    server.add("files/blob.bin", data)
    entry = cache_env / "files" / "sha256" / ref.digest
    entry.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import filelock, sys, time\n"
         "lock = filelock.FileLock(sys.argv[1]); lock.acquire(); print('held', flush=True)\n"
         "time.sleep(60)", str(entry / ".lock")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        monkeypatch.setenv("GLUON_HUB_LOCK_TIMEOUT", "0.5")
        started = time.monotonic()
        assert gluon_hub.fetch(ref).read_bytes() == data
        assert time.monotonic() - started >= 0.5  # it did wait for the lock
        assert "still held after" in caplog.text  # then went ahead without it, once
        assert server.body_requests() == 1 and temp_leftovers(cache_env) == []
    finally:
        holder.kill()
        holder.wait()


def test_lock_of_a_killed_process_is_released(server, cache_env, monkeypatch, caplog):
    data = os.urandom(10_000)
    ref = ref_for(data)
    server.add("files/blob.bin", data)
    entry = cache_env / "files" / "sha256" / ref.digest
    entry.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import filelock, sys, time\n"
         "filelock.FileLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)",
         str(entry / ".lock")],
        stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    monkeypatch.setenv("GLUON_HUB_LOCK_TIMEOUT", "30")
    assert gluon_hub.fetch(ref).read_bytes() == data
    # Had the lock outlived its process, the fetch would have waited out the timeout and
    # said so; counting that warning, not the seconds, keeps a loaded machine from failing it.
    assert "still held after" not in caplog.text
    assert server.body_requests() == 1


def test_threads_past_a_timed_out_lock_never_take_each_others_partial(server, cache_env, monkeypatch):
    """A second thread that stops waiting for the lock downloads on its own; it must not
    adopt the first thread's partial file, which is still being written."""
    import threading

    data = os.urandom(400_000)
    ref = ref_for(data)
    server.add("files/blob.bin", data, throttle=(20_000, 0.05))  # about a second
    monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
    monkeypatch.setenv("GLUON_HUB_LOCK_TIMEOUT", "0.2")
    results: dict[str, object] = {}

    def load(label: str) -> None:
        try:
            results[label] = gluon_hub.fetch(ref, progress=False).read_bytes() == data
        except Exception as exc:  # reported by the assertion below
            results[label] = exc

    first = threading.Thread(target=load, args=("first",))
    first.start()
    deadline = time.monotonic() + 10
    while not any(r.body for r in server.requests()) and time.monotonic() < deadline:
        time.sleep(0.01)  # the first thread holds the lock and has bytes on disk
    second = threading.Thread(target=load, args=("second",))
    second.start()
    first.join(30)
    second.join(30)
    assert results == {"first": True, "second": True}
    assert temp_leftovers(cache_env) == []
