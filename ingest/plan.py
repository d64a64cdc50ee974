"""Event -> graph mutations, as pure code: aspect changes and the current state in, parameter rows out.

The same function serves file replay, the Kafka worker and the Spark job::

    state = graph.read_state(datasets_to_read(changes))   # the only read, before planning
    plan = plan_changes(changes, state)                    # pure
    graph.apply(plan)                                      # one UNWIND per step and batch

Rules (see the graph model in ``cypher/``):

- per dataset and aspect, the newest change wins (schema: ``(version, ts)``; lineage: ``ts``);
  older ones never overwrite it; equal stamps re-apply (so replays are idempotent);
- a schema is the dataset's whole field set: fields it no longer lists are marked ``removed``
  (kept with their lineage) and come back when listed again; an older schema only adds
  fields never seen, as removed, so the field set does not depend on arrival order;
- a lineage aspect is the whole set of the dataset's incoming edges from that aspect
  (edge property ``source``); DELETE removes them;
- field references (v2, v1 dotted, RFC slash paths) resolve against the dataset's fields;
  an unknown or ambiguous one becomes a placeholder field (``placeholder``, ``ambiguous``,
  ``candidates``) that a later schema resolves;
- job lineage (``jobLineage``: CDAP program runs, OpenLineage runs) is additive: an edge per
  (field pair, job) keeps its first and last seen times and the newest run's properties; a
  destination field a job declares but no schema lists is a placeholder marked ``declared`` (kept
  without edges); fields a job drops get ``droppedBy`` entries;
- every ``DataDerivedFrom`` edge, whatever its source, carries one property vocabulary
  (:func:`edge_vocabulary`) plus ``firstSeen``/``lastSeen``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from fieldgraph.ingest.events import (
    DATASET_KEY,
    DATASET_UPSTREAM_LINEAGE,
    JOB_LINEAGE,
    LINEAGE_ASPECTS,
    SCHEMA_METADATA,
    UPSTREAM_LINEAGE,
    AspectChange,
    DatasetUpstreamLineage,
    JobLineage,
    SchemaMetadata,
    UpstreamLineage,
)
from fieldgraph.normalizers import FieldPath, FieldPathError, FieldUrn, SchemaField, is_v2, v1_path
from fieldgraph.normalizers.urns import DatasetUrn, decode, encode

#: dataset property holding the stamp of each lineage aspect
LINEAGE_TS_PROP = {UPSTREAM_LINEAGE: "upstreamLineageTs", DATASET_UPSTREAM_LINEAGE: "datasetUpstreamLineageTs"}


# --- state read before planning ------------------------------------------------------------------


@dataclass(slots=True)
class FieldState:
    urn: str
    fieldPath: str
    placeholder: bool = False
    removed: bool = False
    schemaVersion: int = -1
    schemaTs: int = -1
    refPath: str | None = None


@dataclass(slots=True)
class DatasetState:
    urn: str
    placeholder: bool = True
    schemaVersion: int = -1
    schemaTs: int = -1
    lineageTs: dict[str, int] = field(default_factory=dict)
    fields: dict[str, FieldState] = field(default_factory=dict)

    @classmethod
    def from_compact(cls, row: Sequence[Any]) -> DatasetState:
        """From ``[urn, placeholder, schemaVersion, schemaTs, upstreamLineageTs, datasetUpstreamLineageTs,
        [[urn, fieldPath, placeholder, removed, schemaVersion, schemaTs, refPath], ...]]`` (``read_state.cypher``)."""
        urn, placeholder, version, ts, ul, dul, fields = row
        out = cls(urn, bool(placeholder), _int(version), _int(ts),
                  {a: _int(v) for a, v in ((UPSTREAM_LINEAGE, ul), (DATASET_UPSTREAM_LINEAGE, dul)) if v is not None})
        into = out.fields
        for furn, path, ph, removed, fversion, fts, ref in fields:
            if furn is not None:
                into[furn] = FieldState(furn, path, ph is True, removed is True, -1 if fversion is None else fversion,
                                        -1 if fts is None else fts, ref)
        return out


def _int(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else -1


# --- the plan --------------------------------------------------------------------------------------

#: the write statements, in the order a plan runs them (names of files in ``cypher/``)
STEP_ORDER = (
    "upsert_datasets", "upsert_fields", "set_field_props", "move_out_edges", "move_in_edges", "delete_fields",
    "delete_lineage", "delete_job_lineage", "ensure_datasets", "ensure_fields", "merge_field_edges",
    "merge_dataset_edges", "merge_job_edges", "mark_dropped",
    "cleanup_placeholder_fields", "cleanup_placeholder_datasets",
)

# --- the edge vocabulary -------------------------------------------------------------------------------

#: ``sourceFormat`` of each lineage source
SOURCE_FORMATS = {UPSTREAM_LINEAGE: "datahub", DATASET_UPSTREAM_LINEAGE: "datahub-rfc"}
DIRECT, INDIRECT = "DIRECT", "INDIRECT"
_AGGREGATIONS = frozenset({"SUM", "COUNT", "AVG", "MEAN", "MIN", "MAX", "AGG", "AGGREGATE", "AGGREGATION",
                           "COUNT_DISTINCT", "MEDIAN", "STDDEV"})
_MASKING = frozenset({"MASK", "MASKED", "MASKING", "HASH", "REDACT", "ENCRYPT", "TOKENIZE"})


def edge_vocabulary(*, source_format: str, transformation: str | None = None, kind: str = DIRECT,
                    subtype: str | None = None, masking: bool = False, confidence: float = 1.0,
                    query: str | None = None, program: str | None = None, run: str | None = None,
                    run_time: int | None = None, description: str | None = None,
                    operations: Sequence[str] | None = None, operation_descriptions: Sequence[str] | None = None,
                    transformations: Sequence[str] | None = None) -> dict[str, Any]:
    """The properties every ``DataDerivedFrom`` edge carries, whatever its source (None values are not stored).

    ``transformation``: Identity, BlackBox or the source's own operation; ``kind``: DIRECT (the value
    flows into the field) or INDIRECT (it only influences it: filter, join, group by, ...);
    ``subtype``: IDENTITY, TRANSFORMATION, AGGREGATION, FILTER, JOIN, GROUP_BY, SORT, WINDOW,
    CONDITIONAL, ...; ``masking``: the value is masked (hashed, redacted) on the way;
    ``confidenceScore``; ``query`` or ``program`` (and ``run``, ``runTime``) that made it;
    ``operations``/``operationDescriptions``: the chain of operations (CDAP);
    ``transformations``: every ``KIND/SUBTYPE`` seen (OpenLineage lists several); ``sourceFormat``.
    """
    if kind not in (DIRECT, INDIRECT):
        raise ValueError(f"edge kind must be DIRECT or INDIRECT, got {kind!r}")
    props = {"sourceFormat": source_format, "transformation": transformation, "kind": kind,
             "subtype": subtype, "masking": bool(masking), "confidenceScore": float(confidence), "query": query,
             "program": program, "run": run, "runTime": run_time, "description": description,
             "operations": list(operations) if operations else None,
             "operationDescriptions": list(operation_descriptions) if operation_descriptions else None,
             "transformations": list(transformations) if transformations else None}
    return {k: v for k, v in props.items() if v is not None}


def datahub_subtype(operation: str | None) -> tuple[str, bool]:
    """(subtype, masking) of a DataHub ``transformOperation`` or RFC ``transformationFunction``."""
    op = (operation or "").rsplit(".", 1)[-1].upper()
    if op in ("IDENTITY", "COPY"):
        return "IDENTITY", False
    if op in _MASKING:
        return "TRANSFORMATION", True
    if op in _AGGREGATIONS:
        return "AGGREGATION", False
    return "TRANSFORMATION", False


def carries_metadata(edge: Mapping[str, Any], *, indirect: bool = False) -> bool:
    """Whether tags and terms propagate along an edge: identity and direct edges carry them, masking
    edges stop them, indirect ones only when ``indirect`` is set. Edges written before the vocabulary
    (no ``kind``) count as direct."""
    if edge.get("masking"):
        return False
    if (edge.get("kind") or DIRECT) == INDIRECT:
        return indirect
    return True


@dataclass
class Plan:
    """Parameter rows per write statement; ``steps()`` gives them in execution order."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {s: [] for s in STEP_ORDER})
    counts: Counter = field(default_factory=Counter)
    #: ambiguous references: (dataset urn, reference, candidate field paths)
    ambiguous: list[tuple[str, str, list[str]]] = field(default_factory=list)

    def steps(self) -> list[tuple[str, list[dict[str, Any]]]]:
        return [(s, self.rows[s]) for s in STEP_ORDER if self.rows[s]]


def datasets_to_read(changes: Iterable[AspectChange]) -> list[str]:
    """The datasets whose state :func:`plan_changes` needs: every dataset a change names or references."""
    urns: dict[str, None] = {}
    for c in changes:
        urns[c.dataset_urn] = None
        for ref in _lineage_refs(c):
            urns[_dataset_of(ref)] = None
    return list(urns)


def _dataset_of(ref: str) -> str:
    return parse_field_ref(ref)[0] if ref.startswith(("urn:li:datasetField:", "urn:li:schemaField:")) \
        else _canonical_dataset(ref)


@lru_cache(maxsize=4096)
def _canonical_dataset(urn: str) -> str:
    return str(DatasetUrn.parse(urn))


@lru_cache(maxsize=1 << 16)
def parse_field_ref(ref: str) -> tuple[str, str]:
    """(canonical dataset URN, decoded field path) of a field URN; cached, with a fast path for the
    usual ``urn:li:<datasetField|schemaField>:(urn:li:dataset:(...),<path>)`` shape."""
    for prefix in ("urn:li:schemaField:(urn:li:dataset:(", "urn:li:datasetField:(urn:li:dataset:("):
        if ref.startswith(prefix) and ref.endswith(")"):
            start = len(prefix) - len("urn:li:dataset:(")
            end = ref.find(")", len(prefix))  # dataset names have their parentheses percent-encoded
            if end > 0 and ref[end + 1:end + 2] == ",":
                return _canonical_dataset(ref[start:end + 1]), decode(ref[end + 2:-1])
    f = FieldUrn.parse(ref)
    return str(f.dataset), f.field_path


def _lineage_refs(c: AspectChange) -> Iterable[str]:
    a = c.aspect
    if isinstance(a, UpstreamLineage):
        for fg in a.fineGrainedLineages or []:
            yield from fg.upstreams
    elif isinstance(a, DatasetUpstreamLineage):
        for m in a.fieldMappings:
            yield from m.sourceFields
    elif isinstance(a, JobLineage):
        for e in a.edges:
            yield e.upstream
        for ref, _ in a.dropped:
            yield ref


def _schema_key(version: int, ts: int) -> tuple[int, int]:
    return (version, ts)


def _dataset_props(urn: str) -> dict[str, Any]:
    d = DatasetUrn.parse(urn)
    return {"platform": d.platform, "name": d.name, "env": d.env}


def field_props(dataset_urn: str, f: SchemaField) -> dict[str, Any]:
    t = f.type
    props = {
        "datasetUrn": dataset_urn, "fieldPath": f.fieldPath, "simplePath": f.simple_path, "type": t.name,
        "nativeDataType": f.nativeDataType, "nullable": f.nullable, "description": f.description,
        "isPartOfKey": f.isPartOfKey, "recursive": f.recursive, "jsonProps": f.jsonProps,
        "tags": list(f.tags) or None, "nestedType": list(t.nested_type) if t.nested_type else None,
        "keyType": t.key_type, "valueType": t.value_type,
    }
    return props


@lru_cache(maxsize=1 << 17)
def field_urn(dataset_urn: str, path: str) -> str:
    return f"urn:li:datasetField:({dataset_urn},{encode(path)})"


# --- reference resolution ----------------------------------------------------------------------------


def _tokens(path: str) -> list[tuple[str, bool]]:
    """(value, is_type) tokens of a field path (a v1 path has names only)."""
    if is_v2(path):
        try:
            fp = FieldPath.parse(path)
            return [(t.value, t.is_type) for t in fp.tokens]
        except FieldPathError:
            pass
    return [(n, False) for n in path.split(".") if n]


def _slash_matches(comps: Sequence[str], tokens: Sequence[tuple[str, bool]]) -> bool:
    """``comps`` names every field name of ``tokens`` in order; other components must name one of
    its type tokens (the RFC's ``/foo2/bar2/int`` for a union member), case-insensitively."""
    names = [v for v, is_type in tokens if not is_type]
    types = {v.lower() for v, is_type in tokens if is_type}
    i = 0
    for comp in comps:
        if i < len(names) and comp == names[i]:
            i += 1
        elif comp.lower() not in types:
            return False
    return i == len(names)


class Resolver:
    """Resolves field references against one dataset's fields (indexed once)."""

    def __init__(self, fields: Iterable[FieldState]) -> None:
        self.real = [f for f in fields if not f.placeholder]
        self.by_path = {f.fieldPath: f for f in self.real}
        self._by_simple: dict[str, list[FieldState]] | None = None

    @property
    def by_simple(self) -> dict[str, list[FieldState]]:
        if self._by_simple is None:
            self._by_simple = {}
            for f in self.real:
                self._by_simple.setdefault(v1_path(f.fieldPath), []).append(f)
        return self._by_simple

    def resolve(self, path: str) -> tuple[str, list[str]]:
        if path in self.by_path:
            return "exact", [path]
        if is_v2(path):
            return "unknown", []
        if path.startswith("/"):
            comps = [c for c in path.split("/") if c]
            cands = [f for f in self.real if comps and _slash_matches(comps, _tokens(f.fieldPath))]
        else:
            cands = self.by_simple.get(path, [])
        current = [f for f in cands if not f.removed]
        paths = sorted({f.fieldPath for f in (current or cands)})
        if not paths:
            return "unknown", []
        return ("unique", paths) if len(paths) == 1 else ("ambiguous", paths)


def resolve_reference(path: str, fields: Sequence[FieldState]) -> tuple[str, list[str]]:
    """Resolve a field reference (v2, v1 dotted or RFC slash path) against a dataset's fields.

    Returns ``(kind, field paths)``: ``exact`` (a path the dataset has), ``unique``,
    ``ambiguous`` (more than one candidate; never silently picked) or ``unknown``.
    Current fields are preferred over removed ones.
    """
    return Resolver(fields).resolve(path)


# --- planning ---------------------------------------------------------------------------------------------


def _newest(changes: Sequence[AspectChange], key) -> AspectChange:
    best = changes[0]
    for c in changes[1:]:
        if key(c) >= key(best):  # ties: the later one wins
            best = c
    return best


def plan_changes(changes: Sequence[AspectChange], state: Mapping[str, DatasetState]) -> Plan:
    """The graph writes for ``changes`` given the ``state`` of the datasets they touch. Pure."""
    plan = Plan()
    rows = plan.rows
    counts = plan.counts
    state = dict(state)

    # whole-dataset deletes become deletes of each aspect
    expanded: list[AspectChange] = []
    for c in changes:
        if c.aspect_name == DATASET_KEY:
            expanded.extend(AspectChange(c.dataset_urn, a, None, True, c.ts, c.origin)
                            for a in (SCHEMA_METADATA, *LINEAGE_ASPECTS, JOB_LINEAGE))
        else:
            expanded.append(c)
    by_key: dict[tuple[str, str], list[AspectChange]] = {}
    for c in expanded:
        by_key.setdefault((c.dataset_urn, c.aspect_name), []).append(c)

    dataset_rows: dict[str, dict[str, Any]] = {}

    def ds_row(urn: str) -> dict[str, Any]:
        if urn not in dataset_rows:
            props = _dataset_props(urn)
            if urn not in state:
                props["placeholder"] = True
            dataset_rows[urn] = props
        return dataset_rows[urn]

    # ---- schemas ----
    # fields after this batch, per dataset (the resolution target of lineage references)
    known: dict[str, dict[str, FieldState]] = {u: dict(s.fields) for u, s in state.items()}
    for (urn, aspect), group in by_key.items():
        if aspect != SCHEMA_METADATA:
            continue
        st = state.get(urn) or DatasetState(urn)
        stored = _schema_key(st.schemaVersion, st.schemaTs)

        def key(c: AspectChange, st=st) -> tuple[int, int]:
            if c.delete or not isinstance(c.aspect, SchemaMetadata):
                return _schema_key(max([st.schemaVersion, 0] + [x.aspect.version for x in group
                                                                if isinstance(x.aspect, SchemaMetadata)]), c.ts)
            return _schema_key(c.aspect.version, c.ts)

        win = _newest(group, key)
        win_key = key(win)
        batch_wins = win_key >= stored
        counts["superseded"] += len(group) - (1 if batch_wins else 0)
        fields_now = known.setdefault(urn, {})
        # the current field set after this batch
        if batch_wins:
            counts["schema_deletes" if win.delete else "schemas"] += 1
            current = set() if win.delete else {field_urn(urn, f.fieldPath) for f in win.aspect.schema_fields()}
            row = ds_row(urn)
            row.pop("placeholder", None)
            row.update(placeholder=False, schemaVersion=win_key[0], schemaTs=win_key[1], schemaDeleted=win.delete)
            if not win.delete:
                a = win.aspect
                row.update(schemaName=a.schemaName, schemaHash=a.hash, schemaPlatform=a.platform,
                           platformSchemaType=a.platform_schema_class)
        else:
            current = {u for u, f in fields_now.items() if not f.placeholder and not f.removed}
        # every non-deleting change writes the fields it lists that no newer schema wrote
        written: dict[str, dict[str, Any]] = {}
        for c in sorted((c for c in group if not c.delete), key=key):
            k = key(c)
            terms = _glossary_terms(c.aspect)
            for f in c.aspect.schema_fields():
                furn = field_urn(urn, f.fieldPath)
                prev = fields_now.get(furn)
                if prev is not None and not prev.placeholder and (prev.schemaVersion, prev.schemaTs) > k:
                    continue
                props = field_props(urn, f)
                props["glossaryTerms"] = terms.get(f.fieldPath)
                props.update(placeholder=False, ambiguous=False, candidates=None, refPath=None,
                             removed=furn not in current, schemaVersion=k[0], schemaTs=k[1])
                written[furn] = {"datasetUrn": urn, "urn": furn, "props": props}
                fields_now[furn] = FieldState(furn, f.fieldPath, False, furn not in current, k[0], k[1])
        rows["upsert_fields"].extend(written.values())
        counts["fields"] += len(written)
        if written:
            ds_row(urn)
        if batch_wins:
            for furn, fs in list(fields_now.items()):
                if not fs.placeholder and furn not in current and not fs.removed:
                    fields_now[furn] = replace(fs, removed=True)  # never mutate the caller's state
                    rows["set_field_props"].append({"urn": furn, "props": {"removed": True}})
                    counts["fields_removed"] += 1

    # placeholders already in the graph, for datasets whose schema changed: resolve them now
    for urn, fields_now in known.items():
        if (urn, SCHEMA_METADATA) not in by_key:
            continue
        resolver = Resolver(fields_now.values())
        for furn, fs in list(fields_now.items()):
            if not fs.placeholder or furn not in (state.get(urn) or DatasetState(urn)).fields:
                continue
            ref = fs.refPath or fs.fieldPath
            kind, paths = resolver.resolve(ref)
            if kind in ("unique", "exact") and field_urn(urn, paths[0]) != furn:
                target = field_urn(urn, paths[0])
                rows["move_out_edges"].append({"from": furn, "to": target})
                rows["move_in_edges"].append({"from": furn, "to": target})
                rows["delete_fields"].append({"urn": furn})
                del fields_now[furn]
                counts["placeholders_resolved"] += 1
            elif kind == "ambiguous":
                rows["set_field_props"].append({"urn": furn, "props": {"ambiguous": True, "candidates": paths}})
                plan.ambiguous.append((urn, ref, paths))
            elif kind == "unknown":
                rows["set_field_props"].append({"urn": furn, "props": {"ambiguous": False, "candidates": None}})

    # ---- lineage ----
    ensured: set[str] = set()

    def ensure_dataset(ds: str) -> None:
        if ds not in state and ds not in dataset_rows and ds not in ensured:
            rows["ensure_datasets"].append({"urn": ds, "props": {**_dataset_props(ds), "placeholder": True}})
            ensured.add(ds)

    resolvers: dict[str, Resolver] = {}

    def resolve(ref: str, declared: bool = False) -> str:
        ds, path = parse_field_ref(ref)
        fields_now = known.setdefault(ds, {})
        exact = fields_now.get(field_urn(ds, path))
        if exact is not None and not exact.placeholder:  # the common case, without building a Resolver
            return exact.urn
        if ds not in resolvers:  # schemas are all applied by now; placeholders do not count
            resolvers[ds] = Resolver(fields_now.values())
        kind, paths = resolvers[ds].resolve(path)
        if kind in ("exact", "unique"):
            return field_urn(ds, paths[0])
        purn = field_urn(ds, path)
        ensure_dataset(ds)
        if purn not in fields_now or fields_now[purn].placeholder:
            props = {"datasetUrn": ds, "fieldPath": path, "simplePath": _simple_ref(path),
                     "placeholder": True, "removed": False, "refPath": path,
                     "ambiguous": kind == "ambiguous", "candidates": paths or None}
            if declared:
                props["declared"] = True
            rows["ensure_fields"].append({"datasetUrn": ds, "urn": purn, "props": props})
            if purn not in fields_now:
                counts["placeholders"] += 1
            if kind == "ambiguous":
                plan.ambiguous.append((ds, path, paths))
            fields_now[purn] = FieldState(purn, path, True, refPath=path)
        return purn

    def dataset_target(ref: str) -> str:
        ds = _canonical_dataset(ref)
        ensure_dataset(ds)
        return ds

    for (urn, aspect), group in by_key.items():
        if aspect not in LINEAGE_ASPECTS:
            continue
        st = state.get(urn) or DatasetState(urn)
        win = _newest(group, lambda c: c.ts)
        if win.ts < st.lineageTs.get(aspect, -1):
            counts["superseded"] += len(group)
            continue
        counts["superseded"] += len(group) - 1
        counts["lineage_deletes" if win.delete else "lineages"] += 1
        row = ds_row(urn)
        row[LINEAGE_TS_PROP[aspect]] = win.ts
        rows["delete_lineage"].append({"datasetUrn": urn, "source": aspect})
        if win.delete:
            continue
        field_edges: dict[tuple[str, str], dict[str, Any]] = {}
        dataset_edges: dict[tuple[str, str], dict[str, Any]] = {}
        a = win.aspect
        if isinstance(a, UpstreamLineage):
            for i, fg in enumerate(a.fineGrainedLineages or []):
                subtype, masking = datahub_subtype(fg.transformOperation)
                props = {**edge_vocabulary(source_format=SOURCE_FORMATS[aspect], kind=DIRECT, subtype=subtype,
                                           masking=masking),
                         "source": aspect, "transformation": fg.transformOperation, "confidenceScore":
                         fg.confidenceScore, "query": fg.query, "createdAt": win.ts, "upstreamType": fg.upstreamType,
                         "downstreamType": fg.downstreamType, "index": i, "lastSeen": win.ts}
                downs = [resolve(d) for d in fg.downstreams]
                for d in downs:
                    for u in fg.upstreams:
                        if fg.upstreamType == "DATASET":
                            up = dataset_target(u)
                            dataset_edges[(d, up)] = {"down": d, "up": up, "source": aspect, "props": props}
                        else:
                            up = resolve(u)
                            field_edges[(d, up)] = {"down": d, "up": up, "source": aspect, "props": props}
        elif isinstance(a, DatasetUpstreamLineage):
            for i, m in enumerate(a.fieldMappings):
                subtype, masking = datahub_subtype(m.transformationFunction)
                props = {**edge_vocabulary(source_format=SOURCE_FORMATS[aspect], kind=DIRECT, subtype=subtype,
                                           masking=masking),
                         "source": aspect, "transformation": m.transformationFunction, "confidenceScore": 1.0,
                         "query": None, "createdAt": (m.created.time if m.created and m.created.time else win.ts),
                         "upstreamType": "FIELD_SET", "downstreamType": "FIELD", "index": i, "lastSeen": win.ts}
                d = resolve(m.destinationField)
                for u in m.sourceFields:
                    up = resolve(u)
                    field_edges[(d, up)] = {"down": d, "up": up, "source": aspect, "props": props}
        rows["merge_field_edges"].extend(field_edges.values())
        rows["merge_dataset_edges"].extend(dataset_edges.values())
        counts["edges"] += len(field_edges) + len(dataset_edges)

    _plan_job_lineage(by_key, rows, counts, resolve, ds_row)

    rows["upsert_datasets"] = [{"urn": u, "props": p} for u, p in dataset_rows.items()]
    if rows["delete_lineage"] or rows["delete_fields"] or rows["delete_job_lineage"]:
        rows["cleanup_placeholder_fields"] = [{}]
        rows["cleanup_placeholder_datasets"] = [{}]
    counts["ambiguous"] = len(plan.ambiguous)
    return plan


def _simple_ref(path: str) -> str:
    if path.startswith("/"):
        return ".".join(c for c in path.split("/") if c)
    return v1_path(path)


def _glossary_terms(aspect: SchemaMetadata) -> dict[str, list[str]]:
    """fieldPath -> glossary term names (``glossaryTerms.terms[].urn`` of the aspect's field dicts)."""
    out: dict[str, list[str]] = {}
    for f in aspect.fields or []:
        if not isinstance(f, dict) or not f.get("glossaryTerms"):
            continue
        terms = f["glossaryTerms"].get("terms") if isinstance(f["glossaryTerms"], dict) else None
        names = [str(t.get("urn", "")).removeprefix("urn:li:glossaryTerm:") for t in terms or []
                 if isinstance(t, dict) and t.get("urn")]
        if names and isinstance(f.get("fieldPath"), str):
            out[f["fieldPath"]] = names
    return out


def _plan_job_lineage(by_key: Mapping[tuple[str, str], list[AspectChange]], rows: dict[str, list[dict[str, Any]]],
                      counts: Counter, resolve, ds_row) -> None:
    """Job lineage rows: additive edges per (down, up, job) with first/last seen; declared and dropped fields."""
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    dropped: dict[tuple[str, str], None] = {}
    for (urn, aspect), group in by_key.items():
        if aspect != JOB_LINEAGE:
            continue
        if any(c.delete for c in group):
            rows["delete_job_lineage"].append({"datasetUrn": urn})
            counts["lineage_deletes"] += 1
        for c in sorted((c for c in group if not c.delete), key=lambda c: c.ts):
            a = c.aspect
            if not isinstance(a, JobLineage):
                continue
            counts["job_lineages"] += 1
            ds_row(urn)
            for ref in a.fields:
                resolve(ref, declared=True)
            for e in a.edges:
                down, up = resolve(e.downstream, declared=True), resolve(e.upstream)
                key = (down, up, a.job)
                prev = edges.get(key)
                if prev is None:
                    edges[key] = {"down": down, "up": up, "source": a.job, "firstSeen": a.time, "lastSeen": a.time,
                                  "props": dict(e.props)}
                else:
                    prev["firstSeen"] = min(prev["firstSeen"], a.time)
                    if a.time >= prev["lastSeen"]:
                        prev["lastSeen"] = a.time
                        prev["props"] = dict(e.props)
            for ref, entry in a.dropped:
                dropped[(resolve(ref), entry)] = None
    rows["merge_job_edges"].extend(edges.values())
    rows["mark_dropped"].extend({"urn": u, "entry": entry} for u, entry in dropped)
    counts["edges"] += len(edges)
