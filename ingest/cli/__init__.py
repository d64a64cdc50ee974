"""The ``fieldgraph`` command line: the app, every command in the order ``--help`` lists them, and :func:`main`.

The commands live by purpose in :mod:`.schema`, :mod:`.graph`, :mod:`.sources`, :mod:`.kafka`,
:mod:`.backfill`, :mod:`.edges` and :mod:`.unused`; what they share in :mod:`.options` (option declarations, the
time and ``name=value`` parsers, opening the graph) and :mod:`.render` (consoles, tables). Errors end a command in
one place, :class:`.boundary.Commands`, with the exit code of their kind (:mod:`.boundary` lists them); the root
options (``--version``, ``--log-level``, ``--log-format``) are read once, in :func:`_root`.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from fieldgraph.ingest.cli import backfill, edges, graph, kafka, rename, schema, serve, sources, sql, unused
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT, Commands
from fieldgraph.ingest.cli.logs import FORMATS, LEVELS, setup_logging

app = typer.Typer(cls=Commands, no_args_is_help=True, rich_markup_mode=None,
                  help="Field-level lineage: schemas, events, graph.")


def _version(show: bool) -> None:
    if show:
        from fieldgraph import __version__

        typer.echo(f"fieldgraph {__version__}")
        raise typer.Exit()


def _choice(name: str, choices: Sequence[str]) -> Any:
    def check(value: str) -> str:
        if value.lower() not in choices:
            raise typer.BadParameter(f"{value!r}: choose one of {', '.join(choices)}")
        return value.lower()

    return typer.Option(f"--{name}", envvar=f"FIELDGRAPH_{name.upper().replace('-', '_')}", callback=check,
                        metavar=name.split("-")[1].upper(), help=" | ".join(choices))


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print fieldgraph's version and exit.")] = False,
    log_level: Annotated[str, _choice("log-level", LEVELS)] = "info",
    log_format: Annotated[str, _choice("log-format", FORMATS)] = "text",
) -> None:
    """Field-level lineage: normalize schemas, ingest change events, query the lineage graph."""
    from fieldgraph.ingest.config import unknown_env

    setup_logging(log_level, log_format)
    for warning in unknown_env():
        logging.getLogger("fieldgraph.config").warning("%s", warning)


for _name, _command in (
    ("normalize", schema.normalize_cmd),
    ("backfill", backfill.backfill_cmd),
    ("ingest", graph.ingest_cmd),
    ("impact", graph.impact_cmd),
    ("diff-lineage", graph.diff_lineage_cmd),
    ("query", graph.query_cmd),
    ("stats", graph.stats_cmd),
    ("unused", unused.unused_cmd),
    ("worker", kafka.worker_cmd),
    ("emit", kafka.emit_cmd),
    ("diff", schema.diff_cmd),
    ("set-schema", schema.set_schema_cmd),
    ("tag", sources.tag_cmd),
    ("tags", sources.tags_cmd),
    ("tagged", sources.tagged_cmd),
    ("lineage-summary", sources.lineage_summary_cmd),
    ("sql", sql.sql_cmd),
    ("rename", rename.rename_cmd),
    ("serve", serve.serve_cmd),
    ("serve-token", serve.serve_token_cmd),
):
    app.command(_name)(_command)
app.add_typer(graph.lineage_app, name="lineage")
app.add_typer(graph.server_app, name="server")
app.add_typer(edges.edge_app, name="edge")


def main(argv: Sequence[str] | None = None, *, prog_name: str | None = None) -> int:
    """Run ``fieldgraph`` with ``argv`` (default: the process's arguments); returns the exit code.

    Typer's standalone mode does the printing (usage errors, ``--help``) and ends in ``SystemExit``;
    its code is returned, so callers (the console script, the backfill's spark-submit entry) exit with it.
    """
    previous = _exit_on_signals()
    try:
        app(args=None if argv is None else list(argv), prog_name=prog_name)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


def _exit_on_signals() -> dict[int, Any]:
    """SIGTERM and SIGHUP end a command as an error would, exit code 128 + the signal: its clean-up runs (the
    graph is closed; an embedded server whose last client it was is stopped). A second one ends it at once.
    Signals the caller ignores (``nohup``) stay ignored; commands that stop gracefully on SIGTERM (``worker``,
    ``serve``) install their own handlers over these. Returns the handlers replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:
            previous[signum] = signal.signal(signum, _exit)
    return previous


def _exit(signum: int, _: object) -> None:
    for s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) == _exit:
            signal.signal(s, signal.SIG_DFL)
    raise SystemExit(128 + signum)

__all__ = ["EXIT_BAD_INPUT", "app", "main"]
