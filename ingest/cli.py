"""The ``fieldgraph`` command line."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from fieldgraph.normalizers import FieldgraphError, normalize

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Field-level lineage: schemas, events, graph.")
out = Console()
err = Console(stderr=True)

#: Exit code for bad input (a schema, an event, a path that cannot be read).
EXIT_BAD_INPUT = 2


@app.callback()
def _root() -> None:
    """Field-level lineage: normalize schemas, ingest change events, query the lineage graph."""


def fail(message: str) -> typer.Exit:
    """Print a one-line error and return the exit to raise."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_BAD_INPUT)


def read_input(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise fail(f"{path}: {exc.strerror or exc}") from None


@app.command("normalize")
def normalize_cmd(
    file: Path = typer.Argument(..., help="Schema file to normalize."),
    format: str | None = typer.Option(None, "--format", "-f", help="Schema format (default: detected from the file)."),
    key: bool = typer.Option(False, "--key", help="Treat it as a key schema ([key=True] paths)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array of DataHub SchemaField objects."),
) -> None:
    """Print the DataHub v2 field paths of a schema."""
    from fieldgraph.normalizers.detect import detect_format

    data = read_input(file)
    try:
        fmt = format or detect_format(file.name, data)
        options = {"import_paths": [str(file.parent)]} if fmt == "protobuf" else {}
        fields = normalize(data, fmt, key=key, name=file.name, **options)
    except FieldgraphError as exc:
        raise fail(f"{file}: {exc}") from None
    if as_json:
        sys.stdout.write(json.dumps([f.to_datahub() for f in fields], indent=2) + "\n")
        return
    table = Table(title=f"{file.name} ({fmt}{', key' if key else ''}): {len(fields)} fields")
    for col in ("fieldPath", "type", "nativeDataType", "nullable", "description"):
        table.add_column(col, overflow="fold")
    for f in fields:
        table.add_row(
            Text(f.fieldPath),
            f.type.name,
            Text(f.nativeDataType),
            "yes" if f.nullable else "",
            Text((f.description or "").strip()),
        )
    out.print(table)


# Command groups living in their own modules register themselves on `app`.
from fieldgraph.ingest import cli_backfill, cli_graph, cli_kafka, cli_schema, cli_sources  # noqa: E402,F401


def main() -> None:
    # the embedded graph's start-up progress (a large graph takes seconds to load) on stderr
    progress = logging.getLogger("fieldgraph.graph.embedded")
    progress.setLevel(logging.INFO)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    progress.addHandler(handler)
    progress.propagate = False
    app()


if __name__ == "__main__":
    main()
