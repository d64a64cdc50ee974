"""The lineage explorer on large lineage, in a real browser, on a real ``fieldgraph serve`` over each backend.

The shapes of ``tests/large_shapes.py``: a field with 5,000 downstream fields in 50 datasets (drawn as collapsed
dataset groups with counts, expanded a page at a time, collapsed again, searched), the same in one dataset (the
"N more…" paging), a 30-hop chain (paging by hop, to hop 30) and a dataset of 2,000 columns (its grouped view).
Each opens within ``OPEN_LIMIT_MS`` of the answer's arrival; what is not drawn is counted on screen, and the counts
add up to the answer's total. Screenshots land in ``test-artifacts/explorer-large-*.png``.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

import pytest

from fieldgraph.graph.plan import field_urn

from . import large_shapes as shapes
from .conftest import ingest
from .test_explorer import ARTIFACTS, api, explorer, fields, serving

pytestmark = pytest.mark.integration
__all__ = ["explorer"]  # the fixture this module uses from test_explorer

#: the issue's bound: each shape drawn within 2 s of its answer's arrival (a shared, noisy machine gets headroom
#: here; benchmarks/explorer.py reports the times themselves)
OPEN_LIMIT_MS = 2000 * 2


def groups(view: dict) -> dict[str, dict]:
    return {n["id"].removeprefix("group|"): n for n in view["nodes"] if n["kind"] == "group"}


def counts(explorer: Any) -> dict[str, int]:
    """The on-screen counts of the answer's fields: drawn, in collapsed groups, behind "more", past hop k."""
    got = explorer("attrs", testid="not-drawn")
    c = {k: int(got[k]) for k in ("total", "drawn", "grouped", "more", "beyond")}
    assert c["drawn"] + c["grouped"] + c["more"] + c["beyond"] == c["total"], got
    assert f"{c['total']} · {c['drawn']} drawn · {c['grouped']} in collapsed groups" in got["text"]
    return c


def open_field(explorer: Any, base: str, urn: str) -> dict:
    timed = explorer("timed", url=f"{base}/explorer/#field={urllib.parse.quote(urn)}")
    assert timed["error"] is None
    assert timed["ms"] < OPEN_LIMIT_MS, f"{urn} took {timed['ms']:.0f} ms to draw after its answer"
    return explorer("graph")


def distinct(base: str, direction: str, urn: str, depth: int) -> set[str]:
    return {h["urn"] for h in api(base, f"lineage/{direction}", field=urn, depth=depth)["hops"]}


def test_explorer_groups_collapses_expands_and_finds_in_a_5000_field_fanout(graph, explorer, tmp_path) -> None:
    ingest(graph, *shapes.fan_events(), *shapes.fan_one_events(), batch_events=200)
    with serving(graph, tmp_path) as base:
        answer = distinct(base, "downstream", shapes.FAN, 1)
        assert len(answer) == 5000 == len(graph.downstream(shapes.FAN, 1).hops)

        # 50 collapsed dataset groups, each with its field count and the edges into it; no field drawn but the focus
        view = open_field(explorer, base, shapes.FAN)
        assert fields(view) == {shapes.FAN}
        drawn_groups = groups(view)
        assert set(drawn_groups) == set(shapes.FAN_DATASETS)
        assert drawn_groups[shapes.FAN_DATASETS[0]]["label"] == "fan.target_00\nhive\n100 fields · 100 in · 0 out"
        aggregate = [e for e in view["edges"] if e["kind"] == "aggregate"]
        assert {(e["source"], e["target"], e["label"]) for e in aggregate} == {
            (shapes.FAN, f"group|{d}", "100 edges") for d in shapes.FAN_DATASETS}
        assert counts(explorer) == {"total": 5000, "drawn": 0, "grouped": 5000, "more": 0, "beyond": 0}
        explorer("screenshot", path=str(ARTIFACTS / "explorer-large-collapsed.png"))

        # a click on a group draws its next 50 fields (inside its dataset's box, the rest counted in the box)
        target = shapes.FAN_DATASETS[3]
        view = explorer("click", node=f"group|{target}")
        first = fields(view) - {shapes.FAN}
        assert len(first) == 50 and first <= answer and {u for u in first if target in u} == first
        assert {(shapes.FAN, f) for f in first} <= {(e["source"], e["target"]) for e in view["edges"]
                                                    if e["kind"] == "lineage"}
        inside = groups(view)[target]
        assert inside["parent"] == target and inside["label"] == "50 more fields…\n50 in · 0 out"
        assert counts(explorer) == {"total": 5000, "drawn": 50, "grouped": 4950, "more": 0, "beyond": 0}
        explorer("screenshot", path=str(ARTIFACTS / "explorer-large-expanded.png"))
        view = explorer("click", node=f"group|{target}")
        assert len(fields(view) - {shapes.FAN}) == 100 and target not in groups(view)

        # collapse it again (the dataset's actions, from the search results): back to one group of 100
        explorer("search", text="fan.target_03")
        explorer("pick", testid="result-dataset", urn=target)
        view = explorer("pick", testid="collapse-dataset", urn=target)
        assert fields(view) == {shapes.FAN}
        assert groups(view)[target]["label"] == "fan.target_03\nhive\n100 fields · 100 in · 0 out"
        assert counts(explorer)["grouped"] == 5000

        # find a field inside a collapsed group: drawn out of it, highlighted and centred
        hidden = field_urn(shapes.FAN_DATASETS[7], "f07_042")
        view = explorer("find", text="f07_042")
        assert view["found"] == hidden and view["hits"].startswith("1 of 1")
        node = next(n for n in view["nodes"] if n["id"] == hidden)
        assert "found" in node["classes"] and node["parent"] == shapes.FAN_DATASETS[7]
        assert counts(explorer) == {"total": 5000, "drawn": 1, "grouped": 4999, "more": 0, "beyond": 0}
        assert groups(view)[shapes.FAN_DATASETS[7]]["label"] == "99 more fields…\n99 in · 0 out"
        explorer("screenshot", path=str(ARTIFACTS / "explorer-large-search.png"))
        # a dataset's name finds its collapsed group first, then its fields (the next Enter)
        view = explorer("find", text="fan.target_12")
        assert view["found"] == f"group|{shapes.FAN_DATASETS[12]}" and view["hits"] == "1 of 101"
        view = explorer("find", text="fan.target_12")
        assert view["found"] == field_urn(shapes.FAN_DATASETS[12], "f12_000") and view["hits"].startswith("2 of 101")
        assert counts(explorer)["drawn"] == 2

        # zoom and pan stay fluid: frame times while zooming and dragging (reported by benchmarks/explorer.py)
        frames = explorer("frames", steps=10)
        assert len(frames) > 10 and sorted(frames)[len(frames) // 2] < 250, frames

        # 5,000 fields in one dataset: the "N more…" paging, its count on screen; a search draws one from behind it
        view = open_field(explorer, base, shapes.FAN_ONE)
        assert len(fields(view) - {shapes.FAN_ONE}) == 25 and not groups(view)
        assert [n["label"] for n in view["nodes"] if n["kind"] == "more"] == ["4975 more…"]
        assert counts(explorer) == {"total": 5000, "drawn": 25, "grouped": 0, "more": 4975, "beyond": 0}
        view = explorer("find", text="c4999")
        assert view["found"] == field_urn(shapes.FAN_ONE_TARGET, "c4999")
        assert [n["label"] for n in view["nodes"] if n["kind"] == "more"] == ["4974 more…"]
        assert counts(explorer) == {"total": 5000, "drawn": 26, "grouped": 0, "more": 4974, "beyond": 0}
        # the next hops: past 60 new fields they join collapsed groups (here the rest of the one dataset)
        view = explorer("button", testid="next-hops")
        assert not [n for n in view["nodes"] if n["kind"] == "more"]
        assert groups(view)[shapes.FAN_ONE_TARGET]["label"] == "4974 more fields…\n4974 in · 0 out"
        assert counts(explorer) == {"total": 5000, "drawn": 26, "grouped": 4974, "more": 0, "beyond": 0}
        assert explorer("errors") == []


def test_explorer_pages_a_30_hop_chain_and_groups_a_2000_column_dataset(graph, explorer, tmp_path) -> None:
    ingest(graph, *shapes.chain_events(), *shapes.wide_events(), batch_events=200)
    with serving(graph, tmp_path) as base:
        chain = [field_urn(d, "x") for d in shapes.CHAIN_DATASETS]
        view = open_field(explorer, base, shapes.CHAIN)
        assert fields(view) == set(chain[:2])
        assert explorer("attrs", testid="hops")["hops"] == "1"
        assert counts(explorer) == {"total": 1, "drawn": 1, "grouped": 0, "more": 0, "beyond": 0}

        # the next hops: 1..6 drawn, hop 7 fetched and counted, not drawn
        view = explorer("button", testid="next-hops")
        assert fields(view) == set(chain[:7])
        assert {(e["source"], e["target"]) for e in view["edges"] if e["kind"] == "lineage"} == set(
            zip(chain[:6], chain[1:7], strict=True))
        assert counts(explorer) == {"total": 7, "drawn": 6, "grouped": 0, "more": 0, "beyond": 1}
        assert "1 field at hop 7" in explorer("attrs", testid="hops")["text"]
        explorer("screenshot", path=str(ARTIFACTS / "explorer-large-hops.png"))
        pages = 1
        while chain[-1] not in fields(view) and pages < 10:  # 5 hops a click: hop 30 on the sixth
            view = explorer("button", testid="next-hops")
            pages += 1
            assert fields(view) == set(chain[:min(2 + 5 * pages, 31)])
        assert fields(view) == set(chain) and pages == 6
        assert "(all)" in explorer("attrs", testid="hops")["text"]
        assert len(distinct(base, "downstream", shapes.CHAIN, 100)) == 30
        assert counts(explorer) == {"total": 30, "drawn": 30, "grouped": 0, "more": 0, "beyond": 0}
        explorer("screenshot", path=str(ARTIFACTS / "explorer-large-hop30.png"))

        # a dataset of 2,000 columns, drawn grouped: it and its neighbours collapsed, the field edges counted
        explorer("open", url=f"{base}/explorer/")
        explorer("search", text="wide.table")
        explorer("pick", testid="result-dataset", urn=shapes.WIDE)
        timed = explorer("timedClick", testid="open-dataset", urn=shapes.WIDE)
        assert timed["ms"] < OPEN_LIMIT_MS
        view = explorer("graph")
        drawn_groups = groups(view)
        assert set(drawn_groups) == {shapes.WIDE_SOURCE, shapes.WIDE, shapes.WIDE_REPORT}
        assert drawn_groups[shapes.WIDE]["label"] == "wide.table\nhive\n2000 fields · 2000 in · 2000 out"
        assert {(e["source"], e["target"], e["label"]) for e in view["edges"]} == {
            (f"group|{shapes.WIDE_SOURCE}", f"group|{shapes.WIDE}", "2000 edges"),
            (f"group|{shapes.WIDE}", f"group|{shapes.WIDE_REPORT}", "2000 edges")}
        assert counts(explorer) == {"total": 2000, "drawn": 0, "grouped": 2000, "more": 0, "beyond": 0}
        view = explorer("click", node=f"group|{shapes.WIDE}")
        assert len(fields(view)) == 50
        assert counts(explorer) == {"total": 2000, "drawn": 50, "grouped": 1950, "more": 0, "beyond": 0}
        view = explorer("find", text="col_1999")
        assert view["found"] == field_urn(shapes.WIDE, "col_1999")
        explorer("screenshot", path=str(ARTIFACTS / "explorer-large-dataset.png"))
        assert explorer("errors") == []
