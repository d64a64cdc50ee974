"""Hostile input (tests/hostile.py: wrong types, values no store holds, keys too long for its index, nesting
thousands deep, bytes that are not UTF-8 or not JSON, events of no source) through every way in: ``fieldgraph
ingest``, the Kafka worker and the Spark backfill, on both backends. No traceback, nothing stops: each bad line
is rejected with its reason, and every good one is written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fieldgraph.graph.answers import encode

from .hostile import corpus, jsonl
from .test_backfill import backfill, spark  # noqa: F401 - the session's Spark

LINES = corpus()
BAD = [line for line in LINES if not line.good]
GOOD = [line for line in LINES if line.good]


def assert_rejected(got: dict[int, str]) -> None:
    """``got``: 1-based line -> the reason it was rejected for; exactly the bad lines, each for its reason."""
    expected = {i: line for i, line in enumerate(LINES, 1) if not line.good}
    assert sorted(got) == sorted(expected), {i: LINES[i - 1].name for i in set(got) ^ set(expected)}
    for i, line in expected.items():
        assert line.reason.lower() in got[i].lower(), f"{line.name}: {got[i]!r}"
        assert "Traceback" not in got[i]


def assert_written(graph: Any) -> None:
    for line in GOOD:
        assert {f["fieldPath"] for f in encode(graph.fields(line.dataset))} == set(line.fields), line.name


def test_the_corpus_covers_the_kinds_of_hostile_input() -> None:
    assert len(BAD) >= 20 and len(GOOD) >= 5 and len({line.name for line in LINES}) == len(LINES)


def test_ingest_rejects_each_bad_line_with_its_reason_and_writes_the_rest(graph, tmp_path: Path) -> None:
    events, rejects = tmp_path / "hostile.jsonl", tmp_path / "rejects.jsonl"
    events.write_bytes(jsonl(LINES))
    res = subprocess.run([sys.executable, "-m", "fieldgraph.ingest.cli", "ingest", str(events), "--graph", graph.uri,
                          "--rejects", str(rejects), "--batch", "4", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 3, res.stderr[-3000:]  # 3: some events were rejected, the rest written
    assert "Traceback" not in res.stderr
    summary = json.loads(res.stdout)
    assert (summary["events"], summary["rejected"]) == (len(LINES), len(BAD))
    rows = [json.loads(r) for r in rejects.read_text().splitlines()]
    assert all(r["file"] == str(events) for r in rows)
    assert_rejected({r["line"]: r["error"] for r in rows})
    assert_written(graph)


@pytest.mark.integration
def test_the_worker_dead_letters_each_bad_message_with_its_reason_and_writes_the_rest(broker, graph) -> None:
    from .kafka_fixtures import ThreadWorker, wait_committed, worker_config

    topic = broker.create_topic(broker.name("hostile"), partitions=1)
    broker.create_topic(f"{topic}.dlq")
    broker.produce(topic, [(str(i), line.data) for i, line in enumerate(LINES, 1)])
    cfg = worker_config(broker, [topic], graph.uri, batch_size=8)
    worker = ThreadWorker(cfg)
    wait_committed(broker, cfg.group_id, topic, len(LINES), 120)
    stats = worker.stop()  # raises what stopped the worker, if anything did
    assert stats.dlq == len(BAD)
    dead = broker.consume_all(f"{topic}.dlq", len(BAD))
    assert_rejected({int(m.key()): dict(m.headers())["fieldgraph.reason"].decode() for m in dead})
    assert_written(graph)


@pytest.mark.integration
def test_the_backfill_rejects_each_bad_line_with_its_reason_and_writes_the_rest(spark, graph,  # noqa: F811
                                                                                 tmp_path: Path) -> None:
    events = tmp_path / "hostile.jsonl"
    events.write_bytes(jsonl(LINES))
    rejects = tmp_path / "private" / "rejects"
    report = backfill(spark, graph.uri, [events], rejects=str(rejects)).to_json()
    assert report["rejected"] == len(BAD) and report["refusedAtWrite"] == 0
    assert rejects.parent.stat().st_mode & 0o777 == 0o700  # bad events may hold what should not be shared
    rows = [json.loads(r) for f in sorted(rejects.glob("part-*")) for r in f.read_text().splitlines()]
    assert_rejected({r["line"]: r["error"] for r in rows})
    assert_written(graph)


def test_a_json_schema_nested_2000_deep_is_a_clear_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"type":"object","properties":{"p":' * 2000 + '{"type":"string"}' + "}}" * 2000)
    res = subprocess.run([sys.executable, "-m", "fieldgraph.ingest.cli", "normalize", "--format", "json-schema",
                          str(deep)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 3 and "nests too deeply" in res.stderr and "Traceback" not in res.stderr
