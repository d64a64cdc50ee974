"""Protobuf (``.proto`` text or a serialized FileDescriptorSet) -> the type model, DataHub's way.

DataHub's Protobuf converter (``datahub.ingestion.extractor.protobuf_util``, used by its
Kafka / schema-registry sources) does not walk Avro shapes: it compiles the file, puts
every message, oneof and scalar type in a graph, and emits one field per root-to-leaf
path, sorted by path. Its rules, which this module reproduces:

* the graph holds the main file's top-level messages, their nested messages (recursively,
  used or not) and every message a field refers to (imported ones included); a *root* is
  a message no field refers to. One root: paths start ``[version=2.0].[type=pkg_Msg]``.
  Several roots (say an unused nested message): each root is a field of its own,
  ``[version=2.0].[type=pkg_Msg].Msg`` (``nativeDataType`` ``message``, not nullable);
* a field's token is ``[type=T].name``: ``T`` is the message's full name with ``.`` made
  ``_``, ``enum`` for an enum, else ``int``/``long`` (every 32-/64-bit integer kind),
  ``float``, ``double``, ``bool``, ``string``, ``bytes``; ``repeated`` (and so ``map``,
  which is a repeated ``XEntry`` message with ``key`` and ``value``) adds ``[type=array].``
  first; a oneof (also proto3 ``optional``'s synthetic ``_name`` oneof) is
  ``[type=union].name`` with its members below it;
* ``nativeDataType`` is the message/enum full name or the scalar's own name (``sint32``,
  ``fixed64``...), or ``oneof``; every field is nullable; the type is ArrayType (with
  ``nestedType`` the native type) for repeated fields, EnumType, FixedType for the
  (s)fixed kinds, UnionType for a oneof, RecordType for messages; no descriptions,
  ``jsonProps``, tags; ``isPartOfKey`` is false even in a key schema.

Not DataHub's: a field's number, which a rename keeps, is its fields' ``fieldId`` (``"3"``).

The converter builds that tree as records, arrays, enums and primitives; the walk's
:class:`~fieldgraph.normalizers.model.WalkHints` carry what Avro shapes cannot (the
``pkg_Msg`` / ``union`` tokens, pinned field types, the bare multi-root record, recursion
stops, ``isPartOfKey``). Each record's fields are ordered by their path token, which makes
the walk's depth-first order DataHub's sorted order (``.`` sorts before every other
character a path holds).

Where DataHub gives up, this does better:

* recursive messages (a message reaching itself directly or through other messages, oneofs,
  repeated fields or maps): DataHub returns no fields at all. Here each path is expanded
  until it reaches a message already on it; that field is emitted, marked ``recursive``,
  without children. Roots generalise DataHub's: one per group of mutually recursive
  messages that nothing outside the group refers to (its first message in DataHub's
  graph order), plus DataHub's roots;
* compile errors: DataHub logs and returns no fields; here they raise
  :class:`SchemaNormalizationError` with protoc's own ``file:line:column: message``;
* DataHub compiles into the process-wide descriptor pool, so a second, different schema
  declaring the same symbols gets no fields; this is pure (a private pool per call).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from .errors import SchemaNormalizationError
from .fields import FieldType
from .model import EMPTY, Array, Enum, Field, Primitive, Record, Type, WalkHints, frozen_props

# FieldDescriptor.TYPE_* -> (path token, nativeDataType, DataHub type class)
_SCALARS: dict[int, tuple[str, str, str]] = {
    1: ("double", "double", "NumberType"),
    2: ("float", "float", "NumberType"),
    3: ("long", "int64", "NumberType"),
    4: ("long", "uint64", "NumberType"),
    5: ("int", "int32", "NumberType"),
    6: ("long", "fixed64", "FixedType"),
    7: ("int", "fixed32", "FixedType"),
    8: ("bool", "bool", "BooleanType"),
    9: ("string", "string", "StringType"),
    12: ("bytes", "bytes", "BytesType"),
    13: ("int", "uint32", "NumberType"),
    15: ("int", "sfixed32", "FixedType"),
    16: ("long", "sfixed64", "FixedType"),
    17: ("int", "sint32", "NumberType"),
    18: ("long", "sint64", "NumberType"),
}
_TYPE_ENUM = 14
_LABEL_REPEATED = 3
_UNION_TYPE = FieldType("UnionType")
_RECORD_TYPE = FieldType("RecordType")
_ENUM_TYPE = FieldType("EnumType")

#: Most records one schema may expand to (recursive messages are unfolded per path).
MAX_RECORDS = 100_000

# DataHub ships these two when a schema uses them without supplying them; so do we.
_GOOGLE_TYPE_FALLBACKS = {
    "google/type/date.proto": (
        'syntax = "proto3";\npackage google.type;\n'
        "message Date {\n  int32 year = 1;\n  int32 month = 2;\n  int32 day = 3;\n}\n"
    ),
    "google/type/decimal.proto": (
        'syntax = "proto3";\npackage google.type;\nmessage Decimal {\n  string value = 1;\n}\n'
    ),
}
_TEXT_START = re.compile(
    rb"\A(?:\xef\xbb\xbf)?\s*(?://|/\*|syntax\b|edition\b|package\b|import\b|option\b|message\b|enum\b"
    rb"|service\b|extend\b|;|\Z)"
)
_PROTOC_LOCK = threading.Lock()
# protoc reads and writes in-memory files through /proc/self/fd (Linux)
_MEMORY_FILES = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")
# protoc's logging lines (absl/glog), as opposed to its diagnostics
_LOG_NOISE = re.compile(r"^(?:WARNING: All log messages before absl|[IWE]\d{4} \d\d:\d\d:\d\d|\[libprotobuf )")


def parse_protobuf(
    schema: Any,
    *,
    name: str | None = None,
    message: str | None = None,
    imports: Mapping[str, str | bytes] | None = None,
    import_paths: Iterable[str | os.PathLike[str]] | None = None,
) -> Type:
    """Read a Protobuf schema into the type model.

    ``schema``: ``.proto`` text (str or UTF-8 bytes), a serialized ``FileDescriptorSet``
    (bytes: its last file is the main one, as ``protoc --include_imports`` writes it), a
    ``FileDescriptorSet`` / ``FileDescriptorProto`` message, or a ``FileDescriptor`` /
    message ``Descriptor``. ``name`` is the file name (``orders.proto``; it is also what
    errors call the schema). ``imports`` maps import paths (``acme/common.proto``) to the
    text of the files the schema imports; ``import_paths`` are directories to look for
    them in. Google's well-known types (``google/protobuf/*.proto``) are built in.
    ``message`` picks the one message to describe (full name, or a name unique in the
    main file); by default every root message of the main file is, as DataHub does.
    """
    label = name or "schema.proto"
    try:
        file_desc, message_desc = _load(schema, label, imports, import_paths)
        if message is not None:
            message_desc = _find_message(file_desc, message, label)
        return _Converter().convert(file_desc, message_desc)
    except SchemaNormalizationError as exc:
        raise exc.with_schema(label) from exc
    except RecursionError:
        raise SchemaNormalizationError("messages nest too deeply", schema=label) from None


# -- reading ------------------------------------------------------------------------------
def _load(schema: Any, label: str, imports: Any, import_paths: Any) -> tuple[Any, Any]:
    """(main FileDescriptor, the message Descriptor given directly or None)."""
    from google.protobuf import descriptor as _d
    from google.protobuf import descriptor_pb2

    if isinstance(schema, _d.Descriptor):
        return schema.file, schema
    if isinstance(schema, _d.FileDescriptor):
        return schema, None
    if isinstance(schema, descriptor_pb2.FileDescriptorProto):
        return _build_pool([schema], label), None
    if isinstance(schema, descriptor_pb2.FileDescriptorSet):
        return _build_pool(list(schema.file), label), None
    if isinstance(schema, (bytes, bytearray, memoryview)):
        data = bytes(schema)
        if not _TEXT_START.match(data):
            files = _parse_descriptor_bytes(data)
            if files is not None:
                return _build_pool(files, label), None
        try:
            schema = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaNormalizationError(
                "neither .proto text (not UTF-8) nor a serialized FileDescriptorSet", schema=label
            ) from exc
    if not isinstance(schema, str):
        raise SchemaNormalizationError(
            f"a Protobuf schema is .proto text, FileDescriptorSet bytes or a descriptor, not {type(schema).__name__}",
            schema=label,
        )
    return _build_pool(_compile(schema, _file_name(label), imports, import_paths), label), None


def is_descriptor_set(data: bytes) -> bool:
    """Whether ``data`` reads as a serialized FileDescriptorSet (and not as .proto text)."""
    return not _TEXT_START.match(data) and _parse_descriptor_bytes(data) is not None


def _parse_descriptor_bytes(data: bytes) -> list[Any] | None:
    try:
        from google.protobuf import descriptor_pb2
        from google.protobuf.message import DecodeError
    except ImportError:  # without the formats extra nothing reads as a descriptor set (parsing one says why)
        return None

    for cls in (descriptor_pb2.FileDescriptorSet, descriptor_pb2.FileDescriptorProto):
        msg = cls()
        try:
            msg.ParseFromString(data)
        except (DecodeError, ValueError, RuntimeError):
            continue
        files = list(msg.file) if cls is descriptor_pb2.FileDescriptorSet else [msg]
        if files and all(f.name.endswith(".proto") for f in files):
            return files
    return None


def _file_name(label: str) -> str:
    path = label.replace("\\", "/")
    if path.endswith(".proto") and _safe_relative(path):
        return path
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", PurePosixPath(path).name) or "schema"
    return stem if stem.endswith(".proto") else f"{stem}.proto"


def _safe_relative(path: str) -> bool:
    p = PurePosixPath(path)
    return bool(path) and not p.is_absolute() and ".." not in p.parts and ":" not in path


def _compile(text: str, main: str, imports: Any, import_paths: Any) -> list[Any]:
    """Compile ``text`` (as file ``main``) with grpc_tools' bundled protoc -> FileDescriptorProtos.

    protoc reads every given file through an exact ``-I<virtual name>=<disk path>`` mapping, the
    disk path being an in-memory file on Linux (no directories to create and remove: those
    were most of a small schema's cost). Elsewhere, or when a name holds ``=`` (which such a
    mapping cannot say), the files go to their paths in a temporary directory.
    """
    try:
        import grpc_tools
        from grpc_tools import _protoc_compiler
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise SchemaNormalizationError("compiling .proto text needs the grpcio-tools package") from exc
    from google.protobuf import descriptor_pb2

    files = _sources(text, main, imports)
    fallbacks = _fallbacks(files, import_paths)
    in_memory = _MEMORY_FILES and not any("=" in path for path in files)
    with _Scratch(in_memory) as scratch:
        if in_memory:
            given = [f"-I{path}={scratch.file(path, content.encode())}" for path, content in files.items()]
        else:
            given = [f"-I{scratch.tree(files)}"]
        last = [f"-I{path}={scratch.file(path, content.encode())}" for path, content in fallbacks.items()]
        out, log = scratch.file("out.desc"), scratch.file("protoc.log")
        includes = [*(os.fspath(p) for p in (import_paths or ())),
                    os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")]
        # the input by its disk path, which protoc maps back to its name: a file of that name in the
        # working directory would otherwise be mapped through the import paths ("Input is shadowed")
        args = ["protoc", *given, *(f"-I{i}" for i in includes), *last, f"--descriptor_set_out={out}",
                "--include_imports", scratch.paths[main]]
        code = _run_protoc(_protoc_compiler, [a.encode() for a in args], scratch.fds[log])
        data = scratch.read(out)
        if code != 0 or not data:
            raise SchemaNormalizationError(
                "protoc could not compile it: " + (_protoc_messages(scratch, log) or f"exit status {code}")
            )
    return list(descriptor_pb2.FileDescriptorSet.FromString(data).file)


def _sources(text: str, main: str, imports: Any) -> dict[str, str]:
    """The files protoc is given: ``text`` as ``main``, then the imports (relative paths, without ``..``)."""
    files = {main: text}
    for path, content in (imports or {}).items():
        path = str(path).replace("\\", "/")
        if not _safe_relative(path):
            raise SchemaNormalizationError(f"import path {path!r} must be relative, without '..'")
        if isinstance(content, bytes):
            content = content.decode("utf-8")
        files.setdefault(path, content)
    return files


def _fallbacks(files: Mapping[str, str], import_paths: Any) -> dict[str, str]:
    """The ``google/type`` files DataHub ships that are not given, read after the import paths: for a schema that
    names such a file, or that reads import paths (which may)."""
    if import_paths or any("google/type/" in content for content in files.values()):
        return {k: v for k, v in _GOOGLE_TYPE_FALLBACKS.items() if k not in files}
    return {}


def _protoc_messages(scratch: _Scratch, log: str) -> str:
    """What protoc wrote to ``log``, the files named by their names (not their disk paths), without its noise."""
    messages = scratch.read(log).decode("utf-8", "replace")
    for name, disk in sorted(scratch.paths.items(), key=lambda pair: -len(pair[1])):  # fd 10 before fd 1
        messages = messages.replace(disk, name)
    if scratch.tmp is not None:
        messages = messages.replace(scratch.tmp + os.sep, "")
    return "\n".join(line for line in messages.splitlines() if not _LOG_NOISE.match(line)).strip()


class _Scratch:
    """Files protoc reads and writes: in-memory files (Linux), else files in a temporary directory."""

    def __init__(self, in_memory: bool) -> None:
        self.tmp = None if in_memory else tempfile.mkdtemp(prefix="fieldgraph-proto-")
        self.paths: dict[str, str] = {}  # name -> disk path
        self.fds: dict[str, int] = {}  # disk path -> open descriptor

    def __enter__(self) -> _Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.fds.values():
            os.close(fd)
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def file(self, name: str, content: bytes = b"") -> str:
        """A new file holding ``content``: its disk path."""
        if self.tmp is None:
            fd = os.memfd_create("fieldgraph-proto")
            path = f"/proc/self/fd/{fd}"
        else:
            path = os.path.join(self.tmp, f"{len(self.fds)}.proto")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        self.fds[path] = fd
        self.paths.setdefault(name, path)
        view = memoryview(content)
        while view:
            # written first: mypyc evaluates a call in the bound of a memoryview's slice twice (writing twice)
            written = os.write(fd, view)
            view = view[written:]
        return path

    def tree(self, files: Mapping[str, str]) -> str:
        """``files`` written at their paths under a new folder (the temporary directory's ``src``)."""
        assert self.tmp is not None
        root = os.path.join(self.tmp, "src")
        for name, content in files.items():
            path = os.path.join(root, *PurePosixPath(name).parts)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(content)
            self.paths[name] = path
        return root

    def read(self, path: str) -> bytes:
        fd = self.fds[path]
        return os.pread(fd, os.fstat(fd).st_size, 0)


def _run_protoc(compiler: Any, args: list[bytes], sink: int) -> int:
    """Run protoc in-process; its diagnostics go to file descriptor 2, sent to ``sink`` here."""
    with _PROTOC_LOCK:
        saved = os.dup(2)
        try:
            os.dup2(sink, 2)
            code: int = compiler.run_main(args)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        return code


def _build_pool(files: list[Any], label: str) -> Any:
    """A private descriptor pool of ``files`` (dependencies first); the last file is the main one."""
    from google.protobuf import descriptor_pool

    if not files:
        raise SchemaNormalizationError("the descriptor set holds no file")
    by_name = {f.name: f for f in files}
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(name: str, wanted_by: str | None) -> None:
        if name in added:
            return
        fdp = by_name.get(name) or _well_known(name)
        if fdp is None:
            raise SchemaNormalizationError(
                f"{wanted_by} imports {name!r}, which the descriptor set does not hold", path=wanted_by
            )
        added.add(name)  # before its dependencies: a cycle then fails in pool.Add, not here
        for dep in fdp.dependency:
            add(dep, name)
        try:
            pool.Add(fdp)
        except (TypeError, ValueError, KeyError) as exc:
            raise SchemaNormalizationError(f"invalid descriptor: {exc}", path=name) from exc

    _check_references(files)
    for f in files:
        add(f.name, None)
    return pool.FindFileByName(files[-1].name)


def _check_references(files: list[Any]) -> None:
    """Name the field whose (fully qualified) type the descriptor set does not define."""
    known: set[str] = set()

    def symbols(prefix: str, messages: Iterable[Any], enums: Iterable[Any]) -> None:
        for e in enums:
            known.add(f"{prefix}.{e.name}")
        for m in messages:
            full = f"{prefix}.{m.name}"
            known.add(full)
            symbols(full, m.nested_type, m.enum_type)

    def check(prefix: str, messages: Iterable[Any], file: str) -> None:
        for m in messages:
            full = f"{prefix}.{m.name}"
            for fld in m.field:
                ref = fld.type_name
                if ref.startswith(".") and ref not in known and not ref.startswith(".google.protobuf."):
                    raise SchemaNormalizationError(
                        f"field type {ref[1:]!r} is not defined in the descriptor set",
                        path=f"{file}: {full[1:]}.{fld.name}",
                    )
            check(full, m.nested_type, file)

    for f in files:
        symbols("." + f.package if f.package else "", f.message_type, f.enum_type)
    for f in files:
        check("." + f.package if f.package else "", f.message_type, f.name)


def _well_known(name: str) -> Any:
    """The FileDescriptorProto of a google/protobuf well-known type file, if ``name`` is one."""
    if not name.startswith("google/protobuf/"):
        return None
    from importlib import import_module

    from google.protobuf import descriptor_pb2

    module = name[len("google/protobuf/"):].removesuffix(".proto").replace("/", ".") + "_pb2"
    try:
        desc = import_module(f"google.protobuf.{module}").DESCRIPTOR
    except ImportError:
        return None
    return descriptor_pb2.FileDescriptorProto.FromString(desc.serialized_pb)


def _find_message(file_desc: Any, wanted: str, label: str) -> Any:
    found: list[Any] = []
    every: list[str] = []

    def scan(msgs: Iterable[Any]) -> None:
        for m in msgs:
            every.append(m.full_name)
            rel = m.full_name[len(file_desc.package) + 1:] if file_desc.package else m.full_name
            if wanted in (m.full_name, rel, m.name) or wanted == "." + m.full_name:
                found.append(m)
            scan(m.nested_types)

    scan(file_desc.message_types_by_name.values())
    exact = [m for m in found if m.full_name == wanted.lstrip(".")]
    if exact:
        return exact[0]
    if len(found) == 1:
        return found[0]
    pool = file_desc.pool
    try:
        return pool.FindMessageTypeByName(wanted.lstrip("."))
    except KeyError:
        pass
    if found:
        raise SchemaNormalizationError(
            f"message name {wanted!r} is ambiguous: {', '.join(m.full_name for m in found)}", schema=label
        )
    raise SchemaNormalizationError(
        f"no message {wanted!r}; the file declares: {', '.join(every) or 'no message'}", schema=label
    )


# -- converting ---------------------------------------------------------------------------
def _is_repeated(field: Any) -> bool:
    rep = getattr(field, "is_repeated", None)
    if rep is not None:
        return bool(rep)
    return getattr(field, "label", None) == _LABEL_REPEATED


def _token(full_name: str) -> str:
    return full_name.lstrip(".").replace(".", "_")


class _Converter:
    def __init__(self) -> None:
        self.order: dict[str, Any] = {}  # message full name -> Descriptor, in DataHub's graph order
        self.succ: dict[str, list[str]] = {}  # message -> messages its fields (and oneofs) refer to
        self.referred: set[str] = set()
        self.scc: dict[str, frozenset[str]] = {}
        self.records: dict[tuple[str, frozenset[str], bool], Record] = {}
        self.enums: dict[tuple[str, bool], Enum] = {}
        self.native_props: dict[str, Mapping[str, Any]] = {}
        self.array_types: dict[str, FieldType] = {}
        self.count = 0

    # graph, as DataHub's _populate_graph builds it
    def add_message(self, msg: Any) -> None:
        name = msg.full_name
        if name in self.order:
            return
        self.order[name] = msg
        self.succ[name] = []
        for nested in msg.nested_types:
            self.add_message(nested)
        for field in msg.fields:  # oneof members included: DataHub adds those via the oneof
            if field.message_type is not None:
                self.add_message(field.message_type)
                self.succ[name].append(field.message_type.full_name)
                self.referred.add(field.message_type.full_name)

    def roots(self, top: Iterable[Any]) -> list[Any]:
        for msg in top:
            self.add_message(msg)
        self.scc = _components(list(self.order), self.succ)
        entered = {self.scc[t] for src, targets in self.succ.items() for t in targets
                   if self.scc[t] is not self.scc[src]}
        roots, taken = [], set()
        for name, msg in self.order.items():  # one root per component nothing else refers to
            comp = self.scc[name]
            if comp not in entered and comp not in taken:
                taken.add(comp)
                roots.append(msg)
        return roots

    def convert(self, file_desc: Any, message: Any) -> Type:
        if message is not None:
            self.add_message(message)
            self.scc = _components(list(self.order), self.succ)
            roots = [message]
        else:
            roots = self.roots(file_desc.message_types_by_name.values())
        if len(roots) == 1:
            rec = self.record(roots[0], frozenset())
            return Record(rec.name, rec.fields, None, hints=WalkHints(token=_token(rec.name), part_of_key=False))
        fields = []
        for root in roots:
            rec = self.record(root, frozenset())
            props = frozen_props({"native_data_type": "message"})
            hints = WalkHints(token=_token(root.full_name), emitted=_emitted(_RECORD_TYPE, "message", nullable=False))
            node = Record(rec.name, rec.fields, None, props, hints)
            fields.append((f"[type={_token(root.full_name)}].{root.name}", Field(root.name, node)))
        fields.sort(key=lambda pair: pair[0])
        bare = WalkHints(bare=True, part_of_key=False)
        return Record(file_desc.package or "", tuple(f for _, f in fields), None, hints=bare)

    def record(self, msg: Any, above: frozenset[str], item: bool = False) -> Record:
        """The record of ``msg`` reached below the messages ``above`` (only its own component matters);
        ``item``: as the items of a repeated field (then its field is an ArrayType)."""
        name = msg.full_name
        comp = self.scc.get(name)
        if comp is None:  # a message outside the graph (given by message=): its own component
            self.add_message(msg)
            self.scc = _components(list(self.order), self.succ)
            comp = self.scc[name]
        above = above & comp
        key = (name, above, item)
        rec = self.records.get(key)
        if rec is not None:
            return rec
        if item:  # the same record, but emitted as an array
            plain = self.record(msg, above)
            hints = WalkHints(token=plain.hints.token, emitted=_emitted(self.array_type(name), name))
            rec = self.records[key] = Record(name, plain.fields, None, plain.props, hints)
            return rec
        self.count += 1
        if self.count > MAX_RECORDS:
            raise SchemaNormalizationError(
                f"recursive messages expand to more than {MAX_RECORDS} records", path=name
            )
        below = above | {name}
        # by DataHub's path token, for ordering (unique: a message's fields and oneofs have unique names); a dict,
        # not a list of pairs: a pair per field would be an object more for the garbage collector to count
        members: dict[str, Field] = {}
        oneofs = msg.oneofs
        for field in msg.fields:
            if not oneofs or field.containing_oneof is None:  # (a descriptor's attribute costs: read it if need be)
                token, member = self.field(field, below)
                members[token] = member
        for oneof in oneofs:
            inner = dict(self.field(f, below) for f in oneof.fields)
            node = Record(oneof.full_name, _in_order(inner), None, _ONEOF_PROPS, _ONEOF_HINTS)
            members[f"[type=union].{oneof.name}"] = Field(oneof.name, node)
        hints = WalkHints(token=_token(name), emitted=_emitted(_RECORD_TYPE, name))
        rec = Record(name, _in_order(members), None, self.props(name), hints)
        self.records[key] = rec
        return rec

    def field(self, field: Any, below: frozenset[str]) -> tuple[str, Field]:
        """(DataHub's path token of ``field``, for ordering; the model field)."""
        repeated = _is_repeated(field)
        kind, name = field.type, field.name
        number = str(field.number)  # the field's identity (a rename keeps it): its fieldId
        scalar = _SCALAR_NODES.get(kind)
        if scalar is not None:
            token, native, plain, item = scalar
            if not repeated:
                return f"[type={token}].{name}", Field(name, plain, field_id=number)
            node: Type = item
        elif kind == _TYPE_ENUM:
            native = field.enum_type.full_name
            token = "enum"
            node = self.enum(field.enum_type, repeated)
        elif (msg := field.message_type) is not None:
            native = msg.full_name
            token = _token(native)
            if native in below:
                ftype = self.array_type(native) if repeated else _RECORD_TYPE
                hints = WalkHints(token=token, recursive=True, emitted=_emitted(ftype, native, recursive=True))
                node = Record(native, (), None, self.props(native), hints)
            else:
                node = self.record(msg, below, repeated)
        else:
            raise SchemaNormalizationError(f"unsupported field type {kind}", path=field.full_name)
        if repeated:
            node = Array(node, self.props(native), WalkHints(field_type=self.array_type(native)))
            return f"[type=array].[type={token}].{name}", Field(name, node, field_id=number)
        return f"[type={token}].{name}", Field(name, node, field_id=number)

    def props(self, native: str) -> Mapping[str, Any]:
        """The props of a nullable node whose nativeDataType is ``native`` (shared)."""
        props = self.native_props.get(native)
        if props is None:
            props = self.native_props[native] = frozen_props({"native_data_type": native, "_nullable": True})
        return props

    def array_type(self, native: str) -> FieldType:
        ftype = self.array_types.get(native)
        if ftype is None:
            ftype = self.array_types[native] = FieldType("ArrayType", nested_type=(native,))
        return ftype

    def enum(self, desc: Any, item: bool) -> Enum:
        key = (desc.full_name, item)
        node = self.enums.get(key)
        if node is None:
            name = desc.full_name
            ftype = self.array_type(name) if item else _ENUM_TYPE
            node = self.enums[key] = Enum(name, tuple(v.name for v in desc.values), None,
                                          EMPTY if item else self.props(name), WalkHints(emitted=_emitted(ftype, name)))
        return node


def _in_order(members: dict[str, Field]) -> tuple[Field, ...]:
    """The fields by their path tokens (the keys), in DataHub's order."""
    return tuple([members[token] for token in sorted(members)])


def _emitted(ftype: FieldType, native: str, nullable: bool = True, recursive: bool = False) -> dict[str, Any]:
    """The attributes of the field emitted at a node, as given (the walk adds its path and isPartOfKey):
    what it would compute from the node's props and pinned type, without computing it per field."""
    emitted = {"type": ftype, "nativeDataType": native, "nullable": nullable}  # (the rest: SchemaField's defaults)
    if recursive:
        emitted["recursive"] = True
    return emitted


def _components(nodes: list[str], succ: Mapping[str, list[str]]) -> dict[str, frozenset[str]]:
    """Strongly connected components (iterative Tarjan): node -> its component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: dict[str, frozenset[str]] = {}
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(succ.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(succ.get(nxt, ()))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                frozen = frozenset(comp)
                for member in comp:
                    out[member] = frozen
    return out


_ONEOF_PROPS = frozen_props({"native_data_type": "oneof", "_nullable": True})
_ONEOF_HINTS = WalkHints(token="union", field_type=_UNION_TYPE, emitted=_emitted(_UNION_TYPE, "oneof"))



def _scalar_node(token: str, native: str, cls: str, item: bool) -> Primitive:
    """A scalar field's node (``item``: a repeated field's items)."""
    if item:
        array = FieldType("ArrayType", nested_type=(native,))
        return Primitive(token, hints=WalkHints(emitted=_emitted(array, native)))
    ftype = FieldType(cls)
    props = frozen_props({"native_data_type": native, "_nullable": True})
    return Primitive(token, props, WalkHints(field_type=ftype, emitted=_emitted(ftype, native)))


#: FieldDescriptor.TYPE_* -> (path token, nativeDataType, the node of a field, the node of a repeated field's items)
_SCALAR_NODES: dict[int, tuple[str, str, Primitive, Primitive]] = {
    kind: (token, native, _scalar_node(token, native, cls, False), _scalar_node(token, native, cls, True))
    for kind, (token, native, cls) in _SCALARS.items()
}
