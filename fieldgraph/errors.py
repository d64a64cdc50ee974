"""Every error fieldgraph raises on purpose, in one tree.

::

    FieldgraphError
    ├── InputError (ValueError)          bad input: permanent, the message names the input and what is wrong
    │   ├── SchemaNormalizationError     a schema that cannot become fields (schema, place, reason)
    │   ├── FieldPathError               a malformed SchemaFieldPath
    │   ├── UrnError                     a malformed dataset or field URN
    │   ├── EventError                   a change event that cannot be read (place in the event, reason)
    │   │   ├── MessageDecodeError       a Kafka message value that is not JSON or Avro (kind)
    │   │   ├── CdapLineageError         CDAP operations that are not an operation graph
    │   │   └── SqlError                 SQL that cannot be parsed (line, column) or derived
    │   ├── RenameError                  a stated rename that cannot be one (not fields, two datasets, no change)
    │   └── ConfigError                  a bad setting: flag, environment, config file, --graph URI
    │       ├── GraphURIError
    │       └── MissingExtraError        a part of fieldgraph whose optional dependencies are not installed
    ├── TransientError                   a fault outside fieldgraph that may pass: wait and retry
    │   ├── GraphUnavailable (GraphError)     the graph cannot be reached, or lost a write to a conflict
    │   └── SourceUnavailable                 the broker or the schema registry cannot be reached
    ├── GraphError                       the graph store failed
    │   ├── GraphUnavailable (transient)
    │   ├── GraphRefused                 the store refused a statement or its parameters: permanent
    │   ├── QueryTimeout                 a read went over its time budget
    │   ├── AOFDamaged                   the embedded graph's append-only file is damaged: not opened
    │   ├── NotFoundError (LookupError)  a field or dataset the user named is not in the graph
    │   ├── AmbiguousReferenceError      a name that matches several fields
    │   ├── OutOfScope                   a question a reader's scope does not allow (graph-wide counts)
    │   └── BulkLoadError                a bulk import that cannot run or failed (a value it cannot hold)
    │       └── GraphNotEmpty            the bulk load's target already holds a graph
    ├── WorkerError                      the Kafka worker cannot go on (fatal broker error, DLQ refuses)
    └── EmitError                        the emitter could not deliver

A store maps its driver's errors onto this tree by the driver's codes and types, and keeps the driver's error as
the cause (``raise GraphUnavailable(...) from exc``: :mod:`fieldgraph.graph.store`).

The worker's rule follows the tree: a :class:`TransientError` pauses and retries the batch; any other
:class:`FieldgraphError` is permanent, and the event responsible goes to the dead-letter topic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class FieldgraphError(Exception):
    """Base of every error fieldgraph raises on purpose."""


# --- bad input ---------------------------------------------------------------------------------------


class InputError(FieldgraphError, ValueError):
    """Input fieldgraph cannot use. Permanent: the same input fails the same way."""


class SchemaNormalizationError(InputError):
    """A schema could not be turned into fields.

    ``schema`` names the schema (its declared name, or the file it came from), ``path``
    the place inside it (``fields[2].type``, ``Order.lines.items``), ``reason`` what is wrong.
    """

    def __init__(self, reason: str, *, schema: str | None = None, path: str | None = None) -> None:
        self.reason = reason
        self.schema = schema
        self.path = path
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.schema:
            where.append(f"schema {self.schema!r}")
        if self.path:
            where.append(f"at {self.path}")
        return f"{' '.join(where)}: {self.reason}" if where else self.reason

    def with_schema(self, schema: str) -> SchemaNormalizationError:
        """The same error, naming the schema if it did not already."""
        if self.schema:
            return self
        return type(self)(self.reason, schema=schema, path=self.path)


class FieldPathError(InputError):
    """A field path is malformed."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"malformed field path {path!r}: {reason}")


class UrnError(InputError):
    """A URN is malformed or of the wrong entity type."""

    def __init__(self, urn: str, reason: str) -> None:
        self.urn = urn
        self.reason = reason
        super().__init__(f"malformed URN {urn!r}: {reason}")


class EventError(InputError):
    """An event cannot be read: ``where`` names the place in the event, ``reason`` what is wrong."""

    def __init__(self, reason: str, *, where: str | None = None) -> None:
        self.reason = reason
        self.where = where
        super().__init__(f"{where}: {reason}" if where else reason)


class MessageDecodeError(EventError):
    """A message value that cannot be read. ``kind``: ``json``, ``avro``, ``schema``, ``empty``."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        super().__init__(reason)


class CdapLineageError(EventError):
    """The operations of a CDAP field lineage event are not a valid operation graph."""


class SqlError(EventError):
    """A SQL text that cannot be read or derived: where (the statement, its line and column) and sqlglot's reason."""


class RenameError(InputError):
    """A rename stated by hand (``fieldgraph rename``, ``POST /api/v1/renames``) that cannot be one: a name that is
    not a field (or dataset) URN, a field renamed into another dataset, a new name that is the old one."""


class ConfigError(InputError):
    """A setting fieldgraph cannot use (flag, environment variable, config file): names it and says why."""


class GraphURIError(ConfigError):
    """A ``--graph`` URI fieldgraph does not understand."""


class MissingExtraError(ConfigError):
    """``what`` needs optional dependencies that are not installed: the message names the extra to install."""

    def __init__(self, what: str, extra: str) -> None:
        self.what, self.extra = what, extra
        super().__init__(f"{what} needs the '{extra}' extra: pip install 'fieldgraph[{extra}]'")


def require(module: str, extra: str, what: str) -> Any:
    """``module``, imported; :class:`MissingExtraError` if it is not installed (``extra`` brings it)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(what, extra) from exc


# --- faults that pass ----------------------------------------------------------------------------------


class TransientError(FieldgraphError):
    """A fault outside fieldgraph that may pass (a server down, a lost connection): wait and retry."""


class SourceUnavailable(TransientError):
    """The broker or the schema registry cannot be reached: not bad input, the worker waits."""


# --- the graph ---------------------------------------------------------------------------------------


class GraphError(FieldgraphError):
    """The graph store failed (see the subclasses for which failures pass)."""


class GraphUnavailable(GraphError, TransientError):
    """The graph cannot be reached or started, or lost a write to a conflict: retry."""


class GraphRefused(GraphError):
    """The store refused a statement or its parameters (a value it cannot hold): permanent."""


class QueryTimeout(GraphError):
    """A read went over its time budget."""


class NotFoundError(GraphError, LookupError):
    """A field or dataset the user named is not in the graph."""


class AmbiguousReferenceError(GraphError, LookupError):
    """A field name the user gave matches more than one field."""

    def __init__(self, ref: str, candidates: Sequence[str]) -> None:
        self.ref = ref
        self.candidates = list(candidates)
        super().__init__(f"{ref!r} matches {len(candidates)} fields; name one of: " + ", ".join(candidates))


class OutOfScope(GraphError):
    """A question a read scope does not allow (:func:`fieldgraph.graph.scoped.scoped`): its answer would
    disclose the datasets the scope hides (graph-wide counts, raw queries)."""


class AOFDamaged(GraphError):
    """The embedded graph's append-only file is damaged (cut, garbled, emptied or without its manifest): it is
    not opened with data missing; ``fieldgraph server check`` says what, ``fieldgraph server repair`` keeps what
    can be kept. Not transient: retrying does not help."""


class BulkLoadError(GraphError):
    """A bulk import (``fieldgraph.graph.bulkload``) that cannot take the graph (a property with values of
    several types, a value the importer cannot hold) or whose importer failed: permanent."""


class GraphNotEmpty(BulkLoadError):
    """The bulk load builds a new graph and its target already holds one: stream instead, or clear it first."""


# --- the processes ----------------------------------------------------------------------------------


class WorkerError(FieldgraphError):
    """The worker cannot go on (a fatal Kafka error, a dead-letter topic that refuses messages)."""


class EmitError(FieldgraphError):
    """An event the emitter cannot build, or deliveries the broker did not confirm (``failures``:
    (key, reason) pairs)."""

    def __init__(self, message: str, failures: Sequence[tuple[str, str]] = ()) -> None:
        self.failures = list(failures)
        super().__init__(message)


__all__ = [
    "AOFDamaged", "AmbiguousReferenceError", "BulkLoadError", "CdapLineageError", "ConfigError", "EmitError",
    "EventError", "FieldPathError", "FieldgraphError", "GraphError", "GraphNotEmpty", "GraphRefused",
    "GraphURIError", "GraphUnavailable", "InputError", "MessageDecodeError", "MissingExtraError",
    "NotFoundError", "OutOfScope", "QueryTimeout", "RenameError", "SchemaNormalizationError", "SourceUnavailable",
    "SqlError", "TransientError", "UrnError", "WorkerError", "require",
]
