"""Reading event files: JSON (one event, several one after another, or arrays of events) or JSON Lines, files
or folders, as a stream: a file is never held whole.

Each event keeps its place (``file:line``) so a bad one is reported and written to the rejects file without
stopping the rest.

- JSON Lines are read line by line, in binary, each line decoded as UTF-8 on its own: an invalid byte, a line
  that is not JSON, a line over :data:`MAX_EVENT_BYTES` or one nested deeper than :data:`MAX_DEPTH` costs that
  line only.
- A file whose first line starts with ``[`` (or a ``{`` that is not JSON on its own line: a pretty-printed
  object) is a JSON document: its top-level values (arrays of events, or events) are decoded one event at a
  time with :meth:`json.JSONDecoder.raw_decode` over a window of the file that grows while an event is cut
  at its end, up to :data:`MAX_EVENT_BYTES` (counted in characters). An event over that bound or nested deeper
  than :data:`MAX_DEPTH` is rejected and skipped (its brackets matched without decoding it); an event with an
  invalid UTF-8 byte is rejected; after a JSON syntax error the rest of the file is skipped, with that reason
  (where the next event would start is not known).
- A UTF-8 byte order mark at the start of a file (or of a JSON Lines line) is skipped.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import re
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from fieldgraph.changes import Change
from fieldgraph.errors import FieldgraphError

from .platforms import DEFAULT_MAPPING, PlatformMapping
from .sources import decode_event, unused_reason

SUFFIXES = (".json", ".jsonl", ".ndjson")

#: the largest event read (a JSON Lines line in bytes, an event of a JSON document in characters)
MAX_EVENT_BYTES = 64 * 2**20
#: the deepest nesting of an event's JSON. Python's JSON parser itself stops near the recursion limit (1000
#: frames, the caller's included): well below it, so that a document's fate never depends on how deep the
#: caller's stack is (a test runner, a Spark executor)
MAX_DEPTH = 256
#: how much of a JSON document is read at a time
CHUNK_BYTES = 2**20
#: how much of a bad event's text goes to the rejects file
TEXT_KEPT = 2000

BOM = codecs.BOM_UTF8
_DEC = json.JSONDecoder()
_NON_WS = re.compile(r"[^ \t\r\n]")
_BAD_BYTE = re.compile("[\udc80-\udcff]")  # an invalid UTF-8 byte, decoded with surrogateescape
_IN_STRING = re.compile(r'["\\]')
_OUT_STRING = re.compile(r'["\[\]{}]')


@dataclass
class RawEvent:
    file: str
    line: int
    event: Any = None
    error: str | None = None  # the event could not even be parsed
    text: str | None = None
    item: int = 1  # the event's place among those that start on its line (a one-line JSON array holds many)

    @property
    def where(self) -> str:
        """The event's origin: ``file:line``, or ``file:line#item`` for the second event of a line and on (each
        event its own origin: the graph's batches are cut between events)."""
        return where(self.file, self.line, self.item)


def where(file: str, line: int, item: int = 1) -> str:
    return f"{file}:{line}" if item == 1 else f"{file}:{line}#{item}"


def place(origin: str) -> tuple[str, int, int]:
    """(file, line, item) of an origin :func:`where` wrote (line 0 when it names none)."""
    file, _, rest = origin.rpartition(":")
    line, _, item = rest.partition("#")
    if not file or not line.isdigit():
        return origin, 0, 1
    return file, int(line), int(item) if item.isdigit() else 1


@dataclass
class Reject:
    file: str
    line: int
    error: str
    event: Any = None
    item: int = 1

    def to_json(self) -> dict[str, Any]:
        place = {"file": self.file, "line": self.line, **({"item": self.item} if self.item > 1 else {})}
        return {**place, "error": self.error, "event": self.event}


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


def read_events(path: Path, *, max_event_bytes: int = MAX_EVENT_BYTES, chunk_bytes: int = CHUNK_BYTES,
                on_read: Callable[[int], None] | None = None, first_line: int = 0, first_byte: int = 0
                ) -> Iterator[RawEvent]:
    """The events in one file, each with its line number, read as a stream (see the module's doc).

    ``path`` is a path, a binary file object, or an object with the file's bytes as ``data`` (the Spark
    backfill's). ``on_read`` is told the number of bytes of each read of the file (progress). ``first_line``:
    ``path`` is a part of a JSON Lines file (:func:`json_lines`) that starts at this line and at byte
    ``first_byte`` of the file, read as lines."""
    name = str(getattr(path, "name", path)) if hasattr(path, "read") else str(path)
    try:
        fh = _open(path)
    except (OSError, UnicodeDecodeError) as exc:
        yield RawEvent(name, 0, error=f"cannot read: {getattr(exc, 'strerror', None) or exc}")
        return
    owned = not hasattr(path, "read")
    src = _Source(fh, on_read)
    src.offset = src.seen = first_byte
    reader = _Reader(name, src, max_event_bytes, chunk_bytes)
    reader.line = first_line or 1
    try:
        yield from reader.lines() if first_line else reader.events()
    except OSError as exc:
        yield RawEvent(name, reader.line, error=f"cannot read (from here on): {exc.strerror or exc}")
    finally:
        if owned:
            fh.close()


def _open(path: Any) -> IO[bytes]:
    if isinstance(path, str | os.PathLike):
        return open(path, "rb")  # noqa: SIM115  # closed by read_events
    if hasattr(path, "read"):
        return path  # type: ignore[no-any-return]
    if isinstance(getattr(path, "data", None), bytes):
        return io.BytesIO(path.data)
    return io.BytesIO(path.read_text(encoding="utf-8").encode())


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n} bytes"


def too_deep(obj: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``obj`` (decoded JSON) nests lists and objects deeper than ``limit``."""
    stack = [(obj, 1)] if isinstance(obj, dict | list) else []
    while stack:
        o, depth = stack.pop()
        if depth > limit:
            return True
        for v in o.values() if isinstance(o, dict) else o:
            if isinstance(v, dict | list):
                stack.append((v, depth + 1))
    return False


def _might_nest(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether the JSON text might nest deeper than :data:`MAX_DEPTH` (it has more brackets): checked fast."""
    end = len(text) if end is None else end
    return text.count("{", start, end) + text.count("[", start, end) > MAX_DEPTH


DEEP = f"nested deeper than {MAX_DEPTH} levels"


class _Source:
    """A binary file read forwards, with bytes pushed back to read again; ``offset`` is the bytes consumed."""

    def __init__(self, fh: IO[bytes], on_read: Callable[[int], None] | None) -> None:
        self.fh, self.on_read = fh, on_read
        self.back, self.pos = b"", 0  # pushed-back bytes, from pos
        self.offset = self.seen = 0

    def _took(self, data: bytes) -> bytes:
        self.offset += len(data)
        if self.offset > self.seen:
            if self.on_read:
                self.on_read(self.offset - self.seen)
            self.seen = self.offset
        return data

    def read(self, n: int) -> bytes:
        if self.pos < len(self.back):
            out = self.back[self.pos:self.pos + n]
            self.pos += len(out)
            return self._took(out)
        return self._took(self.fh.read(n))

    def readline(self, limit: int) -> bytes:
        if self.pos < len(self.back):
            end = self.back.find(b"\n", self.pos, self.pos + limit)
            end = min(self.pos + limit, len(self.back)) if end < 0 else end + 1
            out = self.back[self.pos:end]
            self.pos = end
            if not out.endswith(b"\n") and len(out) < limit:
                out += self.fh.readline(limit - len(out))
            return self._took(out)
        return self._took(self.fh.readline(limit))

    def unread(self, data: bytes) -> None:
        self.back, self.pos = data + self.back[self.pos:], 0
        self.offset -= len(data)


class _Reader:
    """One file's events: JSON Lines, or a JSON document read through a window (:class:`_Document`)."""

    def __init__(self, name: str, src: _Source, max_event: int, chunk: int) -> None:
        self.name, self.src, self.max, self.chunk = name, src, max_event, chunk
        self.line = 1

    def events(self) -> Iterator[RawEvent]:
        head = self.src.read(len(BOM))
        if head != BOM:
            self.src.unread(head)
        while True:  # the first line that is not blank says the form
            first = self.src.readline(self.max + 1)
            if not first:
                return
            if first.strip():
                break
            self.line += 1
        self.src.unread(first)
        if _document(first, self.max):
            doc = _Document(self, may_be_lines=first.lstrip()[:1] == b"{")
            yield from doc.events()
            if not doc.not_json:
                return
            self.src.unread(doc.unread())  # not a JSON document: JSON Lines from the first line
        yield from self.lines()

    def lines(self) -> Iterator[RawEvent]:
        n = self.line
        while True:
            line = self.src.readline(self.max + 1)
            if not line:
                return
            self.line = n
            if len(line) > self.max and not line.endswith(b"\n"):
                while (rest := self.src.readline(self.chunk)) and not rest.endswith(b"\n"):
                    pass
                yield RawEvent(self.name, n, error=f"event larger than {_size(self.max)} (a line longer than that)",
                               text=line[:TEXT_KEPT].decode("utf-8", "replace"))
            elif line.strip():
                yield self.line_event(n, line)
            n += 1

    def line_event(self, n: int, line: bytes) -> RawEvent:
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            at = self.src.offset - len(line) + exc.start
            return RawEvent(self.name, n, error=f"not UTF-8: invalid byte 0x{line[exc.start]:02x} at byte offset "
                            f"{at} (byte {exc.start} of the line)",
                            text=line.decode("utf-8", "replace").rstrip("\r\n")[:TEXT_KEPT])
        text = text.removeprefix("\ufeff")
        try:
            obj = json.loads(text)
        except RecursionError:
            return RawEvent(self.name, n, error=DEEP, text=text[:TEXT_KEPT])
        except ValueError as exc:
            return RawEvent(self.name, n, error=f"not JSON: {exc}", text=text.rstrip("\r\n")[:TEXT_KEPT])
        if _might_nest(text) and too_deep(obj):
            return RawEvent(self.name, n, error=DEEP, text=text[:TEXT_KEPT])
        return RawEvent(self.name, n, obj)


def json_lines(path: str | Path, max_event_bytes: int = MAX_EVENT_BYTES) -> bool:
    """Whether the file is read as JSON Lines (its first line that is not blank is not the start of a JSON
    document): then each of its lines is read on its own, and the file can be read in parts cut at lines."""
    with open(path, "rb") as fh:
        if fh.read(len(BOM)) != BOM:  # as the reader does: the BOM skipped, then the line read
            fh.seek(0)
        first = fh.readline(max_event_bytes + 1)
        while first and not first.strip():
            first = fh.readline(max_event_bytes + 1)
    return not _document(first, max_event_bytes)


def _document(first: bytes, max_event: int) -> bool:
    """Whether a file whose first line that is not blank is ``first`` is a JSON document (not JSON Lines)."""
    start = first.lstrip()[:1]
    return start == b"[" or (start == b"{" and _pretty(first, max_event))


def _pretty(first: bytes, max_event: int) -> bool:
    """Whether a first line starting with ``{`` is not JSON on its own (the start of a pretty-printed object)."""
    if len(first) > max_event:
        return False
    try:
        json.loads(first.decode("utf-8").removeprefix("\ufeff"))
    except (UnicodeDecodeError, RecursionError):
        return False
    except ValueError:
        return True
    return False


class _Document:
    """A JSON document's events: its top-level values one after another, each array's items an event, any other
    value one. The window ``buf[i:]`` is what is read and not consumed yet; ``line`` is the line at
    ``buf[mark]``; invalid UTF-8 bytes are decoded as lone surrogates and noted in ``bad``."""

    def __init__(self, reader: _Reader, may_be_lines: bool) -> None:
        self.name, self.src, self.max, self.chunk = reader.name, reader.src, reader.max, reader.chunk
        self.dec = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self.buf, self.i, self.mark, self.line, self.shift = "", 0, 0, reader.line, 0
        self.eof = False
        self.fed = reader.src.offset  # the file's bytes decoded so far
        self.bad: deque[tuple[int, int, int]] = deque()  # (character index + shift, byte offset, byte)
        self.may_be_lines = may_be_lines  # a first value that is not JSON: the file is JSON Lines
        self.not_json = False
        self.last = (0, 0)  # (line, item) of the last event: the events of one line are numbered

    def unread(self) -> bytes:
        """The bytes read and not consumed (the whole document when ``not_json``)."""
        return self.buf[self.i:].encode("utf-8", "surrogateescape") + self.dec.getstate()[0]

    def line_at(self, p: int) -> int:
        self.line += self.buf.count("\n", self.mark, p)
        self.mark = p
        return self.line

    def more(self) -> bool:
        """Read more of the file into the window, dropping what was consumed; False at the file's end."""
        if self.eof:
            return False
        if self.i:
            self.line_at(self.i)
            self.buf, self.shift, self.mark, self.i = self.buf[self.i:], self.shift + self.i, 0, 0
        pending = len(self.buf)  # an event cut at the window's end: read as much again (up to the bound)
        data = self.src.read(max(self.chunk, min(pending, self.max - pending)))
        at = self.fed - len(self.dec.getstate()[0])
        self.fed += len(data)
        text = self.dec.decode(data, final=not data)
        self.eof = not data
        if not text.isascii() and _has_bad_byte(text):
            base, k = self.shift + len(self.buf), 0
            for m in _BAD_BYTE.finditer(text):
                at += len(text[k:m.start()].encode("utf-8", "surrogateescape"))
                k = m.start()
                self.bad.append((base + k, at, ord(m.group()) - 0xDC00))
        self.buf += text
        return bool(data or text)

    def bad_in(self, start: int, end: int) -> tuple[int, int, int] | None:
        while self.bad and self.bad[0][0] < self.shift + start:
            self.bad.popleft()
        return self.bad[0] if self.bad and self.bad[0][0] < self.shift + end else None

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            m = _NON_WS.search(self.buf, self.i)
            if m:
                self.i = m.start()
                return self.buf[self.i]
            self.i = len(self.buf)
            if not self.more():
                return ""

    def text(self, start: int) -> str:
        return self.buf[start:start + TEXT_KEPT].encode("utf-8", "surrogateescape").decode("utf-8", "replace")

    def events(self) -> Iterator[RawEvent]:
        while c := self.peek():
            if c != "[":
                if not (yield from self.event()):
                    return
                continue
            self.i += 1
            if self.peek() == "]":
                self.i += 1
                continue
            while (yield from self.event()):
                c = self.peek()
                self.i += c in (",", "]")
                if c == "]":
                    break
                if c != ",":
                    yield self.stop("unterminated JSON array" if not c else "expected ',' or ']' in the JSON array")
                    return
            else:
                return

    def stop(self, reason: str) -> RawEvent:
        return RawEvent(self.name, self.line_at(self.i), error=f"{reason} (the rest of the file is skipped)",
                        text=self.text(self.i) or None)

    def event(self) -> Generator[RawEvent, None, bool]:
        """Yield the next event (or its reject); whether the file goes on."""
        if not self.peek():
            yield self.stop("unterminated JSON array")
            return False
        line = self.line_at(self.i)
        item = self.last[1] + 1 if line == self.last[0] else 1
        self.last = (line, item)
        kind, obj, end = self.decode()
        if kind == "error":
            if self.may_be_lines:
                self.not_json = True
                return False
            bad = self.bad_in(self.i, max(end or 0, self.i) + 1)
            yield self.stop(_bad_byte(bad) if bad else f"not JSON: {getattr(obj, 'msg', obj)}")
            return False
        self.may_be_lines = False
        if kind != "ok":
            reason, text = DEEP if kind == "deep" else f"event larger than {_size(self.max)}", self.text(self.i)
            if end is None and (self.buf[self.i] not in "[{" or not self.skip()):
                yield self.stop(reason)
                return False
            self.i = end or self.i
            yield RawEvent(self.name, line, error=reason, text=text, item=item)
            return True
        assert end is not None
        start, self.i = self.i, end
        bad = self.bad_in(start, end)
        yield RawEvent(self.name, line, error=_bad_byte(bad), text=self.text(start), item=item) if bad else \
            RawEvent(self.name, line, obj, item=item)
        return True

    def decode(self) -> tuple[str, Any, int | None]:
        """("ok", the value at ``i``, its end), ("error", the exception, where), or "deep" or "big" (with its end
        when known), reading more while it is cut at the window's end."""
        while True:
            try:
                obj, end = _DEC.raw_decode(self.buf, self.i)
            except RecursionError:
                return "deep", None, None
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(self.buf) - 16 or exc.msg.startswith("Unterminated string")
                if cut and len(self.buf) - self.i >= self.max:
                    return "big", None, None
                if cut and self.more():
                    continue
                return "error", exc, exc.pos
            except ValueError as exc:  # e.g. an integer of more digits than Python converts
                return "error", exc, self.i
            if end == len(self.buf) and self.buf[end - 1] not in '}]"' and self.more():
                continue  # a number or literal cut at the window's end
            if end - self.i > self.max:
                return "big", None, end
            if _might_nest(self.buf, self.i, end) and too_deep(obj):
                return "deep", None, end
            return "ok", obj, end

    def skip(self) -> bool:
        """Move past the object or array at ``i`` by matching its brackets (strings skipped) without decoding
        it; False when the file ends first."""
        depth, in_string = 0, False
        while True:
            buf, j = self.buf, self.i
            while m := (_IN_STRING if in_string else _OUT_STRING).search(buf, j):
                c, j = m.group(), m.end()
                if in_string and c == "\\":
                    if j == len(buf):
                        j -= 1  # keep the backslash with what it escapes
                        break
                    j += 1
                elif in_string or c == '"':
                    in_string = not in_string
                elif c in "[{":
                    depth += 1
                else:
                    depth -= 1
                    if depth == 0:
                        self.i = j
                        return True
            else:
                j = len(buf)
            self.i = j
            if not self.more():
                return False


def _has_bad_byte(text: str) -> bool:
    try:
        text.encode("utf-8")  # fast; lone surrogates (the invalid bytes) cannot be encoded
    except UnicodeEncodeError:
        return True
    return False


def _bad_byte(bad: tuple[int, int, int]) -> str:
    return f"not UTF-8: invalid byte 0x{bad[2]:02x} at byte offset {bad[1]}"


def decode(raw: RawEvent, platforms: PlatformMapping = DEFAULT_MAPPING, *,
           strict_aspects: bool = False) -> tuple[list[Change], Reject | None]:
    """The changes of one raw event, or why it is rejected. An event with nothing fieldgraph reads (another
    entity or aspect) gives no change, or, ``strict_aspects``, a reject."""
    if raw.error is not None:
        return [], Reject(raw.file, raw.line, raw.error, raw.text, raw.item)
    try:
        changes = decode_event(raw.event, origin=raw.where, platforms=platforms)
    except FieldgraphError as exc:
        return [], Reject(raw.file, raw.line, str(exc), raw.event, raw.item)
    if not changes and strict_aspects:
        return [], Reject(raw.file, raw.line, unused_reason(raw.event), raw.event, raw.item)
    return changes, None


def refused_rejects(refused: Iterable[tuple[str, str]]) -> list[Reject]:
    """Rejects for events the graph refused, named by origin (``file:line[#item]``), each with its event read
    again (only those events are kept: the files are read as a stream)."""
    wanted: dict[str, dict[tuple[int, int], str]] = {}
    for origin, reason in refused:
        file, line, item = place(origin)
        wanted.setdefault(file, {})[line, item] = reason
    out: list[Reject] = []
    for file, places in wanted.items():
        events: dict[tuple[int, int], Any] = {}
        if Path(file).is_file():
            for raw in read_events(Path(file)):
                if (raw.line, raw.item) in places:
                    events[raw.line, raw.item] = raw.event if raw.error is None else raw.text
                    if len(events) == len(places):
                        break
        out.extend(Reject(file, line, reason, events.get((line, item)), item)
                   for (line, item), reason in sorted(places.items()))
    return out


class RejectsFile:
    """The JSON Lines file bad events are appended to as they come (earlier runs' rejects stay), each stamped
    with the time; created at the first one, private to the user (0600, in a folder created 0700: bad events
    may hold what should not be shared)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._fh: IO[str] | None = None

    def add(self, rejects: Iterable[Reject]) -> None:
        import datetime as dt

        for r in rejects:
            if self._fh is None:
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                self._fh = open(fd, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
            now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            try:
                line = json.dumps({"rejectedAt": now, **r.to_json()}, default=str)
            except (ValueError, RecursionError):  # an event json cannot write back
                line = json.dumps({"rejectedAt": now, **r.to_json(), "event": None})
            self._fh.write(line + "\n")
            self.count += 1

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> RejectsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_rejects(path: Path, rejects: Iterable[Reject]) -> None:
    """Append ``rejects`` to the JSON Lines file ``path`` (earlier runs' rejects stay), stamped with the time."""
    with RejectsFile(path) as out:
        out.add(rejects)
