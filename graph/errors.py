"""The graph layer's errors (defined in the package's one tree, :mod:`fieldgraph.errors`)."""

from fieldgraph.errors import (
    AmbiguousReferenceError,
    BulkLoadError,
    GraphError,
    GraphNotEmpty,
    GraphRefused,
    GraphUnavailable,
    GraphURIError,
    NotFoundError,
    QueryTimeout,
)


class AOFDamaged(GraphError):
    """The embedded graph's append-only file is damaged (cut, garbled, emptied or without its manifest): it is
    not opened with data missing; ``fieldgraph server check`` says what, ``fieldgraph server repair`` keeps what
    can be kept. Not transient: retrying does not help."""


__all__ = ["AOFDamaged", "AmbiguousReferenceError", "BulkLoadError", "GraphError", "GraphNotEmpty", "GraphRefused",
           "GraphURIError", "GraphUnavailable", "NotFoundError", "QueryTimeout"]
