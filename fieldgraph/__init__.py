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
