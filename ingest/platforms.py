"""How OpenLineage's dataset ``(namespace, name)`` pairs become DataHub dataset URNs: a setting of the worker, the
backfill and the service (``$FIELDGRAPH_OPENLINEAGE_PLATFORMS``, read at the edge), used by the OpenLineage source."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fieldgraph.errors import ConfigError, EventError
from fieldgraph.normalizers.urns import make_dataset_urn

MAPPING_ENV = "FIELDGRAPH_OPENLINEAGE_PLATFORMS"

#: URI scheme (or bare namespace) -> DataHub platform
DEFAULT_SCHEMES = {
    "postgres": "postgres", "postgresql": "postgres", "mysql": "mysql", "mariadb": "mariadb",
    "mssql": "mssql", "sqlserver": "mssql", "oracle": "oracle", "db2": "db2", "teradata": "teradata",
    "redshift": "redshift", "snowflake": "snowflake", "bigquery": "bigquery", "trino": "trino", "presto": "presto",
    "hive": "hive", "athena": "athena", "awsathena": "athena", "glue": "glue", "databricks": "databricks",
    "kafka": "kafka", "cassandra": "cassandra", "mongodb": "mongodb", "clickhouse": "clickhouse",
    "s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gcs", "gcs": "gcs", "hdfs": "hdfs", "file": "file",
    "abfss": "adls", "abfs": "adls", "wasbs": "adls", "wasb": "adls", "dbfs": "dbfs", "iceberg": "iceberg",
    "duckdb": "duckdb", "sqlite": "sqlite", "vertica": "vertica", "spanner": "spanner", "bigtable": "bigtable",
}
#: schemes whose dataset name starts with the namespace's authority (the bucket or container)
BUCKET_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "gcs", "abfss", "abfs", "wasbs", "wasb"})
_PLATFORM_CHARS = re.compile(r"[^a-z0-9_-]+")


@dataclass
class PlatformMapping:
    """How an OpenLineage ``(namespace, name)`` becomes a dataset URN (and how its column lineage is read:
    :attr:`types_from_sql`).

    ``namespaces``: exact namespace -> ``{"platform", "prefix", "env"}`` (checked first);
    ``schemes``: URI scheme -> platform (over :data:`DEFAULT_SCHEMES`); ``env``: default env.
    Object stores (s3, gcs, adls) prefix the name with the bucket (``s3://b`` + ``/p/x`` -> ``b/p/x``);
    other platforms keep the name as it is (``db.schema.table``, a topic, an HDFS path). A namespace
    with no scheme is its own platform (``bigquery``), lower-cased.
    """

    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    schemes: dict[str, str] = field(default_factory=dict)
    env: str = "PROD"
    #: fill the transformation types an output's column lineage lacks (``dbt-ol`` sends none) from the job's ``sql``
    #: facet (``--types-from-sql``; see :mod:`fieldgraph.ingest.sources.openlineage`); set where a command starts
    types_from_sql: bool = False

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> PlatformMapping:
        unknown = set(obj) - {"namespaces", "schemes", "env"}
        if unknown:
            raise ConfigError(f"unknown keys {sorted(unknown)} in the OpenLineage platform mapping "
                             "(expected namespaces, schemes, env)")
        return cls(dict(obj.get("namespaces") or {}), dict(obj.get("schemes") or {}), obj.get("env") or "PROD")

    def dataset_urn(self, namespace: str, name: str) -> str:
        if not namespace or not name:
            raise EventError(f"dataset namespace and name must be non-empty, got {namespace!r}, {name!r}")
        env = self.env
        exact = self.namespaces.get(namespace)
        if exact is not None:
            return make_dataset_urn(exact["platform"], exact.get("prefix", "") + name, exact.get("env", env))
        if "://" in namespace:
            parts = urlsplit(namespace)
            scheme = parts.scheme.lower()
            platform = self.schemes.get(scheme) or DEFAULT_SCHEMES.get(scheme) or _PLATFORM_CHARS.sub("_", scheme)
            if scheme in BUCKET_SCHEMES and parts.netloc:
                name = f"{parts.netloc}/{name.lstrip('/')}"
        else:
            key = namespace.lower()
            platform = self.schemes.get(key) or DEFAULT_SCHEMES.get(key) or _PLATFORM_CHARS.sub("_", key)
        return make_dataset_urn(platform, name, env)

    @classmethod
    def load(cls, path: str) -> PlatformMapping:
        """The mapping in the JSON file ``path`` (``$FIELDGRAPH_OPENLINEAGE_PLATFORMS``, read at the edge)."""
        try:
            with open(path, encoding="utf-8") as fh:
                return cls.from_json(json.load(fh))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the OpenLineage platform mapping {path}: {exc}") from exc


#: the mapping with no overrides
DEFAULT_MAPPING = PlatformMapping()
