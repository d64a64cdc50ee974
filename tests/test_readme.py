"""README shows only what exists: its make targets, files, fieldgraph commands and benchmark scripts.

What the commands do is tested where the feature is; here: every ``make X`` is a Makefile target, every
repository path it names exists, every ``fieldgraph ...`` command it shows answers ``--help``, and every
``python benchmarks/*.py`` / ``python -m tests.services`` it shows parses its flags (``--help``).
"""

from __future__ import annotations

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
FILES = ("Makefile", "Dockerfile", "docker-compose.yml", "pyproject.toml")


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
