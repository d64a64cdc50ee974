"""The large lineage shapes the explorer must draw quickly (tests/test_explorer_large.py, benchmarks/explorer.py).

- ``FAN`` (``fan.source.id``): 5,000 downstream fields, one hop away, in 50 datasets of 100 fields;
- ``FAN_ONE`` (``fanone.source.id``): 5,000 downstream fields, one hop away, all in one dataset;
- ``CHAIN`` (``chain_00.x``): a chain of 30 hops (``chain_00.x`` -> ``chain_01.x`` -> ... -> ``chain_30.x``);
- ``WIDE`` (``wide.table``): a dataset of 2,000 columns, each derived from one of ``wide.source``'s and feeding
  one of ``wide.report``'s.

Built as DataHub events (a schema, then upstreamLineage) through the graph's write path.
"""

from __future__ import annotations

from typing import Any

from fieldgraph.graph.plan import field_urn

from .conftest import ds, ingest, lineage_event, schema_event

FAN_SOURCE = ds("fan.source")
FAN = field_urn(FAN_SOURCE, "id")
FAN_DATASETS = [ds(f"fan.target_{i:02d}") for i in range(50)]
FAN_PER_DATASET = 100
FAN_ONE_SOURCE = ds("fanone.source")
FAN_ONE = field_urn(FAN_ONE_SOURCE, "id")
FAN_ONE_TARGET = ds("fanone.target")
FAN_ONE_FIELDS = 5000
CHAIN_HOPS = 30
CHAIN_DATASETS = [ds(f"chain_{i:02d}") for i in range(CHAIN_HOPS + 1)]
CHAIN = field_urn(CHAIN_DATASETS[0], "x")
CHAIN_END = field_urn(CHAIN_DATASETS[-1], "x")
WIDE_SOURCE, WIDE, WIDE_REPORT = ds("wide.source"), ds("wide.table"), ds("wide.report")
WIDE_COLUMNS = 2000


def fan_events() -> list[dict[str, Any]]:
    """FAN: 50 datasets of 100 fields, each field derived from ``fan.source.id``."""
    events = [schema_event(FAN_SOURCE, ["id"], 1000)]
    for i, target in enumerate(FAN_DATASETS):
        columns = [f"f{i:02d}_{j:03d}" for j in range(FAN_PER_DATASET)]
        events += [schema_event(target, columns, 1000),
                   lineage_event(target, [(field_urn(target, c), [FAN]) for c in columns], 2000)]
    return events


def fan_one_events() -> list[dict[str, Any]]:
    """FAN_ONE: one dataset of 5,000 fields, each derived from ``fanone.source.id``."""
    columns = [f"c{j:04d}" for j in range(FAN_ONE_FIELDS)]
    return [schema_event(FAN_ONE_SOURCE, ["id"], 1000), schema_event(FAN_ONE_TARGET, columns, 1000),
            lineage_event(FAN_ONE_TARGET, [(field_urn(FAN_ONE_TARGET, c), [FAN_ONE]) for c in columns], 2000)]


def chain_events() -> list[dict[str, Any]]:
    """CHAIN: ``chain_{i+1}.x`` derived from ``chain_{i}.x``, 30 times."""
    events = [schema_event(d, ["x"], 1000) for d in CHAIN_DATASETS]
    return events + [lineage_event(down, [(field_urn(down, "x"), [field_urn(up, "x")])], 2000)
                     for up, down in zip(CHAIN_DATASETS, CHAIN_DATASETS[1:], strict=False)]


def wide_events() -> list[dict[str, Any]]:
    """WIDE: 2,000 columns, column j from ``wide.source``'s column j, feeding ``wide.report``'s column j."""
    columns = [f"col_{j:04d}" for j in range(WIDE_COLUMNS)]
    events = [schema_event(d, columns, 1000) for d in (WIDE_SOURCE, WIDE, WIDE_REPORT)]
    for up, down in ((WIDE_SOURCE, WIDE), (WIDE, WIDE_REPORT)):
        events.append(lineage_event(down, [(field_urn(down, c), [field_urn(up, c)]) for c in columns], 2000))
    return events


def build(graph: Any) -> None:
    """All four shapes into ``graph`` (a LineageGraph)."""
    ingest(graph, *fan_events(), *fan_one_events(), *chain_events(), *wide_events(), batch_events=200)
