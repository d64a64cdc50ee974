"""Commands for lineage sources and metadata: tag, tags, tagged, lineage-summary (CDAP's field lineage API)."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from fieldgraph.errors import InputError
from fieldgraph.ingest.cli.boundary import finish, value_errors_are_bad_input
from fieldgraph.ingest.cli.graph import first_page, more
from fieldgraph.ingest.cli.options import (
    DEFAULT_TIME_BUDGET,
    AsJson,
    AsOf,
    GraphName,
    GraphUri,
    Limit,
    TimeBudget,
    open_graph,
)
from fieldgraph.ingest.cli.render import Name, ds, dump, out, plural, short
from fieldgraph.ingest.pages import head, walk_exact
from fieldgraph.ingest.times import parse_time

IndirectOpt = typer.Option(False, "--indirect", help="Let tags flow along INDIRECT edges too (filter, join, ...).")


def tag_cmd(
    field: str = typer.Argument(..., help="Field URN."),
    tags: list[str] = typer.Argument(..., help="Tags (PII or urn:li:tag:PII) or glossary terms "
                                     "(urn:li:glossaryTerm:X)."),
    remove: bool = typer.Option(False, "--remove", help="Remove these tags instead of adding them (whether they "
                                "propagate or not)."),
    no_propagate: bool = typer.Option(False, "--no-propagate", help="Keep these tags on this field only: its own, "
                                      "never inherited downstream."),
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Set tags or glossary terms on a field by hand (they propagate downstream like the schema's own, unless
    --no-propagate)."""
    with open_graph(graph, graph_name) as g, value_errors_are_bad_input():
        now = g.tag(field, add=() if remove else tags, remove=tags if remove else (), propagate=not no_propagate)
    shown = [f"{t} (not propagated)" if t in now.local else t for t in now]
    out.print(Text(f"{short(field)}: {', '.join(shown) or '(no hand-set tags)'}"))


def tags_cmd(
    field: str = typer.Argument(..., help="Field URN."),
    indirect: bool = IndirectOpt,
    budget: TimeBudget = DEFAULT_TIME_BUDGET,
    as_of: AsOf = None,
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """A field's own tags and terms, and those it inherits, with the upstream field each comes from (as far up as
    lineage goes)."""
    when = parse_time(as_of, "--as-of")
    with open_graph(graph, graph_name) as g:
        res = g.tags(field, indirect=indirect, time_budget_s=budget, as_of=when)
    if as_json:
        dump(res)
        finish(partial=res.partial)
        return
    t = Table(title=f"tags of {short(res.field)}")
    for col in ("tag", "from", "distance"):
        t.add_column(col, overflow="fold")
    for label in res.own:
        t.add_row(Text(label), "(own, not propagated)" if label in res.local else "(own)", "0")
    for i in res.inherited:
        t.add_row(Text(i.label), Name(short(i.from_urn)), str(i.distance))
    out.print(t)
    if res.partial:
        out.print(Text(f"partial result: {res.reason}", style="yellow"))
    finish(partial=res.partial)


def tagged_cmd(
    tag: str = typer.Argument(..., help="Tag (PII) or glossary term URN."),
    indirect: bool = IndirectOpt,
    budget: TimeBudget = DEFAULT_TIME_BUDGET,
    as_of: AsOf = None,
    as_json: AsJson = False,
    limit: Limit = None,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Every field that carries a tag or term, its own or inherited (e.g. where PII flows), as far down as
    lineage goes. --json: {"label", "fields": [...], "partial", "reason"}."""
    when = parse_time(as_of, "--as-of")
    with open_graph(graph, graph_name) as g, value_errors_are_bad_input():
        res = g.tagged(tag, indirect=indirect, time_budget_s=budget, as_of=when)
    exact = walk_exact(res.partial, res.reason, None)
    if as_json:
        if limit is None:
            dump(res)
        else:
            first_page("tagged", {"label": tag, "indirect": indirect, "budget": budget, "as_of": as_of}, res, exact,
                       limit, when)
        finish(partial=res.partial)
        return
    from fieldgraph.graph.answers import Carrier

    rows = res.fields if limit is None else head("tagged", res.fields, limit, Carrier.to_json)
    t = Table(title=f"{plural(len(rows), 'field')} {'carries' if len(rows) == 1 else 'carry'} {tag}")
    for col in ("dataset", "field", "from", "distance"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(Name(ds(r.dataset)), Text(r.field_path or r.urn),
                  Text("(own)" if r.own else "\n".join(short(u) for u in r.sources)), str(r.distance))
    out.print(t)
    more(len(rows), len(res.fields), exact, "field")
    if res.partial:
        out.print(Text(f"partial result: {res.reason}", style="yellow"))
    finish(partial=res.partial)


def lineage_summary_cmd(
    field: str = typer.Argument(..., help="Field URN."),
    direction: str = typer.Option("incoming", "--direction", help="incoming (where it comes from) or outgoing."),
    start: str | None = typer.Option(None, "--start", help="From this time (ms or ISO 8601); default: open."),
    end: str | None = typer.Option(None, "--end", help="Until this time (ms or ISO 8601); default: open."),
    depth: int = typer.Option(1, "--depth", "-d", min=1, help="Hops (default 1: the neighbouring datasets)."),
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """A field's lineage within a time range, like CDAP's field lineage API: summary and operations."""
    if direction not in ("incoming", "outgoing"):
        raise InputError(f"--direction {direction!r}: expected incoming or outgoing")
    s, e = parse_time(start, "--start"), parse_time(end, "--end")
    with open_graph(graph, graph_name) as g, value_errors_are_bad_input():
        res = g.field_lineage(field, direction, s, e, depth)
    if as_json:
        dump(res)
        return
    t = Table(title=f"{direction} lineage of {short(res.field)}")
    t.add_column("dataset", overflow="fold")
    t.add_column("fields", overflow="fold")
    for row in res.summary:
        t.add_row(Name(ds(row.dataset)), Text(", ".join(row.fields)))
    out.print(t)
    ops = Table(title="operations")
    for col in ("program or query", "latest run", "operations", "transformation"):
        ops.add_column(col, overflow="fold")
    for op in res.operations:
        chain = " > ".join(f"{o['name']} ({o['description']})" if o["description"] else o["name"]
                           for o in op["operations"])
        ops.add_row(Text("\n".join(str(p["program"] or "") for p in op["programs"])),
                    Text("\n".join(str(p["run"] or "") for p in op["programs"])), Text(chain),
                    Text(str(op.get("transformation") or "")))
    out.print(ops)
    for d in res.dropped:
        out.print(Text(f"dropped by {d}", style="yellow"))
