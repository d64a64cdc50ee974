"""Typed errors raised by the normalizers: each names its input and what is wrong."""

from __future__ import annotations


class FieldgraphError(Exception):
    """Base of every error fieldgraph raises on purpose."""


class SchemaNormalizationError(FieldgraphError, ValueError):
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

    def with_schema(self, schema: str) -> "SchemaNormalizationError":
        """The same error, naming the schema if it did not already."""
        if self.schema:
            return self
        return SchemaNormalizationError(self.reason, schema=schema, path=self.path)


class FieldPathError(FieldgraphError, ValueError):
    """A field path is malformed."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"malformed field path {path!r}: {reason}")


class UrnError(FieldgraphError, ValueError):
    """A URN is malformed or of the wrong entity type."""

    def __init__(self, urn: str, reason: str) -> None:
        self.urn = urn
        self.reason = reason
        super().__init__(f"malformed URN {urn!r}: {reason}")
