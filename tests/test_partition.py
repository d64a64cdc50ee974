"""A history split into parts that share no node (fieldgraph.graph.partition), each planned into an in-memory store
of its own as the bulk backfill's tasks plan them: the parts together are the graph planning it whole gives."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from fieldgraph.changes import Change, subject
from fieldgraph.graph.bulkload import build_snapshot
from fieldgraph.graph.partition import assign_parts, part_keys
from fieldgraph.graph.snapshot import EdgeRow, NodeRow, Snapshot
from fieldgraph.ingest.backfill import FIRST_STAGE, _expand, plan_stages
from fieldgraph.ingest.sources import decode_event

from .conftest import lineage_event, schema_event, sf

Group = tuple[tuple[str, str], list[Change]]


def groups_of(changes: Sequence[Change]) -> list[Group]:
    """The backfill's groups: the changes of each (dataset, aspect), in arrival order."""
    out: dict[tuple[str, str], list[Change]] = {}
    for c in changes:
        for x in _expand(c):
            out.setdefault((subject(x), x.aspect), []).append(x)
    return sorted(out.items())


def planned(groups: Sequence[Group]) -> Snapshot:
    schemas = [(k[0], cs) for k, cs in groups if k[1] in FIRST_STAGE]
    lineage = [(k[0], cs) for k, cs in groups if k[1] not in FIRST_STAGE]
    return build_snapshot(lambda store: plan_stages(store, schemas, lineage, 50))[0]


def joined(parts: Sequence[Snapshot]) -> Snapshot:
    """The parts side by side, their node ids kept apart."""
    out, offset = Snapshot(), 0
    for p in parts:
        out.nodes += [NodeRow(n.id + offset, n.label, n.props) for n in p.nodes]
        out.edges += [EdgeRow(e.start + offset, e.type, e.end + offset, e.props) for e in p.edges]
        offset += 1 + max((n.id for n in p.nodes), default=0)
    return out


def in_parts(groups: Sequence[Group], n: int) -> list[Snapshot]:
    where = assign_parts([(k, part_keys(cs), len(cs)) for k, cs in groups], n)
    return [planned([g for g in groups if where[g[0]] == p]) for p in range(n)]


def history() -> list[Change]:
    """Schema versions, removed fields, replaced and deleted lineage, placeholders, ambiguous references, the
    examples, CDAP runs sharing their operations, data jobs, field tags; SQL and a query reading other datasets'
    schemas, and two datasets' lineage naming one placeholder."""
    from .test_bulk_load import history_changes
    from .test_sql import TOTALS_SQL, orders_schema, query_event, sql_event, upstream_lineage

    ext = "urn:li:dataset:(urn:li:dataPlatform:hive,ext.shared,PROD)"
    a, b = (f"urn:li:dataset:(urn:li:dataPlatform:hive,db.{x},PROD)" for x in "ab")
    events = [orders_schema(), query_event(TOTALS_SQL, ts=5), upstream_lineage(10),
              sql_event("CREATE TABLE daily AS SELECT status, COUNT(*) AS n FROM orders GROUP BY status"),
              schema_event(a, ["x"], 1), schema_event(b, ["y"], 1),
              lineage_event(a, [(sf(a, "x"), [sf(ext, "k")])], 2), lineage_event(b, [(sf(b, "y"), [sf(ext, "k")])], 3)]
    return history_changes() + [c for e in events for c in decode_event(e)]


@pytest.mark.parametrize("n", [2, 3, 7])
def test_parts_planned_apart_are_the_graph_planned_whole(n: int) -> None:
    groups = groups_of(history())
    whole = planned(groups)
    parts = in_parts(groups, n)
    assert sum(1 for p in parts if p.nodes) >= 2  # the history is cut
    assert joined(parts).canonical() == whole.canonical()


def test_any_order_of_the_groups_and_any_cut_give_the_same_graph() -> None:
    groups = groups_of(history())
    whole = planned(groups).canonical()
    rng = random.Random(7)
    for _ in range(3):
        shuffled = rng.sample(groups, len(groups))
        assert joined(in_parts(shuffled, rng.randint(2, 6))).canonical() == whole


def test_groups_sharing_a_key_share_a_part_and_parts_are_balanced() -> None:
    groups: list[tuple[str, list[str], int]] = [
        ("a", ["x"], 5), ("b", ["x", "y"], 5), ("c", ["y"], 5),  # a-b-c joined through x and y
        ("d", ["z"], 4), ("e", [], 4), ("f", ["w"], 4), ("g", ["w"], 3)]
    where = assign_parts(groups, 3)
    assert where["a"] == where["b"] == where["c"] and where["f"] == where["g"]
    load: dict[int, int] = {}
    for g, _, w in groups:
        load[where[g]] = load.get(where[g], 0) + w
    assert sorted(load.values()) == [7, 8, 15]  # 15 cannot be cut; the rest spread
    assert set(assign_parts(groups, 1).values()) == {0}
    with pytest.raises(ValueError, match="at least 1"):
        assign_parts(groups, 0)


def test_keys_tie_a_lineage_to_its_upstreams_and_runs_to_their_datasets() -> None:
    from .test_cdap import CONCAT, PROFILES, USERS

    a = "urn:li:dataset:(urn:li:dataPlatform:hive,db.a,PROD)"
    up = "urn:li:dataset:(urn:li:dataPlatform:hive,db.up,PROD)"
    (lin,) = decode_event(lineage_event(a, [(sf(a, "x"), [sf(up, "k")])], 2))
    assert {a, up} <= part_keys([lin])
    other = decode_event(dict(CONCAT, programRun="default.OtherApp.workflow.Copy"))  # the same operations
    assert {USERS, PROFILES} <= part_keys(decode_event(CONCAT)) & part_keys(other)
