"""Writers that share a graph: each batch is read, planned and written under the graph's writer lock, so two
writers whose histories overlap (the same datasets, versions interleaved) end in the graph one writer would
have made of both histories. On both backends, with two stores (two connections, as two processes have)."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from typing import Any

import pytest

from fieldgraph.graph import LineageGraph, WriteMode, open_store
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.sources import decode_event

from .conftest import ds, dump, lineage_event, mcp, schema_event, sf

SHAPES = [["a", "b"], ["a", "b", "c"], ["a", "c"], ["a", "c", "d"]]


def overlapping_histories(datasets: int = 30, seed: int = 7) -> tuple[list[Any], list[Any]]:
    """Two event streams over the same datasets: every dataset's schema versions and lineage versions (each
    naming fields some versions do not have) dealt at random to one stream or the other."""
    rnd = random.Random(seed)
    events: list[dict[str, Any]] = []
    for i in range(datasets):
        d = ds(f"t{i}")
        events += [schema_event(d, paths, ts=1000 + 10 * k + i, version=k) for k, paths in enumerate(SHAPES)]
        if i:
            up = ds(f"t{i - 1}")
            events += [lineage_event(d, [(sf(d, "a"), [sf(up, rnd.choice("abcd"))]), (sf(d, "c"), [sf(up, "a")])],
                                     ts=1005 + 10 * k + i) for k in range(3)]
    rnd.shuffle(events)
    return events[0::2], events[1::2]


def changes(events: list[dict[str, Any]], stream: str) -> list[Any]:
    return [c for i, e in enumerate(events) for c in decode_event(e, origin=f"{stream}:{i}")]


@pytest.mark.parametrize("mode", [WriteMode.SINGLE, WriteMode.CONCURRENT])
def test_writers_with_overlapping_histories_end_in_the_sequential_graph(graph, reference_graph, mode) -> None:
    a, b = overlapping_histories()
    reference_graph.ingest(changes(a, "a") + changes(b, "b"))
    expected = dump(reference_graph)

    other = LineageGraph(open_store(graph.uri))  # a second connection, as a second process has
    failures: list[BaseException] = []

    def run(g: LineageGraph, events: list[Any], stream: str) -> None:
        try:
            g.ingest(changes(events, stream), batch_events=3, mode=mode)  # small batches: many interleavings
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(graph, a, "a")), threading.Thread(target=run, args=(other, b, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    other.close()
    assert not failures
    assert dump(graph) == expected


def test_the_writer_lock_excludes_another_writer_until_released(graph) -> None:
    """The lock itself: a second store's writer waits while the first holds it, and gets it once released."""
    other = open_store(graph.uri)
    entered = threading.Event()

    def second() -> None:
        with other.sole_writer(["k2", "k1"]):
            entered.set()

    with graph.store.sole_writer(["k1", "k3"]):
        with graph.store.sole_writer(["k1"]):  # reentrant in a thread
            t = threading.Thread(target=second)
            t.start()
            assert not entered.wait(1.0)
    assert entered.wait(30.0)
    t.join()
    other.close()


def end_lock(store: Any) -> None:
    """End this thread's writer locks under it, as a time to live running out while the holder stalls (FalkorDB:
    the keys go) or a dropped connection (Neo4j: the lock transaction ends) does."""
    held = store._writer_local.held
    if hasattr(store, "writer_key"):
        store.db.connection.delete(*held[0])
    else:
        held[1].rollback()


def test_a_writer_knows_whether_its_locks_held_unbroken(graph) -> None:
    assert not graph.store.locks_unbroken()  # none held
    with graph.store.sole_writer(["k1", "k2"]):
        assert graph.store.locks_unbroken()
        assert graph.store.locks_unbroken()  # asking renews nothing it should not
        end_lock(graph.store)
        assert not graph.store.locks_unbroken()
    with graph.store.sole_writer(["k1"]):  # taken again afterwards
        assert graph.store.locks_unbroken()


def test_a_batch_whose_locks_broke_is_verified_and_settled(graph, reference_graph, monkeypatch) -> None:
    """Concurrent writers skip the edge check and the settling when their locks held (no other writer could have
    written there); a batch whose locks ended under it runs both, and the graph is the same."""
    from fieldgraph.graph.write import Writer

    a, b = overlapping_histories(datasets=6)
    history = changes(a, "a") + changes(b, "b")
    checks: list[int] = []
    count_edges, apply = Writer._count_edges, Writer.apply
    monkeypatch.setattr(Writer, "_count_edges", lambda w, keys: (checks.append(len(keys)), count_edges(w, keys))[1])
    reference_graph.ingest(history, batch_events=4, mode=WriteMode.CONCURRENT)
    assert checks == []  # locks unbroken: nothing to check

    def breaking(w: Writer, plan: Any) -> None:
        apply(w, plan)
        if w.store.held_keys() is not None and w.store.locks_unbroken():
            end_lock(w.store)

    monkeypatch.setattr(Writer, "apply", breaking)
    graph.ingest(history, batch_events=4, mode=WriteMode.CONCURRENT)
    assert checks and all(n > 0 for n in checks)
    assert dump(graph) == dump(reference_graph)


def test_two_ingest_runs_on_one_embedded_data_folder(reference_graph, tmp_path) -> None:
    """Two ``fieldgraph ingest`` processes on one data folder at once: neither stops the server under the other,
    and the graph is the one a single run of both histories makes."""
    import json
    import subprocess
    import sys

    a, b = overlapping_histories(datasets=20, seed=3)
    reference_graph.ingest(changes(a, "a") + changes(b, "b"))
    files = []
    for name, events in (("a", a), ("b", b)):
        files.append(tmp_path / f"{name}.jsonl")
        files[-1].write_text("".join(json.dumps(e) + "\n" for e in events))
    data = tmp_path / "fg"
    runs = [subprocess.Popen([sys.executable, "-m", "fieldgraph.ingest.cli", "ingest", str(f), "--graph",
                              f"embedded:{data}", "--batch", "2", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for f in files]
    for p in runs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        assert json.loads(out)["rejected"] == 0
    g = LineageGraph(open_store(f"embedded:{data}"))
    try:
        assert dump(g) == dump(reference_graph)
    finally:
        g.close()


# --- writers on different datasets write at the same time; on the same dataset they take turns ----------------


def chain_history(prefix: str, datasets: int = 5, seed: int = 5) -> list[dict[str, Any]]:
    """A small history of its own datasets (``prefix``.t0 ... ): schema versions and lineage from each to the one
    before it, in time order."""
    rnd = random.Random(seed)
    events: list[dict[str, Any]] = []
    for i in range(datasets):
        d = ds(f"{prefix}.t{i}")
        events += [schema_event(d, paths, ts=1000 + 10 * k + i, version=k) for k, paths in enumerate(SHAPES[:2])]
        if i:
            up = ds(f"{prefix}.t{i - 1}")
            events.append(lineage_event(d, [(sf(d, "a"), [sf(up, rnd.choice("ab"))])], ts=1030 + i))
    return events


def canonical(g: LineageGraph) -> dict[str, list[str]]:
    return g.store.snapshot().canonical()


class Inside:
    """Counts the writers inside :meth:`Writer.apply` at once (each holding its batch's locks there)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, pause: float = 0.0,
                 barrier: threading.Barrier | None = None) -> None:
        from fieldgraph.graph.write import Writer

        self.now = self.most = 0
        self.held: list[frozenset[str]] = []
        self.lock = threading.Lock()
        self.local = threading.local()
        apply = Writer.apply

        def counting(writer: Writer, plan: Any) -> None:
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
                self.held.append(writer.store.held_keys() or frozenset())
            try:
                if barrier is not None and not getattr(self.local, "met", False):
                    self.local.met = True
                    barrier.wait()  # both writers inside their writes, each holding its locks
                time.sleep(pause)
                apply(writer, plan)
            finally:
                with self.lock:
                    self.now -= 1

        monkeypatch.setattr(Writer, "apply", counting)


def run_writers(jobs: list[tuple[LineageGraph, list[Any]]], mode: WriteMode = WriteMode.SINGLE,
                batch_events: int = 2) -> None:
    failures: list[BaseException] = []

    def run(g: LineageGraph, cs: list[Any]) -> None:
        try:
            g.ingest(cs, batch_events=batch_events, mode=mode)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_writers_on_disjoint_datasets_hold_their_locks_at_the_same_time(graph, reference_graph, monkeypatch) -> None:
    """Each writer waits, inside its first write (holding its locks), for the other to be inside its own: with
    one lock for the graph they would never meet (the barrier breaks)."""
    a, b = chain_history("left"), chain_history("right")
    reference_graph.ingest(changes(a, "a") + changes(b, "b"))  # one writer, both histories
    inside = Inside(monkeypatch, barrier=threading.Barrier(2, timeout=30))
    other = LineageGraph(open_store(graph.uri))
    run_writers([(graph, changes(a, "a")), (other, changes(b, "b"))])
    assert inside.most == 2
    assert not set().union(*(h for h in inside.held if "left" in min(h))) & \
        set().union(*(h for h in inside.held if "right" in min(h)))
    other.close()
    assert canonical(graph) == canonical(reference_graph)


def test_writers_on_the_same_dataset_take_turns(graph, monkeypatch) -> None:
    d, up = ds("shared.t"), ds("shared.up")
    a = [schema_event(d, ["a", "b"], 1000 + i, version=i) for i in range(4)]
    b = [lineage_event(d, [(sf(d, "a"), [sf(up, "x")])], 1100 + i) for i in range(4)]
    inside = Inside(monkeypatch, pause=0.05)
    other = LineageGraph(open_store(graph.uri))
    run_writers([(graph, changes(a, "a")), (other, changes(b, "b"))], batch_events=1)
    other.close()
    assert inside.most == 1 and len(inside.held) >= 8
    assert all(d in h for h in inside.held)


def test_lock_waits_are_counted(graph) -> None:
    other = open_store(graph.uri)
    done = threading.Event()

    def second() -> None:
        with other.sole_writer(["k"]):
            done.set()

    with graph.store.sole_writer(["k", "m"]):
        t = threading.Thread(target=second)
        t.start()
        time.sleep(0.3)
    t.join(30)
    assert done.is_set() and other.lock_wait_s >= 0.2 and graph.store.lock_wait_s < 0.2
    other.close()


# --- what crosses datasets: placeholders, references, jobs, deletes, SQL -----------------------------------------


@pytest.mark.parametrize("mode", [WriteMode.SINGLE, WriteMode.CONCURRENT])
def test_two_writers_creating_and_referencing_one_placeholder_at_once(graph, reference_graph, mode,
                                                                       monkeypatch) -> None:
    """Both writers reference the same unknown field of a third dataset, starting at the same moment, round after
    round; lineage versions that drop the reference orphan the placeholder (the cleanup deletes it) and the next
    round makes it again; the third dataset's schema arrives at the end. One writer's graph of both histories."""
    third = ds("third")
    streams: list[list[dict[str, Any]]] = [[], []]
    for k in range(6):
        for w, name in enumerate(("left", "right")):
            d = ds(name)
            ref = [sf(third, "x")] if k % 2 == 0 else [sf(ds(f"{name}.own"), "y")]
            streams[w].append(lineage_event(d, [(sf(d, "a"), ref)], ts=2000 + 10 * k + w))
    streams[0].append(schema_event(third, ["x", "z"], ts=3000))
    a, b = changes(streams[0], "a"), changes(streams[1], "b")
    reference_graph.ingest(a + b, batch_events=1)
    other = LineageGraph(open_store(graph.uri))
    barrier = threading.Barrier(2, timeout=30)
    from fieldgraph.graph.write import Writer

    write_each = Writer.write_each

    def together(writer: Writer, events: Any) -> Any:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()  # both writers start each batch at the same moment
        return write_each(writer, events)

    monkeypatch.setattr(Writer, "write_each", together)
    barrier_runs = [(graph, a[:-1]), (other, b)]
    run_writers(barrier_runs, mode=mode, batch_events=1)
    barrier.abort()
    graph.ingest(a[-1:], mode=mode)
    other.close()
    assert canonical(graph) == canonical(reference_graph)


def data_job(job: str, edges: list[tuple[str, list[str]]], outputs: list[str], ts: int) -> dict[str, Any]:
    """A DataHub ``dataJobInputOutput`` MCP (as DataHub's JSON), ``edges`` (downstream field, upstream fields)."""
    import json

    aspect = {"inputDatasets": [], "outputDatasets": outputs, "outputDatasetFields": [d for d, _ in edges],
              "fineGrainedLineages": [{"upstreamType": "FIELD_SET", "upstreams": ups, "downstreamType": "FIELD",
                                       "downstreams": [down], "transformOperation": "IDENTITY"} for down, ups in edges]}
    return {"entityType": "dataJob", "entityUrn": job, "changeType": "UPSERT", "aspectName": "dataJobInputOutput",
            "aspect": {"value": json.dumps(aspect), "contentType": "application/json"},
            "systemMetadata": {"lastObserved": ts}}


def sql_event(sql: str, ts: int) -> dict[str, Any]:
    return {"sql": sql, "dialect": "spark", "database": "x", "time": ts}


JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,nightly,prod),move)"
L0, L1, R0, R1 = ds("x.l0"), ds("x.l1"), ds("x.r0"), ds("x.r1")


def crossing_histories() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The schemas, then two writers' histories that reach into each other's datasets: a data job whose next
    version writes the other's dataset (its stored outputs are read, and locked, then), SQL reading the other's
    schemas, references to fields the other's datasets do not have (placeholders), lineage replayed out of order
    (edges cleared and written again) and deletes. Whatever the order of the two writers' batches, one graph."""
    schemas = [schema_event(L0, ["a", "b"], 100), schema_event(L1, ["a", "b"], 101),
               schema_event(R0, ["a", "q"], 102), schema_event(R1, ["a", "b"], 103)]
    left = [data_job(JOB, [(sf(L1, "a"), [sf(L0, "a")])], [L1], 110),
            data_job(JOB, [(sf(R1, "b"), [sf(R0, "a")])], [R1], 150),  # the job's outputs move to the other's r1
            sql_event("INSERT INTO x.r1 SELECT a AS a, b AS b FROM x.l0", 120),
            lineage_event(L1, [(sf(L1, "b"), [sf(R0, "q")])], 130),
            lineage_event(L1, [(sf(L1, "b"), [sf(R0, "zz")])], 125),  # late: the aspect is replayed
            mcp(L1, "upstreamLineage", None, 140, change="DELETE")]
    right = [lineage_event(R0, [(sf(R0, "a"), [sf(L0, "zz")])], 160),
             sql_event("INSERT INTO x.l1 SELECT a AS a FROM x.r0", 170),
             lineage_event(R0, [(sf(R0, "a"), [sf(L1, "b"), sf(L0, "yy")])], 180),
             lineage_event(R0, [(sf(R0, "q"), [sf(L0, "zz")])], 175)]  # late
    return schemas, left, right


@pytest.mark.parametrize("mode", [WriteMode.SINGLE, WriteMode.CONCURRENT])
def test_writers_whose_batches_cross_datasets_end_in_one_writers_graph(graph, reference_graph, mode,
                                                                        monkeypatch) -> None:
    from fieldgraph.graph import store as store_module

    schemas, left, right = crossing_histories()
    a, b = changes(left, "a"), changes(right, "b")
    reference_graph.ingest(changes(schemas, "s") + a + b, batch_events=1)
    graph.ingest(changes(schemas, "s"))
    taken: list[frozenset[str]] = []
    sole_writer = store_module.GraphStore.sole_writer

    def recording(store: Any, keys: Any) -> Any:
        keys = frozenset(keys)
        taken.append(keys)
        return sole_writer(store, keys)

    monkeypatch.setattr(store_module.GraphStore, "sole_writer", recording)
    other = LineageGraph(open_store(graph.uri))
    run_writers([(graph, a), (other, b)], mode=mode, batch_events=1)
    other.close()
    assert canonical(graph) == canonical(reference_graph)
    assert any(JOB in k and L1 in k and R1 in k for k in taken)  # the job's stored outputs, locked


def test_a_data_jobs_stored_outputs_are_locked_before_it_is_planned(graph, monkeypatch) -> None:
    """The job's next version ends its edges in the dataset it wrote before: that dataset's lock is taken (the
    locks released and the union taken) before the batch is planned and written."""
    from fieldgraph.graph.write import Writer

    job = "urn:li:dataJob:(urn:li:dataFlow:(airflow,nightly,prod),move)"
    l0, l1, r1 = ds("j.l0"), ds("j.l1"), ds("j.r1")
    graph.ingest(changes([data_job(job, [(sf(l1, "a"), [sf(l0, "a")])], [l1], 10)], "a"))
    inside = Inside(monkeypatch)
    plan = Writer.plan
    planned: list[frozenset[str] | None] = []
    monkeypatch.setattr(Writer, "plan", lambda w, cs: (planned.append(w.store.held_keys()), plan(w, cs))[1])
    graph.ingest(changes([data_job(job, [(sf(r1, "a"), [sf(l0, "a")])], [r1], 20)], "a"))
    assert len(planned) == 2 and l1 not in (planned[0] or ()) and l1 in (planned[1] or ())
    assert all(l1 in h for h in inside.held)
    rows = graph.query("MATCH (d)-[e:DataDerivedFrom]->(u) RETURN d.urn AS d")
    assert [r["d"] for r in rows] == [field_urn(r1, "a")]


def test_sigkill_of_one_writer_mid_batch_the_other_goes_on(graph, reference_graph, tmp_path) -> None:
    """Two ``fieldgraph ingest`` processes on disjoint datasets; one is killed (SIGKILL) in the middle of its
    run, holding its batch's locks: the other finishes all the same (none of its locks is held by the dead one);
    running the killed one's file again gives the graph one writer makes of both files."""
    import json
    import signal
    import subprocess
    import sys

    # the killed writer's history is long enough to be mid-run when it is killed, even on a quiet machine
    a, b = chain_history("killed", datasets=400, seed=1), chain_history("other", datasets=30, seed=2)
    reference_graph.ingest(changes(a, "a") + changes(b, "b"))
    files = []
    for name, events in (("a", a), ("b", b)):
        files.append(tmp_path / f"{name}.jsonl")
        files[-1].write_text("".join(json.dumps(e) + "\n" for e in events))

    def ingest(f: Any) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "fieldgraph.ingest.cli", "ingest", str(f), "--graph", graph.uri,
                                 "--batch", "3", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    killed = ingest(files[0])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and killed.poll() is None and graph.stats().datasets < 20:
        time.sleep(0.05)
    other = ingest(files[1])
    time.sleep(0.2)
    assert killed.poll() is None, "the first writer ended before it could be killed: give it more events"
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    out, err = other.communicate(timeout=300)
    assert other.returncode == 0, err[-3000:]
    assert json.loads(out)["rejected"] == 0
    again = ingest(files[0])
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-3000:]
    assert canonical(graph) == canonical(reference_graph)
