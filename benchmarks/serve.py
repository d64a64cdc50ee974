"""``fieldgraph serve`` under load: the HTTP API next to the Python API it serves, in the same run.

    python benchmarks/serve.py                       # 1M-field query graph (takes a few minutes to build)
    python benchmarks/serve.py --fields 50000 --requests 400 --events 2000    # quick
    python benchmarks/serve.py --graph both          # embedded FalkorDB, then a Neo4j started for the run

The service is a real ``fieldgraph serve`` subprocess (``--rate-limit 0``, the write token in
``FIELDGRAPH_SERVE_TOKEN``) on loopback, over the benchmark's graph (``--graph URI --graph-name``; Neo4j's
credentials in ``NEO4J_USERNAME``/``NEO4J_PASSWORD``). ``--graph`` is as in ``benchmarks/backends.py``.
The load generator is ``--clients`` threads (default 16) in this process, each with its own keep-alive httpx
connection, sharing the machine with the service: figures compare within a run (``ratio``), not across machines.

Prints one JSON document per backend:

- ``reads``: the depth-10 upstream query (``GET /api/v1/lineage/upstream?field=...&depth=10``) on the query graph
  ``benchmarks/graph.py`` builds (chains of datasets, each field derived from two of the dataset before), from
  starts at chain ends (a seeded list of ``--starts``), ``--requests`` requests after ``--warmup`` untimed ones:
  ``http`` from ``--clients`` clients and from 1, next to ``LineageGraph.upstream(field, 10)`` in this process
  from 1 thread and from ``--clients`` threads (same starts); latency p50/p95/p99/max in ms, requests/s, errors
  (anything but 200). ``ratio``: HTTP over the Python API (latency: higher is slower; ``perS``: lower is slower).
- ``writes``: ``--events`` OpenLineage RunEvents (built with the openlineage-python client, serialized by its
  Serde: an input and an output dataset, a schema facet of ``--columns`` columns on each, and a columnLineage
  facet mapping each output column to its input column) POSTed to ``/api/v1/lineage`` with the bearer token from
  ``--clients`` clients (events/s, latency per request, non-201 answers), next to the same events (other dataset
  names) through the Python write path in one thread (``decode_event`` then ``LineageGraph.ingest``, in batches
  of 500 events as the service's writer). ``written``: what the graph holds afterwards (output datasets, edges
  into them) against what was sent.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
from backends import Backend, add_arguments, backend, build_query_graph, ds, machine, specs  # noqa: E402
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState  # noqa: E402
from openlineage.client.facet_v2 import column_lineage_dataset as cl  # noqa: E402
from openlineage.client.facet_v2 import schema_dataset as sd  # noqa: E402
from openlineage.client.serde import Serde  # noqa: E402

from fieldgraph.graph import LineageGraph  # noqa: E402
from fieldgraph.graph.plan import field_urn  # noqa: E402
from fieldgraph.ingest.platforms import DEFAULT_MAPPING  # noqa: E402
from fieldgraph.ingest.sources import decode_event  # noqa: E402

#: the query graph of benchmarks/graph.py (its defaults)
WIDTH, CHAIN, BATCH = 50, 20, 2000
GRAPH_NAME = "bench_serve"
DEPTH = 10
UPSTREAM = "/api/v1/lineage/upstream"
#: events per graph write on the direct path (the service's writer batches up to as many)
BATCH_EVENTS = 500
NAMESPACE = "postgres://bench:5432"
T0 = datetime(2025, 6, 1, tzinfo=UTC).timestamp()

T = TypeVar("T")


# ---- the service ----


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(b: Backend, token: str, tmp: Path) -> Iterator[str]:
    """``fieldgraph serve`` over the benchmark's graph on ``b``, as a subprocess, until the block ends: its URL."""
    env = {**os.environ, "FIELDGRAPH_SERVE_TOKEN": token}
    uri = b.uri
    parts = urlsplit(uri)
    if b.kind == "neo4j" and parts.username:  # credentials in the environment, never in the process list
        env |= {"NEO4J_USERNAME": unquote(parts.username), "NEO4J_PASSWORD": unquote(parts.password or "")}
        uri = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    exe = Path(sys.executable).with_name("fieldgraph")
    port = free_port()
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "fieldgraph.ingest.cli"]
    cmd += ["serve", "--port", str(port), "--graph", uri, "--rate-limit", "0", "--rejects", str(tmp / "rejects.jsonl")]
    if b.kind == "falkordb":
        cmd += ["--graph-name", GRAPH_NAME]
    log = tmp / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"fieldgraph serve did not start:\n{log.read_text()}")
            time.sleep(0.2)
        print(f"{b.label}: fieldgraph serve on {url}", file=sys.stderr, flush=True)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.returncode:
            print(f"fieldgraph serve exited with {proc.returncode}:\n{log.read_text()}", file=sys.stderr)


# ---- the load generator ----


@dataclass
class Load:
    """Latencies (ms), wall time and errors of one mode, over its rounds."""

    clients: int
    ms: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    errors: list[str] = field(default_factory=list)  # "" for an unexpected status, else the exception

    def run(self, items: Sequence[T], call: Callable[[int, T], bool]) -> Load:
        """``call(client, item)`` for every item, from ``clients`` threads started together (thread c takes items
        c, c + clients, ...); False or an exception is an error."""
        latencies: list[list[float]] = [[] for _ in range(self.clients)]
        start = threading.Barrier(self.clients + 1)

        def client(c: int) -> None:
            start.wait()
            for item in items[c::self.clients]:
                t = time.perf_counter()
                try:
                    if not call(c, item):
                        self.errors.append("")
                except Exception as exc:
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                latencies[c].append((time.perf_counter() - t) * 1000)

        threads = [threading.Thread(target=client, args=(c,)) for c in range(self.clients)]
        for th in threads:
            th.start()
        start.wait()
        t = time.perf_counter()
        for th in threads:
            th.join()
        self.wall_s += time.perf_counter() - t
        self.ms += [x for xs in latencies for x in xs]
        return self

    def summary(self) -> dict[str, Any]:
        ms = sorted(self.ms)

        def pct(p: float) -> float:
            return round(ms[min(len(ms) - 1, int(p * len(ms)))], 2)

        first = next((e for e in self.errors if e), None)
        return {"clients": self.clients, "requests": len(ms), "errors": len(self.errors),
                "p50": pct(0.5), "p95": pct(0.95), "p99": pct(0.99), "max": round(ms[-1], 2),
                "perS": round(len(ms) / self.wall_s, 1), **({"firstError": first} if first else {})}


def http_clients(url: str, n: int, headers: dict[str, str] | None = None) -> list[httpx.Client]:
    return [httpx.Client(base_url=url, headers=headers, timeout=120) for _ in range(n)]


def ratio(http: dict[str, Any], api: dict[str, Any]) -> dict[str, float]:
    return {k: round(http[k] / api[k], 2) for k in ("p50", "p95", "p99", "perS")}


# ---- reads ----


def bench_reads(g: LineageGraph, url: str, n_fields: int, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    chains = n_fields // WIDTH // CHAIN
    # chain ends, so that depth 10 is fully used (as benchmarks/graph.py)
    starts = [field_urn(ds(rng.randrange(chains) * CHAIN + CHAIN - 1), f"c{rng.randrange(WIDTH)}")
              for _ in range(args.starts)]
    warm = [starts[i % len(starts)] for i in range(args.warmup)]
    items = [starts[i % len(starts)] for i in range(args.requests)]
    clients = http_clients(url, args.clients)

    def http(c: int, urn: str) -> bool:
        return clients[c].get(UPSTREAM, params={"field": urn, "depth": DEPTH}).status_code == 200

    def api(_: int, urn: str) -> bool:
        return bool(g.upstream(urn, DEPTH).hops)

    hops: list[int] = []
    for urn in starts[:50]:  # the service answers what the API answers
        res = g.upstream(urn, DEPTH)
        body = clients[0].get(UPSTREAM, params={"field": urn, "depth": DEPTH}).json()
        assert len(body["hops"]) == len(res.hops) and max(h.depth for h in res.hops) == DEPTH, body
        hops.append(len(res.hops))
    Load(args.clients).run(warm, http)
    Load(1).run(warm, api)
    many = args.clients
    modes = {"api1": (Load(1), api), f"api{many}": (Load(many), api),
             "http1": (Load(1), http), f"http{many}": (Load(many), http)}
    for r in range(args.rounds):  # alternating: the machine is shared
        for mode, call in modes.values():
            mode.run(items[r::args.rounds], call)
        print(f"reads round {r + 1}/{args.rounds}: " + ", ".join(
            f"{name} p50 {statistics.median(m.ms):.1f} ms" for name, (m, _) in modes.items()), file=sys.stderr)
    for c in clients:
        c.close()
    out: dict[str, Any] = {"depth": DEPTH, "starts": len(starts), "warmup": len(warm), "rounds": args.rounds,
                           "edgesPerResult": round(statistics.mean(hops), 1),
                           **{name: mode.summary() for name, (mode, _) in modes.items()}}
    out["ratio"] = {"http1VsApi1": ratio(out["http1"], out["api1"]),
                    f"http{many}VsApi{many}": ratio(out[f"http{many}"], out[f"api{many}"]),
                    f"http{many}VsApi1": ratio(out[f"http{many}"], out["api1"])}
    return out


# ---- writes ----


def ol_event(prefix: str, i: int, columns: int) -> dict[str, Any]:
    """A COMPLETE RunEvent: ``{prefix}.src{i}`` -> ``{prefix}.dst{i}``, each output column from its input column."""
    names = [f"col{j}" for j in range(columns)]
    src, dst = f"{prefix}.src{i}", f"{prefix}.dst{i}"
    schema = sd.SchemaDatasetFacet(fields=[sd.SchemaDatasetFacetFields(n, "VARCHAR") for n in names])
    lineage = cl.ColumnLineageDatasetFacet(fields={
        n: cl.Fields(inputFields=[cl.InputField(NAMESPACE, src, n, transformations=[
            cl.Transformation(type="DIRECT", subtype="IDENTITY")])]) for n in names})
    when = datetime.fromtimestamp(T0 + i / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    event = RunEvent(eventType=RunState.COMPLETE, eventTime=when, run=Run(runId=str(uuid.uuid4())),
                     job=Job(namespace="bench", name=f"{prefix}.load{i}"), producer="https://example.test/bench",
                     inputs=[InputDataset(NAMESPACE, src, facets={"schema": schema})],
                     outputs=[OutputDataset(NAMESPACE, dst, facets={"schema": schema, "columnLineage": lineage})])
    return dict(Serde.to_dict(event))


def written(g: LineageGraph, prefix: str, lo: int, hi: int, columns: int) -> dict[str, Any]:
    """What the graph holds of events ``lo..hi-1`` of ``prefix``: output datasets and the edges into them."""
    urns = [DEFAULT_MAPPING.dataset_urn(NAMESPACE, f"{prefix}.dst{i}") for i in range(lo, hi)]
    datasets = g.query("MATCH (d:Dataset) WHERE d.urn IN $urns AND NOT coalesce(d.placeholder, false) "
                       "RETURN count(d) AS n", {"urns": urns})[0]["n"]
    edges = g.query("MATCH (d:Dataset)-[:HasField]->(:DatasetField)-[e:DataDerivedFrom]->() WHERE d.urn IN $urns "
                    "RETURN count(e) AS n", {"urns": urns})[0]["n"]
    return {"outputDatasets": datasets, "edges": edges, "expectedOutputDatasets": len(urns),
            "expectedEdges": len(urns) * columns, "complete": datasets == len(urns) and edges == len(urns) * columns}


def direct(g: LineageGraph, events: Sequence[tuple[int, dict[str, Any]]]) -> tuple[float, float]:
    """The Python write path: decode (each event its own origin), then ingest: the seconds each took."""
    t = time.perf_counter()
    changes = [c for i, e in events for c in decode_event(e, f"bench:{i}")]
    decode_s = time.perf_counter() - t
    t = time.perf_counter()
    report = g.ingest(changes, batch_events=BATCH_EVENTS)
    write_s = time.perf_counter() - t
    assert not report.refused, report.refused
    return decode_s, write_s


def bench_writes(g: LineageGraph, url: str, token: str, args: argparse.Namespace) -> dict[str, Any]:
    n, warm, rounds = args.events, max(1, args.events // 20), args.rounds
    bodies = [json.dumps(ol_event("http", i, args.columns)).encode() for i in range(warm + n)]
    events = [(i, ol_event("direct", i, args.columns)) for i in range(warm + n)]
    clients = http_clients(url, args.clients, {"Authorization": f"Bearer {token}",
                                               "Content-Type": "application/json"})

    def post(c: int, body: bytes) -> bool:
        return clients[c].post("/api/v1/lineage", content=body).status_code == 201

    warmup = Load(args.clients).run(bodies[:warm], post)  # untimed: connections, statement plans
    direct(g, events[:warm])
    http = Load(args.clients)
    decode_s = write_s = 0.0
    for r in range(rounds):  # alternating, in event order
        lo, hi = warm + n * r // rounds, warm + n * (r + 1) // rounds
        http.run(bodies[lo:hi], post)
        d, w = direct(g, events[lo:hi])
        decode_s, write_s = decode_s + d, write_s + w
        print(f"writes round {r + 1}/{rounds}: http {len(http.ms) / http.wall_s:.0f}/s, "
              f"api {n * (r + 1) // rounds / (decode_s + write_s):.0f}/s", file=sys.stderr, flush=True)
    for c in clients:
        c.close()
    api = {"events": n, "decodeS": round(decode_s, 3), "ingestS": round(write_s, 3),
           "perS": round(n / (decode_s + write_s), 1)}
    many = args.clients
    return {"events": n, "warmup": warm, "rounds": rounds, "columns": args.columns,
            "eventBytes": round(statistics.mean(map(len, bodies))),
            f"http{many}": http.summary(), "api1": api, "non201": len(warmup.errors) + len(http.errors),
            "ratio": {f"http{many}VsApi1": round(n / http.wall_s / api["perS"], 2)},
            "written": {"http": written(g, "http", 0, warm + n, args.columns),
                        "api": written(g, "direct", 0, warm + n, args.columns)}}


# ---- the run ----


def run(b: Backend, args: argparse.Namespace) -> dict[str, Any]:
    store = b.fresh(GRAPH_NAME, BATCH)
    built, build_s = build_query_graph(store, args.fields, WIDTH, CHAIN, BATCH)
    g = LineageGraph(store)
    st = g.stats().to_json()
    token = secrets.token_urlsafe(24)
    try:
        with tempfile.TemporaryDirectory(prefix="fgbench-serve-") as tmp, serve(b, token, Path(tmp)) as url:
            reads = bench_reads(g, url, built, args)
            writes = bench_writes(g, url, token, args)
    finally:
        g.close()
    return {**b.info(), "graph": {"fields": built, "edges": st["dataDerivedFromEdges"], "datasets": st["datasets"],
                                  "buildSeconds": round(build_s, 1)},
            "service": "fieldgraph serve --rate-limit 0 (one uvicorn worker), load generator on loopback: "
                       f"{args.clients} threads, keep-alive httpx",
            "reads": reads, "writes": writes, "machine": machine()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fields", type=int, default=1_000_000, help="fields in the query graph (default 1M)")
    ap.add_argument("--clients", type=int, default=16, help="concurrent clients (and API threads)")
    ap.add_argument("--requests", type=int, default=2000, help="timed upstream queries per mode")
    ap.add_argument("--warmup", type=int, default=200, help="untimed upstream queries first")
    ap.add_argument("--starts", type=int, default=500, help="start fields in the seeded list")
    ap.add_argument("--events", type=int, default=5000, help="OpenLineage events per write path")
    ap.add_argument("--columns", type=int, default=20, help="columns per event (schema and column lineage)")
    ap.add_argument("--rounds", type=int, default=4, help="alternating rounds of the modes compared")
    ap.add_argument("--seed", type=int, default=7)
    add_arguments(ap)
    args = ap.parse_args()
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            print(json.dumps({b.key: run(b, args)}, indent=2), flush=True)


if __name__ == "__main__":
    main()
