"""The diff of two versions of a schema, field by field.

Pure code, no I/O. :func:`diff_fields` compares two normalized field lists (``normalize()``
output of any format) by v2 path: added, removed, type-changed, nullability-changed,
renamed and reordered fields. A rename is only what a schema states (an Avro field alias
naming the old field, the same Protobuf field number or Parquet/Arrow ``field_id``:
``SchemaField.aliases`` / ``fieldId``); a removed field and an added one at the same
position with the same type stay a removal and an addition, with a ``likely_renamed``
suggestion saying why they look like a rename (never applied).
Given ``format="datamine"``, it compares DataMine's own types too (``BYTE`` and ``INT32``
render alike but differ) and a table's sort key.
Judging a diff (rule sets, registry compatibility) is :mod:`.compat`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from .datamine import canonical_type, sort_key
from .errors import FieldPathError
from .fields import FieldType, SchemaField
from .paths import FieldPath, PathToken

#: Kinds of change, in the order a diff lists them; the last, ``likely_renamed``, is a suggestion, not a change
#: (its fields are listed removed and added).
CHANGE_KINDS = ("removed", "added", "renamed", "type_changed", "nullability_changed", "sort_key_changed",
                "reordered", "likely_renamed")
#: Why a diff suggests a rename it does not apply.
SAME_POSITION_AND_TYPE = "same position and type"


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One change between two versions of a schema.

    ``path`` is the field's v2 path in the new schema (in the old one for ``removed``);
    ``old``/``new`` are the field in each version (``None`` where it does not exist).
    ``nested`` is true for a field added or removed together with an enclosing field
    (a member of an added struct, say). A ``sort_key_changed`` change (DataMine) is about the
    table: ``old``/``new`` are its sort-key field in each version (``None``: no sort key),
    ``old_type``/``new_type`` the sort keys (``"run_num (ascending)"``); ``path`` is the new
    sort-key field's, else the old one's. ``reason``: what states a ``renamed`` change (``"Avro alias 'a'"``,
    ``"same Protobuf field number 3"``, ``"same field_id 7"``), or why a ``likely_renamed`` suggestion looks
    like one (``"same position and type"``).
    """

    kind: str
    path: str
    old: SchemaField | None = None
    new: SchemaField | None = None
    nested: bool = False
    old_type: str | None = None  # the field's type tokens and class, e.g. "array.string (ArrayType)";
    # DataMine: its DataMine type first, "INT16 (int, NumberType)"
    new_type: str | None = None
    reason: str | None = None

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
            said = f": {self.reason}" if self.reason else ""
            return f"renamed from {field_name(o.fieldPath)!r} ({o.fieldPath}){said}"
        if self.kind == "likely_renamed" and o is not None:
            return (f"likely renamed from {field_name(o.fieldPath)!r} ({o.fieldPath}): {self.reason}; "
                    "a suggestion, not applied (listed as removed and added)")
        if self.kind == "type_changed":
            return f"type {self.old_type} -> {self.new_type}"
        if self.kind == "nullability_changed" and o is not None:
            return "nullable -> required" if o.nullable else "required -> nullable"
        if self.kind == "sort_key_changed":
            return f"sort key {self.old_type or '(none)'} -> {self.new_type or '(none)'}"
        if self.kind == "reordered":
            return "moved among its siblings"
        return self.kind

    def to_json(self) -> dict[str, Any]:
        out = {
            "kind": self.kind, "path": self.path, "oldPath": self.old_path,
            "nested": self.nested, "detail": self.describe(),
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out


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
    #: DataMine: the table's sort key changed (at most one change).
    sort_key_changed: tuple[FieldChange, ...] = ()
    #: Suggestions: a removed field and an added one that look like a rename no schema states (not applied).
    likely_renamed: tuple[FieldChange, ...] = ()

    @property
    def changes(self) -> tuple[FieldChange, ...]:
        """Every change, removed first, then added, renamed, retyped, nullability, sort key, reordered; then the
        ``likely_renamed`` suggestions."""
        return tuple(c for kind in CHANGE_KINDS for c in getattr(self, kind))

    @property
    def suggestions(self) -> tuple[FieldChange, ...]:
        """The renames the diff suggests but does not apply (``likely_renamed``)."""
        return self.likely_renamed

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
    native: str | None = None  # the field's type in its format's own terms, where the format has them

    @property
    def path(self) -> str:
        return self.field.fieldPath

    @property
    def signature(self) -> tuple[tuple[str, ...], FieldType, str | None]:
        return (self.own, self.field.type, self.native)

    @property
    def type_text(self) -> str:
        name = self.field.type.name
        if self.native is not None:
            return f"{self.native} ({'.'.join(self.own)}, {name})" if self.own else f"{self.native} ({name})"
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


def _nodes(fields: Sequence[SchemaField], native: Callable[[SchemaField], str] | None = None,
           ) -> tuple[list[_Node], dict[str | None, list[_Node]]]:
    """The fields with their parent, name and own type tokens (the type tokens between the
    enclosing field's name, or the root token, and the field's name), and ``native(field)``."""
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
        node = _Node(f, i, name, own, parent, native=native(f) if native is not None else None)
        group = groups.setdefault(parent, [])
        node.sibling = len(group)
        group.append(node)
        nodes.append(node)
    return nodes, groups


def diff_fields(old: Sequence[SchemaField], new: Sequence[SchemaField], *, format: str | None = None) -> SchemaDiff:
    """The changes from ``old`` to ``new`` (each a ``normalize()`` result, any format).

    Fields are matched level by level under matched parents: the same ``fieldId`` (a stated
    rename if the name differs), else the same v2 path, else the same name and type tokens,
    else the same name (a type change), else a new field whose ``aliases`` name an old one (a
    stated rename); two fields whose ``fieldId`` differ are never matched. A field left over in
    both versions at the same position among its siblings with the same type is suggested
    (``likely_renamed``), not matched: it stays removed and added. A v2 path holds the type,
    so a retyped field keeps its name but not its path. Reasons name the format where
    ``format`` says it (``"protobuf"``: a field number).

    ``format="datamine"`` (both versions one DataMine table): a field's type is also its
    DataMine type (:func:`.datamine.canonical_type` of its ``nativeDataType``), so ``BYTE`` ->
    ``INT32`` is a type change though both are Avro ``int``, while ``Integer`` -> ``INT32`` is
    none; and a change of the table's sort key (added, removed, or another field or order) is
    a ``sort_key_changed`` change. Other formats are compared by their fields' paths and types.
    """
    native = _datamine_type if format == "datamine" else None
    old_nodes, old_groups = _nodes(old, native)
    new_nodes, new_groups = _nodes(new, native)
    pairs, reordered, guesses = _match(old_groups, new_groups, format)
    added = _one_sided(new_nodes, {n.index for _, n, _ in pairs.values()}, added=True)
    removed = _one_sided(old_nodes, set(pairs), added=False)
    ordered = sorted(pairs.values(), key=lambda p: p[1].index)
    renamed = tuple(_change("renamed", o, n, r) for o, n, r in ordered if r is not None)
    likely = tuple(_change("likely_renamed", o, n, SAME_POSITION_AND_TYPE)
                   for o, n in sorted(guesses, key=lambda p: p[1].index))
    type_changed = tuple(_change("type_changed", o, n) for o, n, _ in ordered if o.signature != n.signature)
    nullability = tuple(
        _change("nullability_changed", o, n) for o, n, _ in ordered if o.field.nullable != n.field.nullable
    )
    moved = tuple(_change("reordered", o, n) for o, n in sorted(reordered, key=lambda p: p[1].index))
    same_paths = [f.fieldPath for f in old] == [f.fieldPath for f in new]
    sort_keys: tuple[FieldChange, ...] = ()
    if format == "datamine" and old and new:  # a new table defines its sort key, a removed one has none
        sort_keys = _sort_key_change(old_groups.get(None, []), new_groups.get(None, []), pairs)
    return SchemaDiff(added, removed, type_changed, nullability, renamed, moved, same_paths, sort_keys, likely)


#: old index -> (the old field, its match in the new version, what states its rename: None if not renamed)
_Pairs: TypeAlias = dict[int, tuple[_Node, _Node, str | None]]


def _match(old_groups: dict[str | None, list[_Node]], new_groups: dict[str | None, list[_Node]],
           format: str | None = None) -> tuple[_Pairs, list[tuple[_Node, _Node]], list[tuple[_Node, _Node]]]:
    """The fields of the two versions matched level by level under matched parents (from the top), the matched
    fields whose place among their siblings changed, and the unmatched pairs that look like renames."""
    pairs: _Pairs = {}
    queue: list[tuple[str | None, str | None]] = [(None, None)]
    reordered: list[tuple[_Node, _Node]] = []
    guesses: list[tuple[_Node, _Node]] = []
    while queue:
        op, np_ = queue.pop(0)
        matched, guessed = _match_group(old_groups.get(op, []), new_groups.get(np_, []), format)
        for o, n, reason in matched:
            pairs[o.index] = (o, n, reason)
            queue.append((o.path, n.path))
        reordered.extend(_moved((o, n) for o, n, _ in matched))
        guesses.extend(guessed)
    return pairs, reordered, guesses


def _moved(matched: Iterable[tuple[_Node, _Node]]) -> list[tuple[_Node, _Node]]:
    """The pairs of one parent's matched fields whose rank among them differs between the versions."""
    same = sorted(matched, key=lambda p: p[0].sibling)
    new_rank = {id(n): r for r, (_, n) in enumerate(sorted(same, key=lambda p: p[1].sibling))}
    return [(o, n) for r, (o, n) in enumerate(same) if new_rank[id(n)] != r]


def _one_sided(nodes: list[_Node], matched: set[int], *, added: bool) -> tuple[FieldChange, ...]:
    """The fields of one version that the other lacks (``added``: of the new one, else ``removed``, of the old one),
    ``nested`` when their parent is one of them too."""
    gone = {n.index for n in nodes if n.index not in matched}
    index = {n.path: n.index for n in nodes}
    out = []
    for n in nodes:
        if n.index in gone:
            nested = n.parent is not None and index.get(n.parent) in gone
            out.append(FieldChange("added", n.path, None, n.field, nested, None, n.type_text) if added else
                       FieldChange("removed", n.path, n.field, None, nested, n.type_text))
    return tuple(out)


def _change(kind: str, o: _Node, n: _Node, reason: str | None = None) -> FieldChange:
    """A change of a field both versions have (or, ``likely_renamed``, of two fields that look like one)."""
    return FieldChange(kind, n.path, o.field, n.field, False, o.type_text, n.type_text, reason)


def _datamine_type(f: SchemaField) -> str:
    return canonical_type(f.nativeDataType)


def _sort_key_change(olds: list[_Node], news: list[_Node],
                     pairs: _Pairs) -> tuple[FieldChange, ...]:
    """The change of a DataMine table's sort key (its top-level fields ``olds`` -> ``news``), if any.

    The sort key is the same when the new sort-key field is the old one's match in the diff
    (same field, possibly renamed or retyped, which the diff reports itself) with the same order.
    """
    before, after = _sort_key_node(olds), _sort_key_node(news)
    if before is not None and after is not None:
        match = pairs.get(before[0].index)
        if match is not None and match[1] is after[0] and before[1] == after[1]:
            return ()
    if before is None and after is None:
        return ()
    old_node, new_node = (before[0] if before else None), (after[0] if after else None)
    at = new_node or old_node
    assert at is not None
    return (FieldChange(
        "sort_key_changed", at.path, old_node.field if old_node else None, new_node.field if new_node else None,
        False, _sort_key_text(before), _sort_key_text(after),
    ),)


def _sort_key_text(key: tuple[_Node, str] | None) -> str | None:
    return f"{key[0].name} ({key[1]})" if key is not None else None


def _sort_key_node(nodes: list[_Node]) -> tuple[_Node, str] | None:
    """The sort-key field among a table's top-level fields and its order; None without one."""
    key = sort_key(n.field for n in nodes)
    if key is None:
        return None
    return next(n for n in nodes if n.field is key[0]), key[1]


def _match_group(olds: list[_Node], news: list[_Node], format: str | None = None
                 ) -> tuple[list[tuple[_Node, _Node, str | None]], list[tuple[_Node, _Node]]]:
    """Pair the fields of one parent: same ``fieldId``, same path, same name and type, unique name, then an alias
    naming the old field; and suggest, without pairing them, the fields left at the same position with the same
    type. Each pair carries what states its rename (None: the same name)."""
    out: list[tuple[_Node, _Node, str | None]] = []
    left_old, left_new = list(olds), list(news)

    def pair(o: _Node, n: _Node, reason: str | None = None) -> None:
        out.append((o, n, reason))
        left_old.remove(o)
        left_new.remove(n)

    if any(o.field.fieldId is not None for o in olds):
        for o in list(left_old):
            fid = o.field.fieldId
            if fid is not None:
                same_id = _closest(o, [n for n in left_new if n.field.fieldId == fid])
                if same_id is not None:
                    pair(o, same_id, None if same_id.name == o.name else _id_reason(fid, format))
    for same in (_same_path, _same_name_and_type):
        for o in list(left_old):
            n = next((n for n in left_new if same(o, n) and not _other_ids(o, n)), None)
            if n is not None:
                pair(o, n)
    for o in list(left_old):  # same name, another type: only when the name is unambiguous
        cands = [n for n in left_new if n.name == o.name]
        if len(cands) == 1 and sum(1 for x in left_old if x.name == o.name) == 1 and not _other_ids(o, cands[0]):
            pair(o, cands[0])
    for new in list(left_new):  # an alias naming an old field (Avro: matched after the names)
        if new.field.aliases:
            named = _closest(new, [o for o in left_old if o.name in new.field.aliases and not _other_ids(o, new)])
            if named is not None:
                pair(named, new, f"Avro alias {named.name!r}")
    return out, _likely_renames(left_old, left_new)


def _likely_renames(olds: list[_Node], news: list[_Node]) -> list[tuple[_Node, _Node]]:
    """The unmatched fields of one parent that look like a rename: same position among their siblings, same type,
    another name, and no ids that tell them apart (a suggestion only)."""
    out = []
    for o in olds:
        n = next((n for n in news if n.sibling == o.sibling and n.signature == o.signature
                  and n.name != o.name and not _both_ids(o, n)), None)
        if n is not None:
            out.append((o, n))
    return out


def _closest(node: _Node, candidates: list[_Node]) -> _Node | None:
    """The candidate with ``node``'s own type tokens, else the first; None without candidates."""
    return next((c for c in candidates if c.own == node.own), candidates[0] if candidates else None)


def _id_reason(field_id: str, format: str | None) -> str:
    return f"same Protobuf field number {field_id}" if format == "protobuf" else f"same field_id {field_id}"


def _both_ids(o: _Node, n: _Node) -> bool:
    """Whether both fields state their id (then ids alone say whether they are one field)."""
    return o.field.fieldId is not None and n.field.fieldId is not None


def _other_ids(o: _Node, n: _Node) -> bool:
    """Whether the two fields state different ids: two fields, whatever their names."""
    return _both_ids(o, n) and o.field.fieldId != n.field.fieldId


def _same_path(o: _Node, n: _Node) -> bool:
    return o.path == n.path


def _same_name_and_type(o: _Node, n: _Node) -> bool:
    return o.name == n.name and o.own == n.own
