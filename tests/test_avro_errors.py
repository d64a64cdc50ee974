"""Invalid Avro gets a SchemaNormalizationError naming the schema, the place and the problem."""

from __future__ import annotations

import pytest

from fieldgraph.normalizers import SchemaNormalizationError, normalize

CASES = [
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "a", "type": "strin"}]}',
        "Order.a", "unknown type 'strin'",
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "a", "type": {"type": "array"}}]}',
        "Order.a", 'no "items"',
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}]}',
        "Order.a", "used twice",
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "u", "type": ["null", ["int"]]}]}',
        "Order.u[1]", "another union",
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "u", "type": ["int", "int"]}]}',
        "Order.u[1]", "more than one 'int'",
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "e", "type": {"type": "enum", "name": "E", '
        '"symbols": ["a-b"]}}]}',
        "Order.e(E)", "not a valid Avro name",
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "e", "type": {"type": "enum", "name": "E", '
        '"symbols": ["A"], "default": "B"}}]}',
        "Order.e(E)", "default 'B'",
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "f", "type": {"type": "fixed", "name": "F", '
        '"size": -1}}]}',
        "Order.f(F)", '"size"',
    ),
    ('{"type": "record", "name": "Order"}', "Order", '"fields"'),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "l", "type": {"type": "array", '
        '"items": {"type": "record", "name": "L", "fields": [{"name": "x", "type": "Nope"}]}}}]}',
        "Order.l.items(L).x", "unknown type 'Nope'",
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "a", "type": {"type": "record", "name": "Order", '
        '"fields": []}}]}',
        "Order.a", "already defined",
    ),
    (
        '{"type": "record", "name": "Order", "fields": [{"name": "a", "type": "int", "order": "up"}]}',
        "Order.a", "order 'up'",
    ),
    ('{"type": "record", "name": "int", "fields": []}', "<root>", "reserved type name"),
    ('{"name": "x"}', "<root>", 'no "type"'),
    ("42", "<root>", "not int 42"),
]


@pytest.mark.parametrize("schema,where,what", CASES)
def test_invalid_schema_is_reported_with_its_place(schema, where, what):
    with pytest.raises(SchemaNormalizationError) as info:
        normalize(schema, name="orders.avsc")
    err = info.value
    assert err.schema == "orders.avsc"
    assert err.path == where
    assert what in err.reason
    assert str(err).startswith("schema 'orders.avsc' at ")


def test_not_json_names_the_schema():
    with pytest.raises(SchemaNormalizationError, match=r"schema 'bad.avsc'.*not valid JSON: .* line 1 column"):
        normalize('{"type": "record", "fields": [', name="bad.avsc")


def test_schema_name_defaults_to_its_declared_name():
    with pytest.raises(SchemaNormalizationError, match=r"^schema 'Order' at Order.a: "):
        normalize('{"type": "record", "name": "Order", "fields": [{"name": "a", "type": "nope"}]}')


def test_unknown_format():
    with pytest.raises(SchemaNormalizationError, match="unknown schema format 'yaml'"):
        normalize("{}", "yaml")


def test_no_stack_overflow_on_absurd_nesting():
    deep = '{"type": "array", "items": ' * 3000 + '"int"' + "}" * 3000
    with pytest.raises(SchemaNormalizationError, match="nests too deeply"):
        normalize(deep)
