"""The CLI's one error boundary and its exit codes.

Commands raise the errors of :mod:`fieldgraph.errors` (or let them through); :class:`Commands`, the root
group every command runs in, prints ``error: <message>`` on stderr and exits with the code of the error's
kind (:func:`exit_code`). An ``OSError`` about a file (one that cannot be read) is bad input too. Anything
else is a bug and keeps its traceback.

Exit codes (the reference page docs/reference/errors.md is generated from this table):

====  =====================================================================================
0     done
1     failed: a check did not pass (``diff`` found a broken rule), or the graph, the worker
      or the emitter failed
2     usage: an unknown command or option, a missing argument, a value of the wrong type
      (click's own code)
3     input rejected: a schema, event, file, URN, Cypher statement or setting that cannot be used
      (``ingest``, ``backfill`` and ``emit`` exit 3 when they skipped bad events, after writing or
      sending the rest)
4     not found: a field, dataset or lineage path that is not in the graph, or no embedded graph
      where one was named
5     unavailable: the graph, the broker or the schema registry cannot be reached
      (``server status``: the embedded server is not running)
6     partial: a lineage walk stopped at its depth cap or time budget (the result is printed, and
      says so); a ``--depth`` you chose is not partial
====  =====================================================================================
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from fieldgraph.errors import FieldgraphError, GraphRefused, InputError, NotFoundError, TransientError
from fieldgraph.ingest.cli.render import print_error

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_NOT_FOUND = 4
EXIT_UNAVAILABLE = 5
EXIT_PARTIAL = 6

#: OSErrors that are about a path the user gave, even when they do not name it
_PATH_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


def bad_input_message(exc: BaseException) -> str | None:
    """The one-line message for an error that ends a command; None for anything else (a bug)."""
    if isinstance(exc, FieldgraphError):
        return str(exc)
    if isinstance(exc, OSError) and (exc.filename is not None or isinstance(exc, _PATH_ERRORS)):
        if exc.filename is not None and exc.strerror:
            return f"{exc.filename}: {exc.strerror}"
        return str(exc)
    return None


def exit_code(exc: BaseException) -> int:
    """The exit code of an error that ends a command (see the table above)."""
    if isinstance(exc, NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(exc, TransientError):
        return EXIT_UNAVAILABLE
    if isinstance(exc, (InputError, GraphRefused, OSError, LookupError)):  # LookupError: an ambiguous field name
        return EXIT_BAD_INPUT
    return EXIT_FAILED


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
            raise typer.Exit(exit_code(exc)) from exc


def finish(*, partial: bool = False, not_found: bool = False, rejected: bool = False) -> None:
    """End a command that printed its result with the code that says what kind of result it was."""
    if not_found:
        raise typer.Exit(EXIT_NOT_FOUND)
    if rejected:
        raise typer.Exit(EXIT_BAD_INPUT)
    if partial:
        raise typer.Exit(EXIT_PARTIAL)


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
