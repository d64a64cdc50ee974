"""SQL events: statements whose field lineage the graph derives (:mod:`fieldgraph.sqllineage`).

The event form (files, Kafka, ``POST /api/v1/events``)::

    {"sql": "INSERT INTO mart.daily SELECT ...; ...", "dialect": "spark", "platform": "hive",
     "database": "shop", "env": "PROD", "target": null, "job": "nightly_mart", "run": "2026-11-25",
     "time": "2026-11-25T02:00:00Z"}

Only ``sql`` is required. Each statement that writes a table (INSERT, CREATE TABLE/VIEW AS, MERGE)
becomes one :class:`~fieldgraph.changes.SqlChange`; a SELECT needs ``target`` (the table that holds its
results: a name or a dataset URN); a statement that renames a column or a table (``ALTER TABLE t RENAME COLUMN
a TO b``, ``ALTER TABLE t RENAME TO u``, Hive's ``CHANGE COLUMN a b type``: :func:`~fieldgraph.sqllineage.rename_of`)
becomes a :class:`~fieldgraph.changes.RenameChange` (``source`` sql, ``by`` the job, ``note`` the statement; the
text's k-th rename is stamped k ms after ``time``, so the renames of a script keep their order: ``a`` to ``b``
then ``b`` to ``c`` is a chain);
other statements (DDL, SET, USE) are skipped. Table names become
dataset URNs on ``platform`` (default: the dialect, else ``sql``), an unqualified name prefixed with
``database``. ``job`` names the job the edges are kept under (default: one per statement text, so
re-running a statement refreshes its edges instead of adding a job); ``time`` (ms or ISO 8601, default 0)
stamps them. A statement sqlglot cannot parse is rejected with its line, column and message; so is one that no
schema could fix (:func:`~fieldgraph.sqllineage.check`), when the event is read. What only the tables' schemas can
follow (an unqualified column beside a BigQuery ``UNNEST``, say) waits for them: the graph derives it.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from fieldgraph.changes import Change, RenameChange, SqlChange
from fieldgraph.errors import EventError
from fieldgraph.ingest.times import epoch_ms
from fieldgraph.normalizers.urns import make_dataset_urn, make_field_urn
from fieldgraph.sqllineage import SqlError, SqlRename, Statement, check, parse_statements, rename_of

SQL_KEYS = frozenset({"sql", "dialect", "platform", "database", "env", "target", "job", "run", "time"})
#: sqlglot dialect -> DataHub platform, where the names differ
_PLATFORMS = {"tsql": "mssql", "postgres": "postgres", "spark": "hive", "spark2": "hive", "databricks": "databricks",
              "bigquery": "bigquery", "snowflake": "snowflake", "redshift": "redshift", "hive": "hive",
              "trino": "trino", "presto": "presto", "duckdb": "duckdb", "mysql": "mysql", "oracle": "oracle",
              "athena": "athena", "clickhouse": "clickhouse", "teradata": "teradata", "sqlite": "sqlite"}


def is_sql_event(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("sql"), str) and "entityType" not in obj and "eventTime" not in obj


def platform_of(dialect: str | None) -> str:
    return _PLATFORMS.get((dialect or "").lower(), (dialect or "sql").lower())


class TableNames:
    """SQL table names -> dataset URNs: ``platform``, ``env``, and ``database`` before unqualified names."""

    def __init__(self, platform: str, env: str = "PROD", database: str | None = None) -> None:
        self.platform, self.env, self.database = platform, env, database

    def urn(self, name: str) -> str:
        if name.startswith("urn:li:dataset:"):
            return name
        if self.database and "." not in name:
            name = f"{self.database}.{name}"
        return make_dataset_urn(self.platform, name, self.env)


def sql_changes(text: str, *, dialect: str | None, names: TableNames, job: str | None = None, target: str | None = None,
                run: str | None = None, ts: int = 0, origin: str = "") -> list[Change]:
    """The SQL changes of a text of statements (see the module), or :class:`SqlError`."""
    statements = parse_statements(text, dialect)
    out: list[Change] = []
    renames = 0  # the text's k-th rename is stamped k ms after ts
    for st in statements:
        if st.kind == "other":
            renamed = rename_of(st)
            if renamed is not None:
                note = st.parsed().sql(dialect=st.dialect, comments=False)  # the statement, without its comments
                for c in rename_changes(renamed, names, ts=ts, origin=origin, by=job, note=note):
                    out.append(replace(c, ts=ts + renames))
                    renames += 1
            continue
        if st.kind == "select" and not target:
            if len(statements) == 1:
                raise SqlError("a SELECT writes no table: give the target that holds its results")
            continue
        out.append(sql_change(st, names, job=job, target=None if st.target else target, run=run, ts=ts, origin=origin))
    if not out:
        raise SqlError("no statement writes a table (INSERT, CREATE TABLE/VIEW AS, MERGE, or a SELECT with a target) "
                       "or renames a column or a table (ALTER TABLE ... RENAME)")
    return out


def rename_changes(r: SqlRename, names: TableNames, *, ts: int = 0, origin: str = "", by: str | None = None,
                   note: str | None = None) -> list[Change]:
    """The changes of a statement's rename: its columns' (field references by their dotted paths, which the graph
    resolves against the table's schema), then the table's (``dataset`` the new name, ``from_dataset`` the old)."""
    old = names.urn(r.table)
    out: list[Change] = []
    if r.columns:
        renames = tuple((make_field_urn(old, a), make_field_urn(old, b)) for a, b in r.columns)
        out.append(RenameChange(old, renames, ts=ts, source="sql", by=by, note=note, origin=origin))
    if r.new_table is not None:
        out.append(RenameChange(names.urn(r.new_table), from_dataset=old, ts=ts, source="sql", by=by, note=note,
                                origin=origin))
    return out


def sql_change(st: Statement, names: TableNames, *, job: str | None = None, target: str | None = None,
               run: str | None = None, ts: int = 0, origin: str = "", query: str | None = None) -> SqlChange:
    """One statement's change; ``target`` (a name or URN) for a SELECT. What no schema could let through is refused
    here (:func:`~fieldgraph.sqllineage.check`), so such an event is rejected when it is read; the rest waits for the
    graph's schemas."""
    check(st, target or None)
    dataset = names.urn(st.target or target or "")
    tables = tuple((key, names.urn(key)) for key in st.tables)
    key = st.target or (target if target and not target.startswith("urn:") else "")
    return SqlChange(dataset, job or statement_job(st.text), st.text, st.dialect, tables, key, run, query, ts, origin,
                     parsed=st)


def statement_job(text: str) -> str:
    """The job of a statement sent without one: its text's digest (one job per distinct statement)."""
    return "sql:" + hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:16]


def decode_sql_event(obj: dict[str, Any], origin: str = "") -> list[Change]:
    unknown = sorted(set(obj) - SQL_KEYS)
    if unknown:
        raise EventError(f"unknown keys {unknown} in a SQL event (expected {sorted(SQL_KEYS)})")
    for key in SQL_KEYS - {"time"}:
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise EventError(f"{key} must be a string, got {type(obj[key]).__name__}", where=key)
    dialect = obj.get("dialect") or None
    names = TableNames(obj.get("platform") or platform_of(dialect), obj.get("env") or "PROD", obj.get("database"))
    try:
        return sql_changes(obj["sql"], dialect=dialect, names=names, job=obj.get("job"), target=obj.get("target"),
                           run=obj.get("run"), ts=0 if obj.get("time") is None else epoch_ms(obj["time"], "time"),
                           origin=origin)
    except SqlError as exc:
        raise EventError(str(exc), where="sql") from exc
