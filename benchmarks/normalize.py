"""Normalizer throughput: fields/s of fieldgraph vs DataHub's converters on one corpus.

Usage: python benchmarks/normalize.py [--rounds 5] [--scale 1] [--only avro]

Avro is measured here; the other formats by the ``normalize_formats_*.py`` scripts beside
this one (JSON Schema and Protobuf against DataHub's converters, Arrow/Spark against
DataHub's Hive column converter), run in turn and merged into one JSON document.

Prints JSON. Both sides get the same schema text (parsing included, since that is what
a user hands either of them), run alternately, best round each; the outputs are checked
identical first (the ``recursive`` flag aside), so the ratio compares equal work.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings


def _record(rng: random.Random, name: str, depth: int, width: int, counter: list[int]) -> dict:
    fields = []
    for i in range(width):
        counter[0] += 1
        kind = rng.random()
        if depth > 0 and kind < 0.25:
            t = _record(rng, f"{name}_r{counter[0]}", depth - 1, max(2, width // 2), counter)
        elif depth > 0 and kind < 0.35:
            items = _record(rng, f"{name}_a{counter[0]}", depth - 1, max(2, width // 3), counter)
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


def corpus(scale: int) -> dict[str, list[str]]:
    rng = random.Random(7)
    c = [0]
    return {
        "small": [json.dumps(_record(rng, f"Small{i}", 1, 6, c)) for i in range(200 * scale)],
        "wide": [json.dumps(_record(rng, f"Wide{i}", 1, 400, c)) for i in range(5 * scale)],
        "deep": [json.dumps(_record(rng, f"Deep{i}", 6, 6, c)) for i in range(10 * scale)],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--only", choices=["avro", "all"], default="all")
    args = ap.parse_args()

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
                start = time.perf_counter()
                fields = fn(texts)
                best[label] = min(best[label], time.perf_counter() - start)
        results[shape] = {
            "schemas": len(texts),
            "fields": fields,
            "fieldgraph_fields_per_s": round(fields / best["fieldgraph"]),
            "datahub_fields_per_s": round(fields / best["datahub"]),
            "ratio": round(best["datahub"] / best["fieldgraph"], 1),
        }
    total_ours = sum(r["fields"] / r["fieldgraph_fields_per_s"] for r in results.values())
    total_dh = sum(r["fields"] / r["datahub_fields_per_s"] for r in results.values())
    report = {"avro": {"identical_output": True, "shapes": results, "overall_ratio": round(total_dh / total_ours, 1)}}
    if args.only == "all":
        report.update(other_formats())
    print(json.dumps({"benchmark": "normalize", **report}, indent=2))


def other_formats() -> dict:
    """Run the other formats' scripts and collect their JSON."""
    import subprocess
    from pathlib import Path

    out = {}
    for script in sorted(Path(__file__).parent.glob("normalize_formats_*.py")):
        fmt = script.stem.removeprefix("normalize_formats_")
        res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        try:
            out[fmt] = json.loads(res.stdout)
        except ValueError:
            out[fmt] = {"error": (res.stderr or res.stdout).strip().splitlines()[-1:]}
    return out


if __name__ == "__main__":
    main()
