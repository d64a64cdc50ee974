"""DataHub data jobs' column lineage (``dataJobInputOutput``), built with DataHub's own classes (acryl-datahub, a
test extra): its fine-grained lineages become edges as a dataset's ``upstreamLineage`` ones do, the job on each;
the job's next version replaces its edges wherever they are, and deleting it ends them. Both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.changes import UNSTAMPED, DataJobChange
from fieldgraph.errors import EventError
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.sources import decode_event

from .conftest import ds, schema_event, sf, stamped

m = pytest.importorskip("datahub.metadata.schema_classes")
from datahub.emitter.mce_builder import make_data_flow_urn, make_data_job_urn_with_flow  # noqa: E402
from datahub.emitter.mcp import MetadataChangeProposalWrapper as MCPW  # noqa: E402

RAW, CLEAN, MART = ds("shop.raw"), ds("shop.clean"), ds("shop.mart")
JOB = make_data_job_urn_with_flow(make_data_flow_urn("airflow", "nightly"), "clean_orders")


def job_io(edges: list[tuple[str, list[str]]], outputs: list[str], ts: int, op: str = "IDENTITY",
           job: str = JOB) -> dict[str, Any]:
    """``dataJobInputOutput`` of ``job`` as DataHub's MCP JSON: ``edges`` are (downstream field URN, upstream field
    URNs)."""
    aspect = m.DataJobInputOutputClass(
        inputDatasets=[RAW], outputDatasets=outputs,
        outputDatasetFields=[d for d, _ in edges],
        fineGrainedLineages=[m.FineGrainedLineageClass(
            upstreamType="FIELD_SET", upstreams=ups, downstreamType="FIELD", downstreams=[down],
            transformOperation=op) for down, ups in edges])
    return json.loads(json.dumps(stamped(MCPW(entityUrn=job, aspect=aspect), ts).to_obj()))


def edges(g: Any) -> dict[tuple[str, str], dict[str, Any]]:
    rows = g.query("MATCH (a)-[e:DataDerivedFrom]->(b) RETURN a.urn AS a, b.urn AS b, properties(e) AS p")
    return {(r["a"], r["b"]): r["p"] for r in rows}


def write(g: Any, *events: dict[str, Any]) -> None:
    g.ingest([c for e in events for c in decode_event(e)])


@pytest.fixture
def shop(graph: Any) -> Any:
    write(graph, schema_event(RAW, ["id", "email", "country"], 1), schema_event(CLEAN, ["id", "email"], 1),
          schema_event(MART, ["id", "country"], 1))
    return graph


def test_a_job_aspect_decodes_to_one_change_with_its_outputs_and_edges() -> None:
    (c,) = decode_event(job_io([(sf(CLEAN, "email"), [sf(RAW, "email")])], [CLEAN, MART], 10, op="HASH"))
    assert isinstance(c, DataJobChange) and c.job == JOB and c.ts == 10
    assert c.outputs == (CLEAN, MART)
    (e,) = c.edges
    assert (e.downstream, e.upstream) == (sf(CLEAN, "email"), sf(RAW, "email"))
    assert e.props.program == JOB and e.props.masking and e.props.source_format == "datahub"
    # other aspects of jobs, and other entities' aspects of the same name, are not read
    info = json.loads(json.dumps(MCPW(entityUrn=JOB, aspect=m.DataJobInfoClass(name="x", type="COMMAND")).to_obj()))
    assert decode_event(info) == []
    deleted = {"entityType": "dataJob", "entityUrn": JOB, "changeType": "DELETE", "aspectName": "dataJobInputOutput"}
    assert decode_event(deleted) == [DataJobChange(JOB, ts=UNSTAMPED)]


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda ev: ev.update(entityUrn="urn:li:dataset:x"), "a data job's URN starts with urn:li:dataJob:("),
    (lambda ev: ev["aspect"].update(value=json.dumps({"inputDatasets": [], "outputDatasets": ["not-a-urn"]})),
     "outputDatasets[0]"),
    (lambda ev: ev["aspect"].update(value=json.dumps({"inputDatasets": [], "outputDatasets": [],
                                                       "fineGrainedLineages": [{
                                                           "upstreamType": "FIELD_SET", "upstreams": ["nope"],
                                                           "downstreamType": "FIELD", "downstreams": []}]})),
     "fineGrainedLineages[0].upstreams[0]"),
])
def test_a_bad_job_aspect_is_a_clear_error_naming_the_place(mutate: Any, message: str) -> None:
    ev = job_io([(sf(CLEAN, "email"), [sf(RAW, "email")])], [CLEAN], 10)
    mutate(ev)
    with pytest.raises(EventError, match=message.replace("[", r"\[").replace("(", r"\(")):
        decode_event(ev)


def test_job_lineage_becomes_edges_with_the_job_on_each(shop: Any) -> None:
    write(shop, job_io([(sf(CLEAN, "email"), [sf(RAW, "email")]), (sf(MART, "country"), [sf(RAW, "country")])],
                       [CLEAN, MART], 10))
    got = edges(shop)
    assert set(got) == {(field_urn(CLEAN, "email"), field_urn(RAW, "email")),
                        (field_urn(MART, "country"), field_urn(RAW, "country"))}
    for props in got.values():
        assert props["program"] == JOB and props["source"] == JOB and props["validFrom"] == 10
        assert props["sourceFormat"] == "datahub" and props["subtype"] == "IDENTITY"
    ups = shop.upstream(sf(MART, "country"))
    assert [(h.dataset_urn, h.field_path, h.edge["program"]) for h in ups.hops] == [(RAW, "country", JOB)]


def test_the_next_version_replaces_the_jobs_edges_wherever_they_are(shop: Any) -> None:
    first = [(sf(CLEAN, "email"), [sf(RAW, "email")]), (sf(MART, "country"), [sf(RAW, "country")])]
    write(shop, job_io(first, [CLEAN, MART], 10))
    # version 2 keeps clean.email, drops mart (a dataset it no longer writes) and adds clean.id
    write(shop, job_io([(sf(CLEAN, "email"), [sf(RAW, "email")]), (sf(CLEAN, "id"), [sf(RAW, "id")])], [CLEAN], 20))
    got = edges(shop)
    assert set(got) == {(field_urn(CLEAN, "email"), field_urn(RAW, "email")),
                        (field_urn(CLEAN, "id"), field_urn(RAW, "id"))}
    assert got[(field_urn(CLEAN, "email"), field_urn(RAW, "email"))]["validFrom"] == 10  # repeated: kept
    assert got[(field_urn(CLEAN, "id"), field_urn(RAW, "id"))]["validFrom"] == 20
    # what it dropped held until version 2: lineage as of before then still shows it
    assert shop.upstream(sf(MART, "country")).hops == ()
    assert [h.field_path for h in shop.upstream(sf(MART, "country"), as_of=15).hops] == ["country"]
    # an older version arriving late changes nothing
    write(shop, job_io(first, [CLEAN, MART], 5))
    assert set(edges(shop)) == set(got)
    # deleting the aspect ends every edge of the job at the delete's time
    write(shop, {"entityType": "dataJob", "entityUrn": JOB, "changeType": "DELETE",
                 "aspectName": "dataJobInputOutput", "systemMetadata": {"lastObserved": 30}})
    assert edges(shop) == {}
    assert [h.field_path for h in shop.upstream(sf(CLEAN, "id"), as_of=30).hops] == []
    assert [h.field_path for h in shop.upstream(sf(CLEAN, "id"), as_of=25).hops] == ["id"]


def test_deleting_the_job_without_a_stamp_ends_its_edges_as_it_arrives(shop: Any) -> None:
    write(shop, job_io([(sf(CLEAN, "email"), [sf(RAW, "email")])], [CLEAN], 10))
    write(shop, {"entityType": "dataJob", "entityUrn": JOB, "changeType": "DELETE", "aspectName": "dataJobKey"})
    assert edges(shop) == {}
    assert [h.field_path for h in shop.upstream(sf(CLEAN, "email"), as_of=9).hops] == []
    write(shop, job_io([(sf(CLEAN, "id"), [sf(RAW, "id")])], [CLEAN], 40))  # the job comes back
    assert set(edges(shop)) == {(field_urn(CLEAN, "id"), field_urn(RAW, "id"))}


def test_two_jobs_writing_one_dataset_keep_their_own_edges(shop: Any) -> None:
    other = make_data_job_urn_with_flow(make_data_flow_urn("airflow", "nightly"), "mask_emails")
    write(shop, job_io([(sf(CLEAN, "email"), [sf(RAW, "email")])], [CLEAN], 10),
          job_io([(sf(CLEAN, "id"), [sf(RAW, "id")])], [CLEAN], 10, job=other))
    write(shop, job_io([], [CLEAN], 20, job=other))  # the other job no longer writes a column
    got = edges(shop)
    assert set(got) == {(field_urn(CLEAN, "email"), field_urn(RAW, "email"))}
    assert got[(field_urn(CLEAN, "email"), field_urn(RAW, "email"))]["program"] == JOB


def test_a_jobs_versions_in_one_file_end_as_streamed_one_by_one(graph_factory: Any, tmp_path: Path) -> None:
    """``fieldgraph ingest`` of a file with a job's versions gives the graph the same job lineage, present and past,
    as writing them one by one."""
    events = [schema_event(RAW, ["id", "email", "country"], 1), schema_event(CLEAN, ["id", "email"], 1),
              schema_event(MART, ["id", "country"], 1),
              job_io([(sf(CLEAN, "email"), [sf(RAW, "email")]), (sf(MART, "country"), [sf(RAW, "country")])],
                     [CLEAN, MART], 10),
              job_io([(sf(CLEAN, "email"), [sf(RAW, "email")])], [CLEAN], 20),
              job_io([(sf(CLEAN, "email"), [sf(RAW, "email")]), (sf(MART, "id"), [sf(RAW, "id")])], [CLEAN, MART],
                     30)]
    one_by_one = graph_factory.new()
    for ev in events:
        write(one_by_one, ev)
    expected = _job_edges(one_by_one)
    assert [(a.rsplit(",", 1)[-1], t, f, u) for a, _, t, f, u in expected] == [
        ("email)", "DataDerivedFrom", 10, None), ("country)", "PreviouslyDerivedFrom", 10, 20),
        ("id)", "DataDerivedFrom", 30, None)]
    file = tmp_path / "events.jsonl"
    file.write_text("".join(json.dumps(ev) + "\n" for ev in events))
    from_file = graph_factory.new()
    res = CliRunner().invoke(app, ["ingest", str(file), "--graph", from_file.uri])
    assert res.exit_code == 0, res.output
    assert _job_edges(from_file) == expected


def _job_edges(g: Any) -> list[tuple[Any, ...]]:
    rows = g.query("MATCH (a)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->(b) RETURN a.urn AS a, b.urn AS b, "
                   "type(e) AS t, e.validFrom AS f, e.validTo AS u")
    return sorted((r["a"], r["b"], r["t"], r["f"], r["u"]) for r in rows)
