"""``fieldgraph edge add|remove``: lineage drawn by hand, which no ingestion ends (only ``edge remove`` does)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import typer
from rich.text import Text

from fieldgraph.errors import NotFoundError
from fieldgraph.ingest.cli.boundary import finish
from fieldgraph.ingest.cli.options import TIME_FORMS, AsJson, GraphName, GraphUri, open_graph, user_or, write_refusing
from fieldgraph.ingest.cli.render import dump, out, short
from fieldgraph.ingest.times import parse_time_or_now

if TYPE_CHECKING:
    from fieldgraph.changes import ManualEdgeChange
    from fieldgraph.graph.answers import DrawnEdge

edge_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                       help="Lineage drawn by hand: no ingestion, aspect or delete ends it, only edge remove.")

Downstream = typer.Argument(..., help="The field that derives (a field URN: datasetField or schemaField; v2, v1 or "
                            "/slash path).")
Upstream = typer.Argument(..., help="The field it derives from (a field URN).")
By = typer.Option(None, "--by", help="Who draws or removes it (default: the user running the command).")
At = typer.Option(None, "--at", help=f"When ({TIME_FORMS}); default: now.")


@edge_app.command("add")
def add_cmd(
    downstream: str = Downstream,
    upstream: str = Upstream,
    transformation: str = typer.Option(None, "--transformation", help="The operation, as DataHub's "
                                       "transformOperation (SUM: an aggregation; HASH masks, which stops tags)."),
    note: str = typer.Option(None, "--note", help="Why the edge is there."),
    by: str = By,
    at: str = At,
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Draw a lineage edge by hand: DOWNSTREAM derives from UPSTREAM, from --at on, until edge remove. A field not in
    the graph yet is a placeholder, as in any lineage. Drawing an edge that holds changes nothing."""
    from fieldgraph.changes import ManualEdgeChange

    change = ManualEdgeChange.of(downstream, upstream, transformation=transformation, note=note, by=user_or(by),
                                 ts=parse_time_or_now(at), origin="fieldgraph edge add")
    with open_graph(graph, graph_name, create=True) as g:
        write_refusing(g, [change])
        held = g.drawn_edge(downstream, upstream)
    _show(change, held, as_json=as_json)
    finish()


@edge_app.command("remove")
def remove_cmd(
    downstream: str = Downstream,
    upstream: str = Upstream,
    by: str = By,
    at: str = At,
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Remove a lineage edge drawn by hand: it stops holding at --at and is kept as a past edge (lineage questions
    --as-of an earlier time still find it). Exit 4 when no edge drawn by hand holds between the two fields."""
    from fieldgraph.changes import ManualEdgeChange

    change = ManualEdgeChange.of(downstream, upstream, by=user_or(by), ts=parse_time_or_now(at), remove=True,
                                 origin="fieldgraph edge remove")
    with open_graph(graph, graph_name) as g:
        if not g.drawn_edge(downstream, upstream).holds:
            raise NotFoundError(f"no edge drawn by hand holds from {short(upstream)} into {short(downstream)}")
        write_refusing(g, [change])
        held = g.drawn_edge(downstream, upstream)
    _show(change, held, as_json=as_json)
    finish()


def _show(change: ManualEdgeChange, held: DrawnEdge, *, as_json: bool = False) -> None:
    """What holds now between the two fields (``--json``: :class:`DrawnEdge`'s JSON): the edge and since when, or
    that none does."""
    if as_json:
        dump(held)
        return
    pair = f"{short(held.downstream)} <- {short(held.upstream)}"
    if held.hop is None:
        out.print(Text(f"removed {pair} at {_iso(change.ts)}" if change.remove else
                       f"not drawn: {pair} was removed after {_iso(change.ts)}"))
        return
    edge = held.hop.edge
    since = edge.get("validFrom")
    if change.remove:
        words = f"still holds {pair}: drawn at {_iso(since)}, after --at"
    elif since == change.ts:
        words = f"drew {pair}"
    else:
        words = f"holds already {pair}: drawn at {_iso(since)}"
    extra = [f"by {edge['by']}" if edge.get("by") else "", f"({edge['note']})" if edge.get("note") else ""]
    out.print(Text(" ".join(w for w in (words, *extra) if w)))


def _iso(ms: Any) -> str:
    if not isinstance(ms, int):
        return str(ms)
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
