"""The package as it would be published: built, checked by twine, holding what it needs; its public API and
its optional parts (extras) that say how to install them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import fieldgraph
from fieldgraph.errors import MissingExtraError

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def test_the_sdist_and_wheel_pass_twine_check(dist: Path) -> None:
    files = sorted(dist.iterdir())
    assert sorted(f.suffix for f in files) == [".gz", ".whl"]
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_sdist_holds_the_package_and_no_half_of_the_tests(dist: Path) -> None:
    import tarfile

    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "cypher/upstream.cypher",
            "normalizers/avro.py"} <= names
    assert not any(n.startswith("tests/") for n in names)  # the tests need the checkout (golden files, services)


def test_the_wheel_holds_the_package_its_data_and_its_metadata(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
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
