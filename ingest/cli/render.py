"""What the commands print: the two consoles, short names for URNs, JSON, and the tables several commands share."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from fieldgraph.errors import FieldgraphError

#: results (tables) on stdout; progress, warnings and errors on stderr
out = Console()
err = Console(stderr=True)


def print_error(message: str) -> None:
    """The one-line ``error: ...`` on stderr."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def dump(obj: Any) -> None:
    """``obj`` as indented JSON on stdout (what ``--json`` prints)."""
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def ds(urn: str | None) -> str:
    """``platform:name`` for a dataset URN (tables stay readable; --json has the full URNs)."""
    from fieldgraph.normalizers.urns import DatasetUrn

    try:
        d = DatasetUrn.parse(urn or "")
        return f"{d.platform}:{d.name}" + ("" if d.env == "PROD" else f" ({d.env})")
    except FieldgraphError:
        return urn or ""


def short(urn: str) -> str:
    """``dataset.field`` (v1 path) for a field URN; anything else as it is."""
    from fieldgraph.normalizers import FieldUrn, v1_path

    try:
        f = FieldUrn.parse(urn)
        return f"{f.dataset.name}.{v1_path(f.field_path)}"
    except FieldgraphError:
        return urn


def simple(path: str | None) -> str | None:
    """A v2 path shown as its v1 form (``items.price``); --json keeps the full path."""
    from fieldgraph.normalizers import v1_path

    return (v1_path(path) or path) if path else path


def hop_table(res: Any, title: str) -> Table:
    """The hops of a lineage walk (``LineageResult``), one row per edge."""
    t = Table(title=title)
    for col in ("depth", "dataset", "field", "from", "transformation", "confidence", "status"):
        t.add_column(col, overflow="fold")
    for h in res.hops:
        status = ",".join(s for s, on in (("placeholder", h.placeholder), ("removed", h.removed),
                                           ("ambiguous", h.ambiguous)) if on)
        t.add_row(str(h.depth), Text(ds(h.datasetUrn or h.urn)), Text(simple(h.fieldPath) or "(dataset)"),
                  Text(short(h.from_urn)), Text(str(h.edge.get("transformation") or "").rsplit(".", 1)[-1]),
                  str(h.edge.get("confidenceScore", "")), status)
    return t


def count_table(title: str | None, rows: Iterable[tuple[str, Any]]) -> Table:
    """A two-column ``what / count`` table without a header (summaries, graph counts)."""
    t = Table(title=title, show_header=False)
    t.add_column("what")
    t.add_column("count", justify="right")
    for k, v in rows:
        t.add_row(k, str(v))
    return t


def progress(unit: str | None = None) -> Progress:
    """A transient progress display on stderr, shown only on a terminal (``unit`` after the counts)."""
    columns: list[ProgressColumn] = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
    if unit:
        columns.append(TextColumn(unit))
    columns.append(TimeElapsedColumn())
    return Progress(*columns, console=err, transient=True, disable=not err.is_terminal)
