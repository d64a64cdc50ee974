"""Two checkouts side by side: the same benchmarks, run in turn on each, in one run, and the ratios.

    python benchmarks/compare.py --before ../fieldgraph-old                  # this checkout is "after"
    python benchmarks/compare.py --before ../old --only normalize,sql --rounds 3

For a refactoring that must not slow anything down: each benchmark script of :data:`RUNS` runs ``--rounds``
times on each checkout, alternating (before, after, before, after, ...) so the machine's noise falls on both
alike, each run in a subprocess whose ``fieldgraph`` is the checkout's own (``PYTHONPATH``). Every number of the
scripts' JSON whose key names a rate (``...PerS``, ``..._per_s``) or a duration (``seconds``, ``...S``,
``...Ms``; a ``p50``/``p95``/``max`` of such a key) is compared: the best of the rounds on each side, and
``speedup`` = after over before for a rate, before over after for a duration (above 1: the after checkout is
faster). Per benchmark the geometric mean of its speedups; the printed JSON has every compared number. A script
the before checkout does not have is skipped, and so is a number only one side prints.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: benchmark -> its arguments here (sizes that take a minute or two each)
RUNS = {
    "normalize": "--rounds 3",
    "graph": "--fields 20000 --ingest-fields 5000 --queries 50 --varlength-queries 2 --rounds 1 --warmup-fields 1000",
    "ingest": "--datasets 500 --steps 3 --batch 1000",
    "sql": "--repeat 2 --wide 200",
}

RATE = re.compile(r"(PerS|_per_s|PerSecond)$")
DURATION = re.compile(r"(^seconds$|[a-z]S$|Ms$|_s$|_ms$)")
#: a statistic of the durations its parent key names (``"upstreamApiMs": {"p50": ...}``)
STATISTIC = re.compile(r"^(p\d+|mean|median|min|max)$")


def numbers(doc: Any, prefix: str = "") -> dict[str, float]:
    """Every number of a JSON document under its dotted path (list items by index)."""
    out: dict[str, float] = {}
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.update(numbers(v, f"{prefix}{k}."))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.update(numbers(v, f"{prefix}{i}."))
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        out[prefix[:-1]] = float(doc)
    return out


def kind(path: str) -> str | None:
    """``rate``, ``duration`` or None (a count, a ratio, a setting: not compared), by the number's key (or, for a
    statistic such as ``p50``, its parent's)."""
    *_, parent, key = ["", *path.split(".")]
    if STATISTIC.match(key):
        key = parent
    if RATE.search(key):
        return "rate"
    if DURATION.search(key) and "machine" not in path and "loadAverage" not in path:
        return "duration"
    return None


def run(checkout: Path, name: str, args: str, graph: str) -> dict[str, Any]:
    script = checkout / "benchmarks" / f"{name}.py"
    argv = [sys.executable, str(script), *args.split()]
    if "--graph" in script.read_text():
        argv += ["--graph", graph]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name} in {checkout} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{"):])
    return result


def best(rounds: list[dict[str, float]], path: str) -> float | None:
    values = [r[path] for r in rounds if path in r]
    if not values:
        return None
    return max(values) if kind(path) == "rate" else min(values)


def compare(before: list[dict[str, float]], after: list[dict[str, float]]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for path in sorted(set(before[0]) & set(after[0])):
        k = kind(path)
        b, a = best(before, path), best(after, path)
        if k is None or not b or not a:
            continue
        rows[path] = {"before": b, "after": a, "speedup": round(a / b if k == "rate" else b / a, 3)}
    speedups = [r["speedup"] for r in rows.values()]
    mean = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else None
    return {"geometricMeanSpeedup": round(mean, 3) if mean else None, "numbers": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="the other checkout (its fieldgraph is measured)")
    ap.add_argument("--after", type=Path, default=ROOT, help="default: this checkout")
    ap.add_argument("--only", default=",".join(RUNS), help=f"comma-separated, of {', '.join(RUNS)}")
    ap.add_argument("--rounds", type=int, default=2, help="runs per checkout, alternating")
    ap.add_argument("--graph", default="embedded", help="the store of the graph benchmarks (--graph of each)")
    args = ap.parse_args()
    report: dict[str, Any] = {"benchmark": "compare", "before": str(args.before), "after": str(args.after),
                              "rounds": args.rounds, "graph": args.graph, "benchmarks": {}}
    for name in args.only.split(","):
        if not (args.before / "benchmarks" / f"{name}.py").exists():
            print(f"{name}: not in {args.before}, skipped", file=sys.stderr)
            continue
        sides: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for i in range(args.rounds):
            for side in ("before", "after") if i % 2 == 0 else ("after", "before"):
                print(f"{name}: round {i + 1}, {side}", file=sys.stderr, flush=True)
                sides[side].append(numbers(run(getattr(args, side), name, RUNS[name], args.graph)))
        report["benchmarks"][name] = {"args": RUNS[name], **compare(sides["before"], sides["after"])}
        print(f"{name}: geometric mean speedup {report['benchmarks'][name]['geometricMeanSpeedup']}",
              file=sys.stderr, flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
