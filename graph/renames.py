"""How a walk crosses a rename: the identity rules (pure), and the reads they need.

A rename ``(new)-[:RenamedFrom {validFrom: t}]->(old)`` says the field called ``old`` until ``t`` is called ``new``
from ``t``: one field under two names. A walk at an instant ``τ`` (None: now) crosses it both ways, in either
direction:

- **upstream** (what feeds the field), from ``new`` to ``old`` *as it was just before the rename* (``t - 1``): what
  fed the old name then fed this field, and the walk goes on from there as of that instant, so lineage the old name
  gets later (a new field that reuses the name) is not this field's; and from ``old`` to ``new`` at ``τ``: a reader
  of the old name reads what feeds the new one now;
- **downstream** (who reads the field), from ``old`` to ``new`` at ``τ``: the readers of the new name read this
  field; and from ``new`` to ``old`` at ``τ``: a reader whose edge into the old name still holds at ``τ`` (declared
  before the rename and never replaced, a Protobuf consumer reading by field number, an Avro reader with the alias)
  reads this field too.

Only renames at or before ``τ`` are crossed, and only within the field's identity at ``τ``: a name that was renamed
away and is later listed again by a schema (not by a rename back) is a new field from then on (it *reuses* the
name). So from a reused name, a walk crosses no rename older than the reuse; a walk arriving at a new name that was
reused after the rename goes on from it as of just before the reuse; and one crossing back to an old name that was
reused by ``τ`` does not cross: an edge into a reused name at ``τ`` is about the new field (its readers read that).
The same rename crossed both ways (there and back) is one hop; its edge names its two ends (``old``, ``new``), so
that it is shown old -> new whichever way a walk crossed it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fieldgraph.changes import RENAME_TRANSFORMATION

from . import cypher as cy
from .answers import RENAMED_FROM
from .store import GraphStore

#: the transformation a hop across a rename shows
RENAME = RENAME_TRANSFORMATION


@dataclass(frozen=True, slots=True)
class Rename:
    """A rename touching a field: ``into`` when the field is the new name; ``row``: the other field, as a walk step's
    row (with the rename's properties as its ``edge``); ``at``: when."""

    into: bool
    at: int
    row: Mapping[str, Any]


#: a field's states over time: (from, to or None, removed)
Listing = tuple[int, int | None, bool]


def reuses(renames: Sequence[Rename], listings: Iterable[Listing]) -> list[int]:
    """The instants a field's name starts a new field: listed again after being removed, later than a rename away
    from it, and not by a rename back into it."""
    away = [r.at for r in renames if not r.into]
    if not away:
        return []
    first_away, back = min(away), {r.at for r in renames if r.into}
    out, was_removed = [], False
    for start, _, removed in sorted(listings):
        if not removed and was_removed and start > first_away and start not in back:
            out.append(start)
        was_removed = removed
    return out


def crossings(direction: str, at: int | None, renames: Sequence[Rename], own_reuses: Sequence[int],
              reuses_of: Mapping[str, Sequence[int]]) -> Iterator[tuple[Rename, int | None]]:
    """The renames a walk in ``direction`` at instant ``at`` (None: now) crosses from a field, with the instant it
    goes on at (see the module): to the new name at ``at`` (just before the new name's reuse, if it was reused by
    then); upstream to the old name just before the rename; downstream to the old name at ``at``, unless the old
    name was reused by then."""
    start = max((u for u in own_reuses if at is None or u <= at), default=None)
    for r in renames:
        if (at is not None and r.at > at) or (start is not None and r.at < start):
            continue
        later = [u for u in reuses_of.get(r.row["urn"], ()) if u > r.at]
        reused = bool(later) and (at is None or at >= min(later))
        if not r.into:  # old -> new
            yield r, (min(later) - 1 if reused else at)
        elif direction == "upstream":  # new -> old, as it was just before the rename
            yield r, r.at - 1
        elif not reused:  # new -> old: the old name's readers at `at`
            yield r, at


class RenameReader:
    """The renames touching a walk's fields, read from a store (once a walk finds the graph has any)."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.step = cy.statement("rename_step")
        self.listings = cy.statement("field_listings")
        self.count = cy.statement("any_rename")

    def any(self) -> bool:
        return bool(self.store.run(self.count)[0]["renames"])

    def cross(self, direction: str, frontier: Sequence[tuple[str, int | None]],
              timeout_ms: int) -> list[tuple[dict[str, Any], int | None]]:
        """The walk rows (and the instant each goes on at) of the renames ``frontier`` crosses in ``direction``."""
        touching = self._touching(sorted({u for u, _ in frontier}), timeout_ms)
        if not touching:
            return []
        names = sorted({*touching, *(r.row["urn"] for rs in touching.values() for r in rs)})
        # where a walk lands depends on the other name's own renames (whether it was reused)
        touching.update(self._touching([u for u in names if u not in touching], timeout_ms))
        listed: dict[str, list[Listing]] = {}
        for r in self.store.run(self.listings, {"urns": names}, timeout_ms=timeout_ms):
            states = [(int(a), None if b is None else int(b), bool(c)) for a, b, c in r["past"] or [] if a is not None]
            listed[r["urn"]] = [*states, (int(r["since"] or 0), None, bool(r["removed"]))]
        found = {u: reuses(touching.get(u, ()), listed.get(u, ())) for u in names}
        return [(dict(r.row), then) for urn, at in frontier
                for r, then in crossings(direction, at, touching.get(urn, ()), found.get(urn, ()), found)]

    def _touching(self, urns: list[str], timeout_ms: int) -> dict[str, list[Rename]]:
        touching: dict[str, list[Rename]] = {u: [] for u in urns}
        if urns:
            for r in self.store.run(self.step, {"frontier": urns}, timeout_ms=timeout_ms):
                edge = r.get("edge") or {}
                old, new = (r["urn"], r["from"]) if r["into"] else (r["from"], r["urn"])
                row = {**r, "edge": {**edge, "relation": RENAMED_FROM, "transformation": RENAME, "old": old,
                                     "new": new}}
                touching[r["from"]].append(Rename(bool(r["into"]), int(edge.get("validFrom") or 0), row))
        return {u: rs for u, rs in touching.items() if rs}


__all__ = ["RENAME", "Listing", "Rename", "RenameReader", "crossings", "reuses"]
