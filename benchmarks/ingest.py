"""Kafka ingest benchmark: broker -> worker -> graph, beside the raw rates, in one run.

    python benchmarks/ingest.py                       # 20,000 events (about a minute on FalkorDB)
    python benchmarks/ingest.py --datasets 500 --steps 4
    python benchmarks/ingest.py --graph both --datasets 1000 --steps 5   # embedded FalkorDB, then Neo4j

Starts an Apache Kafka (one KRaft node from Maven Central, ``tests/services.py``) in a tmp folder, produces
the events once, then on each graph backend (``--graph``, see ``benchmarks/backends.py``: ``embedded``
by default, ``neo4j`` started for the run, ``both``, or the URI of a running server) measures, side by side:

- ``consume``: raw consume rate (a consumer group reading the topic, no decoding);
- ``storeWrite``: the store write rate: the same events, decoded beforehand, written with
  ``LineageGraph.ingest`` (read state, plan, apply) into an empty graph: no Kafka;
- ``rawStore``: that backend's raw ``UNWIND $rows ... MERGE`` rate: the statements and rows ``storeWrite``
  sent, replayed as they are on an empty graph (no state read, no planning); ``storeWriteVsRaw`` =
  storeWrite / rawStore;
- ``endToEnd``: a ``Worker`` from the broker into an empty graph (decode, plan, write, commit), decoding in its
  decoder process; ``endToEndDecodingInWorker``: the same with ``decode_processes = 0`` (decoding in the worker's
  own process, as before), measured right after it.

Prints JSON with events/s and fields/s and ``ratio`` = endToEnd / min(consume, storeWrite) (target >= 0.7);
with ``both``, one object per backend under ``backends`` and the ratios side by side under ``sideBySide``.

``--batch-sizes 200,500,1000,2000,5000`` adds, per backend, the series ``batchSizes``: for each worker batch
size, the store write (``LineageGraph.ingest`` with that batch) and the end-to-end worker (that ``batch_size``),
measured one after the other: ``[{"batch": N, "endToEndEventsPerS": ..., "storeWriteEventsPerS": ...,
"ratio": ...}]`` (ratio as above, against that batch size's store write). ``--out FILE`` also writes the JSON
to ``FILE``.
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

from backends import Backend, add_arguments, backend, history_events, record_ingest, replay, report, specs  # noqa: E402

from fieldgraph.graph import LineageGraph  # noqa: E402
from fieldgraph.ingest.config import WorkerConfig  # noqa: E402
from fieldgraph.ingest.sources import decode_event  # noqa: E402
from fieldgraph.ingest.worker import Worker  # noqa: E402
from tests.kafka_fixtures import FAST_GROUP, Broker  # noqa: E402
from tests.services import KafkaServer  # noqa: E402


def ds(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,bench.t{i},PROD)"


def run(b: Backend, broker: Broker, topic: str, changes: list, n: int, args: argparse.Namespace) -> dict:
    from confluent_kafka import Consumer

    # raw consume
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"raw-{b.kind}-{time.time_ns()}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False, **FAST_GROUP})
    assigned: list[float] = []
    c.subscribe([topic], on_assign=lambda *_: assigned.append(time.perf_counter()))
    got, first, t0 = 0, 0, 0.0
    while got < n:
        ms = c.consume(args.batch, 1.0)
        if ms and not got:
            # from the first batch on (the group join and first fetch are not throughput), counting the
            # messages after it; all in one batch: from the assignment
            first, t0 = len(ms), time.perf_counter()
        got += len(ms)
    consume_s = time.perf_counter() - t0
    consumed = n - first
    if not consumed:
        consume_s, consumed = time.perf_counter() - assigned[0], n
    c.close()

    # one small untimed write and replay first: Neo4j plans each statement once and its JIT warms up
    if args.warmup:
        g = LineageGraph(b.fresh("bench_kafka_warmup"))
        _, warm_plans = record_ingest(g, changes[:max(1, len(changes) * args.warmup // 100)], args.batch)
        g.close()
        g = LineageGraph(b.fresh("bench_kafka_warmup"))
        replay(g, warm_plans)
        g.close()

    # store write (decoded beforehand), then the raw store: the same statements and rows
    g = LineageGraph(b.fresh("bench_kafka_raw"))
    n_changes = len(changes)
    store_s, plans = record_ingest(g, changes, args.batch)
    fields = sum(p.counts["fields"] for p in plans)
    edges = sum(p.counts["edges"] for p in plans)
    st = g.stats().to_json()
    g.close()
    g = LineageGraph(b.fresh("bench_kafka_rawstore"))
    raw_s = replay(g, plans)
    assert g.stats().to_json() == st, (g.stats().to_json(), st)
    g.close()
    print(f"{b.label}: consume {consume_s:.2f}s, store write {store_s:.2f}s, raw store {raw_s:.2f}s",
          file=sys.stderr, flush=True)

    e2e_s, e2e_fields = end_to_end(b, broker, topic, n, args.batch)
    inline_s, _ = end_to_end(b, broker, topic, n, args.batch, decode_processes=0)

    consume, store, e2e = rate(consumed, consume_s), rate(n, store_s), rate(n, e2e_s)
    out = {
        **b.info(), "events": n, "aspectChanges": n_changes, "fieldUpserts": fields, "edges": edges,
        "partitions": args.partitions, "batch": args.batch,
        "consume": {"eventsPerS": consume, "seconds": round(consume_s, 3), "messagesTimed": consumed},
        "storeWrite": {"eventsPerS": store, "fieldsPerS": rate(fields, store_s), "seconds": round(store_s, 3)},
        "rawStore": {"eventsPerS": rate(n, raw_s), "fieldsPerS": rate(fields, raw_s), "seconds": round(raw_s, 3)},
        "storeWriteVsRaw": round(raw_s / store_s, 3),
        "endToEnd": {"eventsPerS": e2e, "fieldsPerS": rate(e2e_fields, e2e_s), "seconds": round(e2e_s, 3)},
        "ratio": round(e2e / min(consume, store), 3), "target": 0.7,
        "endToEndDecodingInWorker": {"eventsPerS": rate(n, inline_s), "seconds": round(inline_s, 3),
                                     "ratio": round(rate(n, inline_s) / min(consume, store), 3)},
    }
    if args.batch_sizes:
        out["batchSizes"] = [sweep_point(b, broker, topic, changes, n, size, consume) for size in args.batch_sizes]
    return out


def rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1)


def end_to_end(b: Backend, broker: Broker, topic: str, n: int, batch: int, worker: type[Worker] = Worker,
               decode_processes: int = 1) -> tuple[float, int]:
    """A ``Worker`` (``batch_size`` ``batch``, a new group) from the broker into an empty graph: the seconds from
    its first batch (after the group join) until it committed ``n`` messages, and the fields it wrote. The
    worker opens the graph the way a deployment does (the URI); it decodes in ``decode_processes`` processes
    (0: in its own, as before the decoder process)."""
    b.fresh("bench_kafka_e2e").close()
    cfg = WorkerConfig(bootstrap_servers=broker.bootstrap, group_id=f"e2e-{b.kind}-{time.time_ns()}", topics=[topic],
                       graph=b.uri, graph_name="bench_kafka_e2e", batch_size=batch,
                       batch_timeout_s=0.2, kafka=dict(FAST_GROUP), log_interval_s=3600,
                       decode_processes=decode_processes)
    w = worker(cfg)
    th = threading.Thread(target=w.run, daemon=True)
    th.start()
    while w.stats.messages == 0:
        if not th.is_alive():
            raise RuntimeError("the worker stopped early")
        time.sleep(0.005)
    t0 = time.perf_counter() - w.stats.last_batch_s  # from the first batch (after the group join)
    while w.stats.messages < n:
        if not th.is_alive():
            raise RuntimeError("the worker stopped early")
        time.sleep(0.005)
    e2e_s = time.perf_counter() - t0
    e2e_fields = w.stats.fields
    w.stop()
    th.join(60)
    return e2e_s, e2e_fields


def sweep_point(b: Backend, broker: Broker, topic: str, changes: list, n: int, size: int, consume: float) -> dict:
    """One point of ``batchSizes``: the store write with batch ``size``, then the worker with ``batch_size`` size."""
    g = LineageGraph(b.fresh("bench_kafka_raw"))
    store_s, _ = record_ingest(g, changes, size)
    g.close()
    e2e_s, _ = end_to_end(b, broker, topic, n, size)
    store, e2e = rate(n, store_s), rate(n, e2e_s)
    point = {"batch": size, "endToEndEventsPerS": e2e, "storeWriteEventsPerS": store,
             "ratio": round(e2e / min(consume, store), 3)}
    print(f"{b.label}: batch {size}: {json.dumps(point)}", file=sys.stderr, flush=True)
    return point


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--width", type=int, default=8, help="fields per schema (grows by one per step)")
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=5, help="percent of the events in an untimed first write (0: none)")
    ap.add_argument("--batch-sizes", type=lambda v: [int(x) for x in v.split(",") if x.strip()], default=[],
                    help="also measure store write and end to end per worker batch size, e.g. 200,500,1000,2000,5000")
    ap.add_argument("--out", type=Path, help="also write the JSON to this file")
    add_arguments(ap)
    args = ap.parse_args()

    evs = history_events(args.datasets, args.steps, args.width)
    changes = [ch for e in evs for ch in decode_event(e)]
    from fieldgraph.ingest.emitter import event_key

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="fgb-kafka-") as tmp:
        print("starting Apache Kafka ...", file=sys.stderr, flush=True)
        broker = Broker(KafkaServer(Path(tmp) / "kafka").start())
        try:
            broker.warm_up()  # the first group join and idempotent produce wait for the internal topics
            topic = broker.create_topic("bench", args.partitions)
            broker.produce(topic, [(event_key(e), json.dumps(e).encode()) for e in evs])
            for spec in specs(args.graph):
                with backend(spec, args) as b:
                    results[b.key] = run(b, broker, topic, changes, len(evs), args)
                print(json.dumps(results[b.key]), file=sys.stderr, flush=True)
        finally:
            broker.server.stop()

    if len(results) == 1:
        (out,) = results.values()
    else:
        out = {"backends": results, "sideBySide": {
            "ratio": {k: r["ratio"] for k, r in results.items()},
            "storeWriteVsRaw": {k: r["storeWriteVsRaw"] for k, r in results.items()},
            "eventsPerS": {k: {"consume": r["consume"]["eventsPerS"], "rawStore": r["rawStore"]["eventsPerS"],
                               "storeWrite": r["storeWrite"]["eventsPerS"], "endToEnd": r["endToEnd"]["eventsPerS"]}
                           for k, r in results.items()},
            "target": 0.7}}
    report(out, args.out)


if __name__ == "__main__":
    main()
