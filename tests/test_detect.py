"""Format detection for `fieldgraph normalize` / `fieldgraph diff`."""

from __future__ import annotations

import pytest

from fieldgraph.normalizers import SchemaNormalizationError
from fieldgraph.normalizers.detect import detect_format

from .golden import GOLDEN


@pytest.mark.parametrize(
    "pattern,fmt",
    [
        ("avro/*.avsc", "avro"),
        ("protobuf/*.proto", "protobuf"),
        ("spark/*.spark", "spark"),
        ("arrow/*.yaml", "arrow"),
        ("datamine/*/schema.json", "datamine"),
    ],
)
def test_golden_inputs_are_detected(pattern, fmt):
    files = sorted(GOLDEN.glob(pattern))
    assert files
    for f in files:
        assert detect_format(f.name, f.read_bytes()) == fmt, f
        # Content alone (no telling suffix) is enough too.
        assert detect_format("schema.txt", f.read_bytes()) == fmt, f


@pytest.mark.parametrize(
    "content,fmt",
    [
        (b'{"type": "record", "name": "R", "fields": []}', "avro"),
        (b'["null", "string"]', "avro"),
        (b'{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}', "json-schema"),
        (b'{"type": "object", "properties": {"a": {"type": "string"}}}', "json-schema"),
        (b'{"type": "struct", "fields": [{"name": "a", "type": "long", "nullable": true, "metadata": {}}]}', "spark"),
        (b'{"schema": "s", "table_list": []}', "datamine"),
        (b'// orders\nsyntax = "proto3";\nmessage A { int64 id = 1; }', "protobuf"),
        (b"PAR1\x00\x00", "parquet"),
        (b"ARROW1\x00\x00", "arrow"),
    ],
)
def test_content_sniffing(content, fmt):
    assert detect_format("schema", content) == fmt


def test_parquet_file_written_by_pyarrow(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.data"
    pq.write_table(pa.table({"a": [1]}), path)
    assert detect_format(path.name, path.read_bytes()) == "parquet"


def test_unknown_content_is_a_clear_error():
    with pytest.raises(SchemaNormalizationError, match="pass --format"):
        detect_format("notes.txt", b"hello, world")
