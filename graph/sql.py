"""SQL statements -> job lineage, against the schemas the graph holds (and those the batch brings).

The planning stage (:func:`fieldgraph.graph.batch.plan_batch`) runs :func:`derive_sql` between reading the
state and planning, so a :class:`~fieldgraph.changes.SqlChange` is planned as the
:class:`~fieldgraph.changes.JobLineageChange` it amounts to, whichever source sent it. Pure: the state in,
changes out.

A table's columns are its current fields in schema order; a schema written earlier in the same batch wins
over the stored one; a table a statement of the batch created (``CREATE TABLE ... AS``) and no schema lists
has the columns that statement gave it, so a script's later statements can read it; a rename earlier in the batch
(:class:`~fieldgraph.changes.RenameChange`: ``ALTER TABLE t RENAME COLUMN a TO b``, ``RENAME TO u``) renames the
columns the batch's later statements read.

DataHub queries (:func:`query_lineage`): a dataset whose ``upstreamLineage`` names a query without field
lineage (:attr:`~fieldgraph.changes.LineageChange.queries`) gets the lineage of the query's statement
(:class:`~fieldgraph.changes.QueryChange`), whichever of the two arrives first: the graph keeps both (a
``Query`` node, a ``MadeByQuery`` relationship), and the second one to arrive makes the SQL change, as
the job lineage of the query (``job``: its URN). The statement that writes the dataset is the one whose
target names it, else the only one; table names map to the upstreams by name, else to the dataset's
platform; the dialect is the dataset's platform where sqlglot has one. A statement that cannot be used
is logged and left out: the lineage aspect is written all the same.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import assert_never

from fieldgraph.changes import (
    INDIRECT,
    UPSTREAM_LINEAGE,
    AspectDelete,
    Change,
    DataJobChange,
    DatasetDelete,
    EdgeProps,
    EditableSchemaChange,
    FieldEdge,
    JobLineageChange,
    LineageChange,
    ManualEdgeChange,
    QueryChange,
    RenameChange,
    SchemaChange,
    SqlChange,
    transformation_of,
    where,
)
from fieldgraph.errors import EventError
from fieldgraph.normalizers import v1_path
from fieldgraph.normalizers.urns import DatasetUrn, make_dataset_urn, make_field_urn
from fieldgraph.sqllineage import (
    BY_NAME_CONFIDENCE,
    SOURCE_FORMAT,
    SqlLineage,
    Statement,
    derive,
    dialect_of,
    match_tables,
    parse_statements,
)

from .plan import (
    DatasetQueries,
    DatasetState,
    StoredQuery,
    newest_queries,
    parse_field_ref,
    schema_columns,
    simple_ref,
)
from .steps import QueryEndRow

log = logging.getLogger("fieldgraph.graph")


@dataclass(frozen=True, slots=True)
class Derived:
    """One SQL change's lineage: the job lineage change written, and what it could not place."""

    change: JobLineageChange
    lineage: SqlLineage


def derive_sql(changes: Sequence[Change], state: Mapping[str, DatasetState]
               ) -> tuple[Sequence[Change], list[JobLineageChange]]:
    """``changes`` with every :class:`SqlChange` replaced by its job lineage (see the module), and those; a SQL
    rename's columns spelled as the table's schema spells them."""
    if not any(isinstance(c, SqlChange) or _sql_rename(c) for c in changes):
        return changes, []
    each = derive_each(changes, state)
    for d in each:
        if isinstance(d, Derived):
            _log_derived(d)
    return [d.change if isinstance(d, Derived) else d for d in each], [d.change for d in each if isinstance(d, Derived)]


def _log_derived(d: Derived) -> None:
    """What a derivation could not place, and what it decided that the user should hear of (once: when written)."""
    c = d.change
    if d.lineage.unresolved:
        log.info("%s: %s could not be placed (no schema lists them): no edge made for them", where(c),
                 ", ".join(d.lineage.unresolved))
    for note in d.lineage.notes:
        log.warning("%s: %s", where(c), note)


def derive_each(changes: Sequence[Change], state: Mapping[str, DatasetState]) -> list[Change | Derived]:
    """Like :func:`derive_sql`, each SQL change as a :class:`Derived` (the CLI shows what was unresolved and the
    notes), nothing logged."""
    batch: dict[str, Columns] = {}
    out: list[Change | Derived] = []
    for c in changes:
        if isinstance(c, SchemaChange) and _newer(c, state.get(c.dataset), batch.get(c.dataset)):
            batch[c.dataset] = Columns([v1_path(f.fieldPath) for f in c.fields], ordered=True,
                                       stamp=(c.version, c.ts))
        if isinstance(c, RenameChange):
            c = _spelled(c, batch.get(c.dataset) or columns_of(state.get(c.dataset)))
            _rename_columns(c, batch, lambda urn: batch.get(urn) or columns_of(state.get(urn)))
        if not isinstance(c, SqlChange):
            out.append(c)
            continue
        try:
            d = derive_change(c, lambda urn: batch.get(urn) or columns_of(state.get(urn)))
        except EventError as exc:
            if c.strict:
                raise
            log.warning("%s: no lineage derived from %s: %s", where(c), c.job, exc)
            if c.sent is not None:  # types to fill: the producer's lineage is written as sent
                out.append(c.sent)
            continue
        if d.lineage.kind.startswith("create") and not columns_of(state.get(c.dataset)) and c.dataset not in batch:
            batch[c.dataset] = Columns(list(d.lineage.columns), ordered=True)
        out.append(d)
    return out


@dataclass(frozen=True, slots=True)
class Columns:
    """A table's columns (dotted paths); ``ordered``: in its schema's order (fields written before positions
    were kept have none); ``stamp``: the (version, time) of the schema they come from."""

    paths: list[str]
    ordered: bool = True
    stamp: tuple[int, int] = (-1, -1)

    def __bool__(self) -> bool:
        return bool(self.paths)


def _rename_columns(c: RenameChange, batch: dict[str, Columns], columns: Callable[[str], Columns]) -> None:
    """The batch's columns after a rename: a renamed column (and the fields under it) under its new name, in its
    place; a renamed table's columns under the new name (which no schema lists yet). The schemas are not changed."""
    if c.from_dataset is not None:
        moved = columns(c.from_dataset)
        if moved and not columns(c.dataset):
            batch[c.dataset] = moved
        return
    cols = columns(c.dataset)
    if not cols:
        return
    paths = list(cols.paths)
    for old_ref, new_ref in c.renames:
        old, new = (simple_ref(parse_field_ref(r)[1]) for r in (old_ref, new_ref))
        under = {p[:len(old)] for p in paths if _under(p, old)} or \
            {p[:len(old)] for p in paths if _under(p.lower(), old.lower())}  # SQL names are case-insensitive
        if len(under) != 1:
            continue
        (base,) = under
        paths = [new + p[len(base):] if _under(p, base) else p for p in paths]
    batch[c.dataset] = Columns(paths, cols.ordered, cols.stamp)


def _sql_rename(c: Change) -> bool:
    return isinstance(c, RenameChange) and c.source == SOURCE_FORMAT and bool(c.renames)


def _spelled(c: RenameChange, cols: Columns) -> RenameChange:
    """A SQL rename whose columns are spelled as the table's columns are (SQL names are case-insensitive:
    ``RENAME COLUMN customerid`` of a schema's ``customerId``), where one column matches; others as written."""
    if not _sql_rename(c) or not cols:
        return c
    by_lower: dict[str, list[str]] = {}
    for path in cols.paths:
        by_lower.setdefault(path.lower(), []).append(path)

    def spell(ref: str) -> str:
        urn, path = parse_field_ref(ref)
        dotted = simple_ref(path)
        found = by_lower.get(dotted.lower(), [])
        return make_field_urn(urn, found[0]) if dotted not in cols.paths and len(found) == 1 else ref

    renames = tuple((spell(old), spell(new)) for old, new in c.renames)
    return c if renames == c.renames else replace(c, renames=renames)


def _under(path: str, column: str) -> bool:
    """``path`` is ``column`` or a field under it."""
    return path == column or path.startswith(column + ".")


def _newer(c: SchemaChange, st: DatasetState | None, seen: Columns | None) -> bool:
    """Whether a schema of the batch is the dataset's present one (not older than the stored or an earlier one)."""
    stamp = (c.version, c.ts)
    stored = (st.schemaVersion, st.schemaTs) if st is not None else (-1, -1)
    return stamp >= stored and (seen is None or stamp >= seen.stamp)


def derive_change(c: SqlChange, columns: Callable[[str], Columns]) -> Derived:
    """The job lineage of one SQL change; ``columns``: a dataset URN -> its columns."""
    statement = _statement(c)
    urns = dict(c.tables)
    schemas: dict[str, list[str]] = {}
    unordered: list[str] = []
    target_key = c.target or statement.target or c.dataset
    for key, urn in (*urns.items(), (target_key, c.dataset)):
        cols = columns(urn)
        if cols:
            schemas[key] = cols.paths
            if not cols.ordered:
                unordered.append(key)
    try:
        lineage = derive(statement, schemas, target_key, unordered=unordered)
    except EventError as exc:
        raise EventError(f"{where(c)}: {exc}") from exc
    missing = sorted({e.table for e in lineage.edges} - set(urns) - {target_key})
    if missing:
        raise EventError(f"{where(c)}: the statement reads {', '.join(missing)}, which the change maps to no dataset")
    query = c.query if c.query is not None else c.statement
    edges = []
    for e in lineage.edges:
        props = EdgeProps(
            SOURCE_FORMAT, transformation=transformation_of(e.subtype), kind=e.kind,
            subtype=e.subtype, masking=e.masking, confidence=BY_NAME_CONFIDENCE if e.by_name else 1.0, query=query,
            program=c.job, run=c.run, run_time=c.ts, transformations=e.transformations)
        edges.append(FieldEdge(make_field_urn(c.dataset, e.column), make_field_urn(urns[e.table], e.path), props))
    fields = tuple(make_field_urn(c.dataset, col) for col in lineage.columns)
    change = JobLineageChange(c.dataset, c.job, SOURCE_FORMAT, c.run, tuple(edges), fields, ts=c.ts, origin=c.origin,
                              ordered=True)
    return Derived(change if c.sent is None else filled(c.sent, c.untyped, change), lineage)


def _statement(c: SqlChange) -> Statement:
    """The one statement of ``c``, which writes a table: as its source parsed it, else parsed here."""
    if c.parsed is not None and (c.parsed.text, c.parsed.dialect) == (c.statement, c.dialect):
        statements = [c.parsed] if c.parsed.kind != "other" else []
    else:
        statements = [s for s in parse_statements(c.statement, c.dialect) if s.kind != "other"]
    if len(statements) != 1:
        raise EventError(f"{where(c)}: a SQL change holds one statement that writes a table, got {len(statements)}")
    return statements[0]


def columns_of(st: DatasetState | None) -> Columns:
    """A stored dataset's current columns, in schema order (unordered if a field has no position)."""
    if st is None:
        return Columns([])
    paths, ordered = schema_columns(st.fields.values())
    return Columns(paths, ordered=ordered, stamp=(st.schemaVersion, st.schemaTs))


def queries_named(changes: Sequence[Change]) -> list[str]:
    """The queries a batch brings or names (to read before :func:`query_lineage`)."""
    urns: dict[str, None] = {}
    for c in changes:
        match c:
            case QueryChange():
                urns[c.query] = None
            case LineageChange():
                urns.update((q, None) for q, _ in c.queries)
            case (SchemaChange() | JobLineageChange() | SqlChange() | EditableSchemaChange() | DataJobChange()
                  | RenameChange() | ManualEdgeChange() | AspectDelete() | DatasetDelete()):
                pass
            case _:
                assert_never(c)
    return list(urns)


def query_lineage(changes: Sequence[Change], stored: Mapping[str, StoredQuery],
                  state: Mapping[str, DatasetState]) -> list[SqlChange]:
    """The SQL changes that the batch's queries and query references make with the stored ones (the module):
    for the present version of each dataset's ``upstreamLineage`` (not older than the stored one or another of
    the batch, and not deleted in the batch) and each query's newest statement (not older than the stored one).
    A derived change is stamped when both held: the later of the statement's and the lineage's stamps."""
    statements = {q: c for q, c in newest_queries(changes).items()
                  if q not in stored or stored[q].ts <= c.ts}
    present = _present_lineage(changes, state)
    out = _QueryChanges()
    for c in (x for x in present.values() if x is not None):
        for q, ups in c.queries:
            held_q = statements.get(q) or stored.get(q)
            if held_q is not None and held_q.statement:
                out.add(q, held_q.statement, c.dataset, ups, max(c.ts, held_q.ts), c.origin)
    for q, qc in statements.items():
        for dataset, ups, lineage_ts in stored[q].datasets if q in stored else ():
            if _stored_lineage_holds(dataset, qc.ts, present):
                out.add(q, qc.statement, dataset, ups, max(qc.ts, lineage_ts), qc.origin)
    return out.changes()


def _present_lineage(changes: Sequence[Change], state: Mapping[str, DatasetState]
                     ) -> dict[str, LineageChange | None]:
    """Dataset -> the present version of its ``upstreamLineage`` among the batch's (not older than the stored one
    or another of the batch); ``None``: the batch deletes the aspect (or the dataset) last."""
    present: dict[str, LineageChange | None] = {}
    for c in changes:
        if isinstance(c, DatasetDelete) or (isinstance(c, AspectDelete) and c.aspect == UPSTREAM_LINEAGE):
            present[c.dataset] = None
        elif isinstance(c, LineageChange) and c.aspect == UPSTREAM_LINEAGE:
            st = state.get(c.dataset)
            held = st.lineageTs.get(UPSTREAM_LINEAGE, -1) if st is not None else -1
            latest = present.get(c.dataset)
            if c.ts >= held and (latest is None or c.ts >= latest.ts):
                present[c.dataset] = c
    return present


def _stored_lineage_holds(dataset: str, ts: int, present: Mapping[str, LineageChange | None]) -> bool:
    """Whether the stored lineage of ``dataset`` that names a query joins the query's new statement (of ``ts``): the
    batch brings no lineage of the dataset, or one newer than the statement (which then held before it, from its
    own time on)."""
    if dataset not in present:
        return True
    latest = present[dataset]
    return latest is not None and ts < latest.ts


def settled_query_lineage(held: Iterable[DatasetQueries]) -> tuple[list[SqlChange], list[QueryEndRow]]:
    """What the graph joins now, for datasets two writers may have written at once: the edges of queries their
    present lineage no longer names stop holding (rows for ``close_query_lineage``), those it names are derived
    (idempotent)."""
    out = _QueryChanges()
    close: list[QueryEndRow] = []
    for d in held:
        close.append({"datasetUrn": d.dataset, "at": d.lineage_ts, "keep": [q.urn for q in d.queries], "only": None})
        for q in d.queries:
            if q.statement:
                out.add(q.urn, q.statement, d.dataset, q.upstreams, max(q.ts, d.lineage_ts), "")
    return out.changes(), close


class _QueryChanges:
    """The SQL changes that queries joined to the datasets they write make: one per (dataset, query, time); a
    query's text is parsed once for all of them."""

    def __init__(self) -> None:
        self._changes: dict[tuple[str, str, int], SqlChange] = {}
        self._parsed: dict[tuple[str, str | None], list[Statement] | EventError] = {}

    def changes(self) -> list[SqlChange]:
        return list(self._changes.values())

    def add(self, query: str, text: str, dataset: str, upstreams: Sequence[str], ts: int, origin: str) -> None:
        """The change of ``query`` (its ``text``) into ``dataset``, if one of its statements writes it (else logged)."""
        d = DatasetUrn.parse(dataset)
        dialect = dialect_of(d.platform)
        statements = self._statements(text, dialect)
        if isinstance(statements, EventError):
            log.warning("%s: query %s cannot be read: %s", dataset, query, statements)
            return
        writes = [s for s in statements if s.target and match_tables([s.target], {d.name: dataset})]
        if not writes and len(statements) == 1:
            writes = statements
        if len(writes) != 1:
            log.warning("%s: query %s has %d statements that could write it; none used", dataset, query, len(writes))
            return
        st = writes[0]
        found = match_tables(st.tables, {DatasetUrn.parse(u).name: u for u in upstreams})
        tables = tuple((k, found.get(k) or make_dataset_urn(d.platform, k, d.env)) for k in st.tables)
        self._changes[(dataset, query, ts)] = SqlChange(dataset, query, st.text, dialect, tables, st.target or "", None,
                                                        query, ts, origin, strict=False, parsed=st)

    def _statements(self, text: str, dialect: str | None) -> list[Statement] | EventError:
        """The statements of ``text`` that write lineage (or why it cannot be read), parsed once."""
        key = (text, dialect)
        if key not in self._parsed:
            try:
                self._parsed[key] = [s for s in parse_statements(text, dialect) if s.kind != "other"]
            except EventError as exc:
                self._parsed[key] = exc
        return self._parsed[key]


def filled(sent: JobLineageChange, untyped: Iterable[tuple[str, str]], derived: JobLineageChange) -> JobLineageChange:
    """The lineage a producer ``sent`` with the types of its ``untyped`` edges (their (downstream, upstream)) taken
    from the statement's lineage (``derived``): kind, subtype, transformation, masking and every role; the
    statement's INDIRECT edges ``sent`` lacks (joins, filters, groupings: column lineage without types has no room
    for them) added as derived; typed edges, and untyped ones the statement does not tie, as sent. The DIRECT
    lineage stays the producer's. Pairs match whatever the case (SQL names are case-insensitive)."""
    def key(down: str, up: str) -> tuple[str, str]:
        return down.lower(), up.lower()

    derived_by = {key(e.downstream, e.upstream): e for e in derived.edges}
    to_fill = {key(down, up) for down, up in untyped}
    edges: list[FieldEdge] = []
    for e in sent.edges:
        d = derived_by.pop(key(e.downstream, e.upstream), None)
        if d is not None and key(e.downstream, e.upstream) in to_fill:
            p = d.props
            e = FieldEdge(e.downstream, e.upstream, replace(
                e.props, transformation=p.transformation, kind=p.kind, subtype=p.subtype, masking=p.masking,
                transformations=p.transformations))
        edges.append(e)
    sent_fields = {f.lower() for f in sent.fields}
    fields = (*sent.fields, *(f for f in derived.fields if f.lower() not in sent_fields))
    added = tuple(e for e in derived_by.values() if e.props.kind == INDIRECT)
    return replace(sent, edges=(*edges, *added), fields=fields)
