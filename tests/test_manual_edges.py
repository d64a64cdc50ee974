"""Lineage drawn by hand (``fieldgraph edge add|remove``, ``POST /api/v1/edges``): no aspect replacement, delete,
replay or job run ends a manual edge, only its removal, which keeps its interval for as-of questions; placeholders,
tag propagation, the command and the HTTP endpoints. On the in-memory store and both backends."""

from __future__ import annotations

import getpass
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.changes import (
    AspectDelete,
    Change,
    DataJobChange,
    DatasetDelete,
    EdgeProps,
    FieldEdge,
    JobLineageChange,
    ManualEdgeChange,
)
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT, EXIT_NOT_FOUND
from fieldgraph.ingest.config import ServeConfig
from fieldgraph.ingest.sources import decode_event

from .conftest import WITH_MEMORY, column, ds, lineage_event, mcp, schema_event, sf

A, B, C = ds("db.a"), ds("db.b"), ds("db.c")
BZ, BW = field_urn(B, "z"), field_urn(B, "w")
AX, AY = field_urn(A, "x"), field_urn(A, "y")
JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,etl,PROD),load_b)"


def changes(*events: dict[str, Any]) -> list[Change]:
    return [c for i, e in enumerate(events) for c in decode_event(e, f"test:{i}")]


def draw(down: str, up: str, ts: int, **kw: Any) -> ManualEdgeChange:
    return ManualEdgeChange.of(down, up, ts=ts, origin=f"draw@{ts}", **kw)


def remove(down: str, up: str, ts: int, by: str | None = None) -> ManualEdgeChange:
    return ManualEdgeChange.of(down, up, ts=ts, by=by, remove=True, origin=f"remove@{ts}")


def manual_hops(g: Any, field: str, as_of: int | None = None) -> dict[str, dict[str, Any]]:
    """The manual edges into ``field`` (upstream URN -> edge properties), now or as of ``as_of``."""
    return {h.urn: dict(h.edge) for h in g.upstream(field, 1, as_of=as_of).hops if h.manual}


def sources(g: Any, field: str, as_of: int | None = None) -> set[tuple[str, str]]:
    """(upstream URN, source) of the edges into ``field`` (each edge of a hop: one per pair of fields)."""
    return {(h.urn, e["source"]) for h in g.upstream(field, 1, as_of=as_of).hops for e in h.edges}


def job_run(ts: int, up: str = AY) -> JobLineageChange:
    edge = FieldEdge(BZ, up, EdgeProps("openlineage", transformation="IDENTITY"))
    return JobLineageChange(B, "airflow.load_b", "openlineage", run=f"run{ts}", edges=(edge,), ts=ts,
                            origin=f"run@{ts}")


@pytest.fixture
def drawn(graph: Any) -> Any:
    """Schemas of db.a (x, y) and db.b (z, w); drawn by hand at 10: b.z <- a.x (alice) and b.w <- a.y."""
    graph.ingest(changes(schema_event(A, ["x", "y"], 1), schema_event(B, ["z", "w"], 1)))
    graph.ingest([draw(BZ, AX, 10, by="alice", note="from the wiki", transformation="MULTIPLY"),
                  draw(BW, AY, 10, by="alice")])
    return graph


def assert_drawn(g: Any, as_of: int | None = None) -> None:
    """Both edges drawn at 10 hold (now, or as of ``as_of``), as they were drawn."""
    z, w = manual_hops(g, BZ, as_of), manual_hops(g, BW, as_of)
    assert set(z) == {AX} and set(w) == {AY}, (z, w)
    assert z[AX]["validFrom"] == 10 and z[AX]["by"] == "alice" and z[AX]["note"] == "from the wiki"
    assert z[AX]["source"] == z[AX]["sourceFormat"] == "manual" and z[AX]["transformation"] == "MULTIPLY"
    assert "validTo" not in z[AX] and w[AY]["validFrom"] == 10


# --- what no ingestion ends ------------------------------------------------------------------------------------


@WITH_MEMORY
def test_manual_edges_hold_through_lineage_replaced_three_times_and_deleted(drawn: Any) -> None:
    g = drawn
    for ts, ups in ((20, [AY]), (30, [AX, AY]), (40, [AX])):  # the same pair as a manual edge, too
        g.ingest(changes(lineage_event(B, [(BZ, ups), (BW, [AX])], ts)))
        assert_drawn(g)
        assert {u for u, s in sources(g, BZ) if s == "upstreamLineage"} == set(ups)
    g.ingest(changes(mcp(B, "upstreamLineage", None, 50, change="DELETE")))
    assert_drawn(g)
    assert sources(g, BZ) == {(AX, "manual")} and sources(g, BW) == {(AY, "manual")}
    # a late version (replayed into the aspect's timeline) and an unstamped delete: still there
    g.ingest(changes(lineage_event(B, [(BZ, [AY])], 35)))
    unstamped = {k: v for k, v in mcp(B, "upstreamLineage", None, 0, change="DELETE").items() if k != "systemMetadata"}
    g.ingest(changes(unstamped))
    assert_drawn(g)
    # several versions of the aspect in one batch (replayed), and the RFC's aspect
    g.ingest(changes(lineage_event(B, [(BZ, [AY])], 60), lineage_event(B, [(BZ, [AX])], 70),
                     mcp(B, "datasetUpstreamLineage", {"fieldMappings": [
                         {"sourceFields": [AY], "destinationField": BZ, "transformationFunction": "x.Identity"}]}, 65),
                     mcp(B, "datasetUpstreamLineage", None, 75, change="DELETE")))
    assert_drawn(g)
    for t in (10, 25, 45, 55, 72, 80):
        assert_drawn(g, as_of=t)
    assert manual_hops(g, BZ, as_of=9) == {}


@WITH_MEMORY
def test_manual_edges_hold_through_job_runs_data_jobs_and_a_dataset_delete(drawn: Any) -> None:
    g = drawn
    g.ingest([job_run(20), job_run(30, AX)])
    assert_drawn(g)
    assert (AX, "airflow.load_b") in sources(g, BZ)
    g.ingest([AspectDelete(B, "jobLineage", 40, "jobs-deleted"), job_run(35)])  # a delete and a late run: replayed
    assert_drawn(g)
    assert sources(g, BZ) == {(AX, "manual")}
    edge = FieldEdge(BZ, AX, EdgeProps("datahub", transformation="IDENTITY"))
    g.ingest([DataJobChange(JOB, edges=(edge,), outputs=(B,), ts=45, origin="job@45")])
    assert (AX, JOB) in sources(g, BZ)
    g.ingest([DataJobChange(JOB, outputs=(B,), ts=46, origin="job@46")])  # the job's lineage deleted
    assert_drawn(g)
    g.ingest([DatasetDelete(B, 50, "b-deleted")])
    assert_drawn(g)
    assert sources(g, BZ) == {(AX, "manual")}
    g.ingest(changes(schema_event(B, ["z"], 60)))  # the dataset back, without w: w is removed, its edge holds
    assert_drawn(g)
    for t in (15, 32, 45, 55):
        assert_drawn(g, as_of=t)


# --- drawing and removing ---------------------------------------------------------------------------------------


@WITH_MEMORY
def test_remove_keeps_the_history_and_drawing_again_opens_a_new_interval(drawn: Any) -> None:
    g = drawn
    g.ingest([draw(BZ, AX, 15, by="bob", note="again")])  # it holds: nothing changes
    assert_drawn(g)
    g.ingest([remove(BZ, AX, 20, by="carol")])
    assert manual_hops(g, BZ) == {} and not g.drawn_edge(BZ, AX).holds
    past = manual_hops(g, BZ, as_of=15)[AX]  # as of before the removal: it held
    assert past["validFrom"] == 10 and past["validTo"] == 20 and past["removedBy"] == "carol"
    assert past["by"] == "alice" and manual_hops(g, BZ, as_of=20) == {}
    assert set(manual_hops(g, BW)) == {AY}  # the other edge is not touched
    g.ingest([draw(BZ, AX, 18, by="late")])  # older than the removal: the removal ended it already
    assert manual_hops(g, BZ) == {} and manual_hops(g, BZ, as_of=19)[AX]["by"] == "alice"
    g.ingest([draw(BZ, AX, 30, by="dave")])  # after the removal: a new interval
    now = g.drawn_edge(BZ, AX)
    assert now.holds and now.hop is not None and now.hop.edge["validFrom"] == 30 and now.hop.edge["by"] == "dave"
    assert manual_hops(g, BZ, as_of=25) == {} and manual_hops(g, BZ, as_of=12)[AX]["validTo"] == 20
    g.ingest([remove(BZ, AX, 25)])  # older than the drawing it meets (late): it holds on
    assert g.drawn_edge(BZ, AX).holds
    assert json.loads(json.dumps(now.to_json()))["edge"]["by"] == "dave"


@WITH_MEMORY
def test_a_batch_that_draws_and_removes_one_edge_keeps_each_interval(graph: Any) -> None:
    graph.ingest(changes(schema_event(A, ["x"], 1), schema_event(B, ["z"], 1)))
    graph.ingest([draw(BZ, AX, 10), remove(BZ, AX, 20), draw(BZ, AX, 30, by="erin"), draw(BW, AX, 10)])
    assert set(manual_hops(graph, BZ)) == {AX} and manual_hops(graph, BZ)[AX]["validFrom"] == 30
    assert manual_hops(graph, BZ, as_of=15)[AX]["validTo"] == 20 and manual_hops(graph, BZ, as_of=25) == {}
    with pytest.raises(ValueError, match="does not derive from itself"):
        graph.write([draw(BZ, BZ, 40)])


@WITH_MEMORY
def test_references_to_unknown_fields_are_placeholders_a_schema_resolves(graph: Any) -> None:
    graph.ingest(changes(schema_event(B, ["z"], 1)))
    later = ds("db.later")
    graph.ingest([draw(BZ, sf(later, "q"), 10, by="frank"), draw(sf(C, "v"), sf(later, "q"), 10)])
    (hop,) = graph.upstream(BZ, 1).hops
    assert hop.manual and hop.placeholder and hop.urn == field_urn(later, "q")
    assert graph.drawn_edge(field_urn(C, "v"), sf(later, "q")).holds  # into a placeholder too
    graph.ingest(changes(mcp(later, "schemaMetadata", {
        "schemaName": "later", "platform": "urn:li:dataPlatform:hive", "version": 0, "hash": "",
        "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
        "fields": [column("[version=2.0].[type=Rec].[type=string].q")]}, 5)))
    (hop,) = graph.upstream(BZ, 1).hops
    assert hop.manual and not hop.placeholder and hop.edge["by"] == "frank" and hop.edge["validFrom"] == 10
    assert hop.urn == field_urn(later, "[version=2.0].[type=Rec].[type=string].q")
    assert {u.urn for u in graph.unresolved()} == {field_urn(C, "v")}


@WITH_MEMORY
def test_tags_flow_along_manual_edges_but_not_masking_ones(graph: Any) -> None:
    graph.ingest(changes(schema_event(A, ["x", "y"], 1), schema_event(B, ["z", "w"], 1)))
    graph.tag(AX, add=["PII"])
    graph.tag(AY, add=["Finance"])
    graph.ingest([draw(BZ, AX, 10), draw(BW, AY, 10, transformation="HASH")])
    inherited = graph.tags(BZ).inherited
    assert [(i.label, i.from_urn, i.distance) for i in inherited] == [("PII", AX, 1)]
    assert graph.tags(BW).inherited == ()  # a hash masks: tags stop there
    assert {f.urn for f in graph.tagged("PII").fields} == {AX, BZ}
    assert {f.urn for f in graph.tagged("Finance").fields} == {AY}
    assert [i.label for i in graph.tags(BZ, as_of=11).inherited] == ["PII"]
    assert graph.tags(BZ, as_of=9).inherited == ()


# --- the command ------------------------------------------------------------------------------------------------


@pytest.fixture
def cli(graph: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()
    graph.ingest(changes(schema_event(A, ["x", "y"], 1), schema_event(B, ["z", "w"], 1)))
    yield lambda *args: runner.invoke(app, list(args))


@pytest.mark.integration
def test_the_edge_command_draws_and_removes(cli: Any, graph: Any) -> None:
    res = cli("edge", "add", sf(B, "z"), sf(A, "x"), "--note", "by hand", "--by", "alice", "--at",
              "2025-01-01T00:00:00Z")
    assert res.exit_code == 0, res.output
    assert "drew db.b.z <- db.a.x by alice (by hand)" in " ".join(res.stdout.split())
    res = cli("edge", "add", BZ, AX, "--json")  # holds already: as it was
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["holds"] and out["edge"]["by"] == "alice" and out["edge"]["validFrom"] == 1735689600000
    res = cli("edge", "add", sf(B, "w"), sf(A, "y"), "--transformation", "SUM", "--json")
    edge = json.loads(res.stdout)["edge"]
    assert edge["by"] == getpass.getuser() and edge["subtype"] == "AGGREGATION"  # the user running it
    res = cli("edge", "remove", BZ, AX, "--by", "bob", "--at", "2025-02-01", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout) == {"downstream": BZ, "upstream": AX, "holds": False,
                                                            "edge": None}
    past = manual_hops(graph, BZ, as_of=1735689600000 + 1)[AX]
    assert past["removedBy"] == "bob" and past["validTo"] == 1738368000000
    res = cli("edge", "add", BZ, AX, "--at", "2025-01-15")  # older than the removal: not drawn again
    assert res.exit_code == 0 and "not drawn: db.b.z <- db.a.x was removed after" in " ".join(res.stdout.split())
    res = cli("edge", "remove", BZ, AX)
    assert res.exit_code == EXIT_NOT_FOUND and "no edge drawn by hand holds" in res.stderr
    res = cli("edge", "add", "db.b.z", AX)
    assert res.exit_code == EXIT_BAD_INPUT and "malformed URN" in res.stderr
    res = cli("edge", "add", BZ, AX, "--at", "someday")
    assert res.exit_code == EXIT_BAD_INPUT and "--at 'someday'" in res.stderr


# --- over HTTP ---------------------------------------------------------------------------------------------------


@WITH_MEMORY
@pytest.mark.integration
def test_the_edges_endpoints_need_the_token_and_record_who(graph: Any, tmp_path: Path) -> None:
    from .test_service import AUTH, TOKEN, served

    graph.ingest(changes(schema_event(A, ["x", "y"], 1), schema_event(B, ["z", "w"], 1)))
    config = ServeConfig(token=TOKEN, rate_limit=0, rejects=tmp_path / "rejects.jsonl")
    body = {"downstream": sf(B, "z"), "upstream": sf(A, "x"), "note": "over HTTP", "at": "2025-01-01T00:00:00Z"}
    with served(graph, config) as s:
        assert s.http.post("/api/v1/edges", json=body).status_code == 401
        assert s.http.post("/api/v1/edges/remove", json=body).status_code == 401
        r = s.http.post("/api/v1/edges", json=body, headers=AUTH)
        assert r.status_code == 201, r.text
        got = r.json()
        assert got["holds"] and got["downstream"] == BZ and got["upstream"] == AX
        assert got["edge"]["by"] == "api" and got["edge"]["note"] == "over HTTP"
        assert got["edge"]["validFrom"] == 1735689600000 and got["edge"]["sourceFormat"] == "manual"
        r = s.http.post("/api/v1/edges", json={"downstream": BW, "upstream": AY, "by": "ci-bot", "at": 5},
                        headers=AUTH)
        assert r.status_code == 201 and r.json()["edge"]["by"] == "ci-bot"
        hops = s.ok("/api/v1/lineage/upstream", field=BZ, depth=1)["hops"]
        assert [h["edge"]["source"] for h in hops] == ["manual"]
        r = s.http.post("/api/v1/edges/remove", json={"downstream": BZ, "upstream": AX, "by": "gina",
                                                      "at": 1735689600000 + 10}, headers=AUTH)
        assert r.status_code == 200 and r.json()["holds"] is False, r.text
        then = s.ok("/api/v1/lineage/upstream", field=BZ, depth=1, as_of=1735689600000 + 5)["hops"]
        assert [(h["edge"]["removedBy"], h["edge"]["validTo"]) for h in then] == [("gina", 1735689600000 + 10)]
        r = s.http.post("/api/v1/edges/remove", json={"downstream": BZ, "upstream": AX}, headers=AUTH)
        assert r.status_code == 404 and r.json()["kind"] == "NotFoundError"
        r = s.http.post("/api/v1/edges", json={"downstream": BZ}, headers=AUTH)
        assert r.status_code == 422 and "no 'upstream'" in r.json()["error"]
        r = s.http.post("/api/v1/edges", json={"downstream": BZ, "upstream": AX, "colour": "red"}, headers=AUTH)
        assert r.status_code == 422 and "unknown key 'colour'" in r.json()["error"]
        r = s.http.post("/api/v1/edges/remove", json={"downstream": "nope", "upstream": AX}, headers=AUTH)
        assert r.status_code == 400 and "malformed URN" in r.json()["error"]
        assert {"/api/v1/edges", "/api/v1/edges/remove"} <= set(s.ok("/openapi.json")["paths"])
    rejects = [json.loads(line) for line in config.rejects.read_text().splitlines()]
    assert [r["event"] for r in rejects] == [{"downstream": BZ}, {"downstream": BZ, "upstream": AX, "colour": "red"}]
