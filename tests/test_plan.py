"""The pure planner: aspect changes + current state -> parameter rows (no graph involved)."""

from __future__ import annotations

from fieldgraph.graph.plan import DatasetState, FieldState, History, field_urn, plan_changes, resolve_reference
from fieldgraph.ingest.sources import decode_event

from .conftest import ds, lineage_event, mcp, schema_event, sf

A, B = ds("db.a"), ds("db.b")
V2 = "[version=2.0].[type=R].[type=Header].header.[type=string].customerId"
KEY = "[version=2.0].[key=True].[type=K].[type=string].id"
VAL = "[version=2.0].[type=R].[type=string].id"
UNION = "[version=2.0].[type=Record1].[type=Record2].foo2.[type=union].[type=int].bar2"


def fields(*paths: str, removed: tuple[str, ...] = ()) -> list[FieldState]:
    return [FieldState(field_urn(A, p), p, removed=p in removed) for p in paths]


def changes(*events):
    return [c for e in events for c in decode_event(e)]


def test_resolve_v2_v1_and_slash_paths() -> None:
    fs = fields(V2, KEY, VAL, UNION)
    assert resolve_reference(V2, fs) == ("exact", [V2])
    assert resolve_reference("header.customerId", fs) == ("unique", [V2])
    assert resolve_reference("/header/customerId", fs) == ("unique", [V2])
    assert resolve_reference("/foo2/bar2/int", fs) == ("unique", [UNION])  # the RFC's union member path
    assert resolve_reference("/foo2/bar2", fs) == ("unique", [UNION])
    assert resolve_reference("[version=2.0].[type=R].nope", fs) == ("unknown", [])
    assert resolve_reference("/header", fs) == ("unknown", [])


def test_ambiguous_reference_is_never_picked() -> None:
    kind, cands = resolve_reference("id", fields(KEY, VAL))
    assert kind == "ambiguous" and cands == sorted([KEY, VAL])
    assert resolve_reference("/id", fields(KEY, VAL))[0] == "ambiguous"


def test_current_fields_win_over_removed_ones() -> None:
    assert resolve_reference("id", fields(KEY, VAL, removed=(KEY,))) == ("unique", [VAL])
    assert resolve_reference("id", fields(KEY, removed=(KEY,))) == ("unique", [KEY])


def test_schema_rows_and_removed_fields() -> None:
    state = {A: DatasetState(A, False, 0, 10, fields={f.urn: f for f in fields("x", "y")})}
    plan = plan_changes(changes(schema_event(A, ["x", "z"], ts=20)), state)
    upserts = {r["props"]["fieldPath"]: r["props"] for r in plan.upsert_fields}
    assert set(upserts) == {"x", "z"} and not upserts["x"]["removed"]
    assert plan.set_field_props == [{"urn": field_urn(A, "y"), "props": {"removed": True}}]
    assert plan.upsert_datasets[0]["props"]["schemaTs"] == 20


def test_older_schema_only_adds_history() -> None:
    state = {A: DatasetState(A, False, 2, 10, fields={f.urn: f for f in fields("x")})}
    state[A].fields[field_urn(A, "x")].schemaVersion = 2
    plan = plan_changes(changes(schema_event(A, ["x", "old"], ts=99, version=1)), state, History())
    assert plan.counts["superseded"] == 1
    (row,) = plan.upsert_fields  # x is not overwritten; `old` is added, as removed
    assert row["props"]["fieldPath"] == "old" and row["props"]["removed"] is True
    assert not plan.upsert_datasets[0]["props"].get("schemaVersion")


def test_late_lineage_goes_into_the_past_and_newest_in_batch_wins() -> None:
    state = {A: DatasetState(A, False, lineageTs={"upstreamLineage": 50})}
    old = lineage_event(A, [(sf(A, "y"), [sf(B, "x")])], ts=40)
    plan = plan_changes(changes(old), state, History())
    # stored: no edges from 50 on; the late version holds over [40, 50) and is not the present
    assert plan.merge_field_edges == []
    (past,) = plan.create_past_field_edges
    assert (past["props"]["validFrom"], past["props"]["validTo"]) == (40, 50)
    assert plan.upsert_datasets[0]["props"]["upstreamLineageTimes"] == [40, 50]
    new1 = lineage_event(A, [(sf(A, "y"), [sf(B, "x")])], ts=60)
    new2 = lineage_event(A, [(sf(A, "y"), [sf(B, "w")])], ts=70)
    plan = plan_changes(changes(new2, new1), state, History())
    assert [r["up"] for r in plan.merge_field_edges] == [field_urn(B, "w")]
    assert [(r["up"], r["props"]["validFrom"], r["props"]["validTo"]) for r in plan.create_past_field_edges] \
        == [(field_urn(B, "x"), 60, 70)]
    assert plan.clear_lineage == [{"datasetUrn": A, "source": "upstreamLineage"}]


def test_a_newer_version_closes_what_it_drops_without_reading_history() -> None:
    state = {A: DatasetState(A, False, lineageTs={"upstreamLineage": 50})}
    plan = plan_changes(changes(lineage_event(A, [(sf(A, "y"), [sf(B, "w")])], ts=70)), state)
    (close,) = plan.close_lineage
    (merge,) = plan.merge_field_edges
    assert close["at"] == 70 and close["keep"] == [[merge["down"], merge["up"], merge["fact"]]]
    assert merge["validFrom"] == 70


def test_unknown_references_become_placeholders() -> None:
    plan = plan_changes(changes(lineage_event(A, [(sf(A, "y"), [sf(B, "/x/z")])], ts=1)), {})
    ensured = {r["urn"]: r["props"] for r in plan.ensure_fields}
    assert ensured[field_urn(B, "/x/z")]["placeholder"] is True
    assert ensured[field_urn(B, "/x/z")]["simplePath"] == "x.z"
    assert [r["urn"] for r in plan.ensure_datasets] == [B]
    assert plan.counts["placeholders"] == 2


def test_existing_placeholder_resolved_by_new_schema() -> None:
    ph = FieldState(field_urn(A, "/header/customerId"), "/header/customerId", placeholder=True,
                    refPath="/header/customerId")
    state = {A: DatasetState(A, True, fields={ph.urn: ph})}
    plan = plan_changes(changes(schema_event(A, [V2], ts=5)), state)
    assert plan.move_out_edges == [{"from": ph.urn, "to": field_urn(A, V2)}]
    assert plan.delete_fields == [{"urn": ph.urn}]


def test_dataset_delete_expands_to_every_aspect() -> None:
    ev = {"entityType": "dataset", "entityUrn": A, "changeType": "DELETE", "systemMetadata": {"lastObserved": 9}}
    state = {A: DatasetState(A, False, 0, 1, fields={f.urn: f for f in fields("x")})}
    plan = plan_changes(changes(ev), state, History())
    assert plan.set_field_props == [{"urn": field_urn(A, "x"), "props": {"removed": True}}]
    assert plan.archive_field_states == [{"urn": field_urn(A, "x"), "at": 9, "stateKey": None, "removed": True}]
    assert {r["source"] for r in plan.close_lineage} == {"upstreamLineage", "datasetUpstreamLineage"}
    assert plan.clear_job_lineage == [{"datasetUrn": A}]


def test_planning_is_pure_and_deterministic() -> None:
    evs = changes(schema_event(A, ["x"], 1), lineage_event(A, [(sf(A, "x"), [sf(B, "q")])], 2),
                  mcp(B, "upstreamLineage", None, 3, change="DELETE"))
    assert plan_changes(evs, {}) == plan_changes(evs, {})


def test_fast_field_ref_parsing_matches_the_normalizers() -> None:
    from fieldgraph.graph.plan import parse_field_ref
    from fieldgraph.normalizers import FieldUrn

    for ref in (sf(A, "x"), f"urn:li:datasetField:({A},/a/b)", sf(ds("we%2Cird%28name%29"), "a%2Cb"),
                "urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,db.a,prod),[version=2.0].[type=R].x)",
                "urn:li:schemaField:(urn:li:dataset:(hive,db.a,PROD),x)"):
        f = FieldUrn.parse(ref)
        assert parse_field_ref(ref) == (str(f.dataset), f.field_path), ref
