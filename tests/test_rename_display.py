"""How a hop across a rename and an edge drawn by hand show wherever a user sees lineage: the CLI's tables
(``lineage upstream|downstream``, ``impact``) and the exports (DOT, Mermaid, CSV), rendered from constructed
answers (``LineageResult`` of ``Hop``s): a rename reads ``renamed``, a manual edge ``manual``; ordinary hops show
as they always did."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest
from rich.console import Console

from fieldgraph.changes import ManualEdgeChange, RenameChange
from fieldgraph.graph import Hop, Impact, LineageResult
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli.render import hop_table, hop_via, impact_table, path_mark, via
from fieldgraph.ingest.export import (
    LINEAGE_COLUMNS,
    edge_label,
    hop_detail,
    hop_label,
    instant,
    lineage_csv,
    lineage_dot,
    lineage_mermaid,
    relation,
    rename_names,
)

from .conftest import WITH_MEMORY, ds, ingest, lineage_event, schema_event, sf
from .test_export import parse_dot

RAW, ORDERS, REPORT, SHEET = ds("db.raw"), ds("db.orders"), ds("db.report"), ds("db.sheet")
RAW_AMT, OLD, NEW = sf(RAW, "amt_raw"), sf(ORDERS, "amt"), sf(ORDERS, "amount")
TOTAL, SHEET_X = sf(REPORT, "total"), sf(SHEET, "x")
T_RENAME = 1735689606000  # 2025-01-01T00:00:06Z
T_MANUAL = 1735776000000  # 2025-01-02T00:00:00Z

SUM = {"transformation": "SUM", "kind": "DIRECT", "subtype": "AGGREGATION", "source": "upstreamLineage"}
COPY = {"transformation": "IDENTITY", "kind": "DIRECT", "subtype": "IDENTITY", "source": "upstreamLineage"}
RENAME = {"relation": "RenamedFrom", "transformation": "Rename", "validFrom": T_RENAME, "source": "sql",
          "by": "ann", "note": "clearer name"}
MANUAL = {"source": "manual", "sourceFormat": "manual", "by": "bob", "note": "from the spreadsheet",
          "validFrom": T_MANUAL}


def upstream() -> LineageResult:
    """Upstream of the report's total: from the new name, across the rename, to what fed the old name; and a
    manual edge from a spreadsheet."""
    return LineageResult(TOTAL, "upstream", [
        Hop(TOTAL, NEW, 1, ORDERS, "amount", SUM),
        Hop(TOTAL, SHEET_X, 1, SHEET, "x", MANUAL),
        Hop(NEW, OLD, 2, ORDERS, "amt", RENAME),
        Hop(OLD, RAW_AMT, 3, RAW, "amt_raw", COPY),
    ])


def downstream() -> LineageResult:
    """Downstream of the raw column: into the old name, across the rename, to the report (the same edges)."""
    return LineageResult(RAW_AMT, "downstream", [
        Hop(RAW_AMT, OLD, 1, ORDERS, "amt", COPY),
        Hop(OLD, NEW, 2, ORDERS, "amount", RENAME),
        Hop(NEW, TOTAL, 3, REPORT, "total", SUM),
        Hop(SHEET_X, TOTAL, 1, REPORT, "total", {**MANUAL, "transformation": "BLACKBOX"}),
    ])


def text(table: Any) -> str:
    console = Console(file=io.StringIO(), width=250, color_system=None)
    console.print(table)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return re.sub(r" +", " ", out)


def test_hops_say_what_their_edge_is() -> None:
    res = upstream()
    assert [relation(h) for h in res.hops] == ["derived", "manual", "renamed", "derived"]
    assert instant(T_RENAME) == "2025-01-01T00:00:06Z" and instant(None) == instant("x") == ""
    assert rename_names(OLD, NEW) == ("amt", "amount")
    assert rename_names(OLD, sf(ds("db.orders_v2"), "amt")) == ("db.orders.amt", "db.orders_v2.amt")  # a dataset renamed
    assert rename_names(ORDERS, ds("db.orders_v2")) == ("db.orders", "db.orders_v2")
    assert hop_label(res.hops[2]) == "renamed" and hop_label(res.hops[1]) == "manual: bob"
    assert hop_label(Hop(TOTAL, SHEET_X, 1, SHEET, "x", {**MANUAL, "transformation": "x.y.SUM", "by": None})) == \
        "manual (SUM)"
    assert hop_label(res.hops[0]) == edge_label(SUM) == "SUM (AGGREGATION)"
    for r in (res, downstream()):  # the rename reads old -> new whichever way the walk went
        (renamed,) = [h for h in r.hops if h.rename]
        assert hop_detail(renamed, r.direction) == \
            "renamed from amt to amount at 2025-01-01T00:00:06Z (sql) by ann: clearer name"
    assert hop_detail(res.hops[1], "upstream") == "drawn by hand by bob at 2025-01-02T00:00:00Z: from the spreadsheet"
    assert hop_detail(res.hops[0], "upstream") is None


@pytest.mark.parametrize("walk", [upstream, downstream])
def test_the_lineage_table_marks_renames_and_manual_edges(walk: Any) -> None:
    res = walk()
    vias = {(h.from_urn, h.urn): hop_via(h, res.direction) for h in res.hops}
    renamed = next(k for k, h in zip(vias, res.hops, strict=True) if h.rename)
    assert vias[renamed] == "renamed amt -> amount (since 2025-01-01T00:00:06Z)"
    (manual,) = [v for v, h in zip(vias.values(), res.hops, strict=True) if h.manual]
    assert manual in ("manual (by bob)", "BLACKBOX manual (by bob)")
    for h in res.hops:  # ordinary hops: the words they always had
        if not (h.rename or h.manual):
            assert hop_via(h, res.direction) == via(h.edge)
    shown = text(hop_table(res, "t"))
    assert "renamed amt -> amount (since 2025-01-01T00:00:06Z)" in shown and "manual (by bob)" in shown
    assert "Rename" not in shown  # a rename reads as one, not as a transformation


def test_a_manual_edge_without_by_and_a_rename_without_time() -> None:
    h = Hop(TOTAL, SHEET_X, 1, SHEET, "x", {"sourceFormat": "manual", "transformation": "COPY"})
    assert hop_via(h, "upstream") == "COPY manual"
    r = Hop(NEW, OLD, 1, ORDERS, "amt", {"relation": "RenamedFrom", "transformation": "Rename"})
    assert hop_via(r, "upstream") == "renamed amt -> amount"
    assert hop_detail(r, "upstream") == "renamed from amt to amount"


def test_a_path_marks_its_steps_across_a_rename_or_by_hand() -> None:
    res = upstream()
    assert res.path_to(RAW_AMT) == [TOTAL, NEW, OLD, RAW_AMT]
    assert [path_mark(res, a, b) for a, b in ((TOTAL, NEW), (NEW, OLD), (OLD, RAW_AMT), (TOTAL, SHEET_X))] == \
        ["", "  (renamed)", "", "  (manual, by bob)"]


def test_the_impact_table_marks_fields_reached_across_a_rename_or_by_hand() -> None:
    res = downstream()
    impact = Impact(res, {ORDERS: ["amt", "amount"], REPORT: ["total"]})
    shown = text(impact_table(impact, "impact"))
    assert "amount (renamed from amt)" in shown and "total (manual, by bob)" in shown
    assert re.search(r"│ amt │", shown)  # reached along an ordinary edge: as it was
    plain = Impact(LineageResult(RAW_AMT, "downstream", [Hop(RAW_AMT, OLD, 1, ORDERS, "amt", COPY)]),
                   {ORDERS: ["amt"]})
    assert "(" not in text(impact_table(plain, "impact")).split("\n", 1)[1]


@pytest.mark.parametrize("walk", [upstream, downstream])
def test_dot_draws_renames_dotted_and_manual_edges_bold(walk: Any) -> None:
    res = walk()
    dot = parse_dot(lineage_dot(res))
    by_pair = {(a, b): attrs for a, b, attrs in dot.edges}
    rename, manual = by_pair[OLD, NEW], by_pair[SHEET_X, TOTAL]  # drawn as data flows: old -> new
    assert rename["label"] == "renamed" and rename["style"] == "dotted" and rename["arrowhead"] == "empty"
    assert rename["tooltip"] == "renamed from amt to amount at 2025-01-01T00:00:06Z (sql) by ann: clearer name"
    assert manual["label"].startswith("manual: bob") and manual["style"] == "bold"
    assert manual["tooltip"].startswith("drawn by hand by bob")
    assert by_pair[NEW, TOTAL] == {"label": "SUM (AGGREGATION)"}  # ordinary edges: as they were
    assert by_pair[RAW_AMT, OLD] == {"label": "IDENTITY"}


@pytest.mark.parametrize("walk", [upstream, downstream])
def test_mermaid_draws_renames_dotted_and_manual_edges_thick(walk: Any) -> None:
    res = walk()
    lines = lineage_mermaid(res).splitlines()
    ids = {urn: f"f{i}" for i, urn in enumerate(dict.fromkeys([res.start, *(u for h in res.hops
                                                                          for u in (h.from_urn, h.urn))]))}
    links = [line.strip() for line in lines if re.match(r"^  f\d+ ", line)]
    assert f'{ids[OLD]} -.->|"renamed"| {ids[NEW]}' in links
    manual = next(i for i, line in enumerate(links) if line.startswith(f"{ids[SHEET_X]} ==>"))
    assert '|"manual: bob' in links[manual]
    assert f'{ids[NEW]} -->|"SUM (AGGREGATION)"| {ids[TOTAL]}' in links
    rename = links.index(f'{ids[OLD]} -.->|"renamed"| {ids[NEW]}')
    assert f"  linkStyle {rename} stroke:#4169e1" in lines
    assert f"  linkStyle {manual} stroke:#006400,stroke-width:3px" in lines


def test_csv_has_a_relation_column_at_the_end() -> None:
    rows = list(csv.DictReader(io.StringIO(lineage_csv(upstream()))))
    assert LINEAGE_COLUMNS[-1] == "relation" and list(rows[0]) == list(LINEAGE_COLUMNS)
    assert [(r["fieldPath"], r["relation"], r["transformation"]) for r in rows] == [
        ("amount", "derived", "SUM"), ("x", "manual", ""), ("amt", "renamed", "Rename"), ("amt_raw", "derived", "IDENTITY")]


def readers_of_the_old_name() -> LineageResult:
    """Downstream of the new name: across the rename back to the old one (the walk crossed it new -> old, its edge
    names both ends), to the report that still reads the old name."""
    return LineageResult(NEW, "downstream", [
        Hop(NEW, OLD, 1, ORDERS, "amt", {**RENAME, "old": OLD, "new": NEW}),
        Hop(OLD, TOTAL, 2, REPORT, "total", SUM),
    ])


def test_a_rename_crossed_from_the_new_name_reads_old_to_new() -> None:
    res = readers_of_the_old_name()
    hop = res.hops[0]
    assert hop_via(hop, "downstream") == "renamed amt -> amount (since 2025-01-01T00:00:06Z)"
    assert hop_detail(hop, "downstream") == "renamed from amt to amount at 2025-01-01T00:00:06Z (sql) by ann: clearer name"
    assert "renamed amt -> amount" in text(hop_table(res, "t"))
    by_pair = {(a, b): attrs for a, b, attrs in parse_dot(lineage_dot(res)).edges}
    assert set(by_pair) == {(OLD, NEW), (OLD, TOTAL)}  # drawn old -> new, and the old name's reader from it
    assert by_pair[OLD, NEW]["label"] == "renamed" and by_pair[OLD, NEW]["style"] == "dotted"
    ids = {urn: f"f{i}" for i, urn in enumerate(dict.fromkeys([res.start, OLD, TOTAL]))}
    assert f'{ids[OLD]} -.->|"renamed"| {ids[NEW]}' in lineage_mermaid(res)
    shown = text(impact_table(Impact.of(res), "impact"))
    assert "amt (renamed to amount)" in shown and "renamed from" not in shown
    assert path_mark(res, NEW, OLD) == "  (renamed)"


@WITH_MEMORY
def test_a_real_rename_and_dataset_rename_show_as_such(graph: Any) -> None:
    """The walks' own rename hops (not constructed ones): a field renamed, then its dataset renamed."""
    raw, orders, v2 = ds("db.raw"), ds("db.orders"), ds("db.orders_v2")
    raw_amt, old, new = field_urn(raw, "amt_raw"), field_urn(orders, "amt"), field_urn(orders, "amount")
    ingest(graph, schema_event(raw, ["amt_raw"], 1000), schema_event(orders, ["amt"], 1000),
           lineage_event(orders, [(old, [raw_amt])], 1000))
    graph.ingest([RenameChange(orders, ((old, new),), ts=T_RENAME, source="sql", by="ann", note="clearer name"),
                  ManualEdgeChange.of(new, sf(raw, "amt_raw"), transformation="SUM", by="bob", note="checked",
                                      ts=T_MANUAL)])
    up = graph.upstream(new)
    assert sorted(relation(h) for h in up.hops) == ["derived", "manual", "renamed"]
    shown = text(hop_table(up, "t"))
    assert "renamed amt -> amount (since 2025-01-01T00:00:06Z)" in shown and "SUM manual (by bob)" in shown
    by_relation = {relation(h): h for h in up.hops}
    assert hop_detail(by_relation["renamed"], "upstream") == \
        "renamed from amt to amount at 2025-01-01T00:00:06Z (sql) by ann: clearer name"
    assert hop_detail(by_relation["manual"], "upstream") == \
        "drawn by hand by bob at 2025-01-02T00:00:00Z: checked"
    assert hop_label(by_relation["manual"]) == "manual: bob (SUM)"
    down = graph.downstream(raw_amt)
    assert "renamed amt -> amount" in text(hop_table(down, "t"))
    assert any(h.rename and (h.from_urn, h.urn) == (old, new) for h in down.hops)
    dot = parse_dot(lineage_dot(down))
    assert {(a, b): attrs["label"] for a, b, attrs in dot.edges}[old, new] == "renamed"
    rows = list(csv.DictReader(io.StringIO(lineage_csv(down))))
    assert sorted((r["fieldPath"], r["relation"]) for r in rows) == \
        [("amount", "manual"), ("amount", "renamed"), ("amt", "derived")]
    impact = graph.impact(raw_amt)
    assert "amount (manual, by bob; renamed from amt)" in text(impact_table(impact, "impact"))

    ingest(graph, schema_event(orders, ["amount"], T_RENAME), schema_event(v2, ["amount"], T_RENAME + 1000))
    graph.ingest([RenameChange(v2, from_dataset=orders, ts=T_RENAME + 1000, source="sql")])
    moved = field_urn(v2, "amount")
    shown = text(hop_table(graph.upstream(moved), "t"))
    assert "renamed db.orders.amount -> db.orders_v2.amount (since 2025-01-01T00:00:07Z)" in shown
