"""Backfill benchmark: events/s of the Spark backfill against sequential replay, side by side in one run.

    python benchmarks/backfill.py                       # 1,000,000 events (takes a while)
    python benchmarks/backfill.py --events 100000       # quick

Generates a history of ``--events`` DataHub change events (JSON Lines, ``--files`` files) over
``--datasets`` datasets: schemas re-emitted with new stamps and occasional new versions, lineage
re-emitted and sometimes replaced, as months of MCL topic dumps look. On one embedded FalkorDB (a tmp
data folder, stopped at the end) it then

- ``sequential``: replays the files with the worker's code path (read, decode, ``LineageGraph.ingest``
  in batches of 1000 events), streaming, into an empty graph;
- ``backfill``: runs the Spark job (``--master``, default ``local[*]``: this machine's cores) into another
  empty graph;

and prints one JSON object: events/s of each (wall time including Spark start-up), ``ratio`` =
backfill / sequential, and whether the two graphs have the same counts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path


def ds(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,bench.t{i},PROD)"


def col(name: str) -> dict:
    return {"fieldPath": name, "nullable": True, "type": {"type": {"com.linkedin.schema.StringType": {}}},
            "nativeDataType": "string", "recursive": False, "isPartOfKey": False}


def event(urn: str, aspect_name: str, aspect: dict, ts: int) -> dict:
    return {"entityType": "dataset", "entityUrn": urn, "changeType": "UPSERT", "aspectName": aspect_name,
            "aspect": {"value": json.dumps(aspect), "contentType": "application/json"},
            "systemMetadata": {"lastObserved": ts}}


def generate(folder: Path, n_events: int, n_datasets: int, n_files: int, width: int, seed: int = 7) -> None:
    """``n_events`` events over ``n_datasets`` datasets, in stamp order across ``n_files`` JSON Lines files."""
    rng = random.Random(seed)
    version = [0] * n_datasets
    variant = [0] * n_datasets
    per_file = -(-n_events // n_files)
    folder.mkdir(parents=True, exist_ok=True)
    fh = None
    for n in range(n_events):
        if n % per_file == 0:
            if fh:
                fh.close()
            fh = (folder / f"mcl-{n // per_file:04d}.jsonl").open("w")
        i = rng.randrange(n_datasets)
        ts = 1_700_000_000_000 + n
        if rng.random() < 0.5:
            if rng.random() < 0.01:
                version[i] += 1  # a schema change: one column swapped
            cols = [f"c{j}" for j in range(width)] + [f"v{version[i]}"]
            ev = event(ds(i), "schemaMetadata", {
                "schemaName": f"bench.t{i}", "platform": "urn:li:dataPlatform:hive", "version": version[i],
                "hash": "", "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
                "fields": [col(c) for c in cols]}, ts)
        else:
            if i == 0:
                continue
            if rng.random() < 0.01:
                variant[i] += 1  # lineage replaced: another upstream column
            up = ds(i - 1)
            fgl = [{"upstreamType": "FIELD_SET", "downstreamType": "FIELD", "transformOperation": "IDENTITY",
                    "upstreams": [f"urn:li:schemaField:({up},c{(j + variant[i]) % width})"],
                    "downstreams": [f"urn:li:schemaField:({ds(i)},c{j})"]} for j in range(width)]
            ev = event(ds(i), "upstreamLineage", {"upstreams": [], "fineGrainedLineages": fgl}, ts)
        fh.write(json.dumps(ev) + "\n")
    if fh:
        fh.close()


def count_events(folder: Path) -> int:
    return sum(1 for f in folder.glob("*.jsonl") for line in f.open() if line.strip())


def sequential(folder: Path, uri: str) -> tuple[float, dict]:
    from fieldgraph.graph import LineageGraph
    from fieldgraph.ingest.replay import decode, event_files, read_events

    def changes():
        for f in event_files([folder]):
            for raw in read_events(f):
                cs, _ = decode(raw)
                yield from cs

    g = LineageGraph.open(uri)
    try:
        t0 = time.perf_counter()
        g.ingest(changes(), batch_events=1000)
        return time.perf_counter() - t0, g.stats().to_json()
    finally:
        g.close()


def backfill(folder: Path, uri: str, master: str, partitions: int | None) -> tuple[float, dict, dict]:
    from fieldgraph.ingest.backfill import BackfillOptions, run_backfill

    t0 = time.perf_counter()
    report = run_backfill(BackfillOptions([str(folder)], graph=uri, master=master, partitions=partitions,
                                          rejects=str(folder.parent / "rejects")))
    return time.perf_counter() - t0, report.graph, report.to_json()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--datasets", type=int, default=2000)
    p.add_argument("--width", type=int, default=8, help="columns per schema (and edges per lineage)")
    p.add_argument("--files", type=int, default=16)
    p.add_argument("--master", default="local[*]")
    p.add_argument("--partitions", type=int, default=None)
    p.add_argument("--skip-sequential", action="store_true", help="only the backfill (no ratio)")
    a = p.parse_args()

    from fieldgraph.graph import EmbeddedServer

    with tempfile.TemporaryDirectory(prefix="fgbf-") as tmp:
        folder = Path(tmp) / "events"
        t0 = time.perf_counter()
        generate(folder, a.events, a.datasets, a.files, a.width)
        n = count_events(folder)
        print(f"generated {n} events in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        server = EmbeddedServer(Path(tmp) / "data").start()
        try:
            sock = server.socket
            out: dict = {"events": n, "datasets": a.datasets, "width": a.width, "files": a.files,
                         "cores": os.cpu_count(), "master": a.master}
            bf_s, bf_stats, summary = backfill(folder, f"falkordb+unix://{sock}?graph=backfill", a.master,
                                               a.partitions)
            out["backfill"] = {"seconds": round(bf_s, 1), "eventsPerSecond": round(n / bf_s, 1),
                               "kept": summary["kept"], "superseded": summary["superseded"], "graph": bf_stats}
            print(f"backfill: {bf_s:.0f}s", file=sys.stderr)
            if not a.skip_sequential:
                sq_s, sq_stats = sequential(folder, f"falkordb+unix://{sock}?graph=sequential")
                out["sequential"] = {"seconds": round(sq_s, 1), "eventsPerSecond": round(n / sq_s, 1),
                                     "graph": sq_stats}
                out["ratio"] = round(sq_s / bf_s, 2)  # backfill events/s over sequential events/s
                out["sameGraphCounts"] = bf_stats == sq_stats
        finally:
            server.stop()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
