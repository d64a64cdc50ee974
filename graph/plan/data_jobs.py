"""The planner of DataHub data jobs (``dataJobInputOutput``): a job's whole column lineage, into every dataset it
writes; the newest version replaces the job's edges wherever they are."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from fieldgraph.changes import UNSTAMPED, DataJobChange

from .planner import Planner
from .resolve import parse_field_ref
from .state import StoredJob


def plan_data_jobs(p: Planner, changes: Sequence[DataJobChange], stored: Mapping[str, StoredJob]) -> None:
    """Each job's newest ``dataJobInputOutput`` (the later of equal stamps), unless the graph holds a newer
    one: the job's edges it does not repeat stop holding at its time, wherever they are (the datasets the
    stored version wrote and this one writes), and its edges hold from then (those it repeats keep their
    ``validFrom``). An older version arriving late changes nothing; an unstamped delete is newer than what
    came before it, stored or in the batch."""
    newest = _newest(changes, stored)
    p.plan.tally["superseded"] += len(changes) - len(newest)
    for job, c in newest.items():
        held = stored.get(job)
        if held is not None and held.ts > c.ts:
            p.plan.tally["superseded"] += 1
            continue
        p.plan.tally["lineages"] += 1
        facts = p.facts(c, source=job)
        outputs = sorted({*c.outputs, *(parse_field_ref(f.down)[0] for f in facts)})
        keep = sorted([*f.key] for f in facts)
        for ds in sorted({*outputs, *(held.outputs if held else ())}):
            p.plan.close_lineage.append({"datasetUrn": ds, "source": job, "at": c.ts, "keep": keep})
        for f in facts:
            p.merge_edge(f, c.ts, c.ts)
        p.plan.upsert_data_jobs.append({"urn": job, "ts": c.ts, "outputs": outputs})


def _newest(changes: Sequence[DataJobChange], stored: Mapping[str, StoredJob]) -> dict[str, DataJobChange]:
    """Each job's newest version in the batch (the later of equal stamps), unstamped deletes stamped."""
    newest: dict[str, DataJobChange] = {}
    for c in changes:
        prev = newest.get(c.job)
        if c.ts == UNSTAMPED:
            held = stored.get(c.job)
            c = replace(c, ts=max(prev.ts if prev else 0, held.ts if held else 0))
        if prev is None or c.ts >= prev.ts:
            newest[c.job] = c
    return newest
