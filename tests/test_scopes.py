"""Read and write scopes (``fieldgraph serve --tokens-file``): the scope model and the tokens file (pure), the graph
as a scope sees it (every backend, the in-memory store too), and real HTTP requests with named tokens on both
backends: what each token sees on every read endpoint, hidden fields never in the JSON, walks that stop at hidden
fields or go through them, 404 for hidden names, 403 for writes out of scope (nothing written), ``by`` the token's
name.

The example graph is a chain of four datasets: kafka ``demo.orders`` -> hdfs ``/demo/fact_orders`` -> snowflake
``orders_daily`` -> tableau ``revenue_report``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.changes import (
    DataJobChange,
    EdgeProps,
    FieldEdge,
    JobLineageChange,
    LineageChange,
    ManualEdgeChange,
    QueryChange,
    RenameChange,
    SchemaChange,
    SqlChange,
)
from fieldgraph.errors import ConfigError, NotFoundError, OutOfScope
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.graph.scope import Scope, check_rule, out_of_scope
from fieldgraph.graph.scoped import scoped
from fieldgraph.ingest.config import ServeConfig, ServeToken, load_tokens

from .conftest import WITH_MEMORY, ds, example_changes, schema_event, sf
from .test_explorer import explorer  # noqa: F401  (the Chromium driver, one per module)

KAFKA, HDFS = ds("demo.orders", "kafka"), ds("/demo/fact_orders", "hdfs")
DAILY, REPORT = ds("analytics.public.orders_daily", "snowflake"), ds("sales.revenue_report", "tableau")
TOTAL, REVENUE = field_urn(REPORT, "total_revenue"), field_urn(DAILY, "revenue")
CUSTOMER = field_urn(REPORT, "customer")
CUSTOMER_ID = field_urn(KAFKA, "[version=2.0].[type=Order].[type=Header].header.[type=string].customerId")
PRICE = field_urn(KAFKA, "[version=2.0].[type=Order].[type=array].[type=Item].items.[type=bytes].price")

#: sales: the report and the snowflake table (hdfs and kafka hidden); its walks stop at hidden fields
SALES = Scope(("platform:tableau", "platform:snowflake"))
#: the report and kafka (hdfs and snowflake, between them, hidden), going through hidden fields
THROUGH = Scope(("platform:tableau", "urn:li:dataset:(urn:li:dataPlatform:kafka,demo."), through_hidden=True)
STOPPING = Scope(THROUGH.rules)


def example(graph: Any) -> Any:
    graph.ingest(example_changes())
    graph.tag(CUSTOMER_ID, ["PII"])
    return graph


# ---- the scope model and the tokens file (pure) ----


def test_rules_match_datasets_by_platform_and_urn_prefix() -> None:
    assert [check_rule(r) for r in ("*", "platform:hive", ds("a.")[:-6])] == ["*", "platform:hive", ds("a.")[:-6]]
    for bad in ("hive", "platform:", "platform:a,b", "finance.", ""):
        with pytest.raises(ConfigError, match="is not a scope rule"):
            check_rule(bad)
    s = Scope(("platform:hive", "urn:li:dataset:(urn:li:dataPlatform:kafka,finance."))
    assert s.holds(ds("x.y")) and s.holds(ds("finance.pay", "kafka")) and not s.holds(ds("ops.pay", "kafka"))
    assert s.holds("urn:li:dataset:(urn:li:dataPlatform:kafka,finance.pay,prod)")  # compared in canonical form
    assert s.sees(sf(ds("finance.pay", "kafka"), "amount")) and not s.sees(field_urn(ds("t", "pg"), "a"))
    assert not s.holds("not a urn") and Scope(("*",)).holds("not a urn") and Scope(("*",)).all
    assert Scope().empty and not Scope().holds(ds("x"))


def test_a_change_is_out_of_scope_for_the_datasets_it_writes_and_reads() -> None:
    a, b, c = ds("a.t"), ds("b.t", "kafka"), ds("c.t", "pg")
    write, read = Scope(("platform:hive",)), Scope(("platform:hive", "platform:kafka"))
    edge = FieldEdge(field_urn(a, "x"), field_urn(b, "y"), EdgeProps("datahub"))
    assert out_of_scope(SchemaChange(a, ()), write, read) is None
    assert out_of_scope(SchemaChange(b, ()), write, read) == f"dataset {b} is outside its write scope"
    assert out_of_scope(LineageChange(a, "upstreamLineage", (edge,)), write, read) is None
    up_c = FieldEdge(field_urn(a, "x"), field_urn(c, "y"), EdgeProps("datahub"))
    assert out_of_scope(LineageChange(a, "upstreamLineage", (up_c,)), write, read) == \
        f"dataset {c} (referred to upstream) is outside its read scope"
    assert out_of_scope(ManualEdgeChange.of(field_urn(b, "y"), field_urn(a, "x")), write, read) is not None
    assert out_of_scope(SqlChange(a, "j", "select", tables=(("c.t", c),)), write, read) is not None
    assert out_of_scope(RenameChange(a, from_dataset=b), write, read) is None  # the old name: read
    assert out_of_scope(JobLineageChange(a, "j", "cdap", dropped=((field_urn(b, "y"), "drop"),)), write, read) \
        == f"dataset {b} is outside its write scope"  # it marks the fields it drops
    for anywhere in (QueryChange("urn:li:query:q", "select 1"), DataJobChange("urn:li:dataJob:j")):
        assert "write scope of '*'" in (out_of_scope(anywhere, write, read) or "")
        assert out_of_scope(anywhere, Scope(("*",)), read) is None


def entry(name: str = "sales", **kw: Any) -> str:
    e = {"name": name, "sha256": hashlib.sha256(name.encode()).hexdigest(), "read": ["platform:tableau"],
         "write": [], **kw}
    return "[[token]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in e.items())


def test_tokens_file_reads_entries_and_names_what_is_wrong(tmp_path: Path) -> None:
    p = tmp_path / "tokens.toml"
    p.write_text(entry() + entry("ops", read=["*"], write=["platform:kafka"], through_hidden=True))
    sales, ops = load_tokens(p)
    assert sales == ServeToken("sales", hashlib.sha256(b"sales").hexdigest(), Scope(("platform:tableau",)), Scope())
    assert ops.read == Scope(("*",), through_hidden=True) and ops.write.holds(KAFKA)
    assert "sha256" not in repr(sales) and sales.sha256 not in repr(sales)
    for text, says in (
        ("", "no [[token]] entries"),
        ("token = 1\n", "no [[token]] entries"),
        ("x = 1\n" + entry(), "unknown key 'x'"),
        ("[[token]]\nsha256 = \"" + "0" * 64 + "\"\n", "token 1: 'name' is missing"),
        (entry(sha256="secret-token-itself"), "token 1 ('sales'): 'sha256' is not a SHA-256"),
        (entry() + entry("ops", read=["hive"]), "token 2 ('ops'): 'read': 'hive' is not a scope rule"),
        (entry(write="*"), "'write' is a list of rules"),
        (entry(through_hidden="yes"), "'through_hidden' is true or false"),
        (entry(colour="red"), "unknown key 'colour'"),
        (entry() + entry(), "two tokens are named 'sales'"),
        (entry() + entry("other", sha256=hashlib.sha256(b"sales").hexdigest()), "has the sha256 of another token"),
        ("[[token]\n", "not TOML"),
    ):
        p.write_text(text)
        with pytest.raises(ConfigError, match=r"tokens\.toml") as exc:
            load_tokens(p)
        assert says in str(exc.value), (text, str(exc.value))
    with pytest.raises(ConfigError, match="cannot read"):
        load_tokens(tmp_path / "missing.toml")
    p.write_text(entry())
    cfg = ServeConfig.load(tokens_file=p, env={})
    assert cfg.tokens == (sales,) and cfg.token is None and cfg.reads_need_token


def test_serve_token_prints_a_token_and_its_entry(tmp_path: Path) -> None:
    from fieldgraph.ingest.cli import app

    r = CliRunner().invoke(app, ["serve-token", "finance", "--read", "platform:hive", "--read",
                                 "urn:li:dataset:(urn:li:dataPlatform:kafka,finance.", "--write", "platform:hive",
                                 "--through-hidden"])
    assert r.exit_code == 0, r.output
    token = r.stderr.strip()
    assert len(token) >= 40 and token not in r.stdout
    (tmp_path / "t.toml").write_text(r.stdout)
    (t,) = load_tokens(tmp_path / "t.toml")
    assert t.name == "finance" and t.sha256 == hashlib.sha256(token.encode()).hexdigest()
    assert t.read == Scope(("platform:hive", "urn:li:dataset:(urn:li:dataPlatform:kafka,finance."), True)
    assert t.write == Scope(("platform:hive",))
    bad = CliRunner().invoke(app, ["serve-token", "x", "--read", "hive"])
    assert bad.exit_code != 0 and "is not a scope rule" in bad.output
    (tmp_path / "bad.toml").write_text(entry(read=["finance."]))
    bad = CliRunner().invoke(app, ["serve", "--tokens-file", str(tmp_path / "bad.toml")])
    assert bad.exit_code != 0 and "bad.toml: token 1 ('sales'): 'read': 'finance.' is not a scope rule" in bad.output


# ---- the graph as a scope sees it ----


@WITH_MEMORY
def test_scoped_walks_stop_at_hidden_fields_or_go_through_them(graph: Any) -> None:
    g = example(graph)
    assert scoped(g, Scope(("*",))) is g
    whole = g.upstream(TOTAL)
    sales = scoped(g, SALES).upstream(TOTAL)
    assert {h.urn for h in sales.hops} == {h.urn for h in whole.hops if h.depth == 1} and sales.hidden == 3
    stopping = scoped(g, STOPPING).upstream(TOTAL)
    assert stopping.hops == () and stopping.hidden == 2  # the two snowflake fields
    through = scoped(g, THROUGH).upstream(TOTAL)
    assert through.hidden == 5 and {h.urn for h in through.hops} == {h.urn for h in whole.hops if h.depth == 3}
    assert {(h.from_urn, h.depth, json.dumps(dict(h.edge))) for h in through.hops} == {(TOTAL, 3, '{"hidden": 2}')}
    assert whole.hidden is None and "hidden" not in whole.to_json()
    assert list(scoped(g, THROUGH).path(TOTAL, PRICE).path) == [TOTAL, PRICE]
    assert scoped(g, STOPPING).path(TOTAL, PRICE).path == ()
    impact = scoped(g, THROUGH).impact(KAFKA)
    assert set(impact.datasets) == {REPORT} and impact.walk.hidden and impact.to_json()["hidden"] > 0
    for scope in (SALES, STOPPING, THROUGH):
        for name in (field_urn(HDFS, "price"), HDFS):
            with pytest.raises(NotFoundError) as exc:
                scoped(g, scope).resolve_node(name)
            assert str(exc.value) == f"dataset {HDFS} is not in the graph"  # as for a dataset not in the graph
        with pytest.raises(OutOfScope):
            scoped(g, scope).stats()
    view = scoped(g, SALES)
    for refused in (lambda: view.query("MATCH (n) RETURN n"), lambda: view.ingest([]), lambda: view.tag(TOTAL, ["x"])):
        with pytest.raises(OutOfScope):  # what the view does not answer (a question learnt later too) is refused
            refused()


@WITH_MEMORY
def test_scoped_tags_listings_and_diffs_leave_hidden_datasets_out(graph: Any) -> None:
    g = example(graph)
    assert [c.urn for c in g.tagged("PII").fields][-1] == CUSTOMER
    assert scoped(g, SALES).tagged("PII").fields == () and scoped(g, SALES).tags(CUSTOMER).inherited == ()
    through = scoped(g, THROUGH)
    assert [(c.urn, c.sources) for c in through.tagged("PII").fields] == [
        (CUSTOMER_ID, (CUSTOMER_ID,)), (CUSTOMER, (CUSTOMER_ID,))]
    (label,) = through.tags(CUSTOMER).inherited
    assert (label.from_urn, label.path) == (CUSTOMER_ID, (CUSTOMER, CUSTOMER_ID))
    sales = scoped(g, SALES)
    assert {(e.upstream, e.downstream) for e in sales.dataset_lineage()} == {(DAILY, REPORT)}
    assert sales.dataset_lineage(HDFS) == [] and sales.fields(HDFS) == []
    assert g.unresolved() and sales.unresolved() == [] and sales.ambiguous() == []
    assert g.search("demo").datasets and not sales.search("demo").datasets and not sales.search("price").fields
    assert [d.urn for d in sales.search("revenue").datasets] == [REPORT]
    diff = sales.diff_lineage(DAILY, 0, 1893456000000)
    whole = g.diff_lineage(DAILY, 0, 1893456000000)
    assert diff.added == whole.added and len(diff.edges_added) < len(whole.edges_added)
    assert HDFS not in json.dumps(encode(diff))
    assert HDFS not in json.dumps(encode(sales.field_lineage(REVENUE, "incoming", depth=2)))
    assert encode(sales.field(TOTAL))["dataset"] == REPORT


# ---- over HTTP, on both backends ----

SECRETS = {"sales": "sales-token-0123456789", "through": "through-token-0123456789",
           "stopping": "stopping-token-0123456789", "kafka": "kafka-writer-0123456789",
           "reader": "read-only-token-0123456789"}
SCOPES = {"sales": (SALES, Scope()), "through": (THROUGH, Scope()), "stopping": (STOPPING, Scope()),
          "kafka": (Scope(("platform:kafka",)), Scope(("platform:kafka",))), "reader": (Scope(("*",)), Scope())}


def bearer(name: str) -> dict[str, str]:
    from .test_service import TOKEN

    return {"Authorization": f"Bearer {TOKEN if name == 'admin' else SECRETS[name]}"}


@pytest.fixture
def scoped_service(graph: Any, tmp_path: Path) -> Iterator[Any]:
    from .test_service import TOKEN, start

    tokens = tuple(ServeToken(n, hashlib.sha256(s.encode()).hexdigest(), *SCOPES[n]) for n, s in SECRETS.items())
    config = ServeConfig(token=TOKEN, tokens=tokens, rate_limit=0, rejects=tmp_path / "rejects.jsonl")
    example(graph)
    yield from start(graph, config)


def ask(s: Any, who: str, path: str, **params: Any) -> Any:
    return s.http.get(path, params=params, headers=bearer(who))


#: every read endpoint, asked about what the sales token sees
READS: list[tuple[str, dict[str, Any]]] = [
    ("/api/v1/lineage/upstream", {"field": TOTAL}), ("/api/v1/lineage/downstream", {"field": REVENUE}),
    ("/api/v1/lineage/upstream", {"field": TOTAL, "format": "csv"}),
    ("/api/v1/lineage/upstream", {"field": TOTAL, "format": "dot"}),
    ("/api/v1/lineage/upstream", {"field": TOTAL, "format": "mermaid"}),
    ("/api/v1/impact", {"name": DAILY}), ("/api/v1/impact", {"name": DAILY, "format": "csv"}),
    ("/api/v1/path", {"from": TOTAL, "to": REVENUE}), ("/api/v1/field", {"urn": TOTAL}),
    ("/api/v1/fields", {"dataset": DAILY}), ("/api/v1/search", {"q": "o"}), ("/api/v1/tags", {"field": CUSTOMER}),
    ("/api/v1/tagged", {"label": "PII"}), ("/api/v1/datasets/lineage", {}), ("/api/v1/unresolved", {}),
    ("/api/v1/unresolved", {"ambiguous": "true"}), ("/api/v1/lineage-summary", {"field": REVENUE, "depth": 3}),
    ("/api/v1/diff-lineage", {"dataset": DAILY, "from": "0", "to": "2030-01-01"}),
    ("/api/v1/timeline", {"field": TOTAL, "direction": "both", "depth": 5}),
    ("/api/v1/lineage/upstream/diff", {"field": TOTAL, "from": "0", "to": "2030-01-01", "depth": 5}),
]


@pytest.mark.integration
def test_each_token_sees_only_its_datasets_on_every_read_endpoint(scoped_service: Any) -> None:
    s = scoped_service
    hidden_names = ("fact_orders", "dataPlatform:hdfs", "dataPlatform:kafka", "demo.orders")
    for path, params in READS:
        admin, sales = ask(s, "admin", path, **params), ask(s, "sales", path, **params)
        reader = ask(s, "reader", path, **params)  # a full read scope: the answers of the service's token
        assert admin.status_code == sales.status_code == 200, (path, sales.text)
        assert reader.text == admin.text, path
        for name in hidden_names:
            assert name not in sales.text, (path, params, name, sales.text[:2000])
        if path not in ("/api/v1/diff-lineage", "/api/v1/timeline") and "format" not in params:
            assert any(n in admin.text for n in hidden_names) or path in (
                "/api/v1/lineage/downstream", "/api/v1/impact", "/api/v1/field", "/api/v1/fields",
                "/api/v1/path", "/api/v1/search"), path
    marks = {p: ask(s, p, "/api/v1/timeline", field=TOTAL, depth=5).json()["instants"] for p in ("admin", "sales")}
    edges = {p: sum(m["edgesAdded"] for m in marks[p]) for p in marks}  # the hidden fields' edges are not counted
    assert 0 < edges["sales"] < edges["admin"], edges
    up = ask(s, "sales", "/api/v1/lineage/upstream", field=TOTAL).json()
    assert up["hidden"] == 3 and {h["dataset"] for h in up["hops"]} == {DAILY}
    assert "hidden" not in ask(s, "admin", "/api/v1/lineage/upstream", field=TOTAL).json()
    assert ask(s, "sales", "/api/v1/impact", name=DAILY).json()["hidden"] == 0
    assert ask(s, "sales", "/api/v1/path", **{"from": TOTAL, "to": REVENUE}).json()["hidden"] == 3  # its walk
    assert ask(s, "sales", "/api/v1/tagged", label="PII").json()["fields"] == []
    through = ask(s, "through", "/api/v1/lineage/upstream", field=TOTAL)
    assert through.json()["hidden"] == 5 and {h["edge"]["hidden"] for h in through.json()["hops"]} == {2}
    assert "analytics.public" not in through.text and "fact_orders" not in through.text and PRICE in through.text
    stopping = ask(s, "stopping", "/api/v1/lineage/upstream", field=TOTAL).json()
    assert stopping["hops"] == [] and stopping["hidden"] == 2
    tagged = ask(s, "through", "/api/v1/tagged", label="PII").json()["fields"]
    assert [f["urn"] for f in tagged] == [CUSTOMER_ID, CUSTOMER]
    assert ask(s, "through", "/api/v1/impact", name=KAFKA).json()["datasets"] == {REPORT: ["customer",
                                                                                          "total_revenue"]}


@pytest.mark.integration
def test_hidden_names_are_not_found_and_stats_are_refused(scoped_service: Any) -> None:
    s = scoped_service
    missing = ds("no.such", "hdfs")
    for path, params in (("/api/v1/field", {"urn": field_urn(HDFS, "price")}), ("/api/v1/fields", {"dataset": HDFS}),
                         ("/api/v1/impact", {"name": HDFS}), ("/api/v1/lineage/upstream", {"field": PRICE}),
                         ("/api/v1/path", {"from": TOTAL, "to": PRICE}), ("/api/v1/tags", {"field": PRICE}),
                         ("/api/v1/diff-lineage", {"dataset": KAFKA, "from": "0", "to": "1"}),
                         ("/api/v1/lineage-summary", {"field": PRICE})):
        r = ask(s, "sales", path, **params)
        assert r.status_code == 404 and r.json()["kind"] == "NotFoundError", (path, r.text)
        name = KAFKA if KAFKA in json.dumps(params) else HDFS
        not_there = ask(s, "admin", path, **json.loads(json.dumps(params).replace(name, missing)))
        assert r.json()["error"] == not_there.json()["error"].replace(missing, name), path
    r = ask(s, "sales", "/api/v1/stats")
    assert r.status_code == 403 and r.json()["kind"] == "OutOfScope" and "every dataset" in r.json()["error"]
    assert ask(s, "reader", "/api/v1/stats").json() == ask(s, "admin", "/api/v1/stats").json()
    assert s.http.get("/api/v1/search", params={"q": "o"}).status_code == 401  # reads need a token
    bad = s.http.get("/api/v1/search", params={"q": "o"}, headers={"Authorization": "Bearer not-a-token-at-all"})
    assert bad.status_code == 401
    assert "graph" not in s.http.get("/healthz").json()


@pytest.mark.integration
def test_writes_out_of_scope_are_refused_whole_and_by_is_the_token(scoped_service: Any) -> None:
    from openlineage.client.serde import Serde

    from .test_service import run_event

    s = scoped_service
    kafka, other = ds("pay.events", "kafka"), ds("pay.events", "hive")
    stats = ask(s, "admin", "/api/v1/stats").json()

    def refused(path: str, body: Any, who: str = "kafka", **params: Any) -> str:
        r = s.http.post(path, json=body, params=params, headers=bearer(who))
        assert r.status_code == 403 and r.json()["kind"] == "Forbidden", (path, r.text)
        return str(r.json()["error"])

    for path, params in (("/api/v1/events", {}), ("/aspects", {"action": "ingestProposal"})):
        body = [schema_event(kafka, ["a"], 1), schema_event(other, ["a"], 1)] if path == "/api/v1/events" else \
            {"proposal": schema_event(other, ["a"], 1)}
        why = refused(path, body, **params)
        assert "token 'kafka'" in why and f"dataset {other} is outside its write scope" in why
    ol = json.loads(Serde.to_json(run_event("j", "public.out", {"c": ["x"]})))
    assert "outside its write scope" in refused("/api/v1/lineage", ol)
    assert "may not write: its write scope is empty" in refused("/api/v1/events", schema_event(REPORT, ["a"], 1),
                                                               "sales")
    a, b = sf(kafka, "a"), sf(kafka, "b")
    assert "outside its write scope" in refused("/api/v1/edges", {"downstream": TOTAL, "upstream": a})
    assert "outside its read scope" in refused("/api/v1/edges", {"downstream": a, "upstream": TOTAL})
    assert "outside its write scope" in refused("/api/v1/edges/remove", {"downstream": TOTAL, "upstream": a})
    assert "outside its write scope" in refused("/api/v1/renames", {"old": sf(REPORT, "x"), "new": sf(REPORT, "y")})
    assert ask(s, "admin", "/api/v1/stats").json() == stats  # nothing of them written
    assert ask(s, "admin", "/api/v1/fields", dataset=other).status_code == 404

    r = s.http.post("/api/v1/events", json=[schema_event(kafka, ["a", "b"], 1)], headers=bearer("kafka"))
    assert r.status_code == 200, r.text
    r = s.http.post("/api/v1/edges", json={"downstream": b, "upstream": a}, headers=bearer("kafka"))
    assert r.status_code == 201 and r.json()["edge"]["by"] == "kafka", r.text
    r = s.http.post("/api/v1/edges", json={"downstream": b, "upstream": a, "by": "ci-bot", "note": "n"},
                    headers=bearer("kafka"))
    assert r.status_code == 201 and r.json()["edge"]["by"] == "kafka"  # unchanged: it held already
    r = s.http.post("/api/v1/edges", json={"downstream": a, "upstream": b, "by": "ci-bot"}, headers=bearer("kafka"))
    assert r.status_code == 201 and r.json()["edge"]["by"] == "ci-bot"  # the body names someone else, as before
    r = s.http.post("/api/v1/renames", json={"old": a, "new": sf(kafka, "a2")}, headers=bearer("kafka"))
    assert r.status_code == 201 and r.json()["rename"]["by"] == "kafka", r.text
    r = s.http.post("/api/v1/renames", json={"old": b, "new": sf(kafka, "b2")}, headers=bearer("admin"))
    assert r.status_code == 201 and r.json()["rename"]["by"] == "api"  # the service's one token, as before
    assert ask(s, "kafka", "/api/v1/fields", dataset=kafka).status_code == 200


@pytest.mark.integration
def test_pages_count_what_the_token_sees(scoped_service: Any) -> None:
    s = scoped_service
    whole = ask(s, "admin", "/api/v1/lineage/upstream", field=TOTAL, limit=1).json()
    first = ask(s, "sales", "/api/v1/lineage/upstream", field=TOTAL, limit=1)
    page = first.json()
    assert (page["total"], page["hidden"], len(page["hops"])) == (2, 3, 1) and whole["total"] == 8
    second = ask(s, "sales", "/api/v1/lineage/upstream", field=TOTAL, limit=1, cursor=page["next"])
    assert second.json()["next"] is None and "fact_orders" not in first.text + second.text
    # a cursor is kept per token: another token following it gets its own answer, not the first one's
    other = ask(s, "stopping", "/api/v1/lineage/upstream", field=TOTAL, limit=1, cursor=page["next"]).json()
    assert other["hops"] == [] and other["total"] == 0
    tagged = ask(s, "sales", "/api/v1/tagged", label="PII", limit=5).json()
    assert tagged["total"] == 0 and tagged["fields"] == []


@pytest.mark.integration
def test_named_tokens_pass_the_rate_limit(graph: Any, tmp_path: Path) -> None:
    from .test_service import start

    token = ServeToken("sales", hashlib.sha256(SECRETS["sales"].encode()).hexdigest(), SALES)
    config = ServeConfig(tokens=(token,), rate_limit=1, rejects=tmp_path / "rejects.jsonl")
    for s in start(graph, config):
        assert {s.http.get("/healthz", headers=bearer("sales")).status_code for _ in range(10)} == {200}
        assert {s.http.get("/api/v1/search", params={"q": "x"}, headers=bearer("sales")).status_code
                for _ in range(10)} == {200}
        assert 429 in {s.http.get("/api/v1/search", params={"q": "x"}).status_code for _ in range(10)}


# ---- the explorer, with a scoped token ----


@pytest.mark.integration
def test_the_explorer_with_a_scoped_token_draws_only_what_it_may_read(
        graph: Any, tmp_path: Path, explorer: Any) -> None:  # noqa: F811
    """In Chromium, over ``fieldgraph serve --tokens-file``: the page asks for the token, and the lineage it draws
    and the search it answers hold the sales token's datasets only."""
    from .test_explorer import ARTIFACTS, fields, serving

    example(graph)
    (tmp_path / "tokens.toml").write_text(entry("sales", sha256=hashlib.sha256(SECRETS["sales"].encode()).hexdigest(),
                                                read=list(SALES.rules)))
    with serving(graph, tmp_path, "--tokens-file", str(tmp_path / "tokens.toml")) as base:
        explorer("prompts", answer=SECRETS["sales"])
        explorer("open", url=f"{base}/explorer/")
        assert [r["urn"] for r in explorer("search", text="demo")] == []
        assert TOTAL in {r["urn"] for r in explorer("search", text="total_revenue")}
        view = explorer("pick", testid="result-field", urn=TOTAL)
        drawn = json.dumps(view)
        assert {TOTAL, REVENUE} <= fields(view) and all(f.startswith(("urn:li:datasetField:(" + REPORT,
                                                                      "urn:li:datasetField:(" + DAILY))
                                                        for f in fields(view))
        assert "fact_orders" not in drawn and "demo.orders" not in drawn
        backend = "falkordb" if "falkordb" in graph.uri else "neo4j"
        explorer("screenshot", path=str(ARTIFACTS / f"explorer-scoped-{backend}.png"))
        assert explorer("errors") == []

