"""The Kafka ingestion worker: a consumer group member that keeps the lineage graph current.

Micro-batches, pipelined over two threads::

    consumer thread: poll up to batch_size messages (any partitions) -> decode (JSON or Avro, then the
        sources' decode_event: the same code as file replay) -> wait for the previous batch's write ->
        its bad events to the dead-letter topic (flushed, delivery confirmed) -> commit its offsets (sync)
        -> hand this batch to the writer -> poll the next one
    writer thread: write each batch through the graph's one write path (concurrent-writers mode), one
        batch at a time, in order

so batch N+1 is polled and decoded while batch N is written (the graph is another process: its round
trips free the interpreter for the decoding). Only one batch is ever in flight, and it is committed
(by the consumer thread) only after its write ended, before the next batch is handed over: offsets are
committed in order, each after the write covering it.

A transient fault (:class:`fieldgraph.errors.TransientError`: the graph or the schema registry down)
pauses the partitions and retries the batch with backoff and jitter, serving the consumer meanwhile; a
permanent one (bad input, a value the graph refuses) dead-letters the event responsible (found by halving
the batch) with its reason, and the rest goes on.

Offsets are committed only after the graph write and the DLQ delivery covering them succeeded, so a
crash at any moment loses nothing; the replay after it rewrites the same aspects, which the planner
treats as no-ops or identical overwrites (newest stamp wins, equal stamps re-apply), so it changes
nothing. A write that fails transiently is retried (with the batch after it held back, decoded but not
written); one given up (stopping, or partitions revoked meanwhile) gives back its messages and the next
batch's, uncommitted, for the partitions still ours. A rebalance runs inside poll, while a batch may be
in flight: the revoke callback waits for that write to end and commits it (dead letters first) before the
partitions go, so the new owner starts after it; if that write failed, nothing is committed and the new
owner reads it again. SIGTERM/SIGINT stop the loop after the batch in flight is written and committed.

Several workers writing at once (different partitions) can race; the graph's concurrent-writers
mode (``fieldgraph.graph.write``) makes that safe.
"""

from __future__ import annotations

import logging
import random
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fieldgraph.bulk import gc_paused
from fieldgraph.changes import Change
from fieldgraph.errors import (
    GraphError,
    TransientError,
    WorkerError,
    require,
)
from fieldgraph.graph import LineageGraph, Summary, WriteMode
from fieldgraph.graph.write import one_version_each

from .clients import Consumer, ConsumerFactory, Producer, ProducerFactory, kafka_consumer, kafka_producer
from .config import WorkerConfig
from .decoding import Decoder, open_decoder

T = TypeVar("T")

log = logging.getLogger("fieldgraph.worker")

#: DLQ headers
H_ERROR, H_REASON = "fieldgraph.error", "fieldgraph.reason"
H_TOPIC, H_PARTITION, H_OFFSET = "fieldgraph.original.topic", "fieldgraph.original.partition", \
    "fieldgraph.original.offset"


@dataclass
class Stats:
    """Running figures (the log line and the Prometheus endpoint show the same)."""

    messages: int = 0
    changes: int = 0
    fields: int = 0
    dlq: int = 0
    ignored: int = 0  # events with no aspect fieldgraph reads (skipped, or DLQ with strict_aspects)
    batches: int = 0
    graph_retries: int = 0
    last_batch_s: float = 0.0
    lag: int = 0
    started: float = field(default_factory=time.monotonic)
    dlq_by_kind: Counter[str] = field(default_factory=Counter)


@dataclass
class _Batch:
    """One poll's messages decoded: the changes per message, and the bad messages with (kind, reason)."""

    per_msg: list[tuple[Any, list[Change]]] = field(default_factory=list)
    bad: list[tuple[Any, str, str]] = field(default_factory=list)

    @property
    def n_changes(self) -> int:
        return sum(len(cs) for _, cs in self.per_msg)


#: what :meth:`Worker._write` returns: the plan and the events the graph refused, with (kind, reason)
_Written = tuple[Summary, list[tuple[Any, str, str]]]


@dataclass
class _InFlight:
    """A decoded batch handed to the writer thread, not committed yet."""

    msgs: Sequence[Any]
    batch: _Batch
    write: Future[_Written]
    started: float  # when its poll returned (the batch latency counts from there)


class _Metrics:
    def __init__(self, port: int) -> None:
        require("prometheus_client", "kafka", "the worker's metrics endpoint")
        from prometheus_client import CollectorRegistry, Gauge, Histogram, start_http_server
        from prometheus_client import Counter as PCounter

        self.registry = reg = CollectorRegistry()
        self.messages = PCounter("fieldgraph_worker_messages", "Messages consumed", registry=reg)
        self.changes = PCounter("fieldgraph_worker_aspect_changes", "Aspect changes written", registry=reg)
        self.fields = PCounter("fieldgraph_worker_fields", "Field upserts written", registry=reg)
        self.dlq = PCounter("fieldgraph_worker_dlq_messages", "Messages sent to the DLQ", ["error"], registry=reg)
        self.retries = PCounter("fieldgraph_worker_graph_retries", "Graph write retries", registry=reg)
        self.latency = Histogram("fieldgraph_worker_batch_seconds", "Batch latency (decode, write, commit)",
                                 registry=reg, buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.lag = Gauge("fieldgraph_worker_lag", "Consumer lag: log end offset minus committed offset, summed "
                         "over the assigned partitions", registry=reg)
        self.rate = Gauge("fieldgraph_worker_events_per_second", "Messages/s since the last log line", registry=reg)
        self.reachable = Gauge("fieldgraph_worker_brokers_reachable", "1 when the Kafka brokers answer, else 0",
                               registry=reg)
        self.reachable.set(1)
        self.server, self.thread = start_http_server(port, registry=reg)

    def close(self) -> None:
        self.server.shutdown()


def _header_value(v: Any) -> bytes:
    return str(v).encode("utf-8")


class Worker:
    """``Worker(config).run()`` until :meth:`stop` (or SIGTERM/SIGINT/SIGHUP with ``install_signals``).

    ``graph``: the graph to write (else the config's, opened when the run starts); ``consumer`` and ``producer``:
    what builds the Kafka clients (confluent-kafka's by default; :mod:`fieldgraph.ingest.clients`)."""

    def __init__(self, config: WorkerConfig, *, graph: LineageGraph | None = None,
                 consumer: ConsumerFactory = kafka_consumer, producer: ProducerFactory = kafka_producer) -> None:
        self.config = config
        self.stats = Stats()
        self._decoder: Decoder | None = None
        self._graph = graph
        self._stop = threading.Event()
        self._new_consumer = consumer
        self._new_producer = producer
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._metrics: _Metrics | None = None
        self._paused = False
        self._backlog: list[Any] = []  # messages returned while waiting for the graph (processed next)
        self._assigned: set[tuple[str, int]] = set()
        self._last_log = time.monotonic()
        self._last_log_messages = 0
        self._revoked_during_wait: set[tuple[str, int]] = set()
        #: the batch the writer thread is writing (at most one), and that thread
        self._inflight: _InFlight | None = None
        self._writer: ThreadPoolExecutor | None = None
        #: why no broker answers, as librdkafka last said (None: they do); librdkafka retries by itself
        self._unreachable: str | None = None

    # ---- lifecycle ----

    def stop(self, *_: Any) -> None:
        """Finish the current batch, commit, leave the group."""
        self._stop.set()

    def install_signals(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # each: finish the batch, commit, leave
            signal.signal(signum, self.stop)

    def _open(self) -> Consumer:
        for dependency in ("confluent_kafka", "fastavro"):
            require(dependency, "kafka", "the Kafka worker")
        cfg = self.config
        self._decoder = open_decoder(cfg)
        self._consumer = consumer = self._new_consumer(cfg, self._kafka_error)
        self._producer = self._new_producer(cfg, self._kafka_error)
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="fieldgraph-writer")
        consumer.subscribe(list(cfg.topics), on_assign=self._on_assign, on_revoke=self._on_revoke,
                           on_lost=self._on_revoke)
        if cfg.metrics_port:
            self._metrics = _Metrics(cfg.metrics_port)
        log.info("worker %s: group %r, topics %s, graph %s", cfg.bootstrap_servers, cfg.group_id,
                 ",".join(cfg.topics), cfg.graph or "embedded")
        return consumer

    def _open_graph(self) -> LineageGraph:
        graph = self._retrying("opening the graph", self.config.graph_config().open, give_up_on_revoke=False)
        if graph is None:
            raise WorkerError("stopped before the graph could be opened")
        return graph

    def close(self) -> None:
        if self._inflight is not None:  # an error stopped the loop: let the write end (uncommitted) before closing
            self._inflight.write.exception()
            self._inflight = None
        if self._consumer is not None:
            try:
                self._consumer.close()  # leaves the group: its partitions move at once
            except Exception as exc:  # noqa: BLE001
                log.warning("closing the consumer: %s", exc)
            self._consumer = None
        if self._producer is not None:
            self._producer.flush(30)
            self._producer = None
        if self._metrics is not None:
            self._metrics.close()
            self._metrics = None
        if self._writer is not None:
            self._writer.shutdown()
            self._writer = None
        if self._decoder is not None:
            self._decoder.close()
            self._decoder = None
        if self._graph is not None:
            self._graph.close()
            self._graph = None

    def run(self, *, max_idle_s: float | None = None) -> Stats:
        """Consume until stopped (or, with ``max_idle_s``, until nothing arrived for that long)."""
        consumer = self._open()
        try:
            with _short_gil_turns():
                if self._graph is None:
                    self._graph = self._open_graph()
                idle_since = time.monotonic()
                while not self._stop.is_set():
                    fresh = consumer.consume(self.config.batch_size, self.config.batch_timeout_s)
                    # the backlog after the poll: a revoke inside it may have given the batch in flight back
                    msgs, self._backlog = self._backlog + fresh, []
                    msgs = [m for m in msgs if not self._kafka_message_error(m)]
                    if msgs:
                        self._unreachable = None
                        self._submit(msgs)
                        idle_since = time.monotonic()
                    else:
                        self._finish()  # nothing new: commit the batch in flight now
                        if max_idle_s is not None and time.monotonic() - idle_since > max_idle_s:
                            break
                    self._maybe_log()
                self._finish()
        finally:
            self._maybe_log(force=True)
            self.close()
        return self.stats

    # ---- Kafka callbacks ----

    def _kafka_error(self, err: Any) -> None:
        if err.fatal():
            log.error("fatal Kafka error, stopping: %s", err)
            self._stop.set()
            return
        if err.name() in _UNREACHABLE:
            self._unreachable = err.str()
        log.debug("Kafka: %s", err)

    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        self._assigned |= {(p.topic, p.partition) for p in partitions}
        log.info("assigned %s", _parts(partitions))

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        # the batch in flight is written and committed before the partitions go (if its write fails, it is
        # not committed: the new owner reads it again). While a write is retried (waiting for the graph), its
        # messages are dropped uncommitted, and the new owner replays them.
        self._finish(retry=False)
        gone = {(p.topic, p.partition) for p in partitions}
        self._assigned -= gone
        self._backlog = [m for m in self._backlog if (m.topic(), m.partition()) not in gone]
        self._revoked_during_wait = gone
        log.info("revoked %s", _parts(partitions))

    def _kafka_message_error(self, msg: Any) -> bool:
        err = msg.error()
        if err is None:
            return False
        from confluent_kafka import KafkaError

        if err.code() == KafkaError._PARTITION_EOF:
            return True
        if err.fatal():
            raise WorkerError(f"fatal Kafka error: {err}")
        log.warning("Kafka: %s", err)
        return True

    # ---- one batch: decode -> write -> dead-letter -> commit ----

    def process(self, msgs: Sequence[Any]) -> None:
        """Decode, write, dead-letter and commit ``msgs`` (and the batch in flight before them), waiting for it."""
        self._submit(msgs)
        self._finish()

    def _submit(self, msgs: Sequence[Any]) -> None:
        """Decode ``msgs`` (while the batch in flight is written), complete the batch in flight, then hand this
        one to the writer thread. Given up (stopping, or partitions revoked while waiting): kept uncommitted."""
        t0 = time.monotonic()
        batch = self._retrying("reading the batch", lambda: self._decode_all(msgs))
        done = self._finish()  # first: its offsets are committed before this batch's write starts
        if batch is None or not done:
            self._give_back(msgs)
            return
        assert self._writer is not None
        self._inflight = _InFlight(msgs, batch, self._writer.submit(self._write, batch), t0)

    def _finish(self, *, retry: bool = True) -> bool:
        """Wait for the batch in flight to be written, retrying it while the graph is unavailable (not with
        ``retry`` False: then it is given back), then dead-letter what it refused and commit its offsets.
        False: given up, its messages kept uncommitted (see :meth:`_give_back`)."""
        f, self._inflight = self._inflight, None
        if f is None:
            return True
        tries = [f.write]

        def attempt() -> _Written:
            assert self._writer is not None
            return (tries.pop() if tries else self._writer.submit(self._write, f.batch)).result()

        if retry:
            written = self._retrying("graph write", attempt, count=True)
        else:
            try:
                written = attempt()
            except TransientError as exc:
                log.warning("graph write failed while the partitions are revoked, offsets not committed: %s", exc)
                written = None
        if written is None:  # stopped, or partitions revoked while waiting: nothing committed
            self._give_back(f.msgs)
            return False
        self._complete(f, written)
        return True

    def _give_back(self, msgs: Sequence[Any]) -> None:
        """Keep the messages of the partitions still ours, in offset order, for the next batch (not when stopping)."""
        if self._stop.is_set():
            return
        keep = [m for m in msgs if (m.topic(), m.partition()) in self._assigned]
        self._backlog = sorted([*keep, *self._backlog], key=lambda m: (m.topic(), m.partition(), m.offset()))

    def _complete(self, f: _InFlight, written: _Written) -> None:
        plan, refused = written
        self._send_dlq(f.batch.bad + refused)
        self._commit(f.msgs)
        dt = time.monotonic() - f.started
        s, n, n_changes = self.stats, len(f.msgs), f.batch.n_changes
        s.last_batch_s = dt
        s.changes += n_changes
        s.fields += plan.counts["fields"]
        s.batches += 1
        s.messages += n
        if self._metrics:
            self._metrics.messages.inc(n)
            self._metrics.changes.inc(n_changes)
            self._metrics.fields.inc(plan.counts["fields"])
            self._metrics.latency.observe(dt)

    def _retrying(self, what: str, attempt: Callable[[], T], *, count: bool = False,
                  give_up_on_revoke: bool = True) -> T | None:
        """``attempt()``, retried with backoff while it fails with a :class:`TransientError`; meanwhile the
        partitions are paused and the consumer served. ``None``: gave up (stopping, or partitions revoked)."""
        delay = 0.5
        self._revoked_during_wait = set()
        while True:
            try:
                result = attempt()
            except TransientError as exc:
                if count:
                    self.stats.graph_retries += 1
                    if self._metrics:
                        self._metrics.retries.inc()
                wait = random.uniform(delay / 2, delay)  # jitter: workers that failed together retry apart
                log.warning("%s failed, offsets not committed; retrying in %.1fs: %s", what, wait, exc)
                self._pause()
                self._wait(wait)
                delay = min(delay * 2, self.config.retry_max_s)
                if self._stop.is_set() or (give_up_on_revoke and self._revoked_during_wait):
                    log.info("giving up the uncommitted batch (%s); it will be consumed again",
                             "stopping" if self._stop.is_set() else "partitions revoked")
                    if self._paused:
                        self._resume()
                    return None
                continue
            if self._paused:
                self._resume()
            return result

    def _decode_all(self, msgs: Sequence[Any]) -> _Batch:
        """Decode every message (:mod:`fieldgraph.ingest.decoding`); bad ones are set aside with their reason (a
        registry outage raises)."""
        assert self._decoder is not None
        batch = _Batch()
        decoded = self._decoder.decode([(m.value(), m.topic(), f"{m.topic()}[{m.partition()}]@{m.offset()}")
                                        for m in msgs])
        for m, d in zip(msgs, decoded, strict=True):
            if d.changes:
                batch.per_msg.append((m, list(d.changes)))
                continue
            if d.kind in (None, "aspect"):  # nothing fieldgraph reads: skipped, or dead-lettered when strict
                self.stats.ignored += 1
            if d.kind is not None:
                batch.bad.append((m, d.kind, d.reason))
        batch.per_msg = _across_partitions(batch.per_msg)
        return batch

    def _write(self, batch: _Batch) -> _Written:
        """Write the batch; messages the graph refuses for good (found by halving the batch) are set aside with
        the reason, the rest is written. Transient errors propagate (the caller retries the whole batch)."""
        assert self._graph is not None
        with gc_paused():
            plan, refused = self._graph.writer(WriteMode.CONCURRENT).write_each([cs for _, cs in batch.per_msg])
        return plan, [(batch.per_msg[i][0], "graph" if isinstance(exc, GraphError) else "plan", str(exc))
                      for i, exc in refused]

    def _pause(self) -> None:
        if not self._paused and self._consumer is not None:
            try:
                self._consumer.pause(self._consumer.assignment())
            except Exception as exc:  # noqa: BLE001
                log.debug("pause: %s", exc)
            self._paused = True

    def _resume(self) -> None:
        assert self._consumer is not None
        try:
            self._consumer.resume(self._consumer.assignment())
        except Exception as exc:  # noqa: BLE001
            log.debug("resume: %s", exc)
        self._paused = False

    def _wait(self, seconds: float) -> None:
        """Sleep, serving the consumer (heartbeats, rebalances) without taking new messages."""
        deadline = time.monotonic() + seconds
        while not self._stop.is_set() and time.monotonic() < deadline:
            if self._consumer is not None and self._paused:
                m = self._consumer.poll(min(0.2, max(0.0, deadline - time.monotonic())))
                if m is not None:
                    self._backlog.append(m)  # fetched before the pause: keep it, in order, for the next batch
            else:
                self._stop.wait(min(0.2, max(0.0, deadline - time.monotonic())))

    def _send_dlq(self, bad: list[tuple[Any, str, str]]) -> None:
        if not bad:
            return
        assert self._producer is not None
        errors: list[str] = []

        def report(err: Any, msg: Any) -> None:
            if err is not None:
                errors.append(f"{msg.topic()}: {err}")

        for m, kind, reason in bad:
            topic = self.config.dlq_topic or f"{m.topic()}{self.config.dlq_suffix}"
            headers = [(H_ERROR, _header_value(kind)), (H_REASON, _header_value(reason[:4000])),
                       (H_TOPIC, _header_value(m.topic())), (H_PARTITION, _header_value(m.partition())),
                       (H_OFFSET, _header_value(m.offset()))]
            headers += [(k, v) for k, v in (m.headers() or []) if not k.startswith("fieldgraph.")]
            while True:
                try:
                    self._producer.produce(topic, m.value(), m.key(), headers=headers, on_delivery=report)
                    break
                except BufferError:
                    self._producer.poll(0.1)
            log.warning("to DLQ %s: %s[%d]@%d %s: %s", topic, m.topic(), m.partition(), m.offset(), kind, reason)
            self.stats.dlq += 1
            self.stats.dlq_by_kind[kind] += 1
            if self._metrics:
                self._metrics.dlq.labels(kind).inc()
        left = self._producer.flush(60)
        if left or errors:
            # not committed: the batch is consumed again after the restart
            raise WorkerError(f"the dead-letter topic did not take {left or len(errors)} messages: "
                              f"{'; '.join(errors[:3]) or 'delivery timed out'}")

    def _commit(self, msgs: Sequence[Any]) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        last: dict[tuple[str, int], int] = {}
        for m in msgs:
            k = (m.topic(), m.partition())
            last[k] = max(last.get(k, -1), m.offset())
        offsets = [TopicPartition(t, p, o + 1) for (t, p), o in last.items()]
        assert self._consumer is not None
        try:
            self._consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            # e.g. the group rebalanced: the new owner replays from the last commit; writes are idempotent
            log.warning("offset commit failed (the events will be replayed, which changes nothing): %s", exc)

    # ---- visibility ----

    def lag(self) -> int:
        """Kafka's consumer lag of the group on the assigned partitions: each one's log end offset minus the
        group's committed offset (from the log start, or end with auto.offset.reset=latest, before any commit)."""
        from confluent_kafka import TopicPartition

        if self._consumer is None:
            return 0
        total = 0
        try:
            for tp in self._consumer.committed(self._consumer.assignment(), timeout=5):
                low, high = self._consumer.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=5)
                start = tp.offset if tp.offset >= 0 else (high if self.config.auto_offset_reset == "latest" else low)
                total += max(0, high - start)
        except Exception:  # noqa: BLE001 - the brokers are not answering: keep the last figure
            return self.stats.lag
        return total

    def _reachable(self) -> bool:
        """Whether the brokers answer (a metadata request) when librdkafka last said they did not."""
        if self._unreachable is None:
            return True
        assert self._consumer is not None
        try:
            self._consumer.list_topics(timeout=2.0)
        except Exception:  # noqa: BLE001 - KafkaException: still unreachable
            return False
        self._unreachable = None
        return True

    def _maybe_log(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_log < self.config.log_interval_s:
            return
        reachable = self._consumer is None or self._reachable()
        if self._metrics:
            self._metrics.reachable.set(int(reachable))
        if not reachable:
            log.warning("cannot reach the Kafka brokers at %s: %s; retrying", self.config.bootstrap_servers,
                        self._unreachable)
            self._last_log = now
            return
        s = self.stats
        rate = (s.messages - self._last_log_messages) / max(now - self._last_log, 1e-9)
        s.lag = self.lag()
        log.info("%.0f events/s, %d messages, %d aspect changes, %d fields, batch %.0f ms, lag %d, DLQ %d%s",
                 rate, s.messages, s.changes, s.fields, s.last_batch_s * 1000, s.lag, s.dlq,
                 f", graph retries {s.graph_retries}" if s.graph_retries else "")
        if self._metrics:
            self._metrics.lag.set(s.lag)
            self._metrics.rate.set(rate)
        self._last_log = now
        self._last_log_messages = s.messages


#: librdkafka errors that mean no broker answers (it keeps reconnecting by itself)
_UNREACHABLE = ("_ALL_BROKERS_DOWN", "_TRANSPORT", "_RESOLVE")


#: the interpreter's switch interval while a worker runs (seconds; Python's default is 0.005)
SWITCH_INTERVAL_S = 0.0005
_switch = threading.Lock()
_switch_users: list[float] = []  # the interval before the first worker, once per running worker


@contextmanager
def _short_gil_turns() -> Iterator[None]:
    """While the consumer thread decodes (pure Python), the writer thread gives up the GIL at each socket read
    and write to the graph; taking it back waits for the decoder's turn to end, up to the switch interval:
    5 ms by default, for each of the hundreds of round trips a batch takes (the convoy effect). Shorter turns
    while workers run; the interval is put back when the last one ends."""
    with _switch:
        _switch_users.append(sys.getswitchinterval())
        sys.setswitchinterval(min(_switch_users[0], SWITCH_INTERVAL_S))
    try:
        yield
    finally:
        with _switch:
            before = _switch_users.pop()
            if not _switch_users:
                sys.setswitchinterval(before)


def _across_partitions(per_msg: list[tuple[Any, list[Change]]]) -> list[tuple[Any, list[Change]]]:
    """The batch's events with each partition's runs merged: the graph writes a batch in runs in which no
    aspect changes twice (:func:`fieldgraph.graph.write.one_version_each`), so the first run of every partition
    goes first, then the second of each, and so on; each partition keeps its order (what Kafka orders), and
    the batch takes as many runs as its partition that needs most, not their sum."""
    parts: dict[tuple[str, int], list[tuple[Any, list[Change]]]] = {}
    for item in per_msg:
        parts.setdefault((item[0].topic(), item[0].partition()), []).append(item)
    if len(parts) < 2:
        return per_msg
    ranked = [(rank, item) for items in parts.values()
              for rank, (start, run) in enumerate(one_version_each([cs for _, cs in items]))
              for item in items[start:start + len(run)]]
    ranked.sort(key=lambda x: x[0])  # stable
    return [item for _, item in ranked]


def _parts(partitions: list[Any]) -> str:
    return ", ".join(f"{p.topic}[{p.partition}]" for p in partitions) or "nothing"


def run_worker(config: WorkerConfig, *, install_signals: bool = True,
               on_start: Callable[[Worker], None] | None = None) -> Stats:
    w = Worker(config)
    if install_signals:
        w.install_signals()
    if on_start:
        on_start(w)
    return w.run()


__all__ = ["Stats", "Worker", "WorkerConfig", "WorkerError", "run_worker"]
