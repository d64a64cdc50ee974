"""Normalizer throughput: fields/s of fieldgraph vs DataHub's converters on one corpus.

Usage: python benchmarks/normalize.py [--rounds 9] [--scale 1] [--only avro] [--mypyc]

Avro is measured here, by shape: small schemas (about 13 fields), wide (2,500+ fields), deep (10 levels of
nested records) and union-heavy (60% of the fields unions of primitives, records and arrays); the other
formats by the ``normalize_formats_*.py`` scripts beside this one, run in turn and merged into one JSON
document.

Prints JSON. Both sides get the same schema text (parsing included, since that is what a user hands
either of them), run alternately, best round each; the outputs are checked identical first (the
``recursive`` flag aside), so the ratio compares equal work. No cache: every schema is parsed and walked. Times
are the process's CPU time: both sides run on one thread, and on a shared machine wall time measures the
other processes too.

``--mypyc`` also measures fieldgraph as installed from the compiled wheel (``make dist``'s: the type model, fields,
paths, walk, Avro parser and Protobuf converter compiled by mypyc, setup.py): built, installed with pip into a
fresh virtualenv (tests/compiled.py) and run there, every row again (Avro and the other formats), against DataHub
again (this environment's packages come after the virtualenv's own there, for DataHub's converters). Both sets of
rows come from one run: ``avro``, ``jsonschema``, ... for the source (what ``pip install -e .`` and the pure wheel
run), ``mypyc`` for the compiled wheel. ``--only protobuf`` runs the Protobuf rows alone
(``normalize_formats_protobuf.py``; with ``--mypyc``, again from the compiled wheel).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings
from pathlib import Path


def _record(rng: random.Random, name: str, depth: int, width: int, counter: list[int],
            unions: float = 0.0) -> dict:
    """A record of ``width`` fields; nested records and arrays of records down to ``depth`` levels; with
    ``unions``, that share of the fields are unions of several primitives and records."""
    fields = []
    for i in range(width):
        counter[0] += 1
        kind = rng.random()
        if rng.random() < unions:
            members: list = ["null", "int", "string"]
            if depth > 0:
                members.append(_record(rng, f"{name}_u{counter[0]}", depth - 1, 3, counter))
                members.append({"type": "array", "items": "long"})
            t = members if rng.random() < 0.7 else members[1:]
        elif depth > 0 and kind < 0.25:
            t = _record(rng, f"{name}_r{counter[0]}", depth - 1, max(2, width // 2), counter, unions)
        elif depth > 0 and kind < 0.35:
            items = _record(rng, f"{name}_a{counter[0]}", depth - 1, max(2, width // 3), counter, unions)
            t = {"type": "array", "items": items}
        elif kind < 0.5:
            t = ["null", rng.choice(["string", "long", "double"])]
        elif kind < 0.55:
            t = {"type": "map", "values": "string"}
        elif kind < 0.6:
            t = {"type": "long", "logicalType": "timestamp-millis"}
        elif kind < 0.65:
            t = ["null", "int", "string"]
        else:
            t = rng.choice(["string", "int", "long", "boolean", "bytes", "float"])
        f = {"name": f"f{i}", "type": t}
        if rng.random() < 0.3:
            f["doc"] = f"field {i} of {name}"
        fields.append(f)
    return {"type": "record", "name": name, "namespace": "bench", "fields": fields}


def _deep(rng: random.Random, name: str, depth: int, counter: list[int]) -> dict:
    """A record nesting ``depth`` levels: each level has a few simple fields and one nested record."""
    inner = _record(rng, f"{name}_l{depth}", 0, 4, counter)
    for level in range(depth - 1, 0, -1):
        outer = _record(rng, f"{name}_l{level}", 0, 3, counter)
        outer["fields"].append({"name": f"nested{level}", "type": ["null", inner] if level % 2 else inner})
        inner = outer
    return inner


def corpus(scale: int) -> dict[str, list[str]]:
    """Four shapes: small (about 10 fields), wide (2,000+ fields each), deep (10 levels), union-heavy."""
    rng = random.Random(7)
    c = [0]
    return {
        "small": [json.dumps(_record(rng, f"Small{i}", 1, 6, c)) for i in range(200 * scale)],
        "wide": [json.dumps(_record(rng, f"Wide{i}", 0, 2500, c)) for i in range(4 * scale)],
        "deep": [json.dumps(_deep(rng, f"Deep{i}", 10, c)) for i in range(40 * scale)],
        "unions": [json.dumps(_record(rng, f"Union{i}", 2, 12, c, unions=0.6)) for i in range(40 * scale)],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--only", choices=["avro", "protobuf", "all"], default="all")
    ap.add_argument("--mypyc", action="store_true", help="also measure the compiled wheel (make dist's)")
    args = ap.parse_args()
    if args.only == "protobuf":
        report = other_formats("protobuf")
        if args.mypyc:
            report["mypyc"] = compiled(args)
        print(json.dumps({"benchmark": "normalize", **report}, indent=2))
        return

    from fieldgraph.normalizers import normalize

    try:
        from datahub.emitter.serialization_helper import pre_json_transform
        from datahub.ingestion.extractor.schema_util import avro_schema_to_mce_fields
    except ImportError:
        sys.exit("acryl-datahub is needed for the comparison: pip install -e '.[test]'")

    def ours(texts):
        return sum(len(normalize(t)) for t in texts)

    def theirs(texts):
        return sum(len(avro_schema_to_mce_fields(t, swallow_exceptions=False)) for t in texts)

    warnings.simplefilter("ignore")
    results = {}
    for shape, texts in corpus(args.scale).items():
        for t in texts:  # identical output before any timing
            a = [dict(f.to_datahub(), recursive=False) for f in normalize(t)]
            b = [pre_json_transform(f.to_obj()) for f in avro_schema_to_mce_fields(t, swallow_exceptions=False)]
            assert a == b, f"outputs differ on a {shape} schema"
        best = {"fieldgraph": float("inf"), "datahub": float("inf")}
        fields = 0
        for _ in range(args.rounds):
            for label, fn in (("fieldgraph", ours), ("datahub", theirs)):
                start = time.process_time()
                fields = fn(texts)
                best[label] = min(best[label], time.process_time() - start)
        results[shape] = {
            "schemas": len(texts),
            "fields": fields,
            "fieldgraph_fields_per_s": round(fields / best["fieldgraph"]),
            "datahub_fields_per_s": round(fields / best["datahub"]),
            "ratio": round(best["datahub"] / best["fieldgraph"], 1),
        }
    total_ours = sum(r["fields"] / r["fieldgraph_fields_per_s"] for r in results.values())
    total_dh = sum(r["fields"] / r["datahub_fields_per_s"] for r in results.values())
    import fieldgraph.normalizers.visitor as walk_module

    results_stream = stream(corpus(args.scale)["small"][:20], args.rounds)

    report: dict = {"avro": {"identical_output": True, "shapes": results,
                             "overall_ratio": round(total_dh / total_ours, 1), "walk": Path(walk_module.__file__).name,
                             "repeatedSchemas": results_stream}}
    if args.only == "all":
        report.update(other_formats())
    if args.mypyc:
        report["mypyc"] = compiled(args)
    print(json.dumps({"benchmark": "normalize", **report}, indent=2))


def stream(texts: list[str], rounds: int, events: int = 2000) -> dict:
    """A stream that repeats its schemas (``events`` schema events cycling over ``texts``, each a new string, as
    each event decodes its own): ``normalize`` for each, against ``normalize_text``, which remembers schemas by
    their text (what the DataHub source uses). Measured apart from the corpus rows, which count no cache hit."""
    from fieldgraph.normalizers import normalize, normalize_text
    from fieldgraph.normalizers.api import _normalize_text

    events_texts = [(texts[i % len(texts)] + " ")[:-1] for i in range(events)]
    best = {"normalize": float("inf"), "normalize_text": float("inf")}
    for _ in range(rounds):
        _normalize_text.cache_clear()  # each round starts cold: the first sight of each schema is normalized
        for label, fn in (("normalize", normalize), ("normalize_text", normalize_text)):
            start = time.process_time()
            for text in events_texts:
                fn(text)
            best[label] = min(best[label], time.process_time() - start)
    return {"events": events, "distinctSchemas": len(texts),
            "normalizeEventsPerS": round(events / best["normalize"]),
            "cachedEventsPerS": round(events / best["normalize_text"]),
            "ratio": round(best["normalize"] / best["normalize_text"], 1)}


def compiled(args: argparse.Namespace) -> dict:
    """This benchmark's rows again, in a fresh virtualenv with fieldgraph installed from the compiled wheel
    (tests/compiled.py: what ``make dist`` builds, installed with pip)."""
    import os
    import subprocess
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.compiled import COMPILED, build_dist, venv_with

    with tempfile.TemporaryDirectory(prefix="fieldgraph-mypyc-") as tmp:
        try:
            wheel = build_dist(Path(tmp) / "dist").compiled
            python = venv_with(wheel, Path(tmp) / "venv", reference=True)
        except RuntimeError as exc:
            return {"error": str(exc)[-500:]}
        run = subprocess.run([str(python), __file__, "--only", args.only, "--rounds", str(args.rounds),
                              "--scale", str(args.scale)], cwd=tmp, capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    if run.returncode:
        return {"error": run.stderr.strip()[-500:]}
    out: dict = json.loads(run.stdout)
    del out["benchmark"]
    return {"wheel": wheel.name, "compiled": COMPILED, **out}


def other_formats(only: str = "*") -> dict:
    """Run the other formats' scripts (or the ``only`` one) and collect their JSON."""
    import subprocess

    out = {}
    for script in sorted(Path(__file__).parent.glob(f"normalize_formats_{only}.py")):
        fmt = script.stem.removeprefix("normalize_formats_")
        res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        try:
            out[fmt] = json.loads(res.stdout)
        except ValueError:
            out[fmt] = {"error": (res.stderr or res.stdout).strip().splitlines()[-1:]}
    return out


if __name__ == "__main__":
    main()
