"""Every statement the Neo4j backend sends passes Neo4j's own linter (@neo4j-cypher/language-support).

The linter runs in node (tests/cypher_lint; ``npm ci --prefix tests/cypher_lint`` installs it,
``make test`` does). With no ``CYPHER`` prefix and no ``defaultLanguage`` in the schema it lints
as Cypher 5 (``resolveCypherVersion``), the default language of Neo4j 5 and 2025.x databases.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fieldgraph.graph.cypher import neo4j_statements

LINT_DIR = Path(__file__).resolve().parent / "cypher_lint"
ERROR, WARNING = 1, 2
SAMPLES = {"rows": [{"urn": "u", "props": {"a": 1}}], "urns": ["u"], "frontier": ["u"], "urn": "u", "from": "u",
           "to": "v"}


def lint(items: list[tuple[str, str]], *, declare: bool = True) -> dict[str, list[dict]]:
    if shutil.which("node") is None:
        pytest.fail("node is not installed; the Cypher linter needs Node 20+")
    if not (LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support").is_dir():
        pytest.fail(f"the Cypher linter is not installed: run npm ci --prefix {LINT_DIR}")
    payload = [{"name": n, "query": q,
                "parameters": {p: SAMPLES[p] for p in re.findall(r"\$(\w+)", q) if p in SAMPLES and declare}}
               for n, q in items]
    proc = subprocess.run(["node", str(LINT_DIR / "lint.mjs")], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {r["name"]: r["diagnostics"] for r in json.loads(proc.stdout)}


def test_the_harness_reports_real_errors() -> None:
    out = lint([
        ("broken", "MATCH (f:DatasetField {urn: $urn}) RETRUN f"),
        ("unbound", "MATCH (f:DatasetField) RETURN g"),
        ("undeclared parameter", "MATCH (f:DatasetField {urn: $nope}) RETURN f"),
        ("fine", "MATCH (f:DatasetField {urn: $urn}) RETURN f.urn AS urn"),
    ])
    assert any(d["severity"] == ERROR and "RETRUN" in d["message"] for d in out["broken"])
    assert any(d["severity"] == ERROR and "`g` not defined" in d["message"] for d in out["unbound"])
    assert any(d["severity"] == ERROR and "$nope" in d["message"] for d in out["undeclared parameter"])
    assert out["fine"] == []


def test_every_neo4j_statement_passes_the_linter() -> None:
    statements = neo4j_statements()
    assert len(statements) > 20
    names = {n for n, _ in statements}
    assert {"upsert_fields", "merge_field_edges", "read_state", "schema_neo4j[0]", "clear_neo4j",
            "upstream(depth=3)", "upstream(unbounded)"} <= names
    out = lint(statements)
    problems = {n: d for n, d in out.items() if d}
    assert problems == {}, json.dumps(problems, indent=2)
