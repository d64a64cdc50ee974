"""DataMine IDL (a JSON schema of tables) -> the type model.

A DataMine schema is ``{"schema": NAME, "table_list": [{"table": T, "fields": [...]}, ...]}``.
Each table becomes a :class:`Record` named after it, holding one :class:`Field` per
DataMine field:

* a primitive type (``BYTE``/``Byte``, ``BOOL``/``Boolean``, ``INT16``/``Short``,
  ``INT32``/``Integer``, ``INT64``/``Long``, ``FLOAT``, ``DOUBLE``, ``STRING``,
  ``BINARY``; names are case-insensitive) becomes the nearest Avro primitive;
* ``List:X`` becomes an :class:`Array` of X, X a primitive or another table of the schema;
* a group type nests a record: the name of another table of the schema (``"type":
  "provider_user_id"``), or ``"type": "STRUCT"`` with the nested ``"fields"`` inline (the
  record is named after ``"struct"``/``"struct_name"`` if given, else after the field), or
  ``"type": {"type": "STRUCT", "name": N, "fields": [...]}``;
* ``isRequired`` (default false) decides nullability: an optional field's type is a union
  with ``null`` (``["null", T]``, or ``[T, "null"]`` when it has a non-null default), as an
  Avro optional field is;
* the DataMine type as written is the field's ``nativeDataType``; the id and the
  constraints (``isRequired``, ``isAscSortKey``, ``isDesSortKey``, ``isFrequentlyUsed``,
  ``isDerived``) and any other attribute go in ``jsonProps``; the default goes in the
  description (``Field default value: ...``), as DataHub writes an Avro default.

The IDL's own rules are checked before anything is built, and every violation is reported
in one :class:`DataMineSchemaError` naming each field path (``table.field``).

For schema evolution, :func:`canonical_type` gives a field's DataMine type in the document's
own spelling (``Integer`` and ``INT32`` are one type; ``BYTE``, ``INT16`` and ``INT32`` are
three, though all render as Avro ``int``), and :func:`sort_key` reads a table's sort key back
from its normalized fields (the ``isAscSortKey``/``isDesSortKey`` in their ``jsonProps``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, TypeGuard

from .avro import load_json
from .errors import SchemaNormalizationError
from .fields import SchemaField
from .model import NO_DEFAULT, Array, Field, Primitive, Record, Ref, Type, Union, frozen_props

#: DataMine primitive type names (upper-cased) -> (Avro primitive, canonical DataMine name).
PRIMITIVE_TYPES: dict[str, tuple[str, str]] = {
    "BYTE": ("int", "BYTE"),
    "BOOL": ("boolean", "BOOL"),
    "BOOLEAN": ("boolean", "BOOL"),
    "INT16": ("int", "INT16"),
    "SHORT": ("int", "INT16"),
    "INT32": ("int", "INT32"),
    "INTEGER": ("int", "INT32"),
    "INT": ("int", "INT32"),
    "INT64": ("long", "INT64"),
    "LONG": ("long", "INT64"),
    "FLOAT": ("float", "FLOAT"),
    "DOUBLE": ("double", "DOUBLE"),
    "STRING": ("string", "STRING"),
    "BINARY": ("bytes", "BINARY"),
}
_CANONICAL_NAMES = sorted({c for _, c in PRIMITIVE_TYPES.values()})
#: The recommended naming pattern of the IDL, enforced on schema, table and field names.
NAME_PATTERN = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")
LIST_PREFIX = "List:"
STRUCT = "STRUCT"
#: Boolean constraints of a field, in the order they go into jsonProps.
CONSTRAINTS = ("isRequired", "isAscSortKey", "isDesSortKey", "isFrequentlyUsed", "isDerived")
_FIELD_KEYS = frozenset({"id", "name", "type", "default", "fields", "doc", "description", "constraints",
                         "struct", "struct_name", *CONSTRAINTS})


class DataMineSchemaError(SchemaNormalizationError):
    """A DataMine schema breaks the IDL's rules; ``problems`` lists every ``(path, reason)``."""

    def __init__(self, problems: list[tuple[str, str]], *, schema: str | None = None) -> None:
        self.problems = list(problems)
        if len(problems) == 1:
            path, reason = problems[0]
            super().__init__(reason, schema=schema, path=path)
        else:
            lines = "\n".join(f"  - {p}: {r}" for p, r in problems)
            super().__init__(f"{len(problems)} problems:\n{lines}", schema=schema)

    def with_schema(self, schema: str) -> DataMineSchemaError:
        return self if self.schema else DataMineSchemaError(self.problems, schema=schema)


def parse_datamine(schema: Any, *, name: str | None = None, table: str | None = None) -> Type:
    """One table of a DataMine schema as a record.

    ``table`` names the table; without it, the schema's only table, else its only root table
    (the one no other table uses), else an error listing the tables. ``name`` labels errors
    (a file name, say) when the schema does not name itself.
    """
    data, label = _load(schema, name)
    tables = _Builder(data, label).build()
    if table is not None:
        if table not in tables:
            raise SchemaNormalizationError(
                f"no table {table!r}; the tables are: {', '.join(tables) or '(none)'}", schema=label
            )
        return tables[table]
    if len(tables) == 1:
        return next(iter(tables.values()))
    roots = root_tables(data)
    if len(roots) == 1:
        return tables[roots[0]]
    raise SchemaNormalizationError(
        f"the schema has {len(tables)} tables ({', '.join(tables)}) and "
        + (f"{len(roots)} of them are not used by another ({', '.join(roots)})" if roots else "no root table")
        + "; name one (table=...), or read them all with parse_datamine_tables()",
        schema=label,
    )


def parse_datamine_tables(schema: Any, *, name: str | None = None) -> dict[str, Type]:
    """Every table of a DataMine schema, by table name, in the schema's order."""
    data, label = _load(schema, name)
    return _Builder(data, label).build()


def root_tables(schema: Any) -> list[str]:
    """The tables of a (valid) DataMine schema that no other table uses, in order."""
    data = load_json(schema, "DataMine schema")
    names = [t["table"] for t in data["table_list"]]
    used: set[str] = set()
    for t in data["table_list"]:
        for ref in _table_refs(t.get("fields") or [], set(names)):
            if ref != t["table"]:
                used.add(ref)
    return [n for n in names if n not in used]


def is_datamine(data: Any) -> bool:
    """Whether parsed JSON looks like a DataMine schema (an object with ``table_list``)."""
    return isinstance(data, dict) and "table_list" in data


# --- schema evolution: DataMine's own types, sort keys ------------------------------------------

#: The sort-key constraints and the order each one sorts in.
SORT_ORDERS = {"isAscSortKey": "ascending", "isDesSortKey": "descending"}


def canonical_type(native: str) -> str:
    """A DataMine type as written (a field's ``nativeDataType``), in the document's canonical spelling.

    The names the document gives one type are that type (``Integer`` and ``INT32``, ``Short``
    and ``INT16``, ``Byte`` and ``BYTE``, ...; any case), ``List:X`` is ``List:`` and X's
    canonical name, ``STRUCT`` is upper-cased, and a table's name stays as is. Types that
    render alike (``BYTE``, ``INT16``, ``INT32`` are all Avro ``int``) stay apart.
    """
    if native.startswith(LIST_PREFIX):
        return LIST_PREFIX + canonical_type(native[len(LIST_PREFIX):])
    primitive = PRIMITIVE_TYPES.get(native.upper())
    if primitive is not None:
        return primitive[1]
    return STRUCT if native.upper() == STRUCT else native


def sort_key(fields: Iterable[SchemaField]) -> tuple[SchemaField, str] | None:
    """The sort key of a table, from its own (top-level) normalized fields.

    The field flagged ``isAscSortKey`` or ``isDesSortKey`` (in its ``jsonProps``, where the
    normalizer puts a field's constraints) and its order, ``"ascending"`` or
    ``"descending"``; None when the table has no sort key.
    """
    for f in fields:
        try:
            props = json.loads(f.jsonProps) if f.jsonProps else None
        except ValueError:
            continue
        if isinstance(props, dict):
            for flag, order in SORT_ORDERS.items():
                if props.get(flag) is True:
                    return f, order
    return None


# --- internals ---------------------------------------------------------------------------------


def _load(schema: Any, name: str | None) -> tuple[Any, str]:
    data = load_json(schema, "DataMine schema")
    declared = data.get("schema") if isinstance(data, dict) else None
    label = name or (declared if isinstance(declared, str) and declared else None) or "<anonymous>"
    return data, label


def _table_refs(fields: Iterable[Any], tables: set[str]) -> Iterable[str]:
    for f in fields:
        if not isinstance(f, dict):
            continue
        t = f.get("type")
        if isinstance(t, str):
            target = t[len(LIST_PREFIX):] if t.startswith(LIST_PREFIX) else t
            if target in tables:
                yield target
            if t.upper() == STRUCT and isinstance(f.get("fields"), list):
                yield from _table_refs(f["fields"], tables)
        elif isinstance(t, dict) and isinstance(t.get("fields"), list):
            yield from _table_refs(t["fields"], tables)


def _flag(f: dict[str, Any], key: str) -> Any:
    """A constraint, read flat from the field or from its ``constraints`` object."""
    if key in f:
        return f[key]
    cons = f.get("constraints")
    if isinstance(cons, dict):
        return cons.get(key)
    return None


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


class _Builder:
    def __init__(self, data: Any, label: str) -> None:
        self.data = data
        self.label = label
        self.problems: list[tuple[str, str]] = []
        self.tables: dict[str, dict[str, Any]] = {}  # table name -> its JSON
        self.records: dict[str, Record] = {}  # built tables (and nested structs) by name
        self.registry: dict[str, Record] = {}
        self.building: list[str] = []

    def problem(self, path: str, reason: str) -> None:
        self.problems.append((path, reason))

    # validation -----------------------------------------------------------------------------

    def validate(self) -> None:
        data = self.data
        if not isinstance(data, dict):
            self.problem("<root>", f"a DataMine schema is a JSON object, got {type(data).__name__}")
            return
        name = data.get("schema")
        if name is None:
            self.problem("schema", 'the schema has no "schema" name')
        elif not isinstance(name, str) or not NAME_PATTERN.match(name):
            self.problem("schema", f"schema name {name!r} does not match {NAME_PATTERN.pattern}")
        tables = data.get("table_list")
        if not isinstance(tables, list) or not tables:
            self.problem("table_list", f'"table_list" must be a non-empty list of tables, got {tables!r}'[:200])
            return
        for i, t in enumerate(tables):
            where = f"table_list[{i}]"
            if not isinstance(t, dict):
                self.problem(where, f"a table is an object, got {t!r}"[:200])
                continue
            tname = t.get("table")
            if not isinstance(tname, str):
                self.problem(where, f'a table needs a "table" name, a string, got {tname!r}')
                continue
            if not NAME_PATTERN.match(tname):
                self.problem(where, f"table name {tname!r} does not match {NAME_PATTERN.pattern}")
                continue
            if tname in self.tables:
                self.problem(tname, f"table {tname!r} is defined twice")
                continue
            if tname.upper() in PRIMITIVE_TYPES or tname.upper() == STRUCT:
                self.problem(tname, f"table name {tname!r} is a type name")
            self.tables[tname] = t
        for tname, t in self.tables.items():
            fields = t.get("fields")
            if not isinstance(fields, list):
                self.problem(tname, f'a table needs "fields", a list, got {fields!r}'[:200])
                continue
            self.validate_fields(tname, fields, table_level=True)

    def validate_fields(self, where: str, fields: list[Any], *, table_level: bool) -> None:
        names: set[str] = set()
        ids: dict[int, str] = {}
        sort_keys: list[str] = []
        for i, f in enumerate(fields):
            if not isinstance(f, dict):
                self.problem(f"{where}.fields[{i}]", f"a field is an object, got {f!r}"[:200])
                continue
            at = self.validate_name(f"{where}.fields[{i}]", where, f.get("name"), names)
            flags = self.validate_flags(at, f)
            self.validate_id(at, f.get("id"), flags["isDerived"], ids)
            if flags["isAscSortKey"] and flags["isDesSortKey"]:
                self.problem(at, "a field cannot be both an ascending and a descending sort key")
            if flags["isAscSortKey"] or flags["isDesSortKey"]:
                sort_keys.append(at)
            kind = self.validate_type(at, f)
            if flags["isDerived"]:
                if flags["isRequired"]:
                    self.problem(at, "a derived field must be optional (isRequired is true)")
                if kind is not None and kind != "primitive":
                    self.problem(at, f"a derived field must be primitive, got {f.get('type')!r}"[:200])
        if len(sort_keys) > 1:
            self.problem(where, f"a table has at most one sort key, got {len(sort_keys)}: {', '.join(sort_keys)}")

    def validate_name(self, place: str, where: str, fname: Any, names: set[str]) -> str:
        """Check a field's name; the field's path for later problems (``place`` if the name is bad)."""
        if not isinstance(fname, str):
            self.problem(place, f'a field needs a "name", a string, got {fname!r}')
            return place
        if not NAME_PATTERN.match(fname):
            self.problem(place, f"field name {fname!r} does not match {NAME_PATTERN.pattern}")
            return place
        at = f"{where}.{fname}"
        if fname in names:
            self.problem(at, f"field name {fname!r} is used twice")
        names.add(fname)
        return at

    def validate_flags(self, at: str, f: dict[str, Any]) -> dict[str, bool]:
        """Check the constraints; each one's value (absent: false)."""
        flags = {}
        for key in CONSTRAINTS:
            v = _flag(f, key)
            if v is not None and not isinstance(v, bool):
                self.problem(at, f"{key} must be true or false, got {v!r}")
            flags[key] = v is True
        cons = f.get("constraints")
        if cons is not None and not isinstance(cons, dict):
            self.problem(at, f'"constraints" must be an object, got {cons!r}'[:200])
        return flags

    def validate_id(self, at: str, fid: Any, derived: bool, ids: dict[int, str]) -> None:
        """Check a field's id: unique, positive (0 for a derived field); record it in ``ids``."""
        if not _is_int(fid) or fid < 0:
            self.problem(at, f"id must be a non-negative integer, got {fid!r}")
        elif derived:
            if fid != 0:
                self.problem(at, f"a derived field must have id 0, got {fid}")
        elif fid == 0:
            self.problem(at, "id 0 is reserved for derived fields")
        elif fid in ids:
            self.problem(at, f"id {fid} is already used by {ids[fid]}")
        else:
            ids[fid] = at

    def validate_type(self, at: str, f: dict[str, Any]) -> str | None:
        """Check a field's type; its kind (primitive, list, struct) or None if invalid."""
        t = f.get("type")
        if isinstance(t, dict):
            tt = t.get("type")
            if not isinstance(tt, str) or tt.upper() != STRUCT:
                self.problem(at, f'a type object must be a STRUCT, got "type": {tt!r}'[:200])
                return None
            sname = t.get("name", f.get("name"))
            if not isinstance(sname, str) or not NAME_PATTERN.match(sname):
                self.problem(at, f"struct name {sname!r} does not match {NAME_PATTERN.pattern}")
            return self.validate_struct(at, t.get("fields"))
        if not isinstance(t, str) or not t:
            self.problem(at, f"type must be a type name, got {t!r}"[:200])
            return None
        if t.startswith(LIST_PREFIX):
            item = t[len(LIST_PREFIX):]
            if item.upper() in PRIMITIVE_TYPES or item in self.tables:
                return "list"
            self.problem(at, f"unknown list element type {item!r}: not a primitive type nor a table of the schema")
            return None
        if t.upper() in PRIMITIVE_TYPES:
            return "primitive"
        if t in self.tables:
            return "struct"
        if t.upper() == STRUCT:
            sname = f.get("struct", f.get("struct_name", f.get("name")))
            if not isinstance(sname, str) or not NAME_PATTERN.match(sname):
                self.problem(at, f"struct name {sname!r} does not match {NAME_PATTERN.pattern}")
            return self.validate_struct(at, f.get("fields"))
        self.problem(
            at, f"unknown type {t!r}: not a primitive type ({', '.join(_CANONICAL_NAMES)}), "
            "List:X, STRUCT nor a table of the schema"
        )
        return None

    def validate_struct(self, at: str, fields: Any) -> str | None:
        if not isinstance(fields, list) or not fields:
            self.problem(at, f'a STRUCT needs "fields", a non-empty list, got {fields!r}'[:200])
            return None
        self.validate_fields(at, fields, table_level=False)
        return "struct"

    # building ---------------------------------------------------------------------------------

    def build(self) -> dict[str, Type]:
        self.validate()
        if self.problems:
            raise DataMineSchemaError(self.problems, schema=self.label)
        return {name: self.table(name) for name in self.tables}

    def table(self, name: str) -> Type:
        if name in self.records:
            return self.records[name]
        if name in self.building:
            return Ref(name, self.registry)
        self.building.append(name)
        t = self.tables[name]
        doc = t.get("doc", t.get("description"))
        rec = Record(name, self.fields(t["fields"]), doc if isinstance(doc, str) else None)
        self.building.pop()
        self.records[name] = self.registry[name] = rec
        return rec

    def fields(self, fields: list[Any]) -> tuple[Field, ...]:
        return tuple(self.field(f) for f in fields)

    def field(self, f: dict[str, Any]) -> Field:
        raw = f["type"]
        native = raw if isinstance(raw, str) else str(raw.get("type"))
        base = self.type_of(f, raw, native)
        required = _flag(f, "isRequired") is True
        default = f.get("default", NO_DEFAULT)
        if not required:
            null = Primitive("null")
            base = Union((base, null) if default not in (NO_DEFAULT, None) else (null, base))
        props: dict[str, Any] = {"id": f["id"], "isRequired": required}
        for key in CONSTRAINTS[1:]:
            if _flag(f, key) is True:
                props[key] = True
        for key, value in f.items():
            if key not in _FIELD_KEYS:
                props[key] = value
        doc = f.get("doc", f.get("description"))
        return Field(f["name"], base, doc if isinstance(doc, str) else None, default, frozen_props(props))

    def type_of(self, f: dict[str, Any], raw: Any, native: str) -> Type:
        if isinstance(raw, dict):
            return self.struct(raw.get("name", f["name"]), raw["fields"], native)
        if raw.startswith(LIST_PREFIX):
            item = raw[len(LIST_PREFIX):]
            return Array(self.named_or_primitive(item, item), frozen_props({"native_data_type": raw}))
        if raw.upper() == STRUCT and raw not in self.tables:
            return self.struct(f.get("struct", f.get("struct_name", f["name"])), f["fields"], native)
        return self.named_or_primitive(raw, native)

    def named_or_primitive(self, name: str, native: str) -> Type:
        if name.upper() in PRIMITIVE_TYPES:
            avro, _ = PRIMITIVE_TYPES[name.upper()]
            return Primitive(avro, frozen_props({"native_data_type": native}))
        rec = self.table(name)
        if isinstance(rec, Record):  # a copy carrying the type as written (nativeDataType)
            rec = Record(rec.name, rec.fields, rec.doc, frozen_props({"native_data_type": native}))
        return rec

    def struct(self, name: str, fields: list[Any], native: str) -> Record:
        return Record(name, self.fields(fields), None, frozen_props({"native_data_type": native}))
