"""The one write path's modes (graph/write.py), on both backends: what each adds or leaves out."""

from __future__ import annotations

import threading
import time

import pytest

from fieldgraph.graph import WriteMode
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.sources import decode_event

from .conftest import WITH_MEMORY, ds, dump, lineage_event, mcp, schema_event, sf

A, B = ds("db.a"), ds("db.b")


def changes(*events):
    return [c for e in events for c in decode_event(e)]


def placeholders(graph) -> list[str]:
    return [r["urn"] for r in encode(graph.unresolved())]


@WITH_MEMORY
def test_single_mode_cleans_up_placeholders_a_delete_orphans(graph) -> None:
    writer = graph.writer()
    writer.write(changes(schema_event(A, ["y"], 1), lineage_event(A, [(sf(A, "y"), [sf(B, "x")])], 2)))
    assert placeholders(graph) == [field_urn(B, "x")]  # B has no schema: the reference waits as a placeholder
    plan = writer.write(changes(mcp(A, "upstreamLineage", None, 3, change="DELETE")))
    assert plan.cleanup_placeholder_fields
    assert placeholders(graph) == [] and graph.stats().placeholder_datasets == 0
    # the placeholder only the closed edge refers to stays, for lineage as of the time it held
    assert graph.stats().past_data_derived_from_edges == 1 and graph.stats().datasets == 2
    writer.write(changes(mcp(A, "upstreamLineage", None, 3, change="DELETE")))


def test_backfill_mode_leaves_the_cleanup_to_the_end(graph) -> None:
    """Spark tasks write at once: one task's cleanup could delete a placeholder another has made but not
    linked yet, so the backfill mode leaves it out and the driver runs it once, at the end."""
    writer = graph.writer(WriteMode.BACKFILL)
    writer.write(changes(schema_event(A, ["y"], 1), lineage_event(A, [(sf(A, "y"), [sf(B, "x")])], 2)))
    writer.write(changes(mcp(A, "upstreamLineage", None, 3, change="DELETE")))
    assert placeholders(graph) == []  # orphaned now: only a past edge refers to it
    (ph,) = graph.query("MATCH (f:DatasetField {placeholder: true}) RETURN f.urn AS urn")
    assert ph["urn"] == field_urn(B, "x")
    writer.cleanup_placeholders()
    assert graph.query("MATCH (f:DatasetField {placeholder: true}) RETURN f.urn AS urn") == [ph]  # history kept


def test_concurrent_mode_keeps_a_field_another_writer_created_meanwhile(graph) -> None:
    """A lineage batch planned before another writer's schema landed plans a placeholder for a field the
    schema has by the time the batch is applied: the concurrent mode creates placeholders only where no
    node is, so the real field and its schema properties stay, and the edge points at it."""
    lineage = changes(schema_event(A, ["y"], 1), lineage_event(A, [(sf(A, "y"), [sf(B, "x")])], 2))
    concurrent = graph.writer(WriteMode.CONCURRENT)
    stale = concurrent.plan(lineage)  # planned while B has no schema
    assert [r["urn"] for r in stale.ensure_fields] == [field_urn(B, "x")]
    graph.writer().write(changes(schema_event(B, ["x"], 1)))  # the other writer
    concurrent.apply(stale)
    assert placeholders(graph) == []
    rows = graph.query("MATCH (d)-[:DataDerivedFrom]->(u) RETURN d.urn AS d, u.urn AS u, u.placeholder AS p, "
                       "u.schemaVersion AS v")
    assert rows == [{"d": field_urn(A, "y"), "u": field_urn(B, "x"), "p": False, "v": 0}]


@pytest.mark.parametrize("backend", ["neo4j"], indirect=True)  # FalkorDB runs one write query at a time
def test_the_placeholder_cleanup_keeps_a_placeholder_another_writer_is_linking(graph) -> None:
    """Neo4j reads committed data: a cleanup that saw a placeholder without edges, then waited for the lock of
    a writer linking it, must look again, or it deletes the placeholder with the edge just committed (two Kafka
    workers lost edges this way)."""
    graph.write(changes(schema_event(A, ["y"], 1)))
    down, up = field_urn(A, "y"), field_urn(B, "x")
    graph.query("MERGE (d:Dataset {urn: $b}) SET d.placeholder = true "
                "MERGE (d)-[:HasField]->(:DatasetField {urn: $up, placeholder: true})", {"b": B, "up": up}, write=True)
    cleanup = threading.Thread(target=graph.writer(WriteMode.CONCURRENT).cleanup_placeholders)
    with graph.store.driver.session() as session:
        linking = session.begin_transaction()  # another writer, between its two statements' commit
        linking.run("MATCH (d:DatasetField {urn: $down}), (u:DatasetField {urn: $up}) "
                    "CREATE (d)-[:DataDerivedFrom {source: 'upstreamLineage'}]->(u)", down=down, up=up).consume()
        cleanup.start()
        time.sleep(1.0)
        assert cleanup.is_alive()  # it waits for the linking writer's lock on the placeholder
        linking.commit()
    cleanup.join(30)
    assert not cleanup.is_alive()
    assert placeholders(graph) == [up]  # still there, with its edge
    assert graph.stats().data_derived_from_edges == 1 and graph.stats().placeholder_datasets == 1


def test_a_batch_of_several_versions_per_dataset_is_written_as_appends(graph, reference_graph, monkeypatch) -> None:
    """A long history written in big batches (several versions of each dataset in one batch) is cut into runs of
    one version per aspect: each appends to what is stored, and no stored timeline is read and replayed (whose
    cost grows with the history). The graph is the one event-at-a-time writes make."""
    from fieldgraph.graph.write import Writer, one_version_each

    events = []
    for step in range(4):
        for name in ("a", "b", "c"):
            events.append(schema_event(ds(f"v.{name}"), [f"c{step}", f"c{step + 1}"], 10 + step, version=step))
            events.append(lineage_event(ds(f"v.{name}"), [(sf(ds(f"v.{name}"), f"c{step}"),
                                                           [sf(ds("v.up"), f"u{step}")])], 100 + step))
    per_event = [decode_event(e, origin=f"h:{i}") for i, e in enumerate(events)]
    assert [first for first, _ in one_version_each(per_event)] == [0, 6, 12, 18]

    asked = []
    read_history = Writer.read_history
    monkeypatch.setattr(Writer, "read_history", lambda self, need: (asked.append(need), read_history(self, need))[1])
    graph.ingest([c for cs in per_event for c in cs], batch_events=len(events))
    assert not any(asked), asked  # appends only: nothing to replay
    reference_graph.ingest([c for cs in per_event for c in cs], batch_events=1)
    assert dump(graph) == dump(reference_graph)
