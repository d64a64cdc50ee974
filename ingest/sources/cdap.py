"""CDAP field lineage: a program run's field operations, and the field-to-field lineage derived from them.

A CDAP program does not record field mappings; it records *operations* against a destination
(CDAP's ``FieldLineageInfo``): READ (a source dataset and the fields it outputs), TRANSFORM
(inputs -> outputs; no outputs drops the inputs) and WRITE (inputs -> a destination dataset). An
input names the operation that produced it (``origin``) and the field, so two operations may output
fields of the same name. The plugin-level form gives inputs as plain field names instead, each
resolved to the latest earlier operation that output that name.

The event fieldgraph reads (JSON)::

    {"programRun": "default.UserApp.workflow.Normalize" | {"namespace", "application", "type", "program", "run"},
     "run": "<run id>", "time": <run start, ms>, "platform": "cdap", "env": "PROD",
     "operations": [
       {"type": "READ", "name": "read", "description": "...", "source": {"namespace": "default", "name": "users"},
        "outputs": ["first", "last"]},
       {"type": "TRANSFORM", "name": "concat", "inputs": [{"origin": "read", "name": "first"}, ...],
        "outputs": ["name"]},
       {"type": "WRITE", "name": "write", "inputs": [{"origin": "concat", "name": "name"}],
        "destination": {"namespace": "default", "name": "profiles"}}]}

Derivation (as CDAP does it): walk back from every written field through the origins to the READ
fields; a transform is coarse (each of its outputs depends on all of its inputs); a write fed
straight by a read maps field to field by name; only the fields an operation takes from its origin
count. Writes into the same destination field unite. A written field with no inputs upstream is
still a known (declared) destination field; a read field nobody uses has no edge; the source fields
a transform with no outputs takes are recorded as dropped.

Validation (any failure rejects the whole event): operation names unique, at least one READ and one
WRITE, every origin names an operation that outputs that field, no cycles (the operations in the
cycle are named).

Dataset URNs: ``urn:li:dataset:(urn:li:dataPlatform:<platform>,<namespace>.<name>,<env>)``;
``platform`` (default ``cdap``) and ``env`` (default ``PROD``) may be set per event.
"""

from __future__ import annotations

import heapq
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fieldgraph.changes import Change, EdgeProps, FieldEdge, JobLineageChange
from fieldgraph.errors import CdapLineageError, EventError
from fieldgraph.normalizers import UrnError
from fieldgraph.normalizers.urns import make_dataset_urn, make_field_urn

from .datahub import _format_validation

SOURCE_FORMAT = "cdap"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class EndPoint(_Model):
    namespace: str = "default"
    name: str = Field(min_length=1)
    properties: dict[str, Any] = Field(default_factory=dict)


class InputField(_Model):
    origin: str = Field(min_length=1)
    name: str = Field(min_length=1)


class Operation(_Model):
    """One field operation; ``inputs`` items are ``{origin, name}`` or (plugin form) a plain field name."""

    type: Literal["READ", "TRANSFORM", "WRITE"]
    name: str = Field(min_length=1)
    description: str = ""
    source: EndPoint | None = None
    destination: EndPoint | None = Field(default=None, alias="destination")
    inputs: list[InputField | str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _plugin_aliases(cls, data: Any) -> Any:
        # the plugin API's FieldReadOperation/FieldTransformOperation/FieldWriteOperation spellings
        if isinstance(data, dict):
            data = dict(data)
            for old, new in (("inputFields", "inputs"), ("outputFields", "outputs"), ("sink", "destination")):
                if old in data and new not in data:
                    data[new] = data.pop(old)
            if isinstance(data.get("type"), str):
                data["type"] = data["type"].upper()
        return data

    @model_validator(mode="after")
    def _shape(self) -> Operation:
        if self.type == "READ":
            if self.source is None:
                raise ValueError("a READ operation needs source {namespace, name}")
            if self.inputs:
                raise ValueError("a READ operation has no inputs")
        elif self.type == "WRITE":
            if self.destination is None:
                raise ValueError("a WRITE operation needs destination {namespace, name}")
            if self.outputs:
                raise ValueError("a WRITE operation has no outputs")
        return self


class ProgramRunId(_Model):
    namespace: str = "default"
    application: str = Field(min_length=1)
    version: str | None = None
    type: str = "Workflow"
    program: str = Field(min_length=1)
    run: str | None = None

    def __str__(self) -> str:
        return f"{self.namespace}.{self.application}.{self.type.lower()}.{self.program}"


class CdapFieldLineageEvent(_Model):
    programRun: str | ProgramRunId
    run: str | None = None
    time: int = Field(gt=0, description="the run's time, ms since the epoch")
    platform: str = "cdap"
    env: str = "PROD"
    operations: list[Operation]

    @property
    def program(self) -> str:
        return str(self.programRun)

    @property
    def run_id(self) -> str | None:
        return self.run or (self.programRun.run if isinstance(self.programRun, ProgramRunId) else None)


# --- validation ----------------------------------------------------------------------------------------


def _resolve_inputs(ops: list[Operation]) -> list[list[InputField]]:
    """Each operation's inputs as (origin, name); plugin-form names resolve to the latest earlier
    operation that output that name."""
    out: list[list[InputField]] = []
    for i, op in enumerate(ops):
        resolved = []
        for j, inp in enumerate(op.inputs):
            if isinstance(inp, InputField):
                resolved.append(inp)
                continue
            origin = next((p.name for p in reversed(ops[:i]) if inp in p.outputs), None)
            if origin is None:
                raise CdapLineageError(f"input field {inp!r} of operation {op.name!r} is output by no earlier "
                                       "operation", where=f"operations[{i}].inputs[{j}]")
            resolved.append(InputField(origin=origin, name=inp))
        out.append(resolved)
    return out


def validate(ops: list[Operation]) -> tuple[dict[str, int], list[list[InputField]], list[str]]:
    """(index by name, resolved inputs, topological order of names), or :class:`CdapLineageError`."""
    index: dict[str, int] = {}
    for i, op in enumerate(ops):
        if op.name in index:
            raise CdapLineageError(f"operation name {op.name!r} is used by operations[{index[op.name]}] and "
                                   f"operations[{i}]; names must be unique", where=f"operations[{i}].name")
        index[op.name] = i
    kinds = {op.type for op in ops}
    missing = [k for k in ("READ", "WRITE") if k not in kinds]
    if missing:
        raise CdapLineageError(f"field lineage needs at least one READ and one WRITE operation; there is no "
                               f"{' and no '.join(missing)}", where="operations")
    inputs = _resolve_inputs(ops)
    for i, (op, ins) in enumerate(zip(ops, inputs, strict=False)):
        for j, inp in enumerate(ins):
            where = f"operations[{i}].inputs[{j}]"
            if inp.origin not in index:
                raise CdapLineageError(f"operation {op.name!r} takes {inp.name!r} from {inp.origin!r}, which names "
                                       "no operation", where=where)
            origin = ops[index[inp.origin]]
            if origin.type == "WRITE":
                raise CdapLineageError(f"operation {op.name!r} takes {inp.name!r} from the WRITE operation "
                                       f"{inp.origin!r}; a WRITE outputs nothing", where=where)
            if inp.name not in origin.outputs:
                raise CdapLineageError(f"operation {op.name!r} takes {inp.name!r} from {inp.origin!r}, which does "
                                       f"not output it (outputs: {', '.join(origin.outputs) or 'none'})", where=where)
    # Kahn's algorithm: what is left over lies on (or behind) a cycle
    deps = {op.name: {inp.origin for inp in ins} for op, ins in zip(ops, inputs, strict=False)}
    order: list[str] = []  # ties broken by the operations' own order
    ready = [index[op.name] for op in ops if not deps[op.name]]
    heapq.heapify(ready)
    users: dict[str, list[str]] = {}
    for name, ds in deps.items():
        for d in ds:
            users.setdefault(d, []).append(name)
    remaining = {n: len(ds) for n, ds in deps.items()}
    while ready:
        n = ops[heapq.heappop(ready)].name
        order.append(n)
        for u in users.get(n, []):
            remaining[u] -= 1
            if remaining[u] == 0:
                heapq.heappush(ready, index[u])
    if len(order) < len(ops):
        cyclic = _cycle_members(deps, {n for n in deps if n not in order})
        raise CdapLineageError(f"the operations form a cycle: {', '.join(cyclic)}", where="operations")
    return index, inputs, order


def _cycle_members(deps: dict[str, set[str]], left: set[str]) -> list[str]:
    """The operations of ``left`` that lie on a cycle (reach themselves), in a stable order."""
    def reaches(a: str, b: str) -> bool:
        seen, stack = set(), [a]
        while stack:
            x = stack.pop()
            for d in deps.get(x, ()):
                if d == b:
                    return True
                if d not in seen and d in left:
                    seen.add(d)
                    stack.append(d)
        return False

    return sorted(n for n in left if reaches(n, n))


# --- derivation ----------------------------------------------------------------------------------------

Source = tuple[str, str]  # (dataset URN, field name)


def _endpoint_urn(event: CdapFieldLineageEvent, ep: EndPoint | None) -> str:
    if ep is None:  # validate() requires an endpoint on READ and WRITE
        raise EventError("a READ or WRITE operation has no endpoint", where="operations")
    try:
        return make_dataset_urn(event.platform, f"{ep.namespace}.{ep.name}", event.env)
    except UrnError as exc:
        raise EventError(str(exc), where="operations") from None


def derive(event: CdapFieldLineageEvent) -> tuple[dict[str, dict[str, dict[Source, frozenset[str]]]],
                                                  dict[Source, set[str]], dict[str, str]]:
    """The lineage of a valid operation set, as CDAP derives it.

    Returns ``(lineage, dropped, ds_urns)``: ``lineage[destination URN][field][(source URN, field)]`` is
    the set of operation names on the ways between them (an empty inner dict: a field with no
    upstream); ``dropped[(source URN, field)]`` the names of the transforms that drop it.
    """
    ops = event.operations
    index, inputs, order = validate(ops)

    def urn(ep: EndPoint | None) -> str:
        return _endpoint_urn(event, ep)

    memo: dict[tuple[str, str], dict[Source, frozenset[str]]] = {}

    def sources(op_name: str, field: str) -> dict[Source, frozenset[str]]:
        key = (op_name, field)
        if key in memo:
            return memo[key]
        i = index[op_name]
        op = ops[i]
        out: dict[Source, frozenset[str]] = {}
        if op.type == "READ":
            out[(urn(op.source), field)] = frozenset({op.name})
        else:  # TRANSFORM: coarse, every output depends on every input
            for inp in inputs[i]:
                for src, names in sources(inp.origin, inp.name).items():
                    out[src] = out.get(src, frozenset()) | names | {op.name}
        memo[key] = out
        return out

    lineage: dict[str, dict[str, dict[Source, frozenset[str]]]] = {}
    dropped: dict[Source, set[str]] = {}
    ds_urns: dict[str, str] = {}
    for i, op in enumerate(ops):
        if op.type == "WRITE" and op.destination is not None:  # validate() requires the destination
            dest = urn(op.destination)
            ds_urns[dest] = f"{op.destination.namespace}.{op.destination.name}"
            fields = lineage.setdefault(dest, {})
            for inp in inputs[i]:
                into = fields.setdefault(inp.name, {})
                for src, names in sources(inp.origin, inp.name).items():
                    into[src] = into.get(src, frozenset()) | names | {op.name}
        elif op.type == "TRANSFORM" and not op.outputs:
            for inp in inputs[i]:
                for src in sources(inp.origin, inp.name):
                    dropped.setdefault(src, set()).add(op.name)
    return lineage, dropped, ds_urns


def decode_cdap_event(obj: Any, origin: str = "") -> list[Change]:
    """The job lineage changes (one per destination dataset) of a CDAP field lineage event, or
    :class:`EventError` naming what is wrong."""
    try:
        event = CdapFieldLineageEvent.model_validate(obj)
    except ValidationError as exc:
        raise EventError("CDAP field lineage: " + _format_validation(exc, "")) from None
    lineage, dropped, _ = derive(event)
    ops = {op.name: op for op in event.operations}
    topo = {name: k for k, name in enumerate(validate(event.operations)[2])}
    job = f"{SOURCE_FORMAT}:{event.program}"
    run = event.run_id

    def chain(names: frozenset[str]) -> list[str]:
        return sorted(names, key=lambda n: topo[n])

    out: list[Change] = []
    drops_by_source: dict[str, list[tuple[str, str]]] = {}
    for (src_ds, fname), dropping in sorted(dropped.items()):
        entry = f"{job} {' > '.join(chain(frozenset(dropping)))}"
        drops_by_source.setdefault(src_ds, []).append((make_field_urn(src_ds, fname), entry))
    for dest, fields in lineage.items():
        edges = []
        for fname, srcs in fields.items():
            for (src_ds, sname), names in sorted(srcs.items()):
                names_in_order = chain(names)
                transforms = [n for n in names_in_order if ops[n].type == "TRANSFORM"]
                identity = not transforms and sname == fname
                props = EdgeProps(
                    SOURCE_FORMAT, transformation="Identity" if identity else " > ".join(transforms),
                    kind="DIRECT", subtype="IDENTITY" if identity else "TRANSFORMATION", program=event.program,
                    run=run, run_time=event.time, operations=tuple(names_in_order),
                    operation_descriptions=tuple(ops[n].description for n in names_in_order))
                edges.append(FieldEdge(make_field_urn(dest, fname), make_field_urn(src_ds, sname), props))
        out.append(JobLineageChange(
            dest, job, SOURCE_FORMAT, run, tuple(edges), tuple(make_field_urn(dest, f) for f in fields),
            dropped=() if out else tuple(d for ds_drops in drops_by_source.values() for d in ds_drops),
            ts=event.time, origin=origin))
    return out
