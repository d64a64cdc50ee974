"""fieldgraph: a graph-backed field-level lineage store.

The package root holds what every layer shares: :mod:`fieldgraph.errors` (the exception tree) and
:mod:`fieldgraph.changes` (the typed change model). The layers, each importing only those below it::

    fieldgraph.errors        the exception tree                      (no imports)
    fieldgraph.normalizers   schemas -> one type model -> field paths (pure)
    fieldgraph.changes       typed changes a source says happened     (pure)
    fieldgraph.graph         plans and writes changes; every Cypher statement (fieldgraph.cypher)
    fieldgraph.ingest        sources (wire events -> changes), worker, backfill, emitter, CLI

In a checkout, ``fieldgraph/normalizers``, ``graph``, ``ingest`` and ``cypher`` are links to the
top-level folders, so tools that read source trees (mypy) see one package.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("fieldgraph")
except PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

#: the public API, imported on first use so ``import fieldgraph`` stays cheap and needs no optional extra
_EXPORTS = {
    "normalize": "fieldgraph.normalizers", "fields_of": "fieldgraph.normalizers", "to_model": "fieldgraph.normalizers",
    "SchemaField": "fieldgraph.normalizers", "make_field_urn": "fieldgraph.normalizers",
    "LineageGraph": "fieldgraph.graph", "open_store": "fieldgraph.graph",
    "Emitter": "fieldgraph.ingest.emitter", "decode_event": "fieldgraph.ingest.sources",
    **{name: "fieldgraph.errors" for name in (
        "FieldgraphError", "InputError", "SchemaNormalizationError", "EventError", "ConfigError", "MissingExtraError",
        "TransientError", "GraphError", "GraphUnavailable", "NotFoundError", "EmitError", "WorkerError")},
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'fieldgraph' has no attribute {name!r}")


__all__ = ["__version__", *_EXPORTS]
