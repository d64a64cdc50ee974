"""``fieldgraph rename``: a rename stated by hand, of a field or (``--dataset``) of a dataset."""

from __future__ import annotations

import typer
from rich.text import Text

from fieldgraph.ingest.cli.boundary import finish
from fieldgraph.ingest.cli.options import TIME_FORMS, AsJson, GraphName, GraphUri, open_graph, user_or, write_refusing
from fieldgraph.ingest.cli.render import ds, dump, out, short
from fieldgraph.ingest.times import parse_time_or_now


def rename_cmd(
    old: str = typer.Argument(..., help="The field's URN before the rename (with --dataset: the dataset's)."),
    new: str = typer.Argument(..., help="The field's URN after it, in the same dataset (with --dataset: the new "
                              "dataset's URN)."),
    dataset: bool = typer.Option(False, "--dataset", help="Rename a dataset: every field of OLD is the field of the "
                                 "same path in NEW."),
    at: str = typer.Option(None, "--at", help=f"When it was renamed ({TIME_FORMS}); default: now."),
    by: str = typer.Option(None, "--by", help="Who renamed it; default: your user name."),
    note: str = typer.Option(None, "--note", help="Why (kept with the rename, shown on the hop across it)."),
    as_json: AsJson = False,
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Record that a field (or, with --dataset, a dataset) was renamed: the graph keeps both names and a rename edge
    between them, so lineage upstream of the new name reaches what fed the old one, and downstream of the old name
    reaches the readers of the new one. Fields no schema lists yet become placeholders. --json: the rename written."""
    from fieldgraph.ingest.sources.renames import dataset_rename, field_rename, rename_json

    when, who = parse_time_or_now(at), user_or(by)
    if dataset:
        change = dataset_rename(old, new, ts=when, source="cli", by=who, note=note, origin="fieldgraph rename",
                                names=("OLD", "NEW"))
    else:
        change = field_rename(old, new, ts=when, source="cli", by=who, note=note, origin="fieldgraph rename",
                              names=("OLD", "NEW"), hint="; rename a dataset with --dataset")
    with open_graph(graph, graph_name, create=True) as g:
        write_refusing(g, [change])
    if as_json:
        dump(rename_json(change))
    else:
        olds, news = (ds(change.from_dataset), ds(change.dataset)) if change.from_dataset else \
            (short(change.renames[0][0]), short(change.renames[0][1]))
        out.print(Text(f"renamed {olds} -> {news}"))
    finish()

