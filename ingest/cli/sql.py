"""``fieldgraph sql``: field lineage derived from SQL statements, against the schemas in the graph."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table
from rich.text import Text

from fieldgraph.changes import RenameChange
from fieldgraph.errors import InputError, NotFoundError
from fieldgraph.ingest.cli.boundary import about, finish
from fieldgraph.ingest.cli.options import AsJson, GraphName, GraphUri, open_graph
from fieldgraph.ingest.cli.render import Name, ds, dump, err, out, plural, short
from fieldgraph.normalizers import FieldUrn

if TYPE_CHECKING:
    from fieldgraph.changes import Change
    from fieldgraph.graph import IngestReport
    from fieldgraph.graph.sql import Derived
    from fieldgraph.ingest.sources.sql import TableNames


def sql_cmd(
    files: list[Path] = typer.Argument(..., help="SQL files (statements separated by ';'), or - for stdin."),
    dialect: str = typer.Option(None, "--dialect", "-d", help="sqlglot's dialect (spark, postgres, snowflake, "
                                "bigquery, ...); default: sqlglot's own. It also names an output written without an "
                                "alias as its engine does (sum(x) in Spark, _c0 in Hive, f0_ in BigQuery, ...)."),
    target: str = typer.Option(None, "--target", help="The table (a name or dataset URN) a SELECT's results go to; "
                               "statements that name their table (INSERT, CREATE ... AS, MERGE) need none."),
    platform: str = typer.Option(None, "--platform", help="The DataHub platform of the tables (default: from the "
                                 "dialect)."),
    database: str = typer.Option(None, "--database", help="Put before unqualified table names (db or db.schema)."),
    env: str = typer.Option("PROD", "--env", help="The datasets' environment."),
    job: str = typer.Option(None, "--job", help="The job the edges are kept under (default: one per statement)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the lineage, write nothing."),
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Derive field lineage from SQL and write it: each column a statement writes, from the columns it reads
    (SELECT * and unqualified names resolved against the schemas the graph holds), DIRECT or INDIRECT with
    OpenLineage's subtypes. A statement that renames a column or a table (ALTER TABLE ... RENAME COLUMN a TO b,
    RENAME TO u; Hive's CHANGE COLUMN a b type) is written as a rename, which keeps the lineage of the old name. A
    statement that cannot be parsed is an error with its line and column. Notes follow a statement's table where the
    derivation decided something to hear of: a created table whose schema names a derived column otherwise (both
    names), values of one name written to one column."""
    from fieldgraph.ingest.sources.renames import rename_json
    from fieldgraph.ingest.sources.sql import TableNames, platform_of

    names = TableNames(platform or platform_of(dialect), env, database)
    changes = _changes(files, names, dialect=dialect, job=job, target=target)
    derived, report = _derived(changes, graph, graph_name, dry_run=dry_run)
    result = [_json(d) for d in derived]
    renames = [rename_json(c) for c in changes if isinstance(c, RenameChange)]
    if as_json:
        dump({"statements": result, "renames": renames, "written": report is not None})
    else:
        _show(derived, result, renames, dry_run=dry_run)
    finish()


def _changes(files: list[Path], names: TableNames, *, dialect: str | None, job: str | None, target: str | None
             ) -> list[Change]:
    """The SQL changes of the files' statements (``-``: stdin), stamped now (renames in their order, a ms apart)."""
    import time

    from fieldgraph.ingest.sources.sql import sql_changes

    changes: list[Change] = []
    now = int(time.time() * 1000)
    for path in files:
        text = sys.stdin.read() if str(path) == "-" else _read(path)
        with about(Path("<stdin>") if str(path) == "-" else path):
            renames = sum(isinstance(c, RenameChange) for c in changes)  # a later file's renames come after
            changes += sql_changes(text, dialect=dialect, names=names, job=job, target=target, ts=now + renames,
                                   origin=str(path))
    return changes


def _derived(changes: list[Change], graph: str | None, graph_name: str | None, *, dry_run: bool
             ) -> tuple[list[Derived], IngestReport | None]:
    """Each change's lineage against the graph's schemas, and the report of writing them (``None``: a dry run). A
    dry run without a graph places every reference by name; a statement the graph refuses is an error."""
    from fieldgraph.graph.sql import Derived, derive_each

    report = None
    try:
        with open_graph(graph, graph_name, create=not dry_run) as g:
            derived = [d for d in g.derive_sql(changes) if isinstance(d, Derived)]
            report = None if dry_run else g.ingest(changes)
    except NotFoundError:
        if not dry_run:
            raise
        err.print(Text("no graph here: nothing to resolve names against (every reference by name)", style="yellow"))
        derived = [d for d in derive_each(changes, {}) if isinstance(d, Derived)]
    if report is not None and report.refused:
        raise InputError("; ".join(f"{origin}: {reason}" for origin, reason in report.refused))
    return derived, report


def _show(derived: list[Derived], result: list[dict[str, Any]], renames: list[dict[str, Any]], *, dry_run: bool
          ) -> None:
    """A table of each statement's edges, what it could not place, the renames, and how many edges and renames were
    (or would be) written."""
    for d, r in zip(derived, result, strict=True):
        t = Table(title=f"{short(d.change.dataset)}  ({d.change.job})", title_justify="left")
        for col in ("column", "from", "kind", "subtype", "masking", "confidence"):
            t.add_column(col, overflow="fold")
        for e in r["edges"]:
            t.add_row(e["column"], Name(short(e["from"])), e["kind"], e["subtype"], "yes" if e["masking"] else "",
                      f"{e['confidence']:g}")
        out.print(t)
        if r["unresolved"]:
            out.print(Text(f"unresolved (no schema lists them): {', '.join(r['unresolved'])}", style="yellow"))
        for note in r["notes"]:
            out.print(Text(note, style="yellow"))
    for r in renames:
        pairs = [(ds(r["fromDataset"]), ds(r["dataset"]))] if r["fromDataset"] else \
            [(short(p["old"]), short(p["new"])) for p in r["renames"]]
        for old, new in pairs:
            out.print(Text(f"renamed {old} -> {new}"))
    edges = sum(len(r["edges"]) for r in result)
    verb = "would write" if dry_run else "wrote"
    if result or not renames:
        out.print(Text(f"{verb} {plural(edges, 'edge')} from {plural(len(result), 'statement')}"))
    if renames:
        out.print(Text(f"{verb} {plural(len(renames), 'rename')}"))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc


def _json(d: Any) -> dict[str, Any]:
    return {
        "target": d.change.dataset, "job": d.change.job, "columns": list(d.lineage.columns),
        "unresolved": list(d.lineage.unresolved), "notes": list(d.lineage.notes),
        "edges": [{"column": FieldUrn.parse(e.downstream).field_path, "to": e.downstream, "from": e.upstream,
                   "kind": e.props.kind, "subtype": e.props.subtype, "masking": e.props.masking,
                   "confidence": e.props.confidence, "transformations": list(e.props.transformations)}
                  for e in d.change.edges],
    }
