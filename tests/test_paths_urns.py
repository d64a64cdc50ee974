"""Field paths (v2 parse/format, v1) and URNs (dataset, datasetField, schemaField)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fieldgraph.normalizers import (
    DatasetUrn,
    FieldPath,
    FieldPathError,
    FieldUrn,
    UrnError,
    is_v2,
    make_dataset_urn,
    make_field_urn,
    v1_path,
)
from fieldgraph.normalizers.urns import decode, encode

# --- field paths -------------------------------------------------------------


@pytest.mark.parametrize(
    "path,v1",
    [
        ("[version=2.0].[type=R].[type=string].a", "a"),
        (
            "[version=2.0].[key=True].[type=SimpleNested].[type=InnerRcd].nestedRcd.[type=string].aStringField",
            "nestedRcd.aStringField",
        ),
        ("[version=2.0].[type=union].[type=A].[type=string].f", "f"),
        ("[version=2.0].[type=string]", ""),
        ("header.customerId", "header.customerId"),  # not v2: unchanged
    ],
)
def test_v1_path(path, v1):
    assert v1_path(path) == v1


def test_parse_and_format_round_trip():
    text = "[version=2.0].[key=True].[type=ABUnion].[type=union].[type=A].a.[type=string].f"
    p = FieldPath.parse(text)
    assert p.key is True
    assert p.names == ("a", "f")
    assert [t.value for t in p.tokens if t.is_type] == ["ABUnion", "union", "A", "string"]
    assert str(p) == text
    assert p.v1 == "a.f" == v1_path(text)
    assert is_v2(text) and not is_v2("a.f")


@pytest.mark.parametrize(
    "bad,why",
    [
        ("", "empty"),
        ("a.b", "starts with [version=2.0]"),
        ("[version=1.0].[type=R].a", "unsupported version"),
        ("[version=2.0].[key=False].a", "bad key token"),
        ("[version=2.0]..a", "empty token"),
        ("[version=2.0].[type=R.a", "unclosed"),
        ("[version=2.0].[type=R]].a", "unmatched"),
        ("[version=2.0].[foo=R].a", "not a [type=X] token"),
        ("[version=2.0].[type=].a", "not a [type=X] token"),
        ("[version=2.0].[type=R]x.a", "text after"),
        ("[version=2.0].[type=R].[type=string].a.", "empty token"),
        ("[version=2.0].[type=[R]].a", "nested"),
    ],
)
def test_malformed_paths_are_told_apart(bad, why):
    with pytest.raises(FieldPathError, match="malformed field path") as info:
        FieldPath.parse(bad)
    assert why in info.value.reason


@given(
    st.lists(
        st.tuples(st.booleans(), st.text(alphabet="abcXYZ_0-", min_size=1, max_size=5)), min_size=0, max_size=6
    ),
    st.booleans(),
)
def test_any_well_formed_path_round_trips(tokens, key):
    from fieldgraph.normalizers import PathToken

    p = FieldPath(tuple(PathToken(v, is_type=t) for t, v in tokens), key=key)
    assert FieldPath.parse(str(p)) == p
    assert v1_path(str(p)) == p.v1


# --- URNs ----------------------------------------------------------------------

ORDERS = "urn:li:dataset:(urn:li:dataPlatform:kafka,demo.orders,PROD)"


def test_dataset_urn_round_trip():
    d = DatasetUrn.parse(ORDERS)
    assert (d.platform, d.name, d.env) == ("kafka", "demo.orders", "PROD")
    assert str(d) == ORDERS == make_dataset_urn("kafka", "demo.orders")


def test_reserved_characters_are_percent_encoded_like_datahub():
    urn = make_dataset_urn("hive", "db.t(a,b)")
    assert urn == "urn:li:dataset:(urn:li:dataPlatform:hive,db.t%28a%2Cb%29,PROD)"
    assert DatasetUrn.parse(urn).name == "db.t(a,b)"
    assert encode("a␟b") == "a%E2%90%9Fb" and decode("a%E2%90%9Fb") == "a␟b"


def test_field_urns_both_forms_and_nested_parentheses():
    path = "[version=2.0].[type=Order].[type=Header].header.[type=string].customerId"
    rfc = make_field_urn(ORDERS, path)
    assert rfc == f"urn:li:datasetField:({ORDERS},{path})"
    current = make_field_urn(ORDERS, path, form="schemaField")
    assert current == f"urn:li:schemaField:({ORDERS},{path})"
    for urn in (rfc, current):
        f = FieldUrn.parse(urn)
        assert str(f.dataset) == ORDERS and f.field_path == path
        assert f.dataset_field_urn == rfc and f.schema_field_urn == current
    slash = FieldUrn.parse(
        "urn:li:datasetField:(urn:li:dataset:(urn:li:dataPlatform:hdfs,/demo/fact_orders,PROD),/customerId)"
    )
    assert slash.dataset.name == "/demo/fact_orders" and slash.field_path == "/customerId"


def test_field_path_with_reserved_characters_round_trips():
    urn = make_field_urn(ORDERS, "weird,(name)", form="schemaField")
    assert urn == f"urn:li:schemaField:({ORDERS},weird%2C%28name%29)"
    assert FieldUrn.parse(urn).field_path == "weird,(name)"


def test_matches_datahub_urn_builders():
    mce_builder = pytest.importorskip("datahub.emitter.mce_builder")
    for name in ("demo.orders", "db.t(a,b)", "/demo/fact_orders"):
        ours = make_dataset_urn("kafka", name)
        assert ours == mce_builder.make_dataset_urn("kafka", name)
        for path in ("[version=2.0].[type=R].[type=string].a", "x,(y)"):
            assert make_field_urn(ours, path, form="schemaField") == mce_builder.make_schema_field_urn(ours, path)


@pytest.mark.parametrize(
    "bad,why",
    [
        ("dataset:(a,b,c)", "starts with 'urn:li:'"),
        ("urn:li:dataset", "expected urn:li:"),
        ("urn:li:dataset:(urn:li:dataPlatform:kafka,orders)", "3 parts"),
        ("urn:li:dataset:(urn:li:dataPlatform:kafka,orders,PROD", "must end with ')'"),
        ("urn:li:dataset:(urn:li:dataPlatform:kafka,(orders,PROD)", "unbalanced"),
        ("urn:li:corpuser:(jdoe)", "expected a dataset URN"),
        ("urn:li:dataset:(urn:li:corpuser:x,orders,PROD)", "not a dataPlatform URN"),
        ("urn:li:dataset:(urn:li:dataPlatform:kafka,,PROD)", "non-empty"),
    ],
)
def test_bad_dataset_urns(bad, why):
    with pytest.raises(UrnError, match="malformed URN") as info:
        DatasetUrn.parse(bad)
    assert why in info.value.reason


@pytest.mark.parametrize(
    "bad,why",
    [
        (f"urn:li:dataset:({ORDERS},a)", "expected a datasetField or schemaField"),
        (f"urn:li:datasetField:({ORDERS})", "2 parts"),
        (f"urn:li:schemaField:({ORDERS},)", "empty field path"),
    ],
)
def test_bad_field_urns(bad, why):
    with pytest.raises(UrnError) as info:
        FieldUrn.parse(bad)
    assert why in info.value.reason


@given(
    st.text(alphabet="ab.,()/-_␟", min_size=1, max_size=12),
    st.text(alphabet="[]=.ab,()␟", min_size=1, max_size=12),
)
def test_urn_round_trip_any_name_and_path(name, path):
    d = make_dataset_urn("kafka", name)
    assert DatasetUrn.parse(d).name == name
    f = FieldUrn.parse(make_field_urn(d, path))
    assert (str(f.dataset), f.field_path) == (d, path)
