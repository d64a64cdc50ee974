"""CDAP field operations -> derived field lineage (pure), and on the real embedded graph."""

from __future__ import annotations

import pytest

from fieldgraph.errors import EventError
from fieldgraph.graph.plan import field_urn
from fieldgraph.ingest.sources import decode_event
from fieldgraph.ingest.sources.cdap import CdapLineageError

from .conftest import ingest, schema_event

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


def test_concatenation_drops_and_identity() -> None:
    (change,) = decode_event(CONCAT)
    assert change.dataset == PROFILES and change.aspect == "jobLineage"
    edges = edges_of(CONCAT)
    assert set(edges) == {(f(PROFILES, "name"), f(USERS, "first")), (f(PROFILES, "name"), f(USERS, "last")),
                          (f(PROFILES, "id"), f(USERS, "id"))}
    name = edges[(f(PROFILES, "name"), f(USERS, "first"))]
    assert name["operations"] == ["read", "concat", "write"] and name["transformation"] == "concat"
    assert name["operationDescriptions"] == ["read the users", "first + ' ' + last", "write profiles"]
    assert name["program"] == "default.UserApp.workflow.Normalize" and name["run"] == "run-1"
    assert name["runTime"] == T0 and name["kind"] == "DIRECT" and name["sourceFormat"] == "cdap"
    ident = edges[(f(PROFILES, "id"), f(USERS, "id"))]
    assert ident["transformation"] == "Identity" and ident["subtype"] == "IDENTITY"
    assert ident["operations"] == ["read", "write"]
    # zip is read and never used: no edge; first and last are dropped
    assert not any(up == f(USERS, "zip") for _, up in edges)
    assert sorted(change.dropped) == [(f(USERS, "first"), "cdap:default.UserApp.workflow.Normalize dropFirst"),
                                             (f(USERS, "last"), "cdap:default.UserApp.workflow.Normalize dropLast")]


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
    assert edges[(f(PROFILES, "id"), f(USERS, "id"))]["operations"] == ["r1", "join", "w1", "w2"]
    assert edges[(f(AUDIT, "email"), f(USERS, "email"))]["transformation"] == "Identity"
    assert edges[(f(PROFILES, "total"), f(cdap_ds("orders"), "total"))]["operations"] == ["r2", "w2"]


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
    assert edges[(f(PROFILES, "a"), f(USERS, "a"))]["operations"] == ["src", "upper", "sink"]
    assert edges[(f(PROFILES, "b"), f(USERS, "b"))]["operations"] == ["src", "sink"]


@pytest.mark.parametrize("ops, message", [
    ([read("r", "u", ["a"]), read("r", "v", ["a"]), write("w", "o", [("r", "a")])], "name 'r' is used by"),
    ([read("r", "u", ["a"])], "there is no WRITE"),
    ([transform("t", [], ["a"]), write("w", "o", [("t", "a")])], "there is no READ"),
    ([read("r", "u", ["a"]), write("w", "o", [("nope", "a")])], "'nope', which names no operation"),
    ([read("r", "u", ["a"]), write("w", "o", [("r", "b")])], "does not output it"),
    ([read("r", "u", ["a"]), write("w", "o", ["zzz"])], "output by no earlier operation"),
    ([read("r", "u", ["a"]), transform("t1", [("r", "a"), ("t2", "y")], ["x"]), transform("t2", [("t1", "x")], ["y"]),
      write("w", "o", [("t2", "y")])], "cycle: t1, t2"),
])
def test_invalid_operation_sets_are_rejected(ops, message) -> None:
    with pytest.raises(CdapLineageError, match=message):
        decode_event(event(*ops))


def test_malformed_events_name_the_place() -> None:
    with pytest.raises(EventError, match=r"operations\.0.*READ operation needs source"):
        decode_event(event({"type": "READ", "name": "r", "outputs": ["a"]}, write("w", "o", [("r", "a")])))
    with pytest.raises(EventError, match="time"):
        decode_event({"programRun": "p", "operations": [read("r", "u", ["a"]), write("w", "o", [("r", "a")])]})


# --- on the graph ---


def test_derived_lineage_on_the_graph_with_time_ranges_and_drops(graph) -> None:
    ingest(graph, schema_event(PROFILES, ["id", "name"], ts=1), CONCAT)
    up = graph.upstream(f(PROFILES, "name"))
    assert {h.fieldPath for h in up.hops} == {"first", "last"}
    assert all(h.placeholder for h in up.hops)  # users has no schema yet: placeholders
    ingest(graph, schema_event(USERS, ["id", "first", "last", "zip"], ts=2))
    up = graph.upstream(f(PROFILES, "name"))
    assert {h.fieldPath for h in up.hops} == {"first", "last"} and not any(h.placeholder for h in up.hops)

    # a later run of the same program keeps one edge per field pair, with first and last seen
    later = dict(CONCAT, run="run-2", time=T0 + 86_400_000)
    ingest(graph, later)
    (edge,) = [h.edge for h in graph.upstream(f(PROFILES, "name")).hops if h.fieldPath == "first"]
    assert edge["firstSeen"] == T0 and edge["lastSeen"] == T0 + 86_400_000 and edge["run"] == "run-2"
    # an older run arriving late does not overwrite the newer run's properties
    ingest(graph, dict(CONCAT, run="run-0", time=T0 - 1000))
    (edge,) = [h.edge for h in graph.upstream(f(PROFILES, "name")).hops if h.fieldPath == "first"]
    assert edge["firstSeen"] == T0 - 1000 and edge["run"] == "run-2"

    inc = graph.field_lineage(f(PROFILES, "name"), "incoming", start=T0, end=T0 + 10)
    assert inc["summary"] == [{"dataset": USERS, "fields": ["first", "last"]}]
    assert inc["operations"][0]["operations"] == ["read", "concat", "write"]
    assert graph.field_lineage(f(PROFILES, "name"), "incoming", start=T0 + 90_000_000)["summary"] == []
    assert graph.field_lineage(f(PROFILES, "name"), "incoming", end=T0 - 2000)["summary"] == []

    out = graph.field_lineage(f(USERS, "first"), "outgoing")
    assert out["summary"] == [{"dataset": PROFILES, "fields": ["name"]}]
    assert out["dropped"] == ["cdap:default.UserApp.workflow.Normalize dropFirst"]
    assert graph.field_lineage(f(USERS, "zip"), "outgoing")["summary"] == []


def test_generated_field_is_a_known_destination_field(graph) -> None:
    ev = event(read("read", "lines", ["body"]), transform("stamp", [], ["loadedAt"]),
               write("write", "words", [("read", "body"), ("stamp", "loadedAt")]))
    ingest(graph, ev)
    fields = {r["fieldPath"]: r for r in graph.fields(cdap_ds("words"))}
    assert set(fields) == {"body", "loadedAt"}
    assert graph.upstream(f(cdap_ds("words"), "loadedAt")).hops == []
    # a schema arriving later resolves the declared fields to its own
    ingest(graph, schema_event(cdap_ds("words"), ["body", "loadedAt"], ts=T0 + 1))
    fields = {r["fieldPath"]: r for r in graph.fields(cdap_ds("words"))}
    assert set(fields) == {"body", "loadedAt"} and not any(r["placeholder"] for r in fields.values())


def test_invalid_event_writes_nothing(graph) -> None:
    from fieldgraph.ingest.replay import RawEvent, decode

    bad = event(read("r", "u", ["a"]), write("w", "o", [("nope", "a")]))
    changes, reject = decode(RawEvent("e.json", 3, bad))
    assert changes == [] and "e.json" == reject.file and "names no operation" in reject.error
    assert graph.stats()["dataDerivedFromEdges"] == 0
