"""Protobuf normalization throughput: fieldgraph vs DataHub's protobuf_util, same corpus.

Prints one JSON object. Two measurements:

* ``cold``: .proto text -> fields, compiling every time (each round gets fresh package and
  file names, because DataHub compiles into the process-wide descriptor pool and caches by
  content);
* ``warm``: fields from an already compiled schema (ours: a serialized FileDescriptorSet;
  DataHub: its descriptor cache hit, i.e. its graph and path enumeration only).

Corpus: the non-recursive, import-free golden fixtures plus generated schemas (nested
messages, maps, oneofs, repeated fields). Run: ``python benchmarks/normalize_formats_protobuf.py``.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from pathlib import Path

from fieldgraph.normalizers.protobuf import _compile, parse_protobuf
from fieldgraph.normalizers.visitor import walk

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def generated(n: int) -> list[tuple[str, str]]:
    out = []
    for i in range(n):
        msgs = ["enum Kind { K0 = 0; K1 = 1; }"]
        for m in range(6):
            fields = [f"string s{m} = 1;", f"int64 n{m} = 2;", f"repeated double w{m} = 3;", f"Kind k{m} = 4;",
                      f"map<string, int32> c{m} = 5;", f"oneof o{m} {{ bool b{m} = 6; bytes y{m} = 7; }}"]
            if m:
                fields += [f"M{m - 1} prev = 8;", f"repeated M{m - 1} olds = 9;"]
            msgs.append(f"message M{m} {{ " + " ".join(fields) + " }")
        out.append((f"bench_gen_{i}", 'syntax = "proto3";\npackage bench.gen;\n' + "\n".join(msgs) + "\n"))
    return out


def corpus() -> list[tuple[str, str]]:
    items = []
    for p in sorted((ROOT / "tests" / "golden" / "protobuf").glob("*.proto")):
        text = p.read_text()
        if p.stem.startswith("recursive_") or re.search(r"^import ", text, re.M):
            continue
        items.append((p.stem, text))
    return items + generated(4)


def fresh(stem: str, text: str, tag: str) -> tuple[str, str]:
    """The same schema under a new package and file name."""
    text = re.sub(r"^package ([\w.]+);", lambda m: f"package {m.group(1)}.{tag};", text, count=1, flags=re.M)
    return f"{stem}_{tag}.proto", text


def main() -> None:
    logging.disable(logging.WARNING)
    try:
        from datahub.ingestion.extractor import protobuf_util
    except ImportError as exc:  # pragma: no cover
        protobuf_util = None
        missing = str(exc)
    items = corpus()
    result: dict = {"corpus_schemas": len(items), "rounds": ROUNDS}

    def cold(convert) -> tuple[int, float]:
        fields, spent = 0, 0.0
        for r in range(ROUNDS):
            for stem, text in items:
                file, text2 = fresh(stem, text, f"r{r}x{id(convert) % 9973}")
                start = time.perf_counter()
                fields += len(convert(file, text2))
                spent += time.perf_counter() - start
        return fields, spent

    def ours_text(file: str, text: str) -> list:
        return walk(parse_protobuf(text, name=file))

    ours_fields, ours_time = cold(ours_text)
    result["cold"] = {"ours_fields": ours_fields, "ours_fields_per_s": round(ours_fields / ours_time)}

    sets = []
    for stem, text in items:
        from google.protobuf import descriptor_pb2

        fds = descriptor_pb2.FileDescriptorSet(file=_compile(text, f"{stem}.proto", None, None))
        sets.append(fds.SerializeToString())
    start, n = time.perf_counter(), 0
    for _ in range(ROUNDS * 20):
        for data in sets:
            n += len(walk(parse_protobuf(data)))
    result["warm"] = {"ours_fields": n, "ours_fields_per_s": round(n / (time.perf_counter() - start))}

    if protobuf_util is None:
        result["datahub"] = f"not installed: {missing}"
    else:
        def theirs_text(file: str, text: str) -> list:
            return protobuf_util.protobuf_schema_to_mce_fields(protobuf_util.ProtobufSchema(file, text), [])

        dh_fields, dh_time = cold(theirs_text)
        result["cold"].update(datahub_fields=dh_fields, datahub_fields_per_s=round(dh_fields / dh_time),
                              ratio=round((ours_fields / ours_time) / (dh_fields / dh_time), 2))
        warm_items = [fresh(stem, text, "warm") for stem, text in items]
        for file, text in warm_items:  # fill DataHub's descriptor cache
            theirs_text(file, text)
        start, m = time.perf_counter(), 0
        for _ in range(ROUNDS * 20):
            for file, text in warm_items:
                m += len(theirs_text(file, text))
        dh_rate = m / (time.perf_counter() - start)
        result["warm"].update(datahub_fields=m, datahub_fields_per_s=round(dh_rate),
                              ratio=round(result["warm"]["ours_fields_per_s"] / dh_rate, 2))
        result["same_field_counts"] = ours_fields == dh_fields
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
