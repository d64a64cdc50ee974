"""The one walk over the type model that emits v2 field paths.

It follows DataHub's ``AvroToMceSchemaConverter`` step for step, so the output is the
same field for field, including DataHub's quirks (``nativeDataType`` is often the
field's own name; a recursive record reference is emitted once and not expanded; the
set of records "being processed" forgets a record at its first recursive reference).
Where DataHub never terminates (a record reaching itself through ``["null", Self]``, or
any walk that comes back to a record in a state it was already expanded in), this walk
stops at the repeated record, emits the field without children and marks it
``recursive``.

Nodes may carry :class:`~.model.WalkHints` from converters of formats that DataHub renders
by other rules (a path token, a pinned field type, a field emitted as given).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import SchemaNormalizationError
from .fields import FieldType, SchemaField
from .model import (
    NO_DEFAULT,
    NO_HINTS,
    PRIMITIVES,
    Array,
    Enum,
    Field,
    Fixed,
    Map,
    Node,
    Primitive,
    Record,
    Ref,
    Type,
    Union,
    deref,
)
from .paths import KEY_TOKEN, VERSION_TOKEN

_TYPE_CLASS = {
    "null": "NullType",
    "bool": "BooleanType",
    "boolean": "BooleanType",
    "int": "NumberType",
    "long": "NumberType",
    "float": "NumberType",
    "double": "NumberType",
    "bytes": "BytesType",
    "string": "StringType",
    "record": "RecordType",
    "error": "RecordType",
    "map": "MapType",
    "enum": "EnumType",
    "array": "ArrayType",
    "union": "UnionType",
    "fixed": "FixedType",
}
_LOGICAL_TYPE_CLASS = {
    "date": "DateType",
    "decimal": "NumberType",
    "time-micros": "TimeType",
    "time-millis": "TimeType",
    "timestamp-micros": "TimeType",
    "timestamp-millis": "TimeType",
    "uuid": "StringType",
}
#: One shared FieldType per class without array/map details.
_PLAIN_TYPES = {cls: FieldType(cls) for cls in {*_TYPE_CLASS.values(), *_LOGICAL_TYPE_CLASS.values()}}
_PROPS_SKIPPED = ("_nullable", "native_data_type")
_CONTAINERS = (Record, Array, Map)


def walk(root: Type, *, key: bool = False) -> list[SchemaField]:
    """Every field of ``root``, in DataHub's order."""
    return _Walk(key).run(root)


def _option(node: Node) -> Node | None:
    """The non-null member of a two-member union with ``null``, else None."""
    if type(node) is Union and len(node.members) == 2 and not node.hints.null_members:
        first, second = node.members
        if deref(first).type == "null":
            return deref(second)
        if deref(second).type == "null":
            return deref(first)
    return None


def _type_name(node: Node) -> str:
    """A type's name for ArrayType.nestedType and MapType.valueType: its logical type if any."""
    name: str = node.logical_type or node.type
    return name


def _token(simple: str) -> str:
    if simple.startswith("__struct"):
        if simple.startswith("__struct_"):
            return "struct"
        if simple.startswith("__structn_"):
            return "struct{}".format(simple.split("_")[3])
    return simple


def _field_token(fld: Field) -> str:
    """A field's path token: its name (the part after the last dot)."""
    return _token(fld.hints.token or fld.name.rsplit(".", 1)[-1])


def _annotation(node: Node) -> str:
    """The path token for a type: ``[type=X]`` with a record's short name, else its type."""
    if type(node) is Record:
        simple = node.hints.token or node.name.rsplit(".", 1)[-1]
    elif (opt := _option(node)) is not None:
        simple = opt.type
    else:
        simple = node.hints.token or node.type
    return f"[type={_token(simple)}]"


def _nullable(node: Type) -> bool:
    if type(node) is Primitive:
        return node.name == "null" or bool(node.props.get("_nullable", False))
    if type(node) is Union:
        for member in node.members:
            if _nullable(member):
                return True
        return False
    return bool(deref(node).props.get("_nullable", False))


def _column_type(node: Node, logical: Any) -> FieldType:
    pinned = node.hints.field_type
    if pinned is not None:
        return pinned
    cls = _TYPE_CLASS.get(node.type)
    if logical is not None:
        cls = _LOGICAL_TYPE_CLASS.get(logical, cls)
    if cls is None:
        raise SchemaNormalizationError(f"no DataHub type for the type {node.type!r} (logical type {logical!r})")
    if cls == "ArrayType" and type(node) is Array:
        return FieldType(cls, nested_type=(_type_name(deref(node.items)),))
    if cls == "MapType" and type(node) is Map:
        return FieldType(cls, key_type="string", value_type=_type_name(deref(node.values)))
    return _PLAIN_TYPES[cls]


def _union_children(node: Union) -> tuple[Type, ...]:
    """The members a union walks into: a ``[null, T]`` option's T, else its non-null members."""
    opt = _option(node)
    if opt is not None:
        return (opt,)
    if node.hints.null_members:
        return node.members
    return tuple(m for m in node.members if deref(m).type != "null")


def _leaf(fld: Field) -> tuple[Primitive | Union, Primitive, str] | None:
    """For a field of a primitive type or of ``[null, primitive]``, none of them with hints: (its type,
    the primitive, the primitive's path token); else None."""
    node = fld.type
    if fld.hints is not NO_HINTS:
        return None
    if type(node) is Primitive:
        actual = node
    elif type(node) is Union and node.hints is NO_HINTS:
        opt = _option(node)
        if type(opt) is not Primitive:
            return None
        actual = opt
    else:
        return None
    if actual.hints is not NO_HINTS:
        return None
    return node, actual, _PRIMITIVE_TOKENS[actual.name]


_PRIMITIVE_TOKENS = {name: f"[type={name}]" for name in PRIMITIVES}


def _given_leaf(fld: Field) -> Mapping[str, Any] | None:
    """For a field of a primitive, enum or fixed type whose converter pinned the field it emits (Protobuf,
    JSON Schema): the pinned attributes; else None."""
    node = fld.type
    if type(node) is not Primitive and type(node) is not Enum and type(node) is not Fixed:
        return None
    hints = node.hints
    if hints.emitted is None or hints.silent or fld.hints.emitted is not None or fld.hints.silent:
        return None
    return hints.emitted


def _given_field(path: str, emitted: Mapping[str, Any], part_of_key: bool, aliases: tuple[str, ...] = (),
                 field_id: str | None = None) -> SchemaField:
    """The field a converter pinned (``emitted``: SchemaField attributes other than the path, isPartOfKey, aliases
    and fieldId), at ``path``. Built with positional arguments: compiled, ``SchemaField(**emitted)`` costs more
    than the rest of such a field's walk."""
    return SchemaField(path, emitted["type"], emitted["nativeDataType"], emitted.get("nullable", False),
                       emitted.get("description"), emitted.get("recursive", False), part_of_key,
                       emitted.get("jsonProps"), emitted.get("tags", ()), aliases, field_id)


class _Walk:
    __slots__ = ("stack", "fields", "seen", "expanding", "key", "part_of_key", "out")

    def __init__(self, key: bool) -> None:
        self.stack: list[str] = [VERSION_TOKEN, KEY_TOKEN] if key else [VERSION_TOKEN]
        self.fields: list[Field] = []  # the fields on the current path
        self.seen: list[str] = []  # records "being processed", with DataHub's bookkeeping
        # (record, seen) of every record expansion on the path
        self.expanding: list[tuple[str, frozenset[str]]] = []
        self.key = key
        self.part_of_key = key
        self.out: list[SchemaField] = []

    def run(self, root: Type) -> list[SchemaField]:
        node = deref(root)
        hints = node.hints
        if hints.part_of_key is not None:
            self.part_of_key = self.key and hints.part_of_key
        if hints.bare and type(node) is Record:
            for child in node.fields:  # no token of its own: its fields are top-level
                self.field(child)
        else:
            self.visit(node)
        return self.out

    def visit(self, node: Type) -> None:
        """A type: nested ones walk on; a simple one emits the innermost field (or itself)."""
        if type(node) is Ref:
            node = node.target
        if type(node) is Primitive or type(node) is Enum or type(node) is Fixed:
            self.stack.append(_annotation(node))
            if self.fields:
                self.last_field(trigger=node)
            else:
                self.emit_type(node, node)
            self.stack.pop()
        else:
            self.nested(node)

    def field(self, fld: Field) -> None:
        self.fields.append(fld)
        self.visit(fld.type)
        self.fields.pop()

    def nested(self, node: Record | Union | Array | Map) -> None:
        recurse = True
        if type(node) is Record:
            if node.name in self.seen or node.hints.recursive:
                recurse = False
            else:
                self.seen.append(node.name)
        actual = _option(node) or node
        self.stack.append(_annotation(actual))
        if type(actual) not in _CONTAINERS:  # DataHub's "non-nested" types emit a field
            if self.fields:
                self.last_field(trigger=actual)
            else:
                self.emit_type(node, actual)
        elif not self.fields and actual.hints.emitted is not None:
            self.emit_type(node, actual)
        if type(actual) is Record and self.fields:
            self.last_field(actual if recurse else None, recursive=not recurse, trigger=actual)
        elif recurse:
            self.expand(actual)
        self.stack.pop()
        if type(node) is Record and node.name in self.seen:
            self.seen.remove(node.name)

    def expand(self, node: Node) -> None:
        if type(node) is Record:
            self.expanding.append((node.name, frozenset(self.seen)))
            prefix = None
            for child in node.fields:
                leaf = _leaf(child)
                given = None if leaf is not None else _given_leaf(child)
                if leaf is None and given is None:
                    self.field(child)
                    continue
                if prefix is None:  # the path so far, joined once for all the record's simple fields
                    prefix = ".".join(self.stack)
                if leaf is not None:
                    node_type, actual, token = leaf  # named, not *leaf: mypyc calls a method with *args generically
                    self.leaf_field(prefix, child, node_type, actual, token)
                elif given is not None:  # what given() emits for it, with no stack to push and join
                    path = f"{prefix}.{_annotation(deref(child.type))}.{_field_token(child)}"  # stated(child) at once:
                    self.out.append(_given_field(path, given, self.part_of_key, child.aliases, child.field_id))
            self.expanding.pop()
        elif type(node) is Array:
            self.visit(node.items)
        elif type(node) is Map:
            self.visit(node.values)
        elif type(node) is Union:
            for member in _union_children(node):
                self.visit(member)

    def last_field(self, into: Record | None = None, recursive: bool = False,
                   trigger: Node | Field | None = None) -> None:
        """Emit the innermost field, then (optionally) the fields of the record ``into``."""
        if into is not None and (into.name, frozenset(self.seen)) in self.expanding:
            # DataHub would expand this record forever: stop here.
            into, recursive = None, True
        fld = self.fields[-1]
        self.stack.append(_field_token(fld))
        self.emit_field(fld, recursive, trigger if trigger is not None else fld)
        if into is not None:
            self.expand(into)
        self.stack.pop()

    def emit_field(self, fld: Field, recursive: bool, trigger: Node | Field) -> None:
        """The field ``fld``, at the current path; ``trigger`` is the node it is emitted for."""
        if self.given(trigger):
            if (fld.field_id is not None or fld.aliases) and not trigger.hints.silent:
                self.stated(fld)
            return
        node = deref(fld.type)
        actual = _option(node) or node
        description = fld.doc or None
        if not description and isinstance(actual, (Record, Enum)) and actual.doc:
            description = actual.doc
        default = fld.default
        if default is not NO_DEFAULT and default is not None:
            description = f"{description if description else ''}\nField default value: {default}"
        native = self.stack[-2] if type(node) is Union else self.stack[-1]
        self.add(".".join(self.stack), fld, node, actual, native, description, recursive,
                 fld.props.get("logicalType"))
        if fld.field_id is not None or fld.aliases:
            self.stated(fld)

    def leaf_field(self, prefix: str, fld: Field, node: Primitive | Union, actual: Primitive, token: str) -> None:
        """What ``field`` emits for a field of a primitive type, or of ``[null, primitive]``, without hints
        (most fields): the same steps as ``visit`` -> ``last_field`` -> ``emit_field``, on the path
        ``prefix`` + the type token + the field's token, with no stack to push and join."""
        name = _token(fld.name.rsplit(".", 1)[-1])
        description = fld.doc or None
        default = fld.default
        if default is not NO_DEFAULT and default is not None:
            description = f"{description if description else ''}\nField default value: {default}"
        native = token if node is not actual else name
        self.add(f"{prefix}.{token}.{name}", fld, node, actual, native, description, False,
                 fld.props.get("logicalType") if fld.props else None)
        if fld.field_id is not None or fld.aliases:
            self.stated(fld)

    def stated(self, fld: Field) -> None:
        """Give the field just emitted for ``fld`` what its schema states of its identity (aliases, id)."""
        self.out[-1] = self.out[-1].identified(fld.aliases, fld.field_id)

    def emit_type(self, node: Node, actual: Node) -> None:
        """A type emitted for itself, outside any field (a root that is not a record, a union)."""
        if self.given(actual):
            return
        description = actual.doc if isinstance(actual, (Record, Enum)) and actual.doc else None
        native = self.stack[-2] if type(node) is Union else self.stack[-1]
        self.add(".".join(self.stack), node, node, actual, native, description, False, None)

    def given(self, node: Node | Field) -> bool:
        """Whether the converter decided this node's field itself (emitted as given, or silent)."""
        hints = node.hints
        if hints.emitted is not None and not hints.silent:
            self.out.append(_given_field(".".join(self.stack), hints.emitted, self.part_of_key))
        return hints.silent or hints.emitted is not None

    def add(self, path: str, outer: Field | Node, node: Node, actual: Node, native: str,
            description: str | None, recursive: bool, outer_logical: Any) -> None:
        if native.startswith("[type="):
            native = native[6:-1]
        props = actual.props
        if props:
            native = props.get("native_data_type", native)
        tags: tuple[str, ...] = ()
        json_props = None
        if outer.props or node.props or props:
            merged: dict[str, Any] = {**outer.props, **node.props, **props}
            if "deprecated" in merged:
                description = (
                    f'<span style="color:red">DEPRECATED: {merged["deprecated"]}</span>\n' + description
                    if description
                    else ""
                )
                tags = ("Deprecated",)
            kept = {k: v for k, v in merged.items() if k not in _PROPS_SKIPPED}
            if kept:
                json_props = json.dumps(kept)
        self.out.append(
            SchemaField(
                path,
                _column_type(actual, (actual.logical_type if props else None) or outer_logical),
                native,
                _nullable(node),
                description,
                recursive,
                self.part_of_key,
                json_props,
                tags,
            )
        )
