"""Event files are read as a stream (``fieldgraph.ingest.replay.read_events``): a bad line or event costs
itself, not its file; a file is never held whole; ``fieldgraph ingest`` writes as it reads."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fieldgraph.graph.answers import encode
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT
from fieldgraph.ingest.replay import (
    MAX_DEPTH,
    RawEvent,
    decode,
    read_events,
    refused_rejects,
)

from .conftest import ds, schema_event

DEEP = f"nested deeper than {MAX_DEPTH} levels"


def ev(i: int) -> dict:
    return schema_event(ds(f"db.t{i}"), ["x", "y"], 1000 + i)


def line(i: int) -> bytes:
    return json.dumps(ev(i)).encode()


def read(path: Path, **kw: int) -> list[tuple[int, str | None]]:
    """(line, error) of each event; an event read is checked to be the one written there."""
    out = []
    for r in read_events(path, **kw):
        if r.error is None:
            assert r.event["entityUrn"].startswith("urn:li:dataset:")
        out.append((r.line, r.error))
    return out


def test_an_invalid_utf8_byte_costs_its_line(tmp_path: Path) -> None:
    f = tmp_path / "e.jsonl"
    f.write_bytes(line(1) + b"\n" + line(2).replace(b"db.t2", b"db.t\xff2") + b"\n" + line(3) + b"\n")
    got = list(read_events(f))
    assert [(r.line, r.error is None) for r in got] == [(1, True), (2, False), (3, True)]
    offset = len(line(1)) + 1 + line(2).index(b"db.t2") + 4
    assert got[1].error == f"not UTF-8: invalid byte 0xff at byte offset {offset} (byte {offset - len(line(1)) - 1} " \
                           "of the line)"
    assert "db.t\ufffd2" in (got[1].text or "")
    _, rej = decode(got[1])
    assert rej is not None and rej.line == 2 and "invalid byte 0xff" in rej.error


def test_an_invalid_utf8_byte_in_an_array_costs_its_event(tmp_path: Path) -> None:
    f = tmp_path / "e.json"
    f.write_bytes(b"[\n" + line(1) + b",\n" + line(2).replace(b"db.t2", b"db.t\xc32") + b",\n" + line(3) + b"\n]\n")
    got = list(read_events(f, chunk_bytes=64))
    assert [(r.line, r.error is None) for r in got] == [(2, True), (3, False), (4, True)]
    assert got[1].error == f"not UTF-8: invalid byte 0xc3 at byte offset {2 + len(line(1)) + 2 + line(2).index(b'db.t2') + 4}"


def test_a_utf8_bom_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b"\xef\xbb\xbf" + line(1) + b"\n" + line(2) + b"\n")
    (tmp_path / "b.json").write_bytes(b"\xef\xbb\xbf[" + line(1) + b",\n" + line(2) + b"]")
    (tmp_path / "c.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(ev(1), indent=2).encode())
    assert read(tmp_path / "a.jsonl") == [(1, None), (2, None)]
    assert read(tmp_path / "b.json") == [(1, None), (2, None)]
    assert read(tmp_path / "c.json") == [(1, None)]


def test_json_nested_too_deep_is_a_reject_not_a_crash(tmp_path: Path) -> None:
    deep_line = b'{"a":' * 10000 + b"1" + b"}" * 10000
    (tmp_path / "a.jsonl").write_bytes(line(1) + b"\n" + deep_line + b"\n" + line(3) + b"\n")
    assert read(tmp_path / "a.jsonl") == [(1, None), (2, DEEP), (3, None)]
    # in an array: skipped by its brackets, the rest read; just over the bound (parsed, then refused) too
    for depth in (10000, MAX_DEPTH + 1):
        (tmp_path / "b.json").write_bytes(b"[" + line(1) + b",\n" + b"[" * depth + b'"]"' + b"]" * depth + b",\n"
                                          + line(3) + b"]")
        assert read(tmp_path / "b.json", chunk_bytes=1000) == [(1, None), (2, DEEP), (3, None)]
    (tmp_path / "c.json").write_bytes(b"[" * 10000 + b"]" * 10000)
    assert read(tmp_path / "c.json") == [(1, DEEP)]
    ok = b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1)  # an array of depth MAX_DEPTH inside the file's array
    (tmp_path / "d.json").write_bytes(b"[" + ok + b"]")
    assert [r.error for r in read_events(tmp_path / "d.json")] == [None]


class Trickle(io.RawIOBase):
    """A file that is read bit by bit, counting how much was read."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        n = min(len(b), len(self.data) - self.pos, 4096)
        b[:n] = self.data[self.pos:self.pos + n]
        self.pos += n
        return n


def test_a_big_array_is_read_incrementally() -> None:
    body = b"[\n" + b",\n".join(line(i) for i in range(20000)) + b"\n]\n"  # ~7 MB
    src = Trickle(body)
    events = read_events(io.BufferedReader(src, 4096), chunk_bytes=64 * 1024)  # type: ignore[arg-type]
    first = next(events)
    assert first.line == 2 and first.event == ev(0)
    assert src.pos <= 128 * 1024 < len(body)  # the first event came after a chunk or two, not the whole file
    highest = src.pos
    for n, r in enumerate(events, start=1):
        assert r.error is None and r.line == n + 2 and r.event == ev(n)
        if n == 10000:
            assert src.pos < len(body) * 0.6  # half way through the events, about half way through the file
        highest = max(highest, src.pos)
    assert n == 19999 and src.pos == len(body)


@pytest.mark.parametrize("chunk", [1, 7, 100, 1 << 20])
def test_documents_read_over_any_window_give_the_same_events_and_lines(tmp_path: Path, chunk: int) -> None:
    f = tmp_path / "e.json"
    f.write_text("\n".join(json.dumps(ev(i), indent=1) for i in range(3))  # pretty-printed, one after another
                 + "\n[" + ", ".join(json.dumps(ev(i)) for i in range(3, 6)) + "]\n[]\n[\n" + json.dumps(ev(6)) + "]")
    got = list(read_events(f, chunk_bytes=chunk))
    n = len(json.dumps(ev(0), indent=1).splitlines())
    assert [(r.line, r.error, r.event) for r in got] == [
        (1, None, ev(0)), (n + 1, None, ev(1)), (2 * n + 1, None, ev(2)),
        *((3 * n + 1, None, ev(i)) for i in range(3, 6)), (3 * n + 4, None, ev(6))]


def test_an_event_over_the_size_bound_is_rejected_and_the_rest_read(tmp_path: Path) -> None:
    big = json.dumps({**ev(2), "padding": ["x" * 300, {"y": "\\\"]}" * 100}]}).encode()
    assert len(big) > 1000 > len(line(1))
    (tmp_path / "a.jsonl").write_bytes(line(1) + b"\n" + big + b"\n" + line(3) + b"\n")
    (tmp_path / "b.json").write_bytes(b"[" + line(1) + b",\n" + big + b",\n" + line(3) + b"]")
    for name in ("a.jsonl", "b.json"):
        got = list(read_events(tmp_path / name, max_event_bytes=1000, chunk_bytes=100))
        assert [(r.line, r.error is None) for r in got] == [(1, True), (2, False), (3, True)]
        assert got[1].error is not None and got[1].error.startswith("event larger than 1000 bytes")
        assert (got[1].text or "").startswith(big[:50].decode())


def test_a_broken_document_keeps_what_came_before(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b"[" + line(1) + b",\n" + line(2)[:-20])  # cut short
    (tmp_path / "b.json").write_bytes(b"[" + line(1) + b",\n{oops},\n" + line(3) + b"]")
    (tmp_path / "c.jsonl").write_bytes(b'{"cut": \n' + line(2) + b"\n")  # not a document: JSON Lines
    a = read(tmp_path / "a.json", chunk_bytes=100)
    assert a[0] == (1, None) and a[1][0] == 2 and "the rest of the file is skipped" in (a[1][1] or "")
    b = read(tmp_path / "b.json")
    assert b[0] == (1, None) and b[1][0] == 2 and (b[1][1] or "").startswith("not JSON: Expecting property name")
    assert [x[0] for x in read(tmp_path / "c.jsonl")] == [1, 2]


def test_refused_rejects_read_only_the_events_named(tmp_path: Path) -> None:
    f = tmp_path / "e.jsonl"
    f.write_bytes(b"\n".join(line(i) for i in range(1, 6)) + b"\n")
    rejects = refused_rejects([(f"{f}:4", "too big"), (f"{f}:2", "no"), (f"{tmp_path}/gone.jsonl:1", "gone")])
    assert [(Path(r.file).name, r.line, r.error, r.event) for r in rejects] == [
        ("e.jsonl", 2, "no", ev(2)), ("e.jsonl", 4, "too big", ev(4)), ("gone.jsonl", 1, "gone", None)]


def test_read_events_takes_bytes_as_the_spark_backfill_gives_them() -> None:
    class Blob:  # like ingest/backfill.py's _Blob
        def __init__(self, name: str, data: bytes) -> None:
            self.name, self.data = name, data

        def __str__(self) -> str:
            return self.name

    got = list(read_events(Blob("x.jsonl", line(1) + b"\n\xff\n"), ))  # type: ignore[arg-type]
    assert [(r.file, r.line, r.error is None) for r in got] == [("x.jsonl", 1, True), ("x.jsonl", 2, False)]
    assert isinstance(got[0], RawEvent) and got[0].where == "x.jsonl:1"


@pytest.mark.integration
def test_ingest_writes_every_good_event_and_rejects_each_bad_one(tmp_path: Path) -> None:
    files = tmp_path / "events"
    files.mkdir()
    good = []

    def put(name: str, data: bytes, *events: int) -> None:
        (files / name).write_bytes(data)
        good.extend(events)

    put("a.jsonl", line(1) + b"\n" + line(2).replace(b"db.t2", b"db.t\xff2") + b"\n" + b'{"a":' * 10000 + b"1"
        + b"}" * 10000 + b"\n{broken\n" + line(5) + b"\n", 1, 5)
    put("b.json", b"\xef\xbb\xbf[\n" + line(6) + b",\n" + b"[" * 10000 + b"]" * 10000 + b",\n" + line(8) + b"\n]", 6, 8)
    put("c.json", b"[" * 10000 + b"]" * 10000)
    put("d.json", b"\xef\xbb\xbf" + json.dumps(ev(9), indent=2).encode(), 9)
    put("e.json", b"[" + line(10) + b",\n" + line(11)[:-5], 10)
    expected = {("a.jsonl", 2, "not UTF-8: invalid byte 0xff"), ("a.jsonl", 3, DEEP), ("a.jsonl", 4, "not JSON"),
                ("b.json", 3, DEEP), ("c.json", 1, DEEP), ("e.json", 2, "not JSON")}

    data = Path(tempfile.mkdtemp(prefix="fg-"))  # short: unix socket paths are limited to ~100 characters
    graph = f"embedded:{data}"
    rejects = tmp_path / "rejects.jsonl"
    runner = CliRunner()
    try:
        res = runner.invoke(app, ["ingest", str(files), "--graph", graph, "--json", "--rejects", str(rejects)])
        assert res.exit_code == EXIT_BAD_INPUT, (res.output, res.stderr)
        summary = json.loads(res.stdout)
        assert summary["files"] == 5 and summary["events"] == len(good) + len(expected)
        assert summary["rejected"] == len(expected) and summary["skipped"] == 0
        assert summary["aspectChanges"] == len(good) and summary["graph"]["datasets"] == len(good)
        got = [json.loads(x) for x in rejects.read_text().splitlines()]
        assert len(got) == len(expected)
        assert rejects.stat().st_mode & 0o777 == 0o600  # bad events may hold what should not be shared
        for (name, n, reason), r in zip(sorted(expected), sorted(got, key=lambda r: (r["file"], r["line"])),
                                        strict=True):
            assert (Path(r["file"]).name, r["line"]) == (name, n) and r["error"].startswith(reason), r
            assert f"{name}:{n}" in res.stderr
        stats = runner.invoke(app, ["lineage", "fields", ds("db.t6"), "--graph", graph, "--json"])
        assert [f["fieldPath"] for f in json.loads(stats.stdout)] == ["x", "y"]
    finally:
        runner.invoke(app, ["server", "stop", "--graph", graph])
        shutil.rmtree(data, ignore_errors=True)


def test_the_events_of_a_one_line_array_are_events_apart(tmp_path: Path, graph) -> None:
    """``json.dump(events)`` writes one line: each event still has its own origin (``file:1#2`` ...), so the
    graph's batches and refusals are cut between events, and a reject names the event's place on the line."""
    from fieldgraph.ingest.replay import place

    bad = schema_event(ds("db.bad"), ["a\x00b"], 1)
    events = [ev(1), schema_event(ds("db.t1"), ["x", "z"], 2000, version=1), bad, ev(2)]
    path = tmp_path / "compact.json"
    path.write_text(json.dumps(events))
    raws = list(read_events(path))
    assert [(r.line, r.item, r.where) for r in raws] == [(1, k, f"{path}:1" + (f"#{k}" if k > 1 else ""))
                                                          for k in range(1, 5)]
    assert place(raws[2].where) == (str(path), 1, 3)

    rejects = tmp_path / "rejects.jsonl"
    res = CliRunner().invoke(app, ["ingest", str(path), "--graph", graph.uri, "--rejects", str(rejects), "--json",
                                   "--batch", "1"])
    assert res.exit_code == EXIT_BAD_INPUT, res.output
    assert json.loads(res.stdout)["rejected"] == 1
    (rej,) = [json.loads(x) for x in rejects.read_text().splitlines()]
    assert (rej["line"], rej["item"]) == (1, 3) and "NUL" in rej["error"]
    assert {f["fieldPath"]: bool(f["removed"]) for f in encode(graph.fields(ds("db.t1")))} == {"x": False, "y": True, "z": False}
    assert graph.stats().datasets == 2
