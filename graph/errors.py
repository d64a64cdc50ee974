"""The graph layer's errors (defined in the package's one tree, :mod:`fieldgraph.errors`)."""

from fieldgraph.errors import (
    AmbiguousReferenceError,
    AOFDamaged,
    BulkLoadError,
    GraphError,
    GraphNotEmpty,
    GraphRefused,
    GraphUnavailable,
    GraphURIError,
    NotFoundError,
    QueryTimeout,
)


class LockKeysError(Exception):
    """A writer needs writer locks it does not hold (``keys``): what reading showed a batch reaches (a data job's
    stored outputs, the datasets naming a query...). Not a :class:`FieldgraphError`: no event is at fault; the
    writer releases its locks, takes the union in sorted order and writes the batch again."""

    def __init__(self, keys: frozenset[str]) -> None:
        super().__init__(f"{len(keys)} more writer lock keys needed, e.g. {min(keys)!r}" if keys else "no keys")
        self.keys = keys


__all__ = ["AOFDamaged", "AmbiguousReferenceError", "BulkLoadError", "GraphError", "GraphNotEmpty", "GraphRefused",
           "GraphURIError", "GraphUnavailable", "LockKeysError", "NotFoundError", "QueryTimeout"]
