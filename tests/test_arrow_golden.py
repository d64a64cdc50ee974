"""Golden files and input forms for the Arrow / Parquet normalizer.

Inputs live in ``tests/golden/arrow`` as ``<case>.b64``: the base64 of the bare flatbuffer
``Schema`` an ODF SetDataSchema event carries, made from pyarrow's own serialization of the
schemas in :data:`SCHEMAS` (the test checks they still match); ``odf_*.yaml`` are ODF
manifests; ``<case>.json`` is the expected ``to_datahub()`` output.
"""

from __future__ import annotations

import base64
import io
import json
from types import SimpleNamespace

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from fieldgraph.normalizers import SchemaNormalizationError, normalize, to_model  # noqa: E402
from fieldgraph.normalizers.arrow import (  # noqa: E402
    flatbuffer_from_schema,
    parse_arrow,
    parse_parquet,
    schema_from_flatbuffer,
)
from fieldgraph.normalizers.struct import column_fields  # noqa: E402

from .golden import GOLDEN, REGEN, cases, check  # noqa: E402

SCHEMAS = {
    "primitives": pa.schema([
        pa.field("i8", pa.int8()), pa.field("i16", pa.int16()), pa.field("i32", pa.int32(), nullable=False),
        pa.field("i64", pa.int64()), pa.field("u8", pa.uint8()), pa.field("u16", pa.uint16()),
        pa.field("u32", pa.uint32()), pa.field("u64", pa.uint64(), nullable=False),
        pa.field("f16", pa.float16()), pa.field("f32", pa.float32()), pa.field("f64", pa.float64()),
        pa.field("b", pa.bool_()), pa.field("n", pa.null()),
        pa.field("s", pa.string()), pa.field("ls", pa.large_string()), pa.field("sv", pa.string_view()),
        pa.field("bin", pa.binary()), pa.field("lbin", pa.large_binary()), pa.field("bv", pa.binary_view()),
        pa.field("fsb", pa.binary(16)),
        pa.field("d32", pa.decimal32(7, 2)), pa.field("d64", pa.decimal64(12, 3)),
        pa.field("d128", pa.decimal128(38, 10)), pa.field("d256", pa.decimal256(60, 0)),
    ]),
    "temporal": pa.schema([
        pa.field("date32", pa.date32()), pa.field("date64", pa.date64()),
        pa.field("t32s", pa.time32("s")), pa.field("t32ms", pa.time32("ms")),
        pa.field("t64us", pa.time64("us")), pa.field("t64ns", pa.time64("ns")),
        pa.field("ts_s", pa.timestamp("s")), pa.field("ts_ms", pa.timestamp("ms", tz="UTC")),
        pa.field("ts_us", pa.timestamp("us", tz="Europe/Paris")), pa.field("ts_ns", pa.timestamp("ns")),
        pa.field("dur_s", pa.duration("s")), pa.field("dur_ns", pa.duration("ns")),
        pa.field("interval", pa.month_day_nano_interval()),
    ]),
    "encodings": pa.schema([
        pa.field("dict_str", pa.dictionary(pa.int32(), pa.string())),
        pa.field("dict_int", pa.dictionary(pa.int8(), pa.int64(), ordered=True), nullable=False),
        pa.field("list_dict", pa.list_(pa.dictionary(pa.int16(), pa.large_string()))),
        pa.field("ree", pa.run_end_encoded(pa.int32(), pa.float64())),
    ]),
    "nested": pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("matrix", pa.list_(pa.large_list(pa.list_(pa.float32(), 3)))),
        pa.field("views", pa.list_view(pa.int32())),
        pa.field("orders", pa.list_(pa.struct([
            pa.field("sku", pa.string(), nullable=False),
            pa.field("qty", pa.int32()),
            pa.field("lines", pa.list_(pa.struct([("n", pa.int16()), ("price", pa.decimal128(9, 2))]))),
        ])), nullable=False),
        pa.field("address", pa.struct([
            pa.field("city", pa.string()),
            pa.field("geo", pa.struct([("lat", pa.float64()), ("lon", pa.float64())]), nullable=False),
        ])),
    ]),
    "maps_unions": pa.schema([
        pa.field("counts", pa.map_(pa.string(), pa.int32())),
        pa.field("by_day", pa.map_(pa.date32(), pa.list_(pa.struct([("v", pa.int64())]))), nullable=False),
        pa.field("nested_map", pa.map_(pa.int64(), pa.map_(pa.string(), pa.timestamp("us")))),
        pa.field("map_list", pa.list_(pa.map_(pa.string(), pa.struct([("q", pa.date32())])))),
        pa.field("dense", pa.dense_union([pa.field("i", pa.int32()), pa.field("s", pa.string())])),
        pa.field("sparse", pa.sparse_union([
            pa.field("a", pa.struct([("x", pa.int32())])), pa.field("b", pa.struct([("y", pa.string())])),
            pa.field("f", pa.float64()),
        ])),
    ]),
    "metadata": pa.schema([
        pa.field("id", pa.int64(), metadata={"comment": "primary key"}),
        pa.field("obj", pa.struct([pa.field("k", pa.string(), metadata={"description": "the key"})]),
                 metadata={"comment": "an object"}),
        pa.field("uuid", pa.uuid()),
    ], metadata={"owner": "fieldgraph"}),
}


def _forms(schema):
    """Every input form of one schema that parse_arrow accepts."""
    fb = flatbuffer_from_schema(schema)
    b64 = base64.b64encode(fb).decode()
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, schema):
        pass
    stream = io.BytesIO()
    with pa.ipc.new_stream(stream, schema):
        pass
    return {
        "pyarrow.Schema": schema,
        "ipc message": schema.serialize().to_pybytes(),
        "ipc stream": stream.getvalue(),
        "ipc file": sink.getvalue(),
        "bare flatbuffer": fb,
        "base64": b64,
        "base64 bytes": b64.encode(),
        "urlsafe base64": base64.urlsafe_b64encode(fb).decode().rstrip("="),
        "odf yaml": f"kind: MetadataBlock\nversion: 2\ncontent:\n  sequenceNumber: 1\n"
                    f"  event:\n    kind: SetDataSchema\n    schema: {b64}\n",
        "odf json": json.dumps(
            {"kind": "MetadataBlock", "content": {"event": {"kind": "SetDataSchema", "schema": b64}}}
        ),
        "odf dict": {"kind": "SetDataSchema", "schema": b64},
        "struct type": pa.struct(list(schema)),
        "has .schema": SimpleNamespace(schema=schema),  # a Table, ParquetFile...
    }


@pytest.mark.parametrize("case", sorted(SCHEMAS))
def test_golden(case):
    schema = SCHEMAS[case]
    source = GOLDEN / "arrow" / f"{case}.b64"
    if REGEN or not source.exists():
        source.write_text(base64.b64encode(flatbuffer_from_schema(schema)).decode() + "\n")
    # The stored bytes are still what pyarrow makes of the schema ...
    assert schema_from_flatbuffer(base64.b64decode(source.read_text())).equals(schema, check_metadata=True)
    # ... and every form of it gives the golden fields.
    fields = normalize(source.read_text(), "arrow")
    check(source, fields)
    for form, value in _forms(schema).items():
        assert normalize(value, "arrow") == fields, form


@pytest.mark.parametrize("source", cases("arrow", "odf_*.yaml"), ids=lambda p: p.stem)
def test_odf_manifests(source):
    check(source, normalize(source.read_text(), "arrow"))


def _by_path(case):
    return {f.fieldPath: f for f in normalize(SCHEMAS[case], "arrow")}


def test_type_rules():
    got = {p.rsplit(".", 1)[-1]: (p.split(".")[-2], f.type.name, f.nativeDataType, f.nullable)
           for p, f in _by_path("primitives").items()}
    assert got["i8"] == ("[type=int]", "NumberType", "int8", True)
    assert got["i32"] == ("[type=int]", "NumberType", "int32", False)
    assert got["u16"][:2] == ("[type=int]", "NumberType")
    assert got["u32"][:2] == got["i64"][:2] == ("[type=long]", "NumberType")
    assert got["u64"] == ("[type=long]", "NumberType", "uint64", False)
    assert got["f16"][0] == got["f32"][0] == "[type=float]" and got["f64"][0] == "[type=double]"
    assert {got[k][0] for k in ("s", "ls", "sv")} == {"[type=string]"}
    assert {got[k][0] for k in ("bin", "lbin", "bv")} == {"[type=bytes]"}
    assert got["fsb"][:2] == ("[type=fixed]", "FixedType")
    assert {got[k][:2] for k in ("d32", "d64", "d128", "d256")} == {("[type=bytes]", "NumberType")}
    assert got["d128"][2] == "decimal128(38, 10)"
    assert got["n"][:2] == ("[type=null]", "NullType")
    t = {p.rsplit(".", 1)[-1]: (p.split(".")[-2], f.type.name) for p, f in _by_path("temporal").items()}
    assert t["date32"] == t["date64"] == ("[type=int]", "DateType")
    assert t["t32s"] == t["t32ms"] == ("[type=int]", "TimeType")
    assert t["t64us"] == t["t64ns"] == ("[type=long]", "TimeType")
    assert {t[k] for k in ("ts_s", "ts_ms", "ts_us", "ts_ns")} == {("[type=long]", "TimeType")}
    assert t["dur_s"] == t["dur_ns"] == ("[type=long]", "NumberType")


def test_dictionary_renders_as_value_type():
    got = _by_path("encodings")
    f = got["[version=2.0].[type=string].dict_str"]
    assert f.type.name == "StringType"
    assert f.nativeDataType == "dictionary<values=string, indices=int32, ordered=0>"
    assert not got["[version=2.0].[type=long].dict_int"].nullable
    assert "[version=2.0].[type=struct].[type=array].[type=string].list_dict" in got
    assert "[version=2.0].[type=double].ree" in got


def test_nested_lists_of_structs_and_maps():
    paths = list(_by_path("nested"))
    assert "[version=2.0].[type=struct].[type=array].[type=array].[type=array].[type=float].matrix" in paths
    assert ("[version=2.0].[type=struct].[type=array].[type=struct].orders.[type=array].[type=struct].lines"
            ".[type=bytes].price") in paths
    assert "[version=2.0].[type=struct].[type=struct].address.[type=struct].geo.[type=double].lat" in paths
    maps = _by_path("maps_unions")
    counts = maps["[version=2.0].[type=struct].[type=map].[type=int].counts"]
    map_type = {"com.linkedin.schema.MapType": {"keyType": "string", "valueType": "int"}}
    assert counts.type.to_datahub() == {"type": map_type}
    assert json.loads(counts.jsonProps)["key_native_data_type"] == "string"
    assert "[version=2.0].[type=struct].[type=map].[type=array].[type=struct].by_day.[type=long].v" in maps
    assert "[version=2.0].[type=struct].[type=map].[type=map].[type=long].nested_map" in maps
    assert "[version=2.0].[type=struct].[type=union].[type=struct1].sparse.[type=string].y" in maps


def test_descriptions_from_field_metadata():
    got = _by_path("metadata")
    assert got["[version=2.0].[type=long].id"].description == "primary key"
    assert got["[version=2.0].[type=struct].[type=struct].obj"].description == "an object"
    assert got["[version=2.0].[type=struct].[type=struct].obj.[type=string].k"].description == "the key"


def test_real_odf_bytes_from_kamu():
    # The SetDataSchema block of kamu-cli's YAML serializer test (fields a: int64, b: bool).
    raw = ("DAAAAAgACAAAAAQACAAAAAQAAAACAAAAQAAAAAQAAADY////GAAAAAwAAAAAAAAGEAAAAAAAAAAEAAQABAAAAAEAAABiAAAAEAAU"
           "ABAAAAAPAAQAAAAIABAAAAAYAAAAIAAAAAAAAAIcAAAACAAMAAQACwAIAAAAQAAAAAAAAAEAAAAAAQAAAGEAAAA=")
    schema = schema_from_flatbuffer(base64.b64decode(raw))
    assert schema.equals(pa.schema([pa.field("a", pa.int64(), False), pa.field("b", pa.bool_(), False)]))


def test_parquet_file(tmp_path):
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
        pa.field("price", pa.decimal128(10, 2)), pa.field("at", pa.timestamp("us", tz="UTC")),
        pa.field("day", pa.date32()), pa.field("tags", pa.list_(pa.string())),
        pa.field("attrs", pa.map_(pa.string(), pa.int32())),
        pa.field("addr", pa.struct([("city", pa.string()), ("zip", pa.int32())])),
        pa.field("cat", pa.dictionary(pa.int32(), pa.string())),
    ])
    path = tmp_path / "t.parquet"
    pq.write_table(schema.empty_table(), path)
    fields = normalize(str(path), "parquet")
    check(GOLDEN / "arrow" / "parquet_basic.parquet", fields)
    data = path.read_bytes()
    assert normalize(path, "parquet") == fields
    assert normalize(data, "parquet") == fields
    assert normalize(io.BytesIO(data), "parquet") == fields
    assert normalize(data, "arrow") == fields  # Parquet bytes given as Arrow are read too
    # pyarrow keeps the Arrow schema in the footer, so the file reads back as written
    # (but for the list item's name, which Parquet calls "element").
    assert [(f.fieldPath, f.type, f.nullable) for f in fields] == [
        (f.fieldPath, f.type, f.nullable) for f in normalize(schema, "arrow")]


def test_column_layout_matches_datahub_shape():
    root = to_model(SCHEMAS["nested"], "arrow")
    paths = [f.fieldPath for f in column_fields(root)]
    assert paths[0] == "[version=2.0].[type=long].id"
    assert "[version=2.0].[type=struct].[type=array].[type=string].tags" in paths


@pytest.mark.parametrize("bad, message", [
    (b"\x00\x01garbage bytes that are no flatbuffer", "not an Arrow schema"),
    ("not base64 at all!", "neither base64 nor"),
    ("kind: MetadataBlock\ncontent:\n  event:\n    kind: AddData\n", "no ODF SetDataSchema event"),
    ({"kind": "SetDataSchema", "schema": {"fields": [{"name": "a"}]}}, "ODF DataSchema"),
    ({"kind": "SetDataSchema", "schema": 12}, "must be base64 text"),
    (42, "not an Arrow schema: int"),
    (pa.int32(), "needs a struct type"),
    ("", "empty"),
])
def test_bad_input(bad, message):
    with pytest.raises(SchemaNormalizationError, match=message):
        normalize(bad, "arrow", name="in.arrow")


def test_error_names_the_field_path():
    twice = pa.struct([("x", pa.int32()), ("x", pa.string())])
    dup = pa.schema([pa.field("s", pa.struct([pa.field("l", pa.list_(twice))]))])
    with pytest.raises(SchemaNormalizationError) as info:
        parse_arrow(dup, name="orders")
    assert info.value.path == "s.l.item.x"
    assert str(info.value).startswith("schema 'orders' at s.l.item.x: field name 'x' is used twice")


def test_bad_parquet(tmp_path):
    with pytest.raises(SchemaNormalizationError, match="no such Parquet file"):
        parse_parquet(str(tmp_path / "missing.parquet"))
    with pytest.raises(SchemaNormalizationError, match="magic bytes PAR1"):
        parse_parquet(b"hello")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1" + b"\x00" * 20)
    with pytest.raises(SchemaNormalizationError, match="cannot read the Parquet footer") as info:
        parse_parquet(tmp_path / "broken.parquet")
    assert "broken.parquet" in str(info.value)


# -- differential: DataHub's hive-column converter on the equivalent Hive type text -----------

def _hive(t):
    """The Hive type text of an Arrow type, where DataHub's mapping agrees with ours; else None."""
    simple = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
              pa.float32(): "float", pa.float64(): "double", pa.string(): "string", pa.bool_(): "boolean",
              pa.date32(): "date", pa.large_string(): "varchar(100)"}
    if t in simple:
        return simple[t]
    if pa.types.is_decimal128(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = _hive(t.value_type)
        return inner and f"array<{inner}>"
    if pa.types.is_map(t):
        k, v = _hive(t.key_type), _hive(t.item_type)
        return k and v and f"map<{k},{v}>"
    if pa.types.is_struct(t):
        parts = [(f.name, _hive(f.type)) for f in t]
        return None if any(p is None for _, p in parts) else "struct<" + ",".join(f"{n}:{h}" for n, h in parts) + ">"
    return None


def test_equivalent_hive_types_match_datahub():
    hive = pytest.importorskip("datahub.utilities.hive_schema_to_avro")
    pre = pytest.importorskip("datahub.emitter.serialization_helper").pre_json_transform
    compared = 0
    for case in ("primitives", "temporal", "nested", "maps_unions"):
        root = to_model(SCHEMAS[case], "arrow")
        for col, arrow_field in zip(root.fields, SCHEMAS[case], strict=False):
            hive_type = _hive(arrow_field.type)
            if hive_type is None:
                continue
            ours = [f.to_datahub() for f in column_fields(type(root)(root.name, (col,), None, root.props))]
            theirs = [pre(f.to_obj()) for f in hive.get_schema_fields_for_hive_column(col.name, hive_type)]
            # nativeDataType is Arrow's text here, Hive's there; nullability comes from the schema.
            strip = ("nativeDataType", "nullable", "jsonProps")
            assert [{k: v for k, v in f.items() if k not in strip} for f in ours] == [
                {k: v for k, v in f.items() if k not in strip} for f in theirs], (case, col.name, hive_type)
            # jsonProps agree but for the map key's native text inside them.
            assert [bool(f.get("jsonProps")) for f in ours] == [bool(f.get("jsonProps")) for f in theirs]
            compared += len(ours)
    assert compared >= 25
