"""Lineage and impact results as text other tools read: Graphviz DOT, Mermaid flowcharts and CSV.

Pure functions over the graph layer's results (:class:`fieldgraph.graph.LineageResult` and its hops;
:class:`fieldgraph.graph.Impact`), each returning the whole text; the CLI (``--format``) and the HTTP service
(``?format=``) print or send it as it is.

Graphs (DOT, Mermaid) are drawn in the direction data flows, upstream field -> downstream field, whichever way the
walk went; one cluster (subgraph) per dataset, one node per field, one edge per hop (a pair of fields: several jobs
writing it are one edge, labelled with each transformation once and, in its tooltip, the jobs), labelled with its
transformation (``SUM (AGGREGATION)``; ``indirect``, ``masked``). Fields that are placeholders (a reference no
schema listed) or removed (no longer listed) are drawn dashed / greyed and say so. A hop across a rename is drawn
dotted and labelled ``renamed``; an edge drawn by hand, bold and labelled ``manual: <by>`` (:func:`relation`).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fieldgraph.errors import FieldgraphError
from fieldgraph.normalizers import FieldUrn, v1_path
from fieldgraph.normalizers.urns import DatasetUrn

if TYPE_CHECKING:
    from fieldgraph.graph import Hop, Impact, LineageResult

#: the columns of :func:`lineage_csv`, in order
LINEAGE_COLUMNS = ("depth", "from_urn", "urn", "dataset", "fieldPath", "kind", "subtype", "transformation",
                   "masking", "source", "placeholder", "removed", "relation")
#: the columns of :func:`impact_csv`, in order
IMPACT_COLUMNS = ("dataset", "fieldPath", "urn", "depth")
#: the formats rendered here (the CLI's ``--format``, the service's ``?format=``; besides table and JSON)
FORMATS = ("dot", "mermaid", "csv")
#: the media type of each format
MEDIA_TYPES = {"dot": "text/vnd.graphviz; charset=utf-8", "mermaid": "text/plain; charset=utf-8",
               "csv": "text/csv; charset=utf-8"}


# --- what a hop's edge is: derived, renamed, manual -------------------------------------------------------------

#: :func:`relation`'s answers (the ``relation`` column of :func:`lineage_csv`)
DERIVED, RENAMED, MANUAL = "derived", "renamed", "manual"


def relation(hop: Hop) -> str:
    """What a hop's edge is: ``renamed`` (across a rename: the same field under its name before or after),
    ``manual`` (an edge drawn by hand) or ``derived`` (any other lineage edge)."""
    return RENAMED if hop.rename else MANUAL if hop.manual else DERIVED


def instant(ms: Any) -> str:
    """An edge's time (epoch milliseconds) in UTC to the second, ``2025-01-01T00:00:06Z``; not a number: ``""``."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        return ""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def renamed_ends(hop: Hop, direction: str) -> tuple[str, str]:
    """The old and the new URN of a hop across a rename: as its edge names them (``old``, ``new``: a walk crosses a
    rename both ways); an edge that does not: a walk upstream goes from the new name to the old one, downstream
    from the old to the new."""
    old, new = hop.edge.get("old"), hop.edge.get("new")
    if isinstance(old, str) and isinstance(new, str):
        return old, new
    return (hop.urn, hop.from_urn) if direction == "upstream" else (hop.from_urn, hop.urn)


def rename_names(old: str, new: str) -> tuple[str, str]:
    """Short names for both ends of a rename: the fields' simple paths within one dataset (``amt``, ``amount``),
    ``dataset.path`` across datasets (a dataset renamed), a dataset's name for a whole dataset."""
    def name(urn: str, with_dataset: bool) -> str:
        n = _node_of(urn)
        if n.dataset is None:
            return urn
        dataset = DatasetUrn.parse(n.dataset).name
        if n.path is None:
            return dataset
        return f"{dataset}.{n.label}" if with_dataset else n.label

    across = _node_of(old).dataset != _node_of(new).dataset
    return name(old, across), name(new, across)


def manual_label(edge: Mapping[str, Any]) -> str:
    """``manual: <by>`` (``manual`` when nobody is named) for an edge drawn by hand."""
    return f"{MANUAL}: {edge['by']}" if edge.get("by") else MANUAL


def hop_label(hop: Hop) -> str:
    """A graph edge's label for a hop (one per pair of fields): ``renamed``; else each of its edges' words once,
    ``; `` between: ``manual: <by>`` (with its transformation, if it has one, in brackets) for one drawn by hand
    (first), :func:`edge_label` for each other."""
    if hop.rename:
        return RENAMED
    words = list(dict.fromkeys(edge_label(e) for e in hop.stated))
    if hop.manual:
        transformation = str(hop.edge.get("transformation") or "").rsplit(".", 1)[-1]
        words.insert(0, manual_label(hop.edge) + (f" ({transformation})" if transformation else ""))
    return "; ".join(w for w in words if w)


def sources_note(hop: Hop) -> str | None:
    """The sources (jobs, queries, aspects) that stated a hop's edges, when several did: ``2 sources:
    openlineage:spark/backfill, openlineage:spark/daily``; else None."""
    names = hop.sources
    return f"{len(names)} sources: {', '.join(names)}" if len(names) > 1 else None


def hop_detail(hop: Hop, direction: str) -> str | None:
    """A sentence on a hop (a graph edge's tooltip): a rename's ``renamed from amt to amount at
    2025-01-01T00:00:06Z (sql) by ann: why``, a manual one's ``drawn by hand by ann at ...: note`` (then the
    sources that stated the pair too), the sources of a pair several stated (:func:`sources_note`); other hops:
    None."""
    e = hop.edge
    by = f" by {e['by']}" if e.get("by") else ""
    note = f": {e['note']}" if e.get("note") else ""
    at = f" at {instant(e.get('validFrom'))}" if instant(e.get("validFrom")) else ""
    if hop.rename:
        old, new = rename_names(*renamed_ends(hop, direction))
        source = f" ({e['source']})" if e.get("source") else ""
        return f"renamed from {old} to {new}{at}{source}{by}{note}"
    if hop.manual:
        stated = f"; also stated by {', '.join(hop.sources)}" if hop.sources else ""
        return f"drawn by hand{by}{at}{note}{stated}"
    return sources_note(hop)


# --- the nodes and edges of a result ---------------------------------------------------------------------------


@dataclass
class _Node:
    urn: str
    dataset: str | None  # the dataset it belongs to (a dataset node: itself); None: unknown
    path: str | None  # the field path; None: the node is a whole dataset (or unknown)
    placeholder: bool = False
    removed: bool = False
    start: bool = False

    @property
    def label(self) -> str:
        if self.path is None:
            return "(whole dataset)" if self.dataset == self.urn else self.urn
        return v1_path(self.path) or self.path

    @property
    def state(self) -> str | None:
        return "placeholder" if self.placeholder else "removed" if self.removed else None


def _node_of(urn: str) -> _Node:
    """A node known only by its URN (a walk's start, or where a hop came from): parsed from it."""
    try:
        f = FieldUrn.parse(urn)
        return _Node(urn, str(f.dataset), f.field_path)
    except FieldgraphError:
        pass
    if urn.startswith("urn:li:dataset:"):
        return _Node(urn, urn, None)
    return _Node(urn, None, None)


def _graph(result: LineageResult) -> tuple[dict[str, _Node], list[tuple[str, str, Hop]]]:
    """The result's nodes (by URN, in the order first met: the start first) and its edges (upstream URN,
    downstream URN, hop), one per hop (a pair of fields), in the direction data flows."""
    reached: dict[str, Hop] = {}
    for h in result.hops:
        reached.setdefault(h.urn, h)
    nodes: dict[str, _Node] = {}

    def add(urn: str) -> None:
        if urn in nodes:
            return
        h = reached.get(urn)
        if h is None:
            nodes[urn] = _node_of(urn)
        elif h.dataset_urn is None:  # a whole dataset (lineage from a dataset, not one of its fields)
            nodes[urn] = _node_of(urn)
        else:
            nodes[urn] = _Node(urn, h.dataset_urn, h.field_path, h.placeholder, h.removed)

    if result.start:
        add(result.start)
        nodes[result.start].start = True
    edges: list[tuple[str, str, Hop]] = []
    upstream = result.direction == "upstream"
    for h in result.hops:
        add(h.from_urn)
        add(h.urn)
        if h.rename:  # drawn old -> new, whichever way the walk crossed it
            edges.append((*renamed_ends(h, result.direction), h))
        else:
            edges.append((h.urn, h.from_urn, h) if upstream else (h.from_urn, h.urn, h))
    return nodes, edges


def _clusters(nodes: Iterable[_Node]) -> tuple[dict[str, list[_Node]], list[_Node]]:
    """The nodes by dataset (in the order first met), and those of no known dataset."""
    by_ds: dict[str, list[_Node]] = {}
    loose: list[_Node] = []
    for n in nodes:
        if n.dataset is None:
            loose.append(n)
        else:
            by_ds.setdefault(n.dataset, []).append(n)
    return by_ds, loose


def dataset_label(urn: str) -> str:
    """``name (platform)`` for a dataset URN (``name (platform, DEV)`` outside PROD); anything else as it is."""
    try:
        d = DatasetUrn.parse(urn)
    except FieldgraphError:
        return urn
    return f"{d.name} ({d.platform}{'' if d.env == 'PROD' else ', ' + d.env})"


def edge_label(edge: Mapping[str, Any]) -> str:
    """An edge in a few words: its transformation (last part of a class name), then its subtype when that says
    more, ``indirect``, ``masked``: ``SUM (AGGREGATION)``, ``Identity``, ``HASH (TRANSFORMATION, masked)``."""
    transformation = str(edge.get("transformation") or "").rsplit(".", 1)[-1]
    subtype = str(edge.get("subtype") or "")
    main = transformation or subtype or str(edge.get("kind") or "")
    extra = [subtype] if subtype and subtype.casefold() != main.casefold() else []
    extra += [w for w, on in (("indirect", edge.get("kind") == "INDIRECT"), ("masked", edge.get("masking"))) if on]
    return f"{main} ({', '.join(extra)})" if extra and main else main or ", ".join(extra)


def _title(result: LineageResult) -> str:
    """``upstream of total_revenue in sales.revenue_report (tableau)``."""
    n = _node_of(result.start)
    if n.dataset is None:
        return f"{result.direction} of {result.start}"
    what = dataset_label(n.dataset)
    return f"{result.direction} of {what}" if n.path is None else f"{result.direction} of {n.label} in {what}"


def _masked(hop: Hop) -> bool:
    """Whether any of a hop's edges masks (a tag does not flow along it)."""
    return any(e.get("masking") for e in hop.edges)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- Graphviz DOT ----------------------------------------------------------------------------------------------


def dot_quote(text: str) -> str:
    """``text`` as a DOT quoted string: backslashes and quotes escaped, line breaks as ``\\n`` / ``\\r``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _dot_attrs(attrs: Mapping[str, str]) -> str:
    return "[" + ", ".join(f"{k}={dot_quote(v)}" for k, v in attrs.items()) + "]"


def lineage_dot(result: LineageResult) -> str:
    """A lineage walk as a Graphviz digraph (``dot -Tsvg lineage.dot > lineage.svg``).

    Node ids are the field URNs (quoted); labels are the fields' simple paths (``items.price``). One
    ``cluster_<n>`` per dataset. One edge per hop (a pair of fields), upstream -> downstream, labelled with
    :func:`hop_label` (each of its edges' :func:`edge_label` once); one several sources stated has a tooltip naming
    them; masking edges dashed, indirect ones dotted; placeholders dashed and removed fields greyed, each saying so;
    the start drawn bold. A hop across a rename: dotted, blue, an open arrowhead, labelled ``renamed``; an edge
    drawn by hand: bold, green, labelled ``manual: <by>``; both with a tooltip saying when, by whom and why
    (:func:`hop_detail`)."""
    nodes, edges = _graph(result)
    by_ds, loose = _clusters(nodes.values())
    lines = [
        "digraph lineage {",
        f"  // {_one_line(_title(result))}: {len(edges)} edges",
        *([f"  // partial result: {_one_line(result.reason or '')}"] if result.partial else []),
        '  graph [rankdir="LR", fontname="Helvetica", label=' + dot_quote(_title(result)) + ', labelloc="t"];',
        '  node [shape="box", style="rounded", fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize="10"];',
    ]

    def node_line(n: _Node, indent: str) -> str:
        attrs = {"label": n.label + (f"\n({n.state})" if n.state else ""), "tooltip": n.urn}
        if n.placeholder:
            attrs.update(style="rounded,dashed", color="gray50", fontcolor="gray50")
        elif n.removed:
            attrs.update(style="rounded,filled", fillcolor="gray92", color="gray50", fontcolor="gray40")
        if n.start:
            attrs["penwidth"] = "2"
        return f"{indent}{dot_quote(n.urn)} {_dot_attrs(attrs)};"

    for i, (dataset, members) in enumerate(by_ds.items()):
        lines += [f"  subgraph cluster_{i} {{",
                  f"    graph {_dot_attrs({'label': dataset_label(dataset), 'tooltip': dataset, 'style': 'rounded'})};",
                  *(node_line(n, "    ") for n in members),
                  "  }"]
    lines += [node_line(n, "  ") for n in loose]
    for up, down, h in edges:
        attrs = {"label": hop_label(h)}
        detail = hop_detail(h, result.direction)
        if detail:
            attrs["tooltip"] = detail
        if h.rename:
            attrs.update(style="dotted", color="royalblue", fontcolor="royalblue", arrowhead="empty")
        elif h.manual:
            attrs.update(style="bold", color="darkgreen", fontcolor="darkgreen")
        elif _masked(h):
            attrs.update(style="dashed", color="firebrick")
        elif all(e.get("kind") == "INDIRECT" for e in h.edges):
            attrs["style"] = "dotted"
        lines.append(f"  {dot_quote(up)} -> {dot_quote(down)} {_dot_attrs(attrs)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- Mermaid ---------------------------------------------------------------------------------------------------


def mermaid_text(text: str) -> str:
    """``text`` for a quoted Mermaid label (``["..."]``, ``|"..."|``): quotes, ``#`` and the characters Mermaid
    reads as markup written as entity codes (``#quot;``, ``#35;``, ...), line breaks as spaces."""
    return "".join(_MERMAID_ENTITIES.get(ch, ch) for ch in " ".join(text.splitlines()))


_MERMAID_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "`": "#96;"}


def lineage_mermaid(result: LineageResult) -> str:
    """A lineage walk as a Mermaid flowchart (``flowchart LR``), for Markdown that renders Mermaid.

    Fields are ``f0``, ``f1``, ... (the start is ``f0``), datasets ``d0``, ``d1``, ... (subgraphs); labels are
    quoted and escaped. One edge per hop (a pair of fields), upstream -> downstream, ``-->|"label"|`` (a pair
    several sources stated says how many: ``Identity (2 sources)``); masking ones drawn dashed. A hop
    across a rename is a dotted link ``-.->|"renamed"|``, an edge drawn by hand a thick one
    ``==>|"manual: <by>"|``, each coloured too (``linkStyle``)."""
    nodes, edges = _graph(result)
    by_ds, loose = _clusters(nodes.values())
    ids = {urn: f"f{i}" for i, urn in enumerate(nodes)}
    lines = ["flowchart LR",
             f"  %% {_one_line(_title(result))}: {len(edges)} edges",
             *([f"  %% partial result: {_one_line(result.reason or '')}"] if result.partial else [])]

    def node_line(n: _Node, indent: str) -> str:
        return f'{indent}{ids[n.urn]}["{mermaid_text(n.label + (f" ({n.state})" if n.state else ""))}"]'

    for i, (dataset, members) in enumerate(by_ds.items()):
        lines += [f'  subgraph d{i}["{mermaid_text(dataset_label(dataset))}"]',
                  *(node_line(n, "    ") for n in members),
                  "  end"]
    lines += [node_line(n, "  ") for n in loose]
    masked: list[int] = []
    links: dict[str, list[int]] = {RENAMED: [], MANUAL: []}
    for k, (up, down, h) in enumerate(edges):
        label = hop_label(h) + (f" ({len(h.sources)} sources)" if len(h.sources) > 1 else "")
        arrow = "-.->" if h.rename else "==>" if h.manual else "-->"
        lines.append(f'  {ids[up]} {arrow}|"{mermaid_text(label)}"| {ids[down]}' if label else
                     f"  {ids[up]} {arrow} {ids[down]}")
        if h.rename or h.manual:
            links[relation(h)].append(k)
        elif _masked(h):
            masked.append(k)
    lines += ["  classDef placeholder stroke-dasharray: 5 5,color:#777",
              "  classDef removed fill:#eee,color:#777",
              "  classDef start stroke-width:3px"]
    for state in ("placeholder", "removed"):
        styled = [ids[n.urn] for n in nodes.values() if n.state == state]
        if styled:
            lines.append(f"  class {','.join(styled)} {state}")
    if result.start in ids:
        lines.append(f"  class {ids[result.start]} start")
    if masked:
        lines.append(f"  linkStyle {','.join(map(str, masked))} stroke-dasharray: 5 5,stroke:#b22222")
    if links[RENAMED]:
        lines.append(f"  linkStyle {','.join(map(str, links[RENAMED]))} stroke:#4169e1")
    if links[MANUAL]:
        lines.append(f"  linkStyle {','.join(map(str, links[MANUAL]))} stroke:#006400,stroke-width:3px")
    return "\n".join(lines) + "\n"


# --- CSV -------------------------------------------------------------------------------------------------------


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _csv(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(r.get(k)) for k in columns})
    return buf.getvalue()


def _each(hop: Hop, key: str) -> Any:
    """A property of a hop's edges: its value on the one edge, else each value once in the edges' order, ``; ``
    between (two jobs writing one pair: ``openlineage:spark/backfill; openlineage:spark/daily``)."""
    if not hop.more:
        return hop.edge.get(key)
    return "; ".join(dict.fromkeys(str(_cell(e.get(key))) for e in hop.edges if _cell(e.get(key)) != ""))


def lineage_csv(result: LineageResult) -> str:
    """A lineage walk as CSV, one row per hop (a pair of fields; header: :data:`LINEAGE_COLUMNS`): ``from_urn`` is
    where the walk came from, ``urn`` the field it reached; ``kind``, ``subtype``, ``transformation`` and
    ``source`` each value of the pair's edges once (:func:`_each`), ``masking`` whether any masks; ``relation`` what
    the hop is (:func:`relation`: ``derived``, ``renamed``, ``manual``); booleans ``true``/``false``, missing
    values empty."""
    return _csv(LINEAGE_COLUMNS, ({
        "depth": h.depth, "from_urn": h.from_urn, "urn": h.urn, "dataset": h.dataset_urn, "fieldPath": h.field_path,
        "kind": _each(h, "kind"), "subtype": _each(h, "subtype"), "transformation": _each(h, "transformation"),
        "masking": _masked(h), "source": _each(h, "source"), "placeholder": bool(h.placeholder),
        "removed": h.removed, "relation": relation(h)} for h in result.hops))


def impact_csv(impact: Impact) -> str:
    """Impact analysis as CSV, one row per impacted field at its shortest depth (header: :data:`IMPACT_COLUMNS`),
    grouped by dataset in ``impact.datasets``' order."""
    first: dict[str, Hop] = {}
    for h in impact.walk.hops:
        if h.urn not in first or h.depth < first[h.urn].depth:
            first[h.urn] = h
    order = {d: (i, {p: j for j, p in enumerate(paths)}) for i, (d, paths) in enumerate(impact.datasets.items())}

    def key(h: Hop) -> tuple[int, int, int, str]:
        i, paths = order.get(h.dataset_urn or "?", (len(order), {}))
        return i, paths.get(h.field_path or h.urn, len(paths)), h.depth, h.urn

    return _csv(IMPACT_COLUMNS, ({"dataset": h.dataset_urn, "fieldPath": h.field_path, "urn": h.urn, "depth": h.depth}
                                for h in sorted(first.values(), key=key)))


__all__ = ["DERIVED", "FORMATS", "IMPACT_COLUMNS", "LINEAGE_COLUMNS", "MANUAL", "MEDIA_TYPES", "RENAMED",
           "dataset_label", "dot_quote", "edge_label", "hop_detail", "hop_label", "impact_csv", "instant",
           "lineage_csv", "lineage_dot", "lineage_mermaid", "manual_label", "mermaid_text", "relation", "rename_names",
           "renamed_ends", "sources_note"]
