"""Unused fields (``fieldgraph unused``, ``GET /api/v1/unused``, :meth:`LineageGraph.unused`): the listed fields no
lineage edge reads, now and as of an instant, by dataset, platform or everywhere, with when each was last read; on
both backends and the in-memory store. Placeholders are never listed; removed fields only as of an instant when they
were listed; a field whose only readers a read scope hides is still read (not listed, its readers not named)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.errors import InputError, NotFoundError
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.graph.scope import Scope
from fieldgraph.graph.scoped import scoped
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT, EXIT_NOT_FOUND
from fieldgraph.ingest.config import ServeConfig, ServeToken

from .conftest import WITH_MEMORY, ds, ingest, lineage_event, mcp, schema_event, sf
from .test_explorer import explorer  # noqa: F401  (the Chromium driver, one per module)

pytestmark = pytest.mark.integration

SRC, MID, WHOLE, MID2 = ds("u.src"), ds("u.mid"), ds("u.whole"), ds("u.mid2")
TOPIC = ds("u.topic", "kafka")


def whole_dataset_event(urn: str, down: str, up_dataset: str, ts: int) -> dict[str, Any]:
    """``down`` derived from the whole dataset ``up_dataset`` (fineGrainedLineages with upstreamType DATASET)."""
    return mcp(urn, "upstreamLineage", {"upstreams": [], "fineGrainedLineages": [
        {"upstreamType": "DATASET", "upstreams": [up_dataset], "downstreamType": "FIELD", "downstreams": [down],
         "transformOperation": "IDENTITY"}]}, ts)


def history(g: Any) -> Any:
    """src [a b c d] at 10 (c removed at 40); mid.x reads src.a from 20 on, mid.y reads src.b and the reference
    src.zz (a placeholder) over [20, 30); mid2.z reads the whole of whole [w1 w2] from 20 on; a kafka topic [k]."""
    ingest(g, schema_event(SRC, ["a", "b", "c", "d"], 10), schema_event(MID, ["x", "y"], 10),
           schema_event(WHOLE, ["w1", "w2"], 10), schema_event(MID2, ["z"], 10), schema_event(TOPIC, ["k"], 10),
           lineage_event(MID, [(sf(MID, "x"), [sf(SRC, "a")]), (sf(MID, "y"), [sf(SRC, "b"), sf(SRC, "zz")])], 20),
           whole_dataset_event(MID2, sf(MID2, "z"), WHOLE, 20),
           lineage_event(MID, [(sf(MID, "x"), [sf(SRC, "a")])], 30),
           schema_event(SRC, ["a", "b", "d"], 40, version=1))
    return g


def listed(answer: Any) -> list[tuple[str, str, int | None]]:
    return [(f.dataset, f.field_path, f.last_read) for f in answer.fields]


@WITH_MEMORY
def test_unused_now_and_as_of_an_instant(graph: Any) -> None:
    g = history(graph)
    assert listed(g.unused()) == [(MID, "x", None), (MID, "y", None), (MID2, "z", None),
                                  (SRC, "b", 30), (SRC, "d", None), (TOPIC, "k", None)]
    # a field one reads (a), or whose whole dataset one reads (w1, w2), is used; c removed and zz a placeholder
    assert listed(g.unused(SRC)) == [(SRC, "b", 30), (SRC, "d", None)]
    assert listed(g.unused(WHOLE)) == []
    assert listed(g.unused(SRC, as_of=25)) == [(SRC, "c", None), (SRC, "d", None)]  # b read then, c listed then
    assert listed(g.unused(SRC, as_of=35)) == [(SRC, "b", 30), (SRC, "c", None), (SRC, "d", None)]
    assert listed(g.unused(SRC, as_of=30)) == [(SRC, "b", 30), (SRC, "c", None), (SRC, "d", None)]  # [from, to)
    assert listed(g.unused(SRC, as_of=45)) == listed(g.unused(SRC))
    assert listed(g.unused(as_of=5)) == []  # no schema listed anything yet
    assert listed(g.unused(WHOLE, as_of=15)) == [(WHOLE, "w1", None), (WHOLE, "w2", None)]  # before mid2 read it
    kafka = g.unused(platform="kafka")
    assert listed(kafka) == [(TOPIC, "k", None)] and kafka.platform == "kafka"
    assert listed(g.unused(platform="urn:li:dataPlatform:kafka")) == listed(kafka)
    assert listed(g.unused(platform="hive", as_of=25)) == [*[(MID, p, None) for p in ("x", "y")], (MID2, "z", None),
                                                          (SRC, "c", None), (SRC, "d", None)]
    assert listed(g.unused(TOPIC, platform="hive")) == []  # both filters hold
    assert encode(g.unused(SRC, as_of=35)) == {
        "dataset": SRC, "platform": None, "asOf": 35, "fields": [
            {"urn": field_urn(SRC, p), "dataset": SRC, "fieldPath": p, "simplePath": p, "type": "StringType",
             "nativeDataType": "string", "lastRead": t} for p, t in (("b", 30), ("c", None), ("d", None))]}


@WITH_MEMORY
def test_a_renamed_field_read_under_its_old_name_is_used(graph: Any) -> None:
    """A renamed field is one field (docs/how-to/renames.md): a reader whose edge into the old name still holds reads
    it, so the new name is not unused; a reader of the old name whose lineage moved on reads it no more."""
    from .test_renames import D, E, col, fu, reads, schema

    a, b, r = fu(D, "a"), fu(D, "b"), fu(E, "r")
    graph.ingest([schema(D, 10, "a", "c"), schema(E, 10, "r"), reads(E, 10, ("r", a))])
    graph.ingest([schema(D, 20, col("b", "a"), "c")])  # a renamed to b at 20; the mart still reads a
    assert [f.field_path for f in graph.unused(D).fields] == ["c"]
    assert [f.field_path for f in graph.unused(D, as_of=25).fields] == ["c"]
    graph.ingest([reads(E, 30, ("r", fu(D, "c")))])  # the mart reads c from 30 on: nothing reads a (nor b)
    assert [f.field_path for f in graph.unused(D).fields] == ["b"]
    assert [f.field_path for f in graph.unused(D, as_of=25).fields] == ["c"]  # as it was then
    assert b not in {h.urn for h in graph.impact(r).walk.hops}


@WITH_MEMORY
def test_bad_input_names_what_is_wrong(graph: Any) -> None:
    g = history(graph)
    with pytest.raises(NotFoundError, match=r"dataset urn:li:dataset:\(urn:li:dataPlatform:hive,u.none,PROD\) is "
                                            "not in the graph"):
        g.unused(ds("u.none"))
    for bad in ("a,b", "", "urn:li:dataset:x"):
        with pytest.raises(InputError, match=f"platform {bad!r}: not a platform name"):
            g.unused(platform=bad)
    with pytest.raises(InputError):
        g.unused("not-a-urn")


@WITH_MEMORY
def test_a_field_read_only_by_hidden_readers_is_used(graph: Any) -> None:
    """The scope holds src and whole: src.a's reader (mid) and whole's (mid2) are hidden; both stay used, and no
    answer names a hidden dataset."""
    g = history(graph)
    view = scoped(g, Scope((f"{SRC[:-6]}", f"{WHOLE[:-6]}")))
    assert listed(view.unused()) == [(SRC, "b", 30), (SRC, "d", None)]
    assert listed(view.unused(as_of=25)) == [(SRC, "c", None), (SRC, "d", None)]
    text = json.dumps(encode(view.unused()))
    assert "u.mid" not in text and "kafka" not in text
    with pytest.raises(NotFoundError, match="is not in the graph"):
        view.unused(MID)  # a hidden dataset is not in the graph
    assert listed(view.unused(platform="kafka")) == []


# ---- the command ----


@pytest.fixture
def cli(graph: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run fieldgraph on the test's graph: by URI on the real backends, the graph itself on the in-memory store."""
    if graph.uri is None:
        @contextlib.contextmanager
        def same(*_: Any, **__: Any) -> Iterator[Any]:
            yield graph

        monkeypatch.setattr("fieldgraph.ingest.cli.unused.open_graph", same)
    else:
        monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()

    def run(*args: str, code: int = 0) -> Any:
        res = runner.invoke(app, ["unused", *args])
        assert res.exit_code == code, (res.exit_code, res.output, res.stderr if res.stderr_bytes else "")
        return res

    return run


@WITH_MEMORY
def test_the_command(graph: Any, cli: Any) -> None:
    history(graph)
    table = cli().stdout
    assert "6 unused fields in the graph" in table and "never" in table
    assert "1970-01-01T00:00:00.030Z" in table  # src.b, last read at 30 ms
    assert json.loads(cli("--json").stdout) == encode(graph.unused())
    assert json.loads(cli(SRC, "--as-of", "25", "--json").stdout) == encode(graph.unused(SRC, as_of=25))
    assert "1 unused field in platform kafka" in cli("--platform", "kafka").stdout
    first = json.loads(cli("--limit", "2", "--json").stdout)
    assert [f["fieldPath"] for f in first["fields"]] == ["x", "y"] and first["total"] == 6 and first["next"]
    trimmed = cli("--limit", "2").stdout
    assert "4 more fields (of 6)" in trimmed and "u.topic" not in trimmed
    assert "not in the graph" in cli(ds("u.none"), code=EXIT_NOT_FOUND).output
    assert "not a platform name" in cli("--platform", "a,b", code=EXIT_BAD_INPUT).output


# ---- the endpoint ----

SECRET = "unused-src-token-0123456789"


@pytest.fixture
def served(graph: Any, tmp_path: Path) -> Iterator[Any]:
    from .test_service import TOKEN, start

    token = ServeToken("src", hashlib.sha256(SECRET.encode()).hexdigest(), Scope((SRC[:-6],)), Scope())
    config = ServeConfig(token=TOKEN, tokens=(token,), rate_limit=0, rejects=tmp_path / "rejects.jsonl")
    history(graph)
    yield from start(graph, config)


def pages(s: Any, secret: str, **params: Any) -> list[dict[str, Any]]:
    """Every page of the answer, following ``next``."""
    got: list[dict[str, Any]] = []
    while True:
        r = s.http.get("/api/v1/unused", params=params, headers={"Authorization": f"Bearer {secret}"})
        assert r.status_code == 200, r.text
        got.append(r.json())
        if not got[-1]["next"]:
            return got
        params = {**params, "cursor": got[-1]["next"]}


@WITH_MEMORY
def test_the_endpoint_pages_and_scopes(served: Any) -> None:
    from .test_service import TOKEN

    s, g = served, served.graph
    whole = pages(s, TOKEN, limit=4)
    assert [len(p["fields"]) for p in whole] == [4, 2] and {p["total"] for p in whole} == {6}
    assert [f for p in whole for f in p["fields"]] == encode(g.unused())["fields"]
    assert whole[0]["totalExact"] is True and whole[0]["asOf"] == whole[1]["asOf"]  # pinned at the first page
    default = pages(s, TOKEN)  # always paged: 100 a page unless limit says
    assert len(default) == 1 and default[0]["total"] == 6
    then = pages(s, TOKEN, dataset=SRC, as_of="35", limit=1)
    assert [p["fields"][0]["fieldPath"] for p in then] == ["b", "c", "d"] and then[0]["fields"][0]["lastRead"] == 30
    assert all(p["asOf"] == 35 and p["dataset"] == SRC for p in then)
    assert pages(s, TOKEN, platform="kafka")[0]["total"] == 1
    # the src token: src's fields only; src.a is read by the hidden mid.x, so it is not unused, and mid is not named
    mine = pages(s, SECRET, limit=1)
    assert [f["fieldPath"] for p in mine for f in p["fields"]] == ["b", "d"]
    assert "u.mid" not in json.dumps(mine)
    auth = {"Authorization": f"Bearer {SECRET}"}
    assert s.http.get("/api/v1/unused", params={"dataset": MID}, headers=auth).status_code == 404
    bad = s.http.get("/api/v1/unused", params={"platform": "a,b"}, headers=auth)
    assert bad.status_code == 400 and "not a platform name" in bad.text
    other = s.http.get("/api/v1/unused", params={"dataset": SRC, "cursor": whole[0]["next"]}, headers=auth)
    assert other.status_code == 400 and "another query" in other.text


# ---- the explorer ----


def test_the_explorer_marks_and_lists_the_unused_fields(graph: Any, tmp_path: Path, explorer: Any) -> None:  # noqa: F811
    """A dataset's field list in the explorer: "Unused fields" marks the fields nobody reads, with when each was
    last read, and shows only them until pressed again."""
    from .test_explorer import serving

    history(graph)
    with serving(graph, tmp_path) as base:
        assert explorer("open", url=f"{base}/explorer/")["error"] is None
        found = explorer("search", text="u.src")
        assert SRC in [r["urn"] for r in found if r["testid"] == "result-dataset"]
        explorer("pick", testid="result-dataset", urn=SRC)
        listed_now = [f["urn"] for f in explorer("items", testid="dataset-field")]
        assert listed_now == [field_urn(SRC, p) for p in "abcd"]  # c removed, still in the list (marked so)
        explorer("button", testid="unused-toggle")
        marks = {m["urn"]: m["text"] for m in explorer("items", testid="unused-mark")}
        assert marks == {field_urn(SRC, "b"): "unused · last read 1970-01-01 00:00:00Z",
                         field_urn(SRC, "d"): "unused · never read"}
        assert marks.keys() == {f["urn"] for f in encode(graph.unused(SRC))["fields"]}
        assert explorer("text", testid="unused-count") == "2 of 4 unused"
        fields = explorer("items", testid="dataset-field")
        assert [f["urn"] for f in fields if f.get("unused") == "true"] == [field_urn(SRC, "b"), field_urn(SRC, "d")]
        (shown,) = explorer("items", testid="dataset-fields")
        assert shown["unusedOnly"] == "true"
        explorer("screenshot", path=str(Path(__file__).resolve().parent.parent / "test-artifacts" /
                                        "explorer-unused.png"))
        explorer("button", testid="unused-toggle")  # pressed again: every field
        (shown,) = explorer("items", testid="dataset-fields")
        assert shown["unusedOnly"] == "false"
        assert explorer("errors") == []
