"""One edge vocabulary (:mod:`fieldgraph.changes`: :data:`~fieldgraph.changes.Subtype`,
:data:`~fieldgraph.changes.Transformation`): every source writes only its words on a ``DataDerivedFrom`` edge, except
the operation names a source sends, which are written as sent. Each decoder is driven with real events: the
examples' files (read as ``fieldgraph ingest`` and the Spark backfill's executors read them), events built with the
OpenLineage client (1-0 and 1-2, with and without transformations), DataHub's fine-grained lineage, the RFC's
mappings, a data job, CDAP runs and pipelines, SQL statements and events, edges drawn by hand, and renames. Words an
older fieldgraph wrote (``Blackbox``) read as today's."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, get_args

import pytest
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import schema_dataset as sd
from openlineage.client.facet_v2 import sql_job
from openlineage.client.serde import Serde
from typer.testing import CliRunner

from fieldgraph.changes import (
    BLACK_BOX,
    DIRECT,
    INDIRECT,
    OLD_TRANSFORMATIONS,
    RENAME_TRANSFORMATION,
    SUBTYPES,
    TRANSFORMATION_OF,
    TRANSFORMATIONS,
    Change,
    DataJobChange,
    EdgeKind,
    FieldEdge,
    JobLineageChange,
    LineageChange,
    ManualEdgeChange,
    Subtype,
    Transformation,
    read_transformation,
    transformation_of,
)
from fieldgraph.graph import LineageGraph
from fieldgraph.graph.answers import EdgeRow, Hop, encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.backfill import CHANGES, decode_records
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.replay import decode, event_files, read_events
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.sources.datahub.models import DatasetFieldMapping

from .conftest import WITH_MEMORY, ds, lineage_event, mcp, schema_event, sf

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: every example file of events (schemas, DataHub, CDAP, OpenLineage, SQL events, renames' lineage)
EVENT_FILES = sorted(p for p in EXAMPLES.rglob("*") if p.suffix in (".json", ".jsonl")
                     and "schemas" not in p.parts and p.name != "rename_request.json")
#: sources whose ``transformation`` is the operation they send (a DataHub ``transformOperation``, the RFC's
#: ``transformationFunction``, CDAP's transform names, one drawn by hand), when it is not a word of the vocabulary
AS_SENT = {"datahub", "datahub-rfc", "cdap", "manual"}
#: the RFC's ``transformationFunction`` when a mapping gives none (its schema's default)
RFC_DEFAULT = DatasetFieldMapping.model_fields["transformationFunction"].default

A, B = ds("db.a"), ds("db.b")
PG = "postgres://db.internal:5432"
USERS = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.public.users,PROD)"
GOLD = "urn:li:dataset:(urn:li:dataPlatform:s3,lake/gold/users,PROD)"


def check(props: dict[str, Any], sent: str) -> None:
    """``props`` (a stored edge's) use the vocabulary: a kind, a subtype or none, and a transformation of the vocabulary,
    none, or, from a source that passes its operation names through, one ``sent`` holds (each of CDAP's ``a, b``)."""
    assert props["kind"] in get_args(EdgeKind), props
    word = props.get("transformation")
    assert props.get("subtype") in (*SUBTYPES, None), props
    if word is None or word in TRANSFORMATIONS:
        return  # none: the source said none (DataHub without transformOperation, an edge drawn without one)
    assert props["sourceFormat"] in AS_SENT, props
    if props["sourceFormat"] == "datahub-rfc" and word == RFC_DEFAULT:
        return  # the RFC's own default, the one spelling of BlackBox there
    names = word.split(", ") if props["sourceFormat"] == "cdap" else [word]
    sent = sent.replace('\\"', '"')  # an aspect sent as a JSON string (an MCL's ``aspect.value``)
    # a CDAP pipeline's operation is named by its stage (``total.Rename``: "The pipeline form" in docs/how-to/cdap.md)
    assert all(json.dumps(n) in sent or json.dumps(n.split(".", 1)[-1]) in sent for n in names), props


def edges_of(changes: Iterable[Change]) -> Iterator[FieldEdge]:
    for c in changes:
        match c:
            case LineageChange(edges=edges, dataset_edges=wide) | DataJobChange(edges=edges, dataset_edges=wide):
                yield from (*edges, *wide)
            case JobLineageChange(edges=edges):
                yield from edges
            case ManualEdgeChange(edge=edge):
                yield edge


def stored_edges(g: LineageGraph) -> list[dict[str, Any]]:
    """The properties of every lineage edge in the store, present and past."""
    return [e.props for e in g.store.snapshot().edges if e.type in ("DataDerivedFrom", "PreviouslyDerivedFrom")]


# ---- events built by the producers' own clients and the tests' builders ----

def ol_event(outputs: list[OutputDataset], query: str | None = None) -> dict[str, Any]:
    """A COMPLETE run event as the OpenLineage Python client sends it."""
    users = InputDataset(PG, "shop.public.users", facets={"schema": sd.SchemaDatasetFacet(fields=[
        sd.SchemaDatasetFacetFields(n, "VARCHAR") for n in ("id", "email", "country")])})
    facets = {"sql": sql_job.SQLJobFacet(query)} if query else {}
    ev = RunEvent(eventType=RunState.COMPLETE, eventTime="2025-01-01T00:00:00.000Z", run=Run(runId="01a20188-88c7-7771-a233-a2a83086b505"),
                  job=Job(namespace="spark", name="gold_users", facets=facets), producer="https://example.com/p",
                  inputs=[users], outputs=outputs)
    return json.loads(Serde.to_json(ev))


def gold(fields: dict[str, list[cl.Transformation] | None], facets: bool = True) -> OutputDataset:
    """``s3://lake/gold/users`` with a ``columnLineage`` facet: output field -> its transformations of ``users.id``
    (None: none given, as dbt-ol sends them)."""
    lineage = cl.ColumnLineageDatasetFacet(fields={out: cl.Fields(inputFields=[
        cl.InputField(PG, "shop.public.users", "id", ts)]) for out, ts in fields.items()})
    schema = sd.SchemaDatasetFacet(fields=[sd.SchemaDatasetFacetFields(n, "STRING") for n in fields])
    return OutputDataset("s3://lake", "/gold/users", facets={"schema": schema, **({"columnLineage": lineage}
                                                                                   if facets else {})})


def builder_events() -> list[dict[str, Any]]:
    """Events the examples do not hold: every OpenLineage subtype, 1-0, none given, a ``sql`` facet; DataHub with no
    operation; the RFC's default and its own function; SQL events with every INDIRECT role but WINDOW; a data job."""
    t = cl.Transformation
    every = {s.lower(): [t(DIRECT if s in ("IDENTITY", "TRANSFORMATION", "AGGREGATION") else INDIRECT, s)]
             for s in SUBTYPES}
    legacy = ol_event([gold({"same": None, "masked": None, "other": None})])
    legacy["outputs"][0]["facets"]["columnLineage"]["fields"].update({
        "same": {"inputFields": [{"namespace": PG, "name": "shop.public.users", "field": "id"}],
                 "transformationType": "IDENTITY"},
        "masked": {"inputFields": [{"namespace": PG, "name": "shop.public.users", "field": "email"}],
                   "transformationType": "MASKED"},
        "other": {"inputFields": [{"namespace": PG, "name": "shop.public.users", "field": "country"}]}})
    job = "urn:li:dataJob:(urn:li:dataFlow:(airflow,nightly,PROD),load_b)"
    return [
        schema_event(A, ["x", "y", "z"], 1), schema_event(B, ["x", "y", "s", "t", "u"], 1),
        ol_event([gold({**every, "masked_hash": [t(DIRECT, "TRANSFORMATION", masking=True)],
                        "untyped": None, "kind_only": [t(INDIRECT)]})]),
        legacy,
        ol_event([gold({"id": None}, facets=False)], query="INSERT INTO gold_users SELECT id FROM shop.public.users "
                                                           "WHERE country = 'FR'"),
        lineage_event(B, [(sf(B, "x"), [sf(A, "x")])], 10, op="SUM"),
        mcp(B, "upstreamLineage", {"upstreams": [], "fineGrainedLineages": [
            {"upstreamType": "FIELD_SET", "upstreams": [sf(A, "y")], "downstreamType": "FIELD",
             "downstreams": [sf(B, "y")]}]}, 11),
        mcp(B, "datasetUpstreamLineage", {"fieldMappings": [
            {"sourceFields": [sf(A, "y")], "destinationField": sf(B, "s")},
            {"sourceFields": [sf(A, "z")], "destinationField": sf(B, "t"),
             "transformationFunction": "com.linkedin.finegrainedmetadata.transformation.Identity"}]}, 12),
        {"sql": (EXAMPLES / "sql" / "daily_revenue.sql").read_text(), "dialect": "spark", "platform": "hive",
         "database": "shop", "job": "nightly_mart", "time": "2025-01-03T00:00:00Z"},
        {"sql": "INSERT INTO mart.regions SELECT customer_id, CASE WHEN country = 'FR' THEN 'eu' ELSE 'other' END "
                "AS region FROM customers ORDER BY customer_id", "dialect": "spark", "platform": "hive",
         "database": "shop", "job": "regions", "time": "2025-01-03T00:00:00Z"},
        {"entityType": "dataJob", "entityUrn": job, "changeType": "UPSERT", "aspectName": "dataJobInputOutput",
         "systemMetadata": {"lastObserved": 13}, "aspect": {"json": {
             "inputDatasets": [A], "outputDatasets": [B], "fineGrainedLineages": [
                 {"upstreamType": "FIELD_SET", "upstreams": [sf(A, "z")], "downstreamType": "FIELD",
                  "downstreams": [sf(B, "u")], "transformOperation": "HASH"}]}}},
    ]


#: the operation an edge is drawn with (``fieldgraph edge add --transformation MULTIPLY``)
DRAWN_WITH = "MULTIPLY"


def drawn() -> list[ManualEdgeChange]:
    """Edges drawn by hand (``fieldgraph edge add``), with an operation and without."""
    return [ManualEdgeChange.of(sf(B, "z"), sf(A, "x"), transformation=DRAWN_WITH, ts=20),
            ManualEdgeChange.of(sf(B, "x"), sf(A, "z"), ts=21)]


# ---- the vocabulary itself ----

def test_the_vocabulary_is_one_word_per_subtype_and_the_words_it_invents() -> None:
    assert set(TRANSFORMATION_OF) == set(get_args(Subtype)) == set(SUBTYPES)
    assert set(TRANSFORMATIONS) == {*TRANSFORMATION_OF.values(), BLACK_BOX} == set(get_args(Transformation))
    assert transformation_of(None) == BLACK_BOX == "BlackBox"
    assert transformation_of("IDENTITY") == "Identity" and transformation_of("GROUP_BY") == "GroupBy"
    assert transformation_of("PIVOT") == "PIVOT"  # an OpenLineage subtype outside the list: as sent
    # what older fieldgraphs wrote (a subtype title-cased) reads as today's; anything else as stored
    assert read_transformation("Blackbox") == "BlackBox" and read_transformation("Group_By") == "GroupBy"
    assert read_transformation("SUM") == "SUM" and read_transformation(None) is None
    assert set(OLD_TRANSFORMATIONS.values()) <= set(TRANSFORMATIONS)


# ---- each decoder: the changes it makes ----

def test_every_example_file_decodes_to_words_of_the_vocabulary() -> None:
    """``fieldgraph ingest``'s decoding of every example file (DataHub MCP/MCL/MCE, CDAP runs and pipelines,
    OpenLineage, SQL events, renames' lineage): every edge it makes uses the vocabulary."""
    seen: set[str] = set()
    for path in EVENT_FILES:
        text = path.read_text()
        for f in event_files([path]):
            for raw in read_events(f):
                changes, rejected = decode(raw)
                assert rejected is None, rejected
                for e in edges_of(changes):
                    props = e.props.to_props()
                    check(props, text)
                    seen.add(props["sourceFormat"])
    assert seen == {"datahub", "datahub-rfc", "cdap", "openlineage"}


def test_the_backfills_executors_decode_the_same_words() -> None:
    """The Spark backfill's first stage (its executors' decoding, run here without Spark) makes the same edges."""
    records = [(str(p), p.read_bytes()) for p in EVENT_FILES]
    texts = "\n".join(p.read_text() for p in EVENT_FILES)
    changes = [pickle.loads(c) for _, (kind, payload) in decode_records(records, {}, None, None, None)
               if kind == CHANGES for _, c in payload]
    made = list(edges_of(changes))
    assert {e.props.source_format for e in made} == {"datahub", "datahub-rfc", "cdap", "openlineage"}
    for e in made:
        check(e.props.to_props(), texts)


def test_every_builder_event_decodes_to_words_of_the_vocabulary() -> None:
    events = builder_events()
    sent = json.dumps([events, DRAWN_WITH])
    changes = [c for e in events for c in decode_event(e)]
    props = {(e.downstream.rsplit(",", 1)[-1][:-1], e.props.source_format): e.props.to_props()
             for e in edges_of([*changes, *drawn()])}
    for p in props.values():
        check(p, sent)
    ol = {down: p for (down, fmt), p in props.items() if fmt == "openlineage"}
    for s in SUBTYPES:
        assert (ol[s.lower()]["subtype"], ol[s.lower()]["transformation"]) == (s, TRANSFORMATION_OF[s])
    assert ol["untyped"]["transformation"] == ol["kind_only"]["transformation"] == "BlackBox"  # not Blackbox
    assert ol["masked_hash"]["transformation"] == "Transformation" and ol["masked_hash"]["masking"]
    assert (ol["same"]["transformation"], ol["masked"]["subtype"], ol["other"]["transformation"]) == \
        ("Identity", "TRANSFORMATION", "BlackBox")  # 1-0: IDENTITY, MASKED, none
    assert props["x", "datahub"]["transformation"] == "SUM"  # as sent
    assert props["u", "datahub"]["transformation"] == "HASH" and props["u", "datahub"]["masking"]  # the data job
    assert "transformation" not in props["y", "datahub"]  # none sent
    assert props["s", "datahub-rfc"]["transformation"] == "com.linkedin.finegrainedmetadata.transformation.BlackBox"
    assert props["z", "manual"]["transformation"] == "MULTIPLY" and "transformation" not in props["x", "manual"]


# ---- on the graph: what is stored, SQL derived there, renames, and older graphs ----

@WITH_MEMORY
def test_every_source_stores_only_words_of_the_vocabulary(graph: Any) -> None:
    """Every example and builder event, SQL derived by the graph (events, ``fieldgraph sql``, an OpenLineage ``sql``
    facet) and edges drawn by hand: every stored edge, present and past, uses the vocabulary."""
    changes: list[Change] = []
    for f in event_files(EVENT_FILES):
        for raw in read_events(f):
            changes += decode(raw)[0]
    events = builder_events()
    changes += [c for e in events for c in decode_event(e)]
    graph.ingest([*changes, *drawn()])
    stored = stored_edges(graph)
    sent = "\n".join(p.read_text() for p in EVENT_FILES) + json.dumps([events, DRAWN_WITH])
    for props in stored:
        check(props, sent)
    formats = {p["sourceFormat"] for p in stored}
    assert formats == {"datahub", "datahub-rfc", "cdap", "openlineage", "sql", "manual"}
    sql_words = {p["transformation"] for p in stored if p["sourceFormat"] == "sql"}
    assert sql_words == {"Identity", "Transformation", "Aggregation", "Filter", "Join", "GroupBy", "Sort",
                         "Conditional"}
    # the OpenLineage sql facet's lineage, derived by the graph
    facet = [p for p in stored if p["sourceFormat"] == "sql" and p.get("program") == "openlineage:spark/gold_users"]
    assert {(p["kind"], p["transformation"]) for p in facet} == {("DIRECT", "Identity"), ("INDIRECT", "Filter")}


@pytest.mark.parametrize("backend", ["falkordb"], indirect=True)
def test_fieldgraph_sql_and_renames_write_words_of_the_vocabulary(graph: Any, monkeypatch: Any) -> None:
    """``fieldgraph sql`` (the command) on the examples' statements, its renames too; a walk across a rename shows
    :data:`~fieldgraph.changes.RENAME_TRANSFORMATION`."""
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()
    for args in (["ingest", str(EXAMPLES / "sql" / "shop_schemas.jsonl")],
                 ["sql", str(EXAMPLES / "sql" / "daily_revenue.sql"), "--dialect", "spark", "--database", "shop"],
                 ["sql", str(EXAMPLES / "renames" / "shop_renames.sql"), "--dialect", "spark", "--database", "shop"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
    stored = stored_edges(graph)
    assert stored and {p["sourceFormat"] for p in stored} == {"sql"}
    for props in stored:
        check(props, "")
    hops = graph.upstream(field_urn(ds("mart.daily_revenue"), "gross_revenue"), 2).hops
    assert hops[0].rename and hops[0].edge["transformation"] == RENAME_TRANSFORMATION
    assert {h.edge["transformation"] for h in hops[1:]} <= set(TRANSFORMATIONS)


@WITH_MEMORY
def test_a_graph_an_older_fieldgraph_wrote_reads_blackbox_as_today(graph: Any) -> None:
    """Edges an older fieldgraph stored as ``Blackbox`` (OpenLineage without a subtype) read ``BlackBox``: in walks,
    the edges of a dataset and dataset lineage; a run seen again stores today's word."""
    event = ol_event([gold({"untyped": None})])
    changes = decode_event(event)
    old = [JobLineageChange(c.dataset, c.job, c.format, c.run, tuple(
        FieldEdge(e.downstream, e.upstream, replace(e.props, transformation="Blackbox")) for e in c.edges), c.fields,
        ts=c.ts) if isinstance(c, JobLineageChange) else c for c in changes]
    graph.ingest(old)
    assert {p["transformation"] for p in stored_edges(graph)} == {"Blackbox"}  # as an older fieldgraph stored it
    field = field_urn(GOLD, "untyped")
    (hop,) = graph.upstream(field, 1).hops
    assert hop.edge["transformation"] == "BlackBox" and encode(hop)["edge"]["transformation"] == "BlackBox"
    assert [d.transformations for d in graph.dataset_lineage(GOLD)] == [("BlackBox",)]
    assert Hop.from_row({"from": field, "urn": "u", "edge": {"transformation": "Group_By"}}, 1).edge == \
        {"transformation": "GroupBy"}
    assert EdgeRow.from_row({"direction": "in", "down": field, "up": "u", "source": "s", "transformation": "Blackbox",
                             "kind": DIRECT}).transformation == "BlackBox"
    graph.ingest(changes)  # the job runs again
    assert {p["transformation"] for p in stored_edges(graph)} == {"BlackBox"}


@pytest.mark.parametrize("word", sorted(OLD_TRANSFORMATIONS))
def test_no_source_writes_an_older_word(word: str) -> None:
    """The words :data:`~fieldgraph.changes.OLD_TRANSFORMATIONS` reads are not the vocabulary's."""
    assert word not in TRANSFORMATIONS
