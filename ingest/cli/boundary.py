"""The CLI's one error boundary: an error that is the input's fault ends a command with one line and exit 2.

Commands raise the errors of :mod:`fieldgraph.errors` (or let them through); :class:`Commands`, the root
group every command runs in, prints ``error: <message>`` on stderr and exits with :data:`EXIT_BAD_INPUT`.
An ``OSError`` about a file (one that cannot be read) is bad input too. Anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from fieldgraph.errors import FieldgraphError, InputError
from fieldgraph.ingest.cli.render import print_error

#: Exit code for bad input (a schema, an event, a path that cannot be read, a bad setting, a graph that fails).
EXIT_BAD_INPUT = 2

#: OSErrors that are about a path the user gave, even when they do not name it
_PATH_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


def bad_input_message(exc: BaseException) -> str | None:
    """The one-line message for an error that is the input's fault; None for anything else (a bug)."""
    if isinstance(exc, FieldgraphError):
        return str(exc)
    if isinstance(exc, OSError) and (exc.filename is not None or isinstance(exc, _PATH_ERRORS)):
        if exc.filename is not None and exc.strerror:
            return f"{exc.filename}: {exc.strerror}"
        return str(exc)
    return None


class Commands(TyperGroup):
    """The root command group: every command (and sub-group) runs inside the error boundary."""

    def invoke(self, ctx: Any) -> Any:  # ctx: the Context of the click typer runs on (bundled in typer >= 0.2x)
        try:
            return super().invoke(ctx)
        except (FieldgraphError, OSError) as exc:
            message = bad_input_message(exc)
            if message is None:
                raise
            print_error(message)
            raise typer.Exit(EXIT_BAD_INPUT) from None


@contextmanager
def about(path: Path) -> Iterator[None]:
    """Errors inside are about the input file ``path``: their message starts with it."""
    try:
        yield
    except FieldgraphError as exc:
        raise InputError(f"{path}: {exc}") from exc


@contextmanager
def value_errors_are_bad_input() -> Iterator[None]:
    """A plain ``ValueError`` from the graph API (a bad direction, an empty tag) is bad input, not a bug."""
    try:
        yield
    except FieldgraphError:
        raise
    except ValueError as exc:
        raise InputError(str(exc)) from exc
