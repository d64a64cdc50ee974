"""The Neo4j Browser queries (``cypher/browser_*.cypher``) on both backends, and Neo4j Browser itself drawing
the upstream lineage of the example report column (headless Chromium driven by ``tests/browser/browser.mjs``;
its screenshot lands in ``test-artifacts/browser-upstream.png``)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from fieldgraph.graph import LineageGraph
from fieldgraph.graph import cypher as cy
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.sources import decode_event

from .conftest import ds, example_changes, lineage_event

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "browser" / "browser.mjs"
KAFKA, FACT = ds("demo.orders", "kafka"), ds("/demo/fact_orders", "hdfs")
DAILY, REPORT = ds("analytics.public.orders_daily", "snowflake"), ds("sales.revenue_report", "tableau")
REPORT_TOTAL = field_urn(REPORT, "total_revenue")
KAFKA_PRICE = field_urn(KAFKA, "[version=2.0].[type=Order].[type=array].[type=Item].items.[type=bytes].price")


def urns(path: dict) -> list[str]:
    return [n["urn"] for n in path["nodes"]]


def drawn(rows: list[dict]) -> tuple[set[str], set[tuple[str, str]]]:
    """The distinct nodes (URNs) and relationships (URN pairs) of the paths in ``rows``: what Browser draws."""
    nodes: set[str] = set()
    rels: set[tuple[str, str]] = set()
    for row in rows:
        for p in row.values():
            if p is not None:
                nodes.update(urns(p))
                rels.update(zip(urns(p), urns(p)[1:], strict=False))
    return nodes, rels


def test_browser_queries_return_drawable_paths(graph) -> None:
    graph.ingest(example_changes())

    up = graph.query(cy.statement("browser_upstream"), {"urn": REPORT_TOTAL})
    paths = [r["p"] for r in up]
    assert all(urns(p)[0] == REPORT_TOTAL and p["nodes"][0]["labels"] == ["DatasetField"] for p in paths)
    assert all(e["type"] == "DataDerivedFrom" for p in paths for e in p["edges"])
    (to_kafka,) = [p for p in paths if urns(p)[-1] == KAFKA_PRICE]
    assert urns(to_kafka) == [REPORT_TOTAL, field_urn(DAILY, "revenue"), field_urn(FACT, "price"), KAFKA_PRICE]
    assert [e["transformation"] for e in to_kafka["edges"]][:2] == ["BLACKBOX", "SUM"]
    assert max(len(p["edges"]) for p in paths) == 3
    assert len(paths) == 8 and len(drawn(up)[0]) == 9

    down = graph.query(cy.statement("browser_downstream"), {"urn": KAFKA_PRICE})
    assert sorted(urns(r["p"]) for r in down) == [
        [KAFKA_PRICE, field_urn(FACT, "price")],
        [KAFKA_PRICE, field_urn(FACT, "price"), field_urn(DAILY, "revenue")],
        [KAFKA_PRICE, field_urn(FACT, "price"), field_urn(DAILY, "revenue"), REPORT_TOTAL]]

    impact = graph.query(cy.statement("browser_impact"), {"urn": KAFKA})
    nodes, rels = drawn(impact)
    assert {KAFKA, FACT, DAILY, REPORT} <= nodes and REPORT_TOTAL in nodes
    assert (REPORT, REPORT_TOTAL) in rels and (KAFKA, KAFKA_PRICE) in rels  # HasField, drawn too
    assert all(urns(r["p"])[0] == KAFKA and r["q"]["nodes"][0]["labels"] == ["Dataset"] for r in impact)

    (path,) = graph.query(cy.statement("browser_path"), {"from": REPORT_TOTAL, "to": KAFKA_PRICE})
    assert urns(path["p"]) == urns(to_kafka) and len(path["p"]["edges"]) == 3
    assert graph.query(cy.statement("browser_path"), {"from": KAFKA_PRICE, "to": REPORT_TOTAL}) == []

    fact = graph.query(cy.statement("browser_dataset"), {"urn": FACT})
    assert {r["p"]["nodes"][0]["urn"] for r in fact} == {FACT}
    assert sorted(r["p"]["nodes"][1]["fieldPath"] for r in fact) == [
        "customerId", "price", "quantity", "restaurant", "sku", "timeStamp"]  # the removed field too


def test_browser_as_of_queries_draw_the_lineage_that_held_then(graph) -> None:
    graph.ingest(example_changes())
    before = {"urn": REPORT_TOTAL, "asOf": 1735689606000}  # 2025-01-01T00:00:06Z, after the examples
    old_up = graph.query(cy.statement("browser_upstream"), {"urn": REPORT_TOTAL})
    old_table = graph.query(cy.statement("upstream"), {"urn": REPORT_TOTAL})
    assert drawn(graph.query(cy.statement("browser_upstream_as_of"), before)) == drawn(old_up)
    # the report's lineage rewired at :10: now it derives from the fact table's quantity only
    graph.write(decode_event(lineage_event(REPORT, [(REPORT_TOTAL, [field_urn(FACT, "quantity")])], 1735689610000)))
    now = drawn(graph.query(cy.statement("browser_upstream"), {"urn": REPORT_TOTAL}))
    assert now != drawn(old_up) and (REPORT_TOTAL, field_urn(FACT, "quantity")) in now[1]
    then = graph.query(cy.statement("browser_upstream_as_of"), before)
    assert drawn(then) == drawn(old_up)
    assert {e["type"] for r in then for e in r["p"]["edges"]} == {"DataDerivedFrom", "PreviouslyDerivedFrom"}
    table = graph.query(cy.statement("upstream_as_of"), before)
    assert [(r["urn"], r["depth"]) for r in table] == [(r["urn"], r["depth"]) for r in old_table]
    assert all(e["validTo"] == 1735689610000 for r in table if r["depth"] == 1 for e in r["edges"][:1])
    down_then = graph.query(cy.statement("browser_downstream_as_of"), {"urn": KAFKA_PRICE, "asOf": before["asOf"]})
    assert REPORT_TOTAL in drawn(down_then)[0]
    assert REPORT_TOTAL not in drawn(graph.query(cy.statement("browser_downstream"), {"urn": KAFKA_PRICE}))[0]
    early = graph.query(cy.statement("browser_upstream_as_of"), {"urn": REPORT_TOTAL, "asOf": 1735689602000})
    assert early == []  # before the report's lineage arrived (:03)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_neo4j_browser_draws_the_upstream_lineage(neo4j_server) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js 20+) is not on PATH: it runs tests/browser/browser.mjs")
    if not (SCRIPT.parent / "node_modules" / "playwright-core").is_dir():
        pytest.fail("tests/browser/node_modules is missing: run `npm ci --prefix tests/browser`")
    g = LineageGraph.open(neo4j_server.uri)
    try:
        g.store.clear()
        g.ingest(example_changes())
        nodes, rels = drawn(g.query(cy.statement("browser_upstream"), {"urn": REPORT_TOTAL}))
        shot = ROOT / "test-artifacts" / "browser-upstream.png"
        shot.unlink(missing_ok=True)
        proc = subprocess.run([node, str(SCRIPT), "--browser", neo4j_server.browser, "--bolt", neo4j_server.bolt,
                               "--user", neo4j_server.user, "--password", neo4j_server.password,
                               "--urn", REPORT_TOTAL, "--screenshot", str(shot)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"browser.mjs failed:\n{proc.stderr}{proc.stdout}"
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        assert out["nodes"] == len(nodes) > 3
        assert out["relationships"] == len(rels)
        data = shot.read_bytes()
        width, height = png_size(data)
        assert width >= 800 and height >= 400 and 10_000 < len(data) < 3_000_000
    finally:
        g.store.clear()
        g.close()
