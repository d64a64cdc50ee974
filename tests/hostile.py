"""A corpus of hostile inputs, each line of an event stream with the reason it must be rejected for (or None: a
good event, however odd, that must be written). Shared by the ingest, worker and backfill tests
(tests/test_hostile.py): every path must reject each bad line with its reason and write every good one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .conftest import column, ds, lineage_event, mcp, schema_event, sf


@dataclass(frozen=True)
class Line:
    name: str
    data: bytes  # the line as it is sent: one JSON Lines line, one Kafka message value
    reason: str | None  # a part of the rejection's reason; None: a good event
    dataset: str | None = None  # a good event's dataset, which must be in the graph afterwards
    fields: tuple[str, ...] = ()  # and its fields

    @property
    def good(self) -> bool:
        return self.reason is None


def _schema(name: str, *, fields: list[Any] | None = None, ts: int = 10, **aspect: Any) -> dict[str, Any]:
    urn = ds(name)
    ev = schema_event(urn, ["a"], ts)
    doc = json.loads(ev["aspect"]["value"])
    if fields is not None:
        doc["fields"] = fields
    doc.update(aspect)
    ev["aspect"]["value"] = json.dumps(doc)  # JSON escapes what it must: NUL, lone surrogates, NaN as NaN
    return ev


def _col(path: Any, **attrs: Any) -> dict[str, Any]:
    return {**column("x"), "fieldPath": path, **attrs}


def _bytes(ev: Any) -> bytes:
    return json.dumps(ev).encode()


def _deep(levels: int, leaf: str = "1") -> bytes:
    return ('{"a":' * levels + leaf + "}" * levels).encode()


def _lineage_with(confidence: str) -> bytes:
    down, up = ds("hostile.good0"), ds("hostile.good1")
    ev = lineage_event(down, [(sf(down, "a"), [sf(up, "a")])], 20)
    doc = json.loads(ev["aspect"]["value"])
    doc["fineGrainedLineages"][0]["confidenceScore"] = "@@"
    ev["aspect"]["value"] = json.dumps(doc).replace('"@@"', confidence)  # NaN / Infinity as Python's JSON writes
    return _bytes(ev)


def corpus() -> list[Line]:
    good = [
        Line("plain", _bytes(_schema("hostile.good0")), None, ds("hostile.good0"), ("a",)),
        Line("plain again", _bytes(_schema("hostile.good1")), None, ds("hostile.good1"), ("a",)),
        Line("quotes, backslash, newline in a path", _bytes(_schema("hostile.quotes", fields=[_col('a"b\\c\nd')])),
             None, ds("hostile.quotes"), ('a"b\\c\nd',)),
        Line("emoji and right-to-left names", _bytes(_schema("hostile.😀", fields=[_col("שדה"), _col("🔑")])),
             None, ds("hostile.😀"), ("שדה", "🔑")),
        Line("a 500 KB description", _bytes(_schema("hostile.longdoc", fields=[_col("a", description="d" * 500_000)])),
             None, ds("hostile.longdoc"), ("a",)),
        Line("a 3 KB field path", _bytes(_schema("hostile.longpath", fields=[_col("p" * 3000)])),
             None, ds("hostile.longpath"), ("p" * 3000,)),
    ]
    bad = [
        Line("a number as field path", _bytes(_schema("hostile.b1", fields=[_col(5)])), "fieldPath must be a string"),
        Line("null as field path", _bytes(_schema("hostile.b2", fields=[_col(None)])), "fieldPath must be a string"),
        Line("an object as description", _bytes(_schema("hostile.b3", fields=[_col("a", description={"x": 1})])),
             "description must be a string"),
        Line("fields not a list", _bytes(_schema("hostile.b4", fields={"a": 1})), "valid list"),  # type: ignore[arg-type]
        Line("a NUL character", _bytes(_schema("hostile.b5", fields=[_col("a\x00b")])), "NUL character"),
        Line("a lone surrogate", _bytes(_schema("hostile.b6", fields=[_col("a\ud800b")])), "lone surrogate"),
        Line("a version of 10^30", _bytes(_schema("hostile.b7", version=10**30)), "does not fit in 64 bits"),
        Line("a time of 10^30", _bytes(_schema("hostile.b8", ts=10**30)), "does not fit in 64 bits"),
        Line("a dataset name of 5,000 characters", _bytes(_schema("hostile." + "x" * 5000)), "longer than the 4000 bytes"),
        Line("a field path of 100,000 characters", _bytes(_schema("hostile.b9", fields=[_col("p" * 100_000)])),
             "longer than the 4000 bytes"),
        Line("a query URN of 5,000 characters", _bytes(mcp(ds("hostile.b11"), "upstreamLineage", {"upstreams": [
            {"dataset": ds("hostile.good0"), "type": "TRANSFORMED", "auditStamp": {"time": 1, "actor": "urn:li:corpuser:x"},
             "query": "urn:li:query:" + "q" * 5000}]}, 1)), "longer than the 4000 bytes"),
        Line("NaN confidence", _lineage_with("NaN"), "not a finite number"),
        Line("infinite confidence", _lineage_with("Infinity"), "not a finite number"),
        Line("JSON nested 10,000 deep", _deep(10_000), "nested"),
        Line("an array nested 10,000 deep", b"[" * 10_000 + b"]" * 10_000, "nested"),
        Line("an invalid UTF-8 byte", b'{"entityType": "dataset", "x": "\xff"}', "UTF-8"),
        Line("not JSON", b"{this is not json", "not JSON"),
        Line("JSON but not an object", b"42", "JSON object"),
        Line("an event of no known source", _bytes({"hello": "world"}), "not a DataHub change event"),
        Line("a malformed dataset URN", _bytes(mcp("urn:li:dataset:(broken", "schemaMetadata",
                                                   json.loads(_schema("x")["aspect"]["value"]), 1)), "URN"),
        Line("an aspect value that is not JSON", _bytes({**_schema("hostile.b10"), "aspect": {
            "value": "{nope", "contentType": "application/json"}}), "JSON"),
        Line("CDAP operations in a cycle", _bytes({"programRun": "ns.App.workflow.W", "run": "r1", "time": 1, "operations": [
            {"type": "READ", "name": "r", "source": {"namespace": "default", "name": "in"}, "outputs": ["a"]},
            {"type": "TRANSFORM", "name": "t1", "inputs": [{"origin": "t2", "name": "a"}], "outputs": ["a"]},
            {"type": "TRANSFORM", "name": "t2", "inputs": [{"origin": "t1", "name": "a"}], "outputs": ["a"]},
            {"type": "WRITE", "name": "w", "destination": {"namespace": "default", "name": "out"},
             "inputs": [{"origin": "t2", "name": "a"}]}]}), "Cycle detected"),
        Line("SQL that does not parse", _bytes({"sql": "SELECT FROM WHERE (", "dialect": "spark", "database": "shop",
                                                "time": 1}), "sql: line 1"),
        Line("an OpenLineage time that is no time", _bytes({
            "eventType": "COMPLETE", "eventTime": "yesterday-ish", "run": {"runId": "3f5e83fa-3480-44ff-99c5-ff943904e5e8"},
            "job": {"namespace": "n", "name": "j"}, "producer": "p", "inputs": [], "outputs": []}),
             "eventTime: 'yesterday-ish' is not a time"),
    ]
    # interleave, so that good events sit between bad ones in every batch
    out: list[Line] = []
    for i, b in enumerate(bad):
        out.append(b)
        if i < len(good):
            out.append(good[i])
    return out + good[len(bad):]


def jsonl(lines: list[Line]) -> bytes:
    return b"".join(line.data + b"\n" for line in lines)
