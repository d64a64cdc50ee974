"""The architecture docs/explanation/architecture.md draws, checked against the code: the layers import downwards
only, nothing imports in a cycle, Cypher is named in ``graph/`` only, and every ``cypher/`` file is used."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from fieldgraph.graph import cypher as cy

ROOT = Path(__file__).resolve().parent.parent
#: folder -> the package it installs as
PACKAGES = {"fieldgraph": "fieldgraph", "normalizers": "fieldgraph.normalizers", "graph": "fieldgraph.graph",
            "ingest": "fieldgraph.ingest"}
#: what each layer may import from fieldgraph (the architecture page's diagram)
ALLOWED = {
    "fieldgraph.errors": set(),
    "fieldgraph.bulk": set(),
    "fieldgraph.normalizers": {"fieldgraph.errors", "fieldgraph.bulk", "fieldgraph.normalizers"},
    "fieldgraph.changes": {"fieldgraph.errors", "fieldgraph.normalizers", "fieldgraph.sqllineage"},
    "fieldgraph.fieldops": {"fieldgraph.errors"},
    "fieldgraph.sqlnames": set(),
    "fieldgraph.sqllineage": {"fieldgraph.errors", "fieldgraph.sqlnames"},
    "fieldgraph.graph": {"fieldgraph.errors", "fieldgraph.bulk", "fieldgraph.normalizers", "fieldgraph.changes", "fieldgraph.fieldops",
                         "fieldgraph.sqllineage", "fieldgraph.graph"},
}
_CYPHER = re.compile(r"\b(MATCH|MERGE|UNWIND|DETACH DELETE|CREATE)\b\s*[(\[$]")


def _modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    out: dict[str, Path] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if folder == "fieldgraph" and path.parent != ROOT / "fieldgraph":
                continue  # fieldgraph/<layer> are links to the layer folders, listed on their own
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def _imports(name: str, path: Path) -> set[str]:
    """The fieldgraph modules ``name`` imports, anywhere in it (lazy imports inside functions count; what a
    file runs only as a script, under ``if __name__ == "__main__"``, does not)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    tree.body = [n for n in tree.body if not _is_main_guard(n)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for a in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{module}.{a.name}"
                found.add(sub if sub in MODULES else module)
    return {m for m in found if m.startswith("fieldgraph")}


GRAPH = {name: {m for m in _imports(name, path) if m in MODULES and m != name} for name, path in MODULES.items()}


def _layer(module: str) -> str:
    for layer in ("fieldgraph.normalizers", "fieldgraph.graph", "fieldgraph.ingest"):
        if module == layer or module.startswith(layer + "."):
            return layer
    return module


def test_the_package_is_found() -> None:
    assert {"fieldgraph.errors", "fieldgraph.changes", "fieldgraph.graph.plan", "fieldgraph.graph.write",
            "fieldgraph.ingest.sources.datahub", "fieldgraph.ingest.worker"} <= set(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_layers_import_downwards_only(module: str) -> None:
    layer = _layer(module)
    if layer not in ALLOWED:  # ingest: anything below it
        return
    wrong = sorted(m for m in GRAPH[module] if _layer(m) not in ALLOWED[layer] | {layer})
    assert not wrong, f"{module} ({layer}) imports {wrong}; the architecture page says it may import only " \
                      f"{sorted(ALLOWED[layer])}"


#: the rooms inside ``ingest/`` (the architecture page's layout) and the rooms each may not import: sources know
#: nothing of who runs them; settings, read at the edge, no source
ROOMS_APART = {
    "fieldgraph.ingest.sources": ("fieldgraph.ingest.worker", "fieldgraph.ingest.service", "fieldgraph.ingest.cli",
                                  "fieldgraph.ingest.backfill", "fieldgraph.ingest.replay"),
    "fieldgraph.ingest.service": ("fieldgraph.ingest.cli", "fieldgraph.ingest.worker"),
    "fieldgraph.ingest.config": ("fieldgraph.ingest.sources", "fieldgraph.ingest.cli"),
    "fieldgraph.ingest.worker": ("fieldgraph.ingest.cli", "fieldgraph.ingest.service"),
}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) == "fieldgraph.ingest"))
def test_ingest_rooms_do_not_reach_up_or_sideways(module: str) -> None:
    for room, banned in ROOMS_APART.items():
        if module == room or module.startswith(room + "."):
            wrong = sorted(m for m in GRAPH[module] if any(m == b or m.startswith(b + ".") for b in banned))
            assert not wrong, f"{module} ({room}) imports {wrong}"


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components over the import graph: every one is a single module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) != "fieldgraph.graph"))
def test_cypher_is_named_in_graph_only(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    assert "fieldgraph.graph.cypher" not in GRAPH[module], f"{module} imports the Cypher statements"
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not _CYPHER.search(node.value), f"{module}:{node.lineno} holds a Cypher statement"
        if isinstance(node, ast.Attribute):
            assert node.attr not in ("run_named", "run_rows"), f"{module}:{node.lineno} runs a named statement"


def test_every_cypher_file_is_used() -> None:
    graph_code = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "graph").glob("*.py")))
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    docs = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    unused = [n for n in cy.names() if f'"{n}"' not in graph_code and f"cypher/{n}.cypher" not in docs]
    assert not unused, f"cypher/ files nothing runs or documents: {unused}"


def test_every_package_ships() -> None:
    """pyproject lists the packages by hand (the folders map onto fieldgraph.*): a new one must be listed."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    assert packages - {"fieldgraph.cypher"} <= listed, f"not in pyproject's packages: {sorted(packages - listed)}"
