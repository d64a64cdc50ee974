"""The lineage explorer page (``/explorer/``) in a real browser, on a real ``fieldgraph serve`` over each backend.

Headless Debian Chromium, driven by ``tests/browser/explorer.mjs`` (one browser for the module, one JSON command
a line), searches the example report column, draws its upstream, expands a node, runs impact, exports CSV, PNG and
SVG, and pages through a field with 1,000 downstream fields. What the page draws is compared with what the API
(and the LineageGraph behind it) answers. Screenshots land in ``test-artifacts/explorer-*.png``.
"""

from __future__ import annotations

import csv
import io
import json
import select
import shutil
import struct
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fieldgraph.graph.plan import field_urn
from fieldgraph.normalizers.urns import DatasetUrn

from .conftest import ds, example_changes, ingest, lineage_event, schema_event
from .services import fieldgraph_serve

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "browser" / "explorer.mjs"
BUNDLE = ROOT / "ingest" / "service" / "explorer" / "static" / "explorer.js"
ARTIFACTS = ROOT / "test-artifacts"

FACT, DAILY = ds("/demo/fact_orders", "hdfs"), ds("analytics.public.orders_daily", "snowflake")
REPORT = ds("sales.revenue_report", "tableau")
REPORT_TOTAL = field_urn(REPORT, "total_revenue")
DAILY_REVENUE, DAILY_DAY = field_urn(DAILY, "revenue"), field_urn(DAILY, "order_day")
FACT_PRICE = field_urn(FACT, "price")
# the OpenLineage example: a Spark job hashing (masking) and copying a users table's email, filtered by country
ACTIVE_USERS, USERS = ds("lake/gold/active_users", "s3"), ds("shop.public.users", "postgres")
ACTIVE_EMAIL, USERS_EMAIL = field_urn(ACTIVE_USERS, "email"), field_urn(USERS, "email")
OPENLINEAGE = ROOT / "examples" / "sources" / "02_openlineage_active_users.json"

FAN_SOURCE = ds("fanout.source")
FAN_FIELD = field_urn(FAN_SOURCE, "id")
FAN_TARGET = ds("fanout.target")  # 1,000 fields, each derived from FAN_FIELD
PAGE = 25


class Explorer:
    """The driver process: ``explorer(action, **args)`` sends one command and returns its result."""

    def __init__(self, node: str) -> None:
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([node, str(DRIVER), "--artifacts", str(ARTIFACTS)], cwd=ROOT, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)

    def __call__(self, action: str, timeout: float = 60, **args: Any) -> Any:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"action": action, **args}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.log.seek(0)
            pytest.fail(f"explorer.mjs gave no answer to {action} within {timeout}s:\n{self.log.read()}")
        answer = json.loads(line)
        if not answer["ok"]:
            pytest.fail(f"explorer.mjs: {answer['error']} (the page: {answer['screenshot']})")
        return answer["result"]

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="module")
def explorer() -> Iterator[Explorer]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js 20+) is not on PATH: it runs tests/browser/explorer.mjs")
    if not (DRIVER.parent / "node_modules" / "playwright-core").is_dir():
        pytest.fail("tests/browser/node_modules is missing: run `npm ci --prefix tests/browser`")
    if not BUNDLE.is_file():
        pytest.fail(f"{BUNDLE.relative_to(ROOT)} is not built: run `make explorer`")
    ARTIFACTS.mkdir(exist_ok=True)
    driver = Explorer(node)
    yield driver
    driver.close()



@contextmanager
def serving(graph: Any, tmp_path: Path, *args: str, token: str | None = None) -> Iterator[str]:
    """``fieldgraph serve`` on ``graph`` (the backend's URI, as the CLI takes it) with ``args``: its base URL."""
    with fieldgraph_serve(graph.uri, tmp_path, *args, token=token) as base:
        yield base


@pytest.fixture
def serve(graph: Any, tmp_path: Path) -> Iterator[str]:
    with serving(graph, tmp_path) as base:
        yield base


def api(base: str, path: str, **params: Any) -> Any:
    with urllib.request.urlopen(f"{base}/api/v1/{path}?{urllib.parse.urlencode(params)}", timeout=30) as r:
        body = r.read().decode()
    return body if params.get("format") else json.loads(body)


def api_error(base: str, path: str, **params: Any) -> str:
    with pytest.raises(urllib.error.HTTPError) as err:
        api(base, path, **params)
    return str(json.loads(err.value.read())["error"])


def fields(view: dict) -> set[str]:
    return {n["id"] for n in view["nodes"] if n["kind"] == "field"}


def edges(view: dict) -> set[tuple[str, str]]:
    return {(e["source"], e["target"]) for e in view["edges"] if e["kind"] == "lineage"}


def one_hop(base: str, urn: str) -> tuple[list[dict], set[str], set[tuple[str, str]]]:
    """The API's one-hop lineage of ``urn`` both ways: its hops, the fields and the edges (upstream -> downstream)
    the page must draw for it."""
    up = api(base, "lineage/upstream", field=urn, depth=1)["hops"]
    down = api(base, "lineage/downstream", field=urn, depth=1)["hops"]
    nodes = {urn} | {h["urn"] for h in up + down}
    return up + down, nodes, {(h["urn"], h["from"]) for h in up} | {(h["from"], h["urn"]) for h in down}


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_explorer_draws_expands_highlights_and_exports(graph, serve, explorer) -> None:
    graph.ingest(example_changes())
    ingest(graph, json.loads(OPENLINEAGE.read_text()))
    base = serve

    opened = explorer("open", url=f"{base}/")  # / redirects to /explorer/
    assert opened == {"title": "fieldgraph · lineage explorer", "error": None}

    # search, pick the report column: its one-hop lineage both ways, as the API and the graph answer it
    results = explorer("search", text="total_revenue")
    assert {"testid": "result-field", "urn": REPORT_TOTAL} in [{k: r[k] for k in ("testid", "urn")} for r in results]
    view = explorer("pick", testid="result-field", urn=REPORT_TOTAL)
    hops, nodes, rels = one_hop(base, REPORT_TOTAL)
    assert {h.urn for h in graph.upstream(REPORT_TOTAL, 1).hops} == nodes - {REPORT_TOTAL}
    assert {DAILY_REVENUE, DAILY_DAY} <= nodes
    assert view["focus"] == REPORT_TOTAL
    assert fields(view) == nodes and edges(view) == rels
    by_id = {n["id"]: n for n in view["nodes"]}
    for h in hops:  # each field inside its dataset's group, labelled with its name and platform
        group = by_id[by_id[h["urn"]]["parent"]]
        assert group["id"] == h["dataset"] and group["kind"] == "dataset"
        d = DatasetUrn.parse(h["dataset"])
        assert group["label"].split("\n") == [d.name, f"{d.platform} · {d.env}"]
    for e in view["edges"]:  # edge labels from the edge properties
        edge = next(h["edge"] for h in hops if {h["urn"], h["from"]} == {e["source"], e["target"]})
        assert e["label"].split("\n")[0] == f"{edge['kind']} {edge['subtype']}" and edge["transformation"] in e["label"]
    assert "total_revenue" in explorer("text", testid="field-name")
    explorer("screenshot", path=str(ARTIFACTS / "explorer-upstream.png"))

    # double-click a field: its one-hop neighbours both ways join the drawing
    view = explorer("dblclick", node=DAILY_REVENUE)
    _, more_nodes, more_rels = one_hop(base, DAILY_REVENUE)
    assert FACT_PRICE in more_nodes and more_nodes - nodes
    assert fields(view) == nodes | more_nodes and edges(view) == rels | more_rels
    nodes, rels = fields(view), edges(view)

    # click a field: the side panel shows it (properties, edge provenance); expand upstream from there
    view = explorer("click", node=FACT_PRICE)
    assert view["selected"] == FACT_PRICE
    info = api(base, "field", urn=FACT_PRICE)
    props = explorer("text", testid="field-props")
    assert FACT in props and info["type"] in props and info["nativeDataType"] in props
    provenance = explorer("text", testid="field-edges")
    assert "upstreamLineage" in provenance and "2025-01-01" in provenance
    view = explorer("button", testid="expand-upstream")
    up = api(base, "lineage/upstream", field=FACT_PRICE, depth=1)["hops"]
    assert up and fields(view) == nodes | {h["urn"] for h in up}
    assert edges(view) == rels | {(h["urn"], FACT_PRICE) for h in up}

    # impact: exactly the impact set's drawn fields are highlighted; the CSV holds the impact list
    view = explorer("button", testid="impact")
    impact = api(base, "impact", name=FACT_PRICE)
    impacted = {h["urn"] for h in impact["hops"]}
    highlighted = {n["id"] for n in view["nodes"] if "impact" in n["classes"]}
    assert highlighted == impacted & fields(view) and {DAILY_REVENUE, REPORT_TOTAL} <= highlighted
    assert explorer("text", testid="impact-count").startswith(f"{len(impacted)} downstream field")
    explorer("screenshot", path=str(ARTIFACTS / "explorer-impact.png"))
    got = explorer("download", testid="export-impact-csv", path=str(ARTIFACTS / "explorer-impact.csv"))
    rows = list(csv.DictReader(Path(got["path"]).open()))
    first = {}  # the impact list: each field once, at the depth the walk first reached it
    for h in impact["hops"]:
        first.setdefault(h["urn"], {"dataset": h["dataset"], "fieldPath": h["fieldPath"], "urn": h["urn"],
                                    "depth": str(h["depth"])})
    assert rows == list(first.values())
    assert rows == list(csv.DictReader(io.StringIO(api(base, "impact", name=FACT_PRICE, format="csv"))))

    # the view as PNG and as SVG
    got = explorer("download", testid="export-png", path=str(ARTIFACTS / "explorer-view.png"))
    assert got["name"].endswith(".png")
    width, height = png_size(Path(got["path"]).read_bytes())
    assert width > 400 and height > 100 and got["size"] > 10_000
    got = explorer("download", testid="export-svg", path=str(ARTIFACTS / "explorer-view.svg"))
    svg = ET.parse(got["path"]).getroot()
    assert got["name"].endswith(".svg") and svg.tag == "{http://www.w3.org/2000/svg}svg"
    assert "total_revenue" in "".join(svg.itertext())

    # tags (own, and inherited with where from), masked and indirect edges, the edges' provenance
    view = explorer("open", url=f"{base}/explorer/#field={urllib.parse.quote(ACTIVE_EMAIL)}")
    assert view["error"] is None
    inherited = api(base, "field", urn=ACTIVE_EMAIL)["tags"]["inherited"]
    assert [(t["label"], t["from"]) for t in inherited] == [("PII", USERS_EMAIL)]
    assert "PII ← shop.public.users.email (1 hop)" in explorer("text", testid="field-tags")
    view = explorer("dblclick", node=USERS_EMAIL)
    hops, nodes, rels = one_hop(base, USERS_EMAIL)
    assert nodes <= fields(view) and rels <= edges(view)
    kinds = {(h["urn"], h["from"]): h["edge"] for h in api(base, "lineage/upstream", field=ACTIVE_EMAIL, depth=1)["hops"]}
    kinds.update({(h["from"], h["urn"]): h["edge"] for h in hops if h["from"] == USERS_EMAIL})
    drawn = {(e["source"], e["target"]): e for e in view["edges"] if e["kind"] == "lineage"}
    assert set(kinds) == set(drawn)
    assert any(edge["masking"] for edge in kinds.values()) and any(e["kind"] == "INDIRECT" for e in kinds.values())
    for pair, edge in kinds.items():
        assert ("masked" in drawn[pair]["classes"]) == edge["masking"] == ("masked" in drawn[pair]["label"])
        assert ("indirect" in drawn[pair]["classes"]) == (edge["kind"] == "INDIRECT")
    explorer("screenshot", path=str(ARTIFACTS / "explorer-masking.png"))
    explorer("click", node=USERS_EMAIL)
    assert explorer("text", testid="field-tags") == "PII"
    provenance = explorer("text", testid="field-edges")
    edge = kinds[(USERS_EMAIL, ACTIVE_EMAIL)]
    assert edge["query"] in provenance and edge["run"] in provenance and edge["program"] in provenance

    # an API error is shown in the page, as the API words it
    unknown = field_urn(ds("no.such_table"), "x")
    opened = explorer("open", url=f"{base}/explorer/#field={urllib.parse.quote(unknown)}")
    assert opened["error"] == api_error(base, "field", urn=unknown)
    assert explorer("errors") == []


def test_explorer_pages_a_field_with_1000_downstream_fields(graph, serve, explorer) -> None:
    columns = [f"c{i:03d}" for i in range(1000)]
    ingest(graph, schema_event(FAN_SOURCE, ["id"], 1000), schema_event(FAN_TARGET, columns, 1000),
           lineage_event(FAN_TARGET, [(field_urn(FAN_TARGET, c), [FAN_FIELD]) for c in columns], 2000))
    base = serve
    downstream = {h["urn"] for h in api(base, "lineage/downstream", field=FAN_FIELD, depth=1)["hops"]}
    assert len(downstream) == 1000 == len(graph.downstream(FAN_FIELD, 1).hops)

    explorer("open", url=f"{base}/explorer/")
    results = explorer("search", text="fanout.source")
    assert [r["urn"] for r in results if r["testid"] == "result-dataset"] == [FAN_SOURCE]
    explorer("pick", testid="result-dataset", urn=FAN_SOURCE)  # a dataset lists its fields, to pick one
    started = time.monotonic()
    view = explorer("pick", testid="dataset-field", urn=FAN_FIELD)
    first_page = fields(view) - {FAN_FIELD}
    assert len(first_page) == PAGE and first_page <= downstream
    (more,) = [n for n in view["nodes"] if n["kind"] == "more"]
    assert more["label"] == f"{1000 - PAGE} more…"
    assert edges(view) == {(FAN_FIELD, f) for f in first_page}
    explorer("screenshot", path=str(ARTIFACTS / "explorer-fanout.png"))

    view = explorer("click", node=more["id"])  # the next page, and the rest behind the "more" node
    second_page = fields(view) - {FAN_FIELD} - first_page
    assert len(second_page) == PAGE and second_page <= downstream
    assert [n["label"] for n in view["nodes"] if n["kind"] == "more"] == [f"{1000 - 2 * PAGE} more…"]
    assert time.monotonic() - started < 20, "drawing two pages of a 1,000-field fan-out took too long"
    assert explorer("errors") == []


def test_explorer_asks_for_the_token_when_reads_are_protected(graph, explorer, tmp_path) -> None:
    """With --protect-reads the page asks for the token once (a prompt), keeps it for the tab and answers."""
    graph.ingest(example_changes())
    token = "explorer-token-0123456789"
    with serving(graph, tmp_path, "--protect-reads", token=token) as base:
        assert api_error(base, "search", q="total") == "reads need a bearer token (Authorization: Bearer <token>)"
        asked = explorer("prompts", answer=token)
        explorer("open", url=f"{base}/explorer/")
        results = explorer("search", text="total_revenue")
        assert REPORT_TOTAL in {r["urn"] for r in results}
        view = explorer("pick", testid="result-field", urn=REPORT_TOTAL)
        assert {DAILY_REVENUE, DAILY_DAY} <= fields(view)
        assert explorer("prompts", answer=None) == asked + 1  # asked once; later requests carry the token
        assert explorer("errors") == []
