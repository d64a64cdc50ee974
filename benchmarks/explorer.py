"""The lineage explorer on large lineage: time to draw, and frame times while zooming and panning, in Chromium.

    python benchmarks/explorer.py                  # the shapes of tests/large_shapes.py, 3 rounds each
    python benchmarks/explorer.py --rounds 1       # quick

Builds the shapes of ``tests/large_shapes.py`` on the embedded graph (a field with 5,000 downstream fields in 50
datasets, the same in one dataset, a 30-hop chain, a dataset of 2,000 columns), serves them with a real
``fieldgraph serve`` and opens each in headless Debian Chromium (``tests/browser/explorer.mjs``):

- ``drawMs``: from the answer's arrival (the last API response's ``responseEnd`` in the page) to the graph drawn
  (layout done, the page idle, an animation frame painted), per round; the 30-hop chain to hop 30 is its six
  "next hops" steps, each timed the same way; the 2,000-column dataset is its grouped view ("Draw its lineage,
  grouped"), then one expand of 50 of its fields;
- ``frames``: ``requestAnimationFrame`` deltas (ms) during a scripted zoom in and out (mouse wheel) and a drag
  (pan) over the drawing: p50, p95, max.

Prints one JSON document. The figures come from a machine the browser shares with the service: indicative.
"""

from __future__ import annotations

import argparse
import json
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import machine  # noqa: E402

from fieldgraph.graph import EmbeddedServer, LineageGraph, open_store  # noqa: E402
from tests import large_shapes as shapes  # noqa: E402
from tests.services import ServiceError, fieldgraph_serve  # noqa: E402

DRIVER = ROOT / "tests" / "browser" / "explorer.mjs"


class Driver:
    """tests/browser/explorer.mjs: one JSON command a line."""

    def __init__(self, artifacts: Path) -> None:
        node = shutil.which("node")
        if node is None:
            sys.exit("node (Node.js 20+) is not on PATH")
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([node, str(DRIVER), "--artifacts", str(artifacts)], cwd=ROOT, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)

    def __call__(self, action: str, timeout: float = 120, **args: Any) -> Any:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"action": action, **args}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.log.seek(0)
            raise RuntimeError(f"explorer.mjs gave no answer to {action}: {self.log.read()}")
        answer = json.loads(line)
        if not answer["ok"]:
            raise RuntimeError(f"explorer.mjs: {answer['error']}")
        return answer["result"]

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.log.close()


@contextmanager
def serving(uri: str, tmp: Path) -> Iterator[str]:
    """``fieldgraph serve`` on ``uri``: its base URL (the run stops, with the service's log, if it does not start)."""
    try:
        with fieldgraph_serve(uri, tmp, wait_s=60) as base:
            yield base
    except ServiceError as exc:
        sys.exit(str(exc))


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50": round(statistics.median(ordered), 1), "p95": round(pick(0.95), 1), "max": round(ordered[-1], 1),
            "n": len(ordered)}


def field_view(drive: Driver, base: str, urn: str) -> float:
    timed = drive("timed", url=f"{base}/explorer/#field={urllib.parse.quote(urn)}")
    if timed["error"]:
        raise RuntimeError(timed["error"])
    return float(timed["ms"])


def run(drive: Driver, base: str, rounds: int, steps: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, urn in (("fanout5000In50Datasets", shapes.FAN), ("fanout5000InOneDataset", shapes.FAN_ONE)):
        draws, frames = [], []
        for _ in range(rounds):
            draws.append(field_view(drive, base, urn))
            frames += drive("frames", steps=steps)
        out[name] = {"drawMs": [round(d, 1) for d in draws], "draw": summary(draws), "frames": summary(frames),
                     "drawn": drive("attrs", testid="not-drawn")["text"]}
    draws, hops, frames = [], [], []
    for _ in range(rounds):
        draws.append(field_view(drive, base, shapes.CHAIN))
        for _ in range(6):
            hops.append(drive("timedClick", testid="next-hops")["ms"])
        frames += drive("frames", steps=steps)
    out["chain30Hops"] = {"drawMs": [round(d, 1) for d in draws], "draw": summary(draws),
                          "nextHops": summary(hops), "frames": summary(frames),
                          "drawn": drive("attrs", testid="not-drawn")["text"]}
    draws, expands, frames = [], [], []
    for _ in range(rounds):
        drive("open", url=f"{base}/explorer/")
        drive("search", text="wide.table")
        drive("pick", testid="result-dataset", urn=shapes.WIDE)
        draws.append(drive("timedClick", testid="open-dataset", urn=shapes.WIDE)["ms"])
        expands.append(drive("timedClick", testid="expand-dataset", urn=shapes.WIDE)["ms"])
        frames += drive("frames", steps=steps)
    out["dataset2000Columns"] = {"drawMs": [round(d, 1) for d in draws], "draw": summary(draws),
                                 "expand50": summary(expands), "frames": summary(frames),
                                 "drawn": drive("attrs", testid="not-drawn")["text"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="opens of each shape (default 3)")
    ap.add_argument("--steps", type=int, default=20, help="wheel steps each way and drag steps per frame sample")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fgbench-explorer-") as tmp:
        server = EmbeddedServer(Path(tmp) / "d").start()
        try:
            uri = f"falkordb+unix://{server.socket}"
            graph = LineageGraph(open_store(uri))
            graph.store.ensure_schema()
            started = time.perf_counter()
            shapes.build(graph)
            built = time.perf_counter() - started
            drive = Driver(Path(tmp) / "artifacts")
            try:
                with serving(uri, Path(tmp)) as base:
                    shape = run(drive, base, args.rounds, args.steps)
            finally:
                drive.close()
            graph.close()
        finally:
            server.stop()
    print(json.dumps({"benchmark": "explorer", "backend": "embedded", "buildSeconds": round(built, 1),
                      "rounds": args.rounds, "shapes": shape, "machine": machine()}, indent=2))


if __name__ == "__main__":
    main()
