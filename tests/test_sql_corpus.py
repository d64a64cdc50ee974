"""The SQL column-lineage corpus (``tests/sql/corpus.json``, over the warehouse of ``tests/sql/warehouse.avsc``):
statements of every construct fieldgraph derives, each with its expected edges, written by hand from the rules of
:mod:`fieldgraph.sqllineage`. Checked pure, then written through the graph on both backends and read back."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fieldgraph.changes import SchemaChange, SqlChange
from fieldgraph.errors import SqlError
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.sources.sql import TableNames, platform_of
from fieldgraph.normalizers import make_dataset_urn, normalize, v1_path
from fieldgraph.sqllineage import BY_NAME_CONFIDENCE, SchemasNeeded, check, derive, parse_statements

from .conftest import WITH_MEMORY

HERE = Path(__file__).parent / "sql"
CASES: list[dict[str, Any]] = json.loads((HERE / "corpus.json").read_text())
TABLES: dict[str, str] = {r["name"]: json.dumps(r) for r in json.loads((HERE / "warehouse.avsc").read_text())}
SCHEMAS = {t: list(dict.fromkeys(v1_path(f.fieldPath) for f in normalize(text, "avro"))) for t, text in TABLES.items()}
DERIVED = [c for c in CASES if not c.get("error")]

#: statements sqlglot reads but fieldgraph does not derive faithfully: what it does instead (never a wrong edge)
UNSUPPORTED = {
    "PIVOT": ("INSERT INTO r SELECT * FROM orders PIVOT (SUM(amount) FOR status IN ('paid', 'open'))",
              "every output column unresolved, no edge"),
    "UPDATE": ("UPDATE orders SET amount = amount * 2 WHERE status = 'x'", "no lineage statement (an in-place update)"),
}


def urn(table: str, missing: bool = False) -> str:
    """Tables of the warehouse live in ``shop``; a case's missing schemas in ``elsewhere`` (nothing written there)."""
    return make_dataset_urn("hive", f"{'elsewhere' if missing else 'shop'}.{table}")


def expected(case: dict[str, Any]) -> dict[str, tuple[tuple[str, ...], bool]]:
    masked = set(case.get("masked", ()))
    return {k: (tuple(sorted(v)), k in masked) for k, v in case["edges"].items()}


def test_the_corpus_covers_what_the_issue_names() -> None:
    constructs = " ".join(c["construct"].lower() for c in CASES)
    for word in ("insert", "create table", "view", "merge", "cte", "subquery", "join", "union", "select *", "window",
                 "case", "aggregate", "mask", "struct", "explode", "unnest", "implicit unnest", "with offset",
                 "hyphenated project"):
        assert word in constructs, word
    assert len(DERIVED) >= 60 and sum(bool(c.get("schemas_missing")) for c in CASES) >= 3


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_each_statement_gives_exactly_its_edges(case: dict[str, Any]) -> None:
    if case.get("error"):
        with pytest.raises(SqlError, match=r"line \d+, column \d+"):
            parse_statements(case["sql"], case["dialect"])
        return
    (statement,) = [s for s in parse_statements(case["sql"], case["dialect"]) if s.kind != "other"]
    schemas = {t: cols for t, cols in SCHEMAS.items() if t not in case.get("schemas_missing", ())}
    lineage = derive(statement, schemas, case.get("target"))
    found = {e.key: (e.transformations, e.masking) for e in lineage.edges}
    assert found == expected(case)
    assert set(case.get("unresolved", ())) <= set(lineage.unresolved)
    by_name = {e.key for e in lineage.edges if e.by_name}
    assert bool(by_name) == (bool(case.get("by_name")) and bool(case["edges"])), by_name


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_statements_make_no_wrong_edge(name: str) -> None:
    sql, what = UNSUPPORTED[name]
    statements = [s for s in parse_statements(sql, "spark") if s.kind != "other"]
    if what.startswith("no lineage"):
        assert statements == []
        return
    lineage = derive(statements[0], SCHEMAS)
    assert lineage.edges == () and set(lineage.unresolved) == set(lineage.columns)


def _changes() -> list[Any]:
    out: list[Any] = [SchemaChange(urn(t), tuple(normalize(text, "avro")), ts=1, platform="urn:li:dataPlatform:hive")
                      for t, text in TABLES.items()]
    for case in DERIVED:
        (st,) = [s for s in parse_statements(case["sql"], case["dialect"]) if s.kind != "other"]
        missing = set(case.get("schemas_missing", ()))
        tables = tuple((t, urn(t, t in missing)) for t in st.tables)
        out.append(SqlChange(urn(st.target or case["target"]), case["id"], st.text, st.dialect, tables,
                             st.target or case["target"], ts=2, origin=case["id"]))
    return out


def test_the_corpus_through_the_graph(graph) -> None:
    """Every statement written (each its own job, and its own batch: the statements are independent, while within
    a batch a table one statement creates has the columns it gave it), read back per job: the same edges on both
    backends, placeholders for what was read by name, and the share of exact edges reported."""
    report = graph.ingest(_changes(), batch_events=1)
    assert report.refused == []
    rows = graph.query("MATCH (d:DatasetField)-[e:DataDerivedFrom]->(u:DatasetField) WHERE e.sourceFormat = 'sql' "
                       "RETURN e.source AS job, d.fieldPath AS down, u.datasetUrn AS up, u.fieldPath AS path, "
                       "u.placeholder AS placeholder, e.transformations AS ts, e.masking AS masking, "
                       "e.confidenceScore AS confidence")
    by_job: dict[str, dict[str, tuple[tuple[str, ...], bool]]] = {}
    confidence: Counter[tuple[str, bool]] = Counter()
    for r in rows:
        table = r["up"].split(",")[1].split(".", 1)[1]
        key = f"{v1_path(r['down'])} <- {table}.{v1_path(r['path'])}"
        by_job.setdefault(r["job"], {})[key] = (tuple(sorted(r["ts"])), bool(r["masking"]))
        confidence[(r["job"], r["confidence"] == BY_NAME_CONFIDENCE)] += 1
        assert bool(r["placeholder"]) == (r["confidence"] == BY_NAME_CONFIDENCE), r
    exact = total = 0
    for case in DERIVED:
        want = expected(case)
        got = by_job.get(case["id"], {})
        total += len(want)
        exact += sum(got.get(k) == v for k, v in want.items())
        assert got == want, case["id"]
        assert bool(confidence[(case["id"], True)]) == (bool(case.get("by_name")) and bool(want)), case["id"]
    print(f"\nSQL corpus on {graph.store.__class__.__name__}: {len(DERIVED)} statements, {exact}/{total} edges exact")
    assert exact == total


# --- read before the schemas: the early check, and BigQuery as SQL events ------------------------------------------


def test_no_corpus_statement_is_refused_before_its_schemas() -> None:
    """A SQL event is checked when it is read, before the graph's schemas are at hand: every statement of the corpus
    passes (sent as a SQL event, it decodes to its change), though some cannot be followed at all without the schemas
    (an unqualified column beside an UNNEST, a scalar subquery, a lateral alias), which the check lets through."""
    needs_schemas = []
    for case in DERIVED:
        (statement,) = [s for s in parse_statements(case["sql"], case["dialect"]) if s.kind != "other"]
        check(statement, case.get("target"))
        try:
            derive(statement, {}, case.get("target"))
        except SchemasNeeded:
            needs_schemas.append(case["id"])
        event = {"sql": case["sql"], "dialect": case["dialect"], "target": case.get("target"), "platform": "hive"}
        assert [type(c) for c in decode_event(event)] == [SqlChange], case["id"]
    assert {"bigquery_implicit_unnest_hyphenated_project", "bigquery_unnest_with_offset_selected",
            "bigquery_implicit_unnest_join_using_group", "scalar_subquery_select",
            "extra_lateral_column_alias"} <= set(needs_schemas)


#: the BigQuery cases whose tables all have schemas
BIGQUERY = [c for c in DERIVED if c["id"].startswith("bigquery_") and not c.get("schemas_missing")]


def bigquery_edges(graph: Any, dataset: str) -> dict[str, dict[str, tuple[tuple[str, ...], bool]]]:
    """job -> the SQL edges into ``dataset``, keyed as the corpus keys them (read through the graph's API)."""
    out: dict[str, dict[str, tuple[tuple[str, ...], bool]]] = {}
    for f in graph.fields(dataset):
        for h in graph.upstream(f.urn, depth=1).hops:
            if h.edge.get("sourceFormat") == "sql":
                table = h.dataset_urn.split(",")[1]
                key = f"{v1_path(f.field_path)} <- {table}.{v1_path(h.field_path)}"
                out.setdefault(h.edge["source"], {})[key] = (tuple(sorted(h.edge["transformations"])),
                                                             bool(h.edge["masking"]))
    return out


@WITH_MEMORY
def test_bigquery_statements_as_sql_events_resolve_against_the_graph_schemas(graph) -> None:
    """The BigQuery cases sent as SQL events (platform ``bigquery``, the dialect's): read, then derived against the
    schemas the graph holds, exactly the corpus's edges."""
    names = TableNames(platform_of("bigquery"))
    tables = {t for case in BIGQUERY for t in parse_statements(case["sql"], "bigquery")[0].tables}
    schemas = [SchemaChange(names.urn(t), tuple(normalize(TABLES[t], "avro")), ts=1,
                            platform="urn:li:dataPlatform:bigquery") for t in sorted(tables)]
    events = [{"sql": c["sql"], "dialect": "bigquery", "target": c["target"], "job": c["id"], "time": 2}
              for c in BIGQUERY]
    report = graph.ingest([*schemas, *(c for e in events for c in decode_event(e))], batch_events=1)
    assert report.refused == []
    for case in BIGQUERY:
        target = names.urn(parse_statements(case["sql"], "bigquery")[0].target or case["target"])
        assert bigquery_edges(graph, target).get(case["id"]) == expected(case), case["id"]
