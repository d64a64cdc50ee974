"""OpenLineage run events (and dataset/job events): schemas, column lineage and field tags.

Read, per dataset of ``inputs``/``outputs`` (or ``dataset`` of a DatasetEvent):

- ``schema`` facet (``fields`` with nested ``fields``) -> a ``schemaMetadata`` change (version 0,
  stamped with ``eventTime``), nested fields as dotted paths (``address.city``); field-level
  entries of the ``tags`` facet (``{key, value, field}``) become field tags (``key`` when the value
  is ``true``/empty, else ``key:value``);
- ``columnLineage`` facet (1-0 to 1-2: ``fields.<out>.inputFields[]`` with ``transformations``
  ``{type DIRECT|INDIRECT, subtype, description, masking}``, the older ``transformationType`` /
  ``transformationDescription``, and dataset-wide ``dataset`` input fields), and the explicit
  ``lineage`` facet that supersedes it (dataset facet ``lineage``: ``inputs`` and
  ``fields.<out>.inputs``; job facet ``lineage``: ``entries`` of type DATASET) -> a ``jobLineage``
  change for the output dataset. Dataset-wide inputs (``dataset``, ``lineage.inputs`` with a
  ``field``) are INDIRECT edges from every field of the output dataset the event names.

An output with no column lineage (no ``columnLineage`` nor ``lineage`` facet, in this event) whose job
has a ``sql`` facet gets the lineage the graph derives from that SQL (:mod:`fieldgraph.sqllineage`,
the facet's ``dialect`` or the output's platform): the statement that writes the output (by name), or
the only one; table names map to the event's input datasets by name, else to the output's namespace.
Lineage the producer sent is never overridden. A statement sqlglot cannot parse is logged with its line,
column and reason, and the event's other facets are written all the same (the facet is a hint, not the
event's substance).

Column lineage sent without types (no ``transformations``, nor 1-0's ``transformationType``: ``dbt-ol`` sends
``transformations: []``) is DIRECT, subtype none, transformation ``BlackBox``. With
:attr:`PlatformMapping.types_from_sql` (``--types-from-sql``), an output whose column lineage has such edges and
whose job has a ``sql`` facet with the one statement that writes it is sent as a :class:`SqlChange` carrying that
lineage (``sent``, ``untyped``): the graph fills each untyped edge's kind, subtype and masking from the statement's
lineage and adds the statement's INDIRECT edges (joins, filters, groupings, conditions); typed edges and the DIRECT
lineage stay as sent, and SQL that cannot be derived leaves the lineage as sent.

Edge words (``transformation``, ``kind``, ``subtype``) are those of :mod:`fieldgraph.changes`' vocabulary
(:func:`~fieldgraph.changes.transformation_of`).

Lineage from FAIL and ABORT events is ignored (their schemas are read). ``namespace``/``name`` map
to dataset URNs with :class:`PlatformMapping` (see :func:`dataset_urn`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fieldgraph.changes import (
    Change,
    EdgeProps,
    FieldEdge,
    JobLineageChange,
    SchemaChange,
    SqlChange,
    transformation_of,
)
from fieldgraph.errors import EventError
from fieldgraph.ingest.platforms import DEFAULT_MAPPING, PlatformMapping
from fieldgraph.ingest.times import epoch_ms
from fieldgraph.normalizers import SchemaField
from fieldgraph.normalizers.urns import DatasetUrn, make_field_urn
from fieldgraph.sqllineage import SqlError, dialect_of, match_tables, parse_statements

SOURCE_FORMAT = "openlineage"
log = logging.getLogger("fieldgraph.sources")


# --- reading events ------------------------------------------------------------------------------------

_TYPES = [
    (("STRING", "VARCHAR", "CHAR", "TEXT", "NVARCHAR", "NCHAR", "UUID", "JSON"), "StringType"),
    (("INT", "INTEGER", "BIGINT", "SMALLINT", "TINYINT", "LONG", "SHORT", "BYTE", "INT64", "INT32", "DOUBLE",
      "FLOAT", "REAL", "DECIMAL", "NUMERIC", "NUMBER", "FLOAT64"), "NumberType"),
    (("BOOLEAN", "BOOL"), "BooleanType"),
    (("DATE",), "DateType"),
    (("TIMESTAMP", "DATETIME", "TIME", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ", "TIMESTAMP_TZ"), "TimeType"),
    (("BINARY", "BYTES", "VARBINARY", "BLOB"), "BytesType"),
    (("STRUCT", "RECORD", "ROW", "OBJECT"), "RecordType"),
    (("ARRAY", "LIST"), "ArrayType"),
    (("MAP",), "MapType"),
]


def _datahub_type(native: str | None, has_children: bool) -> str:
    base = re.split(r"[<(\s]", (native or "").strip().upper(), maxsplit=1)[0]
    for names, cls in _TYPES:
        if base in names:
            return cls
    return "RecordType" if has_children else "NullType"


def _obj(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EventError(f"expected an object, got {type(value).__name__}", where=where)
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise EventError(f"expected an array, got {type(value).__name__}", where=where)
    return value


def _str(obj: dict[str, Any], key: str, where: str) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not v:
        raise EventError(f"{key} is missing or not a non-empty string", where=f"{where}.{key}")
    return v


def _urn(mapping: PlatformMapping, namespace: str, name: str, where: str) -> str:
    try:
        return mapping.dataset_urn(namespace, name)
    except (ValueError, EventError) as exc:
        raise EventError(str(exc), where=where) from exc


def _schema_fields(fields: list[Any], where: str, prefix: str = "") -> Iterable[tuple[str, dict[str, Any]]]:
    for i, f in enumerate(fields):
        w = f"{where}[{i}]"
        f = _obj(f, w)
        name = _str(f, "name", w)
        children = _list(f.get("fields"), f"{w}.fields")
        yield prefix + name, {"type": f.get("type"), "description": f.get("description"), "nested": bool(children)}
        yield from _schema_fields(children, f"{w}.fields", prefix + name + ".")


def _field_tags(facets: dict[str, Any], where: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for i, t in enumerate(_list(_obj(facets.get("tags"), f"{where}.tags").get("tags"), f"{where}.tags.tags")):
        t = _obj(t, f"{where}.tags.tags[{i}]")
        if t.get("field") and t.get("key"):
            value = str(t.get("value") or "")
            out.setdefault(t["field"], []).append(t["key"] if value.lower() in ("", "true") else f"{t['key']}:{value}")
    return out


def _schema_change(urn: str, facets: dict[str, Any], ts: int, where: str, origin: str) -> SchemaChange | None:
    schema = facets.get("schema")
    if schema is None:
        return None
    found = list(_schema_fields(_list(_obj(schema, f"{where}.schema").get("fields"), f"{where}.schema.fields"),
                                f"{where}.schema.fields"))
    tags = _field_tags(facets, where)
    fields = []
    for i, (path, f) in enumerate(found):
        d: dict[str, Any] = {"fieldPath": path, "nullable": True, "nativeDataType": f["type"] or "",
                             "type": {"type": {f"com.linkedin.schema.{_datahub_type(f['type'], f['nested'])}": {}}}}
        if f["description"]:
            d["description"] = f["description"]
        if tags.get(path):
            d["globalTags"] = {"tags": [{"tag": f"urn:li:tag:{t}"} for t in tags[path]]}
        try:
            fields.append(SchemaField.from_datahub(d))
        except ValueError as exc:
            raise EventError(str(exc), where=f"{where}.schema.fields[{i}]") from exc
    platform = urn.split("urn:li:dataPlatform:", 1)[1].split(",", 1)[0]
    return SchemaChange(urn, tuple(fields), version=0, ts=ts, name=urn, platform=f"urn:li:dataPlatform:{platform}",
                        platform_schema="OtherSchema", origin=origin)


def _transformations(inp: dict[str, Any], legacy: dict[str, Any], where: str) -> list[dict[str, Any]]:
    ts = _list(inp.get("transformations"), f"{where}.transformations")
    out = []
    for i, t in enumerate(ts):
        t = _obj(t, f"{where}.transformations[{i}]")
        kind = str(t.get("type") or "").upper()
        if kind not in ("DIRECT", "INDIRECT"):
            raise EventError(f"transformation type {t.get('type')!r} is not DIRECT or INDIRECT",
                             where=f"{where}.transformations[{i}].type")
        out.append({"type": kind, "subtype": (str(t["subtype"]).upper() if t.get("subtype") else None),
                    "description": t.get("description") or None, "masking": bool(t.get("masking"))})
    if not out:  # columnLineage 1-0: transformationType IDENTITY|MASKED on the output field
        legacy_type = str(legacy.get("transformationType") or "").upper()
        out.append({"type": "DIRECT", "subtype": "IDENTITY" if legacy_type == "IDENTITY" else
                    ("TRANSFORMATION" if legacy_type else None), "description":
                    legacy.get("transformationDescription") or None, "masking": legacy_type == "MASKED",
                    "untyped": not legacy_type})  # none given (dbt-ol): the job's SQL may tell (types_from_sql)
    return out


def _edge_props(ts: list[dict[str, Any]], job: str, run: str | None, time: int, query: str | None) -> EdgeProps:
    direct = [t for t in ts if t["type"] == "DIRECT"]
    main = (direct or ts)[0]
    masking = all(t["masking"] for t in direct) if direct else any(t["masking"] for t in ts)
    subtype = main["subtype"]
    return EdgeProps(
        SOURCE_FORMAT, transformation=transformation_of(subtype), kind=main["type"], subtype=subtype,
        masking=masking, program=job, run=run, run_time=time, query=query,
        description="; ".join(t["description"] for t in ts if t["description"]) or None,
        transformations=tuple(sorted({f"{t['type']}/{t['subtype'] or ''}".rstrip("/") for t in ts})))


@dataclass
class _Collected:
    edges: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    fields: set[str] = field(default_factory=set)
    wide: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)  # dataset-wide (up, transformations)


def _input_ref(mapping: PlatformMapping, inp: dict[str, Any], where: str, field_key: str = "field") -> str | None:
    if str(inp.get("type") or "DATASET").upper() != "DATASET":
        return None  # job inputs (explicit lineage) have no field to point at
    ns, name = _str(inp, "namespace", where), _str(inp, "name", where)
    f = inp.get(field_key)
    if not f:
        return None
    return make_field_urn(_urn(mapping, ns, name, where), str(f))


def _collect_column_lineage(mapping: PlatformMapping, cll: dict[str, Any], into: _Collected, where: str) -> None:
    for out_name, spec in _obj(cll.get("fields"), f"{where}.fields").items():
        w = f"{where}.fields.{out_name}"
        spec = _obj(spec, w)
        into.fields.add(out_name)
        for j, inp in enumerate(_list(spec.get("inputFields"), f"{w}.inputFields")):
            wi = f"{w}.inputFields[{j}]"
            inp = _obj(inp, wi)
            _str(inp, "field", wi)
            up = _input_ref(mapping, inp, wi)
            if up:
                into.edges.setdefault((out_name, up), []).extend(_transformations(inp, spec, wi))
    for j, inp in enumerate(_list(cll.get("dataset"), f"{where}.dataset")):
        wi = f"{where}.dataset[{j}]"
        inp = _obj(inp, wi)
        up = _input_ref(mapping, inp, wi)
        if up:
            ts = _transformations(inp, {}, wi)
            into.wide.append((up, [{**t, "type": "INDIRECT", "untyped": False} for t in ts]))


def _collect_explicit(mapping: PlatformMapping, entry: dict[str, Any], into: _Collected, where: str) -> None:
    """The explicit ``lineage`` facet (dataset facet, or one DATASET entry of the job facet)."""
    for j, inp in enumerate(_list(entry.get("inputs"), f"{where}.inputs")):
        wi = f"{where}.inputs[{j}]"
        inp = _obj(inp, wi)
        up = _input_ref(mapping, inp, wi)
        if up:
            into.wide.append((up, [{**t, "type": "INDIRECT", "untyped": False} for t in _transformations(inp, {}, wi)]))
    for out_name, spec in _obj(entry.get("fields"), f"{where}.fields").items():
        w = f"{where}.fields.{out_name}"
        into.fields.add(out_name)
        for j, inp in enumerate(_list(_obj(spec, w).get("inputs"), f"{w}.inputs")):
            wi = f"{w}.inputs[{j}]"
            inp = _obj(inp, wi)
            up = _input_ref(mapping, inp, wi)
            if up:
                into.edges.setdefault((out_name, up), []).extend(_transformations(inp, {}, wi))


def decode_openlineage_event(obj: Any, origin: str = "", mapping: PlatformMapping = DEFAULT_MAPPING) -> list[Change]:
    """The schema and job lineage changes of one OpenLineage event, or :class:`EventError`; ``mapping`` turns
    namespaces and names into dataset URNs."""
    if not isinstance(obj, dict):
        raise EventError(f"an OpenLineage event is a JSON object, got {type(obj).__name__}")
    ts = epoch_ms(obj.get("eventTime"), "eventTime")
    event_type = str(obj.get("eventType") or "").upper()
    job = _obj(obj.get("job"), "job")
    run = _obj(obj.get("run"), "run")
    if obj.get("dataset") is None and not job:
        raise EventError("an OpenLineage RunEvent or JobEvent needs job {namespace, name}", where="job")
    job_id = f"{SOURCE_FORMAT}:{_str(job, 'namespace', 'job')}/{_str(job, 'name', 'job')}" if job else None
    run_id = run.get("runId") if isinstance(run.get("runId"), str) else None
    job_facets = _obj(job.get("facets"), "job.facets")
    sql_facet = _obj(job_facets.get("sql"), "job.facets.sql")
    query = sql_facet.get("query") or None
    with_lineage = event_type not in ("FAIL", "ABORT") and job_id is not None

    collected: dict[str, _Collected] = {}
    to_fill: dict[str, tuple[JobLineageChange, tuple[tuple[str, str], ...]]] = {}
    changes = _datasets(obj, mapping, ts, origin, collected if with_lineage else None)
    if job_id is None or not with_lineage:
        return changes
    if job_facets.get("lineage") is not None:
        _collect_job_facet(mapping, job_facets["lineage"], collected)
    for urn, c in collected.items():
        edges: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for (out_name, up), trs in c.edges.items():
            edges.setdefault((make_field_urn(urn, out_name), up), []).extend(trs)
        for up, trs in c.wide:
            for out_name in c.fields:
                edges.setdefault((make_field_urn(urn, out_name), up), []).extend(trs)
        job_edges = tuple(FieldEdge(down, up, _edge_props(trs, job_id, run_id, ts, query))
                          for (down, up), trs in edges.items())
        sent = JobLineageChange(urn, job_id, SOURCE_FORMAT, run_id, job_edges,
                                tuple(make_field_urn(urn, f) for f in sorted(c.fields)), ts=ts, origin=origin)
        untyped = tuple(pair for pair, trs in edges.items() if all(t.get("untyped") for t in trs))
        if untyped and mapping.types_from_sql and isinstance(query, str):
            to_fill[urn] = (sent, untyped)
        changes.append(sent)
    if isinstance(query, str):
        sql = _sql_lineage(obj, mapping, query, sql_facet.get("dialect"), collected, job_id, run_id, ts, origin,
                           to_fill)
        filled = {id(c.sent) for c in sql if c.sent is not None}  # the lineage sent goes with its SQL change
        changes = [c for c in changes if id(c) not in filled] + list(sql)
    return changes


def _sql_lineage(obj: dict[str, Any], mapping: PlatformMapping, query: str, dialect: Any,
                 collected: dict[str, _Collected], job: str, run: str | None, ts: int, origin: str,
                 to_fill: dict[str, tuple[JobLineageChange, tuple[tuple[str, str], ...]]]) -> list[SqlChange]:
    """SQL changes for the outputs that have no column lineage of their own, and for those whose untyped column
    lineage the SQL fills (``to_fill``: the output's lineage as sent and its untyped pairs; see the module)."""
    outputs = []
    for i, d in enumerate(_list(obj.get("outputs"), "outputs")):
        ns, name = _str(d, "namespace", f"outputs[{i}]"), _str(d, "name", f"outputs[{i}]")
        urn = _urn(mapping, ns, name, f"outputs[{i}]")
        if urn not in collected or urn in to_fill:
            outputs.append((ns, name, urn))
    if not outputs:
        return []
    inputs = {}
    for i, d in enumerate(_list(obj.get("inputs"), "inputs")):
        ns, name = _str(d, "namespace", f"inputs[{i}]"), _str(d, "name", f"inputs[{i}]")
        inputs[name] = _urn(mapping, ns, name, f"inputs[{i}]")
    dialect = dialect if isinstance(dialect, str) and dialect else dialect_of(DatasetUrn.parse(outputs[0][2]).platform)
    try:
        statements = [s for s in parse_statements(query, dialect) if s.kind != "other"]
    except SqlError as exc:  # the facet is a hint: the event's schemas and facets are written all the same
        log.warning("%s: no lineage derived from job.facets.sql.query: %s", origin or job, exc)
        return []
    out: list[SqlChange] = []
    for ns, name, urn in outputs:
        writes = [s for s in statements if s.target and match_tables([s.target], {name: urn})]
        if not writes and len(statements) == 1 and len(outputs) == 1:
            writes = statements
        sent, untyped = to_fill.get(urn, (None, ()))
        if sent is not None and len(writes) != 1:
            continue  # types are filled from the one statement that writes the output, else left as sent
        for st in writes:
            tables = match_tables(st.tables, inputs)
            names = {key: tables.get(key) or _urn(mapping, ns, key, "job.facets.sql.query") for key in st.tables}
            out.append(SqlChange(urn, job, st.text, dialect, tuple(names.items()), st.target or "", run, query, ts,
                                 origin, strict=False,  # a hint: what cannot be derived is logged, not refused
                                 parsed=st, sent=sent, untyped=untyped))
    return out


def _datasets(obj: dict[str, Any], mapping: PlatformMapping, ts: int, origin: str,
              collected: dict[str, _Collected] | None) -> list[Change]:
    """The schema changes of the event's datasets; their lineage facets into ``collected`` (None: skip them)."""
    changes: list[Change] = []
    datasets: list[tuple[str, dict[str, Any]]] = []
    for key in ("inputs", "outputs"):
        datasets += [(f"{key}[{i}]", d) for i, d in enumerate(_list(obj.get(key), key))]
    if obj.get("dataset") is not None:
        datasets.append(("dataset", obj["dataset"]))
    for where, d in datasets:
        d = _obj(d, where)
        urn = _urn(mapping, _str(d, "namespace", where), _str(d, "name", where), where)
        facets = _obj(d.get("facets"), f"{where}.facets")
        sc = _schema_change(urn, facets, ts, f"{where}.facets", origin)
        if sc is not None:
            changes.append(sc)
        if collected is None:
            continue
        w = f"{where}.facets"
        if facets.get("columnLineage") is not None:
            _collect_column_lineage(mapping, _obj(facets["columnLineage"], f"{w}.columnLineage"),
                                    collected.setdefault(urn, _Collected()), f"{w}.columnLineage")
        if facets.get("lineage") is not None:
            _collect_explicit(mapping, _obj(facets["lineage"], f"{w}.lineage"),
                              collected.setdefault(urn, _Collected()), f"{w}.lineage")
        if sc is not None and urn in collected:
            collected[urn].fields.update(f.fieldPath for f in sc.fields)
    return changes


def _collect_job_facet(mapping: PlatformMapping, facet: Any, collected: dict[str, _Collected]) -> None:
    """The job facet ``lineage``: its DATASET entries, like dataset ``lineage`` facets."""
    w = "job.facets.lineage"
    for i, entry in enumerate(_list(_obj(facet, w).get("entries"), f"{w}.entries")):
        we = f"{w}.entries[{i}]"
        entry = _obj(entry, we)
        if str(entry.get("type") or "").upper() != "DATASET":
            continue
        urn = _urn(mapping, _str(entry, "namespace", we), _str(entry, "name", we), we)
        _collect_explicit(mapping, entry, collected.setdefault(urn, _Collected()), we)
