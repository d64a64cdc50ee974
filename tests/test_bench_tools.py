"""`make bench`'s tools: benchmarks/run.py writes each benchmark's JSON, benchmarks/plot.py draws PNGs from them.

Two cheap pure benchmarks at their --quick sizes into a tmp results folder, then the pictures from those plus
small synthetic graph_curves and ingest results (the real ones take minutes to hours). No timings are checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, f"benchmarks/{script}", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def curves(scale: float) -> dict[str, list[dict[str, float]]]:
    return {"depthCurve": [{"depth": d, "p50Ms": scale * d, "p95Ms": scale * d * 1.5, "fieldsReturned": 2 * d}
                           for d in range(1, 21)],
            "sizeCurve": [{"fields": n, "edges": 2 * n, "p50Ms": scale * 10, "p95Ms": scale * 14, "buildS": n / 1e4,
                           "serverRssMb": n / 1e3} for n in (10_000, 100_000, 1_000_000)]}


def batches(rate: float) -> list[dict[str, float]]:
    return [{"batch": b, "endToEndEventsPerS": rate * 0.6, "storeWriteEventsPerS": rate, "ratio": 0.6}
            for b in (100, 500, 2000, 5000)]


def test_run_then_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    pytest.importorskip("datahub")
    res = run("run.py", "--quick", "--only", "value_checks,normalize_curves", "--results", str(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "value_checks" in res.stdout and "normalize_curves" in res.stdout
    assert {p.name for p in tmp_path.iterdir()} == {"value_checks.json", "normalize_curves.json"}
    checks = json.loads((tmp_path / "value_checks.json").read_text())
    assert checks["datasets"] == 100
    norm = json.loads((tmp_path / "normalize_curves.json").read_text())
    assert [r["fields"] for r in norm["width"]] == [10, 200, 2000]
    assert [r["depth"] for r in norm["depth"]] == [1, 4, 8, 12]
    assert all(r["fieldgraphFieldsPerS"] > 0 and r["datahubFieldsPerS"] > 0 for r in norm["width"] + norm["depth"])

    # one backend per file, and several under "backends" in one file: both shapes the scripts print
    (tmp_path / "graph_curves-embedded.json").write_text(json.dumps({"backend": "embedded FalkorDB", **curves(1)}))
    (tmp_path / "graph_curves-neo4j.json").write_text(json.dumps({"backend": "Neo4j at bolt://x", **curves(2)}))
    (tmp_path / "ingest.json").write_text(json.dumps({"backends": {
        "embedded": {"batchSizes": batches(1000)}, "neo4j": {"batchSizes": batches(600)}}}))
    load = [{"fields": n, "writePath": {"fieldsPerS": 5000}, "bulk": {"fieldsPerS": 7000},
             "bulkBackfill": {"fieldsPerS": 9000}} for n in (100_000, 1_000_000)]
    (tmp_path / "initial_load-embedded.json").write_text(json.dumps({"backends": {"embedded": {"sizes": load}}}))
    res = run("plot.py", "--results", str(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "skipped" not in res.stdout

    from matplotlib import image

    for name, (width, height) in {"normalize.png": (1200, 480), "upstream.png": (1200, 480),
                                  "ingest.png": (750, 480), "initial_load.png": (600, 480)}.items():
        path = tmp_path / name
        assert path.read_bytes()[:8] == PNG_MAGIC, name
        assert image.imread(path).shape[:2] == (height, width), name


def test_missing_data_is_skipped(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    res = run("plot.py", "--results", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("skipped") == 4
    assert not list(tmp_path.glob("*.png"))


def test_run_refuses_bad_arguments(tmp_path: Path) -> None:
    res = run("run.py", "--only", "nonesuch", "--results", str(tmp_path))
    assert res.returncode == 2 and "nonesuch" in res.stderr
    res = run("run.py", "--neo4j", "http://localhost:7474", "--only", "value_checks", "--results", str(tmp_path))
    assert res.returncode == 2 and "bolt://" in res.stderr


def test_run_leaves_out_flags_a_script_does_not_define_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_run", mod)  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    script = ROOT / "benchmarks" / "value_checks.py"
    assert mod.known_args(script, ["--datasets", "5", "--nonesuch", "1,2", "--repeat", "1"]) == (
        ["--datasets", "5", "--repeat", "1"], ["--nonesuch"])
    assert mod.redact("bolt://neo4j:secret@host:7687") == "bolt://neo4j:***@host:7687"
    assert {b.name for b in mod.BENCHMARKS} >= {"normalize", "normalize_curves", "graph", "graph_curves", "ingest"}


def test_compare_tells_rates_durations_and_their_statistics_from_counts() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "benchmarks" / "compare.py")
    assert spec is not None and spec.loader is not None
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    kinds = {p: compare.kind(p) for p in ("ingest.raw.edgesPerS", "bulk.seconds", "query.upstreamApiMs.p50",
                                          "query.upstreamApiMs.max", "query.upstreamVarLengthCypherMs.queries",
                                          "machine.loadAverageMs.p50", "fields", "scale.p50")}
    assert kinds == {"ingest.raw.edgesPerS": "rate", "bulk.seconds": "duration", "query.upstreamApiMs.p50": "duration",
                     "query.upstreamApiMs.max": "duration", "query.upstreamVarLengthCypherMs.queries": None,
                     "machine.loadAverageMs.p50": None, "fields": None, "scale.p50": None}
