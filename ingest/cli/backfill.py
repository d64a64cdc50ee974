"""``fieldgraph backfill``: the Spark backfill job (:mod:`fieldgraph.ingest.backfill`) from the command line.

The same command is the job's spark-submit / ``python -m fieldgraph.ingest.backfill`` entry point.
"""

from __future__ import annotations

import typer
from rich.text import Text

from fieldgraph.errors import require
from fieldgraph.ingest.cli.boundary import finish
from fieldgraph.ingest.cli.options import TIME_FORMS, GraphName, GraphUri, SummaryJson, parse_pairs
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
    as_json: SummaryJson = False,
) -> None:
    """Backfill the graph from archived change events with Spark: the graph streaming the same events ends in.

    Bad records are counted and added to --rejects with their reason, never fatal (exit 3 when there were any).
    """
    from fieldgraph.ingest.backfill import BackfillOptions, run_backfill

    for dependency in ("pyspark", "fastavro", "pyarrow"):
        require(dependency, "spark", "the backfill")
    opts = BackfillOptions(paths, graph, graph_name, format, master, parse_time(since, "--since"),
                           parse_time(until, "--until"), rejects, partitions, batch, value_column,
                           parse_pairs(conf, "--conf"))
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
    rows = [(k, v) for k, v in summary.items() if k not in ("graph", "rejectsPath", "sparkUI", "files", "seconds")]
    out.print(count_table(f"backfilled {plural(summary['files'], 'file')}, {plural(summary['events'], 'event')} "
                          f"in {summary['seconds']}s", rows + [(f"graph {k}", v) for k, v in summary["graph"].items()]))
    if summary["rejected"]:
        out.print(Text(f"{plural(summary['rejected'], 'bad record')} added to {summary['rejectsPath']}",
                       style="yellow"))
    if summary["refusedAtWrite"]:
        out.print(Text(f"{plural(summary['refusedAtWrite'], 'change')} refused when written (logged with its "
                       "origin); the rest was written", style="yellow"))
    finish(rejected=bad)
