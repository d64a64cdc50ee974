"""Graph benchmark: ingest rates against the raw store's UNWIND rate, and deep-query latency.

    python benchmarks/graph.py                      # 1M-field query graph (takes a few minutes)
    python benchmarks/graph.py --fields 50000 --ingest-fields 20000 --queries 50   # quick

Prints one JSON object. In one run, on one embedded FalkorDB (a tmp data folder, stopped at the end):

- ``ingest``: fieldgraph's pipeline (read state, plan, apply) writing schema and lineage aspect
  changes, as field upserts/s and edges/s, next to the raw store rate: the very same
  ``UNWIND $rows ... MERGE`` statements and rows replayed on a fresh graph with nothing else
  (no state read, no planning); ``ratio`` = pipeline / raw (target >= 0.7). ``fromJson`` adds
  decoding the JSON events (pydantic) to the pipeline.
- ``query``: ``LineageGraph.upstream(field, depth=10)`` latency on a graph of ``--fields`` fields
  (chains of datasets, each field derived from two fields of the dataset before), p50/p95 in ms
  (target p50 < 50 ms); and the same walk as one variable-length Cypher statement (``upstream.cypher``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path


from fieldgraph.graph import EmbeddedServer, FalkorStore, LineageGraph
from fieldgraph.graph import cypher as cy
from fieldgraph.graph.lineage import gc_paused
from fieldgraph.ingest.events import decode_event
from fieldgraph.ingest.plan import field_urn


def ds(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,bench.t{i},PROD)"


def col(j: int) -> dict:
    return {"fieldPath": f"c{j}", "nullable": True, "type": {"type": {"com.linkedin.schema.StringType": {}}},
            "nativeDataType": "string", "recursive": False, "isPartOfKey": False}


def schema_event(i: int, width: int) -> dict:
    aspect = {"schemaName": f"bench.t{i}", "platform": "urn:li:dataPlatform:hive", "version": 0, "hash": "",
              "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
              "fields": [col(j) for j in range(width)]}
    return {"entityType": "dataset", "entityUrn": ds(i), "changeType": "UPSERT", "aspectName": "schemaMetadata",
            "aspect": {"value": json.dumps(aspect), "contentType": "application/json"},
            "systemMetadata": {"lastObserved": 1000 + i}}


def lineage_event(i: int, width: int) -> dict:
    fgl = [{"upstreamType": "FIELD_SET", "upstreams": [f"urn:li:schemaField:({ds(i - 1)},c{j})"],
            "downstreamType": "FIELD", "downstreams": [f"urn:li:schemaField:({ds(i)},c{j})"],
            "transformOperation": "IDENTITY"} for j in range(width)]
    return {"entityType": "dataset", "entityUrn": ds(i), "changeType": "UPSERT", "aspectName": "upstreamLineage",
            "aspect": {"value": json.dumps({"upstreams": [], "fineGrainedLineages": fgl}),
                       "contentType": "application/json"},
            "systemMetadata": {"lastObserved": 5000 + i}}


def new_store(server: EmbeddedServer, name: str, batch: int) -> FalkorStore:
    s = FalkorStore(graph=name, unix_socket=str(server.socket), batch_size=batch)
    s.clear()
    s.ensure_schema()
    return s


def _pipeline(g: LineageGraph, changes: list, batch_events: int, plans: list) -> float:
    """``LineageGraph.ingest`` (read state, plan, apply; the next batch planned while one is written),
    keeping the plans it applies so the raw store can be fed the very same rows."""
    apply = LineageGraph.apply

    def recording(plan) -> None:
        plans.append(plan)
        apply(g, plan)

    g.apply = recording  # type: ignore[method-assign]
    t = time.perf_counter()
    g.ingest(changes, batch_events=batch_events)
    elapsed = time.perf_counter() - t
    del g.apply
    return elapsed


def bench_ingest(server: EmbeddedServer, n_fields: int, width: int, batch: int, batch_events: int,
                 rounds: int) -> dict:
    n_ds = max(2, n_fields // width)
    schema_json = [schema_event(i, width) for i in range(n_ds)]
    lineage_json = [lineage_event(i, width) for i in range(1, n_ds)]
    n_edges = (n_ds - 1) * width
    n_fields = n_ds * width
    n_events = len(schema_json) + len(lineage_json)

    t = time.perf_counter()
    schema_changes = [c for e in schema_json for c in decode_event(e)]
    lineage_changes = [c for e in lineage_json for c in decode_event(e)]
    decode_s = time.perf_counter() - t

    def pipeline_round() -> tuple[float, float, list, list, dict]:
        """fieldgraph: decoded aspect changes -> read state, plan, apply."""
        g = LineageGraph(new_store(server, "bench_fg", batch))
        schema_plans: list = []
        lineage_plans: list = []
        fields_s = _pipeline(g, schema_changes, batch_events, schema_plans)
        edges_s = _pipeline(g, lineage_changes, batch_events, lineage_plans)
        st = g.stats()
        assert st["fields"] == n_fields and st["dataDerivedFromEdges"] == n_edges, st
        g.store.clear()
        g.close()
        return fields_s, edges_s, schema_plans, lineage_plans, st

    def raw_round(schema_plans: list, lineage_plans: list, st: dict) -> tuple[float, float]:
        """The raw store: the very same UNWIND statements and rows, sent as they are."""
        raw = LineageGraph(new_store(server, "bench_raw", batch))

        def apply_all(plans: list) -> float:
            with gc_paused():  # the same GC setting as LineageGraph.ingest
                t = time.perf_counter()
                for p in plans:
                    raw.apply(p)
                return time.perf_counter() - t

        fields_s, edges_s = apply_all(schema_plans), apply_all(lineage_plans)
        assert raw.stats() == st
        raw.store.clear()
        raw.close()
        return fields_s, edges_s

    # alternate the two, several rounds: the machine is shared, so compare medians
    fg, rw = [], []
    for _ in range(rounds):
        fields_s, edges_s, sp, lp, st = pipeline_round()
        fg.append((fields_s, edges_s))
        rw.append(raw_round(sp, lp, st))
    fg_fields_s, fg_edges_s = (statistics.median(x[k] for x in fg) for k in (0, 1))
    raw_fields_s, raw_edges_s = (statistics.median(x[k] for x in rw) for k in (0, 1))

    g = LineageGraph(new_store(server, "bench_replay", batch))  # replaying everything changes nothing
    g.ingest(schema_changes + lineage_changes, batch_events=batch_events)
    st = g.stats()
    t = time.perf_counter()
    g.ingest(schema_changes + lineage_changes, batch_events=batch_events)
    replay_s = time.perf_counter() - t
    assert g.stats() == st
    g.store.clear()
    g.close()

    return {
        "datasets": n_ds, "fields": n_fields, "edges": n_edges, "rowsPerBatch": batch, "eventsPerBatch": batch_events,
        "rounds": rounds,
        "raw": {"fieldUpsertsPerS": round(n_fields / raw_fields_s), "edgesPerS": round(n_edges / raw_edges_s)},
        "fieldgraph": {"fieldUpsertsPerS": round(n_fields / fg_fields_s), "edgesPerS": round(n_edges / fg_edges_s),
                       "replayEventsPerS": round(n_events / replay_s)},
        "ratio": {"fieldUpserts": round(raw_fields_s / fg_fields_s, 3), "edges": round(raw_edges_s / fg_edges_s, 3)},
        "ratioPerRound": [{"fieldUpserts": round(r[0] / f[0], 3), "edges": round(r[1] / f[1], 3)}
                          for f, r in zip(fg, rw)],
        "fromJson": {"decodeEventsPerS": round(n_events / decode_s),
                     "fieldUpsertsPerS": round(n_fields / (fg_fields_s + decode_s * len(schema_json) / n_events)),
                     "edgesPerS": round(n_edges / (fg_edges_s + decode_s * len(lineage_json) / n_events))},
    }


def build_query_graph(store: FalkorStore, n_fields: int, width: int, chain: int, batch: int) -> tuple[int, float]:
    """Chains of ``chain`` datasets of ``width`` fields; field j of a dataset derives from fields j and j+1
    of the dataset before it. Built with large raw UNWIND batches."""
    n_ds = n_fields // width
    t = time.perf_counter()
    for lo in range(0, n_ds, max(1, batch // width)):
        hi = min(n_ds, lo + max(1, batch // width))
        store.run_rows(cy.statement("upsert_datasets"), [
            {"urn": ds(i), "props": {"platform": "hive", "name": f"bench.t{i}", "env": "PROD", "placeholder": False,
                                     "schemaVersion": 0, "schemaTs": 1}} for i in range(lo, hi)], batch)
        store.run_rows(cy.statement("upsert_fields"), [
            {"datasetUrn": ds(i), "urn": field_urn(ds(i), f"c{j}"),
             "props": {"datasetUrn": ds(i), "fieldPath": f"c{j}", "simplePath": f"c{j}", "type": "StringType",
                       "placeholder": False, "removed": False, "schemaVersion": 0, "schemaTs": 1}}
            for i in range(lo, hi) for j in range(width)], batch)
        store.run_rows(cy.statement("merge_field_edges"), [
            {"down": field_urn(ds(i), f"c{j}"), "up": field_urn(ds(i - 1), f"c{k}"), "source": "upstreamLineage",
             "props": {"source": "upstreamLineage", "transformation": "IDENTITY", "createdAt": 1}}
            for i in range(lo, hi) if i % chain for j in range(width) for k in {j, min(j + 1, width - 1)}], batch)
        print(f"\rbuilding query graph: {hi * width}/{n_ds * width} fields", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return n_ds * width, time.perf_counter() - t


def bench_query(server: EmbeddedServer, n_fields: int, width: int, chain: int, queries: int, batch: int,
                seed: int, var_queries: int) -> dict:
    store = new_store(server, "bench_query", batch)
    built, build_s = build_query_graph(store, n_fields, width, chain, batch)
    g = LineageGraph(store)
    st = g.stats()
    rng = random.Random(seed)
    n_ds = n_fields // width
    # start at the end of a chain so that depth 10 is fully used
    starts = [field_urn(ds(c * chain + chain - 1), f"c{rng.randrange(width)}")
              for c in (rng.randrange(n_ds // chain) for _ in range(queries))]
    g.upstream(starts[0], depth=10)  # warm up
    api, var, hops = [], [], []
    upstream_stmt = cy.with_depth(cy.statement("upstream"), 10)
    for s in starts:
        t = time.perf_counter()
        res = g.upstream(s, depth=10)
        api.append((time.perf_counter() - t) * 1000)
        hops.append(len(res.hops))
        assert max(h.depth for h in res.hops) == 10
    for s in starts[:var_queries]:  # path enumeration: slow when lineage fans in, so only a few
        t = time.perf_counter()
        g.query(upstream_stmt, {"urn": s})
        var.append((time.perf_counter() - t) * 1000)
    store.clear()
    g.close()

    def pct(xs: list[float], p: float) -> float:
        return round(sorted(xs)[min(len(xs) - 1, int(p * len(xs)))], 2)

    return {
        "fields": built, "edges": st["dataDerivedFromEdges"], "datasets": st["datasets"],
        "buildSeconds": round(build_s, 1),
        "buildFieldsPerS": round(built / build_s), "queries": queries, "depth": 10,
        "edgesPerResult": round(statistics.mean(hops), 1),
        "upstreamApiMs": {"p50": pct(api, 0.5), "p95": pct(api, 0.95), "max": round(max(api), 2)},
        "upstreamVarLengthCypherMs": {"queries": len(var), "p50": pct(var, 0.5), "max": round(max(var), 2)}
        if var else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fields", type=int, default=1_000_000, help="fields in the query graph (default 1M)")
    ap.add_argument("--ingest-fields", type=int, default=100_000, help="fields in the ingest comparison")
    ap.add_argument("--width", type=int, default=50, help="fields per dataset")
    ap.add_argument("--chain", type=int, default=20, help="datasets per lineage chain in the query graph")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--varlength-queries", type=int, default=10,
                    help="how many of the queries also run as one variable-length Cypher statement")
    ap.add_argument("--batch", type=int, default=2000, help="rows per UNWIND")
    ap.add_argument("--batch-events", type=int, default=200, help="events per planned batch")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3, help="alternating pipeline/raw ingest rounds (medians)")
    ap.add_argument("--skip-query", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fgbench-") as tmp:
        server = EmbeddedServer(Path(tmp) / "d").start()
        try:
            out = {"backend": "embedded FalkorDB", "ingest": bench_ingest(server, args.ingest_fields, args.width,
                                                                          args.batch, args.batch_events, args.rounds)}
            print(json.dumps(out["ingest"]), file=sys.stderr)
            if not args.skip_query:
                out["query"] = bench_query(server, args.fields, args.width, args.chain, args.queries, args.batch,
                                           args.seed, args.varlength_queries)
        finally:
            server.stop()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
