"""Where the streaming write path's time goes: ``LineageGraph.ingest`` (read state, plan, apply: what ``fieldgraph
ingest`` and each Kafka worker run per batch) of ``ingest.py``'s history into an empty graph, on each backend.

    python benchmarks/profile_stream.py                          # embedded FalkorDB, 2,000 datasets x 5 steps
    python benchmarks/profile_stream.py --graph both --out benchmarks/results/profile_stream.json

After an untimed warm-up (``--warmup``: the first 5% of the changes into a throwaway graph), per backend and round
(``--rounds``, each into a new graph), one JSON object under ``backends``:

- ``seconds``, ``fieldsPerS``: the whole ingest, and the field rows it upserted per second;
- ``planS``: the planning stage (``Writer.plan``: its reads of the graph's state and the planner);
  ``planCpuS``: its CPU in this process;
- ``statementsS``: the time in the store's statements, reads and writes, and ``statements``: per statement
  (by its name in ``cypher/``), its calls and seconds; on FalkorDB also ``paramsS``: the client's encoding of the
  parameters into the query's ``CYPHER`` header (Python), and ``serverS``: the server's own execution time
  (``GRAPH.QUERY``'s "internal execution time"); the rest of the time is the round trip.
- ``shares``: the planner (the planning stage without its reads), the statements and the rest, as fractions of
  the whole; on FalkorDB, ``statementShares``: the statements' time as encoding, the server's and round trips.

The planner is the same code the bulk load runs (``profile_load.py``); this says how much of the streamed path it
is, hence what making it cheaper can give the streamed path.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backends import Backend, add_arguments, backend, history_events, report, specs  # noqa: E402

from fieldgraph.graph import LineageGraph  # noqa: E402
from fieldgraph.graph import cypher as cy  # noqa: E402
from fieldgraph.graph.write import Writer  # noqa: E402
from fieldgraph.ingest.sources import decode_event  # noqa: E402

#: each shipped statement's text -> its name
NAMES = {text: name for name in cy.names() for text in cy.statements(name)}


class Timings:
    """Seconds per statement, planning, and on FalkorDB the client's parameter encoding and the server's time."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self.params: defaultdict[str, float] = defaultdict(float)
        self.server: defaultdict[str, float] = defaultdict(float)
        self.plan_s = self.plan_cpu_s = self.plan_reads_s = 0.0
        self.planning = False

    def to_json(self, total_s: float, fields: int) -> dict[str, Any]:
        statements_s = sum(self.seconds.values())
        params_s, server_s = sum(self.params.values()), sum(self.server.values())
        out: dict[str, Any] = {
            "seconds": round(total_s, 2), "fieldsPerS": round(fields / total_s), "planS": round(self.plan_s, 2),
            "planCpuS": round(self.plan_cpu_s, 2), "statementsS": round(statements_s, 2)}
        if server_s:
            out |= {"paramsS": round(params_s, 2), "serverS": round(server_s, 2)}
        planner_s = self.plan_s - self.plan_reads_s  # the planning stage without its reads
        out["shares"] = {"planner": round(planner_s / total_s, 3), "statements": round(statements_s / total_s, 3),
                         "other": round((total_s - planner_s - statements_s) / total_s, 3)}
        if server_s:  # FalkorDB: the statements' time as the client's encoding, the server's and the round trips
            out["statementShares"] = {k: round(v / statements_s, 3) for k, v in (
                ("params", params_s), ("server", server_s), ("roundTrips", statements_s - params_s - server_s))}
        out["statements"] = {n: {"calls": self.calls[n], "seconds": round(s, 2),
                                 **({"paramsS": round(self.params[n], 2), "serverS": round(self.server[n], 2)}
                                    if server_s else {})}
                             for n, s in sorted(self.seconds.items(), key=lambda kv: -kv[1])}
        return out


@contextmanager
def timed(store: Any, t: Timings) -> Iterator[None]:
    """``t`` filled while the block runs: the store's statements, the planning stage, FalkorDB's encoding."""
    run, plan = type(store).run, Writer.plan

    def timed_run(self: Any, cypher: str, params: Any = None, **kw: Any) -> Any:
        name = NAMES.get(cypher, cypher.split("\n", 1)[0][:60])
        start = time.perf_counter()
        try:
            return run(self, cypher, params, **kw)
        finally:
            took = time.perf_counter() - start
            t.seconds[name] += took
            t.calls[name] += 1
            if t.planning:
                t.plan_reads_s += took

    def timed_plan(self: Writer, changes: Any) -> Any:
        start, cpu = time.perf_counter(), time.process_time()
        t.planning = True
        try:
            return plan(self, changes)
        finally:
            t.planning = False
            t.plan_s += time.perf_counter() - start
            t.plan_cpu_s += time.process_time() - cpu

    undo = falkordb_hooks(t) if store.backend == "falkordb" else (lambda: None)
    type(store).run, Writer.plan = timed_run, timed_plan  # type: ignore[method-assign]
    try:
        yield
    finally:
        type(store).run, Writer.plan = run, plan  # type: ignore[method-assign]
        undo()


def falkordb_hooks(t: Timings) -> Callable[[], None]:
    """Time the falkordb client's parameter header and read each query's server time; returns the undo."""
    from falkordb.graph import Graph

    header, query = Graph._build_params_header, Graph._query
    last = [0.0]

    def timed_header(self: Any, params: Any) -> str:
        start = time.perf_counter()
        try:
            return header(self, params)  # type: ignore[no-any-return]
        finally:
            last[0] = time.perf_counter() - start

    def timed_query(self: Any, q: str, params: Any = None, timeout: Any = None, read_only: bool = False) -> Any:
        res = query(self, q, params, timeout, read_only)
        name = NAMES.get(q, q.split("\n", 1)[0][:60])
        t.params[name] += last[0]
        t.server[name] += res.run_time_ms / 1000
        return res

    Graph._build_params_header, Graph._query = timed_header, timed_query

    def undo() -> None:
        Graph._build_params_header, Graph._query = header, query

    return undo


def warm_up(b: Backend, changes: list[Any], batch: int) -> None:
    """An untimed ingest of the first changes into a throwaway graph: Neo4j plans each statement once and its JIT
    warms up (the first round was half as fast without it)."""
    g = LineageGraph(b.fresh("bench_profile_stream_warmup"))
    g.ingest(changes, batch_events=batch)
    g.close()


def profile(b: Backend, changes: list[Any], batch: int) -> dict[str, Any]:
    store = b.fresh("bench_profile_stream")
    t = Timings()
    g = LineageGraph(store)
    with timed(store, t):
        start = time.perf_counter()
        summary = g.ingest(changes, batch_events=batch)
        total_s = time.perf_counter() - start
    g.close()
    return t.to_json(total_s, summary.counts["fields"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--width", type=int, default=8, help="fields per schema (grows by one per step)")
    ap.add_argument("--batch", type=int, default=2000, help="events per batch (the worker's default)")
    ap.add_argument("--rounds", type=int, default=2, help="ingests per backend, each into a new graph")
    ap.add_argument("--warmup", type=int, default=5, help="percent of the changes in an untimed first ingest (0: none)")
    ap.add_argument("--out", type=Path, help="also write the JSON to this file")
    add_arguments(ap)
    args = ap.parse_args()
    changes = [c for e in history_events(args.datasets, args.steps, args.width) for c in decode_event(e)]
    out: dict[str, Any] = {"benchmark": "profile_stream", "datasets": args.datasets, "steps": args.steps,
                           "width": args.width, "batch": args.batch, "backends": {}}
    for spec in specs(args.graph):
        with backend(spec, args) as b:
            if args.warmup:
                warm_up(b, changes[:max(1, len(changes) * args.warmup // 100)], args.batch)
            rounds = []
            for r in range(args.rounds):
                rounds.append(profile(b, changes, args.batch))
                brief = {k: v for k, v in rounds[-1].items() if k != "statements"}
                print(f"{b.label}: round {r + 1}: {json.dumps(brief)}", file=sys.stderr, flush=True)
            out["backends"][b.key] = {**b.info(), "rounds": rounds}
    report(out, args.out)


if __name__ == "__main__":
    main()
