"""A history split into parts that share no node, so that each part can be planned on its own (the bulk load plans
its parts in parallel, on the Spark executors, each into an in-memory store of its own).

Two groups of changes belong to one part when they share a key. The keys are the writer lock keys
(:func:`fieldgraph.graph.batch.lock_keys`: every dataset a change names or references, the datasets its lineage
writes into, the queries and jobs it brings, names or runs), which cover everything a batch reads and writes (the
concurrent writers rely on it). The parts are the connected components of "shares a key", packed: planning each
apart writes exactly the nodes and edges planning them together would, since no node is written by two parts and
no part reads what another writes.

Components are packed into parts of about equal weight (largest first, each into the lightest part so far); one
component is never split, so a history whose datasets are all connected is one part.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

from fieldgraph.changes import Change

from .batch import lock_keys

K = TypeVar("K", bound=Hashable)


def part_keys(changes: Iterable[Change]) -> set[str]:
    """The keys that tie ``changes`` to other changes: the writer lock keys. (A run's field operations, stored once
    per content, name its source and destination datasets, which are keys: runs sharing operations share them.)"""
    return lock_keys(changes)


class _Components:
    """Union-find over strings (path halving, union by size)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.parent: list[int] = []
        self.size: list[int] = []

    def node(self, key: str) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.parent)
            self.parent.append(i)
            self.size.append(1)
        return i

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, a: int, b: int) -> int:
        a, b = self.find(a), self.find(b)
        if a == b:
            return a
        if self.size[a] < self.size[b]:
            a, b = b, a
        self.parent[b] = a
        self.size[a] += self.size[b]
        return a


def assign_parts(groups: Sequence[tuple[K, Iterable[str], int]], parts: int) -> dict[K, int]:
    """Each group (its id, its keys, its weight) -> a part in ``range(parts)``: groups sharing a key, directly or
    through others, in the same part; components packed so that the parts' weights are about equal."""
    if parts < 1:
        raise ValueError(f"parts must be at least 1, not {parts}")
    comps = _Components()
    roots: list[int] = []
    for _, keys, _w in groups:
        i = comps.node(f"\x00group:{len(roots)}")  # a group without keys is a component of its own
        for k in keys:
            i = comps.union(i, comps.node(k))
        roots.append(i)
    weight: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for n, ((_, _, w), i) in enumerate(zip(groups, roots, strict=True)):
        root = comps.find(i)
        weight[root] = weight.get(root, 0) + max(w, 1)
        members.setdefault(root, []).append(n)
    bins = [(0, p) for p in range(parts)]  # (weight so far, part): a heap
    out: dict[K, int] = {}
    for root in sorted(weight, key=lambda r: (-weight[r], members[r][0])):
        load, p = heapq.heappop(bins)
        for n in members[root]:
            out[groups[n][0]] = p
        heapq.heappush(bins, (load + weight[root], p))
    return out
