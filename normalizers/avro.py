"""Avro schema JSON -> the type model, with Avro's own validation.

Reads what Apache Avro's Python parser reads (with names unvalidated, as DataHub calls
it) and keeps the same properties, so the walk gives DataHub's fields. Errors name the
place inside the schema: ``Order.lines.items``, ``Order.status[1]``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .errors import SchemaNormalizationError
from .model import (
    NO_DEFAULT, PRIMITIVES, Array, Enum, Field, Fixed, Map, Primitive, Record, Ref, Type, Union,
    frozen_props,
)

_SCHEMA_RESERVED = frozenset({"type", "name", "namespace", "fields", "items", "size", "symbols", "values", "doc"})
_FIELD_RESERVED = frozenset({"default", "name", "doc", "order", "type"})
_NAMED = ("fixed", "enum", "record", "error")
_SORT_ORDERS = ("ascending", "descending", "ignore")
_SYMBOL = re.compile(r"(?:^|\.)[A-Za-z_][A-Za-z0-9_]*$")
# Logical types Avro recognises, by (logicalType, underlying type); decimal is checked apart.
_LOGICAL = {
    ("date", "int"), ("time-millis", "int"), ("time-micros", "long"),
    ("timestamp-millis", "long"), ("timestamp-micros", "long"), ("uuid", "string"),
}


def load_json(schema: Any, what: str = "schema") -> Any:
    """Text, bytes, or already-parsed JSON (or an object with ``to_json()``) -> JSON data."""
    if isinstance(schema, bytes):
        try:
            schema = schema.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaNormalizationError(f"{what} is not UTF-8 text: {exc}") from None
    if isinstance(schema, str):
        try:
            return json.loads(schema)
        except RecursionError:
            raise SchemaNormalizationError(f"{what} nests too deeply") from None
        except json.JSONDecodeError as exc:
            if schema.strip() in PRIMITIVES:
                return schema.strip()
            raise SchemaNormalizationError(
                f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None
    if hasattr(schema, "to_json") and not isinstance(schema, (dict, list)):
        return schema.to_json()
    return schema


def parse_avro(schema: Any, *, name: str | None = None) -> Type:
    """Read an Avro schema (text, bytes or parsed JSON) into the type model."""
    try:
        data = load_json(schema, "Avro schema")
    except SchemaNormalizationError as exc:
        raise exc.with_schema(name or "<anonymous>") from None
    label = name or _declared_name(data)
    try:
        return _Parser().parse(data, None, "")
    except SchemaNormalizationError as exc:
        raise exc.with_schema(label or "<anonymous>") from None
    except RecursionError:
        raise SchemaNormalizationError("schema nests too deeply", schema=label) from None


def _declared_name(data: Any) -> str | None:
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        return data["name"]
    return None


def _fullname(name: str, space: str | None, default: str | None) -> str:
    if "." in name or space == "" or not (space or default):
        return name
    return f"{space or default}.{name}"


def _space(fullname: str) -> str | None:
    return fullname.rsplit(".", 1)[0] if "." in fullname else None


def _valid_decimal(precision: Any, scale: Any, max_precision: int) -> bool:
    return (
        isinstance(precision, int) and 0 < precision <= max_precision
        and isinstance(scale, int) and 0 <= scale <= precision
    )


def _decimal_props(other: dict, data: dict) -> dict:
    props = dict(other)
    props["precision"] = data.get("precision")
    props["scale"] = data.get("scale", 0)
    return props


class _Parser:
    def __init__(self) -> None:
        self.names: dict[str, Any] = {}  # full name -> node (None while a record is being read)
        self.registry: dict[str, Record] = {}  # records, for Ref

    def fail(self, where: str, reason: str) -> SchemaNormalizationError:
        return SchemaNormalizationError(reason, path=where or "<root>")

    def reference(self, ref: str, ns: str | None, where: str) -> Type | None:
        full = _fullname(ref, None, ns)
        if full not in self.names:
            return None
        node = self.names[full]
        return Ref(full, self.registry) if node is None else node

    def parse_ref_or_type(self, data: Any, ns: str | None, where: str) -> Type:
        if isinstance(data, str):
            node = self.reference(data, ns, where)
            if node is not None:
                return node
            if data not in PRIMITIVES:
                raise self.fail(where, f"unknown type {data!r} (not a primitive type nor a named type defined before)")
        return self.parse(data, ns, where)

    def parse(self, data: Any, ns: str | None, where: str) -> Type:
        if isinstance(data, str):
            if data in PRIMITIVES:
                return Primitive(data)
            raise self.fail(where, f"unknown type {data!r}")
        if isinstance(data, list):
            return self.union(data, ns, where)
        if not isinstance(data, dict):
            raise self.fail(where, f"a schema is a string, an object or an array, not {type(data).__name__} {data!r}")
        type_ = data.get("type")
        if type_ is None:
            raise self.fail(where, 'object has no "type"')
        if not isinstance(type_, str):
            raise self.fail(where, f'"type" must name a type, got {json.dumps(type_)[:80]}')
        other = {k: v for k, v in data.items() if k not in _SCHEMA_RESERVED}
        logical = data.get("logicalType")
        if logical and type_ in PRIMITIVES:
            if logical == "decimal" and type_ == "bytes":
                if _valid_decimal(data.get("precision"), data.get("scale", 0), (1 << 31) - 1):
                    return Primitive("bytes", frozen_props(_decimal_props(other, data)))
            return Primitive(type_, frozen_props(other))
        if type_ in _NAMED:
            return self.named(type_, data, other, ns, where)
        if type_ in PRIMITIVES:
            return Primitive(type_, frozen_props(other))
        if type_ == "array":
            if "items" not in data:
                raise self.fail(where, 'array has no "items"')
            return Array(self.parse_ref_or_type(data["items"], ns, f"{where}.items"), frozen_props(other))
        if type_ == "map":
            if "values" not in data:
                raise self.fail(where, 'map has no "values"')
            return Map(self.parse_ref_or_type(data["values"], ns, f"{where}.values"), frozen_props(other))
        raise self.fail(where, f"unknown type {type_!r}")

    def union(self, members: list, ns: str | None, where: str) -> Union:
        out: list[Type] = []
        seen_unnamed: set[str] = set()
        for i, member in enumerate(members):
            node = self.parse_ref_or_type(member, ns, f"{where}[{i}]")
            kind = node.kind
            if kind == "union":
                raise self.fail(f"{where}[{i}]", "a union cannot contain another union")
            if kind in ("primitive", "array", "map"):
                if node.type in seen_unnamed:
                    raise self.fail(f"{where}[{i}]", f"union has more than one {node.type!r}")
                seen_unnamed.add(node.type)
            out.append(node)
        return Union(tuple(out))

    def register(self, data: dict, ns: str | None, where: str) -> str:
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(where, f"a {data.get('type')} needs a non-empty string \"name\", got {name!r}")
        space = data.get("namespace", ns)
        if space is not None and not isinstance(space, str):
            raise self.fail(where, f'"namespace" must be a string, got {space!r}')
        full = _fullname(name, space, ns)
        if full in PRIMITIVES:
            raise self.fail(where, f"{full!r} is a reserved type name")
        if full in self.names:
            raise self.fail(where, f"the name {full!r} is already defined")
        self.names[full] = None
        return full

    def named(self, type_: str, data: dict, other: dict, ns: str | None, where: str) -> Type:
        full = self.register(data, ns, where)
        here = f"{where}({full.rsplit('.', 1)[-1]})" if where else full.rsplit(".", 1)[-1]
        if type_ == "fixed":
            size = data.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise self.fail(here, f"fixed needs a non-negative integer \"size\", got {size!r}")
            props = other
            if data.get("logicalType") == "decimal":
                max_precision = int(math.floor(math.log10(2) * (8 * size - 1))) if size > 0 else 0
                if _valid_decimal(data.get("precision"), data.get("scale", 0), max_precision):
                    props = _decimal_props(other, data)
            node: Type = Fixed(full, size, frozen_props(props))
        elif type_ == "enum":
            symbols = data.get("symbols")
            if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
                raise self.fail(here, f"enum needs \"symbols\", a list of strings, got {symbols!r}")
            for s in symbols:
                if not _SYMBOL.search(s):
                    raise self.fail(here, f"enum symbol {s!r} is not a valid Avro name")
            if len(set(symbols)) != len(symbols):
                raise self.fail(here, f"enum has duplicate symbols: {symbols!r}")
            if "default" in other and other["default"] not in symbols:
                raise self.fail(here, f"enum default {other['default']!r} is not one of its symbols")
            node = Enum(full, tuple(symbols), data.get("doc"), frozen_props(other))
        else:
            node = self.record(full, data, other, here)
        self.names[full] = node
        return node

    def record(self, full: str, data: dict, other: dict, where: str) -> Record:
        fields = data.get("fields")
        if not isinstance(fields, list):
            raise self.fail(where, f'a record needs "fields", a list, got {fields!r}')
        ns = _space(full)
        out: list[Field] = []
        names: set[str] = set()
        for i, f in enumerate(fields):
            if not isinstance(f, dict):
                raise self.fail(f"{where}.fields[{i}]", f"a field is an object, got {f!r}")
            fname = f.get("name")
            if not isinstance(fname, str) or not fname:
                raise self.fail(f"{where}.fields[{i}]", f'a field needs a non-empty string "name", got {fname!r}')
            at = f"{where}.{fname}"
            if fname in names:
                raise self.fail(at, f"field name {fname!r} is used twice")
            names.add(fname)
            if "type" not in f:
                raise self.fail(at, 'field has no "type"')
            order = f.get("order")
            if order is not None and order not in _SORT_ORDERS:
                raise self.fail(at, f"field order {order!r} is not one of {', '.join(_SORT_ORDERS)}")
            ftype = self.parse_ref_or_type(f["type"], ns, at)
            out.append(
                Field(
                    fname,
                    ftype,
                    f.get("doc"),
                    f["default"] if "default" in f else NO_DEFAULT,
                    frozen_props({k: v for k, v in f.items() if k not in _FIELD_RESERVED}),
                )
            )
        node = Record(full, tuple(out), data.get("doc"), frozen_props(other))
        self.registry[full] = node
        return node
