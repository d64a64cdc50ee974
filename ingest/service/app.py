"""``fieldgraph serve``: the lineage graph over HTTP.

- ``/api/v1/...`` (GET, :mod:`.reads`): a JSON API answering what the CLI answers; ``/openapi.json`` describes it.
- Events in, behind the bearer token (:mod:`.writes`): OpenLineage (``POST /api/v1/lineage``, as Marquez), DataHub
  MCPs (``POST /aspects?action=ingestProposal``, as GMS) and any event ``fieldgraph ingest`` reads
  (``POST /api/v1/events``), through the sources' decoders and the one write path (:mod:`.writer`).
- ``/explorer/``: the lineage explorer page (static files built from ``explorer/``).
- ``/healthz`` and ``/metrics`` (Prometheus); :mod:`.guard` keeps the token, size and rate limits.

Errors answer ``{"error": <message>, "kind": <kind>}`` with the status of their kind (:data:`STATUS`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from fieldgraph import __version__
from fieldgraph.errors import (
    AmbiguousReferenceError,
    EventError,
    FieldgraphError,
    GraphRefused,
    InputError,
    NotFoundError,
    OutOfScope,
    QueryTimeout,
    TransientError,
)
from fieldgraph.graph import LineageGraph
from fieldgraph.ingest.config import ServeConfig
from fieldgraph.ingest.platforms import DEFAULT_MAPPING, PlatformMapping

from . import reads, writes
from .guard import KINDS, Guard, HttpError
from .state import Service, ServiceDep, holder
from .writer import EventWriter

STATIC = Path(__file__).parent / "explorer" / "static"

#: the status of each kind of error, most specific first
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (NotFoundError, 404), (OutOfScope, 403), (EventError, 422), (InputError, 400), (AmbiguousReferenceError, 400),
    (QueryTimeout, 504), (TransientError, 503),
    (GraphRefused, 400),  # refused on a read: a parameter the store cannot take
)
#: the names ``Host`` may give when the service listens on loopback only (no DNS rebinding onto it)
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def create_app(graph: LineageGraph, config: ServeConfig, *, platforms: PlatformMapping = DEFAULT_MAPPING) -> FastAPI:
    """The service over ``graph`` (opened and closed by the caller)."""
    svc = Service(graph, config, platforms)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        svc.writer = EventWriter(graph, config.batch_events)
        try:
            yield
        finally:
            await asyncio.to_thread(svc.writer.close)

    app = FastAPI(title="fieldgraph", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Field-level lineage: the graph's answers, and OpenLineage and DataHub events in.")
    app.state.service = svc
    if config.host in LOOPBACK:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost", "[::1]"])
    app.add_middleware(Guard, metrics=svc.metrics, rate_limit=config.rate_limit, max_body_bytes=config.max_body_bytes,
                       trusted=lambda header: holder(config, header) is not None)
    if config.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(config.cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type", "Content-Encoding"])
    for kind in (FieldgraphError, HttpError, Exception):  # Exception: the last resort, logged with its traceback
        app.add_exception_handler(kind, _error_handler)
    app.add_exception_handler(RequestValidationError, _bad_parameter)
    app.include_router(reads.router)
    app.include_router(writes.router)
    app.include_router(_operations)
    app.openapi = _errors_documented(app.openapi)  # type: ignore[method-assign]
    if (STATIC / "index.html").is_file():
        from fastapi.staticfiles import StaticFiles

        app.mount("/explorer", StaticFiles(directory=STATIC, html=True), name="explorer")
    else:
        app.add_api_route("/explorer/{rest:path}", _no_explorer, include_in_schema=False)
    return app


#: the error answers the OpenAPI document lists, in place of FastAPI's own 422 (a bad parameter is answered 400)
_UNAVAILABLE = {"503": "The graph cannot be reached (with `Retry-After`)"}
_BAD_PARAMETER = {"400": "A bad parameter or body, named: `{error, kind, message, status}`"}
_WRITE_ERRORS = {"403": "No token, or a token whose write scope does not hold a dataset the events write",
                 "422": "An event that cannot be read, with the reason; it goes to the rejects file and the "
                        "request's other events are written"}


def _errors_documented(openapi: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """``app.openapi`` with each operation's error answers as the service gives them (FastAPI lists 422 for a
    parameter it cannot read; the service answers 400 with its error JSON, and 422 only for an unreadable event)."""

    def documented() -> dict[str, Any]:
        doc = openapi()  # built once, then cached by FastAPI: changed in place, the same each time
        for item in doc["paths"].values():
            for method, op in item.items():
                answers = op.setdefault("responses", {})
                takes_parameters = answers.pop("422", {}).get("description") == "Validation Error"
                shown = {**_UNAVAILABLE, **(_BAD_PARAMETER if takes_parameters or method == "post" else {}),
                         **(_WRITE_ERRORS if method == "post" else {})}
                answers.update({code: {"description": text} for code, text in shown.items()})
        return doc

    return documented


# ---- operations ----

_operations = APIRouter(tags=["operations"])


@_operations.get("/healthz")
async def health(svc: ServiceDep) -> Response:
    """200 when the graph answers, else 503. Asked on its own thread: busy reads do not make it fail."""
    await asyncio.to_thread(svc.graph.ping)
    shown = {} if svc.config.reads_need_token else {"graph": svc.graph.store.describe()}
    return JSONResponse({"status": "ok", **shown})


@_operations.get("/metrics")
def prometheus(svc: ServiceDep) -> Response:
    """Prometheus metrics: requests by route and status, latency, events written and rejected."""
    return Response(svc.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


@_operations.get("/", include_in_schema=False)
def root() -> Response:
    return RedirectResponse("/explorer/")


def _no_explorer(rest: str) -> Response:
    return PlainTextResponse("The explorer's files are not built: run `make explorer` in fieldgraph's checkout "
                             "(npm builds them into ingest/service/explorer/static/).", 503)


# ---- errors ----


async def _error_handler(_: Request, exc: Exception) -> Response:
    return error_response(exc)


async def _bad_parameter(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    return error_response(InputError("; ".join(f"{' '.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())))


def error_response(exc: Exception) -> Response:
    """``{"error", "kind"}`` (and ``message``, ``status``: what DataHub's emitter reads) with the status of the
    error's kind; a bug answers 500 without its text (the server logs its traceback)."""
    headers = None
    if isinstance(exc, HttpError):
        status, kind, message, headers = exc.status, KINDS.get(exc.status, "HttpError"), str(exc), exc.headers
    elif isinstance(exc, FieldgraphError):
        status = next((s for k, s in STATUS if isinstance(exc, k)), 500)
        kind, message = type(exc).__name__, str(exc)
        headers = {"Retry-After": "5"} if status == 503 else None
    else:
        status, kind, message = 500, "InternalError", f"internal error: {type(exc).__name__}"
    return JSONResponse({"error": message, "message": message, "status": status, "kind": kind}, status,
                        headers=headers)
