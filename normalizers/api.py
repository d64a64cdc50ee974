"""``normalize(schema, format)``: any supported schema -> DataHub SchemaFields."""

from __future__ import annotations

from typing import Any, Callable

from .errors import SchemaNormalizationError
from .fields import SchemaField
from .model import Type
from .visitor import walk

#: format name -> converter from the user's schema to the type model.
CONVERTERS: dict[str, Callable[..., Type]] = {}


def register(name: str) -> Callable[[Callable[..., Type]], Callable[..., Type]]:
    def deco(fn: Callable[..., Type]) -> Callable[..., Type]:
        CONVERTERS[name] = fn
        return fn

    return deco


def _avro(schema: Any, name: str | None = None) -> Type:
    from .avro import parse_avro

    return parse_avro(schema, name=name)


CONVERTERS["avro"] = _avro


def to_model(schema: Any, format: str = "avro", *, name: str | None = None) -> Type:
    try:
        convert = CONVERTERS[format]
    except KeyError:
        raise SchemaNormalizationError(
            f"unknown schema format {format!r}; known formats: {', '.join(sorted(CONVERTERS))}", schema=name
        ) from None
    return convert(schema, name=name)


def normalize(schema: Any, format: str = "avro", *, key: bool = False, name: str | None = None) -> list[SchemaField]:
    """The fields of ``schema`` (text, bytes or a parsed object), as DataHub would emit them.

    ``key`` marks a key schema (``[key=True]`` paths, ``isPartOfKey``). ``name`` is used in
    error messages (a file name, say) when the schema does not name itself.
    """
    return walk(to_model(schema, format, name=name), key=key)
