"""Reading event files: JSON (one event or an array of events) or JSON Lines, files or folders.

Each event keeps its place (``file:line``) so a bad one is reported and written to the rejects
file without stopping the rest.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fieldgraph.changes import Change
from fieldgraph.errors import FieldgraphError

from .sources import decode_event, unused_reason
from .sources.openlineage import DEFAULT_MAPPING, PlatformMapping

SUFFIXES = (".json", ".jsonl", ".ndjson")


@dataclass
class RawEvent:
    file: str
    line: int
    event: Any = None
    error: str | None = None  # the event could not even be parsed
    text: str | None = None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Reject:
    file: str
    line: int
    error: str
    event: Any = None

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "error": self.error, "event": self.event}


def event_files(paths: Iterable[str | Path]) -> list[Path]:
    """The event files named by ``paths`` (folders are searched recursively for .json/.jsonl/.ndjson)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return out


def read_events(path: Path) -> Iterator[RawEvent]:
    """The events in one file, each with its line number."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        yield RawEvent(name, 0, error=f"cannot read: {getattr(exc, 'strerror', None) or exc}")
        return
    stripped = text.lstrip()
    if not stripped:
        return
    first_line = text.count("\n", 0, len(text) - len(stripped)) + 1
    if stripped[0] == "[":
        yield from _array(name, text)
        return
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        yield RawEvent(name, first_line, obj)
        return
    for n, line in enumerate(text.splitlines(), start=1):  # JSON Lines
        if not line.strip():
            continue
        try:
            yield RawEvent(name, n, json.loads(line))
        except ValueError as exc:
            yield RawEvent(name, n, error=f"not JSON: {exc}", text=line[:2000])


def _array(name: str, text: str) -> Iterator[RawEvent]:
    dec = json.JSONDecoder()
    i = text.index("[") + 1
    n = len(text)

    def skip(i: int) -> int:
        while i < n and text[i] in " \t\r\n":
            i += 1
        return i

    i = skip(i)
    if i < n and text[i] == "]":
        return
    while i < n:
        line = text.count("\n", 0, i) + 1
        try:
            obj, end = dec.raw_decode(text, i)
        except ValueError as exc:
            yield RawEvent(name, line, error=f"not JSON (the rest of the array is skipped): {exc}")
            return
        yield RawEvent(name, line, obj)
        i = skip(end)
        if i < n and text[i] == ",":
            i = skip(i + 1)
        elif i < n and text[i] == "]":
            return
        else:
            yield RawEvent(name, text.count("\n", 0, i) + 1, error="expected ',' or ']' in the JSON array")
            return
    yield RawEvent(name, text.count("\n") + 1, error="unterminated JSON array")


def decode(raw: RawEvent, platforms: PlatformMapping = DEFAULT_MAPPING, *,
           strict_aspects: bool = False) -> tuple[list[Change], Reject | None]:
    """The changes of one raw event, or why it is rejected. An event with nothing fieldgraph reads (another
    entity or aspect) gives no change, or, ``strict_aspects``, a reject."""
    if raw.error is not None:
        return [], Reject(raw.file, raw.line, raw.error, raw.text)
    try:
        changes = decode_event(raw.event, origin=raw.where, platforms=platforms)
    except FieldgraphError as exc:
        return [], Reject(raw.file, raw.line, str(exc), raw.event)
    if not changes and strict_aspects:
        return [], Reject(raw.file, raw.line, unused_reason(raw.event), raw.event)
    return changes, None


def refused_rejects(refused: Iterable[tuple[str, str]]) -> list[Reject]:
    """Rejects for events the graph refused, named by origin (``file:line``), each with its event read again."""
    wanted: dict[str, dict[int, str]] = {}
    for origin, reason in refused:
        file, _, line = origin.rpartition(":")
        wanted.setdefault(file, {})[int(line) if line.isdigit() else 0] = reason
    out: list[Reject] = []
    for file, lines in wanted.items():
        events = {raw.line: raw.event for raw in read_events(Path(file))} if Path(file).is_file() else {}
        out.extend(Reject(file, line, reason, events.get(line)) for line, reason in sorted(lines.items()))
    return out


def write_rejects(path: Path, rejects: list[Reject]) -> None:
    """Append ``rejects`` to the JSON Lines file ``path`` (earlier runs' rejects stay), stamped with the time."""
    import datetime as dt

    path.parent.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    with path.open("a", encoding="utf-8") as fh:
        for r in rejects:
            fh.write(json.dumps({"rejectedAt": now, **r.to_json()}, default=str) + "\n")
