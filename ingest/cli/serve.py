"""``fieldgraph serve``: the HTTP service (JSON API, OpenLineage and DataHub endpoints, the lineage explorer)."""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import typer

from fieldgraph.errors import require
from fieldgraph.ingest.cli.options import GraphName, GraphUri, TypesFromSql, open_graph

log = logging.getLogger("fieldgraph.serve")


def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0: every interface)."),
    port: int = typer.Option(8080, "--port", "-p", min=0, max=65535, help="Port to listen on."),
    graph: GraphUri = None,
    graph_name: GraphName = None,
    token_file: Path | None = typer.Option(None, "--token-file", help="File holding the bearer token writes need "
                                           "(else $FIELDGRAPH_SERVE_TOKEN; without one, writes are refused)."),
    protect_reads: bool = typer.Option(False, "--protect-reads", help="Reads need the token too."),
    tokens_file: Path | None = typer.Option(None, "--tokens-file", help="TOML file of named tokens, each with the "
                                            "datasets it may read and write (fieldgraph serve-token prints an "
                                            "entry); with it, reads need a token."),
    cors_origin: list[str] = typer.Option([], "--cors-origin", help="An origin whose pages may call the API "
                                          "(CORS); repeatable. Default: none."),
    max_body_bytes: int | None = typer.Option(None, "--max-body-bytes", help="Largest request body, once "
                                              "decompressed (default 10 MiB)."),
    rate_limit: float | None = typer.Option(None, "--rate-limit", help="Requests a second per client address, "
                                            "bursts of twice that (default 50; 0: no limit)."),
    rejects: Path | None = typer.Option(None, "--rejects", help="Where bad events go, appended (JSON Lines; "
                                        "default .fieldgraph/rejects.jsonl)."),
    types_from_sql: TypesFromSql = False,
) -> None:
    """Serve the lineage graph over HTTP: the JSON API (/api/v1, described at /openapi.json), OpenLineage events
    in (POST /api/v1/lineage), DataHub MCPs in (POST /aspects?action=ingestProposal), the lineage explorer
    (/explorer/), /healthz and /metrics. Ctrl-C or SIGTERM stops it."""
    require("fastapi", "serve", "fieldgraph serve")
    uvicorn = require("uvicorn", "serve", "fieldgraph serve")
    from fieldgraph.ingest.config import ServeConfig, platforms_from_env
    from fieldgraph.ingest.service import create_app

    cfg = ServeConfig.load(token_file=token_file, tokens_file=tokens_file, host=host, port=port,
                           protect_reads=protect_reads, cors_origins=tuple(cors_origin), max_body_bytes=max_body_bytes,
                           rate_limit=rate_limit, rejects=rejects)
    with open_graph(graph, graph_name, create=True) as g:
        app = create_app(g, cfg, platforms=platforms_from_env(types_from_sql=types_from_sql))
        log.info("serving %s on http://%s:%d (explorer at /explorer/; writes %s; reads %s)", g.store.describe(),
                 cfg.host, cfg.port, "need the token" if cfg.token or cfg.tokens else "refused: no token",
                 "need the token" if cfg.reads_need_token else "open")
        # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again for the handler it found:
        # ours ends the command normally, so the graph is closed (and an embedded server started here stopped)
        previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            # proxy_headers off: a client on this host could otherwise name any address (X-Forwarded-For)
            uvicorn.run(app, host=cfg.host, port=cfg.port, log_config=None, server_header=False, proxy_headers=False)
        except _Stopped as stopped:
            log.info("stopped by %s", signal.Signals(stopped.signum).name)
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def serve_token_cmd(
    name: str = typer.Argument(..., help="The token's name (who holds it: writes over HTTP are by it)."),
    read: list[str] = typer.Option([], "--read", help="Datasets it may read: '*', 'platform:<name>' or a dataset "
                                   "URN prefix; repeatable. Default: none."),
    write: list[str] = typer.Option([], "--write", help="Datasets it may write, as --read; repeatable. Default: "
                                    "none."),
    through_hidden: bool = typer.Option(False, "--through-hidden", help="Its walks go on through the fields it may "
                                        "not read (never naming them) instead of stopping there."),
) -> None:
    """Make a token for fieldgraph serve --tokens-file: prints its [[token]] entry (the token's SHA-256, never the
    token) to append to the tokens file, and the token itself on stderr, to hand to its holder. It is kept nowhere."""
    import hashlib
    import json
    import secrets

    from fieldgraph.graph.scope import check_rule

    if not name.strip():
        raise typer.BadParameter("a token's name is not empty", param_hint="NAME")
    for rule in (*read, *write):
        check_rule(rule)
    token = secrets.token_urlsafe(32)
    typer.echo(token, err=True)
    typer.echo("\n".join([
        "[[token]]", f"name = {json.dumps(name.strip())}",
        f"sha256 = {json.dumps(hashlib.sha256(token.encode()).hexdigest())}",
        f"read = {json.dumps(list(read))}", f"write = {json.dumps(list(write))}",
        f"through_hidden = {'true' if through_hidden else 'false'}", ""]))


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _stop(signum: int, _: object) -> None:
    raise _Stopped(signum)
