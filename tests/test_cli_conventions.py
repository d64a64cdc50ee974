"""What holds for every command: ``--help`` works, exit codes say what kind of failure it was, ``--version``,
log levels and JSON logs, output that fits 80 columns, rejects that accumulate, no empty graph made by a read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from fieldgraph.ingest.cli import app
from fieldgraph.ingest.cli.boundary import (
    EXIT_BAD_INPUT,
    EXIT_NOT_FOUND,
    EXIT_PARTIAL,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
)

from .conftest import EXAMPLES, ds, schema_event, sf

REPORT_TOTAL = sf(ds("sales.revenue_report", "tableau"), "total_revenue")
KAFKA_PRICE = sf(ds("demo.orders", "kafka"), "items.price")


def every_command() -> list[tuple[str, ...]]:
    """Every command and sub-command of the app, found by walking it (not listed by hand)."""
    found: list[tuple[str, ...]] = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:  # typer's commands (its own click, bundled)
        found.append(path)
        if hasattr(cmd, "commands"):  # a group
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


COMMANDS = every_command()


def test_the_walk_finds_the_commands() -> None:
    assert {("ingest",), ("lineage", "upstream"), ("server", "status"), ("diff-lineage",)} <= set(COMMANDS)
    assert len(COMMANDS) > 25


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "fieldgraph")
def test_every_command_answers_help(command: tuple[str, ...]) -> None:
    res = CliRunner().invoke(app, [*command, "--help"])
    assert res.exit_code == 0, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "Usage:" in res.output and "Traceback" not in res.output


def test_version() -> None:
    from importlib.metadata import version

    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"fieldgraph {version('fieldgraph')}"


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command in a fresh process (what a user's shell runs), in ``cwd``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FIELDGRAPH_", "NEO4J_"))}
    return subprocess.run([sys.executable, "-m", "fieldgraph.ingest.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**clean, **(env or {})})


# --- exit codes ------------------------------------------------------------------------------------------------


@pytest.fixture
def cli(graph: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("FIELDGRAPH_GRAPH", graph.uri)
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(app, list(args))

    yield run
    run("query", "MATCH (n) DETACH DELETE n", "--write")


@pytest.mark.integration
def test_exit_codes_say_what_kind_of_failure_it_was(cli: Any) -> None:
    assert cli("ingest", str(EXAMPLES), "--json").exit_code == 0
    assert cli("lineage", "upstream").exit_code == EXIT_USAGE  # a missing argument
    assert cli("lineage", "upstream", REPORT_TOTAL, "--depth", "0").exit_code == EXIT_USAGE  # below its minimum
    assert cli("lineage", "upstream", REPORT_TOTAL, "--as-of", "someday").exit_code == EXIT_BAD_INPUT
    assert cli("lineage", "upstream", sf(ds("db.none"), "x")).exit_code == EXIT_NOT_FOUND
    # no lineage path: not found, with or without --json (the JSON still says so)
    unrelated = sf(ds("demo.orders", "kafka"), "coupon")
    assert cli("lineage", "path", unrelated, REPORT_TOTAL).exit_code == EXIT_NOT_FOUND
    res = cli("lineage", "path", unrelated, REPORT_TOTAL, "--json")
    assert res.exit_code == EXIT_NOT_FOUND and json.loads(res.stdout)["path"] == []
    assert cli("lineage", "path", KAFKA_PRICE, REPORT_TOTAL).exit_code == 0
    # a walk cut short by its time budget is partial (and says so); a depth the user asked for is not
    res = cli("lineage", "upstream", REPORT_TOTAL, "--time-budget", "0", "--json")
    assert res.exit_code == EXIT_PARTIAL and json.loads(res.stdout)["partial"] is True
    res = cli("lineage", "upstream", REPORT_TOTAL, "--depth", "1", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["partial"] is True  # more lies beyond, as asked
    assert cli("impact", REPORT_TOTAL, "--time-budget", "0").exit_code == EXIT_PARTIAL
    assert cli("stats", "--graph", "falkordb://127.0.0.1:1").exit_code == EXIT_UNAVAILABLE


def test_a_read_never_creates_an_empty_graph_and_the_server_commands_take_graph(tmp_path: Path) -> None:
    res = _run("stats", cwd=tmp_path)
    assert res.returncode == EXIT_NOT_FOUND and "no embedded graph in" in res.stderr
    assert not (tmp_path / ".fieldgraph").exists()
    res = _run("lineage", "upstream", REPORT_TOTAL, "--graph", f"embedded:{tmp_path / 'typo'}", cwd=tmp_path)
    assert res.returncode == EXIT_NOT_FOUND and not (tmp_path / "typo").exists()

    data = tmp_path / "g"
    status = _run("server", "status", "--graph", f"embedded:{data}", cwd=tmp_path)
    assert status.returncode == EXIT_UNAVAILABLE and "not running" in status.stdout
    assert _run("server", "start", "--graph", f"embedded:{data}", cwd=tmp_path).returncode == 0
    try:
        assert _run("server", "status", "--graph", f"embedded:{data}", cwd=tmp_path).returncode == 0
        assert _run("stats", "--graph", f"embedded:{data}", cwd=tmp_path).returncode == 0  # it exists now
    finally:
        assert _run("server", "stop", "--graph", f"embedded:{data}", cwd=tmp_path).returncode == 0
    res = _run("server", "status", "--graph", "bolt://127.0.0.1:1", cwd=tmp_path)
    assert res.returncode == EXIT_BAD_INPUT and "embedded graph only" in res.stderr


# --- logs ------------------------------------------------------------------------------------------------------


def test_logs_in_json_and_at_a_chosen_level(tmp_path: Path) -> None:
    res = _run("--log-format", "json", "ingest", str(EXAMPLES), "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = [json.loads(line) for line in res.stderr.splitlines()]  # every line on stderr is a JSON object
    created = [x for x in lines if "creating a new embedded graph" in x["message"]]
    assert created and created[0]["level"] == "INFO" and created[0]["logger"] == "fieldgraph.graph.embedded"
    assert {"time", "level", "logger", "message"} <= set(created[0])

    quiet = _run("ingest", str(EXAMPLES), "--json", "--graph", f"embedded:{tmp_path / 'q'}", cwd=tmp_path,
                 env={"FIELDGRAPH_LOG_LEVEL": "warning"})
    assert quiet.returncode == 0 and "creating a new embedded graph" not in quiet.stderr
    bad = _run("--log-level", "loud", "stats", cwd=tmp_path)
    assert bad.returncode == EXIT_USAGE and "debug, info, warning, error" in bad.stderr


# --- output ----------------------------------------------------------------------------------------------------


def test_tables_fit_80_columns_and_wrap_names_between_their_parts(tmp_path: Path) -> None:
    assert _run("ingest", str(EXAMPLES), cwd=tmp_path).returncode == 0
    res = _run("lineage", "upstream", REPORT_TOTAL, cwd=tmp_path, env={"COLUMNS": "80"})
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    cells = [c.strip() for line in lines for c in line.split("│")]
    # every line of a name ends at a separator or is its last part: "snowflake:analytics." then "public."
    for part in ("orders_daily", "fact_orders", "revenue_report", "total_revenue", "timeStamp"):
        assert any(part in c for c in cells), part
    assert "snowflake:analytics." in res.stdout and "BLACKBOX 0.8" in res.stdout


def test_rejects_accumulate_across_runs_with_their_time(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(schema_event(ds("db.a"), ["x"], 1)) + "\n{not json\n")
    rejects = tmp_path / "rejects.jsonl"
    for _ in range(2):
        res = _run("ingest", str(bad), "--rejects", str(rejects), cwd=tmp_path)
        assert res.returncode == EXIT_BAD_INPUT and "1 bad event added to" in res.stdout
    kept = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert len(kept) == 2 and all(r["line"] == 2 and r["rejectedAt"] for r in kept)


# --- the environment -------------------------------------------------------------------------------------------


def test_misspelled_environment_variables_are_warned_about(tmp_path: Path) -> None:
    from fieldgraph.ingest.config import ENV_NAMES, unknown_env

    known = {name: "x" for name in ENV_NAMES} | {"FIELDGRAPH_BATCH_SIZE": "5", "FIELDGRAPH_TOPICS": "a,b",
                                                 "FIELDGRAPH_KAFKA_SASL_MECHANISM": "PLAIN",
                                                 "FIELDGRAPH_SCHEMA_REGISTRY_URL": "http://r",
                                                 "FIELDGRAPH_BOOTSTRAP_SERVERS": "k:9092", "OTHER_GRPAH": "x"}
    assert unknown_env(known) == []
    (warning,) = unknown_env({"FIELDGRAPH_GRPAH": "bolt://x"})
    assert "FIELDGRAPH_GRPAH" in warning and "did you mean FIELDGRAPH_GRAPH?" in warning
    (far,) = unknown_env({"FIELDGRAPH_SOMETHING_ELSE": "1"})
    assert "did you mean" not in far

    res = _run("stats", cwd=tmp_path, env={"FIELDGRAPH_BOOTSTRAP_SERVER": "k:9092"})
    assert "FIELDGRAPH_BOOTSTRAP_SERVER is not a fieldgraph setting" in res.stderr
    assert "did you mean FIELDGRAPH_BOOTSTRAP_SERVERS?" in res.stderr
