"""What the sources' pydantic wire models say when an event does not fit them, in one line."""

from __future__ import annotations

from pydantic import ValidationError


def format_validation(exc: ValidationError, prefix: str) -> str:
    """The first three errors of ``exc`` as ``prefix.loc: message``, joined, and how many more there are."""
    errs = exc.errors()
    parts = []
    for e in errs[:3]:
        loc = ".".join(str(x) for x in e["loc"])
        parts.append(f"{prefix + '.' if prefix else ''}{loc}: {e['msg']}")
    more = f" (+{len(errs) - 3} more)" if len(errs) > 3 else ""
    return "; ".join(parts) + more
