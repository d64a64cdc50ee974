"""The lineage explorer page draws a hop across a rename and an edge drawn by hand distinctly (a real browser, a
real ``fieldgraph serve``, as in ``tests/test_explorer.py``): a rename dotted with an open arrowhead and labelled
``renamed``, a manual edge thick and labelled ``manual: <by>``, each named in the legend, and the side panel's edge
cards say ``renamed from X at T`` and ``drawn by hand by X: note``. The new name's downstream reaches a reader that
still reads the old name, and the rename is drawn once, old -> new, whichever way the walk crossed it. Screenshot:
``test-artifacts/explorer-renames.png``."""

from __future__ import annotations

import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from fieldgraph.changes import ManualEdgeChange, RenameChange
from fieldgraph.graph.plan import field_urn

from .conftest import ds, ingest, lineage_event, schema_event
from .test_explorer import ARTIFACTS, api, edges, explorer, fields, serve

pytestmark = pytest.mark.integration
__all__ = ["explorer", "serve"]  # the fixtures this module uses from test_explorer

RAW, ORDERS, REPORT, SHEET = ds("shop.raw"), ds("shop.orders"), ds("shop.report"), ds("shop.sheet")
ARCHIVE = ds("shop.archive")
ARCHIVE_AMT = field_urn(ARCHIVE, "amt")
RAW_AMT, OLD, NEW = field_urn(RAW, "amt_raw"), field_urn(ORDERS, "amt"), field_urn(ORDERS, "amount")
TOTAL, SHEET_X = field_urn(REPORT, "total"), field_urn(SHEET, "x")
T_RENAME = 1735689606000  # 2025-01-01T00:00:06Z
T_MANUAL = 1735776000000  # 2025-01-02T00:00:00Z


def rename_and_manual_graph(graph: Any) -> None:
    """raw.amt_raw -> orders.amt, renamed to orders.amount at T_RENAME (a RenameChange), -> report.total; and
    sheet.x -> report.total drawn by hand by bob (a ManualEdgeChange); archive.amt still reads orders.amt (its
    lineage declared before the rename)."""
    ingest(graph, schema_event(RAW, ["amt_raw"], 1000), schema_event(ORDERS, ["amt", "amount"], 1000),
           schema_event(REPORT, ["total"], 1000), schema_event(SHEET, ["x"], 1000), schema_event(ARCHIVE, ["amt"], 1000),
           lineage_event(ORDERS, [(OLD, [RAW_AMT])], 2000), lineage_event(REPORT, [(TOTAL, [NEW])], 2000, "SUM"),
           lineage_event(ARCHIVE, [(ARCHIVE_AMT, [OLD])], 2000))
    graph.ingest([RenameChange(ORDERS, ((OLD, NEW),), ts=T_RENAME, source="sql", by="ann", note="clearer name"),
                  ManualEdgeChange.of(TOTAL, SHEET_X, by="bob", note="from the spreadsheet", ts=T_MANUAL)])


def test_explorer_draws_renames_and_manual_edges_distinctly(graph, serve, explorer) -> None:
    rename_and_manual_graph(graph)
    base = serve
    up = {h["urn"]: h for h in api(base, "lineage/upstream", field=NEW, depth=1)["hops"]}
    assert up[OLD]["edge"]["relation"] == "RenamedFrom"  # the API answers the rename as a hop
    down = api(base, "lineage/downstream", field=NEW, depth=2)["hops"]  # the old name's reader reads the new name
    assert {(h["from"], h["urn"]) for h in down} == {(NEW, TOTAL), (NEW, OLD), (OLD, ARCHIVE_AMT)}
    assert [(h["edge"]["old"], h["edge"]["new"]) for h in down if h["urn"] == OLD] == [(OLD, NEW)]
    assert api(base, "impact", name=NEW)["datasets"].get(ARCHIVE) == ["amt"]

    opened = explorer("open", url=f"{base}/explorer/#field={urllib.parse.quote(NEW)}")
    assert opened["error"] is None
    explorer("dblclick", node=TOTAL)  # the report's total: its manual edge from the sheet
    view = explorer("dblclick", node=OLD)  # the old name: what fed it before the rename
    assert {RAW_AMT, OLD, NEW, TOTAL, SHEET_X} <= fields(view)
    assert {(RAW_AMT, OLD), (OLD, NEW), (NEW, TOTAL), (SHEET_X, TOTAL), (OLD, ARCHIVE_AMT)} <= edges(view)
    assert (NEW, OLD) not in edges(view)  # the rename, crossed both ways, is drawn once: old -> new
    drawn = {(e["source"], e["target"]): e for e in view["edges"] if e["kind"] == "lineage"}
    rename, manual = drawn[OLD, NEW], drawn[SHEET_X, TOTAL]  # drawn as data flows: old -> new
    assert "renamed" in rename["classes"] and rename["label"].split("\n") == ["renamed", "since 2025-01-01 00:00:06Z"]
    assert "manual" in manual["classes"] and manual["label"] == "manual: bob"
    for pair in ((RAW_AMT, OLD), (NEW, TOTAL)):  # ordinary edges: as they were
        assert not {"renamed", "manual"} & set(drawn[pair]["classes"])
        assert not drawn[pair]["label"].startswith(("renamed", "manual"))
    assert explorer("text", testid="legend-renamed") == "dotted: renamed"
    assert explorer("text", testid="legend-manual") == "thick: manual (drawn by hand)"
    explorer("screenshot", path=str(ARTIFACTS / "explorer-renames.png"))

    # the side panel: the rename's card and the manual edge's card say what they are
    explorer("click", node=NEW)
    cards = explorer("text", testid="field-edges")
    assert "renamed from orders.amt at 2025-01-01 00:00:06Z by ann: clearer name" in cards.replace("shop.", "")
    explorer("click", node=TOTAL)
    cards = explorer("text", testid="field-edges")
    assert "drawn by hand by bob: from the spreadsheet" in cards
    explorer("screenshot", path=str(ARTIFACTS / "explorer-manual-panel.png"))

    # the SVG export keeps the line styles: the rename dotted, the manual edge thicker
    got = explorer("download", testid="export-svg", path=str(ARTIFACTS / "explorer-renames.svg"))
    paths = [p for p in ET.parse(Path(got["path"])).getroot().iter("{http://www.w3.org/2000/svg}path")
             if p.get("stroke") and p.get("fill") == "none"]
    assert any(p.get("stroke-dasharray") == "2 3" for p in paths)
    assert any(float(p.get("stroke-width") or 0) >= 3 for p in paths)
    assert explorer("errors") == []
