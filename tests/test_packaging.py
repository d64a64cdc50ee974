"""The package as it would be published (``make dist``: the sdist, the pure-Python wheel and the mypyc-compiled
wheel): built, checked by twine, holding what it needs, each wheel installed into a fresh virtualenv and
normalizing the goldens as the source does; its public API and its optional parts (extras) that say how to
install them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import fieldgraph
from fieldgraph.errors import MissingExtraError
from fieldgraph.normalizers import normalize

from .compiled import COMPILED, COMPILED_MODULES, Dist, run_in, session_dist, session_venv
from .golden import GOLDEN

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    return session_dist(tmp_path_factory)


def test_the_sdist_and_wheels_pass_twine_check(dist: Dist) -> None:
    files = [dist.sdist, dist.pure, dist.compiled]
    assert sorted(f.name for f in dist.sdist.parent.iterdir()) == sorted(f.name for f in files)
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_sdist_holds_the_package_and_no_half_of_the_tests(dist: Dist) -> None:
    import tarfile

    with tarfile.open(dist.sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "setup.py", "cypher/upstream.cypher",
            "normalizers/avro.py"} <= names  # setup.py: the compiled wheels are built from it too
    assert not any(n.startswith("tests/") for n in names)  # the tests need the checkout (golden files, services)


@pytest.mark.parametrize("kind", ["pure", "compiled"])
def test_the_wheel_holds_the_package_its_data_and_its_metadata(dist: Dist, kind: str) -> None:
    wheel: Path = getattr(dist, kind)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = z.read(info).decode()
    assert {"fieldgraph/py.typed", "fieldgraph/errors.py", "fieldgraph/cypher/upstream.cypher",
            "fieldgraph/graph/store.py", "fieldgraph/normalizers/avro.py", "fieldgraph/ingest/cli/__init__.py",
            "fieldgraph/ingest/schemas/MetadataChangeProposal.avsc"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "benchmarks/", "examples/")) for n in names)
    assert "Requires-Python: <3.14,>=3.11" in metadata and PYPROJECT["requires-python"] == ">=3.11,<3.14"
    assert "License-Expression: Apache-2.0" in metadata
    for extra in ("formats", "kafka", "neo4j", "spark", "all"):
        assert f"Provides-Extra: {extra}" in metadata
    compiled = {n for n in names if n.endswith(".so")}
    if kind == "pure":
        assert wheel.name.endswith("-py3-none-any.whl") and not compiled
    else:  # each module pyproject.toml lists, as a C extension (its source kept beside it), and mypyc's runtime
        tag = sys.implementation.cache_tag.replace("cpython-", "cp")
        assert wheel.name.startswith(f"fieldgraph-{PYPROJECT['version']}-{tag}-{tag}-"), wheel.name
        if sys.platform == "linux":  # auditwheel repair (make dist): a manylinux tag
            assert "-manylinux" in wheel.name, wheel.name
        for module in COMPILED:
            assert any(n.startswith(f"fieldgraph/{module.removesuffix('.py')}.") for n in compiled), module
        assert len(compiled) == len(COMPILED) + 1, compiled


def test_version_and_public_api() -> None:
    assert fieldgraph.__version__ == PYPROJECT["version"]
    assert fieldgraph.normalize("""{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}""")[0] \
        .fieldPath == "[version=2.0].[type=R].[type=int].a"
    assert issubclass(fieldgraph.MissingExtraError, fieldgraph.ConfigError)
    assert set(fieldgraph.__all__) >= {"__version__", "normalize", "LineageGraph", "Emitter", "FieldgraphError"}


def test_import_fieldgraph_needs_no_optional_dependency() -> None:
    code = ("import sys, fieldgraph, fieldgraph.normalizers, fieldgraph.graph, fieldgraph.ingest.cli; "
            "print(sorted(m for m in ('pyarrow', 'confluent_kafka', 'neo4j', 'grpc_tools', 'google.protobuf', "
            "'pyspark', 'fastavro', 'prometheus_client') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_a_missing_extra_is_named_with_its_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What a user without the ``formats`` extra sees: a one-line error, exit 3 (bad setting), no traceback."""
    from typer.testing import CliRunner

    from fieldgraph.ingest.cli import app

    for module in ("pyarrow", "grpc_tools", "google.protobuf"):
        monkeypatch.setitem(sys.modules, module, None)  # as if not installed: importing it raises ImportError
    with pytest.raises(MissingExtraError, match=r"the arrow normalizer needs the 'formats' extra: "
                                                r"pip install 'fieldgraph\[formats\]'"):
        fieldgraph.normalize(b"", "arrow")
    proto = tmp_path / "a.proto"
    proto.write_text('syntax = "proto3";\nmessage A { int32 x = 1; }\n')
    res = CliRunner().invoke(app, ["normalize", str(proto)])
    assert res.exit_code == 3 and "needs the 'formats' extra" in res.stderr and "Traceback" not in res.output
    avro = fieldgraph.normalize('{"type": "record", "name": "R", "fields": []}')  # the base install's formats
    assert avro == []


#: run in a virtualenv with a wheel installed: the answers for the goldens (JSON file argv[1]), and where the
#: compiled modules were imported from
GOLDEN_SCRIPT = """
import importlib, json, sys
from fieldgraph.normalizers import normalize

inputs = json.load(open(sys.argv[1]))
print(json.dumps({
    "modules": [importlib.import_module(name).__file__ for name in sys.argv[2:]],
    "answers": [[[f.to_datahub(), list(f.aliases), f.fieldId] for f in normalize(text, fmt, key=key)]
                for text, fmt, key in inputs],
}))
"""


def _golden_inputs() -> list[tuple[str, str, bool]]:
    """Every golden schema of the formats the base install reads (Avro, JSON Schema, Spark; as key and value
    where the golden tests read both)."""
    avro = [(p.read_text(), "avro", p.stem.startswith("key_")) for p in sorted((GOLDEN / "avro").glob("*.avsc"))]
    jsonschema = [(p.read_text(), "json-schema", key) for p in sorted((GOLDEN / "jsonschema").glob("*.json"))
                  if not p.name.endswith(".fields.json") for key in (False, True)]
    spark = [(p.read_text(), "spark", False) for p in sorted((GOLDEN / "spark").glob("*.spark"))]
    return avro + jsonschema + spark


@pytest.mark.parametrize("kind", ["pure", "compiled"])
def test_each_wheel_installed_in_a_fresh_virtualenv_normalizes_the_goldens_as_the_source_does(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, kind: str) -> None:
    python = session_venv(tmp_path_factory, kind)  # pip install <wheel>, with its dependencies
    inputs = _golden_inputs()
    out = run_in(python, GOLDEN_SCRIPT, inputs, tmp_path, *COMPILED_MODULES, timeout=300)
    site = python.parent.parent
    for module in map(Path, out["modules"]):  # the virtualenv's own fieldgraph ran, not this checkout's
        assert module.is_relative_to(site), module
        assert module.suffix == (".so" if kind == "compiled" else ".py"), module
    ours = [[[f.to_datahub(), list(f.aliases), f.fieldId] for f in normalize(text, fmt, key=key)]
            for text, fmt, key in inputs]
    assert len(out["answers"]) == len(ours) > 40
    for (text, fmt, key), installed, source in zip(inputs, out["answers"], ours, strict=True):
        assert installed == source, f"{kind} wheel, {fmt} (key={key}): {text[:80]!r}..."
