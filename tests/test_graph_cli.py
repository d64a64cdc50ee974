"""The graph commands of the CLI, on both real backends (``--graph`` an embedded FalkorDB or a bolt:// Neo4j)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from fieldgraph.ingest.cli import app
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT, EXIT_NOT_FOUND, EXIT_UNAVAILABLE

from .conftest import EXAMPLES, ds, schema_event, sf

pytestmark = pytest.mark.integration

REPORT_TOTAL = sf(ds("sales.revenue_report", "tableau"), "total_revenue")


@pytest.fixture
def cli(graph, monkeypatch):
    """Run fieldgraph against the test's empty graph, on either backend."""
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()

    def run(*args: str, code: int = 0):
        res = runner.invoke(app, list(args))
        assert res.exit_code == code, (res.exit_code, res.output, res.stderr if res.stderr_bytes else "")
        return res

    yield run
    run("query", "MATCH (n) DETACH DELETE n", "--write")


def test_ingest_lineage_impact_stats_query(cli, tmp_path) -> None:
    res = cli("ingest", str(EXAMPLES), "--json", "--rejects", str(tmp_path / "rejects.jsonl"))
    summary = json.loads(res.stdout)
    assert summary["events"] == 7 and summary["rejected"] == 0 and summary["graph"]["datasets"] == 4
    assert summary["ambiguousReferences"][0]["reference"] == "/restaurant"
    assert not (tmp_path / "rejects.jsonl").exists()

    up = json.loads(cli("lineage", "upstream", REPORT_TOTAL, "--json").stdout)
    assert {h["depth"] for h in up["hops"]} == {1, 2, 3} and up["partial"] is False
    one = json.loads(cli("lineage", "upstream", REPORT_TOTAL, "--depth", "1", "--json").stdout)
    assert {h["fieldPath"] for h in one["hops"]} == {"revenue", "order_day"} and one["partial"] is True
    table = cli("lineage", "upstream", REPORT_TOTAL).stdout
    assert "8 edges" in table and "BLACKBOX" in table and "Identity" in table

    kafka_price = sf(ds("demo.orders", "kafka"), "/items/price")
    down = json.loads(cli("lineage", "downstream", kafka_price, "--json").stdout)
    assert down["hops"][-1]["urn"].endswith("total_revenue)") and down["partial"] is False
    imp = json.loads(cli("impact", ds("demo.orders", "kafka"), "--json").stdout)
    assert len(imp["datasets"]) == 3
    stats = json.loads(cli("stats", "--json").stdout)
    assert stats["dataDerivedFromEdges"] == 14 and stats["ambiguousReferences"] == 1
    rows = json.loads(cli("query", "MATCH (d:Dataset {urn: $u}) RETURN d.schemaVersion AS v",
                          "-p", f"u={ds('/demo/fact_orders', 'hdfs')}", "--json").stdout)
    assert rows == [{"v": 2}]
    assert "/restaurant" in cli("lineage", "unresolved", "--ambiguous").stdout
    assert "kafka:demo.orders" in cli("lineage", "datasets").stdout
    path = cli("lineage", "path", REPORT_TOTAL, sf(ds("demo.orders", "kafka"), "/items/price")).stdout
    assert path.count("└─") == 3


def test_bad_events_are_reported_with_file_and_line_and_the_rest_goes_in(cli, tmp_path) -> None:
    good = json.dumps(schema_event(ds("db.a"), ["x"], 1))
    (tmp_path / "events.jsonl").write_text(good + "\n{broken\n" + json.dumps({"entityType": "dataset"}) + "\n")
    shutil.copy(EXAMPLES / "05_report_schema.jsonl", tmp_path / "more.jsonl")
    rejects = tmp_path / "out" / "rejects.jsonl"
    res = cli("ingest", str(tmp_path), "--rejects", str(rejects), code=EXIT_BAD_INPUT)  # and the rest written
    assert "events.jsonl:2" in res.stderr and "events.jsonl:3" in res.stderr and "changeType" in res.stderr
    lines = [json.loads(x) for x in rejects.read_text().splitlines()]
    assert [(r["line"], r["file"].endswith("events.jsonl")) for r in lines] == [(2, True), (3, True)]
    assert json.loads(cli("stats", "--json").stdout)["datasets"] == 2


def test_clear_errors(cli, tmp_path) -> None:
    res = cli("ingest", str(tmp_path / "missing.json"), code=EXIT_BAD_INPUT)
    assert "missing.json: no such file" in res.stderr
    res = cli("lineage", "upstream", sf(ds("db.none"), "x"), code=EXIT_NOT_FOUND)
    assert "not in the graph" in res.stderr
    res = cli("stats", "--graph", "mongodb://x", code=EXIT_BAD_INPUT)
    assert "unknown graph URI" in res.stderr
    res = cli("query", "MATCH (n RETURN n", code=EXIT_BAD_INPUT)
    assert "refused the statement" in res.stderr
    res = cli("query", "RETURN 1", "-p", "novalue", code=EXIT_BAD_INPUT)
    assert "expected name=value" in res.stderr


def test_neo4j_credentials_are_checked_and_never_echoed(neo4j_server) -> None:
    wrong = f"bolt://neo4j:not-the-password@127.0.0.1:{neo4j_server.bolt_port}"
    res = CliRunner().invoke(app, ["stats", "--graph", wrong])
    assert res.exit_code == EXIT_UNAVAILABLE
    assert "cannot reach Neo4j at bolt://127.0.0.1" in res.stderr and "Unauthorized" in res.stderr
    assert "not-the-password" not in res.output + res.stderr
    ok = CliRunner().invoke(app, ["stats", "--graph", neo4j_server.uri, "--json"])
    assert ok.exit_code == 0 and "datasets" in json.loads(ok.stdout)
