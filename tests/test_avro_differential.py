"""Differential test: our Avro normalizer against DataHub's ``avro_schema_to_mce_fields``.

DataHub (``acryl-datahub``, a test-only extra) is the reference: every attribute of every
field must be identical, in the same order. The one intended difference is ``recursive``,
which DataHub always leaves False and we set where a recursive reference is cut.
"""

from __future__ import annotations

import itertools
import json
import os
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fieldgraph.normalizers import normalize

from .golden import cases

schema_util = pytest.importorskip("datahub.ingestion.extractor.schema_util")
pre_json_transform = pytest.importorskip("datahub.emitter.serialization_helper").pre_json_transform


def datahub_fields(schema: str, key: bool) -> list[dict] | None:
    """DataHub's fields as SchemaMetadata JSON, or None where DataHub itself fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fields = schema_util.avro_schema_to_mce_fields(schema, is_key_schema=key, swallow_exceptions=False)
        except RecursionError:
            return None
    return [pre_json_transform(f.to_obj()) for f in fields]


def ours(schema: str, key: bool) -> list[dict]:
    out = []
    for f in normalize(schema, "avro", key=key):
        d = f.to_datahub()
        d["recursive"] = False  # DataHub never sets it
        out.append(d)
    return out


def assert_identical(schema: str, key: bool) -> None:
    expected = datahub_fields(schema, key)
    if expected is None:
        pytest.skip("DataHub does not terminate on this schema")
    actual = ours(schema, key)
    # Byte-identical JSON, key order included.
    assert [json.dumps(a) for a in actual] == [json.dumps(e) for e in expected]


@pytest.mark.parametrize("source", cases("avro", "*.avsc"), ids=lambda p: p.stem)
@pytest.mark.parametrize("key", [False, True], ids=["value", "key"])
def test_golden_inputs_match_datahub(source, key):
    if source.stem.startswith("recursive_"):
        # DataHub recurses forever on these; we terminate (see test_avro_golden).
        assert datahub_fields(source.read_text(), key) is None
        return
    assert_identical(source.read_text(), key)


# ---------------------------------------------------------------------------
# Generated schemas

_NAME = st.text(alphabet="abcdefghijkXYZ_", min_size=1, max_size=6).filter(lambda s: s[0] != "_" or len(s) > 1)
_FIELD_NAME = st.one_of(_NAME, st.sampled_from(["with-hyphen", "a.b", "x1", "_u"]))
_JSON_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
_PROP_VALUE = st.one_of(
    _JSON_SCALAR, st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from("pq"), st.integers(0, 3), max_size=2),
)
_PROPS = st.fixed_dictionaries(
    {},
    optional={
        "x-owner": _PROP_VALUE,
        "pii": st.booleans(),
        "deprecated": st.one_of(st.booleans(), st.text(max_size=4)),
        "_nullable": st.booleans(),
        "native_data_type": st.text(min_size=1, max_size=6),
        "aliases": st.lists(_NAME, max_size=2),
        "logicalType": st.sampled_from(["date", "uuid", "decimal", "timestamp-millis", "custom"]),
    },
)
_PRIMITIVES = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]
_LOGICAL = [
    {"type": "int", "logicalType": "date"},
    {"type": "int", "logicalType": "time-millis"},
    {"type": "long", "logicalType": "time-micros"},
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "long", "logicalType": "timestamp-micros"},
    {"type": "string", "logicalType": "uuid"},
    {"type": "bytes", "logicalType": "decimal", "precision": 8, "scale": 2},
    {"type": "bytes", "logicalType": "decimal", "precision": 5},
    {"type": "long", "logicalType": "local-timestamp-micros"},
    {"type": "string", "logicalType": "date"},
]


class _AvroSchemas:
    """Draws one Avro schema: named types are defined before they are referred to."""

    def __init__(self, draw, max_depth: int) -> None:
        self.draw = draw
        self.max_depth = max_depth
        self.counter = itertools.count()
        self.named: list[str] = []  # completed named types, referable by full name

    def new_name(self) -> str:
        # Now and then the names DataHub's Hive bridge gives its structs (`[type=struct]`, `[type=struct0]`).
        prefix = self.draw(st.sampled_from(["", "", "", "", "__struct_", "__structn_0_"]))
        return f"{prefix}{self.draw(_NAME)}{next(self.counter)}"

    def props(self) -> dict:
        return self.draw(_PROPS)

    def schema(self, depth: int, ns: str | None, in_union: bool = False):
        draw = self.draw
        options = ["primitive", "primitive", "logical", "enum", "fixed"]
        if depth < self.max_depth:
            options += ["record", "record", "array", "map"] + ([] if in_union else ["union", "union"])
        # A bare name resolves in the enclosing namespace, so only full names (or names
        # outside any namespace) can be referred to from here.
        referable = [n for n in self.named if "." in n or ns is None]
        if referable:
            options.append("ref")
        kind = draw(st.sampled_from(options))
        if kind == "primitive":
            p = draw(st.sampled_from(_PRIMITIVES[1:] if in_union else _PRIMITIVES))
            extra = self.props()
            return {"type": p, **extra} if extra else p
        if kind == "logical":
            return dict(draw(st.sampled_from(_LOGICAL)))
        if kind == "ref":
            return draw(st.sampled_from(referable))
        if kind == "array":
            return {"type": "array", "items": self.schema(depth + 1, ns), **self.props()}
        if kind == "map":
            return {"type": "map", "values": self.schema(depth + 1, ns), **self.props()}
        if kind == "union":
            return self.union(depth, ns)
        return self.named_type(kind, depth, ns)

    def union(self, depth: int, ns: str | None) -> list:
        draw = self.draw
        members, seen = [], set()
        for _ in range(draw(st.integers(1, 4))):
            defined = len(self.named)
            m = self.schema(depth + 1, ns, in_union=True)
            if isinstance(m, str):
                tag = m
            else:
                tag = m.get("type") if m.get("type") not in ("record", "enum", "fixed") else m.get("name")
            if tag in seen:
                del self.named[defined:]  # the skipped member's definitions do not exist
                continue
            seen.add(tag)
            members.append(m)
        if draw(st.booleans()):
            members.insert(draw(st.integers(0, len(members))), "null")
        return members

    def named_type(self, kind: str, depth: int, ns: str | None) -> dict:
        draw = self.draw
        if kind == "record" and depth == 0 and draw(st.integers(0, 3)) == 0:
            name, space = "__struct_", None  # the root record DataHub's Hive bridge writes
        else:
            name = self.new_name()
            space = draw(st.sampled_from([None, None, "com.acme", "org.x"]))
        full = f"{space}.{name}" if space else (f"{ns}.{name}" if ns else name)
        node: dict = {"name": name}
        if space:
            node["namespace"] = space
        if draw(st.booleans()):
            node["doc"] = draw(st.text(max_size=8))
        node.update(self.props())
        if kind == "enum":
            symbols = st.lists(st.sampled_from(["A", "B", "C", "D"]), min_size=1, max_size=3, unique=True)
            node.update(type="enum", symbols=draw(symbols))
        elif kind == "fixed":
            node.update(type="fixed", size=draw(st.integers(1, 16)))
            if draw(st.booleans()):
                node.update(logicalType="decimal", precision=draw(st.integers(1, 12)))
        else:
            node.update(type="record", fields=self.fields(depth, full))
        self.named.append(full)
        return node

    def fields(self, depth: int, full: str) -> list:
        draw = self.draw
        fields = []
        for fname in draw(st.lists(_FIELD_NAME, min_size=1, max_size=4, unique=True)):
            f = {"name": fname, "type": self.schema(depth + 1, full.rsplit(".", 1)[0] if "." in full else None)}
            if draw(st.booleans()):
                f["doc"] = draw(st.text(max_size=6))
            if draw(st.integers(0, 3)) == 0:
                f["default"] = draw(_PROP_VALUE)
            f.update(self.props())
            fields.append(f)
        return fields


@st.composite
def avro_schema(draw, max_depth: int = 4):
    return _AvroSchemas(draw, max_depth).schema(0, None)


@settings(max_examples=int(os.environ.get("FIELDGRAPH_DIFF_EXAMPLES", "600")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(avro_schema(), st.booleans())
def test_generated_schemas_match_datahub(schema, key):
    text = json.dumps(schema)
    expected = datahub_fields(text, key)
    assert expected is not None
    actual = ours(text, key)
    assert [json.dumps(a) for a in actual] == [json.dumps(e) for e in expected], text
