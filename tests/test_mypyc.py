"""The mypyc-compiled build (``FIELDGRAPH_MYPYC=1``, setup.py) gives what the pure-Python source gives: every
Avro golden schema, the benchmark's corpus (small, wide, deep, union-heavy) and every bad schema of the
error tests, normalized in a process that imports the compiled modules (the compiled wheel, installed in a
fresh virtualenv: tests/compiled.py), compared field for field and error for error with this process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fieldgraph.normalizers import normalize
from fieldgraph.normalizers.errors import SchemaNormalizationError

from .compiled import COMPILED_MODULES, session_venv
from .golden import GOLDEN
from .test_avro_errors import CASES

ROOT = Path(__file__).resolve().parent.parent

#: run in the compiled package: normalize each (schema, key) of the JSON file argv[1], print the answers
SCRIPT = """
import importlib, json, sys
from fieldgraph.normalizers import normalize
from fieldgraph.normalizers.errors import SchemaNormalizationError

def answer(schema, key):
    try:
        return [f.to_datahub() for f in normalize(schema, key=key)]
    except SchemaNormalizationError as exc:
        return str(exc)

inputs = json.load(open(sys.argv[1]))
print(json.dumps({
    "modules": [importlib.import_module(name).__file__ for name in sys.argv[2:]],
    "answers": [answer(schema, key) for schema, key in inputs],
}))
"""


def _answer(schema: str, key: bool) -> list[dict] | str:
    try:
        return [f.to_datahub() for f in normalize(schema, key=key)]
    except SchemaNormalizationError as exc:
        return str(exc)


def _inputs() -> list[tuple[str, bool]]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from normalize import corpus  # benchmarks/normalize.py
    finally:
        sys.path.pop(0)
    golden = [(p.read_text(), p.stem.startswith("key_")) for p in sorted((GOLDEN / "avro").glob("*.avsc"))]
    bench = [(text, False) for texts in corpus(1).values() for text in texts]
    bad = [(case[0] if isinstance(case[0], str) else json.dumps(case[0]), False) for case in CASES]
    return golden + bench + bad


@pytest.fixture(scope="module")
def compiled_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return session_venv(tmp_path_factory, "compiled")


def test_the_compiled_build_normalizes_as_the_source_does(compiled_python: Path, tmp_path: Path) -> None:
    inputs = _inputs()
    (tmp_path / "inputs.json").write_text(json.dumps(inputs))
    proc = subprocess.run([str(compiled_python), "-c", SCRIPT, str(tmp_path / "inputs.json"), *COMPILED_MODULES],
                          cwd=tmp_path, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    # the modules pyproject.toml lists were compiled, and those are what ran
    assert out["modules"] and all(Path(m).suffix == ".so" for m in out["modules"]), out["modules"]
    ours = [_answer(schema, key) for schema, key in inputs]
    assert sum(isinstance(a, str) for a in ours) == len(CASES)  # every bad schema failed, nothing else
    for i, (compiled, source) in enumerate(zip(out["answers"], ours, strict=True)):
        assert compiled == source, f"input {i} ({inputs[i][0][:80]!r}...)"
