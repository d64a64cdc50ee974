"""``fieldgraph backfill``: the Spark backfill job (``fieldgraph.ingest.backfill``) from the command line."""

from __future__ import annotations

import json
import sys

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from fieldgraph.ingest.cli import app, err, fail, out
from fieldgraph.normalizers import FieldgraphError

_GRAPH_HELP = ("Graph URI: embedded[:PATH] (default, data folder .fieldgraph/), falkordb://host:port[/graph], "
               "bolt://host:7687 or neo4j://host:7687. Default: $FIELDGRAPH_GRAPH.")


@app.command("backfill")
def backfill_cmd(
    paths: list[str] = typer.Argument(..., help="Event files or folders (local, or hdfs:// s3a:// URIs): JSON Lines, "
                                      "JSON, Avro container files, Parquet with the event JSON in a value column."),
    graph: str | None = typer.Option(None, "--graph", "-g", help=_GRAPH_HELP, envvar="FIELDGRAPH_GRAPH",
                                        show_envvar=False),
    graph_name: str | None = typer.Option(None, "--graph-name", help="Graph (FalkorDB) to use; default fieldgraph."),
    format: str | None = typer.Option(None, "--format", "-f",
                                         help="jsonl|json|avro|parquet (default: from each file's suffix)."),
    master: str = typer.Option("local[*]", "--master", help="Spark master (local[N], spark://..., yarn)."),
    since: str | None = typer.Option(None, "--since", help="Only changes stamped at or after T (ms since the "
                                        "epoch, or ISO 8601 like 2024-05-01 or 2024-05-01T12:00:00Z)."),
    until: str | None = typer.Option(None, "--until", help="Only changes stamped before T (same forms)."),
    rejects: str = typer.Option(".fieldgraph/backfill-rejects", "--rejects",
                                help="Folder for bad records (JSON Lines part files: file, line, error, event)."),
    partitions: int | None = typer.Option(None, "--partitions", min=1, help="Spark partitions (default 2 x cores)."),
    batch: int = typer.Option(2000, "--batch", min=1, help="Rows per graph write."),
    value_column: str = typer.Option("value", "--value-column", help="Avro/Parquet column holding the event JSON."),
    conf: list[str] = typer.Option([], "--conf", help="Extra Spark setting key=value (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Backfill the graph from archived change events with Spark: the graph streaming the same events ends in.

    Bad records are counted and written to --rejects with their reason, never fatal.
    """
    from fieldgraph.ingest.backfill import BackfillOptions, parse_time, run_backfill

    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise fail("the backfill needs pyspark: pip install 'fieldgraph[spark]'") from None
    settings = {}
    for kv in conf:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            raise fail(f"--conf {kv!r}: expected key=value")
        settings[k] = v
    try:
        opts = BackfillOptions(paths, graph, graph_name, format, master, parse_time(since, "--since"),
                               parse_time(until, "--until"), rejects, partitions, batch, value_column, settings)
    except FieldgraphError as exc:
        raise fail(str(exc)) from None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("tasks"),
               TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("starting Spark", total=None)
        seen: set[str] = set()

        def show(phase: str, done: int, total: int) -> None:
            if phase not in seen:
                seen.add(phase)
                progress.console.print(Text(f"backfill: {phase}", style="dim"))
            progress.update(task, description=phase, completed=done, total=total or None)

        try:
            report = run_backfill(opts, progress=show)
        except FieldgraphError as exc:
            raise fail(str(exc)) from None
    summary = report.to_json()
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2, default=str) + "\n")
        return
    t = Table(title=f"backfilled {summary['files']} files, {summary['events']} events in {summary['seconds']}s",
              show_header=False)
    t.add_column("what")
    t.add_column("count", justify="right")
    for k, v in summary.items():
        if k in ("graph", "rejectsPath", "sparkUI", "files", "seconds"):
            continue
        t.add_row(k, str(v))
    for k, v in summary["graph"].items():
        t.add_row(f"graph {k}", str(v))
    out.print(t)
    if summary["rejected"]:
        out.print(Text(f"{summary['rejected']} bad records written to {summary['rejectsPath']}", style="yellow"))
