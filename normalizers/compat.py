"""Judging a schema change: rule sets over a field diff, and Avro / Schema Registry compatibility.

Pure code, no I/O.

* :func:`check` judges a :class:`~.diff.SchemaDiff` by a rule set: ``"datamine"`` (the
  DataMine IDL's rules) or ``"odf"`` (Open Data Fabric's, as kamu applies them).
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

from .diff import FieldChange, SchemaDiff, field_name
from .errors import InputError
from .model import TYPE_CLASSES, Array, Enum, Field, Fixed, Map, Node, Primitive, Record, Type, Union, deref

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
        raise InputError(f"unknown rule set {rules!r}; known: {', '.join(RULE_SETS)}")
    out: list[Violation] = []
    if rules == "odf" and diff.identical:
        return out
    for c in diff.changes:
        broken = _broken_rule(c, rules)
        if broken is not None:
            rule, message = broken
            out.append(Violation(rule, c.path, f"{message}: {RULES[rules][rule]}", c))
    return out


def _broken_rule(c: FieldChange, rules: str) -> tuple[str, str] | None:
    """The rule of ``rules`` the change ``c`` breaks and what the change did, or None."""
    name = field_name(c.path)
    datamine = rules == "datamine"
    match c.kind:
        case "removed" if not c.nested:
            return f"{rules}.no-removal", f"field {name!r} removed"
        case "renamed":
            old = field_name(c.old_path or "")
            if datamine:
                return "datamine.no-removal", f"field {old!r} renamed to {name!r}, which removes {old!r}"
            return "odf.no-rename", f"field {old!r} renamed to {name!r}"
        case "added" if not c.nested and c.new is not None and not c.new.nullable:
            rule = "datamine.no-new-required" if datamine else "odf.added-must-be-optional"
            return rule, f"required field {name!r} added"
        case "type_changed":
            return f"{rules}.no-type-change", f"field {name!r} changed type: {c.describe()[5:]}"
        case "nullability_changed" if not datamine:
            return "odf.no-nullability-change", f"field {name!r}: {c.describe()}"
        case "nullability_changed" if _optional_to_required(c):
            return "datamine.no-optional-to-required", f"field {name!r} changed from optional to required"
    return None


def _optional_to_required(c: FieldChange) -> bool:
    return c.old is not None and c.new is not None and c.old.nullable and not c.new.nullable


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
    if isinstance(schema, TYPE_CLASSES):
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


def _label(node: Node) -> str:
    return _short(node.name) if isinstance(node, (Record, Enum, Fixed)) else node.type


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _describe(node: Type) -> str:
    match deref(node):
        case Record() | Enum() | Fixed() as named:
            return f"{named.type} {named.name}"
        case Array(items=items):
            return f"array<{_describe(items)}>"
        case Map(values=values):
            return f"map<{_describe(values)}>"
        case Union(members=members):
            return "[" + ", ".join(_describe(m) for m in members) + "]"
        case other:
            return other.type


def _aliases(node: Field | Record | Enum | Fixed) -> set[str]:
    """A named type's or a field's aliases, as full and as short names."""
    raw = node.props.get("aliases") if node.props else None
    if not isinstance(raw, (list, tuple)):
        return set()
    out: set[str] = set()
    space = node.name.rsplit(".", 1)[0] if not isinstance(node, Field) and "." in node.name else None
    for a in raw:
        if isinstance(a, str):
            out.add(a)
            out.add(_short(a))
            if space and "." not in a:
                out.add(f"{space}.{a}")
    return out


def _names_match(reader: Record | Enum | Fixed, writer: Record | Enum | Fixed) -> bool:
    if _short(reader.name) == _short(writer.name):
        return True
    aliases = _aliases(reader)
    return writer.name in aliases or _short(writer.name) in aliases


class _Resolver:
    def __init__(self) -> None:
        self.assumed: set[tuple[int, int]] = set()  # record pairs being checked (recursion)

    def check(self, reader_type: Type, writer_type: Type, where: str) -> list[Incompatibility]:
        reader, writer = deref(reader_type), deref(writer_type)
        match reader, writer:
            case _, Union() as w:
                return self.writer_union(reader, w, where)
            case Union() as r, _:
                return [] if self.reads(r, writer) else [self.missing_branch(r, writer, where)]
            case Primitive() as r, Primitive() as w:
                if r.name == w.name or r.name in PROMOTIONS.get(w.name, ()):
                    return []
                return [self.mismatch(r, w, where)]
            case Array() as r, Array() as w:
                return self.check(r.items, w.items, f"{where}[]")
            case Map() as r, Map() as w:
                return self.check(r.values, w.values, f"{where}{{}}")
            case Fixed() as r, Fixed() as w:
                return self.name_mismatch(r, w, where) or self.fixed(r, w, where)
            case Enum() as r, Enum() as w:
                return self.name_mismatch(r, w, where) or self.enum(r, w, where)
            case Record() as r, Record() as w:
                return self.name_mismatch(r, w, where) or self.record(r, w, where)
            case _:
                return [self.mismatch(reader, writer, where)]

    def reads(self, reader: Union, writer: Type) -> bool:
        """Whether a member of the union ``reader`` reads ``writer``."""
        return any(not self.check(r, writer, "") for r in reader.members)

    def writer_union(self, reader: Node, writer: Union, where: str) -> list[Incompatibility]:
        out: list[Incompatibility] = []
        for i, member in enumerate(writer.members):
            if not isinstance(reader, Union):
                out.extend(self.check(reader, member, f"{where}|{i}"))
            elif not self.reads(reader, member):
                out.append(self.missing_branch(reader, member, f"{where}|{i}"))
        return out

    @staticmethod
    def missing_branch(reader: Union, writer: Type, where: str) -> Incompatibility:
        return Incompatibility(
            "MISSING_UNION_BRANCH", where,
            f"reader union {_describe(reader)} has no member that reads writer's {_describe(writer)}",
        )

    @staticmethod
    def mismatch(reader: Node, writer: Node, where: str) -> Incompatibility:
        return Incompatibility(
            "TYPE_MISMATCH", where, f"the reader's {_describe(reader)} cannot read the writer's {_describe(writer)}",
        )

    @staticmethod
    def name_mismatch(reader: Record | Enum | Fixed, writer: Record | Enum | Fixed,
                      where: str) -> list[Incompatibility]:
        if _names_match(reader, writer):
            return []
        return [Incompatibility(
            "NAME_MISMATCH", where, f"reader's {reader.type} is named {reader.name!r}, writer's {writer.name!r}",
        )]

    @staticmethod
    def fixed(reader: Fixed, writer: Fixed, where: str) -> list[Incompatibility]:
        if reader.size == writer.size:
            return []
        return [Incompatibility(
            "FIXED_SIZE_MISMATCH", where,
            f"fixed {reader.name!r} has size {reader.size} in the reader, {writer.size} in the writer",
        )]

    @staticmethod
    def enum(reader: Enum, writer: Enum, where: str) -> list[Incompatibility]:
        missing = [s for s in writer.symbols if s not in reader.symbols]
        if not missing or reader.props.get("default") in reader.symbols:
            return []
        return [Incompatibility(
            "MISSING_ENUM_SYMBOLS", where,
            f"the reader's enum {reader.name!r} lacks the writer's symbols {', '.join(missing)}",
        )]

    def record(self, reader: Record, writer: Record, where: str) -> list[Incompatibility]:
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
                    wf = next((by_name[a] for a in _aliases(rf) if a in by_name), None)
                at = f"{where}.{rf.name}"
                if wf is not None:
                    out.extend(self.check(rf.type, wf.type, at))
                elif not rf.has_default:
                    out.append(Incompatibility(
                        "READER_FIELD_MISSING_DEFAULT_VALUE", at,
                        f"the reader's field {rf.name!r} is not in the writer's schema and has no default",
                    ))
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
        raise InputError(f"unknown compatibility mode {mode!r}; known: {', '.join(MODES)}")
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
