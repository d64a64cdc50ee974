"""The graph backends the benchmarks run on (``--graph``), behind the one store interface.

- ``embedded`` (default): an embedded FalkorDB in a tmp data folder, stopped at the end;
- ``neo4j``: a Neo4j 5.26 Community from ``tests/services.py`` (jars from Maven Central) in a tmp folder,
  stopped at the end (``--neo4j-heap``, ``--neo4j-pagecache``);
- a URI of a running server (``bolt://user:pass@host:7687``, ``neo4j://...``, ``falkordb://host:port``,
  ``falkordb+unix:///path/to/sock``). Its data is cleared: a Neo4j database (Community has one) as a whole,
  on a FalkorDB server only the benchmark's own graphs (``bench_*``; a graph the URI names is not used);
  a non-empty Neo4j database is refused unless ``--clear-neo4j``;
- ``both``: ``embedded`` then ``neo4j``, one after the other in the same run.

Every phase gets :meth:`Backend.fresh`: a store on an empty graph with the schema (indexes, unique
constraints) in place, so the benchmarks have one code path for every backend.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.services

from fieldgraph.bulk import gc_paused  # noqa: E402
from fieldgraph.graph import EmbeddedServer, GraphStore, LineageGraph, open_store  # noqa: E402
from fieldgraph.graph import cypher as cy  # noqa: E402
from fieldgraph.graph.history import fact_key  # noqa: E402
from fieldgraph.graph.plan import field_urn  # noqa: E402
from fieldgraph.graph.write import Writer  # noqa: E402


def timed(fn):  # type: ignore[no-untyped-def]
    """``fn()``'s result and the seconds it took."""
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def ds(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,bench.t{i},PROD)"


def history_events(datasets: int, steps: int, width: int, urn: Callable[[int], str] = ds) -> list[dict[str, Any]]:
    """DataHub events: per step, each dataset's schema (``width`` string fields, one more each step) and its field
    lineage from the dataset before it (the first from itself); datasets named by ``urn``."""
    def col(j: int) -> dict[str, Any]:
        return {"fieldPath": f"c{j}", "nullable": True, "type": {"type": {"com.linkedin.schema.StringType": {}}},
                "nativeDataType": "string", "recursive": False, "isPartOfKey": False}

    out = []
    for step in range(steps):
        for i in range(datasets):
            aspect = {"schemaName": f"t{i}", "platform": "urn:li:dataPlatform:hive", "version": step, "hash": "",
                      "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
                      "fields": [col(j) for j in range(width + step)]}
            out.append({"entityType": "dataset", "entityUrn": urn(i), "changeType": "UPSERT",
                        "aspectName": "schemaMetadata", "systemMetadata": {"lastObserved": 1000 + step},
                        "aspect": {"value": json.dumps(aspect), "contentType": "application/json"}})
            fgl = [{"upstreamType": "FIELD_SET", "upstreams": [f"urn:li:schemaField:({urn(max(i - 1, 0))},c{j})"],
                    "downstreamType": "FIELD", "downstreams": [f"urn:li:schemaField:({urn(i)},c{j})"],
                    "transformOperation": "IDENTITY"} for j in range(width)]
            out.append({"entityType": "dataset", "entityUrn": urn(i), "changeType": "UPSERT",
                        "aspectName": "upstreamLineage", "systemMetadata": {"lastObserved": 2000 + step},
                        "aspect": {"value": json.dumps({"upstreams": [], "fineGrainedLineages": fgl}),
                                   "contentType": "application/json"}})
    return out


def report(out: dict[str, Any], path: str | Path | None) -> None:
    """A benchmark's JSON, with the machine it ran on: printed, and written to ``path`` when given."""
    out["machine"] = machine()
    text = json.dumps(out, indent=2)
    print(text)
    if path:
        Path(path).write_text(text + "\n")


#: the property every benchmark field edge carries (and its fact key: graph/history.py)
EDGE_PROPS = {"source": "upstreamLineage", "transformation": "IDENTITY", "createdAt": 1}


def write_datasets(store: GraphStore, lo: int, hi: int, width: int, chain: int, batch: int) -> None:
    """Datasets ``lo..hi-1`` with their fields, HasField edges and DataDerivedFrom edges (field j from fields
    j and j+1 of the dataset before, within chains of ``chain`` datasets), by raw UNWIND statements, all holding
    from time 1."""
    store.run_rows(cy.statement("upsert_datasets"), [
        {"urn": ds(i), "props": {"platform": "hive", "name": f"bench.t{i}", "env": "PROD", "placeholder": False,
                                 "schemaVersion": 0, "schemaTs": 1, "schemaTimes": [1]}} for i in range(lo, hi)], batch)
    store.run_rows(cy.statement("upsert_fields"), [
        {"datasetUrn": ds(i), "urn": field_urn(ds(i), f"c{j}"), "at": 1,
         "props": {"datasetUrn": ds(i), "fieldPath": f"c{j}", "simplePath": f"c{j}", "type": "StringType",
                   "placeholder": False, "removed": False, "schemaVersion": 0, "schemaTs": 1, "stateKey": "v1"}}
        for i in range(lo, hi) for j in range(width)], batch)
    store.run_rows(cy.statement("merge_field_edges"), [
        {"down": field_urn(ds(i), f"c{j}"), "up": field_urn(ds(i - 1), f"c{k}"), "source": "upstreamLineage",
         "fact": FACT, "validFrom": 1, "props": {**EDGE_PROPS, "fact": FACT, "lastSeen": 1}}
        for i in range(lo, hi) if i % chain for j in range(width) for k in {j, min(j + 1, width - 1)}], batch)


FACT = fact_key(EDGE_PROPS)


def build_query_graph(store: GraphStore, n_fields: int, width: int, chain: int, batch: int,
                      budget_s: float | None = None) -> tuple[int, float]:
    """Chains of ``chain`` datasets of ``width`` fields; field j of a dataset derives from fields j and j+1
    of the dataset before it. Built with large raw UNWIND batches, in dataset order: with ``budget_s``,
    the build stops after the batch that goes over it (the queries then start in the complete chains).
    The fields built and the seconds taken."""
    n_ds = n_fields // width
    t = time.perf_counter()
    hi = 0
    for lo in range(0, n_ds, max(1, batch // width)):
        if budget_s is not None and time.perf_counter() - t > budget_s:
            print(f"\nbuild budget of {budget_s:g}s reached", end="", file=sys.stderr)
            break
        hi = min(n_ds, lo + max(1, batch // width))
        write_datasets(store, lo, hi, width, chain, batch)
        print(f"\rbuilding query graph: {hi * width}/{n_ds * width} fields, {time.perf_counter() - t:.0f}s",
              end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return hi * width, time.perf_counter() - t



LABELS = {"embedded": "embedded FalkorDB", "neo4j": "Neo4j 5.26 Community"}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--graph", default="embedded",
                    help="embedded (default), neo4j (a Neo4j started for the run), both (embedded then neo4j), "
                         "or the URI of a running server: bolt://user:pass@host:7687, falkordb://host:6379")
    ap.add_argument("--neo4j-heap", default="2g", help="heap of the Neo4j started with --graph neo4j/both")
    ap.add_argument("--neo4j-pagecache", default="2g", help="page cache of the Neo4j started with --graph neo4j/both")
    ap.add_argument("--clear-neo4j", action="store_true",
                    help="with the URI of a running Neo4j: clear its database even if it holds data")


def specs(graph: str) -> list[str]:
    return ["embedded", "neo4j"] if graph == "both" else [graph]


@dataclass
class Backend:
    key: str  # "embedded", "neo4j" or the URI given
    label: str
    kind: str  # "falkordb" or "neo4j"
    uri: str  # what open_store opens (with credentials: never printed)
    owned: bool  # started for this run (and thrown away after it)
    settings: dict[str, Any]
    used: set[str] = field(default_factory=set)
    pid: int | None = None  # the server process started for the run (redis-server, java), for its memory

    def fresh(self, graph: str, batch: int | None = None) -> GraphStore:
        """A store on an empty graph ``graph`` (FalkorDB; Neo4j has the one database) with the schema."""
        self.used.add(graph)
        store = open_store(self.uri, graph=graph, schema=False, **({"batch_size": batch} if batch else {}))
        store.clear()
        store.ensure_schema()
        return store

    def info(self) -> dict[str, Any]:
        return {"backend": self.label, **self.settings}


def _redact(uri: str) -> str:
    p = urlsplit(uri)
    if p.password is None:
        return uri
    return uri.replace(p.netloc, f"{p.username or ''}:***@{p.hostname}" + (f":{p.port}" if p.port else ""), 1)


@contextlib.contextmanager
def backend(spec: str, args: argparse.Namespace) -> Iterator[Backend]:
    """The backend ``spec`` names, up for the ``with`` block (a server started here is stopped after it)."""
    # SIGTERM (kill, a CI timeout) as an exit, so that a server started here is stopped, not orphaned
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if spec == "embedded":
        with tempfile.TemporaryDirectory(prefix="fgbench-") as tmp:
            server = EmbeddedServer(Path(tmp) / "d").start()
            try:
                yield Backend("embedded", LABELS["embedded"], "falkordb", f"falkordb+unix://{server.socket}", True,
                              {}, pid=server.process.pid if server.process else None)
            finally:
                server.stop()
    elif spec == "neo4j":
        from tests.services import Neo4jServer

        with tempfile.TemporaryDirectory(prefix="fgbench-neo4j-") as tmp:
            print(f"starting Neo4j (heap {args.neo4j_heap}, page cache {args.neo4j_pagecache}) ...",
                  file=sys.stderr, flush=True)
            server = Neo4jServer(Path(tmp) / "neo4j", heap=args.neo4j_heap, pagecache=args.neo4j_pagecache).start()
            try:
                yield Backend("neo4j", LABELS["neo4j"], "neo4j", server.uri, True,
                              {"heap": args.neo4j_heap, "pagecache": args.neo4j_pagecache},
                              pid=server.process.pid if server.process else None)
            finally:
                server.stop()
    elif spec.split(":", 1)[0].lower() == "embedded":
        raise SystemExit(f"--graph {spec}: use --graph embedded (a tmp data folder), or the URI of a running server")
    else:
        store = open_store(spec, schema=False)  # fails early, with the store's message, on a bad URI
        try:
            kind = store.backend
            if kind == "neo4j" and not args.clear_neo4j and store.run("MATCH (n) RETURN 1 AS x LIMIT 1"):
                raise SystemExit(f"{store.describe()} holds data and the benchmark clears it: "
                                 "pass --clear-neo4j to go ahead, or give an empty database")
            label = f"{'Neo4j' if kind == 'neo4j' else 'FalkorDB'} at {_redact(spec)}"
        finally:
            store.close()
        uri = spec
        if kind == "falkordb":  # the benchmark's own graphs (bench_*), never one the URI names
            p = urlsplit(spec)
            uri = urlunsplit(p._replace(path="" if p.hostname else p.path, query=""))
        b = Backend(spec, label, kind, uri, False, {})
        try:
            yield b
        finally:  # leave a running server as it was: without the benchmark's graphs
            for name in sorted(b.used):
                with contextlib.suppress(Exception), open_store(uri, graph=name, schema=False) as store:
                    store.clear()


def record_ingest(g: LineageGraph, changes: list, batch_events: int) -> tuple[float, list]:
    """``LineageGraph.ingest`` (read state, plan, apply) timed, keeping the plans it applies so that the
    raw store can be fed the very same statements and rows (:func:`replay`)."""
    plans: list = []
    apply = Writer.apply

    def recording(self: Writer, plan: Any) -> None:
        plans.append(plan)
        apply(self, plan)

    Writer.apply = recording  # type: ignore[method-assign]
    try:
        t = time.perf_counter()
        g.ingest(changes, batch_events=batch_events)
        return time.perf_counter() - t, plans
    finally:
        Writer.apply = apply  # type: ignore[method-assign]


def replay(g: LineageGraph, plans: list) -> float:
    """The raw store: the recorded ``UNWIND $rows ... MERGE`` statements and rows, sent as they are (no state
    read, no planning), with the same GC setting as ``LineageGraph.ingest``."""
    writer = g.writer()
    with gc_paused():
        t = time.perf_counter()
        for p in plans:
            writer.apply(p)
        return time.perf_counter() - t


def machine() -> dict[str, Any]:
    """Where the figures come from: they only compare within one run on one machine."""
    mem = None
    with contextlib.suppress(OSError, ValueError):
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    load = None
    with contextlib.suppress(OSError):
        load = [round(x, 2) for x in os.getloadavg()]
    return {"cpus": os.cpu_count(), "memoryGiB": mem, "python": platform.python_version(),
            "loadAverageAtEnd": load}
