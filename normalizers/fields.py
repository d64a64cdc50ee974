"""SchemaField: one normalized field, with the attributes DataHub's SchemaField has."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields
from operator import attrgetter
from typing import Any, Final, TypeVar, final

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


# FieldType and SchemaField are immutable by contract: plain final classes with ``__slots__``, each attribute
# declared ``Final`` in ``__init__``, so mypy rejects any assignment after it (and the mypyc-compiled build, which
# compiles this module, makes them read-only); a changed field is a new one (:meth:`SchemaField.replace`). Plain
# classes rather than dataclasses, so that mypyc compiles them to native classes; built from source they cost what
# a slotted dataclass does (a frozen dataclass costs three times as much to build, and building hundreds of
# thousands of fields is the normalizers' hot path). They compare equal attribute by attribute, as dataclasses
# do, and pickle as a call with their attributes (a third of the default's cost to load: the Kafka worker's
# decoder processes send every field and change they decode).


_FIELD_TYPE_ATTRS = ("name", "nested_type", "key_type", "value_type")


def _repr(cls: str, names: tuple[str, ...], values: tuple[Any, ...]) -> str:
    """A dataclass's repr: ``cls(name=value, ...)``."""
    return f"{cls}({', '.join(f'{n}={v!r}' for n, v in zip(names, values, strict=True))})"


@final
class FieldType:
    """A DataHub ``SchemaFieldDataType``: the class name plus the array/map details. Immutable by contract (the
    ``Final`` attributes, see above); equal and hashed by value."""

    __slots__ = ("name", "nested_type", "key_type", "value_type")

    def __init__(self, name: str, nested_type: tuple[str, ...] | None = None, key_type: str | None = None,
                 value_type: str | None = None) -> None:
        self.name: Final = name
        self.nested_type: Final = nested_type  # ArrayType.nestedType (UnionType.nestedTypes)
        self.key_type: Final = key_type  # MapType.keyType
        self.value_type: Final = value_type  # MapType.valueType

    def _values(self) -> tuple[Any, ...]:
        return (self.name, self.nested_type, self.key_type, self.value_type)

    def __eq__(self, other: object) -> bool:
        if type(other) is not FieldType:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return _repr("FieldType", _FIELD_TYPE_ATTRS, self._values())

    def __reduce__(self) -> tuple[Any, ...]:
        return (FieldType, self._values())

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


#: SchemaField's attributes, in order
_SCHEMA_FIELD_ATTRS = ("fieldPath", "type", "nativeDataType", "nullable", "description", "recursive", "isPartOfKey",
                      "jsonProps", "tags", "aliases", "fieldId")


@final
class SchemaField:
    """One field of a normalized schema, as DataHub's ``SchemaField`` describes it.

    Immutable by contract, checked by mypy: its attributes are ``Final`` (read-only once compiled); a field that
    differs is a new one (:meth:`replace`, :meth:`identified`). Equal by value, not hashable."""

    __slots__ = ("fieldPath", "type", "nativeDataType", "nullable", "description", "recursive", "isPartOfKey",
                 "jsonProps", "tags", "aliases", "fieldId")

    def __init__(self, fieldPath: str, type: FieldType, nativeDataType: str, nullable: bool = False,
                 description: str | None = None, recursive: bool = False, isPartOfKey: bool = False,
                 jsonProps: str | None = None, tags: tuple[str, ...] = (), aliases: tuple[str, ...] = (),
                 fieldId: str | None = None) -> None:
        self.fieldPath: Final = fieldPath
        self.type: Final = type
        self.nativeDataType: Final = nativeDataType
        self.nullable: Final = nullable
        self.description: Final = description
        self.recursive: Final = recursive
        self.isPartOfKey: Final = isPartOfKey
        self.jsonProps: Final = jsonProps
        self.tags: Final = tags  # tag names, DataHub's globalTags
        #: not DataHub's (never in :meth:`to_datahub`): the names this field had before, as its schema states them
        #: (Avro ``aliases``); a rename is a field whose alias names a field of the previous version
        self.aliases: Final = aliases
        #: not DataHub's: the field's stable identity among its siblings, as its schema states it (a Protobuf field
        #: number, a Parquet ``field_id``); the same ``fieldId`` under a new name in the next version is a rename
        self.fieldId: Final = fieldId

    def _values(self) -> tuple[Any, ...]:
        return (self.fieldPath, self.type, self.nativeDataType, self.nullable, self.description, self.recursive,
                self.isPartOfKey, self.jsonProps, self.tags, self.aliases, self.fieldId)

    def __eq__(self, other: object) -> bool:
        if type(other) is not SchemaField:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # equal by value, and not hashed (as a dataclass that is not frozen)

    def __repr__(self) -> str:
        return _repr("SchemaField", _SCHEMA_FIELD_ATTRS, self._values())

    def __reduce__(self) -> tuple[Any, ...]:
        return (SchemaField, self._values())

    def replace(self, **changes: Any) -> SchemaField:
        """This field with the attributes ``changes`` names changed (a new field: this one stays as it is)."""
        values = dict(zip(_SCHEMA_FIELD_ATTRS, self._values(), strict=True))
        values.update(changes)
        return SchemaField(**values)

    def identified(self, aliases: tuple[str, ...], field_id: str | None) -> SchemaField:
        """This field with the identity its schema states (``aliases``, ``fieldId``) in place of its own."""
        return SchemaField(self.fieldPath, self.type, self.nativeDataType, self.nullable, self.description,
                           self.recursive, self.isPartOfKey, self.jsonProps, self.tags, aliases, field_id)

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
