"""What stands between a request and the graph: the bearer token, request size, the rate limit, and metrics.

:class:`Guard` is plain ASGI middleware (no per-request task or copy of the body): it answers 429 to a client over
its rate (a token bucket per client address) and 413 to a body whose declared length is over the limit, and
counts every request by route and status for ``/metrics``. Bodies without a declared length, and compressed ones,
are counted as they are read (:func:`read_body`).
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import Request

from fieldgraph.errors import InputError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: paths the rate limit leaves alone (probes scrape them on a schedule)
UNLIMITED = ("/healthz", "/metrics")
#: the methods metrics name (any other is counted as OTHER: a client cannot add label values at will)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class HttpError(Exception):
    """An answer other than success, with its status, message and headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


class Metrics:
    """The service's Prometheus metrics, in a registry of its own."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        self.requests = Counter("fieldgraph_http_requests", "HTTP requests by route, method and status",
                                ["route", "method", "status"], registry=self.registry)
        self.latency = Histogram("fieldgraph_http_request_seconds", "HTTP request latency by route", ["route"],
                                 registry=self.registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.events = Counter("fieldgraph_http_events", "Events received over HTTP by endpoint and outcome "
                              "(written, rejected: not a readable event, refused: the graph refused it)",
                              ["endpoint", "outcome"], registry=self.registry)

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


class RateLimit:
    """A token bucket per client address: ``rate`` requests a second, bursts of ``2 * rate``. It remembers the
    ``MAX_CLIENTS`` most recent clients (a client forgotten comes back with a full bucket)."""

    MAX_CLIENTS = 100_000

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.burst = max(1.0, 2 * rate)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tokens, at)
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """0 if ``client`` may go now (and takes a token), else the seconds until it may."""
        now = time.monotonic()
        with self._lock:
            tokens, at = self._buckets.pop(client, (self.burst, now))
            tokens = min(self.burst, tokens + (now - at) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            self._buckets[client] = (tokens - 1 if wait == 0 else tokens, now)
            if len(self._buckets) > self.MAX_CLIENTS:
                self._buckets.popitem(last=False)
            return wait


class Guard:
    """ASGI middleware: rate limit (for requests without a token the service knows: producers holding one are
    trusted, and OpenLineage's HTTP transport does not retry a 429), declared body size, metrics. ``trusted``: whether
    an ``Authorization`` header presents a token the service knows."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics, rate_limit: float, max_body_bytes: int,
                 trusted: Callable[[str], bool] = lambda _: False) -> None:
        self.app = app
        self.metrics = metrics
        self.limit = RateLimit(rate_limit) if rate_limit > 0 else None
        self.max_body_bytes = max_body_bytes
        self.trusted = trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                await _answer(sending, refusal)
            else:
                await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            name = getattr(route, "path", None) or ("/explorer" if scope["path"].startswith("/explorer") else "other")
            method = scope["method"] if scope["method"] in METHODS else "OTHER"
            self.metrics.requests.labels(name, method, str(status[0])).inc()
            self.metrics.latency.labels(name).observe(time.perf_counter() - started)

    def _trusted(self, scope: Scope) -> bool:
        given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        return self.trusted(given.decode("latin-1"))  # as Starlette decodes headers

    def _refusal(self, scope: Scope) -> HttpError | None:
        if self.limit is not None and scope["path"] not in UNLIMITED and not self._trusted(scope):
            client = (scope.get("client") or ("?", 0))[0]
            wait = self.limit.wait(client)
            if wait > 0:
                return HttpError(429, f"too many requests from {client}: the limit is {self.limit.rate:g} a second",
                                 {"Retry-After": str(max(1, round(wait)))})
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    return HttpError(400, f"Content-Length {value.decode(errors='replace')!r} is not a number")
                if declared > self.max_body_bytes:
                    return HttpError(413, f"request body of {declared} bytes is over the limit of "
                                     f"{self.max_body_bytes} bytes")
        return None


async def _answer(send: Send, err: HttpError) -> None:
    body = json.dumps({"error": str(err), "message": str(err), "status": err.status,
                       "kind": KINDS.get(err.status, "HttpError")}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               *((k.lower().encode(), v.encode()) for k, v in err.headers.items())]
    await send({"type": "http.response.start", "status": err.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


KINDS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 413: "PayloadTooLarge", 415: "UnsupportedMediaType",
         429: "TooManyRequests"}


def bearer_token(authorization: str) -> str | None:
    """The token an ``Authorization: Bearer <token>`` header presents, or None."""
    scheme, _, given = authorization.partition(" ")
    given = given.strip()
    return given if scheme.lower() == "bearer" and given else None


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, decompressed (``Content-Encoding: gzip`` or ``deflate``), or 413 once it passes ``limit``
    bytes, compressed or not."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HttpError(413, f"request body is over the limit of {limit} bytes")
        chunks.append(chunk)
    body = b"".join(chunks)
    encoding = request.headers.get("content-encoding", "identity").lower()
    if encoding in ("identity", ""):
        return body
    if encoding not in ("gzip", "deflate"):
        raise HttpError(415, f"Content-Encoding {encoding!r} is not supported (gzip, deflate)")
    inflater = zlib.decompressobj(wbits=31 if encoding == "gzip" else 15)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise HttpError(400, f"the {encoding} request body cannot be decompressed: {exc}") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise HttpError(413, f"request body is over the limit of {limit} bytes once decompressed")
    if not inflater.eof:
        raise HttpError(400, f"the {encoding} request body is cut short")
    if inflater.unused_data:
        raise HttpError(400, f"the {encoding} request body is followed by other bytes")
    return out


def parse_json(body: bytes, what: str) -> Any:
    """``body`` as JSON, or 400 naming ``what`` and where the JSON breaks."""
    try:
        return json.loads(body)
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} is not UTF-8: {exc.reason} at byte {exc.start}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
