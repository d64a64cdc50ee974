"""What every request reaches through FastAPI's dependencies: the graph, the settings, the writer, the metrics."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from fieldgraph.graph import LineageGraph
from fieldgraph.ingest.config import ServeConfig
from fieldgraph.ingest.platforms import PlatformMapping

from .guard import Metrics, check_token
from .writer import EventWriter


@dataclass
class Service:
    graph: LineageGraph
    config: ServeConfig
    platforms: PlatformMapping
    metrics: Metrics = field(default_factory=Metrics)
    writer: EventWriter | None = None  # from the app's startup to its shutdown
    #: numbers the write requests (the rejects file's ``line``)
    requests: itertools.count[int] = field(default_factory=lambda: itertools.count(1))


def service(request: Request) -> Service:
    svc: Service = request.app.state.service
    return svc


def the_graph(request: Request) -> LineageGraph:
    return service(request).graph


def readable(request: Request) -> None:
    """Reads need the token when the service protects them."""
    cfg = service(request).config
    if cfg.protect_reads:
        check_token(request, cfg.token, what="reads")


def writable(request: Request) -> None:
    check_token(request, service(request).config.token, what="writes")


ServiceDep = Annotated[Service, Depends(service)]
Graph = Annotated[LineageGraph, Depends(the_graph)]
