"""SIGKILL a worker process in the middle of 50,000 events, restart it: nothing lost, nothing doubled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import ds, dump, lineage_event, schema_event, sf
from .kafka_fixtures import FAST_GROUP, duplicates, wait_committed, wait_for

pytestmark = pytest.mark.integration

N_EVENTS = 50_000
DATASETS = 2_500  # 20 events each: schema versions and lineage rewrites, interleaved


def stream() -> list[dict]:
    """Per dataset: 10 schema versions (a field added each time, one dropped at v5) and 10 lineage rewrites
    to the dataset before it, so replays and order across partitions matter."""
    evs = []
    for step in range(10):
        for i in range(DATASETS):
            urn = ds(f"kill.t{i}")
            cols = [f"c{j}" for j in range(step + 2) if not (step >= 5 and j == 1)]
            evs.append(schema_event(urn, cols, 10_000 + step, version=step))
            if i:
                up = ds(f"kill.t{i - 1}")
                evs.append(lineage_event(urn, [(sf(urn, "c0"), [sf(up, f"c{step}")]),
                                               (sf(urn, f"c{step + 1}"), [sf(up, "c0"), sf(up, "c2")])],
                                         20_000 + step))
            else:
                evs.append(schema_event(urn, cols, 10_000 + step, version=step))  # keep the count even
    assert len(evs) == N_EVENTS
    return evs


def _start(broker, topic, group, uri) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "fieldgraph.ingest.cli", "worker", "-b", broker.bootstrap, "-t", topic,
           "--group", group, "--graph", uri, "--batch-size", "2000", "--log-interval", "2"]
    for k, v in FAST_GROUP.items():
        cmd += ["-X", f"{k}={v}"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_sigkill_mid_stream_then_restart_loses_and_doubles_nothing(broker, graph, reference_graph):
    from fieldgraph.ingest.sources import decode_event

    events = stream()
    topic = broker.create_topic(broker.name("kill"), partitions=3)
    broker.emit(topic, events)
    group = broker.name("gk")
    uri = graph.uri

    p = _start(broker, topic, group, uri)
    try:
        wait_for(lambda: broker.committed_total(group, topic) >= N_EVENTS // 4 or p.poll() is not None, 180,
                 "the first worker to commit a quarter of the stream", every=0.1)
        assert p.poll() is None, p.stderr.read()
        p.send_signal(signal.SIGKILL)  # in the middle of a batch, most likely mid-write
        p.wait(10)
        killed_at = broker.committed_total(group, topic)
        assert killed_at < N_EVENTS

        p = _start(broker, topic, group, uri)
        wait_committed(broker, group, topic, N_EVENTS, 600)
        p.send_signal(signal.SIGTERM)  # clean stop: finish the batch, commit, leave the group
        _, stderr = p.communicate(timeout=60)
        assert p.returncode == 0, stderr[-2000:]
        assert "events/s" in stderr and "lag" in stderr and "DLQ 0" in stderr  # the periodic progress line
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()

    reference_graph.ingest([c for e in events for c in decode_event(e)], batch_events=2000)
    assert duplicates(graph) == {"nodes": 0, "edges": 0}
    assert graph.stats() == reference_graph.stats()
    assert json.dumps(dump(graph), sort_keys=True, default=str) == json.dumps(dump(reference_graph), sort_keys=True,
                                                                              default=str)
    assert 0 < killed_at < N_EVENTS
    time.sleep(0)
