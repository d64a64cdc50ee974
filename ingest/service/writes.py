"""Events in over HTTP, behind the bearer token:

- ``POST /api/v1/lineage``: an OpenLineage run, job or dataset event, as Marquez takes it (201), so the OpenLineage
  client's HTTP transport and the Spark and Airflow integrations can send here;
- ``POST /aspects?action=ingestProposal`` / ``ingestProposalBatch``: DataHub GMS's endpoints for its REST emitter
  (with ``GET /config``, which the emitter asks first);
- ``POST /api/v1/events``: one event or an array, in any form ``fieldgraph ingest`` reads;
- ``POST /api/v1/edges`` and ``POST /api/v1/edges/remove``: a lineage edge drawn by hand, or its removal (as
  ``fieldgraph edge add`` and ``edge remove``);
- ``POST /api/v1/renames``: a rename stated by hand (``fieldgraph rename``'s), ``{"old", "new", "at"?, "note"?}`` for a
  field or ``{"oldDataset", "newDataset", ...}`` for a dataset; 400 with the reason when it cannot be one.

Events are decoded by the sources and written by the one write path (:mod:`.writer`). A bad event is answered
422 with its reason and appended to the rejects file, as ``fieldgraph ingest`` does; the others in the same request
are written. A named token (``--tokens-file``) writes only the datasets of its write scope, from upstream datasets
of its read scope (:func:`fieldgraph.graph.scope.out_of_scope`): a request with one change outside them is answered
403 naming the dataset and the token, and nothing of it is written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response

from fieldgraph import __version__
from fieldgraph.changes import Change, ManualEdgeChange
from fieldgraph.errors import EventError, FieldgraphError, InputError, NotFoundError, TransientError
from fieldgraph.graph.scope import out_of_scope
from fieldgraph.ingest.replay import Reject, write_rejects
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.sources.datahub import decode_datahub_event
from fieldgraph.ingest.sources.openlineage import decode_openlineage_event
from fieldgraph.ingest.sources.renames import decode_rename_request, rename_json
from fieldgraph.ingest.times import now_ms, parse_time_or_now

from .guard import HttpError, parse_json, read_body
from .state import Service, ServiceDep, caller, readable, writable

log = logging.getLogger(__name__)

#: how long a write request waits for the graph before answering 503 (a write not started by then is dropped; the
#: producer sends it again)
WRITE_WAIT_S = 30.0

Decoder = Callable[[Any, str], list[Change]]
#: who a write through the HTTP API with the service's one token is by (``by`` of a rename, an edge's default):
#: that token has no name (a named token's writes are by its name)
API_WRITER = "api"

router = APIRouter(tags=["writes"])


async def _body(request: Request, svc: Service, what: str) -> Any:
    """The request's JSON, parsed in a worker thread (a body may be megabytes: the event loop keeps answering)."""
    return await asyncio.to_thread(parse_json, await read_body(request, svc.config.max_body_bytes), what)


async def _ingest(request: Request, svc: Service, events: Sequence[Any], decode: Decoder, endpoint: str,
                  ok: Any, status: int = 200) -> Response:
    """Decode and write ``events``: ``ok`` when every one was written, else 422 naming the rejected ones (by index,
    with the reason), which go to the rejects file; the others are written."""
    n = next(svc.requests)
    # decoded in a worker thread: the event loop keeps answering meanwhile
    decoded, placed, rejected = await asyncio.to_thread(_decode, events, decode, n)
    _in_scope(request, [c for changes in decoded for c in changes])
    assert svc.writer is not None, "the service is not started"
    try:
        outcome = await asyncio.wait_for(asyncio.wrap_future(svc.writer.submit(decoded)), WRITE_WAIT_S)
    except TimeoutError as exc:
        raise TransientError(f"the graph did not take the write within {WRITE_WAIT_S:g}s") from exc
    refused = [(placed[j], f"the graph refused it: {why}") for j, why in enumerate(outcome) if why is not None]
    counts = svc.metrics.events
    counts.labels(endpoint, "written").inc(len(decoded) - len(refused))
    counts.labels(endpoint, "rejected").inc(len(rejected))
    counts.labels(endpoint, "refused").inc(len(refused))
    rejected = sorted(rejected + refused)
    if not rejected:
        return JSONResponse(ok, status)
    where = f"{request.method} {request.url.path}"
    rejects = [Reject(where, n, why, events[i]) for i, why in rejected]
    await asyncio.to_thread(write_rejects, svc.config.rejects, rejects)
    for i, why in rejected:
        log.warning("rejected event %d of request %d to %s: %s", i, n, where, why)
    error = rejected[0][1] if len(rejected) == 1 else f"{len(rejected)} events were rejected"
    return JSONResponse({"error": error, "message": error, "status": 422, "kind": "EventError",
                         "rejected": [{"index": i, "error": why} for i, why in rejected],
                         "written": len(events) - len(rejected)}, 422)


def _by(request: Request) -> str:
    """Who the request writes as: its named token's name, else ``api`` (the service's one token)."""
    who = caller(request, what="writes")
    return API_WRITER if who is None or who.name is None else who.name


def _in_scope(request: Request, changes: Sequence[Change]) -> None:
    """403 naming the dataset and the token unless the request's token may write every one of ``changes``."""
    who = caller(request, what="writes")
    if who is None or who.name is None:
        return
    for c in changes:
        why = out_of_scope(c, who.write, who.read)
        if why is not None:
            raise HttpError(403, f"token {who.name!r} may not write this: {why}; nothing was written")


def _decode(events: Sequence[Any], decode: Decoder, n: int
            ) -> tuple[list[list[Change]], list[int], list[tuple[int, str]]]:
    """The changes of each event that decodes, the events' indexes, and (index, reason) of those that do not."""
    decoded: list[list[Change]] = []
    placed: list[int] = []
    rejected: list[tuple[int, str]] = []
    for i, obj in enumerate(events):
        try:
            decoded.append(decode(obj, f"http:{n}:{i}"))
            placed.append(i)
        except FieldgraphError as exc:
            rejected.append((i, str(exc)))
    return decoded, placed, rejected


@router.post("/api/v1/lineage", status_code=201, dependencies=[Depends(writable)])
async def openlineage(request: Request, svc: ServiceDep) -> Response:
    """An OpenLineage run, job or dataset event (Marquez's endpoint, the OpenLineage HTTP transport's default):
    201 when written, 422 with the reason when it cannot be read."""
    event = await _body(request, svc, "the OpenLineage event")

    def decode(obj: Any, origin: str) -> list[Change]:
        return decode_openlineage_event(obj, origin, svc.platforms)

    return await _ingest(request, svc, [event], decode, "openlineage", {}, 201)


@router.post("/aspects", dependencies=[Depends(writable)])
async def datahub(request: Request, svc: ServiceDep,
                  action: Annotated[str, Query(pattern="^(ingestProposal|ingestProposalBatch)$")]) -> Response:
    """DataHub GMS's ``ingestProposal`` and ``ingestProposalBatch`` actions (DataHub's REST emitter):
    ``{"proposal": MCP}`` or ``{"proposals": [MCP, ...]}``."""
    body = await _body(request, svc, "the proposal")
    batch = action == "ingestProposalBatch"
    key = "proposals" if batch else "proposal"
    if not isinstance(body, dict) or key not in body:
        raise InputError(f"action {action} takes a JSON object with {key!r}")
    proposals = body[key] if batch else [body[key]]
    if not isinstance(proposals, list):
        raise InputError("'proposals' is a JSON array of MetadataChangeProposals")
    urns = [p.get("entityUrn") if isinstance(p, dict) else None for p in proposals]
    return await _ingest(request, svc, proposals, _datahub_event, "datahub", {"value": urns if batch else urns[0]})


@router.post("/api/v1/events", dependencies=[Depends(writable)])
async def events(request: Request, svc: ServiceDep) -> Response:
    """One event, or a JSON array of events, in any form ``fieldgraph ingest`` reads (DataHub MCP, MCL, MCE, MAE;
    CDAP field lineage; OpenLineage)."""
    body = await _body(request, svc, "the events")
    batch = body if isinstance(body, list) else [body]

    def decode(obj: Any, origin: str) -> list[Change]:
        return decode_event(obj, origin, platforms=svc.platforms)

    return await _ingest(request, svc, batch, decode, "events", {"written": len(batch)})


@router.post("/api/v1/edges", status_code=201, dependencies=[Depends(writable)])
async def draw_edge(request: Request, svc: ServiceDep) -> Response:
    """A lineage edge drawn by hand (as ``fieldgraph edge add``): ``{"downstream": URN, "upstream": URN,
    "transformation"?, "note"?, "by"?, "at"?}`` (``by``: who, default the token's name,
    ``api`` for the service's one token; ``at``: ms since the epoch or ISO 8601, default now). 201 with what holds
    then between the two fields (an edge drawn already holds on as it was)."""
    body = await _body(request, svc, "the edge")
    return await _write_edge(request, svc, body, remove=False)


@router.post("/api/v1/edges/remove", dependencies=[Depends(writable)])
async def remove_edge(request: Request, svc: ServiceDep) -> Response:
    """A lineage edge drawn by hand removed (as ``fieldgraph edge remove``): ``{"downstream": URN, "upstream": URN,
    "by"?, "at"?}``; it is kept as a past edge. 200 with what holds then between the two fields; 404 when no edge
    drawn by hand holds between them."""
    body = await _body(request, svc, "the edge")
    change = _manual_edge(body, "", remove=True, by=_by(request))  # a bad one: 400 (nothing to look up)
    _in_scope(request, [change])  # before looking: a 404 would tell what the token may not see
    held = await asyncio.to_thread(svc.graph.drawn_edge, change.edge.downstream, change.edge.upstream)
    if not held.holds:
        raise NotFoundError(f"no edge drawn by hand holds from {held.upstream} into {held.downstream}")
    return await _write_edge(request, svc, body, remove=True)


async def _write_edge(request: Request, svc: Service, body: Any, *, remove: bool) -> Response:
    """The edge drawn or removed by the one write path (a bad one: 422, as any event), answered with what holds
    after it between the two fields."""
    status = 200 if remove else 201
    decoded: list[ManualEdgeChange] = []
    by = _by(request)

    def decode(obj: Any, origin: str) -> list[Change]:
        decoded.append(_manual_edge(obj, origin, remove=remove, by=by))
        return [decoded[-1]]

    written = await _ingest(request, svc, [body], decode, "edges", {}, status)
    if written.status_code != status:
        return written
    edge = decoded[-1].edge
    held = await asyncio.to_thread(svc.graph.drawn_edge, edge.downstream, edge.upstream)
    return JSONResponse(held.to_json(), status)


def _manual_edge(obj: Any, origin: str, *, remove: bool, by: str = API_WRITER) -> ManualEdgeChange:
    """The change an edge request's JSON asks for (:class:`InputError` naming what is wrong); ``by``: who, unless
    the request names someone."""
    if not isinstance(obj, dict):
        raise InputError(f"an edge is a JSON object with downstream and upstream, got {type(obj).__name__}")
    allowed = {"downstream", "upstream", "by", "at"} | (set() if remove else {"transformation", "note"})
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} in the edge (it takes {', '.join(sorted(allowed))})")
    for key in allowed - {"at"}:
        if key in ("downstream", "upstream") and key not in obj:
            raise InputError(f"the edge has no {key!r} (a field URN)")
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise InputError(f"the edge's {key!r} is a string, got {type(obj[key]).__name__}")
    at = obj.get("at")
    if at is not None and (isinstance(at, bool) or not isinstance(at, (int, str))):
        raise InputError(f"the edge's 'at' is ms since the epoch or an ISO 8601 time, got {type(at).__name__}")
    return ManualEdgeChange.of(obj["downstream"], obj["upstream"], transformation=obj.get("transformation"),
                               note=obj.get("note"), by=obj.get("by") or by, remove=remove, origin=origin,
                               ts=parse_time_or_now(None if at is None else str(at), "at"))


@router.post("/api/v1/renames", status_code=201, dependencies=[Depends(writable)])
async def renames(request: Request, svc: ServiceDep) -> Response:
    """A rename stated by hand (as ``fieldgraph rename``): ``{"old": <field URN>, "new": <field URN>}`` in one
    dataset, or ``{"oldDataset": <URN>, "newDataset": <URN>}``; ``at`` (ms or ISO 8601, default now) and ``note``
    optional. 201 with the rename written; 400 naming what cannot be a rename. ``source`` api, ``by`` the token's
    name (``api`` for the service's one token, which has no name)."""
    body = await _body(request, svc, "the rename")
    n = next(svc.requests)
    change = decode_rename_request(body, now=now_ms(), source="api", by=_by(request),
                                   origin=f"http:{n}:0")

    def decode(obj: Any, origin: str) -> list[Change]:
        return [change]

    return await _ingest(request, svc, [body], decode, "renames", {"rename": rename_json(change)}, 201)


@router.get("/config", dependencies=[Depends(readable)])
def gms_config() -> Response:
    """What DataHub's REST emitter asks GMS before it sends: ``noCode`` (MCPs are taken) and a version below 1.0.1,
    so the emitter keeps to the ``/aspects`` endpoints (newer servers get OpenAPI ones fieldgraph does not serve)."""
    return JSONResponse({"noCode": "true", "statefulIngestionCapable": False,
                         "versions": {"acryldata/datahub": {"version": f"v0.0.0-fieldgraph-{__version__}"}}})


def _datahub_event(obj: Any, origin: str) -> list[Change]:
    if not isinstance(obj, dict):
        raise EventError(f"a MetadataChangeProposal is a JSON object, got {type(obj).__name__}")
    return decode_datahub_event(obj, origin)
