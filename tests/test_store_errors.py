"""The drivers' errors as fieldgraph's: classified by the drivers' codes and types (FalkorDB's own messages where
they are all there is), each keeping the driver's error as its cause. The errors are built here as the drivers
build them, without a server; the stores' fault tests cover the same paths against real servers."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import exceptions as ne
from redis import exceptions as re_

from fieldgraph.errors import GraphRefused, GraphUnavailable, QueryTimeout, TransientError
from fieldgraph.graph.store import FALKORDB_MESSAGES, falkordb_error, falkordb_says, neo4j_error

WHERE = "the test graph"
STMT = "MATCH (d:Dataset {urn: $urn})\nRETURN d"


def server_error(code: str, message: str = "it went wrong") -> ne.Neo4jError:
    """A Neo4j server error as the driver builds it from the server's failure message."""
    return ne.Neo4jError._hydrate_neo4j(code=code, message=message)


@pytest.mark.parametrize(("exc", "kind"), [
    (re_.ConnectionError("Error 111 connecting to localhost:6379. Connection refused."), GraphUnavailable),
    (re_.BusyLoadingError("Redis is loading the dataset in memory"), GraphUnavailable),
    (re_.TimeoutError("Timeout reading from socket"), GraphUnavailable),
    (re_.AuthenticationError("invalid password"), GraphUnavailable),
    (ConnectionResetError(104, "Connection reset by peer"), GraphUnavailable),
    (re_.ResponseError("Query timed out"), QueryTimeout),
    (re_.ResponseError("unique constraint violation on node of type Dataset"), GraphUnavailable),
    (re_.ResponseError("errMsg: Invalid input 'RETRUN'"), GraphRefused),
    (TypeError("Unsupported parameter type: <class 'object'>"), GraphRefused),
])
def test_falkordb_errors_by_type_then_message(exc: Exception, kind: type) -> None:
    ours = falkordb_error(exc, WHERE, STMT, 50)
    assert type(ours) is kind
    assert str(exc) in str(ours) or kind is QueryTimeout


def test_falkordb_messages_are_read_in_one_table_and_only_from_server_errors() -> None:
    assert falkordb_says(re_.ResponseError("Invalid graph operation on empty key"), "no graph")
    assert falkordb_says(re_.ResponseError("Attribute 'urn' is already indexed"), "exists")
    assert falkordb_says(re_.ResponseError("Constraint already exists"), "exists")
    assert not falkordb_says(re_.ConnectionError("empty key"), "no graph")  # the words of a server error only
    assert not falkordb_says(None, "exists")
    assert set(FALKORDB_MESSAGES) == {"no graph", "timeout", "conflict", "exists"}
    refused = falkordb_error(re_.ResponseError("errMsg: Invalid input"), WHERE, STMT)
    assert str(refused).endswith("\n  MATCH (d:Dataset {urn: $urn})")  # the statement's first line


@pytest.mark.parametrize(("exc", "kind"), [
    (server_error("Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration"), QueryTimeout),
    (server_error("Neo.ClientError.Transaction.TransactionTimedOut"), QueryTimeout),
    (server_error("Neo.ClientError.Schema.ConstraintValidationFailed"), GraphUnavailable),
    (server_error("Neo.ClientError.Statement.EntityNotFound"), GraphUnavailable),
    (server_error("Neo.ClientError.Statement.SyntaxError", "Invalid input 'RETRUN'"), GraphRefused),
    (server_error("Neo.ClientError.Statement.TypeError"), GraphRefused),
    (server_error("Neo.TransientError.Transaction.DeadlockDetected"), GraphUnavailable),
    (server_error("Neo.TransientError.General.DatabaseUnavailable"), GraphUnavailable),
    (server_error("Neo.DatabaseError.General.UnknownError"), GraphUnavailable),
    (ne.ServiceUnavailable("Couldn't connect to localhost:7687"), GraphUnavailable),
    (ne.SessionExpired("the session is no longer available"), GraphUnavailable),
    (OverflowError("Integer 18446744073709551616 out of range"), GraphRefused),
    (UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"), GraphRefused),
])
def test_neo4j_errors_by_code_then_type(exc: Exception, kind: type) -> None:
    ours = neo4j_error(exc, WHERE, STMT, 50)
    assert type(ours) is kind


def test_neo4j_classes_agree_with_codes() -> None:
    """The driver picks the class from the code: a conflict is its ConstraintError, a timeout a ClientError."""
    assert isinstance(server_error("Neo.ClientError.Schema.ConstraintValidationFailed"), ne.ConstraintError)
    assert isinstance(server_error("Neo.ClientError.Transaction.TransactionTimedOut"), ne.ClientError)
    assert isinstance(server_error("Neo.TransientError.Transaction.DeadlockDetected"), ne.TransientError)


def test_an_error_not_the_drivers_is_not_neo4js() -> None:
    assert neo4j_error(KeyError("fieldPath"), WHERE, STMT) is None


class _Failing:
    """A FalkorDB graph handle or a Neo4j driver whose every call raises ``exc``."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kw: Any) -> Any:
            raise self.exc

        return fail


@pytest.mark.parametrize("exc", [re_.ConnectionError("Connection refused"), re_.ResponseError("Query timed out"),
                                 re_.ResponseError("errMsg: Invalid input")])
def test_the_falkordb_store_keeps_the_cause(exc: Exception) -> None:
    from fieldgraph.graph.store import FalkorStore

    store = FalkorStore.__new__(FalkorStore)
    store.graph, store.where, store.graph_name = _Failing(exc), WHERE, "g"
    with pytest.raises((GraphUnavailable, QueryTimeout, GraphRefused)) as raised:
        store.run(STMT, write=True, timeout_ms=50)
    assert raised.value.__cause__ is exc


def test_a_read_of_a_graph_not_yet_there_is_empty() -> None:
    from fieldgraph.graph.store import FalkorStore

    store = FalkorStore.__new__(FalkorStore)
    store.graph, store.where, store.graph_name = _Failing(re_.ResponseError("Invalid graph operation on empty key")), \
        WHERE, "g"
    assert store.run(STMT) == []
    with pytest.raises(GraphRefused):
        store.run(STMT, write=True)


@pytest.mark.parametrize("exc", [ne.ServiceUnavailable("gone"), server_error("Neo.ClientError.Statement.SyntaxError")])
def test_the_neo4j_store_keeps_the_cause(exc: Exception) -> None:
    import threading

    import neo4j

    from fieldgraph.graph.store import Neo4jStore

    store = Neo4jStore.__new__(Neo4jStore)
    store._neo4j, store._local, store.uri, store.database = neo4j, threading.local(), "bolt://x", None
    store.driver = _Failing(exc)
    with pytest.raises((GraphUnavailable, GraphRefused)) as raised:
        store.run(STMT)
    assert raised.value.__cause__ is exc
    assert isinstance(raised.value, TransientError) == isinstance(exc, ne.ServiceUnavailable)
