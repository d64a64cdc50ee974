"""The in-memory store against the real backends: the same histories ingested into a ``MemoryStore`` and into
embedded FalkorDB / Neo4j give the same graph (snapshots compared by their canonical form) and the same answers
(walks now and as of past instants, field listings, CDAP's time-ranged field lineage)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from fieldgraph.changes import Change
from fieldgraph.errors import FieldgraphError
from fieldgraph.graph import GraphRefused, LineageGraph, MemoryStore, open_store
from fieldgraph.graph import cypher as cy
from fieldgraph.graph.answers import encode
from fieldgraph.ingest.sources import decode_event

from . import test_as_of, test_cdap, test_sql
from .conftest import ds, example_changes, lineage_event, mcp, schema_event, sf

pytestmark = pytest.mark.integration


def memory_graph() -> LineageGraph:
    return LineageGraph(MemoryStore())


def changes_of(*events: dict[str, Any]) -> list[Change]:
    return [c for e in events for c in decode_event(e)]


def feed(graphs: Iterable[LineageGraph], batches: Iterable[list[Change]], batch_events: int = 1000) -> None:
    """Each batch ingested into every graph, in order."""
    gs = list(graphs)
    for batch in batches:
        for g in gs:
            g.ingest(batch, batch_events=batch_events)


def answers(g: LineageGraph, instants: Iterable[int]) -> dict[str, Any]:
    """Every walk and listing of every field and dataset the graph holds, now and at ``instants``."""
    snap = g.store.snapshot()
    fields = sorted(n.props["urn"] for n in snap.nodes if n.label == "DatasetField")
    datasets = sorted(n.props["urn"] for n in snap.nodes if n.label == "Dataset")
    out: dict[str, Any] = {}

    def ask(key: str, call: Callable[[], Any]) -> None:
        try:
            out[key] = call()
        except FieldgraphError as exc:
            out[key] = type(exc).__name__

    def hops(res: Any) -> list[Any]:
        # rows of one step are ordered by (from, urn) only: ties (two edges between two fields) in any order
        return unordered(h.to_json() for h in res.hops)

    def field_lineage(f: str, direction: str) -> dict[str, Any]:
        got = encode(g.field_lineage(f, direction))
        return {**got, "edges": unordered(got["edges"]), "operations": unordered(got["operations"])}

    for t in (None, *instants):
        for label in ("PII", "Contact", "urn:li:glossaryTerm:Sensitive"):
            ask(f"tagged {label} {t}", lambda: encode(g.tagged(label, as_of=t)))  # noqa: B023
        for urn in datasets:
            ask(f"fields {urn} {t}", lambda: encode(g.fields(urn, as_of=t)))  # noqa: B023
        ask(f"unused {t}", lambda: encode(g.unused(as_of=t)))  # noqa: B023
        for f in fields:
            ask(f"up {f} {t}", lambda: hops(g.upstream(f, as_of=t)))  # noqa: B023
            ask(f"down {f} {t}", lambda: hops(g.downstream(f, as_of=t)))  # noqa: B023
            ask(f"tags {f} {t}", lambda: encode(g.tags(f, as_of=t)))  # noqa: B023
    for f in fields:
        for direction in ("incoming", "outgoing"):
            ask(f"field_lineage {f} {direction}", lambda: field_lineage(f, direction))  # noqa: B023
    def rolled(urn: str | None = None) -> list[dict[str, Any]]:  # collect(DISTINCT ...): in no particular order
        return [{**r, "transformations": sorted(r["transformations"])} for r in encode(g.dataset_lineage(urn))]

    ask("dataset_lineage", rolled)
    for urn in datasets:
        ask(f"dataset_lineage {urn}", lambda: rolled(urn))  # noqa: B023
    for text in ("a", "id", "ORDER", "x", "zz"):
        ask(f"search {text}", lambda: encode(g.search(text, limit=7)))  # noqa: B023
    ask("stats", g.stats)
    ask("unresolved", g.unresolved)
    ask("ambiguous", g.ambiguous)
    return out


def unordered(items: Iterable[Any]) -> list[Any]:
    return sorted(items, key=lambda x: json.dumps(x, sort_keys=True, default=str))


def assert_same(memory: LineageGraph, real: LineageGraph, instants: Iterable[int] = ()) -> None:
    got, expected = memory.store.snapshot().canonical(), real.store.snapshot().canonical()
    for part in ("nodes", "edges"):
        extra = sorted(set(got[part]) - set(expected[part]))
        missing = sorted(set(expected[part]) - set(got[part]))
        assert not extra and not missing, f"{part}: only in memory {extra[:5]}, only in {real.store.backend} " \
                                          f"{missing[:5]}"
    assert got == expected
    times = list(instants)
    a, b = answers(memory, times), answers(real, times)
    diff = [k for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)]
    assert not diff, f"{diff[0]}: memory {a.get(diff[0])!r}\n{real.store.backend} {b.get(diff[0])!r}"


def times_of(changes: Iterable[Change]) -> list[int]:
    ts = sorted({c.ts for c in changes if c.ts is not None and c.ts >= 0})
    return sorted({ts[0] - 1, *ts[:: max(1, len(ts) // 6)], ts[-1]}) if ts else []


# --- the store itself --------------------------------------------------------------------------------


def test_open_store_memory_and_unknown_statements() -> None:
    store = open_store("memory")
    assert isinstance(store, MemoryStore) and store.backend == "memory"
    assert store.run("RETURN 1 AS ok") == [{"ok": 1}]
    with pytest.raises(GraphRefused, match="named statements only"):
        store.run("MATCH (n) RETURN n")
    with pytest.raises(GraphRefused, match="does not run the statement 'lineage_path'"):
        store.run_named("lineage_path", {"from": "a", "to": "b"})
    store.run_named("upsert_datasets", {"rows": [{"urn": ds("a"), "props": {"name": "a", "placeholder": False}}]},
                    write=True)
    assert [n.props for n in store.snapshot().nodes] == [{"urn": ds("a"), "name": "a", "placeholder": False}]
    store.run_named("upsert_datasets", {"rows": [{"urn": ds("a"), "props": {"name": None}}]}, write=True)
    assert [n.props for n in store.snapshot().nodes] == [{"urn": ds("a"), "placeholder": False}]  # null removes
    store.clear()
    assert store.snapshot().nodes == []


def test_snapshot_copies_and_take_snapshot_hands_over() -> None:
    g, again = LineageGraph(MemoryStore()), LineageGraph(MemoryStore())
    g.ingest(example_changes())
    again.ingest(example_changes())
    copied = g.store.snapshot()
    assert any(isinstance(v, list) for r in copied.nodes for v in r.props.values())
    for row in [*copied.nodes, *copied.edges]:  # changing the rows leaves the store's graph as it is, lists too
        for v in row.props.values():
            if isinstance(v, list):
                v.append("x")
        row.props["changed"] = True
    taken = g.store.take_snapshot()
    assert taken.edges and taken == again.store.snapshot()
    assert g.store.snapshot().nodes == [] and g.store.snapshot().edges == []


def test_every_statement_the_writer_and_walks_send_is_known() -> None:
    store = MemoryStore()
    needed = ["ensure_placeholder_fields", "count_lineage_edges", "read_state", "read_schema_history",
              "read_lineage_history", "read_job_history", "read_queries", "read_data_jobs", "read_dataset_queries",
              "upstream_step", "downstream_step", "dataset_downstream_step", "upstream_step_as_of",
              "downstream_step_as_of", "dataset_downstream_step_as_of", "field_states_as_of", "field_presence_as_of",
              "dataset_fields", "dataset_fields_as_of", "dataset_edges_as_of", "snapshot_nodes", "snapshot_edges"]
    from fieldgraph.graph.steps import STEP_ORDER

    for name in [*STEP_ORDER, *needed]:
        assert cy.statement(name).strip() in store._handlers, name


def test_writers_in_two_threads_take_turns() -> None:
    """The worker writes from two threads: each batch's read -> plan -> write holds the store's writer lock."""
    import threading

    from fieldgraph.graph import WriteMode

    def chain(name: str) -> list[Change]:
        urns = [ds(f"{name}.t{i}") for i in range(6)]
        events = [schema_event(u, ["a", "b"], 1) for u in urns]
        events += [lineage_event(urns[i + 1], [(sf(urns[i + 1], "a"), [sf(urns[i], "a"), sf(urns[i], "b")])], 2)
                   for i in range(5)]
        return changes_of(*events)

    one, two = chain("one"), chain("two")
    shared = memory_graph()
    threads = [threading.Thread(target=lambda cs=cs: [shared.ingest([c], mode=WriteMode.CONCURRENT) for c in cs])
               for cs in (one, two)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    alone = memory_graph()
    alone.ingest(one + two)
    assert shared.store.snapshot().canonical() == alone.store.snapshot().canonical()

    entered = threading.Event()

    def write_too() -> None:
        with shared.store.sole_writer(["other"]):  # another dataset: the in-memory graph has one writer at a time
            entered.set()

    with shared.store.sole_writer(["a"]), shared.store.sole_writer(["a"]):  # reentrant in its thread
        other = threading.Thread(target=write_too)
        other.start()
        assert not entered.wait(0.2)  # another thread waits
    other.join(5)
    assert entered.is_set()


# --- the same histories on both ----------------------------------------------------------------------


@pytest.mark.parametrize("batch_events", [1, 1000])
def test_the_examples(graph, batch_events) -> None:
    memory = memory_graph()
    changes = example_changes()
    feed([memory, graph], [changes], batch_events)
    assert_same(memory, graph, times_of(changes))


@pytest.mark.parametrize("mode", ["concurrent", "backfill"])
def test_the_write_modes(graph, mode) -> None:
    """The concurrent mode's placeholder statement, edge count and settling reads; the backfill mode's cleanup
    left to the end."""
    from fieldgraph.graph import WriteMode

    memory = memory_graph()
    changes = example_changes() + test_as_of.history(2)
    for g in (memory, graph):
        g.ingest(changes, batch_events=3, mode=WriteMode(mode))
        if mode == "backfill":
            g.writer(WriteMode.BACKFILL).cleanup_placeholders()
    assert_same(memory, graph, times_of(changes)[:3])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_histories_out_of_order(graph, seed) -> None:
    """Schemas replaced, removed and listed again, lineage rewired and deleted from two aspects, job runs and a
    job-lineage delete, references resolved later, in random batches (test_as_of's history)."""
    memory = memory_graph()
    changes = test_as_of.history(seed)
    for g in (memory, graph):
        test_as_of.ingest_in_batches(g, changes, random.Random(seed))
    assert_same(memory, graph, test_as_of.instants(changes, random.Random(seed)))


@pytest.mark.parametrize("seed", [1, 2])
def test_backfill_histories_one_event_at_a_time_and_all_at_once(graph, fresh_graph, seed) -> None:
    """Versions out of order, duplicates, equal stamps, ambiguous references, deleted and recreated datasets
    (test_backfill's history), one event per batch and all in one."""
    pytest.importorskip("pyspark")
    from . import test_backfill

    events, _ = test_backfill.history(seed)
    changes = changes_of(*events)
    memory = memory_graph()
    feed([memory, graph], [changes], batch_events=1)
    assert_same(memory, graph, times_of(changes)[:4])
    memory, real = memory_graph(), fresh_graph()
    feed([memory, real], [changes], batch_events=1000)
    assert_same(memory, real, times_of(changes)[:4])


def test_placeholders_resolved_later_and_unstamped_deletes(graph) -> None:
    src, mid, out = ds("s.src"), ds("s.mid"), ds("s.out")
    memory = memory_graph()
    batches = [
        changes_of(lineage_event(mid, [(sf(mid, "a"), [sf(src, "x"), sf(src, "y")])], 10)),
        changes_of(lineage_event(out, [(sf(out, "b"), [sf(mid, "a")])], 12)),
        changes_of(schema_event(src, ["x", "y"], 20)),
        changes_of(schema_event(mid, ["a", "extra"], 15), schema_event(out, ["b"], 16)),
        changes_of(schema_event(src, ["x"], 30, version=1)),
        changes_of(mcp(mid, "upstreamLineage", None, 40, "DELETE")),
        changes_of(lineage_event(mid, [(sf(mid, "extra"), [sf(src, "x")])], 35)),  # late: placed in the past
        changes_of({**mcp(out, "upstreamLineage", None, 0, "DELETE"), "systemMetadata": {}}),  # unstamped
        changes_of(mcp(src, "datasetKey", None, 50, "DELETE")),
    ]
    feed([memory, graph], batches)
    assert_same(memory, graph, [9, 11, 14, 17, 25, 36, 45, 60])


def test_cdap_runs(graph) -> None:
    memory = memory_graph()
    concat = test_cdap.CONCAT
    batches = [
        changes_of(schema_event(test_cdap.PROFILES, ["id", "name"], ts=1), concat),
        changes_of(schema_event(test_cdap.USERS, ["id", "first", "last", "zip"], ts=2)),
        changes_of(dict(concat, run="run-2", time=test_cdap.T0 + 86_400_000)),
        changes_of(dict(concat, run="run-0", time=test_cdap.T0 - 1000)),
        changes_of(dict(concat, run="run-2", time=test_cdap.T0 + 86_400_000)),  # a run sent again
        changes_of(test_cdap.STORES),
        changes_of(mcp(test_cdap.PROFILES, "datasetKey", None, ts=test_cdap.T0 + 10, change="DELETE")),
        changes_of(dict(concat, run="run-3", time=test_cdap.T0 + 20)),
    ]
    feed([memory, graph], batches)
    assert_same(memory, graph, [test_cdap.T0 - 1, test_cdap.T0 + 15, test_cdap.T0 + 100_000_000])


def test_sql_and_datahub_queries(graph) -> None:
    from fieldgraph.graph.plan import field_urn

    memory = memory_graph()
    totals_schema = schema_event(test_sql.TOTALS, ["customer_id", "total", "buyers"], 1)
    batches = [
        changes_of(test_sql.orders_schema(), totals_schema),
        changes_of(test_sql.query_event(test_sql.TOTALS_SQL, ts=5), test_sql.upstream_lineage(10)),
        changes_of(test_sql.query_event("INSERT INTO shop.totals SELECT order_id AS total FROM shop.orders", ts=3)),
        changes_of(test_sql.query_event("INSERT INTO shop.totals SELECT order_id AS total FROM shop.orders", ts=20)),
        changes_of(test_sql.upstream_lineage(30, query=None)),
        changes_of(test_sql.sql_event("INSERT INTO totals (total) SELECT amount FROM orders", time=1)),
        changes_of(test_sql.upstream_lineage(40), test_sql.query_event(test_sql.TOTALS_SQL, ts=45),
                   mcp(test_sql.TOTALS, "upstreamLineage", None, 50, "DELETE")),
        changes_of(test_sql.sql_event("CREATE TABLE shop.tmp AS SELECT customer_id FROM shop.orders; "
                                      "INSERT INTO shop.totals (buyers) SELECT customer_id FROM shop.tmp", time=60)),
        changes_of(test_sql.upstream_lineage(70, fine=[{
            "upstreamType": "FIELD_SET", "upstreams": [field_urn(test_sql.ORDERS, "amount")],
            "downstreamType": "FIELD", "downstreams": [field_urn(test_sql.TOTALS, "total")]}])),
    ]
    feed([memory, graph], batches)
    assert_same(memory, graph, [4, 7, 15, 25, 35, 47, 55, 65, 80])


def test_datahub_data_jobs(graph) -> None:
    pytest.importorskip("datahub.metadata.schema_classes")
    from . import test_datahub_jobs as j

    memory = memory_graph()
    batches = [
        changes_of(schema_event(j.RAW, ["id", "email", "country"], 1), schema_event(j.CLEAN, ["id", "email"], 1),
                   schema_event(j.MART, ["id", "country"], 1)),
        changes_of(j.job_io([(sf(j.CLEAN, "email"), [sf(j.RAW, "email")]), (sf(j.MART, "country"),
                                                                            [sf(j.RAW, "country")])],
                            [j.CLEAN, j.MART], 10)),
        changes_of(j.job_io([(sf(j.CLEAN, "id"), [sf(j.RAW, "id")])], [j.CLEAN], 20, op="HASH")),
        changes_of(j.job_io([(sf(j.MART, "id"), [sf(j.RAW, "id")])], [j.MART], 15)),  # late
        changes_of(j.job_io([(sf(j.MART, "id"), [sf(j.RAW, "email")])], [j.MART], 25, job=j.JOB + "x")),
    ]
    feed([memory, graph], batches)
    assert_same(memory, graph, [5, 12, 17, 22, 30])


def test_labels_set_in_datahub_and_by_hand(graph) -> None:
    pytest.importorskip("datahub.metadata.schema_classes")
    from . import test_governance as gov

    memory = memory_graph()
    users, emails, report = gov.USERS, gov.EMAILS, gov.REPORT
    batches = [
        changes_of(gov.editable_event(users, {"email": (["PII"], ["Sensitive"])}, 1)),  # before the schema
        changes_of(gov.v2_schema(users, [gov.V2_EMAIL, "[version=2.0].[type=User].[type=Address].address",
                                         gov.V2_CITY], 2),
                   gov.v2_schema(emails, ["email"], 2), gov.v2_schema(report, ["email", "city"], 2),
                   lineage_event(emails, [(sf(emails, "email"), [sf(users, gov.V2_EMAIL)])], 3),
                   lineage_event(report, [(sf(report, "email"), [sf(emails, "email")]),
                                          (sf(report, "city"), [sf(users, gov.V2_CITY)])], 3)),
        changes_of(gov.editable_event(users, {gov.V2_EMAIL: (["PII", "Contact"], [])}, 10),
                   gov.editable_event(users, {"email": (["Public"], [])}, 5)),
        changes_of({"entityType": "dataset", "entityUrn": users, "changeType": "DELETE",
                    "aspectName": "editableSchemaMetadata"}),  # unstamped
        changes_of(gov.editable_event(users, {"email": (["Contact"], [])}, 30)),
    ]
    feed([memory, graph], batches)
    for g in (memory, graph):
        g.tag(sf(users, gov.V2_CITY), add=["Geo", "urn:li:glossaryTerm:Place"])
        g.tag(sf(emails, "email"), add=["Local"], propagate=False)
        g.tag(sf(users, gov.V2_CITY), remove=["Geo"])
        g.tag(sf(users, gov.V2_CITY), add=["urn:li:tag:Region"], propagate=False)
    assert_same(memory, graph, [0, 2, 4, 11, 35])
    for label in ("Geo", "Region", "Local", "urn:li:glossaryTerm:Place", "Contact"):
        assert encode(memory.tagged(label)) == encode(graph.tagged(label))
