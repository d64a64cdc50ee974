"""The planner of ``editableSchemaMetadata``: the tags and glossary terms set on a dataset's fields in DataHub's UI or
API; the newest version replaces the rest."""

from __future__ import annotations

import json

from fieldgraph.changes import UNSTAMPED, AspectDelete, EditableSchemaChange

from .planner import Planner


def plan_editable(p: Planner, urn: str, group: list[EditableSchemaChange | AspectDelete]) -> None:
    """The newest of the batch's ``editableSchemaMetadata`` versions of a dataset (the later of equal stamps;
    an unstamped delete is newer than what came before it), written unless the graph holds a newer one
    (``set_editable_labels.cypher`` compares). Kept on the dataset, as DataHub keeps it: the labels of each
    field path, matched to the fields when they are read, whichever arrives first."""
    p.dataset_row(urn)
    newest: tuple[int, EditableSchemaChange | AspectDelete, bool] | None = None
    for c in group:
        unstamped = c.ts == UNSTAMPED
        ts = max(newest[0], 0) if unstamped and newest else max(c.ts, 0)
        if newest is None or unstamped or ts >= newest[0]:
            newest = (ts, c, unstamped)
    assert newest is not None
    ts, c, unstamped = newest
    labels = [[path, list(ls)] for path, ls in c.labels] if isinstance(c, EditableSchemaChange) else []
    p.plan.set_editable_labels.append({"urn": urn, "ts": ts, "unstamped": unstamped,
                                       "labels": json.dumps(labels) if labels else None})
    p.plan.tally["editable"] += 1
    p.plan.tally["superseded"] += len(group) - 1
