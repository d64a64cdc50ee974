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
    # both ways: upstream from the old name to the new one now; downstream from the new name to the old one now,
    # unless the old name was reused by then (an edge into it is about the new field from the reuse)
    assert list(crossings("upstream", None, [away], [], {})) == [(away, None)]
    assert list(crossings("upstream", 25, [away], [], {"b": [40]})) == [(away, 25)]
    assert list(crossings("downstream", None, [into], [], {})) == [(into, None)]
    assert list(crossings("downstream", 25, [into], [], {"a": [30]})) == [(into, 25)]
    assert list(crossings("downstream", 30, [into], [], {"a": [30]})) == []
    assert list(crossings("downstream", None, [into], [], {"a": [30]})) == []
    assert list(crossings("downstream", 15, [into], [], {})) == []  # before the rename


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
    # y fed b (25..), which is c now (and was a: one field under its names); x fed a, which became b then c
    assert reached(graph.downstream(fu(S, "y"))) == [("b", "a", True), ("b", "c", True), ("y", "b", False)]
    assert reached(graph.downstream(fu(S, "x"), as_of=22)) == [("a", "b", True), ("x", "a", False)]
    assert reached(graph.downstream(fu(S, "x"))) == []  # the aspect no longer says x feeds anything


@WITH_MEMORY
def test_a_rename_back_is_one_field_throughout(graph: Any) -> None:
    source(graph)
    graph.ingest([schema(D, 10, "a"), lineage(D, 10, ("a", "x"))])
    graph.ingest([schema(D, 20, col("b", "a")), lineage(D, 20, ("b", "y"))])
    graph.ingest([schema(D, 30, col("a", "b")), lineage(D, 30, ("a", "z"))])
    up = reached(graph.upstream(fu(D, "a")))  # both renames between a and b, each once
    assert up == [("a", "b", True), ("a", "b", True), ("a", "x", False), ("a", "z", False), ("b", "y", False)]
    # a is b then, and its aspect names b: what fed b then, and what fed a before it was renamed
    assert reached(graph.upstream(fu(D, "a"), as_of=25)) == [("a", "b", True), ("a", "x", False), ("b", "y", False)]
    assert reached(graph.upstream(fu(D, "b"), as_of=25)) == [("a", "x", False), ("b", "a", True), ("b", "y", False)]
    # a is listed again by the rename back (not a new field): downstream of x (a, 10..20) reaches b and a again
    assert reached(graph.downstream(fu(S, "x"), as_of=15)) == [("x", "a", False)]
    assert {p for _, p, _ in reached(graph.downstream(fu(S, "y"), as_of=25))} == {"b", "a"}  # b, once called a


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


# --- a renamed field is one field both ways: the new name's readers of the old name ---------------------------

F = ds("mart.f")


def reads(dataset: str, ts: int, *edges: tuple[str, str]) -> LineageChange:
    """``edges``: (downstream path in ``dataset``, the field URN it reads)."""
    return LineageChange(dataset, "upstreamLineage", edges=tuple(
        FieldEdge(fu(dataset, down), up, EdgeProps("datahub", "IDENTITY")) for down, up in edges), ts=ts)


def by_dataset(impact: Any) -> dict[str, list[str]]:
    return {d: sorted(p) for d, p in impact.datasets.items()}


@WITH_MEMORY
def test_the_new_names_downstream_reaches_the_readers_of_the_old_name(graph: Any) -> None:
    source(graph)
    a, b, r, s = fu(D, "a"), fu(D, "b"), fu(E, "r"), fu(F, "s")
    graph.ingest([schema(D, 10, "a"), lineage(D, 10, ("a", "x")), schema(E, 10, "r"), reads(E, 10, ("r", a))])
    graph.ingest([schema(D, 20, col("b", "a")), schema(F, 25, "s"), reads(F, 25, ("s", b))])
    # the mart's lineage names a (declared before the rename, never replaced): it reads the field, b now
    assert reached(graph.downstream(b)) == [("a", "r", False), ("b", "a", True), ("b", "s", False)]
    assert reached(graph.downstream(a)) == [("a", "b", True), ("a", "r", False), ("b", "s", False)]
    assert by_dataset(graph.impact(b)) == {D: ["a"], E: ["r"], F: ["s"]}
    assert by_dataset(graph.impact(D)) == {D: ["b"], E: ["r"], F: ["s"]}  # from each of its fields, a and b
    hop = next(h for h in graph.downstream(b).hops if h.rename)  # crossed new -> old, and says which is which
    assert (hop.from_urn, hop.urn, hop.edge["old"], hop.edge["new"], hop.edge["relation"], hop.edge["validFrom"]) \
        == (b, a, a, b, "RenamedFrom", 20)
    # a path either way; what feeds the reader is what feeds the field (b now, a before the rename)
    assert graph.path(b, r).path == (b, a, r) and graph.path(r, b).path == (r, a, b)
    assert graph.path(s, a).path == (s, b, a) and graph.path(s, r).path == ()
    assert reached(graph.upstream(r)) == [("a", "b", True), ("a", "x", False), ("r", "a", False)]
    # as of an instant: before the rename, a alone; after it, the readers as they were then
    assert reached(graph.downstream(a, as_of=15)) == [("a", "r", False)]
    assert reached(graph.downstream(b, as_of=22)) == [("a", "r", False), ("b", "a", True)]
    assert graph.path(r, b, as_of=22).path == (r, a, b)
    # the mart's lineage replaced by one that names b: it reads b now; as of before, it still read a
    graph.ingest([reads(E, 30, ("r", b))])
    assert reached(graph.downstream(b)) == [("b", "a", True), ("b", "r", False), ("b", "s", False)]
    assert reached(graph.downstream(b, as_of=27)) == [("a", "r", False), ("b", "a", True), ("b", "s", False)]


@WITH_MEMORY
def test_a_chain_reaches_the_readers_of_each_old_name(graph: Any) -> None:
    source(graph)
    a, b, c, r, s = fu(D, "a"), fu(D, "b"), fu(D, "c"), fu(E, "r"), fu(F, "s")
    graph.ingest([schema(D, 10, col("a", fid="1")), schema(E, 10, "r"), reads(E, 10, ("r", a))])
    graph.ingest([schema(D, 20, col("b", fid="1")), schema(F, 25, "s"), reads(F, 25, ("s", b))])
    graph.ingest([schema(D, 30, col("c", fid="1"))])
    assert reached(graph.downstream(c)) == [("a", "r", False), ("b", "a", True), ("b", "s", False), ("c", "b", True)]
    assert by_dataset(graph.impact(c)) == {D: ["a", "b"], E: ["r"], F: ["s"]}
    assert graph.path(c, r).path == (c, b, a, r) and graph.path(r, c).path == (r, a, b, c)
    assert graph.path(s, r).path == ()  # two readers of one field: neither is the other's lineage
    assert reached(graph.downstream(b, as_of=27)) == [("a", "r", False), ("b", "a", True), ("b", "s", False)]
    assert reached(graph.downstream(b, as_of=22)) == [("a", "r", False), ("b", "a", True)]  # s reads from 25
    graph.tag(c, ["PII"])  # a tag on the newest name reaches the readers of each old name, and back up from them
    assert {x.urn: x.distance for x in graph.tagged("PII").fields} == {c: 0, b: 1, a: 2, s: 2, r: 3}
    assert [(i.label, i.from_urn, i.path) for i in graph.tags(r).inherited] == [("PII", c, (r, a, b, c))]


@WITH_MEMORY
def test_a_rename_back_reaches_the_readers_of_both_names(graph: Any) -> None:
    source(graph)
    a, b, r, s = fu(D, "a"), fu(D, "b"), fu(E, "r"), fu(F, "s")
    graph.ingest([schema(D, 10, "a"), schema(E, 10, "r"), reads(E, 10, ("r", a))])
    graph.ingest([schema(D, 20, col("b", "a")), schema(F, 25, "s"), reads(F, 25, ("s", b))])
    graph.ingest([schema(D, 30, col("a", "b"))])
    # both renames (a -> b at 20, b -> a at 30) are hops, each once; each reader once
    assert reached(graph.downstream(a)) == [("a", "b", True), ("a", "b", True), ("a", "r", False), ("b", "s", False)]
    assert reached(graph.downstream(b)) == [("a", "r", False), ("b", "a", True), ("b", "a", True), ("b", "s", False)]
    assert sorted(h.edge["validFrom"] for h in graph.downstream(b).hops if h.rename) == [20, 30]
    assert by_dataset(graph.impact(a)) == {D: ["b"], E: ["r"], F: ["s"]}
    assert reached(graph.downstream(a, as_of=25)) == [("a", "b", True), ("a", "r", False), ("b", "s", False)]
    assert reached(graph.downstream(b, as_of=25)) == [("a", "r", False), ("b", "a", True), ("b", "s", False)]
    assert graph.path(a, s).path == (a, b, s) and graph.path(s, a).path == (s, b, a)
    assert graph.path(b, r).path == (b, a, r) and graph.path(r, b, as_of=25).path == (r, a, b)
    graph.tag(a, ["PII"])
    assert {x.urn for x in graph.tagged("PII").fields} == {a, b, r, s}
    assert [(i.label, i.from_urn, i.path) for i in graph.tags(s).inherited] == [("PII", a, (s, b, a))]


@WITH_MEMORY
def test_readers_of_a_reused_old_name_are_not_the_renamed_fields(graph: Any) -> None:
    source(graph)
    a, b, r, t = fu(D, "a"), fu(D, "b"), fu(E, "r"), fu(F, "t")
    graph.ingest([schema(D, 10, "a"), lineage(D, 10, ("a", "x")), schema(E, 10, "r"), reads(E, 10, ("r", a))])
    graph.ingest([schema(D, 20, col("b", "a"))])
    graph.ingest([schema(D, 30, "b", "a"), schema(F, 35, "t"), reads(F, 35, ("t", a))])  # a new field named a
    # before the reuse, r read the field that is b; from the reuse, an edge into a is about the new a
    assert reached(graph.downstream(b, as_of=25)) == [("a", "r", False), ("b", "a", True)]
    assert reached(graph.downstream(b, as_of=32)) == reached(graph.downstream(b)) == []
    assert by_dataset(graph.impact(b)) == {}
    assert reached(graph.downstream(a)) == [("a", "r", False), ("a", "t", False)]
    assert graph.path(b, t).path == graph.path(t, b).path == graph.path(r, b).path == ()
    assert graph.path(r, b, as_of=25).path == (r, a, b)
    assert reached(graph.upstream(t)) == [("a", "x", False), ("t", "a", False)]  # the new a (its edge): never b
    assert reached(graph.upstream(r, as_of=25)) == [("a", "b", True), ("a", "x", False), ("r", "a", False)]
    graph.tag(b, ["PII"])  # b's tag: not the new a's readers' (r's edge into a is about the new a now)
    assert {x.urn for x in graph.tagged("PII").fields} == {b}
    assert {x.urn for x in graph.tagged("PII", as_of=25).fields} == {a, b, r}
    assert graph.tags(r).inherited == () and [i.from_urn for i in graph.tags(r, as_of=25).inherited] == [b]


@WITH_MEMORY
def test_tags_reach_the_readers_of_the_old_name(graph: Any) -> None:
    graph.ingest([schema(S, 1, col("x", tags=("PII",)), col("y", tags=("Finance",)))])
    a, b, r, x, y = fu(D, "a"), fu(D, "b"), fu(E, "r"), fu(S, "x"), fu(S, "y")
    graph.ingest([schema(D, 10, "a"), lineage(D, 10, ("a", "x")), schema(E, 10, "r"), reads(E, 10, ("r", a))])
    graph.ingest([schema(D, 20, col("b", "a")), lineage(D, 25, ("a", "x"), ("b", "y"))])  # y feeds b from 25
    # r reads the field under its old name: it carries what feeds the field under either name
    assert sorted((i.label, i.from_urn, i.path) for i in graph.tags(r).inherited) == [
        ("Finance", y, (r, a, b, y)), ("PII", x, (r, a, x))]
    finance = {c.urn: c.sources for c in graph.tagged("Finance").fields}
    assert finance == {y: (y,), b: (y,), a: (y,), r: (y,)}
    assert {c.urn for c in graph.tagged("PII").fields} == {x, a, b, r}
    # as of before y fed b: PII alone
    assert [i.label for i in graph.tags(r, as_of=22).inherited] == ["PII"]
    assert r not in {c.urn for c in graph.tagged("Finance", as_of=22).fields}


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
