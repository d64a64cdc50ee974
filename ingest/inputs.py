"""The backfill's inputs: the files it is given (:func:`list_inputs`), read by its tasks as records of events
(:func:`read_inputs`, :func:`raw_events`).

Local files are read by the tasks themselves, in splits, so that no task holds a whole file and a large file is
read in parallel. A JSON Lines file (:func:`fieldgraph.ingest.replay.json_lines`) larger than :data:`SPLIT_BYTES`
is cut into splits at line starts. Each split knows the line number of its first line, counted by a first pass
over the splits (:func:`count_lines`, one task each), so every event keeps its place (``file:line``) and its
arrival order exactly as when the file is read whole. Any other local file is one split read from its start (a
JSON document, an Avro container or a Parquet file). The bytes never go through Spark's JVM, whose heap a file of
gigabytes does not fit. Files named by URI (``hdfs://``, ``s3a://``) are read whole, through Hadoop
(``binaryFiles``).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from fieldgraph.errors import InputError

from .decode import READ_NAMED, avro_to_json
from .replay import RawEvent, json_lines, read_events

FORMATS = ("json", "jsonl", "avro", "parquet")
SUFFIX_FORMATS = {".json": "json", ".jsonl": "json", ".ndjson": "json", ".avro": "avro", ".parquet": "parquet"}
#: the size a JSON Lines file is cut into splits of
SPLIT_BYTES = 64 << 20
#: how much of a file is read at a time when counting lines or looking for a line's end
_CHUNK = 1 << 20


class BackfillError(InputError):
    """The backfill cannot start: a bad option or input path."""


# --- listing ---------------------------------------------------------------------------------------


def is_uri(p: str) -> bool:
    return "://" in p and not p.startswith("file://")


def list_inputs(paths: Sequence[str], fmt: str | None = None) -> list[str]:
    """The input files, in replay order (``fieldgraph ingest``'s: arguments in order, folders sorted).

    Local folders are searched recursively for files with a known suffix (any file when ``fmt`` is
    given); URIs (``hdfs://``, ``s3a://`` ...) are passed to Spark as they are.
    """
    if fmt is not None and fmt not in FORMATS:
        raise BackfillError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    out: list[str] = []
    for p in paths:
        if is_uri(p):
            out.append(p)
            continue
        path = Path(p[len("file://"):] if p.startswith("file://") else p)
        if path.is_dir():
            found = sorted(f for f in path.rglob("*") if f.is_file() and not f.name.startswith((".", "_"))
                           and (fmt is not None or f.suffix.lower() in SUFFIX_FORMATS))
            out.extend(str(f.absolute()) for f in found)
        elif path.exists():
            if fmt is None and path.suffix.lower() not in SUFFIX_FORMATS:
                raise BackfillError(f"{path}: cannot tell the format from the suffix {path.suffix!r}; "
                                    f"pass --format ({'|'.join(FORMATS)})")
            out.append(str(path.absolute()))
        else:
            raise BackfillError(f"{path}: no such file or folder")
    if not out:
        raise BackfillError(f"no event files in {', '.join(paths)} (looked for {', '.join(SUFFIX_FORMATS)})")
    return out


def local_name(name: str) -> str:
    """A Spark file name (``file:/a/b``) as the plain path :func:`list_inputs` gives."""
    if name.startswith("file://"):
        return name[len("file://"):]
    if name.startswith("file:"):
        return name[len("file:"):]
    return name


# --- reading records (executors) ----------------------------------------------------------------------


class _Blob:
    """A file's bytes where :func:`fieldgraph.ingest.replay.read_events` expects a ``Path``."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data = name, data

    def __str__(self) -> str:
        return self.name

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.data.decode(encoding)


def _record_event(name: str, n: int, rec: Any, value_column: str) -> RawEvent:
    """A record of an Avro or Parquet file: the event itself (as DataHub's JSON has it), or its JSON text in
    ``value_column``."""
    wrapped = isinstance(rec, dict) and value_column in rec and not (
        {"entityType", "proposedSnapshot", "newSnapshot"} & set(rec))
    if wrapped and rec[value_column] is None:
        return RawEvent(name, n, error=f"column {value_column!r} is null (a tombstone?)")
    try:
        rec = avro_to_json(rec)
    except UnicodeDecodeError as exc:
        return RawEvent(name, n, error=f"record is not UTF-8: {exc}")
    if wrapped:
        value = rec[value_column]
        if isinstance(value, str):
            try:
                return RawEvent(name, n, json.loads(value))
            except ValueError as exc:
                return RawEvent(name, n, error=f"column {value_column!r} is not JSON: {exc}", text=value[:2000])
        return RawEvent(name, n, value)
    return RawEvent(name, n, rec)


def format_of(name: str, fmt: str | None) -> str:
    """The format a file is read in: ``fmt`` (JSON Lines are read as JSON), else the one its suffix names."""
    fmt = fmt or SUFFIX_FORMATS.get(os.path.splitext(name)[1].lower(), "json")
    return "json" if fmt == "jsonl" else fmt


def raw_events(name: str, data: bytes | Split, fmt: str | None = None, value_column: str = "value"
               ) -> Iterator[RawEvent]:
    """The events of one file's bytes or of a split of a local file (:class:`Split`), each with
    its place (``file:line``, or ``file:record`` for Avro/Parquet)."""
    fmt = format_of(name, fmt)
    if fmt == "json":  # the same reader as `fieldgraph ingest`
        yield from split_events(data) if isinstance(data, Split) else read_events(_Blob(name, data))  # type: ignore[arg-type]
        return
    if fmt == "avro":
        import fastavro

        n = 0
        try:
            with _opened(data) as fh:
                for n, rec in enumerate(fastavro.reader(fh, **READ_NAMED), start=1):
                    yield _record_event(name, n, rec, value_column)
        except Exception as exc:  # a truncated or corrupt container: keep what was read, reject the rest
            yield RawEvent(name, n + 1, error=f"not a readable Avro container file (from record {n + 1} on): "
                                               f"{type(exc).__name__}: {exc}")
        return
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(data.file if isinstance(data, Split) else io.BytesIO(data))
        except Exception as exc:
            yield RawEvent(name, 0, error=f"not a readable Parquet file: {type(exc).__name__}: {exc}")
            return
        if value_column not in table.column_names:
            yield RawEvent(name, 0, error=f"Parquet file has no column {value_column!r} (columns: "
                                          f"{', '.join(table.column_names)}); pass --value-column")
            return
        for n, value in enumerate(table.column(value_column).to_pylist(), start=1):
            yield _record_event(name, n, {value_column: value}, value_column)
        return
    raise BackfillError(f"unknown format {fmt!r}")


def _opened(data: bytes | Split) -> IO[bytes]:
    return open(data.file, "rb") if isinstance(data, Split) else io.BytesIO(data)


def read_inputs(sc: Any, files: Sequence[str], fmt: str | None, parts: int) -> Any:
    """The input files as an RDD of (file, bytes or :class:`Split`) records. Local
    files are read by the tasks themselves, in splits (JSON Lines files cut at lines, numbered by a first pass
    that counts them); files named by URI are read whole, through Hadoop (``binaryFiles``)."""
    local = [f for f in files if not is_uri(f)]
    uris = [f for f in files if is_uri(f)]
    rdds = []
    if local:
        splits = plan_splits(local, [format_of(f, fmt) for f in local])
        cut = {s.file for s in splits if not s.first}
        if cut:
            counted = [s for s in splits if s.file in cut]
            counts = dict(zip(counted, sc.parallelize(counted, len(counted)).map(count_lines).collect(), strict=True))
            splits = numbered(splits, [counts.get(s, 0) for s in splits])
        rdds.append(sc.parallelize([(s.file, s) for s in splits], max(parts, min(len(splits), 4 * parts))))
    if uris:
        sc._jsc.hadoopConfiguration().set("mapreduce.input.fileinputformat.input.dir.recursive", "true")
        rdds.append(sc.binaryFiles(",".join(uris), minPartitions=max(parts, min(len(uris), 4 * parts))))
    return rdds[0] if len(rdds) == 1 else sc.union(rdds)


# --- splits ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Split:
    """Bytes ``[start, end)`` of ``file``: whole lines, the first of them line ``line`` (0 while not counted).
    (A dataclass, not a NamedTuple: pyspark's namedtuple patch would unpickle one as another class.)"""

    file: str
    start: int
    end: int
    line: int = 1

    @property
    def first(self) -> bool:
        """Whether the split starts the file (its form, JSON Lines or a document, is read from its start)."""
        return self.start == 0


def plan_splits(files: Sequence[str], formats: Sequence[str], size: int | None = None) -> list[Split]:
    """``files`` (local paths, each of the format at the same place in ``formats``) as splits, in order. A JSON
    Lines file larger than ``size`` (default :data:`SPLIT_BYTES`) is cut where a line starts at or after each
    multiple of it; its splits after the first have no line number yet (:func:`numbered`)."""
    size = size or SPLIT_BYTES
    out: list[Split] = []
    for file, fmt in zip(files, formats, strict=True):
        total = os.path.getsize(file)
        if fmt != "json" or total <= size or not _json_lines(file):
            out.append(Split(file, 0, total))
            continue
        starts = line_starts(file, range(size, total, size))
        bounds = [0, *starts, total]
        out += [Split(file, a, b, 1 if a == 0 else 0) for a, b in zip(bounds, bounds[1:], strict=False)]
    return out


def _json_lines(file: str) -> bool:
    """:func:`json_lines`; a file that cannot be read is not cut (its task reports it: :func:`split_events`)."""
    try:
        return json_lines(file)
    except OSError:
        return False


def line_starts(file: str, offsets: range) -> list[int]:
    """The first line start at or after each of ``offsets`` (each distinct, before the file's end, in order)."""
    out: list[int] = []
    with open(file, "rb") as fh:
        for at in offsets:
            if out and out[-1] >= at:  # a line longer than a split: its start was found from an earlier offset
                continue
            start = _line_start(fh, at)
            if start is None:  # the last line starts before ``at``
                break
            out.append(start)
    return out


def _line_start(fh: IO[bytes], at: int) -> int | None:
    """The offset of the first line that starts at or after ``at`` > 0 (None: none does)."""
    fh.seek(at - 1)
    pos = at - 1
    while chunk := fh.read(_CHUNK):
        nl = chunk.find(b"\n")
        if nl >= 0:
            end = os.fstat(fh.fileno()).st_size
            return pos + nl + 1 if pos + nl + 1 < end else None
        pos += len(chunk)
    return None


def count_lines(split: Split) -> int:
    """The newlines in ``split``: the number of lines it holds (but for a last line with no newline)."""
    n, left = 0, split.end - split.start
    with open(split.file, "rb") as fh:
        fh.seek(split.start)
        while left > 0 and (chunk := fh.read(min(_CHUNK, left))):
            n += chunk.count(b"\n")
            left -= len(chunk)
    return n


def numbered(splits: Sequence[Split], counts: Sequence[int]) -> list[Split]:
    """``splits`` (as :func:`plan_splits` gives them, in order) with line numbers, from ``counts``: the lines of
    each split, as :func:`count_lines` counts them."""
    out: list[Split] = []
    line = 1
    for split, n in zip(splits, counts, strict=True):
        if split.first:
            line = 1
        out.append(replace(split, line=line))
        line += n
    return out


def split_events(split: Split) -> Iterator[RawEvent]:
    """The events of a JSON or JSON Lines split, each with its place in the file (:func:`read_events`)."""
    if not split.first and not split.line:
        raise ValueError(f"{split.file}: a split from byte {split.start} has no line number (see numbered())")
    try:
        fh = open(split.file, "rb")  # noqa: SIM115  # closed below
    except OSError as exc:  # as read_events says it: one reject for the file (or this split of it)
        yield RawEvent(split.file, 0 if split.first else split.line, error=f"cannot read: {exc.strerror or exc}")
        return
    with fh:  # a first split is read from the file's start, its form (lines or a document) read there
        yield from read_events(_Range(fh, split), first_line=0 if split.first else split.line,  # type: ignore[arg-type]
                               first_byte=split.start)


class _Range:
    """A split of an open file as a binary file :func:`read_events` reads: it ends at the split's end."""

    def __init__(self, fh: IO[bytes], split: Split) -> None:
        self.fh, self.name, self.left = fh, split.file, split.end - split.start
        fh.seek(split.start)

    def read(self, n: int = -1) -> bytes:
        return self._took(self.fh.read(self.left if n < 0 else min(n, self.left)))

    def readline(self, limit: int = -1) -> bytes:
        return self._took(self.fh.readline(self.left if limit < 0 else min(limit, self.left)))

    def _took(self, data: bytes) -> bytes:
        self.left -= len(data)
        return data
