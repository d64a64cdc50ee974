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

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeGuard

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
        "datamine.sort-key-added": "a table must define its sort key while initialization",
        "datamine.sort-key-removed": "a table cannot get rid of its sort key once defined",
        "datamine.sort-key-changed": "a table has at most one sort key, defined while initialization, "
                                     "and cannot get rid of it once defined",
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
    of a new optional struct is not a new required field). Reordering is always allowed. A rename is
    one a schema states (``renamed``: ODF forbids it, DataMine sees its old name removed); a
    ``likely_renamed`` suggestion breaks no rule itself: its fields are judged as the removal and
    the addition the diff lists them as.
    DataMine's own types and the sort-key rules need a diff of DataMine tables made with
    ``diff_fields(..., format="datamine")`` (it alone tells ``BYTE`` from ``INT32``).
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
            said = f" ({c.reason})" if c.reason else ""
            if datamine:
                return "datamine.no-removal", f"field {old!r} renamed to {name!r}{said}, which removes {old!r}"
            return "odf.no-rename", f"field {old!r} renamed to {name!r}{said}"
        case "added" if not c.nested and c.new is not None and not c.new.nullable:
            rule = "datamine.no-new-required" if datamine else "odf.added-must-be-optional"
            return rule, f"required field {name!r} added"
        case "type_changed":
            return f"{rules}.no-type-change", f"field {name!r} changed type: {c.describe()[5:]}"
        case "nullability_changed" if not datamine:
            return "odf.no-nullability-change", f"field {name!r}: {c.describe()}"
        case "nullability_changed" if _optional_to_required(c):
            return "datamine.no-optional-to-required", f"field {name!r} changed from optional to required"
        case "sort_key_changed" if datamine:
            if c.old is None:
                return "datamine.sort-key-added", f"sort key {c.new_type} added to a table that had none"
            if c.new is None:
                return "datamine.sort-key-removed", f"sort key {c.old_type} removed"
            return "datamine.sort-key-changed", f"sort key changed from {c.old_type} to {c.new_type}"
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
    ``READER_FIELD_MISSING_DEFAULT_VALUE``, ``MISSING_UNION_BRANCH``; and ``DECIMAL_MISMATCH``,
    which Java's checker lacks (it does not compare decimals' precision and scale, though the
    specification does). ``location`` is where,
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
    records of the same unqualified name (or whose writer's full name is one of the reader's
    aliases, a relative alias taken in the reader's namespace), their fields matched by name
    or reader field alias, a reader field missing from the writer needing a default; enums
    of the same name whose writer symbols the reader has, unless the reader has an enum
    default; fixed of the same name and size; two decimals (bytes or fixed) of the same
    precision and scale; arrays and maps by items and values; a writer union whose every
    member the reader reads; a reader union with a member that reads the writer.
    """
    reader = to_compat_model(reader_schema)
    writer = to_compat_model(writer_schema)
    return _Resolver().check(reader, writer, _label(deref(reader)))


def _label(node: Node) -> str:
    return _short(node.name) if isinstance(node, (Record, Enum, Fixed)) else node.type


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _describe(node: Type) -> str:
    node = deref(node)
    dec = _decimal(node)
    suffix = f" decimal({dec[0]},{dec[1]})" if dec else ""
    match node:
        case Record() | Enum() | Fixed() as named:
            return f"{named.type} {named.name}{suffix}"
        case Array(items=items):
            return f"array<{_describe(items)}>"
        case Map(values=values):
            return f"map<{_describe(values)}>"
        case Union(members=members):
            return "[" + ", ".join(_describe(m) for m in members) + "]"
        case other:
            return other.type + suffix


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _decimal(node: Node) -> tuple[int, int] | None:
    """A valid ``decimal`` logical type's (precision, scale), or None.

    Valid as the specification ("Logical Types > Decimal") and the Avro reader (avro.py) have
    it: on bytes or fixed, a positive precision (for a fixed, at most what its size holds),
    a scale (default 0) from 0 to the precision. An invalid logical type is ignored ("If a
    logical type is invalid, for example a decimal with scale greater than its precision,
    then implementations should ignore the logical type and use the underlying Avro type"),
    so an invalid decimal resolves as its plain bytes or fixed.
    """
    if not isinstance(node, (Primitive, Fixed)) or node.logical_type != "decimal":
        return None
    if isinstance(node, Primitive) and node.name != "bytes":
        return None
    precision, scale = node.props.get("precision"), node.props.get("scale", 0)
    if not _is_int(precision) or not _is_int(scale) or not 0 <= scale <= precision or precision <= 0:
        return None
    if isinstance(node, Fixed):
        most = int(math.floor(math.log10(2) * (8 * node.size - 1))) if node.size > 0 else 0
        if precision > most:
            return None
    return precision, scale


def _field_aliases(node: Field) -> list[str]:
    """A field's aliases, as written: field names have no namespace, so an alias is matched as is."""
    raw = node.props.get("aliases") if node.props else None
    if not isinstance(raw, (list, tuple)):
        return []
    return [a for a in raw if isinstance(a, str)]


def _full_aliases(node: Record | Enum | Fixed) -> set[str]:
    """A named type's aliases as full names.

    Specification, "Aliases": "A type alias may be specified either as a fully
    namespace-qualified, or relative to the namespace of the name it is an alias for. For
    example, if a type named "a.b" has aliases of "c" and "x.y", then the fully qualified
    names of its aliases are "a.c" and "x.y"." A relative alias (no dot) takes the
    namespace of the type it aliases (none if that type has none); one with a dot is taken
    as is, a leading dot (``.Old``) naming the null namespace, as Java's ``Schema.Name``
    reads it.
    """
    raw = node.props.get("aliases") if node.props else None
    if not isinstance(raw, (list, tuple)):
        return set()
    space = node.name.rsplit(".", 1)[0] if "." in node.name else None
    out: set[str] = set()
    for a in raw:
        if not isinstance(a, str):
            continue
        if "." in a:
            out.add(a.lstrip(".") if a.rindex(".") == 0 else a)
        else:
            out.add(f"{space}.{a}" if space else a)
    return out


def _names_match(reader: Record | Enum | Fixed, writer: Record | Enum | Fixed) -> bool:
    """Whether a reader's named type may read a writer's, by their names.

    The specification's schema resolution matches "enums whose (unqualified) names match",
    "fixed whose sizes and (unqualified) names match" and "records with the same
    (unqualified) name" ("unqualified" came with Avro 1.9.1, AVRO-2400; the spec before it
    said only "names match", and Java's 1.8 checker compared full names). Aliases are full names:
    the writer's full name must be one of the reader's aliases resolved as
    :func:`_full_aliases` says, so a relative alias ``Old`` of ``org.two.New`` is
    ``org.two.Old`` and does not match a writer's ``org.one.Old``. Java's
    ``SchemaCompatibility.schemaNameEquals`` does exactly this (``reader.getName()`` equals
    ``writer.getName()``, or ``reader.getAliases()``, full names, contain
    ``writer.getFullName()``); Python's ``avro.compatibility`` compares the aliases as
    written, so it misses a relative alias in a namespace. (One Java quirk is not followed:
    ``getAliases()`` renders a null-namespace alias of a namespaced type as ``.Old``, which
    never equals a full name, so its checker cannot match one; Java's reader does.)
    """
    if _short(reader.name) == _short(writer.name):
        return True
    return writer.name in _full_aliases(reader)


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
                if r.name == w.name:
                    return self.decimal(r, w, where)
                if r.name in PROMOTIONS.get(w.name, ()):
                    return []
                return [self.mismatch(r, w, where)]
            case Array() as r, Array() as w:
                return self.check(r.items, w.items, f"{where}[]")
            case Map() as r, Map() as w:
                return self.check(r.values, w.values, f"{where}{{}}")
            case Fixed() as r, Fixed() as w:
                return self.name_mismatch(r, w, where) or self.fixed(r, w, where) or self.decimal(r, w, where)
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

    def missing_branch(self, reader: Union, writer: Type, where: str) -> Incompatibility:
        """No member of ``reader`` reads ``writer``: a decimal mismatch if that is all that stands in
        the way (a member the same decimal type as the writer's but for precision or scale), else
        a missing branch."""
        for member in reader.members:
            problems = self.check(member, writer, where) if _decimal(deref(member)) else []
            if problems and all(p.kind == "DECIMAL_MISMATCH" for p in problems):
                return problems[0]
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
    def decimal(reader: Primitive | Fixed, writer: Primitive | Fixed, where: str) -> list[Incompatibility]:
        """Two decimals of the same underlying type: their precision and scale must be equal.

        Specification, "Logical Types > Decimal": "For the purposes of schema resolution, two
        schemas that are decimal logical types match if their scales and precisions match."
        Java's ``SchemaCompatibility`` (and so Confluent's Schema Registry) does not check it,
        but the bytes hold the unscaled integer: read with another scale every value is
        multiplied by a power of ten. Only when both sides are (valid) decimals does this
        apply; a decimal against plain bytes or fixed (or a string, by promotion) resolves by
        the underlying types, as the rule speaks of "two schemas that are decimal logical
        types" and an invalid or absent logical type leaves the underlying type. A bytes
        decimal against a fixed decimal stays a type mismatch: their encodings differ.
        """
        r, w = _decimal(reader), _decimal(writer)
        if r is None or w is None or r == w:
            return []
        message = (f"the reader's decimal(precision {r[0]}, scale {r[1]}) cannot read the writer's "
                   f"decimal(precision {w[0]}, scale {w[1]}): decimals match only with equal precision and scale")
        if r[1] != w[1]:
            message += (f"; read with scale {r[1]}, every value written with scale {w[1]} would come out "
                        f"10^{abs(w[1] - r[1])} times {'larger' if w[1] > r[1] else 'smaller'}")
        return [Incompatibility("DECIMAL_MISMATCH", where, message)]

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
                    wf = next((by_name[a] for a in _field_aliases(rf) if a in by_name), None)
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
