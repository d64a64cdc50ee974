"""The diff of two versions of a schema, field by field.

Pure code, no I/O. :func:`diff_fields` compares two normalized field lists (``normalize()``
output of any format) by v2 path: added, removed, type-changed, nullability-changed,
renamed (same position among its siblings and same type, new name) and reordered fields.
Judging a diff (rule sets, registry compatibility) is :mod:`.compat`'s job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from .errors import FieldPathError
from .fields import FieldType, SchemaField
from .paths import FieldPath, PathToken

#: Kinds of change, in the order a diff lists them.
CHANGE_KINDS = ("removed", "added", "renamed", "type_changed", "nullability_changed", "reordered")


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One change between two versions of a schema.

    ``path`` is the field's v2 path in the new schema (in the old one for ``removed``);
    ``old``/``new`` are the field in each version (``None`` where it does not exist).
    ``nested`` is true for a field added or removed together with an enclosing field
    (a member of an added struct, say).
    """

    kind: str
    path: str
    old: SchemaField | None = None
    new: SchemaField | None = None
    nested: bool = False
    old_type: str | None = None  # the field's type tokens and class, e.g. "array.string (ArrayType)"
    new_type: str | None = None

    @property
    def old_path(self) -> str | None:
        return self.old.fieldPath if self.old is not None else None

    def describe(self) -> str:
        o, n = self.old, self.new
        if self.kind == "added" and n is not None:
            return f"added {self.new_type}, {'nullable' if n.nullable else 'required'}"
        if self.kind == "removed":
            return f"removed {self.old_type}"
        if self.kind == "renamed" and o is not None:
            return f"renamed from {field_name(o.fieldPath)!r} ({o.fieldPath})"
        if self.kind == "type_changed":
            return f"type {self.old_type} -> {self.new_type}"
        if self.kind == "nullability_changed" and o is not None:
            return "nullable -> required" if o.nullable else "required -> nullable"
        if self.kind == "reordered":
            return "moved among its siblings"
        return self.kind

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "path": self.path, "oldPath": self.old_path,
            "nested": self.nested, "detail": self.describe(),
        }


@dataclass(frozen=True, slots=True)
class SchemaDiff:
    """The changes from one version of a schema to the next, each kind in schema order."""

    added: tuple[FieldChange, ...] = ()
    removed: tuple[FieldChange, ...] = ()
    type_changed: tuple[FieldChange, ...] = ()
    nullability_changed: tuple[FieldChange, ...] = ()
    renamed: tuple[FieldChange, ...] = ()
    reordered: tuple[FieldChange, ...] = ()
    #: Whether both versions give the very same field paths in the same order.
    same_paths: bool = True

    @property
    def changes(self) -> tuple[FieldChange, ...]:
        """Every change, removed first, then added, renamed, retyped, nullability, reordered."""
        return tuple(c for kind in CHANGE_KINDS for c in getattr(self, kind))

    @property
    def identical(self) -> bool:
        """No change at all: same fields, same types, same nullability, same order."""
        return self.same_paths and not self.changes

    def __bool__(self) -> bool:
        return bool(self.changes)

    def to_json(self) -> dict[str, Any]:
        return {"identical": self.identical, "changes": [c.to_json() for c in self.changes]}


@dataclass(slots=True)
class _Node:
    field: SchemaField
    index: int
    name: str  # the last field name of the path ("" for a path without one)
    own: tuple[str, ...]  # the type tokens between the parent's name and this one's
    parent: str | None = None  # v2 path of the nearest enclosing field, None at the top
    sibling: int = 0  # position among the fields of the same parent

    @property
    def path(self) -> str:
        return self.field.fieldPath

    @property
    def signature(self) -> tuple[tuple[str, ...], FieldType]:
        return (self.own, self.field.type)

    @property
    def type_text(self) -> str:
        name = self.field.type.name
        return f"{'.'.join(self.own)} ({name})" if self.own else name


def _tokens(path: str) -> tuple[tuple[PathToken, ...], bool]:
    try:
        fp = FieldPath.parse(path)
        return fp.tokens, fp.key
    except FieldPathError:  # not a v2 path: treat it as dotted names
        return tuple(PathToken(p) for p in path.split(".")), False


def field_name(path: str) -> str:
    """The last field name of a path (v2, or dotted names); "" for a path without one."""
    tokens, _ = _tokens(path)
    names = [t.value for t in tokens if not t.is_type]
    return names[-1] if names else ""


#: (tokens, key, name, index of the name token, indexes of the enclosing name tokens)
_Anatomy: TypeAlias = tuple[tuple[PathToken, ...], bool, str, int, list[int]]


def _anatomy(path: str) -> _Anatomy:
    """(tokens, key, name, index of the name token, indexes of the enclosing name tokens)."""
    tokens, key = _tokens(path)
    name_at = [j for j, t in enumerate(tokens) if not t.is_type]
    if name_at and name_at[-1] == len(tokens) - 1:
        last = name_at[-1]
        name = tokens[last].value
    else:  # no trailing name (a root that is not a record)
        last, name = len(tokens), ""
    return tokens, key, name, last, [j for j in name_at if j < last]


def _root_length(anatomies: list[_Anatomy]) -> int:
    """How many leading type tokens the top-level fields share: the root record's token.

    One for an ordinary record schema (``[type=Order]``), none for a schema whose top-level
    fields have no root token (``bare`` roots); at most one, and never a field's last type.
    """
    pres = [tuple(a[0][: a[3]]) for a in anatomies if a[2] and not a[4]]
    if not pres:
        return 0
    first = pres[0][:1]
    if all(p[:1] == first and len(p) > 1 for p in pres) and (len(pres) > 1 or len(pres[0]) > 1):
        return 1
    return 0


def _nodes(fields: Sequence[SchemaField]) -> tuple[list[_Node], dict[str | None, list[_Node]]]:
    """The fields with their parent, name and own type tokens (the type tokens between the
    enclosing field's name, or the root token, and the field's name)."""
    by_path = {f.fieldPath: f for f in fields}
    anatomies = [_anatomy(f.fieldPath) for f in fields]
    root = _root_length(anatomies)
    nodes: list[_Node] = []
    groups: dict[str | None, list[_Node]] = {}
    for i, (f, (tokens, key, name, last, prev)) in enumerate(zip(fields, anatomies, strict=False)):
        start = prev[-1] + 1 if prev else (root if name else 0)
        own = tuple(t.value for t in tokens[start:last])
        parent = None
        for j in reversed(prev):  # the nearest enclosing path that is a field
            candidate = str(FieldPath(tokens[: j + 1], key=key))
            if candidate in by_path and candidate != f.fieldPath:
                parent = candidate
                break
        node = _Node(f, i, name, own, parent)
        group = groups.setdefault(parent, [])
        node.sibling = len(group)
        group.append(node)
        nodes.append(node)
    return nodes, groups


def diff_fields(old: Sequence[SchemaField], new: Sequence[SchemaField]) -> SchemaDiff:
    """The changes from ``old`` to ``new`` (each a ``normalize()`` result, any format).

    Fields are matched level by level under matched parents: the same v2 path, else the
    same name and type tokens, else the same name (a type change); a field left over in
    both versions at the same position among its siblings with the same type is a rename.
    A v2 path holds the type, so a retyped field keeps its name but not its path.
    """
    old_nodes, old_groups = _nodes(old)
    new_nodes, new_groups = _nodes(new)
    pairs: dict[int, tuple[_Node, _Node, bool]] = {}  # old index -> (old, new, renamed)
    queue: list[tuple[str | None, str | None]] = [(None, None)]
    reordered: list[tuple[_Node, _Node]] = []
    while queue:
        op, np_ = queue.pop(0)
        olds = old_groups.get(op, [])
        news = new_groups.get(np_, [])
        matched = _match_group(olds, news)
        for o, n, was_renamed in matched:
            pairs[o.index] = (o, n, was_renamed)
            queue.append((o.path, n.path))
        same = sorted(((o, n) for o, n, _ in matched), key=lambda p: p[0].sibling)
        new_rank = {id(n): r for r, (_, n) in enumerate(sorted(same, key=lambda p: p[1].sibling))}
        reordered.extend((o, n) for r, (o, n) in enumerate(same) if new_rank[id(n)] != r)

    matched_new = {n.index for _, n, _ in pairs.values()}
    removed_idx = {o.index for o in old_nodes if o.index not in pairs}
    added_idx = {n.index for n in new_nodes if n.index not in matched_new}
    old_index = {o.path: o.index for o in old_nodes}
    new_index = {n.path: n.index for n in new_nodes}

    def nested(node: _Node, idx: dict[str, int], gone: set[int]) -> bool:
        return node.parent is not None and idx.get(node.parent) in gone

    added = tuple(
        FieldChange("added", n.path, None, n.field, nested(n, new_index, added_idx), None, n.type_text)
        for n in new_nodes if n.index in added_idx
    )
    removed = tuple(
        FieldChange("removed", o.path, o.field, None, nested(o, old_index, removed_idx), o.type_text)
        for o in old_nodes if o.index in removed_idx
    )
    ordered = sorted(pairs.values(), key=lambda p: p[1].index)

    def change(kind: str, o: _Node, n: _Node) -> FieldChange:
        return FieldChange(kind, n.path, o.field, n.field, False, o.type_text, n.type_text)

    renamed = tuple(change("renamed", o, n) for o, n, r in ordered if r)
    type_changed = tuple(change("type_changed", o, n) for o, n, _ in ordered if o.signature != n.signature)
    nullability = tuple(
        change("nullability_changed", o, n) for o, n, _ in ordered if o.field.nullable != n.field.nullable
    )
    moved = tuple(change("reordered", o, n) for o, n in sorted(reordered, key=lambda p: p[1].index))
    same_paths = [f.fieldPath for f in old] == [f.fieldPath for f in new]
    return SchemaDiff(added, removed, type_changed, nullability, renamed, moved, same_paths)


def _match_group(olds: list[_Node], news: list[_Node]) -> list[tuple[_Node, _Node, bool]]:
    """Pair the fields of one parent: same path, same name and type, unique name, then renames."""
    out: list[tuple[_Node, _Node, bool]] = []
    left_old, left_new = list(olds), list(news)

    def pair(o: _Node, n: _Node, renamed: bool = False) -> None:
        out.append((o, n, renamed))
        left_old.remove(o)
        left_new.remove(n)

    for same in (_same_path, _same_name_and_type):
        for o in list(left_old):
            n = next((n for n in left_new if same(o, n)), None)
            if n is not None:
                pair(o, n)
    for o in list(left_old):  # same name, another type: only when the name is unambiguous
        cands = [n for n in left_new if n.name == o.name]
        if len(cands) == 1 and sum(1 for x in left_old if x.name == o.name) == 1:
            pair(o, cands[0])
    for o in list(left_old):  # same position, same type, another name
        n = next((n for n in left_new if n.sibling == o.sibling and n.signature == o.signature
                  and n.name != o.name), None)
        if n is not None:
            pair(o, n, renamed=True)
    return out


def _same_path(o: _Node, n: _Node) -> bool:
    return o.path == n.path


def _same_name_and_type(o: _Node, n: _Node) -> bool:
    return o.name == n.name and o.own == n.own
