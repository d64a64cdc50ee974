"""The JSON API's reads (``GET /api/v1/...``): what the CLI answers, with its depth caps, time budgets and
``partial`` flag. Each answers what :class:`fieldgraph.graph.LineageGraph` answers, as JSON."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi import Path as PathPart
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from fieldgraph.errors import InputError
from fieldgraph.graph import LineageResult, encode
from fieldgraph.graph.lineage import DEFAULT_DEPTH_CAP
from fieldgraph.ingest import export
from fieldgraph.ingest.pages import answer_page, walk_exact
from fieldgraph.ingest.times import now_ms, parse_time

from .state import Graph, caller, readable, service

#: the deepest walk and the longest time budget a request may ask for
MAX_DEPTH = 100
MAX_BUDGET_S = 60.0
#: the largest page, the page size when only a cursor is given, and the most datasets and fields a paged search finds
MAX_PAGE = 10_000
DEFAULT_PAGE = 100
SEARCH_CAP = 10_000

Depth = Annotated[int | None, Query(ge=1, le=MAX_DEPTH, description=f"Hops (default: the cap, {DEFAULT_DEPTH_CAP}).")]
Budget = Annotated[float, Query(gt=0, le=MAX_BUDGET_S, description="Time budget (seconds); past it the answer is "
                                "partial.")]
When = Annotated[str | None, Query(description="An instant: ms since the epoch or ISO 8601.")]
Field = Annotated[str, Query(description="Field URN (datasetField or schemaField; v2, v1 or /slash path).")]
Dataset = Annotated[str, Query(description="Dataset URN.")]
Limit = Annotated[int | None, Query(ge=1, le=MAX_PAGE, description="Page size: the answer's first page (or the one "
                                    "after cursor), with total, totalExact and next.")]
PageCursor = Annotated[str | None, Query(description="The next page: the 'next' of the page before, with the same "
                                         "parameters.")]

_LINEAGE_TEXT = {"dot": export.lineage_dot, "mermaid": export.lineage_mermaid, "csv": export.lineage_csv}

router = APIRouter(prefix="/api/v1", dependencies=[Depends(readable)], tags=["reads"])


def _json(content: Any) -> Response:
    """An answer in its one JSON form (:func:`fieldgraph.graph.encode`, as ``--json`` prints it)."""
    return JSONResponse(encode(content))


def _text(text: str, format: str, *, partial: bool) -> Response:
    """An export; ``X-Fieldgraph-Partial: true`` when the walk was cut short (depth cap, time budget)."""
    return PlainTextResponse(text, media_type=export.MEDIA_TYPES[format],
                             headers={"X-Fieldgraph-Partial": "true"} if partial else None)


def _page(request: Request, kind: str, query: Mapping[str, Any], whole: Callable[[int | None], tuple[Any, bool]],
          size: int | None, cursor: str | None, as_of: int | None) -> Response:
    """One page of an answer (:mod:`fieldgraph.ingest.pages`); the service keeps the last whole answers by reader
    (a named token: its own; the rest see the whole graph)."""
    who = caller(request, what="reads")
    reader = who.name if who is not None and who.name is not None else ""
    return _json(answer_page(service(request).pages, kind, query, whole, size=size or DEFAULT_PAGE, cursor=cursor,
                             as_of=as_of, now=now_ms(), reader=reader))


@router.get("/search")
def search(request: Request, graph: Graph,
           q: Annotated[str, Query(min_length=1, description="Text in a dataset name or field path.")],
           limit: Annotated[int, Query(ge=1, le=500)] = 20,
           page: Annotated[int | None, Query(ge=1, le=MAX_PAGE, description="Page size: pages of every dataset "
                                             "and field found (then limit is the page size when page is not "
                                             "given), with total, totalExact and next.")] = None,
           cursor: PageCursor = None) -> Response:
    """Datasets and fields whose name contains ``q`` (case-insensitive): at most ``limit`` of each, or, with
    ``page`` or ``cursor``, pages of all of them (datasets first)."""
    if page is None and cursor is None:
        return _json(graph.search(q, limit))

    def whole(_: int | None) -> tuple[Any, bool]:
        found = graph.search(q, SEARCH_CAP)
        return encode(found), max(len(found.datasets), len(found.fields)) < SEARCH_CAP

    return _page(request, "search", {"q": q}, whole, page or limit, cursor, None)


def _json_only(format: str) -> None:
    if format != "json":
        raise InputError(f"limit, cursor: pages are of JSON answers, not of format={format}")


@router.get("/lineage/{direction}")
def lineage(request: Request, graph: Graph,
            direction: Annotated[str, PathPart(pattern="^(upstream|downstream)$")], field: Field,
            depth: Depth = None, budget: Budget = 10.0, as_of: When = None,
            format: Annotated[str, Query(pattern="^(json|dot|mermaid|csv)$")] = "json", limit: Limit = None,
            cursor: PageCursor = None) -> Response:
    """The fields a field derives from (upstream) or that derive from it (downstream), with edge properties: a hop
    per pair of fields, ``edges`` every edge between the two (several jobs may write one pair); with ``limit`` or
    ``cursor``, a page of its hops (``total`` counts pairs)."""
    when = parse_time(as_of, "as_of")
    if limit is not None or cursor is not None:
        _json_only(format)

        def whole(at: int | None) -> tuple[Any, bool]:
            res: LineageResult = getattr(graph, direction)(field, depth, time_budget_s=budget, as_of=at)
            return encode(res), not res.cut_short

        query = {"direction": direction, "field": field, "depth": depth, "budget": budget, "as_of": as_of}
        return _page(request, "lineage", query, whole, limit, cursor, when)
    res: LineageResult = getattr(graph, direction)(field, depth, time_budget_s=budget, as_of=when)
    if format != "json":
        return _text(_LINEAGE_TEXT[format](res), format, partial=res.cut_short)
    return _json(res)


@router.get("/impact")
def impact(request: Request, graph: Graph, name: Annotated[str, Query(description="A field URN or a dataset URN.")],
           depth: Depth = None, budget: Budget = 10.0, as_of: When = None,
           format: Annotated[str, Query(pattern="^(json|csv)$")] = "json", limit: Limit = None,
           cursor: PageCursor = None) -> Response:
    """The downstream datasets and fields of a field or a dataset; with ``limit`` or ``cursor``, a page of its
    hops, one per pair of fields (``datasets``: the fields they reach)."""
    when = parse_time(as_of, "as_of")
    if limit is not None or cursor is not None:
        _json_only(format)

        def whole(at: int | None) -> tuple[Any, bool]:
            found = graph.impact(name, depth, time_budget_s=budget, as_of=at)
            return encode(found), not found.walk.cut_short

        query = {"name": name, "depth": depth, "budget": budget, "as_of": as_of}
        return _page(request, "impact", query, whole, limit, cursor, when)
    found = graph.impact(name, depth, time_budget_s=budget, as_of=when)
    if format == "csv":
        return _text(export.impact_csv(found), "csv", partial=found.walk.cut_short)
    return _json(found)


@router.get("/path")
def path(graph: Graph, source: Annotated[str, Query(alias="from", description="One field URN.")],
         target: Annotated[str, Query(alias="to", description="The other field URN.")],
         depth: Depth = None, budget: Budget = 10.0, as_of: When = None) -> Response:
    """A shortest lineage path between two fields (either direction); [] if there is none."""
    when = parse_time(as_of, "as_of")
    return _json(graph.path(source, target, depth, time_budget_s=budget, as_of=when))


@router.get("/field")
def field(graph: Graph, urn: Field, as_of: When = None) -> Response:
    """One field: its dataset, state, and tags (own and inherited along lineage)."""
    return _json(graph.field(urn, as_of=parse_time(as_of, "as_of")))


@router.get("/fields")
def fields(graph: Graph, dataset: Dataset, as_of: When = None) -> Response:
    """A dataset's fields: listed, removed (listed before) or placeholders (references only)."""
    kind, urn = graph.resolve_node(dataset)
    if kind != "dataset":
        raise InputError(f"dataset {dataset!r} is not a dataset URN (urn:li:dataset:(...))")
    return _json(graph.fields(urn, as_of=parse_time(as_of, "as_of")))


@router.get("/datasets/lineage")
def dataset_lineage(graph: Graph, dataset: Annotated[str | None, Query(description="Only edges touching it.")] = None
                    ) -> Response:
    """Dataset-level lineage rolled up from the field edges."""
    return _json(graph.dataset_lineage(dataset))


@router.get("/unresolved")
def unresolved(graph: Graph, ambiguous: bool = False) -> Response:
    """Field references no schema resolved (placeholders); ``ambiguous``: only ambiguous ones."""
    return _json(graph.ambiguous() if ambiguous else graph.unresolved())


@router.get("/unused")
def unused(request: Request, graph: Graph,
           dataset: Annotated[str | None, Query(description="Only this dataset's fields (a dataset URN).")] = None,
           platform: Annotated[str | None, Query(description="Only the fields of this platform's datasets (hive or "
                                                 "urn:li:dataPlatform:hive).")] = None,
           as_of: When = None, limit: Limit = None, cursor: PageCursor = None) -> Response:
    """The fields nobody reads, now or at ``as_of``: listed by their dataset's schema, with no lineage edge into
    them (nor into their whole dataset) that holds, each with ``lastRead`` (when the latest edge into it stopped
    holding, ms since the epoch; null: never read). Always paged (``limit``, default 100): ``{"dataset",
    "platform", "asOf", "fields": [{"urn", "dataset", "fieldPath", "simplePath", "type", "nativeDataType",
    "lastRead"}], "total", "totalExact", "next"}``. Under a token's read scope, only the datasets it may read; a
    field whose only readers it may not read is read all the same (not listed, its readers not named)."""
    def whole(at: int | None) -> tuple[Any, bool]:
        return encode(graph.unused(dataset, platform=platform, as_of=at)), True

    query = {"dataset": dataset, "platform": platform, "as_of": as_of}
    return _page(request, "unused", query, whole, limit, cursor, parse_time(as_of, "as_of"))


#: the tag walks go as far as lineage goes unless a request asks for fewer hops
TagDepth = Annotated[int | None, Query(ge=1, le=MAX_DEPTH, description="Hops (default: as far as lineage goes, "
                                       "within the time budget).")]


@router.get("/tags")
def tags(graph: Graph, field: Field, indirect: bool = False, depth: TagDepth = None, budget: Budget = 10.0,
         as_of: When = None) -> Response:
    """A field's own tags and terms (``local``: those that do not propagate), and those it inherits along
    lineage; ``partial`` and its ``reason`` when the walk stopped before the end."""
    return _json(graph.tags(field, indirect=indirect, depth=depth, time_budget_s=budget,
                            as_of=parse_time(as_of, "as_of")))


@router.get("/tagged")
def tagged(request: Request, graph: Graph,
           label: Annotated[str, Query(description="A tag (PII, urn:li:tag:PII) or a term URN.")],
           indirect: bool = False, depth: TagDepth = None, budget: Budget = 10.0, as_of: When = None,
           limit: Limit = None, cursor: PageCursor = None) -> Response:
    """Every field carrying a tag or term, its own or inherited: where it flows. ``{"label", "fields",
    "partial", "reason"}``; with ``limit`` or ``cursor``, a page of its fields."""
    if limit is not None or cursor is not None:
        def whole(at: int | None) -> tuple[Any, bool]:
            found = graph.tagged(label, indirect=indirect, depth=depth, time_budget_s=budget, as_of=at)
            return encode(found), walk_exact(found.partial, found.reason, depth)

        query = {"label": label, "indirect": indirect, "depth": depth, "budget": budget, "as_of": as_of}
        return _page(request, "tagged", query, whole, limit, cursor, parse_time(as_of, "as_of"))
    return _json(graph.tagged(label, indirect=indirect, depth=depth, time_budget_s=budget,
                              as_of=parse_time(as_of, "as_of")))


@router.get("/lineage-summary")
def lineage_summary(graph: Graph, field: Field,
                    direction: Annotated[str, Query(pattern="^(incoming|outgoing)$")] = "incoming",
                    start: When = None, end: When = None, depth: Annotated[int, Query(ge=1, le=MAX_DEPTH)] = 1,
                    budget: Budget = 10.0) -> Response:
    """A field's lineage within [start, end), with the operations behind it (CDAP's field lineage)."""
    return _json(graph.field_lineage(field, direction, parse_time(start, "start"), parse_time(end, "end"), depth,
                                     time_budget_s=budget))


@router.get("/diff-lineage")
def diff_lineage(graph: Graph, dataset: Dataset, since: Annotated[str, Query(alias="from")],
                 until: Annotated[str, Query(alias="to")]) -> Response:
    """What changed in a dataset's fields and their lineage edges between two instants."""
    t1, t2 = parse_time(since, "from"), parse_time(until, "to")
    assert t1 is not None and t2 is not None  # required parameters
    return _json(graph.diff_lineage(dataset, t1, t2))


@router.get("/stats")
def stats(graph: Graph) -> Response:
    """Counts of datasets, fields, edges, placeholders and ambiguous references."""
    return _json(graph.stats())


# ---- lineage through time around one field (the explorer's time control and compare mode) ----

#: how far a timeline or a walk diff goes unless a request asks for more or fewer hops (the explorer's default)
TIME_DEPTH = 3


@router.get("/timeline")
def timeline(graph: Graph, field: Field,
             direction: Annotated[str, Query(pattern="^(upstream|downstream|both)$")] = "both",
             depth: Annotated[int, Query(ge=1, le=MAX_DEPTH, description="Hops.")] = TIME_DEPTH,
             budget: Budget = 10.0) -> Response:
    """The instants the lineage drawn around a field changed at, over all time (edges and fields that came into
    the walk or left it, fields whose state changed), each with its counts: ``{"start", "direction", "depth",
    "partial", "reason", "instants": [{"at", "edgesAdded", "edgesRemoved", "fieldsAdded", "fieldsRemoved",
    "fieldsChanged"}]}``."""
    return _json(graph.timeline(field, direction, depth, time_budget_s=budget))


@router.get("/lineage/{direction}/diff")
def lineage_diff(graph: Graph, direction: Annotated[str, PathPart(pattern="^(upstream|downstream)$")], field: Field,
                 since: Annotated[str, Query(alias="from", description="The earlier instant.")],
                 until: Annotated[str, Query(alias="to", description="The later instant.")],
                 depth: Annotated[int, Query(ge=1, le=MAX_DEPTH, description="Hops.")] = TIME_DEPTH,
                 budget: Budget = 10.0) -> Response:
    """The walk from a field as of two instants, told apart: every field and edge drawn at either, each
    ``added``, ``removed``, ``changed`` (with the keys that ``differ``) or ``same``."""
    t1, t2 = parse_time(since, "from"), parse_time(until, "to")
    assert t1 is not None and t2 is not None  # required parameters
    return _json(graph.diff_walk(field, direction, depth, t1, t2, time_budget_s=budget))
