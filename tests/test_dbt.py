"""Transformation types from SQL (``--types-from-sql``): dbt-ol (openlineage-dbt) sends column lineage without types,
so every edge from dbt is DIRECT/BlackBox; with the option, the types an output's lineage lacks are filled from the
job's ``sql`` facet as fieldgraph derives SQL lineage, and the producer's typed edges stay as sent.

First on events built with the OpenLineage client, decoded and written to the in-memory store; then for real: a small
dbt project on DuckDB (``tests/dbt/``: dbt-core, dbt-duckdb and openlineage-dbt from PyPI, in their own venv,
``make .venv-dbt/bin/dbt-ol``) whose ``dbt-ol run`` sends to ``fieldgraph serve`` over HTTP, once per mode."""

from __future__ import annotations

import json
import os
import pickle
import secrets
import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import sql_job
from openlineage.client.serde import Serde

from fieldgraph.changes import JobLineageChange, SqlChange
from fieldgraph.graph import LineageGraph, MemoryStore
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.backfill import CHANGES, decode_records
from fieldgraph.ingest.config import WorkerConfig, load_config, platforms_from_env
from fieldgraph.ingest.platforms import DEFAULT_MAPPING
from fieldgraph.ingest.sources import decode_event

from .services import fieldgraph_serve

ROOT = Path(__file__).resolve().parent.parent
DBT_BIN = ROOT / ".venv-dbt" / "bin"
PROJECT = Path(__file__).resolve().parent / "dbt"
TOKEN = secrets.token_urlsafe()
RUN_ID = "01a20188-88c7-7771-a233-a2a83086b505"
FILL = platforms_from_env({}, types_from_sql=True)

#: the model with a CASE (tests/dbt/models/order_sizes.sql, as dbt compiles it)
SIZES_SQL = ('select o.order_id, case when o.amount > 100 then o.status else \'small\' end as size\n'
             'from "shop"."main"."orders" as o')


def urn(name: str, namespace: str = "duckdb:///data/shop.duckdb") -> str:
    return DEFAULT_MAPPING.dataset_urn(namespace, name)


ORDERS, SIZES = urn("shop.main.orders"), urn("shop.main.order_sizes")


def sizes_event(typed: dict[str, cl.Transformation] | None = None, sql: str = SIZES_SQL, job: str = "order_sizes"
                ) -> dict[str, Any]:
    """A run event as dbt-ol sends it for ``order_sizes`` (no types: ``transformations: []``), but for the edges of
    ``typed`` (input field -> its transformation)."""
    typed = typed or {}

    def inp(out: str, f: str) -> cl.InputField:
        return cl.InputField("duckdb:///data/shop.duckdb", "shop.main.orders", f,
                             [typed[f]] if f in typed and out == "size" else [])

    facet = cl.ColumnLineageDatasetFacet(fields={
        "order_id": cl.Fields(inputFields=[inp("order_id", "order_id")]),
        "size": cl.Fields(inputFields=[inp("size", "amount"), inp("size", "status")])})
    ev = RunEvent(eventType=RunState.COMPLETE, eventTime="2026-11-27T00:00:00.000Z", run=Run(runId=RUN_ID),
                  job=Job(namespace="dbt", name=job, facets={"sql": sql_job.SQLJobFacet(sql, dialect="duckdb")}),
                  producer="https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
                  inputs=[], outputs=[OutputDataset("duckdb:///data/shop.duckdb", "shop.main.order_sizes",
                                                    facets={"columnLineage": facet})])
    return json.loads(Serde.to_json(ev))


def upstream(g: LineageGraph, field: str) -> dict[str, dict[str, Any]]:
    """The edges into ``field``: upstream field -> edge properties."""
    return {h.urn: dict(h.edge) for h in g.upstream(field, 1).hops}


def types(edge: dict[str, Any]) -> tuple[Any, ...]:
    return edge["sourceFormat"], edge["kind"], edge.get("subtype"), edge.get("transformation")


# ---- on events built with the client ----

def test_without_the_option_dbts_lineage_is_direct_black_box() -> None:
    changes = decode_event(sizes_event())
    assert [type(c) for c in changes] == [JobLineageChange]
    g = LineageGraph(MemoryStore())
    g.ingest(changes)
    edges = upstream(g, field_urn(SIZES, "size"))
    assert {types(e) for e in edges.values()} == {("openlineage", "DIRECT", None, "BlackBox")}


def test_the_sql_fills_the_types_the_producer_left_out() -> None:
    (c,) = decode_event(sizes_event(), platforms=FILL)
    assert isinstance(c, SqlChange) and c.sent is not None and len(c.untyped) == 3
    g = LineageGraph(MemoryStore())
    g.ingest([c])
    size = upstream(g, field_urn(SIZES, "size"))
    assert types(size[field_urn(ORDERS, "amount")]) == ("openlineage", "INDIRECT", "CONDITIONAL", "Conditional")
    assert types(size[field_urn(ORDERS, "status")]) == ("openlineage", "DIRECT", "TRANSFORMATION", "Transformation")
    order_id = upstream(g, field_urn(SIZES, "order_id"))
    assert types(order_id[field_urn(ORDERS, "order_id")]) == ("openlineage", "DIRECT", "IDENTITY", "Identity")
    # the producer's properties stay: its job, run and query
    assert {(e["source"], e["run"]) for e in size.values()} == {("openlineage:dbt/order_sizes", RUN_ID)}


def test_the_producers_typed_edges_stay_as_sent() -> None:
    typed = {"amount": cl.Transformation("DIRECT", "AGGREGATION", "as the producer says")}
    g = LineageGraph(MemoryStore())
    g.ingest(decode_event(sizes_event(typed), platforms=FILL))
    size = upstream(g, field_urn(SIZES, "size"))
    assert types(size[field_urn(ORDERS, "amount")]) == ("openlineage", "DIRECT", "AGGREGATION", "Aggregation")
    assert size[field_urn(ORDERS, "amount")]["description"] == "as the producer says"
    assert types(size[field_urn(ORDERS, "status")]) == ("openlineage", "DIRECT", "TRANSFORMATION", "Transformation")


def test_sql_that_cannot_be_derived_leaves_the_lineage_as_sent(caplog: pytest.LogCaptureFixture) -> None:
    for sql in ("select case when from",  # does not parse
                "select 1 as a; select 2 as b",  # two statements: which one writes the output?
                'select x.order_id, x.size from "shop"."main"."nowhere" as x'):  # the pairs sent are not its
        g = LineageGraph(MemoryStore())
        g.ingest(decode_event(sizes_event(sql=sql), platforms=FILL))
        edges = upstream(g, field_urn(SIZES, "size"))
        assert set(edges) == {field_urn(ORDERS, "amount"), field_urn(ORDERS, "status")}, sql
        assert {types(e) for e in edges.values()} == {("openlineage", "DIRECT", None, "BlackBox")}, sql
    assert "no lineage derived from job.facets.sql.query" in caplog.text


def test_the_backfills_executors_read_the_option() -> None:
    """The Spark backfill decodes with the mapping it is given (``fieldgraph backfill --types-from-sql``)."""
    record = [("dbt.jsonl", json.dumps(sizes_event()).encode())]

    def decoded(platforms: Any) -> list[Any]:
        return [pickle.loads(c) for _, (kind, payload) in decode_records(record, {}, None, None, None,
                                                                         platforms=platforms)
                if kind == CHANGES for _, c in payload]

    assert [type(c) for c in decoded(DEFAULT_MAPPING)] == [JobLineageChange]
    (c,) = decoded(FILL)
    assert isinstance(c, SqlChange) and c.sent is not None and c.untyped


def test_the_worker_reads_the_option_from_its_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's setting ``openlineage_types_from_sql`` (config file, ``FIELDGRAPH_OPENLINEAGE_TYPES_FROM_SQL``,
    ``--types-from-sql``), read once where it starts, into the mapping its decoders use."""
    assert WorkerConfig(openlineage_types_from_sql=True).platforms().types_from_sql
    assert not WorkerConfig().platforms().types_from_sql and not platforms_from_env({}).types_from_sql
    config = tmp_path / "worker.toml"
    config.write_text("openlineage_types_from_sql = true\n")
    assert load_config(config, flags={}).platforms().types_from_sql
    assert not load_config(config, flags={"openlineage_types_from_sql": False}).platforms().types_from_sql
    monkeypatch.setenv("FIELDGRAPH_OPENLINEAGE_TYPES_FROM_SQL", "true")
    assert load_config(None, flags={}).platforms().types_from_sql


# ---- a real dbt project on DuckDB, sending to fieldgraph serve ----

#: each model's columns and the upstream columns dbt-ol names for each (``table.column``)
DBT_LINEAGE = {
    "paid_orders": {"order_id": {"orders.order_id"}, "customer_id": {"orders.customer_id"},
                    "amount": {"orders.amount"}},
    "order_customers": {"order_id": {"orders.order_id"}, "customer_name": {"customers.name"}},
    "revenue_by_customer": {"customer_id": {"paid_orders.customer_id"}, "revenue": {"paid_orders.amount"}},
    "order_sizes": {"order_id": {"orders.order_id"}, "size": {"orders.amount", "orders.status"}},
}


@pytest.fixture(scope="module")
def dbt_project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The project copied to a temporary folder, its seeds loaded into DuckDB; the environment dbt runs in."""
    if not (DBT_BIN / "dbt-ol").exists():
        message = "no dbt venv: make .venv-dbt/bin/dbt-ol"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("dbt") / "shop"
    shutil.copytree(PROJECT, folder)
    env = {**os.environ, "PATH": f"{DBT_BIN}{os.pathsep}{os.environ['PATH']}", "DBT_PROFILES_DIR": str(folder),
           "FIELDGRAPH_DBT_DB": str(folder / "shop.duckdb"), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
           "PROJECT_DIR": str(folder)}
    for key in [k for k in env if k.startswith("OPENLINEAGE")]:
        del env[key]
    subprocess.run([str(DBT_BIN / "dbt"), "seed"], cwd=folder, env=env, check=True, capture_output=True, timeout=300)
    return env


def dbt_ol_run(env: dict[str, str], base: str) -> None:
    """``dbt-ol run`` of the project, its OpenLineage events sent to the service over HTTP with the token."""
    env = {**env, "OPENLINEAGE_URL": base, "OPENLINEAGE_API_KEY": TOKEN}
    res = subprocess.run([str(DBT_BIN / "dbt-ol"), "run"], cwd=env["PROJECT_DIR"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Emitted 10 OpenLineage events" in res.stdout + res.stderr, res.stdout + res.stderr


def served_upstream(base: str, dataset: str, column: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The edges into a column of a model over the HTTP API: (``table.column``, job) -> edge properties (every edge
    of each hop: one hop per pair of columns lists the edges of every job between them)."""
    query = urllib.parse.urlencode({"field": field_urn(dataset, column), "depth": 1})
    with urllib.request.urlopen(f"{base}/api/v1/lineage/upstream?{query}", timeout=30) as r:
        hops = json.load(r)["hops"]
    return {(f"{h['dataset'].split(',')[1].rsplit('.', 1)[-1]}.{h['fieldPath']}", e["source"]): e
            for h in hops for e in h["edges"]}


@pytest.mark.parametrize("fill", [False, True], ids=["as-sent", "types-from-sql"])
def test_dbt_ol_run_into_fieldgraph_serve(dbt_project: dict[str, str], tmp_path: Path, fill: bool) -> None:
    namespace = f"duckdb://{dbt_project['FIELDGRAPH_DBT_DB']}"

    def model(name: str) -> str:
        return urn(f"shop.main.{name}", namespace)

    def job(name: str) -> str:
        return f"openlineage:dbt/shop.main.fieldgraph_shop.{name}"

    args = ["--types-from-sql"] if fill else []
    with fieldgraph_serve(f"embedded:{tmp_path / 'graph'}", tmp_path, *args, token=TOKEN) as base:
        dbt_ol_run(dbt_project, base)
        edges = {(m, col): served_upstream(base, model(m), col) for m, cols in DBT_LINEAGE.items() for col in cols}
        # dbt's own lineage is there either way: each column from the columns dbt-ol names, under the model's job
        for (m, col), into in edges.items():
            sent = {up for up, source in into if source == job(m) and into[up, source]["sourceFormat"] == "openlineage"}
            assert sent == DBT_LINEAGE[m][col], (m, col, into)
        if not fill:
            for into in edges.values():
                assert {types(e) for e in into.values()} == {("openlineage", "DIRECT", None, "BlackBox")}
            return

        def kind(m: str, col: str, up: str) -> tuple[Any, ...]:
            e = edges[m, col][up, job(m)]
            return e["kind"], e.get("subtype")

        # WHERE: the filter column into every column; the columns themselves unchanged
        assert kind("paid_orders", "amount", "orders.amount") == ("DIRECT", "IDENTITY")
        assert {kind("paid_orders", c, "orders.status") for c in DBT_LINEAGE["paid_orders"]} == {("INDIRECT", "FILTER")}
        # JOIN: both keys into every column
        for c in DBT_LINEAGE["order_customers"]:
            for key in ("orders.customer_id", "customers.id"):
                assert kind("order_customers", c, key) == ("INDIRECT", "JOIN")
        assert kind("order_customers", "customer_name", "customers.name") == ("DIRECT", "IDENTITY")
        # GROUP BY and an aggregate
        assert kind("revenue_by_customer", "revenue", "paid_orders.amount") == ("DIRECT", "AGGREGATION")
        assert kind("revenue_by_customer", "revenue", "paid_orders.customer_id") == ("INDIRECT", "GROUP_BY")
        # CASE: the condition's column, the value's
        assert kind("order_sizes", "size", "orders.amount") == ("INDIRECT", "CONDITIONAL")
        assert kind("order_sizes", "size", "orders.status") == ("DIRECT", "TRANSFORMATION")
        assert edges["order_sizes", "size"]["orders.amount", job("order_sizes")]["transformation"] == "Conditional"

        # a producer that types an edge itself keeps it as sent, with the same SQL
        typed = sizes_event({"amount": cl.Transformation("DIRECT", "AGGREGATION")}, job="typed_sizes")
        typed["outputs"][0]["namespace"] = namespace
        for f in typed["outputs"][0]["facets"]["columnLineage"]["fields"].values():
            for inp in f["inputFields"]:
                inp["namespace"] = namespace
        req = urllib.request.Request(f"{base}/api/v1/lineage", data=json.dumps(typed).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 201
        size = served_upstream(base, model("order_sizes"), "size")
        assert types(size["orders.amount", "openlineage:dbt/typed_sizes"]) == \
            ("openlineage", "DIRECT", "AGGREGATION", "Aggregation")
        assert types(size["orders.status", "openlineage:dbt/typed_sizes"]) == \
            ("openlineage", "DIRECT", "TRANSFORMATION", "Transformation")
