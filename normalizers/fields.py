"""SchemaField: one normalized field, with the attributes DataHub's SchemaField has."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar

from .errors import SchemaNormalizationError

#: DataHub's field type classes by short name (``StringType`` is ``com.linkedin.schema.StringType``).
TYPE_NAMES = frozenset(
    {
        "BooleanType", "FixedType", "StringType", "BytesType", "NumberType", "DateType", "TimeType",
        "EnumType", "NullType", "MapType", "ArrayType", "UnionType", "RecordType",
    }
)
_TYPE_PREFIXES = ("com.linkedin.schema.", "com.linkedin.pegasus2avro.schema.")

C = TypeVar("C", bound=type)


def pickled_by_fields(cls: C) -> C:
    """Pickle the dataclass ``cls``'s instances as a call of ``cls`` with their field values: a third of the
    default's cost to load (the Kafka worker's decoder processes send every field and change they decode)."""
    names = [f.name for f in fields(cls)]
    get: Callable[[Any], Any] = attrgetter(*names)
    if len(names) == 1:  # attrgetter of one name gives the value, not a tuple of one
        setattr(cls, "__reduce__", lambda self: (cls, (get(self),)))  # noqa: B010 - a method set on a built class
    else:
        setattr(cls, "__reduce__", lambda self: (cls, get(self)))  # noqa: B010
    return cls


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class FieldType:
    """A DataHub ``SchemaFieldDataType``: the class name plus the array/map details."""

    name: str
    nested_type: tuple[str, ...] | None = None  # ArrayType.nestedType (UnionType.nestedTypes)
    key_type: str | None = None  # MapType.keyType
    value_type: str | None = None  # MapType.valueType

    def to_datahub(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if self.nested_type is not None:
            body["nestedTypes" if self.name == "UnionType" else "nestedType"] = list(self.nested_type)
        if self.key_type is not None:
            body["keyType"] = self.key_type
        if self.value_type is not None:
            body["valueType"] = self.value_type
        return {"type": {f"com.linkedin.schema.{self.name}": body}}

    @classmethod
    def from_datahub(cls, obj: dict[str, Any]) -> FieldType:
        """Read ``{"type": {"com.linkedin.schema.X": {...}}}`` (either namespace)."""
        inner = obj.get("type", obj) if isinstance(obj, dict) else None
        if not isinstance(inner, dict) or len(inner) != 1:
            raise SchemaNormalizationError(f"field type must be an object with one type class, got {obj!r}")
        ((qualified, body),) = inner.items()
        name = qualified
        for prefix in _TYPE_PREFIXES:
            if qualified.startswith(prefix):
                name = qualified[len(prefix):]
        if name not in TYPE_NAMES:
            raise SchemaNormalizationError(f"unknown field type class {qualified!r} in {obj!r}")
        body = body or {}
        nested = body.get("nestedTypes" if name == "UnionType" else "nestedType")
        return cls(
            name,
            tuple(nested) if nested is not None else None,
            body.get("keyType"),
            body.get("valueType"),
        )


@pickled_by_fields
@dataclass(slots=True)
class SchemaField:
    """One field of a normalized schema, as DataHub's ``SchemaField`` describes it.

    A plain value (not frozen: building hundreds of thousands of them is the normalizers'
    hot path, and a frozen dataclass costs three times as much to build).
    """

    fieldPath: str
    type: FieldType
    nativeDataType: str
    nullable: bool = False
    description: str | None = None
    recursive: bool = False
    isPartOfKey: bool = False
    jsonProps: str | None = None
    tags: tuple[str, ...] = field(default=())  # tag names, DataHub's globalTags
    #: not DataHub's (never in :meth:`to_datahub`): the names this field had before, as its schema states them
    #: (Avro ``aliases``); a rename is a field whose alias names a field of the previous version
    aliases: tuple[str, ...] = field(default=())
    #: not DataHub's: the field's stable identity among its siblings, as its schema states it (a Protobuf field
    #: number, a Parquet ``field_id``); the same ``fieldId`` under a new name in the next version is a rename
    fieldId: str | None = None

    @property
    def simple_path(self) -> str:
        """The v1 path: the v2 path with its bracket tokens stripped."""
        from .paths import v1_path

        return v1_path(self.fieldPath)

    def to_datahub(self) -> dict[str, Any]:
        """The JSON DataHub puts in a SchemaMetadata aspect, in DataHub's key order."""
        out: dict[str, Any] = {"fieldPath": self.fieldPath, "nullable": self.nullable}
        if self.description is not None:
            out["description"] = self.description
        out["type"] = self.type.to_datahub()
        out["nativeDataType"] = self.nativeDataType
        out["recursive"] = self.recursive
        if self.tags:
            out["globalTags"] = {"tags": [{"tag": f"urn:li:tag:{t}"} for t in self.tags]}
        out["isPartOfKey"] = self.isPartOfKey
        if self.jsonProps is not None:
            out["jsonProps"] = self.jsonProps
        return out

    @classmethod
    def from_datahub(cls, obj: dict[str, Any]) -> SchemaField:
        """Read a SchemaField as it appears in a SchemaMetadata aspect (its texts must be strings)."""
        if not isinstance(obj, dict):
            raise SchemaNormalizationError(f"a SchemaField is an object, got {type(obj).__name__}")
        for name, optional in (("fieldPath", False), ("nativeDataType", True), ("description", True)):
            value = obj.get(name)
            if not isinstance(value, str) and not (optional and value is None):
                raise SchemaNormalizationError(f"{name} must be a string, got {type(value).__name__} {value!r}"[:200])
        try:
            tags = tuple(
                t["tag"].removeprefix("urn:li:tag:") for t in (obj.get("globalTags") or {}).get("tags", [])
            )
            json_props = obj.get("jsonProps")
            if json_props is not None and not isinstance(json_props, str):
                json_props = json.dumps(json_props)
            return cls(
                fieldPath=obj["fieldPath"],
                type=FieldType.from_datahub(obj["type"]),
                nativeDataType=obj.get("nativeDataType") or "",
                nullable=bool(obj.get("nullable", False)),
                description=obj.get("description"),
                recursive=bool(obj.get("recursive", False)),
                isPartOfKey=bool(obj.get("isPartOfKey", False)),
                jsonProps=json_props,
                tags=tags,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise SchemaNormalizationError(f"not a SchemaField: {exc!s} in {obj!r}"[:300]) from exc
