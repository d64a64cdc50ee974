"""The planner of ``schemaMetadata``: a dataset's whole field set. Fields a version no longer lists are kept as
removed; one newer version appends to the stored timeline (archiving the states it ends), anything else replays
the timeline with the batch's versions placed by time."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from fieldgraph.changes import SCHEMA_METADATA, AspectDelete, SchemaChange
from fieldgraph.normalizers import SchemaField

from ..history import (
    STATE_PROPS,
    Held,
    SchemaVersion,
    by_time,
    replay_schema,
    state_key,
    state_props,
    stored_schema_versions,
)
from ..steps import UpsertFieldRow
from .groups import schema_appends, schema_key
from .planner import Planner, field_props
from .renames import Listed, schema_rename_rows
from .resolve import field_urn, parse_field_ref, simple_ref
from .state import DatasetState, FieldState, columns_named

log = logging.getLogger("fieldgraph.graph")


def plan_schema(p: Planner, urn: str, group: list[SchemaChange | AspectDelete]) -> None:
    """The batch's versions of a dataset's schema (and deletes of it), in arrival order."""
    if schema_appends(group, p.stored(urn)):
        _appended(p, urn, group[0])
    else:
        _replayed(p, urn, group)
    _report_derived_names(p, urn)


def _report_derived_names(p: Planner, urn: str) -> None:
    """A column a SQL statement derived (a placeholder keeping its column number) that the schema now in force
    names otherwise: logged with both names (``lineage unresolved`` lists it so, :func:`columns_named`)."""
    fields_now = p.known.get(urn, {})
    derived = [(fs, fs.column) for fs in fields_now.values() if fs.placeholder and fs.column is not None]
    if not derived:
        return
    columns = columns_named(fields_now.values())
    for fs, number in derived:
        if number <= len(columns):
            name = simple_ref(fs.fieldPath)
            log.warning("%s: the schema lists no column %r, which a SQL statement derived as its column %d; the "
                        "schema names column %d %r. The statement's edges stay on %r (fieldgraph lineage unresolved "
                        "lists it) until it runs again", urn, name, number, number, columns[number - 1], name)



def _appended(p: Planner, urn: str, c: SchemaChange | AspectDelete) -> None:
    """The fast path: the newest version; fields whose state changes have the old one archived."""
    key = schema_key(c, p.stored(urn))
    fields_now = p.known.setdefault(urn, {})
    current = _wins(p, urn, c, key)
    if isinstance(c, SchemaChange):
        if any(f.aliases or f.fieldId for f in c.fields):
            before = [_listed(fs) for fs in fields_now.values() if not fs.placeholder and not fs.removed]
            schema_rename_rows(p, urn, [(-1, before), (c.ts, [_listed(f) for f in c.fields])])
        _write_fields(p, urn, [c], lambda _: key, current, archive=True)
    _mark_removed(p, urn, fields_now, current, c.ts)
    p.add_times(urn, SCHEMA_METADATA, [c.ts])


def _replayed(p: Planner, urn: str, group: list[SchemaChange | AspectDelete]) -> None:
    """The slow path: the aspect's timeline replayed with the batch's versions placed by time."""
    st = p.stored(urn)
    p.plan.tally["replayed"] += 1
    versions = stored_schema_versions(st.version_times(SCHEMA_METADATA), p.history.fields.get(urn, {}))
    schemas = [c for c in group if isinstance(c, SchemaChange)]
    for i, c in enumerate(group):
        listed = {} if isinstance(c, AspectDelete) else \
            {field_urn(urn, f.fieldPath): state_props(_field_props(urn, c, f)) for f in c.fields}
        adds_only = isinstance(c, SchemaChange) and _outranked(c, st, schemas)
        versions.append(SchemaVersion(c.ts, listed, order=i, adds_only=adds_only))
    timelines = replay_schema(versions)
    _replayed_renames(p, urn, versions, group)
    newest = max((v for v in versions if not v.adds_only), key=lambda v: (v.ts, v.order), default=None)
    fields_now = p.known.setdefault(urn, {})
    current = {u for u, tl in timelines.items() if not tl[-1].removed}
    win = group[newest.order] if newest is not None and newest.order >= 0 else None
    if win is not None:
        _wins(p, urn, win, schema_key(win, st))
    p.plan.tally["superseded"] += len(group) - (win is not None)
    _write_fields(p, urn, sorted(schemas, key=lambda c: schema_key(c, st)), lambda c: schema_key(c, st),
                  current, archive=False)
    p.plan.clear_field_states.append({"datasetUrn": urn})
    for furn, timeline in timelines.items():
        now = timeline[-1]
        p.plan.set_listed_from.append({"urn": furn, "listedFrom": timeline[0].start})
        p.plan.set_field_props.append({"urn": furn, "props": {
            **dict.fromkeys(STATE_PROPS), **now.props, "removed": now.removed, "since": now.start,
            "stateKey": state_key(now.props)}})
        p.plan.create_field_states.extend(
            {"urn": furn, "props": _state_node(h)} for h in timeline[:-1] if h.end is not None and h.start < h.end)
        fs = fields_now.get(furn)
        if fs is not None and fs.removed != now.removed:
            fields_now[furn] = replace(fs, removed=now.removed)
    p.add_times(urn, SCHEMA_METADATA, [v.ts for v in versions if not v.adds_only])


def _listed(f: SchemaField | FieldState) -> Listed:
    return Listed(f.fieldPath, tuple(f.aliases), f.fieldId)


def _replayed_renames(p: Planner, urn: str, versions: list[SchemaVersion],
                      group: list[SchemaChange | AspectDelete]) -> None:
    """The renames of a replayed timeline, each version against the one before it in time (rewritten whole)."""
    stored = {furn: _listed(fs) for furn, fs in p.stored(urn).fields.items() if not fs.placeholder}
    batch = [{field_urn(urn, f.fieldPath): _listed(f) for f in c.fields} if isinstance(c, SchemaChange) else {}
             for c in group]
    if not any(f.aliases or f.field_id for listed in (stored, *batch) for f in listed.values()):
        return
    p.plan.clear_schema_renames.append({"datasetUrn": urn})
    timeline = []
    for v in by_time(versions):
        if not v.adds_only:
            own = batch[v.order] if v.order >= 0 else stored
            timeline.append((v.ts, [own.get(furn) or stored.get(furn) or Listed(_path(furn)) for furn in v.listed]))
    schema_rename_rows(p, urn, timeline)


def _path(furn: str) -> str:
    return parse_field_ref(furn)[1]


def _wins(p: Planner, urn: str, win: SchemaChange | AspectDelete, win_key: tuple[int, int]) -> set[str]:
    """The dataset row of the winning schema; returns the current field set after the batch."""
    deleted = isinstance(win, AspectDelete)
    p.plan.tally["schema_deletes" if deleted else "schemas"] += 1
    row = p.dataset_row(urn)
    row.pop("placeholder", None)
    row.update(placeholder=False, schemaVersion=win_key[0], schemaTs=win_key[1], schemaDeleted=deleted)
    if isinstance(win, AspectDelete):  # the dataset has no schema now (its fields stay, removed)
        row.update(schemaVersion=None, schemaName=None, schemaHash=None, schemaPlatform=None,
                   platformSchemaType=None)
        return set()
    row.update(schemaName=win.name, schemaHash=win.hash, schemaPlatform=win.platform,
               platformSchemaType=win.platform_schema)
    return {field_urn(urn, f.fieldPath) for f in win.fields}


def _field_props(urn: str, c: SchemaChange, f: SchemaField) -> dict[str, Any]:
    props = field_props(urn, f)
    terms = c.glossary_terms.get(f.fieldPath)
    props["glossaryTerms"] = list(terms) if terms else None
    return props


def _write_fields(p: Planner, urn: str, schemas: list[SchemaChange], key: Any, current: set[str], *,
                  archive: bool) -> None:
    """Every schema writes the fields it lists that no newer schema wrote (oldest first); appending, a field
    whose state changes has its old state archived first."""
    fields_now = p.known[urn]
    written: dict[str, UpsertFieldRow] = {}
    for c in schemas:
        version, ts = key(c)
        for position, f in enumerate(c.fields):
            furn = field_urn(urn, f.fieldPath)
            prev = fields_now.get(furn)
            if prev is not None and not prev.placeholder and (prev.schemaVersion, prev.schemaTs) > (version, ts):
                continue
            props = _field_props(urn, c, f)
            props.update(placeholder=False, ambiguous=False, candidates=None, refPath=None,
                         removed=furn not in current, schemaVersion=version, schemaTs=ts,
                         stateKey=state_key(props), position=position)
            written[furn] = {"datasetUrn": urn, "urn": furn, "at": c.ts, "props": props}
            fields_now[furn] = FieldState(furn, f.fieldPath, False, furn not in current, version, ts,
                                          position=position, fieldId=f.fieldId, aliases=f.aliases)
    p.plan.upsert_fields.extend(written.values())
    if archive:
        p.plan.archive_field_states.extend(
            {"urn": r["urn"], "at": r["at"], "stateKey": r["props"]["stateKey"], "removed": r["props"]["removed"]}
            for r in written.values())
    if written:
        p.dataset_row(urn)


def _mark_removed(p: Planner, urn: str, fields_now: dict[str, FieldState], current: set[str], at: int) -> None:
    """Fields the present version no longer lists become removed at ``at`` (their state archived)."""
    for furn, fs in list(fields_now.items()):
        if not fs.placeholder and furn not in current and not fs.removed:
            fields_now[furn] = replace(fs, removed=True)  # never mutate the caller's state
            p.plan.archive_field_states.append({"urn": furn, "at": at, "stateKey": None, "removed": True})
            p.plan.set_field_props.append({"urn": furn, "props": {"removed": True}})
            p.plan.tally["fields_removed"] += 1


def _outranked(c: SchemaChange, st: DatasetState, schemas: Sequence[SchemaChange]) -> bool:
    """A schema with a lower version number than one before it in time: it only adds fields never seen."""
    if st.schemaVersion > c.version and 0 <= st.schemaTs <= c.ts:
        return True
    return any(o.version > c.version and o.ts <= c.ts for o in schemas)


def _state_node(h: Held) -> dict[str, Any]:
    """The properties of a ``FieldState`` node: a field's state over ``[validFrom, validTo)``."""
    return {**h.props, "validFrom": h.start, "validTo": h.end, "removed": h.removed, "stateKey": state_key(h.props)}
