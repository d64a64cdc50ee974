"""Renames: a field's identity across a new name. Never guessed: a rename is what a source states.

- A schema states it (:func:`stated_renames`, planned with the schema's versions): a field of a version whose
  ``aliases`` name a sibling of the previous version that this version no longer lists (Avro), or that has the
  ``fieldId`` of such a sibling (a Protobuf field number, a Parquet ``field_id``); the fields under a renamed
  field move with it. The previous version is the one before it in time, so a late version is placed between
  its neighbours and the dataset's schema renames are written again from its replayed timeline.
- A :class:`~fieldgraph.changes.RenameChange` states it (SQL ``RENAME COLUMN``/``RENAME TO``, ``fieldgraph rename``,
  the HTTP service): :func:`plan_renames`.

Each rename is a ``(new)-[:RenamedFrom {validFrom, source, ...}]->(old)`` edge; both fields stay. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fieldgraph.changes import RenameChange
from fieldgraph.normalizers import v1_path

from .planner import Planner
from .resolve import field_urn

#: the ``source`` of the renames a schema states (rewritten with its timeline)
SCHEMA = "schema"


@dataclass(frozen=True, slots=True)
class Listed:
    """A field a schema version lists, with what the version states of its identity."""

    path: str
    aliases: tuple[str, ...] = ()
    field_id: str | None = None


def _split(path: str) -> tuple[str, str]:
    """(parent, name) of a field's v1 path."""
    parent, _, name = v1_path(path).rpartition(".")
    return parent, name


def _why(new: Listed, old: Listed, name: str, old_name: str, parent_renamed: bool) -> str | None:
    """Why ``old`` is ``new`` under another name, if the schema says so (a field id first: it is the identity)."""
    if new.field_id is not None and old.field_id is not None:
        return f"same field id {new.field_id}" if new.field_id == old.field_id else None
    if old_name in new.aliases:
        return f"alias {old_name}"
    if parent_renamed and name == old_name:
        return "renamed with its parent"
    return None


def stated_renames(before: Iterable[Listed], after: Iterable[Listed]) -> list[tuple[str, str, str]]:
    """(old path, new path, why) of every rename a schema version (``after``) states against the version before it
    (``before``): a field ``after`` adds that is a field ``before`` lists and ``after`` does not, among the same
    siblings (its parent's fields; a renamed parent's fields move with it). Only unique matches: two candidates
    are no rename."""
    old_by_path = {f.path: f for f in before}
    after = list(after)
    new_paths = {f.path for f in after}
    gone: dict[str, list[tuple[Listed, str]]] = {}
    for f in old_by_path.values():
        if f.path not in new_paths:
            parent, name = _split(f.path)
            gone.setdefault(parent, []).append((f, name))
    if not gone:
        return []
    added = sorted((f for f in after if f.path not in old_by_path), key=lambda f: v1_path(f.path).count("."))
    moved: dict[str, str] = {}  # a renamed field's new v1 path -> its old one (its fields move with it)
    taken: set[str] = set()
    out: list[tuple[str, str, str]] = []
    for f in added:
        parent, name = _split(f.path)
        old_parent = moved.get(parent, parent)
        hits = [(g, why) for g, old_name in gone.get(old_parent, ())
                if g.path not in taken and (why := _why(f, g, name, old_name, old_parent != parent)) is not None]
        if len(hits) != 1:
            continue
        g, why = hits[0]
        taken.add(g.path)
        moved[v1_path(f.path)] = v1_path(g.path)
        out.append((g.path, f.path, why))
    return out


def schema_rename_rows(p: Planner, urn: str, versions: Sequence[tuple[int, Sequence[Listed]]]) -> None:
    """The renames a dataset's schema versions state, ``(time, fields listed)`` in time order, each against the
    one before it."""
    for (_, before), (ts, after) in zip(versions, versions[1:], strict=False):
        for old, new, why in stated_renames(before, after):
            p.plan.merge_renames.append({"new": field_urn(urn, new), "old": field_urn(urn, old), "validFrom": ts,
                                         "props": {"source": SCHEMA, "reason": why}})


def plan_renames(p: Planner, changes: Sequence[RenameChange]) -> None:
    """Stated renames: both fields (placeholders where the graph has neither) and the edge between them."""
    for c in changes:
        props: dict[str, Any] = {k: v for k, v in (("source", c.source), ("by", c.by), ("note", c.note))
                                 if v is not None}
        pairs: Iterable[tuple[str, str]] = c.renames
        if c.from_dataset is not None:  # a dataset rename: each of its fields (placeholders too), to the same path
            props["fromDataset"] = c.from_dataset
            pairs = [(field_urn(c.from_dataset, f.fieldPath), field_urn(c.dataset, f.fieldPath))
                     for f in sorted(p.known.get(c.from_dataset, {}).values(), key=lambda f: f.fieldPath)]
            p.ensure_dataset(c.dataset)
        for old_ref, new_ref in pairs:
            old, new = p.resolve(old_ref), p.resolve(new_ref)
            if old != new:
                p.plan.merge_renames.append({"new": new, "old": old, "validFrom": c.ts, "props": props})
        p.plan.tally["renames_stated"] += 1


__all__ = ["SCHEMA", "Listed", "plan_renames", "schema_rename_rows", "stated_renames"]
