"""Initial load from change events: the bulk load (``fieldgraph backfill --bulk``'s way) against the write path,
side by side in one run, from the same decoded events into an empty graph.

    python benchmarks/initial_load.py                               # embedded, 100k and 1M fields
    python benchmarks/initial_load.py --graph both --sizes 100k,1M
    python benchmarks/initial_load.py --sizes 10k                   # quick

The history is DataHub change events for ``benchmarks/graph_curves.py``'s shape: chains of ``--chain`` datasets of
``--width`` string fields, each dataset a ``schemaMetadata`` and an ``upstreamLineage`` whose fine-grained lineages
derive field j from fields j and j+1 of the dataset before. The events are decoded once (``decodeS``: the sources'
``decode_event``, the same for both paths), then, per backend and size:

- ``writePath``: ``LineageGraph.ingest`` of the changes into the empty graph (read state, plan, apply UNWIND
  statements), batches of ``--batch-events`` events, as ``fieldgraph ingest`` and the backfill without ``--bulk``;
- ``bulk``: the same ``LineageGraph.ingest`` into the in-memory store (``planS``: the planner and the store's
  steps), its snapshot (``snapshotS``), then the store's importer (``benchmarks/bulk_load.py``'s: FalkorDB's
  ``GRAPH.BULK``; Neo4j's files, ``neo4j-admin database import full`` into a stopped server of its own, and the
  indexes), ``totalS`` without the decode both paths share.

- ``bulkBackfill``: ``fieldgraph backfill --bulk`` itself (``run_backfill``, Spark in local mode, its session
  started beforehand): the events from JSON Lines files (written beforehand), decoded in the executors, planned in
  parts that share no node in parallel (``planS``: until the parts are planned), then imported (``importS``: the
  parts read back one at a time and sent with GRAPH.BULK, or written as Neo4j's files and imported into a stopped
  server of its own, whose restart is not counted; then its indexes, ``ensureSchemaS``). Its ``totalS``
  includes the decode.

At the smallest size the two graphs are first checked equal (canonical snapshots). Reports fields/s of each path
and ``bulkOverWritePath`` (the ratio of their rates), the peak memory of this process (the bulk path holds the
whole graph) and of the server. Prints one JSON object (``--out FILE``: also written there).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backends import backend, ds, report, specs  # noqa: E402
from bulk_load import add_load_arguments, bulk_falkordb, bulk_neo4j, neo4j_admin, neo4j_indexes  # noqa: E402
from graph_curves import children, count, status_kb  # noqa: E402

from fieldgraph.bulk import gc_paused  # noqa: E402
from fieldgraph.changes import Change  # noqa: E402
from fieldgraph.graph import LineageGraph, MemoryStore  # noqa: E402
from fieldgraph.ingest.sources import decode_event  # noqa: E402
from tests.conftest import lineage_event, schema_event, sf  # noqa: E402


def chain_events(n_fields: int, width: int, chain: int) -> list[dict[str, Any]]:
    return list(iter_chain_events(n_fields, width, chain))


def iter_chain_events(n_fields: int, width: int, chain: int) -> Iterator[dict[str, Any]]:
    """A schema event per dataset, then a lineage event per dataset that has one before it in its chain (made
    one at a time: at 10M fields the list would not fit beside the backfill)."""
    n_ds = n_fields // width
    paths = [f"c{j}" for j in range(width)]
    for i in range(n_ds):
        yield schema_event(ds(i), paths, 1)
    for i in range(n_ds):
        if i % chain:
            yield lineage_event(ds(i), [(sf(ds(i), f"c{j}"), [sf(ds(i - 1), f"c{k}") for k in
                                                                 sorted({j, min(j + 1, width - 1)})])
                                        for j in range(width)], 2)


def decode(events: list[dict[str, Any]]) -> list[Change]:
    return [c for i, e in enumerate(events) for c in decode_event(e, origin=f"bench:{i}")]


def rate(n: int, seconds: float) -> float:
    return round(n / seconds, 1) if seconds else 0.0


def write_path(b: Any, changes: list[Change], batch_events: int) -> dict[str, Any]:
    store = b.fresh("bench_initial_write")
    try:
        t = time.perf_counter()
        with gc_paused():
            report = LineageGraph(store).ingest(changes, batch_events=batch_events)
        return {"seconds": round(time.perf_counter() - t, 2), "fields": report.counts["fields"],
                "edges": report.counts["edges"]}
    finally:
        store.clear()
        store.close()


def bulk_path(args: argparse.Namespace, b: Any, changes: list[Change], n: int) -> dict[str, Any]:
    t = time.perf_counter()
    with gc_paused():
        memory = MemoryStore()
        LineageGraph(memory).ingest(changes, batch_events=args.batch_events)
        plan_s = time.perf_counter() - t
        t = time.perf_counter()
        snap = memory.snapshot()
        del memory
    snapshot_s = time.perf_counter() - t
    one = bulk_falkordb(b, snap, n) if b.kind == "falkordb" else bulk_neo4j(args, snap, n)
    load_s = one["writeS"] + one["importS"] + one["ensureSchemaS"]
    return {"planS": round(plan_s, 2), "snapshotS": round(snapshot_s, 2), **one,
            "totalS": round(plan_s + snapshot_s + load_s, 2), "nodes": len(snap.nodes), "edges": len(snap.edges)}


def bulk_backfill(args: argparse.Namespace, b: Any, spark: Any, events: Iterable[dict[str, Any]], n: int
                  ) -> dict[str, Any]:
    """``fieldgraph backfill --bulk`` of ``events`` (from JSON Lines files) into an empty graph of ``b``'s kind,
    with the peak memory of the processes it ran in (:class:`Peaks`)."""
    from fieldgraph.graph import open_store
    from fieldgraph.ingest.backfill import BackfillOptions, run_backfill

    with tempfile.TemporaryDirectory(prefix="fgbench-backfill-") as tmp:
        files = write_files(Path(tmp), events, 4)
        opts: dict[str, Any] = {"rejects": f"{tmp}/rejects", "bulk": True, "bulk_dir": f"{tmp}/bulk"}
        server = None
        if b.kind == "falkordb":
            opts["graph"] = b.uri.split("?")[0] + f"?graph=bench_backfill_{n}"
            b.used.add(f"bench_backfill_{n}")
        else:
            from tests.services import Neo4jServer

            server = Neo4jServer(Path(tmp) / "neo4j", heap=args.neo4j_heap, pagecache=args.neo4j_pagecache)
            server._configure()
            opts.update(graph=server.uri, neo4j_home=str(server.home), neo4j_admin=shlex.join(neo4j_admin(args)))
        phases: list[tuple[str, float]] = []
        t = time.perf_counter()
        with Peaks(b.pid) as peaks:
            report = run_backfill(BackfillOptions(files, **opts), spark=spark,
                                  progress=lambda phase, *_: phases.append((phase, time.perf_counter()))
                                  if not phases or phases[-1][0] != phase else None)
        seconds = time.perf_counter() - t
        planned = next((at for phase, at in phases if phase.startswith("3/3")), t + seconds) - t
        schema_s = 0.0
        try:
            if server is not None:
                server.start(timeout=600)
                schema_s = neo4j_indexes(server.uri, n)
            else:
                with open_store(opts["graph"], schema=False) as store:
                    (row,) = store.run("MATCH (f:DatasetField) RETURN count(f) AS n")
                    store.clear()
                assert row["n"] == n, row
        finally:
            if server is not None:
                server.stop()
        total = seconds + schema_s
        return {"planS": round(planned, 2), "importS": round(seconds - planned, 2), "ensureSchemaS": round(schema_s, 2),
                "totalS": round(total, 2), "parts": len(report.bulk["partNodes"]) if report.bulk else None,
                "largestPartNodes": max(report.bulk["partNodes"]) if report.bulk else None,
                "fieldsPerS": rate(n, total), "peakRssMb": peaks.mb()}


def write_files(folder: Path, events: Iterable[dict[str, Any]], k: int) -> list[str]:
    """``events`` as JSON Lines, dealt round-robin into ``k`` files (Kafka sinks roll files: a few, read in
    parallel)."""
    paths = [folder / f"events-{i}.jsonl" for i in range(k)]
    outs = [p.open("w") for p in paths]
    try:
        for i, e in enumerate(events):
            outs[i % k].write(json.dumps(e) + "\n")
    finally:
        for f in outs:
            f.close()
    return [str(p) for p in paths]


class Peaks:
    """The peak resident memory (``VmHWM``) of this process (the driver), of its descendants (Spark's JVM, the
    Python workers that run its tasks: each worker runs one task at a time) and of the graph server ``pid``,
    sampled twice a second while the block runs (a worker's peak is read before it exits)."""

    def __init__(self, server_pid: int | None) -> None:
        self.server_pid = server_pid
        self.peak: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Peaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def mb(self) -> dict[str, int]:
        return {k: round(v / 1024) for k, v in sorted(self.peak.items())}

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            self._sample()

    def _sample(self) -> None:
        kinds = {"driver": [str(os.getpid())], "server": [str(self.server_pid)] if self.server_pid else []}
        for pid in descendants(os.getpid()):
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes() if Path(f"/proc/{pid}/cmdline").exists() else b""
            kind = "sparkJvm" if b"java" in cmd.split(b"\0")[0] else "task" if b"pyspark" in cmd else None
            if kind:
                kinds.setdefault(kind, []).append(pid)
        for kind, pids in kinds.items():
            for pid in pids:
                kb = status_kb(pid, "VmHWM")
                if kb:
                    self.peak[kind] = max(self.peak.get(kind, 0), kb)


def descendants(pid: int) -> list[str]:
    """The processes below ``pid``: its children, theirs, and so on."""
    out: list[str] = []
    todo = [str(pid)]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += kids
    return out


def same_graph(b: Any, changes: list[Change], batch_events: int) -> bool:
    """The write path's graph and the in-memory one the bulk load imports are the same graph."""
    store = b.fresh("bench_initial_check")
    try:
        LineageGraph(store).ingest(changes, batch_events=batch_events)
        memory = MemoryStore()
        LineageGraph(memory).ingest(changes, batch_events=batch_events)
        return store.snapshot().canonical() == memory.snapshot().canonical()
    finally:
        store.clear()
        store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch-events", type=int, default=1000, help="events per write-path batch")
    add_load_arguments(ap)
    ap.add_argument("--no-backfill", action="store_true", help="leave out fieldgraph backfill --bulk (Spark)")
    ap.add_argument("--backfill-only", action="store_true",
                    help="only fieldgraph backfill --bulk (no write path, no one-process bulk load)")
    args = ap.parse_args()
    spark = None
    if not args.no_backfill:
        from fieldgraph.ingest.backfill import spark_session

        spark = spark_session()
    sizes = [count(s) for s in args.sizes.split(",")]
    out: dict[str, Any] = {"benchmark": "initial_load", "width": args.width, "chain": args.chain, "backends": {}}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            res: dict[str, Any] = {"backend": b.label, "sizes": []}
            if not args.backfill_only:
                check = decode(chain_events(min(sizes[0], 5 * args.width * args.chain), args.width, args.chain))
                res["sameGraph"] = same_graph(b, check, args.batch_events)
            for n in sizes:
                print(f"{b.label}: {n} fields ...", file=sys.stderr, flush=True)
                if args.backfill_only:
                    events = iter_chain_events(n, args.width, args.chain)
                    res["sizes"].append({"fields": n, "bulkBackfill": bulk_backfill(args, b, spark, events, n)})
                    print(json.dumps(res["sizes"][-1]), file=sys.stderr, flush=True)
                    continue
                events = chain_events(n, args.width, args.chain)
                t = time.perf_counter()
                with gc_paused():
                    changes = decode(events)
                decode_s = time.perf_counter() - t
                backfill = bulk_backfill(args, b, spark, events, n) if spark is not None else None
                del events
                write = write_path(b, changes, args.batch_events)
                server_peak = status_kb(b.pid, "VmHWM") if b.pid else None
                bulk = bulk_path(args, b, changes, n)
                row = {"fields": n, "events": len(changes), "decodeS": round(decode_s, 2),
                       "writePath": {**write, "fieldsPerS": rate(n, write["seconds"])},
                       "bulk": {**bulk, "fieldsPerS": rate(n, bulk["totalS"])},
                       "bulkOverWritePath": round(write["seconds"] / bulk["totalS"], 2),
                       **({"bulkBackfill": backfill, "bulkBackfillOverWritePath":
                           round(write["seconds"] / backfill["totalS"], 2)} if backfill else {}),
                       "thisProcessPeakRssMb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                       "serverPeakRssMbAfterWritePath": round(server_peak / 1024) if server_peak else None}
                res["sizes"].append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
                del changes
            out["backends"][b.key] = res
    report(out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
