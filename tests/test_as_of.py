"""Lineage as of any instant, on both backends: the property that defines it, and the commands that ask it.

The property: replay a generated history (schemas replaced, fields removed and listed again, types and tags
changed, schemas deleted, lineage rewired and deleted from two aspects, job runs and a job-lineage delete,
references to fields no schema lists yet), shuffled so that events arrive late and out of order, in random
batches. Then, at many instants T, every answer as of T (fields, upstream, downstream, tags, tagged) equals the
present answer of a fresh graph fed only the events up to T, in the same arrival order.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.changes import AspectDelete, Change, EdgeProps, FieldEdge, JobLineageChange
from fieldgraph.graph import NotFoundError
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.sources import decode_event

from .conftest import WITH_MEMORY, column, ds, mcp, sf

pytestmark = pytest.mark.integration

S1, S2, D1, D2 = ds("src.one"), ds("src.two"), ds("dw.mid"), ds("dw.out")
POOL = ["a", "b", "c", "d", "e"]
TYPES = [("StringType", "string"), ("NumberType", "long"), ("BooleanType", "boolean")]
JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,etl,PROD),load_out)"


def schema(urn: str, fields: dict[str, tuple[int, tuple[str, ...]]], ts: int) -> dict[str, Any]:
    cols = []
    for name, (t, tags) in sorted(fields.items()):
        c = column(name, *TYPES[t])
        if tags:
            c["globalTags"] = {"tags": [{"tag": f"urn:li:tag:{tag}"} for tag in tags]}
        cols.append(c)
    return mcp(urn, "schemaMetadata", {"schemaName": urn, "platform": "urn:li:dataPlatform:hive", "version": 0,
                                       "hash": "", "platformSchema": {"com.linkedin.schema.OtherSchema": {
                                           "rawSchema": ""}}, "fields": cols}, ts)


def history(seed: int) -> list[Change]:
    """A random history of typed changes, each aspect's versions at distinct times, in a shuffled arrival order."""
    rng = random.Random(seed)
    times = iter(rng.sample(range(100, 2000), 200))
    events: list[dict[str, Any]] = []
    for urn in (S1, S2, D1, D2):
        for _ in range(rng.randint(1, 4)):
            fields = {n: (rng.randrange(3), ("PII",) if rng.random() < 0.3 else ())
                      for n in rng.sample(POOL, rng.randint(1, 4))}
            events.append(schema(urn, fields, next(times)))
    if rng.random() < 0.7:
        events.append(mcp(S2, "schemaMetadata", None, next(times), "DELETE"))
    for down, ups in ((D1, (S1, S2)), (D2, (D1, S1))):
        for _ in range(rng.randint(1, 4)):
            edges = [{"upstreamType": "FIELD_SET", "upstreams": [sf(rng.choice(ups), u) for u in rng.sample(POOL, 2)],
                      "downstreamType": "FIELD", "downstreams": [sf(down, rng.choice(POOL))],
                      "transformOperation": rng.choice(["IDENTITY", "SUM", "MASK"])} for _ in range(rng.randint(1, 3))]
            events.append(mcp(down, "upstreamLineage", {"upstreams": [], "fineGrainedLineages": edges}, next(times)))
        if rng.random() < 0.5:
            events.append(mcp(down, "upstreamLineage", None, next(times), "DELETE"))
    for _ in range(rng.randint(1, 3)):  # the RFC's aspect, a second source of D2's lineage
        events.append(mcp(D2, "datasetUpstreamLineage", {"fieldMappings": [
            {"sourceFields": [sf(S2, rng.choice(POOL))], "destinationField": sf(D2, rng.choice(POOL))}]}, next(times)))
    changes = [c for e in events for c in decode_event(e)]
    for i in range(rng.randint(1, 4)):  # job runs (additive) and a delete of the job's lineage
        edges = tuple(FieldEdge(sf(D2, rng.choice(POOL)), sf(S1, rng.choice(POOL)),
                                EdgeProps("openlineage", "IDENTITY", run=f"run-{i}")) for _ in range(2))
        changes.append(JobLineageChange(D2, JOB, "openlineage", f"run-{i}", edges, ts=next(times)))
    if rng.random() < 0.5:
        changes.append(AspectDelete(D2, "jobLineage", next(times)))
    rng.shuffle(changes)
    return changes


def ingest_in_batches(g: Any, changes: list[Change], rng: random.Random) -> None:
    i = 0
    while i < len(changes):
        n = rng.choice([1, 2, 5, 50])
        g.write(changes[i:i + n])
        i += n


EDGE_KEYS = ("source", "transformation", "kind", "subtype", "masking")


def answers(g: Any, as_of: int | None) -> dict[str, Any]:
    """Every question the commands ask, of every dataset and field of the history."""
    out: dict[str, Any] = {}
    for urn in (S1, S2, D1, D2):
        out[f"fields {urn}"] = [(r["fieldPath"], bool(r["removed"]), bool(r["placeholder"]), r["type"],
                                 r["nativeDataType"]) for r in encode(g.fields(urn, as_of=as_of))]
        for name in POOL:
            f = sf(urn, name)
            try:
                up = g.upstream(f, as_of=as_of)
                down = g.downstream(f, as_of=as_of)
                tags = encode(g.tags(f, as_of=as_of))
            except NotFoundError:
                continue
            for key, res in ((f"up {f}", up), (f"down {f}", down)):
                out[key] = sorted((h.from_urn, h.urn, h.depth, h.placeholder, h.removed,
                                   tuple(h.edge.get(k) for k in EDGE_KEYS)) for h in res.hops)
            out[f"tags {f}"] = (sorted(tags["own"]), sorted((i["label"], i["from"], i["distance"])
                                                            for i in tags["inherited"]))
    out["tagged PII"] = sorted((r["urn"], r["own"], r["distance"]) for r in encode(g.tagged("PII", as_of=as_of))["fields"])
    return out


def instants(changes: list[Change], rng: random.Random) -> list[int]:
    ts = sorted({c.ts for c in changes})
    picks = {ts[0] - 1, ts[-1] + 1, *rng.sample(ts, min(6, len(ts)))}
    picks.update(t - 1 for t in rng.sample(ts, min(3, len(ts))))
    return sorted(picks)


@WITH_MEMORY
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_as_of_equals_a_fresh_graph_fed_the_events_up_to_then(graph_factory, seed) -> None:
    rng = random.Random(seed)
    changes = history(seed)
    full = graph_factory.new()
    ingest_in_batches(full, changes, rng)
    seen = {t: answers(full, t) for t in instants(changes, rng)}
    present = answers(full, None)
    assert seen[max(seen)] == present  # after the last event, as of then is now
    for t, got in seen.items():
        fresh = graph_factory.new()  # on Neo4j, the one database emptied: the full graph's answers are taken
        ingest_in_batches(fresh, [c for c in changes if c.ts <= t], rng)
        expected = answers(fresh, None)
        assert got == expected, _first_difference(t, got, expected)
    assert any(v for k, v in present.items() if k.startswith("up ")), "the history made no lineage"


def _first_difference(t: int, got: dict[str, Any], expected: dict[str, Any]) -> str:
    for k in sorted(got.keys() | expected.keys()):
        if got.get(k) != expected.get(k):
            return f"as of {t}, {k}:\n  as of: {got.get(k)}\n  fresh: {expected.get(k)}"
    return ""


# --- the commands ------------------------------------------------------------------------------------------


def test_lineage_commands_take_as_of_and_diff_lineage_shows_what_changed(graph) -> None:
    a, b = ds("db.a"), ds("db.b")
    for ev in (schema(a, {"x": (0, ("PII",)), "y": (0, ())}, 1_000), schema(b, {"p": (0, ())}, 1_000),
               mcp(b, "upstreamLineage", {"upstreams": [], "fineGrainedLineages": [
                   {"upstreamType": "FIELD_SET", "upstreams": [sf(a, "x")], "downstreamType": "FIELD",
                    "downstreams": [sf(b, "p")], "transformOperation": "IDENTITY"}]}, 2_000),
               mcp(b, "upstreamLineage", {"upstreams": [], "fineGrainedLineages": [
                   {"upstreamType": "FIELD_SET", "upstreams": [sf(a, "y")], "downstreamType": "FIELD",
                    "downstreams": [sf(b, "p")], "transformOperation": "IDENTITY"}]}, 3_000),
               schema(a, {"y": (1, ())}, 4_000)):
        graph.write(decode_event(ev))
    run = CliRunner()

    def cli(*args: str, code: int = 0) -> Any:
        res = run.invoke(app, [*args, "--graph", graph.uri, "--json"])
        assert res.exit_code == code, res.output
        return json.loads(res.stdout)

    p = sf(b, "p")
    then = "1970-01-01T00:00:02.500Z"  # 2 500 ms: p derived from x
    assert [h["fieldPath"] for h in cli("lineage", "upstream", p, "--as-of", then)["hops"]] == ["x"]
    assert [h["fieldPath"] for h in cli("lineage", "upstream", p)["hops"]] == ["y"]
    assert [h["fieldPath"] for h in cli("lineage", "downstream", sf(a, "x"), "--as-of", "2500")["hops"]] == ["p"]
    assert cli("lineage", "downstream", sf(a, "x"))["hops"] == []
    assert [i["label"] for i in cli("tags", p, "--as-of", then)["inherited"]] == ["PII"]
    assert cli("tags", p)["inherited"] == []
    assert [r["fieldPath"] for r in cli("tagged", "PII", "--as-of", then)["fields"]] == ["x", "p"]
    fields_then = {r["fieldPath"]: (r["removed"], r["type"]) for r in cli("lineage", "fields", a, "--as-of", then)}
    fields_now = {r["fieldPath"]: (r["removed"], r["type"]) for r in cli("lineage", "fields", a)}
    assert fields_then == {"x": (False, "StringType"), "y": (False, "StringType")}
    assert fields_now == {"x": (True, "StringType"), "y": (False, "NumberType")}
    impact = cli("impact", a, "--as-of", then)
    assert impact["datasets"] == {b: ["p"]} and cli("impact", a, "--as-of", "500")["datasets"] == {}
    path = cli("lineage", "path", p, sf(a, "x"), "--as-of", then)
    assert path["path"] == [field_urn(b, "p"), field_urn(a, "x")]
    assert cli("lineage", "path", p, sf(a, "x"), code=4)["path"] == []  # not found (now)

    diff = cli("diff-lineage", a, "--from", "1970-01-01T00:00:02Z", "--to", "1970-01-01T00:00:05Z")
    assert diff["fields"] == {"added": [], "removed": ["x"], "changed": [
        {"fieldPath": "y", "from": {"type": "StringType", "nativeDataType": "string"},
         "to": {"type": "NumberType", "nativeDataType": "long"}}]}
    assert [(e["direction"], e["up"]) for e in diff["edges"]["removed"]] == [("out", field_urn(a, "x"))]
    assert [(e["direction"], e["up"]) for e in diff["edges"]["added"]] == [("out", field_urn(a, "y"))]
    table = run.invoke(app, ["diff-lineage", b, "--from", "2000", "--to", "3000", "--graph", graph.uri])
    assert table.exit_code == 0 and "removed" in table.output and "added" in table.output, table.output
    bad = run.invoke(app, ["lineage", "upstream", p, "--as-of", "last tuesday", "--graph", graph.uri])
    assert bad.exit_code == 3 and "--as-of 'last tuesday'" in bad.output


def test_an_edge_each_upstream_lineage_version_repeats_keeps_its_interval(graph) -> None:
    """DataHub sends upstreamLineage again on every ingestion run: an edge it repeats is one fact holding since the
    first version (not a past edge per run), and one it drops ends at that version."""
    from .conftest import lineage_event, schema_event

    a, b = ds("runs.a"), ds("runs.b")
    events = [schema_event(a, ["x", "y"], 1), schema_event(b, ["x", "y"], 1)]
    events += [lineage_event(b, [(sf(b, "x"), [sf(a, "x")]), (sf(b, "y"), [sf(a, "y")])], ts) for ts in (10, 20, 30)]
    events.append(lineage_event(b, [(sf(b, "x"), [sf(a, "x")])], 40))
    graph.ingest([c for e in events for c in decode_event(e)], batch_events=1)
    rows = graph.query("MATCH (d)-[e:DataDerivedFrom|PreviouslyDerivedFrom]->() "
                       "RETURN d.fieldPath AS f, type(e) AS t, e.validFrom AS since, e.validTo AS until")
    assert sorted((r["f"], r["t"], r["since"], r["until"]) for r in rows) == [
        ("x", "DataDerivedFrom", 10, None), ("y", "PreviouslyDerivedFrom", 10, 40)]
