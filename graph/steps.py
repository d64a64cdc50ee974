"""The plan: what one batch writes, as typed steps. The planner (:mod:`fieldgraph.graph.plan`) fills it; appliers
consume it: the Cypher applier (:meth:`fieldgraph.graph.store.GraphStore.apply`, one ``UNWIND`` statement per step
and batch of rows, FalkorDB and Neo4j), the in-memory store, and the bulk load (which applies plans in memory and
imports the result).

Each :class:`Step` names a statement of ``cypher/`` (its value is the file's name) and :class:`Plan` holds one list
of rows per step, each row a ``TypedDict`` that mypy checks where the planner builds it. Steps run in the order
:data:`STEP_ORDER` gives. Counts of what a plan does are read from it in one place, :attr:`Plan.counts`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypedDict


class Step(StrEnum):
    """The write statements, in the order a plan runs them (each the name of a file in ``cypher/``)."""

    UPSERT_DATASETS = "upsert_datasets"
    SET_EDITABLE_LABELS = "set_editable_labels"
    # fields: archive the state a field leaves (appending), or rewrite its timeline (replaying)
    ARCHIVE_FIELD_STATES = "archive_field_states"
    CLEAR_FIELD_STATES = "clear_field_states"
    UPSERT_FIELDS = "upsert_fields"
    SET_FIELD_PROPS = "set_field_props"
    SET_LISTED_FROM = "set_listed_from"
    CREATE_FIELD_STATES = "create_field_states"
    # placeholders resolved by a schema: their edges, current and past, move to the real field
    MOVE_OUT_EDGES = "move_out_edges"
    MOVE_IN_EDGES = "move_in_edges"
    MOVE_PAST_OUT_EDGES = "move_past_out_edges"
    MOVE_PAST_IN_EDGES = "move_past_in_edges"
    MOVE_OUT_RENAMES = "move_out_renames"
    MOVE_IN_RENAMES = "move_in_renames"
    DELETE_FIELDS = "delete_fields"
    # lineage: close what a new version drops (appending), or clear the aspect's edges to rewrite them (replaying)
    CLOSE_LINEAGE = "close_lineage"
    CLEAR_LINEAGE = "clear_lineage"
    CLEAR_JOB_LINEAGE = "clear_job_lineage"
    CLOSE_QUERY_LINEAGE = "close_query_lineage"
    DROP_QUERY_LINEAGE = "drop_query_lineage"
    ENSURE_DATASETS = "ensure_datasets"
    ENSURE_FIELDS = "ensure_fields"
    MERGE_FIELD_EDGES = "merge_field_edges"
    MERGE_DATASET_EDGES = "merge_dataset_edges"
    MERGE_JOB_EDGES = "merge_job_edges"
    # lineage drawn by hand: drawn (if it does not hold), removed (kept as a past edge)
    MERGE_MANUAL_EDGES = "merge_manual_edges"
    CLOSE_MANUAL_EDGES = "close_manual_edges"
    # renames: a schema's are rewritten with its timeline (replaying); each is a RenamedFrom edge
    CLEAR_SCHEMA_RENAMES = "clear_schema_renames"
    MERGE_RENAMES = "merge_renames"
    # DataHub queries: their statements, and the queries a dataset's upstreamLineage names (graph/sql.py)
    UPSERT_QUERIES = "upsert_queries"
    UNLINK_LINEAGE_QUERIES = "unlink_lineage_queries"
    LINK_LINEAGE_QUERIES = "link_lineage_queries"
    # DataHub data jobs: the version each holds, and the datasets its edges go into
    UPSERT_DATA_JOBS = "upsert_data_jobs"
    # job runs (CDAP): each run, its operations stored once per checksum, the datasets it read and wrote
    CLEAR_JOB_RUNS = "clear_job_runs"
    MERGE_JOB_RUNS = "merge_job_runs"
    LINK_RUN_SOURCES = "link_run_sources"
    LINK_RUN_DESTINATIONS = "link_run_destinations"
    CREATE_PAST_FIELD_EDGES = "create_past_field_edges"
    CREATE_PAST_DATASET_EDGES = "create_past_dataset_edges"
    MARK_DROPPED = "mark_dropped"
    # placeholders left without edges by a step that removes nodes or edges
    CLEANUP_PLACEHOLDER_FIELDS = "cleanup_placeholder_fields"
    CLEANUP_PLACEHOLDER_DATASETS = "cleanup_placeholder_datasets"


#: the order a plan's steps run in
STEP_ORDER: tuple[Step, ...] = tuple(Step)
#: steps that remove nodes or edges, after which placeholders left without edges are cleaned up
REMOVING = (Step.DELETE_FIELDS, Step.CLOSE_LINEAGE, Step.CLEAR_LINEAGE, Step.CLEAR_JOB_LINEAGE,
            Step.CLOSE_QUERY_LINEAGE, Step.DROP_QUERY_LINEAGE, Step.CLOSE_MANUAL_EDGES)
CLEANUP = (Step.CLEANUP_PLACEHOLDER_FIELDS, Step.CLEANUP_PLACEHOLDER_DATASETS)


# --- rows (each step's parameters, as its statement reads them) ---------------------------------------------


class NodeRow(TypedDict):
    """A dataset (``upsert_datasets``, ``ensure_datasets``): its URN and the properties set."""

    urn: str
    props: dict[str, Any]


class EditableLabelsRow(TypedDict):
    urn: str
    ts: int
    unstamped: bool
    #: JSON of ``[[field path, [labels]]]``; None: none
    labels: str | None


class ArchiveRow(TypedDict):
    """A field's state ends at ``at``; ``stateKey`` None: only ``removed`` changes."""

    urn: str
    at: int
    stateKey: str | None
    removed: bool


class DatasetRow(TypedDict):
    datasetUrn: str


class FieldRow(TypedDict):
    """A field of a dataset and its properties (``upsert_fields``: with ``at``, the version's time)."""

    datasetUrn: str
    urn: str
    props: dict[str, Any]


class UpsertFieldRow(FieldRow):
    at: int


class PropsRow(TypedDict):
    """Properties set on a node by URN (``set_field_props``; a FieldState's on ``create_field_states``)."""

    urn: str
    props: dict[str, Any]


class ListedFromRow(TypedDict):
    urn: str
    listedFrom: int


#: a placeholder's edges moved to the field it resolved to
MoveRow = TypedDict("MoveRow", {"from": str, "to": str})


class UrnRow(TypedDict):
    urn: str


class CloseLineageRow(TypedDict):
    """The edges of ``source`` into the dataset that ``keep`` (``[down, up, fact]``) does not list end at ``at``."""

    datasetUrn: str
    source: str
    at: int
    keep: list[list[str]]


class SourceRow(TypedDict):
    datasetUrn: str
    source: str


class QueryEndRow(TypedDict):
    """Query-derived edges into the dataset stop holding at ``at``: those of queries not in ``keep``, or (with
    ``only``) those of that one query."""

    datasetUrn: str
    at: int
    keep: list[str]
    only: str | None


class EdgeRow(TypedDict):
    """An edge that holds now (``merge_field_edges``, ``merge_dataset_edges``)."""

    down: str
    up: str
    source: str
    fact: str
    validFrom: int
    props: dict[str, Any]


class RenameRow(TypedDict):
    """A rename (``merge_renames``): the field ``old`` is called ``new`` from ``validFrom``."""

    new: str
    old: str
    validFrom: int
    props: dict[str, Any]


class JobEdgeRow(TypedDict):
    down: str
    up: str
    source: str
    firstSeen: int
    lastSeen: int
    props: dict[str, Any]


class ManualEdgeRow(TypedDict):
    """An edge drawn by hand at ``at`` (``merge_manual_edges``: with its properties)."""

    down: str
    up: str
    at: int
    props: dict[str, Any]


class ManualEndRow(TypedDict):
    """An edge drawn by hand removed at ``at`` by ``by`` (``close_manual_edges``)."""

    down: str
    up: str
    at: int
    by: str | None


class PastEdgeRow(TypedDict):
    down: str
    up: str
    props: dict[str, Any]


class QueryRow(TypedDict):
    urn: str
    statement: str
    language: str
    ts: int


class LinkQueryRow(TypedDict):
    datasetUrn: str
    query: str
    upstreams: list[str]


class DataJobRow(TypedDict):
    urn: str
    ts: int
    outputs: list[str]


class RunRow(TypedDict):
    job: str
    run: str


class JobRunRow(RunRow):
    time: int
    checksum: str
    operations: str


class RunLinkRow(RunRow):
    urn: str


class DroppedRow(TypedDict):
    urn: str
    entry: str


class NoRow(TypedDict):
    """A step that runs once, with no parameters (the placeholder cleanups)."""


# --- the plan ----------------------------------------------------------------------------------------------


@dataclass
class Plan:
    """One batch's writes: a list of rows per :class:`Step` (the attribute of the step's name), and ``tally``, the
    planner's decisions (schemas written, versions superseded or replayed, ...) that the rows do not show."""

    upsert_datasets: list[NodeRow] = field(default_factory=list)
    set_editable_labels: list[EditableLabelsRow] = field(default_factory=list)
    archive_field_states: list[ArchiveRow] = field(default_factory=list)
    clear_field_states: list[DatasetRow] = field(default_factory=list)
    upsert_fields: list[UpsertFieldRow] = field(default_factory=list)
    set_field_props: list[PropsRow] = field(default_factory=list)
    set_listed_from: list[ListedFromRow] = field(default_factory=list)
    create_field_states: list[PropsRow] = field(default_factory=list)
    move_out_edges: list[MoveRow] = field(default_factory=list)
    move_in_edges: list[MoveRow] = field(default_factory=list)
    move_past_out_edges: list[MoveRow] = field(default_factory=list)
    move_past_in_edges: list[MoveRow] = field(default_factory=list)
    move_out_renames: list[MoveRow] = field(default_factory=list)
    move_in_renames: list[MoveRow] = field(default_factory=list)
    delete_fields: list[UrnRow] = field(default_factory=list)
    close_lineage: list[CloseLineageRow] = field(default_factory=list)
    clear_lineage: list[SourceRow] = field(default_factory=list)
    clear_job_lineage: list[DatasetRow] = field(default_factory=list)
    close_query_lineage: list[QueryEndRow] = field(default_factory=list)
    drop_query_lineage: list[QueryEndRow] = field(default_factory=list)
    ensure_datasets: list[NodeRow] = field(default_factory=list)
    ensure_fields: list[FieldRow] = field(default_factory=list)
    merge_field_edges: list[EdgeRow] = field(default_factory=list)
    merge_dataset_edges: list[EdgeRow] = field(default_factory=list)
    merge_job_edges: list[JobEdgeRow] = field(default_factory=list)
    merge_manual_edges: list[ManualEdgeRow] = field(default_factory=list)
    close_manual_edges: list[ManualEndRow] = field(default_factory=list)
    clear_schema_renames: list[DatasetRow] = field(default_factory=list)
    merge_renames: list[RenameRow] = field(default_factory=list)
    upsert_queries: list[QueryRow] = field(default_factory=list)
    unlink_lineage_queries: list[DatasetRow] = field(default_factory=list)
    link_lineage_queries: list[LinkQueryRow] = field(default_factory=list)
    upsert_data_jobs: list[DataJobRow] = field(default_factory=list)
    clear_job_runs: list[RunRow] = field(default_factory=list)
    merge_job_runs: list[JobRunRow] = field(default_factory=list)
    link_run_sources: list[RunLinkRow] = field(default_factory=list)
    link_run_destinations: list[RunLinkRow] = field(default_factory=list)
    create_past_field_edges: list[PastEdgeRow] = field(default_factory=list)
    create_past_dataset_edges: list[PastEdgeRow] = field(default_factory=list)
    mark_dropped: list[DroppedRow] = field(default_factory=list)
    cleanup_placeholder_fields: list[NoRow] = field(default_factory=list)
    cleanup_placeholder_datasets: list[NoRow] = field(default_factory=list)
    tally: Counter[str] = field(default_factory=Counter)
    #: ambiguous references: (dataset urn, reference, candidate field paths)
    ambiguous: list[tuple[str, str, list[str]]] = field(default_factory=list)

    def rows(self, step: Step) -> Sequence[Any]:
        """The rows of ``step``."""
        rows: Sequence[Any] = getattr(self, step.value)
        return rows

    def steps(self) -> Iterator[tuple[Step, Sequence[Any]]]:
        """The steps with rows, in the order they run."""
        for step in STEP_ORDER:
            rows = self.rows(step)
            if rows:
                yield step, rows

    def __bool__(self) -> bool:
        """Whether the plan writes anything (a step with rows)."""
        return any(True for _ in self.steps())

    def edge_keys(self) -> set[tuple[str, str, str]]:
        """(down, up, source) of every field and dataset lineage edge the plan merges."""
        return {(r["down"], r["up"], r["source"]) for rows in (self.merge_field_edges, self.merge_dataset_edges)
                for r in rows}

    @property
    def counts(self) -> Counter[str]:
        """What the plan does, counted: the planner's tally and what its rows show (fields written, edges merged,
        past edges, placeholders resolved, ambiguous references)."""
        counts = Counter(self.tally)
        counts.update(fields=len(self.upsert_fields),
                      edges=len(self.merge_field_edges) + len(self.merge_dataset_edges) + len(self.merge_job_edges),
                      past_edges=len(self.create_past_field_edges) + len(self.create_past_dataset_edges),
                      placeholders_resolved=len(self.delete_fields), ambiguous=len(self.ambiguous),
                      renames=len(self.merge_renames))
        return +counts

    def without_cleanup(self) -> Plan:
        """This plan without its placeholder cleanups (a copy: a plan is never changed by applying it)."""
        out = Plan(**{f.name: getattr(self, f.name) for f in fields(self)})
        out.cleanup_placeholder_fields, out.cleanup_placeholder_datasets = [], []
        return out


@dataclass
class Summary:
    """What several plans did: their counts added up and their ambiguous references."""

    counts: Counter[str] = field(default_factory=Counter)
    ambiguous: list[tuple[str, str, list[str]]] = field(default_factory=list)

    def add(self, plan: Plan | Summary) -> None:
        self.counts.update(plan.counts)
        self.ambiguous.extend(plan.ambiguous)
