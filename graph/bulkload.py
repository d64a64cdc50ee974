"""Bulk load: a whole graph (a :class:`~fieldgraph.graph.snapshot.Snapshot`) into an EMPTY store, with the
store's own importer instead of Cypher writes.

- Neo4j: :func:`write_neo4j_import` writes the CSV files ``neo4j-admin database import full`` reads (one node
  file per label, one relationship file per type, typed headers); :func:`import_neo4j` runs the importer into a
  STOPPED server's database (it replaces the database files); after the server starts, ``ensure_schema()``
  (any ``open_store``) creates the constraints and indexes.
- FalkorDB: :func:`load_falkordb` sends the graph with ``GRAPH.BULK``, the command ``falkordb-bulk-loader``
  sends, encoding each value itself. The loader's CSV path is not used because it does not keep every value:
  it strips whitespace around every string, reads an empty string as no property, and re-infers the type of
  each array element from its text (``["007", "true"]`` comes back as ``[7, True]``). ``GRAPH.BULK BEGIN``
  refuses an existing graph key.

Why only an empty store (:class:`GraphNotEmpty` otherwise): the importers build a new graph. Neo4j's replaces
the database files, so a graph already there would be lost; FalkorDB's numbers the new nodes from 0 and cannot
refer to nodes already in the graph. And merging a bulk-built graph into a live one would not be what streaming
the same history gives: the streaming path places each version in time against what the graph already holds
(past edges, field states, placeholders resolved); two graphs built apart and put side by side would duplicate
nodes and keep both presents. To add history to a graph that has some, stream it (``fieldgraph backfill``
without ``--bulk``), or clear the graph first.

Values come back as the streaming path stores them: str, int, float, bool and lists of them, each with its
type; an absent property stays absent (never null or empty). Neo4j's CSV types each column, so a property of
one label (or relationship type) with values of two types is refused (:class:`BulkLoadError` naming it).
"""

from __future__ import annotations

import math
import os
import shlex
import struct
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import Any, TypeVar, cast

from fieldgraph.errors import BulkLoadError, GraphNotEmpty

from .snapshot import EdgeRow, NodeRow, Snapshot
from .store import FalkorStore, GraphStore, falkordb_says

#: characters a Neo4j array may be delimited with: the first one no element holds is used
ARRAY_DELIMITERS = ("\x1f", "\x1e", "\x1d", "\x1c", "\x07", ";", "|", "\t")
_INT64 = (-(1 << 63), (1 << 63) - 1)

T = TypeVar("T")

ADVICE = ("the bulk load builds a new graph; to add this history to a graph that holds one, stream it "
          "(`fieldgraph backfill` without --bulk), or clear the graph first")


# --- typing the properties ---------------------------------------------------------------------------------


def value_type(v: Any, where: str, key: str) -> str:
    """Neo4j's CSV type of one property value: ``string``, ``long``, ``double``, ``boolean`` or an array of one
    (``string[]`` ...); ``[]`` for an empty list (its element type comes from the other values)."""
    if isinstance(v, list):
        kinds = {value_type(x, where, key) for x in v}
        if not kinds:
            return "[]"
        if len(kinds) > 1 or next(iter(kinds)).endswith("]"):
            raise BulkLoadError(f"{where}.{key}: a list of mixed or nested values ({sorted(kinds)}) cannot be "
                                "bulk loaded")
        return f"{kinds.pop()}[]"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        if not _INT64[0] <= v <= _INT64[1]:
            raise BulkLoadError(f"{where}.{key}: {v} does not fit a 64-bit integer")
        return "long"
    if isinstance(v, float):
        if not math.isfinite(v):
            raise BulkLoadError(f"{where}.{key}: {v} is not a finite number")
        return "double"
    if isinstance(v, str):
        return "string"
    raise BulkLoadError(f"{where}.{key}: a {type(v).__name__} value cannot be bulk loaded")


def property_types(rows: Iterable[dict[str, Any]], where: str) -> dict[str, str]:
    """The one type of each property key of ``rows`` (the props of one label's nodes or one type's edges);
    :class:`BulkLoadError` naming ``where`` and the key when a key has values of two types. Column by column: a
    column of one scalar type is typed by its value classes alone (and the range of its numbers)."""
    rows = list(rows)
    keys = dict.fromkeys(chain.from_iterable(rows))
    return {k: _column_type([v for v in map(dict.get, rows, repeat(k)) if v is not None], where, k) for k in keys}


def _column_type(values: list[Any], where: str, key: str) -> str:
    classes = set(map(type, values))
    if len(classes) == 1:
        (cls,) = classes
        if cls is str or cls is bool:
            return _PLAIN[cls]
        if cls is int and _INT64[0] <= min(values) and max(values) <= _INT64[1]:
            return "long"
        if cls is float and all(map(math.isfinite, values)):
            return "double"
    types: dict[str, str] = {}  # value by value: lists, and the values to name in an error
    for v in values:
        t = _PLAIN.get(v.__class__) or value_type(v, where, key)  # str and bool need no check
        have = types.get(key)
        if have == t:
            continue
        if have is None or have == "[]":
            types[key] = t
        elif not (t == "[]" and have.endswith("[]")):
            raise BulkLoadError(f"property {key!r} of {where} has values of two types ({have} and {t}): "
                                "Neo4j's importer types each column; make the values of one type")
    return "string[]" if types[key] == "[]" else types[key]


_PLAIN = {str: "string", bool: "boolean"}


# --- Neo4j: the import files --------------------------------------------------------------------------------


@dataclass
class Neo4jImport:
    """The files of one ``neo4j-admin database import full`` and the options they need."""

    folder: Path
    #: (label, file) and (type, file): a file per label (type) and part, its header its first line
    nodes: list[tuple[str, Path]] = field(default_factory=list)
    relationships: list[tuple[str, Path]] = field(default_factory=list)
    array_delimiter: str = ARRAY_DELIMITERS[0]
    #: some string holds a line break: the importer must read fields over several lines (slower)
    multiline: bool = False
    node_count: int = 0
    edge_count: int = 0

    def options(self, *, threads: int | None = None, high_parallel_io: str = "on",
                max_off_heap_memory: str | None = None) -> list[str]:
        """The importer's options for these files (without the database name)."""
        delim = self.array_delimiter
        opts = [
            "--id-type=integer",
            f"--array-delimiter={delim if delim.isprintable() and delim != ' ' else f'U+{ord(delim):04X}'}",
            f"--multiline-fields={'true' if self.multiline else 'false'}",
            "--bad-tolerance=0", "--skip-bad-relationships=false", "--skip-duplicate-nodes=false",
            "--trim-strings=false", "--ignore-empty-strings=false", f"--high-parallel-io={high_parallel_io}",
        ]
        if threads:
            opts.append(f"--threads={threads}")
        if max_off_heap_memory:
            opts.append(f"--max-off-heap-memory={max_off_heap_memory}")
        opts += [f"--nodes={label}={path}" for label, path in sorted(self.nodes)]
        opts += [f"--relationships={t}={path}" for t, path in sorted(self.relationships)]
        return opts

    @classmethod
    def merged(cls, imports: Sequence[Neo4jImport]) -> Neo4jImport:
        """The files of parts written apart (in one folder, with one delimiter), as one import."""
        out = cls(imports[0].folder, array_delimiter=imports[0].array_delimiter)
        for i in imports:
            if (i.folder, i.array_delimiter) != (out.folder, out.array_delimiter):
                raise BulkLoadError(f"import files in {i.folder} do not fit those in {out.folder}")
            out.nodes += i.nodes
            out.relationships += i.relationships
            out.multiline |= i.multiline
            out.node_count += i.node_count
            out.edge_count += i.edge_count
        return out

    def command(self, database: str = "neo4j", **kw: Any) -> str:
        """The shell command a user runs (``neo4j-admin`` of the stopped server's installation)."""
        args = ["neo4j-admin", "database", "import", "full", database, "--overwrite-destination=true",
                *self.options(**kw)]
        return " ".join(shlex.quote(a) for a in args)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


class _CellError(Exception):
    """A value the importer cannot hold, said after the place (which :func:`_write_rows` names)."""


def _cell(v: Any, delim: str) -> str:
    """One CSV field: strings and arrays always quoted (an unquoted empty field is an absent property; a quoted
    one an empty string), numbers and booleans bare; None (no such property) empty."""
    cls = v.__class__
    if cls is str:
        text: str = v
        return '"' + text.replace('"', '""') + '"'
    if v is None:
        return ""
    if cls is list:
        if not v or v == [""]:  # the importer reads both as no property
            raise _CellError(f" holds {v!r}: Neo4j's importer reads it as no property; stream this graph instead")
        if any(isinstance(x, str) and delim in x for x in v):
            raise _CellError(f": an element of {v!r} holds the array delimiter {delim!r}")
        return _quoted(delim.join(x if isinstance(x, str) else _scalar(x) for x in v))
    return _scalar(v)


def delimiters_used(snapshot: Snapshot) -> set[str]:
    """Which of :data:`ARRAY_DELIMITERS` some list element of ``snapshot`` holds (the delimiter must not be one)."""
    values = chain.from_iterable(row.props.values() for row in _all_rows(snapshot))
    text = "".join(x for v in values if v.__class__ is list for x in v if isinstance(x, str))
    return {c for c in ARRAY_DELIMITERS if c in text}


def array_delimiter(used: set[str]) -> str:
    """The first of :data:`ARRAY_DELIMITERS` not in ``used`` (Neo4j splits arrays on it, unescaped)."""
    for c in ARRAY_DELIMITERS:
        if c not in used:
            return c
    raise BulkLoadError("every array delimiter Neo4j's importer could use appears inside some list element")


def _all_rows(snapshot: Snapshot) -> Iterator[NodeRow | EdgeRow]:
    yield from snapshot.nodes
    yield from snapshot.edges


def write_neo4j_import(parts: Snapshot | Iterable[Snapshot], folder: str | os.PathLike[str], *,
                       delimiter: str | None = None, offset: int = 0, first_part: int = 0) -> Neo4jImport:
    """The CSV files of ``neo4j-admin database import full`` for a snapshot, or for the parts of one graph (parts
    share no node; :mod:`fieldgraph.graph.partition`), read one at a time: per part, ``nodes-<Label>.csv`` (``:ID``,
    ``:LABEL``, one typed column per property) and ``rels-<TYPE>.csv`` (``:START_ID``, ``:END_ID``, ``:TYPE``,
    properties), the second part's ``nodes-<Label>-1.csv`` and so on, each with its header. Node ids are the parts'
    own, numbered on from the part before. ``delimiter``: the array delimiter, none of the parts' list elements
    holding it (:func:`delimiters_used`, :func:`array_delimiter`; found here for one snapshot). ``offset``,
    ``first_part``: for parts written apart (in parallel, then :meth:`Neo4jImport.merged`): the number of the nodes
    of the parts before these, and the number of these parts' first."""
    if isinstance(parts, Snapshot):
        delimiter = delimiter or array_delimiter(delimiters_used(parts))
        parts = [parts]
    elif delimiter is None:
        raise ValueError("the array delimiter of parts must be given (array_delimiter of their delimiters_used)")
    out = Neo4jImport(Path(folder).absolute(), array_delimiter=delimiter)
    out.folder.mkdir(parents=True, exist_ok=True)
    for k, snapshot in enumerate(parts, start=first_part):
        suffix = f"-{k}" if k else ""
        number = _numbering(snapshot, offset)
        for label, nodes in sorted(_grouped(snapshot.nodes, "label").items()):
            path = out.folder / f"nodes-{label}{suffix}.csv"
            out.multiline |= _write_rows(path, [":ID", ":LABEL"], nodes, f"label {label}", delimiter, number)
            out.nodes.append((label, path))
            out.node_count += len(nodes)
        for t, edges in sorted(_grouped(snapshot.edges, "type").items()):
            path = out.folder / f"rels-{t}{suffix}.csv"
            out.multiline |= _write_rows(path, [":START_ID", ":END_ID", ":TYPE"], edges, f"relationship type {t}",
                                         delimiter, number)
            out.relationships.append((t, path))
            out.edge_count += len(edges)
        offset += len(snapshot.nodes)
    return out


def _numbering(snapshot: Snapshot, offset: int) -> dict[int, int]:
    """A part's node ids -> the graph's: in the order of its nodes, from ``offset``."""
    return {n.id: i for i, n in enumerate(snapshot.nodes, start=offset)}


#: rows written to an import file at a time (a file's text is built in pieces of this many rows)
_ROWS_AT_ONCE = 1 << 16


def _write_rows(path: Path, fixed: list[str], rows: Sequence[NodeRow] | Sequence[EdgeRow], where: str,
                delim: str, number: Mapping[int, int]) -> bool:
    """One import file (nodes of one label, or edges of one type), written column by column; whether some value
    holds a line break."""
    types = property_types((r.props for r in rows), where)
    keys = sorted(types)
    multiline = False
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(fixed + [f"{k}:{types[k]}" for k in keys]) + "\n")
        for at in range(0, len(rows), _ROWS_AT_ONCE):
            piece = rows[at:at + _ROWS_AT_ONCE]
            props = [r.props for r in piece]
            columns = _heads(piece, number, where)
            for k in keys:
                cells = _cells(list(map(dict.get, props, repeat(k))), delim, f"property {k!r} of {where}")
                text = "".join(cells)
                multiline = multiline or "\n" in text or "\r" in text
                columns.append(cells)
            fh.write("\n".join(map(",".join, zip(*columns, strict=True))) + "\n")
    return multiline


def _heads(rows: Sequence[NodeRow] | Sequence[EdgeRow], number: Mapping[int, int], where: str) -> list[list[str]]:
    """The fixed columns of import rows: a node's id and label, an edge's start, end and type."""
    try:
        if rows and isinstance(rows[0], NodeRow):  # a file holds nodes or edges
            nodes = cast(Sequence[NodeRow], rows)
            return [[str(number[n.id]) for n in nodes], [n.label for n in nodes]]
        edges = cast(Sequence[EdgeRow], rows)
        return [[str(number[e.start]) for e in edges], [str(number[e.end]) for e in edges], [e.type for e in edges]]
    except KeyError as exc:
        raise BulkLoadError(f"a {where} edge refers to node {exc.args[0]}, not in its part") from exc


def _cells(values: list[Any], delim: str, where: str) -> list[str]:
    """One property's CSV fields (:func:`_cell`), strings quoted as they are (:func:`_encoded`)."""
    def strings(texts: list[str]) -> list[str]:
        return ['"' + t.replace('"', '""') + '"' for t in texts]

    try:
        return _encoded(values, lambda v: _cell(v, delim), strings)
    except _CellError as exc:
        raise BulkLoadError(f"{where}{exc}") from None


def _encoded(values: list[Any], one: Callable[[Any], T], strings: Callable[[list[str]], list[T]]) -> list[T]:
    """One property's values encoded for an importer, column-wise: a column of strings by ``strings``, other values
    of one type each by ``one`` once (``1``, ``1.0`` and ``True`` are equal: a column of several types is encoded
    value by value)."""
    classes = set(map(type, values))
    if classes == {str}:
        return strings(values)
    if len(classes - {type(None)}) == 1 and classes <= _SCALARS:
        done = {v: one(v) for v in dict.fromkeys(values)}
        return list(map(done.__getitem__, values))
    return [one(v) for v in values]


# --- Neo4j: running the importer ------------------------------------------------------------------------------


def import_neo4j(files: Neo4jImport, home: str | os.PathLike[str], *, database: str = "neo4j",
                 admin: Sequence[str] | None = None, conf_dir: str | os.PathLike[str] | None = None,
                 threads: int | None = None, max_off_heap_memory: str | None = None,
                 high_parallel_io: str = "on", env: Mapping[str, str] | None = None) -> float:
    """Run ``neo4j-admin database import full --overwrite-destination`` of ``files`` into ``database`` of the
    Neo4j installation ``home``, whose server must be STOPPED (Community Edition cannot stop or create a database
    online; the import replaces its files). ``admin``: the command that is ``neo4j-admin`` (default
    ``HOME/bin/neo4j-admin``; e.g. ``java -cp JARS org.neo4j.cli.AdminTool``). The caller has made sure the
    database is empty or unwanted (:func:`check_empty` before stopping the server). Returns the seconds it took.

    Speed: ``threads`` (``--threads``, default every core the JVM sees: on 2 cores, 2), ``high_parallel_io``
    (``on`` for SSDs: the importer reads and writes with parallel I/O instead of guessing from the environment),
    ``max_off_heap_memory`` (its caches and id maps live off-heap; default 90% of the machine's memory, give a
    figure on a shared machine). The JVM heap of ``neo4j-admin`` is ``HEAP_SIZE`` (1 GB is what it asks for);
    ``--multiline-fields`` is on only when some string holds a line break (it disables parallel parsing).
    After the server starts, ``store.ensure_schema()`` creates the constraints and indexes."""
    home = Path(home).absolute()
    cmd = list(admin or [str(home / "bin" / "neo4j-admin")])
    run_env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(conf_dir or home / "conf"), **(env or {})}
    # the database first: --nodes and --relationships take several files each, and would take it for one
    args = [*cmd, "database", "import", "full", database, "--overwrite-destination=true",
            f"--report-file={files.folder / 'import.report'}",
            *files.options(threads=threads, high_parallel_io=high_parallel_io,
                           max_off_heap_memory=max_off_heap_memory)]
    started = time.monotonic()
    try:
        proc = subprocess.run(args, env=run_env, capture_output=True, text=True)
    except OSError as exc:
        raise BulkLoadError(f"cannot run neo4j-admin ({cmd[0]}): {exc}") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
        raise BulkLoadError(f"neo4j-admin database import full failed (exit {proc.returncode}):\n{tail}")
    return time.monotonic() - started


def check_empty(store: GraphStore) -> None:
    """:class:`GraphNotEmpty` unless ``store`` holds no node (the bulk load builds a new graph)."""
    rows = store.run_named("any_node")
    if rows and rows[0].get("nodes"):
        raise GraphNotEmpty(f"{store.describe()} already holds a graph: {ADVICE}")


# --- FalkorDB: GRAPH.BULK ---------------------------------------------------------------------------------------

# the value types of GRAPH.BULK's binary format (falkordb-bulk-loader's entity_file.Type)
_NULL, _BOOL, _DOUBLE, _STRING, _LONG, _ARRAY = 0, 1, 2, 3, 4, 5
#: bytes per GRAPH.BULK command (the loader's default is 64 MB; a redis argument may hold 512 MB)
BULK_BYTES = 32 << 20
#: the classes of the values a column packs once each
_SCALARS = frozenset({type(None), bool, int, float, str})


def _pack(v: Any, where: str) -> bytes:
    """One value in GRAPH.BULK's format: a type byte, then the value (strings NUL-terminated)."""
    if v is None:
        return b"\x00"
    if isinstance(v, bool):
        return struct.pack("=B?", _BOOL, v)
    if isinstance(v, int):
        if not _INT64[0] <= v <= _INT64[1]:
            raise BulkLoadError(f"{where}: {v} does not fit a 64-bit integer")
        return struct.pack("=Bq", _LONG, v)
    if isinstance(v, float):
        return struct.pack("=Bd", _DOUBLE, v)
    if isinstance(v, str):
        raw = v.encode()
        if b"\x00" in raw:
            raise BulkLoadError(f"{where}: a string with a NUL character cannot be bulk loaded into FalkorDB")
        return bytes([_STRING]) + raw + b"\x00"
    if isinstance(v, list):
        return struct.pack("=Bq", _ARRAY, len(v)) + b"".join(_pack(x, where) for x in v)
    raise BulkLoadError(f"{where}: a {type(v).__name__} value cannot be bulk loaded")


def _header(name: str, keys: Sequence[str]) -> bytes:
    return name.encode() + b"\x00" + struct.pack("=I", len(keys)) + b"".join(k.encode() + b"\x00" for k in keys)


def falkordb_bulk_commands(parts: Snapshot | Iterable[Snapshot], max_bytes: int = BULK_BYTES, *, offset: int = 0,
                           first: bool = True) -> Iterator[list[Any]]:
    """The arguments of the GRAPH.BULK commands (after the graph name) that build a snapshot, or the parts of one
    graph (parts share no node: :mod:`fieldgraph.graph.partition`), read one at a time: the first begins with
    ``BEGIN``; each is ``nodes, edges, label tokens, type tokens, tokens...``, a token a label's (or a type's)
    header and its entities. FalkorDB creates a command's nodes before its edges and numbers nodes in the order
    sent, which edges refer to (as ``=QQ`` start and end): each part's nodes go before its edges, numbered on from
    the part before. ``offset``, ``first``: for parts packed apart (in parallel): the number of the nodes sent
    before these, and whether these come first (the first command begins the graph)."""
    batch = _BulkBatch(begun=not first)
    for snapshot in [parts] if isinstance(parts, Snapshot) else parts:
        labels = sorted(_grouped(snapshot.nodes, "label").items())
        types = sorted(_grouped(snapshot.edges, "type").items())
        # the snapshot's node ids -> the order FalkorDB creates the nodes in
        number = {n.id: i for i, n in enumerate((n for _, nodes in labels for n in nodes), start=offset)}
        offset += len(snapshot.nodes)
        for edges, groups in ((False, labels), (True, types)):
            for name, rows in groups:
                keys = sorted(set(chain.from_iterable(r.props for r in rows)))
                head = _header(name, keys)
                token, size = [head], len(head)
                for row in _packed_rows(rows, name, keys, number, edges):
                    token.append(row)
                    size += len(row)
                    batch.edges += edges
                    batch.nodes += not edges
                    if batch.size + size >= max_bytes:
                        batch.add(edges, token, size)
                        yield batch.args()
                        batch = _BulkBatch(begun=True)
                        token, size = [head], len(head)
                if len(token) > 1:
                    batch.add(edges, token, size)
    if batch.nodes or batch.edges or not batch.begun:
        yield batch.args()


def _grouped(rows: Sequence[Any], attr: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for r in rows:
        out.setdefault(getattr(r, attr), []).append(r)
    return out


def _packed_rows(rows: Sequence[NodeRow] | Sequence[EdgeRow], name: str, keys: Sequence[str],
                 number: Mapping[int, int], edges: bool) -> list[bytes]:
    """The entities of one label (or type) in GRAPH.BULK's format, packed column by column: an edge's ``=QQ``
    start and end, then each property's value (a missing one null)."""
    props = [r.props for r in rows]
    columns = [_packed_column(list(map(dict.get, props, repeat(k))), f"{name}.{k}") for k in keys]
    if edges:
        ends = struct.Struct("=QQ").pack
        try:
            edge_rows = cast(Sequence[EdgeRow], rows)
            columns.insert(0, list(map(ends, map(number.__getitem__, [e.start for e in edge_rows]),
                                       map(number.__getitem__, [e.end for e in edge_rows]))))
        except KeyError as exc:
            raise BulkLoadError(f"a {name} edge refers to node {exc.args[0]}, not in the snapshot") from exc
    return list(map(b"".join, zip(*columns, strict=True))) if columns else [b""] * len(rows)


def _packed_column(values: list[Any], where: str) -> list[bytes]:
    """One property's values packed (:func:`_encoded`): strings without NUL in C all the way."""
    def strings(texts: list[str]) -> list[bytes]:
        if "\x00" in "".join(texts):
            return [_pack(t, where) for t in texts]  # refused, naming the property
        return list(map(b"\x03%b\x00".__mod__, map(str.encode, texts)))

    return _encoded(values, lambda v: _pack(v, where), strings)


@dataclass
class _BulkBatch:
    begun: bool = False
    nodes: int = 0
    edges: int = 0
    size: int = 0
    labels: list[bytes] = field(default_factory=list)
    types: list[bytes] = field(default_factory=list)

    def add(self, edges: bool, token: list[bytes], size: int) -> None:
        (self.types if edges else self.labels).append(b"".join(token))
        self.size += size

    def args(self) -> list[Any]:
        head: list[Any] = [] if self.begun else ["BEGIN"]
        return head + [self.nodes, self.edges, len(self.labels), len(self.types), *self.labels, *self.types]


def load_falkordb(parts: Snapshot | Iterable[Snapshot], store: FalkorStore, *,
                  timings: dict[str, float] | None = None) -> tuple[int, int]:
    """Build a snapshot (or the parts of one graph, read one at a time) as ``store``'s graph with GRAPH.BULK
    (:func:`falkordb_bulk_commands`, :func:`send_falkordb`)."""
    return send_falkordb(falkordb_bulk_commands(parts), store, timings=timings)


def send_falkordb(commands: Iterable[list[Any]], store: FalkorStore, *, timings: dict[str, float] | None = None
                  ) -> tuple[int, int]:
    """Send the GRAPH.BULK ``commands`` (:func:`falkordb_bulk_commands`, in order) that build ``store``'s graph,
    then its indexes and constraints (``ensure_schema``). The graph must be empty (:class:`GraphNotEmpty`
    otherwise); an empty graph key (its schema only, as ``open_store`` leaves it) is deleted first, since
    GRAPH.BULK BEGIN refuses an existing key. Returns (nodes, edges) created; ``timings`` gets the seconds of
    ``import`` and ``ensureSchema``."""
    conn = store.db.connection
    name = store.graph_name
    if conn.exists(name):
        check_empty(store)
        store.clear()
    created = [0, 0]
    started = time.monotonic()
    try:
        for args in commands:
            reply = conn.execute_command("GRAPH.BULK", name, *args)
            text = reply.decode() if isinstance(reply, bytes) else str(reply)
            said = text.split(", ")
            created[0] += int(said[0].split()[0])
            created[1] += int(said[1].split()[0])
    except BulkLoadError:
        raise
    except Exception as exc:
        if falkordb_says(exc, "exists"):
            raise GraphNotEmpty(f"{store.describe()} already exists: {ADVICE}") from exc
        raise BulkLoadError(f"GRAPH.BULK into {store.describe()} failed: {exc}") from exc
    imported = time.monotonic()
    store.ensure_schema()  # on the embedded server, new constraints also rewrite the AOF into a snapshot
    store._await_constraints(timeout=3600)  # built in the background: enforced once this returns
    if timings is not None:
        timings.update(importS=imported - started, ensureSchemaS=time.monotonic() - imported)
    return created[0], created[1]


# --- the graph the bulk backfill plans into (in memory) ---------------------------------------------------------


def build_snapshot(write: Callable[[GraphStore], T]) -> tuple[Snapshot, T]:
    """The graph a history gives, as a snapshot: ``write(store)`` plans and writes it with the one write path
    (``LineageGraph.ingest``, or the backfill's stages) into the in-memory store, which applies the plans' steps as
    FalkorDB and Neo4j do (:mod:`fieldgraph.graph.memory`); returns the snapshot (the store's own property maps,
    not copies: the store is thrown away) and what ``write`` returned."""
    from .memory import MemoryStore

    store = MemoryStore()
    result = write(store)
    return store.take_snapshot(), result


def stream_snapshot(changes: Iterable[Any], *, batch_events: int = 1000) -> Snapshot:
    """The snapshot of the graph streaming ``changes`` (in arrival order, ``LineageGraph.ingest``) gives."""
    from .lineage import LineageGraph

    return build_snapshot(lambda store: LineageGraph(store).ingest(changes, batch_events=batch_events))[0]
