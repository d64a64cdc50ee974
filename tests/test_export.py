"""Exports (``fieldgraph.ingest.export``; ``lineage upstream|downstream --format dot|mermaid|csv``, ``impact
--format csv``), on both real backends: what they print is checked against the JSON of the same question.

No Graphviz here: the DOT is parsed by a small parser of the DOT grammar below (graph, subgraphs, node, edge and
attribute statements, quoted strings) that refuses anything it does not know."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.graph import Hop, Impact, LineageResult
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.cli.boundary import EXIT_PARTIAL, EXIT_USAGE
from fieldgraph.ingest.export import (
    IMPACT_COLUMNS,
    LINEAGE_COLUMNS,
    dataset_label,
    impact_csv,
    lineage_csv,
    lineage_dot,
    lineage_mermaid,
)
from fieldgraph.normalizers import v1_path

from .conftest import ds, example_changes, ingest, mcp, schema_event, sf

REPORT_TOTAL = sf(ds("sales.revenue_report", "tableau"), "total_revenue")
KAFKA_PRICE = sf(ds("demo.orders", "kafka"), "items.price")
KAFKA_ORDERS = ds("demo.orders", "kafka")
FACT_RESTAURANT = sf(ds("/demo/fact_orders", "hdfs"), "restaurant")  # removed by the fact table's second schema
KAFKA_RESTAURANT = sf(ds("demo.orders", "kafka"), "/restaurant")  # a placeholder (an ambiguous reference)
#: a field name DOT and Mermaid must escape: quotes, brackets, a backslash, a hash, angle brackets
ODD = 'say "hi" [x] \\ #1 <b>'
SRC, DST = ds("db.src"), ds("db.dst")


# --- a DOT parser (the grammar of https://graphviz.org/doc/info/lang.html, without HTML strings and ports) ---

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/|^\#[^\n]*)
  | (?P<quoted>"(?:[^"\\]|\\.|\\\n)*")
  | (?P<id>[A-Za-z_\x80-\U0010ffff][\w\x80-\U0010ffff]*|-?(?:\.\d+|\d+(?:\.\d*)?))
  | (?P<op>->|--|[{}\[\];,=])
""", re.X | re.S | re.M)
_KEYWORDS = {"strict", "graph", "digraph", "node", "edge", "subgraph"}


def _unescape(quoted: str) -> str:
    """A quoted DOT string's text as a label shows it (``\\"``, ``\\\\``, ``\\n``, ``\\r``; a line continuation)."""
    return re.sub(r'\\(\n|.)', lambda m: {"\n": "", "n": "\n", "r": "\n", "l": "\n"}.get(m[1], m[1]),
                  quoted[1:-1], flags=re.S)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, at = [], 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        assert m, f"not DOT at {at}: {text[at:at + 40]!r}"
        at = m.end()
        kind = m.lastgroup or ""
        if kind == "quoted":
            out.append(("id", _unescape(m[0])))
        elif kind == "id":
            out.append(("kw" if m[0].lower() in _KEYWORDS else "id", m[0].lower() if m[0].lower() in _KEYWORDS
                        else m[0]))
        elif kind == "op":
            out.append(("op", m[0]))
    return out


@dataclass
class Dot:
    graph: dict[str, str] = field(default_factory=dict)
    #: subgraph name -> its attributes
    clusters: dict[str, dict[str, str]] = field(default_factory=dict)
    #: node id -> (its attributes, the subgraph it was declared in or None)
    nodes: dict[str, tuple[dict[str, str], str | None]] = field(default_factory=dict)
    edges: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)


def parse_dot(text: str) -> Dot:
    """A digraph's clusters, nodes (where declared) and edges; an assertion error on anything not DOT."""
    toks = _tokens(text)
    pos = 0
    dot = Dot()

    def peek(k: int = 0) -> tuple[str, str]:
        return toks[pos + k] if pos + k < len(toks) else ("eof", "")

    def take(kind: str, value: str | None = None) -> str:
        nonlocal pos
        k, v = peek()
        assert k == kind and (value is None or v == value), f"expected {value or kind}, got {v!r} at token {pos}"
        pos += 1
        return v

    def attr_list() -> dict[str, str]:
        attrs: dict[str, str] = {}
        while peek() == ("op", "["):
            take("op", "[")
            while peek() != ("op", "]"):
                key = take("id")
                take("op", "=")
                attrs[key] = take("id")
                if peek() in (("op", ","), ("op", ";")):
                    take("op")
            take("op", "]")
        return attrs

    def stmt_list(sub: str | None) -> None:
        nonlocal pos
        while peek() != ("op", "}"):
            k, v = peek()
            if k == "kw" and v in ("graph", "node", "edge"):
                take("kw")
                attrs = attr_list()
                if v == "graph":
                    (dot.clusters[sub] if sub else dot.graph).update(attrs)
            elif k == "kw" and v == "subgraph":
                take("kw")
                name = take("id") if peek()[0] == "id" else f"anonymous{pos}"
                assert sub is None, "clusters are not nested"
                dot.clusters[name] = {}
                take("op", "{")
                stmt_list(name)
                take("op", "}")
            elif k == "id" and peek(1) == ("op", "="):
                key = take("id")
                take("op", "=")
                (dot.clusters[sub] if sub else dot.graph)[key] = take("id")
            else:
                ends = [take("id")]
                while peek() in (("op", "->"), ("op", "--")):
                    assert take("op") == "->", "a digraph's edges are ->"
                    ends.append(take("id"))
                attrs = attr_list()
                if len(ends) == 1:
                    assert ends[0] not in dot.nodes, f"node {ends[0]} declared twice"
                    dot.nodes[ends[0]] = (attrs, sub)
                dot.edges += [(a, b, attrs) for a, b in zip(ends, ends[1:], strict=False)]
            if peek() == ("op", ";"):
                take("op")

    if peek() == ("kw", "strict"):
        take("kw")
    take("kw", "digraph")
    if peek()[0] == "id":
        take("id")
    take("op", "{")
    stmt_list(None)
    take("op", "}")
    assert peek()[0] == "eof", "text after the graph"
    return dot


# --- Mermaid: the lines the exporter may write, each checked --------------------------------------------------

_LABEL = r'"((?:[^"#<>`]|#\w+;)*)"'  # a quoted label: no raw quote, backtick or angle bracket; # only in entities
_MERMAID_LINES = {kind: re.compile(pattern) for kind, pattern in (
    ("subgraph", rf"^  subgraph (d\d+)\[{_LABEL}\]$"),
    ("node", rf"^ +(f\d+)\[{_LABEL}\]$"),
    ("end", r"^  end$"),
    ("edge", rf"^  (f\d+) -->(?:\|{_LABEL}\|)? (f\d+)$"),
    ("comment", r"^  %%.*$"),
    ("style", r"^  (?:classDef \w+ .+|class f\d+(?:,f\d+)* \w+|linkStyle \d+(?:,\d+)* .+)$"),
)}
_ENTITIES = {"#quot;": '"', "#35;": "#", "#lt;": "<", "#gt;": ">", "#amp;": "&", "#96;": "`"}


def _mermaid_unescape(label: str) -> str:
    return re.sub(r"#\w+;", lambda m: _ENTITIES[m[0]], label)


@dataclass
class Mermaid:
    #: node id -> (label, the subgraph's label)
    nodes: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def parse_mermaid(text: str) -> Mermaid:
    lines = text.splitlines()
    assert lines[0] == "flowchart LR" and text.endswith("\n")
    m = Mermaid(lines=lines)
    sub: str | None = None
    for line in lines[1:]:
        found = [(kind, x) for kind, r in _MERMAID_LINES.items() if (x := r.match(line))]
        assert found, f"not a line the exporter writes (or not escaped): {line!r}"
        kind, x = found[0]
        if kind == "subgraph":
            assert sub is None
            sub = _mermaid_unescape(x[2])
        elif kind == "end":
            assert sub is not None
            sub = None
        elif kind == "node":
            assert x[1] not in m.nodes
            m.nodes[x[1]] = (_mermaid_unescape(x[2]), sub)
        elif kind == "edge":
            assert x[1] in m.nodes and x[3] in m.nodes, line
            m.edges.append((x[1], x[3], _mermaid_unescape(x[2] or "")))
    assert sub is None, "a subgraph is not closed"
    return m


# --- the graph and the commands ---------------------------------------------------------------------------------


def _fine_grained(down: str, ups: list[str], op: str) -> dict[str, Any]:
    return {"upstreamType": "FIELD_SET", "upstreams": ups, "downstreamType": "FIELD", "downstreams": [down],
            "transformOperation": op}


@pytest.fixture
def cli(graph: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """fieldgraph against a graph of the examples plus a field with an odd name and a masking (HASH) edge."""
    graph.ingest(example_changes())
    ingest(graph, schema_event(SRC, [ODD, "email"], 1), schema_event(DST, ["out", "email_hash"], 1),
           mcp(DST, "upstreamLineage", {"upstreams": [], "fineGrainedLineages": [
               _fine_grained(sf(DST, "out"), [sf(SRC, ODD)], "IDENTITY"),
               _fine_grained(sf(DST, "email_hash"), [sf(SRC, "email")], "HASH")]}, 2))
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()

    def run(*args: str, code: int = 0) -> Any:
        res = runner.invoke(app, list(args))
        assert res.exit_code == code, (res.exit_code, res.stdout, res.stderr)
        return res

    return run


def _walk(cli: Any, direction: str, urn: str) -> dict[str, Any]:
    walk: dict[str, Any] = json.loads(cli("lineage", direction, urn, "--json").stdout)
    assert walk["hops"]
    return walk


def _hops(cli: Any, direction: str, urn: str) -> list[dict[str, Any]]:
    hops: list[dict[str, Any]] = _walk(cli, direction, urn)["hops"]
    return hops


def _dataset_of(field_urn: str) -> str:
    from fieldgraph.normalizers import FieldUrn

    return str(FieldUrn.parse(field_urn).dataset)


def _flow(direction: str, h: dict[str, Any]) -> tuple[str, str]:
    """A hop as (upstream URN, downstream URN): the direction data flows."""
    return (h["urn"], h["from"]) if direction == "upstream" else (h["from"], h["urn"])


WALKS = [("upstream", REPORT_TOTAL), ("downstream", KAFKA_PRICE), ("upstream", sf(DST, "out")),
         ("upstream", FACT_RESTAURANT), ("downstream", KAFKA_RESTAURANT)]


# --- DOT --------------------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_dot_has_every_hop_as_an_edge_in_the_direction_data_flows(cli: Any) -> None:
    for direction, start in WALKS:
        walk = _walk(cli, direction, start)
        hops = walk["hops"]
        dot = parse_dot(cli("lineage", direction, start, "--format", "dot").stdout)
        assert dot.graph["rankdir"] == "LR"
        assert Counter((a, b) for a, b, _ in dot.edges) == Counter(_flow(direction, h) for h in hops)
        # every field a hop names is a node, in the cluster of its dataset, labelled with its (simple) path
        reached = {h["urn"]: h for h in hops}
        for h in hops:
            for urn in (h["from"], h["urn"]):
                assert urn in dot.nodes, urn
        for urn, h in reached.items():
            attrs, cluster = dot.nodes[urn]
            assert cluster is not None and cluster.startswith("cluster_")
            assert dot.clusters[cluster]["label"] == dataset_label(h["dataset"])
            assert attrs["label"].split("\n")[0] == v1_path(h["fieldPath"])
        # one cluster per dataset, every node of it in it
        datasets = {dot.clusters[c]["label"] for _, c in dot.nodes.values() if c}
        assert len(datasets) == len(dot.clusters) == len({h["dataset"] for h in hops} | {_dataset_of(start)})
        assert all(e["label"] for _, _, e in dot.edges)
        assert dot.nodes[walk["start"]][0].get("penwidth") == "2"  # the start, drawn bold


@pytest.mark.integration
def test_dot_labels_simplify_v2_paths_mark_transformations_masking_and_field_states(cli: Any) -> None:
    dot = parse_dot(cli("lineage", "upstream", REPORT_TOTAL, "--format", "dot").stdout)
    labels = {attrs["label"] for attrs, _ in dot.nodes.values()}
    assert {"items.price", "items.quantity", "header.timeStamp", "total_revenue"} <= labels
    assert not any("[version=2.0]" in x for x in labels)
    assert {e["label"] for _, _, e in dot.edges} == {"BLACKBOX (TRANSFORMATION)", "DATE_TRUNC (TRANSFORMATION)",
                                                    "SUM (AGGREGATION)", "Identity"}
    assert {dot.clusters[c]["label"] for c in dot.clusters} == {
        "sales.revenue_report (tableau)", "analytics.public.orders_daily (snowflake)", "/demo/fact_orders (hdfs)",
        "demo.orders (kafka)"}

    # the odd name: its URN the node id, its name the label, both exactly as they are once unescaped (reached, not
    # started from: FalkorDB's toJSON does not escape strings, so a dataset with such a field cannot be read there)
    odd = parse_dot(cli("lineage", "upstream", sf(DST, "out"), "--format", "dot").stdout)
    odd_urn = f"urn:li:datasetField:({SRC},{ODD})"
    assert odd.nodes[odd_urn][0]["label"] == ODD and odd.edges[0][:2] == (odd_urn, f"urn:li:datasetField:({DST},out)")
    masked = parse_dot(cli("lineage", "upstream", sf(DST, "email_hash"), "--format", "dot").stdout)
    ((up, down, attrs),) = masked.edges
    assert up.endswith(",email)") and down.endswith(",email_hash)")
    assert attrs["style"] == "dashed" and attrs["label"] == "HASH (TRANSFORMATION, masked)"

    # a placeholder dashed, a removed field greyed, each saying so
    ph = parse_dot(cli("lineage", "upstream", FACT_RESTAURANT, "--format", "dot").stdout)
    attrs = ph.nodes[f"urn:li:datasetField:({KAFKA_ORDERS},/restaurant)"][0]
    assert "dashed" in attrs["style"] and attrs["label"] == "/restaurant\n(placeholder)"
    rm = parse_dot(cli("lineage", "downstream", KAFKA_RESTAURANT, "--format", "dot").stdout)
    attrs = rm.nodes[f"urn:li:datasetField:({ds('/demo/fact_orders', 'hdfs')},restaurant)"][0]
    assert "filled" in attrs["style"] and attrs["label"] == "restaurant\n(removed)"


# --- Mermaid ----------------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_mermaid_has_one_escaped_edge_line_per_hop_in_the_direction_data_flows(cli: Any) -> None:
    for direction, start in WALKS:
        hops = _hops(cli, direction, start)
        text = cli("lineage", direction, start, "--format", "mermaid").stdout
        m = parse_mermaid(text)
        assert len(m.edges) == len(hops) == sum("-->" in line for line in m.lines)
        # ids are f0, f1...; a node's (dataset, label) names it: compare the edges with the hops that way
        named = {nid: (sub, label.removesuffix(" (placeholder)").removesuffix(" (removed)"))
                 for nid, (label, sub) in m.nodes.items()}

        def name(urn: str, hop: dict[str, Any] | None) -> tuple[str, str]:
            if hop is not None:
                return dataset_label(hop["dataset"]), v1_path(hop["fieldPath"])
            from fieldgraph.normalizers import FieldUrn

            f = FieldUrn.parse(urn)
            return dataset_label(str(f.dataset)), v1_path(f.field_path)

        reached = {h["urn"]: h for h in hops}
        want = Counter()
        for h in hops:
            up, down = _flow(direction, h)
            want[name(up, reached.get(up)), name(down, reached.get(down))] += 1
        assert Counter((named[a], named[b]) for a, b, _ in m.edges) == want

    odd = parse_mermaid(cli("lineage", "upstream", sf(DST, "out"), "--format", "mermaid").stdout)
    assert [label for label, _ in odd.nodes.values()] == ["out", ODD]
    assert '    f1["say #quot;hi#quot; [x] \\ #35;1 #lt;b#gt;"]' in odd.lines
    assert odd.edges == [("f1", "f0", "IDENTITY")]
    masked = cli("lineage", "upstream", sf(DST, "email_hash"), "--format", "mermaid").stdout
    assert '-->|"HASH (TRANSFORMATION, masked)"|' in masked and "  linkStyle 0 stroke-dasharray" in masked


# --- CSV and JSON -----------------------------------------------------------------------------------------------


def _cell(v: Any) -> str:
    return "" if v is None else ("true" if v else "false") if isinstance(v, bool) else str(v)


@pytest.mark.integration
def test_lineage_csv_is_the_hops_json_gives(cli: Any) -> None:
    for direction, start in WALKS:
        hops = _hops(cli, direction, start)
        text = cli("lineage", direction, start, "--format", "csv").stdout
        reader = csv.DictReader(io.StringIO(text))
        rows = list(reader)
        assert tuple(reader.fieldnames or ()) == LINEAGE_COLUMNS
        want = [{"depth": str(h["depth"]), "from_urn": h["from"], "urn": h["urn"], "dataset": _cell(h["dataset"]),
                 "fieldPath": _cell(h["fieldPath"]), "kind": _cell(h["edge"].get("kind")),
                 "subtype": _cell(h["edge"].get("subtype")), "transformation": _cell(h["edge"].get("transformation")),
                 "masking": _cell(bool(h["edge"].get("masking"))), "source": _cell(h["edge"].get("source")),
                 "placeholder": _cell(h["placeholder"]), "removed": _cell(h["removed"]), "relation": "derived"}
                for h in hops]
        assert rows == want
    odd = list(csv.DictReader(io.StringIO(cli("lineage", "upstream", sf(DST, "out"), "--format", "csv").stdout)))
    assert [r["fieldPath"] for r in odd] == [ODD]


@pytest.mark.integration
def test_impact_csv_is_the_impact_json_gives_one_row_per_field_at_its_shortest_depth(cli: Any) -> None:
    for start in (KAFKA_ORDERS, KAFKA_PRICE, ds("/demo/fact_orders", "hdfs"), sf(DST, "out")):
        imp = json.loads(cli("impact", start, "--json").stdout)
        reader = csv.DictReader(io.StringIO(cli("impact", start, "--format", "csv").stdout))
        rows = list(reader)
        assert tuple(reader.fieldnames or ()) == IMPACT_COLUMNS
        assert len(rows) == len({r["urn"] for r in rows})  # one row per field
        assert [(r["dataset"], r["fieldPath"]) for r in rows] == \
            [(d, p) for d, paths in imp["datasets"].items() for p in paths]
        shortest: dict[str, int] = {}
        for h in imp["hops"]:
            shortest[h["urn"]] = min(shortest.get(h["urn"], h["depth"]), h["depth"])
        assert {r["urn"]: int(r["depth"]) for r in rows} == shortest
    rows = list(csv.DictReader(io.StringIO(cli("impact", KAFKA_ORDERS, "--format", "csv").stdout)))
    assert len(rows) == 12 and {r["depth"] for r in rows} == {"1", "2", "3"}


@pytest.mark.integration
def test_json_and_format_json_agree_and_contradictions_are_usage_errors(cli: Any) -> None:
    for args in (("lineage", "upstream", REPORT_TOTAL), ("lineage", "downstream", KAFKA_PRICE),
                 ("impact", KAFKA_ORDERS)):
        as_json = json.loads(cli(*args, "--json").stdout)
        assert json.loads(cli(*args, "--format", "json").stdout) == as_json
        assert json.loads(cli(*args, "--json", "--format", "json").stdout) == as_json
        table = cli(*args, "--format", "table").stdout
        assert "┏" in table and table == cli(*args).stdout
    res = cli("lineage", "upstream", REPORT_TOTAL, "--json", "--format", "dot", code=EXIT_USAGE)
    assert "--json" in res.stderr and "--format dot" in res.stderr and not res.stdout
    cli("lineage", "downstream", KAFKA_PRICE, "--format", "table", "--json", code=EXIT_USAGE)
    cli("impact", KAFKA_ORDERS, "--json", "--format", "csv", code=EXIT_USAGE)
    res = cli("impact", KAFKA_ORDERS, "--format", "dot", code=EXIT_USAGE)  # impact has no graph export
    assert "dot" in res.stderr


@pytest.mark.integration
def test_exports_of_a_partial_walk_exit_6_and_say_so_on_stderr(cli: Any) -> None:
    for args in (("lineage", "upstream", REPORT_TOTAL, "--format", "csv"),
                 ("lineage", "upstream", REPORT_TOTAL, "--format", "dot"),
                 ("impact", KAFKA_ORDERS, "--format", "csv")):
        res = cli(*args, "--time-budget", "0", code=EXIT_PARTIAL)
        assert "partial result: time budget" in res.stderr and "partial" not in res.stdout.split("\n", 2)[0]
    res = cli("lineage", "upstream", REPORT_TOTAL, "--format", "csv", "--depth", "1")  # a depth asked for: exit 0
    assert len(list(csv.DictReader(io.StringIO(res.stdout)))) == 2 and "partial result: depth 1" in res.stderr


# --- the renderers alone: what no example graph has --------------------------------------------------------------


def _hop(frm: str, urn: str, depth: int, dataset: str | None, path: str | None, **edge: Any) -> Hop:
    return Hop(frm, urn, depth, dataset, path, edge)


@pytest.mark.parametrize("direction", ["upstream", "downstream"])
def test_renderers_on_names_with_line_breaks_and_lineage_from_a_whole_dataset(direction: str) -> None:
    a, b = ds("db.a"), ds("db.b")
    start = f"urn:li:datasetField:({b},x)"
    odd = 'two\nlines "q" \\n'
    res = LineageResult(start, direction, [
        _hop(start, f"urn:li:datasetField:({a},{odd})", 1, a, odd, transformation="COPY", kind="INDIRECT",
             subtype="IDENTITY"),
        _hop(start, a, 1, None, None, transformation="BLACKBOX"),  # lineage from the whole dataset a
        _hop(start, "urn:li:something:else", 1, None, None),  # no dataset to put it in
    ], partial=True, reason="time budget of 0s reached\nat depth 1")
    dot = parse_dot(lineage_dot(res))
    assert dot.nodes[f"urn:li:datasetField:({a},{odd})"][0]["label"] == odd
    assert dot.nodes[a][0]["label"] == "(whole dataset)" and dot.nodes[a][1] == dot.nodes[f"urn:li:datasetField:({a},{odd})"][1]
    assert dot.nodes["urn:li:something:else"][1] is None
    flows = [(e[0], e[1]) for e in dot.edges]
    ends = [(h.urn, h.from_urn) if direction == "upstream" else (h.from_urn, h.urn) for h in res.hops]
    assert flows == ends and dot.edges[0][2] == {"label": "COPY (IDENTITY, indirect)", "style": "dotted"}
    assert lineage_dot(res).count("// partial result: time budget of 0s reached at depth 1") == 1

    m = parse_mermaid(lineage_mermaid(res))
    assert m.nodes["f1"] == ('two lines "q" \\n', "db.a (hive)") and m.nodes["f2"][0] == "(whole dataset)"
    assert len(m.edges) == 3 and m.nodes["f3"][1] is None

    rows = list(csv.DictReader(io.StringIO(lineage_csv(res))))
    assert rows[0]["fieldPath"] == odd and rows[1]["dataset"] == "" and rows[2]["kind"] == ""
    assert list(csv.DictReader(io.StringIO(impact_csv(Impact(LineageResult(start, "downstream"), {}))))) == []
