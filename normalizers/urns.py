"""Dataset and field URNs, with DataHub's percent-encoding of reserved characters.

- dataset: ``urn:li:dataset:(urn:li:dataPlatform:kafka,demo.orders,PROD)``
- field (RFC): ``urn:li:datasetField:(<datasetUrn>,<fieldPath>)``
- field (DataHub today): ``urn:li:schemaField:(<datasetUrn>,<fieldPath>)``

Names and field paths have ``,`` ``(`` ``)`` and ``␟`` percent-encoded, as DataHub's
``UrnEncoder`` does, so the parentheses that delimit the URN stay unambiguous.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote

from .errors import InputError, UrnError

_RESERVED = frozenset(",()␟")
_ENCODED = {c: quote(c) for c in _RESERVED}
FIELD_ENTITY_TYPES = ("datasetField", "schemaField")


def encode(value: str) -> str:
    """Percent-encode DataHub's reserved URN characters (and nothing else)."""
    if _RESERVED.isdisjoint(value):
        return value
    return "".join(_ENCODED.get(c, c) for c in value)


def decode(value: str) -> str:
    """Undo :func:`encode` (only the reserved characters are decoded)."""
    if "%" not in value:
        return value
    out = value
    for char, enc in _ENCODED.items():
        out = out.replace(enc, char).replace(enc.lower(), char)
    return out


#: the characters that delimit a tuple id's parts
_DELIMITERS = re.compile("[(),]")


def _split_ids(urn: str, body: str) -> list[str]:
    """Split ``a,(b,c),d`` on top-level commas (only the delimiters are visited: URNs are long)."""
    if "(" not in body and ")" not in body:
        return body.split(",")
    parts: list[str] = []
    depth = 0
    start = 0
    for m in _DELIMITERS.finditer(body):
        ch = m.group()
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise UrnError(urn, "unbalanced parentheses")
        elif depth == 0:
            parts.append(body[start:m.start()])
            start = m.end()
    if depth:
        raise UrnError(urn, "unbalanced parentheses")
    parts.append(body[start:])
    return parts


def _entity(urn: str) -> tuple[str, list[str]]:
    if not isinstance(urn, str) or not urn.startswith("urn:li:"):
        raise UrnError(str(urn), "a URN starts with 'urn:li:'")
    rest = urn[len("urn:li:"):]
    entity, sep, ids = rest.partition(":")
    if not sep or not entity or not ids:
        raise UrnError(urn, "expected urn:li:<entityType>:<id>")
    if ids.startswith("("):
        if not ids.endswith(")"):
            raise UrnError(urn, "a tuple id must end with ')'")
        return entity, _split_ids(urn, ids[1:-1])
    return entity, [ids]


@dataclass(frozen=True, slots=True)
class DatasetUrn:
    platform: str  # short platform name, e.g. "kafka"
    name: str  # decoded dataset name
    env: str = "PROD"

    def __post_init__(self) -> None:
        for attr in ("platform", "name", "env"):
            if not getattr(self, attr):
                raise UrnError(f"{self.platform},{self.name},{self.env}", f"dataset {attr} is empty")

    @classmethod
    def parse(cls, urn: str) -> DatasetUrn:
        """``urn`` read (:class:`UrnError` if it is not a dataset URN). Ingest reads the same few URNs over and
        over: the last :data:`PARSED_CACHE_SIZE` are remembered (the values are immutable)."""
        if not isinstance(urn, str):
            raise UrnError(str(urn), "a URN starts with 'urn:li:'")
        return _parse_dataset(urn)

    @classmethod
    def _parse(cls, urn: str) -> DatasetUrn:
        entity, ids = _entity(urn)
        if entity != "dataset":
            raise UrnError(urn, f"expected a dataset URN, got entity type {entity!r}")
        if len(ids) != 3:
            raise UrnError(urn, f"a dataset URN has 3 parts (platform,name,env), got {len(ids)}")
        platform, name, env = ids
        if platform.startswith("urn:li:dataPlatform:"):
            platform = platform[len("urn:li:dataPlatform:"):]
        elif platform.startswith("urn:li:"):
            raise UrnError(urn, f"platform {platform!r} is not a dataPlatform URN")
        if not platform or not name or not env:
            raise UrnError(urn, "platform, name and env must all be non-empty")
        return cls(platform, decode(name), env)

    def __str__(self) -> str:
        return f"urn:li:dataset:(urn:li:dataPlatform:{self.platform},{encode(self.name)},{self.env.upper()})"

    @property
    def urn(self) -> str:
        return str(self)


@dataclass(frozen=True, slots=True)
class FieldUrn:
    """A field of a dataset; ``field_path`` is decoded (v2, v1 or slash form, as given)."""

    dataset: DatasetUrn
    field_path: str

    @classmethod
    def parse(cls, urn: str) -> FieldUrn:
        """``urn`` read (:class:`UrnError` if it is not a field URN); the last :data:`PARSED_CACHE_SIZE` are
        remembered, as dataset URNs are."""
        if not isinstance(urn, str):
            raise UrnError(str(urn), "a URN starts with 'urn:li:'")
        return _parse_field(urn)

    @classmethod
    def _parse(cls, urn: str) -> FieldUrn:
        entity, ids = _entity(urn)
        if entity not in FIELD_ENTITY_TYPES:
            raise UrnError(urn, f"expected a datasetField or schemaField URN, got entity type {entity!r}")
        if len(ids) != 2:
            raise UrnError(urn, f"a field URN has 2 parts (datasetUrn,fieldPath), got {len(ids)}")
        dataset, path = ids
        if not path:
            raise UrnError(urn, "empty field path")
        return cls(DatasetUrn.parse(dataset), decode(path))

    @property
    def dataset_field_urn(self) -> str:
        """The RFC form: ``urn:li:datasetField:(<datasetUrn>,<fieldPath>)``."""
        return f"urn:li:datasetField:({self.dataset},{encode(self.field_path)})"

    @property
    def schema_field_urn(self) -> str:
        """DataHub's current form: ``urn:li:schemaField:(<datasetUrn>,<fieldPath>)``."""
        return f"urn:li:schemaField:({self.dataset},{encode(self.field_path)})"

    def __str__(self) -> str:
        return self.dataset_field_urn


#: URNs of each kind whose parse is remembered (about 20 MB for field URNs when full)
PARSED_CACHE_SIZE = 1 << 16
_parse_dataset = lru_cache(maxsize=PARSED_CACHE_SIZE)(DatasetUrn._parse)
_parse_field = lru_cache(maxsize=PARSED_CACHE_SIZE)(FieldUrn._parse)


def make_dataset_urn(platform: str, name: str, env: str = "PROD") -> str:
    return str(DatasetUrn(platform, name, env))


def make_field_urn(dataset_urn: str, field_path: str, *, form: str = "datasetField") -> str:
    """The URN of field ``field_path`` of a dataset: the dataset URN canonical, the path percent-encoded.
    The one field-URN builder (hot while ingesting, so the dataset's canonical form is cached)."""
    if form not in FIELD_ENTITY_TYPES:
        raise InputError(f"make_field_urn: form must be one of {', '.join(FIELD_ENTITY_TYPES)}, got {form!r}")
    return f"urn:li:{form}:({canonical_dataset_urn(dataset_urn)},{encode(field_path)})"


@lru_cache(maxsize=1 << 14)
def canonical_dataset_urn(urn: str) -> str:
    """``urn`` as :class:`DatasetUrn` prints it (raises :class:`UrnError` when it is not a dataset URN)."""
    return str(DatasetUrn.parse(urn))


_FIELD_PREFIXES = ("urn:li:schemaField:(urn:li:dataset:(", "urn:li:datasetField:(urn:li:dataset:(")


@lru_cache(maxsize=PARSED_CACHE_SIZE)
def parse_field_ref(ref: str) -> tuple[str, str]:
    """(canonical dataset URN, decoded field path) of a field URN (:class:`UrnError` if it is not one), as
    :meth:`FieldUrn.parse` reads it; cached, with a fast path for the usual
    ``urn:li:<datasetField|schemaField>:(urn:li:dataset:(...),<path>)`` shape."""
    for prefix in _FIELD_PREFIXES:
        if ref.startswith(prefix) and ref.endswith(")"):
            start = len(prefix) - len("urn:li:dataset:(")
            end = ref.find(")", len(prefix))  # dataset names have their parentheses percent-encoded
            path = ref[end + 2:-1]
            if end > 0 and ref[end + 1:end + 2] == "," and path and _RESERVED.isdisjoint(path):
                return canonical_dataset_urn(ref[start:end + 1]), decode(path)
    f = FieldUrn.parse(ref)
    return str(f.dataset), f.field_path
