"""Spark backfill: build the lineage graph from archived change events, ending in the same graph as streaming.

Run it with ``fieldgraph backfill PATH...`` (local mode), or on a cluster::

    spark-submit --master yarn .../fieldgraph/ingest/backfill.py s3a://bucket/mcl/ --graph bolt://neo4j:7687
    python -m fieldgraph.ingest.backfill PATH... [--graph URI] [--master local[*]]

Inputs: JSON Lines / JSON / JSON arrays (Kafka sink dumps), Avro container files (each record an event,
or a ``value`` column holding the event's JSON), Parquet with the event's JSON in a ``value`` column.
Local files are read by the tasks from the file, large JSON Lines files in splits cut at lines; files named by URI
whole, one task each (:mod:`fieldgraph.ingest.inputs`). Avro is decoded with fastavro in the executors (Spark's
Avro reader is not part of pyspark).

The job, with the planner of :mod:`fieldgraph.graph.plan` (the code the worker and ``fieldgraph ingest``
run) doing every decision:

1. decode every event in the executors (:func:`fieldgraph.ingest.sources.decode_event`); bad records
   become rejects with their reason; group per (dataset, aspect), every version kept in arrival order
   (each holds over its own interval of time: :mod:`fieldgraph.graph.history`);
2. write the schemas (datasets, fields, HasField, past field states) from the executors, partitioned by
   dataset: each dataset's versions in one batch, whose planner replays its timeline;
3. plan the lineage in the executors against the graph's state (which now holds every schema, so
   references resolve as they would once all schemas had arrived) and write the edges, present and past,
   partitioned by downstream dataset; placeholder cleanup runs once at the end, on the driver.

Every write is an idempotent ``MERGE``/``SET`` batch (``UNWIND``); running the job again, or streaming
the same history afterwards, leaves the graph unchanged. docs/explanation/streaming-and-batch.md says where a batch job
cannot reproduce what streaming does (arrival-order effects of streaming itself).
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import shlex
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import accumulate
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

from fieldgraph.bulk import gc_paused
from fieldgraph.changes import (
    QUERY_PROPERTIES,
    SCHEMA_METADATA,
    UNSTAMPED,
    AspectChange,
    Change,
    DataJobChange,
    DatasetDelete,
    subject,
)
from fieldgraph.errors import FieldgraphError, GraphNotEmpty, TransientError
from fieldgraph.graph import FalkorStore, GraphStore, LineageGraph, WriteMode, Writer
from fieldgraph.graph.bulkload import (
    ADVICE,
    Neo4jImport,
    array_delimiter,
    build_snapshot,
    check_empty,
    delimiters_used,
    falkordb_bulk_commands,
    import_neo4j,
    send_falkordb,
    write_neo4j_import,
)
from fieldgraph.graph.partition import assign_parts, part_keys
from fieldgraph.graph.snapshot import EdgeRow, NodeRow, Snapshot
from fieldgraph.graph.write import chunks, one_version_each
from fieldgraph.ingest.config import GraphConfig, platforms_from_env
from fieldgraph.ingest.inputs import Split, is_uri, list_inputs, local_name, raw_events, read_inputs
from fieldgraph.ingest.platforms import DEFAULT_MAPPING, PlatformMapping
from fieldgraph.ingest.replay import Reject, decode, place

log = logging.getLogger("fieldgraph.backfill")
DEFAULT_REJECTS = ".fieldgraph/backfill-rejects"
#: the aspects written before any lineage (what lineage resolves against: schemas, the statements of queries)
FIRST_STAGE = (SCHEMA_METADATA, QUERY_PROPERTIES)
#: datasets planned and written per graph round trip in the executors
DATASETS_PER_CHUNK = 500
DEFAULT_BULK_DIR = ".fieldgraph/bulk-import"
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")



# --- stage 1: decode and reduce to what can still matter (pure; executors) --------------------------------

# Values of the reduce are (kind, payload): (CHANGES, [(ordinal, change)...]) the changes of one (dataset, aspect),
# (REJECT, json) a reject, (COUNT, n) a count. An ordinal (file rank, file, record, index) keeps arrival order.
CHANGES, REJECT, COUNT = "changes", "reject", "count"


class Reduced(NamedTuple):
    """What the reduce keeps per key: the kind, how many changes are kept, and the payload (changes: each pickled,
    in arrival order; read them with :func:`changes_of`)."""

    kind: str
    kept: int
    payload: Any


_COUNT = "\x00count"
_REJECT = "\x00reject"


def _expand(c: Change) -> Sequence[AspectChange]:
    """A whole-dataset delete as deletes of each aspect (what the planner does)."""
    return c.aspects() if isinstance(c, DatasetDelete) else (c,)


def decode_records(records: Iterable[tuple[str, bytes | Split]], ranks: dict[str, int], fmt: str | None,
                   since: int | None, until: int | None, value_column: str = "value",
                   platforms: PlatformMapping = DEFAULT_MAPPING,
                   ) -> Iterator[tuple[Any, tuple[str, Any]]]:
    """(file name, bytes or :class:`~fieldgraph.ingest.inputs.Split`) records -> keyed, tagged values for
    :func:`merge_values`.

    An ordinal ``(file rank, file, record, index)`` keeps arrival order, so ties break as in a replay and
    unstamped deletes (kept whatever the time window) apply where they arrived.
    """
    counts: Counter[str] = Counter()
    for name, data in records:
        local = local_name(name)
        rank = ranks.get(local, ranks.get(name, len(ranks)))
        counts["files"] += not isinstance(data, Split) or data.first
        for raw in raw_events(local, data, fmt, value_column):
            counts["events"] += 1
            changes, rej = decode(raw, platforms)
            if rej is not None:
                counts["rejected"] += 1
                yield (_REJECT, rank, local, raw.line, raw.item), (REJECT, json.dumps(rej.to_json(), default=str))
                continue
            if not changes:
                counts["ignored"] += 1
                continue
            kept = 0
            for i, c in enumerate(changes):
                counts["aspectChanges"] += 1
                if c.ts != UNSTAMPED and (since is not None and c.ts < since or until is not None and c.ts >= until):
                    counts["outOfWindow"] += 1
                    continue
                kept += 1
                for x in _expand(c):
                    counts["changes"] += 1
                    # pickled once here: the shuffle then moves bytes, not object graphs to pickle, hold and spill
                    yield (subject(x), x.aspect), (CHANGES, [((rank, local, raw.line, raw.item, i),
                                                               pickle.dumps(x, pickle.HIGHEST_PROTOCOL))])
            if not kept:
                counts["eventsOutOfWindow"] += 1
    for k, n in counts.items():
        yield (_COUNT, k), (COUNT, n)


def merge_values(a: tuple[str, Any], b: tuple[str, Any]) -> tuple[str, Any]:
    """Combine two values of one key (associative and commutative, as ``reduceByKey`` needs)."""
    if a[0] == COUNT:
        return (COUNT, a[1] + b[1])
    if a[0] == CHANGES:
        return (CHANGES, in_arrival_order(a[1] + b[1]))
    return a  # rejects have unique keys


def in_arrival_order(items: list[tuple[Any, Change]]) -> list[tuple[Any, Change]]:
    """A (dataset, aspect)'s changes by ordinal; an event read twice (the same ordinal) counts once."""
    return sorted(dict(items).items(), key=lambda oc: oc[0])


def _combine(v: tuple[str, Any]) -> list[Any]:
    return [v[0], list(v[1]) if v[0] == CHANGES else v[1]]


def _add(acc: list[Any], v: tuple[str, Any]) -> list[Any]:
    """Add one value to a combiner in place (O(1); ordered at the end)."""
    if acc[0] == COUNT:
        acc[1] += v[1]
    elif acc[0] == CHANGES:
        acc[1].extend(v[1])
    return acc


def _finish(acc: list[Any]) -> Reduced:
    """(tag, changes kept, payload): the changes stay pickled (each on its own, in arrival order), so the passes over
    the persisted result that only count or filter do not unpickle them."""
    if acc[0] == CHANGES:
        changes = [c for _, c in in_arrival_order(acc[1])]
        return Reduced(CHANGES, len(changes), changes)
    return Reduced(acc[0], 0, acc[1])


def changes_of(reduced: Reduced) -> list[Change]:
    """The changes a (dataset, aspect) keeps, in arrival order."""
    return [pickle.loads(c) for c in reduced.payload]


# --- stages 2 and 3: plan and write in the executors ------------------------------------------------------


def executor_graph(config: GraphConfig, store: GraphStore) -> GraphConfig:
    """Where executors write: the embedded server's socket (never starting a server of their own), else
    the driver's graph with its credentials."""
    server = getattr(store, "server", None)
    if server is not None:
        return replace(config, uri=f"falkordb+unix://{server.socket}?graph={getattr(store, 'graph_name', '')}")
    return config


@contextmanager
def _backfill_writer(config: GraphConfig, batch_size: int) -> Iterator[Writer]:
    g = config.open(batch_size=batch_size, schema=False)
    try:
        yield g.writer(WriteMode.BACKFILL)
    finally:
        g.close()


def _write(writer: Writer, changes: Sequence[Change], counts: Counter[str], refusals: list[str]) -> None:
    try:
        plan = writer.plan(changes)
    except TransientError:
        raise
    except FieldgraphError:
        # a change only the graph's state refuses (a SQL statement that does not fit the schemas read): write the
        # rest, in order, and reject the refused ones (to the rejects folder, as stage 1 rejects what it can tell
        # from the event alone)
        done, refused = writer.write_each([[c] for c in changes])
        for i, exc in refused:
            log.warning("refused %s: %s", changes[i].origin or subject(changes[i]), exc)
            refusals.append(json.dumps(_refusal(changes[i], exc).to_json(), default=str))
        counts.update(done.counts)
        counts["refusedAtWrite"] += len(refused)
        return
    writer.apply(plan)
    counts.update(plan.counts)
    for step, rows in plan.steps():
        counts[f"rows.{step}"] += len(rows)
    counts["placeholderMoves"] += plan.counts["placeholders_resolved"]


def write_changes(groups: Iterable[tuple[str, list[Change]]], config: GraphConfig,
                  batch_size: int) -> Iterator[tuple[dict[str, int], list[str]]]:
    """Stages 2 and 3 (one task): the changes of its datasets' aspects, in arrival order, a chunk of datasets
    per plan (the planner places each version in time). Yields the task's counts and its rejects (JSON lines) of
    the changes the graph refused."""
    counts: Counter[str] = Counter()
    refusals: list[str] = []
    with _backfill_writer(config, batch_size) as writer:
        write_groups(writer, groups, counts, refusals)
    yield dict(counts), refusals


def write_groups(writer: Writer, groups: Iterable[tuple[str, list[Change]]], counts: Counter[str],
                 refusals: list[str]) -> None:
    """Write (dataset, changes) groups with ``writer``, a chunk of datasets per plan; counts and refusals added."""
    for chunk in chunks(groups, DATASETS_PER_CHUNK):
        changes = [c for _, cs in chunk for c in cs]
        jobs = [c for c in changes if isinstance(c, DataJobChange)]
        if len(jobs) < len(changes):
            _write(writer, [c for c in changes if not isinstance(c, DataJobChange)], counts, refusals)
        # a data job's versions replace each other wherever its edges are: one version of each job per plan, in
        # arrival order, as the worker writes them (the planner replays no job timeline)
        for _, run in one_version_each([[c] for c in jobs]):
            _write(writer, [c for cs in run for c in cs], counts, refusals)
        counts["aspects"] += len(chunk)


def _refusal(change: Change, exc: Exception) -> Reject:
    """The reject of a change the graph refused, named by its origin (``file:line``; the event is not read again:
    the file may be remote)."""
    file, line, item = place(change.origin)
    return Reject(file, line, str(exc), item=item)


# --- the driver -------------------------------------------------------------------------------------------


@dataclass
class BackfillOptions:
    paths: Sequence[str]
    graph: str | None = None
    graph_name: str | None = None
    format: str | None = None
    master: str | None = None
    since: int | None = None
    until: int | None = None
    rejects: str = DEFAULT_REJECTS
    partitions: int | None = None
    batch_size: int = 2000
    value_column: str = "value"
    spark_conf: dict[str, str] = field(default_factory=dict)
    #: the graph as the edge read it (None: ``graph``/``graph_name`` with the environment's credentials)
    graph_config: GraphConfig | None = None
    #: how OpenLineage namespaces map to platforms (None: ``$FIELDGRAPH_OPENLINEAGE_PLATFORMS`` or the defaults)
    platforms: PlatformMapping | None = None
    #: plan the history into the in-memory store and bulk-import its snapshot into the (empty) target
    bulk: bool = False
    #: Neo4j: where the import files go
    bulk_dir: str = DEFAULT_BULK_DIR
    #: Neo4j: the STOPPED server's installation to import into (None: write the files, print the command)
    neo4j_home: str | None = None
    #: Neo4j: the command that is ``neo4j-admin`` (default ``NEO4J_HOME/bin/neo4j-admin``)
    neo4j_admin: str | None = None


@dataclass
class BackfillReport:
    files: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    schema_counts: Counter[str] = field(default_factory=Counter)
    lineage_counts: Counter[str] = field(default_factory=Counter)
    rejects_path: str | None = None
    seconds: float = 0.0
    graph: dict[str, int] = field(default_factory=dict)
    spark_ui: str | None = None
    #: what the bulk load did (None: the graph was written by the executors)
    bulk: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        c, s, lin = self.counts, self.schema_counts, self.lineage_counts
        w = s + lin
        nodes = w["rows.upsert_datasets"] + w["rows.upsert_fields"] + w["rows.ensure_datasets"] + \
            w["rows.ensure_fields"]
        return {
            "files": self.files, "events": c["events"], "rejected": c["rejected"], "ignored": c["ignored"],
            "eventsOutOfWindow": c["eventsOutOfWindow"], "aspectChanges": c["aspectChanges"],
            "kept": c["kept"], "superseded": w["superseded"], "pastEdges": w["past_edges"],
            "schemas": s["schemas"], "schemaDeletes": s["schema_deletes"], "lineages": lin["lineages"],
            "lineageDeletes": lin["lineage_deletes"], "fieldsWritten": s["fields"],
            "fieldsRemoved": s["fields_removed"],
            "nodesWritten": nodes, "edgesWritten": w["edges"], "placeholdersCreated": lin["placeholders"],
            "placeholdersResolved": w["placeholders_resolved"],
            # the references the graph holds as ambiguous (a count of planning steps would count a reference
            # once per version and per run that met it)
            "ambiguousReferences": self.graph.get("ambiguousReferences", w["ambiguous"]),
            "refusedAtWrite": w["refusedAtWrite"], "rejectsPath": self.rejects_path, "seconds": round(self.seconds, 3),
            "eventsPerSecond": round(c["events"] / self.seconds, 1) if self.seconds else None,
            "sparkUI": self.spark_ui, "graph": self.graph,
            **({"bulk": self.bulk} if self.bulk is not None else {}),
        }


class SparkProgress:
    """Polls Spark's status tracker and calls ``report(phase, tasks done, tasks total)`` about twice a second."""

    def __init__(self, sc: Any, report: Callable[[str, int, int], None], every: float = 0.5) -> None:
        self.sc, self.report, self.every = sc, report, every
        self.phase = "starting"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="backfill-progress", daemon=True)

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self.sc.setJobDescription(phase)  # shown in the Spark UI's job list
        self.report(phase, 0, 0)

    def _run(self) -> None:
        tracker = self.sc.statusTracker()
        while not self._stop.wait(self.every):
            done = total = 0
            try:
                for sid in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(sid)
                    if info is not None:
                        done += info.numCompletedTasks
                        total += info.numTasks
            except Exception:  # the context is stopping
                return
            self.report(self.phase, done, total)

    def __enter__(self) -> SparkProgress:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


def spark_session(master: str | None = None, conf: dict[str, str] | None = None) -> Any:
    """A SparkSession for the job (``master`` None: whatever spark-submit set, else local[*]); in local mode with
    a JVM heap of :func:`local_driver_memory` unless ``conf`` sets ``spark.driver.memory``."""
    from pyspark.sql import SparkSession

    if (master or "local").startswith("local") and not os.environ.get("PYSPARK_PYTHON"):
        os.environ["PYSPARK_PYTHON"] = sys.executable  # local executors run this interpreter (fieldgraph installed)
    b = SparkSession.builder.appName("fieldgraph backfill").config("spark.ui.showConsoleProgress", "false")
    if master:
        b = b.master(master)
    elif not os.environ.get("SPARK_HOME") and "spark.master" not in (conf or {}):
        master = os.environ.get("MASTER", "local[*]")
        b = b.master(master)
    if (master or "").startswith("local") and "spark.driver.memory" not in (conf or {}):
        b = b.config("spark.driver.memory", local_driver_memory())
    for k, v in (conf or {}).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def local_driver_memory() -> str:
    """The JVM heap of a local-mode session (its driver runs the tasks too): a quarter of the machine's memory,
    from 1 to 8 GiB. Spark's own 1 GiB default runs out importing 10M fields (the parts' packed commands pass
    through it); ``--conf spark.driver.memory=...`` sets another."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return "1g"
    return f"{max(1, min(8, total // 4 >> 30))}g"


def run_backfill(opts: BackfillOptions, *, spark: Any = None,
                 progress: Callable[[str, int, int], None] | None = None) -> BackfillReport:
    """Run the backfill; returns the summary. ``spark``: an existing session (else one is made and stopped)."""
    started = time.monotonic()
    files = list_inputs(opts.paths, opts.format)
    ranks = {f: i for i, f in enumerate(files)}
    report = BackfillReport(files=len(files))
    if not is_uri(opts.rejects):  # rejected events may hold what should not be shared: a private folder
        Path(opts.rejects).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    config = opts.graph_config or GraphConfig.from_env(uri=opts.graph, name=opts.graph_name)
    bulk = BulkTarget.open(config, opts) if opts.bulk else None  # refuses a graph that is not empty, before any work
    g = None if bulk is not None else config.open(batch_size=opts.batch_size)  # the driver keeps it up
    own_spark = spark is None
    try:
        target = executor_graph(config, g.store) if g is not None else config
        spark = spark or spark_session(opts.master, opts.spark_conf)
        from pyspark import StorageLevel

        sc = spark.sparkContext
        report.spark_ui = sc.uiWebUrl
        parts = opts.partitions or max(2, sc.defaultParallelism * 2)
        fmt, since, until, vcol, batch = opts.format, opts.since, opts.until, opts.value_column, opts.batch_size
        platforms = opts.platforms or platforms_from_env()
        with SparkProgress(sc, progress or (lambda *a: None)) as prog:
            prog.set_phase("1/3 reading, decoding and reducing events")
            raw = read_inputs(sc, files, fmt, parts)
            reduced = raw.mapPartitions(lambda recs: decode_records(recs, ranks, fmt, since, until, vcol, platforms)) \
                .combineByKey(_combine, _add, lambda a, b: _add(a, (b[0], b[1])), numPartitions=parts) \
                .mapValues(_finish).persist(StorageLevel.MEMORY_AND_DISK)  # recomputed it would be decoded again
            counts = dict(reduced.filter(lambda kv: kv[0][0] == _COUNT).map(lambda kv: (kv[0][1], kv[1].payload))
                          .collect())
            report.counts.update(counts)
            kept = reduced.map(lambda kv: kv[1].kept).sum()
            report.counts["kept"] = int(kept)
            if report.counts["rejected"]:
                prog.set_phase(f"1/3 writing {report.counts['rejected']} rejects")
                rej = reduced.filter(lambda kv: kv[1].kind == REJECT).sortByKey().map(lambda kv: (kv[1].payload,))
                spark.createDataFrame(rej, "value string").coalesce(1).write.mode("append").text(opts.rejects)
                report.rejects_path = opts.rejects

            changes = reduced.filter(lambda kv: kv[1].kind == CHANGES)
            schemas = changes.filter(lambda kv: kv[0][1] in FIRST_STAGE) \
                .map(lambda kv: (kv[0][0], changes_of(kv[1])))
            lineage = changes.filter(lambda kv: kv[0][1] not in FIRST_STAGE) \
                .map(lambda kv: (kv[0][0], kv[1])).partitionBy(parts) \
                .mapValues(changes_of)
            refused: list[str] = []
            if bulk is not None:
                prog.set_phase("2/3 planning the history in parts, in memory")
                planned, plans = plan_parts(sc, changes, batch, parts)
                reduced.unpersist()  # the parts are planned (on disk): the import needs the JVM's memory
                for m in plans:
                    report.schema_counts.update(m.schema_counts)
                    report.lineage_counts.update(m.lineage_counts)
                    refused += m.refused
                report.graph = {k: sum(m.stats[k] for m in plans) for k in plans[0].stats}
                prog.set_phase("3/3 bulk-importing the graph")
                report.bulk = bulk.load(planned, plans)
                report.bulk["partNodes"] = [m.nodes for m in plans]
                planned.unpersist()
            else:
                assert g is not None
                prog.set_phase("2/3 writing schemas (datasets, fields) and queries")
                for c, r in schemas.mapPartitions(lambda it: write_changes(it, target, batch)).collect():
                    report.schema_counts.update(c)
                    refused += r
                if report.schema_counts["placeholderMoves"]:
                    g.writer().cleanup_placeholders()

                prog.set_phase("3/3 resolving and writing lineage")
                for c, r in lineage.mapPartitions(lambda it: write_changes(it, target, batch)).collect():
                    report.lineage_counts.update(c)
                    refused += r
                prog.set_phase("cleaning up placeholders")
                g.writer().cleanup_placeholders()
            if refused:
                spark.createDataFrame([(line,) for line in refused], "value string").coalesce(1).write \
                    .mode("append").text(opts.rejects)
                report.rejects_path = opts.rejects
            reduced.unpersist()
        if g is not None:
            report.graph = g.stats().to_json()
    finally:
        if g is not None:
            g.close()
        if bulk is not None:
            bulk.close()
        if own_spark and spark is not None:
            spark.stop()
    report.seconds = time.monotonic() - started
    return report


# --- the bulk backfill: the history planned in memory, its snapshot imported -------------------------------


def plan_stages(store: GraphStore, schemas: Sequence[tuple[str, list[Change]]],
                lineage: Sequence[tuple[str, list[Change]]], batch_size: int
                ) -> tuple[Counter[str], Counter[str], list[str], dict[str, int]]:
    """Stages 2 and 3 on the driver, into ``store`` (the in-memory store): what the executors write, in the same
    order (schemas, placeholder cleanup, lineage, cleanup). Returns the schema and lineage counts, the refusals
    and the graph's stats."""
    store.batch_size = batch_size
    writer = Writer(store, WriteMode.BACKFILL)
    s_counts: Counter[str] = Counter()
    l_counts: Counter[str] = Counter()
    refused: list[str] = []
    write_groups(writer, schemas, s_counts, refused)
    if s_counts["placeholderMoves"]:
        writer.cleanup_placeholders()
    write_groups(writer, lineage, l_counts, refused)
    writer.cleanup_placeholders()
    return s_counts, l_counts, refused, LineageGraph(store).stats().to_json()


#: pickled changes per part of a bulk backfill: a part is planned in one task's memory (about 7 KB per field of
#: the benchmark's history, whose fields take 375 bytes pickled: a part of this size, 64k fields, takes 0.5 GB)
PART_BYTES = 24 << 20


@dataclass(frozen=True)
class PartPlan:
    """What planning one part of a bulk backfill gave, besides its graph."""

    index: int
    schema_counts: Counter[str]
    lineage_counts: Counter[str]
    refused: list[str]
    stats: dict[str, int]
    nodes: int
    edges: int
    #: the array delimiters some list element holds (Neo4j's import files need one no element holds)
    delimiters: set[str]


def plan_parts(sc: Any, changes: Any, batch_size: int, min_parts: int) -> tuple[Any, list[PartPlan]]:
    """Plan the decoded ``changes`` (an RDD of ((dataset, aspect), Reduced)) in parts that share no node
    (:mod:`fieldgraph.graph.partition`), each in a task's in-memory store, in parallel. Returns the persisted RDD
    of the parts' graphs (``(1, pickled graph)`` in part ``i``'s partition ``i``: :func:`part_snapshot`) and the
    parts' plans, in order."""
    from pyspark import StorageLevel

    keyed = changes.map(lambda kv: (kv[0], sorted(part_keys(changes_of(kv[1]))), sum(map(len, kv[1].payload)))) \
        .collect()
    n = max(min_parts, -(-sum(w for _, _, w in keyed) // PART_BYTES))
    where = sc.broadcast(assign_parts(keyed, n))
    planned = changes.map(lambda kv: (where.value[kv[0]], (kv[0], kv[1]))) \
        .partitionBy(n, lambda p: p) \
        .mapPartitionsWithIndex(lambda i, items: plan_part(i, items, batch_size)) \
        .persist(StorageLevel.DISK_ONLY)
    plans = sorted(planned.filter(lambda x: x[0] == 0).map(lambda x: x[1]).collect(), key=lambda m: m.index)
    where.destroy()
    return planned, plans


def plan_part(index: int, items: Iterable[tuple[int, tuple[tuple[str, str], Reduced]]], batch_size: int
              ) -> Iterator[tuple[int, Any]]:
    """One part (a task): its (dataset, aspect) groups planned as the executors write them (:func:`plan_stages`)
    into an in-memory store. Yields ``(0, PartPlan)``, then ``(1, pickled graph)`` (pickled here, so that reading
    the plans back does not unpickle the graphs)."""
    with gc_paused():  # the part's graph is millions of objects that live until the task ends
        groups = sorted(((key, changes_of(r)) for _, (key, r) in items), key=lambda g: g[0])
        schemas = [(key[0], cs) for key, cs in groups if key[1] in FIRST_STAGE]
        lineage = [(key[0], cs) for key, cs in groups if key[1] not in FIRST_STAGE]
        del groups
        snapshot, (s_counts, l_counts, refused, stats) = build_snapshot(
            lambda store: plan_stages(store, schemas, lineage, batch_size))
        plan = PartPlan(index, s_counts, l_counts, refused, stats, len(snapshot.nodes), len(snapshot.edges),
                        delimiters_used(snapshot))
        rows = pickle.dumps(([(n.id, n.label, n.props) for n in snapshot.nodes],
                             [(e.start, e.type, e.end, e.props) for e in snapshot.edges]), pickle.HIGHEST_PROTOCOL)
        del snapshot
    yield 0, plan
    yield 1, rows


def part_snapshot(blob: bytes) -> Snapshot:
    """A part's graph, from what :func:`plan_part` yields."""
    nodes, edges = pickle.loads(blob)
    return Snapshot([NodeRow(*n) for n in nodes], [EdgeRow(*e) for e in edges])


def _is_neo4j(uri: str) -> bool:
    return "://" in uri and uri.split("://", 1)[0].lower() in NEO4J_SCHEMES


class BulkTarget:
    """Where a bulk backfill's graph goes, checked to be empty before any work (:class:`GraphNotEmpty`).

    FalkorDB (embedded or a server): GRAPH.BULK, then its indexes and constraints. Neo4j: the import files in
    ``bulk_dir``; with ``neo4j_home`` (the server stopped) the import runs here, else the command is reported for
    the user to run once they have stopped the server (fieldgraph does not stop a user's database)."""

    def __init__(self, config: GraphConfig, opts: BackfillOptions, graph: LineageGraph | None) -> None:
        self.config, self.opts, self.graph = config, opts, graph
        query = parse_qs(urlsplit(config.uri).query) if _is_neo4j(config.uri) else {}
        self.database = query.get("database", [config.database or "neo4j"])[0]

    @classmethod
    def open(cls, config: GraphConfig, opts: BackfillOptions) -> BulkTarget:
        if _is_neo4j(config.uri) and opts.neo4j_home:
            target = cls(config, opts, None)
            db = Path(opts.neo4j_home) / "data" / "databases" / target.database
            if db.exists():  # a stopped server cannot be asked whether it holds a graph, and the import replaces it
                raise GraphNotEmpty(
                    f"{db} exists: fieldgraph cannot tell whether the stopped server's database holds a graph, and "
                    f"the import would replace it. {ADVICE.capitalize()} (with the server stopped, delete {db} and "
                    f"{Path(opts.neo4j_home) / 'data' / 'transactions' / target.database}), or run without "
                    "--neo4j-home while the server runs: the empty graph is checked, the files written and the "
                    "import command printed")
            return target
        graph = config.open(batch_size=opts.batch_size, schema=False)
        try:
            check_empty(graph.store)
        except BaseException:
            graph.close()
            raise
        return cls(config, opts, graph)

    def load(self, planned: Any, plans: Sequence[PartPlan]) -> dict[str, Any]:
        """Import the planned parts (:func:`plan_parts`): each part's graph is packed for the importer in its own
        task, in parallel (FalkorDB: its GRAPH.BULK commands, sent by the driver in order; Neo4j: its import files
        in ``bulk_dir``, which the importer must see), its nodes numbered on from the parts before. What was done,
        for the report."""
        from pyspark import StorageLevel

        started = time.monotonic()
        offsets = list(accumulate((m.nodes for m in plans), initial=0))
        graphs = planned.filter(lambda x: x[0] == 1).map(lambda x: x[1])
        if self.graph is not None and isinstance(self.graph.store, FalkorStore):
            packed = graphs.mapPartitionsWithIndex(
                lambda i, blobs: (args for b in blobs for args in falkordb_bulk_commands(
                    part_snapshot(b), offset=offsets[i], first=i == 0))).persist(StorageLevel.DISK_ONLY)
            packed.count()  # packed in parallel, then sent in order
            nodes, edges = send_falkordb(packed.toLocalIterator(prefetchPartitions=True), self.graph.store)
            packed.unpersist()
            return {"importer": "GRAPH.BULK", "nodes": nodes, "edges": edges,
                    "seconds": round(time.monotonic() - started, 3)}
        folder = str(Path(self.opts.bulk_dir).absolute())
        delimiter = array_delimiter(set().union(*(m.delimiters for m in plans)))
        files = Neo4jImport.merged(graphs.mapPartitionsWithIndex(
            lambda i, blobs: (write_neo4j_import(part_snapshot(b), folder, delimiter=delimiter, offset=offsets[i],
                                                 first_part=i) for b in blobs)).collect())
        out: dict[str, Any] = {"importer": "neo4j-admin database import full", "files": str(files.folder),
                               "nodes": files.node_count, "edges": files.edge_count, "database": self.database}
        if self.opts.neo4j_home:
            admin = shlex.split(self.opts.neo4j_admin) if self.opts.neo4j_admin else None
            import_neo4j(files, self.opts.neo4j_home, database=self.database, admin=admin)
            out["imported"] = True
        else:
            out["imported"] = False
            out["command"] = files.command(self.database)
        out["seconds"] = round(time.monotonic() - started, 3)
        return out

    def close(self) -> None:
        if self.graph is not None:
            self.graph.close()


# --- spark-submit / python -m entry point ------------------------------------------------------------------


if __name__ == "__main__":
    # spark-submit runs this file as a script (and `python -m fieldgraph.ingest.backfill`): it is
    # `fieldgraph backfill`, the installed command, so executors import fieldgraph by name
    from fieldgraph.ingest.cli import main

    sys.exit(main(["backfill", *sys.argv[1:]], prog_name="fieldgraph"))
