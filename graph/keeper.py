"""The keeper of an embedded server: the parent of one ``redis-server``, which it shuts down when no client is left.

:class:`~fieldgraph.graph.embedded.EmbeddedServer` runs it as a script (standard library only, so that it starts in
tens of milliseconds): ``python keeper.py DATA_DIR REDIS-SERVER ARGS...``. It starts the server (umask 077; on
Linux with ``PR_SET_PDEATHSIG``, so that the server shuts down cleanly on SIGTERM if the keeper dies), prints its
pid on stdout, and from then on, every :data:`POLL` seconds:

- exits as soon as the server has (with its exit code);
- when no client has held the ``clients`` lock of the data folder for :data:`GRACE` seconds (every client holds
  it shared while it uses the server; all of them were killed, or ended without stopping it) and the server is
  not pinned (``fieldgraph server start``), takes the ``lock`` that starting and stopping take, sends the server
  SIGTERM (a clean shutdown: the AOF is fsynced), waits for it, and writes the clean-stop record
  (:func:`write_record`);
- shuts the server down when the data folder is gone (nobody can reach it any more).

It never blocks on a lock: a client that stops the server itself waits for the keeper to reap it.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

POLL = 0.5
GRACE = 1.0
LOCK = "lock"
CLIENTS = "clients"
PINNED = "pinned"
RECORD = "aof.json"
AOF_DIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"


def manifest_files(text: str) -> list[tuple[str, str]]:
    """(file name, type) of each line of an AOF manifest: ``b`` the base, ``i`` a tail, ``h`` history."""
    files = []
    for line in text.splitlines():
        words = line.split()
        if "file" in words and "type" in words:
            files.append((words[words.index("file") + 1], words[words.index("type") + 1]))
    return files


def write_record(data_dir: Path) -> None:
    """Record the AOF as a clean stop left it (the manifest and its files' sizes): a start checks the files
    against it, so that a file emptied or shortened meanwhile is not loaded as if nothing were missing."""
    folder = data_dir / AOF_DIR
    try:
        manifest = (folder / MANIFEST).read_text()
        sizes = {name: (folder / name).stat().st_size for name, kind in manifest_files(manifest) if kind != "h"}
    except OSError:
        return  # no AOF: nothing to record
    tmp = data_dir / (RECORD + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"manifest": manifest, "sizes": sizes}, f)
    os.replace(tmp, data_dir / RECORD)


def _try_lock(path: Path) -> int | None:
    """An fd holding ``path`` exclusively, or None when someone holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _unused(data_dir: Path) -> bool:
    fd = _try_lock(data_dir / CLIENTS)
    if fd is None:
        return False
    os.close(fd)
    return not (data_dir / PINNED).exists()


def _stop(data_dir: Path, server: subprocess.Popen[bytes]) -> bool:
    """Shut the server down if it is still unused; whether it is gone."""
    lock = _try_lock(data_dir / LOCK)  # a client is starting or stopping: look again later
    if lock is None:
        return False
    try:
        clients = _try_lock(data_dir / CLIENTS)
        if clients is None:
            return False
        try:
            if (data_dir / PINNED).exists():
                return False
            _end(server)
            if server.returncode == 0:
                write_record(data_dir)
            return True
        finally:
            os.close(clients)
    finally:
        os.close(lock)


def _end(server: subprocess.Popen[bytes], timeout: float = 120) -> int:
    """SIGTERM (a clean shutdown); SIGKILL if the server has not exited ``timeout`` s later (a hung one never will);
    its exit status."""
    server.send_signal(signal.SIGTERM)
    try:
        return server.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.kill()
        return server.wait()


def _die_with(parent: int) -> None:
    """In the server, before exec: SIGTERM when the keeper dies (Linux); if it already has, exit."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)


def _exit_watch(server: subprocess.Popen[bytes]) -> Callable[[float], bool]:
    """A wait of up to so many seconds for the server to exit, saying whether it has: on Linux on a pidfd, which
    returns as soon as it has; elsewhere ``Popen.wait``, which polls."""
    try:
        pidfd = os.pidfd_open(server.pid)
    except (AttributeError, OSError):
        def poll(timeout: float) -> bool:
            try:
                server.wait(timeout)
            except subprocess.TimeoutExpired:
                return False
            return True

        return poll
    return lambda timeout: bool(select.select([pidfd], [], [], timeout)[0])


def main(argv: list[str]) -> int:
    data_dir, cmd = Path(argv[0]), argv[1:]
    me = os.getpid()
    server = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, umask=0o077,
                              preexec_fn=lambda: _die_with(me))
    print(server.pid, flush=True)
    sys.stdout.close()
    idle_since: float | None = None
    exited = _exit_watch(server)
    while True:
        if exited(POLL):
            return server.wait()
        try:
            if not _unused(data_dir):
                idle_since = None
                continue
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= GRACE and _stop(data_dir, server):
                return server.returncode
        except OSError:
            idle_since = None
            if not data_dir.is_dir():  # removed: no client can find the server any more
                return _end(server, timeout=10)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
