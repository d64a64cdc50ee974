"""Avro normalizer curves: fields/s of fieldgraph vs DataHub's converter against schema width and nesting depth.

    python benchmarks/normalize_curves.py
    python benchmarks/normalize_curves.py --widths 10,1000 --depths 1,6,12 --rounds 3

Two families of generated Avro schemas:

- ``width``: one flat-ish record of N fields (primitives, nullable unions, logical types, a few arrays and maps
  of primitives; no nested records);
- ``depth``: a record nested in a record D levels deep, ``--per-level`` fields per level (one of them the next
  record, the others primitives and nullable unions).

Both sides get the same schema text (parsing included): ``fieldgraph.normalizers.normalize(text)`` and DataHub's
``avro_schema_to_mce_fields(text, swallow_exceptions=False)``; their outputs are checked identical first (the
``recursive`` flag aside, as in ``benchmarks/normalize.py``). Each point converts enough distinct schemas (each
record renamed) for about ``--fields-per-round`` output fields per timed round; the two sides alternate round by
round and the best round of each counts, in the process's CPU time (both sides run on one thread; on a shared
machine wall time measures the other processes too). Prints JSON: ``width`` and ``depth``, one row per point with
``fieldgraphFieldsPerS``, ``datahubFieldsPerS`` and ``ratio`` (fieldgraph / DataHub).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

PRIMITIVES: list[Any] = [
    "string", "long", "int", "double", "boolean", "bytes", "float",
    ["null", "string"], ["null", "long"], ["null", "double"],
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "int", "logicalType": "date"},
]


def _leaf(i: int) -> Any:
    if i % 17 == 16:
        return {"type": "array", "items": "string"}
    if i % 23 == 22:
        return {"type": "map", "values": "long"}
    return PRIMITIVES[i % len(PRIMITIVES)]


def wide_schema(width: int, copy: int) -> str:
    fields = [{"name": f"f{i}", "type": _leaf(i), **({"doc": f"field {i}"} if i % 5 == 0 else {})}
              for i in range(width)]
    return json.dumps({"type": "record", "name": f"Wide{width}_{copy}", "namespace": "bench", "fields": fields})


def deep_schema(depth: int, per_level: int, copy: int) -> str:
    def level(d: int) -> dict[str, Any]:
        fields: list[dict[str, Any]] = [{"name": f"l{d}_f{i}", "type": _leaf(i + d)} for i in range(per_level - 1)]
        if d < depth:
            fields.append({"name": f"l{d}_next", "type": level(d + 1)})
        else:
            fields.append({"name": f"l{d}_last", "type": "string"})
        return {"type": "record", "name": f"Deep{depth}_{copy}_L{d}", "fields": fields}

    return json.dumps({**level(1), "namespace": "bench"})


def measure(texts: list[str], rounds: int) -> dict[str, Any]:
    """Identical output checked on the first text, then alternating timed rounds over all of them."""
    from datahub.emitter.serialization_helper import pre_json_transform
    from datahub.ingestion.extractor.schema_util import avro_schema_to_mce_fields

    from fieldgraph.normalizers import normalize

    a = [dict(f.to_datahub(), recursive=False) for f in normalize(texts[0])]
    b = [pre_json_transform(f.to_obj()) for f in avro_schema_to_mce_fields(texts[0], swallow_exceptions=False)]
    if a != b:
        raise SystemExit(f"outputs differ on {texts[0][:200]}...")

    def theirs(text: str) -> int:
        return len(avro_schema_to_mce_fields(text, swallow_exceptions=False))

    sides: dict[str, Callable[[str], int]] = {"fieldgraph": lambda t: len(normalize(t)), "datahub": theirs}
    best = dict.fromkeys(sides, float("inf"))
    fields = 0
    for r in range(rounds):
        for name in sides if r % 2 == 0 else reversed(sides):
            fn = sides[name]
            start = time.process_time()
            fields = sum(fn(t) for t in texts)
            best[name] = min(best[name], time.process_time() - start)
    return {"fields": fields // len(texts), "schemas": len(texts),
            "fieldgraphFieldsPerS": round(fields / best["fieldgraph"]),
            "datahubFieldsPerS": round(fields / best["datahub"]),
            "ratio": round(best["datahub"] / best["fieldgraph"], 2)}


def ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--widths", default="10,50,200,1000,2000,5000", help="fields per flat record, comma separated")
    ap.add_argument("--depths", default=",".join(map(str, range(1, 13))), help="nesting depths, comma separated")
    ap.add_argument("--per-level", type=int, default=4, help="fields per level of the nested records")
    ap.add_argument("--rounds", type=int, default=5, help="alternating timed rounds per point (best counts)")
    ap.add_argument("--fields-per-round", type=int, default=20000,
                    help="about this many output fields per timed round (more distinct schemas for small ones)")
    args = ap.parse_args()
    try:
        import datahub.ingestion.extractor.schema_util  # noqa: F401
    except ImportError:
        sys.exit("acryl-datahub is needed for the comparison: pip install -e '.[test]'")
    warnings.simplefilter("ignore")

    def copies(fields: int) -> int:
        return max(1, int(args.fields_per_round) // max(1, fields))

    width = []
    for w in ints(args.widths):
        row = measure([wide_schema(w, c) for c in range(copies(w))], args.rounds)
        width.append(row)
        print(json.dumps({"width": w, **row}), file=sys.stderr, flush=True)
    depth = []
    for d in ints(args.depths):
        row = {"depth": d, **measure([deep_schema(d, args.per_level, c) for c in range(copies(d * args.per_level))],
                                     args.rounds)}
        depth.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps({"benchmark": "normalize_curves", "format": "avro", "identicalOutput": True,
                      "rounds": args.rounds, "perLevel": args.per_level, "width": width, "depth": depth}, indent=2))


if __name__ == "__main__":
    main()
