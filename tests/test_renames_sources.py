"""Renames stated outside schemas: SQL DDL (``fieldgraph sql``, SQL events), ``fieldgraph rename`` and
``POST /api/v1/renames``. Each becomes a :class:`~fieldgraph.changes.RenameChange` (checked here on the changes the
sources give and the graph is handed); end to end, on the in-memory store and both backends, lineage upstream of the new name reaches
what fed the old one, across a hop marked as a rename."""

from __future__ import annotations

import getpass
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.changes import Change, RenameChange, SqlChange
from fieldgraph.errors import EventError, RenameError, SqlError
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.sources.renames import dataset_rename, decode_rename_request, field_rename
from fieldgraph.ingest.sources.sql import TableNames, sql_changes
from fieldgraph.sqllineage import SqlRename, parse_statements, rename_of

from .conftest import WITH_MEMORY, ds, lineage_event, schema_event, sf

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "renames"
HIVE = TableNames("hive", "PROD", "shop")


def renamed(text: str, dialect: str | None = None) -> SqlRename | None:
    (st,) = parse_statements(text, dialect)
    return rename_of(st)


# ---- SQL: what each form states (pure) ----


@pytest.mark.parametrize(("dialect", "text", "expected"), [
    (None, "ALTER TABLE t RENAME COLUMN a TO b", SqlRename("t", (("a", "b"),))),
    ("postgres", "ALTER TABLE IF EXISTS ONLY s.t RENAME COLUMN a TO b", SqlRename("s.t", (("a", "b"),))),
    ("postgres", "ALTER TABLE s.t RENAME a TO b", SqlRename("s.t", (("a", "b"),))),  # COLUMN is optional
    ("duckdb", "ALTER TABLE t RENAME a TO b", SqlRename("t", (("a", "b"),))),
    ("sqlite", "ALTER TABLE t RENAME a TO b", SqlRename("t", (("a", "b"),))),
    ("postgres", 'ALTER TABLE t RENAME COLUMN "Amount" TO "AmountUsd"', SqlRename("t", (("Amount", "AmountUsd"),))),
    ("snowflake", "ALTER TABLE db.s.T RENAME COLUMN customerId TO clientId",  # names keep their case
     SqlRename("db.s.t", (("customerId", "clientId"),))),
    ("postgres", "ALTER TABLE t RENAME COLUMN a TO b, ADD COLUMN c INT", SqlRename("t", (("a", "b"),))),
    ("spark", "ALTER TABLE db.t RENAME COLUMN a TO b", SqlRename("db.t", (("a", "b"),))),
    ("spark", "ALTER TABLE t RENAME COLUMN shipping.city TO town", SqlRename("t", (("shipping.city", "shipping.town"),))),
    ("databricks", "ALTER TABLE t RENAME COLUMN a TO b", SqlRename("t", (("a", "b"),))),
    ("spark", "ALTER TABLE t CHANGE COLUMN a b BIGINT", SqlRename("t", (("a", "b"),))),
    ("hive", "ALTER TABLE db.t CHANGE a b STRING COMMENT 'renamed'", SqlRename("db.t", (("a", "b"),))),
    ("mysql", "ALTER TABLE t CHANGE COLUMN a b INT", SqlRename("t", (("a", "b"),))),
    ("bigquery", "ALTER TABLE ds.t RENAME COLUMN a TO b", SqlRename("ds.t", (("a", "b"),))),
    ("bigquery", "ALTER TABLE ds.t RENAME COLUMN IF EXISTS a TO b", SqlRename("ds.t", (("a", "b"),))),
    ("bigquery", "ALTER TABLE ds.t RENAME COLUMN a TO b, RENAME COLUMN `c,d` TO e",  # sqlglot keeps it as text
     SqlRename("ds.t", (("a", "b"), ("c,d", "e")))),
    ("trino", "ALTER TABLE IF EXISTS t RENAME COLUMN IF EXISTS a TO b", SqlRename("t", (("a", "b"),))),
    ("redshift", "ALTER TABLE t RENAME COLUMN a TO b", SqlRename("t", (("a", "b"),))),
    ("oracle", "ALTER TABLE t RENAME COLUMN a TO b", SqlRename("t", (("a", "b"),))),
    ("tsql", "EXEC sp_rename '[dbo].[t].[a]', 'b', 'COLUMN'", SqlRename("dbo.t", (("a", "b"),))),
    # tables (and views): a new name with fewer parts stays where the old one was
    (None, "ALTER TABLE s.t RENAME TO u", SqlRename("s.t", (), "s.u")),
    ("spark", "ALTER TABLE db.t RENAME TO db2.u", SqlRename("db.t", (), "db2.u")),
    ("snowflake", "ALTER TABLE IF EXISTS db.s.t RENAME TO db.s.u", SqlRename("db.s.t", (), "db.s.u")),
    ("snowflake", "ALTER VIEW db.s.v RENAME TO w", SqlRename("db.s.v", (), "db.s.w")),
    ("bigquery", "ALTER TABLE ds.t RENAME TO u", SqlRename("ds.t", (), "ds.u")),
    ("postgres", "ALTER TABLE T RENAME TO U", SqlRename("t", (), "u")),
    ("mysql", "RENAME TABLE shop.t TO shop.u", SqlRename("shop.t", (), "shop.u")),
    ("tsql", "EXEC sp_rename 'dbo.t', 'u'", SqlRename("dbo.t", (), "dbo.u")),
    # no rename: the same name, other changes, other objects, several tables in one RENAME TABLE
    ("spark", "ALTER TABLE t CHANGE COLUMN a A INT COMMENT 'x'", None),
    ("mysql", "ALTER TABLE t MODIFY COLUMN a BIGINT", None),
    ("postgres", "ALTER TABLE t ALTER COLUMN a TYPE BIGINT", None),
    ("postgres", "ALTER TABLE t ADD COLUMN c INT", None),
    ("postgres", "ALTER TABLE t RENAME CONSTRAINT c TO d", None),
    ("postgres", "ALTER INDEX i RENAME TO j", None),
    ("postgres", "ALTER SCHEMA s RENAME TO r", None),
    ("mysql", "RENAME TABLE t TO u, v TO w", None),
    ("spark", "INSERT INTO t SELECT a FROM u", None),
    ("spark", "DROP TABLE t", None),
])
def test_each_sql_form_states_its_rename(dialect: str | None, text: str, expected: SqlRename | None) -> None:
    assert renamed(text, dialect) == expected


def test_a_rename_statement_has_no_lineage() -> None:
    (st,) = parse_statements("ALTER TABLE t RENAME COLUMN a TO b")
    assert st.kind == "other" and st.target is None  # the lineage readers skip it as before


# ---- SQL: the changes (fieldgraph sql, SQL events) ----


def test_sql_changes_give_a_rename_change_per_statement_that_renames() -> None:
    text = """
        ALTER TABLE orders RENAME COLUMN amount TO amount_usd;
        INSERT INTO mart.big SELECT order_id, amount_usd FROM orders WHERE amount_usd > 100;
        ALTER TABLE mart.daily CHANGE COLUMN revenue gross DOUBLE;
        CREATE TABLE x (a INT);
        ALTER TABLE mart.daily RENAME TO revenue_daily;
    """
    changes = sql_changes(text, dialect="spark", names=HIVE, job="nightly", ts=42, origin="f.sql")
    assert [type(c) for c in changes] == [RenameChange, SqlChange, RenameChange, RenameChange]
    col, _, change, table = changes
    assert isinstance(col, RenameChange) and isinstance(change, RenameChange) and isinstance(table, RenameChange)
    orders, daily = ds("shop.orders"), ds("mart.daily")
    assert col == RenameChange(orders, ((field_urn(orders, "amount"), field_urn(orders, "amount_usd")),), ts=42,
                               source="sql", by="nightly", note=col.note, origin="f.sql")
    assert col.note == "ALTER TABLE orders RENAME COLUMN amount TO amount_usd"
    (commented,) = sql_changes("-- why\nALTER TABLE t RENAME TO u", dialect=None, names=HIVE)
    assert isinstance(commented, RenameChange) and commented.note == "ALTER TABLE t RENAME TO u"
    assert change.renames == ((field_urn(daily, "revenue"), field_urn(daily, "gross")),)
    assert (table.dataset, table.from_dataset, table.renames) == (ds("mart.revenue_daily"), daily, ())
    assert table.source == "sql" and [c.ts for c in changes] == [42, 42, 43, 44]  # the renames in their order


def test_a_file_of_renames_only_is_not_an_error_but_one_of_neither_still_is() -> None:
    assert len(sql_changes("ALTER TABLE t RENAME TO u", dialect=None, names=HIVE)) == 1
    with pytest.raises(SqlError, match="renames a column or a table"):
        sql_changes("CREATE TABLE t (a INT); DROP TABLE u", dialect=None, names=HIVE)


def test_a_sql_event_renames_at_its_time_on_its_platform() -> None:
    event = {"sql": "ALTER TABLE sales.orders RENAME COLUMN amount TO total; ALTER TABLE sales.orders RENAME TO "
                    "sales.orders_v2", "dialect": "snowflake", "platform": "snowflake", "env": "DEV",
             "job": "migrations", "time": "2026-01-02T00:00:00Z"}
    col, table = decode_event(event, "events.jsonl:3")
    orders = "urn:li:dataset:(urn:li:dataPlatform:snowflake,sales.orders,DEV)"
    assert isinstance(col, RenameChange) and isinstance(table, RenameChange)
    assert col.renames == ((field_urn(orders, "amount"), field_urn(orders, "total")),)
    assert (col.ts, table.ts) == (1767312000000, 1767312000001)  # the second rename just after the first
    assert col.origin == "events.jsonl:3" and col.by == "migrations"
    assert table.from_dataset == orders and table.dataset == orders.replace("sales.orders,", "sales.orders_v2,")


def test_a_script_reads_the_names_its_renames_gave() -> None:
    """SQL after a rename in the same batch reads the new names (the schemas still list the old ones)."""
    from fieldgraph.graph.sql import Derived, derive_each
    from fieldgraph.ingest.sources.sql import sql_changes as changes_of

    schema = decode_event(schema_event(ds("shop.orders"), ["order_id", "amount", "ship.city"], 1))
    text = """ALTER TABLE orders RENAME COLUMN amount TO amount_usd;
              ALTER TABLE orders RENAME COLUMN ship TO shipping;
              INSERT INTO mart.big SELECT o.order_id, o.amount_usd, o.shipping.city FROM orders o;
              ALTER TABLE orders RENAME TO orders_v2;
              INSERT INTO mart.all_orders SELECT * FROM orders_v2"""
    derived = [d for d in derive_each([*schema, *changes_of(text, dialect="spark", names=HIVE)], {})
               if isinstance(d, Derived)]
    assert [list(d.lineage.columns) for d in derived] == [["order_id", "amount_usd", "city"],
                                                          ["order_id", "amount_usd", "shipping"]]
    assert not any(d.lineage.unresolved for d in derived)


def test_a_sql_rename_spells_its_columns_as_the_schema_does() -> None:
    """SQL names are case-insensitive: ``RENAME COLUMN customerid`` renames the schema's ``customerId``."""
    from fieldgraph.graph.sql import derive_sql

    orders = ds("shop.orders")
    schema = decode_event(schema_event(orders, ["customerId", "Amount", "amount"], 1))
    text = "ALTER TABLE orders RENAME COLUMN customerid TO client_id; ALTER TABLE orders RENAME COLUMN AMOUNT TO x"
    changes, _ = derive_sql([*schema, *sql_changes(text, dialect="spark", names=HIVE)], {})
    first, second = (c for c in changes if isinstance(c, RenameChange))
    assert first.renames == ((field_urn(orders, "customerId"), field_urn(orders, "client_id")),)
    assert second.renames == ((field_urn(orders, "AMOUNT"), field_urn(orders, "x")),)  # two match: as written


# ---- explicit renames: the values and what cannot be one ----

A, B = ds("shop.orders"), ds("shop.orders_v2")


def test_explicit_renames_of_a_field_and_of_a_dataset() -> None:
    c = field_rename(sf(A, "amount"), field_urn(A, "amount_usd"), ts=7, source="cli", by="ana", note="dollars")
    assert c == RenameChange(A, ((field_urn(A, "amount"), field_urn(A, "amount_usd")),), ts=7, source="cli",
                             by="ana", note="dollars")
    d = dataset_rename(A, B, ts=8, source="api", by="api")
    assert (d.dataset, d.from_dataset, d.renames, d.source) == (B, A, (), "api")


@pytest.mark.parametrize(("old", "new", "says"), [
    ("amount", field_urn(A, "x"), "old 'amount' is not a field URN"),
    (A, field_urn(A, "x"), "is not a field URN"),
    (field_urn(A, "a"), field_urn(B, "b"), "are fields of two datasets"),
    (field_urn(A, "a"), sf(A, "a"), "a rename needs a new name"),
    (field_urn(A, "[version=2.0].[type=long].a"), field_urn(A, "a"), "a rename needs a new name"),
])
def test_a_field_rename_that_cannot_be_one_names_the_input(old: str, new: str, says: str) -> None:
    with pytest.raises(RenameError, match=says.replace("(", r"\(").replace("[", r"\[")):
        field_rename(old, new, ts=0, source="cli")


@pytest.mark.parametrize(("body", "says"), [
    ([], "a rename is a JSON object"),
    ({"old": field_urn(A, "a")}, "new missing"),
    ({}, "a rename needs old and new"),
    ({"old": field_urn(A, "a"), "new": field_urn(A, "b"), "oldDataset": A}, "either old and new"),
    ({"oldDataset": A, "newDataset": A}, "a rename needs a new name"),
    ({"oldDataset": A, "newDataset": "shop.orders"}, "newDataset 'shop.orders' is not a dataset URN"),
    ({"old": field_urn(A, "a"), "new": field_urn(A, "b"), "by": "me"}, "unknown keys ['by']"),
    ({"old": field_urn(A, "a"), "new": 3}, "new must be a string"),
    ({"old": field_urn(A, "a"), "new": field_urn(A, "b"), "at": "soon"}, "'soon' is not a time"),
])
def test_a_rename_request_that_cannot_be_one_says_why(body: Any, says: str) -> None:
    with pytest.raises(RenameError, match=says.replace("[", r"\[").replace("(", r"\(")) as err:
        decode_rename_request(body, now=1)
    assert not isinstance(err.value, EventError)  # 400, not a rejected event


def test_a_rename_request_decodes() -> None:
    c = decode_rename_request({"old": field_urn(A, "a"), "new": field_urn(A, "b"), "note": "why"}, now=5, by="api")
    assert (c.ts, c.source, c.by, c.note) == (5, "api", "api", "why")
    c = decode_rename_request({"oldDataset": A, "newDataset": B, "at": "1970-01-01T00:00:01Z"}, now=5)
    assert (c.dataset, c.from_dataset, c.ts) == (B, A, 1000)


# ---- the CLI and the HTTP call hand the graph the rename ----


@pytest.fixture
def handed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Change]]:
    """The changes the commands hand an in-memory graph (``open_graph`` of ``fieldgraph sql`` and ``rename``)."""
    from fieldgraph.graph import LineageGraph, MemoryStore

    seen: list[Change] = []
    g = LineageGraph(MemoryStore())
    ingest = g.ingest

    def spy(changes: Any, **kw: Any) -> Any:
        changes = list(changes)
        seen.extend(changes)
        return ingest(changes, **kw)

    monkeypatch.setattr(g, "ingest", spy)

    @contextmanager
    def opened(*_: Any, **__: Any) -> Iterator[Any]:
        yield g

    for module in ("sql", "rename"):
        monkeypatch.setattr(f"fieldgraph.ingest.cli.{module}.open_graph", opened)
    yield seen


def test_fieldgraph_sql_writes_the_renames_of_a_mixed_file(handed: list[Change], tmp_path: Path) -> None:
    script = tmp_path / "s.sql"
    script.write_text("ALTER TABLE orders RENAME COLUMN amount TO amount_usd;\n"
                      "INSERT INTO mart.big SELECT order_id FROM orders;\nALTER TABLE orders RENAME TO orders_v2;\n")
    before = int(time.time() * 1000)
    res = CliRunner().invoke(app, ["sql", str(script), "--dialect", "spark", "--database", "shop", "--json"])
    assert res.exit_code == 0, res.output
    renames = [c for c in handed if isinstance(c, RenameChange)]
    assert [type(c) for c in handed] == [RenameChange, SqlChange, RenameChange]
    assert all(before <= c.ts <= time.time() * 1000 and c.source == "sql" and c.origin == str(script)
               for c in renames)
    assert [c.ts - renames[0].ts for c in renames] == [0, 1]  # in their order
    out = json.loads(res.stdout)
    assert out["written"] is True and len(out["statements"]) == 1
    assert [(r["dataset"], r["fromDataset"], r["renames"]) for r in out["renames"]] == [
        (A, None, [{"old": field_urn(A, "amount"), "new": field_urn(A, "amount_usd")}]), (B, A, [])]
    res = CliRunner().invoke(app, ["sql", str(script), "--dialect", "spark", "--database", "shop"])
    assert "renamed shop.orders.amount -> shop.orders.amount_usd" in res.stdout
    assert "renamed hive:shop.orders -> hive:shop.orders_v2" in res.stdout and "wrote 2 renames" in res.stdout


def test_fieldgraph_sql_keeps_the_order_of_renames_across_files(handed: list[Change], tmp_path: Path) -> None:
    first, second = tmp_path / "1.sql", tmp_path / "2.sql"
    first.write_text("ALTER TABLE t RENAME COLUMN a TO b")
    second.write_text("ALTER TABLE t RENAME COLUMN b TO c")
    assert CliRunner().invoke(app, ["sql", str(first), str(second)]).exit_code == 0
    a_b, b_c = handed
    assert a_b.ts + 1 == b_c.ts and a_b.origin == str(first) and b_c.origin == str(second)


def test_fieldgraph_sql_dry_run_shows_renames_and_writes_nothing(handed: list[Change]) -> None:
    res = CliRunner().invoke(app, ["sql", str(EXAMPLES / "shop_renames.sql"), "--dialect", "spark", "--database",
                                   "shop", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert not handed and "would write 3 renames" in res.stdout


def test_fieldgraph_rename_a_field_and_a_dataset(handed: list[Change]) -> None:
    res = CliRunner().invoke(app, ["rename", sf(A, "amount"), sf(A, "amount_usd"), "--at", "2026-11-01",
                                   "--by", "ana", "--note", "now in dollars", "--json"])
    assert res.exit_code == 0, res.output
    (c,) = handed
    assert c == RenameChange(A, ((field_urn(A, "amount"), field_urn(A, "amount_usd")),), ts=1793491200000,
                             source="cli", by="ana", note="now in dollars", origin="fieldgraph rename")
    assert json.loads(res.stdout) == {"dataset": A, "fromDataset": None, "renames": [
        {"old": field_urn(A, "amount"), "new": field_urn(A, "amount_usd")}], "time": 1793491200000,
        "source": "cli", "by": "ana", "note": "now in dollars"}
    before = int(time.time() * 1000)
    res = CliRunner().invoke(app, ["rename", "--dataset", A, B])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "renamed hive:shop.orders -> hive:shop.orders_v2"
    d = handed[-1]
    assert isinstance(d, RenameChange) and (d.dataset, d.from_dataset, d.source) == (B, A, "cli")
    assert d.by == getpass.getuser() and d.ts >= before  # the OS user, now


@pytest.mark.parametrize(("args", "says"), [
    (["amount", "amount_usd"], "OLD 'amount' is not a field URN"),
    ([A, B], "rename a dataset with --dataset"),
    ([sf(A, "a"), sf(B, "a")], "are fields of two datasets"),
    ([sf(A, "a"), sf(A, "a")], "a rename needs a new name"),
    (["--dataset", sf(A, "a"), B], "OLD 'urn:li:schemaField"),
    ([sf(A, "a"), sf(A, "b"), "--at", "someday"], "--at 'someday'"),
])
def test_fieldgraph_rename_rejects_what_cannot_be_a_rename(handed: list[Change], args: list[str], says: str) -> None:
    res = CliRunner().invoke(app, ["rename", *args])
    assert res.exit_code == EXIT_BAD_INPUT and says in " ".join(res.stderr.split()), res.output
    assert not handed


@pytest.mark.integration
@WITH_MEMORY
def test_post_renames_writes_the_rename_with_the_api_as_its_source(graph: Any, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from fieldgraph.graph.write import Writer

    from .test_service import AUTH, TOKEN, served

    seen: list[Change] = []
    write_each = Writer.write_each

    def spy(self: Writer, events: Any) -> Any:
        seen.extend(c for e in events for c in e)
        return write_each(self, events)

    monkeypatch.setattr(Writer, "write_each", spy)
    from fieldgraph.ingest.config import ServeConfig

    config = ServeConfig(token=TOKEN, rate_limit=0, rejects=tmp_path / "rejects.jsonl")
    with served(graph, config) as s:
        body = {"old": sf(A, "amount"), "new": sf(A, "amount_usd"), "at": 1000, "note": "dollars"}
        assert s.http.post("/api/v1/renames", json=body).status_code == 401  # the write token
        r = s.http.post("/api/v1/renames", json=body, headers=AUTH)
        assert r.status_code == 201, r.text
        assert r.json()["rename"] == {"dataset": A, "fromDataset": None, "renames": [
            {"old": field_urn(A, "amount"), "new": field_urn(A, "amount_usd")}], "time": 1000, "source": "api",
            "by": "api", "note": "dollars"}
        r = s.http.post("/api/v1/renames", json={"oldDataset": A, "newDataset": B}, headers=AUTH)
        assert r.status_code == 201 and r.json()["rename"]["fromDataset"] == A
        for bad, says in (({"old": "amount", "new": sf(A, "b")}, "old 'amount' is not a field URN"),
                          ({"old": sf(A, "a"), "new": sf(B, "a")}, "fields of two datasets")):
            r = s.http.post("/api/v1/renames", json=bad, headers=AUTH)
            assert r.status_code == 400 and says in r.json()["error"] and r.json()["kind"] == "RenameError"
        assert "/api/v1/renames" in s.http.get("/openapi.json").json()["paths"]
    renames = [c for c in seen if isinstance(c, RenameChange)]
    assert [(c.dataset, c.from_dataset, c.source, c.by) for c in renames] == [(A, None, "api", "api"),
                                                                             (B, A, "api", "api")]
    assert renames[0].ts == 1000 and renames[1].ts > 1000  # now
    with served(graph, config) as s:  # and the graph follows it
        _fed(graph)
        body = {"old": sf(DAILY, "revenue"), "new": sf(DAILY, "gross"), "at": T1}
        assert s.http.post("/api/v1/renames", json=body, headers=AUTH).status_code == 201
        _reaches_across_a_rename(graph, field_urn(DAILY, "gross"), field_urn(DAILY, "revenue"))


# ---- end to end: lineage upstream of the new name reaches what fed the old one ----

ORDERS, DAILY = ds("shop.orders"), ds("mart.daily")
T0, T1 = 1_000, 2_000


def _fed(g: Any) -> None:
    """mart.daily.revenue <- shop.orders.amount, from T0."""
    for e in (schema_event(ORDERS, ["order_id", "amount"], T0), schema_event(DAILY, ["day", "revenue"], T0),
              lineage_event(DAILY, [(sf(DAILY, "revenue"), [sf(ORDERS, "amount")])], T0)):
        g.ingest(decode_event(e))


def _reaches_across_a_rename(g: Any, new: str, old: str) -> None:
    res = g.upstream(new)
    hops = {(h.from_urn, h.urn): h for h in res.hops}
    across = hops.get((new, old))
    assert across is not None and across.rename, [(h.from_urn, h.urn, h.edge) for h in res.hops]
    assert field_urn(ORDERS, "amount") in {h.urn for h in res.hops if not h.rename}


@pytest.mark.integration
@WITH_MEMORY
def test_a_sql_column_rename_keeps_the_lineage(graph: Any) -> None:
    _fed(graph)
    graph.ingest(sql_changes("ALTER TABLE mart.daily RENAME COLUMN revenue TO gross", dialect="spark",
                             names=TableNames("hive"), ts=T1))
    _reaches_across_a_rename(graph, field_urn(DAILY, "gross"), field_urn(DAILY, "revenue"))


@pytest.mark.integration
@WITH_MEMORY
def test_a_script_that_renames_then_reads_the_new_name(graph: Any) -> None:
    _fed(graph)
    graph.ingest(sql_changes("ALTER TABLE mart.daily RENAME COLUMN revenue TO gross; INSERT INTO mart.report "
                             "SELECT day, gross FROM mart.daily", dialect="spark", names=TableNames("hive"), ts=T1))
    report = ds("mart.report")
    res = graph.upstream(field_urn(report, "gross"))
    assert [(h.urn, h.rename) for h in res.hops] == [(field_urn(DAILY, "gross"), False),
                                                     (field_urn(DAILY, "revenue"), True),
                                                     (field_urn(ORDERS, "amount"), False)]


@pytest.mark.integration
@WITH_MEMORY
def test_renames_a_script_chains_are_followed(graph: Any) -> None:
    """A script's renames keep its order (a to b, then b to c, at the script's one time): the walk follows both."""
    _fed(graph)
    graph.ingest(sql_changes("ALTER TABLE mart.daily RENAME COLUMN revenue TO gross; ALTER TABLE mart.daily RENAME "
                             "COLUMN gross TO gross_usd", dialect="spark", names=TableNames("hive"), ts=T1))
    res = graph.upstream(field_urn(DAILY, "gross_usd"))
    assert [(h.urn, h.rename) for h in res.hops] == [(field_urn(DAILY, "gross"), True),
                                                     (field_urn(DAILY, "revenue"), True),
                                                     (field_urn(ORDERS, "amount"), False)]


@pytest.mark.integration
@WITH_MEMORY
def test_a_sql_table_rename_keeps_the_lineage(graph: Any) -> None:
    _fed(graph)
    graph.ingest(decode_event({"sql": "ALTER TABLE mart.daily RENAME TO mart.daily_v2", "dialect": "spark",
                               "time": T1}))
    new = ds("mart.daily_v2")
    _reaches_across_a_rename(graph, field_urn(new, "revenue"), field_urn(DAILY, "revenue"))


@pytest.mark.integration
@WITH_MEMORY
def test_an_explicit_rename_keeps_the_lineage(graph: Any) -> None:
    _fed(graph)
    graph.ingest([field_rename(sf(DAILY, "revenue"), sf(DAILY, "gross"), ts=T1, source="cli", by="ana")])
    _reaches_across_a_rename(graph, field_urn(DAILY, "gross"), field_urn(DAILY, "revenue"))
    (hop,) = [h for h in graph.upstream(field_urn(DAILY, "gross")).hops if h.rename]
    assert hop.edge["source"] == "cli" and hop.edge.get("by") == "ana" and hop.edge["validFrom"] == T1


@pytest.mark.integration
@WITH_MEMORY
def test_an_explicit_dataset_rename_keeps_the_lineage(graph: Any) -> None:
    _fed(graph)
    new = ds("mart.daily_v2")
    graph.ingest([dataset_rename(DAILY, new, ts=T1, source="api", by="api", note="v2")])
    _reaches_across_a_rename(graph, field_urn(new, "revenue"), field_urn(DAILY, "revenue"))
    down = graph.downstream(field_urn(ORDERS, "amount"))
    assert {(h.urn, h.rename) for h in down.hops} == {(field_urn(DAILY, "revenue"), False),
                                                      (field_urn(new, "revenue"), True)}


@pytest.mark.integration
def test_the_commands_write_renames_the_graph_follows(graph: Any, tmp_path: Path) -> None:
    """``fieldgraph sql`` and ``fieldgraph rename`` on a real backend (``--graph``), then ``lineage upstream``."""
    _fed(graph)
    run = CliRunner().invoke
    script = tmp_path / "r.sql"
    script.write_text("ALTER TABLE mart.daily RENAME COLUMN revenue TO gross;")
    assert run(app, ["sql", str(script), "--dialect", "spark", "--graph", graph.uri]).exit_code == 0
    _reaches_across_a_rename(graph, field_urn(DAILY, "gross"), field_urn(DAILY, "revenue"))
    res = run(app, ["rename", sf(DAILY, "gross"), sf(DAILY, "gross_usd"), "--graph", graph.uri])
    assert res.exit_code == 0, res.output
    up = run(app, ["lineage", "upstream", sf(DAILY, "gross_usd"), "--graph", graph.uri, "--json"])
    assert up.exit_code == 0, up.output
    hops = json.loads(up.stdout)["hops"]
    assert [h["edge"]["relation"] for h in hops if h["edge"].get("relation") == "RenamedFrom"] == ["RenamedFrom"] * 2
    assert field_urn(ORDERS, "amount") in {h["urn"] for h in hops}
