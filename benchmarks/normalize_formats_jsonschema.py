"""JSON Schema normalization throughput: fieldgraph vs DataHub's JsonSchemaTranslator, per shape.

Input for both: JSON text. Ours: ``normalize(text, "json-schema")`` (parse, meta-schema
checks, resolve $refs, convert, walk). DataHub's: ``get_fields_from_schema(json.loads(text))``
(its Kinesis / json-schema sources' call: meta-schema check, jsonref, translate). Before
timing, every schema's output is checked identical (``to_datahub()`` of ours against
DataHub's ``pre_json_transform(to_obj())``).

Shapes (one row each): ``corpus``, the golden inputs DataHub terminates on plus generated
mixed schemas (nested objects, arrays of objects, maps, oneOf unions, nullable type lists,
enums, formats, $ref definitions with a recursive one); ``small`` (a dozen fields);
``wide`` (2,000+ fields); ``deep`` (objects and arrays nested 10 deep); ``unions``
(anyOf/oneOf everywhere). Rounds are interleaved (ours, DataHub's, per shape, order
alternating); a timed block repeats a small shape's schemas up to some 2,000 fields; each
side's best round is reported. Times are this process's CPU time (``time.process_time``: on a
shared machine, wall time mostly measures the other processes). Nothing is cached between calls.

Run: ``python benchmarks/normalize_formats_jsonschema.py [rounds]`` (default 5).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fieldgraph.normalizers import normalize

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
Corpus = list[tuple[str, str]]


def mixed(n: int) -> Corpus:
    out = []
    for i in range(n):
        defs = {
            "Money": {"type": "object", "required": ["amount"], "properties": {
                "amount": {"type": "number", "format": "double"}, "currency": {"enum": ["EUR", "USD", None]}}},
            "Node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                     "next": {"$ref": "#/definitions/Node"}}},
        }
        props: dict[str, Any] = {}
        for m in range(8):
            props[f"s{m}"] = {"type": ["string", "null"], "format": "date-time", "description": f"field {m}"}
            props[f"n{m}"] = {"type": "integer", "default": m}
            props[f"o{m}"] = {"type": "object", "title": f"O{m}", "required": ["a"], "properties": {
                "a": {"type": "string"}, "price": {"$ref": "#/definitions/Money"},
                "tags": {"type": "array", "items": {"type": "string"}}}}
            props[f"l{m}"] = {"type": "array", "items": {"title": "Line", "type": "object", "properties": {
                "sku": {"type": "string"}, "qty": {"type": "integer"}}}}
            props[f"m{m}"] = {"type": "object", "additionalProperties": {"type": "number"}}
            props[f"u{m}"] = {"oneOf": [{"type": "string"}, {"$ref": "#/definitions/Money"}, {"type": "null"}]}
            props[f"k{m}"] = {"$ref": "#/definitions/Node"}
        schema = {"title": f"Gen{i}", "type": "object", "definitions": defs, "properties": props,
                  "required": ["s0", "n0"]}
        out.append((f"gen_{i}", json.dumps(schema)))
    return out


def corpus() -> Corpus:
    items = []
    for p in sorted((ROOT / "tests" / "golden" / "jsonschema").glob("*.json")):
        if p.name.endswith(".fields.json") or p.stem.startswith("recursion_"):
            continue  # expected outputs; DataHub never terminates on recursion_*
        items.append((p.stem, p.read_text()))
    return items + mixed(4)


_SCALARS: list[dict[str, Any]] = [
    {"type": "string"}, {"type": "integer", "default": 0}, {"type": ["number", "null"]},
    {"type": "boolean", "description": "a flag"}, {"type": "string", "format": "date-time"},
    {"enum": ["A", "B", "C"]},
]


def small(n: int) -> Corpus:
    out = []
    for i in range(n):
        props: dict[str, Any] = {f"f{j}": _SCALARS[j % len(_SCALARS)] for j in range(8)}
        props["addr"] = {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}}}
        props["tags"] = {"type": "array", "items": {"type": "string"}}
        out.append((f"small_{i}", json.dumps({"title": f"Small{i}", "type": "object", "properties": props,
                                              "required": ["f0"]})))
    return out


def wide() -> Corpus:
    props: dict[str, Any] = {f"c{j}": _SCALARS[j % len(_SCALARS)] for j in range(1800)}
    for j in range(50):
        props[f"g{j}"] = {"type": "object", "properties": {f"x{k}": _SCALARS[k % len(_SCALARS)] for k in range(4)}}
    return [("wide", json.dumps({"title": "Wide", "type": "object", "properties": props}))]


def deep(depth: int = 10) -> Corpus:
    node: dict[str, Any] = {"type": "object", "properties": {"leaf": {"type": "string"}}}
    for d in range(depth):
        props: dict[str, Any] = {f"a{d}": {"type": "string"}, f"b{d}": {"type": "integer"},
                                 "next": node, "list": {"type": "array", "items": node}}
        node = {"type": "object", "title": f"L{d}", "properties": props}
    return [("deep", json.dumps(node))]


def unions(n: int) -> Corpus:
    out = []
    for i in range(n):
        props: dict[str, Any] = {}
        for j in range(12):
            props[f"one{j}"] = {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
            props[f"any{j}"] = {"anyOf": [
                {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "number"}}},
                {"type": "object", "title": "Alt", "properties": {"z": {"type": "boolean"}}},
                {"type": "array", "items": {"type": "string"}}]}
            props[f"t{j}"] = {"type": ["string", "integer", "null"]}
        out.append((f"unions_{i}", json.dumps({"title": f"U{i}", "type": "object", "properties": props})))
    return out


def shapes() -> dict[str, Corpus]:
    return {"corpus": corpus(), "small": small(20), "wide": wide(), "deep": deep(), "unions": unions(4)}


def timed(items: Corpus, convert: Callable[[str], list[Any]]) -> tuple[int, float]:
    start, n = time.process_time(), 0
    for _stem, text in items:
        n += len(convert(text))
    return n, time.process_time() - start


def main() -> None:
    logging.disable(logging.WARNING)
    sys.setrecursionlimit(10_000)
    from datahub.emitter.serialization_helper import pre_json_transform
    from datahub.ingestion.extractor.json_schema_util import JsonSchemaTranslator

    def ours(text: str) -> list[Any]:
        return normalize(text, "json-schema")

    def theirs(text: str) -> list[Any]:
        return list(JsonSchemaTranslator.get_fields_from_schema(json.loads(text), swallow_exceptions=False))

    data = shapes()
    for items in data.values():  # same output, or the comparison means nothing
        for stem, text in items:
            assert [f.to_datahub() for f in ours(text)] == [pre_json_transform(f.to_obj()) for f in theirs(text)], stem
    times: dict[str, dict[str, float]] = {shape: {"ours": float("inf"), "datahub": float("inf")} for shape in data}
    fields = {shape: sum(len(ours(text)) for _, text in items) for shape, items in data.items()}
    reps = {shape: -(-2000 // fields[shape]) for shape in data}  # a timed block: a few thousand fields
    for r in range(ROUNDS):
        for shape, items in data.items():
            sides = [("ours", ours), ("datahub", theirs)]
            for side, fn in sides if r % 2 == 0 else sides[::-1]:
                n, spent = timed(items * reps[shape], fn)
                times[shape][side] = min(times[shape][side], spent / n)  # seconds per field
    out: dict[str, Any] = {}
    for shape, items in data.items():
        ours_rate, dh_rate = 1 / times[shape]["ours"], 1 / times[shape]["datahub"]
        out[shape] = {"schemas": len(items), "fields": fields[shape], "fieldgraphFieldsPerS": round(ours_rate),
                      "datahubFieldsPerS": round(dh_rate), "ratio": round(ours_rate / dh_rate, 2)}
    print(json.dumps({"json-schema": {"input": "JSON text, both sides", "clock": "process CPU time", "rounds": ROUNDS,
                                      "identical_output": True, "shapes": out}}, indent=2))


if __name__ == "__main__":
    main()
