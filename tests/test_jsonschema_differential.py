"""Differential test: our JSON Schema normalizer against DataHub's ``JsonSchemaTranslator``.

DataHub (``acryl-datahub``, a test-only extra) is the reference, called as its Kafka,
Kinesis and json-schema sources call it: ``get_fields_from_schema(schema, is_key_schema=...)``.
Every attribute of every field (fieldPath, nullable, description, type, nativeDataType,
recursive, isPartOfKey, jsonProps) must be identical, in the same order. Schemas on which
DataHub never terminates are skipped (we stop and mark the field recursive there).
"""

from __future__ import annotations

import json
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fieldgraph.normalizers import SchemaNormalizationError, normalize

from .golden import cases

json_schema_util = pytest.importorskip("datahub.ingestion.extractor.json_schema_util")
pre_json_transform = pytest.importorskip("datahub.emitter.serialization_helper").pre_json_transform


class Endless(Exception):
    pass


class Rejected(Exception):
    pass


def datahub_fields(schema: dict, key: bool) -> list[dict]:
    limit = sys.getrecursionlimit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # DataHub's endless recursions get slower with depth: give up on them early.
        sys.setrecursionlimit(600)
        try:
            fields = list(json_schema_util.JsonSchemaTranslator.get_fields_from_schema(
                json.loads(json.dumps(schema)), is_key_schema=key, swallow_exceptions=False))
        except RecursionError:
            raise Endless from None
        except Exception as exc:  # DataHub rejects the schema: so must we
            raise Rejected(repr(exc)) from None
        finally:
            sys.setrecursionlimit(limit)
    return [pre_json_transform(f.to_obj()) for f in fields]


def assert_identical(schema: dict, key: bool) -> None:
    try:
        expected = datahub_fields(schema, key)
    except Endless:
        out = normalize(schema, "json-schema", key=key)  # we terminate, and say where we cut
        assert any(f.recursive for f in out)
        return
    except Rejected:
        with pytest.raises(SchemaNormalizationError):
            normalize(schema, "json-schema", key=key)
        return
    actual = [f.to_datahub() for f in normalize(schema, "json-schema", key=key)]
    assert [json.dumps(a) for a in actual] == [json.dumps(e) for e in expected]


INPUTS = [p for p in cases("jsonschema", "*.json") if not p.name.endswith(".fields.json")]


@pytest.mark.parametrize("source", INPUTS, ids=lambda p: p.stem)
@pytest.mark.parametrize("key", [False, True], ids=["value", "key"])
def test_golden_inputs_match_datahub(source, key):
    assert_identical(json.loads(source.read_text()), key)


# --- generated schemas

NAMES = st.sampled_from(["id", "name", "a", "b", "value", "items", "type", "a.b", "x y", "Ünï", "_z"])
TITLES = st.sampled_from(["Order", "Line", "Address", "Node", "Money", "T"])
FORMATS = st.sampled_from(["date-time", "date", "time", "email", "uuid", "uri", "int64", "double"])
PRIMITIVE_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text("abcé", max_size=3),
                    st.floats(allow_nan=False, allow_infinity=False, width=16))
DEFS = ["D0", "D1", "D2"]


@st.composite
def decorate(draw, schema):
    """Add the annotations DataHub reads: description, default, const, format, title."""
    schema = dict(schema)
    if draw(st.booleans()):
        schema["description"] = draw(st.text("ab \n", max_size=4))
    if draw(st.integers(0, 3)) == 0:
        schema["default"] = draw(st.one_of(SCALARS, st.lists(SCALARS, max_size=2),
                                           st.dictionaries(st.sampled_from("kl"), SCALARS, max_size=2)))
    if draw(st.integers(0, 5)) == 0:
        schema["const"] = draw(SCALARS)
    if draw(st.integers(0, 4)) == 0:
        schema["format"] = draw(FORMATS)
    if draw(st.integers(0, 3)) == 0:
        schema["title"] = draw(TITLES)
    return schema


def primitive():
    return st.one_of(
        PRIMITIVE_TYPES.map(lambda t: {"type": t}),
        st.tuples(PRIMITIVE_TYPES.filter(lambda t: t != "null"), st.booleans()).map(
            lambda p: {"type": [p[0], "null"] if p[1] else ["null", p[0]]}),
        st.lists(PRIMITIVE_TYPES, min_size=1, max_size=3, unique=True).map(lambda ts: {"type": ts}),
        st.lists(SCALARS, min_size=1, max_size=3).map(lambda vs: {"enum": vs}),
        st.builds(dict),  # {}: any value
        st.sampled_from(DEFS).map(lambda d: {"$ref": f"#/definitions/{d}"}),
        st.just({"$ref": "#"}),
    ).flatmap(decorate)


def compound(inner):
    props = st.dictionaries(NAMES, inner, max_size=3)

    @st.composite
    def obj(draw):
        p = draw(props)
        s: dict = {"type": draw(st.sampled_from(["object", ["object", "null"], None]))}
        if s["type"] is None:
            del s["type"]
        if p or draw(st.booleans()):
            s["properties"] = p
        if p and draw(st.booleans()):
            s["required"] = draw(st.lists(st.sampled_from(sorted(p)), unique=True))
        if draw(st.integers(0, 5)) == 0:
            s["javaType"] = "com.example." + draw(TITLES)
        return s

    @st.composite
    def array(draw):
        s: dict = {"type": draw(st.sampled_from(["array", ["array", "null"]]))}
        if draw(st.integers(0, 4)):
            s["items"] = draw(inner)
        return s

    @st.composite
    def mapping(draw):
        s: dict = {"additionalProperties": draw(inner)}
        if draw(st.booleans()):
            s["type"] = "object"
        if draw(st.integers(0, 4)) == 0:
            s["properties"] = draw(props)
        return s

    @st.composite
    def union(draw):
        s: dict = {draw(st.sampled_from(["oneOf", "anyOf", "allOf"])): draw(st.lists(inner, min_size=1, max_size=3))}
        if draw(st.integers(0, 3)) == 0:
            s["properties"] = draw(props)
        if draw(st.integers(0, 4)) == 0:
            s["type"] = draw(st.lists(PRIMITIVE_TYPES, min_size=2, max_size=3, unique=True))
        return s

    return st.one_of(obj(), array(), mapping(), union()).flatmap(decorate)


SUBSCHEMA = st.recursive(primitive(), compound, max_leaves=6)


@st.composite
def documents(draw):
    if draw(st.integers(0, 5)) == 0:
        root = draw(st.one_of(compound(SUBSCHEMA), SUBSCHEMA))
    else:
        root = draw(compound(SUBSCHEMA))
    root = dict(root)
    defs = {d: draw(SUBSCHEMA) for d in DEFS}
    # A cycle of bare aliases (D1 -> D1, D0 -> D1 -> D0) is no schema at all: we reject it wherever it
    # stands, DataHub only when it is reached. Generated documents have none.
    # A definition that is a bare alias of the root (`{"$ref": "#"}`) reached through
    # `#/definitions/D`: jsonref puts DataHub's title on a copy of the root DataHub does not walk, we
    # put it on the root (a known difference). Generated documents have none.
    for d in DEFS:
        if defs[d].get("$ref") == "#":
            defs[d] = {"type": "string"}
    for d in DEFS:
        chain = [d]
        while str(defs[chain[-1]].get("$ref", "")).startswith("#/definitions/"):
            nxt = defs[chain[-1]]["$ref"].rsplit("/", 1)[-1]
            if nxt in chain:
                defs[chain[-1]] = {"type": "string"}
                break
            chain.append(nxt)
    root["definitions"] = defs
    return root


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=documents(), key=st.booleans())
def test_generated_schemas_match_datahub(schema, key):
    assert_identical(schema, key)
