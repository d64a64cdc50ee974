"""The Kafka worker against a real Apache Kafka and both real graph backends (embedded FalkorDB, Neo4j)."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fieldgraph.ingest.cli import app

from .conftest import EXAMPLES, ds, dump, lineage_event, mcp, schema_event, sf
from .kafka_fixtures import ThreadWorker, duplicates, ingest_files, wait_committed, wait_for, worker_config
from .services import free_port

pytestmark = pytest.mark.integration


def test_emit_examples_then_worker_equals_file_ingest(broker, graph, reference_graph):
    topic = broker.create_topic(broker.name("mcp"), partitions=3)
    res = CliRunner().invoke(app, ["emit", str(EXAMPLES), "--topic", topic, "-b", broker.bootstrap])
    assert res.exit_code == 0, res.output
    n = ingest_files(reference_graph, [EXAMPLES])
    assert f"sent {n} events" in res.output

    cfg = worker_config(broker, [topic], graph.uri)
    w = ThreadWorker(cfg)
    wait_committed(broker, cfg.group_id, topic, n, 60)
    stats = w.stop()
    assert stats.messages == n and stats.dlq == 0
    assert dump(graph) == dump(reference_graph)
    assert graph.stats().placeholder_fields == reference_graph.stats().placeholder_fields


BAD_URN = "urn:li:dataset:(urn:li:dataPlatform:hive,broken"


def _bad_events() -> dict[str, bytes]:
    """reason kind -> message value."""
    good_schema = json.loads(json.dumps(schema_event(ds("x.bad"), ["a"], 5)))
    wrong_types = schema_event(ds("x.wrong"), ["a"], 5)
    aspect = json.loads(wrong_types["aspect"]["value"])
    aspect["fields"][0]["nullable"] = {"not": "a bool"}
    aspect["version"] = "seven"
    wrong_types["aspect"]["value"] = json.dumps(aspect)
    bad_schema = mcp(ds("x.badschema"), "schemaMetadata", {
        "schemaName": "x", "platform": "urn:li:dataPlatform:kafka", "version": 0, "hash": "",
        "platformSchema": {"com.linkedin.schema.KafkaSchema": {"documentSchema": '{"type": "record", "name": '}}}, 5)
    bad_urn = dict(good_schema, entityUrn=BAD_URN)
    return {
        "json": b'{"entityType": "dataset", "entityUrn": ',
        "aspect": json.dumps(mcp(ds("x.unknown"), "noSuchAspect", {"x": 1}, 5)).encode(),
        "urn": json.dumps(bad_urn).encode(),
        "schema": json.dumps(bad_schema).encode(),
        "types": json.dumps(wrong_types).encode(),
        "empty": b"",
        "envelope": json.dumps({"hello": "world"}).encode(),
    }


def test_malformed_events_go_to_the_dlq_with_reasons_and_the_good_ones_land(broker, graph,
                                                                            reference_graph):
    topic = broker.create_topic(broker.name("mixed"), partitions=2)
    broker.create_topic(f"{topic}.dlq")
    good = [schema_event(ds(f"m.t{i}"), ["a", "b"], 10 + i) for i in range(20)]
    good += [lineage_event(ds(f"m.t{i}"), [(sf(ds(f"m.t{i}"), "a"), [sf(ds(f"m.t{i - 1}"), "b")])], 100 + i)
             for i in range(1, 20)]
    bad = _bad_events()
    items, bad_items = [], list(bad.items())
    for i, e in enumerate(good):  # bad ones in between good ones
        items.append((None, json.dumps(e).encode()))
        if i % 5 == 0 and bad_items:
            kind, value = bad_items.pop()
            items.append((f"bad-{kind}", value))
    items += [(f"bad-{k}", v) for k, v in bad_items]
    broker.produce(topic, items)
    n_bad = len(_bad_events())

    cfg = worker_config(broker, [topic], graph.uri, strict_aspects=True)
    w = ThreadWorker(cfg)
    wait_committed(broker, cfg.group_id, topic, len(items), 60)
    stats = w.stop()
    assert stats.dlq == n_bad

    dlq = broker.consume_all(f"{topic}.dlq", n_bad)
    assert len(dlq) == n_bad
    by_key = {m.key().decode(): m for m in dlq}
    expected = {
        "json": "not JSON", "aspect": "'noSuchAspect'", "urn": "entityUrn", "schema": "cannot normalize",
        "types": "valid integer", "empty": "no value", "envelope": "not a DataHub change event",
    }
    sent = dict(items)
    for kind, needle in expected.items():
        m = by_key[f"bad-{kind}"]
        h = {k: v.decode() for k, v in m.headers()}
        assert needle in h["fieldgraph.reason"], (kind, h)
        assert h["fieldgraph.error"] in ("json", "event", "aspect", "empty")
        assert h["fieldgraph.original.topic"] == topic
        assert int(h["fieldgraph.original.partition"]) in (0, 1)
        assert int(h["fieldgraph.original.offset"]) >= 0
        assert m.value() in (sent[f"bad-{kind}"], None)  # the original value, as it was
    from fieldgraph.ingest.sources import decode_event

    reference_graph.ingest([c for e in good for c in decode_event(e)])
    assert dump(graph) == dump(reference_graph)


def _chain(n: int, start: int = 0, prefix: str = "two") -> list[dict]:
    evs = []
    for i in range(start, start + n):
        evs.append(schema_event(ds(f"{prefix}.t{i}"), ["a", "b", "c"], 1000 + i))
        if i:  # lineage to the dataset before (often on another partition, so written by the other worker)
            evs.append(lineage_event(ds(f"{prefix}.t{i}"), [(sf(ds(f"{prefix}.t{i}"), "a"),
                                                              [sf(ds(f"{prefix}.t{i - 1}"), "b")])], 2000 + i))
    return evs


def test_two_workers_share_partitions_and_hand_over_without_loss(broker, graph, reference_graph):
    from fieldgraph.ingest.sources import decode_event

    topic = broker.create_topic(broker.name("two"), partitions=4)
    uri = graph.uri
    group = broker.name("g2-")
    a = ThreadWorker(worker_config(broker, [topic], uri, group_id=group, batch_size=50))
    b = ThreadWorker(worker_config(broker, [topic], uri, group_id=group, batch_size=50))
    first = _chain(300)
    broker.emit(topic, first)
    wait_for(lambda: broker.committed_total(group, topic) >= len(first), 90, "both workers to consume the first part")
    # both took part (the group split the partitions)
    assert a.worker.stats.messages > 0 and b.worker.stats.messages > 0
    second = _chain(300, start=300)
    broker.emit(topic, second)
    time.sleep(0.3)
    a.stop()  # mid-stream: finishes its batch, commits, leaves; b takes its partitions
    wait_committed(broker, group, topic, len(first) + len(second), 90)
    b.stop()
    events = first + second
    assert a.worker.stats.messages + b.worker.stats.messages >= len(events)
    reference_graph.ingest([c for e in events for c in decode_event(e)])
    assert duplicates(graph) == {"nodes": 0, "edges": 0}
    assert graph.stats() == reference_graph.stats()
    assert dump(graph) == dump(reference_graph)


@pytest.fixture
def graph_server(backend, request):
    """A graph server the test may stop and start again: (graph URI, stop, start). FalkorDB: an embedded
    server of its own; Neo4j: the session's server (restarted on the same data, ports and password)."""
    from fieldgraph.graph import EmbeddedServer

    if backend == "neo4j":
        server = request.getfixturevalue("neo4j_server")
        request.getfixturevalue("graph")  # an empty database, emptied again afterwards
        yield server.uri, server.stop, server.start
        if server.process is None:
            server.start()
        return
    with tempfile.TemporaryDirectory(prefix="fgd-") as tmp:  # a short path: unix sockets are limited
        servers = [EmbeddedServer(Path(tmp) / "d").start()]
        yield (f"falkordb+unix://{servers[0].socket}?graph=down", lambda: servers[-1].stop(),
               lambda: servers.append(EmbeddedServer(Path(tmp) / "d").start()))
        servers[-1].stop()


def test_graph_unavailable_worker_waits_and_catches_up(broker, graph_server, reference_graph):
    from fieldgraph.graph import LineageGraph
    from fieldgraph.ingest.sources import decode_event

    uri, stop_graph, start_graph = graph_server
    topic = broker.create_topic(broker.name("down"), partitions=2)
    cfg = worker_config(broker, [topic], uri, retry_max_s=1.0)
    w = ThreadWorker(cfg)
    try:
        first = _chain(50, prefix="down")
        broker.emit(topic, first)
        wait_committed(broker, cfg.group_id, topic, len(first), 60)
        stop_graph()
        second = _chain(50, start=50, prefix="down")
        broker.emit(topic, second)
        committed = broker.committed_total(cfg.group_id, topic)
        wait_for(lambda: w.worker.stats.graph_retries >= 2, 30, "the worker to retry the graph")
        assert broker.committed_total(cfg.group_id, topic) == committed  # nothing committed while down
        start_graph()  # same data: what was written before the outage comes back
        wait_committed(broker, cfg.group_id, topic, len(first) + len(second), 90)
    finally:
        w.stop()
    with LineageGraph.open(uri, schema=False) as g:
        reference_graph.ingest([c for e in first + second for c in decode_event(e)])
        assert dump(g) == dump(reference_graph)


def test_prometheus_endpoint_and_cli_worker_config(broker, graph, tmp_path):
    import urllib.request

    port = free_port()
    topic = broker.create_topic(broker.name("metrics"))
    broker.emit(topic, _chain(5, prefix="metrics"))
    cfg = worker_config(broker, [topic], graph.uri, metrics_port=port)
    w = ThreadWorker(cfg)
    try:
        wait_committed(broker, cfg.group_id, topic, 9, 60)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        w.stop()
    assert "fieldgraph_worker_messages_total 9.0" in body
    assert "fieldgraph_worker_batch_seconds_count" in body and "fieldgraph_worker_lag" in body


# --- no broker, and settings from the environment ---------------------------------------------------------------


def test_emit_with_no_broker_fails_fast_with_one_line(tmp_path):
    port = free_port()  # nothing listens there
    t0 = time.monotonic()
    res = CliRunner().invoke(app, ["emit", str(EXAMPLES), "-b", f"127.0.0.1:{port}", "--timeout", "3"])
    elapsed = time.monotonic() - t0
    assert res.exit_code == 5, res.output  # unavailable
    assert elapsed < 15, elapsed  # not the 60 s flush of every queued event
    assert res.stderr.strip().splitlines() == [res.stderr.strip()]  # one line
    assert f"cannot reach the Kafka brokers at 127.0.0.1:{port} within 3s" in res.stderr


def test_emit_reads_kafka_settings_from_the_environment(broker, monkeypatch):
    topic = broker.create_topic(broker.name("env"))
    monkeypatch.setenv("FIELDGRAPH_BOOTSTRAP_SERVERS", broker.bootstrap)
    monkeypatch.setenv("FIELDGRAPH_KAFKA_SECURITY_PROTOCOL", "not-a-protocol")  # reaches librdkafka: refused
    res = CliRunner().invoke(app, ["emit", str(EXAMPLES / "01_kafka_orders.json"), "--topic", topic])
    assert res.exit_code == 1 and "security.protocol" in res.stderr, res.output
    monkeypatch.setenv("FIELDGRAPH_KAFKA_CLIENT_ID", "fieldgraph-emit-test")
    monkeypatch.delenv("FIELDGRAPH_KAFKA_SECURITY_PROTOCOL")
    res = CliRunner().invoke(app, ["emit", str(EXAMPLES / "01_kafka_orders.json"), "--topic", topic])
    assert res.exit_code == 0 and "sent 1 event from 1 file" in res.stdout, res.output  # the broker from the env
    assert len(broker.consume_all(topic, 1)) == 1


def test_a_worker_with_no_broker_says_so_instead_of_reporting_progress(graph, caplog):
    from fieldgraph.ingest.config import WorkerConfig

    cfg = WorkerConfig(bootstrap_servers=f"127.0.0.1:{free_port()}", group_id="nobody", topics=["t"],
                       graph=graph.uri, batch_timeout_s=0.2, log_interval_s=1)
    caplog.set_level("INFO", logger="fieldgraph.worker")
    w = ThreadWorker(cfg)
    try:
        wait_for(lambda: any("cannot reach the Kafka brokers" in r.getMessage() for r in caplog.records), 30,
                 "the worker's warning")
    finally:
        w.stop()
    warned = [r for r in caplog.records if "cannot reach the Kafka brokers" in r.getMessage()]
    assert warned[0].levelname == "WARNING" and cfg.bootstrap_servers in warned[0].getMessage()
    assert not any("events/s" in r.getMessage() for r in caplog.records if r.name == "fieldgraph.worker")
