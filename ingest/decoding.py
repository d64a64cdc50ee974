"""Message values -> typed changes, for the Kafka worker: in the worker's own process, or in decoder processes.

Decoding (JSON or Avro, then the sources' ``decode_event``) costs about as much CPU as planning and writing a batch.
In one interpreter the two take turns at the GIL, so a worker that decodes batch N+1 while it writes batch N gets
little of that overlap. :class:`DecoderProcesses` decodes in child processes (``decode_processes``, one by
default) and sends back only the changes: the worker's interpreter spends its time on planning and writing.

Both give, per message, a :class:`Decoded`: its changes, or why it is bad (the dead-letter topic's kind and reason),
or why it carries nothing fieldgraph reads. A schema registry that cannot be reached raises
:class:`fieldgraph.errors.SourceUnavailable` in the worker either way, and a decoder process that dies is started
again (:class:`DecoderUnavailable`, transient: the worker decodes the batch again).
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Protocol

from fieldgraph.changes import Change
from fieldgraph.errors import FieldgraphError, MessageDecodeError, SourceUnavailable, TransientError

from .config import WorkerConfig
from .decode import ValueDecoder
from .platforms import PlatformMapping
from .sources import decode_event, unused_reason

log = logging.getLogger("fieldgraph.worker")

#: a message to decode: (value, topic, origin ``topic[partition]@offset``)
Item = tuple[bytes | None, str, str]


@dataclass(frozen=True, slots=True)
class Decoded:
    """One message decoded: ``changes``, or (``kind``, ``reason``) for a bad one; no changes and no kind: nothing
    fieldgraph reads (``reason`` says why)."""

    changes: tuple[Change, ...] = ()
    kind: str | None = None
    reason: str = ""


class DecoderUnavailable(TransientError):
    """A decoder process died (killed, out of memory): it is started again and the batch decoded again."""


class Decoder(Protocol):
    def decode(self, items: Sequence[Item]) -> list[Decoded]: ...

    def close(self) -> None: ...


class _Unavailable(Exception):
    """A registry outage seen in a decoder process, sent back as a value (fieldgraph's errors are not pickled)."""


def decode_items(decoder: ValueDecoder, platforms: PlatformMapping, strict: bool, items: Sequence[Item]
                 ) -> list[Decoded]:
    """Decode ``items``; bad ones get their reason (a registry outage raises :class:`SourceUnavailable`)."""
    out: list[Decoded] = []
    for value, topic, origin in items:
        try:
            obj = decoder.decode(value, topic)
            changes = decode_event(obj, origin=origin, platforms=platforms)
        except SourceUnavailable:
            raise
        except MessageDecodeError as exc:
            out.append(Decoded(kind=exc.kind, reason=exc.reason))
            continue
        except FieldgraphError as exc:  # EventError and anything the models refuse
            out.append(Decoded(kind="event", reason=str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - bad input never stops the worker
            out.append(Decoded(kind="event", reason=f"{type(exc).__name__}: {exc}"))
            continue
        if changes:
            out.append(Decoded(tuple(changes)))
        else:
            out.append(Decoded(kind="aspect" if strict else None, reason=unused_reason(obj)))
    return out


class InlineDecoder:
    """Decodes in the worker's own process (``decode_processes = 0``)."""

    def __init__(self, config: WorkerConfig) -> None:
        self._decoder = _value_decoder(config)
        self._platforms = config.platforms()
        self._strict = config.strict_aspects

    def decode(self, items: Sequence[Item]) -> list[Decoded]:
        return decode_items(self._decoder, self._platforms, self._strict, items)

    def close(self) -> None:
        return None


class DecoderProcesses:
    """Decodes in ``config.decode_processes`` child processes (started fresh, not forked: the worker runs Kafka
    client threads), a batch split among them in order."""

    def __init__(self, config: WorkerConfig) -> None:
        _value_decoder(config)  # the settings checked here, where a bad one is the caller's error
        self._config = config
        self._n = config.decode_processes
        self._pool = self._start()

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self._n, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_child_init, initargs=(self._config,))

    def decode(self, items: Sequence[Item]) -> list[Decoded]:
        size = max(1, -(-len(items) // self._n))
        parts = [items[i:i + size] for i in range(0, len(items), size)]
        try:
            futures = [self._pool.submit(_child_decode, part) for part in parts]
            out = [d for f in futures for d in f.result()]
        except BrokenProcessPool as exc:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._start()
            raise DecoderUnavailable(f"a decoder process died ({exc}); started again") from exc
        except _Unavailable as exc:
            raise SourceUnavailable(str(exc)) from exc
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def open_decoder(config: WorkerConfig) -> Decoder:
    """The worker's decoder: in child processes unless ``decode_processes`` is 0 or the schema registry lives in
    this process (``mock://``, confluent-kafka's in-process registry: a child would have an empty one of its own)."""
    in_process = (config.schema_registry_url or "").startswith("mock://")
    return DecoderProcesses(config) if config.decode_processes > 0 and not in_process else InlineDecoder(config)


def _value_decoder(config: WorkerConfig) -> ValueDecoder:
    return ValueDecoder(registry_url=config.schema_registry_url, registry_conf=config.schema_registry,
                        avsc=config.avsc)


_CHILD: InlineDecoder | None = None


def _child_init(config: WorkerConfig) -> None:
    global _CHILD
    _CHILD = InlineDecoder(config)


def _child_decode(items: Sequence[Item]) -> list[Decoded]:
    assert _CHILD is not None
    try:
        return _CHILD.decode(items)
    except SourceUnavailable as exc:
        raise _Unavailable(str(exc)) from exc
