"""The embedded FalkorDB: start, reuse, stop cleanly, data that survives a restart (from a snapshot and a
short tail), and waiting for a server that is still loading."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from contextlib import suppress
from pathlib import Path

import pytest

from fieldgraph.graph import EmbeddedServer, GraphError, GraphUnavailable, LineageGraph, aof, embedded, open_store

from .conftest import ds, dump, ingest, lineage_event, schema_event, sf
from .kafka_fixtures import wait_for

pytestmark = pytest.mark.integration


def test_data_survives_a_restart_and_a_running_server_is_reused() -> None:
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        uri = f"embedded:{tmp}/d"
        with LineageGraph.open(uri) as g:
            assert g.store.server.started_here
            ingest(g, schema_event(ds("db.a"), ["x", "y"], 1))
        server = EmbeddedServer(f"{tmp}/d")
        assert not server.running()  # stopped with the graph that started it
        assert (Path(tmp) / "d" / "appendonlydir").is_dir()

        server.start()  # e.g. `fieldgraph server start`
        try:
            with LineageGraph.open(uri) as g:
                assert not g.store.server.started_here  # reused
                assert g.stats().fields == 2
            assert server.running()  # not ours to stop
        finally:
            server.stop()
        assert not server.running()


def test_clear_errors_for_bad_data_folders() -> None:
    with pytest.raises(GraphError, match="too deep for a unix socket"):
        EmbeddedServer("/tmp/" + "x" * 120).start()
    with pytest.raises(GraphError, match="cannot create the data folder"):
        EmbeddedServer("/proc/fieldgraph").start()
    with pytest.raises(GraphError, match="cannot reach FalkorDB"):
        open_store("falkordb://127.0.0.1:1")
    # credentials in the URI are not echoed back
    with pytest.raises(GraphError, match=r"cannot reach Neo4j at bolt://127\.0\.0\.1:1:"):
        open_store("bolt://user:secret@127.0.0.1:1?database=lineage")


# --- persistence: a restart loads a snapshot and a short tail ---


def _aof(data: Path) -> tuple[Path, list[Path]]:
    """The base file and the tail (incr) files, as the AOF manifest lists them."""
    folder = data / "appendonlydir"
    files: dict[str, list[Path]] = {"b": [], "i": []}
    for line in (folder / "appendonly.aof.manifest").read_text().splitlines():
        words = line.split()
        files[words[words.index("type") + 1]].append(folder / words[words.index("file") + 1])
    (base,) = files["b"]
    return base, files["i"]


def _tail_bytes(data: Path) -> bytes:
    return b"".join(f.read_bytes() for f in _aof(data)[1])


def _lineage(g: LineageGraph) -> None:
    a, b = ds("db.a"), ds("db.b")
    ingest(g, schema_event(a, ["x", "y"], 1), schema_event(b, ["x", "y"], 2),
           lineage_event(b, [(sf(b, "x"), [sf(a, "x")]), (sf(b, "y"), [sf(a, "x"), sf(a, "y")])], 3))


def _info(server: EmbeddedServer) -> dict:
    c = server._client(10.0)
    try:
        return c.info("persistence")
    finally:
        c.close()


def _kill(server: EmbeddedServer) -> None:
    """SIGKILL, once the AOF buffer is written out (a killed process loses nothing the kernel has)."""
    wait_for(lambda: _info(server)["aof_buffer_length"] == 0, 60, "the AOF buffer to be written", every=0.02)
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()
    server.process = None


def _resp(*args: str) -> bytes:
    out = [f"*{len(args)}\r\n".encode()]
    for a in args:
        out.append(f"${len(a.encode())}\r\n{a}\r\n".encode())
    return b"".join(out)


def _slow_tail(data: Path, rows: int) -> None:
    """Append to the AOF tail one expensive Cypher statement (a sum over ``rows`` rows), which keeps the server
    loading for a while when it replays it."""
    slow = f"UNWIND range(1, {rows}) AS x WITH sum(x) AS s CREATE (:Slow {{s: s}})"
    with open(_aof(data)[1][-1], "ab") as f:
        f.write(_resp("GRAPH.QUERY", "g", slow))


def test_a_clean_stop_leaves_a_snapshot_that_the_restart_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aof, "REWRITE_MIN_TAIL", 0)  # rewrite even this small graph's tail
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        with LineageGraph.open(f"embedded:{data}") as g:
            _lineage(g)
            before = dump(g)
        base, incr = _aof(data)
        assert base.name.endswith(".base.rdb") and base.read_bytes().startswith(b"REDIS")  # an RDB snapshot
        assert all(f.stat().st_size == 0 for f in incr)  # and no tail to replay

        with LineageGraph.open(f"embedded:{data}") as g:
            assert g.store.server.started_here
            assert dump(g) == before
        restart = (data / "server.log").read_text().rsplit("Redis is starting", 1)[1]
        assert re.search(rf"DB loaded from base file {re.escape(base.name)}", restart)
        assert re.search(r"Done loading RDB, keys loaded: [1-9]", restart)  # the graph came from the snapshot


def test_after_a_crash_the_tail_replays_as_effects() -> None:
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        server = EmbeddedServer(data).start()
        try:
            with LineageGraph.open(f"embedded:{data}") as g:
                assert not g.store.server.started_here
                _lineage(g)
                before = dump(g)
            _kill(server)
        finally:
            server.stop()
        tail = _tail_bytes(data)
        # the writes are logged as their effects, not as Cypher to re-run (MERGE without its index, at load)
        assert b"GRAPH.EFFECT" in tail and b"UNWIND" not in tail

        with LineageGraph.open(f"embedded:{data}") as g:
            assert g.store.server.started_here
            assert dump(g) == before


def test_a_cypher_aof_of_an_older_fieldgraph_opens_and_is_rewritten(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aof, "REWRITE_MIN_TAIL", 0)
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        server = EmbeddedServer(data).start()
        try:
            # as FalkorDB logs quick statements by default, and older fieldgraph versions let it
            server._client().execute_command("GRAPH.CONFIG", "SET", "EFFECTS_THRESHOLD", 2**31)
            with LineageGraph.open(f"falkordb+unix://{server.socket}?graph=fieldgraph") as g:
                _lineage(g)
                before = dump(g)
            _kill(server)
        finally:
            server.stop()
        assert b"UNWIND" in _tail_bytes(data)

        server = EmbeddedServer(data).start()  # replays the Cypher once, then rewrites it into a snapshot
        try:
            wait_for(lambda: not _info(server)["aof_rewrite_in_progress"], 60, "the AOF rewrite", every=0.02)
            assert _info(server)["aof_last_bgrewrite_status"] == "ok"
            base, _ = _aof(data)
            assert base.read_bytes().startswith(b"REDIS") and b"UNWIND" not in _tail_bytes(data)
            with LineageGraph.open(f"embedded:{data}") as g:
                assert dump(g) == before
        finally:
            server.stop()


def test_opening_a_graph_again_and_again_does_not_grow_its_aof() -> None:
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        with LineageGraph.open(f"embedded:{data}") as g:
            _lineage(g)
            before = dump(g)
        sizes = []
        for _ in range(4):  # e.g. four read-only commands
            with LineageGraph.open(f"embedded:{data}") as g:
                assert g.stats().fields == 4
            sizes.append(len(_tail_bytes(data)))
        assert len(set(sizes)) == 1, sizes
        assert b"GRAPH.CONSTRAINT" not in _tail_bytes(data)  # created once, held by the snapshot
        assert "CRITICAL" not in (data / "server.log").read_text()
        with LineageGraph.open(f"embedded:{data}") as g:
            assert dump(g) == before


def test_a_tail_that_fails_on_replay_is_rewritten_once() -> None:
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        server = EmbeddedServer(data).start()
        try:  # as fieldgraph 0.1 left it: the constraints created in the tail, never folded into a snapshot
            c = server._client()
            c.execute_command("GRAPH.QUERY", "fieldgraph", "CREATE (:Dataset {urn: 'a'})")
            c.execute_command("GRAPH.QUERY", "fieldgraph", "CREATE INDEX FOR (d:Dataset) ON (d.urn)")
            c.execute_command("GRAPH.CONSTRAINT", "CREATE", "fieldgraph", "UNIQUE", "NODE", "Dataset",
                              "PROPERTIES", "1", "urn")
            wait_for(lambda: b"GRAPH.CONSTRAINT" in _tail_bytes(data), 60, "the constraint in the AOF", every=0.02)
        finally:
            server.stop()
        server = EmbeddedServer(data).start()  # replays it (it fails: "already exists"), then rewrites
        try:
            wait_for(lambda: not _info(server)["aof_rewrite_in_progress"] and _info(server)["aof_rewrites"] > 0,
                     60, "the AOF rewrite", every=0.02)
        finally:
            server.stop()
        assert b"GRAPH.CONSTRAINT" not in _tail_bytes(data)
        failed = (data / "server.log").read_text().count("CRITICAL")
        EmbeddedServer(data).start().stop()
        assert (data / "server.log").read_text().count("CRITICAL") == failed  # nothing fails any more
        with LineageGraph.open(f"embedded:{data}") as g:
            assert g.query("MATCH (d:Dataset) RETURN d.urn AS urn") == [{"urn": "a"}]


def test_start_waits_for_a_loading_server_and_a_second_opener_joins_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "REPORT_EVERY", 0.2)
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        EmbeddedServer(data).start().stop()
        # a tail whose replay keeps the server busy for seconds: one expensive Cypher statement
        _slow_tail(data, 20000000)

        first, second = EmbeddedServer(data), EmbeddedServer(data)
        reports: list[embedded.LoadProgress] = []
        errors: list[Exception] = []

        def start_first() -> None:
            try:
                first.start(timeout=5, progress=reports.append)
            except Exception as exc:
                errors.append(exc)

        thread = threading.Thread(target=start_first)
        thread.start()
        try:
            wait_for(lambda: first.process is not None and first.socket.exists() or not thread.is_alive(),
                     60, "the first server's socket", every=0.02)
            assert second._probe()[0] in ("loading", "busy")  # it is still loading
            second.start(timeout=0.5)  # waits for it: neither a second server, nor giving up on this one
            assert not second.started_here
            thread.join()
            assert not errors and first.started_here
            assert second._pid() == first.process.pid  # one server
            assert reports and str(reports[0]).startswith(f"loading the embedded graph in {data}: ")
            rows = first._client().execute_command("GRAPH.RO_QUERY", "g", "MATCH (n:Slow) RETURN count(n)")
            assert rows[1] == [[1]]
        finally:
            thread.join()
            second.stop()  # the server stops with its last client
            first.stop()
        assert not first.running()


def test_start_gives_up_on_a_server_that_neither_answers_nor_progresses() -> None:
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        server = EmbeddedServer(Path(tmp) / "d").start()
        assert server.process is not None
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(GraphError, match="neither answered nor made progress for 1s"):
                EmbeddedServer(Path(tmp) / "d").start(timeout=1)
            assert server.process.poll() is None  # not the other opener's to kill
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
            server.stop()
        assert not server.running()


# --- a server that hangs while it loads (FalkorDB can deadlock there) is killed and started again, once ---


def _stop_when_loading(server: EmbeddedServer, stopped: list[int]) -> None:
    """SIGSTOP the server ``server`` spawns as soon as its pid file names it (it is loading then): it hangs."""
    wait_for(lambda: server.process is not None and server._pid() == server.process.pid, 60,
             "the server's pid file", every=0.005)
    assert server.process is not None
    stopped.append(server.process.pid)
    os.kill(server.process.pid, signal.SIGSTOP)


def test_a_server_that_hangs_while_loading_is_killed_and_started_again(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(embedded, "RESTART_AFTER", 1.0)
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        with LineageGraph.open(f"embedded:{data}") as g:
            _lineage(g)
            before = dump(g)
        # a tail that keeps the server loading for a second or two, during which it is stopped: it hangs
        _slow_tail(data, 5000000)
        aof = {p.name: p.read_bytes() for p in (data / "appendonlydir").glob("*.aof.*[!t]")}  # not the manifest

        first, second = EmbeddedServer(data), EmbeddedServer(data)
        stopped: list[int] = []
        hang = threading.Thread(target=_stop_when_loading, args=(first, stopped))
        hang.start()
        joined: list[Exception | None] = []

        def join_it() -> None:  # a second opener waits for the hung server, then for the new one
            wait_for(lambda: bool(stopped), 60, "the hang", every=0.005)
            try:
                second.start(timeout=60)
                joined.append(None)
            except Exception as exc:
                joined.append(exc)

        joiner = threading.Thread(target=join_it)
        joiner.start()
        try:
            with caplog.at_level("WARNING", logger="fieldgraph.graph.embedded"):
                first.start(timeout=60)
            hang.join()
            joiner.join()
            assert first.started_here and first.process is not None
            assert first.process.pid != stopped[0] and first._pid() == first.process.pid  # a new server
            assert joined == [None] and not second.started_here and second._pid() == first.process.pid
            said = caplog.text
            assert f"the embedded FalkorDB server in {data} (pid {stopped[0]}) hung while loading its data" in said
            assert re.search(r"used no CPU for 1s; its main thread is stopped[^;]*; (its other threads: [^;]*; )?"
                             r"the last line of its log: \d+:M ", said)  # e.g. in do_signal_stop
            assert "killing it and starting it again (the AOF is kept as it is)" in said
            assert {p.name: p.read_bytes() for p in (data / "appendonlydir").glob("*.aof.*[!t]")} == aof  # kept
            with LineageGraph.open(f"embedded:{data}") as g:
                assert not g.store.server.started_here
                assert dump(g) == before  # all the data is there
            rows = first._client().execute_command("GRAPH.RO_QUERY", "g", "MATCH (n:Slow) RETURN count(n)")
            assert rows[1] == [[1]]
            assert (data / "server.log").read_text().count("Redis is starting") == 3  # created, hung, restarted
        finally:
            hang.join()
            joiner.join()
            second.stop()
            first.stop()
        assert not first.running()
        with suppress(ProcessLookupError):  # the stopped server was killed (SIGKILL ends a stopped process)
            os.kill(stopped[0], 0)
            pytest.fail(f"the hung server {stopped[0]} is still there")


def test_a_server_that_hangs_again_after_its_restart_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "RESTART_AFTER", 0.5)
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        EmbeddedServer(data).start().stop()
        _slow_tail(data, 5000000)
        server = EmbeddedServer(data)
        stopped: list[int] = []

        def hang_twice() -> None:
            _stop_when_loading(server, stopped)
            wait_for(lambda: server.process is not None and server.process.pid != stopped[0], 60, "the restart",
                     every=0.005)
            _stop_when_loading(server, stopped)

        hang = threading.Thread(target=hang_twice)
        hang.start()
        try:
            with pytest.raises(GraphUnavailable, match=rf"in {re.escape(str(data))} hung while loading its data, "
                                                       r"twice: .* Its files are untouched"):
                server.start(timeout=0.5)
        finally:
            hang.join()
        assert len(stopped) == 2 and server.process is None and not server.running()
        for pid in stopped:
            with suppress(ProcessLookupError):
                os.kill(pid, 0)
                pytest.fail(f"the hung server {pid} is still there")
        EmbeddedServer(data).start().stop()  # the data folder opens as usual afterwards


# --- the deadlock itself: FalkorDB 4.16's cron thread reads its globals before they exist ---

#: LD_PRELOAD shim that forces, once, the interleaving behind the hang (see embedded's module docstring)
_INTERLEAVE_C = r"""
/* Force one interleaving in FalkorDB 4.16 (LD_PRELOAD): while the file $FG_INTERLEAVE exists (the first process
 * to start removes it), the main thread's pthread_rwlock_init of the module's `_globals` lock (Globals_Init, at
 * the end of RedisModule_OnLoad) waits until another thread holds that lock for reading (the cron thread's
 * stream-finished-queries task: GraphIterator_Next), and that reader keeps it until the init is done. The reader's
 * unlock (which the init then waits for) underflows the re-initialised lock's reader count: later writers wait
 * forever. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int armed = -1, reading, initialised, released;

static int is_globals(void *p) {
    Dl_info info;
    return dladdr(p, &info) && info.dli_sname && strcmp(info.dli_sname, "_globals") == 0;
}

static int arm(void) {
    if (armed < 0) {
        const char *once = getenv("FG_INTERLEAVE");
        armed = once && access(once, F_OK) == 0;
    }
    return armed;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *l) {
    static int (*real)(pthread_rwlock_t *);
    if (!real) real = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
    int rc = real(l);
    if (!initialised && arm() && is_globals(l) && !__atomic_exchange_n(&reading, 1, __ATOMIC_SEQ_CST))
        for (int i = 0; i < 50000 && !initialised; i++) usleep(100);
    return rc;
}

int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a) {
    static int (*real)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
    if (!real) real = (int (*)(pthread_rwlock_t *, const pthread_rwlockattr_t *))dlsym(RTLD_NEXT, "pthread_rwlock_init");
    int globals = is_globals(l);
    if (globals && arm()) {
        unlink(getenv("FG_INTERLEAVE"));
        for (int i = 0; i < 2000 && !reading; i++) usleep(1000);
    }
    int rc = real(l, a);
    if (globals) {
        initialised = 1;
        for (int i = 0; i < 2000 && reading && !released; i++) usleep(100);  /* until the reader has unlocked */
    }
    return rc;
}

int pthread_rwlock_unlock(pthread_rwlock_t *l) {
    static int (*real)(pthread_rwlock_t *);
    if (!real) real = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
    int rc = real(l);
    if (reading && initialised && !released && is_globals(l)) released = 1;
    return rc;
}
"""


@pytest.fixture(scope="module")
def interleave(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shim, built with the C compiler (skipped without one, or off Linux)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or sys.platform != "linux":
        pytest.skip("needs a C compiler and Linux (LD_PRELOAD)")
    folder = tmp_path_factory.mktemp("interleave")
    (folder / "interleave.c").write_text(_INTERLEAVE_C)
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(folder / "interleave.so"), str(folder / "interleave.c"),
                    "-ldl"], check=True, capture_output=True)
    return folder / "interleave.so"


def _interleaved_start(monkeypatch: pytest.MonkeyPatch, shim: Path, data: Path) -> EmbeddedServer:
    """Start a server on ``data`` whose first process gets the interleaving (the shim removes the marker)."""
    marker = data.parent / "interleave-once"
    marker.touch()
    monkeypatch.setenv("LD_PRELOAD", str(shim))
    monkeypatch.setenv("FG_INTERLEAVE", str(marker))
    try:
        return EmbeddedServer(data).start(timeout=60)
    finally:
        monkeypatch.delenv("LD_PRELOAD")
        assert not marker.exists()  # the shim was in the server and armed


def test_falkordb_deadlocks_when_its_cron_thread_reads_the_globals_first_and_the_guard_restarts_it(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, interleave: Path) -> None:
    monkeypatch.setattr(embedded, "RESTART_AFTER", 1.0)
    monkeypatch.setattr(embedded, "_MODULE_ARGS", ["EFFECTS_THRESHOLD", "0"])  # FalkorDB's default: CMD_INFO on
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        with LineageGraph.open(f"embedded:{data}") as g:
            _lineage(g)
            before = dump(g)
        with caplog.at_level("WARNING", logger="fieldgraph.graph.embedded"):
            server = _interleaved_start(monkeypatch, interleave, data)
        try:
            # the real deadlock, while loading: the main thread waits forever for the globals write lock
            assert re.search(r"hung while loading its data: it accepted connections but answered nothing and used "
                             r"no CPU for 1s; its main thread is sleeping in futex", caplog.text), caplog.text
            assert "started again after the hang" in caplog.text
            with LineageGraph.open(f"embedded:{data}") as g:
                assert dump(g) == before
        finally:
            server.stop()


def test_with_cmd_info_off_the_same_interleaving_does_not_deadlock(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, interleave: Path) -> None:
    # (the shim's lock init waits up to 2 s, sleeping, for a reader that does not come: RESTART_AFTER stays 10 s)
    assert embedded._MODULE_ARGS[-2:] == ["CMD_INFO", "no"]
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        data = Path(tmp) / "d"
        with LineageGraph.open(f"embedded:{data}") as g:
            _lineage(g)
            before = dump(g)
        with caplog.at_level("WARNING", logger="fieldgraph.graph.embedded"):
            server = _interleaved_start(monkeypatch, interleave, data)
        try:
            assert "hung" not in caplog.text  # no cron task reads the globals before they exist: nothing to undo
            assert (data / "server.log").read_text().count("Redis is starting") == 2  # one spawn for this start
            with LineageGraph.open(f"embedded:{data}") as g:
                assert dump(g) == before
                ingest(g, schema_event(ds("db.c"), ["z"], 4))  # writes DEL their writer keys: the globals write lock
                assert g.stats().fields == 5
        finally:
            server.stop()
