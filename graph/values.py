"""What the graph can hold: every value a batch brings is checked before anything is written (:func:`check_values`),
so a refused batch leaves nothing half-written. The sources check what they decode; planning checks the changes it
derives (SQL lineage)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import assert_never

from fieldgraph.changes import (
    AspectDelete,
    Change,
    DataJobChange,
    DatasetDelete,
    EditableSchemaChange,
    FieldEdge,
    JobLineageChange,
    LineageChange,
    ManualEdgeChange,
    QueryChange,
    RenameChange,
    SchemaChange,
    SqlChange,
    references,
    subject,
    where,
)

from .errors import GraphRefused
from .plan import field_urn

#: what neither store can hold in a string: NUL (FalkorDB's query text ends there) and lone surrogates (not UTF-8)
_UNSTORABLE_CHARS = re.compile("[\x00\ud800-\udfff]")
_INT64 = (-(2**63), 2**63)
#: the longest node key (a URN, a field URN, a job or run name), in UTF-8 bytes: FalkorDB's unique index crashes
#: the server on keys over 4 KiB (FalkorDB 4.x, EnforceUniqueEntity), Neo4j's index refuses keys of about 8 KiB
MAX_KEY_BYTES = 4000


def check_values(changes: Sequence[Change]) -> None:
    """Every value the changes bring is one both stores hold the same way: strings without NUL or lone
    surrogates, integers within 64 bits, finite numbers. Else :class:`GraphRefused` naming the change (its
    dataset and origin) and the value, before anything is written: a refused batch leaves nothing half-written.
    (Types are the sources' to check: their models give strings where the graph stores strings.)"""
    for c in changes:
        texts, ints, floats = _values(c)
        joined = "\x01".join(filter(None, texts))
        bad = ("\x00" in joined or not joined.isascii()) and _UNSTORABLE_CHARS.search(joined)  # isascii: O(1)
        if bad:
            text = next(t for t in texts if t and _UNSTORABLE_CHARS.search(t))
            what = "a NUL character" if bad.group() == "\x00" else "a lone surrogate (not UTF-8)"
            raise GraphRefused(f"{where(c)}: {text.encode('utf-8', 'backslashreplace').decode()[:120]!r} holds "
                               f"{what}")
        if not all(map(math.isfinite, floats)):
            raise GraphRefused(f"{where(c)}: a confidence of {next(f for f in floats if not math.isfinite(f))} "
                               "is not a finite number")
        huge = [n for n in ints if n is not None and not _INT64[0] <= n < _INT64[1]]
        if huge:
            raise GraphRefused(f"{where(c)}: {huge[0]} does not fit in 64 bits (a version or a time)")
        long = next(_long_keys(c), None)
        if long is not None:
            raise GraphRefused(f"{_clip(where(c), 200)}: a key of {len(long.encode())} bytes ({long[:80]!r}...) is "
                               f"longer than the {MAX_KEY_BYTES} bytes the graph indexes (URNs, field paths "
                               "with their dataset URN, job and run names)")


def _long_keys(c: Change) -> Iterator[str]:
    """The node keys of a change over :data:`MAX_KEY_BYTES`: its dataset (or query) URN, its fields' URNs, what
    it references (upstream fields and datasets, read and dropped fields), the queries it names, job and run."""
    keys: list[str | None] = [subject(c), *references(c)]
    match c:
        case SchemaChange():
            keys += (_field_key(c.dataset, f.fieldPath) for f in c.fields)
        case DataJobChange():
            keys += (*c.fields, *(e.downstream for e in (*c.edges, *c.dataset_edges)))
        case LineageChange():
            keys += (*c.fields, *(e.downstream for e in (*c.edges, *c.dataset_edges)), *(q for q, _ in c.queries))
        case JobLineageChange():
            keys += (*c.fields, *(e.downstream for e in c.edges), c.job, c.run)
        case SqlChange():
            keys += (c.job, c.run)
        case ManualEdgeChange():
            keys.append(c.edge.downstream)
        case QueryChange() | EditableSchemaChange() | RenameChange() | AspectDelete() | DatasetDelete():
            pass
        case _:
            assert_never(c)
    return (k for k in keys if k is not None and len(k) * 4 > MAX_KEY_BYTES and len(k.encode()) > MAX_KEY_BYTES)


def _field_key(dataset: str, path: str) -> str | None:
    """A schema field's URN, built only when it may be too long (percent-encoding at most triples a path)."""
    if len(dataset.encode()) + 3 * len(path.encode()) + 32 <= MAX_KEY_BYTES:
        return None
    return field_urn(dataset, path)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _values(c: Change) -> tuple[list[str | None], list[int | None], list[float]]:
    """The texts, integers and floats of a change that reach the graph."""
    texts: list[str | None] = [subject(c)]
    ints: list[int | None] = [c.ts]
    floats: list[float] = []
    match c:
        case SchemaChange():
            texts += _schema_texts(c)
            ints.append(c.version)
        case LineageChange():
            texts += (*c.fields, *(x for q, ups in c.queries for x in (q, *ups)))
            _edge_values((*c.edges, *c.dataset_edges), texts, ints, floats)
        case DataJobChange():
            texts += (*c.fields, *c.outputs)
            _edge_values((*c.edges, *c.dataset_edges), texts, ints, floats)
        case JobLineageChange():
            texts += (*c.fields, c.job, c.run, *c.reads, *(x for pair in c.dropped for x in pair))
            if c.operations is not None:
                texts += (c.operations.operations, *c.operations.sources, *c.operations.destinations)
            _edge_values(c.edges, texts, ints, floats)
        case SqlChange():
            texts += (c.job, c.statement, c.dialect, c.target, c.run, c.query, *(x for pair in c.tables for x in pair))
        case QueryChange():
            texts += (c.statement, c.language)
        case ManualEdgeChange():
            texts += (c.by, c.note)
            _edge_values((c.edge,), texts, ints, floats)
        case EditableSchemaChange():
            texts += (x for path, labels in c.labels for x in (path, *labels))
        case RenameChange():
            texts += (*(x for pair in c.renames for x in pair), c.from_dataset, c.source, c.by, c.note)
        case AspectDelete() | DatasetDelete():
            pass
        case _:
            assert_never(c)
    return texts, ints, floats


def _schema_texts(c: SchemaChange) -> Iterator[str | None]:
    yield from (c.name, c.hash, c.platform, c.platform_schema)
    for f in c.fields:
        t = f.type
        yield from (f.fieldPath, f.nativeDataType, f.description, f.jsonProps, t.key_type, t.value_type, *f.tags,
                    *(t.nested_type or ()), f.fieldId, *f.aliases)
    for path, terms in c.glossary_terms.items():
        yield from (path, *terms)


def _edge_values(edges: Iterable[FieldEdge], texts: list[str | None], ints: list[int | None],
                 floats: list[float]) -> None:
    for e in edges:
        p = e.props
        texts += (e.downstream, e.upstream, p.transformation, p.subtype, p.query, p.program, p.run, p.description,
                  p.operation_set, *p.transformations)
        ints += (p.run_time, p.created_at)
        floats.append(p.confidence)

