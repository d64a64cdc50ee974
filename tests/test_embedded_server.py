"""The embedded server's reliability: it outlives any one client and stops with the last (whichever process started
it), never outlives all of them (SIGTERM of a command, SIGKILL of every client, the keeper killed), keeps its files
private, and never opens a damaged append-only file quietly: start fails, ``server check`` says what is damaged,
``server repair`` keeps what can be kept."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fieldgraph.graph import EmbeddedServer, embedded, keeper
from fieldgraph.graph.errors import AOFDamaged
from fieldgraph.ingest.cli import app

from .kafka_fixtures import wait_for

pytestmark = pytest.mark.integration

FIELDGRAPH = str(Path(sys.executable).with_name("fieldgraph"))


@pytest.fixture
def data() -> Iterator[Path]:
    """A data folder on a short path (unix socket paths are limited); any server left on it is stopped."""
    tmp = tempfile.mkdtemp(prefix="fg-")
    yield Path(tmp) / "d"
    EmbeddedServer(Path(tmp) / "d").stop(force=True)
    shutil.rmtree(tmp, ignore_errors=True)


def _gone(server: EmbeddedServer) -> bool:
    return server._pid() is None and not server.running()


def _nodes(data: Path) -> int:
    server = EmbeddedServer(data).start()
    try:
        return server._client().execute_command("GRAPH.RO_QUERY", "g", "MATCH (n:N) RETURN count(n)")[1][0][0]
    finally:
        server.stop()


def _graph(data: Path) -> None:
    """Nodes 0-4 in the snapshot, 5-7 in the tail (one command each), stopped cleanly."""
    server = EmbeddedServer(data).start()
    c = server._client()
    for i in range(5):
        c.execute_command("GRAPH.QUERY", "g", f"CREATE (:N {{i: {i}}})")
    server.compact()
    for i in range(5, 8):
        c.execute_command("GRAPH.QUERY", "g", f"CREATE (:N {{i: {i}}})")
    server.stop()


def _files(data: Path) -> tuple[Path, Path]:
    """The snapshot and the tail."""
    folder = data / "appendonlydir"
    names = dict((kind, name) for name, kind in keeper.manifest_files((folder / keeper.MANIFEST).read_text()))
    return folder / names["b"], folder / names["i"]


def _client_process(data: Path) -> subprocess.Popen[str]:
    """Another process that starts (or joins) the server and holds it until killed."""
    code = ("import sys, time\nfrom fieldgraph.graph import EmbeddedServer\n"
            f"EmbeddedServer({str(data)!r}).start()\nprint('up', flush=True)\ntime.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "up\n"
    return proc


# --- clients ---------------------------------------------------------------------------------------------------


def test_the_server_outlives_the_client_that_started_it_and_stops_with_the_last(data: Path) -> None:
    first, second = EmbeddedServer(data).start(), EmbeddedServer(data).start()
    assert first.started_here and not second.started_here
    first.stop()  # the one that started it goes first: the other still uses it
    assert second.running()
    second._client().execute_command("GRAPH.QUERY", "g", "CREATE (:N)")
    second.stop()
    assert _gone(second)
    assert (data / keeper.RECORD).exists()  # a clean stop, recorded

    # across processes: another process started it and is killed; this one keeps using it, then stops it
    other = _client_process(data)
    mine = EmbeddedServer(data).start()
    assert not mine.started_here
    other.kill()
    other.wait()
    time.sleep(keeper.POLL + keeper.GRACE + 0.5)  # longer than the keeper waits for a client
    assert mine.running()
    mine.stop()
    assert _gone(mine) and (data / keeper.RECORD).exists()
    assert _nodes(data) == 1


def test_sigkill_of_every_client_stops_the_server_cleanly(data: Path) -> None:
    clients = [_client_process(data), _client_process(data)]
    server = EmbeddedServer(data)
    assert server.running()
    for proc in clients:
        proc.kill()
        proc.wait()
    t0 = time.monotonic()
    wait_for(lambda: _gone(server), 15, "the keeper to stop the server", every=0.05)
    assert time.monotonic() - t0 < keeper.POLL + keeper.GRACE + 10  # the keeper acts within its poll and grace
    assert not server.socket.exists()  # a clean shutdown removes it
    # written once it is gone
    wait_for(lambda: (data / keeper.RECORD).exists(), 15, "the keeper's clean-stop record", every=0.05)
    assert "ready to exit" in (data / "server.log").read_text()


def test_killing_the_keeper_shuts_the_server_down(data: Path) -> None:
    server = EmbeddedServer(data).start()
    assert server.process is not None
    server.process.keeper.kill()  # the server gets SIGTERM (PR_SET_PDEATHSIG): a clean shutdown
    wait_for(lambda: _gone(server), 15, "the server to follow its keeper", every=0.05)
    assert not server.socket.exists()
    server.stop()


def test_sigterm_of_a_command_runs_its_clean_up(data: Path) -> None:
    EmbeddedServer(data).start().stop()
    slow = "UNWIND range(1, 200000000) AS x RETURN count(x)"
    proc = subprocess.Popen([FIELDGRAPH, "query", slow, "--graph", f"embedded:{data}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    server = EmbeddedServer(data)
    wait_for(lambda: server.running(), 30, "the command to start the server", every=0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert _gone(server)  # stopped by the command itself, before it exited (the keeper would take a second)
    assert (data / keeper.RECORD).exists()


def test_server_start_pins_the_server_until_server_stop(data: Path) -> None:
    target = f"embedded:{data}"
    res = subprocess.run([FIELDGRAPH, "server", "start", "--graph", target], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0 and "started" in res.stdout
    server = EmbeddedServer(data)
    time.sleep(keeper.POLL + keeper.GRACE + 0.5)
    assert server.running()  # no client, but pinned
    EmbeddedServer(data).start().stop()  # a command's client comes and goes
    assert server.running()
    res = subprocess.run([FIELDGRAPH, "server", "stop", "--graph", target], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0 and "stopped" in res.stdout
    assert _gone(server) and not (data / keeper.PINNED).exists()


def test_the_data_folder_and_the_server_files_are_private(data: Path) -> None:
    old = os.umask(0o022)
    try:
        server = EmbeddedServer(data).start()
        try:
            server._client().execute_command("GRAPH.QUERY", "g", "CREATE (:N)")
            assert stat.S_IMODE(data.stat().st_mode) == 0o700
            assert stat.S_IMODE(server.socket.stat().st_mode) & 0o077 == 0
            for f in [data / "server.log", data / "redis.pid", *(data / "appendonlydir").iterdir()]:
                assert stat.S_IMODE(f.stat().st_mode) & 0o077 == 0, f
        finally:
            server.stop()
        for f in data.iterdir():
            assert stat.S_IMODE(f.stat().st_mode) & 0o077 == 0, f
        # a folder the user made is theirs: left as it is
        own = data.parent / "own"
        own.mkdir(mode=0o755)
        EmbeddedServer(own).start().stop()
        assert stat.S_IMODE(own.stat().st_mode) == 0o755
    finally:
        os.umask(old)


# --- damage ----------------------------------------------------------------------------------------------------


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


def _fails_to_start(data: Path, *said: str) -> None:
    with pytest.raises(AOFDamaged, match="server check") as exc:
        EmbeddedServer(data).start()
    for words in said:
        assert words in str(exc.value)
    assert _gone(EmbeddedServer(data))
    code, out = _cli("server", "check", "--graph", f"embedded:{data}")
    assert code == 1 and "damaged" in out, out


def test_a_tail_cut_mid_command_is_refused_then_repaired(data: Path) -> None:
    _graph(data)
    _, tail = _files(data)
    os.truncate(tail, tail.stat().st_size - 10)
    _fails_to_start(data, "shorter than the")
    (data / keeper.RECORD).unlink()  # as after a crash: redis itself refuses the cut tail
    _fails_to_start(data, "Unexpected end of file")
    code, out = _cli("server", "repair", "--graph", f"embedded:{data}")
    assert code == 0 and "backed up" in out and "kept the first" in out, out
    assert list(data.glob("aof-backup-*/*.incr.aof"))
    assert _cli("server", "check", "--graph", f"embedded:{data}") == (0, f"OK: {data}\n")
    assert _nodes(data) == 7  # all but the write that was cut


def test_a_garbled_tail_is_refused_then_repaired(data: Path) -> None:
    _graph(data)
    _, tail = _files(data)
    size = tail.stat().st_size
    with open(tail, "r+b") as f:
        f.seek(size - 40)
        f.write(b"XXXX")
    _fails_to_start(data, "Bad file format")
    code, out = _cli("server", "repair", "--graph", f"embedded:{data}")
    assert code == 0 and "kept the first" in out, out
    assert _nodes(data) == 7


def test_an_empty_snapshot_is_refused_and_not_repaired(data: Path) -> None:
    _graph(data)
    base, _ = _files(data)
    base.write_bytes(b"")
    _fails_to_start(data, "is empty")
    (data / keeper.RECORD).unlink()  # refused without the record too
    _fails_to_start(data, "is empty")
    before = sorted((p.name, p.stat().st_size) for p in (data / "appendonlydir").iterdir())
    code, out = _cli("server", "repair", "--graph", f"embedded:{data}")
    assert code == 1 and "cannot repair" in out and "nothing was changed" in out, out
    assert sorted((p.name, p.stat().st_size) for p in (data / "appendonlydir").iterdir()) == before


@pytest.mark.parametrize("record", [True, False])
def test_a_missing_manifest_is_refused_then_rebuilt(data: Path, record: bool) -> None:
    _graph(data)
    (data / "appendonlydir" / keeper.MANIFEST).unlink()
    if not record:
        (data / keeper.RECORD).unlink()
    _fails_to_start(data, "manifest")
    code, out = _cli("server", "repair", "--graph", f"embedded:{data}")
    assert code == 0 and "rebuilt the manifest" in out, out
    assert _nodes(data) == 8


def test_an_emptied_tail_is_refused_and_accepted_by_repair(data: Path) -> None:
    _graph(data)
    _, tail = _files(data)
    tail.write_bytes(b"")  # redis would load it silently, without nodes 5-7
    _fails_to_start(data, "shorter than the")
    code, out = _cli("server", "repair", "--graph", f"embedded:{data}")
    assert code == 0 and "lost:" in out, out
    assert _nodes(data) == 5


def test_check_and_repair_say_so_when_nothing_is_wrong_and_refuse_a_running_server(data: Path) -> None:
    assert _cli("server", "check", "--graph", f"embedded:{data}")[0] == 4  # no graph there
    _graph(data)
    assert _cli("server", "check", "--graph", f"embedded:{data}") == (0, f"OK: {data}\n")
    assert "nothing to repair" in _cli("server", "repair", "--graph", f"embedded:{data}")[1]
    server = EmbeddedServer(data).start()
    try:
        code, out = _cli("server", "repair", "--graph", f"embedded:{data}")
        assert code == 1 and "is running" in out
    finally:
        server.stop()
    assert embedded.AOF_DIR == "appendonlydir"


def test_a_hung_server_whose_data_folder_is_removed_is_killed(data: Path) -> None:
    """A removed data folder ends its server (no client can find it again); one that ignores SIGTERM (stopped here,
    as a deadlocked one would be) is killed, not left running for ever."""
    server = EmbeddedServer(data).start()
    pid = server._pid()
    assert pid is not None and server.process is not None
    os.kill(pid, signal.SIGSTOP)
    shutil.rmtree(data)
    wait_for(lambda: server.process is not None and server.process.keeper.poll() is not None, 30,
             "the keeper to end the stopped server", every=0.1)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
