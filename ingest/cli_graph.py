"""Graph commands of the fieldgraph CLI (ingest, lineage, impact, query, stats, server)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from fieldgraph.ingest.cli import app, err, fail, out
from fieldgraph.normalizers import FieldgraphError, v1_path

GRAPH_HELP = ("Graph URI: embedded[:PATH] (default, data folder .fieldgraph/), falkordb://host:port[/graph], "
              "bolt://host:7687 or neo4j://host:7687. Default: $FIELDGRAPH_GRAPH.")
GraphOpt = typer.Option(None, "--graph", "-g", help=GRAPH_HELP, envvar="FIELDGRAPH_GRAPH", show_envvar=False)
NameOpt = typer.Option(None, "--graph-name", help="Graph (FalkorDB) to use; default fieldgraph.")

lineage_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Field lineage: upstream or downstream of a field.")
app.add_typer(lineage_app, name="lineage")
server_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                        help="The embedded FalkorDB server (keep one running between commands).")
app.add_typer(server_app, name="server")


@contextmanager
def _graph(uri: str | None, name: str | None = None) -> Iterator[Any]:
    from fieldgraph.ingest.config import GraphConfig

    try:
        g = GraphConfig.from_env(uri=uri, name=name).open()
    except FieldgraphError as exc:
        raise fail(str(exc)) from None
    try:
        yield g
    except FieldgraphError as exc:
        raise fail(str(exc)) from None
    finally:
        g.close()


def _dump(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


# ---- ingest ----


@app.command("ingest")
def ingest_cmd(
    paths: list[Path] = typer.Argument(..., help="Event files or folders (.json, .jsonl, .ndjson): JSON, JSON Lines "
                                       "or JSON arrays of MCP, MCL, MCE or MAE events."),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
    rejects: Path = typer.Option(Path(".fieldgraph/rejects.jsonl"), "--rejects",
                                 help="Where bad events go (JSON Lines with file, line, error, event)."),
    batch: int = typer.Option(1000, "--batch", min=1, help="Events per graph write batch."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Ingest change events into the lineage graph. Bad events are reported and skipped, never fatal."""
    from fieldgraph.ingest.replay import decode, event_files, read_events, write_rejects

    try:
        files = event_files(paths)
    except FileNotFoundError as exc:
        raise fail(str(exc)) from None
    changes = []
    bad = []
    events = 0
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as progress:
        reading = progress.add_task("reading files", total=len(files))
        for f in files:
            for raw in read_events(f):
                events += 1
                cs, rej = decode(raw)
                changes.extend(cs)
                if rej:
                    bad.append(rej)
                    progress.console.print(Text(f"rejected {rej.file}:{rej.line}: {rej.error}", style="yellow"),
                                           soft_wrap=True)
            progress.advance(reading)
    with _graph(graph, graph_name) as g:
        with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as progress:
            task = progress.add_task("writing the graph", total=len(changes))
            report = g.ingest(changes, batch_events=batch, progress=lambda n: progress.advance(task, n))
        stats = g.stats()
    if bad:
        write_rejects(rejects, bad)
    c = report.counts
    summary = {
        "files": len(files), "events": events, "rejected": len(bad), "aspectChanges": len(changes),
        "schemas": c["schemas"], "schemaDeletes": c["schema_deletes"], "lineages": c["lineages"],
        "lineageDeletes": c["lineage_deletes"], "superseded": c["superseded"], "fieldsWritten": c["fields"],
        "fieldsRemoved": c["fields_removed"], "edgesWritten": c["edges"], "placeholdersCreated": c["placeholders"],
        "placeholdersResolved": c["placeholders_resolved"],
        "ambiguousReferences": [
            {"dataset": d, "reference": r, "candidates": list(cs)}
            for d, r, cs in dict.fromkeys((d, r, tuple(cs)) for d, r, cs in report.ambiguous)
        ],
        "rejectsFile": str(rejects) if bad else None, "graph": stats,
    }
    if as_json:
        _dump(summary)
    else:
        t = Table(title=f"ingested {len(files)} files, {events} events", show_header=False)
        t.add_column("what")
        t.add_column("count", justify="right")
        for k, v in summary.items():
            if k in ("ambiguousReferences", "graph", "rejectsFile"):
                continue
            t.add_row(k, str(v))
        for k, v in stats.items():
            t.add_row(f"graph {k}", str(v))
        out.print(t)
        for a in summary["ambiguousReferences"]:
            out.print(Text(f"ambiguous: {_ds(a['dataset'])} {a['reference']!r} matches {', '.join(a['candidates'])}",
                           style="yellow"), soft_wrap=True)
        if bad:
            out.print(Text(f"{len(bad)} bad events written to {rejects}", style="yellow"))


# ---- lineage ----


def _hop_table(res: Any, title: str) -> Table:
    t = Table(title=title)
    for col in ("depth", "dataset", "field", "from", "transformation", "confidence", "status"):
        t.add_column(col, overflow="fold")
    for h in res.hops:
        status = ",".join(s for s, on in (("placeholder", h.placeholder), ("removed", h.removed),
                                           ("ambiguous", h.ambiguous)) if on)
        t.add_row(str(h.depth), Text(_ds(h.datasetUrn or h.urn)), Text(_simple(h.fieldPath) or "(dataset)"),
                  Text(_short(h.from_urn)), Text(str(h.edge.get("transformation") or "").rsplit(".", 1)[-1]),
                  str(h.edge.get("confidenceScore", "")), status)
    return t


def _simple(path: str | None) -> str | None:
    """A v2 path shown as its v1 form (``items.price``); --json keeps the full path."""
    return (v1_path(path) or path) if path else path


def _ds(urn: str | None) -> str:
    """``platform:name`` for a dataset URN (tables stay readable; --json has the full URNs)."""
    from fieldgraph.normalizers.urns import DatasetUrn

    try:
        d = DatasetUrn.parse(urn or "")
        return f"{d.platform}:{d.name}" + ("" if d.env == "PROD" else f" ({d.env})")
    except FieldgraphError:
        return urn or ""


def _short(urn: str) -> str:
    from fieldgraph.normalizers import FieldUrn, v1_path

    try:
        f = FieldUrn.parse(urn)
        return f"{f.dataset.name}.{v1_path(f.field_path)}"
    except FieldgraphError:
        return urn


def _lineage(direction: str, field: str, depth: int | None, budget: float, as_json: bool, graph: str | None,
             graph_name: str | None) -> None:
    with _graph(graph, graph_name) as g:
        res = getattr(g, direction)(field, depth, time_budget_s=budget)
    if as_json:
        _dump(res.to_json())
        return
    out.print(_hop_table(res, f"{direction} of {_short(res.start)}: {len(res.hops)} edges"))
    if res.partial:
        out.print(Text(f"partial result: {res.reason}", style="yellow"))


@lineage_app.command("upstream")
def upstream_cmd(
    field: str = typer.Argument(..., help="Field URN (datasetField or schemaField; v2, v1 or /slash path)."),
    depth: int | None = typer.Option(None, "--depth", "-d", min=1,
                                        help="Hops to follow (default: up to the cap of 50)."),
    budget: float = typer.Option(10.0, "--time-budget", help="Seconds before the walk stops with a partial result."),
    as_json: bool = typer.Option(False, "--json"),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
) -> None:
    """The fields a field derives from, with paths and edge properties."""
    _lineage("upstream", field, depth, budget, as_json, graph, graph_name)


@lineage_app.command("downstream")
def downstream_cmd(
    field: str = typer.Argument(..., help="Field URN (datasetField or schemaField; v2, v1 or /slash path)."),
    depth: int | None = typer.Option(None, "--depth", "-d", min=1,
                                        help="Hops to follow (default: up to the cap of 50)."),
    budget: float = typer.Option(10.0, "--time-budget", help="Seconds before the walk stops with a partial result."),
    as_json: bool = typer.Option(False, "--json"),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
) -> None:
    """The fields derived from a field."""
    _lineage("downstream", field, depth, budget, as_json, graph, graph_name)


@lineage_app.command("path")
def path_cmd(
    source: str = typer.Argument(..., help="One field URN."),
    target: str = typer.Argument(..., help="The other field URN."),
    depth: int | None = typer.Option(None, "--depth", "-d", min=1),
    as_json: bool = typer.Option(False, "--json"),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
) -> None:
    """A shortest lineage path between two fields (either direction)."""
    with _graph(graph, graph_name) as g:
        path, res = g.path(source, target, depth)
    if as_json:
        _dump({"path": path, "partial": res.partial, "reason": res.reason})
        return
    if not path:
        out.print("no lineage path" + (f" (partial: {res.reason})" if res.partial else ""))
        raise typer.Exit(1)
    for i, urn in enumerate(path):
        out.print(Text(("  " * i) + ("└─ " if i else "") + _short(urn)))


@lineage_app.command("datasets")
def datasets_cmd(
    dataset: str | None = typer.Argument(None, help="Only edges touching this dataset URN."),
    as_json: bool = typer.Option(False, "--json"),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
) -> None:
    """Dataset-level lineage rolled up from field edges."""
    with _graph(graph, graph_name) as g:
        rows = g.dataset_lineage(dataset)
    if as_json:
        _dump(rows)
        return
    t = Table(title="dataset lineage")
    for col in ("downstream", "upstream", "field edges", "transformations"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(Text(_ds(r["downstream"])), Text(_ds(r["upstream"])), str(r["fieldEdges"]),
                  Text(", ".join(str(x).rsplit(".", 1)[-1] for x in r["transformations"] if x)))
    out.print(t)


@lineage_app.command("unresolved")
def unresolved_cmd(
    only_ambiguous: bool = typer.Option(False, "--ambiguous", help="Only ambiguous references."),
    as_json: bool = typer.Option(False, "--json"),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
) -> None:
    """Field references not resolved to a schema field (placeholders), ambiguous ones with their candidates."""
    with _graph(graph, graph_name) as g:
        rows = g.ambiguous() if only_ambiguous else g.unresolved()
    if as_json:
        _dump(rows)
        return
    t = Table(title=f"{len(rows)} unresolved references")
    for col in ("dataset", "reference", "edges", "candidates"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(Text(_ds(r["dataset"])), Text(r["reference"] or ""), str(r["edges"]),
                  Text("\n".join(r.get("candidates") or []) or ("" if not r.get("ambiguous", True) else "?")))
    out.print(t)


# ---- impact, query, stats ----


@app.command("impact")
def impact_cmd(
    name: str = typer.Argument(..., help="A field URN or a dataset URN."),
    depth: int | None = typer.Option(None, "--depth", "-d", min=1),
    budget: float = typer.Option(10.0, "--time-budget"),
    as_json: bool = typer.Option(False, "--json"),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
) -> None:
    """Impact analysis: the downstream datasets and fields of a field or dataset."""
    with _graph(graph, graph_name) as g:
        res, by_ds = g.impact(name, depth, time_budget_s=budget)
    if as_json:
        _dump({"start": res.start, "partial": res.partial, "reason": res.reason, "datasets": by_ds,
               "hops": [h.to_json() for h in res.hops]})
        return
    t = Table(title=f"impact of {_short(res.start)}: {len(by_ds)} datasets")
    t.add_column("dataset", overflow="fold")
    t.add_column("fields", overflow="fold")
    for ds, fields in by_ds.items():
        t.add_row(Text(_ds(ds)), Text("\n".join(fields)))
    out.print(t)
    if res.partial:
        out.print(Text(f"partial result: {res.reason}", style="yellow"))


def _param(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise fail(f"parameter {text!r}: expected name=value")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


@app.command("query")
def query_cmd(
    cypher: str = typer.Argument(..., help="A Cypher statement (read-only unless --write)."),
    param: list[str] = typer.Option([], "--param", "-p", help="name=value (value parsed as JSON when it is JSON)."),
    write: bool = typer.Option(False, "--write", help="Allow writes."),
    as_json: bool = typer.Option(False, "--json"),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
) -> None:
    """Run a Cypher statement (e.g. one of the named queries in fieldgraph/cypher)."""
    params = dict(_param(p) for p in param)
    with _graph(graph, graph_name) as g:
        rows = g.query(cypher, params, write=write)
    if as_json:
        _dump(rows)
        return
    t = Table(title=f"{len(rows)} rows")
    cols = list(rows[0]) if rows else []
    for c in cols:
        t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*(Text(v if isinstance(v, str) else json.dumps(v, default=str)) for v in r.values()))
    out.print(t)


@app.command("stats")
def stats_cmd(
    as_json: bool = typer.Option(False, "--json"),
    graph: str | None = GraphOpt,
    graph_name: str | None = NameOpt,
) -> None:
    """Counts: datasets, fields, HasField and DataDerivedFrom edges, placeholders, ambiguous references."""
    with _graph(graph, graph_name) as g:
        stats = g.stats()
        where = g.store.describe()
    if as_json:
        _dump(stats)
        return
    t = Table(title=where, show_header=False)
    t.add_column("what")
    t.add_column("count", justify="right")
    for k, v in stats.items():
        t.add_row(k, str(v))
    out.print(t)


# ---- the embedded server ----


def _server(data: Path | None) -> Any:
    from fieldgraph.graph import EmbeddedServer

    return EmbeddedServer(data)


DataOpt = typer.Option(None, "--data", envvar="FIELDGRAPH_DATA", show_envvar=False,
                       help="Data folder (default .fieldgraph/ or $FIELDGRAPH_DATA).")


@server_app.command("start")
def server_start(data: Path | None = DataOpt) -> None:
    """Start the embedded FalkorDB and leave it running, so commands reuse it."""
    s = _server(data)
    try:
        s.start()
    except FieldgraphError as exc:
        raise fail(str(exc)) from None
    out.print(Text(f"{'started' if s.started_here else 'already running'}: {s.socket}"))
    s.process = None  # leave it running


@server_app.command("stop")
def server_stop(data: Path | None = DataOpt) -> None:
    """Stop the embedded FalkorDB (its data is kept in the AOF)."""
    s = _server(data)
    if not s.running():
        out.print("not running")
        return
    s.stop(force=True)
    out.print("stopped")


@server_app.command("status")
def server_status(data: Path | None = DataOpt) -> None:
    """Whether the embedded FalkorDB is running."""
    s = _server(data)
    out.print(Text(f"{'running' if s.running() else 'not running'}: {s.socket}"))
