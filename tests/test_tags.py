"""Tags and glossary terms propagate downstream along DataDerivedFrom edges (computed on read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli import app

from .conftest import column, ds, ingest, lineage_event, mcp, sf

SRC, MID, OUT = ds("db.src"), ds("db.mid"), ds("db.out")
SOURCES = Path(__file__).resolve().parent.parent / "examples" / "sources"


def tagged_schema(urn: str, fields: dict[str, tuple[list[str], list[str]]], ts: int) -> dict:
    cols = []
    for path, (tags, terms) in fields.items():
        c = column(path)
        if tags:
            c["globalTags"] = {"tags": [{"tag": f"urn:li:tag:{t}"} for t in tags]}
        if terms:
            c["glossaryTerms"] = {"terms": [{"urn": f"urn:li:glossaryTerm:{t}"} for t in terms],
                                  "auditStamp": {"time": 0, "actor": "urn:li:corpuser:x"}}
        cols.append(c)
    other = {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}}
    return mcp(urn, "schemaMetadata", {"schemaName": urn, "platform": "urn:li:dataPlatform:hive", "version": 0,
                                       "hash": "", "platformSchema": other, "fields": cols}, ts)


@pytest.fixture
def chain(graph):
    """src.email (PII, term Sensitive) -> mid.email (identity) -> out.email (BLACKBOX) and out.email_hash (HASH);
    src.country (no tags) -> out.country."""
    ingest(graph,
           tagged_schema(SRC, {"email": (["PII"], ["Sensitive"]), "country": ([], [])}, 1),
           tagged_schema(MID, {"email": ([], []), "country": ([], [])}, 1),
           tagged_schema(OUT, {"email": ([], []), "email_hash": ([], []), "country": ([], [])}, 1),
           lineage_event(MID, [(sf(MID, "email"), [sf(SRC, "email")]), (sf(MID, "country"), [sf(SRC, "country")])], 2),
           lineage_event(OUT, [(sf(OUT, "email"), [sf(MID, "email")])], 2, op="BLACKBOX"),
           mcp(OUT, "datasetUpstreamLineage", {"fieldMappings": [
               {"sourceFields": [sf(MID, "email")], "destinationField": sf(OUT, "email_hash"),
                "transformationFunction": "com.linkedin.finegrainedmetadata.transformation.Hash"}]}, 2))
    return graph


def test_schema_tags_and_terms_propagate_and_masking_stops_them(chain) -> None:
    own = chain.tags(sf(SRC, "email"))
    assert own["own"] == ["PII", "urn:li:glossaryTerm:Sensitive"] and own["inherited"] == []
    inh = chain.tags(sf(OUT, "email"))
    assert inh["own"] == []
    assert [(i["label"], i["from"], i["distance"]) for i in inh["inherited"]] == [
        ("PII", field_urn(SRC, "email"), 2), ("urn:li:glossaryTerm:Sensitive", field_urn(SRC, "email"), 2)]
    assert inh["inherited"][0]["path"] == [field_urn(OUT, "email"), field_urn(MID, "email"), field_urn(SRC, "email")]
    assert chain.tags(sf(OUT, "email_hash"))["inherited"] == []  # the hash masks it
    where = {(r["dataset"], r["fieldPath"]): r for r in chain.tagged("PII")}
    assert set(where) == {(SRC, "email"), (MID, "email"), (OUT, "email")}
    assert where[(SRC, "email")]["own"] and where[(OUT, "email")]["from"] == [field_urn(SRC, "email")]
    assert {r["fieldPath"] for r in chain.tagged("urn:li:glossaryTerm:Sensitive")} == {"email"}


def test_hand_set_tags_propagate_and_follow_edge_changes(chain) -> None:
    assert chain.tag(sf(SRC, "country"), add=["urn:li:tag:Geo"]) == ["Geo"]
    assert chain.tags(sf(MID, "country"))["inherited"][0]["label"] == "Geo"
    # the lineage of mid changes: country no longer comes from src, and the tag no longer flows
    ingest(chain, lineage_event(MID, [(sf(MID, "email"), [sf(SRC, "email")])], 3))
    assert chain.tags(sf(MID, "country"))["inherited"] == []
    assert chain.tag(sf(SRC, "country"), remove=["Geo"]) == []
    assert chain.tagged("Geo") == []


def test_indirect_edges_carry_tags_only_when_asked(graph) -> None:
    ol = json.loads((SOURCES / "02_openlineage_active_users.json").read_text())
    ingest(graph, ol)
    gold = "urn:li:dataset:(urn:li:dataPlatform:s3,lake/gold/active_users,PROD)"
    users = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.public.users,PROD)"
    graph.tag(field_urn(users, "country"), add=["Geo"])
    assert {r["fieldPath"] for r in graph.tagged("PII") if r["dataset"] == gold} == {"email"}  # not email_sha
    assert [r for r in graph.tagged("Geo") if r["dataset"] == gold] == []
    assert {r["fieldPath"] for r in graph.tagged("Geo", indirect=True) if r["dataset"] == gold} == {
        "user_id", "email", "email_sha", "signup_day"}


def test_cli_tag_tags_tagged_and_lineage_summary(graph, monkeypatch) -> None:
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()

    def run(*args, code=0):
        res = runner.invoke(app, list(args))
        assert res.exit_code == code, res.output
        return res

    try:
        res = json.loads(run("ingest", str(SOURCES), "--json").stdout)
        assert res["rejected"] == 0 and res["events"] == 2
        profiles = "urn:li:dataset:(urn:li:dataPlatform:cdap,default.normalized_user_profiles,PROD)"
        users = "urn:li:dataset:(urn:li:dataPlatform:cdap,default.users,PROD)"
        run("tag", field_urn(users, "email"), "PII")
        tags = json.loads(run("tags", field_urn(profiles, "email"), "--json").stdout)
        assert tags["inherited"][0]["from"] == field_urn(users, "email")
        assert "users.email" in run("tags", field_urn(profiles, "email")).stdout
        tagged = json.loads(run("tagged", "PII", "--json").stdout)
        assert {r["fieldPath"] for r in tagged} == {"email"} and len(tagged) == 4  # 2 sources, 2 destinations
        inc = json.loads(run("lineage-summary", field_urn(profiles, "name"), "--direction", "incoming",
                             "--start", "2025-01-01", "--end", "2025-01-02T00:00:00Z", "--json").stdout)
        assert inc["summary"] == [{"dataset": users, "fields": ["first_name", "last_name"]}]
        assert [o["name"] for o in inc["operations"][0]["operations"]] == ["read", "concat", "write"]
        empty = json.loads(run("lineage-summary", field_urn(profiles, "name"), "--start", "2025-02-01",
                               "--json").stdout)
        assert empty["summary"] == []
        text = run("lineage-summary", field_urn(users, "first_name"), "--direction", "outgoing").stdout
        assert "normalized_user_profiles" in text and "dropped by" in text and "dropFirst" in text
        assert "expected incoming or outgoing" in run("lineage-summary", field_urn(users, "id"), "--direction",
                                                      "up", code=3).stderr
        assert "ISO 8601" in run("lineage-summary", field_urn(users, "id"), "--start", "soon", code=3).stderr
    finally:
        run("query", "MATCH (n) DETACH DELETE n", "--write")
