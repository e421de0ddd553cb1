"""A real ``cirulla ladder serve`` process for tests, and ways to look inside it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from sqlalchemy import inspect, update

from cirulla.ladder.database import create, current_revision, migrate
from cirulla.ladder.db import open_database
from cirulla.ladder.schema import bot_versions
from cirulla.ladder.store import LadderStore
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc
from tests.server_harness import tied_to_this_process

#: Short games keep the tests fast: target 11 ends a game in a few deals.
FAST = ("--rule", "target=11", "--move-limit-ms", "5000", "--game-timeout", "120")


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def migrate_if_empty(db: str) -> None:
    """Migrate ``db`` here, in the test's process, if it holds no table yet.

    A ladder started on an empty database imports Alembic (and Mako, Pygments) to migrate
    it: about 0.35 CPU seconds of each start (docs/performance-log.md, "Start-up"), paid again
    by every ladder test, while this process has Alembic loaded once and migrates a new
    file in about 0.05 s. The ladder then opens a database at its newest revision, as
    every restart does. A database with tables (an older revision a test upgrades, a
    ladder's earlier run) is left as it is. The ladder's own migration of an empty
    database is kept by the tests that pass ``migrate_first=False``
    (tests/ladder/test_serve.py) and by tests/ladder/test_postgres.py."""
    engine = create(db)
    try:
        with engine.connect() as conn:
            empty = current_revision(conn) is None and not inspect(conn).get_table_names()
        if empty:
            migrate(engine)
    finally:
        engine.dispose()


class LadderProcess:
    """``cirulla ladder serve`` in ``folder`` on a free port."""

    def __init__(
        self,
        folder: Path,
        db: str,
        *extra: str,
        python: str = sys.executable,
        migrate_first: bool = True,
    ) -> None:
        self.folder = folder
        self.db = db
        self.extra = extra
        self.python = python  # the ladder's interpreter (a venv of the test's own)
        #: an empty database migrated by the test before the ladder starts (``migrate_if_empty``)
        self.migrate_first = migrate_first
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = folder / "serve.log"
        self.address = ""
        #: one channel per address for stub(): tests poll it many times a second
        self._channels: dict[str, grpc.Channel] = {}

    def start(self, timeout: float = 90.0) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        state = self.folder / "cirulla-ladder.json"
        state.unlink(missing_ok=True)
        if self.migrate_first:
            migrate_if_empty(self.db)
        argv = [self.python, "-m", "cirulla", "ladder", "serve", "--db", self.db]
        argv += ["--listen", "127.0.0.1:0", *FAST, *self.extra]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                tied_to_this_process(argv),
                cwd=self.folder,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

        def ready() -> str:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"ladder exited early: {self.log.read_text()[-3000:]}")
            if state.exists():
                return str(json.loads(state.read_text())["address"])
            return ""

        # a file's existence, cheap to check often: every 0.5 s, each ladder start of the
        # suite waited 0.25 s longer on average
        self.address = wait_for(ready, timeout, "the ladder to listen", every=0.05)
        return self.address

    def kill(self) -> None:
        """SIGKILL the ladder, then its orphaned bot processes (found by its address)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        for pid in pids_mentioning(self.address):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def stop(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def stub(self) -> ladder_pb2_grpc.LadderServiceStub:
        """A LadderService stub on the ladder's address (one channel per address, kept
        open: a poll no longer opens a connection each time)."""
        channel = self._channels.get(self.address)
        if channel is None:
            channel = self._channels[self.address] = grpc.insecure_channel(self.address)
        return ladder_pb2_grpc.LadderServiceStub(channel)

    def admin(self) -> tuple[tuple[str, str], ...]:
        """The admin metadata, from the token file the ladder names in its state file."""
        state = json.loads((self.folder / "cirulla-ladder.json").read_text())
        token = Path(state["admin_token_file"]).read_text().strip()
        return (("authorization", f"Bearer {token}"),)

    def add(self, name: str, spec: str, max_concurrency: int = 0) -> ladder_pb2.AddBotResponse:
        """``AddBot`` over the rpc with the admin token, for a test whose subject is not
        the ``add`` command: the same servicer, without starting an interpreter."""
        request = ladder_pb2.AddBotRequest(
            bot_name=name, spec=spec, max_concurrency=max_concurrency
        )
        return self.stub().AddBot(request, metadata=self.admin(), timeout=60)

    def pause(self, *names: str) -> None:
        """``PauseBot`` over the rpc for each of ``names``, for a test whose remaining
        checks need no more games: the ladder stops scheduling theirs (the few already
        scheduled are played), where it went on playing random bots at several games a
        second, about 0.7 CPU seconds a second, while the test read what it had."""
        for name in names:
            self.stub().PauseBot(
                ladder_pb2.PauseBotRequest(bot_name=name), metadata=self.admin(), timeout=60
            )

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        out = subprocess.run(
            [sys.executable, "-m", "cirulla", "ladder", *args],
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check:
            assert out.returncode == 0, out.stdout + out.stderr
        return out


def pids_mentioning(text: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            environ = (proc / "environ").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if (text in cmdline or text in environ) and int(proc.name) != os.getpid():
            found.append(int(proc.name))
    return found


def open_store(db: str) -> LadderStore:
    return LadderStore(open_database(db))


def settled(store: LadderStore) -> None:
    """Every version done validating: its games count from the first one (a test whose
    subject is not a new version's validation games skips them)."""
    with store.engine.begin() as conn:
        conn.execute(update(bot_versions).values(validation_games_left=0))


def count_status(store: LadderStore) -> dict[str, int]:
    from sqlalchemy import func, select

    from cirulla.ladder.schema import ladder_matches

    with store.engine.connect() as conn:
        rows = conn.execute(
            select(ladder_matches.c.status, func.count()).group_by(ladder_matches.c.status)
        ).all()
    return {status: int(n) for status, n in rows}
