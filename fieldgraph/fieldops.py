"""Field operations: what a program run did to fields (CDAP's model), and the lineage they give. Pure.

A CDAP program run does not record field mappings; it records *operations* (CDAP's ``FieldLineageInfo``):

- READ: a source dataset and the fields it outputs;
- TRANSFORM: inputs to outputs (no outputs: it drops its inputs);
- WRITE: inputs into a destination dataset, each written as the field of the input's name.

An input names the operation it takes the field from (``origin``) and the field, so two operations may output
fields of the same name. Here endpoints are dataset URNs (the source turns CDAP's ``{namespace, name}`` into one).

**Validation** (CDAP's, with its reasons): operation names are unique; a READ has a source and a WRITE a
destination; there is at least one READ and one WRITE; every origin names an operation; the operations form no
cycle. Nothing else is rejected: an input may name a field its origin does not list (CDAP's own valid operation
sets do), and is traced back through the origin's inputs all the same.

**Derivation**, as CDAP derives it (each operation's upstream is derived once):

- a TRANSFORM is coarse: every field it outputs comes from every source field its inputs come from, whatever
  field name an input takes from it;
- an input taken from a READ is the source dataset's field of that name; one taken from a WRITE brings nothing;
- a destination field comes from what every WRITE into it takes under its name; a written field with nothing
  upstream is still a field of the destination;
- a TRANSFORM with no outputs drops the source fields its inputs come from.

One difference from CDAP, deliberate: CDAP ties a field that a WRITE takes straight from a READ to *every*
field that WRITE takes from that READ (its summary is computed per operation, not per field); here it comes
from the source field of its own name, since a copied column is not computed from the columns copied beside it.

**Per-field operations** (CDAP's field lineage "operations" answer): into a destination field, the WRITEs that
write it and every operation behind them (back through every input of each TRANSFORM, to READs or WRITEs); out
of a source field,
the READs that output it, the operations that take it from them, and every operation after those (forward
through every user of each TRANSFORM). A field read and used by nobody gets its READ alone. Both in
topological order.

An :class:`OperationSet` has a checksum over its canonical form (operations sorted by name), so runs with the
same operations store them once, as CDAP does.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, TypeAlias

from fieldgraph.errors import CdapLineageError

OperationType: TypeAlias = Literal["READ", "TRANSFORM", "WRITE"]
#: a field of a dataset: (dataset URN, field name)
EndpointField: TypeAlias = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Input:
    origin: str
    name: str


@dataclass(frozen=True, slots=True)
class Operation:
    """One field operation; ``endpoint`` is a READ's source or a WRITE's destination (a dataset URN)."""

    type: OperationType
    name: str
    description: str = ""
    endpoint: str | None = None
    inputs: tuple[Input, ...] = ()
    outputs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "name": self.name, "description": self.description}
        if self.type == "READ":
            out["source"] = self.endpoint
        else:
            out["inputs"] = [{"origin": i.origin, "name": i.name} for i in self.inputs]
        if self.type == "WRITE":
            out["destination"] = self.endpoint
        else:
            out["outputs"] = list(self.outputs)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Operation:
        return cls(obj["type"], obj["name"], obj.get("description") or "", obj.get("source") or obj.get("destination"),
                   tuple(Input(i["origin"], i["name"]) for i in obj.get("inputs") or ()),
                   tuple(obj.get("outputs") or ()))


class OperationSet:
    """A valid set of field operations (validated on construction) and the lineage it gives."""

    def __init__(self, operations: Iterable[Operation]) -> None:
        self.operations = tuple(operations)
        self.by_name = _validate(self.operations)
        self.order = _topological(self.operations)
        self._rank = {name: k for k, name in enumerate(self.order)}
        self.users: dict[str, list[Operation]] = {}
        for op in self.operations:
            for origin in dict.fromkeys(i.origin for i in op.inputs):
                self.users.setdefault(origin, []).append(op)
        self._upstream: dict[str, frozenset[EndpointField]] = {}
        for name in self.order:  # each transform's upstream once, its origins' before it
            op = self.by_name[name]
            if op.type == "TRANSFORM":
                self._upstream[name] = _union(self.from_input(i) for i in op.inputs)

    # ---- the canonical form ----

    def to_json(self) -> str:
        """The canonical form: operations sorted by name, compact JSON."""
        ops = sorted(self.operations, key=lambda o: o.name)
        return json.dumps([o.to_json() for o in ops], separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> OperationSet:
        return cls(Operation.from_json(o) for o in json.loads(text))

    @cached_property
    def checksum(self) -> str:
        return hashlib.blake2b(self.to_json().encode(), digest_size=16).hexdigest()

    # ---- lineage ----

    def from_input(self, inp: Input) -> frozenset[EndpointField]:
        """The source fields an input comes from."""
        origin = self.by_name[inp.origin]
        if origin.type == "READ":
            return frozenset({(_endpoint(origin), inp.name)})
        return self._upstream.get(origin.name, frozenset())

    def lineage(self) -> dict[EndpointField, dict[EndpointField, tuple[str, ...]]]:
        """Every written field -> its source fields -> the TRANSFORMs it was taken from (empty: straight from a
        READ). A written field with nothing upstream maps to an empty dict."""
        return self._by_destination

    def incoming(self, field: EndpointField) -> set[EndpointField]:
        """The source fields a destination field comes from (CDAP's incoming summary)."""
        return set(self._by_destination.get(field, {}))

    def outgoing(self, field: EndpointField) -> set[EndpointField]:
        """The destination fields a source field goes into (CDAP's outgoing summary)."""
        return set(self._by_source.get(field, ()))

    def dropped(self) -> dict[EndpointField, list[str]]:
        """Source field -> the TRANSFORMs with no outputs that drop it."""
        return self._drops

    # computed once per set: a time range asks each of them once per run that ran the set

    @cached_property
    def _by_destination(self) -> dict[EndpointField, dict[EndpointField, tuple[str, ...]]]:
        out: dict[EndpointField, dict[EndpointField, tuple[str, ...]]] = {}
        for op in self.operations:
            if op.type != "WRITE":
                continue
            for inp in op.inputs:
                into = out.setdefault((_endpoint(op), inp.name), {})
                via = () if self.by_name[inp.origin].type == "READ" else (inp.origin,)
                for src in self.from_input(inp):
                    into[src] = tuple(sorted({*into.get(src, ()), *via}))
        return out

    @cached_property
    def _by_source(self) -> dict[EndpointField, set[EndpointField]]:
        out: dict[EndpointField, set[EndpointField]] = {}
        for dest, srcs in self._by_destination.items():
            for src in srcs:
                out.setdefault(src, set()).add(dest)
        return out

    @cached_property
    def _drops(self) -> dict[EndpointField, list[str]]:
        out: dict[EndpointField, list[str]] = {}
        for op in self.operations:
            if op.type == "TRANSFORM" and not op.outputs:
                for src in _union(self.from_input(i) for i in op.inputs):
                    out.setdefault(src, []).append(op.name)
        return out

    def reads(self) -> list[EndpointField]:
        """Every field a READ outputs: known fields of the source datasets."""
        return [(_endpoint(op), f) for op in self.operations if op.type == "READ" for f in op.outputs]

    def endpoints(self, type_: OperationType) -> list[str]:
        """The datasets the READs (``READ``) or WRITEs (``WRITE``) name, once each."""
        return list(dict.fromkeys(_endpoint(op) for op in self.operations if op.type == type_))

    # ---- per-field operations ----

    def incoming_operations(self, field: EndpointField) -> list[Operation]:
        """The operations that computed a destination field, in topological order."""
        seen: set[str] = set()
        stack: list[str] = []
        for op in self.operations:
            if op.type == "WRITE" and op.endpoint == field[0]:
                for inp in op.inputs:
                    if inp.name == field[1]:
                        seen.add(op.name)
                        stack.append(inp.origin)
        while stack:  # back through transforms; a READ or a WRITE (which outputs nothing) ends a way
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                if self.by_name[name].type == "TRANSFORM":
                    stack.extend(i.origin for i in self.by_name[name].inputs)
        return self.in_order(seen)

    def outgoing_operations(self, field: EndpointField) -> list[Operation]:
        """The operations that used a source field, in topological order (a field nobody uses: its READ)."""
        seen: set[str] = set()
        stack: list[str] = []
        for op in self.operations:
            if op.type == "READ" and op.endpoint == field[0] and field[1] in op.outputs:
                seen.add(op.name)
                taken = Input(op.name, field[1])
                stack.extend(u.name for u in self.users.get(op.name, ()) if taken in u.inputs)
        while stack:
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                if self.by_name[name].type == "TRANSFORM":
                    stack.extend(u.name for u in self.users.get(name, ()))
        return self.in_order(seen)

    def in_order(self, names: Iterable[str]) -> list[Operation]:
        return [self.by_name[n] for n in sorted(names, key=self._rank.__getitem__)]


def _endpoint(op: Operation) -> str:
    assert op.endpoint is not None  # validated: every READ and WRITE has one
    return op.endpoint


def _union(sets: Iterable[frozenset[EndpointField]]) -> frozenset[EndpointField]:
    """The union, sharing the one set when there is one (identity chains keep a single object)."""
    items = [s for s in sets if s]
    if len(items) == 1:
        return items[0]
    return frozenset().union(*items)


# --- validation ----------------------------------------------------------------------------------------


def _validate(ops: Sequence[Operation]) -> dict[str, Operation]:
    """The operations by name, or :class:`CdapLineageError` with CDAP's reason."""
    by_name: dict[str, Operation] = {}
    for i, op in enumerate(ops):
        if op.name in by_name:
            raise CdapLineageError("All operations provided for creating field level lineage info must have unique "
                                   f"names. Operation name '{op.name}' is repeated.", where=f"operations[{i}].name")
        by_name[op.name] = op
        if op.type == "READ" and not op.endpoint:
            raise CdapLineageError(f"Source endpoint cannot be null for the read operation '{op.name}'.",
                                   where=f"operations[{i}].source")
        if op.type == "WRITE" and not op.endpoint:
            raise CdapLineageError(f"Destination endpoint cannot be null for the write operation '{op.name}'.",
                                   where=f"operations[{i}].destination")
    for kind in ("READ", "WRITE"):
        if not any(op.type == kind for op in ops):
            raise CdapLineageError(f"Field level lineage requires at least one operation of type '{kind}'.",
                                   where="operations")
    unknown = list(dict.fromkeys(i.origin for op in ops for i in op.inputs if i.origin not in by_name))
    if unknown:
        raise CdapLineageError(f"No operation is associated with the origins '[{', '.join(unknown)}]'.",
                               where="operations")
    return by_name


def topological_order(names: Sequence[str], deps: Mapping[str, Iterable[str]]) -> tuple[list[str], set[str]]:
    """``names`` each after the names it depends on (ties: the given order), and the names left over: those on
    a cycle or behind one."""
    index = {n: k for k, n in enumerate(names)}
    users: dict[str, list[str]] = {}
    remaining: dict[str, int] = {}
    for n in names:
        ds = set(deps.get(n, ()))
        remaining[n] = len(ds)
        for d in ds:
            users.setdefault(d, []).append(n)
    ready = [index[n] for n, k in remaining.items() if k == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = names[heapq.heappop(ready)]
        order.append(name)
        for u in users.get(name, ()):
            remaining[u] -= 1
            if remaining[u] == 0:
                heapq.heappush(ready, index[u])
    return order, set(names) - set(order)


def _topological(ops: Sequence[Operation]) -> list[str]:
    """Operation names, each after the operations it takes inputs from (ties: the given order), or
    :class:`CdapLineageError` naming the operations on a cycle."""
    deps = {op.name: {i.origin for i in op.inputs} for op in ops}
    order, left = topological_order([op.name for op in ops], deps)
    if left:
        cyclic = [n for n in sorted(left) if _reaches(deps, left, n, n)]
        raise CdapLineageError(f"Cycle detected in graph for operations {', '.join(cyclic)}", where="operations")
    return order


def _reaches(deps: Mapping[str, set[str]], left: set[str], a: str, b: str) -> bool:
    seen: set[str] = set()
    stack = [a]
    while stack:
        for d in deps.get(stack.pop(), ()):
            if d == b:
                return True
            if d not in seen and d in left:
                seen.add(d)
                stack.append(d)
    return False


__all__ = ["EndpointField", "Input", "Operation", "OperationSet", "OperationType", "topological_order"]
