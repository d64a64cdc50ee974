"""The worker's pipeline (batch N+1 polled and decoded while batch N is written) against a real Apache Kafka and
both graph backends: offsets are committed in order, each only after the write that covers it, whatever
happens to the write of the batch before."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from fieldgraph.errors import GraphUnavailable
from fieldgraph.ingest.worker import Worker

from .conftest import ds, dump, lineage_event, schema_event, sf
from .kafka_fixtures import ThreadWorker, wait_committed, wait_for, worker_config

pytestmark = pytest.mark.integration

#: the batch holding this offset is the one whose write fails
FAILING = 25


def _events(n: int, prefix: str) -> list[dict[str, Any]]:
    evs = []
    for i in range(n):
        evs.append(schema_event(ds(f"{prefix}.t{i}"), ["a", "b"], 1000 + i))
        if i:
            evs.append(lineage_event(ds(f"{prefix}.t{i}"), [(sf(ds(f"{prefix}.t{i}"), "a"),
                                                              [sf(ds(f"{prefix}.t{i - 1}"), "b")])], 2000 + i))
    return evs


class _Hook:
    """Watches the worker's batches: what was decoded, which offsets each write covered, and (``fail``) makes the
    write of the batch holding offset :data:`FAILING` raise, ``times`` times, until ``release`` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail: type[BaseException], times: int) -> None:
        self.lock = threading.Lock()
        self.decoded_up_to = -1
        self.written: list[list[int]] = []
        self.failing_batch: list[int] = []
        self.failures = 0
        self.release = threading.Event()
        decode, write = Worker._decode_all, Worker._write

        def decode_all(worker: Worker, msgs: Any) -> Any:
            out = decode(worker, msgs)
            with self.lock:
                self.decoded_up_to = max(self.decoded_up_to, *(m.offset() for m in msgs))
            return out

        def write_batch(worker: Worker, batch: Any) -> Any:
            offsets = sorted(m.offset() for m, _ in batch.per_msg)
            if FAILING in offsets and self.failures < times and not self.release.is_set():
                with self.lock:
                    self.failing_batch, self.failures = offsets, self.failures + 1
                raise fail(f"simulated failure of the batch at offsets {offsets[0]}..{offsets[-1]}")
            out = write(worker, batch)
            with self.lock:
                self.written.append(offsets)
            return out

        monkeypatch.setattr(Worker, "_decode_all", decode_all)
        monkeypatch.setattr(Worker, "_write", write_batch)


def test_a_batch_retried_while_the_graph_is_down_holds_back_the_commit_of_the_batch_after_it(
        broker, graph, reference_graph, monkeypatch):
    from fieldgraph.ingest.sources import decode_event

    topic = broker.create_topic(broker.name("pipe"))
    events = _events(30, "pipe")
    broker.emit(topic, events)
    hook = _Hook(monkeypatch, GraphUnavailable, times=1000)
    cfg = worker_config(broker, [topic], graph.uri, batch_size=10, retry_max_s=0.5)
    w = ThreadWorker(cfg)
    try:
        wait_for(lambda: hook.failures >= 3, 60, "the write of the failing batch to be retried")
        first = hook.failing_batch[0]
        # the next batch was read and decoded meanwhile (the pipeline), but neither written nor committed
        assert hook.decoded_up_to > hook.failing_batch[-1]
        assert all(max(offsets) < first for offsets in hook.written)
        assert broker.committed(cfg.group_id, topic)[0] == first  # everything before the batch, nothing after
        assert w.worker.stats.graph_retries >= 3
        hook.release.set()  # the graph is back
        wait_committed(broker, cfg.group_id, topic, len(events), 60)
    finally:
        stats = w.stop()
    # written in order, each offset once, the failing batch before the ones after it
    flat = [o for offsets in hook.written for o in offsets]
    assert flat == list(range(len(events)))
    assert stats.messages == len(events) and stats.dlq == 0
    reference_graph.ingest([c for e in events for c in decode_event(e)])
    assert dump(graph) == dump(reference_graph)


def test_a_write_that_fails_for_good_commits_nothing_past_it_and_the_next_worker_resumes_there(
        broker, graph, reference_graph, monkeypatch):
    from fieldgraph.ingest.sources import decode_event

    topic = broker.create_topic(broker.name("pipe-bug"))
    events = _events(30, "pipebug")
    broker.emit(topic, events)
    hook = _Hook(monkeypatch, RuntimeError, times=1)  # not a fault of the input, not transient: the worker stops
    cfg = worker_config(broker, [topic], graph.uri, batch_size=10)
    w = ThreadWorker(cfg)
    w.thread.join(60)
    assert not w.thread.is_alive() and isinstance(w.error, RuntimeError)
    first = hook.failing_batch[0]
    assert hook.decoded_up_to > hook.failing_batch[-1]  # the batch after it had been read: it was not written
    assert all(max(offsets) < first for offsets in hook.written)
    assert broker.committed(cfg.group_id, topic)[0] == first

    # a new worker of the group starts at the failed batch and writes the rest
    w2 = ThreadWorker(cfg)
    wait_committed(broker, cfg.group_id, topic, len(events), 60)
    stats = w2.stop()
    assert stats.messages == len(events) - first
    assert sorted(o for offsets in hook.written for o in offsets) == list(range(len(events)))
    reference_graph.ingest([c for e in events for c in decode_event(e)])
    assert dump(graph) == dump(reference_graph)
