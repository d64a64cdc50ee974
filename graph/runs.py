"""Job runs and their field operations: CDAP's field lineage for a time range, answered from the runs in it.

Each CDAP run is a ``JobRun`` node (``job``, ``run``, ``time``) that ``Read`` and ``Wrote`` datasets and
``RanOperations`` (a ``FieldOperations`` node, stored once per checksum). A field's lineage in ``[start, end)``
is what the operations of the runs inside the range give (:mod:`fieldgraph.fieldops`), as CDAP answers it: an
edge seen by runs before and after the range but by none inside it does not count. A run before a job lineage
delete of a dataset it wrote no longer counts for that dataset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fieldgraph.fieldops import EndpointField, OperationSet

from . import cypher as cy
from .plan import parse_field_ref, simple_ref
from .store import GraphStore


@dataclass
class FieldRuns:
    """What the runs in a range say about one field."""

    #: the fields it comes from (incoming) or goes into (outgoing) -> the jobs whose runs say so
    neighbours: dict[EndpointField, set[str]] = field(default_factory=dict)
    #: per operation set: the runs that ran it and the operations that computed or used the field
    operations: list[dict[str, Any]] = field(default_factory=list)
    #: the jobs and transforms that drop the field (outgoing)
    dropped: list[str] = field(default_factory=list)


class RunLineage:
    """The run-based lineage of fields in one direction and range; operation sets are read once per checksum."""

    def __init__(self, store: GraphStore, direction: str, start: int | None, end: int | None) -> None:
        self.store, self.incoming, self.start, self.end = store, direction == "incoming", start, end
        self._sets: dict[str, OperationSet] = {}
        self._fields: dict[str, FieldRuns] = {}

    def connects(self, from_urn: str, hop_urn: str, job: str | None) -> bool:
        """Whether a run of ``job`` in the range ties the two fields (CDAP edges are kept only then)."""
        return job in self.of(from_urn).neighbours.get(endpoint_field(hop_urn), ())

    def of(self, urn: str) -> FieldRuns:
        if urn not in self._fields:
            self._fields[urn] = self._answer(urn)
        return self._fields[urn]

    def _answer(self, urn: str) -> FieldRuns:
        me = endpoint_field(urn)
        rows = self.store.run(cy.statement("job_runs"), {"dataset": me[0], "wrote": self.incoming,
                                                         "start": self.start, "end": self.end})
        self._load({r["checksum"] for r in rows})
        out = FieldRuns()
        groups: dict[str, list[dict[str, Any]]] = {}
        dropped: dict[str, None] = {}
        for r in sorted(rows, key=lambda r: (-r["time"], r["job"], r["run"])):
            ops = self._sets.get(r["checksum"])
            if ops is None:
                continue
            deleted_after = {w for w, deletes in r["wrote"] if any(d > r["time"] for d in deletes or ())}
            counted = {me[0]} if self.incoming else {w for w, _ in r["wrote"]}
            if counted <= deleted_after:
                continue  # every dataset it wrote (incoming: this one) was deleted after it
            if self.incoming:
                reached = ops.incoming(me)
            else:
                reached = {d for d in ops.outgoing(me) if d[0] not in deleted_after}
                dropped.update((f"{r['job']} {name}", None) for name in ops.dropped().get(me, ()))
            for f in reached:
                out.neighbours.setdefault(f, set()).add(r["job"])
            groups.setdefault(r["checksum"], []).append(r)
        for checksum, runs in groups.items():
            ops = self._sets[checksum]
            used = ops.incoming_operations(me) if self.incoming else ops.outgoing_operations(me)
            if not used:
                continue
            latest: dict[str, dict[str, Any]] = {}
            for r in runs:  # newest first: the first run of each program is its latest
                latest.setdefault(r["job"], {"program": r["job"].split(":", 1)[-1], "run": r["run"],
                                             "runTime": r["time"]})
            out.operations.append({"sourceFormat": "cdap", "checksum": checksum, "programs": list(latest.values()),
                                   "operations": [o.to_json() for o in used]})
        out.dropped = list(dropped)
        return out

    def _load(self, checksums: set[str]) -> None:
        missing = sorted(checksums - self._sets.keys())
        if missing:
            for row in self.store.run(cy.statement("field_operations"), {"checksums": missing}):
                self._sets[row["checksum"]] = OperationSet.from_json(row["operations"])


def endpoint_field(urn: str) -> EndpointField:
    """(dataset URN, plain field name) of a field URN: how field operations name a field."""
    ds, path = parse_field_ref(urn)
    return ds, simple_ref(path)
