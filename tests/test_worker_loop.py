"""The worker's loop without a broker: fake Kafka clients (the worker's client factories,
:mod:`fieldgraph.ingest.clients`) and the in-memory graph. Offsets are committed only after the graph write (and
the dead letters) covering them, a bad message goes to the dead-letter topic with its reason while the rest is
written, a graph that is down pauses the partitions and the batch is retried uncommitted, and a rebalance commits
the batch in flight before the partitions go. The same loop against a real Kafka: tests/test_kafka_worker.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from fieldgraph.errors import GraphUnavailable, WorkerError
from fieldgraph.graph import LineageGraph, MemoryStore
from fieldgraph.graph.write import Writer
from fieldgraph.ingest.config import WorkerConfig
from fieldgraph.ingest.worker import H_ERROR, H_OFFSET, H_REASON, Worker

from .conftest import ds, lineage_event, schema_event, sf

kafka = pytest.importorskip("confluent_kafka")

TOPIC = "events"


class FakeMessage:
    """A consumed message: what the worker reads of confluent-kafka's ``Message``."""

    def __init__(self, partition: int, offset: int, value: bytes | None, key: bytes | None = None) -> None:
        self._partition, self._offset, self._value, self._key = partition, offset, value, key

    def topic(self) -> str:
        return TOPIC

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def value(self) -> bytes | None:
        return self._value

    def key(self) -> bytes | None:
        return self._key

    def headers(self) -> list[tuple[str, bytes]] | None:
        return None

    def error(self) -> None:
        return None


#: one step of a consumer's script: the messages one ``consume`` returns, or what makes them (a rebalance inside it)
Step = Sequence[FakeMessage] | Callable[["FakeConsumer"], Sequence[FakeMessage]]


class FakeConsumer:
    """Plays a script of ``consume`` results, then stops the worker after a few empty ones; records commits (with
    what ``on_commit`` saw at that moment), pauses and resumes. Every partition of :data:`TOPIC` in ``partitions``
    is assigned on subscribe."""

    def __init__(self, script: list[Step], partitions: Sequence[int] = (0, 1),
                 on_commit: Callable[[list[tuple[str, int, int]]], Any] | None = None) -> None:
        self.script = list(script)
        self.partitions = list(partitions)
        self.on_commit = on_commit
        self.commits: list[tuple[list[tuple[str, int, int]], Any]] = []
        self.paused: list[list[tuple[str, int]]] = []
        self.resumed: list[list[tuple[str, int]]] = []
        self.polls = 0
        self.on_poll: Callable[[FakeConsumer], None] | None = None
        self.callbacks: dict[str, Any] = {}
        self.worker: Worker | None = None
        self.idle = 0
        self.closed = False

    def subscribe(self, topics: list[str], on_assign: Any = None, on_revoke: Any = None, on_lost: Any = None) -> None:
        assert topics == [TOPIC]
        self.callbacks = {"assign": on_assign, "revoke": on_revoke, "lost": on_lost}
        on_assign(self, [kafka.TopicPartition(TOPIC, p) for p in self.partitions])

    def revoke(self, *partitions: int) -> None:
        """A rebalance taking ``partitions`` away (librdkafka calls the callback inside a poll)."""
        self.callbacks["revoke"](self, [kafka.TopicPartition(TOPIC, p) for p in partitions])
        self.partitions = [p for p in self.partitions if p not in partitions]

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
        if not self.script:
            self.idle += 1
            if self.idle >= 3 and self.worker is not None:
                self.worker.stop()
            return []
        step = self.script.pop(0)
        return list(step(self) if callable(step) else step)

    def poll(self, timeout: float = -1) -> Any:
        self.polls += 1
        if self.on_poll is not None:
            self.on_poll(self)
        return None

    def commit(self, *, offsets: list[Any], asynchronous: bool) -> list[Any]:
        assert asynchronous is False
        got = sorted((tp.topic, tp.partition, tp.offset) for tp in offsets)
        self.commits.append((got, self.on_commit(got) if self.on_commit else None))
        return offsets

    def assignment(self) -> list[Any]:
        return [kafka.TopicPartition(TOPIC, p) for p in self.partitions]

    def pause(self, partitions: list[Any]) -> None:
        self.paused.append([(tp.topic, tp.partition) for tp in partitions])

    def resume(self, partitions: list[Any]) -> None:
        self.resumed.append([(tp.topic, tp.partition) for tp in partitions])

    def committed(self, partitions: list[Any], timeout: float = -1) -> list[Any]:
        done = {(t, p): o for got, _ in self.commits for t, p, o in got}
        return [kafka.TopicPartition(tp.topic, tp.partition, done.get((tp.topic, tp.partition), -1001))
                for tp in partitions]

    def get_watermark_offsets(self, partition: Any, timeout: float = -1, cached: bool = False) -> tuple[int, int]:
        return 0, 0

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        return None

    def close(self) -> None:
        self.closed = True


class FakeProducer:
    """The dead-letter producer: keeps what it is given; delivers it on ``flush`` (or, ``deliver`` False, never)."""

    def __init__(self, deliver: bool = True) -> None:
        self.deliver = deliver
        self.pending: list[tuple[FakeMessage, Any]] = []
        self.delivered: list[dict[str, Any]] = []

    def produce(self, topic: str, value: Any = None, key: Any = None, partition: int = -1, callback: Any = None,
                on_delivery: Any = None, timestamp: int = 0, headers: Any = None) -> None:
        self.pending.append(({"topic": topic, "value": value, "key": key, "headers": dict(headers or [])},
                             on_delivery))

    def poll(self, timeout: float = -1) -> int:
        return 0

    def flush(self, timeout: float = -1) -> int:
        if not self.deliver:
            return len(self.pending)
        for msg, report in self.pending:
            self.delivered.append(msg)
            if report:
                report(None, msg)
        self.pending = []
        return 0


class FlakyGraph(LineageGraph):
    """The in-memory graph, whose writes fail as the graph being down (``down`` times); kept open after the run."""

    def __init__(self, down: int = 0) -> None:
        super().__init__(MemoryStore())
        self.down = down
        self.writes = 0

    def writer(self, *args: Any, **kw: Any) -> Writer:
        writer = super().writer(*args, **kw)
        write_each = writer.write_each

        def flaky(events: Any) -> Any:
            if self.down > 0:
                self.down -= 1
                raise GraphUnavailable("the graph is down (simulated)")
            self.writes += 1
            return write_each(events)

        writer.write_each = flaky  # type: ignore[method-assign]
        return writer

    def close(self) -> None:
        return None


def _msg(partition: int, offset: int, event: Any) -> FakeMessage:
    return FakeMessage(partition, offset, event if isinstance(event, bytes) else json.dumps(event).encode())


def _run(consumer: FakeConsumer, graph: LineageGraph, producer: FakeProducer | None = None,
         **settings: Any) -> tuple[Worker, FakeProducer]:
    producer = producer or FakeProducer()
    cfg = WorkerConfig(topics=[TOPIC], decode_processes=0, log_interval_s=3600, retry_max_s=0.5, **settings)
    worker = Worker(cfg, graph=graph, consumer=lambda c, on_error: consumer, producer=lambda c, on_error: producer)
    consumer.worker = worker
    worker.run()
    assert consumer.closed
    return worker, producer


def _has_fields(graph: LineageGraph, *datasets: str) -> bool:
    return all(graph.fields(d) for d in datasets)


def test_a_batch_is_committed_only_after_its_graph_write() -> None:
    graph = FlakyGraph()
    a, b, c = ds("loop.a"), ds("loop.b"), ds("loop.c")
    first = [_msg(0, 0, schema_event(a, ["x"], 1000)), _msg(1, 0, schema_event(b, ["x"], 1000)),
             _msg(1, 1, lineage_event(b, [(sf(b, "x"), [sf(a, "x")])], 1001))]
    second = [_msg(0, 1, schema_event(c, ["y"], 1002))]
    seen = {1: (a, b), 2: (a, b, c)}
    consumer = FakeConsumer([first, second], on_commit=lambda got: _has_fields(graph, *seen[len(consumer.commits) + 1]))
    worker, producer = _run(consumer, graph)
    # each commit saw its batch in the graph, and the commits come in order, one per batch
    assert consumer.commits == [([(TOPIC, 0, 1), (TOPIC, 1, 2)], True), ([(TOPIC, 0, 2)], True)]
    assert graph.writes == 2
    assert len(graph.fields(c)) == 1
    assert worker.stats.messages == 4 and worker.stats.batches == 2 and worker.stats.dlq == 0
    assert producer.delivered == []


def test_a_malformed_message_is_dead_lettered_with_its_reason_and_the_rest_goes_on() -> None:
    graph = FlakyGraph()
    a, b = ds("dlq.a"), ds("dlq.b")
    bad_event = schema_event("urn:li:dataset:not-a-urn", ["x"], 1000)
    batch = [_msg(0, 0, schema_event(a, ["x"], 1000)), _msg(0, 1, b"{not json"), _msg(0, 2, bad_event),
             _msg(0, 3, schema_event(b, ["x"], 1000))]
    producer = FakeProducer()
    consumer = FakeConsumer([batch], partitions=[0], on_commit=lambda got: len(producer.delivered))
    worker, _ = _run(consumer, graph, producer)
    assert _has_fields(graph, a, b)
    # the dead letters were delivered before the commit, which covers them too
    assert consumer.commits == [([(TOPIC, 0, 4)], 2)]
    kinds = {m["headers"][H_OFFSET]: (m["topic"], m["headers"][H_ERROR], m["headers"][H_REASON].decode())
             for m in producer.delivered}
    assert kinds[b"1"][:2] == (f"{TOPIC}.dlq", b"json") and "not JSON" in kinds[b"1"][2]
    assert kinds[b"2"][:2] == (f"{TOPIC}.dlq", b"event") and "entityUrn" in kinds[b"2"][2]
    assert [m["value"] for m in producer.delivered] == [b"{not json", json.dumps(bad_event).encode()]
    assert worker.stats.dlq == 2 and dict(worker.stats.dlq_by_kind) == {"json": 1, "event": 1}
    assert worker.stats.messages == 4


def test_dead_letters_not_delivered_commit_nothing() -> None:
    graph = FlakyGraph()
    consumer = FakeConsumer([[_msg(0, 0, b"{not json")]], partitions=[0])
    with pytest.raises(WorkerError, match="dead-letter topic did not take 1"):
        _run(consumer, graph, FakeProducer(deliver=False))
    assert consumer.commits == []


def test_a_graph_that_is_down_pauses_and_the_batch_is_retried_uncommitted() -> None:
    graph = FlakyGraph(down=2)
    a = ds("down.a")
    consumer = FakeConsumer([[_msg(0, 0, schema_event(a, ["x"], 1000)), _msg(1, 0, schema_event(a, ["x"], 1000))]],
                            on_commit=lambda got: (graph.down, _has_fields(graph, a)))
    worker, _ = _run(consumer, graph)
    # two failed writes: the partitions paused (the consumer served meanwhile), nothing committed; then one commit
    assert worker.stats.graph_retries == 2 and graph.writes == 1
    assert consumer.paused[0] == [(TOPIC, 0), (TOPIC, 1)] and consumer.resumed and consumer.polls > 0
    assert consumer.commits == [([(TOPIC, 0, 1), (TOPIC, 1, 1)], (0, True))]


def test_a_revoke_commits_the_batch_in_flight_before_the_partitions_go() -> None:
    graph = FlakyGraph()
    a, b, c = ds("revoke.a"), ds("revoke.b"), ds("revoke.c")

    def rebalance(consumer: FakeConsumer) -> list[FakeMessage]:
        consumer.revoke(1)
        assert consumer.commits, "the batch in flight was committed inside the revoke callback"
        return [_msg(0, 1, schema_event(c, ["x"], 1000))]

    consumer = FakeConsumer([[_msg(0, 0, schema_event(a, ["x"], 1000)), _msg(1, 0, schema_event(b, ["x"], 1000))],
                             rebalance], on_commit=lambda got: _has_fields(graph, *(a, b, c)[:len(consumer.commits) + 2]))
    _run(consumer, graph)
    assert consumer.commits == [([(TOPIC, 0, 1), (TOPIC, 1, 1)], True), ([(TOPIC, 0, 2)], True)]


def test_a_revoke_while_the_graph_is_down_gives_back_only_the_partitions_still_ours() -> None:
    graph = FlakyGraph(down=1)
    a, b = ds("lost.a"), ds("lost.b")
    consumer = FakeConsumer([[_msg(0, 0, schema_event(a, ["x"], 1000)), _msg(1, 0, schema_event(b, ["x"], 1000))]])

    def revoke_once(consumer: FakeConsumer) -> None:
        consumer.on_poll = None
        consumer.revoke(1)

    consumer.on_poll = revoke_once  # while the worker waits for the graph, partition 1 goes to another member
    worker, _ = _run(consumer, graph)
    # the batch was given up uncommitted; partition 0's message, still ours, was written again and committed
    assert consumer.commits == [([(TOPIC, 0, 1)], None)]
    assert _has_fields(graph, a) and not graph.fields(b)
    assert worker.stats.messages == 1 and worker.stats.graph_retries == 1
