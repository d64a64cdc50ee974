"""One hop per field pair (issue 47, point 3): two jobs writing the same pair (a backfill and the daily job; Spark's
CTAS sending two) are one hop listing both edges, in the walk, its JSON, pages, the tables and the exports; each
job's own edge stays in the graph (as of, diffs and CDAP's lineage see them one by one).

On both backends (and the in-memory store where only :class:`LineageGraph` is asked); the renderers are pure."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from rich.console import Console

from fieldgraph.changes import ManualEdgeChange
from fieldgraph.graph.answers import Hop, encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest import pages
from fieldgraph.ingest.cli.render import hop_table
from fieldgraph.ingest.export import lineage_csv, lineage_dot, lineage_mermaid

from .conftest import WITH_MEMORY, ingest
from .test_openlineage import GOLD, T0, USERS, gold_output, run_event

DAY = 86_400_000
BACKFILL, DAILY = "openlineage:spark/backfill", "openlineage:spark/daily"


def job_event(name: str, at: str, run_id: str) -> dict[str, Any]:
    """The gold table's run event (``gold_output``) of the Spark job ``name`` at ``at``."""
    ev = run_event([gold_output()])
    ev["job"]["name"], ev["eventTime"], ev["run"]["runId"] = name, at, run_id
    return ev


def two_jobs(g: Any) -> None:
    """The backfill job writes gold.users at T0, the daily job the same pairs a day later."""
    ingest(g, job_event("backfill", "2025-01-01T00:00:00.000Z", "01a20188-88c7-7771-a233-a2a83086b501"))
    ingest(g, job_event("daily", "2025-01-02T00:00:00.000Z", "01a20188-88c7-7771-a233-a2a83086b502"))


def sources(h: Hop) -> list[str]:
    return [e["source"] for e in h.edges]


@WITH_MEMORY
def test_two_jobs_writing_a_pair_are_one_hop_listing_both(graph: Any) -> None:
    two_jobs(graph)
    assert graph.stats().data_derived_from_edges == 2 * (3 + 3)  # each job's own edges stay
    gid, uid = field_urn(GOLD, "id"), field_urn(USERS, "id")
    up = graph.upstream(gid, 1)
    assert sorted(h.field_path for h in up.hops) == ["country", "id"]  # each upstream field once
    for h in up.hops:
        assert sources(h) == [BACKFILL, DAILY] and h.edge is h.edges[0]
    (idhop,) = [h for h in up.hops if h.field_path == "id"]
    assert [e["subtype"] for e in idhop.edges] == ["IDENTITY", "IDENTITY"]
    assert [e["firstSeen"] for e in idhop.edges] == [T0, T0 + DAY]
    as_json = encode(up)["hops"]
    assert [[e["source"] for e in h["edges"]] for h in as_json] == [[BACKFILL, DAILY]] * 2
    assert all(h["edge"] == h["edges"][0] for h in as_json)
    down = graph.downstream(uid)
    assert [(h.field_path, sources(h)) for h in down.hops] == [("id", [BACKFILL, DAILY])]
    impact = graph.impact(USERS)
    assert len(impact.walk.hops) == 3 + 3 and all(len(h.edges) == 2 for h in impact.walk.hops)
    assert graph.path(uid, gid).path == (uid, gid)
    # as of between the two runs: one edge per pair, the backfill's; the daily job's alone when it ran later
    then = graph.upstream(gid, 1, as_of=T0 + DAY // 2)
    assert sorted((h.field_path, tuple(sources(h))) for h in then.hops) == \
        [("country", (BACKFILL,)), ("id", (BACKFILL,))]
    # pages count pairs: the whole answer and its pages of one
    whole = pages.first_page("lineage", {"field": gid}, encode(up), True, 10, T0)
    assert whole["total"] == 2 and len(whole["hops"]) == 2
    first = pages.first_page("impact", {"field": USERS}, encode(impact), True, 1, T0)
    assert first["total"] == 6 and [len(h["edges"]) for h in first["hops"]] == [2]


@WITH_MEMORY
def test_the_walk_diff_and_cdap_lineage_keep_each_jobs_edge(graph: Any) -> None:
    two_jobs(graph)
    gid = field_urn(GOLD, "id")
    diff = graph.diff_walk(gid, "upstream", 1, T0 + DAY // 2, T0 + 2 * DAY)
    changes = sorted((e.urn.rsplit(",", 1)[-1], e.change, (e.after or e.before or {}).get("source"))
                     for e in diff.edges)
    assert changes == [("country)", "added", DAILY), ("country)", "same", BACKFILL),
                       ("id)", "added", DAILY), ("id)", "same", BACKFILL)]
    lineage = graph.field_lineage(gid, "incoming")
    ops = sorted((op["transformation"], p["program"]) for op in lineage.operations for p in op["programs"])
    assert ops == [("Filter", BACKFILL), ("Filter", DAILY), ("Identity", BACKFILL), ("Identity", DAILY)]
    assert len(lineage.edges) == 2


@WITH_MEMORY
def test_a_hand_drawn_edge_beside_the_jobs_is_the_same_hop_shown_first(graph: Any) -> None:
    two_jobs(graph)
    gid, uid = field_urn(GOLD, "id"), field_urn(USERS, "id")
    graph.ingest([ManualEdgeChange.of(gid, uid, ts=T0 + 2 * DAY, by="ann", note="checked", origin="draw")])
    (h,) = [h for h in graph.upstream(gid, 1).hops if h.urn == uid]
    assert h.manual and sources(h) == ["manual", BACKFILL, DAILY] and h.edge["by"] == "ann"
    assert graph.drawn_edge(gid, uid).hop is not None
    assert graph.drawn_edge(gid, uid).to_json()["edge"]["by"] == "ann"


def rendered(table: Any) -> str:
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


@WITH_MEMORY
def test_the_table_and_the_exports_have_one_row_and_one_arrow_per_pair(graph: Any) -> None:
    two_jobs(graph)
    gid, uid = field_urn(GOLD, "id"), field_urn(USERS, "id")
    up = graph.upstream(gid, 1)
    rows = [line for line in rendered(hop_table(up, "t")).splitlines() if "shop.public.users" in line]
    assert len(rows) == 2
    assert any(r.rstrip(" │").endswith("Identity (2 sources)") for r in rows)
    assert any(r.rstrip(" │").endswith("Filter indirect (2 sources)") for r in rows)
    table = list(csv.DictReader(io.StringIO(lineage_csv(up))))
    assert [(r["fieldPath"], r["source"], r["transformation"], r["subtype"], r["relation"]) for r in table] == \
        [("country", f"{BACKFILL}; {DAILY}", "Filter", "FILTER", "derived"),
         ("id", f"{BACKFILL}; {DAILY}", "Identity", "IDENTITY", "derived")]
    dot = lineage_dot(up)
    arrows = [line for line in dot.splitlines() if " -> " in line]
    assert len(arrows) == 2 and all(f'tooltip="2 sources: {BACKFILL}, {DAILY}"' in a for a in arrows)
    assert any('label="Identity"' in a for a in arrows)
    mermaid = [line for line in lineage_mermaid(up).splitlines() if "-->" in line]
    assert len(mermaid) == 2 and any('|"Identity (2 sources)"|' in m for m in mermaid)
    # an edge drawn by hand beside the jobs: the same arrow and row, drawn as manual, naming the jobs too
    graph.ingest([ManualEdgeChange.of(gid, uid, ts=T0 + 2 * DAY, by="ann", note="checked", origin="draw")])
    up = graph.upstream(gid, 1)
    (row,) = [r for r in csv.DictReader(io.StringIO(lineage_csv(up))) if r["fieldPath"] == "id"]
    assert row["relation"] == "manual" and row["source"] == f"manual; {BACKFILL}; {DAILY}"
    (arrow,) = [a for a in lineage_dot(up).splitlines() if " -> " in a and "darkgreen" in a]
    assert f"drawn by hand by ann at 2025-01-03T00:00:00Z: checked; also stated by {BACKFILL}, {DAILY}" in arrow
    assert 'label="manual: ann; Identity"' in arrow
    (row,) = [r for r in rendered(hop_table(up, "t")).splitlines() if "manual" in r]
    assert row.rstrip(" │").endswith("manual (by ann); Identity (2 sources)")


@WITH_MEMORY
def test_the_http_reads_page_pairs(graph: Any) -> None:
    from fieldgraph.ingest.config import ServeConfig

    from .test_service import served

    two_jobs(graph)
    gid = field_urn(GOLD, "id")
    with served(graph, ServeConfig(rate_limit=0)) as service:
        first = service.ok("/api/v1/lineage/upstream", field=gid, depth=1, limit=1)
        assert first["total"] == 2 and first["totalExact"] and len(first["hops"]) == 1
        second = service.ok("/api/v1/lineage/upstream", field=gid, depth=1, limit=1, cursor=first["next"])
        assert second["next"] is None and len(second["hops"]) == 1
        for page in (first, second):
            (hop,) = page["hops"]
            assert [e["source"] for e in hop["edges"]] == [BACKFILL, DAILY] and hop["edge"] == hop["edges"][0]
        impact = service.ok("/api/v1/impact", name=USERS, limit=4)
        assert impact["total"] == 6 and all(len(h["edges"]) == 2 for h in impact["hops"])
        text = service.get("/api/v1/lineage/upstream", field=gid, depth=1, format="csv").text
        assert len(list(csv.DictReader(io.StringIO(text)))) == 2


def test_the_cli_shows_one_row_per_pair_and_pages_pairs(graph: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from typer.testing import CliRunner

    from fieldgraph.ingest.cli import app

    two_jobs(graph)
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    monkeypatch.setenv("COLUMNS", "200")
    gid = field_urn(GOLD, "id")

    def run(*args: str) -> str:
        res = CliRunner().invoke(app, ["lineage", "upstream", gid, "--depth", "1", *args])
        assert res.exit_code == 0, res.output
        return res.stdout

    table = run()
    assert "Identity (2 sources)" in table and "Filter indirect (2 sources)" in table
    assert "2 edges" in table and table.count("shop.public.users.") == 2
    page = json.loads(run("--json", "--limit", "1"))
    assert page["total"] == 2 and [e["source"] for e in page["hops"][0]["edges"]] == [BACKFILL, DAILY]
    assert "1 more edge (of 2)" in run("--limit", "1")
    assert len(list(csv.DictReader(io.StringIO(run("--format", "csv"))))) == 2
