"""The reference pages, generated from the code each time the site is built (mkdocs-gen-files runs this file).

Nothing here is written by hand, so nothing here can drift: the command line from the Typer app, the HTTP API
from the OpenAPI document ``fieldgraph serve`` publishes, the Cypher vocabulary from ``cypher/*.cypher``, the
environment variables and settings from :mod:`fieldgraph.ingest.config`, the exit codes and the error tree from
the CLI's boundary and :mod:`fieldgraph.errors`. The benchmark plots and the changelog are copied in as they are.
``tests/test_docs.py`` imports the ``*_page`` functions to check that every command, endpoint and variable has its
entry.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Iterator
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _cell(text: Any) -> str:
    """``text`` made safe for one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _md(text: str) -> str:
    """Docstring text as Markdown: reStructuredText's ````code```` and ``:role:`name``` as ```code```."""
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", re.sub(r"``([^`]+)``", r"`\1`", text))


def _code(text: Any) -> str:
    return f"`{text}`" if "`" not in str(text) else f"`` {text} ``"


# ---- the command line -------------------------------------------------------------------------------------------


def _context(cmd: Any, words: tuple[str, ...]) -> Any:
    """A context for reading ``cmd``'s usage and options (Typer runs on a click of its own: its own classes)."""
    return cmd.context_class(cmd, info_name=" ".join(("fieldgraph", *words)))


def commands() -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command of the ``fieldgraph`` app with its words (``("lineage", "upstream")``), in ``--help``'s order;
    groups first, then their commands."""
    import typer

    from fieldgraph.ingest.cli import app

    def walk(words: tuple[str, ...], cmd: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
        if cmd.hidden:
            return
        yield words, cmd
        if hasattr(cmd, "list_commands"):
            ctx = _context(cmd, words)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    yield from walk((*words, name), sub)

    yield from walk((), typer.main.get_command(app))


def _anchor(words: tuple[str, ...]) -> str:
    return "-".join(("fieldgraph", *words)).replace("_", "-")


def _param_row(p: Any, ctx: Any) -> str:
    """One row of a command's options, as ``--help`` prints the option (its names, its value, its help with the
    default and the environment variable it reads)."""
    record = p.get_help_record(ctx)
    if p.param_type_name == "argument":
        kind = "argument" + ("" if p.required else ", optional") + (", repeatable" if p.nargs == -1 else "")
        help_text = record[1] if record else ""
        return f"| {_code(str(p.name).upper())} | {kind} | {_cell(help_text)} |"
    names, help_text = record
    return f"| {_code(names)} | {'flag' if p.is_flag else 'option'} | {_cell(help_text)} |"


def cli_page() -> str:
    """``reference/cli.md``: every command, its usage, its help and each of its options."""
    out = ["# Command line", "",
           "Every `fieldgraph` command and option, generated from the command line itself (`fieldgraph COMMAND "
           "--help` prints the same). Exit codes: [Exit codes and errors](errors.md).", ""]
    listed = list(commands())
    out += ["| command | what it does |", "| --- | --- |"]
    for words, cmd in listed[1:]:
        name = " ".join(("fieldgraph", *words))
        first = " ".join(_md(cmd.short_help or cmd.help or "").split("\n\n")[0].split())
        out.append(f"| [{_code(name)}](#{_anchor(words)}) | {_cell(first)} |")
    for words, cmd in listed:
        name = " ".join(("fieldgraph", *words))
        ctx = _context(cmd, words)
        out += ["", f"## {name} {{ #{_anchor(words)} }}", "", "```", cmd.get_usage(ctx).strip(), "```", ""]
        if cmd.help:
            out += [_md(inspect.cleandoc(cmd.help).replace("\b\n", "")), ""]
        params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False)]
        if params:
            out += ["| name | takes | what |", "| --- | --- | --- |", *(_param_row(p, ctx) for p in params)]
        if hasattr(cmd, "list_commands"):
            subs = [(n, cmd.get_command(ctx, n)) for n in cmd.list_commands(ctx)]
            out += ["", "Commands: " + ", ".join(f"[{_code(n)}](#{_anchor((*words, n))})" for n, c in subs if c)]
    return "\n".join(out) + "\n"


# ---- the HTTP API -----------------------------------------------------------------------------------------------


def openapi() -> dict[str, Any]:
    """The OpenAPI document ``fieldgraph serve`` publishes at ``/openapi.json`` (over an empty in-memory graph)."""
    from fieldgraph.graph import LineageGraph
    from fieldgraph.ingest.config import ServeConfig
    from fieldgraph.ingest.service.app import create_app

    graph = LineageGraph.open("memory")
    try:
        return create_app(graph, ServeConfig()).openapi()
    finally:
        graph.close()


def endpoints(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(METHOD, path, operation) of every operation of an OpenAPI document, in its order."""
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield method.upper(), path, op


def _schema_type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_schema_type(s) for s in schema["anyOf"] if s.get("type") != "null")
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " | ".join(map(str, schema["enum"]))
    choices = re.fullmatch(r"\^\(([\w|]+)\)\$", schema.get("pattern", ""))
    if choices:  # a string one of a few words
        return " | ".join(choices[1].split("|"))
    return str(schema.get("type", "any"))


def endpoint_anchor(method: str, path: str) -> str:
    return (method + path).lower().replace("/", "-").replace("{", "").replace("}", "").replace("_", "-").strip("-")


def _parameter_row(p: dict[str, Any]) -> str:
    schema = p.get("schema", {})
    default = f" (default {_code(schema['default'])})" if "default" in schema else ""
    required = "yes" if p.get("required") else "no"
    return (f"| {_code(p['name'])} | {p['in']} | {_cell(_schema_type(schema))} | {required} | "
            f"{_cell(_md(p.get('description', '')))}{default} |")


def http_page(doc: dict[str, Any]) -> str:
    """``reference/http.md``: every endpoint, its parameters, its body and its answers."""
    out = ["# HTTP API", "",
           f"Every endpoint of `fieldgraph serve` (version {doc['info']['version']}), generated from the OpenAPI "
           "document it publishes at `GET /openapi.json`; [openapi.json](openapi.json) is the same document. "
           "How to run the service, its tokens and its pages: [The HTTP service](../how-to/serve.md).", "",
           "| endpoint | what |", "| --- | --- |"]
    listed = list(endpoints(doc))
    for method, path, op in listed:
        out.append(f"| [{_code(f'{method} {path}')}](#{endpoint_anchor(method, path)}) | "
                   f"{_cell(op.get('summary', ''))} |")
    for method, path, op in listed:
        out += ["", f"## {method} {path} {{ #{endpoint_anchor(method, path)} }}", ""]
        if op.get("description"):
            out += [_md(op["description"].strip()), ""]
        params = op.get("parameters", [])
        if params:
            out += ["| parameter | in | type | required | what |", "| --- | --- | --- | --- | --- |"]
            out += map(_parameter_row, params)
            out.append("")
        body = op.get("requestBody", {}).get("content", {})
        if body:
            out += ["Body: " + ", ".join(_code(t) for t in body), ""]
        answers = op.get("responses", {})
        if answers:
            out += ["| answer | what |", "| --- | --- |",
                    *(f"| {code} | {_cell(r.get('description', ''))} |" for code, r in answers.items())]
    return "\n".join(out) + "\n"


# ---- the Cypher vocabulary --------------------------------------------------------------------------------------


def cypher_page() -> str:
    """``reference/cypher.md``: every named statement of ``cypher/``, its header, its parameters and its text."""
    from fieldgraph.graph import cypher as cy

    names = cy.names()
    browser = [n for n in names if n.startswith("browser_")]
    out = ["# Cypher vocabulary", "",
           "Every statement fieldgraph sends is a named file of `cypher/` (shipped as `fieldgraph.cypher`); the "
           "same text runs on FalkorDB, on Neo4j and (as Python handlers) in the in-memory store. Each runs as it "
           "is in Neo4j Browser or `cypher-shell` once its parameters are set (`:param urn => '...'`), or through "
           "`fieldgraph query \"$(cat cypher/NAME.cypher)\" -p urn=...`. Generated from the files.", "",
           "Queries that draw in Neo4j Browser: " + ", ".join(f"[{_code(n)}](#{n.replace('_', '-')})"
                                                               for n in browser) + ".", "",
           "| statement | parameters | what |", "| --- | --- | --- |"]
    texts = {n: (ROOT / "cypher" / f"{n}.cypher").read_text(encoding="utf-8") for n in names}
    heads = {n: " ".join(line.lstrip("/ ").strip() for line in t.splitlines() if line.startswith("//"))
             for n, t in texts.items()}
    params = {n: sorted(set(re.findall(r"\$(\w+)", t))) for n, t in texts.items()}
    for n in names:
        first = heads[n].split(". ")[0]
        out.append(f"| [{_code(n)}](#{n.replace('_', '-')}) | {', '.join(_code('$' + p) for p in params[n])} | "
                   f"{_cell(first)} |")
    for n in names:
        out += ["", f"## {n} {{ #{n.replace('_', '-')} }}", "", f"`cypher/{n}.cypher`"
                + (" (FalkorDB only)" if n in cy.FALKORDB_ONLY else ""), "", "```cypher", texts[n].strip(), "```"]
    return "\n".join(out) + "\n"


# ---- environment and settings -----------------------------------------------------------------------------------


def _field_comments(cls: type) -> dict[str, str]:
    """The ``#:`` comments above each field of a dataclass, by field name."""
    lines = inspect.getsource(cls).splitlines()
    out: dict[str, str] = {}
    comment: list[str] = []
    for line in lines:
        s = line.strip()
        if s.startswith("#:"):
            comment.append(s[2:].strip())
            continue
        m = re.match(r"(\w+)\s*:", s)
        if m and comment:
            out[m[1]] = " ".join(comment)
        comment = []
    return out


def _default(f: Any) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None


def settings() -> list[tuple[str, str, Any, str]]:
    """(config file key, environment variable, default, what) of every worker setting."""
    from fieldgraph.ingest.config import _DICTS, WorkerConfig

    about = _field_comments(WorkerConfig)
    out = []
    for f in fields(WorkerConfig):
        if f.name == "graph_target":
            continue
        env = f"FIELDGRAPH_{f.name.upper()}_<NAME>" if f.name in _DICTS else f"FIELDGRAPH_{f.name.upper()}"
        out.append((f.name, env, _default(f), about.get(f.name, "")))
    return out


def environment_page() -> str:
    """``reference/environment.md``: every environment variable fieldgraph reads, and the worker's settings."""
    from fieldgraph.ingest.config import ENV_VARIABLES

    out = ["# Environment and settings", "",
           "Configuration is read once, at the edge (the command or the service starting): flags first, then the "
           "environment, then the config file (TOML, `--config` or `FIELDGRAPH_CONFIG`), then the defaults. A "
           "`FIELDGRAPH_*` variable that nothing reads is warned about at start, with the name it most resembles. "
           "Generated from `fieldgraph.ingest.config`.", "",
           "## Environment variables", "", "| variable | what |", "| --- | --- |",
           *(f"| `{name}` | {_cell(what)} |" for name, what in sorted(ENV_VARIABLES.items())), "",
           "## Worker settings", "",
           "`fieldgraph worker` and `fieldgraph emit` take each setting as a key of the config file, as "
           "`FIELDGRAPH_<SETTING>` in the environment (lists comma-separated), or as the flag of the same name "
           "(`fieldgraph worker --help`). The `kafka` and `schema_registry` tables pass librdkafka's and the "
           "schema registry client's own settings through (`FIELDGRAPH_KAFKA_SASL_MECHANISM=PLAIN` is "
           "`sasl.mechanism`).", "",
           "| setting | environment | default | what |", "| --- | --- | --- | --- |"]
    for key, env, default, what in settings():
        shown = _code(json.dumps(default)) if default not in (None, [], {}) else ""
        out.append(f"| `{key}` | `{env}` | {shown} | {_cell(_md(what))} |")
    out += ["", "An example config file:", "", "```toml", inspect.getdoc(_config_module()).split("::", 1)[1]
            .split("\n\n", 2)[1].strip("\n").replace("\n    ", "\n").strip(), "```"]
    return "\n".join(out) + "\n"


def _config_module() -> Any:
    import fieldgraph.ingest.config as config

    return config


_ENV_NAME = re.compile(r"^(FIELDGRAPH|NEO4J)_[A-Z0-9_]*$")


def _named(node: ast.AST) -> list[ast.AST]:
    """The expressions that name an environment variable in ``node``, if it reads one by name: the first argument of
    ``get``/``getenv``/``startswith``, a Typer ``envvar=``, a subscript, the left side of ``in``."""
    if isinstance(node, ast.Call):
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        first = node.args[:1] if name in ("get", "getenv", "startswith") else []
        return first + [k.value for k in node.keywords if k.arg == "envvar"]
    if isinstance(node, ast.Subscript):
        return [node.slice]
    if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In):
        return [node.left]
    return []


def _env_name(e: ast.AST) -> str | None:
    """The variable (or, for an f-string, the prefix of the family of variables) ``e`` names, if any."""
    if isinstance(e, ast.JoinedStr) and e.values:
        e = e.values[0]
    if isinstance(e, ast.Constant) and isinstance(e.value, str) and _ENV_NAME.match(e.value):
        return e.value
    return None


def env_names_read() -> set[str]:
    """The environment variables fieldgraph's code reads by name (``FIELDGRAPH_X``, ``NEO4J_X``; for a family such
    as ``f"FIELDGRAPH_{name}"`` its prefix)."""
    found: set[str] = set()
    for folder in ("graph", "ingest", "normalizers", "fieldgraph"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if folder == "fieldgraph" and path.parent != ROOT / "fieldgraph":
                continue  # fieldgraph/<layer> are links to the folders read above
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                found.update(n for n in map(_env_name, _named(node)) if n)
    return found


# ---- exit codes and errors --------------------------------------------------------------------------------------


def errors_page() -> str:
    """``reference/errors.md``: the CLI's exit codes, and the error tree with each error's meaning."""
    import fieldgraph.errors as errors
    from fieldgraph.ingest.cli import boundary
    from fieldgraph.ingest.service.app import STATUS

    table = boundary.__doc__.split("====  =", 1)[1].split("\n", 1)[1].rsplit("====  =", 1)[0]
    rows: list[list[str]] = []
    for line in table.splitlines():
        code, _, text = line.partition(" ")
        if code.strip().isdigit():
            rows.append([code.strip(), text.strip()])
        elif rows and line.strip():
            rows[-1][1] += " " + line.strip()
    tree = inspect.getdoc(errors).split("::", 1)[1].split("\n\n")[1]
    out = ["# Exit codes and errors", "",
           "## Exit codes", "",
           "Every `fieldgraph` command ends with one of these (from `fieldgraph.ingest.cli.boundary`); an error "
           "is printed on stderr as `error: <message>`, the message naming the input and what is wrong.", "",
           "| code | meaning |", "| --- | --- |",
           *(f"| {code} | {_cell(text.replace('``', '`'))} |" for code, text in rows), "",
           "## Errors", "",
           "Every error fieldgraph raises on purpose is a `fieldgraph.errors.FieldgraphError`. A transient one "
           "(`TransientError`) pauses and retries the work (the worker keeps its offsets, the service answers "
           "503); any other is permanent (the event responsible is dead-lettered or rejected, the rest goes on). "
           "The HTTP service answers each with `{\"error\", \"kind\", \"message\", \"status\"}`.", "",
           "```", inspect.cleandoc(tree), "```", "",
           "| error | exit code | HTTP status | what |", "| --- | --- | --- | --- |"]
    for name, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, errors.FieldgraphError) and cls.__module__ == errors.__name__:
            doc = _md((inspect.getdoc(cls) or "").split("\n\n")[0])
            status = next((code for kind, code in STATUS if issubclass(cls, kind)), 500)
            out.append(f"| `{name}` | {boundary.exit_code(cls.__new__(cls))} | {status} | {_cell(doc)} |")
    return "\n".join(out) + "\n"


# ---- the build --------------------------------------------------------------------------------------------------


def pages() -> dict[str, str]:
    """Every generated page, by its path under ``docs/``."""
    doc = openapi()
    return {"reference/cli.md": cli_page(), "reference/http.md": http_page(doc),
            "reference/openapi.json": json.dumps(doc, indent=1), "reference/cypher.md": cypher_page(),
            "reference/environment.md": environment_page(), "reference/errors.md": errors_page(),
            "changelog.md": (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")}


def _build() -> None:
    import mkdocs_gen_files

    for path, text in pages().items():
        with mkdocs_gen_files.open(path, "w") as f:
            f.write(text)
    for png in sorted((ROOT / "benchmarks" / "results").glob("*.png")):
        with mkdocs_gen_files.open(f"benchmarks/{png.name}", "wb") as f:
            f.write(png.read_bytes())


if __name__ in ("__main__", "<run_path>") or __name__.startswith("mkdocs"):
    _build()
