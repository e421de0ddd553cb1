"""A throwaway PostgreSQL server for tests, benchmarks and CI (standard library only).

The ladder's distributed mode needs a real PostgreSQL (``FOR UPDATE SKIP LOCKED``,
concurrent writers), so tests and ``cirulla bench ladder`` run against one instead of a
mock. This module starts one the way a developer would by hand: ``initdb`` in a temporary
folder, ``pg_ctl start`` on a free port of 127.0.0.1 with the socket in that folder, trust
authentication (nothing listens beyond loopback), durability off (``fsync=off``: a
throwaway cluster trades crash safety of the *server* for speed; killing our own processes
is unaffected). PostgreSQL refuses to run as root, so as root it runs as an ordinary user
(``postgres`` when the Debian package created it, or ``--os-user``).

It imports nothing outside the standard library, so ``.ci/setup.d/10-postgres.sh`` can run
it with the system ``python3`` before the project's venv exists::

    python3 ladder/cirulla/ladder/pgtemp.py start --os-user cirulla-pg  # prints its URL

and tests use :class:`TempPostgres` as a context manager.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

#: Environment variable holding the URL of a running PostgreSQL that tests may use (any
#: database on it: each test creates and drops its own).
TEST_URL_ENV = "CIRULLA_TEST_POSTGRES_URL"

#: The cluster's superuser name (a PostgreSQL role, not an operating-system user).
SUPERUSER = "cirulla"

#: The database created at start; tests create one more per test beside it.
DATABASE = "cirulla"

#: What to install when the server binaries are missing, in one line.
MISSING = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's postgresql-15 "
    f"(apt-get install postgresql-15) or set {TEST_URL_ENV} to a running server's URL"
)

#: Settings for a throwaway cluster: loopback only, no fsync, enough connections for
#: several workers plus their pools.
SERVER_SETTINGS = (
    "listen_addresses=127.0.0.1",
    "fsync=off",
    "synchronous_commit=off",
    "full_page_writes=off",
    "max_connections=200",
)


class PostgresMissing(RuntimeError):
    """The PostgreSQL server binaries are not installed."""


def find_bin_dir() -> Path:
    """Where ``initdb`` and ``pg_ctl`` live: PATH first, then Debian's versioned folders."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).resolve().parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    raise PostgresMissing(MISSING)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def default_os_user() -> str | None:
    """None when not root (run as ourselves); else the user PostgreSQL will run as."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("CIRULLA_PG_OS_USER", "postgres")
    try:
        pwd.getpwnam(name)
    except KeyError:
        raise PostgresMissing(
            f"running as root and there is no user {name!r} to run PostgreSQL as: create one "
            "(useradd --system --create-home cirulla-pg) and set CIRULLA_PG_OS_USER=cirulla-pg"
        ) from None
    return name


class TempPostgres:
    """One PostgreSQL cluster in a temporary folder, stopped and deleted on exit."""

    def __init__(self, *, os_user: str | None = None, keep: bool = False) -> None:
        self.os_user = os_user if os_user is not None else default_os_user()
        self.keep = keep
        self.port = 0
        self.folder: Path | None = None

    @property
    def url(self) -> str:
        """URL of the default database (``postgresql://``, the form the ladder accepts)."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{DATABASE}"

    def _run(self, argv: list[str]) -> None:
        options: dict[str, Any] = {}
        if self.os_user is not None:
            entry = pwd.getpwnam(self.os_user)
            options = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        done = subprocess.run(argv, capture_output=True, text=True, check=False, **options)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"{Path(argv[0]).name} failed: {' / '.join(tail)}")

    def start(self) -> str:
        bin_dir = find_bin_dir()
        self.folder = Path(tempfile.mkdtemp(prefix="cirulla-pg-"))
        if self.os_user is not None:
            entry = pwd.getpwnam(self.os_user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        data = self.folder / "data"
        self._run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
            ]
        )
        options = " ".join(f"-c {setting}" for setting in SERVER_SETTINGS)
        # A port can be taken between free_port() and the bind: retry a few times.
        for attempt in range(5):
            self.port = free_port()
            try:
                self._run(
                    [
                        str(bin_dir / "pg_ctl"),
                        "-D",
                        str(data),
                        "-l",
                        str(self.folder / "server.log"),
                        "-o",
                        f"-p {self.port} -k {self.folder} {options}",
                        "-w",
                        "-t",
                        "60",
                        "start",
                    ]
                )
                break
            except RuntimeError:
                if attempt == 4:
                    raise
        self._run(
            [
                str(bin_dir / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                SUPERUSER,
                DATABASE,
            ]
        )
        return self.url

    def stop(self) -> None:
        """Stop the server, then delete its folder (unless ``keep``).

        Why not just ``pg_ctl stop``: it runs as ``os_user`` and fails when that is not
        the cluster's owner (a ``stop`` given the wrong ``--os-user``); deleting the
        folder then left the server running without its data folder, holding its port.
        So a failed ``pg_ctl`` is followed by an immediate shutdown signal to the
        postmaster named in ``postmaster.pid``, and a server still running after that
        keeps its folder and is a clear error."""
        if self.folder is None:
            return
        data = self.folder / "data"
        failure: Exception | None = None
        try:
            self._run(
                [
                    str(find_bin_dir() / "pg_ctl"),
                    "-D",
                    str(data),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ]
            )
        except (RuntimeError, PostgresMissing) as exc:
            failure = exc
        pid = postmaster_pid(data)
        if failure is not None and pid is not None and not _shut_down(pid):
            raise RuntimeError(
                f"{failure}; PostgreSQL (pid {pid}) still runs, its folder "
                f"{self.folder} is kept: stop it with pg_ctl -D {data} stop as its owner"
            )
        if not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None

    def __enter__(self) -> TempPostgres:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def postmaster_pid(data: Path) -> int | None:
    """The pid of the postmaster serving ``data`` if one runs (its ``postmaster.pid``'s
    first line, checked to be a live ``postgres`` process: a stale file's pid may have
    been reused)."""
    try:
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    except (OSError, ValueError):
        return None
    return pid if Path(command.decode(errors="replace")).name == "postgres" else None


def _shut_down(pid: int, wait: float = 30.0) -> bool:
    """Ask the postmaster ``pid`` for an immediate shutdown (SIGQUIT, what ``pg_ctl -m
    immediate`` sends); whether it is gone within ``wait`` seconds."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGQUIT)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not running(pid):
            return True
        time.sleep(0.05)
    return False


def running(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie has ended (its parent, a subreaper that does not
    reap it perhaps, still holds its /proc entry)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def with_database(url: str, name: str) -> str:
    """The same server URL pointing at another database."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def create_database(server_url: str, prefix: str = "db") -> str:
    """A new empty database on ``server_url``'s server; its URL (psycopg, lazily)."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    try:
        with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        # One line naming the server (psycopg's own message spans several).
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        netloc = urlsplit(server_url).netloc.rpartition("@")[2]
        raise RuntimeError(f"PostgreSQL at {netloc}: {first}") from None
    return with_database(server_url, name)


def drop_database(url: str) -> None:
    """Drop the database ``url`` names, closing its sessions (PostgreSQL 13+)."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(libpq_url(with_database(url, DATABASE)), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def running_server(given: str | None) -> Iterator[str]:
    """The URL of a PostgreSQL server: ``given`` as it is, else a throwaway cluster that
    lives as long as the ``with`` block (benchmarks and the tests share this choice)."""
    if given:
        yield given
        return
    with TempPostgres() as server:
        yield server.url


@contextlib.contextmanager
def scratch_database(server_url: str, prefix: str = "db") -> Iterator[str]:
    """A new empty database on ``server_url``'s server, dropped when the block ends."""
    url = create_database(server_url, prefix)
    try:
        yield url
    finally:
        drop_database(url)


def libpq_url(url: str) -> str:
    """psycopg takes ``postgresql://``; SQLAlchemy-style ``postgresql+psycopg://`` too."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pgtemp",
        description="Start a throwaway PostgreSQL (left running) and print its URL; "
        "stop one and delete its folder.",
    )
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("folder", nargs="?", help="stop: the cluster's folder")
    parser.add_argument("--os-user", help="run PostgreSQL as this user (needed as root)")
    parser.add_argument(
        "--folder-file", help="start: also write the cluster's folder here (for stop)"
    )
    args = parser.parse_args(argv)
    try:
        server = TempPostgres(os_user=args.os_user, keep=True)
        if args.action == "stop":
            if not args.folder:
                print("pgtemp: stop needs the cluster's folder", file=sys.stderr)
                return 2
            server.keep = False
            server.folder = Path(args.folder)
            server.stop()
            return 0
        print(server.start())
        if args.folder_file:
            Path(args.folder_file).write_text(str(server.folder))
    except (PostgresMissing, RuntimeError) as exc:
        print(f"pgtemp: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
