"""How a walk crosses a rename: the identity rules (pure), and the reads they need.

A rename ``(new)-[:RenamedFrom {validFrom: t}]->(old)`` says the field called ``old`` until ``t`` is called ``new``
from ``t``. A walk at an instant ``τ`` (None: now) crosses it in the direction of time:

- **upstream**, from ``new`` to ``old`` *as it was just before the rename* (``t - 1``): what fed the old name then
  fed this field, and the walk goes on from there as of that instant, so lineage the old name gets later (a new
  field that reuses the name) is not this field's;
- **downstream**, from ``old`` to ``new`` at ``τ``: the readers of the new name read this field.

Only renames at or before ``τ`` are crossed, and only within the field's identity at ``τ``: a name that was renamed
away and is later listed again by a schema (not by a rename back) is a new field from then on (it *reuses* the
name). So from a reused name, a walk crosses no rename older than the reuse; and a walk arriving downstream at a
name that was reused after the rename stops just before the reuse.
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
    """The renames a walk at instant ``at`` (None: now) crosses from a field, with the instant it goes on at:
    upstream the renames into the field, downstream those away from it (see the module)."""
    start = max((u for u in own_reuses if at is None or u <= at), default=None)
    for r in renames:
        if (at is not None and r.at > at) or (start is not None and r.at < start):
            continue
        if direction == "upstream" and r.into:
            yield r, r.at - 1
        elif direction == "downstream" and not r.into:
            later = [u for u in reuses_of.get(r.row["urn"], ()) if u > r.at]
            yield r, (min(later) - 1 if later and (at is None or at >= min(later)) else at)


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
        if direction == "downstream":  # where a walk lands depends on the new name's own renames
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
                row = {**r, "edge": {**edge, "relation": RENAMED_FROM, "transformation": RENAME}}
                touching[r["from"]].append(Rename(bool(r["into"]), int(edge.get("validFrom") or 0), row))
        return {u: rs for u, rs in touching.items() if rs}


__all__ = ["RENAME", "Listing", "Rename", "RenameReader", "crossings", "reuses"]
