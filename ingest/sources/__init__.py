"""Sources: wire events in, typed changes (:mod:`fieldgraph.changes`) out. Nothing else.

One dispatch, :func:`decode_event`, reads one JSON event of any source fieldgraph knows:

- DataHub (``datahub/``): MCP, MCL, MCE, MAE with ``schemaMetadata``, ``upstreamLineage`` and the
  RFC's ``datasetUpstreamLineage``;
- CDAP field lineage (``cdap.py``): a program run's field operations;
- OpenLineage (``openlineage.py``): run, job and dataset events with schema and column lineage facets
  (and, where an output has no column lineage, the job's ``sql`` facet);
- SQL (``sql.py``): statements whose lineage the graph derives against the schemas it holds.

Bad input raises :class:`fieldgraph.errors.EventError` naming the place in the event and what is wrong.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from fieldgraph.changes import Change
from fieldgraph.errors import EventError, FieldgraphError
from fieldgraph.graph.values import check_values
from fieldgraph.ingest.platforms import DEFAULT_MAPPING, PlatformMapping

from .cdap import decode_cdap_event
from .datahub import decode_datahub_event, is_datahub_event
from .openlineage import decode_openlineage_event
from .sql import decode_sql_event, is_sql_event

log = logging.getLogger(__name__)


def decode_event(obj: Any, origin: str = "", *, platforms: PlatformMapping = DEFAULT_MAPPING) -> list[Change]:
    """The dataset changes in one event, or :class:`EventError`. Events fieldgraph has no use for (other
    entities and aspects) give an empty list. ``platforms`` maps OpenLineage namespaces to platforms.

    Every value the changes carry is one the graph can store (:func:`fieldgraph.graph.values.check_values`: no
    NUL or lone surrogate, integers within 64 bits, finite numbers, keys of bounded length), so that a bad
    event is rejected as it is read, wherever it is read, instead of being found in a batch the graph refuses.
    Whatever else fails in reading one event is that event's fault, never the run's: nesting too deep for the
    readers' recursion (a schema or a JSON value thousands of levels deep) and any other failure become an
    :class:`EventError` with the reason (the traceback is logged at debug level)."""
    try:
        changes = _decode(obj, origin, platforms)
        check_values(changes)
        return changes
    except FieldgraphError:
        raise
    except RecursionError:
        raise EventError(f"nested too deep to read: the JSON, or a schema it holds, goes deeper than a recursion "
                         f"limit of {sys.getrecursionlimit()} calls allows (a few hundred levels)") from None
    except Exception as exc:  # noqa: BLE001 - an event no reader foresaw: reject it, go on
        log.debug("cannot read the event at %s", origin or "?", exc_info=True)
        raise EventError(f"cannot read the event: {type(exc).__name__}: {exc}") from exc


def _decode(obj: Any, origin: str, platforms: PlatformMapping) -> list[Change]:
    if not isinstance(obj, dict):
        raise EventError(f"an event is a JSON object, got {type(obj).__name__}")
    if is_datahub_event(obj):
        return decode_datahub_event(obj, origin)
    if is_sql_event(obj):
        return decode_sql_event(obj, origin)
    if "operations" in obj or "stages" in obj:
        return decode_cdap_event(obj, origin)
    if "eventTime" in obj and ("job" in obj or "dataset" in obj or "run" in obj):
        return decode_openlineage_event(obj, origin, platforms)
    raise EventError("not a DataHub change event (nor CDAP or OpenLineage): expected entityType/changeType (MCP, MCL), "
                     "proposedSnapshot/newSnapshot (MCE, MAE), operations or stages (CDAP field lineage) or "
                     "eventTime with job/run/dataset (OpenLineage) or sql (a SQL event)")


def unused_reason(obj: Any) -> str:
    """Why an event gave no change (for ``--strict-aspects``, which rejects such events)."""
    name = obj.get("aspectName") if isinstance(obj, dict) else None
    entity = obj.get("entityType") if isinstance(obj, dict) else None
    what = f"aspect {name!r}" if name else "no aspect"
    return (f"{what} of entity {entity or 'snapshot'!r} is not one fieldgraph reads (dataset schemaMetadata, "
            "upstreamLineage, datasetUpstreamLineage, or a dataset delete)")


__all__ = ["PlatformMapping", "decode_event", "unused_reason"]
