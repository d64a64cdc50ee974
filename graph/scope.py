"""Read and write scopes: which datasets a reader may see and a writer may change (pure).

A scope is a list of rules, each matching dataset URNs: ``*`` (every dataset), ``platform:<name>`` (the datasets of
one platform: ``platform:hive``) or a dataset URN prefix (``urn:li:dataset:(urn:li:dataPlatform:hive,finance.``:
a platform's datasets whose name starts so). A dataset is in the scope when a rule matches its URN (in its
canonical form); a field when its dataset is. :func:`fieldgraph.graph.scoped.scoped` answers under a read scope;
:func:`out_of_scope` says which datasets a change writes (and reads) that a writer's scopes do not hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import assert_never

from fieldgraph.changes import (
    AspectDelete,
    Change,
    DataJobChange,
    DatasetDelete,
    EditableSchemaChange,
    JobLineageChange,
    LineageChange,
    ManualEdgeChange,
    QueryChange,
    RenameChange,
    SchemaChange,
    SqlChange,
    references,
    subject,
)
from fieldgraph.errors import ConfigError, UrnError
from fieldgraph.normalizers.urns import DatasetUrn

from .plan.resolve import parse_field_ref

#: the rule matching every dataset
ALL = "*"
_PLATFORM = "platform:"
_DATASET = "urn:li:dataset:("


def check_rule(rule: str) -> str:
    """``rule``, if it is one (``*``, ``platform:<name>``, a dataset URN prefix), else :class:`ConfigError`
    saying what a rule is."""
    if rule == ALL or (rule.startswith(_PLATFORM) and len(rule) > len(_PLATFORM) and "," not in rule) or \
            rule.startswith(_DATASET):
        return rule
    raise ConfigError(f"{rule!r} is not a scope rule: '*', 'platform:<name>' (platform:hive) or a dataset URN "
                      f"prefix ({_DATASET}urn:li:dataPlatform:hive,finance.)")


@lru_cache(maxsize=65536)
def _canonical(urn: str) -> DatasetUrn | None:
    try:
        return DatasetUrn.parse(urn)
    except UrnError:
        return None


@dataclass(frozen=True)
class Scope:
    """The datasets some rules match (:func:`check_rule`); ``through_hidden``: a walk under it goes on through the
    fields it may not see (never naming them) instead of stopping there."""

    rules: tuple[str, ...] = ()
    through_hidden: bool = False
    _seen: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for r in self.rules:
            check_rule(r)

    @classmethod
    def everything(cls) -> Scope:
        return cls((ALL,))

    @property
    def all(self) -> bool:
        """Whether it holds every dataset (a full-access scope)."""
        return ALL in self.rules

    @property
    def empty(self) -> bool:
        return not self.rules

    def holds(self, dataset: str) -> bool:
        """Whether the dataset URN ``dataset`` is in the scope (a URN that does not parse is in no scope but ``*``)."""
        known = self._seen.get(dataset)
        if known is None:
            known = self._seen[dataset] = self._match(dataset)
            if len(self._seen) > 100_000:
                self._seen.clear()
        return known

    def _match(self, dataset: str) -> bool:
        if self.all:
            return True
        parsed = _canonical(dataset)
        if parsed is None:
            return False
        urn = str(parsed)
        return any(urn.startswith(r) if r.startswith(_DATASET) else parsed.platform == r[len(_PLATFORM):]
                   for r in self.rules)

    def sees(self, urn: str) -> bool:
        """Whether a field URN's dataset, or a dataset URN, is in the scope."""
        return self.holds(dataset_of(urn))


def dataset_of(urn: str) -> str:
    """The dataset URN of a field URN (a dataset URN: itself; anything else: as it is)."""
    if urn.startswith(_DATASET):
        return urn
    try:
        return parse_field_ref(urn)[0]
    except UrnError:
        return urn


def _unique(urns: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(dataset_of(u) for u in urns))


def written(change: Change) -> list[str] | None:
    """The datasets ``change`` writes; None: it may write into any dataset (a DataHub query's SQL, which the graph
    derives lineage from for every dataset naming the query; a data job's column lineage, whose newest version ends
    the job's edges in every dataset it wrote before)."""
    match change:
        case QueryChange() | DataJobChange():
            return None
        case JobLineageChange(dataset=ds, dropped=dropped):  # ``dropped`` marks the source fields a job drops
            return _unique([ds, *(ref for ref, _ in dropped)])
        case (SchemaChange(dataset=ds) | LineageChange(dataset=ds) | SqlChange(dataset=ds)
              | EditableSchemaChange(dataset=ds) | RenameChange(dataset=ds) | ManualEdgeChange(dataset=ds)
              | AspectDelete(dataset=ds) | DatasetDelete(dataset=ds)):
            return [dataset_of(ds)]
        case _:
            assert_never(change)


def read(change: Change) -> list[str]:
    """The datasets ``change`` refers to upstream (lineage from them, the old side of a rename)."""
    return _unique(references(change))


def out_of_scope(change: Change, write: Scope, read_scope: Scope) -> str | None:
    """Why a writer with these scopes may not write ``change`` (naming the dataset), or None."""
    targets = written(change)
    if targets is None:
        if not write.all:
            what = f"query {change.query}" if isinstance(change, QueryChange) else f"data job {subject(change)}"
            return f"the DataHub {what} may write lineage into any dataset: it needs a write scope of '*'"
    else:
        for ds in targets:
            if not write.holds(ds):
                return f"dataset {ds} is outside its write scope"
    for ds in read(change):
        if ds not in (targets or ()) and not read_scope.holds(ds):
            return f"dataset {ds} (referred to upstream) is outside its read scope"
    return None


def visible(urns: Iterable[str], scope: Scope) -> Iterator[str]:
    """The URNs (fields or datasets) ``scope`` sees."""
    return (u for u in urns if scope.sees(u))


__all__ = ["ALL", "Scope", "check_rule", "dataset_of", "out_of_scope", "read", "visible", "written"]
