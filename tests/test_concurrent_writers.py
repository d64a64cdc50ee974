"""Writers that share a graph: each batch is read, planned and written under the graph's writer lock, so two
writers whose histories overlap (the same datasets, versions interleaved) end in the graph one writer would
have made of both histories. On both backends, with two stores (two connections, as two processes have)."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

from fieldgraph.graph import LineageGraph, WriteMode, open_store
from fieldgraph.ingest.sources import decode_event

from .conftest import ds, dump, lineage_event, schema_event, sf

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
