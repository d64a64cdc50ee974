"""Where the initial load's CPU goes, stage by stage, for ``initial_load.py``'s history of ``--fields`` fields:

- ``decode``: the sources' ``decode_event`` of every DataHub event;
- ``plan``: the one planner writing the changes into the in-memory store, as each part of ``fieldgraph backfill
  --bulk`` is planned (``WriteMode.BACKFILL``, batches of ``--batch-events`` events);
- ``snapshot``: the store's graph as a snapshot (its own property maps, as the bulk backfill takes it);
- ``packFalkordb``: the GRAPH.BULK commands of the snapshot; ``packNeo4j``: ``neo4j-admin``'s import files.

Prints one JSON object: per stage its wall seconds and CPU microseconds per field (this process), and with
``--cprofile`` (slower: the stage times are then the profiler's) each stage's top functions by own time::

    python benchmarks/profile_load.py --fields 100k
    python benchmarks/profile_load.py --fields 1M --cprofile --out benchmarks/results/profile_load.json
    py-spy record --format flamegraph -o benchmarks/results/profile_load.svg -- \
        python benchmarks/profile_load.py --fields 1M

The flame graph (py-spy samples; no profiler in the process) shows the same stages under ``main``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graph_curves import count  # noqa: E402
from initial_load import chain_events, decode  # noqa: E402

from fieldgraph.bulk import gc_paused  # noqa: E402
from fieldgraph.changes import Change  # noqa: E402
from fieldgraph.graph import LineageGraph, MemoryStore, WriteMode  # noqa: E402
from fieldgraph.graph.bulkload import falkordb_bulk_commands, write_neo4j_import  # noqa: E402
from fieldgraph.graph.snapshot import Snapshot  # noqa: E402

T = TypeVar("T")


class Stages:
    """Runs stages one after the other, timing each (and profiling it with ``cprofile``)."""

    def __init__(self, fields: int, cprofile: bool, top: int) -> None:
        self.fields, self.cprofile, self.top = fields, cprofile, top
        self.times: dict[str, dict[str, float]] = {}
        self.profiles: dict[str, list[dict[str, Any]]] = {}

    def run(self, name: str, work: Callable[[], T]) -> T:
        profile = cProfile.Profile() if self.cprofile else None
        print(f"{name} ...", file=sys.stderr, flush=True)
        wall, cpu = time.perf_counter(), time.process_time()
        with gc_paused():
            if profile is not None:
                profile.enable()
            out = work()
            if profile is not None:
                profile.disable()
        cpu = time.process_time() - cpu
        self.times[name] = {"wallS": round(time.perf_counter() - wall, 2),
                            "cpuUsPerField": round(cpu / self.fields * 1e6, 1)}
        if profile is not None:
            self.profiles[name] = top_functions(profile, self.top)
        return out


def top_functions(profile: cProfile.Profile, n: int) -> list[dict[str, Any]]:
    """The ``n`` functions with the most own time: where, calls, own and cumulative seconds."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    rows = sorted(stats.items(), key=lambda kv: -kv[1][2])[:n]
    root = str(Path(__file__).resolve().parent.parent)
    return [{"function": f"{file.replace(root + '/', '')}:{line}({name})", "calls": nc, "ownS": round(tt, 3),
             "cumulativeS": round(ct, 3)} for (file, line, name), (_, nc, tt, ct, _) in rows]


def plan(changes: list[Change], batch_events: int) -> MemoryStore:
    """The changes planned into an in-memory store, as a part of the bulk backfill is."""
    store = MemoryStore()
    LineageGraph(store).ingest(changes, batch_events=batch_events, mode=WriteMode.BACKFILL)
    return store


def packed_bytes(snap: Snapshot) -> int:
    return sum(len(arg) for command in falkordb_bulk_commands(snap) for arg in command if isinstance(arg, bytes))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fields", default="100k", help="fields of the history (100k, 1M, ...)")
    ap.add_argument("--width", type=int, default=50, help="fields per dataset (initial_load.py's)")
    ap.add_argument("--chain", type=int, default=25, help="datasets per lineage chain (initial_load.py's)")
    ap.add_argument("--batch-events", type=int, default=1000, help="events per planned batch")
    ap.add_argument("--cprofile", action="store_true", help="profile each stage (slower) and list its top functions")
    ap.add_argument("--top", type=int, default=15, help="functions listed per stage with --cprofile")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    n = count(args.fields)
    stages = Stages(n, args.cprofile, args.top)
    events = chain_events(n, args.width, args.chain)
    changes = stages.run("decode", partial(decode, events))
    del events
    snap = stages.run("snapshot", stages.run("plan", partial(plan, changes, args.batch_events)).take_snapshot)
    del changes
    stages.run("packFalkordb", partial(packed_bytes, snap))
    with tempfile.TemporaryDirectory(prefix="fgbench-profile-") as tmp:
        stages.run("packNeo4j", partial(write_neo4j_import, snap, tmp))
    total = {"falkordb": ("decode", "plan", "snapshot", "packFalkordb"),
             "neo4j": ("decode", "plan", "snapshot", "packNeo4j")}
    out: dict[str, Any] = {
        "benchmark": "profile_load", "fields": n, "nodes": len(snap.nodes), "edges": len(snap.edges),
        "cprofile": args.cprofile, "stages": stages.times,
        "cpuUsPerFieldBeforeImporter": {k: round(sum(stages.times[s]["cpuUsPerField"] for s in v), 1)
                                        for k, v in total.items()}}
    if args.cprofile:
        out["topFunctions"] = stages.profiles
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
