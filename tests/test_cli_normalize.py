"""`fieldgraph normalize`, run as a user runs it: the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fieldgraph.normalizers import normalize

ROOT = Path(__file__).resolve().parents[1]
ORDERS = ROOT / "examples" / "schemas" / "orders.avsc"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    exe = shutil.which("fieldgraph", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "fieldgraph.ingest.cli"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=cwd,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


def test_json_output_is_datahub_fields():
    res = run("normalize", str(ORDERS), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == [f.to_datahub() for f in normalize(ORDERS.read_text())]


def test_key_flag():
    res = run("normalize", str(ORDERS), "--format", "avro", "--key", "--json")
    assert res.returncode == 0, res.stderr
    paths = [f["fieldPath"] for f in json.loads(res.stdout)]
    assert paths and all(p.startswith("[version=2.0].[key=True].") for p in paths)
    assert all(f["isPartOfKey"] for f in json.loads(res.stdout))


def test_table_output_shows_literal_paths():
    res = run("normalize", str(ORDERS))
    assert res.returncode == 0, res.stderr
    assert "[version=2.0].[type=Order].[type=Header].header" in res.stdout
    assert "10 fields" in res.stdout


@pytest.mark.parametrize(
    "content,message",
    [
        ('{"type": "record", "name": "Order", "fields": [{"name": "a", "type": "strin"}]}',
         "Order.a: unknown type 'strin'"),
        ('{"type": "record", ', "not valid JSON"),
    ],
)
def test_bad_input_exits_3_with_one_line(tmp_path, content, message):
    bad = tmp_path / "bad.avsc"
    bad.write_text(content)
    res = run("normalize", str(bad))
    assert res.returncode == 3
    assert res.stdout == ""
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr


def test_missing_file_exits_3(tmp_path):
    res = run("normalize", str(tmp_path / "nope.avsc"))
    assert res.returncode == 3
    assert "No such file" in res.stderr


# --- .proto files where they are, and diff reading schemas as normalize does ----------------------------------

ORDER_PROTO = 'syntax = "proto3";\npackage demo;\nimport "money.proto";\nmessage Order { string id = 1; Money total = 2; }\n'
MONEY_PROTO = 'syntax = "proto3";\npackage demo;\nmessage Money { int64 units = 1; string currency = 2; }\n'


def _paths(res: subprocess.CompletedProcess) -> list[str]:
    assert res.returncode == 0, res.stderr
    return [f["fieldPath"] for f in json.loads(res.stdout)]


def test_a_proto_file_compiles_from_its_folder_a_subfolder_or_an_absolute_path(tmp_path):
    (tmp_path / "order.proto").write_text(ORDER_PROTO)
    (tmp_path / "money.proto").write_text(MONEY_PROTO)
    here = _paths(run("normalize", "order.proto", "--json", cwd=tmp_path))  # protoc said: "Input is shadowed"
    assert "[version=2.0].[type=demo_Order].[type=demo_Money].total.[type=long].units" in here
    (tmp_path / "sub").mkdir()
    assert _paths(run("normalize", "../order.proto", "--json", cwd=tmp_path / "sub")) == here
    assert _paths(run("normalize", str(tmp_path / "order.proto"), "--json", cwd=tmp_path / "sub")) == here


def test_a_proto_syntax_error_is_protocs_message(tmp_path):
    (tmp_path / "bad.proto").write_text('syntax = "proto3";\nmessage B { int32 x = 1 }\n')
    res = run("normalize", "bad.proto", cwd=tmp_path)
    assert res.returncode == 3 and 'bad.proto:2:25: Expected ";"' in res.stderr, res.stderr
    assert "fieldgraph-proto-" not in res.stderr and "shadowed" not in res.stderr


def test_diff_of_proto_files_that_import_a_sibling(tmp_path):
    (tmp_path / "money.proto").write_text(MONEY_PROTO)
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "order.proto").write_text(ORDER_PROTO)
    (tmp_path / "v1" / "money.proto").write_text(MONEY_PROTO)
    (tmp_path / "order.proto").write_text(ORDER_PROTO.replace("Money total = 2;", "Money total = 2; string note = 3;"))
    res = run("diff", "v1/order.proto", "order.proto", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    changes = json.loads(res.stdout)["diffs"][0]["changes"]
    assert [(c["kind"], c["path"]) for c in changes] == [("added", "[version=2.0].[type=demo_Order].[type=string].note")]


def _table_schemas(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    """The same table before and after (a column added, one widened) in Spark, Arrow and Parquet files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def spark(cols: list[tuple[str, str]]) -> dict:
        return {"type": "struct", "fields": [{"name": n, "type": t, "nullable": True, "metadata": {}} for n, t in cols]}

    old = [("id", "long"), ("price", "integer"), ("tags", {"type": "array", "elementType": "string",
                                                         "containsNull": True})]
    new = [*old[:1], ("price", "long"), old[2], ("note", "string")]
    out: dict[str, tuple[Path, Path]] = {}
    for fmt, suffix in (("spark", ".json"), ("arrow", ".arrow"), ("parquet", ".parquet")):
        paths = []
        for label, cols in (("old", old), ("new", new)):
            p = tmp_path / f"{fmt}_{label}{suffix}"
            if fmt == "spark":
                p.write_text(json.dumps(spark(cols)))
            else:
                arrow = {"long": pa.int64(), "integer": pa.int32(), "string": pa.string()}
                schema = pa.schema([(n, arrow[t] if isinstance(t, str) else pa.list_(pa.string())) for n, t in cols])
                if fmt == "arrow":
                    with pa.OSFile(str(p), "wb") as sink, pa.ipc.new_file(sink, schema):
                        pass
                else:
                    pq.write_table(schema.empty_table(), p)
            paths.append(p)
        out[fmt] = (paths[0], paths[1])
    return out


@pytest.mark.parametrize("fmt", ["spark", "arrow", "parquet"])
def test_diff_names_fields_by_the_paths_normalize_gives(tmp_path, fmt):
    old, new = _table_schemas(tmp_path)[fmt]
    normalized = set(_paths(run("normalize", str(new), "--json")))
    res = run("diff", str(old), str(new), "--json")
    assert res.returncode == 0, res.stderr
    changed = [c["path"] for d in json.loads(res.stdout)["diffs"] for c in d["changes"]]
    assert any(p.endswith(".note") for p in changed) and any(p.endswith(".price") for p in changed), changed
    assert set(changed) <= normalized, (changed, normalized)


# --- DataMine files of several tables ----------------------------------------------------------------------------

DATAMINE_GOLDEN = ROOT / "tests" / "golden" / "datamine"
TWO_TABLES = {"schema": "shop", "table_list": [  # two unrelated tables: no root table to pick
    {"table": "orders", "fields": [{"id": 1, "name": "order_id", "type": "INT64", "isRequired": True}]},
    {"table": "refunds", "fields": [{"id": 1, "name": "refund_id", "type": "INT64", "isRequired": True},
                                    {"id": 2, "name": "amount", "type": "Double"}]},
]}


def _golden_tables(case: str) -> dict[str, list]:
    return {p.stem: json.loads(p.read_text()) for p in (DATAMINE_GOLDEN / case).glob("*.json") if p.stem != "schema"}


def test_datamine_file_of_unrelated_tables_prints_every_table(tmp_path):
    schema = tmp_path / "shop.json"
    schema.write_text(json.dumps(TWO_TABLES))
    res = run("normalize", str(schema))
    assert res.returncode == 0, res.stderr
    assert "shop.json (datamine) table orders: 1 field" in res.stdout
    assert "shop.json (datamine) table refunds: 2 fields" in res.stdout
    assert "[version=2.0].[type=orders].[type=long].order_id" in res.stdout
    assert "[version=2.0].[type=refunds].[type=double].amount" in res.stdout


def test_datamine_json_of_several_tables_maps_table_to_fields():
    res = run("normalize", str(DATAMINE_GOLDEN / "clickstream" / "schema.json"), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert list(doc) == ["geo", "event", "session"]  # the file's order
    assert doc == _golden_tables("clickstream")


def test_datamine_table_picks_one_table_as_an_array(tmp_path):
    expected = _golden_tables("attribution")["attribution_result_rule"]
    for flag in ("--table", "-t"):
        res = run("normalize", str(DATAMINE_GOLDEN / "attribution" / "schema.json"), flag, "attribution_result_rule",
                  "--json")
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout) == expected
    schema = tmp_path / "shop.json"
    schema.write_text(json.dumps(TWO_TABLES))
    res = run("normalize", str(schema), "--table", "refunds")
    assert res.returncode == 0, res.stderr
    assert "table refunds: 2 fields" in res.stdout and "orders" not in res.stdout


def test_datamine_file_of_one_table_keeps_the_json_array(tmp_path):
    one = {"schema": "shop", "table_list": TWO_TABLES["table_list"][:1]}
    schema = tmp_path / "one.json"
    schema.write_text(json.dumps(one))
    res = run("normalize", str(schema), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == [f.to_datahub() for f in normalize(one, "datamine")]
    res = run("normalize", str(schema))
    assert res.returncode == 0 and "table orders: 1 field" in res.stdout


def test_datamine_unknown_table_names_the_file_and_its_tables(tmp_path):
    schema = tmp_path / "shop.json"
    schema.write_text(json.dumps(TWO_TABLES))
    res = run("normalize", str(schema), "--table", "returns")
    assert res.returncode == 3 and res.stdout == ""
    assert f"{schema}: no table 'returns'; the tables are: orders, refunds" in res.stderr, res.stderr


def test_table_on_a_schema_that_is_not_datamine_is_an_error():
    res = run("normalize", str(ORDERS), "--table", "Order")
    assert res.returncode == 3 and res.stdout == ""
    assert "--table applies to DataMine schemas only (this schema's format is avro)" in res.stderr, res.stderr
