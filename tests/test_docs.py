"""The documentation shows only what exists and what runs: README.md and every page of ``docs/``.

Every ``make X`` is a Makefile target, every repository path exists, every ``fieldgraph ...`` command answers
``--help``, every ``python benchmarks/*.py`` / ``python -m tests.services`` parses its flags; every ``sh`` block of a
page runs, in a fresh folder of its own, and prints what the page shows; every ``python`` block runs and returns
what it shows. The site builds with ``mkdocs build --strict`` (no broken link, no page outside the navigation),
loads nothing from elsewhere, and its reference pages (generated from the code by ``docs/gen_reference.py``) have an
entry for every command, endpoint and environment variable.

How a page's ``sh`` block is read: ``NAME=value`` lines are shell variables, kept for the commands after them; a
comment ``# exit N`` says the command exits N; comment lines ``#   words`` right after a command are lines of its
output (their words appear in this order in one line of what it prints). Commands that need what a test session
does not start for them (Docker, a broker or a cluster the reader runs, a dbt project), that CI runs itself
(``make``) or that run until stopped (``fieldgraph serve``: ``tests/test_service.py`` runs the requests to it) are
checked to exist, not run.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fieldgraph.ingest.cli import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TOP = ("normalizers", "graph", "ingest", "cypher", "tests", "benchmarks", "examples", "deploy", "docs", ".ci")
FILES = ("Makefile", "Dockerfile", "docker-compose.yml", "pyproject.toml", "CHANGELOG.md", "LICENSE", "mkdocs.yml")


def pages() -> list[Path]:
    """README.md and the hand-written pages of the site."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


PAGES = pages()


@cache
def text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def blocks(page: Path, lang: str) -> list[str]:
    """The page's fenced blocks in ``lang`` (at any indentation: inside a list or a tab too)."""
    found = re.findall(rf"^([ \t]*)```{lang}\n(.*?)^\1```", text(page), re.S | re.M)
    return [re.sub(rf"^{indent}", "", body, flags=re.M) for indent, body in found]


def sh_blocks_of_all_pages() -> list[tuple[Path, str]]:
    return [(p, b) for p in PAGES for b in blocks(p, "sh")]


def code(page: Path) -> str:
    """The page's code, a command a line: code block lines without their ``# comments``, and inline code."""
    lines = [re.sub(r"\s#\s.*", "", line).strip()
             for block in re.findall(r"```[a-z]*\n(.*?)```", text(page), re.S) for line in block.splitlines()]
    return "\n".join(lines + re.findall(r"`([^`\n]+)`", text(page)))


def variables(page: Path) -> str:
    """The page's shell variables (``NAME='...'`` lines of its ``sh`` blocks), as one line for ``bash -c``."""
    return "; ".join(line.strip() for b in blocks(page, "sh") for line in b.splitlines()
                     if re.match(r"^[A-Z_]+=", line))


# --- what the pages name exists -----------------------------------------------------------------------------------


def test_make_targets_exist() -> None:
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    shown = {t for p in PAGES for t in re.findall(r"(?:^|[;&|(]\s*)make ([a-z][\w-]*)", code(p), re.M)}
    assert {"run", "test", "docs", "docs-serve"} <= shown
    assert shown - targets == set()


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_paths_exist(page: Path) -> None:
    paths = {m.rstrip(".,:;)") for m in re.findall(r"(?<![\w/.:-])((?:{})/[\w./*-]*|{})".format(
        "|".join(re.escape(t) for t in TOP), "|".join(re.escape(f) for f in FILES)), code(page))}
    if page.name == "README.md":
        paths |= {p for p in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text(page)) if "://" not in p}  # images
    missing = sorted(p for p in paths if not any(ROOT.glob(p.rstrip("/"))))
    assert missing == []


def fieldgraph_commands() -> set[tuple[str, ...]]:
    groups = {"lineage", "server", "edge"}
    out = set()
    for page in PAGES:
        for words in re.findall(r"(?:^|[;&|(]\s*)fieldgraph ((?:[a-z][\w-]*)(?: [a-z][\w-]*)?)", code(page), re.M):
            first, *rest = words.split()
            out.add((first, rest[0]) if first in groups and rest else (first,))
    return out


@pytest.mark.parametrize("command", sorted(fieldgraph_commands()), ids=" ".join)
def test_fieldgraph_commands_answer_help(command: tuple[str, ...]) -> None:
    res = CliRunner().invoke(app, [*command, "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output


def scripts() -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for page in PAGES:
        found |= {(s,) for s in re.findall(r"\bpython (benchmarks/\w+\.py)", text(page))}
        found |= {("-m", m) for m in re.findall(r"\bpython -m (tests\.\w+)", text(page))}
    return found


@pytest.mark.parametrize("script", sorted(scripts()), ids=" ".join)
def test_scripts_parse_their_flags(script: tuple[str, ...]) -> None:
    proc = subprocess.run([sys.executable, *script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage" in proc.stdout.lower()


# --- the pages' shell sessions, run -------------------------------------------------------------------------------

NEEDS_SERVICES = re.compile(r"^(make|docker|curl|pip|spark-submit|dbt-ol|source|export|kill)\b"
                            r"|^fieldgraph (emit|worker|serve)\b")


def sessions(page: Path) -> list[tuple[str, int, list[str]]]:
    """The page's ``sh`` blocks as (command, expected exit code, expected output lines), in order (see above)."""
    out: list[tuple[str, int, list[str]]] = []
    names: list[str] = []
    for block in blocks(page, "sh"):
        skipped = False  # the output lines shown after a command not run here are not checked here
        for line in block.splitlines():
            if line.startswith("#   ") and out:
                if not skipped:
                    out[-1][2].append(line[1:].strip())
            elif re.match(r"^[A-Z_]+=", line):
                names.append(line.strip())
            elif line.strip() and not line.startswith("#"):
                skipped = bool(NEEDS_SERVICES.match(line))
                if skipped:
                    continue
                expected = re.search(r"#\s*exit (\d)", line)
                command = re.sub(r"\s#\s.*", "", line).strip()
                out.append(("; ".join([*names, command]), int(expected[1]) if expected else 0, []))
    return out


def in_order(words: list[str], line: str) -> bool:
    at = 0
    for w in words:
        at = line.find(w, at)
        if at < 0:
            return False
        at += len(w)
    return True


RUN_PAGES = [p for p in PAGES if sessions(p)]


def test_the_pages_show_sessions() -> None:
    assert sum(len(sessions(p)) for p in RUN_PAGES) > 60


@pytest.mark.parametrize("page", RUN_PAGES, ids=page_id)
def test_shell_sessions_run_and_print_what_they_show(page: Path, tmp_path: Path) -> None:
    """Every shell command of the page that needs no outside service, in the page's order, in a fresh folder with
    the repository's examples/ and cypher/: it exits as the page says and prints the output lines the page shows."""
    for name in ("examples", "cypher"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIELDGRAPH_", "NEO4J_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", COLUMNS="200")
    try:
        for command, code_, shown in sessions(page):
            proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=600)
            assert proc.returncode == code_, f"{command}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
            assert "Traceback" not in proc.stderr, proc.stderr
            for expected in shown:
                assert any(in_order(expected.split(), line) for line in proc.stdout.splitlines()), \
                    f"{command}\n{page_id(page)} shows: {expected}\nit printed:\n{proc.stdout}"
    finally:  # the embedded graph a page started stops with its folder
        subprocess.run([sys.executable, "-m", "fieldgraph.ingest.cli", "server", "stop"], cwd=tmp_path, env=env,
                       capture_output=True, timeout=120)


PY_PAGES = [p for p in PAGES if any("Emitter(" not in b for b in blocks(p, "python"))]


@pytest.mark.parametrize("page", PY_PAGES, ids=page_id)
def test_python_examples_run_and_return_what_they_show(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's Python blocks that need no broker run as shown; ``expr  # 'value'`` lines evaluate to value."""
    monkeypatch.chdir(ROOT)
    for block in (b for b in blocks(page, "python") if "Emitter(" not in b):
        scope: dict[str, object] = {}
        exec(compile(block, page_id(page), "exec"), scope)  # noqa: S102 - the page's own example
        for expr, value in re.findall(r"^(\S.*?)\s+#\s+('[^']*')\s*$", block, re.M):
            assert eval(expr, scope) == ast.literal_eval(value), expr  # noqa: S307


# --- the README is short and points into the site -----------------------------------------------------------------


def test_readme_is_short_and_links_into_the_site() -> None:
    readme = text(ROOT / "README.md")
    assert len(readme.splitlines()) <= 200
    linked = set(re.findall(r"\]\((docs/[\w/.-]+\.md)(?:#[\w-]+)?\)", readme))
    assert len(linked) >= 8, linked
    assert [p for p in linked if not (ROOT / p).is_file()] == []


# --- the reference pages cover the code ---------------------------------------------------------------------------


@cache
def reference() -> object:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_command_has_a_reference_entry() -> None:
    import typer

    ref = reference()
    page = ref.cli_page()  # type: ignore[attr-defined]
    group = typer.main.get_command(app)

    def walk(words: tuple[str, ...], cmd: object) -> list[tuple[str, ...]]:
        if getattr(cmd, "hidden", False):
            return []
        subs = getattr(cmd, "commands", {})
        return [words, *(w for name, sub in subs.items() for w in walk((*words, name), sub))]

    listed = walk((), group)
    assert len(listed) > 30
    for words in listed:
        assert f"## {' '.join(('fieldgraph', *words))} {{ #" in page, words
    for words, cmd in ref.commands():  # type: ignore[attr-defined]
        for param in cmd.params:  # every option, by each of its names
            for opt in getattr(param, "opts", []):
                if opt.startswith("-") and not param.hidden:
                    assert opt in page, (words, opt)


def test_every_endpoint_has_a_reference_entry() -> None:
    from fastapi.routing import APIRoute

    from fieldgraph.graph import LineageGraph
    from fieldgraph.ingest.config import ServeConfig
    from fieldgraph.ingest.service.app import create_app

    ref = reference()
    doc = ref.openapi()  # type: ignore[attr-defined]
    page = ref.http_page(doc)  # type: ignore[attr-defined]
    def flat(routes: list) -> list[APIRoute]:  # the routes of included routers too (FastAPI keeps them apart)
        return [a for r in routes for a in (flat(r.original_router.routes) if hasattr(r, "original_router")
                                            else [r] if isinstance(r, APIRoute) else [])]

    graph = LineageGraph.open("memory")
    try:
        routes = flat(create_app(graph, ServeConfig()).routes)
    finally:
        graph.close()
    hidden = {(m, r.path) for r in routes if not r.include_in_schema for m in r.methods}
    assert hidden <= {("GET", "/"), ("GET", "/explorer/{rest:path}")}, hidden  # the page itself, not the API
    shown = [(m, r.path) for r in routes if r.include_in_schema for m in sorted(r.methods)]
    assert len(shown) > 20
    for method, path in shown:
        assert f"## {method} {path} {{ #" in page, (method, path)
        op = doc["paths"][path][method.lower()]
        assert op.get("description") or op.get("summary"), f"{method} {path} has no docstring to show"


def test_every_environment_variable_read_has_a_reference_entry() -> None:
    ref = reference()
    page = ref.environment_page()  # type: ignore[attr-defined]
    documented = set(re.findall(r"`((?:FIELDGRAPH|NEO4J)_[A-Z0-9_<>]+)`", page))
    read = ref.env_names_read()  # type: ignore[attr-defined]
    assert {"FIELDGRAPH_GRAPH", "FIELDGRAPH_SERVE_TOKEN", "NEO4J_PASSWORD"} <= read
    for name in read:
        assert name in documented or (name.endswith("_") and any(d.startswith(name) for d in documented)), name


def test_every_exit_code_and_error_has_a_reference_entry() -> None:
    import fieldgraph.errors as errors
    from fieldgraph.ingest.cli import boundary

    page = reference().errors_page()  # type: ignore[attr-defined]
    codes = {v for k, v in vars(boundary).items() if k.startswith("EXIT_")}
    assert codes == set(range(7))
    listed = {int(c) for c in re.findall(r"^\| (\d) \|", page, re.M)}
    assert listed == codes
    for name, cls in vars(errors).items():
        if isinstance(cls, type) and issubclass(cls, errors.FieldgraphError):
            assert f"| `{name}` | {boundary.exit_code(cls.__new__(cls))} |" in page, name


def test_every_cypher_file_has_a_reference_entry() -> None:
    from fieldgraph.graph import cypher as cy

    page = reference().cypher_page()  # type: ignore[attr-defined]
    for name in cy.names():
        assert f"`cypher/{name}.cypher`" in page, name


# --- the site -----------------------------------------------------------------------------------------------------

#: MkDocs 1.x and its plugins print a notice about MkDocs 2 on every build; the build's own warnings still show
QUIET = {"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``make docs`` builds it (``mkdocs build --strict``), into a folder of the test's."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          env={**os.environ, **QUIET}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-6000:]
    return out


def test_every_page_of_the_navigation_is_built(site: Path) -> None:
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]

    def files(entries: list) -> list[str]:  # an entry is "page.md" or {title: "page.md" | [entries]}
        values = [v for e in entries for v in (e.values() if isinstance(e, dict) else [e])]
        return [f for v in values for f in (files(v) if isinstance(v, list) else [v])]

    listed = files(nav)
    assert len(listed) > 40
    for md in listed:
        folder = md.removesuffix(".md").removesuffix("index")  # a section's index.md is the section's page
        html = site / folder / "index.html"
        assert html.is_file(), md
        assert "To be written" not in html.read_text(encoding="utf-8"), f"{md} is a stub"
    hand_written = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert hand_written - set(listed) == set(), "pages outside the navigation"
    assert (site / "search" / "search_index.json").is_file()


def test_the_site_loads_nothing_from_elsewhere(site: Path) -> None:
    """No script, style, font or image of any page comes from another address (the site works offline)."""
    loads = re.compile(r"<(?:script|img|iframe)[^>]*\bsrc=\"([^\"]+)\"|<link[^>]*\bhref=\"([^\"]+)\"[^>]*>")
    for html in site.rglob("*.html"):
        for m in loads.finditer(html.read_text(encoding="utf-8")):
            url = m[1] or m[2]
            tag = m[0]
            if m[2] and not re.search(r"rel=\"(?:stylesheet|preload|icon|modulepreload|manifest)\"", tag):
                continue  # a link to a page, not something the page loads
            assert not re.match(r"^(?:[a-z]+:)?//", url), f"{html.relative_to(site)} loads {url}"
    for css in site.rglob("*.css"):
        assert not re.search(r"@import\s+url\(\s*['\"]?(?:https?:)?//", css.read_text(encoding="utf-8")), css


def test_the_three_questions_are_one_click_from_home(site: Path) -> None:
    """Spark column lineage into Neo4j, which token reads what, what ``partial`` means: each linked from home."""
    home = (site / "index.html").read_text(encoding="utf-8")
    for target in ("how-to/openlineage/#spark", "how-to/tokens/", "concepts/answers/#partial"):
        assert f'href="{target}"' in home, target
    for page, anchor in (("how-to/openlineage", "spark"), ("concepts/answers", "partial")):
        assert f'id="{anchor}"' in (site / page / "index.html").read_text(encoding="utf-8"), (page, anchor)


def test_a_reader_searches_the_site_in_chromium(site: Path) -> None:
    """Headless Chromium opens the built site, searches for "rename" with the site's own search, follows the first
    hit, opens a how-to and a reference page, and keeps their screenshots in test-artifacts/; nothing it loads
    comes from elsewhere."""
    import functools
    import shutil
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    node = shutil.which("node")
    script = ROOT / "tests" / "browser" / "docs.mjs"
    assert node, "node (Node.js 20+) is not on PATH: it runs tests/browser/docs.mjs"
    assert (script.parent / "node_modules" / "playwright-core").is_dir(), "run `npm ci --prefix tests/browser`"

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = ROOT / "test-artifacts"
    try:
        proc = subprocess.run([node, str(script), "--site", f"http://127.0.0.1:{server.server_port}/",
                               "--search", "rename", "--howto", "how-to/renames/", "--reference", "reference/cli/",
                               "--out", str(out)], capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
    assert proc.returncode == 0, f"docs.mjs failed:\n{proc.stderr}{proc.stdout}"
    import json

    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["outside"] == []
    assert seen["hits"] >= 3 and "rename" in seen["followed"].lower() + seen["heading"].lower()
    for name in ("docs-home.png", "docs-howto.png", "docs-reference.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, name
