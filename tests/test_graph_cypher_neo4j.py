"""Every statement the Neo4j backend can send compiles on the real Neo4j 5.26 (``EXPLAIN``), with no
deprecation or other warning of its own, the depth variants included.

The real server reports what Neo4j's linter used to be run for here (syntax errors, unbound variables,
deprecated features), so the linter is gone. Warnings that only say the database is empty or a parameter was
not sent (labels, types or properties not yet in the store; EXPLAIN gets no parameters) are not findings.
"""

from __future__ import annotations

import pytest

from fieldgraph.graph.cypher import neo4j_statements

pytestmark = pytest.mark.integration

# 01N50/01N51/01N52: label, relationship type, property key not in the database; 01N60: parameter missing
EMPTY_DATABASE = {"01N50", "01N51", "01N52", "01N60"}


def findings(neo4j_server, statements: list[tuple[str, str]]) -> dict[str, list[str]]:
    """For each named statement, the server's errors and warnings (an empty list: it compiles clean)."""
    import neo4j

    out: dict[str, list[str]] = {}
    with neo4j.GraphDatabase.driver(neo4j_server.bolt, auth=(neo4j_server.user, neo4j_server.password)) as driver:
        with driver.session() as session:
            for name, stmt in statements:
                try:
                    summary = session.run(f"EXPLAIN {stmt}").consume()
                except neo4j.exceptions.Neo4jError as exc:
                    out[name] = [f"{exc.code}: {exc.message}"]
                    continue
                out[name] = [f"{s.gql_status}: {s.status_description}" for s in summary.gql_status_objects
                             if s.raw_severity == "WARNING" and s.gql_status not in EMPTY_DATABASE]
    return out


def test_the_check_reports_real_errors(neo4j_server) -> None:
    out = findings(neo4j_server, [
        ("broken", "MATCH (f:DatasetField {urn: $urn}) RETRUN f"),
        ("unbound", "MATCH (f:DatasetField) RETURN g"),
        ("deprecated", "MATCH (f:DatasetField {urn: $urn}) RETURN id(f) AS id"),
        ("fine", "MATCH (f:DatasetField {urn: $urn}) RETURN f.urn AS urn"),
    ])
    assert "RETRUN" in out["broken"][0]
    assert "`g` not defined" in out["unbound"][0]
    assert any("deprecated" in f for f in out["deprecated"])
    assert out["fine"] == []


def test_every_neo4j_statement_compiles_clean(neo4j_server) -> None:
    statements = neo4j_statements()
    assert len(statements) > 20
    names = {n for n, _ in statements}
    assert {"upsert_fields", "merge_field_edges", "read_state", "schema_neo4j[0]", "clear_neo4j",
            "upstream(depth=3)", "upstream(unbounded)"} <= names
    problems = {n: f for n, f in findings(neo4j_server, statements).items() if f}
    assert problems == {}
