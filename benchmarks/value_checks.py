"""What the write path's value check costs: decode, check (``fieldgraph.graph.values.check_values``) and plan of
the same batch, side by side, in one process (no graph: the check runs before planning, on the typed changes).

The batch: ``--datasets`` tables of ``--fields`` columns each (a schema MCP with a description per field), every
table but the first with an ``upstreamLineage`` of one edge per column from the table before it. Each step runs
``--repeat`` times, interleaved; prints one JSON object with the medians and the ratios.

    python benchmarks/value_checks.py
    python benchmarks/value_checks.py --datasets 2000 --fields 100
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from fieldgraph.graph.plan import plan_changes
from fieldgraph.graph.values import check_values
from fieldgraph.ingest.sources import decode_event


def _ds(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,bench.t{i},PROD)"


def events(datasets: int, fields: int) -> list[dict[str, Any]]:
    col = [{"fieldPath": f"c{j}", "nullable": False, "type": {"type": {"com.linkedin.schema.StringType": {}}},
            "nativeDataType": "string", "description": f"column {j}, as the warehouse documents it"}
           for j in range(fields)]
    out: list[dict[str, Any]] = []
    for i in range(datasets):
        out.append({"entityType": "dataset", "entityUrn": _ds(i), "changeType": "UPSERT",
                    "aspectName": "schemaMetadata", "systemMetadata": {"lastObserved": 5}, "aspect": {"json": {
                        "schemaName": f"t{i}", "platform": "urn:li:dataPlatform:hive", "version": 0, "hash": "",
                        "platformSchema": {"com.linkedin.schema.OtherSchema": {"rawSchema": ""}}, "fields": col}}})
        if i:
            out.append({"entityType": "dataset", "entityUrn": _ds(i), "changeType": "UPSERT",
                        "aspectName": "upstreamLineage", "systemMetadata": {"lastObserved": 6}, "aspect": {"json": {
                            "upstreams": [], "fineGrainedLineages": [{
                                "upstreamType": "FIELD_SET", "upstreams": [f"urn:li:schemaField:({_ds(i - 1)},c{j})"],
                                "downstreamType": "FIELD", "downstreams": [f"urn:li:schemaField:({_ds(i)},c{j})"],
                                "transformOperation": "IDENTITY"} for j in range(fields)]}}})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", type=int, default=1000)
    ap.add_argument("--fields", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    evs = events(args.datasets, args.fields)
    changes = [c for e in evs for c in decode_event(e)]
    steps: dict[str, Callable[[], object]] = {
        "decode": lambda: [c for e in evs for c in decode_event(e)],
        "check_values": lambda: check_values(changes),
        "plan": lambda: plan_changes(changes, {}),
    }
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(args.repeat):
        for name, step in steps.items():
            t = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({"datasets": args.datasets, "fields": args.datasets * args.fields, "events": len(evs),
                      "median_s": {k: round(v, 4) for k, v in med.items()},
                      "check_over_plan": round(med["check_values"] / med["plan"], 3),
                      "check_over_decode_and_plan": round(med["check_values"] / (med["decode"] + med["plan"]), 3)},
                     indent=2))


if __name__ == "__main__":
    main()
