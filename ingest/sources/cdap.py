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

The operations are CDAP's model (:mod:`fieldgraph.fieldops` holds its validation and derivation). The
pipeline form gives each stage's plugin-level operations and the stage graph instead::

    {"programRun": ..., "run": ..., "time": ...,
     "stages": {"<stage>": [<operation with plain field names as inputs>, ...], ...},
     "connections": [["<from stage>", "<to stage>"], ...], "joiners": ["<joiner stage>", ...]}

which :class:`_Pipeline` turns into platform operations as CDAP does.

Dataset URNs: ``urn:li:dataset:(urn:li:dataPlatform:<platform>,<namespace>.<name>,<env>)``;
``platform`` (default ``cdap``) and ``env`` (default ``PROD``) may be set per event.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fieldgraph import fieldops
from fieldgraph.changes import (
    IDENTITY_TRANSFORMATION,
    Change,
    EdgeProps,
    FieldEdge,
    JobLineageChange,
    RunOperations,
)
from fieldgraph.errors import CdapLineageError, EventError
from fieldgraph.normalizers import UrnError
from fieldgraph.normalizers.urns import make_dataset_urn, make_field_urn

from .validation import format_validation

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
    destination: EndPoint | None = None
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
        if self.type == "READ" and self.inputs:
            raise ValueError("a READ operation has no inputs")
        if self.type == "WRITE" and self.outputs:
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
    operations: list[Operation] | None = None
    #: the pipeline form: each stage's plugin-level operations, the stage graph, the joiner stages
    stages: dict[str, list[Operation]] | None = None
    connections: list[tuple[str, str]] = Field(default_factory=list)
    joiners: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_form(self) -> CdapFieldLineageEvent:
        if (self.operations is None) == (self.stages is None):
            raise ValueError("give either operations (a program's) or stages with connections (a pipeline's)")
        if self.stages is not None:
            if not self.connections:
                raise ValueError("a pipeline's stages need connections between them")
            connected = {s for pair in self.connections for s in pair}
            for stage, ops in self.stages.items():
                if stage not in connected:
                    raise ValueError(f"stage {stage!r} is in no connection")
                names = [op.name for op in ops]
                for op in ops:
                    if any(not isinstance(i, str) for i in op.inputs):
                        raise ValueError(f"stage {stage!r}: a pipeline stage names its inputs by field name only")
                    if names.count(op.name) > 1:
                        raise ValueError(f"stage {stage!r}: all operations must have unique names. Operation name "
                                         f"'{op.name}' is repeated.")
            if self.joiners and not set(self.joiners) <= connected:
                raise ValueError(f"joiners {sorted(set(self.joiners) - connected)} are in no connection")
        elif self.connections or self.joiners:
            raise ValueError("connections and joiners belong to the pipeline form (stages)")
        return self

    @property
    def program(self) -> str:
        return str(self.programRun)

    @property
    def run_id(self) -> str | None:
        return self.run or (self.programRun.run if isinstance(self.programRun, ProgramRunId) else None)


# --- to typed operations and changes ------------------------------------------------------------------


def _endpoint_urn(event: CdapFieldLineageEvent, ep: EndPoint | None) -> str | None:
    if ep is None:
        return None
    try:
        return make_dataset_urn(event.platform, f"{ep.namespace}.{ep.name}", event.env)
    except UrnError as exc:
        raise EventError(str(exc), where="operations") from exc


def operations_of(event: CdapFieldLineageEvent) -> list[fieldops.Operation]:
    """The event's operations, typed: endpoints as dataset URNs; plugin-form input names resolved to the
    latest earlier operation that output that name; a pipeline's stages turned into platform operations."""
    if event.stages is not None:
        return _Pipeline(event).operations()
    assert event.operations is not None  # one of the two forms (validated)
    out: list[fieldops.Operation] = []
    for i, op in enumerate(event.operations):
        inputs = []
        for j, inp in enumerate(op.inputs):
            if isinstance(inp, str):
                origin = next((p.name for p in reversed(event.operations[:i]) if inp in p.outputs), None)
                if origin is None:
                    raise CdapLineageError(f"input field {inp!r} of operation {op.name!r} is output by no earlier "
                                           "operation", where=f"operations[{i}].inputs[{j}]")
                inputs.append(fieldops.Input(origin, inp))
            else:
                inputs.append(fieldops.Input(inp.origin, inp.name))
        out.append(fieldops.Operation(op.type, op.name, op.description,
                                      _endpoint_urn(event, op.source if op.type == "READ" else op.destination),
                                      tuple(inputs), tuple(op.outputs)))
    return out


class _Pipeline:
    """A pipeline's stage operations as platform operations, the way CDAP's ``LineageOperationsProcessor`` does:

    - stages in topological order; an operation's name is prefixed by its stage (``stage.name``);
    - a plain input name resolves to the latest operation that output it in the nearest stage that did, looking
      back from the stage itself (its earlier operations) along its chain of single-input stages, through
      fan-outs, up to a source or a stage with several inputs; a stage with no operation for a field passes it
      through; a name nobody output is left out, as CDAP leaves it;
    - a stage with several inputs (not a joiner) first gets one merge operation per field its inputs output
      (``<sorted inputs>.merge.<field>``, from the nearest origin on each input), which names found nowhere
      nearer resolve to;
    - in a joiner, ``<input stage>.<field>`` resolves along that input stage's chain, before the joiner's own
      (each such name along its own input: CDAP's processor lets the chains of earlier names of an operation
      stay in the search of later ones).
    """

    def __init__(self, event: CdapFieldLineageEvent) -> None:
        self.event = event
        self.stages = event.stages or {}
        self.joiners = set(event.joiners)
        self.inputs: dict[str, set[str]] = {}
        self.outputs: dict[str, set[str]] = {}
        for a, b in event.connections:
            self.outputs.setdefault(a, set()).add(b)
            self.inputs.setdefault(b, set()).add(a)
            self.inputs.setdefault(a, set())
            self.outputs.setdefault(b, set())
        #: per stage, the operation (prefixed name) that last output each field
        self.stage_outputs: dict[str, dict[str, str]] = {s: {} for s in self.inputs}
        self.processed: dict[str, fieldops.Operation] = {}

    def order(self) -> list[str]:
        """The stages, each after its inputs (independent stages by name)."""
        order, left = fieldops.topological_order(sorted(self.inputs), self.inputs)
        if left:
            raise CdapLineageError(f"the pipeline's connections form a cycle through {', '.join(sorted(left))}",
                                   where="connections")
        return order

    def _branch(self, stage: str) -> list[str]:
        out = [stage]
        while len(self.inputs[stage]) == 1:
            (up,) = self.inputs[stage]
            if len(self.outputs[up]) > 1:
                break
            stage = up
            out.append(stage)
        return out[::-1]

    def parents(self, stage: str) -> list[str]:
        """The stages whose outputs ``stage`` sees, nearest last (``stage`` itself included)."""
        chain: list[str] = []
        while True:
            chain = self._branch(stage) + chain
            head = chain[0]
            if len(self.inputs[head]) == 1:
                (up,) = self.inputs[head]
                if len(self.outputs[up]) > 1:
                    stage = up
                    continue
            return chain

    def _merge_prefix(self, stages: set[str]) -> str:
        return ",".join(sorted(stages)) + ".merge"

    def _add_merges(self, stages: set[str]) -> None:
        prefix = self._merge_prefix(stages)
        origins: dict[str, list[str]] = {}
        for s in sorted(stages):
            seen: set[str] = set()
            for p in reversed(self.parents(s)):
                for f, op in self.stage_outputs[p].items():
                    if f not in seen:
                        seen.add(f)
                        origins.setdefault(f, []).append(op)
        for f, ops in origins.items():
            name = f"{prefix}.{f}"
            if name not in self.processed:
                self.processed[name] = fieldops.Operation(
                    "TRANSFORM", name, f"Merged stages: {','.join(sorted(stages))}", None,
                    tuple(fieldops.Input(o, f) for o in ops), (f,))

    def _resolve(self, fields: list[str], stage: str) -> tuple[fieldops.Input, ...]:
        found: dict[str, fieldops.Input] = {}
        parents = self.parents(stage)
        for name in fields:
            actual, chain = name, parents
            if stage in self.joiners:
                tokens = [t.strip() for t in name.split(".") if t.strip()]
                if len(tokens) >= 2 and tokens[0] in self.inputs[stage]:
                    actual, chain = tokens[1], parents + self.parents(tokens[0])
            for p in reversed(chain):
                origin = self.stage_outputs[p].get(actual)
                if origin is not None:
                    found[name] = fieldops.Input(origin, actual)
                    break
        head = parents[0]
        if len(self.inputs[head]) > 1 and head not in self.joiners:
            prefix = self._merge_prefix(self.inputs[head])
            for name in fields:
                if name not in found and f"{prefix}.{name}" in self.processed:
                    found[name] = fieldops.Input(f"{prefix}.{name}", name)
        return tuple(found[n] for n in fields if n in found)

    def operations(self) -> list[fieldops.Operation]:
        for stage in self.order():
            if len(self.inputs[stage]) > 1 and stage not in self.joiners:
                self._add_merges(self.inputs[stage])
            for op in self.stages.get(stage, []):
                name = f"{stage}.{op.name}"
                inputs = self._resolve([str(i) for i in op.inputs], stage) if op.type != "READ" else ()
                endpoint = _endpoint_urn(self.event, op.source if op.type == "READ" else op.destination)
                self.processed[name] = fieldops.Operation(op.type, name, op.description, endpoint, inputs,
                                                          tuple(op.outputs))
                for f in dict.fromkeys(op.outputs):
                    self.stage_outputs[stage][f] = name
        return list(self.processed.values())


def decode_cdap_event(obj: Any, origin: str = "") -> list[Change]:
    """The job lineage changes (one per destination dataset) of a CDAP field lineage event, or
    :class:`EventError` naming what is wrong."""
    try:
        event = CdapFieldLineageEvent.model_validate(obj)
    except ValidationError as exc:
        raise EventError("CDAP field lineage: " + format_validation(exc, "")) from exc
    ops = fieldops.OperationSet(operations_of(event))
    return run_changes(ops, f"{SOURCE_FORMAT}:{event.program}", event.program, event.run_id, event.time, origin)


def run_changes(ops: fieldops.OperationSet, job: str, program: str, run: str | None, time: int,
                origin: str = "") -> list[Change]:
    """The changes of one run's operations: an additive job lineage change per destination dataset, the
    first also carrying the fields the run read and dropped; each carries the run's operations."""
    kept = RunOperations(ops.checksum, ops.to_json(), tuple(ops.endpoints("READ")), tuple(ops.endpoints("WRITE")))
    by_dest: dict[str, list[tuple[str, dict[fieldops.EndpointField, tuple[str, ...]]]]] = {
        dest: [] for dest in ops.endpoints("WRITE")}  # a dataset written nothing traceable still has its run
    for (dest, name), srcs in ops.lineage().items():
        by_dest[dest].append((name, srcs))
    dropped = tuple((make_field_urn(ds, name), f"{job} {by}")
                    for (ds, name), drops in sorted(ops.dropped().items()) for by in drops)
    reads = tuple(dict.fromkeys(make_field_urn(ds, name) for ds, name in ops.reads()))
    props: dict[tuple[str, ...], EdgeProps] = {}  # one per way (the edges share them)
    urns: dict[fieldops.EndpointField, str] = {}

    def urn(f: fieldops.EndpointField) -> str:
        if f not in urns:
            urns[f] = make_field_urn(*f)
        return urns[f]

    out: list[Change] = []
    for dest, fields in by_dest.items():
        edges = []
        for name, srcs in fields:
            for src, via in sorted(srcs.items()):
                if via not in props:
                    props[via] = EdgeProps(SOURCE_FORMAT, transformation=", ".join(via) or IDENTITY_TRANSFORMATION,
                                           subtype="TRANSFORMATION" if via else "IDENTITY", program=program,
                                           run=run, run_time=time, operation_set=kept.checksum)
                edges.append(FieldEdge(urn((dest, name)), urn(src), props[via]))
        first = not out
        out.append(JobLineageChange(dest, job, SOURCE_FORMAT, run, tuple(edges),
                                    tuple(urn((dest, name)) for name, _ in fields),
                                    reads=reads if first else (), dropped=dropped if first else (), ts=time,
                                    origin=origin, operations=kept))
    return out
