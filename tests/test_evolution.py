"""Schema evolution: the field diff, the DataMine and ODF rule sets, Avro compatibility, `fieldgraph diff`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fieldgraph.ingest.cli import app
from fieldgraph.normalizers import normalize
from fieldgraph.normalizers.compat import Incompatibility, Violation, avro_compatible, check, check_compatibility
from fieldgraph.normalizers.diff import SchemaDiff, diff_fields

from .golden import GOLDEN


def rec(*fields, name="R"):
    return {"type": "record", "name": name, "fields": list(fields)}


def f(name, type_, **kw):
    return {"name": name, "type": type_, **kw}


def avro_diff(old, new) -> SchemaDiff:
    return diff_fields(normalize(json.dumps(old)), normalize(json.dumps(new)))


def kinds(diff: SchemaDiff) -> list[tuple[str, str]]:
    return [(c.kind, c.path.rsplit(".", 1)[-1]) for c in diff.changes]


OPT = ["null", "string"]

# --- the diff ------------------------------------------------------------------------------------


def test_identical():
    s = rec(f("a", "int"), f("b", OPT))
    d = avro_diff(s, s)
    assert d.identical and not d and d.changes == ()
    assert check(d, "odf") == [] and check(d, "datamine") == []


def test_added_and_removed_with_nesting():
    old = rec(f("a", "int"), f("gone", rec(f("x", "int"), name="G")))
    new = rec(f("a", "int"), f("new", ["null", rec(f("y", "int"), name="N")]))
    d = avro_diff(old, new)
    assert kinds(d) == [("removed", "gone"), ("removed", "x"), ("added", "new"), ("added", "y")]
    assert [c.nested for c in d.removed] == [False, True]
    assert [c.nested for c in d.added] == [False, True]
    assert d.added[0].new.nullable and not d.added[1].new.nullable


def test_type_change_keeps_the_name_but_not_the_path():
    d = avro_diff(rec(f("a", "int")), rec(f("a", "long")))
    assert kinds(d) == [("type_changed", "a")]
    c = d.type_changed[0]
    assert c.old_path == "[version=2.0].[type=R].[type=int].a"
    assert c.path == "[version=2.0].[type=R].[type=long].a"
    assert c.describe() == "type int (NumberType) -> long (NumberType)"


def test_array_item_type_change():
    d = avro_diff(rec(f("t", {"type": "array", "items": "string"})), rec(f("t", {"type": "array", "items": "int"})))
    assert kinds(d) == [("type_changed", "t")]
    assert d.type_changed[0].describe() == "type array.string (ArrayType) -> array.int (ArrayType)"


def test_nullability_change_is_not_a_type_change():
    d = avro_diff(rec(f("a", "string"), f("b", OPT)), rec(f("a", OPT), f("b", "string")))
    assert kinds(d) == [("nullability_changed", "a"), ("nullability_changed", "b")]
    assert [c.describe() for c in d.nullability_changed] == ["required -> nullable", "nullable -> required"]


def test_rename_same_position_and_type():
    # issue 35: a rename no schema states is only suggested; the fields stay removed and added
    d = avro_diff(rec(f("a", "int"), f("b", "string"), f("c", "int")),
                  rec(f("a", "int"), f("bb", "string"), f("c", "int")))
    assert kinds(d) == [("removed", "b"), ("added", "bb"), ("likely_renamed", "bb")]
    assert d.renamed == () and d.likely_renamed[0].old_path.endswith(".b")
    assert d.likely_renamed[0].reason == "same position and type"


def test_not_a_rename_when_the_type_differs_or_position_moves():
    d = avro_diff(rec(f("a", "int"), f("b", "string")), rec(f("a", "int"), f("bb", "int")))
    assert kinds(d) == [("removed", "b"), ("added", "bb")]
    d = avro_diff(rec(f("a", "int"), f("b", "string")), rec(f("bb", "string"), f("a", "int")))
    assert ("renamed", "bb") not in kinds(d)


def test_renamed_struct_children_follow_it():
    old = rec(f("s", rec(f("x", "int"), f("y", "int"), name="S")))
    new = rec(f("t", rec(f("x", "int"), f("y", "long"), name="S")))
    d = avro_diff(old, new)
    # issue 35: a guessed rename is a suggestion; the struct and its children are removed and added
    assert kinds(d) == [("removed", "s"), ("removed", "x"), ("removed", "y"), ("added", "t"), ("added", "x"),
                        ("added", "y"), ("likely_renamed", "t")]
    # stated (an alias), the rename applies and the children follow it
    new = rec(f("t", rec(f("x", "int"), f("y", "long"), name="S"), aliases=["s"]))
    assert kinds(avro_diff(old, new)) == [("renamed", "t"), ("type_changed", "y")]


def test_reordered():
    d = avro_diff(rec(f("a", "int"), f("b", "int"), f("c", "int")), rec(f("b", "int"), f("a", "int"), f("c", "int")))
    assert kinds(d) == [("reordered", "b"), ("reordered", "a")]
    assert check(d, "odf") == [] and check(d, "datamine") == []
    # adding before a field is not a reorder
    d = avro_diff(rec(f("a", "int")), rec(f("z", OPT), f("a", "int")))
    assert kinds(d) == [("added", "z")]


def test_renamed_root_record_is_not_a_change_of_every_field():
    d = avro_diff(rec(f("a", "int"), f("b", "string")), rec(f("a", "int"), f("b", "string"), name="R2"))
    assert d.changes == () and not d.identical  # the paths moved, nothing else


def test_union_members_are_matched_by_type():
    old = rec(f("u", [rec(f("x", "int"), name="A"), rec(f("x", "int"), name="B")]))
    new = rec(f("u", [rec(f("x", "int"), name="A"), rec(f("x", "long"), name="B")]))
    d = avro_diff(old, new)
    assert [(c.kind, c.path) for c in d.changes] == [
        ("type_changed", "[version=2.0].[type=R].[type=union].[type=B].u.[type=long].x"),
    ]


def test_diff_of_datamine_versions():
    base = json.loads((GOLDEN / "datamine" / "attribution" / "schema.json").read_text())
    new = json.loads(json.dumps(base))
    fields = new["table_list"][1]["fields"]
    fields[1]["type"] = "Double"  # data_cost: Float -> Double
    fields.append({"id": 4, "name": "region", "type": "String"})
    d = diff_fields(normalize(base, "datamine"), normalize(new, "datamine"))
    assert kinds(d) == [("added", "region"), ("type_changed", "data_cost")]
    assert [v.rule for v in check(d, "datamine")] == ["datamine.no-type-change"]


def test_diff_of_spark_versions():
    pytest.importorskip("fieldgraph.normalizers.spark")
    old = {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": False, "metadata": {}},
        {"name": "tags", "type": {"type": "array", "elementType": "string", "containsNull": True},
         "nullable": True, "metadata": {}},
    ]}
    new = {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "tags", "type": {"type": "array", "elementType": "string", "containsNull": True},
         "nullable": True, "metadata": {}},
        {"name": "note", "type": "string", "nullable": True, "metadata": {}},
    ]}
    d = diff_fields(normalize(old, "spark"), normalize(new, "spark"))
    assert kinds(d) == [("added", "note"), ("nullability_changed", "id")]
    assert [v.rule for v in check(d, "odf")] == ["odf.no-nullability-change"]
    assert check(d, "datamine") == []


# --- rule sets ----------------------------------------------------------------------------------


def rules_of(old, new, rules):
    return [(v.rule, v.path.rsplit(".", 1)[-1]) for v in check(avro_diff(old, new), rules)]


def test_datamine_allows_optional_additions_and_relaxing():
    old = rec(f("a", "int"), f("b", "string"))
    new = rec(f("a", "int"), f("b", OPT), f("c", OPT), f("s", ["null", rec(f("x", "int"), name="S")]))
    assert rules_of(old, new, "datamine") == []


def test_datamine_violations():
    old = rec(f("a", "int"), f("b", OPT), f("c", "int"), f("d", "string"))
    new = rec(f("a", "long"), f("b", "string"), f("cc", "int"), f("e", "int"))
    assert rules_of(old, new, "datamine") == [
        ("datamine.no-removal", "c"),  # issue 35: c -> cc is only a likely rename: a removal and an addition
        ("datamine.no-removal", "d"),
        ("datamine.no-new-required", "cc"),
        ("datamine.no-new-required", "e"),
        ("datamine.no-type-change", "a"),
        ("datamine.no-optional-to-required", "b"),
    ]
    stated = rec(f("a", "long"), f("b", "string"), f("cc", "int", aliases=["c"]), f("e", "int"))
    assert ("datamine.no-removal", "cc") in rules_of(old, stated, "datamine")  # a rename removes the old name
    v = check(avro_diff(old, new), "datamine")[0]
    assert isinstance(v, Violation) and "no existing field can be removed" in v.message


def test_odf_rules():
    old = rec(f("a", "int"), f("b", OPT), f("c", "int"))
    assert rules_of(old, rec(f("c", "int"), f("a", "int"), f("b", OPT), f("n", OPT)), "odf") == []
    new = rec(f("a", "long"), f("b", "string"), f("cc", "int"), f("r", "int"))
    assert rules_of(old, new, "odf") == [  # issue 35: c -> cc is only a likely rename: a removal and an addition
        ("odf.no-removal", "c"),
        ("odf.added-must-be-optional", "cc"),
        ("odf.added-must-be-optional", "r"),
        ("odf.no-type-change", "a"),
        ("odf.no-nullability-change", "b"),
    ]
    stated = rec(f("a", "long"), f("b", "string"), f("cc", "int", aliases=["c"]), f("r", "int"))
    assert rules_of(old, stated, "odf") == [
        ("odf.added-must-be-optional", "r"),
        ("odf.no-rename", "cc"),
        ("odf.no-type-change", "a"),
        ("odf.no-nullability-change", "b"),
    ]
    # relaxing nullability is a change ODF rejects, DataMine allows
    relax = (rec(f("a", "int")), rec(f("a", ["null", "int"])))
    assert rules_of(*relax, "odf") == [("odf.no-nullability-change", "a")]
    assert rules_of(*relax, "datamine") == []
    assert rules_of(old, rec(f("a", "int"), f("b", OPT)), "odf") == [("odf.no-removal", "c")]


def test_unknown_rule_set():
    with pytest.raises(ValueError, match="unknown rule set"):
        check(SchemaDiff(), "nope")


# --- Avro schema resolution --------------------------------------------------------------------

ENUM = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
ENUM3 = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}
ENUM_DEF = {"type": "enum", "name": "E", "symbols": ["A", "U"], "default": "U"}
FIXED4 = {"type": "fixed", "name": "F", "size": 4}
# (reader, writer, compatible), after the Avro specification's "Schema Resolution".
SPEC_CASES = [
    ("int", "int", True),
    ("long", "int", True), ("float", "int", True), ("double", "int", True),
    ("float", "long", True), ("double", "long", True), ("double", "float", True),
    ("bytes", "string", True), ("string", "bytes", True),
    ("int", "long", False), ("long", "float", False), ("float", "double", False),
    ("int", "string", False), ("boolean", "int", False), ("null", "int", False),
    ({"type": "array", "items": "long"}, {"type": "array", "items": "int"}, True),
    ({"type": "array", "items": "int"}, {"type": "array", "items": "long"}, False),
    ({"type": "map", "values": "double"}, {"type": "map", "values": "float"}, True),
    ({"type": "map", "values": "int"}, {"type": "array", "items": "int"}, False),
    (ENUM3, ENUM, True), (ENUM, ENUM3, False), (ENUM_DEF, ENUM3, True),
    ({**ENUM, "name": "Other"}, ENUM, False),
    ({**ENUM, "name": "Other", "aliases": ["E"]}, ENUM, True),
    (FIXED4, FIXED4, True), ({**FIXED4, "size": 8}, FIXED4, False), ({**FIXED4, "name": "G"}, FIXED4, False),
    (["null", "int"], "int", True), (["null", "long"], "int", True), (["null", "string"], "int", False),
    ("int", ["null", "int"], False), (["int", "null"], ["null", "int"], True),
    (["null", "int", "string"], ["null", "int"], True), (["null", "int"], ["null", "int", "string"], False),
    ("long", ["int", "long"], True),
    (rec(f("a", "int")), rec(f("a", "int"), f("b", "string")), True),  # writer's extra field is skipped
    (rec(f("a", "int"), f("b", "string")), rec(f("a", "int")), False),  # reader field without default
    (rec(f("a", "int"), f("b", "string", default="x")), rec(f("a", "int")), True),
    (rec(f("a", "long")), rec(f("a", "int")), True),
    (rec(f("a", "int")), rec(f("a", "long")), False),
    (rec(f("b", "int", aliases=["a"])), rec(f("a", "int")), True),  # field alias
    (rec(f("a", "int"), name="S"), rec(f("a", "int")), False),  # record names differ
    ({**rec(f("a", "int"), name="S"), "aliases": ["R"]}, rec(f("a", "int")), True),
    ({**rec(f("a", "int")), "namespace": "x.y"}, {**rec(f("a", "int")), "namespace": "z"}, True),
]
LINKED = {"type": "record", "name": "L", "fields": [f("v", "int"), f("next", ["null", "L"])]}
LINKED_LONG = {"type": "record", "name": "L", "fields": [f("v", "long"), f("next", ["null", "L"])]}
SPEC_CASES += [(LINKED_LONG, LINKED, True), (LINKED, LINKED_LONG, False)]


@pytest.mark.parametrize("reader,writer,ok", SPEC_CASES, ids=[str(i) for i in range(len(SPEC_CASES))])
def test_avro_resolution(reader, writer, ok):
    problems = avro_compatible(json.dumps(reader), json.dumps(writer))
    assert (problems == []) is ok, problems
    assert all(isinstance(p, Incompatibility) and p.kind and p.location for p in problems)


@pytest.mark.parametrize("reader,writer,ok", SPEC_CASES, ids=[str(i) for i in range(len(SPEC_CASES))])
def test_avro_resolution_matches_apache_avro(reader, writer, ok):
    """The same verdicts as Apache Avro's own Python checker (avro.compatibility)."""
    compat = pytest.importorskip("avro.compatibility")
    import avro.schema

    result = compat.ReaderWriterCompatibilityChecker().get_compatibility(
        avro.schema.parse(json.dumps(reader)), avro.schema.parse(json.dumps(writer))
    )
    assert (result.compatibility is compat.SchemaCompatibilityType.compatible) is ok


def test_incompatibility_kinds_and_locations():
    [p] = avro_compatible(rec(f("a", "int"), f("b", "string")), rec(f("a", "int")))
    assert (p.kind, p.location, p.rule) == (
        "READER_FIELD_MISSING_DEFAULT_VALUE", "R.b", "avro.reader-field-missing-default-value"
    )
    [p] = avro_compatible(
        rec(f("xs", {"type": "array", "items": "int"})), rec(f("xs", {"type": "array", "items": "long"}))
    )
    assert (p.kind, p.location) == ("TYPE_MISMATCH", "R.xs[]")
    [p] = avro_compatible(ENUM, ENUM3)
    assert p.kind == "MISSING_ENUM_SYMBOLS" and "C" in p.message
    [p] = avro_compatible({**FIXED4, "size": 8}, FIXED4)
    assert p.kind == "FIXED_SIZE_MISMATCH"
    [p] = avro_compatible(["null", "string"], "int")
    assert p.kind == "MISSING_UNION_BRANCH"
    [p] = avro_compatible(rec(f("a", "int"), name="S"), rec(f("a", "int")))
    assert p.kind == "NAME_MISMATCH"


V1 = rec(f("id", "int"), f("name", "string"))
V2 = rec(f("id", "long"), f("name", "string"), f("email", ["null", "string"], default=None))
V3 = rec(f("id", "long"), f("email", ["null", "string"], default=None), f("age", "int", default=0))


@pytest.mark.parametrize("mode,expected", [
    ("BACKWARD", []),
    ("BACKWARD_TRANSITIVE", []),
    ("FORWARD", [(1, "old reads new", "R.name")]),
    ("FULL", [(1, "old reads new", "R.name")]),
    ("FORWARD_TRANSITIVE", [(0, "old reads new", "R.id"), (0, "old reads new", "R.name"),
                            (1, "old reads new", "R.name")]),
    ("FULL_TRANSITIVE", [(0, "old reads new", "R.id"), (0, "old reads new", "R.name"),
                         (1, "old reads new", "R.name")]),
    ("NONE", []),
])
def test_registry_modes_over_three_versions(mode, expected):
    got = check_compatibility([V1, V2], V3, mode)
    assert [(x.version, x.direction, x.location) for x in got] == expected


def test_transitive_catches_what_the_latest_misses():
    old = rec(f("a", "int"), f("b", "string"))
    mid = rec(f("a", "int"), f("b", "string", default=""))
    new = rec(f("a", "int"))
    # FORWARD: mid (the latest) reads new thanks to its default; v1 cannot.
    assert check_compatibility([old, mid], new, "FORWARD") == []
    [x] = check_compatibility([old, mid], new, "FORWARD_TRANSITIVE")
    assert (x.version, x.location, x.kind) == (0, "R.b", "READER_FIELD_MISSING_DEFAULT_VALUE")
    # BACKWARD over a type narrowing: new reads long data written by mid
    assert check_compatibility([rec(f("a", "int"))], rec(f("a", "long")), "backward") == []
    assert [x.kind for x in check_compatibility([rec(f("a", "long"))], rec(f("a", "int")), "full")] == [
        "TYPE_MISMATCH"]


def test_compatibility_on_another_formats_model():
    pytest.importorskip("fieldgraph.normalizers.spark")
    from fieldgraph.normalizers import to_model

    old = {"type": "struct", "fields": [{"name": "id", "type": "integer", "nullable": False, "metadata": {}}]}
    new = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": False, "metadata": {}}]}
    assert check_compatibility([to_model(old, "spark")], to_model(new, "spark"), "BACKWARD") == []
    assert [x.kind for x in check_compatibility([old], new, "FORWARD", format="spark")] == ["TYPE_MISMATCH"]


def test_unknown_mode():
    with pytest.raises(ValueError, match="unknown compatibility mode"):
        check_compatibility([V1], V2, "SIDEWAYS")


# --- the CLI ---------------------------------------------------------------------------------------

runner = CliRunner()


def test_cli_diff_no_rules_exit_0(files):
    r = runner.invoke(app, ["diff", files("a.avsc", V1), files("b.avsc", V2)])
    assert r.exit_code == 0, r.output
    assert "type_changed" in r.output and "added" in r.output and "violations" not in r.output


def test_cli_diff_rules_broken_exit_1(files):
    r = runner.invoke(app, ["diff", files("a.avsc", V1), files("b.avsc", V2), "--rules", "datamine"])
    assert r.exit_code == 1
    assert "datamine.no-type-change" in r.output


def test_cli_diff_json(files):
    r = runner.invoke(app, ["diff", files("a.avsc", V2), files("b.avsc", V3), "--rules", "odf", "--json"])
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["ok"] is False and doc["rules"] == "odf"
    assert [v["rule"] for v in doc["violations"]] == ["odf.no-removal", "odf.added-must-be-optional"]
    assert [c["kind"] for c in doc["diffs"][0]["changes"]] == ["removed", "added"]


def test_cli_registry_modes(files):
    a, b, c = files("1.avsc", V1), files("2.avsc", V2), files("3.avsc", V3)
    assert runner.invoke(app, ["diff", a, b, c, "--rules", "backward_transitive"]).exit_code == 0
    r = runner.invoke(app, ["diff", a, b, c, "--rules", "forward_transitive", "--json"])
    assert r.exit_code == 1
    assert {v["path"] for v in json.loads(r.output)["violations"]} == {"R.id", "R.name"}
    assert runner.invoke(app, ["diff", b, c, "--rules", "BACKWARD"]).exit_code == 0


def test_cli_ok_when_rules_hold(files):
    r = runner.invoke(app, ["diff", files("a.avsc", V1), files("b.avsc", V1), "--rules", "odf"])
    assert r.exit_code == 0 and "identical" in r.output


def test_cli_datamine_per_table(files):
    base = json.loads((GOLDEN / "datamine" / "clickstream" / "schema.json").read_text())
    new = json.loads(json.dumps(base))
    new["table_list"][0]["fields"].append({"id": 5, "name": "zip", "type": "STRING", "isRequired": True})
    old_p, new_p = files("v1.json", base), files("v2.json", new)
    r = runner.invoke(app, ["diff", old_p, new_p, "--rules", "datamine", "--json"])
    assert r.exit_code == 1, r.output
    got = {(v["table"], v["rule"], v["path"]) for v in json.loads(r.output)["violations"]}
    assert got == {
        ("geo", "datamine.no-new-required", "[version=2.0].[type=geo].[type=string].zip"),
        ("session", "datamine.no-new-required", "[version=2.0].[type=session].[type=geo].geo.[type=string].zip"),
    }
    r = runner.invoke(app, ["diff", old_p, new_p, "--rules", "datamine", "--table", "event"])
    assert r.exit_code == 0, r.output
    new["table_list"][0]["fields"][-1]["isRequired"] = False
    assert runner.invoke(app, ["diff", old_p, files("v3.json", new), "--rules", "datamine"]).exit_code == 0


@pytest.mark.parametrize("argv", [
    ["diff", "ONE"],
    ["diff", "A", "B", "--rules", "sideways"],
    ["diff", "missing.avsc", "B"],
])
def test_cli_bad_input_exit_3(argv, files, tmp_path):
    a = files("a.avsc", V1)
    argv = [a if x in ("ONE", "A", "B") else str(tmp_path / x) if x.endswith(".avsc") else x for x in argv]
    r = runner.invoke(app, argv)
    assert r.exit_code == 3, r.output


def test_cli_bad_schema_exit_3(files, tmp_path):
    bad = tmp_path / "bad.avsc"
    bad.write_text('{"type": "record", "name": "R"}')
    r = runner.invoke(app, ["diff", files("a.avsc", V1), str(bad)])
    assert r.exit_code == 3
    assert "bad.avsc" in r.output or "bad.avsc" in (r.stderr if hasattr(r, "stderr") else "")
    dm = files("dm.json", {"schema": "s", "table_list": [{"table": "t", "fields": [
        {"id": 1, "name": "a", "type": "INT8"}, {"id": 1, "name": "b", "type": "INT32"}]}]})
    r = runner.invoke(app, ["diff", dm, dm])
    assert r.exit_code == 3


def test_cli_error_keeps_brackets_literal(files):
    dm = files("dm.json", {"schema": "s", "table_list": [{"table": "t", "fields": [
        {"id": 1, "name": "2a", "type": "INT32"}]}]})
    r = runner.invoke(app, ["diff", dm, dm])
    assert r.exit_code == 3
    assert "^[a-zA-Z][a-zA-Z0-9_]*$" in (r.output + getattr(r, "stderr", ""))


# --- DataMine's own rules: its types, its sort key (issue 21, item 6) ---------------------------------


def dm(*fields, table="t", more=()):
    """A DataMine schema of the table ``table`` with ``fields`` (plus the tables ``more``)."""
    return {"schema": "s", "table_list": [{"table": table, "fields": list(fields)}, *more]}


def col(id_, name, type_, **kw):
    return {"id": id_, "name": name, "type": type_, **kw}


def dm_diff(old, new, table="t") -> SchemaDiff:
    return diff_fields(normalize(old, "datamine", table=table), normalize(new, "datamine", table=table),
                       format="datamine")


def dm_rules(old, new, table="t") -> list[tuple[str, str]]:
    return [(v.rule, v.path.rsplit(".", 1)[-1]) for v in check(dm_diff(old, new, table), "datamine")]


# Types that render alike (all Avro int, or array of int) but that the document defines apart.
RETYPED = [("BYTE", "INT32"), ("Byte", "Integer"), ("INT16", "INT32"), ("Short", "INT32"), ("BYTE", "INT16"),
           ("List:Short", "List:Integer"), ("List:Byte", "List:INT32")]
# Two names the document gives one type ("Integer (INT32)", "Short (INT16)", ...), and case.
SAME_TYPE = [("Integer", "INT32"), ("Short", "INT16"), ("Byte", "BYTE"), ("Long", "INT64"), ("Boolean", "BOOL"),
             ("String", "STRING"), ("Float", "FLOAT"), ("Double", "DOUBLE"), ("List:Short", "List:INT16"),
             ("List:Integer", "List:INT32"), ("int32", "INT32")]


@pytest.mark.parametrize("old,new", RETYPED)
def test_datamine_type_change_hidden_by_rendering(old, new):
    before, after = dm(col(1, "a", old, isRequired=True)), dm(col(1, "a", new, isRequired=True))
    d = dm_diff(before, after)
    assert kinds(d) == [("type_changed", "a")]
    assert d.type_changed[0].path == d.type_changed[0].old_path  # the same path: only DataMine tells them apart
    assert dm_rules(before, after) == [("datamine.no-type-change", "a")]
    [v] = check(d, "datamine")
    assert "the type of an existing field cannot be changed" in v.message
    # the generic (Avro-shaped) diff of the same fields is unchanged: it compares paths and DataHub types
    assert diff_fields(normalize(before, "datamine"), normalize(after, "datamine")).identical


@pytest.mark.parametrize("old,new", SAME_TYPE)
def test_datamine_aliases_of_one_type_are_no_change(old, new):
    before, after = dm(col(1, "a", old)), dm(col(1, "a", new))
    assert dm_diff(before, after).identical
    assert dm_rules(before, after) == []


def test_datamine_type_change_describes_the_datamine_types():
    d = dm_diff(dm(col(1, "a", "Byte"), col(2, "xs", "List:Short")), dm(col(1, "a", "INT32"), col(2, "xs", "List:INT32")))
    assert [c.describe() for c in d.changes] == [
        "type BYTE (int, NumberType) -> INT32 (int, NumberType)",
        "type List:INT16 (array.int, ArrayType) -> List:INT32 (array.int, ArrayType)",
    ]


def test_datamine_type_change_inside_a_nested_table():
    rule = {"table": "rule", "fields": [col(1, "n", "INT16", isRequired=True)]}
    retyped = {"table": "rule", "fields": [col(1, "n", "INT32", isRequired=True)]}
    old = dm(col(1, "rules", "List:rule"), more=[rule])
    new = dm(col(1, "rules", "List:rule"), more=[retyped])
    assert dm_rules(old, new) == [("datamine.no-type-change", "n")]


def test_datamine_rename_needs_the_same_datamine_type():
    old = dm(col(1, "a", "INT32"), col(2, "b", "INT16"))
    # issue 35: a likely rename (same position and DataMine type) is a suggestion: b is removed
    assert dm_rules(old, dm(col(1, "a", "INT32"), col(2, "c", "Short"))) == [("datamine.no-removal", "b")]
    assert kinds(dm_diff(old, dm(col(1, "a", "INT32"), col(2, "c", "Short")))) == [
        ("removed", "b"), ("added", "c"), ("likely_renamed", "c")]
    assert kinds(dm_diff(old, dm(col(1, "a", "INT32"), col(2, "c", "BYTE")))) == [("removed", "b"), ("added", "c")]


SORTED = dm(col(1, "ts", "INT64", isRequired=True, isAscSortKey=True), col(2, "k", "STRING", isRequired=True))


def _sorted(ts_flags=None, k_flags=None, extra=()):
    return dm(col(1, "ts", "INT64", isRequired=True, **(ts_flags or {})),
              col(2, "k", "STRING", isRequired=True, **(k_flags or {})), *extra)


@pytest.mark.parametrize("new,expected", [
    (_sorted(), [("datamine.sort-key-removed", "ts")]),
    (_sorted(k_flags={"isAscSortKey": True}), [("datamine.sort-key-changed", "k")]),  # moved to another field
    (_sorted(ts_flags={"isDesSortKey": True}), [("datamine.sort-key-changed", "ts")]),  # another order
    (_sorted(ts_flags={"constraints": {"isDesSortKey": True}}), [("datamine.sort-key-changed", "ts")]),
])
def test_datamine_sort_key_removed_or_changed(new, expected):
    assert dm_rules(SORTED, new) == expected


def test_datamine_sort_key_messages():
    [v] = check(dm_diff(SORTED, _sorted()), "datamine")
    assert v.message == "sort key ts (ascending) removed: a table cannot get rid of its sort key once defined"
    [v] = check(dm_diff(SORTED, _sorted(k_flags={"isDesSortKey": True})), "datamine")
    assert v.message.startswith("sort key changed from ts (ascending) to k (descending): ")
    [v] = check(dm_diff(_sorted(), SORTED), "datamine")
    assert v.message == ("sort key ts (ascending) added to a table that had none: "
                         "a table must define its sort key while initialization")
    [c] = dm_diff(SORTED, _sorted()).changes
    assert (c.kind, c.describe()) == ("sort_key_changed", "sort key ts (ascending) -> (none)")


def test_datamine_sort_key_added_to_an_existing_table():
    assert dm_rules(_sorted(), SORTED) == [("datamine.sort-key-added", "ts")]
    new_field_sorts = _sorted(extra=[col(3, "n", "INT32", isAscSortKey=True)])
    assert dm_rules(_sorted(), new_field_sorts) == [("datamine.sort-key-added", "n")]


def test_datamine_sort_key_removed_with_its_field():
    assert dm_rules(SORTED, dm(col(2, "k", "STRING", isRequired=True))) == [
        ("datamine.no-removal", "ts"), ("datamine.sort-key-removed", "ts")]


@pytest.mark.parametrize("new", [
    SORTED,
    dm(col(2, "k", "STRING", isRequired=True), col(1, "ts", "INT64", isRequired=True, isAscSortKey=True)),  # moved
    dm(*SORTED["table_list"][0]["fields"], col(3, "note", "STRING")),  # an optional field added
    dm(col(1, "ts", "Long", isRequired=True, constraints={"isAscSortKey": True}), col(2, "k", "String",
                                                                                    isRequired=True)),
])
def test_datamine_unchanged_sort_key_is_not_flagged(new):
    assert dm_rules(SORTED, new) == []
    assert all(c.kind != "sort_key_changed" for c in dm_diff(SORTED, new).changes)


def test_datamine_sort_key_of_a_table_without_one_is_no_change():
    assert dm_diff(_sorted(), _sorted()).identical


def test_datamine_sort_key_of_a_retyped_or_renamed_field_is_the_same_key():
    retyped = dm(col(1, "ts", "INT32", isRequired=True, isAscSortKey=True), col(2, "k", "STRING", isRequired=True))
    assert dm_rules(SORTED, retyped) == [("datamine.no-type-change", "ts")]
    renamed = dm(col(1, "at", "INT64", isRequired=True, isAscSortKey=True), col(2, "k", "STRING", isRequired=True))
    # issue 35: ts -> at is only a likely rename (DataMine states none): ts removed, at added, the key moved
    assert dm_rules(SORTED, renamed) == [("datamine.no-removal", "ts"), ("datamine.no-new-required", "at"),
                                         ("datamine.sort-key-changed", "at")]


def test_datamine_sort_key_needs_the_datamine_diff():
    """Other formats' diffs know no sort key; the ODF rules have no sort-key rule."""
    plain = diff_fields(normalize(SORTED, "datamine"), normalize(_sorted(), "datamine"))
    assert plain.identical and check(plain, "datamine") == []
    assert check(dm_diff(SORTED, _sorted()), "odf") == []


def test_cli_datamine_type_changes(files):
    old = files("v1.json", dm(col(1, "b", "BYTE"), col(2, "s", "INT16"), col(3, "xs", "List:Short")))
    new = files("v2.json", dm(col(1, "b", "INT32"), col(2, "s", "INT32"), col(3, "xs", "List:Integer")))
    r = runner.invoke(app, ["diff", old, new, "--rules", "datamine", "--json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    assert [(v["rule"], v["path"].rsplit(".", 1)[-1]) for v in doc["violations"]] == [
        ("datamine.no-type-change", "b"), ("datamine.no-type-change", "s"), ("datamine.no-type-change", "xs")]
    r = runner.invoke(app, ["diff", old, new, "--rules", "datamine"])
    assert r.exit_code == 1 and "3 violations of datamine" in r.output and "no-type-change" in r.output
    assert "BYTE (int, NumberType)" in r.output
    assert runner.invoke(app, ["diff", old, new]).exit_code == 0  # no rules: the changes only
    alias = files("v3.json", dm(col(1, "b", "Byte"), col(2, "s", "Short"), col(3, "xs", "List:INT16")))
    r = runner.invoke(app, ["diff", old, alias, "--rules", "datamine"])
    assert r.exit_code == 0, r.output
    assert "identical" in r.output


def test_cli_datamine_sort_key(files):
    base = files("v1.json", SORTED)
    for name, new, rule in (("removed", _sorted(), "datamine.sort-key-removed"),
                            ("changed", _sorted(k_flags={"isAscSortKey": True}), "datamine.sort-key-changed")):
        r = runner.invoke(app, ["diff", base, files(f"{name}.json", new), "--rules", "datamine", "--json"])
        assert r.exit_code == 1, r.output
        assert [v["rule"] for v in json.loads(r.output)["violations"]] == [rule]
    r = runner.invoke(app, ["diff", files("none.json", _sorted()), base, "--rules", "datamine", "--table", "t"])
    assert r.exit_code == 1 and "sort_key_changed" in r.output and "sort-key-added" in r.output, r.output
    assert runner.invoke(app, ["diff", base, files("same.json", SORTED), "--rules", "datamine"]).exit_code == 0


def test_cli_datamine_new_table_may_define_its_sort_key(files):
    other = {"table": "u", "fields": [col(1, "id", "INT64", isRequired=True, isDesSortKey=True)]}
    r = runner.invoke(app, ["diff", files("v1.json", SORTED), files("v2.json", dm(*SORTED["table_list"][0]["fields"],
                                                                                    more=[other])),
                            "--rules", "datamine", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["violations"] == []
