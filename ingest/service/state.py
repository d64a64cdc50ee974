"""What every request reaches through FastAPI's dependencies: the graph, the settings, the writer, the metrics,
and who is asking (the token a request presents)."""

from __future__ import annotations

import hashlib
import hmac
import itertools
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from fieldgraph.graph import LineageGraph
from fieldgraph.graph.scope import Scope
from fieldgraph.graph.scoped import scoped
from fieldgraph.ingest.config import ServeConfig
from fieldgraph.ingest.pages import Pages
from fieldgraph.ingest.platforms import PlatformMapping

from .guard import HttpError, Metrics, bearer_token
from .writer import EventWriter


@dataclass(frozen=True)
class Caller:
    """Who a request is from: a named token of the tokens file (``name``) with its scopes, or the service's one
    token (``name`` None: it reads and writes everything)."""

    name: str | None
    read: Scope
    write: Scope


#: the service's one token (``FIELDGRAPH_SERVE_TOKEN``, ``--token-file``): full access
FULL = Caller(None, Scope.everything(), Scope.everything())


@dataclass
class Service:
    graph: LineageGraph
    config: ServeConfig
    platforms: PlatformMapping
    metrics: Metrics = field(default_factory=Metrics)
    writer: EventWriter | None = None  # from the app's startup to its shutdown
    #: numbers the write requests (the rejects file's ``line``)
    requests: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    #: the graph as each named token's read scope sees it
    views: dict[str, LineageGraph] = field(default_factory=dict)
    #: the last whole answers paged (:mod:`fieldgraph.ingest.pages`), by reader
    pages: Pages = field(default_factory=Pages)

    def view(self, who: Caller) -> LineageGraph:
        if who.name is None:
            return self.graph
        if who.name not in self.views:
            self.views[who.name] = scoped(self.graph, who.read)
        return self.views[who.name]


def service(request: Request) -> Service:
    svc: Service = request.app.state.service
    return svc


def caller(request: Request, *, what: str) -> Caller | None:
    """Who ``request`` is from, by the bearer token it presents (:func:`holder`); None without a token where none is
    needed (reads without ``--protect-reads`` or a tokens file). 401 for a missing or unknown token where one is
    needed, 403 when the service has no token."""
    known: Caller | None = getattr(request.state, "caller", None)
    if known is not None:
        return known
    cfg = service(request).config
    header = request.headers.get("authorization", "")
    who = holder(cfg, header)
    if who is None and (what == "writes" or cfg.reads_need_token):
        if cfg.token is None and not cfg.tokens:
            raise HttpError(403, f"{what} are disabled: start fieldgraph serve with a token (FIELDGRAPH_SERVE_TOKEN "
                            "or --token-file)")
        if bearer_token(header) is None:
            raise HttpError(401, f"{what} need a bearer token (Authorization: Bearer <token>)",
                            {"WWW-Authenticate": "Bearer"})
        raise HttpError(401, f"the bearer token is not {'one of ' if cfg.tokens else ''}the service's",
                        {"WWW-Authenticate": 'Bearer error="invalid_token"'})
    request.state.caller = who
    return who


def holder(cfg: ServeConfig, authorization: str) -> Caller | None:
    """Who holds the token an ``Authorization`` header presents: the service's one token (compared in constant
    time) or a named token (by the SHA-256 of what is presented, compared with every named token's in constant
    time, so the time taken does not tell which matched); None for none or an unknown one."""
    given = bearer_token(authorization)
    if given is None:
        return None
    if cfg.token is not None and hmac.compare_digest(given.encode(), cfg.token.encode()):
        return FULL
    digest = hashlib.sha256(given.encode()).hexdigest()
    found = None
    for t in cfg.tokens:
        if hmac.compare_digest(digest, t.sha256) and found is None:
            found = Caller(t.name, t.read, t.write)
    return found


def the_graph(request: Request) -> LineageGraph:
    """The graph as the request's token may read it (a named token's read scope; else the whole graph)."""
    svc = service(request)
    who = caller(request, what="reads")
    return svc.graph if who is None else svc.view(who)


def readable(request: Request) -> None:
    """Reads need a token when the service protects them (``--protect-reads``, or a tokens file)."""
    caller(request, what="reads")


def writable(request: Request) -> None:
    """Writes need a token; a named one with a write scope."""
    who = caller(request, what="writes")
    if who is not None and who.write.empty:
        raise HttpError(403, f"token {who.name!r} may not write: its write scope is empty")


ServiceDep = Annotated[Service, Depends(service)]
Graph = Annotated[LineageGraph, Depends(the_graph)]
