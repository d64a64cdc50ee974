"""The ``fieldgraph`` command line: the app, every command in the order ``--help`` lists them, and :func:`main`.

The commands live by purpose in :mod:`.schema`, :mod:`.graph`, :mod:`.sources`, :mod:`.kafka` and
:mod:`.backfill`; what they share in :mod:`.options` (option declarations, the time and ``name=value``
parsers, opening the graph) and :mod:`.render` (consoles, tables). Errors end a command in one place,
:class:`.boundary.Commands`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

import typer

from fieldgraph.ingest.cli import backfill, graph, kafka, schema, sources
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT, Commands

app = typer.Typer(cls=Commands, add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Field-level lineage: schemas, events, graph.")


@app.callback()
def _root() -> None:
    """Field-level lineage: normalize schemas, ingest change events, query the lineage graph."""


for _name, _command in (
    ("normalize", schema.normalize_cmd),
    ("backfill", backfill.backfill_cmd),
    ("ingest", graph.ingest_cmd),
    ("impact", graph.impact_cmd),
    ("diff-lineage", graph.diff_lineage_cmd),
    ("query", graph.query_cmd),
    ("stats", graph.stats_cmd),
    ("worker", kafka.worker_cmd),
    ("emit", kafka.emit_cmd),
    ("diff", schema.diff_cmd),
    ("tag", sources.tag_cmd),
    ("tags", sources.tags_cmd),
    ("tagged", sources.tagged_cmd),
    ("lineage-summary", sources.lineage_summary_cmd),
):
    app.command(_name)(_command)
app.add_typer(graph.lineage_app, name="lineage")
app.add_typer(graph.server_app, name="server")


def _show_graph_start_up() -> None:
    """The embedded graph's start-up progress (a large graph takes seconds to load) on stderr."""
    progress = logging.getLogger("fieldgraph.graph.embedded")
    if progress.handlers:
        return
    progress.setLevel(logging.INFO)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    progress.addHandler(handler)
    progress.propagate = False


def main(argv: Sequence[str] | None = None, *, prog_name: str | None = None) -> int:
    """Run ``fieldgraph`` with ``argv`` (default: the process's arguments); returns the exit code.

    Typer's standalone mode does the printing (usage errors, ``--help``) and ends in ``SystemExit``;
    its code is returned, so callers (the console script, the backfill's spark-submit entry) exit with it.
    """
    _show_graph_start_up()
    try:
        app(args=None if argv is None else list(argv), prog_name=prog_name)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return 0

__all__ = ["EXIT_BAD_INPUT", "app", "main"]
