"""Graph benchmark: ingest rates against the raw store's UNWIND rate, and deep-query latency.

    python benchmarks/graph.py                      # 1M-field query graph (takes a few minutes)
    python benchmarks/graph.py --fields 50000 --ingest-fields 20000 --queries 50   # quick
    python benchmarks/graph.py --graph neo4j        # on a Neo4j started for the run
    python benchmarks/graph.py --graph both         # embedded FalkorDB, then Neo4j, in one run

``--graph`` (see ``benchmarks/backends.py``): ``embedded`` (default: an embedded FalkorDB in a tmp data
folder, stopped at the end), ``neo4j`` (a Neo4j 5.26 Community from ``tests/services.py`` in a tmp folder,
stopped at the end), ``both`` (the two, one after the other), or the URI of a running server
(``bolt://user:pass@host:7687``, ``falkordb://host:6379``; the benchmark clears what it writes to).
Every phase runs on an empty graph through the same store interface, on either backend.

Prints one JSON object (with ``both``: one per backend under ``backends``, and ``sideBySide``):

- ``ingest``: fieldgraph's pipeline (read state, plan, apply) writing schema and lineage aspect
  changes, as field upserts/s and edges/s, next to the raw store rate of that backend: the very same
  ``UNWIND $rows ... MERGE`` statements and rows replayed on an empty graph with nothing else
  (no state read, no planning); ``ratio`` = pipeline / raw (target >= 0.7), from alternating rounds
  after one small untimed round. ``fromJson`` adds decoding the JSON events (pydantic) to the pipeline.
- ``query``: ``LineageGraph.upstream(field, depth=10)`` latency on a graph of ``--fields`` fields
  (chains of datasets, each field derived from two fields of the dataset before), p50/p95 in ms
  (target p50 < 50 ms); and the same walk as one variable-length Cypher statement (``upstream.cypher``).

Latency by walk depth (1..20) and by graph size (10k .. 10M fields, one incremental build), with memory:
``benchmarks/graph_curves.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time

from backends import (
    Backend,
    add_arguments,
    backend,
    build_query_graph,
    ds,
    machine,
    record_ingest,
    replay,
    specs,
)

from fieldgraph.graph import LineageGraph
from fieldgraph.graph import cypher as cy
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.sources import decode_event


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


def bench_ingest(b: Backend, n_fields: int, width: int, batch: int, batch_events: int, rounds: int,
                 warmup_fields: int) -> dict:
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

    def pipeline_round(schema: list, lineage: list, fields: int, edges: int) -> tuple[float, float, list, list, dict]:
        """fieldgraph: decoded aspect changes -> read state, plan, apply."""
        g = LineageGraph(b.fresh("bench_fg", batch))
        fields_s, schema_plans = record_ingest(g, schema, batch_events)
        edges_s, lineage_plans = record_ingest(g, lineage, batch_events)
        st = g.stats().to_json()
        assert st["fields"] == fields and st["dataDerivedFromEdges"] == edges, st
        g.store.clear()
        g.close()
        return fields_s, edges_s, schema_plans, lineage_plans, st

    def raw_round(schema_plans: list, lineage_plans: list, st: dict) -> tuple[float, float]:
        """The raw store: the very same UNWIND statements and rows, sent as they are, on an empty graph."""
        raw = LineageGraph(b.fresh("bench_raw", batch))
        fields_s, edges_s = replay(raw, schema_plans), replay(raw, lineage_plans)
        assert raw.stats().to_json() == st
        raw.store.clear()
        raw.close()
        return fields_s, edges_s

    # one small untimed round first: Neo4j plans each statement once and its JIT warms up; neither should
    # count against whichever side happens to run first
    w_ds = min(n_ds, max(2, warmup_fields // width)) if warmup_fields else 0
    if w_ds:
        *_, sp, lp, st = pipeline_round([c for e in schema_json[:w_ds] for c in decode_event(e)],
                                        [c for e in lineage_json[:w_ds - 1] for c in decode_event(e)],
                                        w_ds * width, (w_ds - 1) * width)
        raw_round(sp, lp, st)

    # alternate the two, several rounds: the machine is shared, so compare medians
    fg, rw = [], []
    for r in range(rounds):
        fields_s, edges_s, sp, lp, st = pipeline_round(schema_changes, lineage_changes, n_fields, n_edges)
        fg.append((fields_s, edges_s))
        rw.append(raw_round(sp, lp, st))
        print(f"{b.label}: ingest round {r + 1}/{rounds}: fieldgraph {fields_s:.2f}s + {edges_s:.2f}s, "
              f"raw {rw[-1][0]:.2f}s + {rw[-1][1]:.2f}s", file=sys.stderr, flush=True)
    fg_fields_s, fg_edges_s = (statistics.median(x[k] for x in fg) for k in (0, 1))
    raw_fields_s, raw_edges_s = (statistics.median(x[k] for x in rw) for k in (0, 1))

    g = LineageGraph(b.fresh("bench_replay", batch))  # replaying everything changes nothing
    g.ingest(schema_changes + lineage_changes, batch_events=batch_events)
    st = g.stats().to_json()
    t = time.perf_counter()
    g.ingest(schema_changes + lineage_changes, batch_events=batch_events)
    replay_s = time.perf_counter() - t
    assert g.stats().to_json() == st
    g.store.clear()
    g.close()

    return {
        "datasets": n_ds, "fields": n_fields, "edges": n_edges, "rowsPerBatch": batch, "eventsPerBatch": batch_events,
        "rounds": rounds, "warmupFields": w_ds * width,
        "raw": {"fieldUpsertsPerS": round(n_fields / raw_fields_s), "edgesPerS": round(n_edges / raw_edges_s)},
        "fieldgraph": {"fieldUpsertsPerS": round(n_fields / fg_fields_s), "edgesPerS": round(n_edges / fg_edges_s),
                       "replayEventsPerS": round(n_events / replay_s)},
        "ratio": {"fieldUpserts": round(raw_fields_s / fg_fields_s, 3), "edges": round(raw_edges_s / fg_edges_s, 3)},
        "ratioPerRound": [{"fieldUpserts": round(r[0] / f[0], 3), "edges": round(r[1] / f[1], 3)}
                          for f, r in zip(fg, rw, strict=False)],
        "fromJson": {"decodeEventsPerS": round(n_events / decode_s),
                     "fieldUpsertsPerS": round(n_fields / (fg_fields_s + decode_s * len(schema_json) / n_events)),
                     "edgesPerS": round(n_edges / (fg_edges_s + decode_s * len(lineage_json) / n_events))},
    }


def bench_query(b: Backend, n_fields: int, width: int, chain: int, queries: int, batch: int,
                seed: int, var_queries: int, budget_s: float | None) -> dict:
    store = b.fresh("bench_query", batch)
    requested = n_fields
    built, build_s = build_query_graph(store, n_fields, width, chain, batch, budget_s)
    n_fields = built
    g = LineageGraph(store)
    st = g.stats().to_json()
    rng = random.Random(seed)
    n_ds = n_fields // width
    # start at the end of a chain so that depth 10 is fully used
    starts = [field_urn(ds(c * chain + chain - 1), f"c{rng.randrange(width)}")
              for c in (rng.randrange(n_ds // chain) for _ in range(queries))]
    for c in (rng.randrange(n_ds // chain) for _ in range(min(10, queries))):  # warm up (other starts)
        g.upstream(field_urn(ds(c * chain + chain - 1), f"c{rng.randrange(width)}"), depth=10)
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
    g.close()  # a server started for the run goes with its data; a running one is cleared at the end

    def pct(xs: list[float], p: float) -> float:
        return round(sorted(xs)[min(len(xs) - 1, int(p * len(xs)))], 2)

    return {
        "fields": built, "edges": st["dataDerivedFromEdges"], "datasets": st["datasets"],
        **({"fieldsRequested": requested, "buildBudgetSeconds": budget_s} if built < requested else {}),
        "buildSeconds": round(build_s, 1),
        "buildFieldsPerS": round(built / build_s), "queries": queries, "depth": 10,
        "edgesPerResult": round(statistics.mean(hops), 1),
        "upstreamApiMs": {"p50": pct(api, 0.5), "p95": pct(api, 0.95), "max": round(max(api), 2)},
        "upstreamVarLengthCypherMs": {"queries": len(var), "p50": pct(var, 0.5), "max": round(max(var), 2)}
        if var else None,
    }


def run(b: Backend, args: argparse.Namespace) -> dict:
    out = {**b.info(), "ingest": bench_ingest(b, args.ingest_fields, args.width, args.batch, args.batch_events,
                                               args.rounds, args.warmup_fields)}
    print(json.dumps(out["ingest"]), file=sys.stderr)
    if not args.skip_query:
        out["query"] = bench_query(b, args.fields, args.width, args.chain, args.queries, args.batch, args.seed,
                                   args.varlength_queries, args.build_budget)
        print(json.dumps(out["query"]), file=sys.stderr)
    return out


def side_by_side(results: dict[str, dict]) -> dict:
    """The targets, per backend: ingest ratio (pipeline / raw, measured in alternating rounds on that backend)
    and depth-10 upstream latency."""
    out: dict = {
        "ingestRatio": {k: r["ingest"]["ratio"] for k, r in results.items()},
        "fieldUpsertsPerS": {k: {"fieldgraph": r["ingest"]["fieldgraph"]["fieldUpsertsPerS"],
                                 "raw": r["ingest"]["raw"]["fieldUpsertsPerS"]} for k, r in results.items()},
        "edgesPerS": {k: {"fieldgraph": r["ingest"]["fieldgraph"]["edgesPerS"], "raw": r["ingest"]["raw"]["edgesPerS"]}
                      for k, r in results.items()},
    }
    if all("query" in r for r in results.values()):
        out["upstreamDepth10Ms"] = {k: {"fields": r["query"]["fields"], **r["query"]["upstreamApiMs"]}
                                    for k, r in results.items()}
    out["targets"] = {"ingestRatioMin": 0.7, "upstreamP50MsMax": 50}
    out["met"] = {k: {"ingest": min(r["ingest"]["ratio"].values()) >= 0.7,
                      **({"upstreamP50": r["query"]["upstreamApiMs"]["p50"] < 50} if "query" in r else {})}
                  for k, r in results.items()}
    return out


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
    ap.add_argument("--warmup-fields", type=int, default=5000,
                    help="fields in one untimed pipeline/raw round before the timed ones (0: none)")
    ap.add_argument("--build-budget", type=float, default=None, metavar="SECONDS",
                    help="stop building the query graph after this long and query the part built (reported)")
    ap.add_argument("--skip-query", action="store_true")
    add_arguments(ap)
    args = ap.parse_args()
    results: dict[str, dict] = {}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            results[b.key] = run(b, args)
    if len(results) == 1:
        (out,) = results.values()
        out["machine"] = machine()
    else:
        out = {"machine": machine(), "backends": results, "sideBySide": side_by_side(results)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
