"""OpenLineage run events built with the OpenLineage Python client itself, decoded and on the real graph."""

from __future__ import annotations

import json

import pytest
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import lineage, sql_job, tags_dataset
from openlineage.client.facet_v2 import schema_dataset as sd
from openlineage.client.serde import Serde

from fieldgraph.errors import ConfigError, EventError
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.config import platforms_from_env
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.sources import openlineage as ol

from .conftest import ingest

PG = "postgres://db.internal:5432"
USERS = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.public.users,PROD)"
GOLD = "urn:li:dataset:(urn:li:dataPlatform:s3,lake/gold/users,PROD)"
RUN_ID = "01a20188-88c7-7771-a233-a2a83086b505"
TIME = "2025-01-01T00:00:00.000Z"
T0 = 1735689600000


def users_input() -> InputDataset:
    return InputDataset(PG, "shop.public.users", facets={
        "schema": sd.SchemaDatasetFacet(fields=[
            sd.SchemaDatasetFacetFields("id", "INTEGER"), sd.SchemaDatasetFacetFields("email", "VARCHAR"),
            sd.SchemaDatasetFacetFields("country", "VARCHAR"),
            sd.SchemaDatasetFacetFields("address", "STRUCT", fields=[sd.SchemaDatasetFacetFields("city", "VARCHAR")])]),
        "tags": tags_dataset.TagsDatasetFacet(tags=[
            tags_dataset.TagsDatasetFacetFields("pii", "true", "manual", "email"),
            tags_dataset.TagsDatasetFacetFields("pii", "true", "manual", "address.city")])})


def t(kind, subtype=None, masking=False, description=None):
    return cl.Transformation(kind, subtype, description, masking)


def gold_output(facet_key="columnLineage", facet=None) -> OutputDataset:
    facet = facet or cl.ColumnLineageDatasetFacet(
        fields={
            "id": cl.Fields(inputFields=[cl.InputField(PG, "shop.public.users", "id", [t("DIRECT", "IDENTITY")])]),
            "email_hash": cl.Fields(inputFields=[cl.InputField(PG, "shop.public.users", "email", [
                t("DIRECT", "TRANSFORMATION", masking=True, description="sha256(email)")])]),
            "city": cl.Fields(inputFields=[cl.InputField(PG, "shop.public.users", "address.city", [
                t("DIRECT", "IDENTITY")])]),
        },
        dataset=[cl.InputField(PG, "shop.public.users", "country", [t("INDIRECT", "FILTER")])])
    return OutputDataset("s3://lake", "/gold/users", facets={
        facet_key: facet,
        "schema": sd.SchemaDatasetFacet(fields=[sd.SchemaDatasetFacetFields(n, "STRING")
                                                for n in ("id", "email_hash", "city")])})


def run_event(outputs, inputs=None, state=RunState.COMPLETE, job_facets=None) -> dict:
    ev = RunEvent(eventType=state, eventTime=TIME, run=Run(runId=RUN_ID),
                  job=Job(namespace="spark", name="gold_users",
                          facets={"sql": sql_job.SQLJobFacet("SELECT ... FROM users"), **(job_facets or {})}),
                  producer="https://example.com/producer", inputs=inputs if inputs is not None else [users_input()],
                  outputs=outputs)
    return json.loads(Serde.to_json(ev))  # exactly what the client sends


def lineage_of(changes):
    return {(e.downstream, e.upstream): e.props.to_props() for c in changes if c.aspect == "jobLineage" for e in c.edges}


def test_run_event_from_the_client_schemas_tags_and_column_lineage() -> None:
    changes = decode_event(run_event([gold_output()]))
    kinds = sorted((c.dataset, c.aspect) for c in changes)
    assert kinds == [(USERS, "schemaMetadata"), (GOLD, "jobLineage"), (GOLD, "schemaMetadata")]
    users_schema = next(c for c in changes if c.dataset == USERS)
    fields = {f.fieldPath: f for f in users_schema.fields}
    assert set(fields) == {"id", "email", "country", "address", "address.city"}
    assert fields["email"].tags == ("pii",) and fields["address.city"].tags == ("pii",)
    assert fields["id"].type.name == "NumberType" and fields["address"].type.name == "RecordType"

    edges = lineage_of(changes)
    ident = edges[(field_urn(GOLD, "id"), field_urn(USERS, "id"))]
    assert ident["kind"] == "DIRECT" and ident["subtype"] == "IDENTITY" and ident["transformation"] == "Identity"
    assert ident["masking"] is False and ident["query"] == "SELECT ... FROM users"
    assert ident["run"] == RUN_ID and ident["runTime"] == T0 and ident["sourceFormat"] == "openlineage"
    masked = edges[(field_urn(GOLD, "email_hash"), field_urn(USERS, "email"))]
    assert masked["masking"] is True and masked["description"] == "sha256(email)"
    # the dataset-wide FILTER input is an INDIRECT edge from every output field
    wide = {down for down, up in edges if up == field_urn(USERS, "country")}
    assert wide == {field_urn(GOLD, n) for n in ("id", "email_hash", "city")}
    assert edges[(field_urn(GOLD, "id"), field_urn(USERS, "country"))]["kind"] == "INDIRECT"
    assert edges[(field_urn(GOLD, "id"), field_urn(USERS, "country"))]["subtype"] == "FILTER"


def test_legacy_column_lineage_without_transformations() -> None:
    raw = run_event([gold_output()])
    raw["outputs"][0]["facets"]["columnLineage"] = {"fields": {"id": {
        "inputFields": [{"namespace": PG, "name": "shop.public.users", "field": "id"}],
        "transformationDescription": "identical", "transformationType": "IDENTITY"}, "email_hash": {
        "inputFields": [{"namespace": PG, "name": "shop.public.users", "field": "email"}],
        "transformationType": "MASKED"}}}
    edges = lineage_of(decode_event(raw))
    assert edges[(field_urn(GOLD, "id"), field_urn(USERS, "id"))]["subtype"] == "IDENTITY"
    assert edges[(field_urn(GOLD, "email_hash"), field_urn(USERS, "email"))]["masking"] is True


def test_explicit_lineage_facets_supersede_column_lineage() -> None:
    src = lambda f, *ts: lineage.LineageDatasetInput(PG, "shop.public.users", "DATASET", f, list(ts))  # noqa: E731
    facet = lineage.LineageDatasetFacet(
        inputs=[src("country", lineage.LineageTransformation("INDIRECT", "GROUP_BY"))],
        fields={"id": lineage.LineageFieldEntry([src("id", lineage.LineageTransformation("DIRECT", "IDENTITY"))]),
                "n": lineage.LineageFieldEntry([src("id", lineage.LineageTransformation("DIRECT", "AGGREGATION"))])})
    edges = lineage_of(decode_event(run_event([gold_output("lineage", facet)])))
    assert edges[(field_urn(GOLD, "n"), field_urn(USERS, "id"))]["subtype"] == "AGGREGATION"
    assert edges[(field_urn(GOLD, "n"), field_urn(USERS, "country"))]["subtype"] == "GROUP_BY"
    assert edges[(field_urn(GOLD, "n"), field_urn(USERS, "country"))]["kind"] == "INDIRECT"

    job_facet = lineage.LineageJobFacet(entries=[lineage.LineageDatasetEntry(
        "kafka://broker:9092", "clicks_by_user", "DATASET",
        fields={"user": lineage.LineageFieldEntry([src("id", lineage.LineageTransformation("DIRECT", "IDENTITY"))])})])
    edges = lineage_of(decode_event(run_event([], job_facets={"lineage": job_facet})))
    clicks = "urn:li:dataset:(urn:li:dataPlatform:kafka,clicks_by_user,PROD)"
    assert set(edges) == {(field_urn(clicks, "user"), field_urn(USERS, "id"))}


def test_failed_runs_give_schemas_but_no_lineage() -> None:
    changes = decode_event(run_event([gold_output()], state=RunState.FAIL))
    assert {c.aspect for c in changes} == {"schemaMetadata"}


def test_platform_mapping_defaults_and_configuration(tmp_path) -> None:
    m = ol.PlatformMapping()
    assert m.dataset_urn("s3://bucket", "/a/b") == "urn:li:dataset:(urn:li:dataPlatform:s3,bucket/a/b,PROD)"
    assert m.dataset_urn("hdfs://nn:8020", "/warehouse/t") == "urn:li:dataset:(urn:li:dataPlatform:hdfs,/warehouse/t,PROD)"
    assert m.dataset_urn("bigquery", "p.d.t") == "urn:li:dataset:(urn:li:dataPlatform:bigquery,p.d.t,PROD)"
    assert m.dataset_urn("my-airflow", "x") == "urn:li:dataset:(urn:li:dataPlatform:my-airflow,x,PROD)"
    path = tmp_path / "platforms.json"
    path.write_text(json.dumps({"namespaces": {PG: {"platform": "postgres", "prefix": "prod_", "env": "PROD"}},
                                "schemes": {"s3": "s3-lake"}, "env": "DEV"}))
    mapping = platforms_from_env({"FIELDGRAPH_OPENLINEAGE_PLATFORMS": str(path)})  # read once, at the edge
    assert mapping.dataset_urn(PG, "shop.users") == "urn:li:dataset:(urn:li:dataPlatform:postgres,prod_shop.users,PROD)"
    assert mapping.dataset_urn("s3://b", "k") == "urn:li:dataset:(urn:li:dataPlatform:s3-lake,b/k,DEV)"
    # and passed down to the decoder: the same event maps its datasets with it
    raw = run_event([gold_output()])
    assert USERS in {c.dataset for c in decode_event(raw)}
    mapped = {c.dataset for c in decode_event(raw, platforms=mapping)}
    assert "urn:li:dataset:(urn:li:dataPlatform:postgres,prod_shop.public.users,PROD)" in mapped
    with pytest.raises(ConfigError, match="cannot read the OpenLineage platform mapping"):
        platforms_from_env({"FIELDGRAPH_OPENLINEAGE_PLATFORMS": str(tmp_path / "missing.json")})
    with pytest.raises(ValueError, match="unknown keys"):
        ol.PlatformMapping.from_json({"platforms": {}})


@pytest.mark.parametrize("mutate, message", [
    (lambda e: e.update(eventTime="yesterday"), "eventTime: 'yesterday' is not a time"),
    (lambda e: e["outputs"][0].pop("namespace"), r"outputs\[0\]\.namespace"),
    (lambda e: e["outputs"][0]["facets"]["columnLineage"]["fields"]["id"]["inputFields"][0]["transformations"][0]
     .update(type="SIDEWAYS"), "not DIRECT or INDIRECT"),
    (lambda e: e["inputs"][0]["facets"]["schema"]["fields"][0].pop("name"), r"schema\.fields\[0\]\.name"),
    (lambda e: e.pop("job"), "needs job"),
])
def test_bad_events_name_the_place(mutate, message) -> None:
    raw = run_event([gold_output()])
    mutate(raw)
    with pytest.raises(EventError, match=message):
        decode_event(raw)


def test_on_the_graph_with_propagation_through_masking(graph) -> None:
    ingest(graph, run_event([gold_output()]))
    up = graph.upstream(field_urn(GOLD, "email_hash"))
    assert {h.field_path for h in up.hops} == {"email", "country"} and not any(h.placeholder for h in up.hops)
    (edge,) = [h.edge for h in up.hops if h.field_path == "email"]
    assert edge["firstSeen"] == edge["lastSeen"] == T0 and edge["source"] == "openlineage:spark/gold_users"
    # pii on users.email and users.address.city: city flows by identity, the email hash is masked
    pii = {r["fieldPath"]: r for r in encode(graph.tagged("pii"))["fields"] if r["dataset"] == GOLD}
    assert set(pii) == {"city"}
    assert encode(graph.tags(field_urn(GOLD, "city")))["inherited"][0]["from"] == field_urn(USERS, "address.city")
    assert encode(graph.tags(field_urn(GOLD, "email_hash")))["inherited"] == []
    # the same job again, a day later: one edge per pair, last seen moves
    later = run_event([gold_output()])
    later["eventTime"] = "2025-01-02T00:00:00.000Z"
    ingest(graph, later)
    assert graph.stats().data_derived_from_edges == 3 + 3  # 3 direct + 3 dataset-wide
    (edge,) = [h.edge for h in graph.upstream(field_urn(GOLD, "id")).hops if h.field_path == "id"]
    assert edge["firstSeen"] == T0 and edge["lastSeen"] == T0 + 86_400_000


def test_an_event_time_without_an_offset_is_utc_whatever_the_machines_zone(monkeypatch) -> None:
    import time

    ev = run_event([gold_output()])
    ev["eventTime"] = "2026-01-01T00:00:00"
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        (ts,) = {c.ts for c in decode_event(ev, "t")}
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert ts == 1767225600000  # 2026-01-01T00:00:00Z
