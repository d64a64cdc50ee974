"""The graph layer's errors (defined in the package's one tree, :mod:`fieldgraph.errors`)."""

from fieldgraph.errors import (
    AmbiguousReferenceError,
    GraphError,
    GraphRefused,
    GraphUnavailable,
    GraphURIError,
    NotFoundError,
    QueryTimeout,
)

__all__ = ["AmbiguousReferenceError", "GraphError", "GraphRefused", "GraphURIError", "GraphUnavailable",
           "NotFoundError", "QueryTimeout"]
