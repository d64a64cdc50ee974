"""Every benchmark in one command: each script's JSON into ``benchmarks/results/``.

    python benchmarks/run.py                                        # all of them on the embedded graph
    python benchmarks/run.py --neo4j bolt://neo4j:secret@localhost:7687   # and the graph ones again on that Neo4j
    python benchmarks/run.py --quick --results /tmp/bench           # small sizes, to try it out
    python benchmarks/run.py --only normalize_curves,graph_curves

Runs the scripts of :data:`BENCHMARKS` in turn, one subprocess each, on the embedded graph (an embedded FalkorDB
in a tmp folder, as each script starts it); with ``--neo4j URI`` (or ``FIELDGRAPH_BENCH_NEO4J``) the graph
benchmarks (those that take ``--graph``) run a second time with ``--graph URI`` (``--neo4j neo4j``: on a Neo4j
each script starts for its run from ``tests/services.py``, as ``--graph neo4j`` does). Each script's stdout (its JSON)
goes to ``<results>/<name>.json``, or ``<name>-embedded.json`` / ``<name>-neo4j.json`` for the graph benchmarks;
``benchmarks/plot.py`` draws them. A script that fails (or prints no JSON) is reported with the tail of its
stderr and the run goes on; the exit status is 1 if any failed. A script not there yet is skipped, and so is a
flag of the table that a script does not define yet (each said so).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass(frozen=True)
class Bench:
    name: str  # the script is benchmarks/<name>.py
    full: str = ""  # its arguments for a full run
    quick: str | None = ""  # its arguments with --quick (small sizes); None: left out of quick runs
    graph: bool = False  # takes --graph: runs again on --neo4j
    neo4j: str = ""  # added to ``full`` on Neo4j (a smaller graph where building 1M fields takes too long)
    script: str = ""  # the script's name when it is not ``name`` (one script, two benchmarks)

    @property
    def path(self) -> Path:
        return HERE / f"{self.script or self.name}.py"


#: the benchmarks, in the order they run
BENCHMARKS = [
    Bench("normalize", "--mypyc", "--rounds 1 --only avro"),
    Bench("normalize_curves", "", "--rounds 2 --fields-per-round 2000 --widths 10,200,2000 --depths 1,4,8,12"),
    Bench("value_checks", "", "--datasets 100 --fields 20 --repeat 1"),
    Bench("graph", "", "--fields 20000 --ingest-fields 5000 --queries 20 --varlength-queries 2 --rounds 1 "
                       "--warmup-fields 1000", graph=True),
    Bench("graph_curves", "", "--sizes 5k,20k --depth-at 20k --queries 10 --build-minutes 5", graph=True),
    Bench("ingest", "--datasets 1000 --steps 5 --batch-sizes 200,500,1000,2000,5000",
          "--datasets 100 --steps 2 --batch-sizes 200,2000", graph=True),
    Bench("as_of", "", "--fields 20000 --queries 20 --warmup 2", graph=True, neo4j="--fields 200000"),
    Bench("cdap", "", "--fields 20 --layers 3 --repeat 1", graph=True),
    Bench("sql", "", "--repeat 1 --wide 50", graph=True),
    Bench("serve", "", "--fields 20000 --clients 4 --requests 100 --warmup 20 --starts 50 --events 200 --rounds 1",
          graph=True, neo4j="--fields 200000"),
    Bench("writers", "--groups 4 --datasets 40 --steps 3 --batch 50 --rounds 3 --warmup 2",
          "--groups 4 --datasets 10 --steps 2 --batch 20",
          graph=True),
    Bench("bulk_load", "--sizes 100k,1M", "--sizes 10k --streaming-at 10k", graph=True),
    Bench("initial_load", "--sizes 100k,1M", "--sizes 10k", graph=True, neo4j="--sizes 100k"),
    # where the initial load's CPU goes before the importer: decode, plan, snapshot, pack (cProfile, per stage)
    Bench("profile_load", "--fields 1M --cprofile", "--fields 10k"),
    # where the streaming write path's time goes: the planner, the statements (FalkorDB: encoding, server, trips)
    Bench("profile_stream", "--rounds 3", "--datasets 100 --steps 2 --rounds 1", graph=True),
    # 10M fields once, end to end through fieldgraph backfill --bulk on the embedded graph (about 25 minutes),
    # with the peak memory of the driver, a task, Spark's JVM and the server
    Bench("initial_load_10m", "--backfill-only --sizes 10M", None, script="initial_load"),
    Bench("reopen", "--fields 100000,300000,1000000", "--fields 20000"),
    Bench("memory", "", "--sizes 2,4"),
    Bench("backfill", "--events 200000 --datasets 2000", "--events 5000 --datasets 100 --files 4"),
    # 10M fields on the embedded graph (about 30 minutes of build, 10 GB of server memory); not on Neo4j
    Bench("scale", "--sizes 10k,100k,1M,2M,3M,5M,7.5M,10M --no-depth-curve --build-minutes 50", None,
          script="graph_curves"),
    # paging through a 100k-field impact answer over HTTP, next to the whole answer
    Bench("paging", "", "--fields 5000 --page-size 500 --rounds 1", graph=True),
    # the explorer in Chromium on large lineage (embedded graph): time to draw, frame times while zooming/panning
    Bench("explorer", "", "--rounds 1 --steps 10"),
]

NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def redact(uri: str) -> str:
    p = urlsplit(uri)
    return uri.replace(f":{p.password}@", ":***@", 1) if p.password else uri


def known_args(script: Path, args: list[str]) -> tuple[list[str], list[str]]:
    """``args`` without the flags (and their values) ``script`` does not define yet; and those flags."""
    source = script.read_text()
    keep: list[str] = []
    dropped: list[str] = []
    drop = False
    for a in args:
        if a.startswith("--"):
            drop = not re.search(rf"[\"']{re.escape(a.split('=', 1)[0])}[\"']", source)
            if drop:
                dropped.append(a)
        if not drop:
            keep.append(a)
    return keep, dropped


def tail(text: str, lines: int = 15) -> str:
    return "\n".join("    " + line for line in text.replace("\r", "\n").strip().splitlines()[-lines:])


def run_one(b: Bench, backend: str | None, uri: str | None, args: argparse.Namespace) -> bool:
    """One script on one backend: its JSON into the results folder. Whether it went well."""
    script = b.path
    label = b.name + (f" ({backend})" if backend else "")
    argv = ((b.quick or "") if args.quick else b.full).split()
    if backend == "neo4j" and not args.quick:
        argv += b.neo4j.split()
    argv, dropped = known_args(script, argv)
    if backend:
        argv += ["--graph", uri or backend] + (["--clear-neo4j"] if backend == "neo4j" and args.clear_neo4j else [])
    out = args.results / f"{b.name}{'-' + backend if backend else ''}.json"
    shown = " ".join([f"benchmarks/{b.path.name}", *(redact(a) if a == uri else a for a in argv)])
    print(f"{label}: {shown}", flush=True)
    if dropped:
        print(f"  {b.path.name} does not define {', '.join(dropped)} (yet): left out", flush=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(script), *argv], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    stdout, stderr = proc.stdout, proc.stderr
    if uri:  # a script may print the URI it was given (a backend's key): never its password
        stdout, stderr = stdout.replace(uri, redact(uri)), stderr.replace(uri, redact(uri))
    error = f"exit status {proc.returncode}" if proc.returncode else ""
    if not error:
        try:
            result = json.loads(stdout)
        except ValueError:
            error = "its output is not one JSON document"
    if error:
        kept = f" ({out.name} of an earlier run left as it was)" if out.exists() else ""
        print(f"  FAILED after {elapsed:.1f}s ({error}){kept}; stderr ends:\n{tail(stderr) or '    (empty)'}",
              flush=True)
        return False
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  ok in {elapsed:.1f}s -> {out}", flush=True)
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--neo4j", default=os.environ.get("FIELDGRAPH_BENCH_NEO4J") or None, metavar="URI",
                    help="a running Neo4j (bolt://user:pass@host:7687; its database is cleared) to run the graph "
                         "benchmarks on as well, or neo4j: one started by each script (tests/services.py) "
                         "(default: $FIELDGRAPH_BENCH_NEO4J)")
    ap.add_argument("--clear-neo4j", action="store_true", help="clear that Neo4j's database even if it holds data")
    ap.add_argument("--only", default="", metavar="NAME,...", help="only these benchmarks (names as in the table)")
    ap.add_argument("--quick", action="store_true", help="small sizes (minutes, not hours): to try it out")
    ap.add_argument("--results", type=Path, default=HERE / "results", metavar="DIR",
                    help="where the JSON files go (default: benchmarks/results)")
    args = ap.parse_args()

    uri = args.neo4j
    if uri and uri != "neo4j" and urlsplit(uri).scheme.lower() not in NEO4J_SCHEMES:
        ap.error(f"--neo4j {redact(uri)}: a Neo4j URI is needed (bolt://user:pass@host:7687), or neo4j")
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = set(names) - {b.name for b in BENCHMARKS}
    if unknown:
        ap.error(f"--only: no benchmark {', '.join(sorted(unknown))} (known: {', '.join(b.name for b in BENCHMARKS)})")
    args.results.mkdir(parents=True, exist_ok=True)

    failed: list[str] = []
    start = time.perf_counter()
    for b in BENCHMARKS:
        if names and b.name not in names:
            continue
        if not b.path.exists():
            print(f"{b.name}: benchmarks/{b.path.name} does not exist (yet): skipped", flush=True)
            continue
        if args.quick and b.quick is None:
            print(f"{b.name}: no quick sizes (a full run only): skipped", flush=True)
            continue
        runs: list[tuple[str | None, str | None]] = [("embedded", None)] if b.graph else [(None, None)]
        if b.graph and uri:
            runs.append(("neo4j", uri))
        for backend, u in runs:
            if not run_one(b, backend, u, args):
                failed.append(b.name + (f" ({backend})" if backend else ""))
    print(f"done in {time.perf_counter() - start:.0f}s; results in {args.results}"
          + (f"; FAILED: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
