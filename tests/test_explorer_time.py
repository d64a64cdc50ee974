"""Lineage through time in the explorer: the timeline of the lineage around a field, the walk as of two instants
told apart, and the page's time control and compare mode.

- Pure: the interval arithmetic and :func:`diff_walks` on hand-made walks.
- The graph (in-memory store): on random histories (``tests/test_as_of.py``'s), the timeline's instants are
  exactly those at which the walk as of an instant changes.
- The API (``GET /api/v1/timeline``, ``GET /api/v1/lineage/{direction}/diff``) on both backends and the in-memory
  store: a history with changes at known instants; each answer is what the graph answers.
- A real Chromium on a real ``fieldgraph serve`` over each backend: the marks sit at those instants, moving the
  control draws the as-of view the API answers, compare mode marks what was added, removed and changed (class,
  label marker, legend), a reload of the address draws the same view and the back button walks the views.
  Screenshots: ``test-artifacts/explorer-time.png``, ``test-artifacts/explorer-compare.png``.
"""

from __future__ import annotations

import random
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fieldgraph.errors import InputError
from fieldgraph.graph import LineageGraph, MemoryStore, NotFoundError
from fieldgraph.graph.answers import Hop, LineageResult, encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.graph.timeline import diff_walks, drawn_over_time, intersect, timeline_marks, union
from fieldgraph.ingest.config import ServeConfig

from .conftest import WITH_MEMORY, column, ds, ingest, lineage_event, mcp
from .test_explorer import ARTIFACTS, api, edges, explorer, fields, serve
from .test_service import Service, start

__all__ = ["explorer", "serve"]  # the fixtures this module uses from test_explorer

DAY = 86_400_000
T0 = 1735689600000  # 2025-01-01T00:00:00Z
T1, T2, T3, T4, T5, T6 = (T0 + k * DAY for k in range(1, 7))
SRC, MID, OUT = ds("shop.src"), ds("shop.mid"), ds("shop.out")
SRC_A, SRC_B, MID_X, OUT_TOTAL = field_urn(SRC, "a"), field_urn(SRC, "b"), field_urn(MID, "x"), field_urn(OUT, "total")


def schema(urn: str, cols: list[dict[str, Any]], ts: int) -> dict[str, Any]:
    return mcp(urn, "schemaMetadata", {"schemaName": urn, "platform": "urn:li:dataPlatform:hive", "version": 0,
                                       "hash": "", "platformSchema": {"com.linkedin.schema.OtherSchema": {
                                           "rawSchema": ""}}, "fields": cols}, ts)


def history(graph: Any) -> None:
    """T1 the schemas; T2 mid.x <- src.a (IDENTITY) and out.total <- mid.x (SUM); T3 mid.x <- src.a becomes a
    MASK; T4 mid.x <- src.b joins; T5 src.a's type changes (string -> long); T6 out's lineage is deleted."""
    ingest(graph, schema(SRC, [column("a"), column("b")], T1), schema(MID, [column("x")], T1),
           schema(OUT, [column("total")], T1),
           lineage_event(MID, [(MID_X, [SRC_A])], T2), lineage_event(OUT, [(OUT_TOTAL, [MID_X])], T2, "SUM"),
           lineage_event(MID, [(MID_X, [SRC_A])], T3, "MASK"),
           lineage_event(MID, [(MID_X, [SRC_A, SRC_B])], T4, "MASK"),
           schema(SRC, [column("a", "NumberType", "long"), column("b")], T5),
           mcp(OUT, "upstreamLineage", None, T6, "DELETE"))


#: the timeline of mid.x both ways, 2 hops: (at, edgesAdded, edgesRemoved, fieldsAdded, fieldsRemoved, fieldsChanged)
MARKS = [(T1, 0, 0, 1, 0, 0), (T2, 2, 0, 2, 0, 0), (T3, 1, 1, 0, 0, 0), (T4, 1, 0, 1, 0, 0),
         (T5, 0, 0, 0, 0, 1), (T6, 0, 1, 0, 1, 0)]


def as_tuples(instants: list[dict[str, Any]]) -> list[tuple[int, ...]]:
    keys = ("at", "edgesAdded", "edgesRemoved", "fieldsAdded", "fieldsRemoved", "fieldsChanged")
    return [tuple(m[k] for k in keys) for m in instants]


def changes(diff: dict[str, Any]) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """A diff answer's fields and edges (as the walk went: from -> urn) by their change, ``same`` left out."""
    return ({f["urn"]: f["change"] for f in diff["fields"] if f["change"] != "same"},
            {(e["from"], e["urn"]): e["change"] for e in diff["edges"] if e["change"] != "same"})


# ---- pure ----


def hop(a: str, b: str, start: int | None = None, end: int | None = None, **edge: Any) -> Hop:
    props = {**({} if start is None else {"validFrom": start}), **({} if end is None else {"validTo": end}), **edge}
    return Hop(a, b, 1, "urn:li:dataset:(urn:li:dataPlatform:hive,d,PROD)", b, props)


def test_interval_arithmetic() -> None:
    assert union([(5, 9), (1, 3), (3, 4), (8, None)]) == [(1, 4), (5, None)]
    assert union([(1, 2), (3, 4)]) == [(1, 2), (3, 4)]
    assert intersect([(1, 4), (6, None)], (3, 8)) == [(3, 4), (6, 8)]
    assert intersect([(1, 4)], (4, None)) == []
    assert intersect([(0, None)], (2, None)) == [(2, None)]


def test_drawn_over_time_cuts_each_edge_to_when_its_near_end_was_drawn() -> None:
    """s -> a holds [10, 20); a -> b holds always: b is drawn only while a is, and a -> c (from 30) never."""
    steps = {"s": [hop("s", "a", 10, 20)], "a": [hop("a", "b"), hop("a", "c", 30)], "b": [hop("b", "d", 15)]}
    reach, drawn, stopped = drawn_over_time("s", 3, lambda frontier: [h for f in frontier for h in steps.get(f, [])],
                                            since=5)
    assert stopped is None
    assert reach == {"s": [(5, None)], "a": [(10, 20)], "b": [(10, 20)], "d": [(15, 20)]}
    assert sorted((h.from_urn, h.urn, iv) for h, iv in (v for v in drawn.values())) == [
        ("a", "b", [(10, 20)]), ("b", "d", [(15, 20)]), ("s", "a", [(10, 20)])]
    marks = timeline_marks(reach, drawn, {"a": [12, 25], "s": [5, 7]})
    assert [(m.at, m.edges_added, m.edges_removed, m.fields_added, m.fields_removed, m.fields_changed)
            for m in marks] == [(5, 0, 0, 1, 0, 0), (7, 0, 0, 0, 0, 1), (10, 2, 0, 2, 0, 0), (12, 0, 0, 0, 0, 1),
                                (15, 1, 0, 1, 0, 0), (20, 0, 3, 0, 3, 0)]  # a's change at 25: not drawn then
    reach, drawn, _ = drawn_over_time("s", 1, lambda frontier: [h for f in frontier for h in steps.get(f, [])])
    assert set(reach) == {"s", "a"}  # one hop: a is not expanded
    calls = iter([[hop("s", "a", 10, 20)], None])  # out of time at the second level
    reach, drawn, stopped = drawn_over_time("s", 3, lambda frontier: next(calls))
    assert stopped == 2 and set(reach) == {"s", "a"}


def test_diff_walks_tells_added_removed_changed_and_same() -> None:
    start = field_urn(ds("t"), "x")
    before = LineageResult(start, "upstream", (hop(start, "a", transformation="IDENTITY", run="r1"),
                                               hop(start, "b", source="s1"), hop("a", "c")))
    after = LineageResult(start, "upstream", (hop(start, "a", transformation="SUM", run="r2"),
                                              hop("a", "c", run="r9"), hop(start, "d")))
    states1 = {start: {"removed": False}, "a": {"type": "string"}, "b": {}, "c": {}}
    states2 = {start: {"removed": False}, "a": {"type": "long"}, "c": {}, "d": {}}
    diff = diff_walks(start, "upstream", 2, 1, 2, before, after, states1, states2)
    assert {f.urn: (f.change, f.differ) for f in diff.fields} == {
        start: ("same", ()), "a": ("changed", ("type",)), "b": ("removed", ()), "c": ("same", ()),
        "d": ("added", ())}
    assert {(e.from_urn, e.urn): (e.change, e.differ) for e in diff.edges} == {
        (start, "a"): ("changed", ("transformation",)), (start, "b"): ("removed", ()), ("a", "c"): ("same", ()),
        (start, "d"): ("added", ())}  # a run alone is no change
    assert diff.counts() == {"fields": {"added": 1, "removed": 1, "changed": 1},
                             "edges": {"added": 1, "removed": 1, "changed": 1}}
    (first,) = [f for f in diff.fields if f.start]
    assert (first.dataset_urn, first.field_path) == (ds("t"), "x")
    gone = diff_walks(start, "upstream", 2, 1, 2, before, None, states1, {})  # not in the graph at t2
    assert {f.change for f in gone.fields} == {"removed"} and {e.change for e in gone.edges} == {"removed"}
    assert encode(gone)["counts"]["fields"]["removed"] == 4


# ---- the graph: the timeline's instants are those the walk changes at ----


@pytest.mark.parametrize("seed", [1, 4, 7])
def test_timeline_marks_exactly_the_instants_the_walk_changes_at(seed: int) -> None:
    from .conftest import sf
    from .test_as_of import D1, D2, S1
    from .test_as_of import history as random_history

    g = LineageGraph(MemoryStore())
    g.ingest(random_history(seed))
    rng = random.Random(seed)
    checked = 0
    for f in (sf(D2, "a"), sf(D1, "b"), sf(S1, "c")):
        for direction in ("upstream", "downstream"):
            try:
                marks = {m.at for m in g.timeline(f, direction, 2).marks}
            except Exception:  # noqa: BLE001 - a field this history never named
                continue
            instants = marks | {t + 1 for t in marks} | {t - 1 for t in marks} | set(rng.sample(range(90, 2100), 40))
            for t in sorted(instants):
                diff = g.diff_walk(f, direction, 2, t - 1, t)
                changed = any(x.change != "same" for x in (*diff.fields, *diff.edges))
                assert changed == (t in marks), (f, direction, t)
                checked += 1
    assert checked > 100


def test_bad_questions_say_what_is_wrong() -> None:
    g = LineageGraph(MemoryStore())
    history(g)
    with pytest.raises(InputError, match="upstream, downstream or both"):
        g.timeline(MID_X, "sideways")
    with pytest.raises(InputError, match="upstream or downstream"):
        g.diff_walk(MID_X, "both", 2, T1, T2)
    with pytest.raises(InputError, match="is after"):
        g.diff_walk(MID_X, "upstream", 2, T2, T1)
    with pytest.raises(NotFoundError):
        g.timeline(field_urn(ds("no.such"), "x"))
    short = g.timeline(MID_X, "both", 2, time_budget_s=0)  # out of time before the first hop
    assert short.partial and short.reason == "time budget of 0s reached at depth 0 (upstream)"
    assert [m.at for m in short.marks] == [T1]  # mid.x came into the graph
    assert not g.timeline(MID_X, "both", 2).partial


# ---- the API, on both backends and the in-memory store ----


@pytest.fixture
def service(graph: Any, tmp_path: Path) -> Iterator[Service]:
    history(graph)
    yield from start(graph, ServeConfig(token="t" * 24, rate_limit=0, rejects=tmp_path / "rejects.jsonl"))


@WITH_MEMORY
def test_timeline_and_walk_diff_answers(service: Service) -> None:
    g = service.graph
    tl = service.ok("/api/v1/timeline", field=MID_X, direction="both", depth=2)
    assert tl == encode(g.timeline(MID_X, "both", 2))
    assert as_tuples(tl["instants"]) == MARKS
    up = service.ok("/api/v1/timeline", field=MID_X, direction="upstream", depth=1)
    assert [m["at"] for m in up["instants"]] == [T1, T2, T3, T4, T5]

    # the walk changes at each mark and nowhere between them
    for direction in ("upstream", "downstream"):
        marks = {m["at"] for m in service.ok("/api/v1/timeline", field=MID_X, direction=direction, depth=2)["instants"]}
        for t in sorted({T0, *marks, *(m + DAY // 2 for m in marks)}):
            diff = service.ok(f"/api/v1/lineage/{direction}/diff", field=MID_X, depth=2, **{"from": t - 1, "to": t})
            assert diff == encode(g.diff_walk(MID_X, direction, 2, t - 1, t))
            assert (diff["counts"] != {"fields": {"added": 0, "removed": 0, "changed": 0},
                                       "edges": {"added": 0, "removed": 0, "changed": 0}}) == (t in marks)

    # T2 -> T6: the MASK, src.b joined, src.a's type, out.total gone; each side's walk as the lineage answer has it
    up = service.ok("/api/v1/lineage/upstream/diff", field=MID_X, depth=2, **{"from": T2, "to": T6})
    assert changes(up) == ({SRC_A: "changed", SRC_B: "added"}, {(MID_X, SRC_A): "changed", (MID_X, SRC_B): "added"})
    (edge,) = [e for e in up["edges"] if e["urn"] == SRC_A]
    assert "transformation" in edge["differ"] and edge["after"]["transformation"] != edge["before"]["transformation"]
    (a,) = [f for f in up["fields"] if f["urn"] == SRC_A]
    assert a["differ"] == ["nativeDataType", "type"] and (a["before"]["nativeDataType"], a["after"]["nativeDataType"]) \
        == ("string", "long")
    for t, side in ((T2, "before"), (T6, "after")):
        walk = service.ok("/api/v1/lineage/upstream", field=MID_X, depth=2, as_of=t)
        assert {(h["from"], h["urn"]) for h in walk["hops"]} == {(e["from"], e["urn"]) for e in up["edges"] if e[side]}
    down = service.ok("/api/v1/lineage/downstream/diff", field=MID_X, depth=2,
                      **{"from": "2025-01-03T00:00:00Z", "to": "2025-01-07T00:00:00Z"})
    assert changes(down) == ({OUT_TOTAL: "removed"}, {(MID_X, OUT_TOTAL): "removed"})
    assert down["from"] == T2 and down["to"] == T6
    before = service.ok("/api/v1/lineage/downstream/diff", field=MID_X, depth=2, **{"from": T0, "to": T1})
    assert changes(before) == ({MID_X: "added"}, {})  # not in the graph yet at T0

    r = service.get("/api/v1/lineage/upstream/diff", field=MID_X, **{"from": T6, "to": T2})
    assert r.status_code == 400 and "after" in r.json()["error"]
    r = service.get("/api/v1/timeline", field=field_urn(ds("no.such"), "x"))
    assert r.status_code == 404
    r = service.get("/api/v1/timeline", field=MID_X, direction="sideways")
    assert r.status_code in (400, 422)


# ---- the page, in a real Chromium ----


def as_of_view(base: str, t: int | None) -> tuple[set[str], set[tuple[str, str]]]:
    """The fields and edges (upstream -> downstream) the API's walks both ways, 2 hops, answer as of ``t``."""
    at = {} if t is None else {"as_of": t}
    ups = api(base, "lineage/upstream", field=MID_X, depth=2, **at)["hops"]
    downs = api(base, "lineage/downstream", field=MID_X, depth=2, **at)["hops"]
    return ({MID_X} | {h["urn"] for h in ups + downs},
            {(h["urn"], h["from"]) for h in ups} | {(h["from"], h["urn"]) for h in downs})


def test_explorer_time_control_and_compare(graph, serve, explorer) -> None:
    history(graph)
    base = serve
    opened = explorer("open", url=f"{base}/explorer/#field={urllib.parse.quote(MID_X)}")
    assert opened["error"] is None

    # the marks: at the timeline's instants, each titled with what changed then
    marks = explorer("items", testid="time-mark")
    assert [int(m["at"]) for m in marks] == [m[0] for m in MARKS]
    assert "+2 edges, +2 fields" in marks[1]["title"] and "−1 edge, −1 field" in marks[5]["title"]
    assert explorer("text", testid="time-instant") == "now"

    # the slider steps from mark to mark: the walk as of each, as the API answers it; the address holds it
    for step, t in [(2, T3), (5, T6), (0, T1), (1, T2)]:
        view = explorer("fill", testid="time-slider", value=step)
        nodes, rels = as_of_view(base, t)
        assert fields(view) == nodes and edges(view) == rels, t
        assert f"at={t}" in explorer("url")
    view = explorer("fill", testid="time-slider", value=2)  # T3: a field clicked shows its state then
    explorer("click", node=SRC_A)
    assert "StringType" in explorer("text", testid="field-props")  # NumberType from T5 on
    view = explorer("dblclick", node=MID_X)  # expanding walks as of T3 too: no src.b (it joined at T4)
    assert (fields(view), edges(view)) == as_of_view(base, T3) and SRC_B not in fields(view)
    # an address names any instant: between two marks, the view of the first
    for t in (T2 + DAY // 2, T1 + 1):
        view = explorer("open", url=f"{base}/explorer/#field={urllib.parse.quote(MID_X)}&at={t}")
        view = explorer("graph")
        assert (fields(view), edges(view)) == as_of_view(base, t)
    assert fields(view) == {MID_X} and not edges(view)  # T1: mid.x listed, no lineage yet
    view = explorer("fill", testid="time-slider", value=3)
    assert edges(view) == {(SRC_A, MID_X), (SRC_B, MID_X), (MID_X, OUT_TOTAL)}
    assert explorer("text", testid="time-instant") == "2025-01-05 00:00:00Z"
    lit = [m for m in explorer("items", testid="time-mark") if "past" in m["classes"]]
    assert [int(m["at"]) for m in lit] == [T1, T2, T3, T4]
    explorer("screenshot", path=str(ARTIFACTS / "explorer-time.png"))

    # compare T2 -> now: added, removed and changed, each with its class, marker and the legend
    explorer("fill", testid="time-slider", value=1)
    view = explorer("button", testid="time-compare")
    assert "from=" in explorer("url") and f"from={T2}" in explorer("url")

    def told(view: dict) -> tuple[dict[str, tuple[str, str]], dict[tuple[str, str], tuple[str, str]]]:
        def change(classes: list[str]) -> str:
            return next(c.removeprefix("diff-") for c in classes if c in ("diff-added", "diff-removed",
                                                                             "diff-changed", "diff-same"))
        return ({n["id"]: (change(n["classes"]), n["label"]) for n in view["nodes"] if n["kind"] == "field"},
                {(e["source"], e["target"]): (change(e["classes"]), e["label"]) for e in view["edges"]
                 if e["kind"] == "lineage"})

    nodes, rels = told(view)
    assert {k: c for k, (c, _) in nodes.items()} == {MID_X: "same", SRC_A: "changed", SRC_B: "added",
                                                     OUT_TOTAL: "removed"}
    assert {k: c for k, (c, _) in rels.items()} == {(SRC_A, MID_X): "changed", (SRC_B, MID_X): "added",
                                                    (MID_X, OUT_TOTAL): "removed"}
    assert nodes[SRC_B][1].startswith("+ b") and nodes[OUT_TOTAL][1].startswith("− total")
    assert nodes[SRC_A][1].startswith("~ a") and "nativeDataType: string → long" in nodes[SRC_A][1]
    assert rels[SRC_B, MID_X][1].startswith("+ ") and rels[MID_X, OUT_TOTAL][1].startswith("− ")
    assert rels[SRC_A, MID_X][1].startswith("~ ") and "transformation:" in rels[SRC_A, MID_X][1]
    legend = explorer("text", testid="diff-legend")
    assert "+ added" in legend and "− removed" in legend and "~ changed" in legend
    assert explorer("text", testid="time-note") == "2 added, 2 removed, 2 changed"
    explorer("screenshot", path=str(ARTIFACTS / "explorer-compare.png"))

    # the address reproduces the view; the back button walks the views (compare -> T2 -> T4)
    address = explorer("url")
    explorer("open", url=address)
    assert told(explorer("graph")) == (nodes, rels)
    assert explorer("text", testid="diff-legend") == legend
    view = explorer("fill", testid="compare-to", value=str(T4))
    assert {k: c for k, (c, _) in told(view)[1].items() if c != "same"} == {(SRC_A, MID_X): "changed",
                                                                           (SRC_B, MID_X): "added"}
    view = explorer("back")
    assert told(view) == (nodes, rels)
    explorer("open", url=f"{base}/explorer/#field={urllib.parse.quote(MID_X)}")
    explorer("fill", testid="time-slider", value=3)
    explorer("fill", testid="time-slider", value=1)
    view = explorer("back")
    assert (fields(view), edges(view)) == as_of_view(base, T4)
    view = explorer("back")  # now: the explorer's own view (one hop each way)
    assert "at=" not in explorer("url") and explorer("text", testid="time-instant") == "now"
    assert fields(view) == {MID_X, SRC_A, SRC_B}
    assert explorer("errors") == []
