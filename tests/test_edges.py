"""One edge vocabulary for every source; first and last seen (a DataHub aspect replaces its edges: both are its stamp)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fieldgraph.changes import EdgeProps, carries_metadata
from fieldgraph.errors import InputError
from fieldgraph.graph.plan import field_urn

from .conftest import ds, ingest, lineage_event, mcp, schema_event, sf

A, B = ds("db.a"), ds("db.b")
SOURCES = Path(__file__).resolve().parent.parent / "examples" / "sources"
VOCAB = {"sourceFormat", "transformation", "kind", "subtype", "masking", "confidenceScore", "firstSeen", "lastSeen"}


def edges(g) -> dict[tuple[str, str], dict]:
    return {(r["a"], r["b"]): r["p"] for r in
            g.query("MATCH (a)-[e:DataDerivedFrom]->(b) RETURN a.urn AS a, b.urn AS b, properties(e) AS p")}


def test_every_source_writes_the_same_vocabulary(graph) -> None:
    ingest(graph, schema_event(A, ["x", "y"], 1), schema_event(B, ["x", "y", "s"], 1),
           lineage_event(B, [(sf(B, "x"), [sf(A, "x")])], 10),
           mcp(B, "datasetUpstreamLineage", {"fieldMappings": [{"sourceFields": [sf(A, "y")], "destinationField":
                                                                sf(B, "s")}]}, 10),
           *[json.loads(p.read_text()) for p in sorted(SOURCES.glob("*.json"))])
    by_format: dict[str, dict] = {}
    for props in edges(graph).values():
        assert VOCAB <= set(props), props
        assert props["kind"] in ("DIRECT", "INDIRECT")
        by_format.setdefault(props["sourceFormat"], props)
    assert set(by_format) == {"datahub", "datahub-rfc", "cdap", "openlineage"}
    assert by_format["datahub"]["subtype"] == "IDENTITY" and by_format["datahub"]["transformation"] == "IDENTITY"
    assert by_format["datahub-rfc"]["subtype"] == "TRANSFORMATION"  # BlackBox by default
    assert by_format["datahub-rfc"]["transformation"].endswith("BlackBox")


def test_replacing_an_aspect_replaces_its_edges_and_stamps(graph) -> None:
    ingest(graph, schema_event(A, ["x", "y"], 1), schema_event(B, ["x", "y"], 1),
           lineage_event(B, [(sf(B, "x"), [sf(A, "x")]), (sf(B, "y"), [sf(A, "y")])], 10))
    ingest(graph, lineage_event(B, [(sf(B, "x"), [sf(A, "x")])], 20))
    e = edges(graph)
    assert set(e) == {(field_urn(B, "x"), field_urn(A, "x"))}
    (props,) = e.values()
    # the edge both versions list is one fact: first seen in the first, last seen in the second
    assert (props["validFrom"], props["firstSeen"], props["lastSeen"]) == (10, 10, 20)
    ingest(graph, mcp(B, "upstreamLineage", None, 30, change="DELETE"))
    assert edges(graph) == {}


def test_deleting_a_dataset_removes_its_job_lineage(graph) -> None:
    ingest(graph, json.loads((SOURCES / "01_cdap_normalize_users.json").read_text()))
    profiles = "urn:li:dataset:(urn:li:dataPlatform:cdap,default.normalized_user_profiles,PROD)"
    assert edges(graph)
    ingest(graph, {"entityType": "dataset", "entityUrn": profiles, "changeType": "DELETE",
                   "systemMetadata": {"lastObserved": 1735689700000}})
    assert edges(graph) == {}


def test_vocabulary_rules() -> None:
    with pytest.raises(InputError, match="DIRECT or INDIRECT"):
        EdgeProps("x", kind="SIDEWAYS")  # type: ignore[arg-type]
    assert carries_metadata({"kind": "DIRECT"}) and carries_metadata({})  # edges before the vocabulary: direct
    assert not carries_metadata({"kind": "DIRECT", "masking": True})
    assert not carries_metadata({"kind": "INDIRECT"}) and carries_metadata({"kind": "INDIRECT"}, indirect=True)
