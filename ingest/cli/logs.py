"""Log lines on stderr: ``--log-level`` and ``--log-format text|json`` (or ``FIELDGRAPH_LOG_LEVEL``/``_FORMAT``).

fieldgraph's own loggers (``fieldgraph.*``: the worker's progress lines, the embedded graph's start-up)
log at the chosen level, INFO by default; other libraries' (librdkafka's, py4j's, the Neo4j driver's)
from WARNING up, or DEBUG with ``--log-level debug``. JSON lines carry ``time``, ``level``, ``logger``,
``message`` and, for an error with a traceback, ``exception``: one object per line, for log collectors.
Credentials are masked in every line (URI passwords, secret settings).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from typing import Any

from fieldgraph.ingest.secrets import redact

LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("text", "json")


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler that writes to whatever ``sys.stderr`` is when a line is logged (tests swap it)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _: Any) -> None:
        pass


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message``, every credential masked (:func:`fieldgraph.ingest.secrets.redact`)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line, every credential masked."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": redact(record.getMessage()),
        }
        if record.exc_info:
            line["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(line, default=str)  # masked before encoding: JSON escapes the quotes redact looks for


def setup_logging(level: str = "info", fmt: str = "text") -> None:
    """Send log records to stderr at ``level`` in ``fmt`` (replacing an earlier setup: callable again)."""
    root = logging.getLogger()
    for h in [h for h in root.handlers if isinstance(h, _Stderr)]:
        root.removeHandler(h)
    handler = _Stderr()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root.addHandler(handler)
    chosen = getattr(logging, level.upper())
    root.setLevel(chosen if chosen == logging.DEBUG else max(chosen, logging.WARNING))
    logging.getLogger("fieldgraph").setLevel(chosen)
    # librdkafka's connection attempts and retries: fieldgraph reports an unreachable broker once itself
    logging.getLogger("librdkafka").setLevel(logging.DEBUG if chosen == logging.DEBUG else logging.CRITICAL)
