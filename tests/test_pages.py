"""Pages with totals: the cursor and paging module (pure), then the JSON API's pages over real HTTP on every
backend (whole answers, writes between pages, cursors of another query, partial walks) and the CLI's ``--limit``."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.errors import InputError
from fieldgraph.graph.answers import encode
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.pages import Cursor, Pages, Sorted, answer_page, fingerprint, walk_exact
from fieldgraph.ingest.times import now_ms

from .conftest import WITH_MEMORY, ds, ingest, lineage_event, schema_event, sf
from .test_docs import in_order as _in_order
from .test_service import Service, served, service, settings  # noqa: F401  (service, settings: fixtures)

# ---- the module, pure ----


def hop(depth: int, frm: str, urn: str, **edge: Any) -> dict[str, Any]:
    return {"from": frm, "urn": urn, "depth": depth, "dataset": urn.rsplit(".", 1)[0], "fieldPath": urn.rsplit(".", 1)[1],
            "placeholder": False, "removed": False, "ambiguous": False, "edge": edge}


def walk(hops: list[dict[str, Any]]) -> dict[str, Any]:
    return {"start": "s.a", "direction": "downstream", "depth": None, "partial": False, "reason": None, "hops": hops,
            "asOf": 5}


HOPS = [hop(1, "s.a", f"t{i}.f{j}", relation="DataDerivedFrom") for i in range(3) for j in range(4)] + \
    [hop(2, "t0.f0", f"u.g{j}") for j in range(5)] + [hop(2, "t0.f0", "u.g0", source="other")]


def pages_of(sorted_: Sorted, size: int) -> list[dict[str, Any]]:
    out, after = [], None
    while True:
        p = sorted_.page(after, size, 5, "q")
        out.append(p)
        if p["next"] is None:
            return out
        after = Cursor.decode(p["next"], "q").after


@pytest.mark.parametrize("size", [1, 4, 7, 18, 100])
def test_pages_cover_the_whole_answer_once_in_a_stable_order(size: int) -> None:
    whole = Sorted.of("lineage", walk(HOPS), True)
    pages = pages_of(whole, size)
    got = [h for p in pages for h in p["hops"]]
    assert len(got) == len(HOPS) == whole.items.__len__() and sorted(map(json.dumps, got)) == \
        sorted(map(json.dumps, HOPS))
    assert all(p["total"] == len(HOPS) and p["totalExact"] is True for p in pages)
    assert all(len(p["hops"]) == size for p in pages[:-1]) and 0 < len(pages[-1]["hops"]) <= size
    assert [h["depth"] for h in got] == sorted(h["depth"] for h in got)  # level by level
    assert list(pages[0]) == [*walk([]), "total", "totalExact", "next"]  # the answer's keys in its order
    assert all({k: v for k, v in p.items() if k not in ("hops", "total", "totalExact", "next")} ==
               {k: v for k, v in walk([]).items() if k != "hops"} for p in pages)
    assert Sorted.of("lineage", walk(list(reversed(HOPS))), True).items == whole.items  # whatever order it came in


def test_an_empty_answer_is_one_page() -> None:
    assert Sorted.of("lineage", walk([]), False).page(None, 10, 5, "q") == {**walk([]), "total": 0,
                                                                            "totalExact": False, "next": None}


def test_impact_pages_group_their_own_hops_by_dataset() -> None:
    impact = {"start": "s.a", "partial": False, "reason": None, "datasets": {}, "hops": HOPS, "asOf": None}
    first = Sorted.of("impact", impact, True).page(None, 5, 5, "q")
    assert first["datasets"] == {"t0": ["f0", "f1", "f2", "f3"], "t1": ["f0"]} and len(first["hops"]) == 5


def test_search_pages_datasets_first_then_fields() -> None:
    found = {"datasets": [{"urn": f"d{i}", "name": f"n{i}", "platform": "hive", "placeholder": False, "fields": 1}
                          for i in (2, 1)],
             "fields": [{"urn": f"f{i}", "dataset": "d1", "fieldPath": "x" * i, "simplePath": "x" * i,
                         "placeholder": False} for i in (3, 1, 2)]}
    s = Sorted.of("search", found, True)
    one, two = s.page(None, 3, 0, "q"), s.page(s.keys[2], 3, 0, "q")
    assert [d["urn"] for d in one["datasets"]] == ["d1", "d2"] and [f["urn"] for f in one["fields"]] == ["f1"]
    assert two["datasets"] == [] and [f["urn"] for f in two["fields"]] == ["f2", "f3"] and two["next"] is None


def test_cursors_carry_the_instant_query_and_key_and_refuse_anything_else() -> None:
    c = Cursor(1234, fingerprint("lineage", {"field": "a", "depth": None}), (2, "x", "y", "abc"))
    text = c.encode()
    assert Cursor.decode(text, fingerprint("lineage", {"field": "a"})) == c  # None parameters do not count
    with pytest.raises(InputError, match="cursor: it belongs to another query"):
        Cursor.decode(text, fingerprint("lineage", {"field": "b"}))
    with pytest.raises(InputError, match="cursor: it belongs to another query"):
        Cursor.decode(text, fingerprint("impact", {"field": "a"}))
    for bad in ("", "nope", text[:-3], text[:10] + ("A" if text[10] != "A" else "B") + text[11:], "W10",
                "eyJhIjoxfQ"):
        with pytest.raises(InputError, match="^cursor: "):
            Cursor.decode(bad, c.query)


def test_a_key_of_another_shape_is_a_bad_cursor() -> None:
    with pytest.raises(InputError, match="^cursor: "):
        Sorted.of("search", {"datasets": [{"urn": "d", "name": "n"}], "fields": []}, True).page((1, 2), 1, 0, "q")


def test_answer_page_pins_its_instant_and_keeps_pages_whole_while_the_answer_changes() -> None:
    asked: list[int | None] = []
    state = {"hops": HOPS[:10]}

    def whole(at: int | None) -> tuple[Any, bool]:
        asked.append(at)
        return walk(state["hops"]), True

    pages = Pages()
    first = answer_page(pages, "lineage", {"field": "s.a"}, whole, size=4, cursor=None, as_of=None, now=77)
    state["hops"] = HOPS  # a writer: more edges
    second = answer_page(pages, "lineage", {"field": "s.a"}, whole, size=4, cursor=first["next"], as_of=None, now=99)
    # a first page pinned now is the answer now (None: no as-of walk); the next is the kept answer, as of 77
    assert asked == [None] and second["total"] == first["total"] == 10 and first["asOf"] == second["asOf"] == 77
    # an answer that fell out of the cache is answered again as of the same instant; the keyset: no repeat
    state["hops"] = HOPS[:10]
    none_kept = Pages(size=0)
    got: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        p = answer_page(none_kept, "lineage", {"field": "s.a"}, whole, size=3, cursor=cursor, as_of=50, now=99)
        got += p["hops"]
        state["hops"] = [h for h in HOPS if h is not HOPS[0]]  # the writer: one edge gone, others added
        if (cursor := p["next"]) is None:
            break
    assert set(asked[1:]) == {50}
    keys = [json.dumps(h, sort_keys=True) for h in got]
    assert len(keys) == len(set(keys))  # no repeat
    assert {json.dumps(h, sort_keys=True) for h in HOPS[1:10]} <= set(keys)  # what held throughout: no skip


def test_pages_are_kept_per_reader_and_the_oldest_go() -> None:
    pages, calls = Pages(size=2), []

    def whole(at: int) -> tuple[Any, bool]:
        calls.append(at)
        return walk(HOPS), True

    for reader in ("a", "b", "a", "c", "b"):
        answer_page(pages, "lineage", {"field": "s.a"}, whole, size=1, cursor=None, as_of=1, now=2, reader=reader)
    assert len(calls) == 4  # a, b, (a kept), c (b goes), b again
    small, calls = Pages(max_items=len(HOPS) + 1), []
    for reader in ("a", "b", "b", "a"):
        answer_page(small, "lineage", {"field": "s.a"}, whole, size=1, cursor=None, as_of=1, now=2, reader=reader)
    assert len(calls) == 3  # one answer at a time fits: a, b (a goes), (b kept), a again


def test_walk_exact() -> None:
    assert walk_exact(False, None, None) and walk_exact(True, "depth 3 reached; more lineage lies beyond", 3)
    assert not walk_exact(True, "depth cap 50 reached; more lineage lies beyond", None)
    assert not walk_exact(True, "time budget of 1s reached at depth 2", 3)


# ---- the JSON API, over real HTTP ----

SRC, MID, LOW = ds("pages.src"), ds("pages.mid"), ds("pages.low")
A = sf(SRC, "a")


@pytest.fixture
def paged(graph: Any, settings: Any) -> Iterator[Service]:  # noqa: F811
    """The service over a fan-out: ``src.a`` -> 12 fields of ``mid`` -> 4 fields of ``low`` each from ``mid.m0``."""
    ingest(graph, schema_event(SRC, ["a"], 10), schema_event(MID, [f"m{i}" for i in range(12)], 10),
           schema_event(LOW, [f"l{i}" for i in range(4)], 10),
           lineage_event(MID, [(sf(MID, f"m{i}"), [A]) for i in range(12)], 20),
           lineage_event(LOW, [(sf(LOW, f"l{i}"), [sf(MID, "m0")]) for i in range(4)], 20))
    graph.tag(A, add=["PII"])
    with served(graph, settings) as s:
        yield s


def through(s: Service, path: str, key: str, **params: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """Every page of an answer: its items (``key``: their list) and the pages."""
    items: list[Any] = []
    pages: list[dict[str, Any]] = []
    cursor = None
    while True:
        p = s.ok(path, **params, cursor=cursor)
        pages.append(p)
        items += p[key]
        if (cursor := p["next"]) is None:
            return items, pages


def same_items(a: list[Any], b: list[Any]) -> bool:
    return sorted(json.dumps(x, sort_keys=True) for x in a) == sorted(json.dumps(x, sort_keys=True) for x in b)


@WITH_MEMORY
def test_paging_an_answer_gives_the_whole_answer_once(paged: Service) -> None:
    whole = paged.ok("/api/v1/lineage/downstream", field=A)
    assert "total" not in whole and "next" not in whole  # unpaged: as it always was
    hops, pages = through(paged, "/api/v1/lineage/downstream", "hops", field=A, limit=5)
    assert len(pages) == 4 and [len(p["hops"]) for p in pages] == [5, 5, 5, 1] and len(hops) == 16
    assert same_items(hops, whole["hops"]) and all(p["total"] == 16 and p["totalExact"] for p in pages)
    assert {p["asOf"] for p in pages} == {pages[0]["asOf"]} and pages[0]["asOf"] is not None  # the pinned instant

    impact = paged.ok("/api/v1/impact", name=SRC)
    ihops, ipages = through(paged, "/api/v1/impact", "hops", name=SRC, limit=7)
    assert same_items(ihops, impact["hops"]) and ipages[0]["total"] == len(impact["hops"])
    assert {d: sorted({f for p in ipages for f in p["datasets"].get(d, [])}) for d in impact["datasets"]} == \
        {d: sorted(fs) for d, fs in impact["datasets"].items()}

    tagged = paged.ok("/api/v1/tagged", label="PII")
    fields, tpages = through(paged, "/api/v1/tagged", "fields", label="PII", limit=6)
    assert same_items(fields, tagged["fields"]) and len(fields) == 17 and len(tpages) == 3

    assert paged.ok("/api/v1/search", q="m", limit=2) == encode(paged.graph.search("m", 2))  # at most 2 of each
    found = paged.ok("/api/v1/search", q="m", limit=500)
    items, spages = through(paged, "/api/v1/search", "fields", q="m", page=4)
    datasets = [d for p in spages for d in p["datasets"]]
    assert [d["urn"] for d in datasets] == [d["urn"] for d in found["datasets"]] and len(datasets) == 3
    assert same_items(items, found["fields"]) and len(items) == 12 and spages[0]["total"] == 15
    assert [len(p["datasets"]) + len(p["fields"]) for p in spages] == [4, 4, 4, 3]


@WITH_MEMORY
def test_pages_hold_still_while_a_writer_writes_between_them(paged: Service) -> None:
    g = paged.graph
    first = paged.ok("/api/v1/lineage/downstream", field=A, limit=4)
    at = first["asOf"]
    pinned = encode(g.downstream(A, as_of=at))["hops"]
    # more edges downstream, one edge gone (mid.m11 no longer from src.a), and a late event dated before T
    later = max(now_ms(), at + 1)  # after T
    ingest(g, schema_event(LOW, [f"l{i}" for i in range(8)], later, version=1),
           lineage_event(LOW, [(sf(LOW, f"l{i}"), [sf(MID, "m0")]) for i in range(8)], later),
           lineage_event(MID, [(sf(MID, f"m{i}"), [A]) for i in range(11)], later),
           lineage_event(ds("pages.late"), [(sf(ds("pages.late"), "z"), [A])], 15))
    assert len(g.downstream(A).hops) != len(pinned)  # the graph did change
    hops, cursor = list(first["hops"]), first["next"]
    while cursor is not None:
        p = paged.ok("/api/v1/lineage/downstream", field=A, limit=4, cursor=cursor)
        assert p["asOf"] == at and p["total"] == len(pinned)
        hops += p["hops"]
        cursor = p["next"]
    assert same_items(hops, pinned)  # neither repeated nor skipped: the view as of T
    # a new first page sees the writes
    assert paged.ok("/api/v1/lineage/downstream", field=A, limit=4)["total"] == len(encode(g.downstream(A))["hops"])


@WITH_MEMORY
def test_a_cursor_of_another_query_or_a_broken_one_is_refused(paged: Service) -> None:
    first = paged.ok("/api/v1/lineage/downstream", field=A, limit=2)
    for path, params in (("/api/v1/lineage/upstream", {"field": A}), ("/api/v1/lineage/downstream", {"field": A,
                         "depth": 1}), ("/api/v1/impact", {"name": A}), ("/api/v1/tagged", {"label": "PII"}),
                         ("/api/v1/lineage/downstream", {"field": A, "as_of": "2020-01-01"})):
        r = paged.get(path, **params, cursor=first["next"])
        assert r.status_code == 400 and r.json()["error"].startswith("cursor: it belongs to another query"), r.text
    for bad in ("x", first["next"][:-2] + "zz"):
        r = paged.get("/api/v1/lineage/downstream", field=A, cursor=bad)
        assert r.status_code == 400 and r.json()["error"].startswith("cursor: "), r.text
    # the same query goes on, whatever the page size
    assert paged.ok("/api/v1/lineage/downstream", field=A, cursor=first["next"], limit=100)["hops"][0] not in \
        first["hops"]
    r = paged.get("/api/v1/lineage/downstream", field=A, limit=2, format="csv")
    assert r.status_code == 400 and "limit, cursor" in r.json()["error"]
    assert paged.get("/api/v1/impact", name=A, limit=0).status_code == 400


@WITH_MEMORY
def test_a_walk_stopped_short_gives_a_lower_bound(paged: Service) -> None:
    short = paged.ok("/api/v1/lineage/downstream", field=A, limit=3, budget=0.000001)
    assert short["partial"] and short["totalExact"] is False and "time budget" in short["reason"]
    asked = paged.ok("/api/v1/lineage/downstream", field=A, limit=3, depth=1)
    assert asked["partial"] and asked["totalExact"] is True and asked["total"] == 12  # stopped where it was asked
    assert paged.ok("/api/v1/tagged", label="PII", limit=3, budget=0.000001)["totalExact"] is False
    assert paged.ok("/api/v1/tagged", label="PII", limit=3, depth=1)["totalExact"] is True


def test_documented_pages_request_does_what_the_docs_show(service: Service) -> None:  # noqa: F811
    """The curl of the "Pages" section of docs/how-to/serve.md, against the service over the example graph."""
    from .test_docs import DOCS, blocks
    from .test_docs import variables as page_variables

    page = DOCS / "how-to" / "serve.md"
    section = page.read_text(encoding="utf-8").split("## Pages", 1)[1]
    block = blocks(page, "sh")[[b in section for b in blocks(page, "sh")].index(True)]
    variables = page_variables(page)
    (command,) = [line for line in block.splitlines() if line.startswith("curl ")]
    shown = [line[1:].strip() for line in block.splitlines() if line.startswith("#   ")]
    proc = subprocess.run(["bash", "-c", f"{variables}; {command.replace('http://127.0.0.1:8080', service.url)}"],
                          env=dict(os.environ), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert shown and all(_in_order(s.split(), proc.stdout) for s in shown), proc.stdout


# ---- the CLI ----


def test_cli_limit_trims_tables_and_json(graph: Any) -> None:
    ingest(graph, schema_event(SRC, ["a"], 10), schema_event(MID, [f"m{i}" for i in range(12)], 10),
           lineage_event(MID, [(sf(MID, f"m{i}"), [A]) for i in range(12)], 20))
    runner = CliRunner()

    def run(*args: str) -> str:
        r = runner.invoke(app, [*args, "--graph", graph.uri], env={"COLUMNS": "200"})
        assert r.exit_code == 0, r.output
        return r.output

    table = run("lineage", "downstream", A, "--limit", "5")
    assert table.count("pages.mid.m") == 5 and "7 more edges (of 12)" in table
    assert "more" not in run("lineage", "downstream", A, "--limit", "50")
    page = json.loads(run("lineage", "downstream", A, "--limit", "5", "--json"))
    assert len(page["hops"]) == 5 and page["total"] == 12 and page["totalExact"] is True and page["next"]
    whole = json.loads(run("lineage", "downstream", A, "--json"))
    assert "total" not in whole and len(whole["hops"]) == 12
    assert "11 more edges (of 12)" in run("impact", SRC, "--limit", "1")
    graph.tag(A, add=["PII"])
    assert "10 more fields (of 13)" in run("tagged", "PII", "--limit", "3")
