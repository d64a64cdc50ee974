"""Event times as the graph stores them: milliseconds since the epoch, UTC."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import Any

from fieldgraph.errors import EventError, InputError


def epoch_ms(value: Any, where: str) -> int:
    """``value`` (milliseconds, or an ISO 8601 time: one without an offset is UTC, whatever the machine's zone)
    in milliseconds; else :class:`EventError` at ``where``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return int(value)
    ms = iso_ms(value) if isinstance(value, str) and value else None
    if ms is None:
        raise EventError(f"{value!r} is not a time: it must be milliseconds or an ISO 8601 time", where=where)
    return ms


def iso_ms(text: str) -> int | None:
    """An ISO 8601 date or time in milliseconds since the epoch (UTC unless it says); None when it is not one."""
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int((t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp() * 1000)


def now_ms() -> int:
    """Now, in milliseconds since the epoch."""
    return int(time.time() * 1000)


def parse_time_or_now(text: str | None, option: str = "--at") -> int:
    """:func:`parse_time` of ``text``, now when it gives none."""
    when = parse_time(text, option)
    return now_ms() if when is None else when


def parse_time(text: str | None, option: str = "--since") -> int | None:
    """Milliseconds since the epoch from ``text``: an integer (ms) or an ISO 8601 date/time (UTC unless it says).

    ``None`` or empty: no bound. A bad value raises :class:`InputError` naming ``option`` and the value.
    """
    if text is None or text == "":
        return None
    t = text.strip()
    if t.lstrip("-").isdigit():
        return int(t)
    ms = iso_ms(t)
    if ms is None:
        raise InputError(f"{option} {text!r}: expected milliseconds since the epoch or an ISO 8601 date/time "
                         "such as 2024-05-01 or 2024-05-01T12:00:00Z")
    return ms
