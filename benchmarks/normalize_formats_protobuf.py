"""Protobuf normalization throughput: fieldgraph vs DataHub's protobuf_util, per shape and input.

DataHub's API, ``protobuf_schema_to_mce_fields(ProtobufSchema(name, text))``, takes
``.proto`` text and compiles it (``grpc.protos``: grpc_tools' protoc, Python code generation,
import of the ``_pb2`` module into the process-wide pool; cached by the text's MD5), then
builds its networkx graph and enumerates paths. So two inputs, each given to both sides:

* ``text``: the same ``.proto`` text; both compile it. Every round renames the package and
  file (``fresh``), because DataHub's pool rejects a symbol defined twice and its cache
  would answer a repeated text; ours gets the same renamed text (it caches nothing).
* ``descriptor``: the same compiled ``FileDescriptor`` object (DataHub's own, from its
  compile). Ours: ``walk(parse_protobuf(desc))``; DataHub's: ``_populate_graph(desc)``, its
  acyclic check and ``_schema_fields_from_dag`` (what ``protobuf_schema_to_mce_fields`` runs
  after a cache hit, without the MD5 of the text).

Before timing, every schema's output is checked identical on both inputs. Shapes (a row
each): ``corpus`` (the non-recursive, import-free golden fixtures plus generated mixed
files), ``small`` (a dozen fields), ``wide`` (2,000+ fields), ``deep`` (messages nested 10
deep, each holding the next one twice), ``unions`` (oneofs everywhere). Rounds are
interleaved (per shape, ours and DataHub's, order alternating); a timed block repeats a
small shape's schemas up to some 2,000 fields (text: under new names each time); each side's
best round is reported. Times are this process's CPU time (``time.process_time``: on a shared
machine, wall time mostly measures the other processes; protoc runs in-process on both sides).
Nothing is cached between calls (DataHub's text cache never hits).

protoc's own time, shared by both sides on ``text`` (each compiles the text with it first), is measured apart:
fieldgraph's compile step alone (protoc, in-process, to FileDescriptorProtos) on the same renamed texts, in the
same interleaved rounds. Each ``text`` row gives it per field (``protocFieldsPerS``), its share of fieldgraph's
time, and the ratio with it taken out of both sides (``ratioWithoutProtoc``).

Run: ``python benchmarks/normalize_formats_protobuf.py [rounds]`` (default 7).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fieldgraph.normalizers.protobuf import _compile, parse_protobuf
from fieldgraph.normalizers.visitor import walk

ROOT = Path(__file__).resolve().parent.parent
Corpus = list[tuple[str, str]]
_HEAD = 'syntax = "proto3";\npackage bench.{name};\n'
_SCALARS = ["string", "int64", "double", "bool", "int32", "bytes", "uint32", "sint64", "fixed32", "float"]


def mixed(n: int) -> Corpus:
    out = []
    for i in range(n):
        msgs = ["enum Kind { K0 = 0; K1 = 1; }"]
        for m in range(6):
            fields = [f"string s{m} = 1;", f"int64 n{m} = 2;", f"repeated double w{m} = 3;", f"Kind k{m} = 4;",
                      f"map<string, int32> c{m} = 5;", f"oneof o{m} {{ bool b{m} = 6; bytes y{m} = 7; }}"]
            if m:
                fields += [f"M{m - 1} prev = 8;", f"repeated M{m - 1} olds = 9;"]
            msgs.append(f"message M{m} {{ " + " ".join(fields) + " }")
        out.append((f"bench_gen_{i}", _HEAD.format(name=f"gen{i}") + "\n".join(msgs) + "\n"))
    return out


def corpus() -> Corpus:
    items = []
    for p in sorted((ROOT / "tests" / "golden" / "protobuf").glob("*.proto")):
        text = p.read_text()
        if p.stem.startswith("recursive_") or re.search(r"^import ", text, re.M):
            continue
        items.append((p.stem, text))
    return items + mixed(4)


def small(n: int) -> Corpus:
    out = []
    for i in range(n):
        fields = [f"{_SCALARS[j % len(_SCALARS)]} f{j} = {j + 1};" for j in range(8)]
        fields += ["Addr addr = 20;", "repeated string tags = 21;", "Kind kind = 22;"]
        body = ("enum Kind { K0 = 0; K1 = 1; }\nmessage Addr { string city = 1; string zip = 2; }\n"
                f"message Small{i} {{ " + " ".join(fields) + " }\n")
        out.append((f"bench_small_{i}", _HEAD.format(name=f"small{i}") + body))
    return out


def wide() -> Corpus:
    fields = [f"{_SCALARS[j % len(_SCALARS)]} c{j} = {j + 1};" for j in range(1900)]
    fields += [f"G{g} g{g} = {2000 + g};" for g in range(25)]
    groups = [f"message G{g} {{ string x = 1; int64 y = 2; repeated double z = 3; Kind k = 4; }}" for g in range(25)]
    body = "enum Kind { K0 = 0; K1 = 1; }\n" + "\n".join(groups) + "\nmessage Wide { " + " ".join(fields) + " }\n"
    return [("bench_wide", _HEAD.format(name="wide") + body)]


def deep(depth: int = 10) -> Corpus:
    msgs = ["message L0 { string leaf = 1; int32 n = 2; }"]
    for d in range(1, depth + 1):
        below = f"L{d - 1}"
        msgs.append(f"message L{d} {{ string a{d} = 1; int64 b{d} = 2; {below} next = 3; repeated {below} list = 4; }}")
    return [("bench_deep", _HEAD.format(name="deep") + "\n".join(msgs) + "\n")]


def unions(n: int) -> Corpus:
    out = []
    for i in range(n):
        fields, number = [], 1
        for j in range(10):
            members = f"string s{j} = {number}; int64 n{j} = {number + 1}; Alt a{j} = {number + 2};"
            fields.append(f"oneof u{j} {{ {members} }}")
            fields.append(f"optional double o{j} = {number + 3};")  # proto3 optional: a synthetic oneof
            number += 4
        body = ("message Alt { oneof v { string x = 1; bool y = 2; } repeated int32 z = 3; }\n"
                f"message U{i} {{ " + " ".join(fields) + " }\n")
        out.append((f"bench_unions_{i}", _HEAD.format(name=f"unions{i}") + body))
    return out


def shapes() -> dict[str, Corpus]:
    return {"corpus": corpus(), "small": small(20), "wide": wide(), "deep": deep(), "unions": unions(4)}


def fresh(stem: str, text: str, tag: str) -> tuple[str, str]:
    """The same schema under a new package and file name."""
    text = re.sub(r"^package ([\w.]+);", lambda m: f"package {m.group(1)}.{tag};", text, count=1, flags=re.M)
    return f"{stem}_{tag}.proto", text


def timed(items: list[Any], convert: Callable[..., list[Any]]) -> tuple[int, float]:
    start, n = time.process_time(), 0
    for item in items:
        n += len(convert(*item))
    return n, time.process_time() - start


def row(t: dict[str, float], schemas: int, fields: int) -> dict[str, Any]:
    """A shape's row from each side's best seconds per field (``t``); with protoc's, protoc's time apart."""
    ours_rate, dh_rate = 1 / t["ours"], 1 / t["datahub"]
    out = {"schemas": schemas, "fields": fields, "fieldgraphFieldsPerS": round(ours_rate),
           "datahubFieldsPerS": round(dh_rate), "ratio": round(ours_rate / dh_rate, 2)}
    if "protoc" in t:  # the same protoc time taken out of both sides
        out.update({"protocFieldsPerS": round(1 / t["protoc"]),
                    "protocShareOfFieldgraph": round(t["protoc"] / t["ours"], 2),
                    "ratioWithoutProtoc": round((t["datahub"] - t["protoc"]) / (t["ours"] - t["protoc"]), 2)})
    return out


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    logging.disable(logging.WARNING)
    import networkx as nx
    from datahub.ingestion.extractor import protobuf_util as pu

    def canon(fields: list[Any]) -> list[str]:
        return [json.dumps(f.to_obj()).replace("pegasus2avro.", "") for f in fields]

    def ours_text(file: str, text: str) -> list[Any]:
        return walk(parse_protobuf(text, name=file))

    def theirs_text(file: str, text: str) -> list[Any]:
        return pu.protobuf_schema_to_mce_fields(pu.ProtobufSchema(file, text), [])

    def ours_desc(desc: Any) -> list[Any]:
        return walk(parse_protobuf(desc))

    def protoc(file: str, text: str) -> list[Any]:  # fieldgraph's compile step alone
        _compile(text, file, None, None)
        return []

    def theirs_desc(desc: Any) -> list[Any]:  # protobuf_schema_to_mce_fields past its compile / cache
        graph = pu._populate_graph(desc)
        return pu._schema_fields_from_dag(graph, False) if nx.is_directed_acyclic_graph(graph) else []

    data = shapes()
    descs: dict[str, list[tuple[Any]]] = {}
    for shape, items in data.items():  # same output, or the comparison means nothing
        descs[shape] = []
        for stem, text in items:
            file, text2 = fresh(stem, text, "check")
            expected = canon(theirs_text(file, text2))
            assert expected and [json.dumps(f.to_datahub()) for f in ours_text(file, text2)] == expected, stem
            desc = pu._from_protobuf_schema_to_descriptors(pu.ProtobufSchema(file, text2))  # DataHub's cached one
            assert [json.dumps(f.to_datahub()) for f in ours_desc(desc)] == canon(theirs_desc(desc)), stem
            descs[shape].append((desc,))
    inf = float("inf")
    times = {(input_, shape): {"ours": inf, "datahub": inf} for input_ in ("text", "descriptor") for shape in data}
    fields = {shape: sum(len(ours_desc(*d)) for d in descs[shape]) for shape in data}
    # a timed block is the shape's schemas `reps` times (text: each time under new names), a few thousand fields
    reps = {shape: -(-2000 // fields[shape]) for shape in data}
    for r in range(rounds):
        for shape, items in data.items():
            renamed = [fresh(stem, text, f"r{r}x{k}") for k in range(reps[shape]) for stem, text in items]
            for input_, args, sides in (
                    ("text", renamed, [("ours", ours_text), ("datahub", theirs_text), ("protoc", protoc)]),
                    ("descriptor", descs[shape] * (5 * reps[shape]), [("ours", ours_desc), ("datahub", theirs_desc)])):
                for side, fn in sides if r % 2 == 0 else sides[::-1]:
                    n, spent = timed(args, fn)
                    n = n or fields[shape] * reps[shape]  # protoc gives no fields: the block's fields
                    times[input_, shape][side] = min(times[input_, shape].get(side, inf), spent / n)  # s per field
    out: dict[str, Any] = {"text": {}, "descriptor": {}}
    for (input_, shape), t in times.items():
        out[input_][shape] = row(t, len(data[shape]), fields[shape])
    print(json.dumps({"protobuf": {
        "inputs": {"text": ".proto text, both compile it (DataHub: protobuf_schema_to_mce_fields); protoc's own "
                           "time apart (protoc*, ratioWithoutProtoc)",
                   "descriptor": "the same compiled FileDescriptor "
                                 "(DataHub: _populate_graph, acyclic check, _schema_fields_from_dag)"},
        "clock": "process CPU time", "rounds": rounds, "identical_output": True, **out}}, indent=2))


if __name__ == "__main__":
    main()
