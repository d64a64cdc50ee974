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


def run(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("fieldgraph", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "fieldgraph.ingest.cli"]
    env = {"COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env)


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
        (
            '{"type": "record", "name": "Order", "fields": [{"name": "a", "type": "strin"}]}',
            "Order.a: unknown type 'strin'",
        ),
        ('{"type": "record", ', "not valid JSON"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, content, message):
    bad = tmp_path / "bad.avsc"
    bad.write_text(content)
    res = run("normalize", str(bad))
    assert res.returncode == 2
    assert res.stdout == ""
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr


def test_missing_file_exits_2(tmp_path):
    res = run("normalize", str(tmp_path / "nope.avsc"))
    assert res.returncode == 2
    assert "No such file" in res.stderr
