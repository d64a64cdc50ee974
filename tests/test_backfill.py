"""The Spark backfill against `fieldgraph ingest`: a generated history, real Spark (local mode), real FalkorDB.

One SparkSession for the whole test session; small histories. The history covers schema changes, field
removals, schema deletes and re-creation, lineage replaced and deleted, placeholders (unknown fields and
datasets), ambiguous references, equal-stamp ties, out-of-order and duplicate events, and malformed lines.
It stays inside the order-independent semantics (docs/explanation/streaming-and-batch.md): a non-exact reference never changes its
unique target after it is first bound.
"""

from __future__ import annotations

import json
import pickle
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.errors import InputError
from fieldgraph.graph.answers import encode
from fieldgraph.ingest.backfill import CHANGES, BackfillOptions, merge_values, run_backfill
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.inputs import BackfillError, list_inputs
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.times import parse_time

from .conftest import column, dump, lineage_event, mcp, schema_event, sf

pyspark = pytest.importorskip("pyspark")


def ds(name: str) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,{name},PROD)"


def fref(dataset: str, path: str) -> str:
    return f"urn:li:schemaField:({dataset},{path})"


V2 = "[version=2.0].[type=R]"
XS = f"{V2}.[type=string].x"            # "x" resolves to it uniquely, always
YS, YI = f"{V2}.[type=string].y", f"{V2}.[type=int].y"   # "y": ambiguous until YI is removed
ZS, ZL = f"{V2}.[type=string].z", f"{V2}.[type=long].z"  # "z": ambiguous forever


def schema(urn: str, paths: list[str], ts: int, version: int, typ: str = "StringType") -> dict[str, Any]:
    return mcp(urn, "schemaMetadata", {
        "schemaName": urn.split(",")[1], "platform": "urn:li:dataPlatform:hive", "version": version,
        "hash": f"h{version}-{ts}", "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}},
        "fields": [column(p, typ) for p in paths]}, ts)


def lineage(urn: str, edges: list[tuple[str, list[str]]], ts: int, op: str = "IDENTITY") -> dict[str, Any]:
    return mcp(urn, "upstreamLineage", {"upstreams": [], "fineGrainedLineages": [
        {"upstreamType": "FIELD_SET", "upstreams": ups, "downstreamType": "FIELD", "downstreams": [down],
         "transformOperation": op} for down, ups in edges]}, ts)


def history(seed: int, n_tables: int = 6) -> tuple[list[dict[str, Any]], int]:
    """A shuffled history of change events (and the number of events before the malformed lines)."""
    rng = random.Random(seed)
    U, W, GONE = ds("src.u"), ds("src.w"), ds("src.gone")
    ev: list[dict[str, Any]] = [
        schema(U, ["id", YS, YI, XS], 100, 0), schema(U, ["id", YS, XS], 200, 1),    # YI removed
        schema(U, ["id", YS, XS], 250, 1),                                           # re-observed
        schema(W, ["id", ZS, ZL], 100, 0),
        schema(GONE, ["id", "a"], 100, 0), schema(GONE, ["id", "a", "b"], 150, 1),
        mcp(GONE, "schemaMetadata", None, 300, "DELETE"),                            # schema deleted
        # equal stamps, different content: the later arrival wins (kept in this order by the shuffle below)
        schema(ds("src.tie"), ["id", "first"], 100, 0), schema(ds("src.tie"), ["id", "second"], 100, 0),
    ]
    tables = [ds(f"db.t{i}") for i in range(n_tables)]
    for i, t in enumerate(tables):
        base = 1000 * (i + 1)
        v0, v1, v2 = ["id", "a", "b", "c"], ["id", "a", "c", "d"], ["id", "a", "d", "e"]
        ev += [schema(t, v0, base, 0), schema(t, v1, base + 10, 1), schema(t, v2, base + 20, 2)]
        ev.append(schema(t, v2, base + 30, 2))  # MCL re-emitted
        up = tables[i - 1] if i else U
        first = [(fref(t, "a"), [fref(up, "a" if i else "id")]), (fref(t, "b"), [fref(up, "b")])]
        later = [(fref(t, "a"), [fref(up, "a" if i else "id"), fref(U, "x")]), (fref(t, "d"), [fref(U, "y")]),
                 (fref(t, "e"), [fref(W, "z"), fref(up, "nope")]), (fref(t, "c"), [fref(ds("ext.unknown"), "k")]),
                 (fref(t, "ghost"), [fref(GONE, "a")])]
        ev += [lineage(t, first, base + 5), lineage(t, later, base + 25, "TRANSFORM")]
        if i % 3 == 1:
            ev.append(mcp(t, "upstreamLineage", None, base + 40, "DELETE"))        # lineage deleted
            if i == 1:
                ev.append(lineage(t, later[:2], base + 45, "READDED"))             # and added again
        if i % 3 == 2:
            ev.append(lineage(t, first, base + 50, "RESTORED"))                    # replaced again
        if i == n_tables - 1:
            ev.append(mcp(t, "datasetKey", None, base + 60, "DELETE"))            # whole dataset deleted
            ev.append(schema(t, ["id", "reborn"], base + 70, 3))                   # and created again
        ev.append(mcp(t, "datasetUpstreamLineage", {"fieldMappings": [
            {"sourceFields": [fref(up, "id")], "destinationField": fref(t, "id")}]}, base + 8))
    ev += [rng.choice(ev) for _ in range(len(ev) // 4)]  # duplicates
    rng.shuffle(ev)
    ev = _keep_constraints(ev)
    n = len(ev)
    return ev, n


def _is_schema_delete(e: dict[str, Any]) -> bool:
    return e.get("changeType") == "DELETE" and e.get("aspectName") in ("schemaMetadata", "datasetKey")


def _keep_constraints(ev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the tie pair (two versions with one stamp: the later arrival wins) in order; everything else, late
    versions and deletes included, stays shuffled (each version is placed by its time)."""
    out = list(ev)
    ties = [i for i, e in enumerate(out) if "src.tie" in e["entityUrn"]]
    firsts = [i for i in ties if '"first"' in out[i]["aspect"]["value"]]
    seconds = [i for i in ties if '"second"' in out[i]["aspect"]["value"]]
    if firsts and seconds and max(firsts) > min(seconds):  # all "first" copies before all "second" copies
        tie = sorted(ties)
        vals = sorted((out[i] for i in tie), key=lambda e: '"second"' in e["aspect"]["value"])
        for i, e in zip(tie, vals, strict=False):
            out[i] = e
    return out


BAD_LINES = [
    "this is not json",
    json.dumps({"hello": "world"}),
    json.dumps(mcp("urn:li:dataset:(broken", "schemaMetadata", None, 5, "DELETE")),
    json.dumps({**mcp(ds("db.t0"), "schemaMetadata", None, 5), "changeType": "PATCH"}),
]


def write_history(folder: Path, events: list[dict[str, Any]], files: int = 3) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(e) for e in events]
    for i, bad in enumerate(BAD_LINES):
        lines.insert((i + 1) * len(lines) // (len(BAD_LINES) + 1), bad)
    per = -(-len(lines) // files)
    out = []
    for i in range(files):
        p = folder / f"part-{i:03d}.jsonl"
        p.write_text("\n".join(lines[i * per:(i + 1) * per]) + "\n")
        out.append(p)
    return out


# --- fixtures ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from fieldgraph.ingest.backfill import spark_session

    s = spark_session("local[2]", {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"})
    yield s
    s.stop()


@pytest.fixture
def target(graph: Any) -> tuple[str, Any]:
    """The graph a backfill writes to, on either backend: (uri, LineageGraph)."""
    return graph.uri, graph


@pytest.fixture
def graphs(falkordb_graphs: Any) -> Any:
    """``graphs()``: (uri, LineageGraph) of another empty graph on the session's FalkorDB. Where a test compares
    a backfill with a sequential replay, the replay goes here and the backfill to ``target``: on Neo4j that
    also checks the two backends agree."""
    def make() -> tuple[str, Any]:
        g = falkordb_graphs.new()
        return g.uri, g

    return make


def backfill(spark: Any, uri: str, paths: list[Any], **kw: Any) -> Any:
    return run_backfill(BackfillOptions([str(p) for p in paths], graph=uri, partitions=4, batch_size=50, **kw),
                        spark=spark)


def replay(uri: str, paths: list[Any], rejects: Path) -> dict[str, Any]:
    res = CliRunner().invoke(app, ["ingest", *map(str, paths), "--graph", uri, "--rejects", str(rejects),
                                   "--batch", "1", "--json"])
    summary = json.loads(res.stdout)
    assert res.exit_code == (3 if summary["rejected"] else 0), res.output  # 3: some events were rejected
    return summary


def assert_same(got: dict[str, Any], expected: dict[str, Any]) -> None:
    """Equal graph dumps; on a difference, name the nodes and edges only one side has."""
    if got == expected:
        return
    from collections import Counter

    key = lambda x: json.dumps(x, sort_keys=True, default=str)  # noqa: E731
    lines = []
    for part in ("nodes", "edges"):
        a, b = Counter(map(key, got[part])), Counter(map(key, expected[part]))
        lines += [f"backfill only: {x}" for x in sorted(a - b)[:5]] + [f"replay only: {x}" for x in sorted(b - a)[:5]]
    pytest.fail("graphs differ:\n" + "\n".join(lines))


# --- the equivalence --------------------------------------------------------------------------------------

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("seed, split", [(1, None), (2, 300)])
def test_backfill_equals_sequential_replay(spark, target, graphs, tmp_path, monkeypatch, seed, split) -> None:
    """With ``split``, the files are read in splits of about that many bytes (many per file): the same graph,
    counts and rejects (their lines among them) as a replay of the whole files."""
    events, _ = history(seed)
    files = write_history(tmp_path / "events", events)
    if split:
        monkeypatch.setattr("fieldgraph.ingest.inputs.SPLIT_BYTES", split)
        assert all(f.stat().st_size > 5 * split for f in files)
    uri_b, backfilled = target
    uri_r, replayed = graphs()

    report = backfill(spark, uri_b, [tmp_path / "events"], rejects=str(tmp_path / "rejects"))
    summary = replay(uri_r, files, tmp_path / "replay-rejects.jsonl")
    expected = dump(replayed)
    assert_same(dump(backfilled), expected)

    # the graph has what the history is about
    st = replayed.stats()
    assert st.removed_fields > 0 and st.placeholder_fields > 0 and st.ambiguous_references > 0
    assert st.placeholder_datasets > 0 and st.data_derived_from_edges > 0

    # counts; bad records written with their reasons, as `fieldgraph ingest` does
    s = report.to_json()
    assert s["events"] == summary["events"] == len(events) + len(BAD_LINES)
    assert s["rejected"] == summary["rejected"] == len(BAD_LINES)
    assert s["superseded"] > 0 and s["pastEdges"] > 0 and s["kept"] >= summary["aspectChanges"]
    assert s["graph"] == st.to_json() and s["ambiguousReferences"] == st.ambiguous_references
    rejects = [json.loads(line) for f in sorted((tmp_path / "rejects").glob("part-*")) for line in f.open()]
    replay_rejects = [json.loads(line) for line in (tmp_path / "replay-rejects.jsonl").open()]
    assert [(Path(r["file"]).name, r["line"], r["error"]) for r in rejects] == \
        [(Path(r["file"]).name, r["line"], r["error"]) for r in replay_rejects]
    assert rejects[0]["error"].startswith("not JSON")

    # backfill then stream: the worker's code path over the same history changes nothing; nor does a re-run
    replay(uri_b, files, tmp_path / "again.jsonl")
    assert_same(dump(backfilled), expected)
    again = backfill(spark, uri_b, [tmp_path / "events"], rejects=str(tmp_path / "rejects")).to_json()
    assert_same(dump(backfilled), expected)
    assert again["ambiguousReferences"] == st.ambiguous_references  # what the graph holds, counted once
    assert len(list((tmp_path / "rejects").glob("part-*"))) == 2  # the second run's rejects are added


def test_examples_match_replay(spark, target, graphs, tmp_path) -> None:
    from .conftest import EXAMPLES

    uri_b, backfilled = target
    uri_r, replayed = graphs()
    backfill(spark, uri_b, [EXAMPLES])
    replay(uri_r, [EXAMPLES], tmp_path / "r.jsonl")
    assert_same(dump(backfilled), dump(replayed))


def test_sql_and_datahub_queries_backfill_like_a_replay(spark, target, graphs, tmp_path) -> None:
    """SQL events, a DataHub query and the lineage naming it: the same graph as a replay; a statement only the
    schemas refuse (3 values into a 2-column table) is refused when written, the rest written."""
    from .test_sql import TOTALS_SQL, orders_schema, query_event, sql_event, upstream_lineage

    narrow = "urn:li:dataset:(urn:li:dataPlatform:hive,shop.narrow,PROD)"
    events = [orders_schema(), schema_event(narrow, ["a", "b"], 1), query_event(TOTALS_SQL, ts=5),
              upstream_lineage(10), sql_event("INSERT INTO narrow SELECT order_id, amount, status FROM orders"),
              sql_event("CREATE TABLE daily AS SELECT status, COUNT(*) AS n FROM orders GROUP BY status")]
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    uri_b, backfilled = target
    uri_r, replayed = graphs()
    report = backfill(spark, uri_b, [path], rejects=str(tmp_path / "rej")).to_json()
    assert (report["rejected"], report["refusedAtWrite"]) == (0, 1)
    (refused,) = [json.loads(r) for f in (tmp_path / "rej").glob("part-*") for r in f.read_text().splitlines()]
    assert (refused["file"], refused["line"]) == (str(path), 5) and "narrow" in refused["error"]
    assert replay(uri_r, [path], tmp_path / "r.jsonl")["rejected"] == 1
    assert_same(dump(backfilled), dump(replayed))
    assert backfilled.stats().data_derived_from_edges == 8 + 2  # the query's 8 edges, daily's 2


def test_data_jobs_and_field_tags_set_in_datahub_backfill_like_a_replay(spark, target, graphs, tmp_path) -> None:
    """A data job's versions (one dropping a dataset it wrote, then the job deleted and back) and a dataset's
    editableSchemaMetadata versions: the same graph, present and past, as a replay."""
    from .test_datahub_jobs import CLEAN, JOB, MART, RAW, job_io
    from .test_governance import editable_event

    events = [schema_event(RAW, ["id", "email", "country"], 1), schema_event(CLEAN, ["id", "email"], 1),
              schema_event(MART, ["id", "country"], 1),
              job_io([(sf(CLEAN, "email"), [sf(RAW, "email")]), (sf(MART, "country"), [sf(RAW, "country")])],
                     [CLEAN, MART], 10),
              editable_event(RAW, {"email": (["PII"], [])}, 10),
              job_io([(sf(CLEAN, "email"), [sf(RAW, "email")])], [CLEAN], 20),
              editable_event(RAW, {"email": (["PII"], ["Sensitive"]), "country": (["Geo"], [])}, 30),
              editable_event(RAW, {"email": (["Stale"], [])}, 5),  # late: changes nothing
              {"entityType": "dataJob", "entityUrn": JOB, "changeType": "DELETE", "aspectName": "dataJobInputOutput",
               "systemMetadata": {"lastObserved": 40}},
              job_io([(sf(MART, "id"), [sf(RAW, "id")])], [MART], 50)]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    uri_b, backfilled = target
    uri_r, replayed = graphs()
    backfill(spark, uri_b, [path], rejects=str(tmp_path / "rej"))
    replay(uri_r, [path], tmp_path / "r.jsonl")
    assert_same(dump(backfilled), dump(replayed))
    past = backfilled.query("MATCH ()-[e:PreviouslyDerivedFrom]->() RETURN e.validFrom AS f, e.validTo AS t")
    assert sorted((r["f"], r["t"]) for r in past) == [(10, 20), (10, 40)]
    assert encode(backfilled.tags(sf(RAW, "country")))["own"] == ["Geo"]


def _avro_file(path: Path, events: list[dict[str, Any]], bad_value: bool = False) -> None:
    """An Avro container file of MCP records (DataHub's MetadataChangeProposal, the fields fieldgraph reads)."""
    import fastavro

    sch = {"type": "record", "name": "MetadataChangeProposal", "namespace": "com.linkedin.pegasus2avro.mxe",
           "fields": [
               {"name": "entityType", "type": "string"},
               {"name": "entityUrn", "type": ["null", "string"], "default": None},
               {"name": "changeType", "type": {"type": "enum", "name": "ChangeType",
                                               "symbols": ["UPSERT", "CREATE", "UPDATE", "DELETE", "PATCH"]}},
               {"name": "aspectName", "type": ["null", "string"], "default": None},
               {"name": "aspect", "type": ["null", {"type": "record", "name": "GenericAspect", "fields": [
                   {"name": "value", "type": "bytes"}, {"name": "contentType", "type": "string"}]}],
                "default": None},
               {"name": "systemMetadata", "type": ["null", {"type": "record", "name": "SystemMetadata", "fields": [
                   {"name": "lastObserved", "type": ["long", "null"], "default": 0}]}], "default": None}]}
    recs = []
    for e in events:
        r = dict(e)
        if r.get("aspect"):
            r["aspect"] = {"value": r["aspect"]["value"].encode(), "contentType": "application/json"}
        recs.append(r)
    if bad_value:
        recs.append({**recs[0], "aspect": {"value": b"{not json", "contentType": "application/json"}})
    with path.open("wb") as fh:
        fastavro.writer(fh, fastavro.parse_schema(sch), recs)


def test_avro_parquet_and_json_arrays(spark, graphs, tmp_path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    events, _ = history(5, n_tables=3)
    half = len(events) // 2
    uri_r, replayed = graphs()
    files = write_history(tmp_path / "jsonl", events, files=1)
    replay(uri_r, files, tmp_path / "r.jsonl")
    expected = dump(replayed)

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    _avro_file(mixed / "a-000.avro", events[:half], bad_value=True)
    pq.write_table(pa.table({"key": [e["entityUrn"] for e in events[half:]],
                             "value": [json.dumps(e) for e in events[half:]] + []}), mixed / "b-001.parquet")
    uri_b, backfilled = graphs()
    report = backfill(spark, uri_b, [mixed], rejects=str(tmp_path / "rej"))
    assert_same(dump(backfilled), expected)
    s = report.to_json()
    assert s["events"] == len(events) + 1 and s["rejected"] == 1
    (rej,) = [json.loads(x) for f in (tmp_path / "rej").glob("part-*") for x in f.open()]
    assert rej["file"].endswith("a-000.avro") and rej["line"] == half + 1 and "not JSON" in rej["error"]

    # one JSON array file, format forced
    arr = tmp_path / "dump.txt"
    arr.write_text(json.dumps(events, indent=1))
    uri_a, arrayed = graphs()
    backfill(spark, uri_a, [arr], format="json")
    assert_same(dump(arrayed), expected)


def test_since_until_window(spark, graphs, tmp_path) -> None:
    events, _ = history(3, n_tables=3)
    since, until = 2000, 3045
    inside = [e for e in events if since <= e["systemMetadata"]["lastObserved"] < until]
    uri_b, backfilled = graphs()
    uri_r, replayed = graphs()
    write_history(tmp_path / "all", events, files=2)
    replay(uri_r, write_history(tmp_path / "inside", inside, files=1), tmp_path / "r.jsonl")
    report = backfill(spark, uri_b, [tmp_path / "all"], since=since, until=until, rejects=str(tmp_path / "rej"))
    assert_same(dump(backfilled), dump(replayed))
    assert report.to_json()["eventsOutOfWindow"] == len(events) - len(inside)


# --- pure parts and bad input (no Spark) -------------------------------------------------------------------


def _changes(*events: dict[str, Any]) -> list[Any]:
    return [c for e in events for c in decode_event(e)]


def test_every_version_is_kept_in_arrival_order_whatever_the_grouping() -> None:
    t, u = ds("p.t"), ds("p.u")
    e1 = [(fref(t, "a"), [fref(u, "a")])]
    v = _changes(schema(t, ["a", "b"], 10, 0), schema(t, ["a", "c"], 20, 1), mcp(t, "schemaMetadata", None, 15, "DELETE"),
                 lineage(t, e1, 5, "OLD"), mcp(t, "upstreamLineage", None, 8, "DELETE"), lineage(t, e1, 30, "A"))
    items = [((0, "f", i, 0), pickle.dumps(c)) for i, c in enumerate(v)]
    vals = [(CHANGES, [x]) for x in items + items[:2]]  # the first two read twice
    random.Random(1).shuffle(vals)
    acc = vals[0]
    for x in vals[1:]:
        acc = merge_values(acc, x)
    assert [pickle.loads(c) for _, c in acc[1]] == v  # nothing pruned: each version holds over its own interval


def test_bad_options(tmp_path) -> None:
    with pytest.raises(BackfillError, match="no such file"):
        list_inputs([str(tmp_path / "missing")])
    (tmp_path / "x.bin").write_text("")
    with pytest.raises(BackfillError, match="pass --format"):
        list_inputs([str(tmp_path / "x.bin")])
    with pytest.raises(BackfillError, match="--format 'xml'"):
        list_inputs([str(tmp_path)], "xml")
    with pytest.raises(InputError, match="--until 'yesterday'"):
        parse_time("yesterday", "--until")
    assert parse_time("1970-01-01T00:00:01Z") == 1000 and parse_time("1234") == 1234
    res = CliRunner().invoke(app, ["backfill", str(tmp_path / "missing")])
    assert res.exit_code == 3 and "no such file" in res.output
    res = CliRunner().invoke(app, ["backfill", str(tmp_path), "--since", "soon"])
    assert res.exit_code == 3 and "--since 'soon'" in res.output


def test_avro_files_in_datahubs_own_schema_read_as_their_json_form(tmp_path) -> None:
    """A container file of MCEs in DataHub's MetadataChangeEvent schema (snapshot and aspects are unions of
    records) gives the changes the same events give as JSON."""
    import fastavro

    m = pytest.importorskip("datahub.metadata.schema_classes")
    from datahub.metadata.schemas import getMetadataChangeEventSchema

    from fieldgraph.ingest.inputs import raw_events

    urn = "urn:li:dataset:(urn:li:dataPlatform:hive,db.orders,PROD)"
    mces = [m.MetadataChangeEventClass(proposedSnapshot=m.DatasetSnapshotClass(urn=urn, aspects=[
        m.SchemaMetadataClass(schemaName="orders", platform="urn:li:dataPlatform:hive", version=v, hash="",
                              platformSchema=m.OtherSchemaClass(rawSchema=""),
                              fields=[m.SchemaFieldClass(fieldPath=p, nativeDataType="string",
                                                         type=m.SchemaFieldDataTypeClass(m.StringTypeClass()))
                                      for p in ("id", f"v{v}")]),
        m.StatusClass(removed=False)])) for v in (1, 2)]
    path = tmp_path / "mce.avro"
    with path.open("wb") as fh:
        fastavro.writer(fh, fastavro.parse_schema(json.loads(getMetadataChangeEventSchema())),
                        [e.to_obj(tuples=True) for e in mces])
    raws = list(raw_events(str(path), path.read_bytes()))
    assert [r.error for r in raws] == [None, None]
    assert [decode_event(r.event) for r in raws] == [decode_event(json.loads(json.dumps(e.to_obj()))) for e in mces]


def test_a_one_line_json_array_keeps_every_event(spark, target, graphs, tmp_path) -> None:
    """``json.dump(events)``: every event on line 1. Two versions of one dataset there are two events, in order
    (they were one ordinal, and the backfill kept one of them)."""
    t = ds("one.t")
    events = [schema_event(t, ["x", "y"], 10), schema_event(t, ["x", "z"], 20, version=1),
              lineage_event(t, [(sf(t, "z"), [sf(ds("one.up"), "a")])], 30)]
    path = tmp_path / "compact.json"
    path.write_text(json.dumps(events))
    uri_b, backfilled = target
    uri_r, replayed = graphs()
    report = backfill(spark, uri_b, [path], rejects=str(tmp_path / "rej")).to_json()
    assert report["rejected"] == 0
    assert replay(uri_r, [path], tmp_path / "r.jsonl")["rejected"] == 0
    assert_same(dump(backfilled), dump(replayed))
    assert {f["fieldPath"]: bool(f["removed"]) for f in encode(backfilled.fields(t))} == {"x": False, "y": True, "z": False}


def test_a_local_session_has_a_heap_sized_to_the_machine(spark) -> None:
    """Spark's own 1 GB heap ran out importing 10M fields: a local session asks for a quarter of the memory."""
    from fieldgraph.ingest.backfill import local_driver_memory

    size = local_driver_memory()
    assert spark.sparkContext.getConf().get("spark.driver.memory") == size
    assert 1 <= int(size.removesuffix("g")) <= 8
