"""Memory benchmark: ``fieldgraph ingest`` of growing histories; its peak memory stays flat as the input grows.

    python benchmarks/memory.py                        # 25, 50, 100 and 200 MB histories
    python benchmarks/memory.py --sizes 1000           # a 1 GB history (target: under 1 GB RSS)
    python benchmarks/memory.py --sizes 25,200 --form json   # JSON arrays instead of JSON Lines
    python benchmarks/memory.py --checkout /path/to/another/checkout   # e.g. an older fieldgraph, to compare

For each size, writes a history of realistic DataHub events to one file in a tmp folder: for a number of
datasets in proportion to the size (``--datasets-per-mb``), version after version, a schemaMetadata MCP (20 to
40 columns, one added and one dropped per version, types, descriptions, audit stamps) and an upstreamLineage
MCL (fineGrainedLineages from the dataset before it in its chain of ten, a few with two upstreams and a
transformation), in time order, until the file holds the size. Then runs ``fieldgraph ingest FILE --json``
as a subprocess into a fresh embedded data folder (``--graph embedded:DIR``) and measures:

- ``ingestPeakRssMB``: the peak RSS of the ingest process itself (its ``ru_maxrss`` at exit, taken by a
  wrapper around the CLI: the embedded server, a child, is not counted);
- ``serverPeakRssMB``: the peak RSS (``VmHWM``) of the embedded graph server (redis-server with FalkorDB,
  named by the data folder's pid file), sampled while the ingest runs and once after it;
- ``seconds``, ``eventsPerS``, ``MBPerS`` and the ingest summary's counts.

Prints JSON with one row per size and ``rssRatio`` = the ingest's peak RSS at the largest size / at the
smallest (flat memory: close to 1, whatever the ratio of the sizes, ``sizeRatio``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import machine  # noqa: E402

T0 = 1735689600000  # 2025-01-01
TYPES = [("StringType", "VARCHAR(256)"), ("NumberType", "NUMBER(18,2)"), ("DateType", "DATE"),
         ("BooleanType", "BOOLEAN"), ("NumberType", "BIGINT"), ("TimeType", "TIMESTAMP_NTZ")]
CHAIN = 10

# Runs the CLI as `fieldgraph` does, and writes the process's own peak RSS (KiB, children not counted) at exit.
WRAPPER = """
import atexit, resource, sys
out = sys.argv.pop(1)
def done():
    with open(out, "w") as fh:
        fh.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
atexit.register(done)
sys.argv[0] = "fieldgraph"
from fieldgraph.ingest.cli import main
main()
"""


def ds(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.sales.table_{i:06d},PROD)"


def columns(i: int, version: int) -> list[str]:
    """The columns of dataset ``i`` at ``version``: 20 to 40, one added and the oldest but a few dropped as it
    evolves."""
    width = 20 + (i * 7) % 21
    return [f"col_{j:03d}" for j in range(version // 2, version // 2 + width)]


def schema_mcp(i: int, version: int, ts: int) -> dict[str, Any]:
    cols = columns(i, version)
    fields = []
    for j, path in enumerate(cols):
        typ, native = TYPES[(i + j) % len(TYPES)]
        f = {"fieldPath": path, "nullable": j % 3 != 0, "type": {"type": {f"com.linkedin.schema.{typ}": {}}},
             "nativeDataType": native, "recursive": False, "isPartOfKey": j == 0}
        if j % 4 == 0:
            f["description"] = f"The {path.replace('_', ' ')} of a sale, as the source system records it"
        if j % 5 == 0:
            f["globalTags"] = {"tags": [{"tag": "urn:li:tag:pii" if j % 10 == 0 else "urn:li:tag:finance"}]}
        fields.append(f)
    stamp = {"time": ts, "actor": "urn:li:corpuser:datahub"}
    aspect = {"schemaName": f"analytics.sales.table_{i:06d}", "platform": "urn:li:dataPlatform:snowflake",
              "version": version, "created": stamp, "lastModified": stamp, "hash": f"{i:08x}{version:08x}",
              "platformSchema": {"com.linkedin.schema.MySqlDDL": {"tableSchema": ""}}, "fields": fields}
    return {"entityType": "dataset", "entityUrn": ds(i), "changeType": "UPSERT", "aspectName": "schemaMetadata",
            "aspect": {"value": json.dumps(aspect), "contentType": "application/json"},
            "systemMetadata": {"lastObserved": ts, "runId": f"snowflake-{ts // 86400000}",
                               "registryName": "unknownRegistry", "registryVersion": "0.0.0.0-dev"}}


def lineage_mcl(i: int, version: int, ts: int) -> dict[str, Any]:
    up = i - 1
    ups, downs = columns(up, version), columns(i, version)
    fgl = []
    for j, down in enumerate(downs[: len(ups)]):
        upstreams = [f"urn:li:schemaField:({ds(up)},{ups[j]})"]
        if j % 6 == 5:
            upstreams.append(f"urn:li:schemaField:({ds(up)},{ups[j - 1]})")
        fgl.append({"upstreamType": "FIELD_SET", "upstreams": upstreams, "downstreamType": "FIELD",
                    "downstreams": [f"urn:li:schemaField:({ds(i)},{down})"],
                    "transformOperation": "IDENTITY" if len(upstreams) == 1 else "SUM", "confidenceScore": 1.0})
    aspect = {"upstreams": [{"auditStamp": {"time": ts, "actor": "urn:li:corpuser:datahub"}, "dataset": ds(up),
                             "type": "TRANSFORMED"}], "fineGrainedLineages": fgl}
    return {"entityType": "dataset", "entityUrn": ds(i), "changeType": "UPSERT", "aspectName": "upstreamLineage",
            "aspect": {"value": json.dumps(aspect), "contentType": "application/json"},
            "created": {"time": ts, "actor": "urn:li:corpuser:datahub"}, "previousAspectValue": None,
            "systemMetadata": {"lastObserved": ts, "runId": f"snowflake-{ts // 86400000}"}}


def history(datasets: int) -> Iterator[dict[str, Any]]:
    """Version after version of every dataset: its schema, then (but the first of each chain) its lineage."""
    version = 0
    while True:
        for i in range(datasets):
            ts = T0 + (version * datasets + i) * 60_000
            yield schema_mcp(i, version, ts)
            if i % CHAIN:
                yield lineage_mcl(i, version, ts + 1)
        version += 1


def write_history(path: Path, size_mb: int, datasets_per_mb: float, form: str) -> int:
    """Write events to ``path`` until it holds ``size_mb`` MB (JSON Lines or a JSON array); the event count."""
    target, n, done = size_mb * 2**20, 0, 0
    with path.open("w", encoding="utf-8") as fh:
        if form == "json":
            fh.write("[\n")
        for e in history(max(CHAIN, round(size_mb * datasets_per_mb))):
            text = json.dumps(e)
            fh.write((",\n" if n and form == "json" else "") + text + ("\n" if form == "jsonl" else ""))
            n += 1
            done += len(text) + 2
            if done >= target:
                break
        if form == "json":
            fh.write("\n]\n")
    return n


def _hwm_kib(pid: int) -> int | None:
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmHWM:"):
                return int(row.split()[1])
    except (OSError, ValueError):
        pass
    return None


class ServerWatch(threading.Thread):
    """Samples the peak RSS of the redis-server the data folder's pid file names."""

    def __init__(self, data: Path) -> None:
        super().__init__(daemon=True)
        self.data, self.peak, self.pid, self.stopping = data, 0, None, threading.Event()

    def sample(self) -> None:
        try:
            self.pid = int((self.data / "redis.pid").read_text().strip())
        except (OSError, ValueError):
            pass
        if self.pid is not None:
            self.peak = max(self.peak, _hwm_kib(self.pid) or 0)

    def run(self) -> None:
        while not self.stopping.wait(0.1):
            self.sample()


def run_ingest(fieldgraph: list[str], env: dict[str, str], cwd: Path, events: Path, data: Path,
               work: Path, batch: int) -> dict[str, Any]:
    rss_file = work / "ingest.rss"
    watch = ServerWatch(data)
    watch.start()
    t = time.perf_counter()
    proc = subprocess.run([*fieldgraph, str(rss_file), "ingest", str(events), "--graph", f"embedded:{data}",
                           "--json", "--batch", str(batch), "--rejects", str(work / "rejects.jsonl")],
                          env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    watch.sample()
    watch.stopping.set()
    watch.join()
    if proc.returncode != 0:
        raise RuntimeError(f"fieldgraph ingest exited {proc.returncode}: {proc.stderr[-3000:]}")
    subprocess.run([*fieldgraph, str(work / "stop.rss"), "server", "stop", "--graph", f"embedded:{data}"],
                   env=env, cwd=cwd, capture_output=True)
    summary = json.loads(proc.stdout)
    return {"seconds": round(seconds, 2), "ingestPeakRssMB": round(int(rss_file.read_text()) / 1024, 1),
            "serverPeakRssMB": round(watch.peak / 1024, 1) if watch.peak else None, "summary": summary}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="25,50,100,200", help="history sizes in MB, comma separated")
    ap.add_argument("--datasets-per-mb", type=float, default=20.0,
                    help="datasets in the history per MB (the rest is versions of them: about 6 each at 20)")
    ap.add_argument("--batch", type=int, default=1000, help="fieldgraph ingest --batch (events per write)")
    ap.add_argument("--form", choices=["jsonl", "json"], default="jsonl", help="JSON Lines or one JSON array")
    ap.add_argument("--checkout", type=Path, default=ROOT, help="the fieldgraph checkout to run (default: this one)")
    ap.add_argument("--workdir", type=Path, default=None, help="where the histories and data folders go "
                    "(default: a tmp folder, removed at the end)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    checkout = args.checkout.resolve()
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("FIELDGRAPH_GRAPH", None)
    fieldgraph = [sys.executable, "-c", WRAPPER]
    rows = []
    with tempfile.TemporaryDirectory(prefix="fgm-", dir=args.workdir) as tmp:
        for size in sizes:
            work = Path(tmp) / f"s{size}"
            work.mkdir()
            events = work / f"history.{args.form}"
            t = time.perf_counter()
            n = write_history(events, size, args.datasets_per_mb, args.form)
            print(f"{size} MB: {n} events written in {time.perf_counter() - t:.1f}s; ingesting ...",
                  file=sys.stderr, flush=True)
            res = run_ingest(fieldgraph, env, checkout, events, Path(tempfile.mkdtemp(prefix="d", dir=tmp)), work,
                             args.batch)
            s = res.pop("summary")
            mb = events.stat().st_size / 2**20
            row = {"sizeMB": round(mb, 1), "events": s["events"], "rejected": s["rejected"],
                   "aspectChanges": s["aspectChanges"], "datasets": s["graph"]["datasets"],
                   "fields": s["graph"].get("fields"), "fieldsWritten": s["fieldsWritten"],
                   "edgesWritten": s["edgesWritten"], **res,
                   "eventsPerS": round(s["events"] / res["seconds"], 1), "MBPerS": round(mb / res["seconds"], 2)}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            os.remove(events)
    small, large = min(rows, key=lambda r: r["sizeMB"]), max(rows, key=lambda r: r["sizeMB"])
    out = {"machine": machine(), "form": args.form, "batch": args.batch, "datasetsPerMB": args.datasets_per_mb,
           "checkout": str(checkout), "runs": rows,
           "sizeRatio": round(large["sizeMB"] / small["sizeMB"], 2),
           "rssRatio": round(large["ingestPeakRssMB"] / small["ingestPeakRssMB"], 3),
           "targetMB": 1024, "underTarget": all(r["ingestPeakRssMB"] < 1024 for r in rows)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
