"""Golden files for the Avro normalizer: the seed's worked examples and our own cases."""

from __future__ import annotations

import pytest

from fieldgraph.normalizers import normalize, to_model

from .golden import cases, check


@pytest.mark.parametrize("source", cases("avro", "*.avsc"), ids=lambda p: p.stem)
def test_golden(source):
    fields = normalize(source.read_text(), "avro", key=source.stem.startswith("key_"))
    check(source, fields)


def _paths(name: str, key: bool = False) -> list[str]:
    from .golden import GOLDEN

    return [f.fieldPath for f in normalize((GOLDEN / "avro" / f"{name}.avsc").read_text(), key=key)]


# The seed's examples, where they agree with DataHub's implementation.
def test_seed_simple_record():
    assert _paths("seed_simple_record") == [
        "[version=2.0].[type=E].[type=string].a",
        "[version=2.0].[type=E].[type=string].b",
    ]


def test_seed_nested_record_as_key():
    assert _paths("seed_nested_record", key=True) == [
        "[version=2.0].[key=True].[type=SimpleNested].[type=InnerRcd].nestedRcd",
        "[version=2.0].[key=True].[type=SimpleNested].[type=InnerRcd].nestedRcd.[type=string].aStringField",
    ]


def test_seed_recursive_records():
    assert _paths("seed_recursive_record") == [
        "[version=2.0].[type=Recursive].[type=R].r",
        "[version=2.0].[type=Recursive].[type=R].r.[type=int].anIntegerField",
        "[version=2.0].[type=Recursive].[type=R].r.[type=R].aRecursiveField",
    ]
    assert _paths("seed_tree_node") == [
        "[version=2.0].[type=TreeNode].[type=long].value",
        "[version=2.0].[type=TreeNode].[type=array].[type=TreeNode].children",
    ]


def test_seed_union_paths():
    # The seed shows this example with [key=True] although it is a value schema.
    assert _paths("seed_ab_union", key=True) == [
        "[version=2.0].[key=True].[type=ABUnion].[type=union].a",
        "[version=2.0].[key=True].[type=ABUnion].[type=union].[type=A].a",
        "[version=2.0].[key=True].[type=ABUnion].[type=union].[type=A].a.[type=string].f",
        "[version=2.0].[key=True].[type=ABUnion].[type=union].[type=B].a",
        "[version=2.0].[key=True].[type=ABUnion].[type=union].[type=B].a.[type=string].f",
    ]


def test_seed_arrays_maps_mixed():
    assert _paths("seed_nested_array") == [
        "[version=2.0].[type=NestedArray].[type=array].[type=array].[type=Foo].ar",
        "[version=2.0].[type=NestedArray].[type=array].[type=array].[type=Foo].ar.[type=long].a",
    ]
    assert _paths("seed_map_of_longs") == ["[version=2.0].[type=R].[type=map].[type=long].a_map_of_longs_field"]
    assert _paths("seed_mixed_union") == [
        "[version=2.0].[type=ABFooUnion].[type=union].a",
        "[version=2.0].[type=ABFooUnion].[type=union].[type=A].a",
        "[version=2.0].[type=ABFooUnion].[type=union].[type=A].a.[type=string].f",
        "[version=2.0].[type=ABFooUnion].[type=union].[type=B].a",
        "[version=2.0].[type=ABFooUnion].[type=union].[type=B].a.[type=string].f",
        "[version=2.0].[type=ABFooUnion].[type=union].[type=array].[type=array].[type=Foo].a",
        "[version=2.0].[type=ABFooUnion].[type=union].[type=array].[type=array].[type=Foo].a.[type=long].f",
    ]
    assert _paths("seed_primitive") == ["[version=2.0].[type=string]"]


def test_recursion_through_nullable_self_terminates_and_is_marked():
    from .golden import GOLDEN

    fields = normalize((GOLDEN / "avro" / "recursive_nullable_self.avsc").read_text())
    assert [(f.fieldPath, f.recursive, f.nullable) for f in fields] == [
        ("[version=2.0].[type=LinkedList].[type=long].value", False, False),
        ("[version=2.0].[type=LinkedList].[type=LinkedList].next", True, True),
    ]


def test_every_input_form_gives_the_same_fields():
    import json

    from .golden import GOLDEN

    text = (GOLDEN / "avro" / "unions.avsc").read_text()
    expected = normalize(text)
    assert normalize(text.encode()) == expected
    assert normalize(json.loads(text)) == expected


def test_normalize_text_remembers_a_schema_by_its_text_and_not_a_failure():
    from fieldgraph.normalizers import SchemaNormalizationError, normalize_text
    from fieldgraph.normalizers.api import _normalize_text

    from .golden import GOLDEN

    text = (GOLDEN / "avro" / "seed_nested_record.avsc").read_text()
    first = normalize_text(text)
    assert [f.to_datahub() for f in first] == [f.to_datahub() for f in normalize(text)]
    hits = _normalize_text.cache_info().hits
    assert normalize_text((text + " ")[:-1]) is first and _normalize_text.cache_info().hits == hits + 1
    assert normalize_text(text, key=True) is not first  # a key schema: other paths
    assert all(f.fieldPath.startswith("[version=2.0].[key=True]") for f in normalize_text(text, key=True))
    bad = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "strin"}]}'
    for _ in range(2):
        with pytest.raises(SchemaNormalizationError, match="unknown type 'strin'"):
            normalize_text(bad)


# DataHub's test_schema_util.py, test_avro_schema_to_mce_fields_events_with_nullable_fields: one field, nullable
# (a field named `my.field` is `field`: its token is the part after the last dot).
@pytest.mark.parametrize(("case", "path"), [
    ("nullable_union_null_first", "[version=2.0].[type=TestRecord].[type=string].field"),
    ("nullable_union_null_last", "[version=2.0].[type=TestRecord].[type=string].field"),
    ("nullable_null_type", "[version=2.0].[type=TestRecord].[type=null].field"),
    # The root record DataHub's Hive bridge writes: `__struct_` renders as [type=struct], as any record's name.
    ("nullable_fixed_struct_root", "[version=2.0].[type=struct].[type=fixed].value"),
])
def test_datahub_nullable_field_cases(case, path):
    from .golden import GOLDEN

    fields = normalize((GOLDEN / "avro" / f"{case}.avsc").read_text())
    assert [(f.fieldPath, f.nullable) for f in fields] == [(path, True)]


def test_an_avro_record_named_struct_is_a_record_and_a_table_is_laid_out_by_columns():
    """Only the root a table's converter makes is laid out column by column (a primitive column without a root
    token); an Avro record called like it is walked as a record."""
    import json

    from fieldgraph.normalizers.struct import is_table

    from .golden import GOLDEN

    avro = (GOLDEN / "avro" / "nullable_fixed_struct_root.avsc").read_text()
    assert not is_table(to_model(avro))
    spark = {"type": "struct", "fields": [{"name": "value", "type": "integer", "nullable": True, "metadata": {}}]}
    assert is_table(to_model(json.dumps(spark), "spark"))
    assert [f.fieldPath for f in normalize(json.dumps(spark), "spark")] == ["[version=2.0].[type=int].value"]
    assert [f.fieldPath for f in normalize(avro, key=True)] == ["[version=2.0].[key=True].[type=struct].[type=fixed].value"]
