"""Graph commands: ``ingest``, ``impact``, ``query``, ``stats``, the ``lineage`` group and the ``server`` group."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from fieldgraph.ingest.cli.boundary import EXIT_FAILED, EXIT_UNAVAILABLE, finish
from fieldgraph.ingest.cli.options import (
    DEFAULT_TIME_BUDGET,
    TIME_FORMS,
    AsJson,
    AsOf,
    Depth,
    GraphName,
    GraphUri,
    ImpactFormat,
    Limit,
    LineageFormat,
    SummaryJson,
    TimeBudget,
    TypesFromSql,
    open_graph,
    output_format,
    parse_pairs,
)
from fieldgraph.ingest.cli.render import (
    Name,
    count_table,
    ds,
    dump,
    err,
    hop_table,
    impact_table,
    out,
    path_mark,
    plural,
    progress,
    short,
)
from fieldgraph.ingest.times import parse_time

if TYPE_CHECKING:
    from fieldgraph.changes import Change
    from fieldgraph.graph.answers import LineageResult, Unresolved

FIELD_HELP = "Field URN (datasetField or schemaField; v2, v1 or /slash path)."

lineage_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                          help="Field lineage: upstream or downstream of a field.")
server_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                         help="The embedded FalkorDB server (keep one running between commands).")


# ---- ingest ----


def ingest_cmd(
    paths: list[Path] = typer.Argument(..., help="Event files or folders (.json, .jsonl, .ndjson): JSON, JSON Lines "
                                       "or JSON arrays of MCP, MCL, MCE or MAE events."),
    graph: GraphUri = None,
    graph_name: GraphName = None,
    rejects: Path = typer.Option(Path(".fieldgraph/rejects.jsonl"), "--rejects",
                                 help="Where bad events go, appended (JSON Lines with rejectedAt, file, line, "
                                 "error, event)."),
    batch: int = typer.Option(1000, "--batch", min=1, help="Events per graph write batch."),
    strict_aspects: bool = typer.Option(False, "--strict-aspects", help="Reject events with nothing fieldgraph "
                                        "reads (other entities and aspects) instead of skipping them."),
    types_from_sql: TypesFromSql = False,
    as_json: SummaryJson = False,
) -> None:
    """Ingest change events into the lineage graph. Bad events are reported and skipped, never fatal
    (exit 3 when there were any, after the rest is written). Events with nothing fieldgraph reads (other
    entities, other aspects) are skipped and counted."""
    from fieldgraph.ingest.config import platforms_from_env
    from fieldgraph.ingest.replay import RejectsFile, decode, event_files, read_events, refused_rejects

    platforms = platforms_from_env(types_from_sql=types_from_sql)
    files = event_files(paths)
    n = {"events": 0, "unused": 0, "changes": 0}
    with RejectsFile(rejects) as bad, open_graph(graph, graph_name, create=True) as g:
        # a stream: events are decoded as the graph takes them, one batch at a time; bad ones are appended to
        # the rejects file as they come; the progress is the bytes of the files read
        with progress("bytes") as bar:
            task = bar.add_task("ingesting", total=sum(f.stat().st_size for f in files if f.is_file()) or None)

            def changes() -> Iterator[Change]:
                for f in files:
                    for raw in read_events(f, on_read=lambda k: bar.advance(task, k)):
                        n["events"] += 1
                        cs, rej = decode(raw, platforms, strict_aspects=strict_aspects)
                        n["changes"] += len(cs)
                        n["unused"] += not cs and rej is None
                        if rej:
                            bad.add([rej])
                            bar.console.print(Text(f"rejected {rej.file}:{rej.line}: {rej.error}", style="yellow"),
                                              soft_wrap=True)
                        yield from cs

            report = g.ingest(changes(), batch_events=batch)
        stats = g.stats()
        for rej in refused_rejects(report.refused):  # values the graph cannot hold: the rest was written
            bad.add([rej])
            err.print(Text(f"rejected {rej.file}:{rej.line}: {rej.error}", style="yellow"), soft_wrap=True)
    events, rejected = n["events"], bad.count
    c = report.counts
    summary: dict[str, Any] = {
        "files": len(files), "events": events, "rejected": rejected, "skipped": n["unused"],
        "aspectChanges": n["changes"],
        "schemas": c["schemas"], "schemaDeletes": c["schema_deletes"], "lineages": c["lineages"],
        "lineageDeletes": c["lineage_deletes"], "superseded": c["superseded"], "fieldsWritten": c["fields"],
        "fieldsRemoved": c["fields_removed"], "edgesWritten": c["edges"], "placeholdersCreated": c["placeholders"],
        "placeholdersResolved": c["placeholders_resolved"],
        "ambiguousReferences": [
            {"dataset": d, "reference": r, "candidates": list(cs)}
            for d, r, cs in dict.fromkeys((d, r, tuple(cs)) for d, r, cs in report.ambiguous)
        ],
        "rejectsFile": str(rejects) if rejected else None, "graph": stats.to_json(),
    }
    if as_json:
        dump(summary)
        finish(rejected=bool(rejected))
        return
    rows = [(k, v) for k, v in summary.items() if k not in ("ambiguousReferences", "graph", "rejectsFile")]
    out.print(count_table(f"ingested {plural(len(files), 'file')}, {plural(events, 'event')}",
                          rows + [(f"graph {k}", v) for k, v in stats.to_json().items()]))
    for a in summary["ambiguousReferences"]:
        out.print(Text(f"ambiguous: {ds(a['dataset'])} {a['reference']!r} matches {', '.join(a['candidates'])}",
                       style="yellow"), soft_wrap=True)
    if rejected:
        out.print(Text(f"{plural(rejected, 'bad event')} added to {rejects}", style="yellow"))
    finish(rejected=bool(rejected))


# ---- lineage ----


def first_page(kind: str, query: dict[str, Any], answer: Any, exact: bool, limit: int, when: int | None) -> None:
    """``--json --limit``: the answer's first page, as the JSON API gives it (pinned at ``when``, else now)."""
    from fieldgraph.graph.answers import encode
    from fieldgraph.ingest import pages
    from fieldgraph.ingest.times import now_ms

    dump(pages.first_page(kind, query, encode(answer), exact, limit, now_ms() if when is None else when))


def more(shown: int, total: int, exact: bool, word: str) -> None:
    """After a table ``--limit`` trimmed: how many more there are, of the total (at least, when the walk stopped
    short)."""
    if total > shown:
        out.print(Text(f"{plural(total - shown, 'more ' + word)} (of {'' if exact else 'at least '}{total})"))


def _lineage(direction: str, field: str, depth: int | None, budget: float, as_of: str | None, fmt: str,
             graph: str | None, graph_name: str | None, limit: int | None = None) -> None:
    from fieldgraph.graph.answers import Hop
    from fieldgraph.ingest import export, pages

    when = parse_time(as_of, "--as-of")
    with open_graph(graph, graph_name) as g:
        res = getattr(g, direction)(field, depth, time_budget_s=budget, as_of=when)
    if fmt == "json" and limit is not None:
        first_page("lineage", {"direction": direction, "field": field, "depth": depth, "budget": budget,
                               "as_of": as_of}, res, not res.cut_short, limit, when)
    elif fmt == "json":
        dump(res)
    elif fmt == "table":
        shown = res if limit is None else replace(res, hops=pages.head("lineage", res.hops, limit, Hop.to_json))
        out.print(hop_table(shown, f"{direction} of {short(res.start)}{_at(when)}: {plural(len(res.hops), 'edge')}"))
        more(len(shown.hops), len(res.hops), not res.cut_short, "edge")
        if res.partial:
            out.print(Text(f"partial result: {res.reason}", style="yellow"))
    else:
        renderers = {"dot": export.lineage_dot, "mermaid": export.lineage_mermaid, "csv": export.lineage_csv}
        _export(renderers[fmt](res), res)
    finish(partial=res.cut_short)


def _export(text: str, res: LineageResult) -> None:
    """An export (``--format dot|mermaid|csv``) on stdout as it is; a partial result said on stderr."""
    typer.echo(text, nl=False)
    if res.partial:
        err.print(Text(f"partial result: {res.reason}", style="yellow"), soft_wrap=True)


@lineage_app.command("upstream")
def upstream_cmd(
    field: str = typer.Argument(..., help=FIELD_HELP),
    depth: Depth = None,
    budget: TimeBudget = DEFAULT_TIME_BUDGET,
    as_of: AsOf = None,
    as_json: AsJson = False,
    fmt: LineageFormat = None,
    limit: Limit = None,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """The fields a field derives from, with paths and edge properties: a row (hop) per pair of fields, listing
    every edge between the two (several jobs may write one pair)."""
    _lineage("upstream", field, depth, budget, as_of, output_format(as_json, fmt), graph, graph_name, limit)


@lineage_app.command("downstream")
def downstream_cmd(
    field: str = typer.Argument(..., help=FIELD_HELP),
    depth: Depth = None,
    budget: TimeBudget = DEFAULT_TIME_BUDGET,
    as_of: AsOf = None,
    as_json: AsJson = False,
    fmt: LineageFormat = None,
    limit: Limit = None,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """The fields derived from a field: a row (hop) per pair of fields, listing every edge between the two."""
    _lineage("downstream", field, depth, budget, as_of, output_format(as_json, fmt), graph, graph_name, limit)


@lineage_app.command("path")
def path_cmd(
    source: str = typer.Argument(..., help="One field URN."),
    target: str = typer.Argument(..., help="The other field URN."),
    depth: Depth = None,
    as_of: AsOf = None,
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """A shortest lineage path between two fields (either direction)."""
    when = parse_time(as_of, "--as-of")
    with open_graph(graph, graph_name) as g:
        found = g.path(source, target, depth, as_of=when)
    path, res = found.path, found.walk
    if as_json:
        dump(found)
    elif not path:
        out.print("no lineage path" + (f" (partial: {res.reason})" if res.partial else ""))
    else:
        for i, urn in enumerate(path):
            mark = path_mark(res, path[i - 1], urn) if i else ""
            out.print(Text(("  " * i) + ("└─ " if i else "") + short(urn) + mark))
    finish(not_found=not path and not res.cut_short, partial=res.cut_short)


@lineage_app.command("fields")
def fields_cmd(
    dataset: str = typer.Argument(..., help="Dataset URN."),
    as_of: AsOf = None,
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """A dataset's fields: listed by its schema, removed (listed before), or placeholders (references only)."""
    when = parse_time(as_of, "--as-of")
    with open_graph(graph, graph_name) as g:
        rows = g.fields(dataset, as_of=when)
    if as_json:
        dump(rows)
        return
    t = Table(title=f"{plural(len(rows), 'field')} of {ds(dataset)}{_at(when)}")
    for col in ("field", "type", "native type", "state"):
        t.add_column(col, overflow="fold")
    for r in rows:
        state = "placeholder" if r.placeholder else "removed" if r.removed else ""
        t.add_row(Name(r.field_path), Text(r.type or ""), Text(r.native_data_type or ""), state)
    out.print(t)


def diff_lineage_cmd(
    dataset: str = typer.Argument(..., help="Dataset URN."),
    since: str = typer.Option(..., "--from", help=f"The earlier instant ({TIME_FORMS})."),
    until: str = typer.Option(..., "--to", help=f"The later instant ({TIME_FORMS})."),
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """What changed between two instants: the dataset's fields added, removed and changed, and the lineage
    edges into and out of its fields added and removed."""
    t1, t2 = parse_time(since, "--from"), parse_time(until, "--to")
    assert t1 is not None and t2 is not None  # required options
    with open_graph(graph, graph_name) as g:
        res = g.diff_lineage(dataset, t1, t2)
    if as_json:
        dump(res)
        return
    t = Table(title=f"{ds(res.dataset)}: from {since} to {until}")
    for col in ("change", "what", "field", "other end", "via"):
        t.add_column(col, overflow="fold")
    for path in res.added:
        t.add_row("added", "field", Name(path), "", "")
    for path in res.removed:
        t.add_row("removed", "field", Name(path), "", "")
    for c in res.changed:
        t.add_row("changed", "field", Name(c.field_path), Text(", ".join(f"{k}: {c.before[k]} -> {c.after[k]}"
                                                                     for k in c.before)), "")
    for key, edges in (("added", res.edges_added), ("removed", res.edges_removed)):
        for e in edges:
            mine, other = (e.down, e.up) if e.direction == "in" else (e.up, e.down)
            t.add_row(key, f"edge {'from' if e.direction == 'in' else 'to'}", Name(short(mine)),
                      Name(short(other)), Text(f"{e.source} {e.transformation or ''}".strip()))
    out.print(t)
    if not t.row_count:
        out.print("no change")


def _at(when: int | None) -> str:
    if when is None:
        return ""
    return f" as of {dt.datetime.fromtimestamp(when / 1000, dt.UTC).isoformat(timespec='milliseconds')}"


@lineage_app.command("datasets")
def datasets_cmd(
    dataset: str | None = typer.Argument(None, help="Only edges touching this dataset URN."),
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Dataset-level lineage rolled up from field edges."""
    with open_graph(graph, graph_name) as g:
        rows = g.dataset_lineage(dataset)
    if as_json:
        dump(rows)
        return
    t = Table(title="dataset lineage")
    for col in ("downstream", "upstream", "field edges", "transformations"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(Name(ds(r.downstream)), Name(ds(r.upstream)), str(r.field_edges),
                  Text(", ".join(str(x).rsplit(".", 1)[-1] for x in r.transformations if x)))
    out.print(t)


@lineage_app.command("unresolved")
def unresolved_cmd(
    only_ambiguous: bool = typer.Option(False, "--ambiguous", help="Only ambiguous references."),
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Field references not resolved to a schema field (placeholders), ambiguous ones with their candidates."""
    with open_graph(graph, graph_name) as g:
        rows: list[Unresolved] = [*g.ambiguous()] if only_ambiguous else g.unresolved()
    if as_json:
        dump(rows)
        return
    t = Table(title=f"{plural(len(rows), 'unresolved reference')}")
    named = any(r.schema_column for r in rows)  # derived SQL columns the schema names otherwise
    for col in ("dataset", "reference", "edges", "candidates", *(("the schema's name",) if named else ())):
        t.add_column(col, overflow="fold")
    for r in rows:
        cells: list[RenderableType] = [Name(ds(r.dataset)), Name(r.reference or ""), str(r.edges),
                 Text("\n".join(r.candidates or []) or ("" if not r.ambiguous else "?"))]
        if named:
            cells.append(Text(f"{r.schema_column} (column {r.column})" if r.schema_column else ""))
        t.add_row(*cells)
    out.print(t)


# ---- impact, query, stats ----


def impact_cmd(
    name: str = typer.Argument(..., help="A field URN or a dataset URN."),
    depth: Depth = None,
    budget: TimeBudget = DEFAULT_TIME_BUDGET,
    as_of: AsOf = None,
    as_json: AsJson = False,
    fmt: ImpactFormat = None,
    limit: Limit = None,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Impact analysis: the downstream datasets and fields of a field or dataset."""
    form = output_format(as_json, fmt)
    when = parse_time(as_of, "--as-of")
    with open_graph(graph, graph_name) as g:
        impact = g.impact(name, depth, time_budget_s=budget, as_of=when)
    res, by_ds = impact.walk, impact.datasets
    if form == "csv":
        from fieldgraph.ingest.export import impact_csv

        _export(impact_csv(impact), res)
        finish(partial=res.cut_short)
        return
    if form == "json":
        if limit is None:
            dump(impact)
        else:
            first_page("impact", {"name": name, "depth": depth, "budget": budget, "as_of": as_of}, impact,
                       not res.cut_short, limit, when)
        finish(partial=res.cut_short)
        return
    shown = impact
    if limit is not None:
        from fieldgraph.graph.answers import Hop, Impact
        from fieldgraph.ingest import pages

        shown = Impact.of(replace(res, hops=tuple(pages.head("impact", res.hops, limit, Hop.to_json))))
    out.print(impact_table(shown, f"impact of {short(res.start)}{_at(when)}: {plural(len(by_ds), 'dataset')}"))
    more(len(shown.walk.hops), len(res.hops), not res.cut_short, "edge")
    if res.partial:
        out.print(Text(f"partial result: {res.reason}", style="yellow"))
    finish(partial=res.cut_short)


def query_cmd(
    cypher: str = typer.Argument(..., help="A Cypher statement (read-only unless --write)."),
    param: list[str] = typer.Option([], "--param", "-p", help="name=value (value parsed as JSON when it is JSON)."),
    write: bool = typer.Option(False, "--write", help="Allow writes."),
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Run a Cypher statement (e.g. one of the named queries in fieldgraph/cypher)."""
    params = parse_pairs(param, "--param", typed=True)
    with open_graph(graph, graph_name) as g:
        rows = g.query(cypher, params, write=write)
    if as_json:
        dump(rows)
        return
    t = Table(title=plural(len(rows), 'row'))
    cols = list(rows[0]) if rows else []
    for c in cols:
        t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*(Text(v if isinstance(v, str) else json.dumps(v, default=str)) for v in r.values()))
    out.print(t)


def stats_cmd(
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Counts: datasets, fields, HasField and DataDerivedFrom edges, placeholders, ambiguous references."""
    with open_graph(graph, graph_name) as g:
        stats = g.stats()
        where = g.store.describe()
    if as_json:
        dump(stats)
        return
    out.print(count_table(where, stats.to_json().items()))


# ---- the embedded server ----


def _server(graph: str | None) -> Any:
    """The embedded server of ``--graph`` (``embedded[:PATH]``; else $FIELDGRAPH_GRAPH, $FIELDGRAPH_DATA)."""
    from fieldgraph.errors import GraphURIError
    from fieldgraph.graph import embedded_server
    from fieldgraph.ingest.config import GraphConfig

    cfg = GraphConfig.from_env(uri=graph)
    try:
        return embedded_server(cfg.uri, cfg.data_dir)
    except GraphURIError as exc:
        raise GraphURIError(f"--graph: {exc}: the server commands manage the embedded graph only") from exc


@server_app.command("start")
def server_start(graph: GraphUri = None) -> None:
    """Start the embedded FalkorDB and leave it running (until server stop), so commands reuse it."""
    s = _server(graph)
    s.start()
    s.pin()
    out.print(Text(f"{'started' if s.started_here else 'already running'}: {s.socket}"))
    s.stop()  # pinned: it keeps running


@server_app.command("stop")
def server_stop(graph: GraphUri = None) -> None:
    """Stop the embedded FalkorDB, whatever uses it (its data is kept in the AOF)."""
    s = _server(graph)
    if not s.running():
        out.print("not running")
        return
    s.stop(force=True)
    out.print("stopped")


@server_app.command("status")
def server_status(graph: GraphUri = None) -> None:
    """Whether the embedded FalkorDB is running (exit 0) or not (exit 5)."""
    s = _server(graph)
    running = s.running()
    out.print(Text(f"{'running' if running else 'not running'}: {s.socket}"))
    if not running:
        raise typer.Exit(EXIT_UNAVAILABLE)


@server_app.command("check")
def server_check(graph: GraphUri = None) -> None:
    """Check the embedded graph's append-only file (the server stopped): OK (exit 0), or what is damaged (exit 1)."""
    s = _server(graph)
    problems = s.check()
    if not problems:
        out.print(Text(f"OK: {s.data_dir}"))
        return
    out.print(Text(f"damaged: {s.data_dir}"))
    for problem in problems:
        out.print(Text(f"  {problem}"))
    out.print(Text("fieldgraph server repair keeps what can be kept (backing the files up first)"))
    raise typer.Exit(EXIT_FAILED)


@server_app.command("repair")
def server_repair(graph: GraphUri = None) -> None:
    """Repair a damaged append-only file (the server stopped): back it up, then keep every complete write before
    the damage; says what was kept and lost, or why nothing can be recovered safely (exit 1)."""
    for line in _server(graph).repair():
        out.print(Text(line))
