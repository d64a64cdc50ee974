"""Event times as the graph stores them: milliseconds since the epoch, UTC."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from fieldgraph.errors import EventError


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
