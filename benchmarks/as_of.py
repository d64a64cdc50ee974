"""Lineage as of an instant against lineage now: depth-10 upstream walks on a graph with history.

The graph: chains of datasets (``--chain``) of ``--width`` fields, field j of a dataset derived from fields j and
j+1 of the dataset before it, all from time 1 (the query graph of ``benchmarks/graph.py``). Then, at time 100,
every lineage aspect gets a second version (field j now derives from fields j and j+2: a third of the edges is
closed and becomes past edges, as many new ones hold now) and every field a second schema state (its type
changes: the first becomes a ``FieldState``), written with the write path's own statements
(``close_lineage``, ``merge_field_edges``, ``archive_field_states``) in large batches.

Measured side by side, start by start (same starts, interleaved, after a warm-up): ``upstream(depth=10)`` now,
as of 50 (before the rewiring: the walk follows past edges and reads past field states) and as of 200 (after
it: the present's edges through the as-of statements). Prints one JSON object per backend and the ratios.

    python benchmarks/as_of.py                        # 1 million fields, embedded FalkorDB
    python benchmarks/as_of.py --graph neo4j --fields 200000
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import FACT, Backend, add_arguments, backend, build_query_graph, ds, machine, specs  # noqa: E402

from fieldgraph.graph import GraphStore, LineageGraph  # noqa: E402
from fieldgraph.graph import cypher as cy  # noqa: E402
from fieldgraph.graph.history import fact_key  # noqa: E402
from fieldgraph.graph.plan import field_urn  # noqa: E402

REWIRED_AT = 100
NEW_EDGE = {"source": "upstreamLineage", "transformation": "IDENTITY", "createdAt": REWIRED_AT}
NEW_FACT = fact_key(NEW_EDGE)


def rewire(store: GraphStore, n_ds: int, width: int, chain: int, batch: int) -> float:
    """The second version of every lineage aspect and schema, at :data:`REWIRED_AT`; returns the seconds taken."""
    t = time.perf_counter()
    step = max(1, batch // width)
    for lo in range(0, n_ds, step):
        hi = min(n_ds, lo + step)
        rows = [i for i in range(lo, hi) if i % chain]
        store.run_rows(cy.statement("close_lineage"), [
            {"datasetUrn": ds(i), "source": "upstreamLineage", "at": REWIRED_AT,
             "keep": [[field_urn(ds(i), f"c{j}"), field_urn(ds(i - 1), f"c{j}"), FACT] for j in range(width)]}
            for i in rows], max(1, batch // width))
        store.run_rows(cy.statement("merge_field_edges"), [
            {"down": field_urn(ds(i), f"c{j}"), "up": field_urn(ds(i - 1), f"c{min(j + 2, width - 1)}"),
             "source": "upstreamLineage", "fact": NEW_FACT, "validFrom": REWIRED_AT,
             "props": {**NEW_EDGE, "fact": NEW_FACT, "lastSeen": REWIRED_AT}}
            for i in rows for j in range(width) if min(j + 2, width - 1) != j], batch)
        fields = [field_urn(ds(i), f"c{j}") for i in range(lo, hi) for j in range(width)]
        store.run_rows(cy.statement("archive_field_states"), [
            {"urn": u, "at": REWIRED_AT, "stateKey": "v2", "removed": False} for u in fields], batch)
        store.run_rows(cy.statement("set_field_props"), [
            {"urn": u, "props": {"type": "NumberType", "stateKey": "v2"}} for u in fields], batch)
        print(f"\rrewiring: {hi}/{n_ds} datasets, {time.perf_counter() - t:.0f}s", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return time.perf_counter() - t


def pct(xs: list[float], p: float) -> float:
    return round(sorted(xs)[min(len(xs) - 1, int(p * len(xs)))], 2)


def run(b: Backend, args: argparse.Namespace) -> dict[str, Any]:
    store = b.fresh("bench_as_of", args.batch)
    built, build_s = build_query_graph(store, args.fields, args.width, args.chain, args.batch)
    n_ds = built // args.width
    rewire_s = rewire(store, n_ds, args.width, args.chain, args.batch)
    g = LineageGraph(store)
    st = g.stats().to_json()
    rng = random.Random(args.seed)
    starts = [field_urn(ds(c * args.chain + args.chain - 1), f"c{rng.randrange(args.width)}")
              for c in (rng.randrange(n_ds // args.chain) for _ in range(args.queries + args.warmup))]
    modes: dict[str, int | None] = {"now": None, "asOfBefore": REWIRED_AT // 2, "asOfAfter": REWIRED_AT * 2}
    ms: dict[str, list[float]] = {m: [] for m in modes}
    hops: dict[str, list[int]] = {m: [] for m in modes}
    for n, s in enumerate(starts):
        order = list(modes.items())
        rng.shuffle(order)  # interleaved, in a random order per start: the machine is noisy
        for mode, as_of in order:
            t = time.perf_counter()
            res = g.upstream(s, depth=10, as_of=as_of)
            if n >= args.warmup:
                ms[mode].append((time.perf_counter() - t) * 1000)
                hops[mode].append(len(res.hops))
            assert max(h.depth for h in res.hops) == 10, (mode, s)
    g.close()
    out = {
        **b.info(), "fields": built, "datasets": n_ds, "presentEdges": st["dataDerivedFromEdges"],
        "pastEdges": st["pastDataDerivedFromEdges"], "pastFieldStates": st["pastFieldStates"],
        "buildSeconds": round(build_s, 1), "rewireSeconds": round(rewire_s, 1), "queries": args.queries,
        "depth": 10,
        **{f"{m}Ms": {"p50": pct(v, 0.5), "p95": pct(v, 0.95), "max": round(max(v), 2)} for m, v in ms.items()},
        "edgesPerResult": {m: round(statistics.mean(v), 1) for m, v in hops.items()},
        "ratio": {m: {"p50": round(pct(ms[m], 0.5) / pct(ms["now"], 0.5), 2),
                      "p95": round(pct(ms[m], 0.95) / pct(ms["now"], 0.95), 2)} for m in ("asOfBefore", "asOfAfter")},
        "peakRssMiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    print(json.dumps(out), file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fields", type=int, default=1_000_000, help="fields in the graph (default 1M)")
    ap.add_argument("--width", type=int, default=50, help="fields per dataset")
    ap.add_argument("--chain", type=int, default=20, help="datasets per lineage chain")
    ap.add_argument("--queries", type=int, default=200, help="timed starts (each asked three ways)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed starts first")
    ap.add_argument("--batch", type=int, default=2000, help="rows per UNWIND")
    ap.add_argument("--seed", type=int, default=7)
    add_arguments(ap)
    args = ap.parse_args()
    results = {}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            results[spec] = run(b, args)
    print(json.dumps({"results": results, "target": {"asOfOverNowP50Max": 2.0},
                      "met": {k: r["ratio"]["asOfBefore"]["p50"] <= 2.0 for k, r in results.items()},
                      "machine": machine()}, indent=1))


if __name__ == "__main__":
    main()
