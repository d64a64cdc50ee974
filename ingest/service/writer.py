"""The service's one graph writer: events from concurrent requests, written together.

Requests hand their events (each already decoded into changes) to :class:`EventWriter` and wait for the outcome.
One thread takes whatever has arrived, up to ``batch_events`` events, and writes it as one batch with
:meth:`fieldgraph.graph.write.Writer.write_each`, the write path every source shares: the events the graph refuses
come back with the reason and the rest is written. It writes in the concurrent mode (workers may write the same
graph) and tries a batch again after a transient fault (a conflict with another writer, a lost connection) for a
few seconds; then the callers answer 503 and the producer retries.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from fieldgraph.changes import Change
from fieldgraph.errors import FieldgraphError, TransientError
from fieldgraph.graph import LineageGraph, WriteMode

log = logging.getLogger(__name__)

#: the pauses before trying a batch again after a transient fault
RETRY_PAUSES_S = (0.2, 0.5, 1.0, 2.0)


@dataclass
class _Request:
    events: Sequence[Sequence[Change]]
    #: per event: None (written) or why the graph refused it
    outcome: Future[list[str | None]] = field(default_factory=Future)


class EventWriter:
    """A thread writing the events requests submit, batched."""

    def __init__(self, graph: LineageGraph, batch_events: int = 500) -> None:
        self._writer = graph.writer(WriteMode.CONCURRENT)
        self._batch_events = batch_events
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="fieldgraph-writer", daemon=True)
        self._thread.start()

    def submit(self, events: Sequence[Sequence[Change]]) -> Future[list[str | None]]:
        """Write ``events`` (each a list of changes); the future holds, per event, None or the refusal. A caller
        that stops waiting cancels it: if the writer has not taken it yet, it is not written."""
        req = _Request(events)
        if self._closed:
            req.outcome.set_exception(TransientError("the service is stopping: send the events again"))
        elif not events:
            req.outcome.set_result([])
        else:
            self._queue.put(req)
        return req.outcome

    def close(self) -> None:
        """Write what was submitted, then stop (waiting at most 30 s)."""
        self._closed = True
        self._queue.put(None)
        self._thread.join(timeout=30)

    def _run(self) -> None:
        stopping = False
        while not stopping:
            batch: list[_Request] = []
            size = 0
            nxt = self._queue.get()
            while nxt is not None:
                if nxt.outcome.set_running_or_notify_cancel():  # False: its caller gave up waiting
                    batch.append(nxt)
                    size += len(nxt.events)
                if size >= self._batch_events:
                    break
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
            stopping = nxt is None
            if batch:
                self._write(batch)

    def _write(self, batch: list[_Request]) -> None:
        events = [e for req in batch for e in req.events]
        try:
            refused = self._write_retrying(events)
        except Exception as exc:  # transient (write_each keeps permanent refusals to their events), or a bug
            if isinstance(exc, FieldgraphError):
                log.warning("graph write of %d events failed: %s", len(events), exc)
            else:
                log.exception("graph write of %d events failed", len(events))
            for req in batch:
                req.outcome.set_exception(exc)
            return
        reasons = dict(refused)
        start = 0
        for req in batch:
            req.outcome.set_result([str(reasons[i]) if i in reasons else None
                                    for i in range(start, start + len(req.events))])
            start += len(req.events)

    def _write_retrying(self, events: Sequence[Sequence[Change]]) -> list[tuple[int, FieldgraphError]]:
        for pause in RETRY_PAUSES_S:
            try:
                return self._writer.write_each(events)[1]
            except TransientError as exc:
                log.info("graph write of %d events: %s; trying again in %gs", len(events), exc, pause)
                time.sleep(pause)
        return self._writer.write_each(events)[1]  # the last try: its fault reaches the callers
