"""Schema evolution: a diff of two versions of a schema, and the rule sets that judge it.

Pure code, no I/O.

* :func:`diff_fields` compares two normalized field lists (``normalize()`` output of any
  format) by v2 path: added, removed, type-changed, nullability-changed, renamed (same
  position among its siblings and same type, new name) and reordered fields.
* :func:`check` judges a diff by a rule set: ``"datamine"`` (the DataMine IDL's rules) or
  ``"odf"`` (Open Data Fabric's, as kamu applies them).
* :func:`avro_compatible` implements Avro's schema resolution (reader/writer
  compatibility) and :func:`check_compatibility` the Confluent Schema Registry's modes over
  a history of versions. They work on Avro schemas (JSON, text, or the type model); over
  the model of another format they apply Avro's rules to the Avro-shaped model that format
  converts into (see :func:`to_compat_model`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import FieldPathError
from .fields import SchemaField
from .model import Type, deref
from .paths import FieldPath, PathToken

# --- diff --------------------------------------------------------------------------------------

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
        if self.kind == "added":
            return f"added {self.new_type}, {'nullable' if n.nullable else 'required'}"
        if self.kind == "removed":
            return f"removed {self.old_type}"
        if self.kind == "renamed":
            return f"renamed from {_name(o.fieldPath)!r} ({o.fieldPath})"
        if self.kind == "type_changed":
            return f"type {self.old_type} -> {self.new_type}"
        if self.kind == "nullability_changed":
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
    def signature(self) -> tuple:
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


def _name(path: str) -> str:
    tokens, _ = _tokens(path)
    names = [t.value for t in tokens if not t.is_type]
    return names[-1] if names else ""


def _anatomy(path: str) -> tuple[tuple[PathToken, ...], bool, str, int, list[int]]:
    """(tokens, key, name, index of the name token, indexes of the enclosing name tokens)."""
    tokens, key = _tokens(path)
    name_at = [j for j, t in enumerate(tokens) if not t.is_type]
    if name_at and name_at[-1] == len(tokens) - 1:
        last = name_at[-1]
        name = tokens[last].value
    else:  # no trailing name (a root that is not a record)
        last, name = len(tokens), ""
    return tokens, key, name, last, [j for j in name_at if j < last]


def _root_length(anatomies: list[tuple]) -> int:
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
        for o, n, renamed in matched:
            pairs[o.index] = (o, n, renamed)
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

    for same in (lambda o, n: o.path == n.path, lambda o, n: o.name == n.name and o.own == n.own):
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


# --- rule sets over a diff ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Violation:
    """A change a rule set forbids: ``rule`` (e.g. ``datamine.no-removal``), the field path, why."""

    rule: str
    path: str
    message: str
    change: FieldChange | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "path": self.path, "message": self.message}


#: The rules of each rule set, with what they say.
RULES: dict[str, dict[str, str]] = {
    "datamine": {
        "datamine.no-new-required": "no new REQUIRED field can be added to an existing table",
        "datamine.no-optional-to-required": "an OPTIONAL field cannot be changed to REQUIRED",
        "datamine.no-type-change": "the type of an existing field cannot be changed",
        "datamine.no-removal": "no existing field can be removed",
    },
    "odf": {
        "odf.added-must-be-optional": "only optional (nullable) fields can be added",
        "odf.no-removal": "a field cannot be removed",
        "odf.no-rename": "a field cannot be renamed",
        "odf.no-type-change": "a field's type cannot change",
        "odf.no-nullability-change": "a field's nullability cannot change",
    },
}
RULE_SETS = tuple(RULES)


def check(diff: SchemaDiff, rules: str = "datamine") -> list[Violation]:
    """Every change of ``diff`` that the rule set ``rules`` ("datamine" or "odf") forbids.

    Only the outermost field of an added or removed subtree is judged (a required member
    of a new optional struct is not a new required field). Reordering is always allowed.
    """
    if rules not in RULES:
        raise ValueError(f"unknown rule set {rules!r}; known: {', '.join(RULE_SETS)}")
    out: list[Violation] = []
    if rules == "odf" and diff.identical:
        return out
    for c in diff.changes:
        name = _name(c.path)
        rule = message = None
        if c.kind == "removed" and not c.nested:
            rule, message = f"{rules}.no-removal", f"field {name!r} removed"
        elif c.kind == "renamed":
            old = _name(c.old_path)
            if rules == "datamine":
                rule, message = "datamine.no-removal", f"field {old!r} renamed to {name!r}, which removes {old!r}"
            else:
                rule, message = "odf.no-rename", f"field {old!r} renamed to {name!r}"
        elif c.kind == "added" and not c.nested and not c.new.nullable:
            rule = "datamine.no-new-required" if rules == "datamine" else "odf.added-must-be-optional"
            message = f"required field {name!r} added"
        elif c.kind == "type_changed":
            rule, message = f"{rules}.no-type-change", f"field {name!r} changed type: {c.describe()[5:]}"
        elif c.kind == "nullability_changed":
            if rules == "odf":
                rule, message = "odf.no-nullability-change", f"field {name!r}: {c.describe()}"
            elif c.old.nullable and not c.new.nullable:
                rule, message = "datamine.no-optional-to-required", f"field {name!r} changed from optional to required"
        if rule is not None:
            out.append(Violation(rule, c.path, f"{message}: {RULES[rules][rule]}", c))
    return out


# --- Avro schema resolution ---------------------------------------------------------------------

#: Writer primitive -> the reader primitives it promotes to (Avro spec, "Schema Resolution").
PROMOTIONS: dict[str, frozenset[str]] = {
    "int": frozenset({"long", "float", "double"}),
    "long": frozenset({"float", "double"}),
    "float": frozenset({"double"}),
    "string": frozenset({"bytes"}),
    "bytes": frozenset({"string"}),
}


@dataclass(frozen=True, slots=True)
class Incompatibility:
    """Why a reader schema cannot read data written with a writer schema.

    ``kind`` uses the names of Avro's Java ``SchemaCompatibility``: ``TYPE_MISMATCH``,
    ``NAME_MISMATCH``, ``FIXED_SIZE_MISMATCH``, ``MISSING_ENUM_SYMBOLS``,
    ``READER_FIELD_MISSING_DEFAULT_VALUE``, ``MISSING_UNION_BRANCH``. ``location`` is where,
    as record and field names (``Order.lines[]``; ``[]`` an array's items, ``{}`` a map's
    values, ``|n`` a union's member n). ``version`` (the index in a history) and
    ``direction`` are set by :func:`check_compatibility`.
    """

    kind: str
    location: str
    message: str
    version: int | None = None
    direction: str | None = None  # "new reads old" or "old reads new"

    @property
    def rule(self) -> str:
        return f"avro.{self.kind.lower().replace('_', '-')}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "location": self.location, "message": self.message,
            "version": self.version, "direction": self.direction,
        }


def to_compat_model(schema: Any, format: str = "avro", *, name: str | None = None) -> Type:
    """The type model to check compatibility on: a model node as is, else the schema read as ``format``."""
    if hasattr(schema, "kind") and getattr(schema, "kind", None) in (
        "primitive", "enum", "fixed", "record", "array", "map", "union", "ref",
    ):
        return schema
    if format == "avro":
        from .avro import parse_avro

        return parse_avro(schema, name=name)
    from .api import to_model

    return to_model(schema, format, name=name)


def avro_compatible(reader_schema: Any, writer_schema: Any) -> list[Incompatibility]:
    """Every reason ``reader_schema`` cannot read what ``writer_schema`` wrote (empty: compatible).

    Either schema is Avro (text, bytes, parsed JSON) or a type model node. The rules are
    the Avro specification's schema resolution: same primitive, or a promotion (int to
    long/float/double, long to float/double, float to double, string and bytes both ways);
    records of the same unqualified name (or a reader alias), their fields matched by name
    or reader field alias, a reader field missing from the writer needing a default; enums
    of the same name whose writer symbols the reader has, unless the reader has an enum
    default; fixed of the same name and size; arrays and maps by items and values; a writer
    union whose every member the reader reads; a reader union with a member that reads
    the writer.
    """
    reader = to_compat_model(reader_schema)
    writer = to_compat_model(writer_schema)
    return _Resolver().check(reader, writer, _label(deref(reader)))


def _label(node: Any) -> str:
    return _short(node.name) if node.kind in ("record", "enum", "fixed") else node.type


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _describe(node: Any) -> str:
    node = deref(node)
    if node.kind in ("record", "enum", "fixed"):
        return f"{node.type} {node.name}"
    if node.kind == "array":
        return f"array<{_describe(node.items)}>"
    if node.kind == "map":
        return f"map<{_describe(node.values)}>"
    if node.kind == "union":
        return "[" + ", ".join(_describe(m) for m in node.members) + "]"
    return node.type


def _aliases(node: Any) -> set[str]:
    """A named type's or a field's aliases, as full and as short names."""
    raw = node.props.get("aliases") if node.props else None
    if not isinstance(raw, (list, tuple)):
        return set()
    out: set[str] = set()
    space = node.name.rsplit(".", 1)[0] if node.kind != "field" and "." in node.name else None
    for a in raw:
        if isinstance(a, str):
            out.add(a)
            out.add(_short(a))
            if space and "." not in a:
                out.add(f"{space}.{a}")
    return out


def _names_match(reader: Any, writer: Any) -> bool:
    if _short(reader.name) == _short(writer.name):
        return True
    aliases = _aliases(reader)
    return writer.name in aliases or _short(writer.name) in aliases


class _Resolver:
    def __init__(self) -> None:
        self.assumed: set[tuple[int, int]] = set()  # record pairs being checked (recursion)

    def check(self, reader: Any, writer: Any, where: str) -> list[Incompatibility]:
        reader, writer = deref(reader), deref(writer)
        rk, wk = reader.kind, writer.kind
        if wk == "union":
            out: list[Incompatibility] = []
            for i, member in enumerate(writer.members):
                if rk == "union":
                    if not any(not self.check(r, member, where) for r in reader.members):
                        out.append(Incompatibility(
                            "MISSING_UNION_BRANCH", f"{where}|{i}",
                            f"reader union {_describe(reader)} has no member that reads writer's {_describe(member)}",
                        ))
                else:
                    out.extend(self.check(reader, member, f"{where}|{i}"))
            return out
        if rk == "union":
            if any(not self.check(r, writer, where) for r in reader.members):
                return []
            return [Incompatibility(
                "MISSING_UNION_BRANCH", where,
                f"reader union {_describe(reader)} has no member that reads writer's {_describe(writer)}",
            )]
        if rk == "primitive" and wk == "primitive":
            if reader.name == writer.name or reader.name in PROMOTIONS.get(writer.name, ()):
                return []
            return [self.mismatch(reader, writer, where)]
        if rk != wk:
            return [self.mismatch(reader, writer, where)]
        if rk == "array":
            return self.check(reader.items, writer.items, f"{where}[]")
        if rk == "map":
            return self.check(reader.values, writer.values, f"{where}{{}}")
        if not _names_match(reader, writer):
            return [Incompatibility(
                "NAME_MISMATCH", where, f"reader's {reader.type} is named {reader.name!r}, writer's {writer.name!r}",
            )]
        if rk == "fixed":
            if reader.size != writer.size:
                return [Incompatibility(
                    "FIXED_SIZE_MISMATCH", where,
                    f"fixed {reader.name!r} has size {reader.size} in the reader, {writer.size} in the writer",
                )]
            return []
        if rk == "enum":
            missing = [s for s in writer.symbols if s not in reader.symbols]
            if missing and reader.props.get("default") not in reader.symbols:
                return [Incompatibility(
                    "MISSING_ENUM_SYMBOLS", where,
                    f"the reader's enum {reader.name!r} lacks the writer's symbols {', '.join(missing)}",
                )]
            return []
        return self.record(reader, writer, where)

    def mismatch(self, reader: Any, writer: Any, where: str) -> Incompatibility:
        return Incompatibility(
            "TYPE_MISMATCH", where, f"the reader's {_describe(reader)} cannot read the writer's {_describe(writer)}",
        )

    def record(self, reader: Any, writer: Any, where: str) -> list[Incompatibility]:
        pair = (id(reader), id(writer))
        if pair in self.assumed:  # recursive: assume compatible, as Avro's checker does
            return []
        self.assumed.add(pair)
        try:
            out: list[Incompatibility] = []
            by_name = {f.name: f for f in writer.fields}
            for rf in reader.fields:
                wf = by_name.get(rf.name)
                if wf is None:
                    for alias in _aliases(rf):
                        if alias in by_name:
                            wf = by_name[alias]
                            break
                at = f"{where}.{rf.name}"
                if wf is None:
                    if not rf.has_default:
                        out.append(Incompatibility(
                            "READER_FIELD_MISSING_DEFAULT_VALUE", at,
                            f"the reader's field {rf.name!r} is not in the writer's schema and has no default",
                        ))
                    continue
                out.extend(self.check(rf.type, wf.type, at))
            return out
        finally:
            self.assumed.discard(pair)


# --- Confluent Schema Registry compatibility modes ----------------------------------------------

#: Mode -> (check new-reads-old?, check old-reads-new?, transitive?)
MODES: dict[str, tuple[bool, bool, bool]] = {
    "NONE": (False, False, False),
    "BACKWARD": (True, False, False),
    "FORWARD": (False, True, False),
    "FULL": (True, True, False),
    "BACKWARD_TRANSITIVE": (True, False, True),
    "FORWARD_TRANSITIVE": (False, True, True),
    "FULL_TRANSITIVE": (True, True, True),
}


def check_compatibility(history: Sequence[Any], new: Any, mode: str = "BACKWARD", *,
                        format: str = "avro") -> list[Incompatibility]:
    """Whether ``new`` may follow the versions ``history`` (oldest first) in the registry ``mode``.

    BACKWARD: ``new`` reads data written with the latest version; FORWARD: the latest
    version reads data written with ``new``; FULL: both. The ``_TRANSITIVE`` forms check
    against every version in ``history`` instead of the latest only; NONE checks nothing.
    Each incompatibility carries the ``version`` (index in ``history``) and ``direction``.
    Schemas are read as ``format`` unless they are model nodes already.
    """
    key = mode.upper().replace("-", "_")
    if key not in MODES:
        raise ValueError(f"unknown compatibility mode {mode!r}; known: {', '.join(MODES)}")
    backward, forward, transitive = MODES[key]
    if not history:
        return []
    new_model = to_compat_model(new, format)
    versions = list(enumerate(history))
    if not transitive:
        versions = versions[-1:]
    out: list[Incompatibility] = []
    for i, old in versions:
        old_model = to_compat_model(old, format)
        if backward:
            out.extend(replace(x, version=i, direction="new reads old") for x in avro_compatible(new_model, old_model))
        if forward:
            out.extend(replace(x, version=i, direction="old reads new") for x in avro_compatible(old_model, new_model))
    return out


def compatibility_modes() -> Iterable[str]:
    return tuple(MODES)
