"""Avro compatibility where the specification's text decides (issue 21, item 5).

Two places where fieldgraph once disagreed with the specification (and Apache Avro's Java
checker): a reader's relative alias is resolved in the reader's namespace before it is
compared with the writer's full name; two decimals match only with equal precision and
scale ("Logical Types > Decimal"), which Java's checker does not check (so neither does
Confluent's Schema Registry); fieldgraph follows the specification there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fieldgraph.ingest.cli import app
from fieldgraph.normalizers.compat import Incompatibility, avro_compatible, check_compatibility


def rec(*fields, name="R", ns=None, aliases=None):
    out = {"type": "record", "name": name, "fields": list(fields)}
    if ns is not None:
        out["namespace"] = ns
    if aliases is not None:
        out["aliases"] = aliases
    return out


def f(name, type_, **kw):
    return {"name": name, "type": type_, **kw}


def named(kind, name, ns=None, aliases=None):
    """A record, enum or fixed named ``name`` (in ``ns``), with reader ``aliases``."""
    body = {"record": {"fields": [f("a", "int")]}, "enum": {"symbols": ["A", "B"]}, "fixed": {"size": 4}}[kind]
    out = {"type": kind, "name": name, **body}
    if ns is not None:
        out["namespace"] = ns
    if aliases is not None:
        out["aliases"] = aliases
    return out


def dec(precision, scale=None, *, fixed=None):
    out = {"type": "bytes", "logicalType": "decimal", "precision": precision}
    if fixed is not None:
        out = {"type": "fixed", "name": fixed[0], "size": fixed[1], "logicalType": "decimal", "precision": precision}
    if scale is not None:
        out["scale"] = scale
    return out


def kinds(problems: list[Incompatibility]) -> list[str]:
    return [p.kind for p in problems]


# --- named types: names and aliases ----------------------------------------------------------------

# (reader (name, namespace, aliases), writer (name, namespace), compatible, Java agrees)
ALIAS_CASES = [
    # a relative alias takes the reader's namespace: org.two.Old is not org.one.Old
    (("New", "org.two", ["Old"]), ("Old", "org.one"), False),
    (("New", "org.two", ["Old"]), ("Old", "org.two"), True),  # same namespace
    (("New", "org.two", ["org.one.Old"]), ("Old", "org.one"), True),  # fully qualified
    (("New", "org.two", ["org.three.Old"]), ("Old", "org.one"), False),  # qualified, other namespace
    (("New", None, ["Old"]), ("Old", None), True),  # no namespace on either side
    (("New", None, ["Old"]), ("Old", "org.one"), False),  # relative alias in the null namespace
    (("New", "org.two", ["Old"]), ("Old", None), False),  # org.two.Old is not Old
    (("New", "org.two", [".Old"]), ("Old", None), True),  # a leading dot: the null namespace
    (("New", None, ["org.one.Old"]), ("Old", "org.one"), True),
    # names themselves compare unqualified ("records with the same (unqualified) name")
    (("Old", "org.two", None), ("Old", "org.one"), True),
    (("New", "org.two", None), ("Old", "org.two"), False),
]
ALIAS_IDS = [f"{r[0]}@{r[1]}~{r[2]}<-{w[0]}@{w[1]}" for r, w, _ in ALIAS_CASES]


@pytest.mark.parametrize("kind", ["record", "enum", "fixed"])
@pytest.mark.parametrize("reader,writer,ok", ALIAS_CASES, ids=ALIAS_IDS)
def test_named_type_aliases_resolve_in_the_readers_namespace(kind, reader, writer, ok):
    problems = avro_compatible(named(kind, *reader), named(kind, *writer))
    assert kinds(problems) == ([] if ok else ["NAME_MISMATCH"]), problems


def test_cross_namespace_relative_alias_is_a_name_mismatch():
    [p] = avro_compatible(named("record", "New", "org.two", ["Old"]), named("record", "Old", "org.one"))
    assert (p.kind, p.rule, p.location) == ("NAME_MISMATCH", "avro.name-mismatch", "New")
    assert "org.two.New" in p.message and "org.one.Old" in p.message


def test_nested_named_types_alias_in_the_inherited_namespace():
    """A nested type inherits its enclosing namespace, and so do its relative aliases."""
    def outer(ns, inner_name, aliases=None):
        inner = {"type": "enum", "name": inner_name, "symbols": ["A"]}
        if aliases:
            inner["aliases"] = aliases
        return rec(f("e", inner), name="Outer", ns=ns)

    assert avro_compatible(outer("org.one", "Status", ["State"]), outer("org.one", "State")) == []
    [p] = avro_compatible(outer("org.two", "Status", ["State"]), outer("org.one", "State"))
    assert (p.kind, p.location) == ("NAME_MISMATCH", "Outer.e")
    assert avro_compatible(outer("org.two", "Status", ["org.one.State"]), outer("org.one", "State")) == []


def test_field_aliases_are_plain_names():
    assert avro_compatible(rec(f("b", "int", aliases=["a"]), ns="x"), rec(f("a", "int"), ns="y")) == []
    # a field name has no namespace: a dotted alias is not matched by its last part
    [p] = avro_compatible(rec(f("b", "int", aliases=["x.a"])), rec(f("a", "int")))
    assert p.kind == "READER_FIELD_MISSING_DEFAULT_VALUE"


def test_registry_modes_see_the_alias_in_one_direction_only():
    old = named("record", "Old", "org.one")
    renamed_same_ns = named("record", "New", "org.one", ["Old"])
    assert check_compatibility([old], renamed_same_ns, "BACKWARD") == []
    # aliases are the reader's: the old schema reading the new one has none
    assert kinds(check_compatibility([old], renamed_same_ns, "FORWARD")) == ["NAME_MISMATCH"]
    moved = named("record", "New", "org.two", ["Old"])
    [x] = check_compatibility([old], moved, "BACKWARD")
    assert (x.kind, x.direction, x.version) == ("NAME_MISMATCH", "new reads old", 0)


# Python's avro.compatibility compares the reader's aliases as written with the writer's full
# name: it misses a relative alias of a namespaced type (the spec and Java resolve it in the
# reader's namespace), matches such an alias to a writer in the null namespace (org.two.New's
# "Old" is org.two.Old, not Old), and does not read ".Old" as the null namespace's Old (Java's
# Schema.Name does). Every other alias case it judges as we do.
PYTHON_AVRO_DIFFERS = {
    ("New", "org.two", ("Old",), "Old", "org.two"),
    ("New", "org.two", ("Old",), "Old", None),
    ("New", "org.two", (".Old",), "Old", None),
}


@pytest.mark.parametrize("kind", ["record", "enum", "fixed"])
@pytest.mark.parametrize("reader,writer,ok", ALIAS_CASES, ids=ALIAS_IDS)
def test_alias_verdicts_against_python_avro(kind, reader, writer, ok):
    compat = pytest.importorskip("avro.compatibility")
    import avro.schema

    result = compat.ReaderWriterCompatibilityChecker().get_compatibility(
        avro.schema.parse(json.dumps(named(kind, *reader))), avro.schema.parse(json.dumps(named(kind, *writer)))
    )
    python_ok = result.compatibility is compat.SchemaCompatibilityType.compatible
    key = (reader[0], reader[1], tuple(reader[2] or ()), writer[0], writer[1])
    assert python_ok is (ok if key not in PYTHON_AVRO_DIFFERS else not ok)


# --- decimals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader,writer", [
    (dec(12, 2), dec(10, 2)),  # precision
    (dec(10, 3), dec(10, 2)),  # scale
    (dec(10), dec(10, 2)),  # scale 0 (the default) against 2
    (dec(12, 4), dec(10, 2)),  # both
    (dec(12, 2, fixed=("D", 8)), dec(10, 2, fixed=("D", 8))),
    (dec(10, 3, fixed=("D", 8)), dec(10, 2, fixed=("D", 8))),
], ids=["precision", "scale", "default-scale", "both", "fixed-precision", "fixed-scale"])
def test_decimals_of_different_precision_or_scale_do_not_match(reader, writer):
    for r, w in ((reader, writer), (writer, reader)):
        [p] = avro_compatible(r, w)
        assert (p.kind, p.rule) == ("DECIMAL_MISMATCH", "avro.decimal-mismatch")
        rs, ws = r.get("scale", 0), w.get("scale", 0)
        assert f"precision {r['precision']}, scale {rs}" in p.message
        assert f"precision {w['precision']}, scale {ws}" in p.message


def test_scale_change_says_how_values_would_read():
    [p] = avro_compatible(dec(10, 2), dec(10, 3))
    assert "10^1 times larger" in p.message
    [p] = avro_compatible(dec(10, 4), dec(10, 2))
    assert "10^2 times smaller" in p.message


@pytest.mark.parametrize("reader,writer", [
    (dec(10, 2), dec(10, 2)),
    (dec(10, 0), dec(10)),  # scale defaults to 0
    (dec(10, 2, fixed=("D", 8)), dec(10, 2, fixed=("D", 8))),
    # one side not a decimal: the underlying types resolve, as before
    (dec(10, 2), "bytes"), ("bytes", dec(10, 2)),
    (dec(10, 2), "string"), ("string", dec(10, 2)),  # string <-> bytes promotion
    ({"type": "fixed", "name": "D", "size": 8}, dec(10, 2, fixed=("D", 8))),
    (dec(10, 2, fixed=("D", 8)), {"type": "fixed", "name": "D", "size": 8}),
    # an invalid decimal (scale above precision; fixed too small) is plain bytes / fixed
    (dec(2, 3), dec(10, 2)), (dec(10, 2), dec(2, 3)),
    (dec(10, 2, fixed=("D", 2)), dec(4, 2, fixed=("D", 2))),
    # another logical type on bytes is not a decimal
    ({"type": "bytes", "logicalType": "big-decimal"}, dec(10, 2)),
], ids=lambda v: json.dumps(v, separators=(",", ":")))
def test_decimals_that_match(reader, writer):
    assert avro_compatible(reader, writer) == []


def test_bytes_decimal_and_fixed_decimal_stay_a_type_mismatch():
    assert kinds(avro_compatible(dec(10, 2), dec(10, 2, fixed=("D", 8)))) == ["TYPE_MISMATCH"]


def test_fixed_size_is_judged_before_the_decimal():
    assert kinds(avro_compatible(dec(10, 2, fixed=("D", 8)), dec(4, 2, fixed=("D", 4)))) == ["FIXED_SIZE_MISMATCH"]


def test_decimal_in_union_record_array_map():
    old = rec(
        f("opt", ["null", dec(10, 2)], default=None),
        f("line", rec(f("price", dec(10, 2)), name="Line")),
        f("prices", {"type": "array", "items": dec(10, 2)}),
        f("by_code", {"type": "map", "values": dec(10, 2)}),
    )
    new = rec(
        f("opt", ["null", dec(10, 3)], default=None),
        f("line", rec(f("price", dec(12, 2)), name="Line")),
        f("prices", {"type": "array", "items": dec(10, 3)}),
        f("by_code", {"type": "map", "values": dec(12, 2)}),
    )
    problems = avro_compatible(new, old)
    assert [(p.kind, p.location) for p in problems] == [
        ("DECIMAL_MISMATCH", "R.opt|1"),  # the writer union's member 1
        ("DECIMAL_MISMATCH", "R.line.price"),
        ("DECIMAL_MISMATCH", "R.prices[]"),
        ("DECIMAL_MISMATCH", "R.by_code{}"),
    ]
    assert avro_compatible(old, old) == [] and avro_compatible(new, new) == []


def test_decimal_reader_union_against_a_plain_writer():
    [p] = avro_compatible(["null", dec(10, 2)], dec(10, 3))
    assert (p.kind, p.location) == ("DECIMAL_MISMATCH", "union")
    # a member that reads the writer wins: a plain string reads the bytes decimal
    assert avro_compatible(["null", dec(10, 2), "string"], dec(10, 3)) == []
    # a union without a decimal member is still a missing branch, its message showing the decimal
    [p] = avro_compatible(["null", "int"], dec(10, 3))
    assert p.kind == "MISSING_UNION_BRANCH" and "bytes decimal(10,3)" in p.message


@pytest.mark.parametrize("mode", ["BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE"])
@pytest.mark.parametrize("change", ["precision", "scale"])
def test_registry_modes_reject_a_decimal_change(mode, change):
    old = rec(f("amount", dec(10, 2)))
    new = rec(f("amount", dec(12, 2) if change == "precision" else dec(10, 3)))
    got = check_compatibility([old], new, mode)
    directions = {"BACKWARD": ["new reads old"], "FORWARD": ["old reads new"],
                  "FULL": ["new reads old", "old reads new"]}[mode.split("_")[0]]
    assert [(x.kind, x.location, x.direction) for x in got] == [
        ("DECIMAL_MISMATCH", "R.amount", d) for d in directions]
    assert check_compatibility([old], old, mode) == []


def test_decimal_change_in_another_formats_model():
    """A Spark decimal is an Avro bytes decimal in the model: a change of scale is caught too."""
    pytest.importorskip("fieldgraph.normalizers.spark")

    def spark(t):
        return {"type": "struct", "fields": [{"name": "amount", "type": t, "nullable": False, "metadata": {}}]}

    assert check_compatibility([spark("decimal(10,2)")], spark("decimal(10,2)"), "FULL", format="spark") == []
    got = check_compatibility([spark("decimal(10,2)")], spark("decimal(10,4)"), "BACKWARD", format="spark")
    assert [x.rule for x in got] == ["avro.decimal-mismatch"]


def test_python_avro_does_not_check_decimals():
    """Why these verdicts cannot be checked against Apache Avro's own checkers: neither Python's
    avro.compatibility nor Java's SchemaCompatibility compares precision and scale (AVRO-2078),
    though the specification does; fieldgraph follows the specification."""
    compat = pytest.importorskip("avro.compatibility")
    import avro.schema

    result = compat.ReaderWriterCompatibilityChecker().get_compatibility(
        avro.schema.parse(json.dumps(dec(10, 3))), avro.schema.parse(json.dumps(dec(10, 2)))
    )
    assert result.compatibility is compat.SchemaCompatibilityType.compatible
    assert kinds(avro_compatible(dec(10, 3), dec(10, 2))) == ["DECIMAL_MISMATCH"]


# --- the CLI ---------------------------------------------------------------------------------------

runner = CliRunner()


def run(*args: str) -> subprocess.CompletedProcess:
    """The installed console script, on a wide terminal, so the table does not fold the rule names."""
    exe = shutil.which("fieldgraph", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "fieldgraph.ingest.cli"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env={"COLUMNS": "250", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("mode", ["backward", "forward"])
def test_cli_diff_rejects_a_decimal_scale_change(files, mode):
    old = files("old.avsc", rec(f("id", "long"), f("amount", dec(10, 2)), name="Payment", ns="shop"))
    new = files("new.avsc", rec(f("id", "long"), f("amount", dec(10, 3)), name="Payment", ns="shop"))
    res = run("diff", old, new, "--rules", mode)
    assert res.returncode == 1, res.stdout + res.stderr
    assert f"{mode}: avro.decimal-mismatch" in res.stdout and "Payment.amount" in res.stdout
    r = runner.invoke(app, ["diff", old, new, "--rules", mode, "--json"])
    assert r.exit_code == 1
    [v] = json.loads(r.output)["violations"]
    assert (v["rule"], v["path"]) == (f"{mode}: avro.decimal-mismatch", "Payment.amount")
    assert "scale 2" in v["message"] and "scale 3" in v["message"]
    assert runner.invoke(app, ["diff", old, old, "--rules", mode]).exit_code == 0


def test_cli_diff_rejects_a_relative_alias_across_namespaces(files):
    old = files("old.avsc", rec(f("a", "int"), name="Old", ns="org.one"))
    moved = files("moved.avsc", rec(f("a", "int"), name="New", ns="org.two", aliases=["Old"]))
    qualified = files("qualified.avsc", rec(f("a", "int"), name="New", ns="org.two", aliases=["org.one.Old"]))
    res = run("diff", old, moved, "--rules", "backward")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "backward: avro.name-mismatch" in res.stdout
    assert runner.invoke(app, ["diff", old, qualified, "--rules", "backward"]).exit_code == 0
