"""The lineage graph on both real backends (embedded FalkorDB, Neo4j): semantics users rely on, replays, queries.
Tests that ask through ``LineageGraph`` only run on the in-memory store too (``@WITH_MEMORY``)."""

from __future__ import annotations

import random

import pytest

from fieldgraph.graph import AmbiguousReferenceError, GraphError, NotFoundError, QueryTimeout
from fieldgraph.graph import cypher as cy
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn

from .conftest import WITH_MEMORY, ds, dump, example_changes, ingest, lineage_event, mcp, schema_event, sf

pytestmark = pytest.mark.integration

A, B, C = ds("db.a"), ds("db.b"), ds("db.c")
REPORT_TOTAL = sf(ds("sales.revenue_report", "tableau"), "total_revenue")
KAFKA = ds("demo.orders", "kafka")
FACT = ds("/demo/fact_orders", "hdfs")


def edges(g):
    return sorted((r["a"], r["b"], r["t"]) for r in g.query(
        "MATCH (a)-[e:DataDerivedFrom]->(b) RETURN a.urn AS a, b.urn AS b, e.transformation AS t"))


def test_examples_end_to_end(graph) -> None:
    report = graph.ingest(example_changes(), batch_events=1)  # one event per batch: arrival order matters
    assert report.counts["placeholders"] == 3  # the report's columns (lineage before schema), the ambiguous ref
    st = graph.stats()
    assert st.datasets == 4 and st.removed_fields == 1 and st.ambiguous_references == 1
    assert st.data_derived_from_edges == 14 and st.has_field_edges == st.fields
    up = graph.upstream(REPORT_TOTAL)
    assert not up.partial
    kafka_price = field_urn(KAFKA, "[version=2.0].[type=Order].[type=array].[type=Item].items.[type=bytes].price")
    assert kafka_price in {h.urn for h in up.hops}
    assert up.path_to(kafka_price)[0].endswith("total_revenue)") and len(up.path_to(kafka_price)) == 4
    assert max(h.depth for h in up.hops) == 3
    # the removed field keeps its lineage
    restaurant = graph.query("MATCH (f:DatasetField {urn: $u}) RETURN f.removed AS removed",
                             {"u": field_urn(FACT, "restaurant")})
    assert restaurant == [{"removed": True}]
    assert graph.upstream(sf(FACT, "restaurant")).hops[0].ambiguous
    # ambiguous references stay visible
    (amb,) = encode(graph.ambiguous())
    assert amb["reference"] == "/restaurant" and len(amb["candidates"]) == 2


def test_replays_are_idempotent_and_order_does_not_matter(graph, fresh_graph) -> None:
    changes = example_changes()
    graph.ingest(changes)
    first = dump(graph)
    graph.ingest(changes)
    graph.ingest(changes, batch_events=1)
    assert dump(graph) == first
    # any arrival order, any batching, gives the same graph
    rng = random.Random(4)
    for _ in range(4):
        shuffled = changes[:]
        rng.shuffle(shuffled)
        other = fresh_graph()
        other.ingest(shuffled, batch_events=rng.choice([1, 2, 100]))
        assert dump(other) == first, f"order {[c.origin.rsplit('/', 1)[-1] for c in shuffled]}"


def test_new_lineage_replaces_old_edges_and_delete_removes_them(graph) -> None:
    ingest(graph, schema_event(A, ["x", "y"], 1), schema_event(B, ["p", "q"], 1))
    ingest(graph, lineage_event(B, [(sf(B, "p"), [sf(A, "x")]), (sf(B, "q"), [sf(A, "y")])], 10))
    assert len(edges(graph)) == 2
    ingest(graph, lineage_event(B, [(sf(B, "p"), [sf(A, "y")])], 20, op="SUM"))
    assert edges(graph) == [(field_urn(B, "p"), field_urn(A, "y"), "SUM")]
    ingest(graph, lineage_event(B, [(sf(B, "q"), [sf(A, "x")])], 15))  # older: ignored
    assert edges(graph) == [(field_urn(B, "p"), field_urn(A, "y"), "SUM")]
    ingest(graph, mcp(B, "upstreamLineage", None, 30, change="DELETE"))
    assert edges(graph) == []
    ingest(graph, lineage_event(B, [(sf(B, "q"), [sf(A, "x")])], 25))  # older than the delete
    assert edges(graph) == []


def test_two_lineage_aspects_are_separate_states(graph) -> None:
    ingest(graph, schema_event(A, ["x"], 1), schema_event(B, ["p"], 1))
    rfc = mcp(B, "datasetUpstreamLineage", {"fieldMappings": [
        {"sourceFields": [f"urn:li:datasetField:({A},x)"], "destinationField": f"urn:li:datasetField:({B},p)"}]}, 5)
    ingest(graph, rfc, lineage_event(B, [(sf(B, "p"), [sf(A, "x")])], 5))
    assert len(edges(graph)) == 2
    ingest(graph, lineage_event(B, [], 6))
    (only,) = edges(graph)
    assert only[2].endswith("BlackBox")


@WITH_MEMORY
def test_older_schema_never_overwrites_and_fields_come_back(graph) -> None:
    ingest(graph, schema_event(A, ["x", "y"], 10, version=2))
    ingest(graph, schema_event(A, ["x"], 5, version=1))
    fields = {r["fieldPath"]: r["removed"] for r in encode(graph.fields(A))}
    assert fields == {"x": False, "y": False}
    ingest(graph, schema_event(B, ["p"], 1), lineage_event(B, [(sf(B, "p"), [sf(A, "y")])], 2))
    ingest(graph, schema_event(A, ["x"], 20, version=3))
    assert {r["fieldPath"]: r["removed"] for r in encode(graph.fields(A))} == {"x": False, "y": True}
    assert [h.field_path for h in graph.upstream(sf(B, "p")).hops] == ["y"]  # history kept
    ingest(graph, schema_event(A, ["x", "y"], 30, version=4))
    assert {r["fieldPath"]: r["removed"] for r in encode(graph.fields(A))} == {"x": False, "y": False}
    ingest(graph, mcp(A, "schemaMetadata", None, 40, change="DELETE"))
    assert all(r["removed"] for r in encode(graph.fields(A)))


@WITH_MEMORY
def test_placeholders_become_real_fields(graph) -> None:
    ingest(graph, schema_event(B, ["p", "q"], 1))
    ingest(graph, lineage_event(B, [(sf(B, "p"), [sf(A, "/rec/x")]), (sf(B, "q"), [sf(A, "y")])], 2))
    st = graph.stats()
    assert st.placeholder_fields == 2 and st.placeholder_datasets == 1
    assert {r["reference"] for r in encode(graph.unresolved())} == {"/rec/x", "y"}
    v2x = "[version=2.0].[type=R].[type=Rec].rec.[type=string].x"
    v2y = "[version=2.0].[type=R].[type=string].y"
    ingest(graph, schema_event(A, [v2x, v2y, "[version=2.0].[key=True].[type=K].[type=string].y"], 3))
    st = graph.stats()
    assert st.placeholder_fields == 1 and st.placeholder_datasets == 0 and st.ambiguous_references == 1
    assert [h.urn for h in graph.upstream(sf(B, "p")).hops] == [field_urn(A, v2x)]
    assert graph.upstream(sf(B, "q")).hops[0].ambiguous
    # a newer schema without the key field resolves the ambiguity
    ingest(graph, schema_event(A, [v2x, v2y], 4))
    assert graph.stats().placeholder_fields == 0
    assert [h.urn for h in graph.upstream(sf(B, "q")).hops] == [field_urn(A, v2y)]


@WITH_MEMORY
def test_dataset_level_upstreams_and_impact(graph) -> None:
    ingest(graph, schema_event(A, ["x"], 1), schema_event(B, ["p"], 1), schema_event(C, ["z"], 1))
    ingest(graph, lineage_event(B, [(sf(B, "p"), [sf(A, "x")])], 2))
    ingest(graph, mcp(C, "upstreamLineage", {"fineGrainedLineages": [
        {"upstreamType": "DATASET", "upstreams": [B], "downstreamType": "FIELD", "downstreams": [sf(C, "z")]}]}, 2))
    by_ds = graph.impact(A).datasets
    assert by_ds == {B: ["p"]}
    by_ds = graph.impact(B).datasets
    assert by_ds == {C: ["z"]}
    rolled = {(r["downstream"], r["upstream"]) for r in encode(graph.dataset_lineage())}
    assert rolled == {(B, A), (C, B)}
    assert [h.urn for h in graph.upstream(sf(C, "z")).hops] == [B]


def deep_chain(graph, n: int) -> list[str]:
    names = [ds(f"db.t{i}") for i in range(n + 1)]
    events = [schema_event(u, ["c"], 1) for u in names]
    events += [lineage_event(names[i + 1], [(sf(names[i + 1], "c"), [sf(names[i], "c")])], 2) for i in range(n)]
    ingest(graph, *events)
    return names


@WITH_MEMORY
def test_depth_cap_time_budget_and_paths(graph) -> None:
    names = deep_chain(graph, 12)
    top = sf(names[-1], "c")
    full = graph.upstream(top)
    assert len(full.hops) == 12 and not full.partial
    capped = graph.upstream(top, depth=5)
    assert len(capped.hops) == 5 and capped.partial and "depth" in capped.reason
    exact = graph.upstream(top, depth=12)
    assert not exact.partial
    timed_out = graph.upstream(top, time_budget_s=0)
    assert timed_out.partial and "time budget" in timed_out.reason
    down = graph.downstream(sf(names[0], "c"), depth=3)
    assert [h.depth for h in down.hops] == [1, 2, 3]
    path = graph.path(sf(names[0], "c"), top).path
    assert len(path) == 13 and path[0] == field_urn(names[0], "c")


def test_a_statement_over_its_time_budget_is_stopped_by_the_server(graph) -> None:
    """The budget goes to the server as the statement's timeout; its answer becomes QueryTimeout (which the
    walks turn into a partial result), on FalkorDB's and on Neo4j's error codes alike."""
    slow = "UNWIND range(1, 5000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x) AS n"
    with pytest.raises(QueryTimeout, match="time budget of 50 ms"):
        graph.store.run(slow, timeout_ms=50)
    with pytest.raises(QueryTimeout), graph.store.reading(timeout_ms=50):  # a walk's shared read transaction
        graph.store.run("RETURN 1 AS one", timeout_ms=50)
        graph.store.run(slow, timeout_ms=50)
    with pytest.raises(ZeroDivisionError), graph.store.reading(timeout_ms=5000):  # the caller's own errors
        assert graph.store.run("RETURN 1 AS one") == [{"one": 1}]
        _ = 1 / 0
    assert graph.store.run("RETURN 1 AS one", timeout_ms=5000) == [{"one": 1}]


def test_a_parameter_the_store_cannot_take_is_a_clear_error(graph) -> None:
    with pytest.raises(GraphError, match="surrogates not allowed"):
        graph.store.run("RETURN $v AS v", {"v": "\ud800"})
    assert graph.store.run("RETURN $v AS v", {"v": "ok"}) == [{"v": "ok"}]


@WITH_MEMORY
def test_user_named_fields(graph) -> None:
    v2 = "[version=2.0].[type=R].[type=string].id"
    ingest(graph, schema_event(A, [v2, "[version=2.0].[key=True].[type=K].[type=string].id"], 1))
    assert graph.resolve_field(f"urn:li:datasetField:({A},{v2})") == field_urn(A, v2)
    assert graph.resolve_field(sf(A, v2)) == field_urn(A, v2)
    with pytest.raises(AmbiguousReferenceError, match="matches 2 fields"):
        graph.resolve_field(sf(A, "id"))
    with pytest.raises(NotFoundError, match="has no field 'nope'"):
        graph.resolve_field(sf(A, "nope"))
    with pytest.raises(NotFoundError, match="not in the graph"):
        graph.resolve_field(sf(B, "x"))
    with pytest.raises(NotFoundError, match="not a field URN"):
        graph.resolve_field("db.a.id")


def test_every_named_query_runs_on_both_backends(graph) -> None:
    """The .cypher files meant for Neo4j Browser run unchanged on both backends."""
    names = deep_chain(graph, 3)
    params = {"urn": field_urn(names[-1], "c"), "from": field_urn(names[-1], "c"), "to": field_urn(names[0], "c")}
    assert len(graph.query(cy.statement("upstream"), params)) == 3
    assert len(graph.query(cy.with_depth(cy.statement("upstream"), 2), params)) == 2
    assert graph.query(cy.statement("downstream"), {"urn": field_urn(names[0], "c")})[-1]["depth"] == 3
    assert len(graph.query(cy.statement("lineage_path"), params)[0]["path"]) == 4
    impact = graph.query(cy.statement("impact"), {"urn": names[0]})
    assert [r["dataset"] for r in impact] == names[1:]
    assert len(graph.query(cy.statement("dataset_lineage"), {"urn": None})) == 3
    assert graph.query(cy.statement("unresolved")) == [] and graph.query(cy.statement("ambiguous")) == []
    assert graph.query(cy.statement("dataset_fields"), {"urn": names[0]})[0]["fieldPath"] == "c"
