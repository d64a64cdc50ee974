"""Golden files for the Protobuf normalizer (``tests/golden/protobuf``).

Each ``<case>.proto`` is compiled with the files under ``include/`` importable; ``key_*``
cases are key schemas. The expected ``<case>.json`` files of the non-recursive cases are
DataHub's own output (``test_protobuf_differential`` checks that); recursive cases are ours,
as DataHub gives no field for them.
"""

from __future__ import annotations

import pytest

pytest.importorskip("grpc_tools")
pytest.importorskip("google.protobuf")

from fieldgraph.normalizers import SchemaNormalizationError, normalize  # noqa: E402
from fieldgraph.normalizers.protobuf import is_descriptor_set, parse_protobuf  # noqa: E402
from fieldgraph.normalizers.visitor import walk  # noqa: E402

from .golden import GOLDEN, cases, check  # noqa: E402

FOLDER = GOLDEN / "protobuf"
IMPORTS = {p.relative_to(FOLDER / "include").as_posix(): p.read_text() for p in (FOLDER / "include").rglob("*.proto")}


def fields_of(source, **kw):
    model = parse_protobuf(source.read_text(), name=source.name, imports=IMPORTS, **kw)
    return walk(model, key=source.stem.startswith("key_"))


@pytest.mark.parametrize("source", cases("protobuf", "*.proto"), ids=lambda p: p.stem)
def test_golden(source):
    fields = fields_of(source)
    check(source, fields)
    paths = [f.fieldPath for f in fields]
    assert paths == sorted(paths) and len(set(paths)) == len(paths)  # DataHub's order, no duplicates


def _paths(case: str, **kw) -> list[str]:
    return [f.fieldPath for f in fields_of(FOLDER / f"{case}.proto", **kw)]


def test_normalize_api_and_key_schema():
    text = (FOLDER / "key_scalars.proto").read_text()
    fields = normalize(text, "protobuf", key=True, name="key_scalars.proto")
    assert [f.fieldPath for f in fields] == [
        "[version=2.0].[key=True].[type=golden_keyed_OrderKey].[type=long].order_id",
        "[version=2.0].[key=True].[type=golden_keyed_OrderKey].[type=string].tenant",
    ]
    assert not any(f.isPartOfKey for f in fields)  # as DataHub's converter
    assert all(f.nullable for f in fields)
    assert [f.nativeDataType for f in fields] == ["int64", "string"]


def test_single_root_has_no_root_field():
    assert _paths("single_nested")[0] == (
        "[version=2.0].[type=golden_single_Envelope].[type=golden_single_Envelope_Body].body"
    )


def test_several_roots_each_get_a_field():
    fields = fields_of(FOLDER / "multi_top.proto")
    roots = [f for f in fields if f.nativeDataType == "message"]
    assert [f.fieldPath for f in roots] == [
        "[version=2.0].[type=golden_multi_Audit].Audit",
        "[version=2.0].[type=golden_multi_Order].Order",
        "[version=2.0].[type=golden_multi_Refund].Refund",
    ]  # Line is used by a field: not a root
    assert not any(f.nullable for f in roots)


def test_message_option_picks_one_root():
    assert _paths("multi_top", message="Refund") == [
        "[version=2.0].[type=golden_multi_Refund].[type=golden_multi_Line].line",
        "[version=2.0].[type=golden_multi_Refund].[type=golden_multi_Line].line.[type=int].qty",
        "[version=2.0].[type=golden_multi_Refund].[type=golden_multi_Line].line.[type=string].sku",
        "[version=2.0].[type=golden_multi_Refund].[type=long].amount",
        "[version=2.0].[type=golden_multi_Refund].[type=string].order_id",
    ]
    assert _paths("multi_top", message="golden.multi.Line") == _paths("multi_top", message=".golden.multi.Line")
    assert _paths("nested", message="Customer.Address.Geo") == [
        "[version=2.0].[type=golden_nested_Customer_Address_Geo].[type=double].lat",
        "[version=2.0].[type=golden_nested_Customer_Address_Geo].[type=double].lon",
    ]


def test_unknown_message():
    with pytest.raises(SchemaNormalizationError, match=r"no message 'Nope'.*golden\.multi\.Order"):
        fields_of(FOLDER / "multi_top.proto", message="Nope")


def test_recursion_terminates_and_is_marked():
    fields = fields_of(FOLDER / "recursive_self.proto")
    recursive = {f.fieldPath.rsplit(".", 1)[-1]: f for f in fields if f.recursive}
    assert sorted(recursive) == ["alt", "children", "next", "value"]  # direct, oneof, repeated, map value
    children = recursive["children"]
    assert children.type.name == "ArrayType" and children.nativeDataType == "golden.rself.Node"
    prefix = "[version=2.0].[type=golden_rself_Node]."
    for f in fields:  # a recursion stop has no children
        if f.recursive:
            assert not any(g.fieldPath.startswith(f.fieldPath + ".") for g in fields)
    assert prefix + "[type=golden_rself_Node].next" in recursive["next"].fieldPath


def test_mutual_recursion_stops_at_the_first_repeat_on_each_path():
    paths = {p: r for p, r in ((f.fieldPath, f.recursive) for f in fields_of(FOLDER / "recursive_mutual.proto"))}
    a = "[version=2.0].[type=golden_rmutual_Tree].[type=golden_rmutual_A].root"
    assert paths[a] is False
    assert paths[a + ".[type=golden_rmutual_B].b.[type=golden_rmutual_A].back"] is True
    assert paths[a + ".[type=array].[type=golden_rmutual_A].siblings"] is True
    c = a + ".[type=golden_rmutual_B].b.[type=golden_rmutual_C].c"
    assert paths[c + ".[type=union].parent.[type=golden_rmutual_B].up"] is True
    assert sum(paths.values()) == 3


def test_descriptor_set_input_gives_the_same_fields(tmp_path):
    from grpc_tools import protoc

    out = tmp_path / "set.desc"
    for f, text in IMPORTS.items():
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(text)
    source = FOLDER / "imports_two_files.proto"
    (tmp_path / source.name).write_text(source.read_text())
    args = ["protoc", f"-I{tmp_path}", f"--descriptor_set_out={out}", "--include_imports", source.name]
    assert protoc.main(args) == 0
    data = out.read_bytes()
    assert is_descriptor_set(data) and not is_descriptor_set(source.read_bytes())
    assert walk(parse_protobuf(data)) == fields_of(source)
    assert normalize(data, "protobuf") == fields_of(source)


def test_descriptor_set_without_well_known_types(tmp_path):
    from grpc_tools import protoc

    text = (
        'syntax = "proto3";\nimport "google/protobuf/timestamp.proto";\n'
        "message E { google.protobuf.Timestamp at = 1; }\n"
    )
    (tmp_path / "e.proto").write_text(text)
    out = tmp_path / "e.desc"
    include = str(__import__("pathlib").Path(protoc.__file__).parent / "_proto")
    assert protoc.main(["protoc", f"-I{tmp_path}", f"-I{include}", f"--descriptor_set_out={out}", "e.proto"]) == 0
    assert [f.fieldPath for f in normalize(out.read_bytes(), "protobuf")] == [
        "[version=2.0].[type=E].[type=google_protobuf_Timestamp].at",
        "[version=2.0].[type=E].[type=google_protobuf_Timestamp].at.[type=int].nanos",
        "[version=2.0].[type=E].[type=google_protobuf_Timestamp].at.[type=long].seconds",
    ]


def test_bytes_text_and_descriptor_objects():
    source = FOLDER / "scalars.proto"
    expected = fields_of(source)
    assert walk(parse_protobuf(source.read_bytes(), name="scalars.proto")) == expected
    from google.protobuf import timestamp_pb2

    ts = walk(parse_protobuf(timestamp_pb2.Timestamp.DESCRIPTOR))
    assert [f.fieldPath for f in ts] == [
        "[version=2.0].[type=google_protobuf_Timestamp].[type=int].nanos",
        "[version=2.0].[type=google_protobuf_Timestamp].[type=long].seconds",
    ]


def test_compile_error_names_schema_file_and_line():
    text = 'syntax = "proto3";\npackage bad;\nmessage A {\n  strin x = 1;\n}\n'
    with pytest.raises(SchemaNormalizationError) as err:
        normalize(text, "protobuf", name="orders.proto")
    msg = str(err.value)
    assert msg.startswith("schema 'orders.proto': protoc could not compile it:")
    assert 'orders.proto:4:3: "strin" is not defined.' in msg
    assert "fieldgraph-proto-" not in msg  # no temp paths


def test_missing_import_is_a_compile_error():
    with pytest.raises(SchemaNormalizationError, match=r"acme/nope\.proto"):
        parse_protobuf('syntax = "proto3";\nimport "acme/nope.proto";\nmessage A { int32 x = 1; }\n', name="a.proto")


def test_syntax_error_and_bad_inputs():
    with pytest.raises(SchemaNormalizationError, match=r"x\.proto:1:\d+"):
        parse_protobuf("message {", name="x.proto")
    with pytest.raises(SchemaNormalizationError, match="neither .proto text"):
        parse_protobuf(b"\xff\xfe\x00garbage")
    with pytest.raises(SchemaNormalizationError, match="not int"):
        parse_protobuf(42)
    with pytest.raises(SchemaNormalizationError, match="must be relative"):
        parse_protobuf("message A {}", imports={"../etc/x.proto": "message B {}"})


def test_descriptor_set_missing_dependency_names_the_file():
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name="main.proto", package="m", dependency=["dep.proto"])
    fdp.message_type.add(name="A")
    fds = descriptor_pb2.FileDescriptorSet(file=[fdp])
    with pytest.raises(SchemaNormalizationError, match=r"main\.proto imports 'dep\.proto'"):
        parse_protobuf(fds.SerializeToString())


def test_descriptor_set_bad_reference_names_the_field():
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name="main.proto", package="m", syntax="proto3")
    msg = fdp.message_type.add(name="A")
    msg.field.add(name="b", number=1, type=11, type_name=".m.Missing", label=1)
    with pytest.raises(SchemaNormalizationError, match=r"m\.A\.b|Missing"):
        parse_protobuf(descriptor_pb2.FileDescriptorSet(file=[fdp]).SerializeToString())


def test_only_enums_gives_no_field():
    assert normalize('syntax = "proto3";\nenum E { A = 0; }\n', "protobuf") == []


def test_deep_recursion_is_bounded():
    # 8 messages all referring to each other: the per-path expansion stays finite.
    n = 6
    body = "\n".join(
        f"message M{i} {{ " + " ".join(f"M{j} f{j} = {j + 1};" for j in range(n)) + " }" for i in range(n)
    )
    fields = normalize('syntax = "proto3";\n' + body, "protobuf")
    assert fields and any(f.recursive for f in fields)
    paths = [f.fieldPath for f in fields]
    assert paths == sorted(paths)
