"""The one walk over the type model that emits v2 field paths.

It follows DataHub's ``AvroToMceSchemaConverter`` step for step, so the output is the
same field for field, including DataHub's quirks (``nativeDataType`` is often the
field's own name; a recursive record reference is emitted once and not expanded; the
set of records "being processed" forgets a record at its first recursive reference).
Where DataHub never terminates (a record reaching itself through ``["null", Self]``, or
any walk that comes back to a record in a state it was already expanded in), this walk
stops at the repeated record, emits the field without children and marks it
``recursive``.
"""

from __future__ import annotations

import json
from typing import Any

from .fields import FieldType, SchemaField
from .model import NO_DEFAULT, Type, WalkHints, deref, hints_of
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
# A field emits itself where it reaches one of these (DataHub's "non-nested" types).
_EMITTING = frozenset({"union", "primitive", "fixed", "enum"})
_PROPS_SKIPPED = ("_nullable", "native_data_type")


def walk(root: Type, *, key: bool = False) -> list[SchemaField]:
    """Every field of ``root``, in DataHub's order."""
    return _Walk(key).run(root)


def _strip_namespace(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _option(node: Any) -> Any:
    """The non-null member of a two-member union with ``null``, else None."""
    if node.kind == "union" and len(node.members) == 2 and not hints_of(node).null_members:
        first, second = node.members
        if deref(first).type == "null":
            return deref(second)
        if deref(second).type == "null":
            return deref(first)
    return None


def _type_name(node: Any) -> str:
    """A type's name for ArrayType.nestedType and MapType.valueType: its logical type if any."""
    return node.logical_type or node.type


def _annotation(node: Any) -> str:
    """The path token for a node: a record's short name, a field's name, else its type."""
    kind = node.kind
    if kind in ("record", "field"):
        simple = hints_of(node).token or _strip_namespace(node.name)
    elif (opt := _option(node)) is not None:
        simple = opt.type
    else:
        simple = hints_of(node).token or node.type
    if simple.startswith("__struct_"):
        simple = "struct"
    elif simple.startswith("__structn_"):
        simple = "struct{}".format(simple.split("_")[3])
    return simple if kind == "field" else f"[type={simple}]"


def _nullable(node: Any) -> bool:
    node = deref(node)
    kind = node.kind
    if kind == "field":
        return _nullable(node.type)
    if kind == "union":
        return any(_nullable(m) for m in node.members)
    if kind == "primitive" and node.name == "null":
        return True
    return bool(node.props.get("_nullable", False))


def _column_type(node: Any, logical: Any) -> FieldType:
    pinned = hints_of(node).field_type
    if pinned is not None:
        return pinned
    cls = _TYPE_CLASS.get(node.type)
    if logical is not None:
        cls = _LOGICAL_TYPE_CLASS.get(logical, cls)
    if cls is None:
        raise ValueError(f"no DataHub type for {node.type!r}")
    if cls == "ArrayType" and node.kind == "array":
        return FieldType(cls, nested_type=(_type_name(deref(node.items)),))
    if cls == "MapType" and node.kind == "map":
        return FieldType(cls, key_type="string", value_type=_type_name(deref(node.values)))
    return FieldType(cls)


def _children(node: Any) -> tuple:
    kind = node.kind
    if kind == "array":
        return (node.items,)
    if kind == "map":
        return (node.values,)
    if kind == "union":
        opt = _option(node)
        if opt is not None:
            return (opt,)
        if hints_of(node).null_members:
            return node.members
        return tuple(m for m in node.members if deref(m).type != "null")
    if kind == "record":
        return node.fields
    if kind == "field":
        return (node.type,)
    return ()


class _Walk:
    __slots__ = ("stack", "fields", "seen", "expanding", "key", "part_of_key", "out")

    def __init__(self, key: bool) -> None:
        self.stack: list[str] = [VERSION_TOKEN, KEY_TOKEN] if key else [VERSION_TOKEN]
        self.fields: list[Any] = []  # the fields on the current path
        self.seen: list[str] = []  # records "being processed", with DataHub's bookkeeping
        self.expanding: list[tuple] = []  # (record, seen) of every record expansion on the path
        self.key = key
        self.part_of_key = key
        self.out: list[SchemaField] = []

    def run(self, root: Type) -> list[SchemaField]:
        hints = hints_of(deref(root))
        if hints.part_of_key is not None:
            self.part_of_key = self.key and hints.part_of_key
        if hints.bare and deref(root).kind == "record":
            for child in deref(root).fields:  # no token of its own: its fields are top-level
                self.visit(child)
        else:
            self.visit(root)
        return self.out

    def visit(self, node: Any) -> None:
        node = deref(node)
        kind = node.kind
        if kind == "field":
            self.fields.append(node)
            self.visit(node.type)
            self.fields.pop()
        elif kind in ("record", "union", "array", "map"):
            self.nested(node)
        else:
            self.stack.append(_annotation(node))
            self.emit(node, node)
            self.stack.pop()

    def nested(self, node: Any) -> None:
        recurse = True
        is_record = node.kind == "record"
        if is_record:
            if node.name in self.seen or hints_of(node).recursive:
                recurse = False
            else:
                self.seen.append(node.name)
        actual = _option(node) or node
        self.stack.append(_annotation(actual))
        if actual.kind in _EMITTING or (not self.fields and hints_of(actual).emitted is not None):
            self.emit(node, actual)
        if actual.kind == "record" and self.fields:
            self.last_field(actual if recurse else None, recursive=not recurse, trigger=actual)
        elif recurse:
            self.expand(actual)
        self.stack.pop()
        if is_record and node.name in self.seen:
            self.seen.remove(node.name)

    def expand(self, node: Any) -> None:
        if node.kind == "record":
            self.expanding.append((node.name, frozenset(self.seen)))
            for child in node.fields:
                self.visit(child)
            self.expanding.pop()
        else:
            for child in _children(node):
                self.visit(child)

    def last_field(self, into: Any = None, recursive: bool = False, trigger: Any = None) -> None:
        """Emit the innermost field, then (optionally) the fields of the record ``into``."""
        if into is not None and (into.name, frozenset(self.seen)) in self.expanding:
            # DataHub would expand this record forever: stop here.
            into, recursive = None, True
        fld = self.fields[-1]
        self.stack.append(_annotation(fld))
        default = None if fld.default is NO_DEFAULT else fld.default
        self.emit(fld, fld, fld.doc or None, default, recursive, trigger)
        if into is not None:
            self.expand(into)
        self.stack.pop()

    def emit(self, node: Any, actual: Any, description: Any = None, default: Any = None,
             recursive: bool = False, trigger: Any = None) -> None:
        if actual.kind not in ("array", "field", "map", "record") and self.fields:
            self.last_field(trigger=actual)
            return
        hints = hints_of(trigger if trigger is not None else actual)  # the node the field is emitted for
        if hints.silent:
            return
        if hints.emitted is not None:
            self.out.append(SchemaField(fieldPath=".".join(self.stack), isPartOfKey=self.part_of_key, **hints.emitted))
            return
        outer = node
        if node.kind == "field":
            node = deref(node.type)
            actual = _option(node) or node
        if not description and actual.kind in ("record", "enum") and actual.doc:
            description = actual.doc
        if default is not None:
            description = f"{description if description else ''}\nField default value: {default}"

        native = self.stack[-2] if node.kind == "union" else self.stack[-1]
        if native.startswith("[type="):
            native = native[6:-1]
        native = actual.props.get("native_data_type", native)

        merged: dict[str, Any] = {}
        merged.update(outer.props)
        merged.update(node.props)
        merged.update(actual.props)

        tags: tuple[str, ...] = ()
        if "deprecated" in merged:
            description = (
                f'<span style="color:red">DEPRECATED: {merged["deprecated"]}</span>\n' + description
                if description
                else ""
            )
            tags = ("Deprecated",)

        logical = actual.logical_type or outer.props.get("logicalType")
        json_props = {
            k: v for k, v in merged.items() if k not in _PROPS_SKIPPED and not isinstance(v, WalkHints)
        } if merged else None
        self.out.append(
            SchemaField(
                fieldPath=".".join(self.stack),
                type=_column_type(actual, logical),
                nativeDataType=native,
                nullable=_nullable(node),
                description=description,
                recursive=recursive,
                isPartOfKey=self.part_of_key,
                jsonProps=json.dumps(json_props) if json_props else None,
                tags=tags,
            )
        )

