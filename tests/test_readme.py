"""README shows only what exists: its make targets, files, fieldgraph commands and benchmark scripts.

What the commands do is tested where the feature is; here: every ``make X`` is a Makefile target, every
repository path it names exists, every ``fieldgraph ...`` command it shows answers ``--help``, and every
``python benchmarks/*.py`` / ``python -m tests.services`` it shows parses its flags (``--help``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fieldgraph.ingest.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
TOP = ("normalizers", "graph", "ingest", "cypher", "tests", "benchmarks", "examples", "deploy", "docs", ".ci")
FILES = ("Makefile", "Dockerfile", "docker-compose.yml", "pyproject.toml", "CHANGELOG.md", "LICENSE")


def code() -> str:
    """README's code, a command a line: code block lines without their ``# comments``, and inline code."""
    lines = [re.sub(r"\s#\s.*", "", line).strip()
             for block in re.findall(r"```[a-z]*\n(.*?)```", README, re.S) for line in block.splitlines()]
    return "\n".join(lines + re.findall(r"`([^`\n]+)`", README))


def test_make_targets_exist() -> None:
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    shown = set(re.findall(r"\bmake ([a-z][\w-]*)", README))
    assert {"run", "test"} <= shown
    assert shown - targets == set()


def test_paths_exist() -> None:
    paths = {m.rstrip(".,:;)") for m in re.findall(r"(?<![\w/.:-])((?:{})/[\w./*-]*|{})".format(
        "|".join(re.escape(t) for t in TOP), "|".join(re.escape(f) for f in FILES)), code())}
    paths |= set(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README))  # images
    assert len(paths) > 10
    missing = sorted(p for p in paths if not any(ROOT.glob(p.rstrip("/"))))
    assert missing == []


def fieldgraph_commands() -> set[tuple[str, ...]]:
    groups = {"lineage", "server"}
    out = set()
    for words in re.findall(r"(?:^|[;&|(]\s*)fieldgraph ((?:[a-z][\w-]*)(?: [a-z][\w-]*)?)", code(), re.M):
        first, *rest = words.split()
        out.add((first, rest[0]) if first in groups and rest else (first,))
    return out


@pytest.mark.parametrize("command", sorted(fieldgraph_commands()), ids=" ".join)
def test_fieldgraph_commands_answer_help(command: tuple[str, ...]) -> None:
    res = CliRunner().invoke(app, [*command, "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output


def scripts() -> set[tuple[str, ...]]:
    found = set(re.findall(r"\bpython (benchmarks/\w+\.py)", README))
    found |= {("-m", m) for m in re.findall(r"\bpython -m (tests\.\w+)", README)}
    return {(s,) if isinstance(s, str) else s for s in found}


@pytest.mark.parametrize("script", sorted(scripts()), ids=" ".join)
def test_scripts_parse_their_flags(script: tuple[str, ...]) -> None:
    proc = subprocess.run([sys.executable, *script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage" in proc.stdout.lower()


# --- README's shell sessions, run ---------------------------------------------------------------------------------

#: commands README shows that need what a test session does not start for them (Docker, a Kafka broker the
#: reader runs, a cluster, a dbt project: tests/test_dbt.py runs dbt-ol), that CI runs itself (make run, make test)
#: or that run until stopped (fieldgraph serve:
#: tests/test_service.py runs README's requests to it): checked above to exist, not run here
NEEDS_SERVICES = re.compile(r"^(make|docker|curl|pip|spark-submit|dbt-ol)\b|^fieldgraph (emit|worker|serve)\b")


def sessions() -> list[tuple[str, int, list[str]]]:
    """README's ``sh`` code blocks as (command, expected exit code, expected output lines), in order.

    ``NAME=value`` lines are shell variables, kept for the commands after them; a comment ``# exit N`` says
    the command exits N; comment lines ``#   words`` right after a command are lines of its output (their
    words appear in this order in one line of what it prints)."""
    out: list[tuple[str, int, list[str]]] = []
    variables: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        skipped = False  # the output lines shown after a command not run here are not checked here
        for line in block.splitlines():
            if line.startswith("#   ") and out:
                if not skipped:
                    out[-1][2].append(line[1:].strip())
            elif re.match(r"^[A-Z_]+=", line):
                variables.append(line.strip())
            elif line.strip() and not line.startswith("#"):
                skipped = bool(NEEDS_SERVICES.match(line))
                if skipped:
                    continue
                expected = re.search(r"#\s*exit (\d)", line)
                command = re.sub(r"\s#\s.*", "", line).strip()
                out.append(("; ".join([*variables, command]), int(expected[1]) if expected else 0, []))
    return out


def _in_order(words: list[str], line: str) -> bool:
    at = 0
    for w in words:
        at = line.find(w, at)
        if at < 0:
            return False
        at += len(w)
    return True


def test_readme_shell_sessions_run_and_print_what_they_show(tmp_path: Path) -> None:
    """Every README shell command that needs no outside service, in README's order, in a fresh folder with
    the repository's examples/ and cypher/: it exits as README says and prints the output lines README shows."""
    for name in ("examples", "cypher"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIELDGRAPH_", "NEO4J_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", COLUMNS="200")
    ran = sessions()
    assert len(ran) > 30
    for command, code, shown in ran:
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == code, f"{command}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert "Traceback" not in proc.stderr, proc.stderr
        for expected in shown:
            words = expected.split()
            assert any(_in_order(words, line) for line in proc.stdout.splitlines()), \
                f"{command}\nREADME shows: {expected}\nit printed:\n{proc.stdout}"


def test_readme_python_examples_run_and_return_what_they_show(monkeypatch: pytest.MonkeyPatch) -> None:
    """README's Python blocks that need no broker run as shown; ``expr  # 'value'`` lines evaluate to value."""
    import ast

    monkeypatch.chdir(ROOT)
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "Emitter(" not in b]
    assert blocks
    for block in blocks:
        scope: dict[str, object] = {}
        exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - README's own example
        for expr, value in re.findall(r"^(\S.*?)\s+#\s+('[^']*')\s*$", block, re.M):
            assert eval(expr, scope) == ast.literal_eval(value), expr  # noqa: S307
