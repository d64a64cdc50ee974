"""Tags and glossary terms: a field's own, and their propagation along lineage (CDAP's propagateMetadata).

A field's own labels are its schema's tags and terms, those set in DataHub's UI or API (its dataset's
``editableSchemaMetadata``) and those set by hand; a label propagates downstream unless it was set by hand with
``propagate=False`` or the graph's ``non_propagating`` setting names it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fieldgraph.errors import InputError

from . import cypher as cy
from .answers import Carrier, InheritedLabel, LineageResult
from .plan import simple_ref
from .store import GraphStore


@dataclass(frozen=True, slots=True)
class OwnLabels:
    """A field's own tags and terms (``labels``) and, among them, those that do not propagate (``local``)."""

    dataset_urn: str | None
    field_path: str | None
    labels: tuple[str, ...] = ()
    local: tuple[str, ...] = ()


def own_labels(store: GraphStore, urns: Sequence[str], non_propagating: frozenset[str],
               states: Mapping[str, Mapping[str, Any] | None] | None = None) -> dict[str, OwnLabels]:
    """Each field's own labels (``field_labels.cypher``): the schema's (with ``states``, as of an instant: the
    schema's then, from each field's state then), those set in DataHub's UI or API (as they are now, also as of an
    instant), then those set by hand. The one place a field's own labels are put together."""
    out: dict[str, OwnLabels] = {}
    editable: dict[str, dict[str, list[str]]] = {}  # per dataset, parsed once
    for i in range(0, len(urns), 1000):
        for r in store.run(cy.statement("field_labels"), {"frontier": list(urns[i:i + 1000])}):
            tags, terms = r["tags"], r["glossaryTerms"]
            if states is not None:  # the schema's tags and terms then; hand-set ones as they are now
                then = states.get(r["urn"]) or {}
                tags, terms = then.get("tags"), then.get("glossaryTerms")
            if r["datasetUrn"] not in editable:
                editable[r["datasetUrn"]] = editable_labels(r["editableLabels"])
            spreading = [*(tags or []), *(f"urn:li:glossaryTerm:{t}" for t in terms or []),
                         *editable[r["datasetUrn"]].get(r["simplePath"] or "", ()), *(r["manualTags"] or [])]
            labels = tuple(dict.fromkeys([*spreading, *(r["localTags"] or [])]))
            propagating = {t for t in spreading if t not in non_propagating}
            out[r["urn"]] = OwnLabels(r["datasetUrn"], r["fieldPath"], labels,
                                      tuple(t for t in labels if t not in propagating))
    return out


def editable_labeled(store: GraphStore, label: str) -> list[str]:
    """The fields whose dataset's ``editableSchemaMetadata`` gives them ``label``."""
    out: list[str] = []
    parsed: dict[str, dict[str, list[str]]] = {}
    for r in store.run(cy.statement("editable_labeled_fields"), {"needle": json.dumps(label)}):
        if r["editableLabels"] not in parsed:  # one dataset's fields share it: parsed once
            parsed[r["editableLabels"]] = editable_labels(r["editableLabels"])
        if label in parsed[r["editableLabels"]].get(r["simplePath"] or "", ()):
            out.append(r["urn"])
    return out


def inherited(urn: str, walk: LineageResult, labels: Mapping[str, OwnLabels]) -> tuple[InheritedLabel, ...]:
    """The labels ``urn`` inherits over an upstream ``walk`` from it along the edges that carry metadata: each
    propagating label of each field reached, nearest first, with how far up it is and the path."""
    dist: dict[str, int] = {}
    for h in walk.hops:
        if h.dataset_urn is not None and h.urn != urn:
            dist.setdefault(h.urn, h.depth)
    out: list[InheritedLabel] = []
    for u, d in sorted(dist.items(), key=lambda kv: (kv[1], kv[0])):
        theirs = labels.get(u)
        if theirs is None:
            continue
        out += (InheritedLabel(label, u, d, tuple(walk.path_to(u))) for label in theirs.labels
                if label not in theirs.local)
    return tuple(out)


def carriers(label: str, sources: Sequence[str], spreading: Sequence[str], labels: Mapping[str, OwnLabels],
             walk: LineageResult) -> tuple[Carrier, ...]:
    """Every field that carries ``label``: the ``sources`` (their own), and the fields a downstream ``walk`` from
    those of them that spread it reached, each with the sources that reach it; nearest first."""
    own = {u: labels.get(u, OwnLabels(None, None)) for u in sources}
    found: dict[str, tuple[bool, list[str], int, str | None, str | None]] = {
        u: (True, [u], 0, o.dataset_urn, o.field_path) for u, o in own.items()}
    nexts: dict[str, list[str]] = {}
    for h in walk.hops:  # level by level: the first hop to a field is from the nearest source
        if h.dataset_urn is None:
            continue
        nexts.setdefault(h.from_urn, []).append(h.urn)
        found.setdefault(h.urn, (False, [], h.depth, h.dataset_urn, h.field_path))
    # where each field's label comes from: the sources that reach it (in memory, over the edges walked)
    for s in spreading:
        reached, todo = {s}, [s]
        while todo:
            for v in nexts.get(todo.pop(), ()):
                if v not in reached:
                    reached.add(v)
                    todo.append(v)
                    found[v][1].append(s)
    return tuple(sorted((Carrier(u, o, tuple(f), d, label, ds, p) for u, (o, f, d, ds, p) in found.items()),
                        key=lambda c: (c.distance, c.urn)))


def editable_labels(stored: str | None) -> dict[str, list[str]]:
    """A dataset's tags and terms set in DataHub's UI or API (``editableLabels``, JSON ``[[fieldPath, [label]]]``)
    by the v1 form of their field path: DataHub matches them to a schema's fields by that form (its field paths
    are often v1 there), so a field gets those of its own v1 path (``DatasetField.simplePath``)."""
    out: dict[str, list[str]] = {}
    for path, labels in json.loads(stored) if stored else ():
        have = out.setdefault(simple_ref(path), [])
        have += (x for x in labels if x not in have)
    return out


def label_of(text: str) -> str:
    """The stored form of a tag or term a user names: a tag by its name (``urn:li:tag:PII`` -> ``PII``),
    a glossary term by its URN (``urn:li:glossaryTerm:Classification.Sensitive``)."""
    text = text.strip()
    if not text:
        raise InputError("a tag or term name is empty")
    return text.removeprefix("urn:li:tag:")


class HandSetLabels(list[str]):
    """The tags and terms set by hand on a field (:meth:`LineageGraph.tag`): those that propagate, then those
    that stay on the field (``local``)."""

    def __init__(self, spreading: Iterable[str] = (), local: Iterable[str] = ()) -> None:
        self.local = list(local)
        super().__init__([*spreading, *self.local])


__all__ = ["HandSetLabels", "OwnLabels", "carriers", "editable_labeled", "editable_labels", "inherited", "label_of",
           "own_labels"]
