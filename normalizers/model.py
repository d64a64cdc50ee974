"""The one internal schema type model every schema format converts into.

Immutable nodes: :class:`Record` (record/struct), :class:`Union`, :class:`Array`,
:class:`Map`, :class:`Enum`, :class:`Fixed`, :class:`Primitive` (with an optional
logical type) and :class:`Ref`, the leaf that closes a recursive type by naming a
record defined further up. ``props`` holds a format's extra attributes (Avro's
non-reserved properties, in order); they surface as a field's ``jsonProps``. ``hints``
(:class:`WalkHints`) tell the walk how a format DataHub renders by other rules differs.

The shapes follow Avro's, because DataHub's field paths are defined over Avro:
other formats map onto them the way DataHub's own converters do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast, dataclass_transform, final

if TYPE_CHECKING:
    from .fields import FieldType

EMPTY: Mapping[str, Any] = MappingProxyType({})

#: Primitive type names, as in Avro.
PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")


def frozen_props(props: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(props)) if props else EMPTY


_C = TypeVar("_C", bound=type)


@dataclass_transform(frozen_default=True, eq_default=False, field_specifiers=(field,))
def node(cls: _C) -> _C:
    """A type-model class: immutable by contract (mypy rejects assignments, as for a frozen dataclass), but
    built as a plain slotted dataclass. A frozen dataclass's ``__init__`` goes through
    ``object.__setattr__`` for each attribute, which makes it four times as slow to build, and a parse
    builds one node per field."""
    return cast(_C, dataclass(slots=True, eq=False)(cls))


class _NoDefault:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True, slots=True)
class WalkHints:
    """How the walk treats a node beyond what its Avro shape says.

    Set by converters of formats DataHub renders by rules other than Avro's (Protobuf,
    JSON Schema); Avro nodes carry none.
    """

    token: str | None = None  # the path token ``[type=TOKEN]`` instead of the name's last part
    field_type: FieldType | None = None  # a ``fields.FieldType`` emitted instead of the computed one
    recursive: bool = False  # a record: emit its field marked recursive, without children
    bare: bool = False  # the root record: no token of its own; its fields are top-level fields
    part_of_key: bool | None = None  # the root: isPartOfKey of a key schema's fields (default: True)
    # JSON Schema: the converter decides every emitted attribute itself.
    # a mapping of SchemaField attributes for the field emitted at this node, used as is
    emitted: Mapping[str, Any] | None = None
    silent: bool = False  # the node emits no field of its own where the walk would emit one
    null_members: bool = False  # a union: its nulls are plain members ([null, T] is not T's option)


NO_HINTS = WalkHints()


class _Type:
    """What every type node answers: its logical type (Avro's ``logicalType`` property, as given)."""

    __slots__ = ()
    props: Mapping[str, Any]

    @property
    def logical_type(self) -> Any:
        return self.props.get("logicalType")


@final
@node
class Primitive(_Type):
    name: str  # one of PRIMITIVES
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    hints: WalkHints = NO_HINTS

    @property
    def type(self) -> str:
        return self.name


@final
@node
class Enum(_Type):
    name: str  # full name
    symbols: tuple[str, ...]
    doc: str | None = None
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    hints: WalkHints = NO_HINTS

    type = "enum"


@final
@node
class Fixed(_Type):
    name: str  # full name
    size: int
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    hints: WalkHints = NO_HINTS

    type = "fixed"


@final
@node
class Field:
    """A member of a record."""

    name: str
    type: Type
    doc: str | None = None
    default: Any = NO_DEFAULT
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    hints: WalkHints = NO_HINTS
    #: the names the field had before, as its schema states them (Avro field ``aliases``): its fields' ``aliases``
    aliases: tuple[str, ...] = ()
    #: the field's stable id among its siblings, as its schema states it (a Protobuf field number, a Parquet
    #: ``field_id``), as a decimal string: its fields' ``fieldId``
    field_id: str | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@final
@node
class Record(_Type):
    name: str  # full name (namespace.name)
    fields: tuple[Field, ...]
    doc: str | None = None
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    hints: WalkHints = NO_HINTS

    type = "record"


@final
@node
class Array(_Type):
    items: Type
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    hints: WalkHints = NO_HINTS

    type = "array"


@final
@node
class Map(_Type):
    values: Type
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    hints: WalkHints = NO_HINTS

    type = "map"


@final
@node
class Union(_Type):
    members: tuple[Type, ...]
    props: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    hints: WalkHints = NO_HINTS

    type = "union"

    @property
    def logical_type(self) -> Any:
        return None


@final
@node
class Ref:
    """A reference to the record ``name``, closing a recursive type.

    ``registry`` maps full names to the records of the schema the reference belongs to;
    it is filled once the schema is fully read.
    """

    name: str
    registry: Mapping[str, Record] = field(repr=False, default_factory=lambda: EMPTY)

    @property
    def target(self) -> Record:
        return self.registry[self.name]


#: A type node that is not a reference: what :func:`deref` gives.
Node: TypeAlias = Primitive | Enum | Fixed | Record | Array | Map | Union
#: Any type node, a :class:`Ref` included.
Type: TypeAlias = Node | Ref
#: The node classes, for ``isinstance``. They are final: the walk tells them apart by ``type(node) is``.
TYPE_CLASSES = (Primitive, Enum, Fixed, Record, Array, Map, Union, Ref)


def deref(node: Type) -> Node:
    """The node itself, or the record a :class:`Ref` names."""
    return node.target if type(node) is Ref else node
