"""Credentials never reach a log line or an error message: the worker's logs and the CLI's errors, with a real
Neo4j whose password is in the graph URI and a schema registry URL with a user and password."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fieldgraph.ingest.secrets import redact

from .conftest import ds, schema_event
from .kafka_fixtures import broker, wait_committed  # noqa: F401 - the session's broker fixture

PY = [sys.executable, "-m", "fieldgraph.ingest.cli"]


@pytest.mark.parametrize(("text", "masked"), [
    ("graph bolt://neo4j:s3cr%40t@neo4j:7687 up", "graph bolt://neo4j:***@neo4j:7687 up"),
    ("schema registry at http://u:p4ss@reg:8081/: 401", "schema registry at http://u:***@reg:8081/: 401"),
    ("falkordb://:pw@host:6379/g", "falkordb://:***@host:6379/g"),
    ("{'sasl.password': 'hunter2', 'bootstrap.servers': 'k:9092'}", "{'sasl.password': '***', 'bootstrap.servers': "
     "'k:9092'}"),
    ('{"basic.auth.user.info": "key:secret"}', '{"basic.auth.user.info": "***"}'),
    ("FIELDGRAPH_TOKEN=abcdefghijklmnop", "FIELDGRAPH_TOKEN=***"),
    ("bolt://neo4j@host:7687 and embedded:/tmp/x", "bolt://neo4j@host:7687 and embedded:/tmp/x"),  # no secret
    ("{'sasl.password': 'two words, a comma'}", "{'sasl.password': '***'}"),  # quoted: to the closing quote
    ("field password_hash: removed; tokens.jsonl:12; topic secret:orders", "field password_hash: removed; "
     "tokens.jsonl:12; topic secret:orders"),  # words that only contain a secret word are left alone
])
def test_redact_masks_passwords_and_secret_settings(text: str, masked: str) -> None:
    assert redact(text) == masked


@pytest.mark.parametrize("uri", ["bolt://neo4j:TopSecretPw1@127.0.0.1:9", "falkordb://:TopSecretPw1@127.0.0.1:9"])
def test_cli_errors_mask_the_graph_password(uri: str) -> None:
    res = subprocess.run([*PY, "stats", "--graph", uri], capture_output=True, text=True, timeout=120)
    assert res.returncode == 5, res.stderr  # unavailable
    assert "TopSecretPw1" not in res.stderr + res.stdout and "error:" in res.stderr


def test_the_worker_logs_no_credentials(broker, neo4j_server, tmp_path) -> None:  # noqa: F811
    password = neo4j_server.password
    assert password in neo4j_server.uri
    topic = broker.create_topic(broker.name("secrets"), partitions=1)
    broker.emit(topic, [schema_event(ds("secret.t"), ["a"], ts=1)])
    group = broker.name("gs")
    config = tmp_path / "worker.toml"
    config.write_text('[schema_registry]\n"basic.auth.user.info" = "key:RegistrySecret9"\n')
    cmd = [*PY, "--log-level", "debug", "worker", "-b", broker.bootstrap, "-t", topic, "--group", group, "--graph", neo4j_server.uri,
           "--schema-registry-url", "http://reader:RegistrySecret9@127.0.0.1:9", "--config", str(config),
           "--exit-when-idle", "3"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert res.returncode == 0, res.stderr[-2000:]
    wait_committed(broker, group, topic, 1, timeout=10)
    logged = res.stderr + res.stdout
    assert "worker" in logged and "***" in logged  # the start-up line names the graph, masked
    assert password not in logged and "RegistrySecret9" not in logged, json.dumps(logged[-3000:])


def test_json_log_lines_are_masked_too(capsys) -> None:
    import logging

    from fieldgraph.ingest.cli.logs import setup_logging

    setup_logging("info", "json")
    try:
        logging.getLogger("fieldgraph.test").info("settings %s", json.dumps({"sasl.password": "hunter2"}))
    finally:
        setup_logging("info", "text")
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert "hunter2" not in line["message"] and "***" in line["message"]
