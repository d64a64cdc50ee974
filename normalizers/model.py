"""The one internal schema type model every schema format converts into.

Immutable nodes: :class:`Record` (record/struct), :class:`Union`, :class:`Array`,
:class:`Map`, :class:`Enum`, :class:`Fixed`, :class:`Primitive` (with an optional
logical type) and :class:`Ref`, the leaf that closes a recursive type by naming a
record defined further up. ``props`` holds a format's extra attributes (Avro's
non-reserved properties, in order); they surface as a field's ``jsonProps``. ``hints``
(:class:`WalkHints`) tell the walk how a format DataHub renders by other rules differs.

The shapes follow Avro's, because DataHub's field paths are defined over Avro:
other formats map onto them the way DataHub's own converters do.

Immutable by contract, checked by mypy: each class is a plain ``@final`` class with ``__slots__`` whose
attributes are declared ``Final`` in ``__init__`` (mypy rejects any assignment after it; compiled by mypyc, they
are read-only attributes of a native class). Nodes compare by identity.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeAlias, final

if TYPE_CHECKING:
    from .fields import FieldType

EMPTY: Mapping[str, Any] = MappingProxyType({})

#: Primitive type names, as in Avro.
PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")


def frozen_props(props: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(props)) if props else EMPTY


# Plain classes rather than dataclasses: mypyc compiles them to native classes (the compiled build), and built
# from source they cost what a slotted dataclass does (a frozen dataclass's ``__init__`` goes through
# ``object.__setattr__`` for each attribute, four times as slow, and a parse builds one node per field).


class _NoDefault:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@final
class WalkHints:
    """How the walk treats a node beyond what its Avro shape says.

    Set by converters of formats DataHub renders by rules other than Avro's (Protobuf,
    JSON Schema); Avro nodes carry none.
    """

    __slots__ = ("token", "field_type", "recursive", "bare", "part_of_key", "emitted", "silent", "null_members")

    def __init__(self, token: str | None = None, field_type: FieldType | None = None, recursive: bool = False,
                 bare: bool = False, part_of_key: bool | None = None, emitted: Mapping[str, Any] | None = None,
                 silent: bool = False, null_members: bool = False) -> None:
        self.token: Final = token  # the path token ``[type=TOKEN]`` instead of the name's last part
        self.field_type: Final = field_type  # a ``fields.FieldType`` emitted instead of the computed one
        self.recursive: Final = recursive  # a record: emit its field marked recursive, without children
        self.bare: Final = bare  # the root record: no token of its own; its fields are top-level fields
        self.part_of_key: Final = part_of_key  # the root: isPartOfKey of a key schema's fields (default: True)
        # JSON Schema: the converter decides every emitted attribute itself.
        # a mapping of SchemaField attributes for the field emitted at this node, used as is: type and
        # nativeDataType, and any of nullable, description, recursive, jsonProps, tags
        self.emitted: Final = emitted
        self.silent: Final = silent  # the node emits no field of its own where the walk would emit one
        self.null_members: Final = null_members  # a union: its nulls are plain members ([null, T] is not T's option)


NO_HINTS = WalkHints()


class _Type:
    """What every type node answers: its logical type (Avro's ``logicalType`` property, as given)."""

    __slots__ = ()

    @property
    def props(self) -> Mapping[str, Any]:
        """The format's extra attributes (each node class sets its own)."""
        raise NotImplementedError

    @property
    def logical_type(self) -> Any:
        return self.props.get("logicalType")


@final
class Primitive(_Type):
    __slots__ = ("name", "props", "hints")

    def __init__(self, name: str, props: Mapping[str, Any] = EMPTY, hints: WalkHints = NO_HINTS) -> None:
        self.name: Final = name  # one of PRIMITIVES
        self.props: Final = props
        self.hints: Final = hints

    @property
    def type(self) -> str:
        return self.name


@final
class Enum(_Type):
    __slots__ = ("name", "symbols", "doc", "props", "hints")
    type: Final = "enum"

    def __init__(self, name: str, symbols: tuple[str, ...], doc: str | None = None,
                 props: Mapping[str, Any] = EMPTY, hints: WalkHints = NO_HINTS) -> None:
        self.name: Final = name  # full name
        self.symbols: Final = symbols
        self.doc: Final = doc
        self.props: Final = props
        self.hints: Final = hints


@final
class Fixed(_Type):
    __slots__ = ("name", "size", "props", "hints")
    type: Final = "fixed"

    def __init__(self, name: str, size: int, props: Mapping[str, Any] = EMPTY, hints: WalkHints = NO_HINTS) -> None:
        self.name: Final = name  # full name
        self.size: Final = size
        self.props: Final = props
        self.hints: Final = hints


@final
class Field:
    """A member of a record."""

    __slots__ = ("name", "type", "doc", "default", "props", "hints", "aliases", "field_id")

    def __init__(self, name: str, type: Type, doc: str | None = None, default: Any = NO_DEFAULT,
                 props: Mapping[str, Any] = EMPTY, hints: WalkHints = NO_HINTS, aliases: tuple[str, ...] = (),
                 field_id: str | None = None) -> None:
        self.name: Final = name
        self.type: Final = type
        self.doc: Final = doc
        self.default: Final = default
        self.props: Final = props
        self.hints: Final = hints
        #: the names the field had before, as its schema states them (Avro field ``aliases``): its fields'
        #: ``aliases``
        self.aliases: Final = aliases
        #: the field's stable id among its siblings, as its schema states it (a Protobuf field number, a Parquet
        #: ``field_id``), as a decimal string: its fields' ``fieldId``
        self.field_id: Final = field_id

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@final
class Record(_Type):
    __slots__ = ("name", "fields", "doc", "props", "hints")
    type: Final = "record"

    def __init__(self, name: str, fields: tuple[Field, ...], doc: str | None = None,
                 props: Mapping[str, Any] = EMPTY, hints: WalkHints = NO_HINTS) -> None:
        self.name: Final = name  # full name (namespace.name)
        self.fields: Final = fields
        self.doc: Final = doc
        self.props: Final = props
        self.hints: Final = hints


@final
class Array(_Type):
    __slots__ = ("items", "props", "hints")
    type: Final = "array"

    def __init__(self, items: Type, props: Mapping[str, Any] = EMPTY, hints: WalkHints = NO_HINTS) -> None:
        self.items: Final = items
        self.props: Final = props
        self.hints: Final = hints


@final
class Map(_Type):
    __slots__ = ("values", "props", "hints")
    type: Final = "map"

    def __init__(self, values: Type, props: Mapping[str, Any] = EMPTY, hints: WalkHints = NO_HINTS) -> None:
        self.values: Final = values
        self.props: Final = props
        self.hints: Final = hints


@final
class Union(_Type):
    __slots__ = ("members", "props", "hints")
    type: Final = "union"

    def __init__(self, members: tuple[Type, ...], props: Mapping[str, Any] = EMPTY,
                 hints: WalkHints = NO_HINTS) -> None:
        self.members: Final = members
        self.props: Final = props
        self.hints: Final = hints

    @property
    def logical_type(self) -> Any:
        return None


@final
class Ref:
    """A reference to the record ``name``, closing a recursive type.

    ``registry`` maps full names to the records of the schema the reference belongs to;
    it is filled once the schema is fully read.
    """

    __slots__ = ("name", "registry")

    def __init__(self, name: str, registry: Mapping[str, Record] = EMPTY) -> None:
        self.name: Final = name
        self.registry: Final = registry

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
