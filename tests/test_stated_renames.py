"""Issue 35, the schema side: the renames a schema states (Avro field aliases, Protobuf field numbers, Parquet /
Arrow ``field_id``) in ``SchemaField.aliases`` / ``fieldId``, and the diff telling a stated rename (``renamed``,
with what states it) from a guess (``likely_renamed``, a suggestion: the fields stay removed and added)."""

from __future__ import annotations

import json
import pickle

import pytest
from typer.testing import CliRunner

from fieldgraph.ingest.cli import app
from fieldgraph.normalizers import normalize
from fieldgraph.normalizers.compat import check
from fieldgraph.normalizers.diff import SchemaDiff, diff_fields


def rec(name, *fields, **kw):
    return {"type": "record", "name": name, "fields": list(fields), **kw}


def f(name, type_, **kw):
    return {"name": name, "type": type_, **kw}


def by_leaf(fields):
    """{path without its version token: (aliases, fieldId)}."""
    return {x.fieldPath.removeprefix("[version=2.0]."): (x.aliases, x.fieldId) for x in fields}


def kinds(diff: SchemaDiff) -> list[tuple[str, str]]:
    return [(c.kind, c.path.rsplit(".", 1)[-1]) for c in diff.changes]


# --- Avro: field aliases ---------------------------------------------------------------------------------------

AVRO_V1 = rec(
    "Order",
    f("id", "long"),
    f("name", "string"),
    f("addr", ["null", rec("Addr", f("street", "string"), f("zip", "string"))]),
    f("lines", {"type": "array", "items": rec("Line", f("sku", "string"), f("qty", "int"))}),
    f("extra", {"type": "map", "values": rec("Extra", f("k", "long"))}),
)
AVRO_V2 = rec(
    "Order",
    f("id", "long"),
    f("full_name", "string", aliases=["name"]),
    f("address", ["null", rec("Addr", f("line1", "string", aliases=["street"]), f("zip", "string"),
                              aliases=["OldAddr"])], aliases=["addr"]),
    f("lines", {"type": "array", "items": rec("Line", f("code", "string", aliases=["sku", "item"]),
                                               f("qty", "int"))}),
    f("extra", {"type": "map", "values": rec("Extra", f("key", "long", aliases=["k"]))}),
)


def test_avro_field_aliases_at_every_depth():
    got = by_leaf(normalize(json.dumps(AVRO_V2)))
    assert got == {
        "[type=Order].[type=long].id": ((), None),
        "[type=Order].[type=string].full_name": (("name",), None),
        "[type=Order].[type=Addr].address": (("addr",), None),  # not the record's own (type) alias OldAddr
        "[type=Order].[type=Addr].address.[type=string].line1": (("street",), None),
        "[type=Order].[type=Addr].address.[type=string].zip": ((), None),
        "[type=Order].[type=array].[type=Line].lines": ((), None),
        "[type=Order].[type=array].[type=Line].lines.[type=string].code": (("sku", "item"), None),
        "[type=Order].[type=array].[type=Line].lines.[type=int].qty": ((), None),
        "[type=Order].[type=map].[type=Extra].extra": ((), None),
        "[type=Order].[type=map].[type=Extra].extra.[type=long].key": (("k",), None),
    }
    assert all(x.aliases == () and x.fieldId is None for x in normalize(json.dumps(AVRO_V1)))


def test_avro_union_of_records_each_member_field_has_its_aliases():
    schema = rec("R", f("u", [rec("A", f("x2", "int", aliases=["x"])), rec("B", f("y", "int"))], aliases=["v"]))
    got = by_leaf(normalize(json.dumps(schema)))
    assert got["[type=R].[type=union].u"] == (("v",), None)
    assert got["[type=R].[type=union].[type=A].u"] == (("v",), None)
    assert got["[type=R].[type=union].[type=A].u.[type=int].x2"] == (("x",), None)
    assert got["[type=R].[type=union].[type=B].u.[type=int].y"] == ((), None)


def test_avro_aliases_leave_the_datahub_fields_unchanged():
    plain = json.loads(json.dumps(AVRO_V2).replace('"aliases"', '"x_aliases"'))
    stated, other = normalize(json.dumps(AVRO_V2)), normalize(json.dumps(plain))
    # jsonProps keeps the aliases as before (an extra property); nothing else differs
    strip = [{k: v for k, v in x.to_datahub().items() if k != "jsonProps"} for x in stated]
    assert strip == [{k: v for k, v in x.to_datahub().items() if k != "jsonProps"} for x in other]
    assert "aliases" not in stated[1].to_datahub() and "fieldId" not in stated[1].to_datahub()


def test_stated_identity_survives_pickling():
    fields = normalize(json.dumps(AVRO_V2)) + normalize(PROTO_V2, "protobuf")
    back = pickle.loads(pickle.dumps(fields, protocol=5))
    assert back == fields
    assert [(x.aliases, x.fieldId) for x in back] == [(x.aliases, x.fieldId) for x in fields]


def test_avro_diff_stated_and_suggested():
    d = diff_fields(normalize(json.dumps(AVRO_V1)), normalize(json.dumps(AVRO_V2)), format="avro")
    assert kinds(d) == [("renamed", "full_name"), ("renamed", "address"), ("renamed", "line1"),
                        ("renamed", "code"), ("renamed", "key")]
    assert [c.reason for c in d.renamed] == ["Avro alias 'name'", "Avro alias 'addr'", "Avro alias 'street'",
                                             "Avro alias 'sku'", "Avro alias 'k'"]
    c = d.renamed[0]
    assert c.old_path == "[version=2.0].[type=Order].[type=string].name"
    assert c.describe() == ("renamed from 'name' ([version=2.0].[type=Order].[type=string].name): "
                            "Avro alias 'name'")
    assert c.to_json()["reason"] == "Avro alias 'name'"
    # without the aliases: nothing is renamed; the same-position same-type pairs are suggestions only
    plain = json.loads(json.dumps(AVRO_V2).replace('"aliases"', '"x_aliases"'))
    g = diff_fields(normalize(json.dumps(AVRO_V1)), normalize(json.dumps(plain)))
    assert g.renamed == ()
    assert [(c.kind, c.old_path.rsplit(".", 1)[-1], c.path.rsplit(".", 1)[-1], c.reason) for c in g.suggestions] == [
        ("likely_renamed", "name", "full_name", "same position and type"),
        ("likely_renamed", "addr", "address", "same position and type"),
        ("likely_renamed", "sku", "code", "same position and type"),  # under matched parents, at any depth
        ("likely_renamed", "k", "key", "same position and type"),
    ]
    assert ("removed", "name") in kinds(g) and ("added", "full_name") in kinds(g)
    assert ("removed", "street") in kinds(g)  # under a removed parent: removed with it, no suggestion
    s = g.suggestions[0]
    assert s.describe().startswith("likely renamed from 'name' (") and "same position and type" in s.describe()
    assert "not applied" in s.describe()
    assert s.to_json()["kind"] == "likely_renamed" and s.to_json()["reason"] == "same position and type"


def test_avro_alias_comes_after_the_names():
    """As in Avro's schema resolution: a field of the old name is that field, whatever another field's alias."""
    old = rec("R", f("a", "int"))
    new = rec("R", f("a", "int"), f("b", "int", aliases=["a"]))
    assert kinds(diff_fields(normalize(json.dumps(old)), normalize(json.dumps(new)))) == [("added", "b")]
    # an alias naming a field of another type: a stated rename with a type change
    new = rec("R", f("b", "long", aliases=["a"]))
    assert kinds(diff_fields(normalize(json.dumps(old)), normalize(json.dumps(new)))) == [
        ("renamed", "b"), ("type_changed", "b")]


def test_compat_judges_a_stated_rename_as_a_rename_and_a_guess_as_removal_plus_addition():
    old = rec("R", f("a", "int"), f("b", ["null", "string"]))
    stated = rec("R", f("a", "int"), f("c", ["null", "string"], aliases=["b"]))
    guessed = rec("R", f("a", "int"), f("c", ["null", "string"]))

    def rules(new, rule_set):
        d = diff_fields(normalize(json.dumps(old)), normalize(json.dumps(new)))
        return [(v.rule, v.path.rsplit(".", 1)[-1]) for v in check(d, rule_set)]

    assert rules(stated, "odf") == [("odf.no-rename", "c")]
    [v] = check(diff_fields(normalize(json.dumps(old)), normalize(json.dumps(stated))), "odf")
    assert v.message == "field 'b' renamed to 'c' (Avro alias 'b'): a field cannot be renamed"
    assert rules(stated, "datamine") == [("datamine.no-removal", "c")]  # the rename removes the name b
    assert rules(guessed, "odf") == [("odf.no-removal", "b")]  # c is optional: its addition is allowed
    assert rules(guessed, "datamine") == [("datamine.no-removal", "b")]
    d = diff_fields(normalize(json.dumps(old)), normalize(json.dumps(guessed)))
    assert d.suggestions and all(v.change is None or v.change.kind != "likely_renamed" for v in check(d, "odf"))


# --- Protobuf: field numbers -----------------------------------------------------------------------------------

PROTO_V1 = """syntax = "proto3";
package shop;
message Order {
  int64 id = 1;
  string name = 2;
  Address addr = 3;
  repeated Line lines = 4;
  oneof pay { string card = 5; string iban = 6; }
  message Address { string street = 1; }
  message Line { string sku = 1; }
}
"""
PROTO_V2 = """syntax = "proto3";
package shop;
message Order {
  int64 id = 1;
  string full_name = 2;
  Address address = 3;
  repeated Line lines = 4;
  oneof pay { string card_number = 5; string iban = 6; }
  string name = 7;
  message Address { string line1 = 1; }
  message Line { string code = 1; }
}
"""


def test_protobuf_field_numbers_at_every_depth():
    got = by_leaf(normalize(PROTO_V2, "protobuf"))
    assert got == {
        "[type=shop_Order].[type=shop_Order_Address].address": ((), "3"),
        "[type=shop_Order].[type=shop_Order_Address].address.[type=string].line1": ((), "1"),
        "[type=shop_Order].[type=array].[type=shop_Order_Line].lines": ((), "4"),
        "[type=shop_Order].[type=array].[type=shop_Order_Line].lines.[type=string].code": ((), "1"),
        "[type=shop_Order].[type=long].id": ((), "1"),
        "[type=shop_Order].[type=string].full_name": ((), "2"),
        "[type=shop_Order].[type=string].name": ((), "7"),
        "[type=shop_Order].[type=union].pay": ((), None),  # a oneof has no number
        "[type=shop_Order].[type=union].pay.[type=string].card_number": ((), "5"),
        "[type=shop_Order].[type=union].pay.[type=string].iban": ((), "6"),
    }


def test_protobuf_field_numbers_from_a_compiled_descriptor_set():
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name="t.proto", package="t", syntax="proto3")
    msg = fdp.message_type.add(name="M")
    msg.field.add(name="renamed", number=9, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    inner = msg.nested_type.add(name="N")
    inner.field.add(name="z", number=4, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    msg.field.add(name="n", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE, type_name=".t.M.N",
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    data = descriptor_pb2.FileDescriptorSet(file=[fdp]).SerializeToString()
    assert by_leaf(normalize(data, "protobuf")) == {
        "[type=t_M].[type=string].renamed": ((), "9"),
        "[type=t_M].[type=t_M_N].n": ((), "2"),
        "[type=t_M].[type=t_M_N].n.[type=long].z": ((), "4"),
    }


def test_protobuf_diff_follows_the_numbers():
    d = diff_fields(normalize(PROTO_V1, "protobuf"), normalize(PROTO_V2, "protobuf"), format="protobuf")
    assert sorted(kinds(d)) == sorted([
        ("renamed", "full_name"), ("renamed", "address"), ("renamed", "line1"), ("renamed", "code"),
        ("renamed", "card_number"),
        ("added", "name"),  # the old name, reused by a new field (number 7): not the old field
    ])
    reasons = {c.path.rsplit(".", 1)[-1]: c.reason for c in d.renamed}
    assert reasons == {"full_name": "same Protobuf field number 2", "address": "same Protobuf field number 3",
                       "line1": "same Protobuf field number 1", "code": "same Protobuf field number 1",
                       "card_number": "same Protobuf field number 5"}
    assert d.suggestions == ()
    # without the format, the reason names the id generically
    assert diff_fields(normalize(PROTO_V1, "protobuf"), normalize(PROTO_V2, "protobuf")).renamed[0].reason.startswith(
        "same field_id ")


def test_protobuf_another_number_is_another_field():
    old = 'syntax = "proto3"; message M { string a = 1; string b = 2; }'
    renumbered = 'syntax = "proto3"; message M { string a = 1; string b = 3; }'
    d = diff_fields(normalize(old, "protobuf"), normalize(renumbered, "protobuf"), format="protobuf")
    assert kinds(d) == [("removed", "b"), ("added", "b")]
    new_name = 'syntax = "proto3"; message M { string a = 1; string c = 3; }'
    d = diff_fields(normalize(old, "protobuf"), normalize(new_name, "protobuf"), format="protobuf")
    assert kinds(d) == [("removed", "b"), ("added", "c")]  # numbers state two fields: no suggestion either


# --- Arrow, Parquet, ODF: field_id ---------------------------------------------------------------------------


def _arrow(renamed: bool, ids: bool = True):
    pa = pytest.importorskip("pyarrow")

    def meta(i):
        return {"PARQUET:field_id": str(i)} if ids else None

    inner = pa.struct([pa.field("line1" if renamed else "street", pa.string(), metadata=meta(4)),
                       pa.field("zip", pa.string(), metadata=meta(5))])
    return pa.schema([
        pa.field("id", pa.int64(), nullable=False, metadata=meta(1)),
        pa.field("full_name" if renamed else "name", pa.string(), metadata=meta(7)),
        pa.field("address" if renamed else "addr", inner, metadata=meta(3)),
        pa.field("note", pa.string()),  # no id
    ])


ARROW_EXPECTED = {
    "[type=long].id": ((), "1"),
    "[type=string].full_name": ((), "7"),
    "[type=struct].[type=struct].address": ((), "3"),
    "[type=struct].[type=struct].address.[type=string].line1": ((), "4"),
    "[type=struct].[type=struct].address.[type=string].zip": ((), "5"),
    "[type=string].note": ((), None),
}


def test_arrow_field_ids():
    assert by_leaf(normalize(_arrow(True), "arrow")) == ARROW_EXPECTED
    assert all(x.fieldId is None for x in normalize(_arrow(True, ids=False), "arrow"))


def test_parquet_field_ids(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.parquet"
    pq.write_table(_arrow(True).empty_table(), path)
    assert by_leaf(normalize(path, "parquet")) == ARROW_EXPECTED
    assert by_leaf(normalize(path.read_bytes(), "parquet")) == ARROW_EXPECTED


def test_odf_schema_field_ids():
    pytest.importorskip("pyarrow")
    import base64

    from fieldgraph.normalizers.arrow import flatbuffer_from_schema

    raw = flatbuffer_from_schema(_arrow(True))
    assert by_leaf(normalize(raw, "arrow")) == ARROW_EXPECTED
    manifest = {"kind": "SetDataSchema", "schema": base64.b64encode(raw).decode()}
    assert by_leaf(normalize(manifest, "arrow")) == ARROW_EXPECTED


def test_arrow_field_ids_leave_the_datahub_fields_unchanged():
    stated, plain = normalize(_arrow(True), "arrow"), normalize(_arrow(True, ids=False), "arrow")
    assert [x.to_datahub() for x in stated] == [x.to_datahub() for x in plain]


def test_arrow_diff_follows_the_field_ids():
    d = diff_fields(normalize(_arrow(False), "arrow"), normalize(_arrow(True), "arrow"), format="arrow")
    assert [(c.kind, c.path.rsplit(".", 1)[-1], c.reason) for c in d.changes] == [
        ("renamed", "full_name", "same field_id 7"),
        ("renamed", "address", "same field_id 3"),
        ("renamed", "line1", "same field_id 4"),
    ]
    assert [v.rule for v in check(d, "odf")] == ["odf.no-rename"] * 3  # a stated rename is a rename for ODF
    g = diff_fields(normalize(_arrow(False, ids=False), "arrow"), normalize(_arrow(True, ids=False), "arrow"))
    assert g.renamed == ()
    assert [(c.path.rsplit(".", 1)[-1], c.reason) for c in g.suggestions] == [
        ("full_name", "same position and type"), ("address", "same position and type")]
    assert [v.rule for v in check(g, "odf")] == ["odf.no-removal", "odf.no-removal"]


# --- formats that state no rename ------------------------------------------------------------------------------


def test_json_schema_spark_and_datamine_state_nothing():
    js = {"type": "object", "properties": {"a": {"type": "string"}, "o": {"type": "object", "properties": {
        "b": {"type": "integer"}}}}}
    spark = {"type": "struct", "fields": [
        {"name": "a", "type": "string", "nullable": True, "metadata": {"comment": "x"}},
        {"name": "s", "type": {"type": "struct", "fields": [
            {"name": "b", "type": "long", "nullable": True, "metadata": {}}]}, "nullable": True, "metadata": {}},
    ]}
    dm = {"schema": "s", "table_list": [{"table": "t", "fields": [{"id": 1, "name": "a", "type": "INT32"}]}]}
    for schema, fmt in ((js, "json-schema"), (spark, "spark"), (dm, "datamine")):
        fields = normalize(schema, fmt)
        assert fields and all(x.aliases == () and x.fieldId is None for x in fields), fmt


# --- the CLI -----------------------------------------------------------------------------------------------------

runner = CliRunner()


def test_cli_diff_shows_what_states_a_rename_and_the_suggestions(tmp_path):
    def write(name, text):
        p = tmp_path / name
        p.write_text(text)
        return str(p)

    old, new = write("v1.proto", PROTO_V1), write("v2.proto", PROTO_V2)
    r = runner.invoke(app, ["diff", old, new, "--json"])
    assert r.exit_code == 0, r.output
    changes = json.loads(r.output)["diffs"][0]["changes"]
    assert {c["reason"] for c in changes if c["kind"] == "renamed"} >= {"same Protobuf field number 2"}
    a1 = write("a1.avsc", json.dumps(rec("R", f("a", "int"), f("b", "string"))))
    a2 = write("a2.avsc", json.dumps(rec("R", f("a", "int"), f("c", "string"))))
    r = runner.invoke(app, ["diff", a1, a2], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "likely_renamed" in r.output and "same position and type" in r.output
