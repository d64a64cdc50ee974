"""Worker settings: defaults < config file (TOML) < environment (``FIELDGRAPH_*``) < command-line flags.

Config file (``--config worker.toml`` or ``FIELDGRAPH_CONFIG``)::

    bootstrap_servers = "kafka:9092"
    group_id = "fieldgraph"
    topics = ["MetadataChangeLog_Versioned_v1"]
    graph = "bolt://neo4j:7687"
    non_propagating = ["Deprecated", "urn:li:glossaryTerm:Internal.Draft"]   # never inherited downstream
    schema_registry_url = "http://schema-registry:8081"
    [kafka]                      # librdkafka settings, passed through as they are
    "security.protocol" = "SASL_SSL"
    "sasl.mechanism" = "PLAIN"
    [schema_registry]            # SchemaRegistryClient settings
    "basic.auth.user.info" = "key:secret"

Environment: ``FIELDGRAPH_<SETTING>`` for each setting (``FIELDGRAPH_TOPICS`` and ``FIELDGRAPH_NON_PROPAGATING``
comma-separated), ``FIELDGRAPH_KAFKA_<NAME>`` for a librdkafka setting (``FIELDGRAPH_KAFKA_SASL_MECHANISM=PLAIN`` ->
``sasl.mechanism``), ``FIELDGRAPH_SCHEMA_REGISTRY_<NAME>`` likewise for the registry client.

``non_propagating`` is the graph's (every command that opens it reads it: :class:`GraphConfig`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from fieldgraph.errors import ConfigError
from fieldgraph.graph import LineageGraph
from fieldgraph.graph.scope import Scope
from fieldgraph.ingest.platforms import DEFAULT_MAPPING, PlatformMapping

#: the topic of fieldgraph's own producers (JSON events; ``fieldgraph emit``'s default)
FIELDGRAPH_TOPIC = "fieldgraph.events"
DEFAULT_TOPICS = ("MetadataChangeLog_Versioned_v1", "MetadataChangeProposal_v1", "MetadataAuditEvent_v4",
                  FIELDGRAPH_TOPIC)


@dataclass(frozen=True)
class GraphConfig:
    """Where the lineage graph is, read once at the edge: flags, then the environment
    (``FIELDGRAPH_GRAPH``, ``FIELDGRAPH_GRAPH_NAME``, ``FIELDGRAPH_DATA``, ``NEO4J_USERNAME``,
    ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``), then the defaults (the embedded FalkorDB in ``.fieldgraph/``).

    ``non_propagating``: the tags and terms that stay on the fields that have them, never inherited downstream
    (``LineageGraph``'s setting): the caller's, else ``FIELDGRAPH_NON_PROPAGATING`` (comma-separated), else the
    ``non_propagating`` list of the config file ``FIELDGRAPH_CONFIG`` names, else none."""

    uri: str = "embedded"
    name: str | None = None
    data_dir: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    non_propagating: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, uri: str | None = None, name: str | None = None,
                 data_dir: str | None = None, non_propagating: Sequence[str] | None = None) -> GraphConfig:
        env = os.environ if env is None else env
        if non_propagating is None:
            non_propagating = _non_propagating(env)
        return cls(uri=uri or env.get("FIELDGRAPH_GRAPH") or "embedded",
                   name=name or env.get("FIELDGRAPH_GRAPH_NAME") or None,
                   data_dir=data_dir or env.get("FIELDGRAPH_DATA") or None,
                   user=env.get("NEO4J_USERNAME") or env.get("NEO4J_USER") or None,
                   password=env.get("NEO4J_PASSWORD"), database=env.get("NEO4J_DATABASE") or None,
                   non_propagating=tuple(non_propagating))

    def open(self, **kw: Any) -> LineageGraph:
        """The graph (``kw``: ``batch_size``, ``schema``)."""
        return LineageGraph.open(self.uri, graph=self.name, data_dir=self.data_dir, user=self.user,
                                 password=self.password, database=self.database,
                                 non_propagating=self.non_propagating, **kw)


def _non_propagating(env: Mapping[str, str]) -> list[str]:
    """The ``non_propagating`` setting of the environment, else of the config file ``FIELDGRAPH_CONFIG`` names."""
    if "FIELDGRAPH_NON_PROPAGATING" in env:
        return list(_coerce("non_propagating", env["FIELDGRAPH_NON_PROPAGATING"],
                            "environment FIELDGRAPH_NON_PROPAGATING"))
    path = env.get("FIELDGRAPH_CONFIG")
    if not path:
        return []
    doc = _load_toml(Path(path))
    return list(_coerce("non_propagating", doc.get("non_propagating", []), path))


@dataclass
class WorkerConfig:
    #: the Kafka brokers (``-b``), comma-separated host:port
    bootstrap_servers: str = "localhost:9092"
    #: the consumer group the workers share (``--group``)
    group_id: str = "fieldgraph"
    #: the topics the worker subscribes to (``--topic``): DataHub's and fieldgraph's own
    topics: list[str] = field(default_factory=lambda: list(DEFAULT_TOPICS))
    #: dead-letter topic; default ``<topic>.dlq`` of the message's topic
    dlq_topic: str | None = None
    #: appended to a message's topic to name its dead-letter topic, when ``dlq_topic`` is not set
    dlq_suffix: str = ".dlq"
    #: the graph URI (``--graph``; else ``FIELDGRAPH_GRAPH``, else the embedded graph)
    graph: str | None = None
    #: the graph's name inside its store (``--graph-name``)
    graph_name: str | None = None
    #: the most messages one micro-batch polls
    batch_size: int = 2000
    #: how long a poll waits to fill a batch (seconds)
    batch_timeout_s: float = 0.5
    #: processes that decode message values beside the worker's (0: decode in the worker's own process)
    decode_processes: int = 1
    #: the schema registry Avro values are decoded with (``mock://NAME``: an in-process one)
    schema_registry_url: str | None = None
    #: local ``.avsc`` files to decode Avro values with, instead of a registry
    avsc: list[str] = field(default_factory=list)
    #: the port Prometheus metrics are served on (none by default)
    metrics_port: int | None = None
    #: seconds between the worker's progress lines
    log_interval_s: float = 10.0
    #: where a new group starts reading: ``earliest`` or ``latest``
    auto_offset_reset: str = "earliest"
    #: the longest pause between retries of a graph or broker that is down (seconds)
    retry_max_s: float = 30.0
    #: send events with no aspect fieldgraph reads to the DLQ (for topics only fieldgraph's producers use);
    #: off by default, since DataHub's topics carry every aspect of every entity
    strict_aspects: bool = False
    #: JSON file mapping OpenLineage namespaces to DataHub platforms (see ingest/sources/openlineage.py)
    openlineage_platforms: str | None = None
    #: fill the transformation types OpenLineage column lineage lacks from the job's SQL (``--types-from-sql``)
    openlineage_types_from_sql: bool = False
    #: tags and terms never inherited downstream (the graph's setting; see GraphConfig)
    non_propagating: list[str] = field(default_factory=list)
    #: librdkafka settings, passed through as they are (``-X name=value``)
    kafka: dict[str, str] = field(default_factory=dict)
    #: schema registry client settings, passed through as they are
    schema_registry: dict[str, str] = field(default_factory=dict)
    #: the graph with its credentials, as load_config read them (not a setting of its own)
    graph_target: GraphConfig | None = field(default=None, repr=False)

    def graph_config(self) -> GraphConfig:
        return self.graph_target or GraphConfig(uri=self.graph or "embedded", name=self.graph_name)

    def platforms(self) -> PlatformMapping:
        mapping = PlatformMapping.load(self.openlineage_platforms) if self.openlineage_platforms else DEFAULT_MAPPING
        return replace(mapping, types_from_sql=True) if self.openlineage_types_from_sql else mapping


@dataclass(frozen=True)
class ServeToken:
    """A named token of a tokens file: the SHA-256 of its secret (hex; never the secret), what it may read and
    write (:class:`~fieldgraph.graph.scope.Scope`; ``read.through_hidden``: its walks go on through what it may not
    read)."""

    name: str
    sha256: str = field(repr=False)
    read: Scope = Scope()
    write: Scope = Scope()


#: the keys a tokens file's entry takes
_TOKEN_KEYS = ("name", "sha256", "read", "write", "through_hidden")


def load_tokens(path: Path) -> tuple[ServeToken, ...]:
    """The named tokens of a tokens file (TOML, ``[[token]]`` entries; ``fieldgraph serve-token`` prints one)::

        [[token]]
        name = "finance-analysts"
        sha256 = "<hex SHA-256 of the token>"
        read = ["platform:hive", "urn:li:dataset:(urn:li:dataPlatform:kafka,finance."]
        write = []
        through_hidden = false

    :class:`ConfigError` naming the file, the entry and what is wrong."""
    doc = _load_toml(path)
    extra = sorted(set(doc) - {"token"})
    if extra:
        raise ConfigError(f"{path}: unknown key {extra[0]!r}: a tokens file holds [[token]] entries")
    entries = doc.get("token", [])
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: no [[token]] entries")
    out: list[ServeToken] = []
    for i, e in enumerate(entries, 1):
        if not isinstance(e, dict):
            raise ConfigError(f"{path}: token {i} is not a table ([[token]] with name, sha256, read, write)")
        out.append(_token(e, f"{path}: token {i}" + (f" ({e['name']!r})" if isinstance(e.get("name"), str) else "")))
    names = [t.name for t in out]
    for t in out:
        if names.count(t.name) > 1:
            raise ConfigError(f"{path}: two tokens are named {t.name!r}: each token's name is its own")
    hashes = [t.sha256 for t in out]
    for t in out:
        if hashes.count(t.sha256) > 1:
            raise ConfigError(f"{path}: token {t.name!r} has the sha256 of another token: each needs its own secret")
    return tuple(out)


def _token(e: Any, where: str) -> ServeToken:
    unknown = sorted(set(e) - set(_TOKEN_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (an entry takes {', '.join(_TOKEN_KEYS)})")
    name, digest = e.get("name"), e.get("sha256")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: 'name' is missing or empty")
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest.lower()):
        raise ConfigError(f"{where}: 'sha256' is not a SHA-256 in hex (64 hex digits; fieldgraph serve-token prints "
                          "it; never the token itself)")
    through = e.get("through_hidden", False)
    if not isinstance(through, bool):
        raise ConfigError(f"{where}: 'through_hidden' is true or false, got {through!r}")
    scopes: dict[str, tuple[str, ...]] = {}
    for key in ("read", "write"):
        rules = e.get(key, [])
        if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            raise ConfigError(f"{where}: {key!r} is a list of rules ('*', 'platform:<name>', a dataset URN prefix), "
                              f"got {rules!r}")
        try:
            scopes[key] = tuple(Scope(tuple(rules)).rules)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {key!r}: {exc}") from exc
    return ServeToken(name.strip(), digest.lower(), Scope(scopes["read"], through), Scope(scopes["write"]))


@dataclass(frozen=True)
class ServeConfig:
    """``fieldgraph serve``'s settings, read once at the edge (flags; the token from ``FIELDGRAPH_SERVE_TOKEN`` or
    a file, never a flag: flags show in process lists)."""

    host: str = "127.0.0.1"
    port: int = 8080
    #: the bearer token writes need (reads too with ``protect_reads``); None: writes are refused
    token: str | None = field(default=None, repr=False)
    protect_reads: bool = False
    #: origins allowed to call the API from a browser page of theirs (CORS); none by default
    cors_origins: tuple[str, ...] = ()
    #: largest request body, after decompression (bytes)
    max_body_bytes: int = 10 * 1024 * 1024
    #: requests per second per client address (bursts of twice that); 0: no limit
    rate_limit: float = 50.0
    #: where bad events go (JSON Lines, as ``fieldgraph ingest --rejects``)
    rejects: Path = Path(".fieldgraph/rejects.jsonl")
    #: the most events one graph write batches (requests arriving together are written together)
    batch_events: int = 500
    #: the named tokens of ``--tokens-file``, each with its scopes; with them, reads need a token
    tokens: tuple[ServeToken, ...] = ()

    @property
    def reads_need_token(self) -> bool:
        return self.protect_reads or bool(self.tokens)

    @classmethod
    def load(cls, *, token_file: Path | None = None, tokens_file: Path | None = None,
             env: Mapping[str, str] | None = None, **flags: Any) -> ServeConfig:
        env = os.environ if env is None else env
        token = (env.get("FIELDGRAPH_SERVE_TOKEN") or "").strip() or None  # as a request's is: no line ends
        if token_file is not None:
            try:
                token = token_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"--token-file {token_file}: cannot read: {exc.strerror or exc}") from exc
        if token is not None and len(token) < 16:
            raise ConfigError("the serve token is shorter than 16 characters: use a long random one "
                              "(e.g. python -c 'import secrets; print(secrets.token_urlsafe())')")
        tokens = load_tokens(tokens_file) if tokens_file is not None else ()
        cfg = cls(token=token, tokens=tokens, **{k: v for k, v in flags.items() if v is not None})
        if cfg.protect_reads and not cfg.token and not cfg.tokens:
            raise ConfigError("--protect-reads needs a token (FIELDGRAPH_SERVE_TOKEN, --token-file or --tokens-file)")
        if cfg.max_body_bytes < 1 or cfg.rate_limit < 0 or cfg.batch_events < 1:
            raise ConfigError(f"--max-body-bytes and --batch-events must be positive and --rate-limit not negative, "
                              f"got {cfg.max_body_bytes}, {cfg.batch_events} and {cfg.rate_limit}")
        return cfg


_LISTS = {"topics", "avsc", "non_propagating"}
_DICTS = {"kafka", "schema_registry"}


def _coerce(name: str, value: Any, where: str) -> Any:
    f = {f.name: f for f in fields(WorkerConfig)}[name]
    typ = str(f.type)
    try:
        if name in _LISTS:
            if isinstance(value, str):
                return [v.strip() for v in value.split(",") if v.strip()]
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return value
            raise ValueError("expected a list of strings or a comma-separated string")
        if name in _DICTS:
            if not isinstance(value, Mapping):
                raise ValueError("expected a table of settings")
            return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}
        if value is None:
            return None
        if "bool" in typ:
            if isinstance(value, bool):
                return value
            if str(value).lower() in ("1", "true", "yes", "on"):
                return True
            if str(value).lower() in ("0", "false", "no", "off", ""):
                return False
            raise ValueError("expected true or false")
        if "int" in typ:
            return int(value)
        if "float" in typ:
            return float(value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: setting {name!r} = {value!r}: {exc}") from exc


def load_config(path: str | Path | None = None, *, env: Mapping[str, str] | None = None,
                flags: Mapping[str, Any] | None = None) -> WorkerConfig:
    """Merge the config file, the environment and the flags (``None`` flags are unset) into a config."""
    env = os.environ if env is None else env
    cfg = WorkerConfig()
    path = path or env.get("FIELDGRAPH_CONFIG")
    if path:
        _read_file(cfg, Path(path))
    _read_env(cfg, env)
    for k, v in (flags or {}).items():
        if v is None or (k in _LISTS | _DICTS and not v):
            continue
        if k in _DICTS:
            getattr(cfg, k).update(_coerce(k, v, f"--{k.replace('_', '-')}"))
        else:
            setattr(cfg, k, _coerce(k, v, f"--{k.replace('_', '-')}"))
    if not cfg.topics:
        raise ConfigError("no topics to subscribe to (--topic)")
    cfg.graph_target = GraphConfig.from_env(env, uri=cfg.graph, name=cfg.graph_name,
                                            non_propagating=cfg.non_propagating)
    if cfg.batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1, got {cfg.batch_size}")
    if cfg.decode_processes < 0:
        raise ConfigError(f"decode_processes must be 0 (decode in the worker) or more, got {cfg.decode_processes}")
    return cfg


_NAMES = {f.name for f in fields(WorkerConfig)} - {"graph_target"}


def _load_toml(p: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not TOML: {exc}") from exc


def _read_file(cfg: WorkerConfig, p: Path) -> None:
    doc = _load_toml(p)
    for k, v in doc.items():
        if k not in _NAMES:
            raise ConfigError(f"{p}: unknown setting {k!r}; known: {', '.join(sorted(_NAMES))}")
        setattr(cfg, k, _coerce(k, v, str(p)))


def _read_env(cfg: WorkerConfig, env: Mapping[str, str]) -> None:
    for key, value in env.items():
        if not key.startswith("FIELDGRAPH_") or key in ("FIELDGRAPH_CONFIG", "FIELDGRAPH_DATA"):
            continue
        rest = key[len("FIELDGRAPH_"):]
        if rest.startswith("SCHEMA_REGISTRY_") and rest != "SCHEMA_REGISTRY_URL":
            cfg.schema_registry[rest[len("SCHEMA_REGISTRY_"):].lower().replace("_", ".")] = value
        elif rest.startswith("KAFKA_"):
            cfg.kafka[rest[len("KAFKA_"):].lower().replace("_", ".")] = value
        elif rest.lower() in _NAMES and rest.lower() not in _DICTS:
            setattr(cfg, rest.lower(), _coerce(rest.lower(), value, f"environment {key}"))


def platforms_from_env(env: Mapping[str, str] | None = None, *, types_from_sql: bool = False) -> PlatformMapping:
    """The OpenLineage platform mapping ``FIELDGRAPH_OPENLINEAGE_PLATFORMS`` names, else the defaults; with
    ``types_from_sql`` (a command's ``--types-from-sql``) set on it."""
    path = (os.environ if env is None else env).get("FIELDGRAPH_OPENLINEAGE_PLATFORMS")
    mapping = PlatformMapping.load(path) if path else DEFAULT_MAPPING
    return replace(mapping, types_from_sql=True) if types_from_sql else mapping


#: every environment variable something reads, with what it sets, beyond the worker's settings
#: (``FIELDGRAPH_<SETTING>``: :class:`WorkerConfig`) and the pass-through prefixes ``FIELDGRAPH_KAFKA_`` and
#: ``FIELDGRAPH_SCHEMA_REGISTRY_`` (the reference page of the documentation lists them from here)
ENV_VARIABLES = {
    "FIELDGRAPH_CONFIG": "the config file (TOML) every command and the worker read their settings from",
    "FIELDGRAPH_DATA": "the embedded graph's folder (default `.fieldgraph/`): its socket, its files, its log",
    "FIELDGRAPH_GRAPH": "the graph every command opens, as `--graph` takes it: `embedded` (the default), "
                        "`embedded:PATH`, `falkordb://host:port`, `bolt://host:7687`, `neo4j://host:7687`, `memory`",
    "FIELDGRAPH_GRAPH_NAME": "the graph's name inside its store (FalkorDB's graph key; default `fieldgraph`)",
    "FIELDGRAPH_NON_PROPAGATING": "tags and terms never inherited downstream, comma-separated (wins over the config "
                                  "file's `non_propagating`)",
    "FIELDGRAPH_OPENLINEAGE_PLATFORMS": "a JSON file mapping OpenLineage namespaces to DataHub platforms",
    "FIELDGRAPH_LOG_LEVEL": "`--log-level`: debug, info (the default), warning or error",
    "FIELDGRAPH_LOG_FORMAT": "`--log-format`: text (the default) or json (one JSON object a line)",
    "FIELDGRAPH_SERVE_TOKEN": "the token `fieldgraph serve` takes writes (and protected reads) with; 16 characters "
                              "or more, never a flag",
    "FIELDGRAPH_KAFKA_<NAME>": "a librdkafka setting for the worker and the emitter (`FIELDGRAPH_KAFKA_SASL_MECHANISM` "
                               "is `sasl.mechanism`)",
    "FIELDGRAPH_SCHEMA_REGISTRY_<NAME>": "a schema registry client setting (`FIELDGRAPH_SCHEMA_REGISTRY_BASIC_AUTH_"
                                         "USER_INFO` is `basic.auth.user.info`)",
    "NEO4J_USERNAME": "the Neo4j user, unless the `bolt://` URI names one (`NEO4J_USER` is read too)",
    "NEO4J_USER": "the Neo4j user, when `NEO4J_USERNAME` is not set",
    "NEO4J_PASSWORD": "the Neo4j password, unless the URI holds one (`make neo4j` sets it at the server's first start)",
    "NEO4J_DATABASE": "the Neo4j database (default: the server's default database)",
    # the test suite's own switches
    "FIELDGRAPH_REGEN_GOLDEN": "tests: write the normalizers' golden files anew instead of comparing with them",
    "FIELDGRAPH_DIFF_EXAMPLES": "tests: the number of random schema pairs the differential tests try",
}
ENV_NAMES = frozenset(n for n in ENV_VARIABLES if n.startswith("FIELDGRAPH_") and not n.endswith(">"))
_ENV_PREFIXES = ("FIELDGRAPH_KAFKA_", "FIELDGRAPH_SCHEMA_REGISTRY_")


def unknown_env(env: Mapping[str, str] | None = None) -> list[str]:
    """A warning for each ``FIELDGRAPH_*`` variable that nothing reads (a misspelling, a setting that does not
    exist), naming the known variable it most resembles."""
    import difflib

    env = os.environ if env is None else env
    known = ENV_NAMES | {f"FIELDGRAPH_{n.upper()}" for n in _NAMES - _DICTS}
    out = []
    for key in sorted(env):
        if not key.startswith("FIELDGRAPH_") or key in known or key.startswith(_ENV_PREFIXES):
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
        out.append(f"environment variable {key} is not a fieldgraph setting; ignored"
                   + (f" (did you mean {close[0]}?)" if close else ""))
    return out
