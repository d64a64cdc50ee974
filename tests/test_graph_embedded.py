"""The embedded FalkorDB: start, reuse, stop cleanly, and data that survives a restart."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from fieldgraph.graph import EmbeddedServer, GraphError, LineageGraph, open_store

from .conftest import ds, ingest, schema_event

pytestmark = pytest.mark.integration


def test_data_survives_a_restart_and_a_running_server_is_reused() -> None:
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        uri = f"embedded:{tmp}/d"
        with LineageGraph.open(uri) as g:
            assert g.store.server.started_here
            ingest(g, schema_event(ds("db.a"), ["x", "y"], 1))
        server = EmbeddedServer(f"{tmp}/d")
        assert not server.running()  # stopped with the graph that started it
        assert (Path(tmp) / "d" / "appendonlydir").is_dir()

        server.start()  # e.g. `fieldgraph server start`
        try:
            with LineageGraph.open(uri) as g:
                assert not g.store.server.started_here  # reused
                assert g.stats()["fields"] == 2
            assert server.running()  # not ours to stop
        finally:
            server.stop()
        assert not server.running()


def test_clear_errors_for_bad_data_folders() -> None:
    with pytest.raises(GraphError, match="too deep for a unix socket"):
        EmbeddedServer("/tmp/" + "x" * 120).start()
    with pytest.raises(GraphError, match="cannot create the data folder"):
        EmbeddedServer("/proc/fieldgraph").start()
    with pytest.raises(GraphError, match="cannot reach FalkorDB"):
        open_store("falkordb://127.0.0.1:1")
    # credentials in the URI are not echoed back
    with pytest.raises(GraphError, match=r"cannot reach Neo4j at bolt://127\.0\.0\.1:1:"):
        open_store("bolt://user:secret@127.0.0.1:1?database=lineage")
