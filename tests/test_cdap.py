"""CDAP field operations -> derived field lineage (pure), and on the real embedded graph."""

from __future__ import annotations

import pytest

from fieldgraph.errors import EventError
from fieldgraph.fieldops import OperationSet
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.sources.cdap import CdapFieldLineageEvent, CdapLineageError, operations_of

from .conftest import WITH_MEMORY, ingest, schema_event

T0 = 1735689600000


def cdap_ds(name: str) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:cdap,default.{name},PROD)"


USERS, PROFILES, AUDIT = cdap_ds("users"), cdap_ds("profiles"), cdap_ds("audit")


def read(name, ds, outputs, desc=""):
    return {"type": "READ", "name": name, "description": desc, "source": {"namespace": "default", "name": ds},
            "outputs": outputs}


def transform(name, inputs, outputs, desc=""):
    return {"type": "TRANSFORM", "name": name, "description": desc,
            "inputs": [i if isinstance(i, str) else {"origin": i[0], "name": i[1]} for i in inputs],
            "outputs": outputs}


def write(name, ds, inputs, desc=""):
    return {"type": "WRITE", "name": name, "description": desc, "destination": {"namespace": "default", "name": ds},
            "inputs": [i if isinstance(i, str) else {"origin": i[0], "name": i[1]} for i in inputs]}


def event(*ops, time=T0, run="run-1", program="default.UserApp.workflow.Normalize"):
    return {"programRun": program, "run": run, "time": time, "operations": list(ops)}


def edges_of(ev) -> dict[tuple[str, str], dict]:
    """(down field URN, up field URN) -> props, over every destination."""
    return {(e.downstream, e.upstream): e.props.to_props() for c in decode_event(ev) for e in c.edges}


def f(ds, name):
    return field_urn(ds, name)


CONCAT = event(
    read("read", "users", ["id", "first", "last", "zip"], "read the users"),
    transform("concat", [("read", "first"), ("read", "last")], ["name"], "first + ' ' + last"),
    transform("dropFirst", [("read", "first")], [], "drop first"),
    transform("dropLast", [("read", "last")], [], "drop last"),
    write("write", "profiles", [("concat", "name"), ("read", "id")], "write profiles"),
)


def opset(ev) -> OperationSet:
    return OperationSet(operations_of(CdapFieldLineageEvent.model_validate(ev)))


def names(ops) -> list[str]:
    return [o.name for o in ops]


def test_concatenation_drops_and_identity() -> None:
    (change,) = decode_event(CONCAT)
    assert change.dataset == PROFILES and change.aspect == "jobLineage"
    edges = edges_of(CONCAT)
    assert set(edges) == {(f(PROFILES, "name"), f(USERS, "first")), (f(PROFILES, "name"), f(USERS, "last")),
                          (f(PROFILES, "id"), f(USERS, "id"))}
    name = edges[(f(PROFILES, "name"), f(USERS, "first"))]
    assert name["transformation"] == "concat" and name["subtype"] == "TRANSFORMATION"
    assert name["program"] == "default.UserApp.workflow.Normalize" and name["run"] == "run-1"
    assert name["runTime"] == T0 and name["kind"] == "DIRECT" and name["sourceFormat"] == "cdap"
    # the operations are kept once per run, by checksum, and the edges refer to them
    assert change.operations is not None and name["operationSet"] == change.operations.checksum
    assert change.operations.sources == (USERS,) and change.operations.destinations == (PROFILES,)
    ops = OperationSet.from_json(change.operations.operations)
    assert ops.checksum == change.operations.checksum
    assert names(ops.incoming_operations((PROFILES, "name"))) == ["read", "concat", "write"]
    assert [o.description for o in ops.incoming_operations((PROFILES, "name"))] == [
        "read the users", "first + ' ' + last", "write profiles"]
    ident = edges[(f(PROFILES, "id"), f(USERS, "id"))]
    assert ident["transformation"] == "Identity" and ident["subtype"] == "IDENTITY"
    assert names(ops.incoming_operations((PROFILES, "id"))) == ["read", "write"]
    # zip is read and used by nobody: no edge, but a known field of users; first and last are dropped
    assert not any(up == f(USERS, "zip") for _, up in edges)
    assert f(USERS, "zip") in change.reads
    assert names(ops.outgoing_operations((USERS, "zip"))) == ["read"]
    assert sorted(change.dropped) == [(f(USERS, "first"), "cdap:default.UserApp.workflow.Normalize dropFirst"),
                                      (f(USERS, "last"), "cdap:default.UserApp.workflow.Normalize dropLast")]


# CDAP's documented example of two sources and two destinations (FieldLineageInfo's javadoc):
#   pRead: personFile -> (offset, body); parse: body -> (id, name, address); cRead: codeFile -> id;
#   codeGen: (parse.id, cRead.id) -> id; sWrite: (codeGen.id, parse.name, parse.address) -> secureStore;
#   iWrite: (parse.id, parse.name, parse.address) -> insecureStore
PERSON, CODE, SECURE, INSECURE = cdap_ds("personFile"), cdap_ds("codeFile"), cdap_ds("secureStore"), \
    cdap_ds("insecureStore")
STORES = event(
    read("pRead", "personFile", ["offset", "body"]), read("cRead", "codeFile", ["id"]),
    transform("parse", [("pRead", "body")], ["id", "name", "address"]),
    transform("codeGen", [("parse", "id"), ("cRead", "id")], ["id"]),
    write("sWrite", "secureStore", [("codeGen", "id"), ("parse", "name"), ("parse", "address")]),
    write("iWrite", "insecureStore", [("parse", "id"), ("parse", "name"), ("parse", "address")]),
)


def test_two_sources_two_destinations_summaries_and_operations_per_field() -> None:
    ops = opset(STORES)
    assert ops.incoming((SECURE, "id")) == {(PERSON, "body"), (CODE, "id")}
    for store, field in [(SECURE, "name"), (SECURE, "address"), (INSECURE, "id"), (INSECURE, "name")]:
        assert ops.incoming((store, field)) == {(PERSON, "body")}
    assert ops.outgoing((CODE, "id")) == {(SECURE, "id")}
    assert ops.outgoing((PERSON, "body")) == {(s, f) for s in (SECURE, INSECURE) for f in ("id", "name", "address")}
    assert ops.outgoing((PERSON, "offset")) == set()
    assert names(ops.incoming_operations((INSECURE, "id"))) == ["pRead", "parse", "iWrite"]
    assert names(ops.incoming_operations((SECURE, "id"))) == ["pRead", "cRead", "parse", "codeGen", "sWrite"]
    assert names(ops.outgoing_operations((PERSON, "offset"))) == ["pRead"]  # read, used by nobody
    assert names(ops.outgoing_operations((CODE, "id"))) == ["cRead", "codeGen", "sWrite"]
    assert names(ops.outgoing_operations((PERSON, "body"))) == ["pRead", "parse", "codeGen", "sWrite", "iWrite"]


def test_a_merge_ties_every_written_field_to_every_merged_field() -> None:
    # read1, read2: (offset, body); merge: all four -> (offset, body); parse: merge.body -> (name, address);
    # write: (merge.offset, parse.name, parse.address)
    ev = event(read("read1", "file1", ["offset", "body"]), read("read2", "file2", ["offset", "body"]),
               transform("merge", [("read1", "offset"), ("read2", "offset"), ("read1", "body"), ("read2", "body")],
                         ["offset", "body"]),
               transform("parse", [("merge", "body")], ["name", "address"]),
               write("write", "file", [("merge", "offset"), ("parse", "name"), ("parse", "address")]))
    ops = opset(ev)
    four = {(cdap_ds(d), f) for d in ("file1", "file2") for f in ("offset", "body")}
    assert all(ops.incoming((cdap_ds("file"), f)) == four for f in ("offset", "name", "address"))
    assert names(ops.outgoing_operations((cdap_ds("file1"), "offset"))) == ["read1", "merge", "parse", "write"]


def test_an_input_its_origin_does_not_list_is_traced_through_the_origins_inputs() -> None:
    # CDAP's own valid operation set: the write takes parse.body, which parse does not output
    ev = event(read("read", "endpoint1", ["offset", "body"]),
               transform("parse", [("read", "body")], ["name", "address"]),
               write("write", "endpoint2", [("read", "offset"), ("parse", "name"), ("parse", "body")]))
    edges = edges_of(ev)
    e2, e1 = cdap_ds("endpoint2"), cdap_ds("endpoint1")
    assert {up for down, up in edges if down == f(e2, "body")} == {f(e1, "body")}
    assert edges[(f(e2, "offset"), f(e1, "offset"))]["subtype"] == "IDENTITY"


def test_renamed_then_dropped_field_is_dropped_by_the_last_transform() -> None:
    ev = event(read("read", "endpoint1", ["first_name", "last_name", "social"]),
               transform("renameSocial", [("read", "social")], ["ssn"]),
               transform("renameSocialAgain", [("renameSocial", "ssn")], ["ssn2"]),
               transform("dropSocial", [("renameSocialAgain", "ssn2")], []),
               write("write", "endpoint2", [("read", "first_name"), ("read", "last_name")]))
    (change,) = decode_event(ev)
    assert change.dropped == ((f(cdap_ds("endpoint1"), "social"), "cdap:default.UserApp.workflow.Normalize "
                                                                   "dropSocial"),)
    assert {(d, u) for d, u in edges_of(ev)} == {(f(cdap_ds("endpoint2"), n), f(cdap_ds("endpoint1"), n))
                                                 for n in ("first_name", "last_name")}


def test_the_checksum_is_the_operations_content_whatever_their_order() -> None:
    ops = STORES["operations"]
    same = opset(dict(STORES, operations=list(reversed(ops))))
    assert same.checksum == opset(STORES).checksum
    moved = [dict(o, destination={"namespace": "other", "name": "secureStore"}) if o["name"] == "sWrite" else o
             for o in ops]
    assert opset(dict(STORES, operations=moved)).checksum != same.checksum


def test_a_write_origin_ends_the_way_back_and_an_untraceable_write_keeps_its_run() -> None:
    # w2 takes y from the WRITE w1: it brings nothing, and the way back stops there
    ev = event(read("r", "a", ["x"]), write("w1", "b", [("r", "x")]), write("w2", "c", [("w1", "y")]),
               transform("drop", [("r", "x")], []))
    ops = opset(ev)
    assert ops.incoming((cdap_ds("c"), "y")) == set()
    assert names(ops.incoming_operations((cdap_ds("c"), "y"))) == ["w1", "w2"]
    changes = {c.dataset: c for c in decode_event(ev)}
    assert set(changes) == {cdap_ds("b"), cdap_ds("c")} and changes[cdap_ds("c")].edges == ()
    assert all(c.operations is not None for c in changes.values())
    assert changes[cdap_ds("b")].dropped == ((f(cdap_ds("a"), "x"), "cdap:default.UserApp.workflow.Normalize drop"),)


def large_event(n: int = 100, layers: int = 5, run: str = "run-1", time: int = T0) -> dict:
    """CDAP's large case: ``n`` fields through ``layers`` of an identity transform per field then one all-to-all
    transform; every written field comes from every read field."""
    fields = [f"num{i}" for i in range(n)]
    ops = [read("read", "start", fields)]
    prev = "read"
    for layer in range(1, layers + 1):
        ops += [transform(f"identity{layer}.{i}", [(prev, x)], [x]) for i, x in enumerate(fields)]
        ops.append(transform(f"alltoall{layer}", [(f"identity{layer}.{i}", x) for i, x in enumerate(fields)], fields))
        prev = f"alltoall{layer}"
    ops.append(write("write", "dest", [(prev, x) for x in fields]))
    return event(*ops, run=run, time=time)


def test_the_large_case_derives_every_edge() -> None:
    (change,) = decode_event(large_event())
    assert len(change.edges) == 10_000 and len({e.props for e in change.edges}) == 1
    assert {e.upstream for e in change.edges if e.downstream == f(cdap_ds("dest"), "num7")} == {
        f(cdap_ds("start"), f"num{i}") for i in range(100)}


def test_same_named_outputs_of_different_operations_do_not_mix() -> None:
    ev = event(
        read("readA", "a", ["body"]), read("readB", "b", ["body"]),
        transform("parseA", [("readA", "body")], ["name"]),
        transform("parseB", [("readB", "body")], ["name"]),
        write("w1", "out1", [("parseA", "name")]), write("w2", "out2", [("parseB", "name")]),
    )
    edges = edges_of(ev)
    assert set(edges) == {(f(cdap_ds("out1"), "name"), f(cdap_ds("a"), "body")),
                          (f(cdap_ds("out2"), "name"), f(cdap_ds("b"), "body"))}


def test_several_sources_and_destinations_and_writes_unite() -> None:
    ev = event(
        read("r1", "users", ["id", "email"]), read("r2", "orders", ["id", "total"]),
        transform("join", [("r1", "id"), ("r2", "id")], ["id"]),
        transform("hash", [("r1", "email")], ["email"]),
        write("w1", "profiles", [("join", "id"), ("hash", "email")]),
        write("w2", "profiles", [("r2", "total"), ("r1", "id")]),  # id again: united with w1's
        write("w3", "audit", [("r1", "email")]),
    )
    changes = {c.dataset: c for c in decode_event(ev)}
    assert set(changes) == {PROFILES, AUDIT}
    edges = edges_of(ev)
    ups_of_id = {up for down, up in edges if down == f(PROFILES, "id")}
    assert ups_of_id == {f(USERS, "id"), f(cdap_ds("orders"), "id")}
    assert edges[(f(PROFILES, "id"), f(USERS, "id"))]["transformation"] == "join"  # and straight, by w2
    assert edges[(f(AUDIT, "email"), f(USERS, "email"))]["transformation"] == "Identity"
    ops = opset(ev)
    assert names(ops.incoming_operations((PROFILES, "id"))) == ["r1", "r2", "join", "w1", "w2"]
    assert names(ops.incoming_operations((PROFILES, "total"))) == ["r2", "w2"]


def test_a_transform_takes_only_the_fields_it_reads_and_generated_fields_have_no_upstream() -> None:
    ev = event(
        read("read", "lines", ["offset", "body"]),
        transform("parse", [("read", "body")], ["word", "count"]),
        transform("stamp", [], ["loadedAt"]),
        write("write", "words", [("parse", "word"), ("parse", "count"), ("stamp", "loadedAt")]),
    )
    (change,) = decode_event(ev)
    words = cdap_ds("words")
    assert {(e.downstream, e.upstream) for e in change.edges} == {
        (f(words, "word"), f(cdap_ds("lines"), "body")), (f(words, "count"), f(cdap_ds("lines"), "body"))}
    assert f(words, "loadedAt") in change.fields


def test_plugin_form_resolves_names_to_the_latest_earlier_operation() -> None:
    ev = event(
        {"type": "READ", "name": "src", "source": {"name": "users"}, "outputFields": ["a", "b"]},
        {"type": "TRANSFORM", "name": "upper", "inputFields": ["a"], "outputFields": ["a"]},
        {"type": "WRITE", "name": "sink", "sink": {"name": "profiles"}, "inputFields": ["a", "b"]},
    )
    edges = edges_of(ev)
    assert edges[(f(PROFILES, "a"), f(USERS, "a"))]["transformation"] == "upper"
    assert edges[(f(PROFILES, "b"), f(USERS, "b"))]["transformation"] == "Identity"


@pytest.mark.parametrize("ops, message", [
    ([read("r", "u", ["a"]), read("r", "v", ["a"]), write("w", "o", [("r", "a")])],
     "must have unique names. Operation name 'r' is repeated."),
    ([read("r", "u", ["a"])], "requires at least one operation of type 'WRITE'"),
    ([transform("t", [], ["a"]), write("w", "o", [("t", "a")])], "requires at least one operation of type 'READ'"),
    ([read("r", "u", ["a"]), write("w", "o", [("nope", "a"), ("r", "a"), ("gone", "b")])],
     r"No operation is associated with the origins '\[nope, gone\]'"),
    ([read("r", "u", ["a"]), write("w", "o", ["zzz"])], "output by no earlier operation"),
    ([read("r", "u", ["a"]), transform("t1", [("r", "a"), ("t2", "y")], ["x"]), transform("t2", [("t1", "x")], ["y"]),
      write("w", "o", [("t2", "y")])], "Cycle detected in graph for operations t1, t2"),
    ([{"type": "READ", "name": "r", "outputs": ["a"]}, write("w", "o", [("r", "a")])],
     "Source endpoint cannot be null for the read operation 'r'"),
])
def test_invalid_operation_sets_are_rejected(ops, message) -> None:
    with pytest.raises(CdapLineageError, match=message):
        decode_event(event(*ops))


def test_malformed_events_name_the_place() -> None:
    with pytest.raises(EventError, match=r"operations\.0.*READ operation has no inputs"):
        decode_event(event(dict(read("r", "u", ["a"]), inputs=["x"]), write("w", "o", [("r", "a")])))
    with pytest.raises(EventError, match="time"):
        decode_event({"programRun": "p", "operations": [read("r", "u", ["a"]), write("w", "o", [("r", "a")])]})


# --- on the graph ---


@WITH_MEMORY
def test_derived_lineage_on_the_graph_with_time_ranges_and_drops(graph) -> None:
    ingest(graph, schema_event(PROFILES, ["id", "name"], ts=1), CONCAT)
    up = graph.upstream(f(PROFILES, "name"))
    assert {h.field_path for h in up.hops} == {"first", "last"}
    assert all(h.placeholder for h in up.hops)  # users has no schema yet: placeholders
    ingest(graph, schema_event(USERS, ["id", "first", "last", "zip"], ts=2))
    up = graph.upstream(f(PROFILES, "name"))
    assert {h.field_path for h in up.hops} == {"first", "last"} and not any(h.placeholder for h in up.hops)

    # a later run of the same program keeps one edge per field pair, with first and last seen
    later = dict(CONCAT, run="run-2", time=T0 + 86_400_000)
    ingest(graph, later)
    (edge,) = [h.edge for h in graph.upstream(f(PROFILES, "name")).hops if h.field_path == "first"]
    assert edge["firstSeen"] == T0 and edge["lastSeen"] == T0 + 86_400_000 and edge["run"] == "run-2"
    # an older run arriving late does not overwrite the newer run's properties
    ingest(graph, dict(CONCAT, run="run-0", time=T0 - 1000))
    (edge,) = [h.edge for h in graph.upstream(f(PROFILES, "name")).hops if h.field_path == "first"]
    assert edge["firstSeen"] == T0 - 1000 and edge["run"] == "run-2"

    inc = encode(graph.field_lineage(f(PROFILES, "name"), "incoming", start=T0, end=T0 + 10))
    assert inc["summary"] == [{"dataset": USERS, "fields": ["first", "last"]}]
    (ran,) = inc["operations"]
    assert [o["name"] for o in ran["operations"]] == ["read", "concat", "write"]
    assert ran["programs"] == [{"program": "default.UserApp.workflow.Normalize", "run": "run-1", "runTime": T0}]
    assert encode(graph.field_lineage(f(PROFILES, "name"), "incoming", start=T0 + 90_000_000))["summary"] == []
    assert encode(graph.field_lineage(f(PROFILES, "name"), "incoming", end=T0 - 2000))["summary"] == []

    out = encode(graph.field_lineage(f(USERS, "first"), "outgoing"))
    assert out["summary"] == [{"dataset": PROFILES, "fields": ["name"]}]
    assert out["dropped"] == ["cdap:default.UserApp.workflow.Normalize dropFirst"]
    assert encode(graph.field_lineage(f(USERS, "zip"), "outgoing"))["summary"] == []


@WITH_MEMORY
def test_generated_field_is_a_known_destination_field(graph) -> None:
    ev = event(read("read", "lines", ["body"]), transform("stamp", [], ["loadedAt"]),
               write("write", "words", [("read", "body"), ("stamp", "loadedAt")]))
    ingest(graph, ev)
    fields = {r["fieldPath"]: r for r in encode(graph.fields(cdap_ds("words")))}
    assert set(fields) == {"body", "loadedAt"}
    assert graph.upstream(f(cdap_ds("words"), "loadedAt")).hops == ()
    # a schema arriving later resolves the declared fields to its own
    ingest(graph, schema_event(cdap_ds("words"), ["body", "loadedAt"], ts=T0 + 1))
    fields = {r["fieldPath"]: r for r in encode(graph.fields(cdap_ds("words")))}
    assert set(fields) == {"body", "loadedAt"} and not any(r["placeholder"] for r in fields.values())


@WITH_MEMORY
def test_invalid_event_writes_nothing(graph) -> None:
    from fieldgraph.ingest.replay import RawEvent, decode

    bad = event(read("r", "u", ["a"]), write("w", "o", [("nope", "a")]))
    changes, reject = decode(RawEvent("e.json", 3, bad))
    assert changes == [] and "e.json" == reject.file and "No operation is associated with the origins" in reject.error
    assert graph.stats().data_derived_from_edges == 0


def summary_of(graph, field, direction="incoming", start=None, end=None) -> dict[str, set[str]]:
    res = encode(graph.field_lineage(field, direction, start, end))
    return {row["dataset"]: set(row["fields"]) for row in res["summary"]}


def test_time_ranges_are_answered_from_the_runs_inside_them(graph) -> None:
    # run 1 (t=5000) makes name from first and last; run 2 (t=11000) from first only; run 3 (t=20000) as run 1
    both = event(read("read", "users", ["first", "last"]),
                 transform("concat", [("read", "first"), ("read", "last")], ["name"]),
                 write("write", "profiles", [("concat", "name")]))
    first = event(read("read", "users", ["first", "last"]), transform("upper", [("read", "first")], ["name"]),
                  write("write", "profiles", [("upper", "name")]))
    ingest(graph, dict(both, run="run-1", time=5000), dict(first, run="run-2", time=11000),
           dict(both, run="run-3", time=20000))
    name = f(PROFILES, "name")
    assert summary_of(graph, name, start=0, end=10000) == {USERS: {"first", "last"}}
    assert summary_of(graph, name, start=10000, end=12000) == {USERS: {"first"}}
    assert summary_of(graph, name, start=10000, end=20000) == {USERS: {"first"}}  # end is exclusive
    assert summary_of(graph, name, start=10000, end=20001) == {USERS: {"first", "last"}}
    assert summary_of(graph, f(USERS, "last"), "outgoing", 6000, 19000) == {}
    # the operations: one entry per operation set, with the programs' latest runs in the range
    res = encode(graph.field_lineage(name, "incoming", 0, 30000))
    by_set = {tuple(o["name"] for o in op["operations"]): op["programs"] for op in res["operations"]}
    assert by_set == {("read", "concat", "write"): [{"program": "default.UserApp.workflow.Normalize",
                                                       "run": "run-3", "runTime": 20000}],
                      ("read", "upper", "write"): [{"program": "default.UserApp.workflow.Normalize",
                                                     "run": "run-2", "runTime": 11000}]}
    # each operation set is stored once, whatever the number of runs that ran it
    (row,) = graph.query("MATCH (o:FieldOperations) RETURN count(o) AS sets")
    assert row["sets"] == 2
    (row,) = graph.query("MATCH (r:JobRun)-[:RanOperations]->(:FieldOperations) RETURN count(r) AS runs")
    assert row["runs"] == 3


@WITH_MEMORY
def test_a_field_read_and_used_by_nobody_is_known_and_has_an_empty_summary(graph) -> None:
    ev = event(read("read", "lines", ["offset", "body"]), transform("parse", [("read", "body")], ["word"]),
               write("write", "words", [("parse", "word")]))
    ingest(graph, ev)
    lines = cdap_ds("lines")
    assert {r["fieldPath"] for r in encode(graph.fields(lines))} == {"offset", "body"}
    res = encode(graph.field_lineage(f(lines, "offset"), "outgoing"))
    assert res["summary"] == [] and res["dropped"] == []
    (ran,) = res["operations"]
    assert [o["name"] for o in ran["operations"]] == ["read"]
    assert [o["name"] for o in encode(graph.field_lineage(f(lines, "body"), "outgoing"))["operations"][0]["operations"]] \
        == ["read", "parse", "write"]
    # a schema arriving later takes the read fields over
    ingest(graph, schema_event(lines, ["offset", "body"], ts=T0 + 1))
    assert not any(r["placeholder"] for r in encode(graph.fields(lines)))


@WITH_MEMORY
def test_a_dataset_delete_ends_the_runs_before_it(graph) -> None:
    from .conftest import mcp

    ingest(graph, dict(CONCAT, run="run-1", time=T0))
    ingest(graph, mcp(PROFILES, "datasetKey", None, ts=T0 + 10, change="DELETE"))  # the whole dataset
    assert summary_of(graph, f(PROFILES, "name")) == {}
    assert encode(graph.field_lineage(f(PROFILES, "name")))["operations"] == []
    ingest(graph, dict(CONCAT, run="run-2", time=T0 + 20))
    assert summary_of(graph, f(PROFILES, "name")) == {USERS: {"first", "last"}}
    assert summary_of(graph, f(USERS, "first"), "outgoing", end=T0 + 15) == {}
    assert encode(graph.field_lineage(f(USERS, "first"), "outgoing", end=T0 + 15))["operations"] == []


@WITH_MEMORY
def test_the_large_case_on_the_graph(graph) -> None:
    report = graph.ingest(decode_event(large_event()))
    assert not report.refused and graph.stats().data_derived_from_edges == 10_000
    start, dest = cdap_ds("start"), cdap_ds("dest")
    assert summary_of(graph, f(dest, "num42")) == {start: {f"num{i}" for i in range(100)}}
    (ran,) = encode(graph.field_lineage(f(dest, "num0")))["operations"]
    assert len(ran["operations"]) == 1 + 5 * 101 + 1  # every operation lies on its way back
    (ran,) = encode(graph.field_lineage(f(start, "num0"), "outgoing"))["operations"]
    # forward: the read, the one identity that takes num0, then every operation after the first all-to-all
    assert len(ran["operations"]) == 1 + 1 + 1 + 4 * 101 + 1


# --- the pipeline form: stages, their plugin-level operations and the connections between them ---


def R(name, ds, outputs):  # noqa: N802 (CDAP's operation kinds, as in its pipeline tests)
    return {"type": "READ", "name": name, "source": {"name": ds}, "outputs": outputs}


def T(name, inputs, outputs):  # noqa: N802
    return {"type": "TRANSFORM", "name": name, "inputs": inputs, "outputs": outputs}


def W(name, ds, inputs):  # noqa: N802
    return {"type": "WRITE", "name": name, "sink": {"name": ds}, "inputs": inputs}


def pipeline(connections: str, stages: dict, joiners=(), **kw) -> dict:
    return {"programRun": "default.Pipeline.workflow.DataPipelineWorkflow", "run": "run-1", "time": T0,
            "stages": stages, "connections": [c.split(">") for c in connections.split()], "joiners": list(joiners),
            **kw}


def platform_ops(ev) -> dict[str, tuple]:
    """name -> (type, [origin:field inputs], outputs) of the platform operations a pipeline gives."""
    return {o.name: (o.type, [f"{i.origin}:{i.name}" for i in o.inputs], list(o.outputs))
            for o in operations_of(CdapFieldLineageEvent.model_validate(ev))}


def test_pipeline_names_by_stage_and_passes_untouched_fields_through() -> None:
    ev = pipeline("n1>n2 n2>n3 n3>n4", {
        "n1": [R("read", "file1", ["offset", "body"])], "n2": [T("parse", ["body"], ["first_name", "last_name"])],
        "n3": [T("concat", ["first_name", "last_name"], ["name"])], "n4": [W("write_op", "another_file",
                                                                           ["offset", "name"])]})
    assert platform_ops(ev) == {
        "n1.read": ("READ", [], ["offset", "body"]),
        "n2.parse": ("TRANSFORM", ["n1.read:body"], ["first_name", "last_name"]),
        "n3.concat": ("TRANSFORM", ["n2.parse:first_name", "n2.parse:last_name"], ["name"]),
        "n4.write_op": ("WRITE", ["n1.read:offset", "n3.concat:name"], [])}  # offset straight from the read
    (change,) = decode_event(ev)
    assert {(e.downstream, e.upstream) for e in change.edges} == {
        (f(cdap_ds("another_file"), "offset"), f(cdap_ds("file1"), "offset")),
        (f(cdap_ds("another_file"), "name"), f(cdap_ds("file1"), "body"))}


def test_pipeline_merges_each_field_from_the_nearest_origin_of_each_input() -> None:
    ev = pipeline("n1>n3 n3>n5 n2>n4 n4>n5", {
        "n1": [R("read1", "n1", ["id", "name"])], "n2": [R("read2", "n2", ["body", "offset"])],
        "n3": [T("identity1", ["id"], ["id"]), T("identity2", ["name"], ["name"])],
        "n4": [T("generate", ["body"], ["id", "name"])], "n5": [W("write", "n5", ["id", "name"])]})
    assert platform_ops(ev) == {
        "n1.read1": ("READ", [], ["id", "name"]), "n2.read2": ("READ", [], ["body", "offset"]),
        "n3.identity1": ("TRANSFORM", ["n1.read1:id"], ["id"]),
        "n3.identity2": ("TRANSFORM", ["n1.read1:name"], ["name"]),
        "n4.generate": ("TRANSFORM", ["n2.read2:body"], ["id", "name"]),
        "n3,n4.merge.id": ("TRANSFORM", ["n3.identity1:id", "n4.generate:id"], ["id"]),
        "n3,n4.merge.name": ("TRANSFORM", ["n3.identity2:name", "n4.generate:name"], ["name"]),
        "n3,n4.merge.body": ("TRANSFORM", ["n2.read2:body"], ["body"]),
        "n3,n4.merge.offset": ("TRANSFORM", ["n2.read2:offset"], ["offset"]),
        "n5.write": ("WRITE", ["n3,n4.merge.id:id", "n3,n4.merge.name:name"], [])}


def test_pipeline_merge_then_fan_out() -> None:
    ev = pipeline("n1>n2 n2>n5 n3>n4 n4>n5 n5>n6 n5>n7 n7>n8", {
        "n1": [R("read", "file1", ["offset", "body"])], "n2": [T("parse", ["body"], ["name", "address", "zip"])],
        "n3": [R("read", "file2", ["offset", "body"])], "n4": [T("parse", ["body"], ["name", "address", "zip"])],
        "n5": [T("normalize", ["address"], ["address"]), T("rename", ["address"], ["state_address"])],
        "n6": [W("write", "file3", ["offset", "name", "address"])],
        "n7": [T("rename", ["offset"], ["file_offset"])],
        "n8": [W("write", "file4", ["file_offset", "name", "address", "zip"])]})
    ops = platform_ops(ev)
    assert ops["n2,n4.merge.offset"] == ("TRANSFORM", ["n1.read:offset", "n3.read:offset"], ["offset"])
    assert ops["n2,n4.merge.address"] == ("TRANSFORM", ["n2.parse:address", "n4.parse:address"], ["address"])
    assert ops["n5.normalize"] == ("TRANSFORM", ["n2,n4.merge.address:address"], ["address"])
    assert ops["n5.rename"] == ("TRANSFORM", ["n5.normalize:address"], ["state_address"])
    assert ops["n6.write"] == ("WRITE", ["n2,n4.merge.offset:offset", "n2,n4.merge.name:name",
                                         "n5.normalize:address"], [])
    assert ops["n7.rename"] == ("TRANSFORM", ["n2,n4.merge.offset:offset"], ["file_offset"])
    assert ops["n8.write"] == ("WRITE", ["n7.rename:file_offset", "n2,n4.merge.name:name", "n5.normalize:address",
                                         "n2,n4.merge.zip:zip"], [])
    assert len(ops) == 14
    file4 = {c.dataset: c for c in decode_event(ev)}[cdap_ds("file4")]
    assert {e.upstream for e in file4.edges if e.downstream == f(cdap_ds("file4"), "file_offset")} == {
        f(cdap_ds("file1"), "offset"), f(cdap_ds("file2"), "offset")}


def test_pipeline_join_resolves_prefixed_names_along_their_input_first() -> None:
    ev = pipeline("n1>n3 n2>n3 n3>n4", {
        "n1": [R("readSrc1", "n1", ["id", "swap1", "n1same"])], "n2": [R("readSrc2", "n2", ["id", "swap2", "n2same"])],
        "n3": [T("JoinKey", ["n1.id", "n2.id"], ["id"]), T("RenameN2", ["n2.id"], ["new_id"]),
               T("swap1", ["n1.swap1"], ["swap2"]), T("swap2", ["n2.swap2"], ["swap1"]),
               T("unchange1", ["n1.n1same"], ["n1same"]), T("unchange2", ["n2.n2same"], ["n2same"])],
        "n4": [W("Write", "n4", ["id", "new_id", "swap1", "swap2", "n1same", "n2same"])]}, joiners=["n3"])
    ops = platform_ops(ev)
    assert ops["n3.JoinKey"] == ("TRANSFORM", ["n1.readSrc1:id", "n2.readSrc2:id"], ["id"])
    assert ops["n3.RenameN2"] == ("TRANSFORM", ["n2.readSrc2:id"], ["new_id"])  # not the join key's id
    assert ops["n4.Write"] == ("WRITE", ["n3.JoinKey:id", "n3.RenameN2:new_id", "n3.swap2:swap1", "n3.swap1:swap2",
                                         "n3.unchange1:n1same", "n3.unchange2:n2same"], [])
    assert not any(".merge." in n for n in ops)  # a joiner gets no merges
    assert len(ops) == 9


def test_pipeline_stages_with_the_same_inputs_share_their_merges() -> None:
    ev = pipeline("n1>n3 n1>n4 n2>n3 n2>n4", {
        "n1": [R("pRead", "personFile", ["offset", "body"])], "n2": [R("hRead", "hrFile", ["offset", "body"])],
        "n3": [W("write1", "testStore", ["offset", "body"])], "n4": [W("write2", "prodStore", ["offset", "body"])]})
    merged = ["n1,n2.merge.offset:offset", "n1,n2.merge.body:body"]
    assert platform_ops(ev) == {
        "n1.pRead": ("READ", [], ["offset", "body"]), "n2.hRead": ("READ", [], ["offset", "body"]),
        "n1,n2.merge.offset": ("TRANSFORM", ["n1.pRead:offset", "n2.hRead:offset"], ["offset"]),
        "n1,n2.merge.body": ("TRANSFORM", ["n1.pRead:body", "n2.hRead:body"], ["body"]),
        "n3.write1": ("WRITE", merged, []), "n4.write2": ("WRITE", merged, [])}


def test_pipeline_join_renames_keys_after_the_join() -> None:
    ev = pipeline("n1>n3 n2>n3 n3>n4", {
        "n1": [R("ReadCustomer", "customer", ["id", "name"])],
        "n2": [R("ReadPurchase", "purchase", ["customer_id", "item"])],
        "n3": [T("Join", ["n1.id", "n2.customer_id"], ["id", "customer_id"]),
               T("Rename id", ["id"], ["id_from_customer"]),
               T("Rename customer_id", ["customer_id"], ["id_from_purchase"]),
               T("Identity name", ["n1.name"], ["name"]), T("Identity item", ["n2.item"], ["item"])],
        "n4": [W("Write", "customer_purchase", ["id_from_customer", "id_from_purchase", "name", "item"])]},
        joiners=["n3"])
    ops = platform_ops(ev)
    assert ops["n3.Join"] == ("TRANSFORM", ["n1.ReadCustomer:id", "n2.ReadPurchase:customer_id"],
                              ["id", "customer_id"])
    assert ops["n3.Rename id"] == ("TRANSFORM", ["n3.Join:id"], ["id_from_customer"])
    assert ops["n3.Rename customer_id"] == ("TRANSFORM", ["n3.Join:customer_id"], ["id_from_purchase"])
    assert ops["n4.Write"] == ("WRITE", ["n3.Rename id:id_from_customer", "n3.Rename customer_id:id_from_purchase",
                                         "n3.Identity name:name", "n3.Identity item:item"], [])
    assert len(ops) == 8


def test_pipeline_join_resolves_each_prefixed_name_along_its_own_input() -> None:
    ev = pipeline("a>j b>j j>o", {"a": [R("R", "ta", ["id"])], "b": [R("R", "tb", ["id", "y"])],
                                  "j": [T("Join", ["b.id", "a.y", "a.id"], ["id"])], "o": [W("W", "to", ["id"])]},
                  joiners=["j"])
    # a outputs no y: left out, not taken from b's chain that an earlier name of the operation searched
    assert platform_ops(ev)["j.Join"] == ("TRANSFORM", ["b.R:id", "a.R:id"], ["id"])


@pytest.mark.parametrize("ev, message", [
    (pipeline("n1>n2 n2>n1", {"n1": [R("r", "a", ["x"])], "n2": [W("w", "b", ["x"])]}), "cycle through n1, n2"),
    (dict(pipeline("n1>n2", {}), connections=[]), "need connections"),
    (dict(pipeline("n1>n2", {}), operations=[]), "either operations"),
    (pipeline("n1>n2", {"n1": [R("r", "a", ["x"])], "n2": [W("w", "b", ["x"])], "n3": [W("w", "c", ["x"])]}),
     "stage 'n3' is in no connection"),
    (pipeline("n1>n2", {"n1": [R("r", "a", ["x"]), T("r", ["x"], ["y"])], "n2": [W("w", "b", ["y"])]}),
     "stage 'n1': all operations must have unique names. Operation name 'r' is repeated"),
    (dict(CONCAT, connections=[["a", "b"]]), "belong to the pipeline form"),
    (pipeline("n1>n2", {"n1": [R("r", "a", ["x"])], "n2": [W("w", "b", [{"origin": "n1.r", "name": "x"}])]}),
     "by field name only"),
])
def test_pipeline_errors(ev, message) -> None:
    with pytest.raises(EventError, match=message):
        decode_event(ev)


@WITH_MEMORY
def test_pipeline_on_the_graph(graph) -> None:
    ev = pipeline("n1>n3 n2>n3 n3>n4", {
        "n1": [R("ReadCustomer", "customer", ["id", "name"])], "n2": [R("ReadPurchase", "purchase",
                                                                          ["customer_id", "item"])],
        "n3": [T("Join", ["n1.id", "n2.customer_id"], ["id", "customer_id"]), T("Rename id", ["id"],
                                                                                  ["id_from_customer"]),
               T("Identity name", ["n1.name"], ["name"])],
        "n4": [W("Write", "customer_purchase", ["id_from_customer", "name"])]}, joiners=["n3"])
    ingest(graph, ev)
    out = cdap_ds("customer_purchase")
    assert summary_of(graph, f(out, "id_from_customer")) == {cdap_ds("customer"): {"id"},
                                                               cdap_ds("purchase"): {"customer_id"}}
    assert summary_of(graph, f(out, "name")) == {cdap_ds("customer"): {"name"}}
    (ran,) = encode(graph.field_lineage(f(out, "id_from_customer")))["operations"]
    assert [o["name"] for o in ran["operations"]] == ["n1.ReadCustomer", "n2.ReadPurchase", "n3.Join",
                                                      "n3.Rename id", "n4.Write"]
    # item is read and used by nobody: a known field, its read its only operation
    (ran,) = encode(graph.field_lineage(f(cdap_ds("purchase"), "item"), "outgoing"))["operations"]
    assert [o["name"] for o in ran["operations"]] == ["n2.ReadPurchase"]


def test_a_run_sent_again_replaces_what_it_said(graph) -> None:
    ingest(graph, dict(CONCAT, run="run-1", time=T0))
    upper = event(read("read", "users", ["first"]), transform("upper", [("read", "first")], ["name"]),
                  write("write", "profiles", [("upper", "name")]))
    ingest(graph, dict(upper, run="run-1", time=T0))  # the same run, corrected
    assert summary_of(graph, f(PROFILES, "name")) == {USERS: {"first"}}
    (row,) = graph.query("MATCH (r:JobRun)-[:RanOperations]->(o:FieldOperations) RETURN count(r) AS runs")
    assert row["runs"] == 1
