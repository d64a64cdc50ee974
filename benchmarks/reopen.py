"""Reopen benchmark: how long the embedded graph takes to come back, against its size.

    python benchmarks/reopen.py                          # 100k and 300k fields (a few minutes)
    python benchmarks/reopen.py --fields 100000,300000,1000000

Prints one JSON object. For each size, on a fresh embedded FalkorDB (a tmp data folder):

- ``build``: datasets of ``--width`` fields, each field with its HasField edge, and field j of each
  dataset derived from fields j and j+1 of the dataset before (``DataDerivedFrom``; chains of ``--chain``
  datasets), written with the store's batched ``UNWIND`` statements (as ``benchmarks/graph.py`` builds).
- ``clean``: a clean stop (``EmbeddedServer.stop``: the AOF is rewritten into a snapshot, then
  SHUTDOWN), then a restart timed until the graph answers a query (a count and an indexed lookup).
- ``crash``: ``--tail`` more fields (with their edges) written after the last rewrite, the server
  killed with SIGKILL, then the same timed restart: the snapshot plus the AOF tail to replay.

``secondsPerMillionFields`` shows whether reopening grows linearly (target: 1M fields in < 60 s);
``serverLoadSeconds`` is the load time the server logs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from backends import ds, write_datasets

from fieldgraph.graph import EmbeddedServer, FalkorStore
from fieldgraph.graph.plan import field_urn

GRAPH = "reopen"


def write(store: FalkorStore, lo_ds: int, hi_ds: int, width: int, chain: int, batch: int) -> None:
    """Datasets ``lo_ds..hi_ds-1`` with their fields, HasField and DataDerivedFrom edges."""
    step = max(1, batch // width)
    for lo in range(lo_ds, hi_ds, step):
        hi = min(hi_ds, lo + step)
        write_datasets(store, lo, hi, width, chain, batch)
        print(f"\r  writing datasets {lo_ds}..{hi_ds}: {hi - lo_ds}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)


def counts(store: FalkorStore) -> dict:
    fields = store.run("MATCH (f:DatasetField) RETURN count(f) AS n")[0]["n"]
    edges = store.run("MATCH ()-[e:DataDerivedFrom]->() RETURN count(e) AS n")[0]["n"]
    return {"fields": fields, "edges": edges}


def reopen(data: Path, expect: dict, probe_urn: str, servers: list) -> tuple[float, FalkorStore]:
    """Start the server on ``data``; seconds until it answers a count and an indexed lookup."""
    t = time.perf_counter()
    server = EmbeddedServer(data).start(timeout=120)
    servers.append(server)
    store = FalkorStore(graph=GRAPH, unix_socket=str(server.socket), server=server)
    got = counts(store)
    assert store.run("MATCH (f:DatasetField {urn: $u}) RETURN f.fieldPath AS p", {"u": probe_urn}), probe_urn
    seconds = time.perf_counter() - t
    assert got == expect, (got, expect)
    return seconds, store


def aof_files(data: Path) -> dict:
    files = sorted((data / "appendonlydir").iterdir())
    return {"base": [f.name for f in files if ".base." in f.name],
            "baseBytes": sum(f.stat().st_size for f in files if ".base." in f.name),
            "tailBytes": sum(f.stat().st_size for f in files if ".incr." in f.name)}


def server_load_seconds(data: Path) -> float | None:
    """The last 'DB loaded from append only file: N seconds' of the server log."""
    hits = re.findall(r"DB loaded from append only file: ([\d.]+) seconds", (data / "server.log").read_text())
    return float(hits[-1]) if hits else None


def per_million(seconds: float, fields: int) -> float:
    return round(seconds * 1e6 / fields, 2)


def bench(size: int, width: int, chain: int, tail: int, batch: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="fg-"))
    data = tmp / "d"
    servers: list[EmbeddedServer] = []
    try:
        server = EmbeddedServer(data).start()
        servers.append(server)
        store = FalkorStore(graph=GRAPH, unix_socket=str(server.socket), server=server, batch_size=batch)
        store.ensure_schema()
        n_ds = size // width
        t = time.perf_counter()
        write(store, 0, n_ds, width, chain, batch)
        build_s = time.perf_counter() - t
        expect = counts(store)
        t = time.perf_counter()
        store.close()  # stops the server: rewrite, then SHUTDOWN
        stop_s = time.perf_counter() - t
        files = aof_files(data)

        clean_s, store = reopen(data, expect, field_urn(ds(n_ds // 2), "c0"), servers)
        clean_load = server_load_seconds(data)

        # a tail after the last rewrite, then SIGKILL
        tail_ds = max(1, tail // width)
        write(store, n_ds, n_ds + tail_ds, width, chain, batch)
        expect_crash = counts(store)
        time.sleep(1.5)  # appendfsync everysec
        crash_files = aof_files(data)
        process = store.server.process
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        store.server.process = None  # gone: nothing to stop
        store.close()

        crash_s, store = reopen(data, expect_crash, field_urn(ds(n_ds + tail_ds - 1), "c0"), servers)
        crash_load = server_load_seconds(data)
        store.close()
        return {
            "fields": expect["fields"], "dataDerivedFromEdges": expect["edges"], "datasets": n_ds,
            "build": {"seconds": round(build_s, 1), "fieldsPerS": round(expect["fields"] / build_s)},
            "clean": {"stopSeconds": round(stop_s, 2), **files, "reopenSeconds": round(clean_s, 2),
                      "serverLoadSeconds": clean_load, "secondsPerMillionFields": per_million(clean_s, size)},
            "crash": {"tailFields": tail_ds * width, **crash_files, "reopenSeconds": round(crash_s, 2),
                      "serverLoadSeconds": crash_load,
                      "secondsPerMillionFields": per_million(crash_s, expect_crash["fields"])},
        }
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fields", default="100000,300000", help="comma-separated graph sizes in fields")
    ap.add_argument("--width", type=int, default=10, help="fields per dataset")
    ap.add_argument("--chain", type=int, default=20, help="datasets per lineage chain")
    ap.add_argument("--tail", type=float, default=0.05,
                    help="fields written after the last rewrite before SIGKILL: a count, or a fraction of the size")
    ap.add_argument("--batch", type=int, default=2000, help="rows per UNWIND")
    args = ap.parse_args()
    runs = []
    for size in (int(s) for s in args.fields.split(",")):
        tail = int(args.tail * size) if args.tail < 1 else int(args.tail)
        print(f"{size} fields:", file=sys.stderr)
        runs.append(bench(size, args.width, args.chain, tail, args.batch))
        print(json.dumps(runs[-1]), file=sys.stderr)
    print(json.dumps({"backend": "embedded FalkorDB", "width": args.width, "runs": runs}, indent=2))


if __name__ == "__main__":
    main()
