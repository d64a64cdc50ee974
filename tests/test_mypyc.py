"""The mypyc-compiled build (``FIELDGRAPH_MYPYC=1``, setup.py) gives what the pure-Python source gives: every
Avro golden schema, the benchmark's corpus (small, wide, deep, union-heavy) and every bad schema of the
error tests, normalized in a process that imports the compiled modules (the compiled wheel, installed in a
fresh virtualenv: tests/compiled.py), compared field for field and error for error with this process; the same
for the Protobuf converter (the golden schemas as text and as descriptor sets, the benchmark's shapes, bad
schemas)."""

from __future__ import annotations

import base64
import json
import sys
import sysconfig
from pathlib import Path

import pytest

from fieldgraph.normalizers import normalize
from fieldgraph.normalizers.errors import SchemaNormalizationError

from .compiled import COMPILED_MODULES, run_in, session_venv
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
    out = run_in(compiled_python, SCRIPT, inputs, tmp_path, *COMPILED_MODULES)
    # the modules pyproject.toml lists were compiled, and those are what ran
    assert out["modules"] and all(Path(m).suffix == ".so" for m in out["modules"]), out["modules"]
    ours = [_answer(schema, key) for schema, key in inputs]
    assert sum(isinstance(a, str) for a in ours) == len(CASES)  # every bad schema failed, nothing else
    for i, (compiled, source) in enumerate(zip(out["answers"], ours, strict=True)):
        assert compiled == source, f"input {i} ({inputs[i][0][:80]!r}...)"


#: run in the compiled package, this environment's packages after its own (protobuf and grpc_tools, the formats
#: extra, which the compiled wheel's virtualenv lacks): normalize each Protobuf input of the JSON file argv[1]
#: (.proto text, or a FileDescriptorSet in base64, with the options of normalize), print the answers
PROTOBUF_SCRIPT = """
import base64, importlib, json, sys
sys.path.append(sys.argv[2])
from fieldgraph.normalizers import normalize
from fieldgraph.normalizers.errors import SchemaNormalizationError

def answer(text, data, options):
    try:
        return [f.to_datahub() for f in normalize(text if data is None else base64.b64decode(data), "protobuf",
                                                  **options)]
    except SchemaNormalizationError as exc:
        return str(exc)

inputs = json.load(open(sys.argv[1]))
print(json.dumps({
    "module": importlib.import_module("fieldgraph.normalizers.protobuf").__file__,
    "answers": [answer(text, data, options) for text, data, options in inputs],
}))
"""


def _protobuf_answer(text: str | None, data: str | None, options: dict) -> list[dict] | str:
    try:
        schema = text if data is None else base64.b64decode(data)
        return [f.to_datahub() for f in normalize(schema, "protobuf", **options)]
    except SchemaNormalizationError as exc:
        return str(exc)


def _protobuf_inputs() -> list[tuple[str | None, str | None, dict]]:
    """The golden schemas (as text, and as the descriptor set protoc makes of them), the benchmark's shapes, a
    message picked by name, and bad schemas (protoc's errors, bad descriptor sets)."""
    from google.protobuf import descriptor_pb2

    from fieldgraph.normalizers.protobuf import _compile

    from .test_protobuf_golden import FOLDER, IMPORTS

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from normalize_formats_protobuf import shapes  # benchmarks/normalize_formats_protobuf.py
    finally:
        sys.path.pop(0)
    inputs: list[tuple[str | None, str | None, dict]] = []
    for p in sorted(FOLDER.glob("*.proto")):
        options = {"name": p.name, "key": p.stem.startswith("key_"), "imports": IMPORTS}
        inputs.append((p.read_text(), None, options))
        files = _compile(p.read_text(), p.name, IMPORTS, None)
        data = descriptor_pb2.FileDescriptorSet(file=files).SerializeToString()
        inputs.append((None, base64.b64encode(data).decode(), {"key": options["key"]}))
    inputs += [(text, None, {"name": f"{stem}.proto"}) for items in shapes().values() for stem, text in items]
    inputs.append(((FOLDER / "multi_top.proto").read_text(), None, {"message": "Refund"}))
    missing = descriptor_pb2.FileDescriptorProto(name="main.proto", package="m", dependency=["dep.proto"])
    bad = [b"\xff\xfe\x00garbage",
           descriptor_pb2.FileDescriptorSet(file=[missing]).SerializeToString()]
    inputs += [(None, base64.b64encode(data).decode(), {}) for data in bad]
    inputs += [('syntax = "proto3";\npackage bad;\nmessage A {\n  strin x = 1;\n}\n', None, {"name": "orders.proto"}),
               ('syntax = "proto3";\nimport "acme/nope.proto";\nmessage A { int32 x = 1; }\n', None, {}),
               ("message {", None, {"name": "x.proto"}),
               (FOLDER.joinpath("multi_top.proto").read_text(), None, {"message": "Nope"})]
    return inputs


def test_the_compiled_protobuf_converter_normalizes_as_the_source_does(compiled_python: Path, tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    inputs = _protobuf_inputs()
    out = run_in(compiled_python, PROTOBUF_SCRIPT, inputs, tmp_path, sysconfig.get_path("purelib"))
    assert Path(out["module"]).suffix == ".so", out["module"]  # compiled (pyproject.toml lists it), and what ran
    ours = [_protobuf_answer(*item) for item in inputs]
    assert sum(isinstance(a, str) for a in ours) == 6  # the bad schemas failed, nothing else
    for i, (compiled, source) in enumerate(zip(out["answers"], ours, strict=True)):
        assert compiled == source, f"input {i} ({(inputs[i][0] or inputs[i][1] or '')[:80]!r}...)"
