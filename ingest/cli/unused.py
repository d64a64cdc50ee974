"""``fieldgraph unused``: the fields nobody reads (no lineage edge into them holds), now or as of an instant."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import typer
from rich.table import Table
from rich.text import Text

from fieldgraph.ingest.cli.graph import first_page, more
from fieldgraph.ingest.cli.options import AsJson, AsOf, GraphName, GraphUri, Limit, open_graph
from fieldgraph.ingest.cli.render import Name, ds, dump, out, plural
from fieldgraph.ingest.times import parse_time


def _iso(ms: int) -> str:
    """``ms`` (since the epoch) in ISO 8601, UTC, to the second unless it has milliseconds: 2025-02-01T00:00:00Z."""
    at = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return at.isoformat(timespec="milliseconds" if ms % 1000 else "seconds").replace("+00:00", "Z")


def unused_cmd(
    dataset: str | None = typer.Argument(None, help="Only this dataset's fields (a dataset URN); default: every "
                                         "dataset's."),
    platform: str | None = typer.Option(None, "--platform", help="Only the fields of this platform's datasets (hive "
                                        "or urn:li:dataPlatform:hive)."),
    as_of: AsOf = None,
    limit: Limit = None,
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """The fields nobody reads: listed by their dataset's schema, with no lineage edge into them (nor into their
    whole dataset) that holds now, or held at --as-of; with when each was last read (the end of the latest edge
    into it), or never. Placeholders are not fields of a schema and are never listed; a removed field is not a
    column any more (listed only as of an instant when it was)."""
    when = parse_time(as_of, "--as-of")
    with open_graph(graph, graph_name) as g:
        found = g.unused(dataset, platform=platform, as_of=when)
    if as_json:
        if limit is None:
            dump(found)
        else:
            query = {"dataset": dataset, "platform": platform, "as_of": as_of}
            first_page("unused", query, found, True, limit, when)
        return
    shown = found.fields if limit is None else found.fields[:limit]
    where = ds(found.dataset) if found.dataset else f"platform {found.platform}" if found.platform else "the graph"
    at = f" as of {_iso(when)}" if when is not None else ""
    title = f"{plural(len(found.fields), 'unused field')} in {where}{at}"
    t = Table(title=title, min_width=len(title) + 2)  # the title on one line
    several = found.dataset is None
    for col in (("dataset",) if several else ()) + ("field", "type"):
        t.add_column(col, overflow="fold")
    t.add_column("last read", no_wrap=True)
    simple = Counter((f.dataset, f.simple_path) for f in found.fields)
    for f in shown:
        name = f.simple_path if f.simple_path and simple[f.dataset, f.simple_path] == 1 else f.field_path
        cells: list[Name | Text] = [Name(name), Text(f.native_data_type or f.type or ""),
                             Text("never" if f.last_read is None else _iso(f.last_read))]
        t.add_row(*([Name(ds(f.dataset))] if several else []), *cells)
    out.print(t)
    more(len(shown), len(found.fields), True, "field")
