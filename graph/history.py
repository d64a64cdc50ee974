"""Time on every fact: pure timeline arithmetic for the planner (no I/O).

The graph keeps, beside the present, when each fact held (``validFrom`` inclusive, ``validTo`` exclusive,
in ms of the change events' own time):

- a lineage edge that holds now is a ``DataDerivedFrom`` edge with ``validFrom``; one that held before is a
  ``PreviouslyDerivedFrom`` edge with ``validFrom`` and ``validTo`` (same properties);
- a field's state now (listed or removed, type, description, tags, terms) is on its node, since ``since``;
  each earlier state is a ``FieldState`` node (``(field)-[:HadState]->(state)``) with its interval;
- each dataset keeps the times of its aspect versions (``schemaTimes``, ``upstreamLineageTimes``,
  ``datasetUpstreamLineageTimes``, ``jobLineageDeletes``): a version that changed nothing still ends the
  one before it, so a late event knows where its own interval ends.

An aspect version holds from its time until the next version's. Appending a version newer than every
stored one needs no history (the planner's fast path: close what it drops, archive what it changes);
anything else (a late version, several versions of one aspect in one batch) replays the aspect's whole
timeline here: the stored versions are reconstructed from the stored intervals, the new ones are placed
by time, and the result replaces what was stored. Replaying in any arrival order gives the same intervals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

#: field properties whose value at a past instant an as-of answer shows (the rest are as they are now)
STATE_PROPS = ("type", "nativeDataType", "nullable", "description", "isPartOfKey", "tags", "glossaryTerms")
#: edge properties that are about time, not about the fact (left out of an edge's fact key)
TIME_PROPS = frozenset({"validFrom", "validTo", "firstSeen", "lastSeen", "fact"})


def _digest(value: Any) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=10).hexdigest()


@lru_cache(maxsize=1 << 14)
def _state_digest(values: tuple[Any, ...], types: tuple[type, ...]) -> str:
    return _digest(values)


@lru_cache(maxsize=1 << 14)
def _fact_digest(items: tuple[tuple[str, Any], ...], types: tuple[type, ...]) -> str:
    return _digest(list(items))


def state_key(props: Mapping[str, Any]) -> str:
    """A fingerprint of a field's state properties (:data:`STATE_PROPS`); ``removed`` is kept apart. Fields repeat
    a few states: each one's is remembered (by its values and their types: ``1 == 1.0 == True``, not their
    fingerprints)."""
    values = tuple([_freeze(props.get(k)) for k in STATE_PROPS])
    try:
        return _state_digest(values, tuple(map(type, values)))
    except TypeError:  # an unhashable value (a map): not remembered
        return _digest(values)


def fact_key(props: Mapping[str, Any]) -> str:
    """A fingerprint of what a lineage edge says: every property that is not about time (stored as the edge's
    ``fact``). An edge keeps its interval while an aspect's new versions repeat it between the same two fields,
    and is closed when it changes. Remembered as :func:`state_key`'s are."""
    items = sorted([(k, tuple(v) if isinstance(v, list) else v)  # _freeze, inline: called per edge
                    for k, v in props.items() if k not in TIME_PROPS])
    try:
        return _fact_digest(tuple(items), tuple([type(v) for _, v in items]))
    except TypeError:
        return _digest(items)


def _freeze(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def state_props(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: props[k] for k in STATE_PROPS if props.get(k) is not None}


# --- fields ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Held:
    """A field's state over ``[start, end)`` (``end`` None: it holds now)."""

    start: int
    end: int | None
    removed: bool
    props: Mapping[str, Any]  # STATE_PROPS only

    @property
    def key(self) -> tuple[bool, str]:
        return self.removed, state_key(self.props)

    def covers(self, t: int) -> bool:
        return self.start <= t and (self.end is None or t < self.end)


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    """One version of a schema aspect in a replay: the fields it lists with their state properties (a delete
    lists none). ``adds_only``: a schema superseded by version number, which only adds fields never seen, as
    removed. ``order`` breaks ties of ``ts`` (later arrival wins)."""

    ts: int
    listed: Mapping[str, Mapping[str, Any]]
    order: int = 0
    adds_only: bool = False


def stored_schema_versions(times: Iterable[int], fields: Mapping[str, Sequence[Held]]) -> list[SchemaVersion]:
    """The stored versions, reconstructed from the fields' states at each version time."""
    out = []
    for t in sorted(set(times)):
        listed = {}
        for urn, states in fields.items():
            for s in states:
                if s.covers(t) and not s.removed:
                    listed[urn] = s.props
        out.append(SchemaVersion(t, listed, order=-1))
    return out


def replay_schema(versions: Iterable[SchemaVersion]) -> dict[str, list[Held]]:
    """Every field's states from a schema aspect's versions: listed fields hold the version's state, fields
    known before and not listed are removed (with their last state), until the next version."""
    timelines: dict[str, list[Held]] = {}
    known: dict[str, Mapping[str, Any]] = {}
    for v in by_time(versions):
        if v.adds_only:
            for urn, props in v.listed.items():
                if urn not in known:
                    known[urn] = props
                    _hold(timelines.setdefault(urn, []), Held(v.ts, None, True, props))
            continue
        for urn, props in v.listed.items():
            _hold(timelines.setdefault(urn, []), Held(v.ts, None, False, props))
        for urn, props in known.items():
            if urn not in v.listed:
                _hold(timelines[urn], Held(v.ts, None, True, props))
        known.update(v.listed)
    return timelines


def by_time(versions: Iterable[SchemaVersion]) -> list[SchemaVersion]:
    """Versions in time order; of several at one time, the last (by ``order``) wins."""
    at: dict[int, SchemaVersion] = {}
    adds: list[SchemaVersion] = []
    for v in sorted(versions, key=lambda v: (v.ts, v.order)):
        if v.adds_only:
            adds.append(v)
        else:
            at[v.ts] = v
    return sorted([*at.values(), *adds], key=lambda v: (v.ts, v.adds_only))


def _hold(timeline: list[Held], state: Held) -> None:
    """Append ``state`` (open), closing the state before it; an equal state just goes on."""
    if timeline:
        last = timeline[-1]
        if last.key == state.key:
            return
        timeline[-1] = Held(last.start, state.start, last.removed, last.props)
        if last.start == state.start:  # replaced at the same instant
            timeline.pop()
            if timeline and timeline[-1].key == state.key:
                before = timeline[-1]
                timeline[-1] = Held(before.start, None, before.removed, before.props)
                return
    timeline.append(state)


# --- lineage aspects ---------------------------------------------------------------------------------------


@dataclass(slots=True)  # not frozen, as cheap to build as a tuple (the planner builds one per edge); never changed
class Fact:
    """A lineage edge as a fact: ``down`` derives from ``up`` (a field, or a dataset when ``dataset``) with
    ``props`` (its edge properties, time ones aside)."""

    down: str
    up: str
    props: Mapping[str, Any]
    dataset: bool = False
    #: job lineage: a fact is the (field pair, job), whatever the run's properties
    additive: bool = False
    #: :func:`fact_key` of ``props``, computed once (the planner asks for it per edge several times), or given by
    #: a fact with the same ``props``; job lineage facts are keyed by their job and need none
    fact: str = field(default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.additive:
            self.fact = ""
        elif not self.fact:
            self.fact = fact_key(self.props)

    @property
    def key(self) -> tuple[str, str, str]:
        """The fact's identity in a timeline: its two ends and what it says (for job lineage: the job)."""
        return self.down, self.up, str(self.props.get("source")) if self.additive else self.fact


@dataclass(frozen=True, slots=True)
class Span:
    """A fact held over ``[start, end)`` (``end`` None: it holds now); ``last_seen``: the newest version or run
    within the span that had it; ``first_seen``: the first."""

    fact: Fact
    start: int
    end: int | None
    first_seen: int
    last_seen: int

    def covers(self, t: int) -> bool:
        return self.start <= t and (self.end is None or t < self.end)


@dataclass(frozen=True, slots=True)
class LineageVersion:
    """One version of a lineage aspect: its facts (a delete has none)."""

    ts: int
    facts: tuple[Fact, ...]
    order: int = 0


def stored_lineage_versions(times: Iterable[int], spans: Sequence[Span]) -> list[LineageVersion]:
    return [LineageVersion(t, tuple(s.fact for s in spans if s.covers(t)), order=-1) for t in sorted(set(times))]


def replay_lineage(versions: Iterable[LineageVersion]) -> list[Span]:
    """The spans of a lineage aspect's facts: each version's facts hold until a version without them."""
    at: dict[int, LineageVersion] = {}
    for v in sorted(versions, key=lambda v: (v.ts, v.order)):
        at[v.ts] = v
    spans: list[Span] = []
    open_: dict[tuple[str, str, str], Span] = {}
    for t in sorted(at):
        facts = {f.key: f for f in at[t].facts}
        for k, s in list(open_.items()):
            if k not in facts:
                spans.append(Span(s.fact, s.start, t, s.first_seen, s.last_seen))
                del open_[k]
        for k, f in facts.items():
            held = open_.get(k)
            open_[k] = Span(f, t, None, t, t) if held is None else Span(held.fact, held.start, None, held.first_seen, t)
    return spans + list(open_.values())


# --- job lineage (additive runs, cut by deletes) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Run:
    """What one job run saw (``facts``' ``up`` carries the job in its key: facts of one job are additive)."""

    ts: int
    facts: tuple[Fact, ...]


@dataclass
class _Acc:
    fact: Fact
    first: int
    last: int


def replay_jobs(runs: Iterable[Run], deletes: Iterable[int]) -> list[Span]:
    """Job lineage spans: a fact holds from the first run that saw it after a delete until the next delete;
    its properties are the newest run's within the span."""
    cuts = sorted(set(deletes))
    by_segment: dict[tuple[int, tuple[str, str, str]], _Acc] = {}
    for r in sorted(runs, key=lambda r: r.ts):
        seg = sum(1 for c in cuts if c <= r.ts)
        for f in r.facts:
            k = (seg, f.key)
            acc = by_segment.get(k)
            if acc is None:
                by_segment[k] = _Acc(f, r.ts, r.ts)
            else:
                acc.first = min(acc.first, r.ts)
                if r.ts >= acc.last:
                    acc.last, acc.fact = r.ts, f
    out = []
    for (seg, _), acc in by_segment.items():
        end = cuts[seg] if seg < len(cuts) else None
        out.append(Span(acc.fact, acc.first, end, acc.first, acc.last))
    return out
