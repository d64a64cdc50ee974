"""Kafka fixtures: a real Apache Kafka 4.4 (one KRaft node from Maven Central, ``tests/services.py``) per test
session, and helpers to create topics, wait for a group's commits and read a dead-letter topic.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .services import KafkaServer

# short group timeouts, so a test that kills a worker sees the rebalance in seconds
FAST_GROUP = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"}
_ids = itertools.count()


class Broker:
    """Test helpers around one running :class:`KafkaServer`."""

    def __init__(self, server: KafkaServer) -> None:
        self.server = server
        self.bootstrap = server.bootstrap

    def name(self, prefix: str) -> str:
        return f"{prefix}{next(_ids)}"

    def warm_up(self) -> None:
        """The first group join and the first idempotent produce on a fresh broker wait for its internal
        topics: pay that once per session, not in the first test."""
        topic = self.create_topic(self.name("warmup"))
        self.produce(topic, [(None, b"x")])
        assert len(self.consume_all(topic, 1, timeout=60)) == 1

    def create_topic(self, name: str, partitions: int = 1) -> str:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for f in admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)]).values():
            f.result(30)
        return name

    def produce(self, topic: str, items: list[tuple[str | None, bytes]]) -> None:
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, "linger.ms": 20})
        failed: list[str] = []
        for key, value in items:
            while True:
                try:
                    p.produce(topic, value, key.encode() if key else None,
                              on_delivery=lambda e, m: failed.append(str(e)) if e else None)
                    break
                except BufferError:
                    p.poll(0.1)
        assert p.flush(60) == 0 and not failed, failed[:3]

    def emit(self, topic: str, events: list[Any]) -> None:
        from fieldgraph.ingest.emitter import event_key

        self.produce(topic, [(event_key(e) if isinstance(e, dict) else None,
                              e if isinstance(e, bytes) else json.dumps(e).encode()) for e in events])

    def end_offsets(self, topic: str) -> dict[int, int]:
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "fg-probe"})
        try:
            parts = c.list_topics(topic, timeout=10).topics[topic].partitions
            return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
        finally:
            c.close()

    def committed(self, group: str, topic: str) -> dict[int, int]:
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group})
        try:
            parts = c.list_topics(topic, timeout=10).topics[topic].partitions
            return {tp.partition: tp.offset for tp in c.committed([TopicPartition(topic, p) for p in parts],
                                                                  timeout=10)}
        finally:
            c.close()

    def committed_total(self, group: str, topic: str) -> int:
        return sum(max(o, 0) for o in self.committed(group, topic).values())

    def consume_all(self, topic: str, expected: int, timeout: float = 30) -> list[Any]:
        """Every message of ``topic`` (a fresh group from the start) once ``expected`` arrived."""
        from confluent_kafka import Consumer

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.name("reader"),
                      "auto.offset.reset": "earliest", "enable.auto.commit": False, **FAST_GROUP})
        c.subscribe([topic])
        out: list[Any] = []
        deadline = time.monotonic() + timeout
        try:
            while len(out) < expected and time.monotonic() < deadline:
                out.extend(m for m in c.consume(1000, 0.5) if m.error() is None)
        finally:
            c.close()
        return out


def wait_for(cond: Callable[[], bool], timeout: float, what: str, every: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def wait_committed(broker: Broker, group: str, topic: str, expected: int, timeout: float = 120) -> None:
    """Until the group's commits cover ``expected`` messages of ``topic`` (offsets start at 0 per partition)."""
    wait_for(lambda: broker.committed_total(group, topic) >= expected, timeout,
             f"group {group} to commit {expected} messages of {topic}", every=0.3)


class ThreadWorker:
    """A Worker running in a thread of the test process."""

    def __init__(self, config: Any) -> None:
        from fieldgraph.ingest.worker import Worker

        self.worker = Worker(config)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.worker.run()
        except BaseException as exc:  # noqa: BLE001
            self.error = exc

    def stop(self, timeout: float = 60) -> Any:
        self.worker.stop()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the worker did not stop"
        if self.error:
            raise self.error
        return self.worker.stats


def worker_config(broker: Broker, topics: list[str], graph_uri: str, **kw: Any) -> Any:
    from fieldgraph.ingest.config import WorkerConfig

    kafka = {**FAST_GROUP, **kw.pop("kafka", {})}
    return WorkerConfig(bootstrap_servers=broker.bootstrap, group_id=kw.pop("group_id", broker.name("g")),
                        topics=topics, graph=graph_uri, kafka=kafka, batch_timeout_s=0.2, log_interval_s=2, **kw)


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    server = KafkaServer(tmp_path_factory.mktemp("kafka")).start()
    b = Broker(server)
    b.warm_up()
    yield b
    server.stop()


def ingest_files(g: Any, paths: list[Any]) -> int:
    """``fieldgraph ingest``'s path: replay the files into ``g``; the number of events read."""
    from fieldgraph.ingest.replay import decode, event_files, read_events

    changes, n = [], 0
    for f in event_files(paths):
        for raw in read_events(f):
            n += 1
            changes.extend(decode(raw)[0])
    g.ingest(changes)
    return n


def duplicates(g: Any) -> dict[str, int]:
    """Nodes sharing a URN and parallel edges (same ends, type and source): both must be 0."""
    nodes = g.query("MATCH (n) WITH n.urn AS u, count(*) AS c WHERE c > 1 RETURN count(u) AS n")[0]["n"]
    edges = g.query("MATCH (a)-[e]->(b) WITH a, b, type(e) AS t, e.source AS s, count(*) AS c WHERE c > 1 "
                    "RETURN count(*) AS n")[0]["n"]
    return {"nodes": nodes, "edges": edges}
