"""JSON Schema normalization throughput: fieldgraph vs DataHub's JsonSchemaTranslator, same corpus.

Prints one JSON object with a ``json-schema`` section: fields per second of ours
(``normalize(text, "json-schema")``: parse, resolve $refs, convert, walk) and of DataHub's
``get_fields_from_schema(json.loads(text))`` (its Kinesis source's call: meta-schema check,
jsonref, translate), on the same corpus, and ours / DataHub's. Both outputs are checked equal.

Corpus: the golden inputs DataHub terminates on plus generated schemas (nested objects,
arrays of objects, maps, oneOf unions, nullable type lists, enums, formats, $ref definitions
with a recursive one). Run: ``python benchmarks/normalize_formats_jsonschema.py [rounds]``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

from fieldgraph.normalizers import normalize

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def generated(n: int) -> list[tuple[str, str]]:
    out = []
    for i in range(n):
        defs = {
            "Money": {"type": "object", "required": ["amount"], "properties": {
                "amount": {"type": "number", "format": "double"}, "currency": {"enum": ["EUR", "USD", None]}}},
            "Node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                     "next": {"$ref": "#/definitions/Node"}}},
        }
        props: dict = {}
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


def corpus() -> list[tuple[str, str]]:
    items = []
    for p in sorted((ROOT / "tests" / "golden" / "jsonschema").glob("*.json")):
        if p.name.endswith(".fields.json") or p.stem.startswith("recursion_"):
            continue  # expected outputs; DataHub never terminates on recursion_*
        items.append((p.stem, p.read_text()))
    return items + generated(4)


def main() -> None:
    logging.disable(logging.WARNING)
    try:
        from datahub.emitter.serialization_helper import pre_json_transform
        from datahub.ingestion.extractor.json_schema_util import JsonSchemaTranslator
    except ImportError as exc:  # pragma: no cover
        JsonSchemaTranslator, missing = None, str(exc)
    items = corpus()

    def run(convert) -> tuple[int, float]:
        fields, spent = 0, 0.0
        for _ in range(ROUNDS):
            for _stem, text in items:
                start = time.perf_counter()
                fields += len(convert(text))
                spent += time.perf_counter() - start
        return fields, spent

    def ours(text: str) -> list:
        return normalize(text, "json-schema")

    section: dict = {"corpus_schemas": len(items), "rounds": ROUNDS,
                     "fields_per_round": sum(len(ours(t)) for _, t in items)}
    n, spent = run(ours)
    section["ours_fields_per_s"] = round(n / spent)
    if JsonSchemaTranslator is None:
        section["datahub"] = f"not installed: {missing}"
    else:
        def theirs(text: str) -> list:
            return list(JsonSchemaTranslator.get_fields_from_schema(json.loads(text), swallow_exceptions=False))

        for stem, text in items:  # same output, or the comparison means nothing
            assert [f.to_datahub() for f in ours(text)] == [pre_json_transform(f.to_obj()) for f in theirs(text)], stem
        n2, spent2 = run(theirs)
        section["datahub_fields_per_s"] = round(n2 / spent2)
        section["ratio_ours_over_datahub"] = round((n / spent) / (n2 / spent2), 2)
    print(json.dumps({"json-schema": section}, indent=2))


if __name__ == "__main__":
    main()
