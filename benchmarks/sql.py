"""SQL lineage: deriving it, and what deriving costs in the write path, on each graph backend.

    python benchmarks/sql.py --graph both      # embedded FalkorDB, then Neo4j

Inputs: the column-lineage corpus of the tests (``tests/sql/corpus.json``, 119 statements over the warehouse of
``tests/sql/warehouse.avsc``), and a wide statement (``--wide`` columns: a three-layer CTE over ``SELECT *``
with a join, a filter and an aggregate per column).

Prints JSON: ``derive`` (pure: parse, qualify, walk) statements/s and edges/s over the corpus, and the wide
statement's time; per backend, best of ``--repeat`` on a fresh graph: ``sqlS``, the corpus written as SQL
changes (derived in the write path against the schemas read from the graph), ``edgesS``, the same lineage
written as the job lineage changes it becomes (derived beforehand), and their ratio.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import add_arguments, backend, machine, specs, timed  # noqa: E402

from fieldgraph.changes import SchemaChange, SqlChange  # noqa: E402
from fieldgraph.graph import LineageGraph  # noqa: E402
from fieldgraph.graph.sql import Derived, derive_each  # noqa: E402
from fieldgraph.normalizers import make_dataset_urn, normalize, v1_path  # noqa: E402
from fieldgraph.sqllineage import derive, parse_statements  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = json.loads((ROOT / "tests" / "sql" / "corpus.json").read_text())
TABLES = {r["name"]: json.dumps(r) for r in json.loads((ROOT / "tests" / "sql" / "warehouse.avsc").read_text())}


def urn(table: str) -> str:
    return make_dataset_urn("hive", f"shop.{table}")


def corpus_changes() -> list[object]:
    out: list[object] = [SchemaChange(urn(t), tuple(normalize(text, "avro")), ts=1) for t, text in TABLES.items()]
    for case in CORPUS:
        if case.get("error") or case.get("schemas_missing"):
            continue
        (st,) = [s for s in parse_statements(case["sql"], case["dialect"]) if s.kind != "other"]
        out.append(SqlChange(urn(st.target or case["target"]), case["id"], st.text, st.dialect,
                             tuple((t, urn(t)) for t in st.tables), st.target or case["target"], ts=2,
                             origin=case["id"]))
    return out


def wide(n: int) -> tuple[str, dict[str, list[str]]]:
    cols = [f"c{i}" for i in range(n)]
    sql = ("INSERT INTO wide_out WITH a AS (SELECT * FROM wide_in WHERE c0 > 0), "
           "b AS (SELECT a.*, d.k AS dk FROM a JOIN dims d ON a.c1 = d.k), "
           f"c AS (SELECT c2, {', '.join(f'SUM({c}) AS s_{c}' for c in cols[3:])} FROM b GROUP BY c2) "
           "SELECT * FROM c")
    return sql, {"wide_in": cols, "dims": ["k", "name"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--wide", type=int, default=500, help="columns of the wide statement")
    add_arguments(ap)
    args = ap.parse_args()

    schemas = {t: list(dict.fromkeys(v1_path(f.fieldPath) for f in normalize(text, "avro")))
               for t, text in TABLES.items()}
    cases = [c for c in CORPUS if not c.get("error")]

    def derive_corpus() -> int:
        n = 0
        for c in cases:
            (st,) = [s for s in parse_statements(c["sql"], c["dialect"]) if s.kind != "other"]
            n += len(derive(st, {k: v for k, v in schemas.items() if k not in c.get("schemas_missing", ())},
                            c.get("target")).edges)
        return n

    edges, best = min((timed(derive_corpus) for _ in range(args.repeat)), key=lambda r: r[1])
    sql, wide_schemas = wide(args.wide)
    (st,), parse_s = timed(lambda: [s for s in parse_statements(sql, "spark") if s.kind != "other"])
    lineage, wide_s = timed(lambda: derive(st, wide_schemas))
    out: dict[str, object] = {
        "machine": machine(),
        "derive": {"statements": len(cases), "edges": int(edges), "seconds": round(best, 3),
                   "statementsPerS": round(len(cases) / best, 1), "edgesPerS": round(edges / best)},
        "wide": {"columns": args.wide, "edges": len(lineage.edges), "parseS": round(parse_s, 3),
                 "deriveS": round(wide_s, 3)},
    }
    changes = corpus_changes()
    results: dict[str, dict[str, float]] = {}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            times: dict[str, float] = {}
            for k in range(args.repeat):
                g = LineageGraph(b.fresh(f"bench_sql_{k}"))
                g.write([c for c in changes if isinstance(c, SchemaChange)])
                sqls = [c for c in changes if isinstance(c, SqlChange)]
                _, sql_s = timed(lambda: g.write(sqls))  # noqa: B023
                n_edges = g.stats().data_derived_from_edges
                g2 = LineageGraph(b.fresh(f"bench_sql_edges_{k}"))
                g2.write([c for c in changes if isinstance(c, SchemaChange)])
                state = g2.read_state([c.dataset for c in changes if isinstance(c, SchemaChange)])
                jobs = [d.change for d in derive_each(sqls, state) if isinstance(d, Derived)]
                _, edges_s = timed(lambda: g2.write(jobs))  # noqa: B023
                assert g2.stats().data_derived_from_edges == n_edges
                times["sqlS"] = min(times.get("sqlS", sql_s), sql_s)
                times["edgesS"] = min(times.get("edgesS", edges_s), edges_s)
            results[b.key] = {"statements": len(sqls), "edges": n_edges, **{k: round(v, 3) for k, v in times.items()},
                              "sqlVsEdges": round(times["sqlS"] / times["edgesS"], 2)}
        print(json.dumps({b.key: results[b.key]}), file=sys.stderr, flush=True)
    out["backends"] = results
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
