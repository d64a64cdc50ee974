"""Spark ``StructType`` (the JSON of ``df.schema.json()``, or the object) -> the type model.

No pyspark import: a ``StructType`` object is read through its ``jsonValue()`` / ``json()``.
Rendered by the struct rules of :mod:`.struct`; ``nativeDataType`` is Spark's type text
(``simpleString``: ``int``, ``bigint``, ``array<struct<c:string>>``...), which is the Hive
type text DataHub's Spark-side sources (Glue, Delta Lake, Unity) show. A field's
``metadata.comment`` becomes its description.

Spark type -> Avro type (path token):
byte, short, integer -> int; long -> long; float; double; decimal(p,s) -> bytes (decimal);
string, char(n), varchar(n) -> string; binary -> bytes; boolean; date -> int (date);
timestamp, timestamp_ntz -> long (timestamp-micros); time(p) -> long (time-micros);
interval year to month (and its subsets) -> int; interval day to second (and subsets) ->
long; interval (CalendarInterval), variant, geometry, geography -> bytes; void -> null;
array -> array; map -> map (value type); struct -> struct; udt -> its sqlType.
"""

from __future__ import annotations

import re
from typing import Any

from .avro import load_json
from .errors import SchemaNormalizationError
from .model import Record, Type
from .struct import StructBuilder, type_error

_SIMPLE = {
    # json name: (avro type, logical type, simpleString)
    "byte": ("int", None, "tinyint"),
    "short": ("int", None, "smallint"),
    "integer": ("int", None, "int"),
    "long": ("long", None, "bigint"),
    "float": ("float", None, "float"),
    "double": ("double", None, "double"),
    "string": ("string", None, "string"),
    "binary": ("bytes", None, "binary"),
    "boolean": ("boolean", None, "boolean"),
    "date": ("int", "date", "date"),
    "timestamp": ("long", "timestamp-micros", "timestamp"),
    "timestamp_ntz": ("long", "timestamp-micros", "timestamp_ntz"),
    "interval": ("bytes", None, "interval"),
    "variant": ("bytes", None, "variant"),
    "void": ("null", None, "void"),
    "null": ("null", None, "void"),
}
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$")
_CHAR = re.compile(r"(char|varchar)\(\s*(\d+)\s*\)$")
_TIME = re.compile(r"time\(\s*(\d+)\s*\)$")
_YEAR_MONTH = re.compile(r"interval (year|month)( to (year|month))?$")
_DAY_TIME = re.compile(r"interval (day|hour|minute|second)( to (day|hour|minute|second))?$")
_SPATIAL = re.compile(r"(geometry|geography)(\(.*\))?$")
_COLLATED = re.compile(r"string collate \S+$")


def parse_spark(schema: Any, *, name: str | None = None) -> Type:
    """Read a Spark StructType (JSON text/bytes/dict, or a ``StructType``) into the type model."""
    data = _load(schema)
    label = name or "<spark schema>"
    try:
        if not isinstance(data, dict) or data.get("type") != "struct":
            raise SchemaNormalizationError(
                'a Spark schema is a StructType: a JSON object {"type": "struct", "fields": [...]}, got '
                + _short(data)
            )
        return _Reader().struct(data, "", root=True, nullable=False)
    except SchemaNormalizationError as exc:
        raise exc.with_schema(label) from exc
    except RecursionError:
        raise SchemaNormalizationError("schema nests too deeply", schema=label) from None


def _load(schema: Any) -> Any:
    if not isinstance(schema, (str, bytes, bytearray, memoryview, dict, list)):
        for method in ("jsonValue", "json"):
            fn = getattr(schema, method, None)
            if callable(fn):
                schema = fn()
                break
        else:
            raise SchemaNormalizationError(
                f"a Spark schema is StructType JSON or a StructType, not {type(schema).__name__}"
            )
    if isinstance(schema, (bytearray, memoryview)):
        schema = bytes(schema)
    return load_json(schema, "Spark schema")


def _short(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 80 else text[:77] + "..."


class _Reader:
    def __init__(self) -> None:
        self.b = StructBuilder()

    def struct(self, data: dict[str, Any], where: str, *, root: bool = False, nullable: bool) -> Record:
        fields = data.get("fields")
        if not isinstance(fields, list):
            raise type_error(where, f'a struct needs "fields", a list, got {_short(fields)}')
        out = []
        natives = []
        for i, f in enumerate(fields):
            if not isinstance(f, dict):
                raise type_error(f"{where}.fields[{i}]" if where else f"fields[{i}]",
                                 f"a struct field is an object, got {_short(f)}")
            fname = f.get("name")
            if not isinstance(fname, str):
                raise type_error(f"{where}.fields[{i}]" if where else f"fields[{i}]",
                                 f'a struct field needs a string "name", got {_short(fname)}')
            at = f"{where}.{fname}" if where else fname
            if "type" not in f:
                raise type_error(at, 'struct field has no "type"')
            fnull = f.get("nullable", True)
            if not isinstance(fnull, bool):
                raise type_error(at, f'"nullable" must be true or false, got {_short(fnull)}')
            meta = f.get("metadata") or {}
            if not isinstance(meta, dict):
                raise type_error(at, f'"metadata" must be an object, got {_short(meta)}')
            node, native = self.type(f["type"], at, fnull)
            collations = meta.get("__COLLATIONS")
            collation = collations.get(fname) if isinstance(collations, dict) else None
            if isinstance(collation, str) and native == "string":
                native = f"string collate {collation.split('.', 1)[-1]}"
                node = self.b.primitive("string", native, fnull)
            comment = meta.get("comment")
            out.append(self.b.field(fname, node, comment if isinstance(comment, str) else None))
            natives.append(f"{fname}:{native}")
        native = f"struct<{','.join(natives)}>"
        return self.b.struct(out, native, nullable, root=root, where=where)

    def type(self, data: Any, where: str, nullable: bool) -> tuple[Type, str]:
        """The node for a Spark data type, and its simpleString."""
        if isinstance(data, str):
            return self.simple(data, where, nullable)
        if not isinstance(data, dict):
            raise type_error(where, f"a Spark type is a string or an object, got {_short(data)}")
        match data.get("type"):
            case "struct":
                node = self.struct(data, where, nullable=nullable)
                return node, node.props["native_data_type"]
            case "array":
                return self.array(data, where, nullable)
            case "map":
                return self.map(data, where, nullable)
            case "udt":
                if "sqlType" not in data:
                    raise type_error(where, 'user-defined type has no "sqlType"')
                return self.type(data["sqlType"], where, nullable)
            case kind:
                raise type_error(where, f"unknown Spark type {_short(kind if kind is not None else data)}")

    def simple(self, data: str, where: str, nullable: bool) -> tuple[Type, str]:
        """A type written as text (``integer``, ``decimal(10,2)``, ``varchar(5)``...)."""
        b = self.b
        text = data.strip()
        low = text.lower()
        if low in _SIMPLE:
            avro, logical, native = _SIMPLE[low]
            return b.primitive(avro, native, nullable, logical), native
        if m := _DECIMAL.match(low):
            native = f"decimal({m.group(1)},{m.group(2)})"
            return b.decimal(int(m.group(1)), int(m.group(2)), native, nullable), native
        if low == "decimal":
            return b.decimal(10, 0, "decimal(10,0)", nullable), "decimal(10,0)"
        if m := _CHAR.match(low):
            native = f"{m.group(1)}({m.group(2)})"
            return b.primitive("string", native, nullable), native
        if _COLLATED.match(low):
            return b.primitive("string", text, nullable), text
        if m := _TIME.match(low):
            return b.primitive("long", low, nullable, "time-micros"), low
        if _YEAR_MONTH.match(low):
            return b.primitive("int", low, nullable), low
        if _DAY_TIME.match(low):
            return b.primitive("long", low, nullable), low
        if _SPATIAL.match(low):
            return b.primitive("bytes", text, nullable), text
        raise type_error(where, f"unknown Spark type {text!r}")

    def array(self, data: dict[str, Any], where: str, nullable: bool) -> tuple[Type, str]:
        if "elementType" not in data:
            raise type_error(where, 'array type has no "elementType"')
        items, inner = self.type(data["elementType"], f"{where}.element", bool(data.get("containsNull", True)))
        native = f"array<{inner}>"
        return self.b.array(items, native, nullable), native

    def map(self, data: dict[str, Any], where: str, nullable: bool) -> tuple[Type, str]:
        for k in ("keyType", "valueType"):
            if k not in data:
                raise type_error(where, f'map type has no "{k}"')
        key, key_native = self.type(data["keyType"], f"{where}.key", False)
        values, value_native = self.type(
            data["valueType"], f"{where}.value", bool(data.get("valueContainsNull", True))
        )
        native = f"map<{key_native},{value_native}>"
        return self.b.map(key, values, native, key_native, nullable), native
