"""Struct-shaped schemas (Arrow, Parquet, Spark) -> the type model, DataHub's SQL/Spark way.

DataHub renders the struct types of its SQL and Spark sources (Hive, Glue, Delta Lake,
Unity Catalog, Athena, Redshift) with ``datahub.utilities.hive_schema_to_avro``: each
struct becomes an Avro record named ``__struct_<uuid>`` (a union's struct member
``__structn_<seq>_<uuid>``), arrays and maps become Avro arrays and maps, primitives carry
``native_data_type`` and ``_nullable``, and the Avro converter walks the result. The
builders here make the same nodes, so the one walk gives the same paths:

* the anonymous root and every nested struct render as ``[type=struct]`` (names
  ``__struct_`` for the root, ``__struct_<n>`` below it: unique, so the walk's recursion
  bookkeeping never mistakes two structs for one);
* lists render as ``[type=array]``, one token per level; maps as ``[type=map]`` followed by
  the value type, and, as in DataHub, the map's key is described in ``jsonProps``
  (``key_type``, ``key_native_data_type``);
* the source's own type text goes to ``props["native_data_type"]`` (-> ``nativeDataType``);
* date and timestamp logical types make ``DateType`` / ``TimeType``; decimals are
  ``bytes`` with ``logicalType: decimal``, ``precision`` and ``scale`` (as DataHub's);
* nullability is ``props["_nullable"]`` on the field's type node (-> ``nullable``).

Where this differs from DataHub's hive-column rendering (by the issue's type rules, or
because the source says more than a Hive type string): nullability comes from the
schema (DataHub says ``true`` for every primitive and ``false`` for every complex type),
binary is ``bytes`` (Hive: ``string``), timestamps are ``long`` (Hive: ``int``), and types
the Hive parser does not know (intervals, ``timestamp_ntz``, unsigned ints...) get a real
type instead of ``null``.

Top-level layout: walked whole (:func:`~.visitor.walk`), the root is one anonymous struct, so a
top-level primitive column is ``[version=2.0].[type=struct].[type=int].a``. DataHub's sources
convert column by column instead, and a primitive column there has no root token
(``[version=2.0].[type=int].a``); complex columns are the same both ways.
:func:`column_fields` gives DataHub's column-by-column layout, byte for byte, and
:func:`fieldgraph.normalizers.normalize` uses it for the roots these builders make (:func:`is_table`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeGuard

from .errors import SchemaNormalizationError
from .fields import SchemaField
from .model import NO_HINTS, Array, Field, Fixed, Map, Primitive, Record, Type, Union, WalkHints, deref, frozen_props
from .visitor import walk

ROOT_NAME = "__struct_"
#: The hints of a table's root (Arrow, Parquet, Spark), which mark it as a table of columns (see :func:`is_table`).
#: Its token renders the root as its name does (``[type=struct]``), so walked as a record it is the same.
TABLE_HINTS = WalkHints(token="struct")


def is_table(model: Type) -> TypeGuard[Record]:
    """Whether ``model`` is a table of columns, laid out by :func:`column_fields`: a root the builders made.

    Its name does not say it: an Avro record may be named ``__struct_`` too (DataHub's Hive bridge writes such
    schemas), and DataHub walks that one as the record it is (``[type=struct]`` before every field). The
    builders give their roots :data:`TABLE_HINTS` itself (the very object: hints compare by identity)."""
    return type(model) is Record and model.name == ROOT_NAME and model.hints is TABLE_HINTS


class StructBuilder:
    """Makes the nodes of one struct-shaped schema; numbers its structs."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    # -- leaves ---------------------------------------------------------------------------
    @staticmethod
    def primitive(avro: str, native: str, nullable: bool, logical: str | None = None,
                  **extra: Any) -> Primitive:
        """An Avro primitive ``avro`` (``int``, ``long``, ``string``...)."""
        props: dict[str, Any] = {}
        if logical is not None:
            props["logicalType"] = logical
        props.update(extra)
        props["native_data_type"] = native
        props["_nullable"] = nullable
        return Primitive(avro, frozen_props(props))

    def decimal(self, precision: int, scale: int, native: str, nullable: bool) -> Primitive:
        return self.primitive("bytes", native, nullable, "decimal", precision=precision, scale=scale)

    def fixed(self, size: int, native: str, nullable: bool) -> Fixed:
        self.count += 1
        return Fixed(f"__fixed_{self.count}", size,
                     frozen_props({"native_data_type": native, "_nullable": nullable}))

    # -- containers -----------------------------------------------------------------------
    def struct(self, fields: Iterable[Field], native: str, nullable: bool, *,
               root: bool = False, union_seq: int | None = None, where: str = "") -> Record:
        fields = tuple(fields)
        _check_names(fields, where)
        if root:
            name = ROOT_NAME
        else:
            self.count += 1
            name = f"__struct_{self.count}" if union_seq is None else f"__structn_{union_seq}_{self.count}"
        props: dict[str, Any] = {"native_data_type": native}
        if nullable:
            props["_nullable"] = True
        return Record(name, fields, None, frozen_props(props), TABLE_HINTS if root else NO_HINTS)

    @staticmethod
    def array(items: Type, native: str, nullable: bool) -> Array:
        return Array(items, frozen_props({"native_data_type": native, "_nullable": nullable}))

    @staticmethod
    def map(key: Type, values: Type, native: str, key_native: str, nullable: bool) -> Map:
        props = {
            "native_data_type": native,
            "key_type": hive_json(key),
            "key_native_data_type": key_native,
            "_nullable": nullable,
        }
        return Map(values, frozen_props(props))

    @staticmethod
    def union(members: Iterable[Type], native: str) -> Union:
        return Union(tuple(members), frozen_props({"native_data_type": native}))

    @staticmethod
    def field(name: str, type_: Type, doc: str | None = None, field_id: str | None = None) -> Field:
        """A struct field; ``field_id``: its stable id, as the schema states it (Parquet's ``field_id``)."""
        if field_id is not None:
            return Field(name, type_, doc or None, field_id=field_id)
        return Field(name, type_, doc or None)


def _check_names(fields: tuple[Field, ...], where: str) -> None:
    seen: set[str] = set()
    for f in fields:
        at = f"{where}.{f.name}" if where else f.name
        if not f.name:
            raise SchemaNormalizationError("a struct field needs a non-empty name", path=where or "<root>")
        if f.name in seen:
            raise SchemaNormalizationError(
                f"field name {f.name!r} is used twice in the same struct (field paths would clash)", path=at
            )
        seen.add(f.name)


def hive_json(node: Type) -> dict[str, Any] | list[Any]:
    """A node as the Avro-ish JSON DataHub's hive parser makes (for a map's ``key_type``)."""
    node = deref(node)
    props = dict(node.props)
    native = props.pop("native_data_type", None)
    nullable = props.pop("_nullable", None)
    match node:
        case Primitive():
            out: dict[str, Any] = {"type": node.name, **props}
        case Fixed():
            out = {"type": "fixed", "name": node.name, "size": node.size, **props}
        case Record():
            out = {"type": "record", "name": node.name,
                   "fields": [{"name": f.name, "type": hive_json(f.type)} for f in node.fields]}
        case Array():
            out = {"type": "array", "items": hive_json(node.items)}
        case Map():
            out = {"type": "map", "values": hive_json(node.values), **props}
        case Union():
            return [hive_json(m) for m in node.members]
        case _:  # pragma: no cover - the builders make no other kinds
            out = {"type": node.type}
    if native is not None:
        out["native_data_type"] = native
    if isinstance(node, (Primitive, Fixed)):
        out["_nullable"] = True  # the hive parser marks every primitive nullable
    elif nullable:
        out["_nullable"] = True
    return out


def column_fields(root: Record, *, key: bool = False) -> list[SchemaField]:
    """DataHub's column-by-column layout of a struct-shaped schema (its Delta/Glue/Unity sources).

    Each top-level column is converted on its own, as ``get_schema_fields_for_hive_column``
    does: a complex column is wrapped in an anonymous ``__struct_`` record, a primitive one
    is walked alone and its name appended to the path; a column's comment goes on its first
    field.
    """
    out: list[SchemaField] = []
    for col in root.fields:
        node = deref(col.type)
        if isinstance(node, (Record, Array, Map, Union)):
            out.extend(walk(Record(ROOT_NAME, (col,)), key=key))
            continue
        first, *rest = walk(node, key=key)
        first = first.replace(fieldPath=f"{first.fieldPath}.{col.name}", description=col.doc or first.description)
        if col.field_id is not None or col.aliases:
            first = first.identified(col.aliases, col.field_id)
        out.append(first)
        out.extend(rest)
    return out


def type_error(where: str, reason: str) -> SchemaNormalizationError:
    return SchemaNormalizationError(reason, path=where or "<root>")

