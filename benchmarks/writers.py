"""Writers side by side: 1, 2 and 4 writer processes on disjoint datasets, each holding only its batches' locks.

    python benchmarks/writers.py                          # embedded FalkorDB, directly and behind the proxy
    python benchmarks/writers.py --graph both --groups 4 --datasets 40 --steps 3
    python benchmarks/writers.py --graph neo4j --writers 1,2 --delay-ms 0.5

The events: ``--groups`` chains of ``--datasets`` datasets each (schema versions and field lineage from each
dataset to the one before it in its chain, ``--steps`` versions), so that no two groups share a dataset. For
N writers, writer i ingests groups i, i+N, ...: the same events in total for every N. Each writer is a process
(``multiprocessing``, spawned) calling ``LineageGraph.ingest`` with ``--batch`` events per batch on its own
connection; all start together, on an empty graph. Each run is made twice per backend (``--graph``, see
``benchmarks/backends.py``): ``direct``, and ``proxied``: the writers reach the store through a TCP proxy on
127.0.0.1 (in this process) that delays every chunk, in each direction, by ``--delay-ms`` (a network hop).

Untimed runs come first (``--warmup``); then ``--rounds`` rounds, each of every path and writer count (so
that a server warming up, or a machine busy for a while, weighs on every point alike); a point is the median.
Prints JSON: per backend and path, per writer count: ``eventsPerS`` (all events / wall time from the start to
the last writer's end), ``lockWaitShare`` (the writers' seconds in taking writer locks, ``store.lock_wait_s``,
over their seconds writing; the mean and the largest), and ``speedup`` = eventsPerS(N) / eventsPerS(1) for
N = 2 and 4. The target (Neo4j, proxied): 2 writers >= 1.5x one, lock wait < 5% of the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backends import Backend, add_arguments, backend, history_events, report, specs  # noqa: E402

from fieldgraph.graph import LineageGraph, open_store  # noqa: E402
from fieldgraph.ingest.sources import decode_event  # noqa: E402


def ds(group: int, i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,bench.g{group}.t{i},PROD)"


def group_events(group: int, datasets: int, steps: int, width: int) -> list[dict[str, Any]]:
    """One group's history (``history_events`` on the group's datasets)."""
    return history_events(datasets, steps, width, urn=lambda i: ds(group, i))


# --- the writer processes ------------------------------------------------------------------------------------


def writer(uri: str, events: list[dict[str, Any]], batch: int, ready: Any, start: Any, results: Any) -> None:
    """One writer process: decode, open its own store, wait for the start, ingest; report its figures."""
    changes = [c for i, e in enumerate(events) for c in decode_event(e, origin=str(i))]
    g = LineageGraph(open_store(uri, schema=False))
    ready.release()
    start.wait()
    t = time.perf_counter()
    report = g.ingest(changes, batch_events=batch)
    elapsed = time.perf_counter() - t
    results.put({"events": report.events, "seconds": elapsed, "lockWaitS": g.store.lock_wait_s,
                 "refused": len(report.refused), "end": time.time()})
    g.close()


def run_writers(uri: str, groups: list[list[dict[str, Any]]], n: int, batch: int) -> dict[str, Any]:
    """``n`` writer processes over ``groups`` (writer i: groups i, i+n, ...), started together."""
    ctx = mp.get_context("spawn")
    ready, start, results = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=writer, args=(uri, [e for g in groups[i::n] for e in g], batch, ready, start,
                                              results)) for i in range(n)]
    for p in procs:
        p.start()
    for _ in procs:
        if not ready.acquire(timeout=300):
            raise SystemExit("a writer process did not get ready")
    t0 = time.time()
    start.set()
    rows = [results.get(timeout=3600) for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode:
            raise SystemExit(f"a writer process failed (exit code {p.exitcode})")
    wall = max(r["end"] for r in rows) - t0
    events = sum(r["events"] for r in rows)
    shares = [r["lockWaitS"] / r["seconds"] for r in rows]
    return {"writers": n, "events": events, "seconds": round(wall, 3), "eventsPerS": round(events / wall, 1),
            "lockWaitShare": {"mean": round(sum(shares) / n, 4), "max": round(max(shares), 4)},
            "lockWaitS": [round(r["lockWaitS"], 3) for r in rows], "refused": sum(r["refused"] for r in rows)}


# --- the delaying proxy --------------------------------------------------------------------------------------


class DelayProxy:
    """A TCP proxy on 127.0.0.1 (an ephemeral port) to ``target`` (host, port) or a unix socket path, delaying
    every chunk by ``delay_s`` in each direction (order kept), in an asyncio loop on a thread of its own."""

    def __init__(self, target: tuple[str, int] | str, delay_s: float) -> None:
        self.target = target
        self.delay_s = delay_s
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="delay-proxy", daemon=True)

    def __enter__(self) -> DelayProxy:
        self._thread.start()
        if not self._started.wait(10):
            raise SystemExit("the proxy did not start")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0, backlog=64))
        self.port = server.sockets[0].getsockname()[1]
        self._started.set()
        try:
            self.loop.run_forever()
        finally:
            server.close()
            self.loop.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if isinstance(self.target, str):
                up_r, up_w = await asyncio.open_unix_connection(self.target)
            else:
                up_r, up_w = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        for s in (writer, up_w):
            sock = s.get_extra_info("socket")
            if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(self._pipe(reader, up_w), self._pipe(up_r, writer), return_exceptions=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Chunks from ``reader`` to ``writer``, each sent ``delay_s`` after it arrived (at most 64 in flight)."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(maxsize=64)

        async def send() -> None:
            while True:
                at, data = await queue.get()
                if not data:
                    break
                wait = at - self.loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            with contextlib.suppress(OSError):
                writer.close()

        sender = asyncio.ensure_future(send())
        try:
            while True:
                data = await reader.read(1 << 16)
                await queue.put((self.loop.time() + self.delay_s, data))
                if not data:
                    break
        finally:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait((0.0, b""))
            await sender


@contextlib.contextmanager
def proxied(b: Backend, delay_s: float) -> Iterator[str]:
    """``b``'s URI, reached through a :class:`DelayProxy`."""
    p = urlsplit(b.uri)
    if p.scheme == "falkordb+unix":
        with DelayProxy(p.path, delay_s) as proxy:
            yield f"falkordb://127.0.0.1:{proxy.port}"
    else:
        with DelayProxy((p.hostname or "127.0.0.1", p.port or (7687 if b.kind == "neo4j" else 6379)),
                        delay_s) as proxy:
            auth = p.netloc.rsplit("@", 1)[0] + "@" if "@" in p.netloc else ""
            yield urlunsplit(p._replace(netloc=f"{auth}127.0.0.1:{proxy.port}"))


# --- the runs --------------------------------------------------------------------------------------------------


def measure(b: Backend, path: str, groups: list[list[dict[str, Any]]], n: int, args: argparse.Namespace
            ) -> dict[str, Any]:
    """``n`` writers on an empty graph, ``path`` ``direct`` or ``proxied``."""
    name = f"bench_writers_{n}"
    b.fresh(name).close()  # an empty graph with its schema
    uri = b.uri if b.kind == "neo4j" else _graph_uri(b.uri, name)
    with proxied(b, args.delay_ms / 1000) if path == "proxied" else contextlib.nullcontext(uri) as via:
        if path == "proxied" and b.kind != "neo4j":
            via = _graph_uri(via, name)
        return run_writers(via, groups, n, args.batch)


def run(b: Backend, groups: list[list[dict[str, Any]]], args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"backend": b.info(), "events": sum(map(len, groups)), "groups": len(groups),
                           "batch": args.batch, "rounds": args.rounds, "delayMs": args.delay_ms}
    for _ in range(args.warmup):  # untimed: a JVM's JIT, caches, the first connections
        measure(b, "direct", groups, max(args.writers), args)
    # the rounds interleaved (each round: every path and writer count), so that a server still warming up or a
    # machine busy for a while weighs on every point alike
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for _ in range(args.rounds):
        for path in ("direct", "proxied"):
            for n in args.writers:
                point = measure(b, path, groups, n, args)
                print(f"{b.label}, {path}: {json.dumps(point)}", file=sys.stderr, flush=True)
                runs.setdefault((path, n), []).append(point)
    for path in ("direct", "proxied"):
        series = []
        for n in args.writers:
            rounds = runs[(path, n)]
            point = sorted(rounds, key=lambda r: r["eventsPerS"])[len(rounds) // 2]  # the median round
            point["roundsEventsPerS"] = [r["eventsPerS"] for r in rounds]
            series.append(point)
        one = series[0]["eventsPerS"] if series[0]["writers"] == 1 else None
        out[path] = {"series": series, "speedup": {
            str(p["writers"]): round(p["eventsPerS"] / one, 2) for p in series[1:]} if one else {}}
    if b.kind == "neo4j":
        proxied_series = out["proxied"]
        out["target"] = {"twoWritersSpeedup": 1.5, "lockWaitShare": 0.05,
                         "met": bool(proxied_series["speedup"].get("2", 0) >= 1.5 and all(
                             p["lockWaitShare"]["max"] < 0.05 for p in proxied_series["series"]))}
    return out


def _graph_uri(uri: str, graph: str) -> str:
    """A FalkorDB URI naming ``graph`` (falkordb://host:port/graph, falkordb+unix:///sock?graph=g)."""
    p = urlsplit(uri)
    if p.scheme == "falkordb+unix":
        return urlunsplit(p._replace(query=f"graph={graph}"))
    return urlunsplit(p._replace(path=f"/{graph}"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=4, help="disjoint chains of datasets (at least the most writers)")
    ap.add_argument("--datasets", type=int, default=40, help="datasets per group")
    ap.add_argument("--steps", type=int, default=3, help="schema and lineage versions per dataset")
    ap.add_argument("--width", type=int, default=8, help="fields per schema (grows by one per step)")
    ap.add_argument("--batch", type=int, default=50, help="events per batch (LineageGraph.ingest)")
    ap.add_argument("--writers", type=lambda v: [int(x) for x in v.split(",") if x.strip()], default=[1, 2, 4])
    ap.add_argument("--delay-ms", type=float, default=0.5, help="the proxy's delay in each direction")
    ap.add_argument("--rounds", type=int, default=1, help="runs per point (the median is reported)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs first, with the most writers (0: none)")
    ap.add_argument("--out", type=Path, help="also write the JSON to this file")
    add_arguments(ap)
    args = ap.parse_args()
    if max(args.writers) > args.groups:
        raise SystemExit("--groups must be at least the most writers")

    groups = [group_events(g, args.datasets, args.steps, args.width) for g in range(args.groups)]
    results: dict[str, dict[str, Any]] = {}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            results[b.key] = run(b, groups, args)
    out: dict[str, Any] = dict(next(iter(results.values()))) if len(results) == 1 else {
        "backends": results,
        "sideBySide": {k: {path: r[path]["speedup"] for path in ("direct", "proxied")} for k, r in results.items()}}
    report(out, args.out)


if __name__ == "__main__":
    main()
