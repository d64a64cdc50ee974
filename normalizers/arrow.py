"""Arrow schemas (and Parquet files' schemas) -> the type model, by the struct rules.

:func:`parse_arrow` reads a ``pyarrow.Schema`` (or anything with an Arrow schema: a
table, a struct type, an ``__arrow_c_schema__`` object), an Arrow IPC schema message, an
Arrow IPC stream or file, the bare flatbuffer an Open Data Fabric ``SetDataSchema``
event carries (root table ``Schema``, no IPC wrapper, no length prefix), the base64 text
of any of those bytes, or an ODF manifest (YAML or JSON, or its parsed dict) holding a
``SetDataSchema`` event. :func:`parse_parquet` reads a Parquet file's schema (a path,
the file's bytes or a binary file object): reading the footer is its only I/O.

The schema renders as an anonymous struct (see :mod:`.struct`); ``nativeDataType`` is
Arrow's type text (``int32``, ``list<item: string>``, ``timestamp[us, tz=UTC]``...),
``nullable`` the field's nullability, ``fieldId`` the field's ``PARQUET:field_id`` metadata (Parquet's
``field_id``, as Iceberg uses it to follow renames). Arrow type -> Avro type (path token):
int8, int16, int32, uint8, uint16 -> int; int64, uint32, uint64 -> long; float16, float32
-> float; float64 -> double; utf8, large_utf8, string_view -> string; binary,
large_binary, binary_view -> bytes; fixed_size_binary -> fixed; decimal32..256 -> bytes
(decimal); date32, date64 -> int (date); time32 -> int (time-millis); time64 -> long
(time-micros); timestamp -> long (timestamp-millis for s/ms, timestamp-micros for us/ns);
duration -> long; month/day/nano interval -> fixed; bool -> boolean; null -> null;
list, large_list, fixed_size_list, list_view, large_list_view -> array; struct -> struct;
map -> map (value type; key in jsonProps); sparse/dense union -> union (struct members
``[type=struct<n>]`` as DataHub's uniontype); dictionary -> its value type; run-end
encoded -> its value type; extension types -> their storage type. The encoding or
extension shows in ``nativeDataType``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import struct as _bin
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.types as pat

from .errors import SchemaNormalizationError
from .model import Field, Record, Type
from .struct import StructBuilder, type_error

# Arrow's Message table: MetadataVersion.V5 and MessageHeader.Schema.
_METADATA_V5 = 4
_HEADER_SCHEMA = 1
_CONTINUATION = b"\xff\xff\xff\xff"
_B64 = re.compile(r"^[A-Za-z0-9+/_\-=\s]+$")
_DOC_KEYS = (b"comment", b"description", b"doc")
_FIELD_ID = b"PARQUET:field_id"  # a Parquet schema element's field_id, as pyarrow reads and writes it


def parse_arrow(schema: Any, *, name: str | None = None) -> Type:
    """Read an Arrow schema, in any of the forms above, into the type model."""
    label = name or "<arrow schema>"
    try:
        return schema_to_model(_to_schema(schema))
    except SchemaNormalizationError as exc:
        raise exc.with_schema(label) from exc


def parse_parquet(schema: Any, *, name: str | None = None) -> Type:
    """Read the schema of a Parquet file (path, bytes, or binary file object) into the type model."""
    label = name or (os.fspath(schema) if isinstance(schema, (str, os.PathLike)) else "<parquet file>")
    try:
        return schema_to_model(read_parquet_schema(schema))
    except SchemaNormalizationError as exc:
        raise exc.with_schema(str(label)) from exc


def read_parquet_schema(source: Any) -> pa.Schema:
    """The Arrow schema pyarrow reads from a Parquet file's footer."""
    import pyarrow.parquet as pq

    if isinstance(source, pa.Schema):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if not data.startswith(b"PAR1"):
            raise SchemaNormalizationError("not a Parquet file: it does not start with the magic bytes PAR1")
        source = pa.BufferReader(data)
    elif isinstance(source, (str, os.PathLike)):
        source = os.fspath(source)
        if not os.path.exists(source):
            raise SchemaNormalizationError(f"no such Parquet file: {source}")
    elif not hasattr(source, "read"):
        raise SchemaNormalizationError(
            f"a Parquet schema source is a path, bytes or a binary file object, not {type(source).__name__}"
        )
    try:
        return pq.read_schema(source)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise SchemaNormalizationError(f"cannot read the Parquet footer: {exc}") from exc


# -- input forms --------------------------------------------------------------------------

def _to_schema(obj: Any) -> pa.Schema:
    if isinstance(obj, pa.Schema):
        return obj
    if isinstance(obj, pa.DataType):
        if pat.is_struct(obj):
            return pa.schema(list(obj))
        raise SchemaNormalizationError(f"an Arrow schema needs a struct type, got {obj}")
    if isinstance(obj, os.PathLike):
        with open(obj, "rb") as fh:  # a path object only: a str is schema text
            return _from_bytes(fh.read())
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return _from_bytes(bytes(obj))
    if isinstance(obj, str):
        return _from_text(obj)
    if isinstance(obj, dict):
        return _from_manifest(obj)
    inner = getattr(obj, "schema", None)
    if isinstance(inner, pa.Schema):
        return inner
    if hasattr(obj, "__arrow_c_schema__"):
        try:
            return pa.schema(obj)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise SchemaNormalizationError(f"cannot read the Arrow C schema: {exc}") from exc
    raise SchemaNormalizationError(f"not an Arrow schema: {type(obj).__name__}")


def _from_bytes(data: bytes, text_ok: bool = True) -> pa.Schema:
    if data.startswith(b"ARROW1"):
        try:
            return pa.ipc.open_file(pa.BufferReader(data)).schema
        except pa.ArrowException as exc:
            raise SchemaNormalizationError(f"not a readable Arrow IPC file: {exc}") from exc
    if data.startswith(b"PAR1"):
        return read_parquet_schema(data)
    if data.startswith(_CONTINUATION):
        try:
            return pa.ipc.read_schema(pa.py_buffer(data))
        except pa.ArrowException as exc:
            raise SchemaNormalizationError(f"not a readable Arrow IPC schema message: {exc}") from exc
    errors = []
    for attempt in (schema_from_flatbuffer, _legacy_message):
        try:
            return attempt(data)
        except (pa.ArrowException, ValueError, _bin.error) as exc:
            errors.append(str(exc))
    if text_ok:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text and text.strip() and _printable(text):
            return _from_text(text)
    raise SchemaNormalizationError(
        "not an Arrow schema: neither an IPC message/stream/file nor a bare flatbuffer Schema"
        f" ({errors[0] if errors else 'empty input'})"
    )


def _printable(text: str) -> bool:
    return all(c.isprintable() or c in "\r\n\t" for c in text)


def _legacy_message(data: bytes) -> pa.Schema:
    """An IPC message in the pre-0.15 framing: int32 length, no continuation marker."""
    (length,) = _bin.unpack_from("<i", data, 0)
    if not 0 < length <= len(data) - 4:
        raise SchemaNormalizationError(f"not a length-prefixed IPC message: length {length} in {len(data)} bytes")
    return pa.ipc.read_schema(pa.py_buffer(_CONTINUATION + data))


def schema_from_flatbuffer(data: bytes) -> pa.Schema:
    """A bare flatbuffer whose root table is Arrow's ``Schema`` (ODF SetDataSchema) -> pa.Schema.

    Flatbuffer offsets are relative, so the buffer can be copied whole behind a small
    ``Message`` table whose ``header`` points at its root; pyarrow then reads (and
    verifies) it as an ordinary IPC schema message.
    """
    if len(data) < 8:
        raise SchemaNormalizationError(f"{len(data)} bytes are too short for a flatbuffer")
    (root,) = _bin.unpack_from("<I", data, 0)
    if not 4 <= root < len(data):
        raise SchemaNormalizationError(f"the flatbuffer's root offset {root} points outside its {len(data)} bytes")
    # [0] root uoffset -> table at 16; [4] vtable (6 x u16); [16] table:
    # soffset, version:i16, header_type:u8, pad, header:uoffset, pad, bodyLength:i64; [40] schema.
    head = bytearray(40)
    _bin.pack_into("<I", head, 0, 16)
    _bin.pack_into("<6H", head, 4, 12, 24, 4, 6, 8, 16)
    _bin.pack_into("<i", head, 16, 16 - 4)
    _bin.pack_into("<hB", head, 20, _METADATA_V5, _HEADER_SCHEMA)
    _bin.pack_into("<I", head, 24, 40 + root - 24)
    _bin.pack_into("<q", head, 32, 0)
    message = bytes(head) + data
    message += b"\x00" * (-len(message) % 8)
    framed = _CONTINUATION + _bin.pack("<i", len(message)) + message
    try:
        return pa.ipc.read_schema(pa.py_buffer(framed))
    except pa.ArrowException as exc:
        raise SchemaNormalizationError(f"not a readable Arrow Schema flatbuffer: {exc}") from exc


def flatbuffer_from_schema(schema: pa.Schema) -> bytes:
    """The bare flatbuffer ``Schema`` of ``schema``, as ODF stores it (pyarrow's own bytes, unwrapped)."""
    framed: bytes = schema.serialize().to_pybytes()
    if framed.startswith(_CONTINUATION):
        framed = framed[4:]
    (length,) = _bin.unpack_from("<i", framed, 0)
    msg = framed[4:4 + length]
    (table,) = _bin.unpack_from("<I", msg, 0)
    (vt_back,) = _bin.unpack_from("<i", msg, table)
    vtable = table - vt_back
    (vt_size,) = _bin.unpack_from("<H", msg, vtable)
    if vt_size < 4 + 2 * 3:
        raise SchemaNormalizationError(f"the IPC message pyarrow made of a {len(schema)}-field schema has no header")
    (header_at,) = _bin.unpack_from("<H", msg, vtable + 4 + 2 * 2)  # field 2: header
    (rel,) = _bin.unpack_from("<I", msg, table + header_at)
    schema_at = table + header_at + rel
    # Re-root the same bytes: an 8-byte prefix keeps every 8-byte alignment intact.
    return _bin.pack("<I", schema_at + 8) + b"\x00" * 4 + msg


def _from_text(text: str) -> pa.Schema:
    stripped = text.strip()
    if not stripped:
        raise SchemaNormalizationError("empty Arrow schema text")
    if _B64.match(stripped) and ":" not in stripped:
        compact = "".join(stripped.split())
        try:
            altchars = b"-_" if "-" in compact or "_" in compact else None
            raw = base64.b64decode(compact + "=" * (-len(compact) % 4), altchars=altchars, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise SchemaNormalizationError(f"not valid base64 Arrow schema bytes: {exc}") from exc
        return _from_bytes(raw, text_ok=False)
    return _from_manifest(_load_manifest(stripped))


def _load_manifest(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        import yaml  # optional: ODF manifests are YAML
    except ImportError as exc:
        match = re.search(r"^\s*(?:schema|rawArrowSchema)\s*:\s*([A-Za-z0-9+/_\-=]+)\s*$", text, re.M)
        if match:
            return {"kind": "SetDataSchema", "schema": match.group(1)}
        raise SchemaNormalizationError("Arrow schema text is neither base64 nor a JSON/YAML manifest") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SchemaNormalizationError(f"Arrow schema text is neither base64 nor JSON/YAML: {exc}") from exc


def _find_event(doc: Any, depth: int = 0) -> Any:
    if depth > 8 or not isinstance(doc, dict):
        return None
    kind = doc.get("kind")
    if (isinstance(kind, str) and kind.lower() == "setdataschema") or (kind is None and "schema" in doc):
        return doc
    for key in ("content", "event", "spec", "events", "metadata"):
        sub = doc.get(key)
        for item in sub if isinstance(sub, list) else [sub]:
            found = _find_event(item, depth + 1)
            if found is not None:
                return found
    return None


def _from_manifest(doc: Any) -> pa.Schema:
    if not isinstance(doc, dict):
        raise SchemaNormalizationError("Arrow schema text is neither base64 nor a JSON/YAML manifest")
    event = _find_event(doc)
    if event is None:
        raise SchemaNormalizationError("no ODF SetDataSchema event (an object with a base64 \"schema\") found")
    raw = event.get("schema", event.get("rawArrowSchema"))
    if isinstance(raw, dict):
        raise SchemaNormalizationError(
            "this SetDataSchema holds an ODF DataSchema (schema.fields), not Arrow flatbuffer bytes;"
            " only the Arrow form is supported",
            path="schema",
        )
    if not isinstance(raw, str):
        raise SchemaNormalizationError(f"SetDataSchema \"schema\" must be base64 text, got {type(raw).__name__}",
                                       path="schema")
    try:
        return _from_text(raw)
    except SchemaNormalizationError as exc:
        raise SchemaNormalizationError(exc.reason, path="schema") from exc


# -- conversion ---------------------------------------------------------------------------

def schema_to_model(schema: pa.Schema) -> Record:
    """A ``pyarrow.Schema`` as the type model's anonymous root struct."""
    return _Converter().root(schema)


def _doc(meta: dict[bytes, bytes]) -> str | None:
    """A field's description, from its metadata."""
    for key in _DOC_KEYS:
        if key in meta:
            try:
                return meta[key].decode("utf-8") or None
            except UnicodeDecodeError:
                return None
    return None


class _Converter:
    def __init__(self) -> None:
        self.b = StructBuilder()

    def root(self, schema: pa.Schema) -> Record:
        fields = self.fields(list(schema), "")
        native = "struct<" + ", ".join(f"{f.name}: {f.type}" for f in schema) + ">"
        return self.b.struct(fields, native, False, root=True)

    def fields(self, arrow_fields: list[Any], where: str) -> list[Field]:
        out = []
        for f in arrow_fields:
            at = f"{where}.{f.name}" if where else f.name
            meta = f.metadata
            node = self.b.field(f.name, self.type(f.type, at, f.nullable), _doc(meta) if meta else None,
                                _field_id(meta) if meta else None)
            out.append(node)
        return out

    def type(self, t: pa.DataType, where: str, nullable: bool, native: str | None = None,
             union_seq: int | None = None) -> Type:
        native = native or str(t)
        stored = _value_type(t)
        if stored is not None:  # the encoding or extension shows in nativeDataType only
            return self.type(stored, where, nullable, native)
        node = self.leaf(t, native, nullable)
        if node is None:
            node = self.container(t, where, native, nullable, union_seq)
        if node is None:
            raise type_error(where, f"unsupported Arrow type {native} (type id {t.id})")
        return node

    def leaf(self, t: pa.DataType, native: str, nullable: bool) -> Type | None:
        """The node of a type without children, or None."""
        b = self.b
        if pat.is_null(t):
            return b.primitive("null", native, True)
        if pat.is_decimal(t):
            return b.decimal(t.precision, t.scale, native, nullable)
        if pat.is_fixed_size_binary(t):
            return b.fixed(t.byte_width, native, nullable)
        if pat.is_interval(t):
            return b.fixed(16, native, nullable)
        avro = _avro_primitive(t)
        if avro is None:
            return None
        return b.primitive(avro[0], native, nullable, avro[1])

    def container(self, t: pa.DataType, where: str, native: str, nullable: bool,
                  union_seq: int | None) -> Type | None:
        """The node of a list, map, struct or union type, or None."""
        b = self.b
        if _is_list(t):
            vf = t.value_field
            items = self.type(vf.type, f"{where}.{vf.name}", vf.nullable)
            return b.array(items, native, nullable)
        if pat.is_map(t):
            kf, itf = t.key_field, t.item_field
            key = self.type(kf.type, f"{where}.{kf.name}", False)
            values = self.type(itf.type, f"{where}.{itf.name}", itf.nullable)
            return b.map(key, values, native, str(kf.type), nullable)
        if pat.is_struct(t):
            children = [t.field(i) for i in range(t.num_fields)]
            return b.struct(self.fields(children, where), native, nullable, union_seq=union_seq, where=where)
        if pat.is_union(t):
            return self.union(t, where, native)
        return None

    def union(self, t: pa.DataType, where: str, native: str) -> Type:
        """A union; its struct members are numbered (``[type=struct<n>]``, as DataHub's uniontype)."""
        members = []
        seq = 0
        for i in range(t.num_fields):
            child = t.field(i)
            at = f"{where}.{child.name}"
            if pat.is_struct(child.type):
                members.append(self.type(child.type, at, child.nullable, union_seq=seq))
                seq += 1
            else:
                members.append(self.type(child.type, at, child.nullable))
        return self.b.union(members, native)


def _field_id(meta: dict[bytes, bytes]) -> str | None:
    """A field's ``PARQUET:field_id`` as a decimal string (``"7"``), if it has a valid one."""
    raw = meta.get(_FIELD_ID)
    if raw is None:
        return None
    try:
        return str(int(raw))
    except ValueError:
        return None


def _value_type(t: pa.DataType) -> pa.DataType | None:
    """The type a dictionary, run-end encoded or extension type holds its values as, else None."""
    if pat.is_dictionary(t) or pat.is_run_end_encoded(t):
        return t.value_type
    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    return None


def _is_list(t: pa.DataType) -> bool:
    return bool(pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t)
                or pat.is_list_view(t) or pat.is_large_list_view(t))


def _is_string(t: pa.DataType) -> bool:
    return bool(pat.is_string(t) or pat.is_large_string(t) or pat.is_string_view(t))


def _is_binary(t: pa.DataType) -> bool:
    return bool(pat.is_binary(t) or pat.is_large_binary(t) or pat.is_binary_view(t))


#: (test, Avro primitive, logical type) for the Arrow types that map onto one primitive.
_PRIMITIVES: tuple[tuple[Callable[[pa.DataType], bool], str, str | None], ...] = (
    (pat.is_boolean, "boolean", None),
    (_is_string, "string", None),
    (_is_binary, "bytes", None),
    (pat.is_date, "int", "date"),
    (pat.is_time32, "int", "time-millis"),
    (pat.is_time64, "long", "time-micros"),
    (pat.is_duration, "long", None),
)


def _avro_primitive(t: pa.DataType) -> tuple[str, str | None] | None:
    """The Avro primitive and logical type of an Arrow type that maps onto a primitive, else None."""
    if pat.is_integer(t):
        wide = t.bit_width == 64 or (t.bit_width == 32 and pat.is_unsigned_integer(t))
        return ("long" if wide else "int"), None
    if pat.is_floating(t):
        return ("double" if pat.is_float64(t) else "float"), None
    if pat.is_timestamp(t):
        return "long", "timestamp-millis" if t.unit in ("s", "ms") else "timestamp-micros"
    for test, avro, logical in _PRIMITIVES:
        if test(t):
            return avro, logical
    return None
