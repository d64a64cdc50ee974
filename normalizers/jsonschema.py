"""JSON Schema -> the type model, as DataHub's ``JsonSchemaTranslator`` renders it.

DataHub (``datahub.ingestion.extractor.json_schema_util``, entry point
``JsonSchemaTranslator.get_fields_from_schema(schema, is_key_schema=...)``, the one its
Kafka / Kinesis / json-schema sources call) does not go through Avro: it walks the JSON
Schema with rules of its own. An attribute of a field depends on where the field is (a
union member's or a map value's type is the union's or the map's), so this converter
follows those rules and pins every emitted field on the node it belongs to
(:class:`~.model.WalkHints` ``token``/``emitted``/``silent``/``null_members``); the one
walk then lays the nodes out into DataHub's paths and order. The model it builds:

* an object -> :class:`Record` (each property a :class:`Field`); a map
  (``additionalProperties`` schema, no ``properties``) -> :class:`Map`;
* an array -> a :class:`Record` holding one field named after the items (their ``title``,
  else their type), which is how DataHub lays arrays out: ``[type=array].tags.[type=string].string``;
* ``oneOf``/``anyOf``/``allOf`` and type lists other than ``[T, "null"]`` -> :class:`Union`
  whose ``null`` members are ordinary members;
* ``enum`` -> :class:`Enum` (symbols JSON-encoded); other types -> :class:`Primitive`.

``$ref`` is resolved inside the document only (``#...``; no I/O), with DataHub's patch that
titles a referenced definition after the last segment of the pointer. A record met again
on its own path (DataHub compares ``str()`` of the schemas) is emitted once, ``recursive``.
Where DataHub recurses forever (an array, map or union reaching itself with no object in
between) the walk stops there with a field marked ``recursive``.

Errors name the schema and the JSON pointer of the offending place.
"""

from __future__ import annotations

import json
from typing import Any, TypeAlias
from urllib.parse import unquote, urldefrag, urljoin

from .errors import SchemaNormalizationError
from .fields import FieldType
from .model import Enum, Field, Map, Primitive, Record, Type, Union, WalkHints

__all__ = ["parse_json_schema"]

_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
# JSON type -> DataHub type class, as JsonSchemaTranslator.field_type_mapping (unknown: NullType).
_CLASS = {
    "null": "NullType", "bool": "BooleanType", "boolean": "BooleanType", "number": "NumberType",
    "int": "NumberType", "integer": "NumberType", "long": "NumberType", "float": "NumberType",
    "double": "NumberType", "bytes": "BytesType", "string": "StringType", "object": "RecordType",
    "map": "MapType", "enum": "EnumType", "array": "ArrayType", "union": "UnionType", "fixed": "FixedType",
}
# The model's primitive for a JSON primitive type.
_PRIMITIVE = {"NullType": "null", "BooleanType": "boolean", "NumberType": "double", "StringType": "string"}
_SCHEMA_KEYS = (
    "additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames",
    "additionalItems", "unevaluatedItems", "unevaluatedProperties",
)
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_STRING_KEYS = ("$ref", "title", "description", "format", "$id", "$schema", "$comment", "javaType")


def parse_json_schema(schema: Any, *, name: str | None = None) -> Type:
    """Read a JSON Schema (text, bytes or parsed JSON) into the type model."""
    doc, text = _load(schema, name)
    label = name or _declared_name(doc) or "<anonymous>"
    try:
        if not isinstance(doc, dict):
            raise SchemaNormalizationError(
                f"a JSON Schema document is an object, got {type(doc).__name__}", path="#"
            )
        _check(doc, "#")
        # no "$ref" key (spelled out: JSON may also spell a key with \u escapes): nothing to resolve
        resolved = _Resolver(doc).run() if '"$ref"' in text or "\\u" in text else doc
        return _Converter().convert(resolved)
    except SchemaNormalizationError as exc:
        raise exc.with_schema(label) from exc
    except RecursionError:
        raise SchemaNormalizationError("schema nests too deeply", schema=label) from None


def _declared_name(doc: Any) -> str | None:
    if isinstance(doc, dict):
        for key in ("title", "$id", "id"):
            value = doc.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def _load(schema: Any, name: str | None) -> tuple[Any, str]:
    """JSON text, bytes or parsed data -> a private copy of the JSON data (as DataHub re-reads it), its text."""
    if isinstance(schema, (bytes, bytearray)):
        try:
            schema = bytes(schema).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaNormalizationError(f"JSON Schema is not UTF-8 text: {exc}", schema=name) from exc
    if not isinstance(schema, str):
        try:
            schema = json.dumps(schema)
        except (TypeError, ValueError) as exc:
            raise SchemaNormalizationError(f"JSON Schema is not JSON data: {exc}", schema=name) from exc
        except RecursionError:
            raise SchemaNormalizationError("schema nests too deeply", schema=name) from None
    try:
        return json.loads(schema), schema
    except json.JSONDecodeError as exc:
        raise SchemaNormalizationError(
            f"JSON Schema is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", schema=name
        ) from exc
    except RecursionError:
        raise SchemaNormalizationError("schema nests too deeply", schema=name) from None


#: A place in the document: "#", or (the place above, key). Rendered as a JSON pointer only for an error.
_Where: TypeAlias = "str | tuple[_Where, Any]"


def _ptr(base: _Where, key: Any) -> _Where:
    return (base, key)


def _pointer(where: _Where) -> str:
    """The JSON pointer of a place."""
    keys = []
    while isinstance(where, tuple):
        where, key = where
        keys.append(str(key).replace("~", "~0").replace("/", "~1"))
    return "/".join([where, *reversed(keys)])


def _fail(where: _Where, reason: str) -> SchemaNormalizationError:
    return SchemaNormalizationError(reason, path=_pointer(where))


# --- validation: the parts of the meta-schema DataHub's check_schema enforces that matter here


def _check(s: Any, where: _Where) -> None:
    if isinstance(s, bool):
        return
    if not isinstance(s, dict):
        raise _fail(where, f"a schema is an object or a boolean, got {json.dumps(s)[:80]}")
    if "type" in s:
        _check_type(s["type"], _ptr(where, "type"))
    _check_keywords(s, where)
    _check_schema_maps(s, where)
    _check_schema_lists(s, where)
    _check_schema_values(s, where)


def _check_type(t: Any, where: _Where) -> None:
    """``type``: one of the simple types, or a non-empty list of distinct ones."""
    if isinstance(t, list):
        if not t or len(set(map(json.dumps, t))) != len(t) or not all(
            isinstance(x, str) and x in _SIMPLE_TYPES for x in t
        ):
            raise _fail(where, f"invalid type list {json.dumps(t)[:80]}: a non-empty list of "
                        f"distinct types among {', '.join(sorted(_SIMPLE_TYPES))}")
    elif not (isinstance(t, str) and t in _SIMPLE_TYPES):
        raise _fail(where, f"invalid type {json.dumps(t)[:80]}; "
                    f"expected one of {', '.join(sorted(_SIMPLE_TYPES))} or a list of them")


def _check_keywords(s: dict[str, Any], where: _Where) -> None:
    """The string keywords, ``required`` and ``enum``."""
    for key in _STRING_KEYS:
        if key in s and not isinstance(s[key], str):
            raise _fail(_ptr(where, key), f'"{key}" must be a string, got {json.dumps(s[key])[:80]}')
    if "required" in s:
        req = s["required"]
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req) or len(set(req)) != len(req):
            raise _fail(_ptr(where, "required"),
                        f'"required" must be a list of distinct strings, got {json.dumps(req)[:80]}')
    if "enum" in s and not isinstance(s["enum"], list):
        raise _fail(_ptr(where, "enum"), f'"enum" must be a list, got {json.dumps(s["enum"])[:80]}')


def _check_schema_maps(s: dict[str, Any], where: _Where) -> None:
    """Keywords holding an object of schemas (``properties``, ``$defs``...)."""
    for key in _SCHEMA_MAPS:
        if key in s:
            sub = s[key]
            if not isinstance(sub, dict):
                raise _fail(_ptr(where, key), f'"{key}" must be an object of schemas')
            for k, v in sub.items():
                _check(v, _ptr(_ptr(where, key), k))


def _check_schema_lists(s: dict[str, Any], where: _Where) -> None:
    """Keywords holding a list of schemas (``allOf``, ``anyOf``, ``oneOf``, ``prefixItems``)."""
    for key in _SCHEMA_LISTS:
        if key in s:
            sub = s[key]
            if not isinstance(sub, list) or not sub:
                raise _fail(_ptr(where, key), f'"{key}" must be a non-empty list of schemas')
            for i, v in enumerate(sub):
                _check(v, _ptr(_ptr(where, key), i))


def _check_schema_values(s: dict[str, Any], where: _Where) -> None:
    """Keywords holding one schema (``items`` may also be a draft <= 2019-09 tuple of them)."""
    for key in _SCHEMA_KEYS:
        if key in s:
            if key == "items" and isinstance(s[key], list):  # draft <= 2019-09 tuple form
                for i, v in enumerate(s[key]):
                    _check(v, _ptr(_ptr(where, key), i))
            else:
                _check(s[key], _ptr(where, key))


# --- $ref resolution, as jsonref.loads with DataHub's title-swapping callback


class _Resolver:
    """Replaces every ``{"$ref": ...}`` object by the object it points to (shared, so cycles stay)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.done: dict[int, Any] = {}  # id(ref object) -> target
        self.active: set[int] = set()
        self.refs: dict[int, tuple[dict[str, Any], _Where]] = {}  # id(ref object) -> (ref object, pointer)

    def run(self) -> dict[str, Any]:
        """The document with its references replaced (the root itself may be one)."""
        self._index(self.doc, "#")
        self._replace(self.doc, "#", set())
        return self.target(self.doc) if id(self.doc) in self.refs else self.doc

    def _index(self, obj: Any, where: _Where) -> None:
        if isinstance(obj, dict):
            if isinstance(obj.get("$ref"), str):
                self.refs[id(obj)] = (obj, where)
            for k, v in obj.items():
                self._index(v, _ptr(where, k))
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                self._index(v, _ptr(where, i))

    def _replace(self, obj: Any, where: _Where, seen: set[int]) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
        for k, v in list(items):
            if isinstance(v, dict) and id(v) in self.refs:
                obj[k] = self.target(v)
            else:
                self._replace(v, _ptr(where, k), seen)

    def target(self, ref: dict[str, Any]) -> Any:
        key = id(ref)
        if key in self.done:
            return self.done[key]
        where = self.refs[key][1]
        if key in self.active:
            raise _fail(where, f"$ref {ref['$ref']!r} is part of a cycle of references that never reaches a schema")
        self.active.add(key)
        uri, fragment = urldefrag(urljoin("", ref["$ref"]))
        if uri:
            raise _fail(where, f"$ref {ref['$ref']!r} points outside this document; only local references (#...) "
                        "are supported")
        doc: Any = self.doc
        for part in unquote(fragment.lstrip("/")).split("/") if fragment else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(doc, dict) and id(doc) in self.refs and doc is not ref and doc is not self.doc:
                # (inside the reference itself, or from the document's root: its own object, as jsonref)
                doc = self.target(doc)
            if isinstance(doc, list):
                try:
                    part = int(part)  # type: ignore[assignment]
                except ValueError:
                    pass
            try:
                doc = doc[part]
            except (TypeError, LookupError) as exc:
                raise _fail(where, f"$ref {ref['$ref']!r}: no such definition (unresolvable JSON pointer)") from exc
        if doc is ref:
            raise _fail(where, f"$ref {ref['$ref']!r} refers directly to itself")
        if isinstance(doc, dict) and id(doc) in self.refs:
            doc = self.target(doc)
        if not isinstance(doc, dict):
            raise _fail(where, f"$ref {ref['$ref']!r} points to {type(doc).__name__}, not to a schema object")
        if "title" not in doc and fragment:
            doc["title"] = fragment.split("/")[-1]
        self.active.discard(key)
        self.done[key] = doc
        # The target's own references are replaced where the target lives.
        return doc


# --- conversion: JsonSchemaTranslator.get_fields, building nodes instead of fields


def _is_map(s: dict[str, Any]) -> bool:
    return isinstance(s.get("additionalProperties"), dict) and not s.get("properties")


def _json_type(s: Any, where: _Where) -> str:
    """JsonSchemaTranslator._get_type_from_schema."""
    if not isinstance(s, dict):
        raise _fail(where, f"a boolean schema ({json.dumps(s)}) here has no fields (DataHub cannot read it)")
    if "oneOf" in s or "anyOf" in s or "allOf" in s:
        return "union"
    if "enum" in s:
        return "enum"
    if "type" in s:
        t: str | list[str] = s["type"]  # checked by _check
        if isinstance(t, list):
            if len(t) == 1:
                resolved = t[0]
            elif len(t) == 2 and "null" in t:
                resolved = [x for x in t if x != "null"][0]
            else:
                return "union"
            if resolved == "object" and _is_map(s):
                return "map"
            return resolved
        if t != "object":
            return t
        if _is_map(s):
            return "map"
    elif _is_map(s):
        return "map"
    return "object"


def _discriminated(s: dict[str, Any], where: _Where) -> str:
    """JsonSchemaTranslator._get_discriminated_type_from_schema."""
    generic = _json_type(s, where)
    if generic == "object" and "javaType" in s:
        java_type: str = s["javaType"]  # checked by _check
        return java_type.split(".")[-1]
    if generic == "object" and "title" in s and "properties" in s:
        title: str = s["title"]
        return title
    if "format" in s:
        return f"{generic}({s['format']})"
    return generic


def _description(s: dict[str, Any]) -> str:
    description = ""
    if "description" in s:
        description = str(s.get("description"))
    elif "const" in s:
        description = f"Const value: {s.get('const')}"
    default = s.get("default")
    if default is not None:
        description = f"{description}\nField default value: {default}"
    return description


_REQUIRED_PROPS = {True: json.dumps({"required": True}), False: json.dumps({"required": False})}


def _json_props(s: dict[str, Any], required: bool) -> str:
    if "default" in s:
        return json.dumps({"default": s["default"], "required": required})
    return _REQUIRED_PROPS[required]


def _nullable(s: dict[str, Any]) -> bool:
    return isinstance(s.get("type"), list) and "null" in s["type"]


#: The kind of a field's parent ("union" or "map") and the member's or the values' type.
_Parent: TypeAlias = tuple[str, str]
#: A schema's identity on a path: see _Converter.key.
_Key: TypeAlias = "int | str"
#: ((token, key), ...): the schemas expanded along a path.
_Trail: TypeAlias = tuple[tuple[str, _Key], ...]


class _Ctx:
    """DataHub's FieldPath, reduced to what decides a field: is there a field name on the path,
    the parent type of its last element (a union's or a map's), the schemas it expanded."""

    __slots__ = ("named", "parent", "trail", "loops", "where")

    def __init__(self, named: bool, parent: _Parent | None, trail: _Trail, loops: frozenset[int],
                 where: _Where) -> None:
        self.named = named
        self.parent = parent
        self.trail = trail  # ((token, str(schema)), ...) in path order
        self.loops = loops  # arrays/maps/unions entered since the last object: DataHub's endless loops
        self.where = where

    def expand(self, token: str, key: _Key, where: _Where, parent: _Parent | None = None,
               loops: frozenset[int] | None = None) -> _Ctx:
        return _Ctx(self.named, self.parent or parent, self.trail + ((token, key),),
                    self.loops if loops is None else loops, where)

    def child(self, where: _Where) -> _Ctx:
        return _Ctx(True, None, self.trail, self.loops, where)

    def type_override(self) -> FieldType | None:
        if self.parent is None:
            return None
        kind, nested = self.parent
        if kind == "union":
            return FieldType("UnionType", nested_type=(nested,) if nested else None)
        return FieldType("MapType", key_type="string", value_type=nested)

    def native_override(self) -> str | None:
        if self.parent is not None and self.parent[0] == "map":
            return f"map(str,{self.parent[1]})"
        return None


class _Converter:
    def __init__(self) -> None:
        self.count = 0
        self.keys: dict[int, tuple[Any, _Key]] = {}  # id(schema) -> (schema, its key)
        self.canons: dict[int, tuple[Any, int | None]] = {}  # id(JSON value) -> (value, its number)
        self.numbers: dict[tuple[Any, ...], int] = {}  # a value's parts -> its number

    def name(self) -> str:
        self.count += 1
        return f"~json{self.count}"

    def key(self, s: dict[str, Any]) -> _Key:
        """DataHub's identity of a schema on a path, ``str(schema)``: its number (equal numbers, equal texts)
        when it reaches no cycle, else the text itself (a cycle prints as ``{...}`` depending on where
        ``str`` starts). Numbering is linear in the document; ``str`` of every schema on every path is not."""
        hit = self.keys.get(id(s))
        if hit is not None and hit[0] is s:
            return hit[1]
        number = self.number(s, set())
        key: _Key = str(s) if number is None else number
        self.keys[id(s)] = (s, key)
        return key

    def number(self, value: Any, active: set[int]) -> int | None:
        """A number standing for ``str(value)`` (JSON data), None if ``value`` reaches a cycle."""
        kind = type(value)
        if kind is dict or kind is list:
            hit = self.canons.get(id(value))
            if hit is not None and hit[0] is value:
                return hit[1]
            if id(value) in active:
                return None
            active.add(id(value))
            parts: list[Any] = []
            numbers = self.numbers
            for k, v in value.items() if kind is dict else enumerate(value):
                vkind = type(v)
                if vkind is str or v is None:  # as itself: never equal to a number
                    n: Any = v
                elif vkind is int or vkind is bool:  # (the scalars' case below)
                    n = numbers.setdefault((vkind, v), len(numbers))
                else:
                    n = self.number(v, active)
                    if n is None:
                        break
                parts.append(k)
                parts.append(n)
            else:
                number: int | None = numbers.setdefault((kind, *parts), len(numbers))
                active.discard(id(value))
                self.canons[id(value)] = (value, number)
                return number
            active.discard(id(value))
            self.canons[id(value)] = (value, None)
            return None
        # scalars: by type and value; floats by repr (nan, -0.0)
        part = repr(value) if kind is float else value
        return self.numbers.setdefault((kind, part), len(self.numbers))

    def convert(self, doc: dict[str, Any]) -> Type:
        root = _Ctx(False, None, (), frozenset(), "#")
        return self.node(_json_type(doc, "#"), doc, False, root, None, id(doc))

    def node(self, json_type: str, s: dict[str, Any], required: bool, ctx: _Ctx, specific: str | None,
             origin: int) -> Type:
        cls = _CLASS.get(json_type, "NullType")
        if cls == "RecordType":
            return self.record(s, required, ctx, specific)
        if cls in ("ArrayType", "MapType", "UnionType"):
            if origin in ctx.loops:
                return self.endless(cls, s, required, ctx, specific)
            ctx = _Ctx(ctx.named, ctx.parent, ctx.trail, ctx.loops | {origin}, ctx.where)
            if cls == "ArrayType":
                return self.array(s, required, ctx, specific)
            if cls == "MapType":
                return self.map(s, required, ctx)
            return self.union(s, required, ctx)
        if cls == "EnumType":
            return self.enum(s, required, ctx)
        if cls in _PRIMITIVE:
            return self.primitive(cls, s, required, ctx, specific)
        raise _fail(ctx.where, f"DataHub has no field for a {json_type!r} schema")

    def attrs(self, ftype: FieldType, native: str, s: dict[str, Any], required: bool, recursive: bool = False,
              description: str | None = None) -> dict[str, Any]:
        return {
            "type": ftype, "nativeDataType": native, "nullable": _nullable(s),
            "description": _description(s) if description is None else description,
            "recursive": recursive, "jsonProps": _json_props(s, required),
        }

    def primitive(self, cls: str, s: dict[str, Any], required: bool, ctx: _Ctx, specific: str | None) -> Type:
        token = specific or _discriminated(s, ctx.where)
        native = ctx.native_override() or str(s.get("type") or "")
        if "format" in s:
            native = f"{native}({s['format']})"
        emitted = self.attrs(ctx.type_override() or FieldType(cls), native, s, required)
        return Primitive(_PRIMITIVE[cls], hints=WalkHints(token=token, emitted=emitted))

    def enum(self, s: dict[str, Any], required: bool, ctx: _Ctx) -> Type:
        symbols = tuple(json.dumps(v) for v in s["enum"])
        emitted = self.attrs(ctx.type_override() or FieldType("EnumType"), "Enum", s, required,
                             description=f"One of: {', '.join(symbols)}")
        return Enum(self.name(), symbols, None, hints=WalkHints(token="enum", emitted=emitted))

    def record(self, s: dict[str, Any], required: bool, ctx: _Ctx, specific: str | None) -> Type:
        token = specific or _discriminated(s, ctx.where)
        override, native = ctx.type_override(), ctx.native_override()
        key = self.key(s)
        for seen_token, seen_key in ctx.trail:
            if seen_key == key:  # DataHub: "have we seen this schema before?"
                again = self.attrs(override or FieldType("RecordType"), native or seen_token, s, required, True)
                return Record(self.name(), (), None, hints=WalkHints(token=seen_token, emitted=again))
        emitted: dict[str, Any] | None = None
        if ctx.named:
            own_native = native or _discriminated(s, ctx.where)
            emitted = self.attrs(override or FieldType("RecordType"), own_native, s, required)
        inner = ctx.expand(token, key, ctx.where, loops=frozenset())
        properties = s.get("properties", {})
        wanted = s.get("required", [])
        fields = []
        for fname, sub in properties.items():
            where = _ptr(_ptr(ctx.where, "properties"), fname)
            node = self.node(_json_type(sub, where), sub, fname in wanted, inner.child(where), None, id(sub))
            fields.append(Field(fname, node, hints=WalkHints(token=fname)))
        doc = s.get("description") if isinstance(s.get("description"), str) else None
        return Record(self.name(), tuple(fields), doc, hints=WalkHints(token=token, emitted=emitted))

    def array(self, s: dict[str, Any], required: bool, ctx: _Ctx, specific: str | None) -> Type:
        token = specific or _discriminated(s, ctx.where)
        emitted = self.attrs(ctx.type_override() or FieldType("ArrayType"),
                             ctx.native_override() or _discriminated(s, ctx.where), s, required)
        inner = ctx.expand(token, self.key(s), ctx.where)
        where = _ptr(ctx.where, "items")
        items = s.get("items", {"type": "string"})
        if not isinstance(items, dict):
            raise _fail(where, "array items must be one schema object (tuple or boolean items are not supported "
                        "by DataHub's converter)")
        items_type = _json_type(items, where)
        fname = items.get("title", None) or items_type
        node = self.node(items_type, items, False, inner.child(where), None, id(items))
        field = Field(fname, node, hints=WalkHints(token=fname))
        return Record(self.name(), (field,), None, hints=WalkHints(token=token, emitted=emitted))

    def map(self, s: dict[str, Any], required: bool, ctx: _Ctx) -> Type:
        values = s["additionalProperties"]
        where = _ptr(ctx.where, "additionalProperties")
        value_type = _discriminated(values, where)
        inner = ctx.expand("map", self.key(s), where, parent=("map", value_type))
        return Map(self.node(_json_type(values, where), values, required, inner, None, id(values)))

    def union(self, s: dict[str, Any], required: bool, ctx: _Ctx) -> Type:
        categories: dict[str, Any] = {"oneOf": s.get("oneOf"), "anyOf": s.get("anyOf"), "allOf": s.get("allOf")}
        if isinstance(s.get("type"), list):
            categories["anyOf"] = [{"type": t} for t in s["type"]]
        chosen = [(k, v) for k, v in categories.items() if v]
        if not chosen:
            raise _fail(ctx.where, "a union with no members")
        category, members = chosen[0]
        base = _ptr(ctx.where, category)
        if not ctx.named and len(members) == 1:
            # DataHub collapses a one-member union that has no field name yet.
            merged = self.merge(members[0], s, _ptr(base, 0))
            sub = _Ctx(ctx.named, ctx.parent, ctx.trail, ctx.loops, _ptr(base, 0))
            return self.node(_json_type(merged, sub.where), merged, required, sub, None, id(members[0]))
        emitted = None
        if ctx.named:
            emitted = self.attrs(ctx.type_override() or FieldType("UnionType"), f"union({category})", s, required)
        key = self.key(s)
        out = []
        for i, member in enumerate(members):
            where = _ptr(base, i)
            merged = self.merge(member, s, where)
            member_type = _discriminated(member, where)
            if member_type == "object":
                member_type = f"union_{i}"
            inner = ctx.expand("union", key, where, parent=("union", member_type))
            out.append(self.node(_json_type(merged, where), merged, required, inner, member_type, id(member)))
        hints = WalkHints(token="union", emitted=emitted, silent=not ctx.named, null_members=True)
        return Union(tuple(out), hints=hints)

    @staticmethod
    def merge(member: Any, parent: dict[str, Any], where: _Where) -> dict[str, Any]:
        """_retain_parent_schema_props_in_union: the parent's properties and required go into each member."""
        if not isinstance(member, dict):
            raise _fail(where, f"a boolean schema ({json.dumps(member)}) as a union member is not supported by DataHub")
        merged = member.copy()
        if "properties" in parent:
            merged["properties"] = {**parent["properties"], **member.get("properties", {})}
        if "required" in parent:
            merged["required"] = [*parent["required"], *member.get("required", [])]
        return merged

    def endless(self, cls: str, s: dict[str, Any], required: bool, ctx: _Ctx, specific: str | None) -> Type:
        """An array, map or union met again with no object in between: DataHub recurses forever; stop."""
        override, native = ctx.type_override(), ctx.native_override()
        if cls == "ArrayType":
            token = specific or _discriminated(s, ctx.where)
            own, own_native = FieldType("ArrayType"), _discriminated(s, ctx.where)
        elif cls == "MapType":
            token = "map"
            value_type = _discriminated(s["additionalProperties"], ctx.where)
            own = FieldType("MapType", key_type="string", value_type=value_type)
            own_native = f"map(str,{value_type})"
        else:
            token, own, own_native = "union", FieldType("UnionType"), "union"
        emitted = self.attrs(override or own, native or own_native, s, required, True)
        return Record(self.name(), (), None, hints=WalkHints(token=token, emitted=emitted))
