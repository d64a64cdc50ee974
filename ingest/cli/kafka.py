"""Kafka commands: ``worker`` (consume into the graph) and ``emit`` (send event files)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from fieldgraph.errors import EmitError, FieldgraphError, WorkerError
from fieldgraph.ingest.cli.boundary import EXIT_BAD_INPUT
from fieldgraph.ingest.cli.options import TYPES_FROM_SQL_HELP, GraphName, GraphUri, parse_pairs
from fieldgraph.ingest.cli.render import err, out, plural

_X_HELP = "librdkafka setting name=value, passed through (security.protocol, sasl.*, ssl.*, ...); repeatable."


def worker_cmd(
    topic: list[str] = typer.Option([], "--topic", "-t", help="Topic to consume; repeatable. Default: "
                                    "MetadataChangeLog_Versioned_v1, MetadataChangeProposal_v1, "
                                    "MetadataAuditEvent_v4, fieldgraph.events."),
    bootstrap_servers: str | None = typer.Option(None, "--bootstrap-servers", "-b",
                                                    help="Kafka brokers (default localhost:9092)."),
    group_id: str | None = typer.Option(None, "--group", help="Consumer group (default fieldgraph)."),
    graph: GraphUri = None,
    graph_name: GraphName = None,
    dlq_topic: str | None = typer.Option(None, "--dlq-topic", help="Dead-letter topic (default <topic>.dlq)."),
    batch_size: int | None = typer.Option(None, "--batch-size", min=1, help="Messages per micro-batch (2000)."),
    decode_processes: int | None = typer.Option(None, "--decode-processes", min=0,
                                                help="Processes decoding message values beside the worker's "
                                                "(1; 0: decode in the worker's own process)."),
    schema_registry_url: str | None = typer.Option(None, "--schema-registry-url",
                                                      help="Schema registry for Avro values."),
    avsc: list[Path] = typer.Option([], "--avsc", help="Local .avsc file or folder for Avro values (no registry)."),
    metrics_port: int | None = typer.Option(None, "--metrics-port", help="Serve Prometheus metrics on this port."),
    log_interval: float | None = typer.Option(None, "--log-interval", help="Seconds between progress lines (10)."),
    config: Path | None = typer.Option(None, "--config", "-c", help="TOML config file (or $FIELDGRAPH_CONFIG)."),
    kafka_setting: list[str] = typer.Option([], "-X", help=_X_HELP),
    strict_aspects: bool | None = typer.Option(None, "--strict-aspects/--skip-unused-aspects",
                                                  help="Dead-letter events with no aspect fieldgraph reads "
                                                  "(default: skip them; DataHub topics carry every aspect)."),
    idle_exit: float | None = typer.Option(None, "--exit-when-idle", help="Stop after this many seconds without "
                                              "messages (for one-off catch-up runs)."),
    types_from_sql: bool | None = typer.Option(None, "--types-from-sql/--no-types-from-sql",
                                               help=TYPES_FROM_SQL_HELP + " Setting: openlineage_types_from_sql."),
) -> None:
    """Consume change events from Kafka into the lineage graph (a consumer group member).

    Settings: flags > FIELDGRAPH_* environment > config file. Bad events go to the dead-letter
    topic; offsets are committed only after the graph write. SIGTERM/SIGINT finish the batch and stop.
    """
    from fieldgraph.ingest.config import load_config
    from fieldgraph.ingest.worker import Worker

    cfg = load_config(config, flags={
        "topics": list(topic), "bootstrap_servers": bootstrap_servers, "group_id": group_id, "graph": graph,
        "graph_name": graph_name, "dlq_topic": dlq_topic, "batch_size": batch_size,
        "decode_processes": decode_processes,
        "schema_registry_url": schema_registry_url, "avsc": [str(p) for p in avsc], "metrics_port": metrics_port,
        "log_interval_s": log_interval, "strict_aspects": strict_aspects, "kafka": parse_pairs(kafka_setting, "-X"),
        "openlineage_types_from_sql": types_from_sql,
    })
    w = Worker(cfg)
    w.install_signals()
    try:
        w.run(max_idle_s=idle_exit)
    except FieldgraphError:
        raise
    except Exception as exc:  # confluent_kafka.KafkaException (e.g. a bad -X setting)
        raise WorkerError(f"{type(exc).__name__}: {exc}") from exc


def emit_cmd(
    paths: list[Path] = typer.Argument(..., help="Event files or folders (.json, .jsonl, .ndjson)."),
    topic: str = typer.Option("fieldgraph.events", "--topic", "-t", help="Topic to send to."),
    wire: str = typer.Option("auto", "--format", help="auto: Avro on DataHub's MCP topic (MetadataChangeProposal*), "
                             "JSON elsewhere; or json, avro."),
    schema_registry_url: str | None = typer.Option(None, "--schema-registry-url",
                                                      help="Schema registry for Avro (DataHub's MCP topic)."),
    bootstrap_servers: str | None = typer.Option(None, "--bootstrap-servers", "-b",
                                                    help="Kafka brokers (default localhost:9092)."),
    config: Path | None = typer.Option(None, "--config", "-c", help="TOML config file (or $FIELDGRAPH_CONFIG): "
                                          "its bootstrap_servers and [kafka] settings."),
    kafka_setting: list[str] = typer.Option([], "-X", help=_X_HELP),
    timeout: float = typer.Option(10.0, "--timeout", min=0.1, help="Seconds to wait for a broker to answer."),
    validate: bool = typer.Option(False, "--validate", help="Send only events fieldgraph can decode."),
) -> None:
    """Send event files to Kafka, each keyed by its dataset URN (idempotent producer): JSON to fieldgraph's
    topics, Avro with DataHub's MCP schema to DataHub's MCP topic.

    Kafka and registry settings as the worker reads them: flags > FIELDGRAPH_BOOTSTRAP_SERVERS,
    FIELDGRAPH_KAFKA_*, FIELDGRAPH_SCHEMA_REGISTRY_URL > config file. Exit 3 when events were skipped, 5 when
    no broker (or registry) answers."""
    from fieldgraph.ingest.config import load_config, platforms_from_env
    from fieldgraph.ingest.emitter import Emitter
    from fieldgraph.ingest.replay import event_files, read_events
    from fieldgraph.ingest.sources import decode_event

    files = event_files(paths)
    cfg = load_config(config, flags={"bootstrap_servers": bootstrap_servers, "schema_registry_url": schema_registry_url,
                                     "kafka": parse_pairs(kafka_setting, "-X")})
    try:
        em = Emitter(cfg.bootstrap_servers, topic=topic, format=wire, schema_registry_url=cfg.schema_registry_url,
                     schema_registry=cfg.schema_registry, kafka=cfg.kafka, timeout=timeout)
    except FieldgraphError:
        raise
    except Exception as exc:  # a bad -X setting
        raise EmitError(f"{type(exc).__name__}: {exc}") from exc
    sent = skipped = 0
    platforms = platforms_from_env()

    def skip(where: str, reason: object) -> None:  # reported and skipped, not fatal
        nonlocal skipped
        err.print(Text(f"skipped {where}: {reason}", style="yellow"), soft_wrap=True)
        skipped += 1

    for f in files:
        for raw in read_events(f):
            if raw.error is not None:
                skip(raw.where, raw.error)
                continue
            if validate:
                try:
                    decode_event(raw.event, origin=raw.where, platforms=platforms)
                except FieldgraphError as exc:
                    skip(raw.where, exc)
                    continue
            try:
                em.emit(raw.event)
            except EmitError as exc:  # not an event the topic takes (e.g. a snapshot on DataHub's MCP topic)
                skip(raw.where, exc)
                continue
            sent += 1
    report = em.flush()
    out.print(Text(f"sent {plural(report.delivered, 'event')} from {plural(len(files), 'file')} to {topic}"
                   + (f"; skipped {skipped}" if skipped else "")))
    if skipped:
        raise typer.Exit(EXIT_BAD_INPUT)
