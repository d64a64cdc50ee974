"""The backfill's local inputs read in splits: a JSON Lines file cut anywhere gives the events, places and rejects
of the file read whole; other files are not cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fieldgraph.ingest.inputs import Split, count_lines, numbered, plan_splits, raw_events, split_events
from fieldgraph.ingest.replay import BOM, RawEvent, json_lines, read_events

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
    return splits, [_seen(r) for s in splits for r in split_events(s)]


def _seen(r: RawEvent) -> tuple:
    return r.file, r.line, r.item, r.event, r.error, r.text


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=30), size=st.integers(1, 200), bom=st.booleans(),
       crlf=st.booleans(), last_newline=st.booleans())
def test_a_json_lines_file_in_splits_reads_as_the_whole(tmp_path_factory, lines, size, bom, crlf, last_newline
                                                        ) -> None:
    """Any first line (blank, a document's start, a line of JSON): a file read as JSON Lines is cut, and its
    splits give what the whole file gives; any other is one split."""
    path = tmp_path_factory.mktemp("split") / "events.jsonl"
    _write(path, lines, bom=bom, crlf=crlf, last_newline=last_newline)
    whole = [_seen(r) for r in read_events(path)]
    splits, parts = _read_in_splits(path, size)
    assert parts == whole
    data = path.read_bytes()
    if not json_lines(path) or len(data) <= size:
        assert splits == [Split(str(path), 0, len(data))]
        return
    # the splits cover the file, in order, each starting a line
    assert splits[0].start == 0 and splits[-1].end == len(data)
    assert all(a.end == b.start and data[b.start - 1:b.start] == b"\n" for a, b in zip(splits, splits[1:], strict=False))


def test_a_large_file_is_cut_at_lines_and_numbered(tmp_path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({"i": i, "pad": "x" * (i % 7)}) + "\n" for i in range(1, 1001)))
    splits, parts = _read_in_splits(path, 1000)
    assert len(splits) > 10 and splits[0].line == 1 and all(s.line > 1 for s in splits[1:])
    assert [line for _, line, *_ in parts] == list(range(1, 1001))
    assert [e["i"] for _, _, _, e, _, _ in parts] == list(range(1, 1001))


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


def test_a_split_of_a_file_gone_is_rejected_not_raised(tmp_path) -> None:
    """As `fieldgraph ingest` reports a file it cannot read: a reject, and the job goes on."""
    path = tmp_path / "gone.jsonl"
    path.write_text('{"a": 1}\n' * 100)
    splits = numbered(*(lambda ss: (ss, [count_lines(s) for s in ss]))(plan_splits([str(path)], ["json"], 200)))
    path.unlink()
    first, later = (list(split_events(s)) for s in splits[:2])
    assert [(r.line, r.error) for r in first] == [(0, "cannot read: No such file or directory")]
    assert [(r.line, r.error) for r in later] == [(splits[1].line, "cannot read: No such file or directory")]


def test_a_long_last_line_is_looked_for_once(tmp_path, monkeypatch) -> None:
    """The offsets inside the last line do not each scan to the end of the file again."""
    import fieldgraph.ingest.inputs as inputs

    path = tmp_path / "tail.jsonl"
    path.write_text('{"a": 1}\n' * 20 + json.dumps({"pad": "x" * 5000}) + "\n")
    looked, original = [], inputs._line_start
    monkeypatch.setattr(inputs, "_line_start", lambda fh, at: looked.append(at) or original(fh, at))
    assert [(s.start, s.end) for s in plan_splits([str(path)], ["json"], 100)] == [(0, 108), (108, path.stat().st_size)]
    assert looked == [100, 200]
