"""What the commands print: the two consoles, short names for URNs, JSON, and the tables several commands share."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from fieldgraph.errors import FieldgraphError
from fieldgraph.ingest.secrets import redact

if TYPE_CHECKING:
    from fieldgraph.graph.answers import Hop, Impact, LineageResult

#: results (tables) on stdout; progress, warnings and errors on stderr
out = Console()
err = Console(stderr=True)


def print_error(message: str) -> None:
    """The one-line ``error: ...`` on stderr, credentials masked."""
    err.print(f"[bold red]error:[/] {escape(redact(message))}", highlight=False, soft_wrap=True)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 file``, ``2 files`` (``many``: an irregular plural)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def dump(obj: Any) -> None:
    """``obj`` as indented JSON on stdout (what ``--json`` prints): an answer of the graph in its one JSON form
    (:func:`fieldgraph.graph.answers.encode`, as the HTTP API sends it)."""
    from fieldgraph.graph.answers import encode

    sys.stdout.write(json.dumps(encode(obj), indent=2, default=str) + "\n")


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


#: a name's parts, each with the separators after it (where a name may wrap)
_PARTS = re.compile(r"[^./:,]+[./:,]*|[./:,]+")


def wrap(name: str, width: int) -> list[str]:
    """``name`` in lines of at most ``width`` characters, broken after a ``.``, ``/``, ``:`` or ``,`` (a part
    longer than a line is folded)."""
    lines: list[str] = []
    line = ""
    for part in _PARTS.findall(name):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        while len(line) + len(part) > width:
            cut = width - len(line)
            lines.append(line + part[:cut])
            line, part = "", part[cut:]
        line += part
    return [*lines, line] if line or not lines else lines


class Name:
    """A table cell holding a URN, field path or dotted name: it wraps between its parts (after ``.``,
    ``/``, ``:``, ``,``), never inside one, so names stay readable in a narrow terminal."""

    #: a part longer than this may still be folded (rather than making its column this wide)
    LONGEST_PART = 24

    def __init__(self, text: str, style: str = "") -> None:
        self.text, self.style = text, style

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        parts = _PARTS.findall(self.text) or [""]
        longest = min(max(len(p) for p in parts), self.LONGEST_PART)
        return Measurement(longest, max(len(self.text), longest))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n".join(wrap(self.text, max(options.max_width, 1))), style=self.style, no_wrap=True)


def via(edge: Mapping[str, Any]) -> str:
    """An edge in a few words: its transformation, ``indirect``, ``masking``, a confidence below 1."""
    words = [str(edge.get("transformation") or "").rsplit(".", 1)[-1]]
    words += [w for w, on in (("indirect", edge.get("kind") == "INDIRECT"), ("masking", edge.get("masking"))) if on]
    confidence = edge.get("confidenceScore")
    if isinstance(confidence, (int, float)) and confidence < 1:
        words.append(f"{confidence:g}")
    return " ".join(w for w in words if w)


def hop_via(h: Hop, direction: str) -> str:
    """A hop's edges in a few words (:func:`via`), each wording once, ``; `` between, and how many sources stated
    them when several did: ``Identity (2 sources)``; across a rename ``renamed amt -> amount (since
    2025-01-01T00:00:06Z)`` instead, and an edge drawn by hand first, marked ``manual (by ann)``."""
    from fieldgraph.ingest.export import instant, rename_names, renamed_ends

    if h.rename:
        old, new = rename_names(*renamed_ends(h, direction))
        since = instant(h.edge.get("validFrom"))
        return f"renamed {old} -> {new}" + (f" (since {since})" if since else "")
    words = list(dict.fromkeys(via(e) for e in h.stated))
    if h.manual:
        by = f" (by {h.edge['by']})" if h.edge.get("by") else ""
        words.insert(0, " ".join(w for w in (via(h.edge), f"manual{by}") if w))
    n = len(h.sources)
    return ("; ".join(w for w in words if w) + (f" ({n} sources)" if n > 1 else "")).strip()


def hop_table(res: LineageResult, title: str) -> Table:
    """The hops of a lineage walk (``LineageResult``), one row per hop (a pair of fields, however many edges tie
    them): the field reached (platform, dataset and field path), the field it was reached from, and the edges
    (transformation, confidence, how many sources; a rename, an edge drawn by hand: :func:`hop_via`)."""
    t = Table(title=title)
    t.add_column("hop", justify="right")
    t.add_column("field")
    t.add_column("from")
    t.add_column("via")
    for h in res.hops:
        status = [s for s, on in (("placeholder", h.placeholder), ("removed", h.removed),
                                  ("ambiguous", h.ambiguous)) if on]
        reached = f"{ds(h.dataset_urn or h.urn)}.{simple(h.field_path)}" if h.field_path else ds(h.dataset_urn or h.urn)
        t.add_row(str(h.depth), Name(reached), Name(short(h.from_urn)),
                  Text(" ".join([hop_via(h, res.direction), *status])))
    return t


def path_mark(res: LineageResult, frm: str, to: str) -> str:
    """What the hop from ``frm`` to ``to`` along a found path is, when it is a rename or drawn by hand:
    ``  (renamed)``, ``  (manual, by ann)``; any other hop: ``""``."""
    for h in res.hops:
        if h.from_urn == frm and h.urn == to and (h.rename or h.manual):
            return "  (renamed)" if h.rename else f"  ({_drawn(h)})"
    return ""


def _drawn(h: Hop) -> str:
    """``manual, by ann`` (``manual`` when nobody is named): an edge drawn by hand, as a note after a field."""
    return "manual" + (f", by {h.edge['by']}" if h.edge.get("by") else "")


def impact_table(impact: Impact, title: str) -> Table:
    """An impact analysis, one row per dataset with its fields reached; a field reached across a rename or
    along an edge drawn by hand says so after its path (``amount (renamed from amt)``, an old name reached from the
    new one ``amt (renamed to amount)``, ``total (manual, by ann)``)."""
    from fieldgraph.ingest.export import rename_names, renamed_ends

    notes: dict[tuple[str | None, str | None], list[str]] = {}
    for h in impact.walk.hops:
        if h.rename:  # the new name reached from the old one, or (its readers of the old name) the old one
            old, new = renamed_ends(h, impact.walk.direction)
            note = f"renamed to {rename_names(old, new)[1]}" if h.urn == old else \
                f"renamed from {rename_names(old, new)[0]}"
        elif h.manual:
            note = _drawn(h)
        else:
            continue
        said = notes.setdefault((h.dataset_urn, h.field_path), [])
        if note not in said:
            said.append(note)
    t = Table(title=title)
    t.add_column("dataset", overflow="fold")
    t.add_column("fields", overflow="fold")
    for d, fields in impact.datasets.items():
        t.add_row(Name(ds(d)), Text("\n".join(
            f + (f" ({'; '.join(notes[d, f])})" if (d, f) in notes else "") for f in fields)))
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
