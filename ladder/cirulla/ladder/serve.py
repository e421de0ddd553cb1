"""``cirulla ladder serve``: the ladder process.

One process holds the match server (``cirulla.server.app.start_server``, with the
LadderService on the same port), the scheduler, a few worker threads (``MatchRunner``)
and their heartbeat. Everything the ladder knows is in its database; the process itself
only holds what is being played, so after a crash (even SIGKILL) a new ``serve`` on the
same folder recovers:

* matches its previous incarnation had claimed but not started go back to the queue;
* matches that were running are finished from the match server's record when the game
  ended before the crash (the record is in the match server's SQLite file), and
  cancelled with a reason otherwise (their match server died with the process);
* a result is never counted twice: ``LadderStore.finish`` is guarded.

``cirulla-ladder.json`` in the current folder tells the other ``cirulla ladder``
commands where the ladder listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from sqlalchemy.engine import make_url

from cirulla.clients.matches.journal import OutputLock, write_json_atomic
from cirulla.clients.matches.log_budget import DEFAULT_BOT_LOGS
from cirulla.clients.matches.outcome import Outcome
from cirulla.clients.matches.relay import ServerRelay
from cirulla.clients.matches.sandbox import (
    Confinement,
    SandboxUnavailable,
    check_installation,
    require,
)
from cirulla.ladder import health as ladder_health
from cirulla.ladder import metrics as ladder_metrics
from cirulla.ladder.db import database_url, display_url, open_database
from cirulla.ladder.defaults import (
    DEFAULT_DATA,
    DEFAULT_DB,
    DEFAULT_LISTEN,
    LEASE_SECONDS,
    QUEUES,
    STATE_FILE,
    LadderState,
)
from cirulla.ladder.idle import MOST_SECONDS, Stop
from cirulla.ladder.leases import reaper_loop
from cirulla.ladder.pool_notify import JOBS_CHANNEL, Listener
from cirulla.ladder.pool_store import PoolStore
from cirulla.ladder.pool_worker import PoolRunner, play_loop, pool_heartbeat_loop
from cirulla.ladder.retention import Retention, prune_loop
from cirulla.ladder.runner import (
    BOT_IDLE_SECONDS,
    MatchRunner,
    heartbeat_loop,
)
from cirulla.ladder.scheduler import Scheduler
from cirulla.ladder.service import SERVICE_NAME, LadderService
from cirulla.ladder.store import (
    QUEUE_PLAYERS,
    LadderStore,
    MatchConfig,
    MatchOutcome,
    SeatOutcome,
)
from cirulla.ladder.webhook import DeactivationWebhook, check_url
from cirulla.server.app import start_server
from cirulla.server.documents import GameRecord
from cirulla.server.metrics import MetricsServer, parse_address, start_metrics
from cirulla.server.store import Store
from cirulla.v1 import ladder_pb2_grpc

if TYPE_CHECKING:
    from cirulla.server.web.app import WebServer

log = logging.getLogger("cirulla.ladder")

MATCH_DB = "matches.sqlite3"
CRASH_REASON = (
    "the ladder stopped while this match was being played (its match server stopped "
    "with it); not rated"
)
STOP_REASON = "the ladder was shut down while this match was being played; not rated"


@dataclass
class ServeOptions:
    db: str = DEFAULT_DB
    listen: str = DEFAULT_LISTEN
    data: Path = Path(DEFAULT_DATA)
    state_file: Path = Path(STATE_FILE)
    admin_token_file: Path | None = None
    #: anyone may register new connect-in bots without the token (never a command, never
    #: an existing name); every other mutating rpc still needs the admin token
    insecure_open: bool = False
    concurrency: int = 4
    config: MatchConfig = field(default_factory=MatchConfig)
    #: queues the scheduler plans (bots registered in others simply wait)
    queues: tuple[str, ...] = QUEUES
    #: "serve" plans matches and plays them; "worker" (``cirulla ladder worker``) only
    #: plays what any ladder process scheduled (no scheduler, no state file)
    role: str = "serve"
    #: seconds a claimed match stays leased without a heartbeat of this process
    lease_seconds: float = LEASE_SECONDS
    #: host:port other machines (connect-in bots) reach the match server at; default
    #: from --listen (127.0.0.1 for a wildcard address)
    advertise: str | None = None
    #: every managed bot runs in a bubblewrap sandbox (``--no-sandbox``: False)
    sandbox: bool = True
    #: serve TLS on --listen (PEM certificate chain and key, as ``cirulla server``)
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: the CA this process checks other ladder processes' TLS match servers against
    #: (redelivery asks the one hosting a seat); default $CIRULLA_TLS_CA
    tls_ca: Path | None = None
    #: the web view (``cirulla.server.web``) on HOST:PORT, a client of this process's
    #: MatchService and LadderService; its bound address goes to the state file
    http: str | None = None
    #: Prometheus metrics at http://HOST:PORT/metrics (match server's and ladder's)
    metrics: str | None = None
    #: POST JSON here on each bot deactivation (``cirulla.ladder.webhook``); serve only
    webhook: str | None = None
    #: ``--keep-records``: records (and bot logs) older than this are pruned; None: all
    #: are kept (docs/ladder.md, "Running it for months")
    keep_records: Retention | None = None
    #: ``--bot-logs``: what each bot's logs may hold on disk in all (``log_budget``),
    #: for the ladder's matches and for each pool tournament's folder
    bot_logs: int = DEFAULT_BOT_LOGS
    #: ``--pace``: scheduled games per minute at most (0: as fast as the workers play)
    pace: float = 0.0
    #: ``--idle-pace``: games per minute once every rating of a queue is settled and no
    #: new version is validating (0: ``pace``)
    idle_pace: float = 0.0
    #: ``--idle-poll``: the longest wait between an idle ladder's looks at its database
    #: (``cirulla.ladder.idle``)
    idle_poll: float = MOST_SECONDS


def read_token(path: Path) -> str:
    token = path.read_text(encoding="utf-8").strip()
    if not token:
        raise ValueError(f"--admin-token-file {path}: the file is empty")
    return token


ADMIN_TOKEN_FILE = "admin-token"
NO_SANDBOX_WARNING = (
    "WARNING: --no-sandbox: managed bots run unconfined as this user and can read the "
    "ladder's database, records, logs and admin token; only for bots you wrote yourself"
)


def check_sandbox(options: ServeOptions) -> None:
    """Refuse to start (ValueError, one line) where the managed bots cannot be sandboxed;
    with --no-sandbox say loudly what that means."""
    if not options.sandbox:
        print(NO_SANDBOX_WARNING, file=sys.stderr, flush=True)
        log.warning("ladder_no_sandbox role=%s", options.role)
        return
    try:
        require()
    except SandboxUnavailable as exc:
        reason = str(exc).removeprefix("--sandbox: ")
        raise ValueError(
            f"managed bots run in a bubblewrap sandbox and it cannot run here: {reason} "
            "(--no-sandbox runs them unconfined: only for bots you wrote yourself)"
        ) from None


def private_paths(options: ServeOptions, token_file: Path) -> tuple[Path, ...]:
    """What no sandboxed bot may be shown, even when its command line names it (or a
    folder around it), nor the installation bound for it: the data folder (records,
    logs, the match server's database, the admin token), the ladder database's folder,
    the token and state files, the TLS key."""
    paths = [options.data, token_file, options.state_file]
    if options.tls_key:
        paths.append(Path(options.tls_key))
    url = database_url(options.db)
    if url.startswith("sqlite"):
        database = make_url(url).database
        if database and database != ":memory:":
            paths.append(Path(database).parent)
    return tuple(p.absolute() for p in paths)


OPEN_WARNING = (
    "WARNING: --insecure-open: anyone who reaches {listen} may register new connect-in "
    "bots without the admin token (never a command, never an existing name)"
)


def private_folder(path: Path) -> Path:
    """Create ``path`` and make it, its folders 0700 and its files 0600.

    The data folder holds every hand (records), bot logs and the match server's database:
    nothing in it is for other local users. Folders made from an older ladder are fixed.
    """
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    for root, dirs, files in os.walk(path):  # os.walk does not follow links
        for names, mode in ((dirs, 0o700), (files, 0o600)):
            for name in names:
                item = Path(root, name)
                if not item.is_symlink():
                    with contextlib.suppress(OSError):
                        item.chmod(mode)
    return path


def ensure_token(data: Path) -> Path:
    """The admin token file of a ladder started without one: created 0600 beside its state.

    The operator's commands in the same folder find it through the state file, so a ladder
    is never open by accident (docs/ladder.md, "Threat model").
    """
    path = data / ADMIN_TOKEN_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        path.chmod(0o600)
        return path
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(32) + "\n")
    return path


def local_address(listen: str, port: int) -> str:
    """Where the ladder's own workers and commands reach its server."""
    host = listen.rpartition(":")[0].strip("[]")
    if host in ("", "0.0.0.0", "::", "localhost"):
        host = "127.0.0.1"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def worker_name(data: Path, role: str = "serve") -> str:
    """The embedded worker's name: the same for every incarnation on this folder."""
    return f"{role}:{socket.gethostname()}:{data.resolve()}"


def outcome_from_record(record: GameRecord, players: int) -> MatchOutcome:
    """The result of a game the ladder did not see end, from the match server's record."""
    result = record["result"]
    forfeit = result.get("forfeit_seat")
    sides = 2 if players == 4 else players
    seats = []
    for seat in range(players):
        if seat == forfeit:
            seats.append(SeatOutcome(seat, Outcome.TIMEOUT, "forfeited on its clock"))
        else:
            seats.append(SeatOutcome(seat))
    return MatchOutcome(
        winner=result.get("winner"),
        totals=tuple(result.get("totals") or (0,) * sides),
        seats=tuple(seats),
        deals=int(result.get("deals") or 0),
        forfeit_sides=(forfeit % sides,) if forfeit is not None else (),
        notes=("result recorded after a ladder restart, from the match server's record",),
        # the record's own reason ("target", "cappotto", "forfeit", ...)
        end="cappotto"
        if result.get("cappotto")
        else _RECORD_END.get(str(result.get("reason") or ""), ""),
        forfeit_kind="timeout" if forfeit is not None else "",
    )


#: A match server record's end reasons as the ladder stores them (``cirulla.ladder.endings``).
_RECORD_END = {
    "target": "target",
    "cappotto": "cappotto",
    "forfeit": "forfeit",
    "aborted": "void",
}


def recover(store: LadderStore, name: str, server_store: Store) -> dict[str, int]:
    """Settle what earlier incarnations of this ladder left claimed or running."""
    counts = {"requeued": 0, "finished": 0, "cancelled": 0}
    previous = store.workers.workers_named(name)
    for match in store.matches.unfinished_of(previous):
        if match["status"] == "claimed":
            if store.matches.requeue(
                match["id"], "requeued: the ladder restarted before it started"
            ):
                counts["requeued"] += 1
            continue
        records = (
            server_store.list_records(match_id=match["server_match_id"])
            if match["server_match_id"]
            else []
        )
        if records:
            outcome = outcome_from_record(records[0], QUEUE_PLAYERS[match["queue"]])
            if store.results.finish(match["id"], outcome):
                counts["finished"] += 1
        elif store.matches.cancel(match["id"], CRASH_REASON):
            counts["cancelled"] += 1
    for worker_id in previous:
        store.workers.remove_worker(worker_id)
    return counts


class Ladder:
    """The threads of a running ladder around its match server.

    ``address`` is what the ladder stores and connect-in bots dial; ``dial`` is where its
    own referees reach the match server (the plaintext loopback port under TLS)."""

    def __init__(
        self,
        store: LadderStore,
        options: ServeOptions,
        address: str,
        admin: str,
        *,
        dial: str | None = None,
        confinement: Confinement | None = None,
        server_store: Store | None = None,
    ):
        self.store = store
        #: the match server's database, which ``--keep-records`` prunes
        self.server_store = server_store
        self.options = options
        self.stop = Stop()
        self.worker_id = store.workers.register_worker(
            worker_name(options.data, options.role), address, slots=options.concurrency
        )
        self.runner = MatchRunner(
            store,
            address,
            options.data,
            self.worker_id,
            admin,
            self.stop,
            options.lease_seconds,
            confinement=confinement,
            dial=dial,
            bot_logs=options.bot_logs,
        )
        # Tournament games on the pool (``cirulla tournament --db``), beside ladder matches.
        self.pool = PoolRunner(
            PoolStore(store.engine),
            address,
            options.data,
            self.worker_id,
            admin,
            self.stop,
            options.lease_seconds,
            confinement=confinement,
            dial=dial,
            bot_logs=options.bot_logs,
        )
        self.scheduler = (
            Scheduler(
                store,
                options.config,
                queues=options.queues,
                live_within=options.lease_seconds,
                pace=options.pace,
                idle_pace=options.idle_pace,
                idle_poll=options.idle_poll,
            )
            if options.role == "serve"
            else None
        )
        self.threads: list[threading.Thread] = []
        #: LISTENs for pool jobs queued (PostgreSQL): a job wakes the idle workers at once
        self.listener: Listener | None = None

    def start(self) -> None:
        lease = self.options.lease_seconds
        targets: list[tuple[str, Callable[..., None], tuple[object, ...]]] = [
            ("heartbeat", heartbeat_loop, (self.store, self.worker_id, self.stop, lease)),
            # Any ladder process ends the leases of dead workers (docs/ladder.md, "Workers").
            ("reaper", reaper_loop, (self.store, self.stop, lease / 3)),
        ]
        if self.scheduler is not None:
            targets.append(("scheduler", self.scheduler.loop, (self.stop,)))
        keep = self.options.keep_records
        if keep is not None and self.server_store is not None:
            logs = self.runner.bots.log_paths
            prune = (self.stop, self.server_store, self.options.data, keep, logs)
            targets.append(("retention", prune_loop, prune))
        # The pool needs PostgreSQL (docs/tournament.md): on SQLite only ladder matches.
        work: Callable[[], None] = functools.partial(self.runner.loop, self.options.idle_poll)
        if self.store.engine.dialect.name == "postgresql":
            beat = (self.pool.store, self.worker_id, self.stop, lease)
            targets.append(("pool-heartbeat", pool_heartbeat_loop, beat))
            nudge = self.stop.nudge
            self.listener = Listener(self.store.engine, JOBS_CHANNEL, lambda _: nudge()).start()
            runner = self.runner
            work = functools.partial(
                play_loop,
                self.stop,
                runner.run_one,
                self.pool.run_one,
                tick=lambda: runner.bots.stop_idle(BOT_IDLE_SECONDS),
                idle_poll=self.options.idle_poll,
            )
        targets += [(f"worker-{i}", work, ()) for i in range(self.options.concurrency)]
        for name, target, args in targets:
            thread = threading.Thread(target=target, args=args, name=f"ladder-{name}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def shutdown(self) -> None:
        """Stop the threads; what they were playing is cancelled (claimed: re-queued)."""
        self.stop.set()
        if self.listener is not None:
            self.listener.close()
        for thread in self.threads:
            thread.join(timeout=30)
        self.runner.close()
        for match in self.store.matches.unfinished_of([self.worker_id]):
            if match["status"] == "claimed":
                self.store.matches.requeue(match["id"], "requeued: the ladder was shut down")
            else:
                self.store.matches.cancel(match["id"], STOP_REASON)
        self.pool.close()
        self.store.workers.remove_worker(self.worker_id)


#: Under TLS the ladder's own referees (and its bots under --no-sandbox) reach its match
#: server on a second, plaintext port on loopback only (never another machine); --listen
#: itself speaks TLS only. Sandboxed bots reach the bot socket (Play only) through the
#: relay, never a port.
INTERNAL_LISTEN = "127.0.0.1:0"


def client_ca(options: ServeOptions) -> Path | None:
    """The CA this process checks TLS match servers of the ladder against: --tls-ca,
    else $CIRULLA_TLS_CA, else its own certificate (a self-signed one is its own CA)."""
    given = options.tls_ca or os.environ.get("CIRULLA_TLS_CA") or options.tls_cert
    return Path(given) if given else None


async def start_views(
    options: ServeOptions,
    store: LadderStore,
    dial: str,
    address: str = "",
    ca: Path | None = None,
) -> tuple[WebServer | None, MetricsServer | None]:
    """``--http`` (the web view, reading this process's own ports) and ``--metrics``.

    The web view reads a match this process hosts (``address``, as its matches carry
    it) from its own port ``dial``, and one hosted by another worker from that worker's
    match server: over TLS checked against ``ca`` when this ladder speaks TLS, else in
    plaintext."""
    web = exporter = None
    if options.http:
        tls_ca = ca.read_bytes() if ca is not None and options.tls_cert else None
        local = {a for a in (address, dial) if a}
        # the web view (Starlette, uvicorn, Jinja2: 0.1 s) is loaded when it is asked for,
        # as the match server's is: a ladder without --http (every test's) starts without
        from cirulla.server.web.app import start_web

        web = await start_web(
            options.http, dial, ladder=dial, ladder_local=local, ladder_tls_ca=tls_ca
        )
    if options.metrics:
        ladder_metrics.watch(store, options.lease_seconds)
        try:
            exporter = start_metrics(options.metrics)
        except OSError:
            if web is not None:
                await web.stop()
            raise
    return web, exporter


async def serve(options: ServeOptions) -> int:
    """Run the ladder until SIGINT/SIGTERM."""
    database_url(options.db)  # a bad --db fails before anything starts
    if options.webhook:
        check_url(options.webhook)
    if options.metrics:
        parse_address(options.metrics)
    if options.http:
        parse_address(options.http, "--http")
    if bool(options.tls_cert) != bool(options.tls_key):
        raise ValueError("TLS needs both --tls-cert and --tls-key")
    check_sandbox(options)
    if options.sandbox:
        # before anything is written or narrowed there: no private path is the installation
        token = options.admin_token_file or options.data / ADMIN_TOKEN_FILE
        # A private folder that does not exist yet cannot be masked (no mount point) and
        # would show through once written: it is made first (a new folder, nothing of
        # the installation changed), then the check can mask it.
        options.data.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            check_installation(private_paths(options, token))
        except SandboxUnavailable as exc:
            raise ValueError(str(exc).removeprefix("--sandbox: ")) from None
    # Everything this process writes (records, logs, databases, state) is its own.
    os.umask(0o077)
    private_folder(options.data)
    token_file = options.admin_token_file or ensure_token(options.data)
    admin_token = read_token(token_file)
    if options.insecure_open:
        print(OPEN_WARNING.format(listen=options.listen), file=sys.stderr, flush=True)
        log.warning("ladder_insecure_open listen=%s", options.listen)
    try:
        lock = OutputLock(options.data).__enter__()
    except ValueError:
        raise ValueError(f"another ladder is running on {options.data}") from None
    # Managed bots reach the match server's bot socket (Play only) through this relay's
    # sockets and nothing else.
    ca = client_ca(options)
    # The ladder's bots dial its plaintext loopback port or their relay, never TLS: a CA
    # of the operator's environment is the ladder's own (program_env would pass it on).
    for key in [k for k in os.environ if k.startswith("CIRULLA_TLS_")]:
        del os.environ[key]
    relay = ServerRelay() if options.sandbox else None
    confinement = Confinement(relay, private=private_paths(options, token_file)) if relay else None
    if confinement is not None:
        # one line: what bounds each bot here (control groups, or POSIX limits only)
        said = confinement.open_groups()
        print(said, file=sys.stderr, flush=True)
        log.info("ladder_bot_limits %s", said)
    try:
        engine = await asyncio.to_thread(open_database, options.db)
        store = LadderStore(engine)
        service = LadderService(
            store,
            admin_token,
            open_registration=options.insecure_open,
            tls_ca=str(ca) if ca and options.tls_cert else None,
            config=options.config,
            queues=options.queues,
            data=options.data,
            private=confinement.private if confinement is not None else (),
        )
        internal: list[int] = []

        def add_ladder(server: grpc.aio.Server) -> None:
            ladder_pb2_grpc.add_LadderServiceServicer_to_server(service, server)
            if options.tls_cert:
                internal.append(server.add_insecure_port(INTERNAL_LISTEN))

        # The match server has the ladder's admin token: only the ladder (and its
        # operator) creates and aborts its matches and reads records of open pairs.
        match_admin = admin_token
        running = await start_server(
            options.listen,
            options.data / MATCH_DB,
            admin_token=match_admin,
            tls_cert=options.tls_cert,
            tls_key=options.tls_key,
            disconnect_grace_ms=5_000,
            services=[(SERVICE_NAME, add_ladder)],
            # sandboxed bots: Play and nothing else (no LadderService, no ListMatches)
            bot_socket=relay.server_socket if relay is not None else None,
        )
        service.server_store = running.hub.store  # pruned records, for their authors
        await ladder_health.starting(running.health)  # NOT_SERVING until recovered
        address = options.advertise or local_address(options.listen, running.port)
        dial = (
            f"127.0.0.1:{internal[0]}" if internal else local_address(options.listen, running.port)
        )
        if relay is not None:
            relay.point_at(f"unix:{relay.server_socket}")
            relay.start()
        counts = await asyncio.to_thread(
            recover, store, worker_name(options.data, options.role), running.hub.store
        )
        log.info("ladder_recovered %s", " ".join(f"{k}={v}" for k, v in counts.items()))
        ladder = Ladder(
            store,
            options,
            address,
            match_admin,
            dial=dial,
            confinement=confinement,
            server_store=running.hub.store,
        )
        service.served_by = ladder.worker_id
        service.new_work = ladder.stop.nudge  # its idle scheduler and workers look at once
        ladder.start()
        health_stop = asyncio.Event()
        health_task = asyncio.create_task(ladder_health.watch(running.health, store, health_stop))
        web, exporter = await start_views(options, store, dial, address, ca)
        hook = None
        if options.webhook and options.role == "serve":
            hook = DeactivationWebhook(store, options.webhook, address)
            await asyncio.to_thread(hook.start)
        if options.role == "serve":
            state: LadderState = {
                "address": address,
                "db": display_url(database_url(options.db)),
                "data": str(options.data.resolve()),
                "pid": os.getpid(),
                "admin_token_file": str(token_file.resolve()),
            }
            if web is not None:
                state["http"] = local_address(options.http or "", web.port)
            if exporter is not None:
                state["metrics"] = local_address(options.metrics or "", exporter.port)
            if options.tls_cert:
                # the operator's commands here speak TLS, checked against this file
                # unless they are given another CA (--tls-ca, $CIRULLA_TLS_CA)
                state["tls_cert"] = str(Path(options.tls_cert).resolve())
            write_json_atomic(options.state_file, state)
        log.info(
            "ladder_serving role=%s worker=%s address=%s db=%s tls=%s sandbox=%s",
            options.role,
            ladder.worker_id,
            address,
            display_url(database_url(options.db)),
            bool(options.tls_cert),
            options.sandbox,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            log.info("ladder_stopping")
            health_stop.set()
            await health_task
            await running.health.set(SERVICE_NAME, ladder_health.NOT_SERVING)
            service.stopping.set()  # connect-in bots are told goodbye
            if hook is not None:
                await asyncio.to_thread(hook.stop)
            if web is not None:
                await web.stop()
            if exporter is not None:
                exporter.stop()
                ladder_metrics.unwatch(store)
            await asyncio.to_thread(ladder.shutdown)
            await running.stop()
            engine.dispose()
            with contextlib.suppress(OSError, ValueError):
                saved = json.loads(options.state_file.read_text())
                if saved.get("pid") == os.getpid():
                    options.state_file.unlink()
    finally:
        if relay is not None:
            relay.stop()
        if confinement is not None:
            confinement.close_groups()
        lock.__exit__(None, None, None)
    return 0
