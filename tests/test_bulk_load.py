"""Bulk load (fieldgraph.graph.bulkload) on both backends: a streamed graph's snapshot, imported into a fresh empty
graph with the store's own importer (FalkorDB: GRAPH.BULK on the session's embedded server; Neo4j: neo4j-admin
database import full into a second server, stopped for it, so the session's shared one is not disturbed), is the
same graph; streaming the same history again changes nothing, and streaming goes on from it as from the original.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.errors import BulkLoadError, GraphNotEmpty
from fieldgraph.graph import FalkorStore, LineageGraph, open_store
from fieldgraph.graph.answers import encode
from fieldgraph.graph.bulkload import (
    Neo4jImport,
    check_empty,
    falkordb_bulk_commands,
    import_neo4j,
    load_falkordb,
    property_types,
    stream_snapshot,
    write_neo4j_import,
)
from fieldgraph.graph.snapshot import EdgeRow, NodeRow, Snapshot
from fieldgraph.ingest.sources import decode_event

from .conftest import example_changes, lineage_event, schema_event, sf

pytestmark = pytest.mark.integration
_names = itertools.count()


# --- the history -------------------------------------------------------------------------------------------------


def history_changes() -> list[Any]:
    """Schema versions, fields removed, lineage replaced and deleted (past edges), field states, placeholders,
    ambiguous references (test_backfill's history), the examples, CDAP job runs with their operations, a DataHub
    data job and hand-set field tags."""
    from .test_backfill import history
    from .test_cdap import CONCAT, PROFILES, T0, USERS
    from .test_datahub_jobs import CLEAN, MART, RAW, job_io
    from .test_governance import editable_event

    events, _ = history(1)
    events += [schema_event(PROFILES, ["id", "name"], 1), CONCAT, schema_event(USERS, ["id", "first", "last"], 2),
               dict(CONCAT, run="run-2", time=T0 + 86_400_000),
               schema_event(RAW, ["id", "email", "country"], 1), schema_event(CLEAN, ["id", "email"], 1),
               schema_event(MART, ["id", "country"], 1),
               job_io([(sf(CLEAN, "email"), [sf(RAW, "email")]), (sf(MART, "country"), [sf(RAW, "country")])],
                      [CLEAN, MART], 10),
               editable_event(RAW, {"email": (["PII"], ["Sensitive"])}, 10),
               job_io([(sf(CLEAN, "email"), [sf(RAW, "email")])], [CLEAN], 20)]
    return example_changes() + [c for e in events for c in decode_event(e)]


def later_changes() -> list[Any]:
    """A new schema version and a lineage event after the history."""
    from .test_datahub_jobs import CLEAN, RAW

    return [c for e in (schema_event(CLEAN, ["id", "email", "email_domain"], 100, version=1),
                        lineage_event(CLEAN, [(sf(CLEAN, "email_domain"), [sf(RAW, "email")])], 110, "TRANSFORM"))
            for c in decode_event(e)]


HOSTILE = ['a,b', 'say "hi"', '[x]', 'a;b', 'line\nbreak', 'cr\r\nlf', '  padded  ', 'back\\slash\\"', '',
           'ünï©ødé', '"', ',', '\x1funit', '007', 'true', '[1, 2]', "{'k': 1}", 'tab\there']


def hostile_snapshot() -> Snapshot:
    """Every kind of value streaming stores, with strings that break naive CSV and array encodings."""
    nodes = [NodeRow(100 + i, "DatasetField", {"urn": f"urn:li:schemaField:(d,{s})", "fieldPath": s,
                                                "candidates": [s, "x"], "position": i, "nullable": i % 2 == 0})
             for i, s in enumerate(HOSTILE)]
    nodes += [NodeRow(1, "Dataset", {"urn": "urn:li:dataset:(d)", "schemaTimes": [3, -1, 2 ** 62], "name": "d,\"q\"",
                                     "tags": HOSTILE[:-1] + ["a"], "placeholder": False}),
              NodeRow(2, "Dataset", {"urn": "urn:li:dataset:(e)"})]  # no optional property at all
    edges = [EdgeRow(1, "HasField", n.id, {"validFrom": n.props["position"]} if n.id % 3 else {}) for n in nodes[:-2]]
    edges += [EdgeRow(100, "DataDerivedFrom", 101, {"transformation": HOSTILE[4], "confidenceScore": 0.25,
                                                    "transformations": ["a\nb", "c"]})]
    return Snapshot(nodes, edges)


# --- importing ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bulk_neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Neo4j server of its own, stopped and started around each import."""
    from .services import Neo4jServer

    server = Neo4jServer(tmp_path_factory.mktemp("bulk-neo4j")).start()
    yield server
    server.stop()


def admin_tool() -> list[str]:
    """``neo4j-admin`` from the jars tests/services.py resolves."""
    from .services import JAVA_OPENS, _java, classpath

    return [_java(), "-Xmx1g", *JAVA_OPENS, "-cp", classpath("neo4j"), "org.neo4j.cli.AdminTool"]


class Importer:
    """Fresh empty graphs of the test's backend, loaded with a snapshot by the store's bulk importer."""

    def __init__(self, backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.backend, self.request, self.tmp = backend, request, tmp_path
        self.opened: list[LineageGraph] = []

    def load(self, snapshot: Snapshot) -> LineageGraph:
        if self.backend == "falkordb":
            server = self.request.getfixturevalue("falkordb_server")
            store = FalkorStore(graph=f"bulk{next(_names)}", unix_socket=str(server.socket))
            assert load_falkordb(snapshot, store) == (len(snapshot.nodes), len(snapshot.edges))
            g = LineageGraph(store)
        else:
            server = self.request.getfixturevalue("bulk_neo4j")
            with open_store(server.uri, schema=False) as store:
                store.clear()  # left by an earlier test of the module
                check_empty(store)
            server.stop()
            files = write_neo4j_import(snapshot, self.tmp / f"import{next(_names)}")
            import_neo4j(files, server.home, admin=admin_tool(), threads=2)
            server.start()
            g = LineageGraph(open_store(server.uri))  # ensure_schema: the constraints and indexes
        self.opened.append(g)
        return g

    def close(self) -> None:
        for g in self.opened:
            g.store.clear()
            g.close()


@pytest.fixture
def importer(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Importer]:
    imp = Importer(backend, request, tmp_path)
    yield imp
    imp.close()


def canonical(g: LineageGraph) -> dict[str, list[str]]:
    return g.store.snapshot().canonical()


def assert_same(got: dict[str, list[str]], expected: dict[str, list[str]]) -> None:
    if got == expected:
        return
    lines = []
    for part in ("nodes", "edges"):
        a, b = set(got[part]), set(expected[part])
        lines += [f"only imported: {x}" for x in sorted(a - b)[:5]] + [f"only streamed: {x}" for x in sorted(b - a)[:5]]
    pytest.fail("graphs differ:\n" + "\n".join(lines))


# --- the equivalence ----------------------------------------------------------------------------------------------


def test_an_imported_snapshot_is_the_streamed_graph_and_streaming_goes_on_from_it(graph, importer) -> None:
    changes = history_changes()
    report = graph.ingest(changes)
    assert not report.refused
    snap = graph.store.snapshot()
    labels = {n.label for n in snap.nodes}
    types = {e.type for e in snap.edges}
    assert {"Dataset", "DatasetField", "FieldState", "JobRun", "FieldOperations", "DataJob"} <= labels
    assert {"HasField", "HadState", "DataDerivedFrom", "PreviouslyDerivedFrom"} <= types
    assert graph.stats().placeholder_fields > 0 and graph.stats().ambiguous_references > 0

    imported = importer.load(snap)
    expected = snap.canonical()
    assert_same(canonical(imported), expected)
    assert imported.stats() == graph.stats()

    imported.ingest(changes)  # the same history streamed again: nothing changes
    assert_same(canonical(imported), expected)

    later = later_changes()  # and streaming goes on as from the streamed graph
    graph.ingest(later)
    imported.ingest(later)
    after = canonical(graph)
    assert after != expected
    assert_same(canonical(imported), after)
    (field,) = [f for f in encode(imported.fields(later[0].dataset)) if f["fieldPath"] == "email_domain"]
    assert [h.field_path for h in imported.upstream(field["urn"]).hops] == ["email"]


def test_hostile_strings_and_every_value_type_survive(backend, importer) -> None:
    snap = hostile_snapshot()
    imported = importer.load(snap)
    got = imported.store.snapshot()
    assert_same(got.canonical(), snap.canonical())
    by_urn = {n.props["urn"]: n.props for n in got.nodes}
    assert by_urn["urn:li:dataset:(e)"] == {"urn": "urn:li:dataset:(e)"}  # absent stays absent
    d = by_urn["urn:li:dataset:(d)"]
    assert d["schemaTimes"] == [3, -1, 2 ** 62] and d["tags"] == HOSTILE[:-1] + ["a"] and d["placeholder"] is False


def test_a_graph_that_is_not_empty_is_refused(graph, falkordb_server) -> None:
    graph.ingest(later_changes())
    before = graph.stats()
    with pytest.raises(GraphNotEmpty, match="fieldgraph backfill.*without --bulk.*clear the graph"):
        check_empty(graph.store)
    if graph.store.backend == "falkordb":
        with pytest.raises(GraphNotEmpty, match="builds a new graph"):
            load_falkordb(hostile_snapshot(), graph.store)
        assert graph.stats() == before  # untouched


# --- the import files (pure) ---------------------------------------------------------------------------------------


def test_neo4j_files_and_command(tmp_path) -> None:
    snap = hostile_snapshot()
    files = write_neo4j_import(snap, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nodes-Dataset.csv", "nodes-DatasetField.csv",
                                                          "rels-DataDerivedFrom.csv", "rels-HasField.csv"]
    head = (tmp_path / "nodes-Dataset.csv").read_text().splitlines()[0]
    assert head == ":ID,:LABEL,name:string,placeholder:boolean,schemaTimes:long[],tags:string[],urn:string"
    assert files.array_delimiter == "\x1e"  # \x1f is inside an element
    assert files.multiline and (files.node_count, files.edge_count) == (len(snap.nodes), len(snap.edges))
    cmd = files.command()
    assert cmd.startswith("neo4j-admin database import full neo4j --overwrite-destination=true --id-type=integer "
                          "--array-delimiter=U+001E --multiline-fields=true")
    assert f"--nodes=Dataset={tmp_path / 'nodes-Dataset.csv'}" in cmd


def test_mixed_types_and_values_an_importer_cannot_hold_are_named() -> None:
    with pytest.raises(BulkLoadError, match="property 'position' of label DatasetField has values of two types "
                                            r"\(long and string\)"):
        property_types([{"position": 1}, {"position": "2"}], "label DatasetField")
    with pytest.raises(BulkLoadError, match="tags"):
        property_types([{"tags": ["a", 1]}], "label X")
    assert property_types([{"t": []}, {"t": [1]}, {"b": True, "f": 1.0}], "x") == {"t": "long[]", "b": "boolean",
                                                                                   "f": "double"}
    empty = Snapshot([NodeRow(1, "DatasetField", {"urn": "u", "localTags": []})], [])
    with pytest.raises(BulkLoadError, match="'localTags' of label DatasetField holds \\[\\]"):
        write_neo4j_import(empty, "/tmp/unused-fieldgraph-bulk")
    with pytest.raises(BulkLoadError, match="NUL"):
        list(falkordb_bulk_commands(Snapshot([NodeRow(1, "X", {"s": "a\x00b"})], [])))


def test_bulk_commands_are_split_by_size() -> None:
    snap = Snapshot([NodeRow(i, "DatasetField", {"urn": f"u{i}" * 20}) for i in range(200)],
                    [EdgeRow(i, "HasField", i + 1, {"validFrom": i}) for i in range(199)])
    cmds = list(falkordb_bulk_commands(snap, max_bytes=2000))
    assert len(cmds) > 5 and cmds[0][0] == "BEGIN" and all(c[0] != "BEGIN" for c in cmds[1:])
    counts = [c[1:3] if c[0] == "BEGIN" else c[0:2] for c in cmds]
    assert sum(n for n, _ in counts) == 200 and sum(e for _, e in counts) == 199  # each once


def _two_parts() -> list[Snapshot]:
    """Two parts of one graph (they share no node), each numbering its nodes from 0."""
    return [Snapshot([NodeRow(i, "DatasetField", {"urn": f"{p}{i}", "tags": [f"t{i}"]}) for i in range(3)],
                     [EdgeRow(0, "DataDerivedFrom", i, {"p": p}) for i in (1, 2)]) for p in "ab"]


def test_parts_packed_apart_are_the_parts_packed_together(tmp_path) -> None:
    """The bulk backfill packs each part in its own task, numbered on from the parts before: the same GRAPH.BULK
    entities and the same import files as packing the parts in one go."""
    parts = _two_parts()
    together = list(falkordb_bulk_commands(parts))
    apart = [*falkordb_bulk_commands(parts[0]), *falkordb_bulk_commands(parts[1], offset=3, first=False)]
    assert together[0][0] == apart[0][0] == "BEGIN" and all(c[0] != "BEGIN" for c in apart[1:])
    def nodes(cmds: list[list[Any]]) -> int:
        return sum(c[1] if c[0] == "BEGIN" else c[0] for c in cmds)

    assert nodes(apart) == nodes(together) == 6  # each once
    def tokens(cmds: list[list[Any]]) -> list[bytes]:
        return sorted(t for c in cmds for t in c if isinstance(t, bytes))

    assert tokens(apart) == tokens(together)  # the same entities, edges naming the same node numbers
    assert list(falkordb_bulk_commands(Snapshot(), offset=6, first=False)) == []  # an empty part sends nothing

    one = write_neo4j_import(parts, tmp_path / "one", delimiter="\x1f")
    merged = Neo4jImport.merged([write_neo4j_import(p, tmp_path / "two", delimiter="\x1f", offset=3 * k, first_part=k)
                                 for k, p in enumerate(parts)])
    assert (merged.node_count, merged.edge_count) == (one.node_count, one.edge_count) == (6, 4)
    assert [(label, p.name, p.read_text()) for label, p in merged.nodes + merged.relationships] == \
        [(label, p.name, p.read_text()) for label, p in one.nodes + one.relationships]
    assert "3,5,DataDerivedFrom" in (tmp_path / "two" / "rels-DataDerivedFrom-1.csv").read_text()


def test_the_scratch_graph_gives_the_streamed_graph(graph) -> None:
    """``stream_snapshot``: the history planned into a scratch graph is the graph streaming it into the store
    gives (whatever holds either)."""
    changes = history_changes()
    graph.ingest(changes)
    assert_same(stream_snapshot(changes).canonical(), canonical(graph))


# --- fieldgraph backfill --bulk --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from fieldgraph.ingest.backfill import spark_session

    s = spark_session("local[2]", {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"})
    yield s
    s.stop()


def _history_files(tmp_path: Path) -> list[Path]:
    from .test_backfill import history, write_history

    events, _ = history(2)
    return write_history(tmp_path / "events", events)


def test_backfill_bulk_into_falkordb_is_the_backfill(spark, falkordb_graphs, tmp_path) -> None:
    from fieldgraph.ingest.backfill import BackfillOptions, run_backfill

    from .test_backfill import assert_same as same_dump
    from .test_backfill import dump

    files = _history_files(tmp_path)
    streamed, bulked = falkordb_graphs.new(), falkordb_graphs.new()
    opts = dict(partitions=4, batch_size=50, rejects=str(tmp_path / "rej"))
    run_backfill(BackfillOptions([str(p) for p in files], graph=streamed.uri, **opts), spark=spark)
    report = run_backfill(BackfillOptions([str(p) for p in files], graph=bulked.uri, bulk=True, **opts),
                          spark=spark).to_json()
    same_dump(dump(bulked), dump(streamed))
    assert report["bulk"]["importer"] == "GRAPH.BULK" and report["graph"] == encode(streamed.stats())
    assert report["rejected"] == 4
    assert sum(1 for n in report["bulk"]["partNodes"] if n) >= 2  # planned apart, in parts that share no node

    with pytest.raises(GraphNotEmpty):  # again: the graph is not empty now
        run_backfill(BackfillOptions([str(p) for p in files], graph=bulked.uri, bulk=True, **opts), spark=spark)


def test_backfill_bulk_into_a_stopped_neo4j_home_imports(spark, falkordb_graphs, tmp_path) -> None:
    """--neo4j-home: a stopped installation without a database yet: the import runs in the backfill."""
    from fieldgraph.ingest.backfill import BackfillOptions, run_backfill

    from .services import Neo4jServer

    files = _history_files(tmp_path)
    fresh = Neo4jServer(tmp_path / "fresh")
    fresh._configure()
    streamed = falkordb_graphs.new()
    opts = dict(partitions=4, batch_size=50, rejects=str(tmp_path / "rej"))
    run_backfill(BackfillOptions([str(p) for p in files], graph=streamed.uri, **opts), spark=spark)
    report = run_backfill(BackfillOptions([str(p) for p in files], graph=fresh.uri, bulk=True,
                                          bulk_dir=str(tmp_path / "csv"), neo4j_home=str(fresh.home),
                                          neo4j_admin=" ".join(json.dumps(a) for a in admin_tool()), **opts),
                          spark=spark).to_json()
    assert report["bulk"]["imported"] is True and report["graph"] == encode(streamed.stats())
    assert sum(1 for n in report["bulk"]["partNodes"] if n) >= 2
    fresh.start()
    try:
        with LineageGraph(open_store(fresh.uri)) as imported:
            assert_same(canonical(imported), canonical(streamed))
        fresh.stop()
        with pytest.raises(GraphNotEmpty, match="cannot tell whether the stopped server's database holds a graph"):
            run_backfill(BackfillOptions([str(p) for p in files], graph=fresh.uri, bulk=True,
                                         neo4j_home=str(fresh.home), **opts), spark=spark)
    finally:
        fresh.stop()


def test_backfill_bulk_for_a_running_neo4j_prints_the_command(neo4j_server, tmp_path) -> None:
    """The server runs: the graph is checked empty, the files written and the command printed. (Last in the module:
    the command's own Spark session is the module's, which it stops at the end.)"""
    from fieldgraph.ingest.cli import app

    files = _history_files(tmp_path)
    with open_store(neo4j_server.uri) as store:
        store.clear()
    args = ["backfill", *map(str, files), "--bulk", "--graph", neo4j_server.uri, "--bulk-dir", str(tmp_path / "csv"),
            "--rejects", str(tmp_path / "rej"), "--master", "local[2]", "--partitions", "2"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 3, res.output  # 3: the history has bad lines
    assert "neo4j-admin database import full neo4j --overwrite-destination=true" in " ".join(res.output.split())
    assert "stop the Neo4j server" in res.output
    assert (tmp_path / "csv" / "nodes-DatasetField.csv").exists()
    with open_store(neo4j_server.uri) as store:  # nothing written to the live graph
        assert store.snapshot().nodes == []
