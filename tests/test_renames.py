"""Renames: a renamed field keeps its lineage. The identity rules (``graph/renames.py``) on the in-memory store and
on both real backends, with the same expectations: a rename stated by a schema (an alias, a field id), a chain, a
rename back, a name reused by a new field, a rename that arrives late, a dataset rename, tags across a rename."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fieldgraph.changes import EdgeProps, FieldEdge, LineageChange, RenameChange, SchemaChange
from fieldgraph.graph.plan.renames import Listed, stated_renames
from fieldgraph.graph.renames import Rename, crossings, reuses
from fieldgraph.normalizers import FieldType, SchemaField

from .conftest import WITH_MEMORY, ds

pytestmark = pytest.mark.integration

S, D, E = ds("src.s"), ds("mart.d"), ds("mart.e")


def fu(dataset: str, path: str) -> str:
    return f"urn:li:datasetField:({dataset},{path})"


def col(path: str, *aliases: str, fid: str | None = None, tags: tuple[str, ...] = ()) -> SchemaField:
    return SchemaField(path, FieldType("StringType"), "string", aliases=aliases, fieldId=fid, tags=tags)


def schema(dataset: str, ts: int, *fields: SchemaField | str) -> SchemaChange:
    return SchemaChange(dataset, tuple(col(f) if isinstance(f, str) else f for f in fields), ts=ts)


def lineage(dataset: str, ts: int, *edges: tuple[str, str]) -> LineageChange:
    """``edges``: (downstream path in ``dataset``, upstream path in S)."""
    return LineageChange(dataset, "upstreamLineage", edges=tuple(
        FieldEdge(fu(dataset, down), fu(S, up), EdgeProps("datahub", "IDENTITY")) for down, up in edges), ts=ts)


def reached(res: Any) -> list[tuple[str, str, bool]]:
    """(from path, to path, across a rename) of each hop."""
    def path(urn: str) -> str:
        return urn.rsplit(",", 1)[1].rstrip(")")
    return sorted((path(h.from_urn), path(h.urn), h.rename) for h in res.hops)


def source(g: Any) -> None:
    g.ingest([schema(S, 1, "x", "y", "z")])


# --- the pure parts ---------------------------------------------------------------------------------------------


def test_a_schema_states_renames_only_by_alias_or_field_id() -> None:
    before = [Listed("a"), Listed("p", field_id="7"), Listed("s"), Listed("s.c"), Listed("same")]
    after = [Listed("b", ("a",)), Listed("q", field_id="7"), Listed("t", ("s",)), Listed("t.c"), Listed("other")]
    assert sorted(stated_renames(before, after)) == [
        ("a", "b", "alias a"), ("p", "q", "same field id 7"), ("s", "t", "alias s"),
        ("s.c", "t.c", "renamed with its parent")]
    # same position and type, no alias: a removed field and a new one, never a guessed rename
    assert stated_renames([Listed("same")], [Listed("other")]) == []
    # an alias naming a field the version still lists is no rename; two candidates are none either
    assert stated_renames([Listed("a")], [Listed("a"), Listed("b", ("a",))]) == []
    assert stated_renames([Listed("a"), Listed("c")], [Listed("b", ("a", "c"))]) == []
    # different field ids: not the same field, whatever the aliases say
    assert stated_renames([Listed("a", field_id="1")], [Listed("b", ("a",), field_id="2")]) == []


def test_the_identity_rules() -> None:
    away = Rename(False, 20, {"urn": "b"})
    # listed at 10, renamed away at 20 (removed), listed again at 30 by a schema: a new field from 30
    assert reuses([away], [(10, 20, False), (20, 30, True), (30, None, False)]) == [30]
    # listed again by a rename back: the same field
    assert reuses([away, Rename(True, 30, {"urn": "b"})], [(10, 20, False), (20, 30, True), (30, None, False)]) == []
    into = Rename(True, 20, {"urn": "a"})
    assert list(crossings("upstream", None, [into], [], {})) == [(into, 19)]
    assert list(crossings("upstream", 19, [into], [], {})) == []  # before the rename: no rename yet
    assert list(crossings("downstream", None, [away], [30], {})) == []  # the name was reused since
    assert list(crossings("downstream", 25, [away], [30], {})) == [(away, 25)]
    # the new name was itself reused at 40: a walk arriving there stops just before
    assert list(crossings("downstream", None, [away], [], {"b": [40]})) == [(away, 39)]


# --- on the stores ----------------------------------------------------------------------------------------------


@WITH_MEMORY
def test_a_renamed_field_keeps_its_lineage(graph: Any) -> None:
    source(graph)
    graph.ingest([schema(D, 10, "a", "k"), lineage(D, 10, ("a", "x"), ("k", "z"))])
    graph.ingest([schema(D, 20, col("b", "a"), "k")])
    b, a, x = fu(D, "b"), fu(D, "a"), fu(S, "x")
    assert reached(graph.upstream(b)) == [("a", "x", False), ("b", "a", True)]
    assert reached(graph.downstream(x)) == [("a", "b", True), ("x", "a", False)]
    assert graph.path(x, b).path == (x, a, b)
    assert fu(D, "b") in graph.impact(x).datasets.get(D, ()) or "b" in graph.impact(x).datasets[D]
    hop = next(h for h in graph.upstream(b).hops if h.rename)
    assert (hop.edge["relation"], hop.edge["transformation"], hop.edge["validFrom"], hop.edge["source"]) == \
        ("RenamedFrom", "Rename", 20, "schema")
    # as of before the rename: the old name, and no rename yet
    assert reached(graph.upstream(a, as_of=15)) == [("a", "x", False)]
    assert reached(graph.downstream(x, as_of=15)) == [("x", "a", False)]
    assert [r.field_path for r in graph.fields(D, as_of=15) if not r.removed] == ["a", "k"]
    assert [r.field_path for r in graph.fields(D) if not r.removed] == ["b", "k"]
    assert graph.stats().renames == 1


@WITH_MEMORY
def test_a_chain_crosses_each_rename_as_the_field_was_then(graph: Any) -> None:
    source(graph)
    graph.ingest([schema(D, 10, col("a", fid="1")), lineage(D, 10, ("a", "x"))])
    graph.ingest([schema(D, 20, col("b", fid="1")), lineage(D, 25, ("b", "y"))])  # the aspect moves to b at 25
    graph.ingest([schema(D, 30, col("c", fid="1"))])
    assert reached(graph.upstream(fu(D, "c"))) == [
        ("a", "x", False), ("b", "a", True), ("b", "y", False), ("c", "b", True)]
    # y fed b (25..), which is c now; x fed a, which became b then c
    assert reached(graph.downstream(fu(S, "y"))) == [("b", "c", True), ("y", "b", False)]
    assert reached(graph.downstream(fu(S, "x"), as_of=22)) == [("a", "b", True), ("x", "a", False)]
    assert reached(graph.downstream(fu(S, "x"))) == []  # the aspect no longer says x feeds anything


@WITH_MEMORY
def test_a_rename_back_is_one_field_throughout(graph: Any) -> None:
    source(graph)
    graph.ingest([schema(D, 10, "a"), lineage(D, 10, ("a", "x"))])
    graph.ingest([schema(D, 20, col("b", "a")), lineage(D, 20, ("b", "y"))])
    graph.ingest([schema(D, 30, col("a", "b")), lineage(D, 30, ("a", "z"))])
    up = reached(graph.upstream(fu(D, "a")))
    assert up == [("a", "b", True), ("a", "x", False), ("a", "z", False), ("b", "a", True), ("b", "y", False)]
    assert reached(graph.upstream(fu(D, "a"), as_of=25)) == []  # a is b then, and its aspect names b
    assert reached(graph.upstream(fu(D, "b"), as_of=25)) == [("a", "x", False), ("b", "a", True), ("b", "y", False)]
    # a is listed again by the rename back (not a new field): downstream of x (a, 10..20) reaches b and a again
    assert reached(graph.downstream(fu(S, "x"), as_of=15)) == [("x", "a", False)]
    assert {p for _, p, _ in reached(graph.downstream(fu(S, "y"), as_of=25))} == {"b"}


@WITH_MEMORY
def test_an_old_name_reused_by_a_new_field_is_another_field(graph: Any) -> None:
    source(graph)
    graph.ingest([schema(D, 10, "a"), lineage(D, 10, ("a", "x"))])
    graph.ingest([schema(D, 20, col("b", "a"))])
    graph.ingest([schema(D, 30, "b", "a"), lineage(D, 35, ("a", "z"), ("b", "x"))])  # a new field named a
    assert reached(graph.upstream(fu(D, "b"))) == [("a", "x", False), ("b", "a", True), ("b", "x", False)]
    assert reached(graph.upstream(fu(D, "a"))) == [("a", "z", False)]
    assert reached(graph.downstream(fu(S, "z"))) == [("z", "a", False)]  # the new a's readers are not b's
    assert reached(graph.downstream(fu(S, "x"), as_of=25)) == [("a", "b", True), ("x", "a", False)]
    # between the reuse (30) and the aspect that says so (35), the stale edge into a is about the new field
    assert reached(graph.downstream(fu(S, "x"), as_of=32)) == [("x", "a", False)]


@WITH_MEMORY
def test_renames_arriving_late_and_out_of_order_give_the_same_graph(graph_factory: Any) -> None:
    versions = [schema(D, 10, col("a", fid="1"), "k"), schema(D, 20, col("b", fid="1"), "k"),
                schema(D, 30, col("c", fid="1"), "k"), schema(D, 40, col("c", fid="1"), col("kk", "k"))]
    graphs = []
    for order in ([0, 1, 2, 3], [3, 0, 2, 1], [2, 3, 1, 0]):
        g = graph_factory.new()
        source(g)
        g.ingest([lineage(D, 10, ("a", "x"), ("k", "y"))])
        for i in order:
            g.ingest([versions[i]])
        graphs.append(g)
    rng = random.Random(7)
    batched = graph_factory.new()
    source(batched)
    batched.ingest([lineage(D, 10, ("a", "x"), ("k", "y")), *rng.sample(versions, len(versions))])
    graphs.append(batched)
    for g in graphs:
        assert reached(g.upstream(fu(D, "c"))) == [("a", "x", False), ("b", "a", True), ("c", "b", True)]
        assert reached(g.upstream(fu(D, "kk"))) == [("k", "y", False), ("kk", "k", True)]
        renames = sorted((h.urn, h.edge["validFrom"]) for h in g.downstream(fu(D, "a")).hops if h.rename)
        assert renames == [(fu(D, "b"), 20), (fu(D, "c"), 30)]


@WITH_MEMORY
def test_stated_renames_and_dataset_renames(graph: Any) -> None:
    source(graph)
    graph.ingest([schema(D, 10, "a", "k"), lineage(D, 10, ("a", "x"), ("k", "y"))])
    graph.ingest([RenameChange(D, ((fu(D, "a"), fu(D, "b")),), ts=20, source="cli", by="ana", note="clearer")])
    hop = next(h for h in graph.upstream(fu(D, "b")).hops if h.rename)
    assert (hop.urn, hop.edge["source"], hop.edge["by"], hop.edge["note"]) == (fu(D, "a"), "cli", "ana", "clearer")
    assert reached(graph.upstream(fu(D, "b"))) == [("a", "x", False), ("b", "a", True)]
    # b was a placeholder until a schema lists it; the rename stays on the real field
    graph.ingest([schema(D, 30, "b", "k")])
    assert reached(graph.upstream(fu(D, "b"))) == [("a", "x", False), ("b", "a", True)]
    # the dataset is renamed: every field keeps its lineage under the new dataset
    graph.ingest([RenameChange(E, from_dataset=D, ts=40, source="sql")])
    assert reached(graph.upstream(fu(E, "k"))) == [("k", "k", True), ("k", "y", False)]
    assert {h.urn for h in graph.upstream(fu(E, "b")).hops} == {fu(D, "b"), fu(D, "a"), fu(S, "x")}
    assert fu(E, "b") in {h.urn for h in graph.downstream(fu(S, "x")).hops}


@WITH_MEMORY
def test_tags_flow_across_a_rename(graph: Any) -> None:
    graph.ingest([schema(S, 1, col("x", tags=("PII",)))])
    graph.ingest([schema(D, 10, "a"), lineage(D, 10, ("a", "x"))])
    graph.ingest([schema(D, 20, col("b", "a"))])
    tags = graph.tags(fu(D, "b"))
    assert [(i.label, i.from_urn, i.distance, i.path) for i in tags.inherited] == \
        [("PII", fu(S, "x"), 2, (fu(D, "b"), fu(D, "a"), fu(S, "x")))]
    assert fu(D, "b") in {c.urn for c in graph.tagged("PII").fields}


# --- every schema format that states renames, through the sources ---------------------------------------------

AVRO = '{"type":"record","name":"Order","fields":[{"name":"amount","type":"double"},%s]}'
PROTO = 'syntax = "proto3";\nmessage Order {\n  double amount = 2;\n  %s\n}\n'


def kafka_schema_event(urn: str, doc: str, kind: str, ts: int) -> dict[str, Any]:
    """A DataHub schemaMetadata event whose fields are its KafkaSchema's document (normalized by fieldgraph)."""
    from .conftest import mcp

    return mcp(urn, "schemaMetadata", {
        "schemaName": "Order", "platform": "urn:li:dataPlatform:kafka", "version": 0, "hash": "",
        "platformSchema": {"com.linkedin.schema.KafkaSchema": {"documentSchema": doc, "documentSchemaType": kind}}}, ts)


def arrow_fields(renamed: bool, fmt: str, tmp_path: Any) -> tuple[SchemaField, ...]:
    pa = pytest.importorskip("pyarrow")
    from fieldgraph.normalizers import normalize

    schema = pa.schema([pa.field("amount", pa.float64(), metadata={"PARQUET:field_id": "2"}),
                        pa.field("customer_id" if renamed else "cust", pa.string(),
                                 metadata={"PARQUET:field_id": "1"})])
    if fmt == "arrow":
        return tuple(normalize(schema, "arrow"))
    if fmt == "odf":  # Open Data Fabric's SetDataSchema: the Arrow schema as a flatbuffer
        from fieldgraph.normalizers.arrow import flatbuffer_from_schema

        return tuple(normalize(flatbuffer_from_schema(schema), "arrow"))
    import pyarrow.parquet as pq

    path = tmp_path / f"{renamed}.parquet"
    pq.write_table(schema.empty_table(), path)
    return tuple(normalize(path, "parquet"))


K = ds("orders", "kafka")


@WITH_MEMORY
@pytest.mark.parametrize("fmt", ["avro", "protobuf", "arrow", "parquet", "odf"])
def test_each_format_that_states_renames_keeps_the_lineage(graph: Any, fmt: str, tmp_path: Any) -> None:
    from fieldgraph.ingest.sources import decode_event

    versions: list[list[Any]] = []
    if fmt in ("avro", "protobuf"):
        old, new = (('{"name":"cust","type":"string"}', '{"name":"customer_id","type":"string","aliases":["cust"]}')
                    if fmt == "avro" else ("string cust = 1;", "string customer_id = 1;"))
        text, kind = (AVRO, "AVRO") if fmt == "avro" else (PROTO, "PROTOBUF")
        versions = [decode_event(kafka_schema_event(K, text % v, kind, ts)) for v, ts in ((old, 10), (new, 20))]
    else:
        versions = [[SchemaChange(K, arrow_fields(renamed, fmt, tmp_path), ts=ts)]
                    for renamed, ts in ((False, 10), (True, 20))]
    source(graph)
    graph.ingest(versions[0])
    cust = next(r.urn for r in graph.fields(K) if r.field_path.endswith(".cust"))
    graph.ingest([LineageChange(K, "upstreamLineage", edges=(FieldEdge(cust, fu(S, "x"), EdgeProps("datahub")),),
                                ts=10)])
    graph.ingest(versions[1])
    renamed = next(r.urn for r in graph.fields(K) if r.field_path.endswith(".customer_id"))
    hops = graph.upstream(renamed).hops
    assert [(h.urn, h.rename) for h in hops] == [(cust, True), (fu(S, "x"), False)]
    assert hops[0].edge["source"] == "schema" and hops[0].edge["validFrom"] == 20


def test_set_schema_writes_a_version_and_prints_its_renames(graph: Any, tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from fieldgraph.ingest.cli import app

    (tmp_path / "v1.avsc").write_text(AVRO % '{"name":"cust","type":"string"}')
    (tmp_path / "v2.avsc").write_text(AVRO % '{"name":"customer_id","type":"string","aliases":["cust"]}')
    runner = CliRunner()
    for name, at in (("v1", "2025-01-01T00:00:00Z"), ("v2", "2025-02-01T00:00:00Z")):
        res = runner.invoke(app, ["set-schema", K, str(tmp_path / f"{name}.avsc"), "--at", at, "--graph", graph.uri])
        assert res.exit_code == 0, res.output
    assert "renamed cust -> customer_id (alias cust)" in res.output
    assert [r.field_path.rsplit(".", 1)[1] for r in graph.fields(K) if not r.removed] == ["amount", "customer_id"]
    hop = graph.downstream(next(r.urn for r in graph.fields(K) if r.field_path.endswith(".cust"))).hops[0]
    assert hop.rename and hop.edge["validFrom"] == 1738368000000
