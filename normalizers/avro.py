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
    NO_DEFAULT,
    PRIMITIVES,
    Array,
    Enum,
    Field,
    Fixed,
    Map,
    Primitive,
    Record,
    Ref,
    Type,
    Union,
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
            raise SchemaNormalizationError(f"{what} is not UTF-8 text: {exc}") from exc
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
            ) from exc
    if hasattr(schema, "to_json") and not isinstance(schema, (dict, list)):
        return schema.to_json()
    return schema


def parse_avro(schema: Any, *, name: str | None = None) -> Type:
    """Read an Avro schema (text, bytes or parsed JSON) into the type model."""
    try:
        data = load_json(schema, "Avro schema")
    except SchemaNormalizationError as exc:
        raise exc.with_schema(name or "<anonymous>") from exc
    label = name or _declared_name(data)
    try:
        return _Parser().run(data)
    except SchemaNormalizationError as exc:
        raise exc.with_schema(label or "<anonymous>") from exc
    except RecursionError:
        raise SchemaNormalizationError("schema nests too deeply", schema=label) from None


def _field_aliases(raw: Any) -> tuple[str, ...]:
    """A field's ``aliases`` (its former names, the specification's schema resolution): the strings of the list."""
    if not isinstance(raw, list):
        return ()
    return tuple(a for a in raw if isinstance(a, str))


def _declared_name(data: Any) -> str | None:
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


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


def _decimal_props(other: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    props = dict(other)
    props["precision"] = data.get("precision")
    props["scale"] = data.get("scale", 0)
    return props


class _Fail(Exception):
    """A problem at a place in the schema; each level it passes through adds its step."""

    def __init__(self, reason: str, step: str = "") -> None:
        self.reason = reason
        self.steps = [step] if step else []

    def at(self, step: str) -> _Fail:
        self.steps.append(step)
        return self

    @property
    def path(self) -> str:
        steps = self.steps[::-1]
        if steps and steps[0].startswith("("):
            steps[0] = steps[0][1:-1]  # the root record: `Order.a`, not `(Order).a`
        return "".join(steps).lstrip(".") or "<root>"


_PRIMITIVE_NODES = {p: Primitive(p) for p in PRIMITIVES}


class _Parser:
    """Avro JSON -> model. Places are only rendered when something fails (see :class:`_Fail`)."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {}  # full name -> node (None while a record is being read)
        self.registry: dict[str, Record] = {}  # records, for Ref
        self.shadowed = False  # a named type called like a primitive (`ns.string`) hides it in `ns`

    def run(self, data: Any) -> Type:
        try:
            return self.parse(data, None)
        except _Fail as fail:
            raise SchemaNormalizationError(fail.reason, path=fail.path) from fail

    def parse_ref_or_type(self, data: Any, ns: str | None) -> Type:
        if data.__class__ is str:
            if not self.shadowed and data in _PRIMITIVE_NODES:
                return _PRIMITIVE_NODES[data]
            full = data if ns is None or "." in data else f"{ns}.{data}"
            if full in self.names:
                node = self.names[full]
                return Ref(full, self.registry) if node is None else node
            node = _PRIMITIVE_NODES.get(data)
            if node is None:
                raise _Fail(f"unknown type {data!r} (not a primitive type nor a named type defined before)")
            return node
        return self.parse(data, ns)

    def parse(self, data: Any, ns: str | None) -> Type:
        if isinstance(data, str):
            node = _PRIMITIVE_NODES.get(data)
            if node is None:
                raise _Fail(f"unknown type {data!r}")
            return node
        if isinstance(data, list):
            return self.union(data, ns)
        if not isinstance(data, dict):
            raise _Fail(f"a schema is a string, an object or an array, not {type(data).__name__} {data!r}")
        type_ = data.get("type")
        if type_ is None:
            raise _Fail('object has no "type"')
        if not isinstance(type_, str):
            raise _Fail(f'"type" must name a type, got {json.dumps(type_)[:80]}')
        other = {} if data.keys() <= _SCHEMA_RESERVED else {k: v for k, v in data.items() if k not in _SCHEMA_RESERVED}
        if type_ in _PRIMITIVE_NODES:
            if type_ == "bytes" and other.get("logicalType") == "decimal":
                if _valid_decimal(data.get("precision"), data.get("scale", 0), (1 << 31) - 1):
                    other = _decimal_props(other, data)
            return Primitive(type_, frozen_props(other)) if other else _PRIMITIVE_NODES[type_]
        if type_ in _NAMED:
            return self.named(type_, data, other, ns)
        if type_ == "array" or type_ == "map":
            part = "items" if type_ == "array" else "values"
            if part not in data:
                raise _Fail(f'{type_} has no "{part}"')
            try:
                inner = self.parse_ref_or_type(data[part], ns)
            except _Fail as fail:
                raise fail.at(f".{part}") from fail
            return (Array if type_ == "array" else Map)(inner, frozen_props(other))
        raise _Fail(f"unknown type {type_!r}")

    def union(self, members: list[Any], ns: str | None) -> Union:
        if not self.shadowed:  # the usual ["null", "string"]: primitive names only, each once
            try:
                nodes = tuple([_PRIMITIVE_NODES[m] for m in members])
            except (KeyError, TypeError):
                pass
            else:
                if len(set(members)) == len(members):
                    return Union(nodes)
        out: list[Type] = []
        seen_unnamed: set[str] = set()
        for i, member in enumerate(members):
            try:
                node = self.parse_ref_or_type(member, ns)
                match node:
                    case Union():
                        raise _Fail("a union cannot contain another union")
                    case Primitive() | Array() | Map():
                        if node.type in seen_unnamed:
                            raise _Fail(f"union has more than one {node.type!r}")
                        seen_unnamed.add(node.type)
            except _Fail as fail:
                raise fail.at(f"[{i}]") from fail
            out.append(node)
        return Union(tuple(out))

    def register(self, data: dict[str, Any], ns: str | None) -> str:
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise _Fail(f"a {data.get('type')} needs a non-empty string \"name\", got {name!r}")
        space = data.get("namespace", ns)
        if space is not None and not isinstance(space, str):
            raise _Fail(f'"namespace" must be a string, got {space!r}')
        full = _fullname(name, space, ns)
        if full in PRIMITIVES:
            raise _Fail(f"{full!r} is a reserved type name")
        if full in self.names:
            raise _Fail(f"the name {full!r} is already defined")
        self.names[full] = None
        if full.rsplit(".", 1)[-1] in _PRIMITIVE_NODES:
            self.shadowed = True
        return full

    def named(self, type_: str, data: dict[str, Any], other: dict[str, Any], ns: str | None) -> Type:
        full = self.register(data, ns)
        try:
            if type_ == "fixed":
                node: Type = self.fixed(full, data, other)
            elif type_ == "enum":
                node = self.enum(full, data, other)
            else:
                node = self.record(full, data, other)
        except _Fail as fail:
            raise fail.at(f"({full.rsplit('.', 1)[-1]})") from fail
        self.names[full] = node
        return node

    def fixed(self, full: str, data: dict[str, Any], other: dict[str, Any]) -> Fixed:
        size = data.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise _Fail(f'fixed needs a non-negative integer "size", got {size!r}')
        if data.get("logicalType") == "decimal":
            max_precision = int(math.floor(math.log10(2) * (8 * size - 1))) if size > 0 else 0
            if _valid_decimal(data.get("precision"), data.get("scale", 0), max_precision):
                other = _decimal_props(other, data)
        return Fixed(full, size, frozen_props(other))

    def enum(self, full: str, data: dict[str, Any], other: dict[str, Any]) -> Enum:
        symbols = data.get("symbols")
        if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
            raise _Fail(f'enum needs "symbols", a list of strings, got {symbols!r}')
        for s in symbols:
            if not _SYMBOL.search(s):
                raise _Fail(f"enum symbol {s!r} is not a valid Avro name")
        if len(set(symbols)) != len(symbols):
            raise _Fail(f"enum has duplicate symbols: {symbols!r}")
        if "default" in other and other["default"] not in symbols:
            raise _Fail(f"enum default {other['default']!r} is not one of its symbols")
        return Enum(full, tuple(symbols), data.get("doc"), frozen_props(other))

    def record(self, full: str, data: dict[str, Any], other: dict[str, Any]) -> Record:
        fields = data.get("fields")
        if not isinstance(fields, list):
            raise _Fail(f'a record needs "fields", a list, got {fields!r}')
        ns = _space(full)
        out: list[Field] = []
        names: set[str] = set()
        parse = self.parse_ref_or_type
        for i, f in enumerate(fields):
            fname = f.get("name") if isinstance(f, dict) else None
            if not isinstance(fname, str) or not fname:
                what = "a field is an object" if not isinstance(f, dict) else 'a field needs a non-empty string "name"'
                raise _Fail(f"{what}, got {f!r}"[:200], f".fields[{i}]")
            if fname in names:
                raise _Fail(f"field name {fname!r} is used twice", f".{fname}")
            names.add(fname)
            try:
                if "type" not in f:
                    raise _Fail('field has no "type"')
                order = f.get("order")
                if order is not None and order not in _SORT_ORDERS:
                    raise _Fail(f"field order {order!r} is not one of {', '.join(_SORT_ORDERS)}")
                ftype = parse(f["type"], ns)
            except _Fail as fail:
                raise fail.at(f".{fname}") from fail
            extra = None if f.keys() <= _FIELD_RESERVED else {k: v for k, v in f.items() if k not in _FIELD_RESERVED}
            out.append(
                Field(
                    fname,
                    ftype,
                    f.get("doc"),
                    f["default"] if "default" in f else NO_DEFAULT,
                    frozen_props(extra),
                    aliases=_field_aliases(extra.get("aliases")) if extra is not None else (),
                )
            )
        node = Record(full, tuple(out), data.get("doc"), frozen_props(other))
        self.registry[full] = node
        return node
