"""Schema commands: ``normalize`` (a schema's field paths), ``diff`` (field changes and the rules they break) and
``set-schema`` (a schema file as a dataset's schema version in the graph)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from fieldgraph.errors import FieldgraphError, InputError
from fieldgraph.ingest.cli.boundary import about
from fieldgraph.ingest.cli.options import GraphName, GraphUri, json_option, open_graph
from fieldgraph.ingest.cli.render import Name, out, plural

#: --rules values: the diff rule sets, then the Confluent compatibility modes (lower case).
RULE_CHOICES = (
    "datamine", "odf", "backward", "forward", "full",
    "backward_transitive", "forward_transitive", "full_transitive", "none",
)


@dataclass(frozen=True)
class SchemaFile:
    """A schema file as ``normalize`` and ``diff`` both read it: its bytes, its format, and the options its
    format needs to read it where it is (a ``.proto`` file's imports are looked up beside it)."""

    path: Path
    data: bytes
    format: str

    @property
    def options(self) -> dict[str, Any]:
        return {"import_paths": [str(self.path.parent)]} if self.format == "protobuf" else {}

    def to_model(self) -> Any:
        from fieldgraph.normalizers import to_model

        with about(self.path):
            return to_model(self.data, self.format, name=self.path.name, **self.options)


def read_schema(path: Path, format: str | None = None) -> SchemaFile:
    """The schema file at ``path``, its format given or detected."""
    from fieldgraph.normalizers.detect import detect_format

    data = path.read_bytes()
    with about(path):
        return SchemaFile(path, data, format or detect_format(path.name, data))


def normalize_cmd(
    file: Path = typer.Argument(..., help="Schema file to normalize."),
    format: str | None = typer.Option(None, "--format", "-f", help="Schema format (default: detected from the file)."),
    key: bool = typer.Option(False, "--key", help="Treat it as a key schema ([key=True] paths)."),
    table: str | None = typer.Option(None, "--table", "-t", help="DataMine: this table only "
                                        "(default: every table of the file)."),
    as_json: Annotated[bool, json_option(
        "Print a JSON array of DataHub SchemaField objects (a DataMine file of several tables: an object "
        "mapping each table name to its array)."
    )] = False,
) -> None:
    """Print the DataHub v2 field paths of a schema (of each table of a DataMine file)."""
    from fieldgraph.normalizers import fields_of

    schema = read_schema(file, format)
    fmt = schema.format
    models = _tables_to_normalize(schema, table)
    with about(file):
        tables = {name: fields_of(model, key=key, name=file.name) for name, model in models.items()}
    if as_json:
        if len(tables) == 1:
            doc: Any = [f.to_datahub() for f in next(iter(tables.values()))]
        else:
            doc = {name: [f.to_datahub() for f in fields] for name, fields in tables.items()}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    for name, fields in tables.items():
        label = f"{file.name} ({fmt}{', key' if key else ''})" + (f" table {name}" if name is not None else "")
        out.print(_fields_table(f"{label}: {plural(len(fields), 'field')}", fields))


def set_schema_cmd(
    dataset: str = typer.Argument(..., help="Dataset URN (urn:li:dataset:(...))."),
    file: Path = typer.Argument(..., help="Schema file (Avro, JSON Schema, Protobuf, Arrow, Parquet, ODF)."),
    at: str | None = typer.Option(None, "--at", help="When this version took effect (ms since the epoch or ISO 8601; "
                                  "default: now)."),
    version: int = typer.Option(0, "--version", help="The schema's version number."),
    format: str | None = typer.Option(None, "--format", "-f", help="Schema format (default: detected from the file)."),
    key: bool = typer.Option(False, "--key", help="Treat it as a key schema ([key=True] paths)."),
    graph: GraphUri = None,
    graph_name: GraphName = None,
) -> None:
    """Write a schema file as a dataset's schema version, as a schemaMetadata event would: fields it no longer
    lists become removed, and the renames it states (Avro aliases, Protobuf field numbers, Parquet field ids)
    keep the renamed fields' lineage."""
    from fieldgraph.changes import SchemaChange
    from fieldgraph.graph.plan import parse_field_ref
    from fieldgraph.ingest.times import parse_time_or_now
    from fieldgraph.normalizers import fields_of, v1_path
    from fieldgraph.normalizers.urns import canonical_dataset_urn

    when = parse_time_or_now(at)
    urn = canonical_dataset_urn(dataset)
    schema = read_schema(file, format)
    with about(file):
        fields = fields_of(schema.to_model(), key=key, name=file.name)
    change = SchemaChange(urn, tuple(fields), version=version, ts=when,
                          name=file.name, origin=str(file))
    with open_graph(graph, graph_name, create=True) as g:
        plan = g.write([change])
    out.print(Text(f"{urn}: {plural(len(fields), 'field')} from {file.name} ({schema.format})"))
    for r in plan.merge_renames:
        old, new = (v1_path(parse_field_ref(r[k])[1]) for k in ("old", "new"))
        out.print(Text(f"  renamed {old} -> {new} ({r['props'].get('reason')})"))


def _tables_to_normalize(schema: SchemaFile, table: str | None) -> dict[str | None, Any]:
    """The models ``normalize`` prints, by DataMine table name (None: the file's one schema).

    A DataMine file gives every table (``table``: that one); any other file its one model.
    """
    if schema.format != "datamine":
        if table is not None:
            raise InputError(f"{schema.path}: --table applies to DataMine schemas only "
                             f"(this schema's format is {schema.format})")
        return {None: schema.to_model()}
    from fieldgraph.normalizers.datamine import parse_datamine_tables

    with about(schema.path):
        tables = parse_datamine_tables(schema.data, name=schema.path.name)
    if table is None:
        return {name: model for name, model in tables.items()}
    if table not in tables:
        raise InputError(f"{schema.path}: no table {table!r}; the tables are: {', '.join(tables)}")
    return {table: tables[table]}


def _fields_table(title: str, fields: list[Any]) -> Table:
    table = Table(title=title)
    for col in ("fieldPath", "type", "nativeDataType", "nullable", "description"):
        table.add_column(col, overflow="fold")
    for f in fields:
        table.add_row(
            Name(f.fieldPath),
            f.type.name,
            Text(f.nativeDataType),
            "yes" if f.nullable else "",
            Text((f.description or "").strip()),
        )
    return table


def diff_cmd(
    schemas: list[Path] = typer.Argument(
        ..., metavar="OLD NEW", show_default=False,
        help="The old and the new schema; or several versions, oldest first (the last one is the new "
        "schema, the others its history, for the *_transitive modes).",
    ),
    rules: str | None = typer.Option(
        None, "--rules", "-r",
        help="Judge the change: datamine, odf (rule sets over the field diff) or a Schema Registry "
        "compatibility mode: backward, forward, full, backward_transitive, forward_transitive, "
        "full_transitive (Avro schema resolution).",
    ),
    format: str | None = typer.Option(None, "--format", "-f", help="Schema format (default: detected per file)."),
    table: str | None = typer.Option(None, "--table", "-t", help="DataMine: compare this table only "
                                        "(default: every table, by name)."),
    as_json: Annotated[bool, json_option("Print the changes and violations as JSON.")] = False,
) -> None:
    """Print the field changes from OLD to NEW and every rule they break; exit 1 if one is broken."""
    if len(schemas) < 2:
        raise InputError("diff needs at least two schemas: OLD NEW")
    mode = (rules or "none").lower().replace("-", "_")
    if mode not in RULE_CHOICES:
        raise InputError(f"unknown --rules {rules!r}; choose one of: {', '.join(RULE_CHOICES[:-1])}")
    loaded = [read_schema(path, format) for path in schemas]
    formats = sorted({s.format for s in loaded})
    try:
        units = _units(loaded, table)
        report = [_judge(label, models, mode, formats[0] if len(formats) == 1 else None) for label, models in units]
    except FieldgraphError:
        raise
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise InputError(f"cannot compare the schemas: {exc}") from exc

    violations = [v for r in report for v in r["violations"]]
    if as_json:
        sys.stdout.write(json.dumps({
            "old": str(schemas[-2]), "new": str(schemas[-1]), "formats": formats, "rules": mode,
            "ok": not violations,
            "diffs": [{"table": r["table"], "identical": r["diff"].identical,
                       "changes": [c.to_json() for c in r["diff"].changes]} for r in report],
            "violations": violations,
        }, indent=2) + "\n")
    else:
        _print(schemas, formats, mode, report, violations)
    if violations:
        raise typer.Exit(1)


def _units(loaded: list[SchemaFile], table: str | None) -> list[tuple[str | None, list[Any]]]:
    """What to compare: (label, one model per version, None where a version lacks it).

    DataMine schemas without --table are compared table by table (by table name);
    anything else is one schema per file.
    """
    if all(s.format == "datamine" for s in loaded):
        from fieldgraph.normalizers.datamine import parse_datamine, parse_datamine_tables

        if table is not None:
            return [(table, [parse_datamine(s.data, name=s.path.name, table=table) for s in loaded])]
        per_version = [parse_datamine_tables(s.data, name=s.path.name) for s in loaded]
        names: list[str] = list(per_version[-1])
        for version in reversed(per_version[:-1]):
            names += [n for n in version if n not in names]
        return [(n, [v.get(n) for v in per_version]) for n in names]
    if table is not None:
        raise InputError("--table applies to DataMine schemas only")
    return [(None, [s.to_model() for s in loaded])]


def _judge(label: str | None, models: list[Any], mode: str, format: str | None = None) -> dict[str, Any]:
    from fieldgraph.normalizers import fields_of
    from fieldgraph.normalizers.compat import RULES, check, check_compatibility
    from fieldgraph.normalizers.diff import diff_fields

    old, new = models[-2], models[-1]
    diff = diff_fields(fields_of(old) if old is not None else [], fields_of(new) if new is not None else [],
                       format=format)
    violations: list[dict[str, Any]] = []
    note = None
    if old is None:
        note = "new table"
    elif new is None:
        note = "table removed"
    if mode in RULES:
        if old is not None:  # a new table breaks no rule
            violations = [{"table": label, **v.to_json()} for v in check(diff, mode)]
    elif mode != "none" and new is not None:
        history = [m for m in models[:-1] if m is not None]
        violations = [
            {"table": label, "rule": f"{mode}: {x.rule}", "path": x.location,
             "message": f"{x.message} ({x.direction}, version {(x.version or 0) + 1} of {len(models) - 1})"}
            for x in check_compatibility(history, new, mode)
        ]
    return {"table": label, "diff": diff, "violations": violations, "note": note}


def _print(schemas: list[Path], formats: list[str], mode: str, report: list[dict[str, Any]],
           violations: list[dict[str, Any]]) -> None:
    title = f"{schemas[-2].name} -> {schemas[-1].name} ({', '.join(formats)})"
    if mode not in ("none", "datamine", "odf") and formats != ["avro"]:
        out.print(Text(f"note: {mode} applies Avro's schema resolution rules to the {', '.join(formats)} "
                       "schemas' Avro-shaped type model", style="dim"))
    for r in report:
        diff = r["diff"]
        label = f"table {r['table']}: " if r["table"] is not None else ""
        head = f"{label}{title}" + (f" [{r['note']}]" if r["note"] else "")
        if diff.identical:
            out.print(Text(f"{head}: identical"))
            continue
        if not diff.changes:
            out.print(Text(f"{head}: same fields, paths changed"))
            continue
        t = Table(title=Text(f"{head}: {plural(len(diff.changes), 'change')}"), title_justify="left")
        for col in ("change", "fieldPath", "detail"):
            t.add_column(col, overflow="fold")
        for c in diff.changes:
            style = {"removed": "red", "added": "green", "reordered": "dim"}.get(c.kind, "yellow")
            t.add_row(Text(c.kind + (" (nested)" if c.nested else ""), style=style), Name(c.path), Text(c.describe()))
        out.print(t)
    if mode == "none":
        return
    if not violations:
        out.print(Text(f"OK: no {mode} rule is broken", style="green"))
        return
    t = Table(title=Text(f"{plural(len(violations), 'violation')} of {mode}"), title_justify="left")
    multi = any(v["table"] is not None for v in violations)
    cols = (["table"] if multi else []) + ["rule", "path", "message"]
    for col in cols:
        t.add_column(col, overflow="fold")
    for v in violations:
        row: list[Any] = ([Text(str(v["table"]))] if multi else []) + [Name(v["rule"], style="red"),
                                                                       Name(v["path"]), Text(v["message"])]
        t.add_row(*row)
    out.print(t)
