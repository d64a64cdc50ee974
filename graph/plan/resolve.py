"""Field references -> the fields they name: parsing field URNs, and resolving a reference (v2, v1 dotted or an RFC
slash path) against a dataset's fields."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fieldgraph.normalizers import FieldPath, FieldPathError, is_v2, v1_path
from fieldgraph.normalizers.urns import canonical_dataset_urn, make_field_urn
from fieldgraph.normalizers.urns import parse_field_ref as parse_field_ref  # the planner's, re-exported

from .state import FieldState


def dataset_of(ref: str) -> str:
    """The canonical dataset URN of a reference: a field URN's dataset, or a dataset URN."""
    return parse_field_ref(ref)[0] if ref.startswith(("urn:li:datasetField:", "urn:li:schemaField:")) \
        else canonical_dataset_urn(ref)


def field_urn(dataset_urn: str, path: str) -> str:
    """The stored URN of a dataset's field (``urn:li:datasetField:...``)."""
    return make_field_urn(dataset_urn, path)


def simple_ref(path: str) -> str:
    if path.startswith("/"):
        return ".".join(c for c in path.split("/") if c)
    return v1_path(path)


def _tokens(path: str) -> list[tuple[str, bool]]:
    """(value, is_type) tokens of a field path (a v1 path has names only)."""
    if is_v2(path):
        try:
            fp = FieldPath.parse(path)
            return [(t.value, t.is_type) for t in fp.tokens]
        except FieldPathError:
            pass
    return [(n, False) for n in path.split(".") if n]


def _slash_matches(comps: Sequence[str], tokens: Sequence[tuple[str, bool]]) -> bool:
    """``comps`` names every field name of ``tokens`` in order; other components must name one of
    its type tokens (the RFC's ``/foo2/bar2/int`` for a union member), case-insensitively."""
    names = [v for v, is_type in tokens if not is_type]
    types = {v.lower() for v, is_type in tokens if is_type}
    i = 0
    for comp in comps:
        if i < len(names) and comp == names[i]:
            i += 1
        elif comp.lower() not in types:
            return False
    return i == len(names)


class Resolver:
    """Resolves field references against one dataset's fields (indexed once)."""

    def __init__(self, fields: Iterable[FieldState]) -> None:
        self.real = [f for f in fields if not f.placeholder]
        self.by_path = {f.fieldPath: f for f in self.real}
        self._by_simple: dict[str, list[FieldState]] | None = None

    @property
    def by_simple(self) -> dict[str, list[FieldState]]:
        if self._by_simple is None:
            self._by_simple = {}
            for f in self.real:
                self._by_simple.setdefault(v1_path(f.fieldPath), []).append(f)
        return self._by_simple

    def resolve(self, path: str) -> tuple[str, list[str]]:
        if path in self.by_path:
            return "exact", [path]
        if is_v2(path):
            return "unknown", []
        if path.startswith("/"):
            comps = [c for c in path.split("/") if c]
            cands = [f for f in self.real if comps and _slash_matches(comps, _tokens(f.fieldPath))]
        else:
            cands = self.by_simple.get(path, [])
        current = [f for f in cands if not f.removed]
        paths = sorted({f.fieldPath for f in (current or cands)})
        if not paths:
            return "unknown", []
        return ("unique", paths) if len(paths) == 1 else ("ambiguous", paths)


def resolve_reference(path: str, fields: Sequence[FieldState]) -> tuple[str, list[str]]:
    """Resolve a field reference (v2, v1 dotted or RFC slash path) against a dataset's fields.

    Returns ``(kind, field paths)``: ``exact`` (a path the dataset has), ``unique``,
    ``ambiguous`` (more than one candidate; never silently picked) or ``unknown``.
    Current fields are preferred over removed ones.
    """
    return Resolver(fields).resolve(path)
