"""The backfill's local inputs read in splits: a JSON Lines file cut anywhere gives the events, places and rejects
of the file read whole; other files are not cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fieldgraph.ingest.inputs import Split, count_lines, numbered, plan_splits, raw_events, split_events
from fieldgraph.ingest.replay import BOM, json_lines, read_events

#: lines of a JSON Lines file: events, blank lines, lines that are not JSON or not UTF-8, one-line arrays
LINE = st.one_of(
    st.builds(lambda n, s: json.dumps({"n": n, "s": s}), st.integers(0, 10**6), st.text(max_size=40)),
    st.sampled_from(["", "   ", "{not json", "[1, 2]", '[{"a": 1}, {"b": 2}]', "\udcff"]),
    st.text(alphabet="ab{}\",:", max_size=12),
)


def _write(path: Path, lines: list[str], *, bom: bool, crlf: bool, last_newline: bool) -> None:
    end = b"\r\n" if crlf else b"\n"
    data = end.join(line.encode("utf-8", "surrogateescape") for line in lines) + (end if last_newline else b"")
    path.write_bytes((BOM if bom else b"") + data)


def _read_in_splits(path: Path, size: int) -> tuple[list[Split], list[tuple]]:
    splits = plan_splits([str(path)], ["json"], size)
    splits = numbered(splits, [count_lines(s) for s in splits])
    return splits, [(r.line, r.item, r.event, r.error) for s in splits for r in split_events(s)]


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=30), size=st.integers(1, 200), bom=st.booleans(),
       crlf=st.booleans(), last_newline=st.booleans())
def test_a_json_lines_file_in_splits_reads_as_the_whole(tmp_path_factory, lines, size, bom, crlf, last_newline
                                                        ) -> None:
    path = tmp_path_factory.mktemp("split") / "events.jsonl"
    _write(path, ['{"first": true}', *lines], bom=bom, crlf=crlf, last_newline=last_newline)
    whole = [(r.line, r.item, r.event, r.error) for r in read_events(path)]
    splits, parts = _read_in_splits(path, size)
    assert parts == whole
    # the splits cover the file, in order, each starting a line
    data = path.read_bytes()
    assert [s.start for s in splits][0] == 0 and splits[-1].end == len(data)
    assert all(a.end == b.start and data[b.start - 1:b.start] == b"\n" for a, b in zip(splits, splits[1:], strict=False))


def test_a_large_file_is_cut_at_lines_and_numbered(tmp_path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({"i": i, "pad": "x" * (i % 7)}) + "\n" for i in range(1, 1001)))
    splits, parts = _read_in_splits(path, 1000)
    assert len(splits) > 10 and [s.line for s in splits][0] == 1
    assert [line for line, *_ in parts] == list(range(1, 1001))
    assert [e["i"] for _, _, e, _ in parts] == list(range(1, 1001))


def test_a_split_not_numbered_is_refused(tmp_path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text('{"a": 1}\n' * 100)
    later = plan_splits([str(path)], ["json"], 100)[1]
    with pytest.raises(ValueError, match="no line number"):
        list(split_events(later))


@pytest.mark.parametrize("text", ['[{"a": 1},\n {"b": 2}]\n' * 20, '{\n  "a": 1\n}\n' * 20])
def test_a_json_document_is_one_split(tmp_path, text) -> None:
    """A document's values may span lines: it is read from its start, whole, as `fieldgraph ingest` reads it."""
    path = tmp_path / "doc.json"
    path.write_text(text)
    assert not json_lines(path)
    (split,) = plan_splits([str(path)], ["json"], 10)
    assert split == Split(str(path), 0, len(text))
    assert [(r.line, r.event) for r in raw_events(str(path), split)] == \
        [(r.line, r.event) for r in read_events(path)]


def test_avro_and_parquet_files_are_one_split(tmp_path) -> None:
    path = tmp_path / "x.avro"
    path.write_bytes(b"\0" * 500)
    assert plan_splits([str(path)], ["avro"], 10) == [Split(str(path), 0, 500)]
