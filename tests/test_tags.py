"""Tags and glossary terms propagate downstream along DataDerivedFrom edges (computed on read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli import app

from .conftest import WITH_MEMORY, column, ds, ingest, lineage_event, mcp, sf

SRC, MID, OUT = ds("db.src"), ds("db.mid"), ds("db.out")
SOURCES = Path(__file__).resolve().parent.parent / "examples" / "sources"


def tagged_schema(urn: str, fields: dict[str, tuple[list[str], list[str]]], ts: int) -> dict:
    cols = []
    for path, (tags, terms) in fields.items():
        c = column(path)
        if tags:
            c["globalTags"] = {"tags": [{"tag": f"urn:li:tag:{t}"} for t in tags]}
        if terms:
            c["glossaryTerms"] = {"terms": [{"urn": f"urn:li:glossaryTerm:{t}"} for t in terms],
                                  "auditStamp": {"time": 0, "actor": "urn:li:corpuser:x"}}
        cols.append(c)
    other = {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}}
    return mcp(urn, "schemaMetadata", {"schemaName": urn, "platform": "urn:li:dataPlatform:hive", "version": 0,
                                       "hash": "", "platformSchema": other, "fields": cols}, ts)


@pytest.fixture
def chain(graph):
    """src.email (PII, term Sensitive) -> mid.email (identity) -> out.email (BLACKBOX) and out.email_hash (HASH);
    src.country (no tags) -> out.country."""
    ingest(graph,
           tagged_schema(SRC, {"email": (["PII"], ["Sensitive"]), "country": ([], [])}, 1),
           tagged_schema(MID, {"email": ([], []), "country": ([], [])}, 1),
           tagged_schema(OUT, {"email": ([], []), "email_hash": ([], []), "country": ([], [])}, 1),
           lineage_event(MID, [(sf(MID, "email"), [sf(SRC, "email")]), (sf(MID, "country"), [sf(SRC, "country")])], 2),
           lineage_event(OUT, [(sf(OUT, "email"), [sf(MID, "email")])], 2, op="BLACKBOX"),
           mcp(OUT, "datasetUpstreamLineage", {"fieldMappings": [
               {"sourceFields": [sf(MID, "email")], "destinationField": sf(OUT, "email_hash"),
                "transformationFunction": "com.linkedin.finegrainedmetadata.transformation.Hash"}]}, 2))
    return graph


@WITH_MEMORY
def test_schema_tags_and_terms_propagate_and_masking_stops_them(chain) -> None:
    own = encode(chain.tags(sf(SRC, "email")))
    assert own["own"] == ["PII", "urn:li:glossaryTerm:Sensitive"] and own["inherited"] == []
    inh = encode(chain.tags(sf(OUT, "email")))
    assert inh["own"] == []
    assert [(i["label"], i["from"], i["distance"]) for i in inh["inherited"]] == [
        ("PII", field_urn(SRC, "email"), 2), ("urn:li:glossaryTerm:Sensitive", field_urn(SRC, "email"), 2)]
    assert inh["inherited"][0]["path"] == [field_urn(OUT, "email"), field_urn(MID, "email"), field_urn(SRC, "email")]
    assert encode(chain.tags(sf(OUT, "email_hash")))["inherited"] == []  # the hash masks it
    where = {(r["dataset"], r["fieldPath"]): r for r in encode(chain.tagged("PII"))["fields"]}
    assert set(where) == {(SRC, "email"), (MID, "email"), (OUT, "email")}
    assert where[(SRC, "email")]["own"] and where[(OUT, "email")]["from"] == [field_urn(SRC, "email")]
    assert {r["fieldPath"] for r in encode(chain.tagged("urn:li:glossaryTerm:Sensitive"))["fields"]} == {"email"}


@WITH_MEMORY
def test_hand_set_tags_propagate_and_follow_edge_changes(chain) -> None:
    assert chain.tag(sf(SRC, "country"), add=["urn:li:tag:Geo"]) == ["Geo"]
    assert encode(chain.tags(sf(MID, "country")))["inherited"][0]["label"] == "Geo"
    # the lineage of mid changes: country no longer comes from src, and the tag no longer flows
    ingest(chain, lineage_event(MID, [(sf(MID, "email"), [sf(SRC, "email")])], 3))
    assert encode(chain.tags(sf(MID, "country")))["inherited"] == []
    assert chain.tag(sf(SRC, "country"), remove=["Geo"]) == []
    assert encode(chain.tagged("Geo"))["fields"] == []


@WITH_MEMORY
def test_indirect_edges_carry_tags_only_when_asked(graph) -> None:
    ol = json.loads((SOURCES / "02_openlineage_active_users.json").read_text())
    ingest(graph, ol)
    gold = "urn:li:dataset:(urn:li:dataPlatform:s3,lake/gold/active_users,PROD)"
    users = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.public.users,PROD)"
    graph.tag(field_urn(users, "country"), add=["Geo"])
    assert {r["fieldPath"] for r in encode(graph.tagged("PII"))["fields"] if r["dataset"] == gold} == {"email"}  # not email_sha
    assert [r for r in encode(graph.tagged("Geo"))["fields"] if r["dataset"] == gold] == []
    assert {r["fieldPath"] for r in encode(graph.tagged("Geo", indirect=True))["fields"] if r["dataset"] == gold} == {
        "user_id", "email", "email_sha", "signup_day"}


def test_cli_tag_tags_tagged_and_lineage_summary(graph, monkeypatch) -> None:
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()

    def run(*args, code=0):
        res = runner.invoke(app, list(args))
        assert res.exit_code == code, res.output
        return res

    try:
        res = json.loads(run("ingest", str(SOURCES), "--json").stdout)
        assert res["rejected"] == 0 and res["events"] == 2
        profiles = "urn:li:dataset:(urn:li:dataPlatform:cdap,default.normalized_user_profiles,PROD)"
        users = "urn:li:dataset:(urn:li:dataPlatform:cdap,default.users,PROD)"
        run("tag", field_urn(users, "email"), "PII")
        tags = json.loads(run("tags", field_urn(profiles, "email"), "--json").stdout)
        assert tags["inherited"][0]["from"] == field_urn(users, "email")
        assert "users.email" in run("tags", field_urn(profiles, "email")).stdout
        tagged = json.loads(run("tagged", "PII", "--json").stdout)
        assert tagged["label"] == "PII" and tagged["partial"] is False and tagged["reason"] is None
        assert {r["fieldPath"] for r in tagged["fields"]} == {"email"} and len(tagged["fields"]) == 4  # 2 + 2
        inc = json.loads(run("lineage-summary", field_urn(profiles, "name"), "--direction", "incoming",
                             "--start", "2025-01-01", "--end", "2025-01-02T00:00:00Z", "--json").stdout)
        assert inc["summary"] == [{"dataset": users, "fields": ["first_name", "last_name"]}]
        assert [o["name"] for o in inc["operations"][0]["operations"]] == ["read", "concat", "write"]
        empty = json.loads(run("lineage-summary", field_urn(profiles, "name"), "--start", "2025-02-01",
                               "--json").stdout)
        assert empty["summary"] == []
        text = run("lineage-summary", field_urn(users, "first_name"), "--direction", "outgoing").stdout
        assert "normalized_user_profiles" in text and "dropped by" in text and "dropFirst" in text
        assert "expected incoming or outgoing" in run("lineage-summary", field_urn(users, "id"), "--direction",
                                                      "up", code=3).stderr
        assert "ISO 8601" in run("lineage-summary", field_urn(users, "id"), "--start", "soon", code=3).stderr
    finally:
        run("query", "MATCH (n) DETACH DELETE n", "--write")


# --- propagation that is complete, or says it is not ---------------------------------------------------------------

HOPS = 60
LINKS = [ds(f"db.link{i:02d}") for i in range(HOPS + 1)]


@pytest.fixture
def long_chain(graph):
    """link00.v (PII) -> link01.v -> ... -> link60.v: 60 identity hops, past the lineage walks' depth cap of 50."""
    ingest(graph, tagged_schema(LINKS[0], {"v": (["PII"], [])}, 1),
           *(tagged_schema(u, {"v": ([], [])}, 1) for u in LINKS[1:]),
           *(lineage_event(down, [(sf(down, "v"), [sf(up, "v")])], 2) for up, down in zip(LINKS, LINKS[1:],
                                                                                           strict=False)))
    return graph


@WITH_MEMORY
def test_tags_and_tagged_walk_as_far_as_lineage_goes(long_chain) -> None:
    last = encode(long_chain.tags(sf(LINKS[-1], "v")))
    assert [(i["label"], i["from"], i["distance"]) for i in last["inherited"]] == [
        ("PII", field_urn(LINKS[0], "v"), HOPS)]
    assert last["partial"] is False and last["reason"] is None
    assert last["inherited"][0]["path"] == [field_urn(u, "v") for u in reversed(LINKS)]
    where = encode(long_chain.tagged("PII"))
    assert where["label"] == "PII" and where["partial"] is False and where["reason"] is None
    assert [(r["urn"], r["distance"]) for r in where["fields"]] == [(field_urn(u, "v"), i) for i, u in enumerate(LINKS)]
    assert where["fields"][-1]["from"] == [field_urn(LINKS[0], "v")] and not where["fields"][-1]["own"]


@WITH_MEMORY
def test_tag_walks_out_of_time_or_at_the_depth_asked_say_they_are_partial(long_chain) -> None:
    last = encode(long_chain.tags(sf(LINKS[-1], "v"), time_budget_s=1e-9))
    assert last["partial"] is True and "time budget" in last["reason"] and last["inherited"] == []
    where = encode(long_chain.tagged("PII", time_budget_s=1e-9))
    assert where["partial"] is True and "time budget" in where["reason"]
    assert [r["urn"] for r in where["fields"]] == [field_urn(LINKS[0], "v")]  # the source: found before the walk
    # a depth asked for: partial when more lineage lies beyond it, complete when the walk ends within it
    short = encode(long_chain.tags(sf(LINKS[-1], "v"), depth=10))
    assert short["partial"] is True and short["reason"] == "depth 10 reached; more lineage lies beyond"
    assert short["inherited"] == []
    enough = encode(long_chain.tags(sf(LINKS[10], "v"), depth=10))
    assert enough["partial"] is False and [i["distance"] for i in enough["inherited"]] == [10]
    assert encode(long_chain.tagged("PII", depth=HOPS))["partial"] is False
    cut = encode(long_chain.tagged("PII", depth=HOPS - 1))
    assert cut["partial"] is True and cut["reason"] == f"depth {HOPS - 1} reached; more lineage lies beyond"
    assert len(cut["fields"]) == HOPS


@WITH_MEMORY
def test_a_field_never_inherits_from_itself_through_a_cycle(graph) -> None:
    a, b = ds("db.a"), ds("db.b")
    ingest(graph, tagged_schema(a, {"x": (["PII"], [])}, 1), tagged_schema(b, {"x": ([], [])}, 1),
           lineage_event(b, [(sf(b, "x"), [sf(a, "x")])], 2), lineage_event(a, [(sf(a, "x"), [sf(b, "x")])], 2))
    graph.tag(sf(b, "x"), add=["Geo"])
    mine = encode(graph.tags(sf(a, "x")))
    assert mine["own"] == ["PII"] and mine["partial"] is False
    assert [(i["label"], i["from"], i["distance"]) for i in mine["inherited"]] == [("Geo", field_urn(b, "x"), 1)]
    theirs = encode(graph.tags(sf(b, "x")))
    assert [(i["label"], i["from"], i["distance"]) for i in theirs["inherited"]] == [("PII", field_urn(a, "x"), 1)]
    where = encode(graph.tagged("PII"))
    assert [(r["urn"], r["own"], r["from"], r["distance"]) for r in where["fields"]] == [
        (field_urn(a, "x"), True, [field_urn(a, "x")], 0), (field_urn(b, "x"), False, [field_urn(a, "x")], 1)]
    assert where["partial"] is False


@WITH_MEMORY
def test_tagged_walks_once_from_many_sources(graph) -> None:
    """Three PII sources feeding one another and one sink: each field lists every source that reaches it (never
    itself twice), at the distance of the nearest."""
    s1, s2, s3, sink = ds("db.s1"), ds("db.s2"), ds("db.s3"), ds("db.sink")
    ingest(graph, *(tagged_schema(u, {"x": (["PII"], [])}, 1) for u in (s1, s2, s3)),
           tagged_schema(sink, {"x": ([], [])}, 1),
           lineage_event(s2, [(sf(s2, "x"), [sf(s1, "x")])], 2),
           lineage_event(sink, [(sf(sink, "x"), [sf(s2, "x"), sf(s3, "x")])], 2))
    rows = {r["urn"]: (r["own"], r["from"], r["distance"]) for r in encode(graph.tagged("PII"))["fields"]}
    f1, f2, f3, fs = (field_urn(u, "x") for u in (s1, s2, s3, sink))
    assert rows == {f1: (True, [f1], 0), f2: (True, [f2, f1], 0), f3: (True, [f3], 0), fs: (False, [f1, f2, f3], 1)}


# --- tags and terms that do not propagate --------------------------------------------------------------------------


@WITH_MEMORY
def test_configured_non_propagating_labels_stay_on_their_fields(chain) -> None:
    from fieldgraph.graph import LineageGraph

    g = LineageGraph(chain.store, non_propagating=["urn:li:tag:PII", " "])
    src = encode(g.tags(sf(SRC, "email")))
    assert src["own"] == ["PII", "urn:li:glossaryTerm:Sensitive"] and src["local"] == ["PII"]
    assert [i["label"] for i in encode(g.tags(sf(OUT, "email")))["inherited"]] == ["urn:li:glossaryTerm:Sensitive"]
    assert [r["urn"] for r in encode(g.tagged("PII"))["fields"]] == [field_urn(SRC, "email")]
    assert {r["fieldPath"] for r in encode(g.tagged("urn:li:glossaryTerm:Sensitive"))["fields"]} == {"email"}
    terms = LineageGraph(chain.store, non_propagating=["urn:li:glossaryTerm:Sensitive"])
    assert [r["urn"] for r in encode(terms.tagged("urn:li:glossaryTerm:Sensitive"))["fields"]] == [field_urn(SRC, "email")]
    assert [i["label"] for i in encode(terms.tags(sf(OUT, "email")))["inherited"]] == ["PII"]
    assert encode(chain.tags(sf(SRC, "email")))["local"] == []  # the graph without the setting: both propagate
    # a hand-set tag named by the setting stays on its field too
    g.tag(sf(SRC, "country"), add=["PII"])
    assert encode(g.tags(sf(MID, "country")))["inherited"] == []
    assert [i["label"] for i in encode(chain.tags(sf(MID, "country")))["inherited"]] == ["PII"]


@WITH_MEMORY
def test_hand_set_tags_that_do_not_propagate(chain) -> None:
    country = sf(SRC, "country")
    now = chain.tag(country, add=["Geo"], propagate=False)
    assert now == ["Geo"] and now.local == ["Geo"]
    assert encode(chain.tags(country))["own"] == ["Geo"] and encode(chain.tags(country))["local"] == ["Geo"]
    assert encode(chain.tags(sf(MID, "country")))["inherited"] == []
    assert encode(chain.tagged("Geo")) == {"label": "Geo", "partial": False, "reason": None, "fields": [
        {"urn": field_urn(SRC, "country"), "own": True, "from": [field_urn(SRC, "country")], "distance": 0,
         "label": "Geo", "dataset": SRC, "fieldPath": "country"}]}
    # added again without propagate=False: it moves to the labels that propagate
    now = chain.tag(country, add=["Geo", "Region"])
    assert now == ["Geo", "Region"] and now.local == []
    assert [i["label"] for i in encode(chain.tags(sf(MID, "country")))["inherited"]] == ["Geo", "Region"]
    chain.tag(country, add=["Geo"], propagate=False)
    assert [i["label"] for i in encode(chain.tags(sf(MID, "country")))["inherited"]] == ["Region"]
    assert chain.tag(country, remove=["Geo", "Region"]) == [] and encode(chain.tags(country))["own"] == []
    # a field's own label that does not propagate does not stop the same label flowing through it from upstream
    chain.tag(sf(MID, "email"), add=["PII"], propagate=False)
    rows = {r["urn"]: (r["own"], r["from"]) for r in encode(chain.tagged("PII"))["fields"]}
    assert rows[field_urn(MID, "email")] == (True, [field_urn(MID, "email"), field_urn(SRC, "email")])
    assert rows[field_urn(OUT, "email")] == (False, [field_urn(SRC, "email")])


def test_cli_partial_tag_walks_and_non_propagating_tags(chain, monkeypatch, tmp_path) -> None:
    from fieldgraph.ingest.cli.boundary import EXIT_PARTIAL

    monkeypatch.setenv("FIELDGRAPH_GRAPH", chain.uri)
    monkeypatch.delenv("FIELDGRAPH_NON_PROPAGATING", raising=False)
    monkeypatch.delenv("FIELDGRAPH_CONFIG", raising=False)
    runner = CliRunner()

    def run(*args, code=0, env=None):
        res = runner.invoke(app, list(args), env=env)
        assert res.exit_code == code, res.output
        return res

    where = json.loads(run("tagged", "PII", "--json").stdout)
    assert where["partial"] is False and len(where["fields"]) == 3
    cut = json.loads(run("tagged", "PII", "--json", "--time-budget", "1e-9", code=EXIT_PARTIAL).stdout)
    assert cut["label"] == "PII" and cut["partial"] is True and "time budget" in cut["reason"]
    assert "partial result: time budget" in run("tagged", "PII", "--time-budget", "1e-9", code=EXIT_PARTIAL).stdout
    tags = json.loads(run("tags", sf(OUT, "email"), "--json", "--time-budget", "1e-9", code=EXIT_PARTIAL).stdout)
    assert tags["partial"] is True and tags["inherited"] == []

    # --no-propagate, then --remove
    assert "Geo (not propagated)" in run("tag", sf(SRC, "country"), "Geo", "--no-propagate").stdout
    own = json.loads(run("tags", sf(SRC, "country"), "--json").stdout)
    assert own["own"] == own["local"] == ["Geo"]
    assert "(own, not propagated)" in run("tags", sf(SRC, "country")).stdout
    assert json.loads(run("tags", sf(MID, "country"), "--json").stdout)["inherited"] == []
    assert [r["urn"] for r in json.loads(run("tagged", "Geo", "--json").stdout)["fields"]] == [
        field_urn(SRC, "country")]
    assert "(no hand-set tags)" in run("tag", sf(SRC, "country"), "urn:li:tag:Geo", "--remove").stdout
    assert json.loads(run("tags", sf(SRC, "country"), "--json").stdout)["own"] == []

    # the setting, from the environment or the config file FIELDGRAPH_CONFIG names (the environment first)
    config = tmp_path / "fieldgraph.toml"
    config.write_text('non_propagating = ["urn:li:glossaryTerm:Sensitive", "PII"]\n')
    for env in ({"FIELDGRAPH_NON_PROPAGATING": "urn:li:glossaryTerm:Sensitive,PII"},
                {"FIELDGRAPH_CONFIG": str(config)}):
        out = json.loads(run("tags", sf(OUT, "email"), "--json", env=env).stdout)
        assert out["inherited"] == [] and out["partial"] is False
        src = json.loads(run("tags", sf(SRC, "email"), "--json", env=env).stdout)
        assert src["local"] == src["own"] == ["PII", "urn:li:glossaryTerm:Sensitive"]
        assert len(json.loads(run("tagged", "PII", "--json", env=env).stdout)["fields"]) == 1
    both = {"FIELDGRAPH_CONFIG": str(config), "FIELDGRAPH_NON_PROPAGATING": "PII"}
    assert [i["label"] for i in json.loads(run("tags", sf(OUT, "email"), "--json", env=both).stdout)["inherited"]] \
        == ["urn:li:glossaryTerm:Sensitive"]


def test_worker_config_reads_the_setting() -> None:
    from fieldgraph.ingest.config import GraphConfig, load_config

    cfg = load_config(env={"FIELDGRAPH_NON_PROPAGATING": "Deprecated, urn:li:glossaryTerm:Internal.Draft"})
    assert cfg.graph_config().non_propagating == ("Deprecated", "urn:li:glossaryTerm:Internal.Draft")
    assert GraphConfig.from_env({}).non_propagating == ()
    assert GraphConfig.from_env({"FIELDGRAPH_NON_PROPAGATING": "X"}, non_propagating=["Y"]).non_propagating == ("Y",)


def test_service_tag_endpoints_say_partial(long_chain) -> None:
    from fieldgraph.ingest.config import ServeConfig

    from .test_service import served

    with served(long_chain, ServeConfig(rate_limit=0)) as service:
        where = service.ok("/api/v1/tagged", label="PII")
        assert where["partial"] is False and len(where["fields"]) == HOPS + 1
        cut = service.ok("/api/v1/tagged", label="PII", depth=5)
        assert cut["partial"] is True and cut["reason"] == "depth 5 reached; more lineage lies beyond"
        last = service.ok("/api/v1/tags", field=sf(LINKS[-1], "v"))
        assert [i["distance"] for i in last["inherited"]] == [HOPS] and last["partial"] is False
