"""Bulk load against streaming writes: a graph of N fields put into an empty store by the store's own importer
(``fieldgraph.graph.bulkload``), and the same graph written with fieldgraph's UNWIND statements.

    python benchmarks/bulk_load.py                                  # embedded and Neo4j, 100k and 1M fields
    python benchmarks/bulk_load.py --graph embedded --sizes 100k,1M,10M
    python benchmarks/bulk_load.py --sizes 10k --streaming-at 10k   # quick

The graph is ``benchmarks/graph_curves.py``'s: chains of ``--chain`` datasets of ``--width`` fields, field j of a
dataset derived from fields j and j+1 of the dataset before. The snapshot is built directly in Python (no
streaming), with the properties ``write_datasets`` (``benchmarks/backends.py``) gives; the run first checks, at
a small size, that it is the very graph those statements write (canonical snapshots equal).

Per backend and size, timed apart: building the snapshot in Python; ``write`` (Neo4j: the import CSV files;
FalkorDB has no files: the values are encoded as they are sent, within ``import``); ``import`` (FalkorDB: the
GRAPH.BULK commands; Neo4j: ``neo4j-admin database import full`` into the stopped server, a JVM of its own);
``ensureSchema`` (indexes and constraints on the loaded graph; Neo4j: until its indexes are online); Neo4j's
restart between them is reported, not counted. Then fields/s and edges/s of write + import + ensureSchema, and the
ratio to the streaming write rate measured at ``--streaming-at`` fields (the UNWIND path, ``write_datasets`` in
batches of ``--batch`` rows, on a fresh graph with the schema in place).

Prints one JSON object (``--out FILE``: also written there). Figures compare only within one run on one machine
(``machine.loadAverageAtEnd``: the 2 cores are shared).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from backends import EDGE_PROPS, FACT, add_arguments, backend, build_query_graph, ds, report, specs
from graph_curves import count, status_kb

from fieldgraph.bulk import gc_paused
from fieldgraph.graph import FalkorStore, open_store
from fieldgraph.graph.bulkload import import_neo4j, load_falkordb, write_neo4j_import
from fieldgraph.graph.plan import field_urn
from fieldgraph.graph.snapshot import EdgeRow, NodeRow, Snapshot


def chain_snapshot(n_fields: int, width: int, chain: int) -> Snapshot:
    """The graph ``write_datasets`` writes for ``n_fields`` fields, built directly (node ids: datasets first)."""
    n_ds = n_fields // width
    nodes: list[NodeRow] = []
    edges: list[EdgeRow] = []
    edge_props = {**EDGE_PROPS, "fact": FACT, "lastSeen": 1, "source": "upstreamLineage", "validFrom": 1,
                  "firstSeen": 1}
    for i in range(n_ds):
        nodes.append(NodeRow(i, "Dataset", {"urn": ds(i), "platform": "hive", "name": f"bench.t{i}", "env": "PROD",
                                             "placeholder": False, "schemaVersion": 0, "schemaTs": 1,
                                             "schemaTimes": [1]}))
    for i in range(n_ds):
        base = n_ds + i * width
        for j in range(width):
            nodes.append(NodeRow(base + j, "DatasetField", {
                "urn": field_urn(ds(i), f"c{j}"), "datasetUrn": ds(i), "fieldPath": f"c{j}", "simplePath": f"c{j}",
                "type": "StringType", "placeholder": False, "removed": False, "schemaVersion": 0, "schemaTs": 1,
                "stateKey": "v1", "since": 1}))
            edges.append(EdgeRow(i, "HasField", base + j, {"validFrom": 1}))
            if i % chain:
                for k in {j, min(j + 1, width - 1)}:
                    edges.append(EdgeRow(base + j, "DataDerivedFrom", base - width + k, edge_props))
    return Snapshot(nodes, edges)


def check_shape(b: Any, width: int, chain: int) -> bool:
    """Whether the snapshot built here is the graph the streaming statements write (at a small size)."""
    n = width * chain * 2
    store = b.fresh("bench_bulk_check")
    try:
        build_query_graph(store, n, width, chain, 5000)
        return store.snapshot().canonical() == chain_snapshot(n, width, chain).canonical()
    finally:
        store.clear()
        store.close()


def rates(fields: int, edges: int, seconds: float) -> dict[str, float]:
    return {"fieldsPerS": round(fields / seconds), "edgesPerS": round(edges / seconds)}


def streaming(b: Any, n: int, width: int, chain: int, batch: int) -> dict[str, Any]:
    store = b.fresh("bench_bulk_stream", batch)
    try:
        with gc_paused():
            built, seconds = build_query_graph(store, n, width, chain, batch)
        edges = len(chain_snapshot(width * chain, width, chain).edges) * (built // (width * chain))
        return {"fields": built, "edges": edges, "seconds": round(seconds, 2), **rates(built, edges, seconds)}
    finally:
        store.clear()
        store.close()


def bulk_falkordb(b: Any, snap: Snapshot, n: int) -> dict[str, Any]:
    store = open_store(b.uri, graph=f"bench_bulk_{n}", schema=False)
    assert isinstance(store, FalkorStore)
    b.used.add(store.graph_name)
    try:
        times: dict[str, float] = {}
        load_falkordb(snap, store, timings=times)
        (row,) = store.run("MATCH (f:DatasetField) RETURN count(f) AS n")
        assert row["n"] == n, row
        usage = store.db.connection.execute_command("GRAPH.MEMORY", "USAGE", store.graph_name)
        memory = dict(zip(usage[::2], usage[1::2], strict=False))
        return {"writeS": 0.0, **{k: round(v, 2) for k, v in times.items()},
                "graphMemoryMb": memory.get("total_graph_sz_mb", memory.get(b"total_graph_sz_mb")),
                "serverPeakRssMb": round((status_kb(b.pid, "VmHWM") or 0) / 1024) if b.pid else None}
    finally:
        store.clear()
        store.close()


def neo4j_admin(args: argparse.Namespace) -> list[str]:
    """``neo4j-admin`` from the Neo4j jars the tests resolve, with ``--import-heap``."""
    from tests.services import JAVA_OPENS, _java, classpath

    return [_java(), f"-Xmx{args.import_heap}", *JAVA_OPENS, "-cp", classpath("neo4j"), "org.neo4j.cli.AdminTool"]


def neo4j_indexes(uri: str, fields: int) -> float:
    """After an import, on the started server: the seconds its constraints and indexes took to be online; checks
    the graph holds ``fields`` fields."""
    with open_store(uri, schema=False) as store:
        t = time.perf_counter()
        store.ensure_schema()
        store.run("CALL db.awaitIndexes(3600)")
        seconds = time.perf_counter() - t
        (row,) = store.run("MATCH (f:DatasetField) RETURN count(f) AS n")
    assert row["n"] == fields, row
    return seconds


def bulk_neo4j(args: argparse.Namespace, snap: Snapshot, n: int) -> dict[str, Any]:
    """Into a Neo4j of its own: started once (the password, an empty database), stopped, imported, started."""
    from tests.services import Neo4jServer

    with tempfile.TemporaryDirectory(prefix="fgbench-bulk-") as tmp:
        server = Neo4jServer(Path(tmp) / "neo4j", heap=args.neo4j_heap, pagecache=args.neo4j_pagecache).start()
        server.stop()
        try:
            t = time.perf_counter()
            files = write_neo4j_import(snap, Path(tmp) / "csv")
            write_s = time.perf_counter() - t
            disk = sum(p.stat().st_size for p in (Path(tmp) / "csv").glob("*.csv"))
            import_s = import_neo4j(files, server.home, admin=neo4j_admin(args), threads=args.threads,
                                    max_off_heap_memory=args.import_off_heap)
            report = (Path(tmp) / "csv" / "import.report")
            t = time.perf_counter()
            server.start(timeout=600)
            start_s = time.perf_counter() - t
            schema_s = neo4j_indexes(server.uri, n)
            return {"writeS": round(write_s, 2), "importS": round(import_s, 2), "ensureSchemaS": round(schema_s, 2),
                    "serverStartS": round(start_s, 2), "csvMb": round(disk / 2**20), "multiline": files.multiline,
                    "badEntriesReport": report.stat().st_size if report.exists() else None}
        finally:
            server.stop()


def add_load_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of a bulk-load benchmark: sizes, the graph's shape, the importers' settings, the backends."""
    ap.add_argument("--sizes", default="100k,1M", help="fields per graph (each a fresh graph)")
    ap.add_argument("--width", type=int, default=50)
    ap.add_argument("--chain", type=int, default=25)
    ap.add_argument("--threads", type=int, default=2, help="neo4j-admin import --threads")
    ap.add_argument("--import-heap", default="1g", help="neo4j-admin's JVM heap")
    ap.add_argument("--import-off-heap", default="2g", help="neo4j-admin import --max-off-heap-memory")
    ap.add_argument("--out", help="also write the JSON here")
    add_arguments(ap)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streaming-at", type=count, default=100_000, help="fields streamed for the rate to compare")
    ap.add_argument("--batch", type=int, default=5000, help="rows per UNWIND statement (streaming)")
    add_load_arguments(ap)
    args = ap.parse_args()
    sizes = [count(s) for s in args.sizes.split(",")]
    out: dict[str, Any] = {"benchmark": "bulk_load", "width": args.width, "chain": args.chain, "backends": {}}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            res: dict[str, Any] = {"backend": b.label, "shapeChecked": check_shape(b, args.width, args.chain)}
            print(f"{b.label}: streaming {args.streaming_at} fields ...", file=sys.stderr, flush=True)
            res["streaming"] = stream = streaming(b, args.streaming_at, args.width, args.chain, args.batch)
            res["bulk"] = []
            for n in sizes:
                print(f"{b.label}: bulk {n} fields ...", file=sys.stderr, flush=True)
                t = time.perf_counter()
                with gc_paused():
                    snap = chain_snapshot(n, args.width, args.chain)
                build_s = time.perf_counter() - t
                one = bulk_falkordb(b, snap, n) if b.kind == "falkordb" else bulk_neo4j(args, snap, n)
                total = one["writeS"] + one["importS"] + one["ensureSchemaS"]
                row = {"fields": n, "nodes": len(snap.nodes), "edges": len(snap.edges),
                       "snapshotBuildS": round(build_s, 2), **one, "totalS": round(total, 2),
                       **rates(n, len(snap.edges), total),
                       "bulkOverStreaming": round(n / total / stream["fieldsPerS"], 1),
                       "thisProcessPeakRssMb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
                res["bulk"].append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
                del snap
            out["backends"][b.key] = res
    report(out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
