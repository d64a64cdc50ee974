"""Throughput of the Arrow and Spark normalizers, and of DataHub's hive-column converter.

Prints JSON: fields/s for small, wide and deep schemas, per input form, and, on the same
shapes, DataHub's ``get_schema_fields_for_hive_column`` (column by column, as its Delta
Lake / Glue / Unity sources call it) with our ratio to it. Run:
``/tmp/tv/bin/python benchmarks/normalize_formats_struct.py``.
"""

from __future__ import annotations

import base64
import json
import logging
import sys
import time
import warnings

import pyarrow as pa

from fieldgraph.normalizers import normalize, to_model
from fieldgraph.normalizers.arrow import flatbuffer_from_schema
from fieldgraph.normalizers.struct import column_fields

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)


def _shapes() -> dict[str, pa.Schema]:
    small = pa.schema([("id", pa.int64()), ("name", pa.string()), ("price", pa.decimal128(10, 2)),
                       ("day", pa.date32()), ("tags", pa.list_(pa.string())),
                       ("addr", pa.struct([("city", pa.string()), ("zip", pa.int32())]))])
    wide = pa.schema([(f"c{i}", [pa.int32(), pa.int64(), pa.string(), pa.float64(), pa.bool_()][i % 5])
                      for i in range(1000)])
    t: pa.DataType = pa.int32()
    for i in range(30):
        t = pa.struct([(f"v{i}", pa.string()), (f"n{i}", t)]) if i % 3 else pa.list_(pa.struct([(f"n{i}", t)]))
    deep = pa.schema([("root", t), ("m", pa.map_(pa.string(), pa.struct([("x", pa.list_(pa.int64()))])))])
    return {"small": small, "wide": wide, "deep": deep}


def _spark_json(t: pa.DataType) -> object:
    if pa.types.is_struct(t):
        return {"type": "struct", "fields": [{"name": f.name, "type": _spark_json(f.type), "nullable": True,
                                              "metadata": {}} for f in t]}
    if pa.types.is_list(t):
        return {"type": "array", "elementType": _spark_json(t.value_type), "containsNull": True}
    if pa.types.is_map(t):
        return {"type": "map", "keyType": _spark_json(t.key_type), "valueType": _spark_json(t.item_type),
                "valueContainsNull": True}
    return {pa.int32(): "integer", pa.int64(): "long", pa.string(): "string", pa.float64(): "double",
            pa.bool_(): "boolean", pa.date32(): "date"}.get(t) or (
        f"decimal({t.precision},{t.scale})" if pa.types.is_decimal(t) else "string")


def _rate(fn, budget: float = 0.4) -> tuple[float, int]:
    """(fields per second, fields per call) of ``fn``, best of a few timed batches."""
    n_fields = len(fn())
    best = float("inf")
    calls = 1
    end = time.perf_counter() + budget
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        took = (time.perf_counter() - start) / calls
        best = min(best, took)
        if time.perf_counter() > end:
            break
        if took * calls < 0.05:
            calls *= 2
    return n_fields / best, n_fields


def main() -> None:
    try:
        from datahub.utilities.hive_schema_to_avro import get_schema_fields_for_hive_column
    except ImportError:  # pragma: no cover
        get_schema_fields_for_hive_column = None
    out: dict[str, object] = {"python": sys.version.split()[0], "pyarrow": pa.__version__, "shapes": {}}
    for shape, schema in _shapes().items():
        spark_text = json.dumps(_spark_json(pa.struct(list(schema))))
        fb_b64 = base64.b64encode(flatbuffer_from_schema(schema)).decode()
        row: dict[str, object] = {}
        for label, fn in {
            "arrow_schema": lambda s=schema: normalize(s, "arrow"),
            "arrow_odf_base64": lambda b=fb_b64: normalize(b, "arrow"),
            "spark_json": lambda t=spark_text: normalize(t, "spark"),
            "spark_column_layout": lambda t=spark_text: column_fields(to_model(t, "spark")),
        }.items():
            rate, n = _rate(fn)
            row[label] = {"fields": n, "fields_per_s": round(rate)}
        if get_schema_fields_for_hive_column is not None:
            root = to_model(spark_text, "spark")
            cols = [(c.name, c.type.props["native_data_type"]) for c in root.fields]
            hive = get_schema_fields_for_hive_column
            rate, n = _rate(lambda cols=cols, hive=hive: [f for name, t in cols for f in hive(name, t)])
            row["datahub_hive_columns"] = {"fields": n, "fields_per_s": round(rate)}
            ours = row["spark_column_layout"]["fields_per_s"]  # the same fields, byte for byte
            row["ratio_spark_column_layout_vs_datahub"] = round(ours / rate, 2)
            row["ratio_spark_json_vs_datahub"] = round(row["spark_json"]["fields_per_s"] / rate, 2)
            row["ratio_arrow_schema_vs_datahub"] = round(row["arrow_schema"]["fields_per_s"] / rate, 2)
        out["shapes"][shape] = row
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
