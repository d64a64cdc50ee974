"""Field lineage derived from SQL: statements, SQL events, ``fieldgraph sql``, OpenLineage ``sql`` facets and
DataHub queries joined to ``upstreamLineage``; the graph cases on both backends (the corpus: test_sql_corpus.py)."""

from __future__ import annotations

import json
import logging
import pickle

import pytest
import sqlglot
from typer.testing import CliRunner

from fieldgraph.changes import LineageChange, QueryChange, SqlChange
from fieldgraph.errors import EventError, SqlError
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT
from fieldgraph.ingest.emitter import change_event
from fieldgraph.ingest.sources import decode_event
from fieldgraph.sqllineage import BY_NAME_CONFIDENCE, SchemasNeeded, check, derive, parse_statements

from .conftest import WITH_MEMORY, ds, ingest, mcp, schema_event

ORDERS = ds("shop.orders")
TOTALS = ds("shop.totals")
QUERY = "urn:li:query:totals-by-customer"
TOTALS_SQL = ("INSERT INTO shop.totals SELECT customer_id, SUM(amount) AS total, COUNT(DISTINCT email) AS buyers "
              "FROM shop.orders WHERE status = 'paid' GROUP BY customer_id")


def orders_schema(ts: int = 1) -> dict:
    return schema_event(ORDERS, ["order_id", "customer_id", "email", "amount", "status"], ts)


def sql_event(sql: str, **kw: object) -> dict:
    return {"sql": sql, "dialect": "spark", "database": "shop", "time": 1000, **kw}


def edges_of(graph, dataset: str) -> dict[tuple[str, str], dict]:
    """(downstream path, upstream path) -> edge properties of the SQL-derived edges into ``dataset``."""
    out = {}
    for f in encode(graph.fields(dataset)):
        for h in graph.upstream(f["urn"], depth=1).hops:
            if h.edge.get("sourceFormat") == "sql":
                out[(f["fieldPath"], h.field_path)] = h.edge
    return out


# --- statements --------------------------------------------------------------------------------------


def test_statements_say_what_they_write_and_read() -> None:
    text = """USE shop; WITH paid AS (SELECT * FROM orders WHERE status = 'paid')
              INSERT INTO mart.t (a, b) SELECT customer_id, amount FROM paid;
              CREATE VIEW v AS SELECT * FROM orders o JOIN customers c USING (customer_id);
              MERGE INTO c USING orders s ON c.id = s.customer_id WHEN MATCHED THEN UPDATE SET c.x = s.amount;
              SELECT 1"""
    kinds = [(s.kind, s.target, s.columns, s.tables) for s in parse_statements(text, "spark")]
    assert kinds == [("other", None, (), ()), ("insert", "mart.t", ("a", "b"), ("orders",)),
                     ("create_view", "v", (), ("orders", "customers")), ("merge", "c", (), ("orders",)),
                     ("select", None, (), ())]


@pytest.mark.parametrize("text, where", [
    ("SELECT a FROM t WHERE", "line 1, column 21"),
    ("INSERT INTO t\nSELECT CASE a FROM s", "line 2, column 13: Expected END after CASE"),
    ("SELECT (a FROM t", "line 1"),
])
def test_a_statement_that_cannot_be_parsed_names_line_and_column(text: str, where: str) -> None:
    with pytest.raises(SqlError, match=where):
        parse_statements(text, "spark")


def test_an_unknown_dialect_is_an_error() -> None:
    with pytest.raises(SqlError, match="nosuchsql"):
        parse_statements("SELECT 1", "nosuchsql")


@pytest.mark.parametrize("text, dialect, message", [
    ("WITH player AS (SELECT player.name FROM players) SELECT * FROM player", "bigquery", "SELECT"),
    ("SELECT a FROM t WHERE " + " OR ".join(f"a = {i}" for i in range(3000)), "spark", "nested too deeply"),
])
def test_sql_sqlglot_cannot_follow_is_an_error_not_a_crash(text: str, dialect: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        for st in parse_statements(text, dialect):
            derive(st, {"players": ["name"]}, "out")


def test_statements_without_lineage_are_not_errors() -> None:
    kinds = [s.kind for s in parse_statements("INSERT INTO x DEFAULT VALUES; INSERT INTO x VALUES (1, 2)", "postgres")]
    assert kinds == ["other", "other"]
    (into,) = parse_statements("SELECT a, b INTO t2 FROM t1", "tsql")
    assert (into.kind, into.target, into.tables) == ("create_table", "t2", ("t1",))
    by_name = parse_statements("INSERT INTO t BY NAME SELECT y, x FROM s", "duckdb")[0]
    lineage = derive(by_name, {"t": ["x", "y"], "s": ["x", "y"]})
    assert {e.key for e in lineage.edges} == {"y <- s.y", "x <- s.x"}


def test_positions_are_never_guessed() -> None:
    # a * that cannot be expanded: no column can be matched to its value
    st = parse_statements("INSERT INTO t SELECT m.*, o.amount FROM mystery m JOIN orders o ON m.id = o.id")[0]
    lineage = derive(st, {"t": ["id", "name", "amount"], "orders": ["id", "amount"]})
    assert lineage.edges == () and "column positions" in lineage.unresolved
    # a table whose columns' order is not known (written before positions were kept)
    st = parse_statements("INSERT INTO t SELECT * FROM orders")[0]
    assert derive(st, {"t": ["a", "b"], "orders": ["id", "amount"]}, unordered=["orders"]).edges == ()
    assert len(derive(st, {"t": ["a", "b"], "orders": ["id", "amount"]}).edges) == 2
    # union branches map by place too
    st = parse_statements("CREATE TABLE t AS SELECT a, b FROM x UNION ALL SELECT * FROM orders")[0]
    assert derive(st, {"x": ["a", "b"], "orders": ["id", "amount"]}, unordered=["orders"]).edges == ()


def test_target_columns_are_spelled_as_the_target_schema_spells_them() -> None:
    st = parse_statements("CREATE OR REPLACE TABLE report AS SELECT customerId, SUM(amount) AS totalAmount "
                          "FROM orders GROUP BY customerId", "snowflake")[0]
    lineage = derive(st, {"report": ["customerId", "totalAmount"], "orders": ["customerId", "amount"]})
    assert {e.key for e in lineage.edges if e.kind == "DIRECT"} == {
        "customerId <- orders.customerId", "totalAmount <- orders.amount"}


def test_tables_of_different_depths_stay_apart() -> None:
    st = parse_statements("INSERT INTO r SELECT o.status, p.amount FROM sales.orders o JOIN orders p ON o.id = p.id")[0]
    lineage = derive(st, {"sales.orders": ["id", "status"], "orders": ["id", "amount"]})
    direct = {e.key for e in lineage.edges if e.kind == "DIRECT"}
    assert direct == {"status <- sales.orders.status", "amount <- orders.amount"}
    assert not any(e.by_name for e in lineage.edges)
    st = parse_statements("INSERT INTO r SELECT o.status, p.amount FROM sales.orders o JOIN orders p ON o.id = p.id",
                          "snowflake")[0]  # sqlglot upper-cases the padding there
    assert {e.key for e in derive(st, {"sales.orders": ["id", "status"], "orders": ["id", "amount"]}).edges
            if e.kind == "DIRECT"} == direct
    st = parse_statements("INSERT INTO r SELECT o.a, c.b FROM analytics.sales.orders o JOIN sales.customers c "
                          "ON o.id = c.id")[0]
    lineage = derive(st, {"analytics.sales.orders": ["id", "a"], "sales.customers": ["id", "b"]})
    assert {e.key for e in lineage.edges if e.kind == "DIRECT"} == {
        "a <- analytics.sales.orders.a", "b <- sales.customers.b"}


# --- the SQL event form --------------------------------------------------------------------------------


def test_sql_events_decode_to_one_change_per_statement_that_writes() -> None:
    changes = decode_event(sql_event("SET x = 1; " + TOTALS_SQL + "; CREATE TABLE r AS SELECT * FROM shop.totals",
                                     job="nightly", run="r1", time="2026-01-01T00:00:00Z"), "f.jsonl:3")
    assert [type(c) for c in changes] == [SqlChange, SqlChange]
    first, second = changes
    assert first.dataset == TOTALS and first.tables == (("shop.orders", ORDERS),) and first.job == "nightly"
    assert first.run == "r1" and first.ts == 1767225600000 and first.origin == "f.jsonl:3"
    assert second.dataset == ds("shop.r") and second.tables == (("shop.totals", TOTALS),)
    # without a job: one per statement text (whitespace aside)
    assert decode_event(sql_event(TOTALS_SQL, time="2026-01-01T00:00:00"))[0].ts == 1767225600000  # no offset: UTC
    a, = decode_event(sql_event(TOTALS_SQL))
    b, = decode_event(sql_event(TOTALS_SQL.replace(" ", "\n  ")))
    assert a.job == b.job and a.job.startswith("sql:")


@pytest.mark.parametrize("event, message", [
    ({"sql": "SELECT a FROM t"}, "a SELECT writes no table: give the target"),
    ({"sql": "CREATE TABLE t (a INT)"}, "no statement writes a table"),
    ({"sql": "SELECT a FROM", "target": "x"}, r"sql: line 1, column 13"),
    ({"sql": TOTALS_SQL, "dialect": 3}, "dialect must be a string"),
    ({"sql": TOTALS_SQL, "time": "yesterday"}, "time: 'yesterday' is not a time"),
    ({"sql": TOTALS_SQL, "tables": {}}, r"unknown keys \['tables'\]"),
    ({"sql": "INSERT INTO t (a, b) SELECT x FROM s"}, "INSERT INTO t: lists 2 target columns for 1 values"),
])
def test_bad_sql_events_say_what_is_wrong(event: dict, message: str) -> None:
    with pytest.raises(EventError, match=message):
        decode_event(event)


def test_what_only_the_schemas_can_tell_waits_for_them() -> None:
    # a * cannot be counted without the schema: the event is read, the graph derives it
    (c,) = decode_event(sql_event("INSERT INTO shop.totals (order_id, amount) SELECT * FROM shop.orders"))
    assert isinstance(c, SqlChange)


# --- on the graph -----------------------------------------------------------------------------------------


@WITH_MEMORY
def test_sql_lineage_on_the_graph_with_the_edge_vocabulary(graph) -> None:
    ingest(graph, orders_schema(), sql_event(TOTALS_SQL, job="nightly"))
    edges = edges_of(graph, TOTALS)
    assert set(edges) == {
        ("customer_id", "customer_id"), ("customer_id", "status"),
        ("total", "amount"), ("total", "customer_id"), ("total", "status"),
        ("buyers", "email"), ("buyers", "customer_id"), ("buyers", "status")}
    same = edges[("customer_id", "customer_id")]
    assert (same["kind"], same["subtype"], same["transformation"]) == ("DIRECT", "IDENTITY", "Identity")
    assert same["transformations"] == ["DIRECT/IDENTITY", "INDIRECT/GROUP_BY"]
    assert same["sourceFormat"] == "sql" and same["program"] == "nightly" and same["source"] == "nightly"
    assert same["query"].startswith("INSERT INTO shop.totals") and same["confidenceScore"] == 1.0
    assert edges[("total", "amount")]["subtype"] == "AGGREGATION"
    assert (edges[("total", "status")]["kind"], edges[("total", "status")]["subtype"]) == ("INDIRECT", "FILTER")
    # COUNT masks (OpenLineage): a tag on email does not reach buyers
    assert edges[("buyers", "email")]["masking"] is True
    assert {f["fieldPath"] for f in encode(graph.fields(TOTALS))} == {"customer_id", "total", "buyers"}


@WITH_MEMORY
def test_star_and_positional_inserts_follow_the_stored_schema_order(graph) -> None:
    # the schema's order is not alphabetical: SELECT * and INSERT without a column list keep it
    ingest(graph, schema_event(ORDERS, ["status", "order_id", "amount"], 1),
           schema_event(TOTALS, ["s", "o", "a"], 1),
           sql_event("INSERT INTO totals SELECT * FROM orders"))
    edges = edges_of(graph, TOTALS)
    assert set(edges) == {("s", "status"), ("o", "order_id"), ("a", "amount")}
    assert all(e["subtype"] == "IDENTITY" for e in edges.values())


@WITH_MEMORY
def test_a_table_without_a_schema_is_read_by_name_then_resolved(graph) -> None:
    ingest(graph, sql_event("INSERT INTO totals SELECT o.customer_id, o.amount * 2 AS doubled FROM orders o"))
    edges = edges_of(graph, TOTALS)
    assert set(edges) == {("customer_id", "customer_id"), ("doubled", "amount")}
    assert {e["confidenceScore"] for e in edges.values()} == {BY_NAME_CONFIDENCE}
    placeholders = {f["fieldPath"] for f in encode(graph.fields(ORDERS)) if f.get("placeholder")}
    assert placeholders == {"customer_id", "amount"}
    ingest(graph, orders_schema(5))  # the schema arrives: the placeholders become its fields
    assert not any(f.get("placeholder") for f in encode(graph.fields(ORDERS)))
    assert {h.field_path for h in graph.upstream(field_urn(TOTALS, "doubled")).hops} == {"amount"}


@WITH_MEMORY
def test_unplaceable_names_make_no_edge(graph, caplog) -> None:
    caplog.set_level(logging.INFO, "fieldgraph.graph")
    ingest(graph, orders_schema(), sql_event("INSERT INTO totals SELECT * FROM mystery"))
    assert edges_of(graph, TOTALS) == {} and "* could not be placed" in caplog.text
    ingest(graph, sql_event("INSERT INTO t2 SELECT x FROM mystery JOIN other ON mystery.k = other.k"))
    assert {(d, u) for d, u in edges_of(graph, ds("shop.t2"))} == {("x", "k")}  # the join keys only


@WITH_MEMORY
def test_a_script_reads_the_tables_it_created(graph) -> None:
    ingest(graph, orders_schema(), sql_event(
        "CREATE TABLE tmp AS SELECT customer_id, amount FROM orders WHERE amount > 0;"
        "INSERT INTO totals SELECT * FROM tmp"))
    up = graph.upstream(field_urn(TOTALS, "amount"))
    assert [(h.depth, h.field_path, h.dataset_urn) for h in up.hops if h.edge["kind"] == "DIRECT"] == [
        (1, "amount", ds("shop.tmp")), (2, "amount", ORDERS)]


@WITH_MEMORY
def test_running_a_statement_again_refreshes_its_edges(graph) -> None:
    ingest(graph, orders_schema(), sql_event(TOTALS_SQL))
    n = graph.stats().data_derived_from_edges
    ingest(graph, sql_event(TOTALS_SQL, time=5000))
    assert graph.stats().data_derived_from_edges == n
    edge = edges_of(graph, TOTALS)[("total", "amount")]
    assert (edge["firstSeen"], edge["lastSeen"]) == (1000, 5000)


@WITH_MEMORY
def test_a_statement_refused_at_write_time_leaves_the_rest_of_the_batch(graph) -> None:
    # 3 values into a 2-column table: known only once the target's schema is read
    report = ingest(graph, orders_schema(), schema_event(ds("shop.narrow"), ["a", "b"], 1),
                    sql_event("INSERT INTO narrow SELECT order_id, amount, status FROM orders"),
                    sql_event(TOTALS_SQL))
    ((origin, reason),) = report.refused
    assert "shop.narrow,PROD): INSERT INTO narrow: inserts 3 values into a table whose schema has 2 columns" in reason
    assert ("total", "amount") in edges_of(graph, TOTALS) and encode(graph.fields(ds("shop.narrow")))


@WITH_MEMORY
def test_a_dataset_delete_ends_its_sql_lineage(graph) -> None:
    ingest(graph, orders_schema(), sql_event(TOTALS_SQL))
    assert edges_of(graph, TOTALS)
    ingest(graph, mcp(TOTALS, None, None, 9000, "DELETE") | {"aspectName": "datasetKey"})
    assert edges_of(graph, TOTALS) == {}


# --- OpenLineage -------------------------------------------------------------------------------------------


def ol_event(output_facets: dict, sql: str, dialect: str | None = "postgres") -> dict:
    facet = {"query": sql, **({"dialect": dialect} if dialect else {})}
    return {
        "eventType": "COMPLETE", "eventTime": "2025-01-01T00:00:00Z", "producer": "https://example.com/p",
        "run": {"runId": "01a20188-88c7-7771-a233-a2a83086b505"},
        "job": {"namespace": "airflow", "name": "mart.totals", "facets": {"sql": facet}},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders", "facets": {"schema": {"fields": [
            {"name": n, "type": "TEXT"} for n in ("order_id", "customer_id", "email", "amount", "status")]}}}],
        "outputs": [{"namespace": "postgres://db:5432", "name": "shop.public.totals", "facets": output_facets}],
    }


PG_ORDERS = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.public.orders,PROD)"
PG_TOTALS = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.public.totals,PROD)"
PG_SQL = "INSERT INTO public.totals SELECT customer_id, SUM(amount) AS total FROM public.orders GROUP BY customer_id"


@WITH_MEMORY
def test_openlineage_sql_facets_give_lineage_where_the_producer_sent_none(graph) -> None:
    changes = decode_event(ol_event({}, PG_SQL))
    (sql,) = [c for c in changes if isinstance(c, SqlChange)]
    assert sql.dataset == PG_TOTALS and sql.tables == (("public.orders", PG_ORDERS),)
    assert sql.job == "openlineage:airflow/mart.totals" and sql.run == "01a20188-88c7-7771-a233-a2a83086b505"
    ingest(graph, ol_event({}, PG_SQL))
    edges = edges_of(graph, PG_TOTALS)
    assert set(edges) == {("customer_id", "customer_id"), ("total", "amount"), ("total", "customer_id")}
    assert edges[("total", "amount")]["program"] == "openlineage:airflow/mart.totals"


def test_openlineage_column_lineage_is_never_overridden() -> None:
    cll = {"columnLineage": {"fields": {"total": {"inputFields": [
        {"namespace": "postgres://db:5432", "name": "shop.public.orders", "field": "status"}]}}}}
    changes = decode_event(ol_event(cll, PG_SQL))
    assert not any(isinstance(c, SqlChange) for c in changes)
    (job,) = [c for c in changes if c.aspect == "jobLineage"]
    assert [(e.downstream, e.upstream) for e in job.edges] == [
        (field_urn(PG_TOTALS, "total"), field_urn(PG_ORDERS, "status"))]


@WITH_MEMORY
def test_sql_a_facet_cannot_derive_is_logged_and_the_event_written(graph, caplog) -> None:
    # parsed, but it inserts 2 values into a 1-column list: derived when written, and only logged
    bad = ol_event({}, "INSERT INTO public.totals (total) SELECT customer_id, amount FROM public.orders")
    ingest(graph, bad)
    assert "no lineage derived from openlineage:airflow/mart.totals" in caplog.text
    assert {f["fieldPath"] for f in encode(graph.fields(PG_ORDERS))} >= {"amount", "status"}


def test_an_unparseable_sql_facet_keeps_the_rest_of_the_event(caplog) -> None:
    changes = decode_event(ol_event({}, "INSERT INTO x SELECT FROM WHERE"), "ol.jsonl:7")
    assert [type(c).__name__ for c in changes] == ["SchemaChange"]
    assert "ol.jsonl:7: no lineage derived from job.facets.sql.query" in caplog.text and "line 1" in caplog.text


# --- DataHub queries ------------------------------------------------------------------------------------


def query_event(statement: str, ts: int = 5) -> dict:
    stamp = {"time": ts, "actor": "urn:li:corpuser:datahub"}
    return {"entityType": "query", "entityUrn": QUERY, "changeType": "UPSERT", "aspectName": "queryProperties",
            "aspect": {"json": {"statement": {"value": statement, "language": "SQL"}, "source": "SYSTEM",
                                "created": stamp, "lastModified": stamp}}}


def upstream_lineage(ts: int, query: str | None = QUERY, fine: list | None = None) -> dict:
    up = {"dataset": ORDERS, "type": "TRANSFORMED", **({"query": query} if query else {})}
    return mcp(TOTALS, "upstreamLineage", {"upstreams": [up], **({"fineGrainedLineages": fine} if fine else {})}, ts)


def test_datahub_queries_and_the_lineage_naming_them_decode() -> None:
    (q,) = decode_event(query_event(TOTALS_SQL))
    assert q == QueryChange(QUERY, TOTALS_SQL, "SQL", 5, "")
    (lin,) = decode_event(upstream_lineage(10))
    assert isinstance(lin, LineageChange) and lin.queries == ((QUERY, (ORDERS,)),)
    # field lineage given for the query (or for that upstream): nothing to derive
    fine = [{"upstreamType": "FIELD_SET", "upstreams": [field_urn(ORDERS, "amount")], "downstreamType": "FIELD",
             "downstreams": [field_urn(TOTALS, "total")], "query": QUERY}]
    assert decode_event(upstream_lineage(10, fine=fine))[0].queries == ()
    fine[0].pop("query")
    assert decode_event(upstream_lineage(10, fine=fine))[0].queries == ()
    # the emitter writes them back as DataHub does (upstreams[].query)
    (back,) = decode_event(json.loads(json.dumps(change_event(lin))))
    assert back.queries == lin.queries


@WITH_MEMORY
@pytest.mark.parametrize("order", ["query first", "lineage first"])
def test_a_datahub_query_joins_the_lineage_that_names_it_in_either_order(graph, order) -> None:
    ingest(graph, orders_schema())
    events = [query_event(TOTALS_SQL), upstream_lineage(10)]
    for e in events if order == "query first" else events[::-1]:
        ingest(graph, e)
    edges = edges_of(graph, TOTALS)
    assert ("total", "amount") in edges and len(edges) == 8
    assert {e["program"] for e in edges.values()} == {QUERY} and edges[("total", "amount")]["query"] == QUERY


@WITH_MEMORY
def test_a_newer_lineage_without_the_query_stops_the_join(graph) -> None:
    ingest(graph, orders_schema(), upstream_lineage(10), upstream_lineage(20, query=None))
    ingest(graph, query_event(TOTALS_SQL))
    assert edges_of(graph, TOTALS) == {}


@WITH_MEMORY
def test_query_lineage_follows_the_query_and_the_lineage_that_names_it(graph) -> None:
    ingest(graph, orders_schema(), query_event(TOTALS_SQL, ts=5), upstream_lineage(10))
    assert ("buyers", "email") in edges_of(graph, TOTALS)
    # an older statement arriving late changes nothing
    ingest(graph, query_event("INSERT INTO shop.totals SELECT order_id AS total FROM shop.orders", ts=3))
    assert ("buyers", "email") in edges_of(graph, TOTALS)
    # a newer statement: the edges of the old one stop holding, the new ones are derived
    ingest(graph, query_event("INSERT INTO shop.totals SELECT order_id AS total FROM shop.orders", ts=20))
    assert set(edges_of(graph, TOTALS)) == {("total", "order_id")}
    # the lineage no longer names the query: its edges stop holding
    ingest(graph, upstream_lineage(30, query=None))
    assert edges_of(graph, TOTALS) == {}


@WITH_MEMORY
def test_several_statements_of_a_query_in_one_batch_keep_the_newest(graph) -> None:
    ingest(graph, orders_schema(), upstream_lineage(10),
           query_event("INSERT INTO shop.totals SELECT amount AS total FROM shop.orders", ts=10),
           query_event("INSERT INTO shop.totals SELECT order_id AS total FROM shop.orders", ts=7),
           query_event("INSERT INTO shop.totals SELECT status AS total FROM shop.orders", ts=5))
    assert set(edges_of(graph, TOTALS)) == {("total", "amount")}
    ingest(graph, upstream_lineage(11))  # the stored statement is the newest one too
    assert set(edges_of(graph, TOTALS)) == {("total", "amount")}


@WITH_MEMORY
def test_query_lineage_times_do_not_depend_on_arrival_order(graph_factory) -> None:
    seen = []
    for events in ([query_event(TOTALS_SQL, ts=5), upstream_lineage(10)],
                   [upstream_lineage(10), query_event(TOTALS_SQL, ts=5)]):
        g = graph_factory.new()
        ingest(g, orders_schema())
        for e in events:
            ingest(g, e)
        seen.append({k: (e["firstSeen"], e["lastSeen"]) for k, e in edges_of(g, TOTALS).items()})
    assert seen[0] == seen[1] and set(seen[0].values()) == {(10, 10)}


@WITH_MEMORY
def test_a_lineage_delete_in_the_same_batch_ends_the_query_lineage(graph) -> None:
    ingest(graph, orders_schema(), query_event(TOTALS_SQL, ts=5))
    ingest(graph, upstream_lineage(10), mcp(TOTALS, "upstreamLineage", None, 20, "DELETE"))
    assert edges_of(graph, TOTALS) == {}


@WITH_MEMORY
def test_ended_query_lineage_stays_ended_through_a_job_replay(graph) -> None:
    ingest(graph, orders_schema(), schema_event(TOTALS, ["customer_id", "total", "buyers"], 1),
           query_event(TOTALS_SQL, ts=5), upstream_lineage(10))
    ingest(graph, upstream_lineage(30, None))
    assert edges_of(graph, TOTALS) == {}
    ingest(graph, sql_event("INSERT INTO totals (total) SELECT amount FROM orders", time=1))  # late: a replay
    assert set(edges_of(graph, TOTALS)) == {("total", "amount")}
    assert {e["program"] for e in edges_of(graph, TOTALS).values()} != {QUERY}
    past = graph.upstream(field_urn(TOTALS, "buyers"), as_of=20).hops  # the query's edges held from 10 to 30
    assert {(h.field_path, h.edge["source"]) for h in past} == {("email", QUERY), ("customer_id", QUERY),
                                                                ("status", QUERY)}


@WITH_MEMORY
def test_a_statement_that_arrives_late_replaces_the_lineage_it_precedes(graph) -> None:
    # the lineage (at 30) used the statement of 5; the statement of 20 arrives after it: it held at 30, so the
    # edges of the old one never held
    ingest(graph, orders_schema(), schema_event(TOTALS, ["customer_id", "total", "buyers"], 1),
           query_event(TOTALS_SQL.replace("INSERT INTO shop.totals", "INSERT INTO shop.totals (customer_id, total, "
                                          "buyers)"), ts=5), upstream_lineage(30))
    ingest(graph, query_event("INSERT INTO shop.totals (total) SELECT order_id FROM shop.orders", ts=20))
    assert set(edges_of(graph, TOTALS)) == {("total", "order_id")}
    assert graph.upstream(field_urn(TOTALS, "buyers"), as_of=31).hops == ()  # no past edge either
    assert graph.stats().past_data_derived_from_edges == 0


@WITH_MEMORY
def test_an_insert_does_not_name_the_columns_of_its_target(graph) -> None:
    ingest(graph, orders_schema(), sql_event("INSERT INTO totals SELECT status AS s2 FROM orders; "
                                             "INSERT INTO totals SELECT status AS total FROM orders"))
    assert set(edges_of(graph, TOTALS)) == {("s2", "status"), ("total", "status")}


@WITH_MEMORY
def test_concurrent_writers_settle_the_query_join(graph, monkeypatch) -> None:
    """A query and the lineage naming it, each planned by its own writer before the other was written (the
    first writer's lock ended under it, as when it stalls past the lock's time to live): the writer that finishes
    last derives the lineage."""
    from fieldgraph.graph import WriteMode

    ingest(graph, orders_schema())
    first, second = graph.writer(WriteMode.CONCURRENT), graph.writer(WriteMode.CONCURRENT)
    monkeypatch.setattr(graph.store, "locks_unbroken", lambda: False)
    apply = first.apply
    seen = []

    def the_other_writer_goes_first(plan):  # between the first writer's plan and its apply
        if not seen:
            second.write(decode_event(upstream_lineage(10)))  # no statement stored yet: nothing to derive
            seen.append(dict(edges_of(graph, TOTALS)))
        apply(plan)  # the query's plan saw no lineage naming it: nothing to derive either

    monkeypatch.setattr(first, "apply", the_other_writer_goes_first)
    first.write(decode_event(query_event(TOTALS_SQL)))
    assert seen == [{}]
    assert ("total", "amount") in edges_of(graph, TOTALS)  # the first writer, finishing last, settled it


# --- SQL parsed once ------------------------------------------------------------------------------------------


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The texts sqlglot parses (``sqlglot.parse``, which parse_statements calls; ``parse_one``: never a statement)."""
    seen: list[str] = []
    parse, parse_one = sqlglot.parse, sqlglot.parse_one

    def counting(sql, *args, **kw):
        seen.append(sql)
        return parse(sql, *args, **kw)

    def no_statement(sql, *args, **kw):
        assert not isinstance(sql, str) or "SELECT" not in sql.upper(), sql
        return parse_one(sql, *args, **kw)

    monkeypatch.setattr(sqlglot, "parse", counting)
    monkeypatch.setattr(sqlglot, "parse_one", no_statement)
    return seen


SCRIPT = ("CREATE TABLE shop.tmp AS SELECT customer_id, amount FROM shop.orders WHERE amount > 0;"
          "INSERT INTO shop.totals SELECT customer_id, SUM(amount) AS total, 0 AS buyers FROM shop.tmp "
          "GROUP BY customer_id")


@pytest.mark.parametrize("backend", ["memory"], indirect=True)
def test_each_statement_is_parsed_once_from_the_source_to_the_plan(graph, parses) -> None:
    """A batch of SQL events, an OpenLineage SQL facet and a DataHub query joined to the lineage naming it: each
    text parsed once, when its source reads it (the write path derives from the trees the sources made)."""
    ingest(graph, orders_schema(), sql_event(SCRIPT), ol_event({}, PG_SQL), query_event(TOTALS_SQL),
           upstream_lineage(10))
    assert sorted(parses) == sorted([SCRIPT, PG_SQL, TOTALS_SQL])
    assert ("total", "amount") in edges_of(graph, ds("shop.totals")) and edges_of(graph, PG_TOTALS)
    assert edges_of(graph, ds("shop.tmp"))


@pytest.mark.parametrize("backend", ["memory"], indirect=True)
def test_a_statement_sent_to_another_process_is_parsed_once_there(graph, parses) -> None:
    """SQL changes as decoder processes send them (pickled, without their trees): parsed once more on the write
    path, one statement each."""
    changes = [c for e in (orders_schema(), sql_event(SCRIPT)) for c in decode_event(e)]
    sent = pickle.loads(pickle.dumps(changes, protocol=5))
    assert sent == changes and all(c.parsed.tree is None for c in sent if isinstance(c, SqlChange))
    parses.clear()
    graph.ingest(sent)
    assert sorted(parses) == sorted(c.statement for c in sent if isinstance(c, SqlChange))
    assert ("total", "amount") in edges_of(graph, ds("shop.totals"))


# --- the command line -----------------------------------------------------------------------------------------


@pytest.fixture
def cli(graph, monkeypatch):
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()

    def run(*args: str, code: int = 0, stdin: str | None = None):
        res = runner.invoke(app, list(args), input=stdin)
        assert res.exit_code == code, (res.exit_code, res.output, res.stderr if res.stderr_bytes else "")
        return res

    return run


def test_fieldgraph_sql_from_a_file_and_from_stdin(cli, graph, tmp_path) -> None:
    ingest(graph, orders_schema())
    path = tmp_path / "totals.sql"
    path.write_text("-- totals\n" + TOTALS_SQL + ";\n")
    dry = json.loads(cli("sql", str(path), "--dialect", "spark", "--platform", "hive", "--dry-run", "--json").stdout)
    assert dry["written"] is False and dry["statements"][0]["target"] == TOTALS
    assert {(e["column"], e["kind"]) for e in dry["statements"][0]["edges"]} >= {("total", "DIRECT")}
    assert graph.stats().data_derived_from_edges == 0
    table = cli("sql", str(path), "--dialect", "spark", "--platform", "hive", "--job", "totals").stdout
    assert "wrote 8 edges from 1 statement" in table
    assert edges_of(graph, TOTALS)[("total", "amount")]["program"] == "totals"
    res = cli("sql", "-", "--platform", "hive", "--database", "shop", "--target", "report", "--json",
              stdin="SELECT status, COUNT(*) AS n FROM orders GROUP BY status")
    (st,) = json.loads(res.stdout)["statements"]
    assert st["target"] == ds("shop.report") and {e["column"] for e in st["edges"]} == {"status", "n"}


def test_fieldgraph_sql_names_the_place_of_a_parse_error(cli, tmp_path) -> None:
    path = tmp_path / "bad.sql"
    path.write_text("INSERT INTO t\nSELECT CASE a FROM s")
    res = cli("sql", str(path), code=EXIT_BAD_INPUT)
    assert f"{path}: line 2, column 13" in res.stderr


def test_ingest_rejects_a_bad_sql_event_and_writes_the_rest(cli, graph, tmp_path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join(json.dumps(e) for e in (
        orders_schema(), sql_event("INSERT INTO t SELECT FROM"), sql_event(TOTALS_SQL))) + "\n")
    rejects = tmp_path / "rejects.jsonl"
    res = cli("ingest", str(events), "--rejects", str(rejects), "--json", code=EXIT_BAD_INPUT)
    assert json.loads(res.stdout)["rejected"] == 1
    (rej,) = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert rej["line"] == 2 and "sql: line 1, column" in rej["error"]
    assert ("total", "amount") in edges_of(graph, TOTALS)


# --- Kafka -------------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_sql_events_through_the_kafka_worker(broker, graph) -> None:
    from .kafka_fixtures import ThreadWorker, wait_committed, worker_config

    topic = broker.create_topic(broker.name("sql"), partitions=1)
    broker.create_topic(f"{topic}.dlq")
    values = [orders_schema(), sql_event("INSERT INTO t SELECT CASE a FROM s"), sql_event(TOTALS_SQL)]
    broker.produce(topic, [(None, json.dumps(v).encode()) for v in values])
    cfg = worker_config(broker, [topic], graph.uri)
    worker = ThreadWorker(cfg)
    wait_committed(broker, cfg.group_id, topic, len(values), 60)
    assert worker.stop().dlq == 1
    (dead,) = broker.consume_all(f"{topic}.dlq", 1)
    headers = {k: v.decode() for k, v in dead.headers()}
    assert "sql: line 1, column" in headers["fieldgraph.reason"]
    assert ("total", "amount") in edges_of(graph, TOTALS)


# --- read before the schemas: what waits for them (BigQuery's UNNEST) --------------------------------------------

BQ_EVENTS = ds("my-project.analytics.events", "bigquery")
BQ_TAGS = ds("my-project.mart.event_tags", "bigquery")
#: an implicit UNNEST join: `tags` is a column of the events table, which only its schema says
BQ_TAGS_SQL = ("INSERT INTO `my-project.mart.event_tags` SELECT event_id, tag, pos "
               "FROM `my-project.analytics.events`, UNNEST(tags) AS tag WITH OFFSET AS pos WHERE tag != ''")
BQ_AVRO = {"type": "record", "name": "events", "fields": [
    {"name": "event_id", "type": "string"}, {"name": "user_id", "type": "long"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "items", "type": {"type": "array", "items": {"type": "record", "name": "Item", "fields": [
        {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}}]}
#: (target column, source column) -> (kind, subtype) of BQ_TAGS_SQL's edges
BQ_TAGS_EDGES = {("event_id", "event_id"): ("DIRECT", "IDENTITY"), ("event_id", "tags"): ("INDIRECT", "FILTER"),
                 ("tag", "tags"): ("DIRECT", "IDENTITY"), ("pos", "tags"): ("DIRECT", "TRANSFORMATION")}


def bq_schema(ts: int = 1) -> dict:
    """The events table's schema event: its v2 paths, as normalized from its Avro schema."""
    from fieldgraph.normalizers import normalize

    return schema_event(BQ_EVENTS, [f.fieldPath for f in normalize(json.dumps(BQ_AVRO))], ts)


def bq_event(sql: str = BQ_TAGS_SQL, **kw: object) -> dict:
    return {"sql": sql, "dialect": "bigquery", "time": 1000, **kw}


def kinds_of(graph, dataset: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(downstream column, upstream column) -> (kind, subtype) of the SQL edges into ``dataset`` (v1 paths)."""
    from fieldgraph.normalizers import v1_path

    return {(d, v1_path(u)): (e["kind"], e["subtype"]) for (d, u), e in edges_of(graph, dataset).items()}


@pytest.mark.parametrize("event, message", [
    ({"sql": "SELECT event_id, tag FROM `my-project.analytics.events`, UNNEST(tags) AS tag", "dialect": "bigquery"},
     "a SELECT writes no table: give the target"),
    ({"sql": "INSERT INTO t (a, b, c) SELECT event_id, tag FROM e, UNNEST(tags) AS tag", "dialect": "bigquery"},
     "lists 3 target columns for 2 values"),  # counted before the UNNEST is followed
    ({"sql": "INSERT INTO t SELECT a FROM s WHERE " + " OR ".join(f"a = {i}" for i in range(3000))},
     "nested too deeply"),
    ({"sql": "ALTER TABLE t ADD COLUMN x INT64; DROP TABLE u", "dialect": "bigquery"}, "no statement writes a table"),
    ({"sql": "INSERT INTO t SELECT tag FROM e, UNNEST(tags AS tag", "dialect": "bigquery"}, "line 1, column"),
])
def test_what_no_schema_could_fix_is_refused_when_read(event: dict, message: str) -> None:
    with pytest.raises(EventError, match=message):
        decode_event(event)


@pytest.mark.parametrize("sql, schemas, edges", [
    # an implicit UNNEST join, WITH OFFSET (hyphenated project, backquoted)
    (BQ_TAGS_SQL, {"my-project.analytics.events": ["event_id", "tags"]},
     {"event_id <- my-project.analytics.events.event_id", "event_id <- my-project.analytics.events.tags",
      "tag <- my-project.analytics.events.tags", "pos <- my-project.analytics.events.tags"}),
    # a scalar subquery's unqualified column
    ("INSERT INTO r SELECT o.id, (SELECT MAX(rate) FROM fx) AS top FROM o", {"o": ["id"], "fx": ["rate"]},
     {"id <- o.id", "top <- fx.rate"}),
    # a struct's * that only its schema expands, against a column list
    ("INSERT INTO r (a, b) SELECT e.payload.* FROM events AS e", {"events": ["payload", "payload.x", "payload.y"]},
     {"a <- events.payload.x", "b <- events.payload.y"}),
])
def test_what_only_the_schemas_can_follow_is_read_then_resolved(sql: str, schemas: dict, edges: set) -> None:
    (c,) = decode_event(bq_event(sql))
    assert isinstance(c, SqlChange)
    with pytest.raises(SchemasNeeded):  # which the graph refuses if it has no schema for the tables either
        derive(c.parsed, {}, None)
    assert {e.key for e in derive(c.parsed, schemas).edges} == edges


@WITH_MEMORY
def test_bigquery_unnest_resolves_against_the_graph_schemas(graph) -> None:
    """A SQL event that only the schemas can follow is written once the graph has them; without them, it is refused
    when the graph derives it (and the rest of the batch is written)."""
    report = ingest(graph, bq_schema(), bq_event(job="tags"))
    assert report.refused == []
    assert kinds_of(graph, BQ_TAGS) == BQ_TAGS_EDGES
    assert {f["fieldPath"] for f in encode(graph.fields(BQ_TAGS))} == {"event_id", "tag", "pos"}
    # the same statement over a table the graph has no schema of
    other = BQ_TAGS_SQL.replace("analytics.events", "analytics.unknown").replace("event_tags", "other_tags")
    report = ingest(graph, bq_event(other), bq_event("INSERT INTO `my-project.mart.ids` SELECT e.event_id "
                                                     "FROM `my-project.analytics.events` AS e"))
    ((_, reason),) = report.refused
    assert "Cannot resolve 'tags' due to missing source schemas" in reason
    assert kinds_of(graph, ds("my-project.mart.ids", "bigquery")) == {("event_id", "event_id"): ("DIRECT", "IDENTITY")}


def test_fieldgraph_sql_and_sql_events_resolve_bigquery_unnest_against_the_graph(cli, graph, tmp_path) -> None:
    """Through the command line: ``fieldgraph sql`` against a graph that has the schemas, and the same statement as a
    SQL event of ``fieldgraph ingest``; without the schema, ``fieldgraph sql`` says what it could not resolve."""
    from fieldgraph.normalizers import FieldUrn

    path = tmp_path / "tags.sql"
    path.write_text(BQ_TAGS_SQL + ";\n")
    res = cli("sql", str(path), "--dialect", "bigquery", code=EXIT_BAD_INPUT)  # no schema yet: nothing placed
    assert "Cannot resolve 'tags' due to missing source schemas" in res.stderr
    ingest(graph, bq_schema())
    (st,) = json.loads(cli("sql", str(path), "--dialect", "bigquery", "--job", "tags", "--json").stdout)["statements"]
    assert st["target"] == BQ_TAGS and st["unresolved"] == []
    assert {(e["column"], FieldUrn.parse(e["from"]).field_path): (e["kind"], e["subtype"])
            for e in st["edges"]} == BQ_TAGS_EDGES
    assert kinds_of(graph, BQ_TAGS) == BQ_TAGS_EDGES
    # a SQL event of a file: the WITH OFFSET statement into another table, a hyphenated project unquoted
    events = tmp_path / "events.jsonl"
    flat = BQ_TAGS_SQL.replace("`", "").replace("event_tags", "tags_flat")
    events.write_text(json.dumps(bq_event(flat, job="flat")) + "\n")
    assert json.loads(cli("ingest", str(events), "--json").stdout)["rejected"] == 0
    assert kinds_of(graph, ds("my-project.mart.tags_flat", "bigquery")) == BQ_TAGS_EDGES


@WITH_MEMORY
def test_bigquery_unnest_through_the_events_endpoint(graph, tmp_path) -> None:
    from fieldgraph.ingest.config import ServeConfig

    from .test_service import AUTH, TOKEN, served

    config = ServeConfig(token=TOKEN, rate_limit=0, rejects=tmp_path / "rejects.jsonl", max_body_bytes=256 * 1024)
    with served(graph, config) as service:
        r = service.http.post("/api/v1/events", json=[bq_schema(), bq_event(job="tags")], headers=AUTH)
        assert r.status_code == 200 and r.json()["written"] == 2, r.text
    assert kinds_of(graph, BQ_TAGS) == BQ_TAGS_EDGES


# --- output columns named as the engine names them (issue 47) ----------------------------------------------------

UNNAMED = "CREATE TABLE t AS SELECT customer_id, SUM(amount), amount + 1, COUNT(*) FROM orders GROUP BY customer_id, amount"
ORDER_COLS = {"orders": ["order_id", "customer_id", "email", "amount", "status"]}


@pytest.mark.parametrize("dialect, names", [
    ("spark", ["customer_id", "sum(amount)", "(amount + 1)", "count(1)"]),
    ("databricks", ["customer_id", "sum(amount)", "(amount + 1)", "count(1)"]),
    ("hive", ["customer_id", "_c1", "_c2", "_c3"]),
    ("trino", ["customer_id", "_col1", "_col2", "_col3"]),
    ("presto", ["customer_id", "_col1", "_col2", "_col3"]),
    ("bigquery", ["customer_id", "f0_", "f1_", "f2_"]),
    ("postgres", ["customer_id", "sum", "?column?", "count"]),
    ("redshift", ["customer_id", "sum", "?column?", "count"]),
    ("snowflake", ["customer_id", "SUM(AMOUNT)", "AMOUNT + 1", "COUNT(*)"]),
    ("duckdb", ["customer_id", "sum(amount)", "(amount + 1)", "count_star()"]),
    ("mysql", ["customer_id", "sum(amount)", "amount + 1", "count(*)"]),
    (None, ["customer_id", "sum(amount)", "amount + 1", "count(*)"]),
])
def test_an_unnamed_output_is_named_as_the_dialects_engine_names_it(dialect: str | None, names: list[str]) -> None:
    (st,) = parse_statements(UNNAMED, dialect)
    lineage = derive(st, ORDER_COLS)
    assert list(lineage.columns) == names and lineage.notes == ()
    assert {e.column for e in lineage.edges if e.kind == "DIRECT"} == set(names[:3])  # COUNT(*) reads no column
    assert "_col_" not in " ".join(lineage.columns)


def test_engine_names_are_used_inside_the_statement_too() -> None:
    # Trino names the subquery's MAX(amount) _col1: the outer SELECT * reads it under that name
    (st,) = parse_statements("CREATE VIEW v AS SELECT * FROM (SELECT customer_id, MAX(amount) FROM orders "
                             "GROUP BY customer_id) s", "trino")
    lineage = derive(st, ORDER_COLS)
    assert lineage.columns == ("customer_id", "_col1")
    assert ("_col1 <- orders.amount", "AGGREGATION") in {(e.key, e.subtype) for e in lineage.edges}
    # a scalar subquery, a literal, a cast, a CASE
    sql = "INSERT INTO r SELECT (SELECT MAX(amount) FROM orders), 'x', CAST(amount AS INT), CASE WHEN amount > 0 " \
          "THEN 1 END FROM orders"
    assert derive(parse_statements(sql, "spark")[0], ORDER_COLS).columns == (
        "scalarsubquery()", "x", "CAST(amount AS INT)", "CASE WHEN (amount > 0) THEN 1 END")
    assert derive(parse_statements(sql, "postgres")[0], ORDER_COLS).columns == ("max", "?column?", "amount", "case")


def test_a_created_table_whose_schema_names_an_unnamed_output_otherwise_takes_the_schemas_name() -> None:
    (st,) = parse_statements("CREATE TABLE t AS SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id",
                             "spark")
    lineage = derive(st, {**ORDER_COLS, "t": ["customer_id", "total"]})
    assert lineage.columns == ("customer_id", "total")
    assert "total <- orders.amount" in {e.key for e in lineage.edges}
    (note,) = lineage.notes
    assert "'sum(amount)'" in note and "'total'" in note and "column 2" in note
    # an alias the statement gives is kept: the schema that lacks it is noted, both names said
    (st,) = parse_statements("CREATE TABLE t AS SELECT customer_id, SUM(amount) AS s FROM orders GROUP BY 1", "spark")
    lineage = derive(st, {**ORDER_COLS, "t": ["customer_id", "total"]})
    assert lineage.columns == ("customer_id", "s") and "'s'" in lineage.notes[0] and "'total'" in lineage.notes[0]
    # other column counts: nothing is placed by position
    lineage = derive(st, {**ORDER_COLS, "t": ["customer_id", "total", "n"]})
    assert lineage.columns == ("customer_id", "s") and "has 'total' there" in lineage.notes[0]


def test_two_outputs_of_one_name_as_the_engines_take_them() -> None:
    schemas = {"a": ["id", "x"], "b": ["id", "x"], "r": ["ax", "bx"]}
    both = "SELECT a.x, b.x FROM a JOIN b ON a.id = b.id"
    # a table created with two columns of one name is refused (Spark, Postgres, Trino, BigQuery, Snowflake): when read
    for sql in (f"CREATE TABLE c AS {both}", f"CREATE VIEW c AS {both}"):
        (st,) = parse_statements(sql, "spark")
        with pytest.raises(SqlError, match="two of its columns are named x"):
            check(st)
    # a plain SELECT keeps both, by position: onto its target's schema when known
    (st,) = parse_statements(both, "spark")
    lineage = derive(st, schemas, "r")
    assert {e.key for e in lineage.edges if e.kind == "DIRECT"} == {"ax <- a.x", "bx <- b.x"}
    assert lineage.notes == ()
    # without it, both go to the one column of that name (a field is a name), and that is said
    lineage = derive(st, {"a": schemas["a"], "b": schemas["b"]}, "r")
    assert {e.key for e in lineage.edges if e.kind == "DIRECT"} == {"x <- a.x", "x <- b.x"}
    assert "2 values are named x" in lineage.notes[0]
    # an INSERT maps by position as ever
    (st,) = parse_statements(f"INSERT INTO r {both}", "spark")
    assert {e.key for e in derive(st, schemas).edges if e.kind == "DIRECT"} == {"ax <- a.x", "bx <- b.x"}


def test_an_output_alias_inside_an_order_by_expression_is_placed() -> None:
    (st,) = parse_statements("SELECT x AS al, y FROM a JOIN b ON a.id = b.id ORDER BY CASE WHEN al = 0 THEN y END",
                             "spark")
    lineage = derive(st, {"a": ["id", "x", "y"], "b": ["id"]}, "r")
    assert lineage.unresolved == ()
    keys = {e.key: e.transformations for e in lineage.edges}
    assert keys["al <- a.x"] == ("DIRECT/IDENTITY", "INDIRECT/SORT") and keys["y <- a.x"] == ("INDIRECT/SORT",)
    assert not any(e.by_name for e in lineage.edges)  # no a.al read by name


@WITH_MEMORY
def test_a_created_table_named_otherwise_by_its_schema_is_written_to_the_schemas_columns(graph, caplog) -> None:
    caplog.set_level(logging.INFO, "fieldgraph.graph")
    report = ingest(graph, orders_schema(), schema_event(ds("shop.t"), ["customer_id", "total"], 1), sql_event(
        "CREATE TABLE t AS SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id; "
        "INSERT INTO r SELECT x AS al FROM mystery JOIN other ON mystery.k = other.k ORDER BY CASE WHEN al = 0 THEN "
        "y END"))
    assert report.refused == []
    assert ("total", "amount") in edges_of(graph, ds("shop.t"))
    assert not any(f.get("placeholder") for f in encode(graph.fields(ds("shop.t"))))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'sum(amount)'" in m and "'total'" in m for m in warnings), warnings
    # what cannot be placed is logged once, under its reason; the alias is placed
    placed = [r.getMessage() for r in caplog.records if "could not be placed" in r.getMessage()]
    assert len(placed) == 1 and ": x, y could not be placed" in placed[0]


def test_fieldgraph_sql_reports_a_created_tables_other_names_with_both(cli, graph, tmp_path) -> None:
    ingest(graph, orders_schema(), schema_event(ds("shop.t"), ["customer_id", "total"], 1))
    path = tmp_path / "t.sql"
    path.write_text("CREATE TABLE t AS SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id")
    args = ("sql", str(path), "--dialect", "spark", "--platform", "hive", "--database", "shop")
    (st,) = json.loads(cli(*args, "--dry-run", "--json").stdout)["statements"]
    assert st["columns"] == ["customer_id", "total"]
    (note,) = st["notes"]
    assert "'sum(amount)'" in note and "'total'" in note
    table = cli(*args).stdout
    assert "sum(amount)" in table and "total" in table.split("sum(amount)", 1)[1]
    assert ("total", "amount") in edges_of(graph, ds("shop.t"))


@WITH_MEMORY
def test_a_schema_arriving_after_a_created_table_reports_a_derived_name_with_the_schemas(graph, caplog) -> None:
    t = ds("shop.t")
    ingest(graph, orders_schema(), sql_event(
        "CREATE TABLE t AS SELECT customer_id, SUM(amount), MAX(status) AS last_status FROM orders GROUP BY 1"))
    (before,) = [u for u in graph.unresolved() if u.dataset == t and u.reference == "sum(amount)"]
    assert (before.column, before.schema_column) == (2, None)  # no schema yet: no other name
    caplog.set_level(logging.WARNING, "fieldgraph.graph")
    ingest(graph, schema_event(t, ["customer_id", "total", "last_status"], 2000))
    # the derived column stays a placeholder with its edges, reported with both names
    (after,) = [u for u in graph.unresolved() if u.dataset == t]
    assert (after.reference, after.column, after.schema_column, after.edges) == ("sum(amount)", 2, "total", 2)  # amount, and customer_id grouping
    assert after.to_json()["schemaColumn"] == "total"
    assert ("sum(amount)", "amount") in edges_of(graph, t) and ("last_status", "status") in edges_of(graph, t)
    (warning,) = [r.getMessage() for r in caplog.records if "derived as its column" in r.getMessage()]
    assert "'sum(amount)'" in warning and "column 2 'total'" in warning
    # the statement's next run maps onto the schema's column; the stale edge stays listed, as both names say
    ingest(graph, sql_event("CREATE TABLE t AS SELECT customer_id, SUM(amount), MAX(status) AS last_status "
                            "FROM orders GROUP BY 1", time=3000))
    assert ("total", "amount") in edges_of(graph, t)


def test_lineage_unresolved_prints_the_schemas_name_of_a_derived_column(cli, graph) -> None:
    t = ds("shop.t")
    ingest(graph, orders_schema(), sql_event("CREATE TABLE t AS SELECT customer_id, SUM(amount) FROM orders "
                                             "GROUP BY customer_id"), schema_event(t, ["customer_id", "total"], 2000))
    table = cli("lineage", "unresolved").stdout
    assert "sum(amount)" in table and "total (column 2)" in table
    (row,) = [r for r in json.loads(cli("lineage", "unresolved", "--json").stdout) if r["dataset"] == t]
    assert (row["reference"], row["column"], row["schemaColumn"]) == ("sum(amount)", 2, "total")
