"""Upstream-lineage latency curves: by walk depth on a fixed graph, and by graph size (one incremental build).

    python benchmarks/graph_curves.py                               # embedded: depth 1..20 at 1M, sizes 10k/100k/1M
    python benchmarks/graph_curves.py --graph neo4j --neo4j-heap 2g --neo4j-pagecache 4g
    python benchmarks/graph_curves.py --sizes 10k,100k,1M,2M,5M,10M --no-depth-curve   # scale past one catalog
    python benchmarks/graph_curves.py --sizes 10k,100k --depth-at 100k --queries 50    # quick

``--graph`` as in ``benchmarks/graph.py`` (``benchmarks/backends.py``). The graph: chains of ``--chain`` datasets
of ``--width`` fields, field j of a dataset derived from fields j and j+1 of the dataset before (the graph
``benchmarks/graph.py`` queries), written with fieldgraph's own ``upsert_datasets``/``upsert_fields``/
``merge_field_edges`` UNWIND statements (``write_datasets``), in dataset order, growing through ``--sizes``:
at each size the build pauses and ``LineageGraph.upstream(field, depth=10)`` (the product API) runs from
``--queries`` random fields at the far end of complete chains, so every walk goes the full depth (checked).
At ``--depth-at`` the same runs for depth 1..``--max-depth`` (the chain is longer than the deepest walk).

Guards: the build stops (and the curve ends at the size reached, with the reason) when the machine's available
memory falls under ``--headroom-gb``, or when the build has taken ``--build-minutes``; the summary then
extrapolates the time and (embedded) memory ``--target`` fields would need from the measured figures.

Prints one JSON object (``--out FILE``: also written there); per backend: ``depthCurve`` [{depth, p50Ms, p95Ms,
fieldsReturned}], ``sizeCurve`` [{fields, edges, p50Ms, p95Ms, buildS (cumulative), serverRssMb}], ``memory``
(peak RSS of the server process and of this one; on FalkorDB, ``GRAPH.MEMORY USAGE`` split into bytes per field
and per edge) and ``scale`` (the largest size measured against ``--target`` and p50 < 50 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends import Backend, _redact, add_arguments, backend, ds, machine, specs, write_datasets

from fieldgraph.graph import GraphStore, LineageGraph
from fieldgraph.graph.plan import field_urn

P50_TARGET_MS = 50.0


def count(text: str) -> int:
    """``10k``, ``1.5M``, ``2000000`` -> an int."""
    t = text.strip().lower().replace("_", "")
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}.get(t[-1:], 1)
    return int(float(t[:-1] if mult > 1 else t) * mult)


def status_kb(pid: int | str, key: str) -> int | None:
    """A ``kB`` line of ``/proc/PID/status`` (VmRSS, VmHWM), None if the process is gone or there is no /proc."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def mem_available_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 2**20
    return float("inf")


def mb(kb: int | None) -> float | None:
    return None if kb is None else round(kb / 1024, 1)


def pct(xs: list[float], p: float) -> float:
    return round(sorted(xs)[min(len(xs) - 1, int(p * len(xs)))], 2)


def edges_for(n_ds: int, width: int, chain: int) -> int:
    """DataDerivedFrom edges of the first ``n_ds`` datasets: 2 * width - 1 per dataset not first in its chain."""
    return sum(1 for i in range(n_ds) if i % chain) * (2 * width - 1)


def cpu_s(pid: int | str) -> float | None:
    """User + system CPU seconds of a process (``/proc/PID/stat``), None if unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def walks(g: LineageGraph, n_ds: int, width: int, chain: int, depth: int, queries: int,
          rng: random.Random, pid: int | None = None) -> dict[str, Any]:
    """``upstream(depth=depth)`` from ``queries`` random fields at the end of complete chains (after 10 untimed).
    With the server's ``pid``, also the CPU time per query of the server and of this process (the walk's own
    cost: on a shared machine, latency also waits for the CPU)."""
    chains = n_ds // chain

    def start() -> str:
        return field_urn(ds(rng.randrange(chains) * chain + chain - 1), f"c{rng.randrange(width)}")

    for _ in range(10):
        g.upstream(start(), depth=depth)
    ms, fields = [], []
    cpu0, server0 = time.process_time(), cpu_s(pid) if pid else None
    for _ in range(queries):
        s = start()
        t = time.perf_counter()
        res = g.upstream(s, depth=depth)
        ms.append((time.perf_counter() - t) * 1000)
        assert max(h.depth for h in res.hops) == depth, (s, depth)
        fields.append(len({h.urn for h in res.hops}))
    out = {"p50Ms": pct(ms, 0.5), "p95Ms": pct(ms, 0.95), "fieldsReturned": round(sum(fields) / len(fields), 1),
           "clientCpuMsPerQuery": round((time.process_time() - cpu0) * 1000 / queries, 2)}
    server1 = cpu_s(pid) if pid else None
    if server0 is not None and server1 is not None:
        out["serverCpuMsPerQuery"] = round((server1 - server0) * 1000 / queries, 2)
    return out


def graph_memory(store: GraphStore) -> dict[str, Any] | None:
    """FalkorDB's ``GRAPH.MEMORY USAGE`` of the graph, split by nodes and edges (MB), None elsewhere."""
    db = getattr(store, "db", None)
    if db is None:
        return None
    try:
        raw = db.connection.execute_command("GRAPH.MEMORY", "USAGE", store.graph_name)  # type: ignore[attr-defined]
    except Exception:
        return None

    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {(k.decode() if isinstance(k, bytes) else k): plain(x) for k, x in v.items()}
        if isinstance(v, list) and len(v) % 2 == 0 and all(isinstance(k, (bytes, str)) for k in v[::2]):
            return {plain(k): plain(x) for k, x in zip(v[::2], v[1::2], strict=True)}
        return v.decode() if isinstance(v, bytes) else v

    u = plain(raw)
    nodes = (u["label_matrices_sz_mb"] + u["amortized_node_block_sz_mb"] + u["indices_sz_mb"]
             + sum(u["amortized_node_attributes_by_label_sz_mb"].values())
             + u["amortized_unlabeled_nodes_attributes_sz_mb"])
    edges = (u["relation_matrices_sz_mb"] + u["amortized_edge_block_sz_mb"]
             + sum(u["amortized_edge_attributes_by_type_sz_mb"].values()))
    return {"usage": u, "nodesMb": nodes, "edgesMb": edges}


def children_rss_kb(pid: int) -> int:
    """The RSS of ``pid``'s child processes (redis-server's AOF rewrite fork), 0 if none."""
    return sum(status_kb(k, "VmRSS") or 0 for k in children(pid))


def children(pid: int | str) -> list[str]:
    """``pid``'s child processes, from the ``/proc`` children list of each of its threads (a child is listed
    under the thread that started it); none if the process is gone or there is no /proc."""
    kids: list[str] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += (task / "children").read_text().split()
        except OSError:
            continue
    return kids


@dataclass
class Curves:
    """One backend's run, as it goes: the build, the points measured, why the build stopped."""

    b: Backend
    args: argparse.Namespace
    store: GraphStore
    built_ds: int = 0
    build_s: float = 0.0
    stop: str | None = None
    depth_at: int = 0
    peak_with_fork_kb: int = 0  # server + its fork(s), sampled between build steps
    depth_curve: list[dict[str, Any]] = field(default_factory=list)
    size_curve: list[dict[str, Any]] = field(default_factory=list)
    mem_log: list[dict[str, Any]] = field(default_factory=list)

    def build_to(self, n_ds: int) -> None:
        """Datasets up to ``n_ds``, in steps of ``--batch`` rows, unless out of memory headroom or time."""
        width, step = self.args.width, max(1, self.args.batch // self.args.width)
        while self.built_ds < n_ds and self.stop is None:
            avail = mem_available_gb()
            if self.b.pid:
                self.peak_with_fork_kb = max(self.peak_with_fork_kb, (status_kb(self.b.pid, "VmRSS") or 0)
                                             + children_rss_kb(self.b.pid))
            if avail < self.args.headroom_gb:
                self.stop = (f"memory: {avail:.1f} GB available on the machine, under the {self.args.headroom_gb:g} GB "
                             f"headroom, at {self.built_ds * width} fields")
            elif self.build_s > self.args.build_minutes * 60:
                self.stop = (f"time: the build took over {self.args.build_minutes:g} min, "
                             f"at {self.built_ds * width} fields")
            else:
                lo = self.built_ds
                self.built_ds = min(n_ds, lo + step)
                t = time.perf_counter()
                write_datasets(self.store, lo, self.built_ds, width, self.args.chain, self.args.batch)
                self.build_s += time.perf_counter() - t
                print(f"\r{self.b.label}: {self.built_ds * width} fields built, {self.build_s:.0f}s, "
                      f"{self.built_ds * width / self.build_s:.0f} fields/s, {avail:.1f} GB available",
                      end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)

    def measure(self, g: LineageGraph, rng: random.Random) -> None:
        """The depth-10 point at the size built (and the depth curve, at ``--depth-at``)."""
        args, hi, pid = self.args, self.built_ds, self.b.pid
        fields, edges = hi * args.width, edges_for(hi, args.width, args.chain)
        if fields <= 1_000_000 and not self.size_curve:  # the formula against the graph, once
            st = g.stats().to_json()
            assert (st["fields"], st["dataDerivedFromEdges"]) == (fields, edges), st
        w = walks(g, hi, args.width, args.chain, 10, args.queries, rng, pid)
        point = {"fields": fields, "edges": edges, "p50Ms": w["p50Ms"], "p95Ms": w["p95Ms"],
                 "buildS": round(self.build_s, 1), "serverRssMb": mb(status_kb(pid, "VmRSS")) if pid else None,
                 "serverPeakRssMb": mb(status_kb(pid, "VmHWM")) if pid else None,
                 "benchPeakRssMb": mb(status_kb("self", "VmHWM")), "buildFieldsPerS": round(fields / self.build_s),
                 "fieldsReturned": w["fieldsReturned"], "clientCpuMsPerQuery": w["clientCpuMsPerQuery"],
                 "serverCpuMsPerQuery": w.get("serverCpuMsPerQuery"), "memAvailableGb": round(mem_available_gb(), 1),
                 "loadAverage1m": round(os.getloadavg()[0], 2)}
        gm = graph_memory(self.store)
        if gm:
            point["graphMemoryMb"] = gm["usage"]["total_graph_sz_mb"]
            self.mem_log.append({"fields": fields, "edges": edges, **gm})
        self.size_curve.append(point)
        print(json.dumps(point), file=sys.stderr, flush=True)
        if not args.no_depth_curve and not self.depth_curve and (fields >= args.depth_at or self.stop):
            self.depth_at = fields
            for d in range(1, args.max_depth + 1):
                w = walks(g, hi, args.width, args.chain, d, args.queries, rng, pid)
                self.depth_curve.append({"depth": d, **w})
                print(json.dumps(self.depth_curve[-1]), file=sys.stderr, flush=True)

    def result(self) -> dict[str, Any]:
        args, pid = self.args, self.b.pid
        out: dict[str, Any] = {**self.b.info(), "width": args.width, "chain": args.chain,
                               "rowsPerStatement": args.batch, "queriesPerPoint": args.queries}
        if self.depth_curve:
            out["depthCurveFields"] = self.depth_at
            out["depthCurve"] = self.depth_curve
        out["sizeCurve"] = self.size_curve
        server_peak = mb(status_kb(pid, "VmHWM")) if pid else None
        memory: dict[str, Any] = {"serverPeakRssMb": server_peak,
                                  "serverWithForkPeakRssMbSampled": mb(self.peak_with_fork_kb) if pid else None,
                                  "benchPeakRssMb": mb(status_kb("self", "VmHWM"))}
        if self.mem_log:
            m = self.mem_log[-1]
            memory["graphMemoryUsageMb"] = m["usage"]
            memory["bytesPerField"] = round(m["nodesMb"] * 2**20 / (m["fields"] + m["fields"] // args.width))
            memory["bytesPerEdge"] = round(m["edgesMb"] * 2**20 / (m["edges"] + m["fields"]))  # + HasField
            memory["note"] = ("GRAPH.MEMORY USAGE at the largest size: per field = label matrices, node blocks, node "
                              "attributes and indexes over all nodes (fields + datasets); per edge = relation "
                              "matrices, edge blocks and attributes over all edges (DataDerivedFrom + HasField)")
        out["memory"] = memory
        if self.size_curve:
            last, n = self.size_curve[-1], args.target
            scale: dict[str, Any] = {
                "targetFields": n, "largestFieldsMeasured": last["fields"], "reached": last["fields"] >= n,
                "p50MsAtLargest": last["p50Ms"], "p95MsAtLargest": last["p95Ms"],
                "p50UnderTargetMs": last["p50Ms"] < P50_TARGET_MS, "stoppedBecause": self.stop,
            }
            if last["fields"] < n:
                scale["extrapolatedBuildMinutes"] = round(n / last["buildFieldsPerS"] / 60, 1)
                if last["serverRssMb"] and self.b.kind == "falkordb":  # a JVM's RSS follows its heap and page cache
                    scale["extrapolatedServerRssGb"] = round(last["serverRssMb"] / last["fields"] * n / 1024, 1)
                    if server_peak:
                        scale["extrapolatedServerPeakRssGb"] = round(server_peak / last["fields"] * n / 1024, 1)
            out["scale"] = scale
        return out


def run(b: Backend, args: argparse.Namespace, save: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Build through ``--sizes``, measuring at each; ``save`` gets the result so far after each point."""
    sizes = sorted({count(s) for s in args.sizes.split(",")} | (set() if args.no_depth_curve else {args.depth_at}))
    c = Curves(b, args, b.fresh("bench_curves", args.batch))
    g = LineageGraph(c.store)
    rng = random.Random(args.seed)
    try:
        for target in sizes:
            c.build_to(-(-target // args.width))
            if c.built_ds // args.chain < 1:
                break
            c.measure(g, rng)
            save(c.result())
            if c.stop:
                break
        return c.result()
    finally:
        c.store.clear()  # a big graph goes before the server stops (a clean stop rewrites the AOF)
        g.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k,1M", help="graph sizes (fields) measured, built incrementally")
    ap.add_argument("--depth-at", type=count, default=1_000_000,
                    help="graph size (fields) of the depth curve (default 1M; the largest size built if smaller)")
    ap.add_argument("--max-depth", type=int, default=20)
    ap.add_argument("--no-depth-curve", action="store_true")
    ap.add_argument("--width", type=int, default=50, help="fields per dataset")
    ap.add_argument("--chain", type=int, default=25,
                    help="datasets per lineage chain (more than --max-depth: every walk goes the full depth)")
    ap.add_argument("--queries", type=int, default=200, help="queries per point (after 10 untimed)")
    ap.add_argument("--batch", type=int, default=5000, help="rows per UNWIND statement")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--headroom-gb", type=float, default=4.0,
                    help="stop building when the machine's available memory falls under this")
    ap.add_argument("--build-minutes", type=float, default=60.0, help="stop building after this long")
    ap.add_argument("--target", type=count, default=10_000_000,
                    help="fields the scale summary extrapolates to when the build stops before")
    ap.add_argument("--out", help="also write the JSON here")
    add_arguments(ap)
    args = ap.parse_args()
    if not args.no_depth_curve and args.chain <= args.max_depth:
        ap.error(f"--chain {args.chain} must exceed --max-depth {args.max_depth}: a depth-d walk needs d + 1 datasets")
    if args.chain <= 10:
        ap.error("--chain must exceed 10 (the size curve walks depth 10)")
    results: dict[str, dict[str, Any]] = {}
    command = " ".join(["benchmarks/graph_curves.py", *map(_redact, sys.argv[1:])])

    def output(partial: bool) -> str:
        out: dict[str, Any] = {"machine": machine(), "command": command, **({"partial": True} if partial else {})}
        if len(results) == 1:
            out.update(next(iter(results.values())))
        else:
            out["backends"] = results
        return json.dumps(out, indent=2)

    def save(key: str, res: dict[str, Any], partial: bool = True) -> None:
        results[key] = res
        if args.out:  # after each point: a run stopped half way leaves what it measured
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            Path(args.out).write_text(output(partial) + "\n")

    for spec in specs(args.graph):
        with backend(spec, args) as b:
            save(b.key, run(b, args, lambda res: save(b.key, res)), partial=False)  # noqa: B023
    print(output(False))


if __name__ == "__main__":
    main()
