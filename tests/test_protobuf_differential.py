"""Differential tests: our Protobuf fields vs DataHub's ``protobuf_util`` (acryl-datahub 1.7.0.17).

Every attribute (fieldPath, nullable, type, nativeDataType, description, recursive,
isPartOfKey, jsonProps, tags), in order, on the golden fixtures and on generated ``.proto``
files. DataHub compiles into the process-wide descriptor pool (and imports ``<file>_pb2``
modules), so every generated file gets its own file and package name.
"""

from __future__ import annotations

import itertools
import json
import logging

import pytest

pytest.importorskip("grpc_tools")
pytest.importorskip("networkx")
protobuf_util = pytest.importorskip("datahub.ingestion.extractor.protobuf_util")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fieldgraph.normalizers.fields import SchemaField  # noqa: E402
from fieldgraph.normalizers.protobuf import parse_protobuf  # noqa: E402
from fieldgraph.normalizers.visitor import walk  # noqa: E402

from .golden import GOLDEN, cases  # noqa: E402

FOLDER = GOLDEN / "protobuf"
IMPORTS = {p.relative_to(FOLDER / "include").as_posix(): p.read_text() for p in (FOLDER / "include").rglob("*.proto")}
logging.getLogger(protobuf_util.__name__).setLevel(logging.ERROR)


def datahub_fields(file: str, text: str, imports: dict | None = None, key: bool = False) -> list[dict]:
    schemas = [protobuf_util.ProtobufSchema(k, v) for k, v in (imports or {}).items()]
    fields = protobuf_util.protobuf_schema_to_mce_fields(
        protobuf_util.ProtobufSchema(file, text), schemas, is_key_schema=key
    )
    return [json.loads(json.dumps(f.to_obj()).replace("pegasus2avro.", "")) for f in fields]


def our_fields(file: str, text: str, imports: dict | None = None, key: bool = False) -> list[dict]:
    return [f.to_datahub() for f in walk(parse_protobuf(text, name=file, imports=imports), key=key)]


def assert_same(ours: list[dict], theirs: list[dict], context: str) -> None:
    assert [o["fieldPath"] for o in ours] == [t["fieldPath"] for t in theirs], context
    for o, t in zip(ours, theirs, strict=False):
        assert SchemaField.from_datahub(o) == SchemaField.from_datahub(t), f"{context}: {o['fieldPath']}"
    assert [json.dumps(o) for o in ours] == [json.dumps(t) for t in theirs], context  # byte-identical JSON


FIXTURES = cases("protobuf", "*.proto")


@pytest.mark.parametrize("source", FIXTURES, ids=lambda p: p.stem)
def test_fixture_matches_datahub(source):
    text = source.read_text()
    key = source.stem.startswith("key_")
    ours = our_fields(source.name, text, IMPORTS, key)
    theirs = datahub_fields(source.name, text, IMPORTS if "import \"acme/" in text else None, key)
    if source.stem.startswith("recursive_"):
        # DataHub detects the cycle and returns no field; we terminate and mark the stops.
        assert theirs == []
        assert ours and any(o["recursive"] for o in ours)
    else:
        assert ours, source.name
        assert_same(ours, theirs, source.name)


# -- generated schemas ----------------------------------------------------------------------
_SCALARS = ["double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32",
            "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"]
_MAP_KEYS = ["int32", "int64", "uint32", "sint64", "fixed32", "bool", "string"]
_KEYWORDS = {"syntax", "import", "package", "option", "message", "enum", "service", "rpc", "returns",
             "oneof", "map", "repeated", "optional", "required", "reserved", "extensions", "extend",
             "to", "max", "group", "stream", "weak", "public", "true", "false", "inf", "nan"}
_COUNTER = itertools.count()

_names = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,5}", fullmatch=True).filter(lambda n: n not in _KEYWORDS)


def _unique_key(n: str) -> str:  # protoc rejects fields whose camel-case JSON names collide
    return n.replace("_", "").lower()


@st.composite
def proto_files(draw, cyclic: bool = False):
    n_messages = draw(st.integers(1, 4))
    nested = [draw(st.booleans()) for _ in range(n_messages)]
    lines = ["enum E { E_ZERO = 0; E_ONE = 1; }"]
    for i in range(n_messages):
        # types this message may use: scalars, the enums, earlier messages (acyclic), its nested ones
        refs = ["E", *(f"M{j}" for j in range(i)), *(f"M{j}.N{j}" for j in range(i) if nested[j])]
        if nested[i]:
            refs += [f"N{i}", "NE"]
        names = draw(st.lists(_names, min_size=1, max_size=7, unique_by=_unique_key))
        body: list[str] = []
        if nested[i]:
            body.append(f"message N{i} {{ string s = 1; E e = 2; }}")
            body.append("enum NE { NE_ZERO = 0; }")
        number = itertools.count(1)
        oneof: list[str] = []
        for name in names:
            kind = draw(st.sampled_from(["scalar", "scalar", "ref", "repeated", "map", "optional", "oneof"]))
            type_ = draw(st.sampled_from(_SCALARS + refs)) if kind != "scalar" else draw(st.sampled_from(_SCALARS))
            if kind == "ref" and refs:
                type_ = draw(st.sampled_from(refs))
            if kind == "map":
                line = f"map<{draw(st.sampled_from(_MAP_KEYS))}, {type_}> {name} = {next(number)};"
            elif kind == "oneof":
                oneof.append(f"{type_} {name} = {next(number)};")
                continue
            else:
                prefix = {"repeated": "repeated ", "optional": "optional "}.get(kind, "")
                line = f"{prefix}{type_} {name} = {next(number)};"
            body.append(line)
        if oneof:
            body.append(f"oneof choice_{i} {{ {' '.join(oneof)} }}")
        if cyclic:
            body.append(f"M{i} self_ref = {next(number)};")
            if i:
                body.append(f"repeated M{i - 1} back_ref = {next(number)};")
        lines.append(f"message M{i} {{\n  " + "\n  ".join(body) + "\n}")
    uid = next(_COUNTER)
    package = f"gen{uid}"
    text = f'syntax = "proto3";\npackage {package};\n\n' + "\n".join(lines) + "\n"
    return f"gen_{uid}.proto", text


def _compiles(file: str, text: str) -> bool:
    from fieldgraph.normalizers import SchemaNormalizationError

    try:
        parse_protobuf(text, name=file)
    except SchemaNormalizationError:
        return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(proto_files(), st.booleans())
def test_generated_schemas_match_datahub(file, key):
    text = file[1]
    name = file[0]
    assert _compiles(name, text), text
    ours = our_fields(name, text, key=key)
    theirs = datahub_fields(name, text, key=key)
    assert_same(ours, theirs, text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(proto_files(cyclic=True))
def test_generated_recursive_schemas_terminate(file):
    name, text = file
    assert _compiles(name, text), text
    ours = our_fields(name, text)
    assert datahub_fields(name, text) == []  # DataHub: "Cyclic schema detected", no field
    paths = [o["fieldPath"] for o in ours]
    assert paths == sorted(paths) and len(set(paths)) == len(paths)
    stops = [o for o in ours if o["recursive"]]
    assert stops and all(o["fieldPath"].endswith((".self_ref", ".back_ref")) for o in stops)
    for stop in stops:  # no children below a recursion stop
        assert not any(p.startswith(stop["fieldPath"] + ".") for p in paths)
