"""The lineage graph as a read scope sees it: :func:`scoped` (``scoped(graph, scope)``).

:class:`ScopedGraph` answers over the same store, and no answer of it names a dataset the scope hides, nor its
fields, edges or tags:

- a hidden field or dataset asked for by name is not found, with the message of one not in the graph;
- walks (lineage, impact, path, lineage summaries, tags and their propagation, walk diffs) stop at hidden fields,
  or go on through them when the scope says ``through_hidden`` (:mod:`fieldgraph.graph.walk`); a walk's answer says
  how many it stopped at or went through (``hidden``); labels are inherited only from fields the walk shows; a
  timeline stops at them whatever the scope says;
- listings (search, fields, dataset lineage, unresolved references, a dataset's lineage diff, unused fields) leave
  out what touches a hidden dataset (an edge with a hidden end, a CDAP operation naming a hidden dataset);
- a field whose only readers are hidden is read all the same: not among the unused fields, its readers unnamed;
- graph-wide counts (``stats``) and raw queries are refused (:class:`OutOfScope`) unless the scope holds every
  dataset: counts would tell how much there is that the reader may not see.

It fails closed: a question :class:`LineageGraph` learns later is refused here until this view answers it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from fieldgraph.changes import Change
from fieldgraph.errors import OutOfScope
from fieldgraph.normalizers.urns import canonical_dataset_urn

from .answers import (
    AmbiguousReference,
    DatasetEdge,
    FieldLineage,
    FieldRow,
    GraphStats,
    Hop,
    LineageDiff,
    LineageResult,
    SearchResult,
    Unresolved,
    UnusedFields,
)
from .lineage import LineageGraph
from .plan import DatasetState
from .scope import Scope
from .walk import Walk


class ScopedGraph(LineageGraph):
    """``graph`` as ``scope`` sees it (see the module). A view: closing it leaves the graph open."""

    def __init__(self, graph: LineageGraph, scope: Scope) -> None:
        super().__init__(graph.store)
        self.non_propagating = graph.non_propagating
        self.graph = graph
        self.scope = scope

    def close(self) -> None:
        """Nothing: the graph the view is of stays open."""

    def _visible(self, urns: Iterable[str]) -> list[str]:
        return [u for u in urns if self.scope.sees(u)]

    # ---- naming things (a hidden dataset is not in the graph: every name is resolved through read_state) ----

    def read_state(self, dataset_urns: Sequence[str]) -> dict[str, DatasetState]:
        return super().read_state([u for u in dataset_urns if self.scope.holds(u)])

    # ---- walks ----

    def _walk(self, starts: list[str], direction: str, depth: int | None, time_budget_s: float,
              dataset_starts: Sequence[str] = (), keep: Callable[[Hop], bool] | None = None,
              as_of: int | None = None) -> LineageResult:
        res = Walk(self.store, direction, as_of=as_of, keep=keep, time_budget_s=time_budget_s, scope=self.scope).run(
            self._visible(starts), depth, dataset_starts=self._visible(dataset_starts))
        return res if as_of is None else self._as_then(res, as_of)

    def _metadata_walk(self, starts: list[str], direction: str, depth: int | None, time_budget_s: float,
                       indirect: bool, as_of: int | None, deadline: float) -> LineageResult:
        from fieldgraph.changes import carries_metadata

        return Walk(self.store, direction, as_of=as_of, keep=lambda h: carries_metadata(h.edge, indirect=indirect),
                    time_budget_s=time_budget_s, deadline=deadline, scope=self.scope).run(
            self._visible(starts), depth, capped=False)

    def field_lineage(self, field: str, direction: str = "incoming", start: int | None = None,
                      end: int | None = None, depth: int = 1, **kw: Any) -> FieldLineage:
        """As :meth:`LineageGraph.field_lineage`, without the CDAP operations that name a hidden dataset."""
        res = super().field_lineage(field, direction, start, end, depth, **kw)
        return replace(res, operations=tuple(o for o in res.operations if self._shows_operation(o)))

    def _shows_operation(self, op: Any) -> bool:
        ends = [x.get(k) for x in op.get("operations") or () for k in ("source", "destination")]
        return all(self.scope.sees(e) for e in ends if isinstance(e, str) and e)

    # ---- listings ----

    def fields(self, dataset: str, *, as_of: int | None = None) -> list[FieldRow]:
        urn = canonical_dataset_urn(dataset)
        return super().fields(urn, as_of=as_of) if self.scope.holds(urn) else []

    def search(self, text: str, limit: int = 20) -> SearchResult:
        """As :meth:`LineageGraph.search`, among the datasets and fields the scope sees: asked again for more hits
        while the hidden ones left fewer than ``limit`` (up to 64 times ``limit``)."""
        asked = max(1, limit)
        while True:
            found = super().search(text, asked)
            datasets = tuple(d for d in found.datasets if self.scope.holds(d.urn))[:limit]
            fields = tuple(f for f in found.fields if self.scope.holds(f.dataset))[:limit]
            exhausted = len(found.datasets) < asked and len(found.fields) < asked
            if exhausted or (len(datasets) >= limit and len(fields) >= limit) or asked >= 64 * max(1, limit):
                return SearchResult(datasets, fields)
            asked *= 4

    def dataset_lineage(self, dataset: str | None = None) -> list[DatasetEdge]:
        if dataset and not self.scope.holds(canonical_dataset_urn(dataset)):
            return []
        return [e for e in super().dataset_lineage(dataset)
                if self.scope.holds(e.downstream) and self.scope.holds(e.upstream)]

    def unresolved(self) -> list[Unresolved]:
        return [u for u in super().unresolved() if self.scope.holds(u.dataset)]

    def ambiguous(self) -> list[AmbiguousReference]:
        return [u for u in super().ambiguous() if self.scope.holds(u.dataset)]

    def unused(self, dataset: str | None = None, *, platform: str | None = None,
               as_of: int | None = None) -> UnusedFields:
        """As :meth:`LineageGraph.unused`, among the datasets the scope holds (a hidden dataset asked for is not in
        the graph). A field whose only readers are hidden is read all the same: it is not listed, and nothing names
        its readers (its last read counts edges from hidden readers too)."""
        found = super().unused(dataset, platform=platform, as_of=as_of)
        return replace(found, fields=tuple(f for f in found.fields if self.scope.holds(f.dataset)))

    def diff_lineage(self, dataset: str, t1: int, t2: int) -> LineageDiff:
        d = super().diff_lineage(dataset, t1, t2)  # a hidden dataset: not in the graph (read_state)
        return replace(d, edges_added=tuple(e for e in d.edges_added if self.scope.sees(e.down) and
                                            self.scope.sees(e.up)),
                       edges_removed=tuple(e for e in d.edges_removed if self.scope.sees(e.down) and
                                           self.scope.sees(e.up)))

    def stats(self) -> GraphStats:
        """The graph's counts, for a scope that holds every dataset; else :class:`OutOfScope` (they would tell how
        much the reader may not see)."""
        if not self.scope.all:
            raise OutOfScope("the graph's counts are for tokens that may read every dataset: they would disclose how "
                             "much this token may not see")
        return super().stats()

    # ---- what a read scope does not do ----

    def query(self, cypher: str, params: dict[str, Any] | None = None, *, write: bool = False
              ) -> list[dict[str, Any]]:
        raise OutOfScope("raw queries see the whole graph: not answered under a read scope")

    def write(self, changes: Sequence[Change], **kw: Any) -> Any:
        raise OutOfScope("a read scope's view of the graph does not write")


def scoped(graph: LineageGraph, scope: Scope) -> LineageGraph:
    """``graph`` as a read ``scope`` sees it: every answer shows only the datasets the scope holds (a view over the
    same store); for a scope that holds every dataset, the graph itself."""
    if isinstance(graph, ScopedGraph):
        graph = graph.graph
    return graph if scope.all else ScopedGraph(graph, scope)


#: what the view answers through the overrides above and the walks (every other public method of
#: :class:`LineageGraph` is refused by the view until it is added here, or overridden)
_ANSWERED = frozenset({"upstream", "downstream", "impact", "path", "drawn_edge", "tags", "tagged", "field", "ping",
                       "open", "resolve_field", "resolve_node", "read_state",
                       "diff_walk",  # two walks (scoped) and the states of what they show
                       "timeline"})  # its steps keep what _visible keeps


def _refused(name: str) -> Callable[..., Any]:
    def refuse(self: ScopedGraph, *args: Any, **kw: Any) -> Any:
        raise OutOfScope(f"{name} is not answered under a read scope")

    refuse.__name__ = name
    return refuse


for _name in dir(LineageGraph):
    if not _name.startswith("_") and _name not in ScopedGraph.__dict__ and _name not in _ANSWERED and \
            callable(getattr(LineageGraph, _name)):
        setattr(ScopedGraph, _name, _refused(_name))


__all__ = ["ScopedGraph", "scoped"]
