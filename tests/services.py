"""The real servers users run, from Maven Central, on loopback: Neo4j 5.26 Community (Bolt, HTTP, Neo4j Browser)
and Apache Kafka 4.4 (one KRaft node, broker and controller in one process).

``deploy/maven/{neo4j,kafka}/pom.xml`` name the jars; Maven resolves them into its local repository once and
writes the classpath (``target/classpath.txt``); this module writes the configuration, starts ``java`` and waits
until the server answers (a Bolt ``RETURN 1``, a Kafka metadata request), not merely until its port opens.

The test fixtures (``tests/conftest.py``), the benchmarks and ``make neo4j`` / ``make kafka`` use it:

    python -m tests.services neo4j [--data DIR] [--bolt-port 7687] [--http-port 7474] [--password PW]
    python -m tests.services kafka [--data DIR] [--port 9092]
    python -m tests.services fetch

run a server in the foreground until Ctrl-C; ``fetch`` only resolves the jars (``make test`` runs it first), Apache
Avro's too (``deploy/maven/avro``: its Java checker, which ``tests/test_avro_java.py`` compares verdicts with) and
the OpenLineage Spark integration's (``deploy/maven/openlineage-spark``: ``tests/test_openlineage_spark.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from base64 import urlsafe_b64encode
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAVEN = ROOT / "deploy" / "maven"
# Java 17 runs both without flags; these silence Neo4j's fallback-mode and log-preallocation warnings.
JAVA_OPENS = ["--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
              "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED"]
TEST_PASSWORD = "fieldgraph-test"


class ServiceError(RuntimeError):
    """A server could not be fetched or started."""


def classpath(service: str) -> str:
    """The runtime classpath of ``deploy/maven/<service>``, resolved by Maven (jars fetched on first use)."""
    pom = MAVEN / service / "pom.xml"
    out = MAVEN / service / "target" / "classpath.txt"
    if not out.exists() or out.stat().st_mtime < pom.stat().st_mtime or not _jars_present(out):
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ServiceError("Maven (mvn) is not on PATH: it fetches the Neo4j and Kafka jars")
        proc = subprocess.run([mvn, "-q", "-B", "-f", str(pom), "dependency:build-classpath",
                               f"-Dmdep.outputFile={out}", "-Dmdep.includeScope=runtime"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise ServiceError(f"Maven could not resolve {pom}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return out.read_text().strip()


def _jars_present(classpath_file: Path) -> bool:
    return all(os.path.exists(j) for j in classpath_file.read_text().strip().split(os.pathsep))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def fieldgraph_serve(uri: str, workdir: Path, *args: str, token: str | None = None,
                     wait_s: float = 30) -> Iterator[str]:
    """``fieldgraph serve`` of this checkout's code on the graph ``uri`` (as the CLI takes it) in ``workdir``, with
    ``args`` and the write token ``token``: its base URL once ``/healthz`` answers; :class:`ServiceError` with its
    log when it does not start within ``wait_s``."""
    port = free_port()
    env = {**os.environ, "FIELDGRAPH_DATA": str(workdir / "data"), "PYTHONPATH": str(ROOT)}
    env.pop("FIELDGRAPH_SERVE_TOKEN", None)
    if token:
        env["FIELDGRAPH_SERVE_TOKEN"] = token
    cmd = [sys.executable, "-m", "fieldgraph.ingest.cli", "serve", "--port", str(port), "--graph", uri,
           "--rate-limit", "0", "--rejects", str(workdir / "rejects.jsonl"), *args]
    with (workdir / "serve.log").open("w+") as log:
        proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    urllib.request.urlopen(f"{base}/healthz", timeout=2).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        raise ServiceError(f"fieldgraph serve did not start:\n{log.read()}") from None
                    time.sleep(0.1)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


def _die_with_parent() -> None:
    """In the child: SIGTERM when the process that started it dies, so no server outlives a killed test run."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 0.5).close()
        return True
    except OSError:
        return False


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise ServiceError("no java on PATH (Neo4j 5.26 and Kafka 4.4 need Java 17 or newer)")
    return java


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class JavaServer:
    """One ``java`` process; ``stop`` sends SIGTERM (a clean shutdown) and waits."""

    name = "server"
    log: Path

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None

    def _spawn(self, cmd: list[str], env: dict[str, str] | None = None) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                            env={**os.environ, **(env or {})}, start_new_session=True,
                                            preexec_fn=_die_with_parent)

    def _wait(self, ready: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise ServiceError(f"{self.name} exited at start; its log {self.log} ends:\n{_tail(self.log)}")
            if ready():
                return
            time.sleep(0.2)
        self.stop()
        raise ServiceError(f"{self.name} did not answer within {timeout:.0f}s; its log {self.log} ends:\n"
                           f"{_tail(self.log)}")

    def stop(self, timeout: float = 60) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def kill(self) -> None:
        """SIGKILL: a crash, for recovery tests."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


class Neo4jServer(JavaServer):
    """Neo4j Community from its jars, as the distribution's launcher runs it (``CommunityEntryPoint``), with
    authentication on: user ``neo4j`` and ``password`` (set with ``neo4j-admin dbms set-initial-password``
    before the first start). Data in ``home/data`` survives restarts."""

    name = "Neo4j"
    user = "neo4j"

    def __init__(self, home: str | os.PathLike[str], *, bolt_port: int | None = None, http_port: int | None = None,
                 password: str = TEST_PASSWORD, heap: str = "512m", pagecache: str = "128m") -> None:
        super().__init__()
        self.home = Path(home).absolute()
        self.bolt_port = bolt_port or free_port()
        self.http_port = http_port or free_port()
        self.password = password
        self.heap = heap
        self.pagecache = pagecache
        self.log = self.home / "logs" / "console.log"

    @property
    def bolt(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def uri(self) -> str:
        """The ``--graph`` URI, credentials included."""
        return f"bolt://{self.user}:{self.password}@127.0.0.1:{self.bolt_port}"

    @property
    def browser(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/browser/"

    def _configure(self) -> dict[str, str]:
        conf = self.home / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        settings = {
            "server.directories.data": self.home / "data",
            "server.directories.logs": self.home / "logs",
            "server.directories.run": self.home / "run",
            "server.default_listen_address": "127.0.0.1",
            "server.default_advertised_address": "127.0.0.1",
            # Browser reads the Bolt address from the HTTP discovery document: advertise the real port
            "server.bolt.listen_address": f"127.0.0.1:{self.bolt_port}",
            "server.bolt.advertised_address": f"127.0.0.1:{self.bolt_port}",
            "server.http.listen_address": f"127.0.0.1:{self.http_port}",
            "server.http.advertised_address": f"127.0.0.1:{self.http_port}",
            "server.https.enabled": "false",
            "dbms.security.auth_enabled": "true",
            "server.memory.pagecache.size": self.pagecache,
            "dbms.usage_report.enabled": "false",
            "db.tx_log.preallocate": "false",  # else 256 MiB of transaction log per database
            "db.tx_log.rotation.retention_policy": "2 files",
            "internal.dbms.bolt.netty_server_shutdown_quiet_period": "0",  # SIGTERM: 12 s -> 2 s
            # transaction timeouts (fieldgraph's time budgets) are checked this often (default 2 s)
            "db.transaction.monitor.check.interval": "100ms",
        }
        (conf / "neo4j.conf").write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        return {"NEO4J_HOME": str(self.home), "NEO4J_CONF": str(conf)}

    def start(self, timeout: float = 120) -> Neo4jServer:
        cp = classpath("neo4j")
        env = self._configure()
        java = [_java(), f"-Xms{self.heap}", f"-Xmx{self.heap}", *JAVA_OPENS, "-cp", cp]
        if not (self.home / "data" / "dbms" / "auth.ini").exists():
            proc = subprocess.run([*java, "org.neo4j.cli.AdminTool", "dbms", "set-initial-password", self.password],
                                  capture_output=True, text=True, env={**os.environ, **env})
            if proc.returncode != 0:
                raise ServiceError(f"neo4j-admin set-initial-password failed: {proc.stdout}{proc.stderr}")
        self._spawn([*java, "org.neo4j.server.CommunityEntryPoint", f"--home-dir={self.home}",
                     f"--config-dir={env['NEO4J_CONF']}"], env)
        self._wait(self._answers, timeout)  # the Bolt port opens 1-2 s before queries run
        return self

    def _answers(self) -> bool:
        import neo4j

        if not _port_open(self.bolt_port):
            return False
        try:  # a plain session: no managed retries while the server is still starting
            with neo4j.GraphDatabase.driver(self.bolt, auth=(self.user, self.password), connection_timeout=2,
                                            max_connection_lifetime=5) as driver, driver.session() as session:
                session.run("RETURN 1").consume()
            return True
        except Exception:
            return False


class KafkaServer(JavaServer):
    """Apache Kafka, one KRaft node (broker and controller), PLAINTEXT on loopback; storage formatted with
    ``--standalone`` on first start. Data in ``home/data`` survives restarts."""

    name = "Apache Kafka"

    def __init__(self, home: str | os.PathLike[str], *, port: int | None = None, heap: str = "256m") -> None:
        super().__init__()
        self.home = Path(home).absolute()
        self.port = port or free_port()
        self.controller_port = free_port()
        self.heap = heap
        self.log = self.home / "logs" / "server.log"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _configure(self) -> Path:
        self.home.mkdir(parents=True, exist_ok=True)
        settings = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": self.home / "data",
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "log.cleaner.dedupe.buffer.size": "8388608",  # the 128 MB default does not fit a small heap
            # a restart after a crash waits for the old incarnation to be fenced: keep that short
            "broker.session.timeout.ms": "3000",
            "broker.heartbeat.interval.ms": "500",
        }
        props = self.home / "server.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        log4j = self.home / "log4j2.properties"
        log4j.write_text(
            "status = warn\n"
            "appender.file.type = File\nappender.file.name = file\n"
            f"appender.file.fileName = {self.home / 'logs' / 'kafka.log'}\n"
            "appender.file.layout.type = PatternLayout\nappender.file.layout.pattern = [%d] %p %m (%c)%n\n"
            "rootLogger.level = INFO\nrootLogger.appenderRef.file.ref = file\n"
            "logger.kafka.name = org.apache.kafka\nlogger.kafka.level = WARN\n"
            "logger.kafkacore.name = kafka\nlogger.kafkacore.level = INFO\n")
        return props

    def start(self, timeout: float = 90) -> KafkaServer:
        cp = classpath("kafka")
        props = self._configure()
        java = [_java(), f"-Xms{self.heap}", f"-Xmx{self.heap}",
                f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}", "-cp", cp]
        if not (self.home / "data" / "meta.properties").exists():
            cluster = urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            # --cluster-id=: an id that starts with "-" is not taken for an option
            proc = subprocess.run([*java, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster}",
                                   "-c", str(props), "--standalone", "--ignore-formatted"],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise ServiceError(f"kafka-storage format failed: {proc.stdout}{proc.stderr}")
        self._spawn([*java, "kafka.Kafka", str(props)])
        self._wait(self._answers, timeout)
        return self

    def _answers(self) -> bool:
        from confluent_kafka.admin import AdminClient

        if not _port_open(self.port):
            return False
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "socket.timeout.ms": 2000})
        try:
            md = admin.list_topics(timeout=2)
            return bool(md.brokers)
        except Exception:
            return False


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.services",
                                 description="Run a real Neo4j or Apache Kafka from Maven Central in the foreground.")
    sub = ap.add_subparsers(dest="service", required=True)
    n = sub.add_parser("neo4j", help="Neo4j 5.26 Community with Neo4j Browser")
    n.add_argument("--data", default=".fieldgraph/neo4j", help="its home folder (data survives restarts)")
    n.add_argument("--bolt-port", type=int, default=7687)
    n.add_argument("--http-port", type=int, default=7474)
    n.add_argument("--password", default=os.environ.get("NEO4J_PASSWORD", "fieldgraph"),
                   help="the neo4j user's password, set on first start only (default: $NEO4J_PASSWORD or fieldgraph)")
    n.add_argument("--heap", default="1g")
    n.add_argument("--pagecache", default="512m")
    k = sub.add_parser("kafka", help="Apache Kafka 4.4, one KRaft node")
    k.add_argument("--data", default=".fieldgraph/kafka", help="its home folder (data survives restarts)")
    k.add_argument("--port", type=int, default=9092)
    k.add_argument("--heap", default="512m")
    sub.add_parser("fetch", help="resolve both servers' jars (and Avro's and OpenLineage Spark's, for the tests) with "
                                 "Maven, and exit")
    args = ap.parse_args(argv)

    if args.service == "fetch":
        # avro: Avro's Java checker (tests/test_avro_java.py); openlineage-spark: the OpenLineage Spark listener
        # (tests/test_openlineage_spark.py)
        for service in ("neo4j", "kafka", "avro", "openlineage-spark"):
            t0 = time.monotonic()
            try:
                jars = classpath(service).split(os.pathsep)
            except ServiceError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 1
            print(f"{service}: {len(jars)} jars resolved in {time.monotonic() - t0:.1f}s", flush=True)
        return 0
    server: JavaServer
    if args.service == "neo4j":
        server = Neo4jServer(args.data, bolt_port=args.bolt_port, http_port=args.http_port, password=args.password,
                             heap=args.heap, pagecache=args.pagecache)
    else:
        server = KafkaServer(args.data, port=args.port, heap=args.heap)
    print(f"starting {server.name} (the first start fetches its jars with Maven) ...", flush=True)
    t0 = time.monotonic()
    try:
        server.start()
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if isinstance(server, Neo4jServer):
        print(f"Neo4j is up in {time.monotonic() - t0:.1f}s\n"
              f"  Bolt:    {server.bolt}  (user neo4j; the password is the one set at its first start)\n"
              f"  Browser: {server.browser}\n"
              f"  fieldgraph: --graph bolt://127.0.0.1:{server.bolt_port} with NEO4J_PASSWORD set", flush=True)
    else:
        print(f"Apache Kafka is up in {time.monotonic() - t0:.1f}s: --bootstrap-servers {server.bootstrap}",
              flush=True)
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops the server as Ctrl-C does
    try:
        while server.process is not None and server.process.poll() is None:
            time.sleep(0.5)
        print(f"{server.name} exited; see {server.log}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        for sig in (signal.SIGINT, signal.SIGTERM):  # a second signal must not cut the clean stop short
            signal.signal(sig, signal.SIG_IGN)
        print(f"stopping {server.name} ...", flush=True)
        server.stop()
        return 0


if __name__ == "__main__":
    sys.exit(main())
