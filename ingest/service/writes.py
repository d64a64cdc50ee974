"""Events in over HTTP, behind the bearer token:

- ``POST /api/v1/lineage``: an OpenLineage run, job or dataset event, as Marquez takes it (201), so the OpenLineage
  client's HTTP transport and the Spark and Airflow integrations can send here;
- ``POST /aspects?action=ingestProposal`` / ``ingestProposalBatch``: DataHub GMS's endpoints for its REST emitter
  (with ``GET /config``, which the emitter asks first);
- ``POST /api/v1/events``: one event or an array, in any form ``fieldgraph ingest`` reads;
- ``POST /renames``: a rename stated by hand (``fieldgraph rename``'s), ``{"old", "new", "at"?, "note"?}`` for a
  field or ``{"oldDataset", "newDataset", ...}`` for a dataset; 400 with the reason when it cannot be one.

Events are decoded by the sources and written by the one write path (:mod:`.writer`). A bad event is answered
422 with its reason and appended to the rejects file, as ``fieldgraph ingest`` does; the others in the same request
are written.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response

from fieldgraph import __version__
from fieldgraph.changes import Change
from fieldgraph.errors import EventError, FieldgraphError, InputError, TransientError
from fieldgraph.ingest.replay import Reject, write_rejects
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.sources.datahub import decode_datahub_event
from fieldgraph.ingest.sources.openlineage import decode_openlineage_event
from fieldgraph.ingest.sources.renames import decode_rename_request, rename_json

from .guard import parse_json, read_body
from .state import Service, ServiceDep, readable, writable

log = logging.getLogger(__name__)

#: how long a write request waits for the graph before answering 503 (a write not started by then is dropped; the
#: producer sends it again)
WRITE_WAIT_S = 30.0

Decoder = Callable[[Any, str], list[Change]]
#: who a write through the HTTP API is by (``by`` of a rename): the service has one token, without a name
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


@router.post("/renames", status_code=201, dependencies=[Depends(writable)])
async def renames(request: Request, svc: ServiceDep) -> Response:
    """A rename stated by hand (as ``fieldgraph rename``): ``{"old": <field URN>, "new": <field URN>}`` in one
    dataset, or ``{"oldDataset": <URN>, "newDataset": <URN>}``; ``at`` (ms or ISO 8601, default now) and ``note``
    optional. 201 with the rename written; 400 naming what cannot be a rename. ``source`` api, ``by`` api (the
    service's token has no name)."""
    body = await _body(request, svc, "the rename")
    n = next(svc.requests)
    change = decode_rename_request(body, now=int(time.time() * 1000), source="api", by=API_WRITER,
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
