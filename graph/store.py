"""Graph stores: one small interface over embedded FalkorDB, a FalkorDB server and Neo4j.

``open_store(uri)`` picks the backend from the URI (``--graph``; read at the edge, see
``fieldgraph.ingest.config.GraphConfig``):

- ``embedded`` or ``embedded:PATH`` (default; data folder ``.fieldgraph/`` or ``data_dir``)
- ``falkordb://[:password@]host:port[/graph]`` (a FalkorDB server) or ``falkordb+unix:///path/to/sock[?graph=g]``
- ``bolt://``, ``bolt+s://``, ``neo4j://``, ``neo4j+s://`` (Neo4j; user, password and database from the URI
  or the ``user``/``password``/``database`` arguments)
- ``memory`` (a new, empty graph held in this process: :mod:`fieldgraph.graph.memory`)

Every store runs the statements in ``cypher/``; rows are written in batches of ``batch_size``,
one round-trip (and for Neo4j one managed write transaction, retried on transient errors) per batch.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from fieldgraph.errors import FieldgraphError, require

from . import cypher as cy
from .embedded import EmbeddedServer
from .errors import (
    GraphError,
    GraphRefused,
    GraphUnavailable,
    GraphURIError,
    LockKeysError,
    NotFoundError,
    QueryTimeout,
)
from .snapshot import Snapshot, snapshot_rows

DEFAULT_GRAPH = "fieldgraph"
DEFAULT_BATCH = 2000
DRIVER_RETRY_S = 5.0
#: a FalkorDB writer lock lives this long unless its holder renews it (a third of it apart): a writer that
#: died without releasing it holds it up to this long
WRITER_TTL_MS = 30_000
WRITER_WAIT_REPORT_S = 10.0
#: tries to take Neo4j writer locks (a deadlock Neo4j detects among them is retried)
MAX_LOCK_ATTEMPTS = 5
#: take the writer keys KEYS (sorted) for token ARGV[1] with time to live ARGV[2] ms, in order, up to the first
#: another writer holds: returns how many are now held (the caller waits for the next one and goes on from there)
_ACQUIRE = """
for i, k in ipairs(KEYS) do
  if not redis.call('set', k, ARGV[1], 'NX', 'PX', ARGV[2]) then return i - 1 end
end
return #KEYS"""
#: renew / release the writer keys only while they still hold this writer's token; returns how many did
_RENEW = """
local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('get', k) == ARGV[1] then n = n + redis.call('pexpire', k, ARGV[2]) end
end
return n"""
_RELEASE = """
local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('get', k) == ARGV[1] then n = n + redis.call('del', k) end
end
return n"""

log = logging.getLogger(__name__)


class GraphStore(ABC):
    backend: str = ""
    batch_size: int = DEFAULT_BATCH

    @abstractmethod
    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False,
            timeout_ms: int | None = None) -> list[dict[str, Any]]:
        """Run one statement; rows as dicts of plain Python values."""

    def run_rows(self, cypher: str, rows: Sequence[Mapping[str, Any]], batch_size: int | None = None) -> None:
        """Run an ``UNWIND $rows`` statement over ``rows`` in batches."""
        n = batch_size or self.batch_size
        for i in range(0, len(rows), n):
            self.run(cypher, {"rows": list(rows[i:i + n])}, write=True)

    def run_named(self, name: str, params: Mapping[str, Any] | None = None, **kw: Any) -> list[dict[str, Any]]:
        return self.run(cy.statement(name), params, **kw)

    def run_step(self, name: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Apply one step of a plan: the named write statement over ``rows`` (one that reads no rows runs once)."""
        stmt = cy.statement(name)
        if "$rows" in stmt:
            self.run_rows(stmt, rows)
        else:
            self.run(stmt, write=True)

    def read_state(self, urns: Sequence[str]) -> list[list[Any]]:
        """Compact dataset state rows for the planner (see ``cypher/read_state.cypher``)."""
        return [r["state"] for r in self.run(cy.statement("read_state"), {"urns": list(urns)})]

    def snapshot(self) -> Snapshot:
        """The whole graph as plain data (:mod:`fieldgraph.graph.snapshot`): for comparing graphs and exporting."""
        return snapshot_rows(self.run_named("snapshot_nodes"), self.run_named("snapshot_edges"))

    @contextmanager
    def reading(self, timeout_ms: int | None = None) -> Iterator[None]:
        """Reads that belong together (a walk's steps); a store may run them in one read transaction.
        Here: each on its own."""
        yield

    #: seconds this store's writers spent taking writer locks (waiting for other writers, and the round trips)
    lock_wait_s: float = 0.0

    @contextmanager
    def sole_writer(self, keys: Iterable[str]) -> Iterator[None]:
        """Hold the writer locks of ``keys`` (the datasets, queries and jobs a batch reads and writes): a writer
        holding a key excludes every other writer of that key, across processes and machines, so a batch is
        planned against a state no other writer changes before it is written; writers whose keys are disjoint
        write at the same time. Keys are taken in sorted order, so two writers never wait for each other's keys
        (no deadlock). Reentrant within a thread for keys already held (more keys: :class:`LockKeysError`);
        released when the holder ends, or dies."""
        wanted = frozenset(keys)
        local = self._writer_local
        depth = getattr(local, "depth", 0)
        if depth:
            if not wanted <= local.keys:
                raise LockKeysError(wanted - local.keys)
        else:
            start = time.monotonic()
            try:
                self._lock_writer(sorted(wanted))
            finally:
                self.lock_wait_s += time.monotonic() - start
            local.keys = wanted
        local.depth = depth + 1
        try:
            yield
        finally:
            local.depth = depth
            if depth == 0:
                local.keys = None
                self._unlock_writer()

    def held_keys(self) -> frozenset[str] | None:
        """The writer lock keys this thread holds (None: it holds no writer lock)."""
        return getattr(self._writer_local, "keys", None)

    @property
    def _writer_local(self) -> threading.local:
        local: threading.local | None = self.__dict__.get("_writer_state")
        if local is None:
            local = self.__dict__.setdefault("_writer_state", threading.local())
        return local

    def _lock_writer(self, keys: list[str]) -> None:
        """Take the locks of ``keys`` (sorted), waiting for their holders."""
        return None

    def locks_unbroken(self) -> bool:
        """Whether this thread holds its writer locks unbroken since it took them (a lock can end under a holder that
        stalls, or whose connection drops): then no other writer changed what they cover meanwhile. One round trip;
        False when it holds none, or cannot tell."""
        return False

    def _unlock_writer(self) -> None:
        return None

    @abstractmethod
    def ensure_schema(self) -> None:
        """Create the indexes and constraints (idempotent)."""

    @abstractmethod
    def clear(self) -> None:
        """Delete the whole graph."""

    def close(self) -> None:
        return None

    def describe(self) -> str:
        return self.backend

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# --- FalkorDB -----------------------------------------------------------------------------------------


def _plain(v: Any) -> Any:
    """FalkorDB client values (Node, Edge, Path, OrderedDict) as plain Python values."""
    from falkordb import Edge, Node, Path

    if isinstance(v, Node):
        return {"labels": sorted(v.labels or []), **dict(v.properties)}
    if isinstance(v, Edge):
        return {"type": v.relation, **dict(v.properties)}
    if isinstance(v, Path):
        return {"nodes": [_plain(n) for n in v.nodes()], "edges": [_plain(e) for e in v.edges()]}
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


#: FalkorDB reports its own errors (a statement it refuses or stopped, a constraint violated) as a redis
#: ``ResponseError`` that carries a message only: no code and no type of its own tells them apart. These words
#: of its messages (lowercased) are all there is, and this table is the one place fieldgraph reads them.
FALKORDB_MESSAGES: dict[str, tuple[str, ...]] = {
    "no graph": ("empty key", "invalid graph"),  # the graph does not exist (yet): reading or deleting it
    "timeout": ("timed out",),  # the statement went over its timeout
    "conflict": ("unique constraint",),  # a concurrent writer created the node first
    "exists": ("already indexed", "already exists"),  # an index or constraint another opener created meanwhile
}


def falkordb_says(exc: BaseException | None, kind: str) -> bool:
    """Whether ``exc`` is FalkorDB's error of ``kind`` (a key of :data:`FALKORDB_MESSAGES`)."""
    from redis.exceptions import ResponseError

    return isinstance(exc, ResponseError) and any(w in str(exc).lower() for w in FALKORDB_MESSAGES[kind])


def falkordb_error(exc: Exception, where: str, cypher: str = "", timeout_ms: int | None = None) -> GraphError:
    """FalkorDB's or its client's error as fieldgraph's, for the caller to raise ``from exc``: by the client's
    types, GraphUnavailable for a lost or refused connection (a server down, loading, restarting); by
    :data:`FALKORDB_MESSAGES`, QueryTimeout for a statement over ``timeout_ms`` and GraphUnavailable for a write
    that lost to a concurrent one; GraphRefused for any other statement the server refused, and for parameters
    the client cannot send (a value FalkorDB cannot hold)."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import ResponseError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    if isinstance(exc, (RedisConnectionError, RedisTimeoutError, OSError)):  # BusyLoadingError is a ConnectionError
        return GraphUnavailable(f"{where}: {type(exc).__name__}: {exc}")
    if falkordb_says(exc, "timeout"):
        return QueryTimeout(f"query exceeded its time budget of {timeout_ms} ms")
    if falkordb_says(exc, "conflict"):
        return GraphUnavailable(f"{where}: a write conflicted with a concurrent one: {exc}")
    if isinstance(exc, ResponseError):
        return GraphRefused(f"{where} refused the statement: {exc}\n  {_first_line(cypher)}")
    return GraphRefused(f"{where}: {type(exc).__name__}: {exc}")


def _first_line(cypher: str) -> str:
    return cypher.splitlines()[0][:120] if cypher else ""


class FalkorStore(GraphStore):
    backend = "falkordb"

    def __init__(self, *, graph: str = DEFAULT_GRAPH, unix_socket: str | None = None, host: str = "localhost",
                 port: int = 6379, password: str | None = None, server: EmbeddedServer | None = None,
                 batch_size: int = DEFAULT_BATCH) -> None:
        from falkordb import FalkorDB

        self.server = server
        self.graph_name = graph
        self.batch_size = batch_size
        self.where = f"embedded FalkorDB in {server.data_dir}" if server else (
            f"FalkorDB at {unix_socket}" if unix_socket else f"FalkorDB at {host}:{port}")
        try:
            if unix_socket:
                self.db = FalkorDB(unix_socket_path=unix_socket, password=password)
            else:
                self.db = FalkorDB(host=host, port=port, password=password)
            self.db.connection.ping()
        except Exception as exc:
            raise GraphUnavailable(f"cannot reach {self.where}: {exc}") from exc
        self.graph = self.db.select_graph(graph)

    def describe(self) -> str:
        return f"{self.where}, graph {self.graph_name!r}"

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False,
            timeout_ms: int | None = None) -> list[dict[str, Any]]:
        try:
            if write:
                res = self.graph.query(cypher, dict(params or {}), timeout=timeout_ms)
            else:
                res = self.graph.ro_query(cypher, dict(params or {}), timeout=timeout_ms)
        except Exception as exc:
            if not write and falkordb_says(exc, "no graph"):
                return []  # the graph does not exist yet: nothing to read
            raise falkordb_error(exc, self.describe(), cypher, timeout_ms) from exc
        if not res.header:
            return []
        cols = [h[1] if isinstance(h, (list, tuple)) else h for h in res.header]
        cols = [c.decode() if isinstance(c, bytes) else c for c in cols]
        return [dict(zip(cols, (_plain(v) for v in row), strict=False)) for row in res.result_set]

    def writer_key(self, key: str) -> str:
        """The redis key of a writer lock key: one per graph and key (hashed: URNs are long)."""
        return f"fieldgraph:writer:{self.graph_name}:{hashlib.sha1(key.encode()).hexdigest()}"

    def _lock_writer(self, keys: list[str]) -> None:
        """``SET NX PX`` of one redis key per lock key, in sorted order (one script call takes them up to the
        first another writer holds; then that one is waited for), with a time to live one thread renews for all
        of them while they are held."""
        import uuid

        rkeys, token = [self.writer_key(k) for k in keys], uuid.uuid4().hex
        waited = last_report = time.monotonic()
        conn = self.db.connection
        acquire = conn.register_script(_ACQUIRE)
        held = 0
        try:
            while held < len(rkeys):
                rest = rkeys[held:]
                got = int(self._redis(lambda: acquire(keys=rest, args=[token, WRITER_TTL_MS])))  # noqa: B023
                held += got
                if held < len(rkeys) and not got:
                    if time.monotonic() - last_report >= WRITER_WAIT_REPORT_S:
                        last_report = time.monotonic()
                        log.info("waiting for another writer of %s (%.0f s)", self.describe(), last_report - waited)
                    time.sleep(0.002)  # a holder writing batch after batch releases it between them for a moment
        except BaseException:
            self._release(rkeys[:held], token)
            raise
        stop = threading.Event()
        renew = conn.register_script(_RENEW)

        def keep() -> None:
            while not stop.wait(WRITER_TTL_MS / 3000):
                try:
                    n = renew(keys=rkeys, args=[token, WRITER_TTL_MS])
                except Exception:  # noqa: BLE001 - unreachable: the lock expires, the batch's writes fail anyway
                    continue
                if n < len(rkeys):
                    log.warning("the writer lock of %s expired before its batch ended (the process stalled for "
                                "%d s?): a batch planned meanwhile by another writer may have raced this one",
                                self.describe(), WRITER_TTL_MS // 1000)
                    return

        thread = threading.Thread(target=keep, name="fieldgraph-writer-lock", daemon=True)
        thread.start()
        self._writer_local.held = (rkeys, token, stop, thread, renew)

    def locks_unbroken(self) -> bool:
        """Renewing every key with this holder's token renews them all: none expired (an expired key is gone, or
        another writer's, and the token is this holder's alone), so they were held throughout."""
        held = getattr(self._writer_local, "held", None)
        if self.held_keys() is None or held is None:
            return False
        rkeys, token, _, _, renew = held
        try:
            return int(self._redis(lambda: renew(keys=rkeys, args=[token, WRITER_TTL_MS]))) == len(rkeys)
        except FieldgraphError:
            return False

    def _unlock_writer(self) -> None:
        rkeys, token, stop, thread, _ = self._writer_local.held
        stop.set()
        thread.join()
        self._release(rkeys, token)

    def _release(self, rkeys: list[str], token: str) -> None:
        if not rkeys:
            return
        release = self.db.connection.register_script(_RELEASE)
        with suppress(Exception):  # not released: they expire
            release(keys=rkeys, args=[token])

    def _redis(self, call: Any) -> Any:
        from redis.exceptions import RedisError

        try:
            return call()
        except RedisError as exc:
            raise GraphUnavailable(f"{self.describe()}: {type(exc).__name__}: {exc}") from exc

    def snapshot(self) -> Snapshot:
        return snapshot_rows(self.run_named("snapshot_nodes_falkordb"), self.run_named("snapshot_edges_falkordb"))

    def read_state(self, urns: Sequence[str]) -> list[list[Any]]:
        import json

        rows = self.run(cy.statement("read_state_falkordb"), {"urns": list(urns)})
        try:
            return json.loads(rows[0]["state"]) if rows else []
        except ValueError:  # toJSON does not escape quotes or backslashes inside strings (field paths can hold them)
            return super().read_state(urns)

    def ensure_schema(self) -> None:
        existing = {(i.get("label"), (p,)) for i in self._indices() for p in i.get("properties") or []}
        for stmt in cy.statements("schema_falkordb"):
            # CREATE INDEX FOR (x:Label) ON (x.prop)
            label = stmt.split(":", 1)[1].split(")", 1)[0]
            prop = stmt.rsplit(".", 1)[1].rstrip(")")
            if (label, (prop,)) not in existing:
                try:
                    self.run(stmt, write=True)
                except GraphRefused as exc:  # another process opening the new graph created it meanwhile
                    if not falkordb_says(exc.__cause__, "exists"):
                        raise
        have = self._constraints()
        created = False
        for label in ("Dataset", "DatasetField", "Query", "DataJob"):
            if (label, ("urn",)) not in have:
                created = True
                try:
                    self.graph.create_node_unique_constraint(label, "urn")
                except Exception as exc:
                    if not falkordb_says(exc, "exists"):
                        raise GraphError(f"cannot create the unique constraint on {label}.urn: {exc}") from exc
        self._register_vocabulary()
        if created and self.server is not None:
            self._await_constraints()
            self.server.compact()  # constraints in the AOF tail would re-log themselves on every start

    def _constraints(self, status: str | None = None) -> set[tuple[str, tuple[str, ...]]]:
        return {(c["label"], tuple(c["properties"])) for c in self.graph.list_constraints()
                if status is None or c.get("status") == status}

    def _await_constraints(self, timeout: float = 60.0) -> None:
        """Wait until the constraints are built (FalkorDB builds them in the background)."""
        import time

        deadline = time.monotonic() + timeout
        while self._constraints("UNDER CONSTRUCTION") and time.monotonic() < deadline:
            time.sleep(0.02)

    def _register_vocabulary(self) -> None:
        """Register every label, relationship type and property key the statements name, with one logged write.

        FalkorDB adds a name a write statement mentions to the graph's schema when it plans the statement,
        but logs it (as an effect, in the append-only file) only with a write that uses it: a statement that
        writes nothing (an archive with nothing to archive) leaves the name unlogged, later effects refer to
        it by number, and replaying the file after a crash crashes the server (FalkorDB issues #2235, #2457).
        With every name registered first, no later statement adds one."""
        names, keys = cy.vocabulary()
        read_labels, read_types, read_keys = cy.statements("vocabulary_falkordb")
        known = {r["label"] for r in self.run(read_labels)} | {r["relationshipType"] for r in self.run(read_types)}
        have = {r["propertyKey"] for r in self.run(read_keys)}
        labels = sorted(n for n in names - known if n in cy.NODE_LABELS)
        types = sorted(n for n in names - known if n not in cy.NODE_LABELS)
        missing = sorted(keys - have)
        if labels or types or missing:
            self.run(_register_statement(labels, types, missing), write=True)

    def _indices(self) -> list[dict[str, Any]]:
        return self.run_named("indexes_falkordb")

    def clear(self) -> None:
        try:
            self.graph.delete()
        except Exception as exc:
            if not falkordb_says(exc, "no graph"):
                raise GraphError(f"cannot delete graph {self.graph_name!r}: {exc}") from exc

    def close(self) -> None:
        try:
            self.db.connection.close()
        except Exception:
            pass
        if self.server is not None:
            self.server.stop()


def _register_statement(labels: list[str], types: list[str], keys: list[str]) -> str:
    """One write that names ``labels``, relationship types ``types`` and property keys ``keys`` and leaves nothing
    behind: it creates a node per label, two nodes joined by an edge per type, sets every key on one of them, and
    deletes them all. Built here, at run time, because it names what the graph does not hold yet, and Cypher
    takes no label, type or property key as a parameter: the one statement not in ``cypher/``."""
    nodes = [f"(n{i}:{label})" for i, label in enumerate(labels)] + ["(a)", "(b)"]
    rels = [f"(a)-[r{i}:{t}]->(b)" for i, t in enumerate(types)]
    sets = [f"a.{k} = 0" for k in keys]
    return "CREATE " + ", ".join(nodes + rels) + (" SET " + ", ".join(sets) if sets else "") + \
        " WITH * DETACH DELETE " + ", ".join([f"n{i}" for i in range(len(labels))] + ["a", "b"])


# --- Neo4j --------------------------------------------------------------------------------------------


#: Neo4j's codes for a transaction over its timeout (the server's setting, or the one the driver sent)
NEO4J_TIMEOUTS = frozenset({"Neo.ClientError.Transaction.TransactionTimedOut",
                            "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"})
#: Neo4j client error codes that mean a concurrent transaction got there first (created or deleted the node):
#: worth a retry
NEO4J_CONFLICTS = frozenset({"Neo.ClientError.Schema.ConstraintValidationFailed",
                             "Neo.ClientError.Statement.EntityNotFound"})
#: what packing a statement's parameters raises (a value Bolt cannot carry)
_PACKING = (OverflowError, UnicodeEncodeError, ValueError, TypeError)


def neo4j_error(exc: BaseException, where: str, cypher: str = "", timeout_ms: int | None = None) -> GraphError | None:
    """The Neo4j driver's error as fieldgraph's, by its codes and types, for the caller to raise ``from exc``
    (None: not the driver's): QueryTimeout for :data:`NEO4J_TIMEOUTS`; GraphUnavailable for
    :data:`NEO4J_CONFLICTS`; GraphRefused for what the statement or its parameters caused (any other
    ``ClientError``, values Bolt cannot pack); GraphUnavailable for the rest (the server down, lost connections,
    transient and database errors the driver's retries outlasted)."""
    from neo4j import exceptions as ne

    if isinstance(exc, ne.Neo4jError):
        if exc.code in NEO4J_TIMEOUTS:
            return QueryTimeout(f"query exceeded its time budget of {timeout_ms} ms")
        if exc.code in NEO4J_CONFLICTS:
            return GraphUnavailable(f"{where}: a write conflicted with a concurrent one: {exc.message}")
        if isinstance(exc, ne.ClientError):
            return GraphRefused(f"{where} refused the statement: {exc.message}\n  {_first_line(cypher)}")
        return GraphUnavailable(f"{where}: {exc.code}: {exc.message}")
    if isinstance(exc, ne.DriverError):
        return GraphUnavailable(f"{where}: {type(exc).__name__}: {exc}")
    if isinstance(exc, _PACKING):
        return GraphRefused(f"{where}: cannot send the statement's parameters: {exc}\n  {_first_line(cypher)}")
    return None


class Neo4jStore(GraphStore):
    """Neo4j over Bolt with the official driver. Every statement runs in a managed transaction (read or
    write), which the driver retries on transient errors only (deadlocks, leader changes, lost connections);
    results are read inside the transaction. A time budget becomes the transaction's timeout, and Neo4j's
    ``TransactionTimedOut*`` codes become :class:`QueryTimeout`."""

    backend = "neo4j"

    def __init__(self, uri: str, *, user: str | None = None, password: str | None = None,
                 database: str | None = None, batch_size: int = DEFAULT_BATCH) -> None:
        require("neo4j", "neo4j", "a Neo4j graph (bolt:// or neo4j://)")
        import neo4j

        self._neo4j = neo4j
        self._local = threading.local()  # the read transaction of reading(), per thread (a server's requests)
        self.uri = uri
        self.database = database or None
        self.batch_size = batch_size
        user = user or "neo4j"
        password = password or ""
        try:
            # the driver retries transient errors (deadlocks, a lost connection) for this long; an outage
            # longer than that is the caller's to wait out (the worker pauses and backs off)
            # no server notifications: on a young graph they only say a property is not there yet
            self.driver = neo4j.GraphDatabase.driver(uri, auth=(user, password),
                                                     max_transaction_retry_time=DRIVER_RETRY_S,
                                                     notifications_min_severity="OFF")
            self.driver.verify_connectivity()
        except Exception as exc:
            raise GraphUnavailable(f"cannot reach Neo4j at {uri}: {exc}") from exc

    def describe(self) -> str:
        return f"Neo4j at {self.uri}, database {self.database or '(default)'}"

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False,
            timeout_ms: int | None = None) -> list[dict[str, Any]]:
        neo4j = self._neo4j
        args = dict(params or {})

        @neo4j.unit_of_work(timeout=timeout_ms / 1000.0 if timeout_ms else None)  # type: ignore[untyped-decorator]
        def work(tx: Any) -> list[dict[str, Any]]:
            return _neo4j_rows(tx.run(cypher, args))

        with self._errors(cypher, timeout_ms):
            read_tx = getattr(self._local, "tx", None)
            if read_tx is not None and not write:
                return _neo4j_rows(read_tx.run(cypher, args))
            with self.driver.session(database=self.database) as session:
                return session.execute_write(work) if write else session.execute_read(work)

    @contextmanager
    def reading(self, timeout_ms: int | None = None) -> Iterator[None]:
        """The reads inside share one read transaction (one commit round trip instead of one per statement),
        whose timeout is ``timeout_ms``: a walk's steps read one consistent graph within one budget."""
        if getattr(self._local, "tx", None) is not None:
            yield
            return
        exceptions = self._neo4j.exceptions
        with self.driver.session(database=self.database, default_access_mode=self._neo4j.READ_ACCESS) as session:
            with self._errors("BEGIN", timeout_ms):  # the caller's own errors inside pass through as they are
                self._local.tx = session.begin_transaction(timeout=timeout_ms / 1000.0 if timeout_ms else None)
            try:
                yield
            finally:
                tx, self._local.tx = self._local.tx, None
                with suppress(exceptions.Neo4jError, exceptions.DriverError):  # e.g. ended by its timeout
                    tx.close()  # a read: nothing to commit

    @contextmanager
    def _errors(self, cypher: str, timeout_ms: int | None) -> Iterator[None]:
        """The driver's errors as fieldgraph's (:func:`neo4j_error`), each with the driver's as its cause."""
        try:
            yield
        except Exception as exc:
            ours = neo4j_error(exc, self.describe(), cypher, timeout_ms)
            if ours is None:
                raise
            raise ours from exc

    def _lock_writer(self, keys: list[str]) -> None:
        """An open write transaction that has merged one ``WriterLock`` node per key, in sorted order (one
        statement): another writer's ``MERGE`` of one of them waits on the unique constraint until this
        transaction ends. It is rolled back, never committed, so the nodes never show; Neo4j ends it when the
        holder's connection dies. A deadlock Neo4j reports anyway (its lock entries are hashed) is retried."""
        session = self.driver.session(database=self.database)
        try:
            for attempt in range(1, MAX_LOCK_ATTEMPTS + 1):
                try:
                    with self._errors("writer lock", None):
                        tx = session.begin_transaction()
                        tx.run(cy.statement("lock_writer"), {"names": keys}).consume()
                    break
                except GraphUnavailable:
                    with suppress(Exception):
                        tx.close()
                    if attempt == MAX_LOCK_ATTEMPTS:
                        raise
        except GraphUnavailable:
            session.close()
            raise
        except FieldgraphError as exc:  # e.g. a server-side transaction timeout while waiting: not the batch's fault
            session.close()
            raise GraphUnavailable(f"{self.describe()}: cannot take the writer lock: {exc}") from exc
        except BaseException:
            session.close()
            raise
        self._writer_local.held = (session, tx)

    def locks_unbroken(self) -> bool:
        """The lock transaction still answers: Neo4j ends it (and its locks) only with its connection, for good."""
        held = getattr(self._writer_local, "held", None)
        if self.held_keys() is None or held is None:
            return False
        _, tx = held
        try:
            tx.run(cy.statement("ping")).consume()
        except (self._neo4j.exceptions.Neo4jError, self._neo4j.exceptions.DriverError) as exc:
            log.warning("the writer lock of %s ended before its batch did (%s)", self.describe(), exc)
            return False
        return True

    def _unlock_writer(self) -> None:
        session, tx = self._writer_local.held
        try:
            tx.rollback()
        except (self._neo4j.exceptions.Neo4jError, self._neo4j.exceptions.DriverError) as exc:
            log.warning("the writer lock of %s ended before its batch did (%s): a batch planned meanwhile by another "
                        "writer may have raced this one", self.describe(), exc)
        finally:
            session.close()

    def ensure_schema(self) -> None:
        for stmt in cy.statements("schema_neo4j"):  # CREATE ... IF NOT EXISTS: idempotent
            self.run(stmt, write=True)

    def clear(self) -> None:
        # CALL { } IN TRANSACTIONS needs an auto-commit transaction, not a managed one
        try:
            with self.driver.session(database=self.database) as session:
                session.run(cy.statement("clear_neo4j")).consume()
        except self._neo4j.exceptions.Neo4jError as exc:
            raise GraphError(f"cannot clear {self.describe()}: {exc.message}") from exc

    def close(self) -> None:
        self.driver.close()


def _neo4j_rows(result: Any) -> list[dict[str, Any]]:
    """A result's records as dicts of plain values, read while its transaction is open."""
    keys = result.keys()
    return [dict(zip(keys, (_neo4j_plain(v) for v in record.values()), strict=False)) for record in result]


def _neo4j_plain(v: Any) -> Any:
    """Driver values as the FalkorDB store gives them: a node as ``{"labels": [...], **properties}``,
    a relationship as ``{"type": ..., **properties}``, a path as ``{"nodes": [...], "edges": [...]}``."""
    from neo4j.graph import Node, Path, Relationship

    if isinstance(v, Node):
        return {"labels": sorted(v.labels), **dict(v)}
    if isinstance(v, Relationship):
        return {"type": v.type, **dict(v)}
    if isinstance(v, Path):
        return {"nodes": [_neo4j_plain(n) for n in v.nodes], "edges": [_neo4j_plain(r) for r in v.relationships]}
    if isinstance(v, dict):
        return {k: _neo4j_plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_neo4j_plain(x) for x in v]
    return v


# --- choosing a backend -----------------------------------------------------------------------------


#: stores other modules of the graph layer provide, by URI scheme: ``memory`` (:mod:`fieldgraph.graph.memory` adds
#: itself when the package is imported; it builds on :class:`GraphStore`, so this module does not import it)
STORE_SCHEMES: dict[str, Callable[[], GraphStore]] = {}


def embedded_server(uri: str, data_dir: str | None = None) -> EmbeddedServer:
    """The embedded server an ``embedded[:PATH]`` URI names (without a path: ``data_dir``, else the default
    folder); not started. Any other URI raises :class:`GraphURIError`."""
    scheme, _, path = uri.partition(":")
    if scheme.lower() != "embedded":
        raise GraphURIError(f"{uri!r} is not an embedded graph (embedded or embedded:PATH)")
    return EmbeddedServer(path.removeprefix("//") or data_dir)


def open_store(uri: str | None = None, *, graph: str | None = None, data_dir: str | None = None,
               user: str | None = None, password: str | None = None, database: str | None = None,
               batch_size: int = DEFAULT_BATCH, schema: bool = True, create: bool = True) -> GraphStore:
    """The store ``uri`` names (default: the embedded FalkorDB in ``data_dir``). Neo4j credentials and
    database come from the URI, else from ``user``/``password``/``database``. Nothing is read from the
    environment here: the caller's edge does that once (``fieldgraph.ingest.config.GraphConfig``).
    Without ``create``, an embedded graph whose data folder holds none raises :class:`NotFoundError`."""
    uri = uri or "embedded"
    graph = graph or DEFAULT_GRAPH
    parts = urlsplit(uri)
    scheme = parts.scheme.lower() if "://" in uri else uri.split(":", 1)[0].lower()
    store: GraphStore
    if scheme in STORE_SCHEMES:
        store = STORE_SCHEMES[scheme]()
    elif scheme == "embedded":
        server = embedded_server(uri, data_dir)
        if not create and not server.exists():
            raise NotFoundError(f"no embedded graph in {server.data_dir}: ingest events there first, or name the "
                                "graph with --graph (embedded:PATH, falkordb://, bolt://) or $FIELDGRAPH_GRAPH")
        server.start()
        try:
            store = FalkorStore(graph=graph, unix_socket=str(server.socket), server=server, batch_size=batch_size)
        except Exception:
            server.stop()
            raise
    elif scheme in ("falkordb", "redis"):
        if not parts.hostname:
            raise GraphURIError(f"{uri!r}: expected falkordb://host:port[/graph]")
        g = parts.path.strip("/") or graph
        store = FalkorStore(graph=g, host=parts.hostname, port=parts.port or 6379,
                            password=unquote(parts.password) if parts.password else None, batch_size=batch_size)
    elif scheme in ("falkordb+unix", "unix"):
        q = parse_qs(parts.query)
        store = FalkorStore(graph=q.get("graph", [graph])[0], unix_socket=parts.path, batch_size=batch_size)
    elif scheme in ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"):
        q = parse_qs(parts.query)
        clean = uri.split("?", 1)[0]
        if parts.username:
            clean = clean.replace(parts.netloc, (parts.hostname or "") + (f":{parts.port}" if parts.port else ""))
        store = Neo4jStore(clean, user=unquote(parts.username) if parts.username else user,
                           password=unquote(parts.password) if parts.password else password,
                           database=q.get("database", [database])[0], batch_size=batch_size)
    else:
        raise GraphURIError(f"unknown graph URI {uri!r}: use embedded[:PATH], falkordb://host:port[/graph], "
                            "falkordb+unix:///socket, bolt://host:7687, neo4j://host:7687 or memory")
    if schema:
        try:
            store.ensure_schema()
        except Exception:
            store.close()
            raise
    return store
