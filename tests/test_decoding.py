"""The worker's decoders: in its own process and in decoder processes, the same answer for every message, good or
bad; changes survive the trip between processes whole; a decoder process that dies is started again."""

from __future__ import annotations

import json
import os
import pickle
import signal

import pytest

from fieldgraph.ingest.config import WorkerConfig
from fieldgraph.ingest.decoding import DecoderProcesses, DecoderUnavailable, InlineDecoder, Item

from .conftest import EXAMPLES, ds, example_changes, lineage_event, mcp, schema_event, sf


def _items() -> list[Item]:
    from fieldgraph.ingest.replay import event_files, read_events

    events = [raw.event for f in event_files([EXAMPLES]) for raw in read_events(f)]
    events += [schema_event(ds("a"), ["x", "y"], 5), lineage_event(ds("b"), [(sf(ds("b"), "x"), [sf(ds("a"), "x")])], 6),
               mcp(ds("a"), "upstreamLineage", None, 7, change="DELETE"), mcp(ds("a"), "ownership", {"owners": []}, 8)]
    values = [json.dumps(e).encode() for e in events]
    values += [b"{not json", b"", None, json.dumps({"entityType": "dataset", "aspectName": "schemaMetadata"}).encode()]
    return [(v, "MetadataChangeLog_Versioned_v1", f"t[0]@{i}") for i, v in enumerate(values)]


@pytest.mark.parametrize("strict", [False, True])
def test_decoder_processes_answer_as_the_worker_itself_does(strict: bool) -> None:
    cfg = WorkerConfig(decode_processes=2, strict_aspects=strict)
    items = _items()
    inline = InlineDecoder(cfg).decode(items)
    procs = DecoderProcesses(cfg)
    try:
        assert procs.decode(items) == inline
    finally:
        procs.close()
    kinds = [d.kind for d in inline]
    assert kinds.count(None) + kinds.count("aspect") > 0 and {"json", "empty", "event"} <= set(kinds)
    assert ("aspect" in kinds) is strict  # the ownership aspect: skipped, or dead-lettered when strict
    assert sum(len(d.changes) for d in inline) > len(example_changes())


def test_changes_survive_pickling_whole() -> None:
    changes = [c for d in InlineDecoder(WorkerConfig()).decode(_items()) for c in d.changes]
    assert {type(c).__name__ for c in changes} >= {"SchemaChange", "LineageChange", "AspectDelete"}
    assert pickle.loads(pickle.dumps(changes, protocol=5)) == changes


def test_a_dead_decoder_process_is_started_again() -> None:
    procs = DecoderProcesses(WorkerConfig(decode_processes=1))
    try:
        items = _items()
        first = procs.decode(items)
        (pid,) = procs._pool._processes  # type: ignore[attr-defined]  # the one child, to kill
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(DecoderUnavailable, match="decoder process died"):
            procs.decode(items)
        assert procs.decode(items) == first  # the worker's retry decodes the batch again
    finally:
        procs.close()


def test_pickled_by_fields_keeps_a_one_field_class_whole() -> None:
    from dataclasses import dataclass

    from fieldgraph.normalizers.fields import pickled_by_fields

    @pickled_by_fields
    @dataclass(frozen=True)
    class One:
        only: tuple[str, ...]

    globals()["One"] = One  # pickle finds a class by its module's name
    One.__qualname__ = "One"
    assert pickle.loads(pickle.dumps(One(("a", "b")))) == One(("a", "b"))
