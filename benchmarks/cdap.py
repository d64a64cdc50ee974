"""CDAP's large case on each graph backend: decode, plan and write it end to end.

CDAP's own test of it (``FieldLineageInfoTest.testLargeLineageOperation``, limit 10 s): 100 fields through five
layers of an identity transform per field then one all-to-all transform, written into one dataset, so every
written field comes from every read field (10,000 field edges, 507 operations). fieldgraph's target: under 1 s
end to end (decode + plan + write) on the embedded graph.

    python benchmarks/cdap.py --graph both      # embedded FalkorDB, then Neo4j

Prints JSON: per backend, the best of ``--repeat`` runs on a fresh graph of each phase (``decode``: event to
changes; ``write``: plan and write), ``endToEnd`` and its ratio to the target; ``again``: a later run of the same
program into the same graph (the edges exist; its operations are stored already); ``query``: the time-ranged
lineage of one written field (its 100 sources and 507 operations, answered from the run's stored operations),
``queryFirst`` the first such question (Neo4j compiles each statement the first time it sees it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import add_arguments, backend, machine, specs, timed  # noqa: E402

from fieldgraph.graph import LineageGraph  # noqa: E402
from fieldgraph.graph.plan import field_urn  # noqa: E402
from fieldgraph.ingest.sources import decode_event  # noqa: E402

T0 = 1735689600000
TARGET_S = 1.0


def large_event(n: int, layers: int, run: str, time_ms: int) -> dict:
    fields = [f"num{i}" for i in range(n)]
    ops: list[dict] = [{"type": "READ", "name": "read", "source": {"name": "start"}, "outputs": fields}]
    prev = "read"
    for layer in range(1, layers + 1):
        ops += [{"type": "TRANSFORM", "name": f"identity{layer}.{i}", "inputs": [{"origin": prev, "name": x}],
                 "outputs": [x]} for i, x in enumerate(fields)]
        ops.append({"type": "TRANSFORM", "name": f"alltoall{layer}", "outputs": fields,
                    "inputs": [{"origin": f"identity{layer}.{i}", "name": x} for i, x in enumerate(fields)]})
        prev = f"alltoall{layer}"
    ops.append({"type": "WRITE", "name": "write", "destination": {"name": "dest"},
                "inputs": [{"origin": prev, "name": x} for x in fields]})
    return {"programRun": "default.Large.workflow.AllToAll", "run": run, "time": time_ms, "operations": ops}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fields", type=int, default=100)
    ap.add_argument("--layers", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    add_arguments(ap)
    args = ap.parse_args()
    ev = large_event(args.fields, args.layers, "run-1", T0)
    results: dict[str, dict] = {}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            best: dict[str, float] = {}
            for k in range(args.repeat):
                g = LineageGraph(b.fresh(f"bench_cdap_{k}"))
                changes, decode_s = timed(lambda: decode_event(ev))
                _, write_s = timed(lambda: g.write(changes))  # noqa: B023
                edges = g.stats().data_derived_from_edges
                assert edges == args.fields ** 2, edges
                for name, s in (("decode", decode_s), ("write", write_s), ("endToEnd", decode_s + write_s)):
                    best[name] = min(best.get(name, s), s)
            later = large_event(args.fields, args.layers, "run-2", T0 + 86_400_000)
            _, again_s = timed(lambda: g.write(decode_event(later)))  # noqa: B023
            dest = "urn:li:dataset:(urn:li:dataPlatform:cdap,default.dest,PROD)"
            res, first_s = timed(lambda: g.field_lineage(field_urn(dest, "num0")))  # noqa: B023
            assert len(res.summary[0].fields) == args.fields
            _, query_s = timed(lambda: g.field_lineage(field_urn(dest, "num1")))  # noqa: B023
            results[b.key] = {"edges": args.fields ** 2, **{f"{k}S": round(v, 3) for k, v in best.items()},
                              "againS": round(again_s, 3), "queryFirstS": round(first_s, 3),
                              "queryS": round(query_s, 3),
                              "endToEndVsTarget": round(best["endToEnd"] / TARGET_S, 2), "targetS": TARGET_S}
        print(json.dumps({b.key: results[b.key]}), file=sys.stderr, flush=True)
    print(json.dumps({"machine": machine(), "backends": results}, indent=2))


if __name__ == "__main__":
    main()
