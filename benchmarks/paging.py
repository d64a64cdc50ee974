"""Paging through a large impact answer over HTTP, next to the whole answer, in the same run.

    python benchmarks/paging.py                          # a 100k-field impact answer, pages of 1000
    python benchmarks/paging.py --fields 2000 --page-size 100 --rounds 1   # quick
    python benchmarks/paging.py --graph neo4j            # on a Neo4j started for the run

``--graph`` is as in ``benchmarks/backends.py``. The graph is a fan-out tree built by raw UNWIND statements: a
root field, each field of a level derived by ``--fan-out`` fields of a dataset of its own on the next level, until
``--fields`` fields are downstream of the root. The service (``fieldgraph serve``'s app, on loopback, in a thread
of this process) answers ``GET /api/v1/impact?name=ROOT`` with the time budget ``--budget``.

Prints one JSON object per backend:

- ``whole``: the whole answer (no ``limit``), ``--rounds`` times: seconds p50/max, its edges and bytes.
- ``pages``: ``--rounds`` times, every page of ``limit=--page-size`` from the first to the last (``next`` null):
  ``firstS`` (the first page walks the answer as of its pinned instant, sorts and keeps it), ``pageMs`` p50/p95/max
  of the later pages (each from the kept answer), ``allS`` (the whole paging through), the pages and edges seen
  (``complete``: their count is the whole answer's, each edge once).
- ``ratio``: ``firstPage`` and ``allPages`` over the whole answer's p50; ``pageP50`` (a later page's p50 over the
  whole answer's).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
import uvicorn  # noqa: E402
from backends import EDGE_PROPS, FACT, Backend, add_arguments, backend, report, specs  # noqa: E402

from fieldgraph.graph import GraphStore, LineageGraph  # noqa: E402
from fieldgraph.graph import cypher as cy  # noqa: E402
from fieldgraph.graph.plan import field_urn  # noqa: E402
from fieldgraph.ingest.config import ServeConfig  # noqa: E402
from fieldgraph.ingest.service import create_app  # noqa: E402


def tree_ds(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,paging.t{i},PROD)"


def build_tree(store: GraphStore, fields: int, fan_out: int, batch: int) -> tuple[str, int, float]:
    """The fan-out tree: the root field (``t0.c0``), then level by level one dataset of ``fan_out`` fields per
    field of the level before, each field derived from that one, until ``fields`` fields are below the root.
    The root's URN, the fields below it, the seconds taken."""
    t = time.perf_counter()
    datasets: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []

    def dataset(i: int, width: int, parent: str | None) -> list[str]:
        urn = tree_ds(i)
        datasets.append({"urn": urn, "props": {"platform": "hive", "name": f"paging.t{i}", "env": "PROD",
                                               "placeholder": False, "schemaVersion": 0, "schemaTs": 1,
                                               "schemaTimes": [1]}})
        out = []
        for j in range(width):
            f = field_urn(urn, f"c{j}")
            rows.append({"datasetUrn": urn, "urn": f, "at": 1,
                         "props": {"datasetUrn": urn, "fieldPath": f"c{j}", "simplePath": f"c{j}", "type": "StringType",
                                   "placeholder": False, "removed": False, "schemaVersion": 0, "schemaTs": 1,
                                   "stateKey": "v1"}})
            if parent is not None:
                edges.append({"down": f, "up": parent, "source": "upstreamLineage", "fact": FACT, "validFrom": 1,
                              "props": {**EDGE_PROPS, "fact": FACT, "lastSeen": 1}})
            out.append(f)
        return out

    root = dataset(0, 1, None)[0]
    level, below, n_ds = [root], 0, 1
    while below < fields:
        nxt: list[str] = []
        for parent in level:
            if below >= fields:
                break
            width = min(fan_out, fields - below)
            nxt += dataset(n_ds, width, parent)
            n_ds += 1
            below += width
        level = nxt
    store.run_rows(cy.statement("upsert_datasets"), datasets, batch)
    store.run_rows(cy.statement("upsert_fields"), rows, batch)
    store.run_rows(cy.statement("merge_field_edges"), edges, batch)
    return root, below, time.perf_counter() - t


@contextmanager
def serving(g: LineageGraph) -> Iterator[httpx.Client]:
    """The service's app over ``g`` on a free loopback port (uvicorn in a thread), and a client to it."""
    with tempfile.TemporaryDirectory(prefix="fgbench-paging-") as tmp:
        config = ServeConfig(rate_limit=0, rejects=Path(tmp) / "rejects.jsonl")
        server = uvicorn.Server(uvicorn.Config(create_app(g, config), host="127.0.0.1", port=0, log_config=None,
                                               lifespan="on"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the service did not start")
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as http:
                yield http
        finally:
            server.should_exit = True
            thread.join(timeout=30)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def get(http: httpx.Client, **params: Any) -> tuple[dict[str, Any], float, int]:
    t = time.perf_counter()
    r = http.get("/api/v1/impact", params=params)
    dt = time.perf_counter() - t
    if r.status_code != 200:
        raise RuntimeError(f"{r.status_code}: {r.text[:500]}")
    return r.json(), dt, len(r.content)


def run(b: Backend, args: argparse.Namespace) -> dict[str, Any]:
    store = b.fresh("paging", args.batch)
    g = LineageGraph(store)
    try:
        print(f"{b.label}: building a fan-out tree of {args.fields} fields ...", file=sys.stderr, flush=True)
        root, below, build_s = build_tree(store, args.fields, args.fan_out, args.batch)
        with serving(g) as http:
            wholes: list[float] = []
            edges = size = 0
            partial = False
            for _ in range(args.rounds):
                body, dt, size = get(http, name=root, budget=args.budget)
                wholes.append(dt)
                edges, partial = len(body["hops"]), body["partial"]
            firsts: list[float] = []
            later: list[float] = []
            alls: list[float] = []
            pages = seen = total = 0
            complete = exact = True
            for _ in range(args.rounds):
                keys: set[tuple[str, str]] = set()
                t0 = time.perf_counter()
                body, dt, _ = get(http, name=root, budget=args.budget, limit=args.page_size)
                firsts.append(dt)
                pages, total, exact = 1, body["total"], body["totalExact"]
                keys.update((h["from"], h["urn"]) for h in body["hops"])
                n = len(body["hops"])
                while body["next"] is not None:
                    body, dt, _ = get(http, name=root, budget=args.budget, limit=args.page_size, cursor=body["next"])
                    later.append(dt)
                    pages += 1
                    n += len(body["hops"])
                    keys.update((h["from"], h["urn"]) for h in body["hops"])
                alls.append(time.perf_counter() - t0)
                seen = n
                complete = complete and n == len(keys) == total == edges
        whole_p50 = statistics.median(wholes)
        page_p50 = statistics.median(later) if later else None
        return {
            "graph": {"fieldsBelowRoot": below, "fanOut": args.fan_out, "buildS": round(build_s, 1)},
            "whole": {"s": {"p50": round(whole_p50, 3), "max": round(max(wholes), 3)}, "edges": edges,
                      "bytes": size, "partial": partial, "rounds": args.rounds},
            "pages": {"pageSize": args.page_size, "pages": pages, "edges": seen, "total": total, "totalExact": exact,
                      "complete": complete, "firstS": {"p50": round(statistics.median(firsts), 3),
                                                       "max": round(max(firsts), 3)},
                      "pageMs": None if not later else {"p50": round(pct(later, 50) * 1000, 2),
                                                        "p95": round(pct(later, 95) * 1000, 2),
                                                        "max": round(max(later) * 1000, 2)},
                      "allS": {"p50": round(statistics.median(alls), 3), "max": round(max(alls), 3)}},
            "ratio": {"firstPage": round(statistics.median(firsts) / whole_p50, 3),
                      "allPages": round(statistics.median(alls) / whole_p50, 3),
                      "pageP50": None if page_p50 is None else round(page_p50 / whole_p50, 4)},
        }
    finally:
        store.clear()
        g.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    ap.add_argument("--fields", type=int, default=100_000, help="fields downstream of the root (default 100000)")
    ap.add_argument("--fan-out", type=int, default=10, help="fields derived from each field (default 10)")
    ap.add_argument("--page-size", type=int, default=1000, help="limit of each page (default 1000)")
    ap.add_argument("--rounds", type=int, default=3, help="whole answers and page-throughs timed (default 3)")
    ap.add_argument("--budget", type=float, default=60.0, help="the walks' time budget, seconds (default 60)")
    ap.add_argument("--batch", type=int, default=5000, help="rows per UNWIND while building (default 5000)")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    out: dict[str, Any] = {"benchmark": "paging", "backends": {}}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            out["backends"][b.key] = {**b.info(), **run(b, args)}
    report(out, args.out)


if __name__ == "__main__":
    main()
