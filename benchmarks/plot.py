"""Pictures of the benchmark results: PNGs drawn from the JSON files ``benchmarks/run.py`` writes.

    python benchmarks/plot.py                      # benchmarks/results/*.json -> benchmarks/results/*.png
    python benchmarks/plot.py --results /tmp/bench

- ``normalize.png`` (``normalize_curves.json``): Avro fields/s against schema width and against nesting depth,
  fieldgraph and DataHub's converter;
- ``upstream.png`` (``graph_curves*.json``, and the ``sizeCurve`` of ``scale*.json``): upstream query latency
  p50/p95 against depth and against graph size, a line per backend;
- ``ingest.png`` (``ingest*.json``): Kafka end-to-end and store-write events/s against batch size, per backend;
- ``initial_load.png`` (``initial_load*.json``): an initial load's fields/s by the write path and by the bulk
  load (planned in one process; ``fieldgraph backfill --bulk``, planned in parts on Spark), per backend and size.

A picture whose data is missing is skipped, with a message.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

HERE = Path(__file__).resolve().parent
NAMES = {"embedded": "embedded FalkorDB", "neo4j": "Neo4j"}

Rows = list[dict[str, Any]]


def load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        print(f"{path}: unreadable ({e}): left out", file=sys.stderr)
        return None


def per_backend(results: Path, name: str, key: str) -> dict[str, Rows]:
    """``key``'s rows per backend, from ``<name>.json`` and ``<name>-<backend>.json``; a file may hold one
    backend's result or several under ``backends``."""
    out: dict[str, Rows] = {}
    for path in sorted(results.glob(f"{name}*.json")):
        suffix = path.stem[len(name):]
        if suffix and not suffix.startswith("-"):
            continue  # another benchmark's file (name_something.json)
        doc = load(path)
        if not isinstance(doc, dict):
            continue
        parts = doc["backends"].items() if isinstance(doc.get("backends"), dict) else [(suffix[1:], doc)]
        for backend, part in parts:
            rows = part.get(key) if isinstance(part, dict) else None
            if isinstance(rows, list) and rows:
                out[NAMES.get(backend) or part.get("backend") or backend or NAMES["embedded"]] = rows
    return dict(sorted(out.items(), key=lambda kv: kv[0] != NAMES["embedded"]))  # embedded first: same colour


def line(ax: Axes, rows: Rows, x: str, y: str, label: str, style: str = "o-", color: str | None = None) -> None:
    """``y`` against ``x`` over the rows that have both."""
    pts = sorted((r[x], r[y]) for r in rows if isinstance(r.get(x), int | float) and isinstance(r.get(y), int | float))
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=label,
                alpha=1.0 if style == "o-" else 0.75)


def plain(v: float, _pos: object = None) -> str:
    """A tick label: 0.5, 20, 1,000, 100,000 (no powers of ten)."""
    return f"{v:,.0f}" if abs(v) >= 10 or v == 0 else f"{v:g}"


def values(ax: Axes, axis: str) -> list[float]:
    """The positive data on one axis of ``ax``, over its lines."""
    data = [np.asarray(ln.get_xdata() if axis == "x" else ln.get_ydata(), dtype=float) for ln in ax.get_lines()]
    return [float(v) for vs in data for v in vs if v > 0]


def spread(ax: Axes, axis: str) -> float:
    """max / min of the data on one axis (1 without positive data)."""
    vs = values(ax, axis)
    return max(vs) / min(vs) if vs else 1.0


def finish(ax: Axes, title: str, xlabel: str, ylabel: str, logx: bool = False, logy: bool | None = False) -> None:
    """Titles, labels, legend; a log x scale where asked and the data spans more than 20x; a log y scale where
    asked (``None``: if the data spans more than 20x), else linear from 0; plain tick labels either way."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logx and spread(ax, "x") > 20:
        ax.set_xscale("log")
    if logy or (logy is None and spread(ax, "y") > 20):
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    else:
        ax.set_ylim(0, max(values(ax, "y"), default=1.0) * 1.1)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ticker.FuncFormatter(plain))
    ax.grid(True, which="major", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", color="grey")


def save(fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote {path}")


def plot_normalize(results: Path) -> str | None:
    path = results / "normalize_curves.json"
    doc = load(path) if path.exists() else None
    if not isinstance(doc, dict) or not (doc.get("width") or doc.get("depth")):
        return f"no {path.name} (benchmarks/normalize_curves.py)"
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, key, x, title, xlabel, logx in (
        (left, "width", "fields", "Avro normalize vs schema width", "fields per schema (flat record)", True),
        (right, "depth", "depth", "Avro normalize vs nesting depth", "nesting depth (records in records)", False),
    ):
        rows = doc.get(key) or []
        line(ax, rows, x, "fieldgraphFieldsPerS", "fieldgraph", "o-", "C0")
        line(ax, rows, x, "datahubFieldsPerS", "DataHub avro_schema_to_mce_fields", "s--", "C1")
        finish(ax, title, xlabel, "fields/s (best round)", logx=logx, logy=True)
    right.xaxis.set_major_locator(ticker.MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
    save(fig, results / "normalize.png")
    return None


def plot_upstream(results: Path) -> str | None:
    depth = per_backend(results, "graph_curves", "depthCurve")
    size = per_backend(results, "graph_curves", "sizeCurve")
    size.update({f"{k} (scale run)": v for k, v in per_backend(results, "scale", "sizeCurve").items()})
    if not depth and not size:
        return "no depthCurve or sizeCurve in graph_curves*.json (benchmarks/graph_curves.py)"
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, curves, x in ((left, depth, "depth"), (right, size, "fields")):
        for i, (backend, rows) in enumerate(curves.items()):
            line(ax, rows, x, "p50Ms", f"{backend} p50", "o-", f"C{i}")
            line(ax, rows, x, "p95Ms", f"{backend} p95", "s--", f"C{i}")
    finish(left, "Upstream query latency vs depth", "depth (hops)", "latency (ms)", logy=None)
    left.xaxis.set_major_locator(ticker.MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
    finish(right, "Upstream query latency vs graph size", "fields in the graph", "latency (ms)", logx=True,
           logy=None)
    save(fig, results / "upstream.png")
    return None


def plot_ingest(results: Path) -> str | None:
    curves = per_backend(results, "ingest", "batchSizes")
    if not curves:
        return "no batchSizes in ingest*.json (benchmarks/ingest.py --batch-sizes)"
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for i, (backend, rows) in enumerate(curves.items()):
        line(ax, rows, "batch", "endToEndEventsPerS", f"{backend} end to end", "o-", f"C{i}")
        line(ax, rows, "batch", "storeWriteEventsPerS", f"{backend} store write", "s--", f"C{i}")
    finish(ax, "Kafka ingest vs batch size", "batch size (events)", "events/s", logx=True)
    save(fig, results / "ingest.png")
    return None


def plot_initial_load(results: Path) -> str | None:
    sizes = per_backend(results, "initial_load", "sizes")
    if not sizes:
        return "no sizes in initial_load*.json (benchmarks/initial_load.py)"
    ways = (("writePath", "write path"), ("bulk", "bulk, one process"), ("bulkBackfill", "backfill --bulk (Spark)"))
    groups = [(f"{backend}\n{row['fields']:,} fields", row) for backend, rows in sizes.items() for row in rows]
    fig, ax = plt.subplots(figsize=(max(6.0, 2.2 * len(groups)), 4.8))
    x = np.arange(len(groups))
    width = 0.8 / len(ways)
    for i, (key, label) in enumerate(ways):
        rates = [(row.get(key) or {}).get("fieldsPerS", 0) for _, row in groups]
        ax.bar(x + (i - (len(ways) - 1) / 2) * width, rates, width, label=label, color=f"C{i}")
    ax.set_xticks(x, [name for name, _ in groups])
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(plain))
    ax.set_title("Initial load from change events (2 cores)")
    ax.set_ylabel("fields/s")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    save(fig, results / "initial_load.png")
    return None


PLOTS: dict[str, Callable[[Path], str | None]] = {
    "normalize.png": plot_normalize, "upstream.png": plot_upstream, "ingest.png": plot_ingest,
    "initial_load.png": plot_initial_load}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=HERE / "results", metavar="DIR",
                    help="where the JSON files are and the PNGs go (default: benchmarks/results)")
    args = ap.parse_args()
    if not args.results.is_dir():
        sys.exit(f"{args.results}: no such folder (run benchmarks/run.py first)")
    for name, plot in PLOTS.items():
        missing = plot(args.results)
        if missing:
            print(f"{name}: skipped, {missing}")


if __name__ == "__main__":
    main()
