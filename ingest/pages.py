"""Pages of long answers (lineage, impact, tagged, search, unused fields): a page size, a ``total`` and an opaque
``next`` cursor.

A paged answer is the answer's own JSON restricted to one page, plus ``total`` (its items: hops for lineage and
impact, one per pair of fields however many edges tie them; fields for tagged and unused; datasets then fields for
search), ``totalExact`` (False when the walk stopped at its cap or time budget: ``total`` is then a lower bound) and
``next`` (the cursor of the next page; None on the last).

Pages neither repeat nor skip, even while a writer changes the graph between them. The first page pins an instant
T (the ``as_of`` asked for, else now) and every page is of the answer as of T. Items are sorted by a key
(:data:`KINDS`), and a cursor carries T, a fingerprint of the query and the key of the last item given (keyset):
the next page is the items after that key. :class:`Pages` keeps the last whole answers, sorted, by (reader, query,
T), so later pages cost a lookup; one that fell out of it is answered again as of T.

Pure: the caller computes the answer (:func:`answer_page` takes it as a function of T).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from fieldgraph.errors import InputError
from fieldgraph.graph.answers import fields_by_dataset

#: an item's sort key (strings and integers; JSON lists in a cursor)
Key = tuple[Any, ...]
#: how many whole answers :class:`Pages` keeps, and how many items between them at most
CACHE_SIZE = 16
CACHE_ITEMS = 100_000
_VERSION = 1
T = TypeVar("T")


def _digest(data: Any, n: int = 16) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:n]


# ---- the kinds of answers paged ----


def _hop_key(h: Mapping[str, Any]) -> Key:
    """A hop by level, then its ends, then its first edge (a hop across a rename and one along lineage edges may
    join the same two fields)."""
    return (h["depth"], h["from"], h["urn"], _digest(h.get("edge") or {}, 12))


def _carrier_key(c: Mapping[str, Any]) -> Key:
    return (c["distance"], c["urn"])


def _search_key(x: Mapping[str, Any]) -> Key:
    if "fieldPath" in x:  # a field: shortest path first, as the search orders them
        simple = x.get("simplePath") or x.get("fieldPath") or ""
        return ("f", len(simple), simple, x["urn"])
    return ("d", x.get("name") or "", x["urn"])


def _unused_key(f: Mapping[str, Any]) -> Key:
    return (f["dataset"], f["fieldPath"], f["urn"])


def _lineage_page(whole: Mapping[str, Any], items: list[Any]) -> dict[str, Any]:
    return {**whole, "hops": items}


def _impact_page(whole: Mapping[str, Any], items: list[Any]) -> dict[str, Any]:
    """The page's hops, and the fields they reach by dataset (as :meth:`LineageGraph.impact` groups them)."""
    return {**whole, "datasets": fields_by_dataset((h.get("dataset"), h.get("fieldPath") or h["urn"]) for h in items),
            "hops": items}


def _tagged_page(whole: Mapping[str, Any], items: list[Any]) -> dict[str, Any]:
    return {**whole, "fields": items}


def _search_page(whole: Mapping[str, Any], items: list[Any]) -> dict[str, Any]:
    return {**whole, "datasets": [x for x in items if "fieldPath" not in x],
            "fields": [x for x in items if "fieldPath" in x]}


@dataclass(frozen=True, slots=True)
class Kind:
    """How an answer's JSON is paged: the lists holding its items, their sort key, and a page's JSON."""

    lists: tuple[str, ...]
    key: Callable[[Mapping[str, Any]], Key]
    page: Callable[[Mapping[str, Any], list[Any]], dict[str, Any]]


KINDS: dict[str, Kind] = {
    "lineage": Kind(("hops",), _hop_key, _lineage_page),
    "impact": Kind(("hops",), _hop_key, _impact_page),
    "tagged": Kind(("fields",), _carrier_key, _tagged_page),
    "search": Kind(("datasets", "fields"), _search_key, _search_page),
    "unused": Kind(("fields",), _unused_key, _tagged_page),
}


# ---- cursors ----


def fingerprint(kind: str, query: Mapping[str, Any]) -> str:
    """What names a query: its kind and its parameters (those left None dropped), whatever the page."""
    return _digest([kind, {k: v for k, v in query.items() if v is not None}])


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the next page starts: the instant ``at`` the pages are of, the query's ``fingerprint``, and the key of
    the last item given (``after``)."""

    at: int
    query: str
    after: Key

    def encode(self) -> str:
        body = [_VERSION, self.at, self.query, list(self.after)]
        text = json.dumps([*body, _digest(body, 8)], separators=(",", ":"))
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str, query: str) -> Cursor:
        """The cursor ``text`` of a page of the query whose fingerprint is ``query``; :class:`InputError` naming
        ``cursor`` when it is malformed or comes from another query."""
        try:
            raw = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
            version, at, fp, after, check = raw
            ok = version == _VERSION and isinstance(at, int) and isinstance(fp, str) and isinstance(after, list) \
                and check == _digest([version, at, fp, after], 8)
        except (ValueError, TypeError, binascii.Error):
            ok = False
        if not ok:
            raise InputError("cursor: not a cursor fieldgraph gave (pass the 'next' of the page before, as it is)")
        if fp != query:
            raise InputError("cursor: it belongs to another query (page with the same parameters the first page "
                             "had, only 'cursor' and the page size may change)")
        return cls(at, fp, tuple(after))


# ---- whole answers and their pages ----


@dataclass(frozen=True, slots=True)
class Sorted:
    """A whole answer ready to page: its JSON without the items (``frame``), its items sorted by key, and whether
    ``total`` is exact."""

    kind: str
    frame: Mapping[str, Any]
    items: Sequence[Any]
    keys: Sequence[Key]
    exact: bool
    #: the answer's keys in its own order (a page keeps it)
    order: tuple[str, ...] = ()

    @classmethod
    def of(cls, kind: str, answer: Mapping[str, Any], exact: bool) -> Sorted:
        """``answer`` (JSON) of ``kind``, its items sorted (an item once: the same key twice is the same item)."""
        k = KINDS[kind]
        keyed = sorted(((k.key(x), x) for name in k.lists for x in answer[name]), key=lambda kx: kx[0])
        keys: list[Key] = []
        items: list[Any] = []
        for key, x in keyed:
            if not keys or keys[-1] != key:
                keys.append(key)
                items.append(x)
        return cls(kind, {n: v for n, v in answer.items() if n not in k.lists}, items, keys, exact, tuple(answer))

    def page(self, after: Key | None, size: int, at: int, query: str) -> dict[str, Any]:
        """The ``size`` items after the key ``after`` (None: the first), as the answer's JSON with ``total``,
        ``totalExact`` and ``next``."""
        try:
            i = 0 if after is None else bisect.bisect_right(self.keys, after)
        except TypeError:  # a key of another shape than this answer's
            raise InputError("cursor: not a cursor of this answer") from None
        items = list(self.items[i:i + size])
        more = i + size < len(self.items)
        nxt = Cursor(at, query, self.keys[i + size - 1]).encode() if more and items else None
        body = KINDS[self.kind].page(self.frame, items)
        if "asOf" in body:
            body["asOf"] = at  # the instant the pages are of (an answer walked now, at ``at``, says None)
        return {**{k: body[k] for k in self.order if k in body}, **body, "total": len(self.items),
                "totalExact": self.exact, "next": nxt}


class Pages:
    """The last ``size`` whole answers (:class:`Sorted`), by (reader, query, instant), holding ``max_items`` items
    between them at most (the newest is kept whatever its size): later pages cost a lookup. Safe across threads;
    an answer is computed outside the lock."""

    def __init__(self, size: int = CACHE_SIZE, max_items: int = CACHE_ITEMS) -> None:
        self.size, self.max_items = size, max_items
        self._answers: OrderedDict[tuple[str, str, int], Sorted] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, int], compute: Callable[[], Sorted]) -> Sorted:
        with self._lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
                return found
        found = compute()
        with self._lock:
            self._answers[key] = found
            self._answers.move_to_end(key)
            items = sum(len(a.items) for a in self._answers.values())
            while len(self._answers) > self.size or (items > self.max_items and len(self._answers) > 1):
                items -= len(self._answers.popitem(last=False)[1].items)
        return found


def answer_page(pages: Pages, kind: str, query: Mapping[str, Any],
                whole: Callable[[int | None], tuple[Any, bool]], *, size: int, cursor: str | None,
                as_of: int | None, now: int, reader: str = "") -> dict[str, Any]:
    """One page of the answer of ``kind`` to ``query``: the first (no ``cursor``: pinned at ``as_of``, else
    ``now``) or the one after ``cursor``. ``whole(T)`` answers the query as of T (None: now, for a first page
    pinned now: the same answer without an as-of walk's cost): the answer's JSON and whether it is whole (not
    stopped at a cap or budget). ``reader``: who asks (answers are kept per reader)."""
    fp = fingerprint(kind, query)
    c = Cursor.decode(cursor, fp) if cursor is not None else None
    at = c.at if c is not None else as_of if as_of is not None else now
    walked_at = None if c is None and as_of is None else at
    answer = pages.get((reader, fp, at), lambda: Sorted.of(kind, *whole(walked_at)))
    return answer.page(c.after if c is not None else None, size, at, fp)


def head(kind: str, items: Sequence[T], size: int, to_json: Callable[[T], Mapping[str, Any]]) -> list[T]:
    """The first ``size`` of ``items`` (typed answers, ``to_json`` their JSON) in the order pages give them."""
    key = KINDS[kind].key
    return sorted(items, key=lambda x: key(to_json(x)))[:size]


def first_page(kind: str, query: Mapping[str, Any], answer: Any, exact: bool, size: int, at: int) -> dict[str, Any]:
    """The first page of ``answer`` (JSON) of ``kind`` to ``query``, pinned at ``at``: what the JSON API's first
    page is (the CLI's ``--json --limit``)."""
    return Sorted.of(kind, answer, exact).page(None, size, at, fingerprint(kind, query))


def walk_exact(partial: bool, reason: str | None, depth: int | None) -> bool:
    """Whether a walk's answer is whole for what was asked: not partial, or stopped only at the ``depth`` asked
    for (not at the depth cap, not out of time)."""
    return not partial or (depth is not None and (reason or "").startswith(f"depth {depth} reached"))


__all__ = ["CACHE_ITEMS", "CACHE_SIZE", "KINDS", "Cursor", "Kind", "Pages", "Sorted", "answer_page", "fingerprint",
           "first_page", "head", "walk_exact"]
