"""Tags and glossary terms set on columns in DataHub's UI or API (``editableSchemaMetadata``), built with DataHub's
own classes (acryl-datahub, a test extra): a column's own labels are its schema's plus these, whichever arrives
first, with v1 or v2 field paths; they propagate like the schema's, and removing one removes it downstream.
Both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.changes import UNSTAMPED, AspectDelete, EditableSchemaChange
from fieldgraph.errors import EventError
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.sources import decode_event

from .conftest import WITH_MEMORY, column, ds, lineage_event, mcp, sf, stamped

m = pytest.importorskip("datahub.metadata.schema_classes")
from datahub.emitter.mcp import MetadataChangeProposalWrapper as MCPW  # noqa: E402

USERS, EMAILS, REPORT = ds("crm.users"), ds("crm.emails"), ds("crm.report")
#: v2 paths of a record with a nested struct, as an Avro schema normalizes to
V2_EMAIL = "[version=2.0].[type=User].[type=string].email"
V2_CITY = "[version=2.0].[type=User].[type=Address].address.[type=string].city"


def editable_event(urn: str, fields: dict[str, tuple[list[str], list[str]]], ts: int) -> dict[str, Any]:
    """``editableSchemaMetadata`` of ``urn`` as DataHub's MCP JSON: field path -> (tag names, term names)."""
    infos = [m.EditableSchemaFieldInfoClass(
        fieldPath=path,
        globalTags=m.GlobalTagsClass([m.TagAssociationClass(f"urn:li:tag:{t}") for t in tags]) if tags else None,
        glossaryTerms=m.GlossaryTermsClass([m.GlossaryTermAssociationClass(f"urn:li:glossaryTerm:{t}")
                                            for t in terms], m.AuditStampClass(ts, "urn:li:corpuser:steward"))
        if terms else None) for path, (tags, terms) in fields.items()]
    aspect = m.EditableSchemaMetadataClass(editableSchemaFieldInfo=infos,
                                           lastModified=m.AuditStampClass(ts, "urn:li:corpuser:steward"))
    return json.loads(json.dumps(stamped(MCPW(entityUrn=urn, aspect=aspect), ts).to_obj()))


def v2_schema(urn: str, paths: list[str], ts: int) -> dict[str, Any]:
    return mcp(urn, "schemaMetadata", {
        "schemaName": urn, "platform": "urn:li:dataPlatform:kafka", "version": 0, "hash": "",
        "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
        "fields": [column(p) for p in paths]}, ts)


def write(g: Any, *events: dict[str, Any]) -> None:
    g.ingest([c for e in events for c in decode_event(e)])


def tagged_urns(g: Any, label: str) -> list[str]:
    res = encode(g.tagged(label))
    rows = res["fields"] if isinstance(res, dict) else res
    return sorted(r["urn"] for r in rows)


@pytest.fixture
def crm(graph: Any) -> Any:
    """users.email -> emails.email -> report.email (identity); users.address.city -> report.city."""
    write(graph, v2_schema(USERS, [V2_EMAIL, "[version=2.0].[type=User].[type=Address].address", V2_CITY], 1),
          v2_schema(EMAILS, ["email"], 1), v2_schema(REPORT, ["email", "city"], 1),
          lineage_event(EMAILS, [(sf(EMAILS, "email"), [sf(USERS, V2_EMAIL)])], 2),
          lineage_event(REPORT, [(sf(REPORT, "email"), [sf(EMAILS, "email")]),
                                 (sf(REPORT, "city"), [sf(USERS, V2_CITY)])], 2))
    return graph


def test_the_aspect_decodes_to_each_fields_labels() -> None:
    (c,) = decode_event(editable_event(USERS, {"email": (["PII"], ["Sensitive"]), "address.city": ([], [])}, 7))
    assert c == EditableSchemaChange(USERS, (("email", ("PII", "urn:li:glossaryTerm:Sensitive")),), 7)
    deleted = {"entityType": "dataset", "entityUrn": USERS, "changeType": "DELETE",
               "aspectName": "editableSchemaMetadata"}
    assert decode_event(deleted) == [AspectDelete(USERS, "editableSchemaMetadata", UNSTAMPED)]
    bad = editable_event(USERS, {"email": (["PII"], [])}, 7)
    bad["aspect"]["value"] = bad["aspect"]["value"].replace("urn:li:tag:PII", "PII")
    with pytest.raises(EventError, match=r"editableSchemaFieldInfo.0.globalTags.tags.0.tag.*tag URN"):
        decode_event(bad)


@WITH_MEMORY
def test_a_stewards_tag_on_a_v1_path_is_the_columns_own_and_flows_downstream(crm: Any) -> None:
    write(crm, editable_event(USERS, {"email": (["PII"], ["Sensitive"]), "address.city": (["Geo"], [])}, 10))
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == ["PII", "urn:li:glossaryTerm:Sensitive"]
    inherited = encode(crm.tags(sf(REPORT, "email")))["inherited"]
    assert [(i["label"], i["from"], i["distance"]) for i in inherited] == [
        ("PII", field_urn(USERS, V2_EMAIL), 2), ("urn:li:glossaryTerm:Sensitive", field_urn(USERS, V2_EMAIL), 2)]
    assert [i["label"] for i in encode(crm.tags(sf(REPORT, "city")))["inherited"]] == ["Geo"]
    assert tagged_urns(crm, "PII") == sorted([field_urn(USERS, V2_EMAIL), field_urn(EMAILS, "email"),
                                              field_urn(REPORT, "email")])
    assert tagged_urns(crm, "urn:li:glossaryTerm:Sensitive") == tagged_urns(crm, "PII")


@WITH_MEMORY
def test_schema_and_editable_labels_merge_and_removing_one_removes_it_downstream(crm: Any) -> None:
    schema_tagged = column(V2_EMAIL)
    schema_tagged["globalTags"] = {"tags": [{"tag": "urn:li:tag:Contact"}]}
    write(crm, mcp(USERS, "schemaMetadata", {
        "schemaName": USERS, "platform": "urn:li:dataPlatform:kafka", "version": 1, "hash": "",
        "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
        "fields": [schema_tagged, column("[version=2.0].[type=User].[type=Address].address"), column(V2_CITY)]}, 3),
        editable_event(USERS, {V2_EMAIL: (["PII", "Contact"], [])}, 10))  # a v2 path, a tag both have
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == ["Contact", "PII"]
    write(crm, editable_event(USERS, {V2_EMAIL: ([], [])}, 20))  # the steward removes PII
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == ["Contact"]
    assert [i["label"] for i in encode(crm.tags(sf(REPORT, "email")))["inherited"]] == ["Contact"]
    assert tagged_urns(crm, "PII") == []


@WITH_MEMORY
def test_labels_set_before_the_schema_arrives_apply_when_it_does(graph: Any) -> None:
    write(graph, editable_event(USERS, {"email": (["PII"], [])}, 10))
    assert graph.read_state([USERS])  # kept on a placeholder dataset, not cleaned up
    write(graph, v2_schema(USERS, [V2_EMAIL], 20))
    assert encode(graph.tags(sf(USERS, V2_EMAIL)))["own"] == ["PII"]


@WITH_MEMORY
def test_late_versions_and_deletes(crm: Any) -> None:
    write(crm, editable_event(USERS, {"email": (["PII"], [])}, 10),
          editable_event(USERS, {"email": (["Public"], [])}, 5))  # older, in the same batch
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == ["PII"]
    write(crm, editable_event(USERS, {"email": (["Public"], [])}, 6))  # older, arriving later
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == ["PII"]
    write(crm, {"entityType": "dataset", "entityUrn": USERS, "changeType": "DELETE",
                "aspectName": "editableSchemaMetadata"})  # unstamped: applies as it arrives
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == []
    write(crm, editable_event(USERS, {"email": (["PII"], [])}, 9))  # older than the version the delete ended
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == []
    write(crm, editable_event(USERS, {"email": (["PII"], [])}, 30))
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == ["PII"]
    write(crm, {"entityType": "dataset", "entityUrn": USERS, "changeType": "DELETE",
                "systemMetadata": {"lastObserved": 40}})  # the whole dataset
    assert encode(crm.tags(sf(USERS, V2_EMAIL)))["own"] == []


def test_ingest_reads_every_event_of_a_governance_file(graph: Any, tmp_path: Path) -> None:
    """The issue's scenario: schemas, lineage and a steward's tags in one file; every event is used."""
    events = [v2_schema(USERS, [V2_EMAIL], 1), v2_schema(EMAILS, ["email"], 1),
              lineage_event(EMAILS, [(sf(EMAILS, "email"), [sf(USERS, V2_EMAIL)])], 2),
              editable_event(USERS, {"email": (["PII"], [])}, 3)]
    file = tmp_path / "events.jsonl"
    file.write_text("".join(json.dumps(e) + "\n" for e in events))
    res = CliRunner().invoke(app, ["ingest", str(file), "--graph", graph.uri, "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout[res.stdout.index("{"):])
    assert (summary["events"], summary["rejected"], summary["skipped"]) == (4, 0, 0)
    assert tagged_urns(graph, "PII") == sorted([field_urn(USERS, V2_EMAIL), field_urn(EMAILS, "email")])
