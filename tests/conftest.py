"""Graph fixtures: the graph tests run on both backends, each started once per test session:

- an embedded FalkorDB in a tmp folder (one graph per test), and
- a real Neo4j 5.26 Community server from Maven Central (``tests/services.py``; authentication on), whose
  Community edition has one database: it is emptied before and after each test.

``graph`` is parametrized over both (test ids end in ``[falkordb]`` / ``[neo4j]``); ``fresh_graph()`` gives
another empty graph on the same backend (on Neo4j, the one database emptied again). Tests marked ``@WITH_MEMORY``
also run on the in-memory store (``[memory]``, :mod:`fieldgraph.graph.memory`).

Under CI (``CI`` set) the property tests run derandomized: the same generated examples every
run, so a landing never depends on a lucky draw; locally they explore new examples each run.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# the Kafka fixtures (a real Apache Kafka per session) for every test module
pytest_plugins = ("tests.kafka_fixtures",)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "events"
_names = itertools.count()


@pytest.fixture(scope="session")
def falkordb_server() -> Iterator[Any]:
    from fieldgraph.graph import EmbeddedServer

    # a short path: unix socket paths are limited to ~100 characters
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        server = EmbeddedServer(Path(tmp) / "data").start()
        assert server.started_here, "a FalkorDB server already answers on the fresh tmp socket?"
        yield server
        server.stop()


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from .services import Neo4jServer

    server = Neo4jServer(tmp_path_factory.mktemp("neo4j")).start()
    yield server
    server.stop()


BACKENDS = ["falkordb", "neo4j"]
#: ``@WITH_MEMORY`` on a test that asks the graph through ``LineageGraph`` only (no raw Cypher, no ``graph.uri``):
#: it runs on the in-memory store too (``[memory]``), with the same assertions
WITH_MEMORY = pytest.mark.parametrize("backend", [*BACKENDS, "memory"], indirect=True)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Graphs:
    """Empty graphs on one backend; each gets a ``uri`` attribute (``--graph`` for the CLI and the worker)."""

    def __init__(self, backend: str, request: pytest.FixtureRequest) -> None:
        self.backend = backend
        self.request = request
        self.opened: list[Any] = []

    def new(self) -> Any:
        from fieldgraph.graph import LineageGraph, MemoryStore, open_store

        if self.backend == "memory":  # its own graph, in this process: no URI another process could open
            g = LineageGraph(MemoryStore())
            g.uri = None
            self.opened.append(g)
            return g
        if self.backend == "falkordb":
            server = self.request.getfixturevalue("falkordb_server")
            name = f"t{next(_names)}_{self.request.node.name}"[:60]
            uri = f"falkordb+unix://{server.socket}?graph={name}"
        else:
            uri = self.request.getfixturevalue("neo4j_server").uri
        g = LineageGraph(open_store(uri))
        g.store.clear()  # Neo4j: the one database, emptied
        g.store.ensure_schema()
        g.uri = uri
        self.opened.append(g)
        return g

    def close(self) -> None:
        for g in self.opened:
            g.store.clear()
            g.close()


@pytest.fixture
def graph_factory(backend: str, request: pytest.FixtureRequest) -> Iterator[Graphs]:
    gs = Graphs(backend, request)
    yield gs
    gs.close()


@pytest.fixture
def graph(graph_factory: Graphs) -> Any:
    """A LineageGraph on an empty graph of the test's backend (``graph.uri`` names it)."""
    return graph_factory.new()


@pytest.fixture
def falkordb_graphs(request: pytest.FixtureRequest) -> Iterator[Graphs]:
    """Empty graphs on the session's embedded FalkorDB, whatever the test's backend: references to compare
    with (a test on Neo4j then also checks that the two backends agree)."""
    gs = Graphs("falkordb", request)
    yield gs
    gs.close()


@pytest.fixture
def reference_graph(falkordb_graphs: Graphs) -> Any:
    """An empty graph on the embedded FalkorDB, where a test ingests the same events directly to compare."""
    return falkordb_graphs.new()


@pytest.fixture
def fresh_graph(graph_factory: Graphs) -> Any:
    """``fresh_graph()``: another empty graph on the same backend. On Neo4j (one database) it empties the
    database the earlier graphs of the test use: finish with them first."""
    return graph_factory.new


def example_changes() -> list[Any]:
    """The typed changes of ``examples/events``, in file order (none of them rejected)."""
    from fieldgraph.ingest.replay import decode, event_files, read_events

    out = []
    for f in event_files([EXAMPLES]):
        for raw in read_events(f):
            changes, rejected = decode(raw)
            assert rejected is None, rejected
            out.extend(changes)
    return out


def dump(g: Any) -> dict[str, Any]:
    """The whole graph as sorted plain data, for comparing two graphs."""
    nodes = g.query("MATCH (n) RETURN labels(n) AS labels, properties(n) AS props")
    edges = g.query("MATCH (a)-[e]->(b) RETURN a.urn AS a, type(e) AS type, properties(e) AS props, b.urn AS b")
    key = lambda x: json.dumps(x, sort_keys=True, default=str)  # noqa: E731
    return {"nodes": sorted(nodes, key=key), "edges": sorted(edges, key=key)}


@pytest.fixture
def files(tmp_path: Path) -> Callable[[str, Any], str]:
    """``files(name, obj)``: ``obj`` written as JSON to ``name`` in the test's folder; returns its path."""
    def write(name: str, obj: Any) -> str:
        p = tmp_path / name
        p.write_text(json.dumps(obj))
        return str(p)

    return write


# --- event builders for the graph tests ---

def ds(name: str, platform: str = "hive") -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:{platform},{name},PROD)"


def sf(dataset: str, path: str) -> str:
    return f"urn:li:schemaField:({dataset},{path})"


def column(path: str, typ: str = "StringType", native: str = "string") -> dict[str, Any]:
    return {"fieldPath": path, "nullable": False, "type": {"type": {f"com.linkedin.schema.{typ}": {}}},
            "nativeDataType": native, "recursive": False, "isPartOfKey": False}


def mcp(urn: str, aspect_name: str, aspect: Any, ts: int, change: str = "UPSERT") -> dict[str, Any]:
    ev: dict[str, Any] = {"entityType": "dataset", "entityUrn": urn, "changeType": change, "aspectName": aspect_name,
                          "systemMetadata": {"lastObserved": ts}}
    if aspect is not None:
        ev["aspect"] = {"value": json.dumps(aspect), "contentType": "application/json"}
    return ev


def schema_event(urn: str, paths: list[str], ts: int, version: int = 0) -> dict[str, Any]:
    return mcp(urn, "schemaMetadata", {
        "schemaName": urn, "platform": "urn:li:dataPlatform:hive", "version": version, "hash": "",
        "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
        "fields": [column(p) for p in paths]}, ts)


def lineage_event(urn: str, edges: list[tuple[str, list[str]]], ts: int, op: str = "IDENTITY") -> dict[str, Any]:
    """``edges``: (downstream field URN, upstream field URNs)."""
    return mcp(urn, "upstreamLineage", {"upstreams": [], "fineGrainedLineages": [
        {"upstreamType": "FIELD_SET", "upstreams": ups, "downstreamType": "FIELD", "downstreams": [down],
         "transformOperation": op} for down, ups in edges]}, ts)


def datahub_schema(*paths: str) -> Any:
    """DataHub's own ``SchemaMetadataClass`` (acryl-datahub, a test extra) of string columns ``paths``."""
    import datahub.metadata.schema_classes as m

    return m.SchemaMetadataClass(
        schemaName="t", platform="urn:li:dataPlatform:hive", version=0, hash="",
        platformSchema=m.OtherSchemaClass(rawSchema=""),
        fields=[m.SchemaFieldClass(fieldPath=p, type=m.SchemaFieldDataTypeClass(m.StringTypeClass()),
                                   nativeDataType="string") for p in paths])


def stamped(mcp: Any, ts: int) -> Any:
    """DataHub's ``MetadataChangeProposalWrapper`` ``mcp`` with system metadata observed at ``ts``."""
    import datahub.metadata.schema_classes as m

    mcp.systemMetadata = m.SystemMetadataClass(lastObserved=ts, runId="test-run")
    return mcp


def ingest(g: Any, *events: dict[str, Any], batch_events: int = 1000) -> Any:
    from fieldgraph.ingest.sources import decode_event

    changes = [c for e in events for c in decode_event(e)]
    return g.ingest(changes, batch_events=batch_events)
