"""``fieldgraph serve`` over real HTTP (uvicorn on loopback) on both graph backends: every read endpoint answers
what the graph API answers; OpenLineage's own client (HTTP transport) and DataHub's REST emitter write through it;
the token, size, rate and CORS rules hold; bad events are answered 422 and land in the rejects file."""

from __future__ import annotations

import gzip
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import schema_dataset as sd
from openlineage.client.serde import Serde
from openlineage.client.transport.http import HttpConfig, HttpTransport

from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.config import ServeConfig
from fieldgraph.ingest.service import create_app

from .conftest import ds, example_changes, schema_event
from .services import free_port
from .test_docs import in_order

pytestmark = pytest.mark.integration

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
REPORT, DAILY = ds("sales.revenue_report", "tableau"), ds("analytics.public.orders_daily", "snowflake")
KAFKA = ds("demo.orders", "kafka")
TOTAL = field_urn(REPORT, "total_revenue")
REVENUE = field_urn(DAILY, "revenue")
PG = "postgres://db:5432"



@dataclass
class Service:
    url: str
    graph: Any
    config: ServeConfig
    http: httpx.Client

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.http.get(path, params={k: v for k, v in params.items() if v is not None})

    def ok(self, path: str, **params: Any) -> Any:
        r = self.get(path, **params)
        assert r.status_code == 200, r.text
        return r.json()


def start(graph: Any, config: ServeConfig) -> Iterator[Service]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(graph, config), host="127.0.0.1", port=port,
                                           log_config=None, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the service did not start"
        time.sleep(0.02)
    url = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=url, timeout=30) as http:
        yield Service(url, graph, config, http)
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def settings(tmp_path: Path) -> ServeConfig:
    return ServeConfig(token=TOKEN, rate_limit=0, rejects=tmp_path / "rejects.jsonl", max_body_bytes=256 * 1024)


@pytest.fixture
def service(graph: Any, settings: ServeConfig) -> Iterator[Service]:
    """The service over the example graph."""
    graph.ingest(example_changes())
    yield from start(graph, settings)


def served(graph: Any, config: ServeConfig) -> Any:
    """A context manager: the service over ``graph`` with ``config``."""
    from contextlib import contextmanager

    return contextmanager(start)(graph, config)


def same(x: Any) -> Any:
    """``x`` as it comes back through JSON."""
    return json.loads(json.dumps(x))


# ---- reads: each endpoint answers what the graph API answers ----


def test_every_read_endpoint_answers_what_the_graph_answers(service: Service) -> None:
    g = service.graph
    up = g.upstream(TOTAL)
    assert service.ok("/api/v1/lineage/upstream", field=TOTAL) == {**same(up.to_json()), "asOf": None}
    assert {h["urn"] for h in service.ok("/api/v1/lineage/upstream", field=TOTAL)["hops"]} >= {REVENUE}
    down = g.downstream(REVENUE, 2)
    assert service.ok("/api/v1/lineage/downstream", field=REVENUE, depth=2) == {**same(down.to_json()), "asOf": None}

    found = g.impact(KAFKA)
    res, by_ds = found.walk, found.datasets
    impact = service.ok("/api/v1/impact", name=KAFKA)
    assert impact["datasets"] == by_ds and impact["hops"] == same([h.to_json() for h in res.hops])
    assert REPORT in impact["datasets"]

    path = list(g.path(TOTAL, field_urn(KAFKA, "[version=2.0].[type=Order].[type=array].[type=Item].items.[type=bytes]"
                                                 ".price")).path)
    assert len(path) == 4
    assert service.ok("/api/v1/path", **{"from": TOTAL, "to": path[-1]})["path"] == path

    field = service.ok("/api/v1/field", urn=TOTAL)
    assert field["dataset"] == REPORT and field["fieldPath"] == "total_revenue" and field["type"] == "NumberType"
    assert field["tags"] == {"own": [], "local": [], "inherited": []} and field["placeholder"] is False

    assert service.ok("/api/v1/fields", dataset=DAILY) == same(encode(g.fields(DAILY)))
    assert service.ok("/api/v1/datasets/lineage", dataset=REPORT) == same(encode(g.dataset_lineage(REPORT)))
    assert service.ok("/api/v1/datasets/lineage") == same(encode(g.dataset_lineage()))
    assert service.ok("/api/v1/unresolved") == same(encode(g.unresolved())) != []
    assert service.ok("/api/v1/unresolved", ambiguous="true") == same(encode(g.ambiguous())) != []
    assert service.ok("/api/v1/stats") == same(encode(g.stats()))
    assert service.ok("/api/v1/tags", field=TOTAL) == same(encode(g.tags(TOTAL)))
    assert service.ok("/api/v1/tagged", label="PII") == same(encode(g.tagged("PII")))
    assert service.ok("/api/v1/lineage-summary", field=TOTAL) == same(encode(g.field_lineage(TOTAL)))
    diff = service.ok("/api/v1/diff-lineage", dataset=DAILY, **{"from": "0", "to": "2030-01-01"})
    assert diff == same(encode(g.diff_lineage(DAILY, 0, 1893456000000))) and diff["fields"]["added"]

    found = service.ok("/api/v1/search", q="REVENUE")
    assert [d["urn"] for d in found["datasets"]] == [REPORT]
    assert {f["urn"] for f in found["fields"]} == {TOTAL, REVENUE}
    assert found["datasets"][0]["fields"] == len([f for f in encode(g.fields(REPORT)) if not f["placeholder"]])
    price = service.ok("/api/v1/search", q="items.price")["fields"]
    assert [f["simplePath"] for f in price] == ["items.price"]


def test_as_of_depth_and_partial_answers(service: Service) -> None:
    one = service.ok("/api/v1/lineage/upstream", field=TOTAL, depth=1)
    assert one["partial"] and "depth 1 reached" in one["reason"] and {h["depth"] for h in one["hops"]} == {1}
    then = service.ok("/api/v1/lineage/upstream", field=TOTAL, as_of="2025-01-01T00:00:03.500Z")
    assert then["asOf"] == 1735689603500
    assert then["hops"] == same(service.graph.upstream(TOTAL, as_of=1735689603500).to_json()["hops"]) != []
    early = service.get("/api/v1/field", urn=TOTAL, as_of="2020-01-01")
    assert early.status_code == 404 and "not in the graph yet" in early.json()["error"]


@pytest.mark.parametrize(("path", "params", "status", "says"), [
    ("/api/v1/lineage/upstream", {"field": "urn:li:datasetField:(urn:li:dataset:(urn:li:dataPlatform:x,nope,PROD),a)"},
     404, "dataset urn:li:dataset:(urn:li:dataPlatform:x,nope,PROD) is not in the graph"),
    ("/api/v1/lineage/upstream", {"field": TOTAL, "depth": "0"}, 400, "depth"),
    ("/api/v1/lineage/upstream", {"field": TOTAL, "budget": "600"}, 400, "budget"),
    ("/api/v1/lineage/upstream", {"field": TOTAL, "as_of": "yesterday"}, 400, "as_of 'yesterday'"),
    ("/api/v1/lineage/sideways", {"field": TOTAL}, 400, "direction"),
    ("/api/v1/lineage/upstream", {}, 400, "field"),
    ("/api/v1/impact", {"name": "urn:li:dataset:(urn:li:dataPlatform:x,nope,PROD)"}, 404, "not in the graph"),
    ("/api/v1/lineage-summary", {"field": TOTAL, "start": "5", "end": "1"}, 400, "start 5 is not before end 1"),
    ("/api/v1/search", {"q": ""}, 400, "q"),
])
def test_bad_reads_say_what_is_wrong(service: Service, path: str, params: dict, status: int, says: str) -> None:
    r = service.get(path, **params)
    assert r.status_code == status, r.text
    assert says in r.json()["error"]


def test_exports_as_text(service: Service) -> None:
    csv_text = service.get("/api/v1/impact", name=REVENUE, format="csv")
    assert csv_text.status_code == 200 and csv_text.headers["content-type"].startswith("text/csv")
    assert REPORT in csv_text.text and TOTAL in csv_text.text
    dot = service.get("/api/v1/lineage/upstream", field=TOTAL, format="dot")
    assert dot.status_code == 200 and dot.text.lstrip().startswith("digraph")
    assert service.get("/api/v1/lineage/upstream", field=TOTAL, format="png").status_code == 400


def test_openapi_document_lists_every_endpoint(service: Service) -> None:
    doc = service.ok("/openapi.json")
    assert {"/api/v1/search", "/api/v1/lineage/{direction}", "/api/v1/impact", "/api/v1/path", "/api/v1/field",
            "/api/v1/fields", "/api/v1/datasets/lineage", "/api/v1/unresolved", "/api/v1/tags", "/api/v1/tagged",
            "/api/v1/stats", "/api/v1/lineage-summary", "/api/v1/diff-lineage", "/api/v1/lineage", "/aspects",
            "/api/v1/events", "/healthz"} <= set(doc["paths"])
    assert "post" in doc["paths"]["/api/v1/lineage"] and "get" in doc["paths"]["/api/v1/lineage/{direction}"]


# ---- writes from the real producers' clients ----


def run_event(job: str, out: str, columns: dict[str, list[str]], state: RunState = RunState.COMPLETE) -> RunEvent:
    src = "public.src"
    return RunEvent(
        eventType=state, eventTime="2025-06-01T00:00:00.000Z", run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="airflow", name=job), producer="https://example.test/producer",
        inputs=[InputDataset(PG, src, facets={"schema": sd.SchemaDatasetFacet(fields=[
            sd.SchemaDatasetFacetFields(c, "VARCHAR") for cs in columns.values() for c in cs])})],
        outputs=[OutputDataset(PG, out, facets={
            "schema": sd.SchemaDatasetFacet(fields=[sd.SchemaDatasetFacetFields(n, "VARCHAR") for n in columns]),
            "columnLineage": cl.ColumnLineageDatasetFacet(fields={
                n: cl.Fields(inputFields=[cl.InputField(PG, src, c) for c in cs], transformationType="",
                             transformationDescription="") for n, cs in columns.items()})})])


def pg(name: str) -> str:
    return ds(name, "postgres")


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_openlineage_client_http_transport_writes_lineage(service: Service, compression: str | None) -> None:
    config = {"url": service.url, "auth": {"type": "api_key", "apiKey": TOKEN}}
    if compression:
        config["compression"] = compression
    client = OpenLineageClient(transport=HttpTransport(HttpConfig.from_dict(config)))
    client.emit(run_event("load_users", "public.users", {"id": ["user_id"]}, RunState.START))
    client.emit(run_event("load_users", "public.users", {"id": ["user_id"], "name": ["first", "last"]}))
    up = service.graph.upstream(field_urn(pg("public.users"), "name"))
    assert {h.urn for h in up.hops} == {field_urn(pg("public.src"), "first"), field_urn(pg("public.src"), "last")}
    assert {h.edge["sourceFormat"] for h in up.hops} == {"openlineage"}
    assert not service.config.rejects.exists()


def test_datahub_rest_emitter_writes_schemas_and_lineage(service: Service) -> None:
    from datahub.emitter.mcp import MetadataChangeProposalWrapper
    from datahub.emitter.rest_emitter import DatahubRestEmitter
    from datahub.metadata import schema_classes as m

    def schema(*names: str) -> m.SchemaMetadataClass:
        return m.SchemaMetadataClass(
            schemaName="t", platform="urn:li:dataPlatform:hive", version=0, hash="",
            platformSchema=m.OtherSchemaClass(rawSchema=""),
            fields=[m.SchemaFieldClass(fieldPath=n, type=m.SchemaFieldDataTypeClass(m.StringTypeClass()),
                                       nativeDataType="string") for n in names])

    src, dst = ds("dh.src"), ds("dh.dst")
    lineage = m.UpstreamLineageClass(
        upstreams=[m.UpstreamClass(dataset=src, type="TRANSFORMED")],
        fineGrainedLineages=[m.FineGrainedLineageClass(
            upstreamType="FIELD_SET", downstreamType="FIELD", upstreams=[f"urn:li:schemaField:({src},a)"],
            downstreams=[f"urn:li:schemaField:({dst},b)"], transformOperation="IDENTITY")])
    emitter = DatahubRestEmitter(service.url, token=TOKEN)
    emitter.test_connection()  # GET /config, as GMS answers it
    emitter.emit(MetadataChangeProposalWrapper(entityUrn=src, aspect=schema("a")))  # ingestProposal
    emitter.emit_mcps([MetadataChangeProposalWrapper(entityUrn=dst, aspect=schema("b")),  # ingestProposalBatch
                       MetadataChangeProposalWrapper(entityUrn=dst, aspect=lineage)])
    (hop,) = service.graph.upstream(field_urn(dst, "b")).hops
    assert hop.urn == field_urn(src, "a") and hop.edge["sourceFormat"] == "datahub" and not hop.placeholder
    bad = m.UpstreamLineageClass(upstreams=[], fineGrainedLineages=[m.FineGrainedLineageClass(
        upstreamType="FIELD_SET", downstreamType="FIELD", upstreams=["not-a-field-urn"],
        downstreams=[f"urn:li:schemaField:({dst},b)"])])
    with pytest.raises(Exception, match="not-a-field-urn") as refused:  # the emitter shows the service's reason
        emitter.emit(MetadataChangeProposalWrapper(entityUrn=dst, aspect=bad))
    assert "None" not in str(refused.value)


def test_concurrent_producers_all_land(service: Service) -> None:
    body = [json.loads(Serde.to_json(run_event(f"job{i}", f"public.out{i}", {"c": ["x"]}))) for i in range(48)]

    def send(event: dict) -> int:
        with httpx.Client(base_url=service.url) as http:
            return http.post("/api/v1/lineage", json=event, headers=AUTH).status_code

    with ThreadPoolExecutor(16) as pool:
        assert set(pool.map(send, body)) == {201}
    for i in range(48):
        (hop,) = service.graph.upstream(field_urn(pg(f"public.out{i}"), "c")).hops
        assert hop.urn == field_urn(pg("public.src"), "x")


def test_sql_events_through_the_events_endpoint(service: Service) -> None:
    schema = schema_event(ds("shop.orders"), ["customer_id", "amount"], 1)
    sql = {"sql": "INSERT INTO shop.totals SELECT customer_id, SUM(amount) AS total FROM shop.orders GROUP BY 1",
           "dialect": "spark"}
    bad = {"sql": "INSERT INTO shop.t SELECT CASE a FROM shop.orders", "dialect": "spark"}
    r = service.http.post("/api/v1/events", json=[schema, sql, bad], headers=AUTH)
    assert r.status_code == 422 and r.json()["written"] == 2, r.text
    (rejected,) = r.json()["rejected"]
    assert rejected["index"] == 2 and "line 1, column" in rejected["error"]
    up = service.ok("/api/v1/lineage/upstream", field=field_urn(ds("shop.totals"), "total"))
    assert {(h["fieldPath"], h["edge"]["subtype"]) for h in up["hops"]} == {
        ("amount", "AGGREGATION"), ("customer_id", "GROUP_BY")}


def test_bad_events_are_answered_422_and_kept_as_rejects(service: Service) -> None:
    bad = {"eventTime": "not a time", "eventType": "COMPLETE", "run": {"runId": "r"}, "job": {"namespace": "n",
                                                                                                  "name": "j"}}
    r = service.http.post("/api/v1/lineage", json=bad, headers=AUTH)
    assert r.status_code == 422 and "eventTime" in r.json()["error"]
    good = schema_event(ds("ok.table"), ["a"], 1)
    r = service.http.post("/api/v1/events", json=[good, {"entityType": "dataset"}], headers=AUTH)
    assert r.status_code == 422, r.text
    assert [x["index"] for x in r.json()["rejected"]] == [1] and r.json()["written"] == 1
    assert [f["fieldPath"] for f in encode(service.graph.fields(ds("ok.table")))] == ["a"]  # the good one was written
    rejects = [json.loads(line) for line in service.config.rejects.read_text().splitlines()]
    assert [(x["file"], x["event"]) for x in rejects] == [("POST /api/v1/lineage", bad),
                                                           ("POST /api/v1/events", {"entityType": "dataset"})]
    assert "eventTime" in rejects[0]["error"] and rejects[1]["error"]
    not_json = service.http.post("/api/v1/lineage", content=b"{oops", headers=AUTH)
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]
    wrong = service.http.post("/aspects", params={"action": "ingestProposal"}, json={"nope": 1}, headers=AUTH)
    assert wrong.status_code == 400 and "'proposal'" in wrong.json()["error"]


# ---- the guard: token, size, rate, CORS ----


def test_writes_need_the_token_and_reads_may(graph: Any, settings: ServeConfig, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    event = json.loads(Serde.to_json(run_event("j", "public.t", {"c": ["x"]})))
    with served(graph, settings) as s:
        none = s.http.post("/api/v1/lineage", json=event)
        assert none.status_code == 401 and none.headers["www-authenticate"].startswith("Bearer")
        wrong = s.http.post("/api/v1/lineage", json=event, headers={"Authorization": "Bearer " + TOKEN[:-1] + "x"})
        assert wrong.status_code == 401 and TOKEN not in wrong.text
        assert s.http.post("/api/v1/lineage", json=event, headers=AUTH).status_code == 201
        assert s.get("/api/v1/stats").status_code == 200  # reads are open by default
    assert TOKEN not in caplog.text
    with served(graph, replace(settings, protect_reads=True)) as s:
        assert s.get("/api/v1/stats").status_code == 401
        assert s.http.get("/api/v1/stats", headers=AUTH).status_code == 200
        assert s.get("/healthz").status_code == 200  # probes need no token
    with served(graph, replace(settings, token=None)) as s:
        r = s.http.post("/api/v1/lineage", json=event, headers=AUTH)
        assert r.status_code == 403 and "FIELDGRAPH_SERVE_TOKEN" in r.json()["error"]


def test_request_size_limit_holds_declared_streamed_and_compressed(service: Service) -> None:
    limit = service.config.max_body_bytes
    big = json.dumps({"eventTime": "2025-01-01T00:00:00Z", "pad": "x" * limit}).encode()
    declared = service.http.post("/api/v1/lineage", content=big, headers=AUTH)
    assert declared.status_code == 413 and str(limit) in declared.json()["error"]
    streamed = service.http.post("/api/v1/lineage", content=iter([big[:1000], big[1000:]]), headers=AUTH)
    assert streamed.status_code == 413
    bomb = gzip.compress(big)  # small on the wire, over the limit once inflated
    assert len(bomb) < limit
    r = service.http.post("/api/v1/lineage", content=bomb, headers={**AUTH, "Content-Encoding": "gzip"})
    assert r.status_code == 413 and "decompressed" in r.json()["error"]


def test_rate_limit_answers_429_with_retry_after(graph: Any, settings: ServeConfig) -> None:
    with served(graph, replace(settings, rate_limit=0.5)) as s:  # bursts of 1: the second request waits 2 s
        assert s.get("/api/v1/stats").status_code == 200
        limited = s.get("/api/v1/stats")
        assert limited.status_code == 429 and limited.headers["retry-after"] == "2", limited.text
        assert "the limit is 0.5 a second" in limited.json()["error"]
        assert s.get("/healthz").status_code == 200  # probes are not limited
        assert [s.http.get("/api/v1/stats", headers=AUTH).status_code for _ in range(3)] == [200] * 3  # token holders
        time.sleep(2.1)
        assert s.get("/api/v1/stats").status_code == 200  # the bucket refills


def test_cors_is_off_unless_an_origin_is_configured(graph: Any, settings: ServeConfig) -> None:
    origin = {"Origin": "https://catalog.example"}
    with served(graph, settings) as s:
        assert "access-control-allow-origin" not in s.http.get("/api/v1/stats", headers=origin).headers
    with served(graph, replace(settings, cors_origins=("https://catalog.example",))) as s:
        assert s.http.get("/api/v1/stats", headers=origin).headers["access-control-allow-origin"] == origin["Origin"]
        other = s.http.get("/api/v1/stats", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def test_health_and_metrics(service: Service) -> None:
    health = service.ok("/healthz")
    assert health["status"] == "ok" and health["graph"] == service.graph.store.describe()
    service.get("/api/v1/stats")
    service.get("/api/v1/lineage/upstream", field="urn:li:datasetField:(urn:li:dataset:(urn:li:dataPlatform:x,y,PROD),z)")
    service.http.post("/api/v1/lineage", content=b"[]", headers=AUTH)
    text = service.get("/metrics").text
    assert 'fieldgraph_http_requests_total{method="GET",route="/api/v1/stats",status="200"} 1.0' in text
    assert 'route="/api/v1/lineage/{direction}",status="404"} 1.0' in text
    assert 'fieldgraph_http_events_total{endpoint="openlineage",outcome="rejected"} 1.0' in text
    assert "fieldgraph_http_request_seconds_bucket" in text


def test_explorer_is_served_from_the_package(service: Service) -> None:
    root = service.http.get("/", follow_redirects=False)
    assert root.status_code in (302, 307) and root.headers["location"] == "/explorer/"
    page = service.http.get("/explorer/")
    assert page.status_code == 200 and "<script" in page.text and "//cdn" not in page.text.lower()


# ---- the command ----


def test_fieldgraph_serve_command_starts_answers_and_stops(tmp_path: Path) -> None:
    env = {**os.environ, "FIELDGRAPH_DATA": str(tmp_path / "data"), "FIELDGRAPH_SERVE_TOKEN": "short"}
    cmd = [sys.executable, "-m", "fieldgraph.ingest.cli", "serve", "--port", str(free_port())]
    short = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert short.returncode == 3 and "shorter than 16 characters" in short.stderr
    (tmp_path / "token").write_text(TOKEN + "\n")
    port = free_port()
    env.pop("FIELDGRAPH_SERVE_TOKEN")
    proc = subprocess.Popen([*cmd[:-1], str(port), "--token-file", str(tmp_path / "token")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/healthz")
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.stdout else ""
                time.sleep(0.1)
        assert r.status_code == 200 and str(tmp_path / "data") in r.json()["graph"]
        event = schema_event(ds("cli.table"), ["a", "b"], 1)
        assert httpx.post(f"http://127.0.0.1:{port}/api/v1/events", json=event, headers=AUTH).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=30)[0]
    assert proc.returncode == 0, output
    assert TOKEN not in output and "writes need the token" in output and "stopped by SIGTERM" in output
    status = subprocess.run([sys.executable, "-m", "fieldgraph.ingest.cli", "server", "status"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 5, status.stdout  # the embedded server it started is stopped with it


def test_documented_requests_do_what_the_docs_show(service: Service) -> None:
    """The requests to ``fieldgraph serve`` (curl) of docs/how-to/serve.md, against the service, print what the
    page shows."""
    from .test_docs import DOCS, blocks
    from .test_docs import variables as page_variables

    page = DOCS / "how-to" / "serve.md"
    (block,) = [b for b in blocks(page, "sh") if "fieldgraph serve &" in b]
    variables = page_variables(page)
    requests: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("curl "):
            requests.append((line.replace("http://127.0.0.1:8080", service.url), []))
        elif line.startswith("#   ") and requests:
            requests[-1][1].append(line[1:].strip())
    assert len(requests) >= 5
    env = {**os.environ, "FIELDGRAPH_SERVE_TOKEN": TOKEN}
    for command, shown in requests:
        proc = subprocess.run(["bash", "-c", f"{variables}; {command}"], cwd=Path(__file__).resolve().parent.parent,
                              env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        for expected in shown:
            assert any(in_order(expected.split(), out) for out in proc.stdout.splitlines()), \
                f"{command}\nthe page shows: {expected}\nit printed:\n{proc.stdout}"


def test_graph_outage_answers_503_and_the_service_recovers(settings: ServeConfig, monkeypatch) -> None:
    """The graph down: health and writes answer 503 with Retry-After (after the writer's retries), nothing is
    lost to the rejects file; the graph back: the same request is written."""
    import tempfile

    from fieldgraph.graph import EmbeddedServer, LineageGraph, open_store
    from fieldgraph.ingest.service import writer

    monkeypatch.setattr(writer, "RETRY_PAUSES_S", (0.05, 0.05))
    event = schema_event(ds("outage.table"), ["a"], 1)
    with tempfile.TemporaryDirectory(prefix="fg-") as tmp:
        server = EmbeddedServer(Path(tmp) / "data").start()
        graph = LineageGraph(open_store(f"falkordb+unix://{server.socket}"))
        try:
            with served(graph, settings) as s:
                server.stop()
                assert s.get("/healthz").status_code == 503
                down = s.http.post("/api/v1/events", json=event, headers=AUTH)
                assert down.status_code == 503 and down.headers["retry-after"] == "5", down.text
                assert "GraphUnavailable" == down.json()["kind"] and not settings.rejects.exists()
                server.start()
                assert s.get("/healthz").status_code == 200
                assert s.http.post("/api/v1/events", json=event, headers=AUTH).status_code == 200
                assert [f["fieldPath"] for f in encode(graph.fields(ds("outage.table")))] == ["a"]
        finally:
            graph.close()
            server.stop()


def test_a_write_that_outlasts_its_wait_answers_503_and_the_writer_goes_on(service: Service, monkeypatch) -> None:
    """A request that waits longer than the service's limit for the graph is answered 503; the writer thread is not
    harmed by answering a caller that left, and the next write goes through."""
    from fieldgraph.graph.write import Writer
    from fieldgraph.ingest.service import writes

    slow_write = Writer.write_each

    def slow(self, events):
        time.sleep(1.0)
        return slow_write(self, events)

    def post(name: str) -> httpx.Response:
        return httpx.post(f"{service.url}/api/v1/events", json=schema_event(ds(name), ["a"], 1), headers=AUTH)

    monkeypatch.setattr(writes, "WRITE_WAIT_S", 0.3)
    monkeypatch.setattr(Writer, "write_each", slow)
    with ThreadPoolExecutor(2) as pool:
        taken = pool.submit(post, "slow.taken")  # the writer takes it, then takes a second to write it
        time.sleep(0.1)
        queued = pool.submit(post, "slow.queued")  # waits behind it, and its caller gives up first
        for late in (taken.result(), queued.result()):
            assert late.status_code == 503 and "within 0.3s" in late.json()["error"], late.text
    monkeypatch.setattr(writes, "WRITE_WAIT_S", 30.0)
    ok = service.http.post("/api/v1/events", json=schema_event(ds("slow.two"), ["b"], 2), headers=AUTH)
    assert ok.status_code == 200, ok.text
    assert [f["fieldPath"] for f in encode(service.graph.fields(ds("slow.two")))] == ["b"]
    assert [f["fieldPath"] for f in encode(service.graph.fields(ds("slow.taken")))] == ["a"]  # begun, so finished
    assert encode(service.graph.fields(ds("slow.queued"))) == []  # its caller had left before it began: not written


def test_hosts_methods_and_encodings_the_guard_refuses(service: Service) -> None:
    rebound = service.http.get("/api/v1/stats", headers={"Host": "attacker.example"})
    assert rebound.status_code == 400  # a loopback service answers to loopback names only (no DNS rebinding)
    odd = service.http.request("FOO1", "/api/v1/stats")
    assert odd.status_code == 405
    assert 'method="OTHER",route="/api/v1/stats",status="405"' in service.get("/metrics").text
    cut = gzip.compress(json.dumps(schema_event(ds("gz.table"), ["a"], 1)).encode())[:-8]
    r = service.http.post("/api/v1/events", content=cut, headers={**AUTH, "Content-Encoding": "gzip"})
    assert r.status_code == 400 and "cut short" in r.json()["error"]
