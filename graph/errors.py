"""Errors of the graph layer."""

from fieldgraph.normalizers import FieldgraphError


class GraphError(FieldgraphError):
    """The graph store cannot be reached, started, or refused a statement."""


class GraphURIError(GraphError, ValueError):
    """A ``--graph`` URI fieldgraph does not understand."""


class NotFoundError(GraphError, LookupError):
    """A field or dataset the user named is not in the graph."""


class AmbiguousReferenceError(GraphError, LookupError):
    """A field name the user gave matches more than one field."""

    def __init__(self, ref: str, candidates: list[str]) -> None:
        self.ref = ref
        self.candidates = candidates
        super().__init__(f"{ref!r} matches {len(candidates)} fields; name one of: " + ", ".join(candidates))
