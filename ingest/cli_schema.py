"""Schema commands of the fieldgraph CLI beyond normalize (diff)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from fieldgraph.ingest.cli import app, fail, out, read_input
from fieldgraph.normalizers import FieldgraphError

#: --rules values: the diff rule sets, then the Confluent compatibility modes (lower case).
RULE_CHOICES = (
    "datamine", "odf", "backward", "forward", "full",
    "backward_transitive", "forward_transitive", "full_transitive", "none",
)


@app.command("diff")
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
    as_json: bool = typer.Option(False, "--json", help="Print the changes and violations as JSON."),
) -> None:
    """Print the field changes from OLD to NEW and every rule they break; exit 1 if one is broken."""
    from fieldgraph.normalizers.detect import detect_format

    if len(schemas) < 2:
        raise fail("diff needs at least two schemas: OLD NEW")
    mode = (rules or "none").lower().replace("-", "_")
    if mode not in RULE_CHOICES:
        raise fail(f"unknown --rules {rules!r}; choose one of: {', '.join(RULE_CHOICES[:-1])}")
    loaded: list[tuple[Path, bytes, str]] = []
    for path in schemas:
        data = read_input(path)
        try:
            loaded.append((path, data, format or detect_format(path.name, data)))
        except FieldgraphError as exc:
            raise fail(f"{path}: {exc}") from None
    try:
        units = _units(loaded, table)
        report = [_judge(label, models, mode) for label, models in units]
    except FieldgraphError as exc:
        raise fail(str(exc)) from None
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise fail(f"cannot compare the schemas: {exc}") from None

    formats = sorted({fmt for _, _, fmt in loaded})
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


def _units(loaded: list[tuple[Path, bytes, str]], table: str | None) -> list[tuple[str | None, list[Any]]]:
    """What to compare: (label, one model per version, None where a version lacks it).

    DataMine schemas without --table are compared table by table (by table name);
    anything else is one schema per file.
    """
    from fieldgraph.normalizers.api import to_model

    if all(fmt == "datamine" for _, _, fmt in loaded):
        from fieldgraph.normalizers.datamine import parse_datamine, parse_datamine_tables

        if table is not None:
            return [(table, [parse_datamine(data, name=p.name, table=table) for p, data, _ in loaded])]
        per_version = [parse_datamine_tables(data, name=p.name) for p, data, _ in loaded]
        names: list[str] = list(per_version[-1])
        for version in reversed(per_version[:-1]):
            names += [n for n in version if n not in names]
        return [(n, [v.get(n) for v in per_version]) for n in names]
    if table is not None:
        raise fail("--table applies to DataMine schemas only")
    return [(None, [to_model(data, fmt, name=p.name) for p, data, fmt in loaded])]


def _judge(label: str | None, models: list[Any], mode: str) -> dict[str, Any]:
    from fieldgraph.normalizers.evolution import RULES, check, check_compatibility, diff_fields
    from fieldgraph.normalizers.visitor import walk

    old, new = models[-2], models[-1]
    diff = diff_fields(walk(old) if old is not None else [], walk(new) if new is not None else [])
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
             "message": f"{x.message} ({x.direction}, version {x.version + 1} of {len(models) - 1})"}
            for x in check_compatibility(history, new, mode)
        ]
    return {"table": label, "diff": diff, "violations": violations, "note": note}


def _print(schemas: list[Path], formats: list[str], mode: str, report: list[dict], violations: list[dict]) -> None:
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
        t = Table(title=Text(f"{head}: {len(diff.changes)} changes"), title_justify="left")
        for col in ("change", "fieldPath", "detail"):
            t.add_column(col, overflow="fold")
        for c in diff.changes:
            style = {"removed": "red", "added": "green", "reordered": "dim"}.get(c.kind, "yellow")
            t.add_row(Text(c.kind + (" (nested)" if c.nested else ""), style=style), Text(c.path), Text(c.describe()))
        out.print(t)
    if mode == "none":
        return
    if not violations:
        out.print(Text(f"OK: no {mode} rule is broken", style="green"))
        return
    t = Table(title=Text(f"{len(violations)} violations of {mode}"), title_justify="left")
    multi = any(v["table"] is not None for v in violations)
    cols = (["table"] if multi else []) + ["rule", "path", "message"]
    for col in cols:
        t.add_column(col, overflow="fold")
    for v in violations:
        row = ([Text(str(v["table"]))] if multi else []) + [Text(v["rule"], style="red"), Text(v["path"]),
                                                              Text(v["message"])]
        t.add_row(*row)
    out.print(t)
