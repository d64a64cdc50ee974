"""``fieldgraph backfill``: the Spark backfill job (:mod:`fieldgraph.ingest.backfill`) from the command line.

The same command is the job's spark-submit / ``python -m fieldgraph.ingest.backfill`` entry point.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.text import Text

from fieldgraph.errors import require
from fieldgraph.ingest.cli.boundary import finish
from fieldgraph.ingest.cli.options import TIME_FORMS, GraphName, GraphUri, SummaryJson, TypesFromSql, parse_pairs
from fieldgraph.ingest.cli.render import count_table, dump, out, plural, progress
from fieldgraph.ingest.times import parse_time


def backfill_cmd(
    paths: list[str] = typer.Argument(..., help="Event files or folders (local, or hdfs:// s3a:// URIs): JSON Lines, "
                                      "JSON, Avro container files, Parquet with the event JSON in a value column."),
    graph: GraphUri = None,
    graph_name: GraphName = None,
    format: str | None = typer.Option(None, "--format", "-f",
                                         help="jsonl|json|avro|parquet (default: from each file's suffix)."),
    master: str | None = typer.Option(None, "--master", help="Spark master (local[N], spark://..., yarn); default: "
                                         "spark-submit's, else local[*]."),
    since: str | None = typer.Option(None, "--since", help=f"Only changes stamped at or after T ({TIME_FORMS})."),
    until: str | None = typer.Option(None, "--until", help="Only changes stamped before T (same forms)."),
    rejects: str = typer.Option(".fieldgraph/backfill-rejects", "--rejects",
                                help="Folder for bad records (JSON Lines part files: file, line, error, event)."),
    partitions: int | None = typer.Option(None, "--partitions", min=1, help="Spark partitions (default 2 x cores)."),
    batch: int = typer.Option(2000, "--batch", min=1, help="Rows per graph write."),
    value_column: str = typer.Option("value", "--value-column", help="Avro/Parquet column holding the event JSON."),
    conf: list[str] = typer.Option([], "--conf", help="Extra Spark setting key=value (repeatable)."),
    bulk: bool = typer.Option(False, "--bulk", help="Build the graph with the store's bulk importer (an EMPTY graph "
                              "only): the history is planned into an in-memory graph on this machine, then imported "
                              "(FalkorDB: GRAPH.BULK; Neo4j: neo4j-admin database import full)."),
    bulk_dir: str = typer.Option(".fieldgraph/bulk-import", "--bulk-dir",
                                 help="--bulk, Neo4j: folder for the import CSV files."),
    neo4j_home: str | None = typer.Option(None, "--neo4j-home", help="--bulk, Neo4j: the STOPPED server's "
                                          "installation to import into (its database must not exist yet); "
                                          "without it the files are written and the import command printed."),
    neo4j_admin: str | None = typer.Option(None, "--neo4j-admin", help="--bulk, Neo4j: the neo4j-admin command "
                                           "(default NEO4J_HOME/bin/neo4j-admin)."),
    types_from_sql: TypesFromSql = False,
    as_json: SummaryJson = False,
) -> None:
    """Backfill the graph from archived change events with Spark: the graph streaming the same events ends in.

    Bad records are counted and added to --rejects with their reason, never fatal (exit 3 when there were any).
    With --bulk the graph must be empty (docs/how-to/backfill.md: the bulk load).
    """
    from fieldgraph.ingest.backfill import BackfillOptions, run_backfill
    from fieldgraph.ingest.config import platforms_from_env

    for dependency in ("pyspark", "fastavro", "pyarrow"):
        require(dependency, "spark", "the backfill")
    opts = BackfillOptions(paths, graph, graph_name, format, master, parse_time(since, "--since"),
                           parse_time(until, "--until"), rejects, partitions, batch, value_column,
                           parse_pairs(conf, "--conf"), bulk=bulk, bulk_dir=bulk_dir, neo4j_home=neo4j_home,
                           neo4j_admin=neo4j_admin,
                           platforms=platforms_from_env(types_from_sql=True) if types_from_sql else None)
    with progress("tasks") as bar:
        task = bar.add_task("starting Spark", total=None)
        seen: set[str] = set()

        def show(phase: str, done: int, total: int) -> None:
            if phase not in seen:
                seen.add(phase)
                bar.console.print(Text(f"backfill: {phase}", style="dim"))
            bar.update(task, description=phase, completed=done, total=total or None)

        report = run_backfill(opts, progress=show)
    summary = report.to_json()
    bad = bool(summary["rejected"] or summary["refusedAtWrite"])
    if as_json:
        dump(summary)
        finish(rejected=bad)
        return
    rows = [(k, v) for k, v in summary.items()
            if k not in ("graph", "rejectsPath", "sparkUI", "files", "seconds", "bulk")]
    out.print(count_table(f"backfilled {plural(summary['files'], 'file')}, {plural(summary['events'], 'event')} "
                          f"in {summary['seconds']}s", rows + [(f"graph {k}", v) for k, v in summary["graph"].items()]))
    if summary["rejected"]:
        out.print(Text(f"{plural(summary['rejected'], 'bad record')} added to {summary['rejectsPath']}",
                       style="yellow"))
    if summary["refusedAtWrite"]:
        out.print(Text(f"{plural(summary['refusedAtWrite'], 'change')} refused when written (logged with its "
                       "origin); the rest was written", style="yellow"))
    if report.bulk is not None:
        _say_bulk(report.bulk)
    finish(rejected=bad)


def _say_bulk(bulk: dict[str, Any]) -> None:
    """What the bulk load did; for Neo4j without --neo4j-home, the steps left to the user."""
    if bulk.get("command") is None:
        out.print(Text(f"bulk-loaded {plural(bulk['nodes'], 'node')} and {plural(bulk['edges'], 'edge')} with "
                       f"{bulk['importer']} in {bulk['seconds']}s", style="green"))
        if bulk.get("imported") and "files" in bulk:
            out.print(Text("start the Neo4j server: the first fieldgraph command that opens the graph creates its "
                           "constraints and indexes", style="yellow"))
        return
    out.print(Text(f"import files for {plural(bulk['nodes'], 'node')} and {plural(bulk['edges'], 'edge')} written "
                   f"to {bulk['files']}. To import them:\n"
                   "  1. stop the Neo4j server (the import replaces the database's files)\n"
                   f"  2. in its installation folder run:\n     {bulk['command']}\n"
                   "  3. start the server; the first fieldgraph command that opens the graph (e.g. fieldgraph stats) "
                   "creates its constraints and indexes", style="yellow"))
