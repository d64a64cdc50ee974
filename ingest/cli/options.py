"""What several commands share: option declarations, the one time parser, the one ``name=value`` parser,
the one way a command opens the graph, and who runs it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, overload

import typer

from fieldgraph.errors import ConfigError, InputError

if TYPE_CHECKING:
    from fieldgraph.changes import Change
    from fieldgraph.graph import LineageGraph

# --- options ----------------------------------------------------------------------------------------------

GRAPH_HELP = ("Graph URI: embedded[:PATH] (default, data folder .fieldgraph/), falkordb://host:port[/graph], "
              "bolt://host:7687 or neo4j://host:7687. Default: $FIELDGRAPH_GRAPH.")

#: ``--graph``/``-g``: where the graph is (``None``: GraphConfig's default, the embedded FalkorDB)
GraphUri = Annotated[str | None, typer.Option("--graph", "-g", help=GRAPH_HELP, envvar="FIELDGRAPH_GRAPH",
                                              show_envvar=False)]
#: ``--graph-name``: the FalkorDB graph
GraphName = Annotated[str | None, typer.Option("--graph-name", help="Graph (FalkorDB) to use; default fieldgraph.")]


def json_option(help: str | None = None) -> Any:
    """``--json`` (for ``Annotated[bool, json_option(...)] = False``): print JSON on stdout instead of a table."""
    return typer.Option("--json", help=help)


#: ``--types-from-sql``: fill the transformation types OpenLineage column lineage lacks from the job's SQL
TYPES_FROM_SQL_HELP = ("OpenLineage: fill the transformation types an output's column lineage lacks (dbt-ol sends "
                       "none) from the job's sql facet, as fieldgraph derives SQL lineage; the producer's typed "
                       "edges stay as sent.")
TypesFromSql = Annotated[bool, typer.Option("--types-from-sql", help=TYPES_FROM_SQL_HELP)]

#: ``--json`` (results)
AsJson = Annotated[bool, json_option()]
#: ``--json`` (a command's summary)
SummaryJson = Annotated[bool, json_option("Print the summary as JSON.")]


class LineageFormatName(StrEnum):
    """What ``lineage upstream|downstream --format`` prints."""

    table = "table"
    json = "json"
    dot = "dot"
    mermaid = "mermaid"
    csv = "csv"


class ImpactFormatName(StrEnum):
    """What ``impact --format`` prints."""

    table = "table"
    json = "json"
    csv = "csv"


_FORMAT_HELP = "What to print: table (default), json (the same as --json), {}."
#: ``--format`` of a lineage walk (``None``: the table, or JSON with ``--json``; see :func:`output_format`)
LineageFormat = Annotated[LineageFormatName | None, typer.Option(
    "--format", show_default=False,
    help=_FORMAT_HELP.format("dot (a Graphviz digraph), mermaid (a Mermaid flowchart), csv (a row per edge)"))]
#: ``--format`` of impact analysis (``None``: the table, or JSON with ``--json``)
ImpactFormat = Annotated[ImpactFormatName | None, typer.Option(
    "--format", help=_FORMAT_HELP.format("csv (a row per impacted field)"), show_default=False)]


def output_format(as_json: bool, fmt: str | None) -> str:
    """What a command with ``--json`` and ``--format`` prints: ``--format`` (default ``table``); ``--json`` is
    ``--format json``, and together with any other format it is a usage error (exit 2)."""
    if as_json and fmt not in (None, "json"):
        raise typer.BadParameter(f"--json means --format json, not --format {fmt}: give one of them",
                                 param_hint="'--json' / '--format'")
    return "json" if as_json else str(fmt or "table")

#: ``--depth``/``-d`` of a lineage walk (``None``: the graph's cap)
Depth = Annotated[int | None, typer.Option("--depth", "-d", min=1,
                                           help="Hops to follow (default: up to the cap of 50).")]
#: ``--time-budget`` of a lineage walk
TimeBudget = Annotated[float, typer.Option("--time-budget",
                                           help="Seconds before the walk stops with a partial result.")]
DEFAULT_TIME_BUDGET = 10.0

#: the time forms :func:`parse_time` reads, for option help
TIME_FORMS = "ms since the epoch, or ISO 8601 like 2024-05-01 or 2024-05-01T12:00:00Z"

#: ``--as-of`` of a lineage question (``None``: now)
AsOf = Annotated[str | None, typer.Option("--as-of", help=f"Answer as the graph was at this instant ({TIME_FORMS}); "
                                          "default: now.")]


# --- values -----------------------------------------------------------------------------------------------


@overload
def parse_pairs(items: Iterable[str], option: str, *, typed: Literal[False] = ...) -> dict[str, str]: ...
@overload
def parse_pairs(items: Iterable[str], option: str, *, typed: Literal[True]) -> dict[str, Any]: ...


def parse_pairs(items: Iterable[str], option: str, *, typed: bool = False) -> dict[str, Any]:
    """The ``name=value`` items of a repeatable option (``-X``, ``--param``, ``--conf``), in order.

    ``typed``: a value that is JSON becomes that value (``3``, ``true``, ``null``, ``["a"]``); any other
    stays the string. A later item replaces an earlier one of the same name. An item without ``=`` or
    without a name raises :class:`ConfigError` naming ``option`` and the item.
    """
    pairs: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ConfigError(f"{option} {item!r}: expected name=value")
        if typed:
            try:
                pairs[name] = json.loads(value)
                continue
            except ValueError:
                pass
        pairs[name] = value
    return pairs


# --- the graph --------------------------------------------------------------------------------------------


def user_or(by: str | None) -> str | None:
    """``by``, else the OS user running the command (``None`` where it has none, as in some containers)."""
    if by:
        return by
    import getpass

    try:
        return getpass.getuser() or None
    except (OSError, KeyError, ImportError):  # no user name in the environment or the password database
        return None


def write_refusing(g: LineageGraph, changes: list[Change]) -> None:
    """``changes`` written by the one write path; a change the graph refuses is bad input."""
    report = g.ingest(changes)
    if report.refused:
        raise InputError("; ".join(reason for _, reason in report.refused))


@contextmanager
def open_graph(uri: str | None, name: str | None = None, *, create: bool = False) -> Iterator[LineageGraph]:
    """The graph a command's ``--graph``/``--graph-name`` name (else the environment's, else the default),
    closed when the command is done with it. An embedded graph is created only by a command that writes
    (``create``): the others, run where there is none (another directory, a mistyped path), say so."""
    from fieldgraph.ingest.config import GraphConfig

    g = GraphConfig.from_env(uri=uri, name=name).open(create=create)
    try:
        yield g
    finally:
        g.close()


#: ``--limit`` of a long answer: its first N items (:mod:`fieldgraph.ingest.pages`)
Limit = Annotated[int | None, typer.Option("--limit", min=1, help="Show the first N (edges, or fields) and how many "
                                           "more there are; with --json, the first page with total, totalExact "
                                           "and next, as the JSON API pages it.")]
