"""``normalize(schema, format)``: any supported schema -> DataHub SchemaFields."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from fieldgraph.bulk import gc_paused

from .errors import SchemaNormalizationError, require
from .fields import SchemaField
from .model import Type
from .struct import column_fields, is_table
from .visitor import walk

#: format name -> converter from the user's schema to the type model.
CONVERTERS: dict[str, Callable[..., Type]] = {}


def register(name: str) -> Callable[[Callable[..., Type]], Callable[..., Type]]:
    def deco(fn: Callable[..., Type]) -> Callable[..., Type]:
        CONVERTERS[name] = fn
        return fn

    return deco


def _lazy(fmt: str, module: str, function: str, needs: tuple[str, ...]) -> Callable[..., Type]:
    """A converter imported on first use, so optional dependencies (``needs``, the ``formats`` extra) load
    only when needed, and a missing one says which extra to install."""

    def convert(schema: Any, *, name: str | None = None, **options: Any) -> Type:
        from importlib import import_module

        for dependency in needs:
            require(dependency, "formats", f"the {fmt} normalizer")
        converter: Callable[..., Type] = getattr(import_module(f"fieldgraph.normalizers.{module}"), function)
        if not needs:  # loaded, and nothing to check on each call: later calls go straight to it
            CONVERTERS[fmt] = converter
        return converter(schema, name=name, **options)

    convert.__name__ = function
    return convert


_PROTOC = ("google.protobuf", "grpc_tools")
for _fmt, _module, _function, _needs in (
    ("avro", "avro", "parse_avro", ()),
    ("json-schema", "jsonschema", "parse_json_schema", ()),
    ("protobuf", "protobuf", "parse_protobuf", _PROTOC),
    ("arrow", "arrow", "parse_arrow", ("pyarrow",)),
    ("parquet", "arrow", "parse_parquet", ("pyarrow",)),
    ("spark", "spark", "parse_spark", ()),
    ("datamine", "datamine", "parse_datamine", ()),
):
    CONVERTERS[_fmt] = _lazy(_fmt, _module, _function, _needs)


def to_model(schema: Any, format: str = "avro", *, name: str | None = None, **options: Any) -> Type:
    try:
        convert = CONVERTERS[format]
    except KeyError as exc:
        raise SchemaNormalizationError(
            f"unknown schema format {format!r}; known formats: {', '.join(sorted(CONVERTERS))}", schema=name
        ) from exc
    return convert(schema, name=name, **options)


def normalize(
    schema: Any, format: str = "avro", *, key: bool = False, name: str | None = None, **options: Any
) -> list[SchemaField]:
    """The fields of ``schema`` (text, bytes or a parsed object), as DataHub would emit them.

    ``key`` marks a key schema (``[key=True]`` paths, ``isPartOfKey``). ``name`` is used in
    error messages (a file name, say) when the schema does not name itself. Other keyword
    ``options`` go to the format's converter (Protobuf: ``message``, ``imports``, ``import_paths``;
    DataMine: ``table``).
    """
    with gc_paused():
        return fields_of(to_model(schema, format, name=name, **options), key=key, name=name)


def normalize_text(text: str, format: str = "avro", *, key: bool = False,
                   name: str | None = None) -> tuple[SchemaField, ...]:
    """:func:`normalize` for schema text, remembering the last :data:`TEXT_CACHE_SIZE` schemas' fields by their
    text (the text is the fingerprint: equal text, equal fields), for streams that send one schema over and
    over (every DataHub schema event carries its document). The fields are shared between the callers that
    asked for the same text: a tuple, not to be changed. A schema that fails is not remembered."""
    return _normalize_text(text, format, key, name)


#: schemas :func:`normalize_text` remembers (least recently used first out)
TEXT_CACHE_SIZE = 256


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def _normalize_text(text: str, format: str, key: bool, name: str | None) -> tuple[SchemaField, ...]:
    return tuple(normalize(text, format, key=key, name=name))


def fields_of(model: Type, *, key: bool = False, name: str | None = None) -> list[SchemaField]:
    """The fields of a type model, as :func:`normalize` gives them (every caller that lists a model's fields
    goes through here, so a table's columns are laid out the same way everywhere)."""
    try:
        if is_table(model):
            # A table of columns (Arrow, Parquet, Spark): DataHub lays these out column by column.
            return column_fields(model, key=key)
        return walk(model, key=key)
    except RecursionError:
        raise SchemaNormalizationError("schema nests too deeply to walk", schema=name) from None
