"""The Kafka clients the worker uses, as the few methods it calls (:class:`Consumer`, :class:`Producer`), and the
factories that build confluent-kafka's from a :class:`WorkerConfig`: the worker's seam. A test hands the worker
factories of its own (``Worker(config, consumer=..., producer=...)``) and runs its loop without a broker."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from fieldgraph.ingest.emitter import LIBRDKAFKA_LOG

from .config import WorkerConfig

if TYPE_CHECKING:
    from confluent_kafka import TopicPartition

#: librdkafka's error callback (``error_cb``): called with a ``KafkaError``
ErrorCallback = Callable[[Any], None]
#: a rebalance callback: the consumer and the partitions assigned, revoked or lost
RebalanceCallback = Callable[[Any, list["TopicPartition"]], None]


class Consumer(Protocol):
    """What the worker calls on its consumer (confluent-kafka's ``Consumer`` has them all)."""

    def subscribe(self, topics: list[str], on_assign: RebalanceCallback | None = None,
                  on_revoke: RebalanceCallback | None = None, on_lost: RebalanceCallback | None = None) -> None: ...

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]: ...

    def poll(self, timeout: float = -1) -> Any: ...

    def commit(self, *, offsets: list[TopicPartition], asynchronous: Literal[False]) -> list[TopicPartition]: ...

    def assignment(self) -> list[TopicPartition]: ...

    def pause(self, partitions: list[TopicPartition]) -> None: ...

    def resume(self, partitions: list[TopicPartition]) -> None: ...

    def committed(self, partitions: list[TopicPartition], timeout: float = -1) -> list[TopicPartition]: ...

    def get_watermark_offsets(self, partition: TopicPartition, timeout: float = -1,
                              cached: bool = False) -> tuple[int, int]: ...

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any: ...

    def close(self) -> None: ...


class Producer(Protocol):
    """What the worker calls on its dead-letter producer (confluent-kafka's ``Producer`` has them all)."""

    def produce(self, topic: str, value: str | bytes | None = None, key: str | bytes | None = None,
                partition: int = -1, callback: Callable[[Any, Any], None] | None = None,
                on_delivery: Callable[[Any, Any], None] | None = None, timestamp: int = 0,
                headers: Any = None) -> None: ...

    def poll(self, timeout: float = -1) -> int: ...

    def flush(self, timeout: float = -1) -> int: ...


ConsumerFactory = Callable[[WorkerConfig, ErrorCallback], Consumer]
ProducerFactory = Callable[[WorkerConfig, ErrorCallback], Producer]


def _kafka_conf(config: WorkerConfig) -> dict[str, Any]:
    return {"bootstrap.servers": config.bootstrap_servers, **config.kafka}


def kafka_consumer(config: WorkerConfig, on_error: ErrorCallback) -> Consumer:
    """confluent-kafka's consumer in the worker's group: offsets committed by the worker only, after the write."""
    from confluent_kafka import Consumer as KafkaConsumer

    return KafkaConsumer({
        **_kafka_conf(config), "group.id": config.group_id, "enable.auto.commit": False,
        "enable.auto.offset.store": False, "auto.offset.reset": config.auto_offset_reset,
        "error_cb": on_error, "logger": LIBRDKAFKA_LOG,
    })


def kafka_producer(config: WorkerConfig, on_error: ErrorCallback) -> Producer:
    """confluent-kafka's idempotent producer for the dead-letter topics (the consumer's settings left out)."""
    from confluent_kafka import Producer as KafkaProducer

    conf = {k: v for k, v in _kafka_conf(config).items() if not k.startswith(
        ("session.", "heartbeat.", "max.poll.", "fetch.", "partition.assignment", "group.", "auto.offset",
         "enable.auto", "isolation.", "queued."))}
    conf.update({"enable.idempotence": True, "acks": "all", "linger.ms": 5, "error_cb": on_error,
                 "logger": LIBRDKAFKA_LOG})
    return KafkaProducer(conf)
