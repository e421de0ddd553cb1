"""Start and stop the gRPC server: listening, TLS, health, reflection, signals.

``start_server`` returns a running server with its bound port (port 0 allowed), which is
what tests and the tournament runner need; ``serve`` wraps it for the command line and
shuts down gracefully on SIGINT/SIGTERM, saying Goodbye to every connected player first.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import gc
import logging
import os
import signal
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from cirulla.server.bot_socket import check_bot_socket, start_bot_server
from cirulla.server.hub import KEEP_FINISHED_S, Hub
from cirulla.server.limits import Limits
from cirulla.server.metrics import parse_address, start_metrics
from cirulla.server.service import MatchService, add_to_server
from cirulla.server.store import Store
from cirulla.v1 import match_service_pb2

log = logging.getLogger("cirulla.server")
#: The garbage collector's third threshold in a serving process: full collections happen
#: after this many second-generation ones (Python's default is 10), see ``tune_gc``.
FULL_COLLECTION_EVERY = 1000
SERVICE_NAME = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name


@dataclass
class RunningServer:
    server: grpc.aio.Server
    port: int
    hub: Hub
    health: health.aio.HealthServicer
    #: The sandboxed bots' listener (``bot_socket``: Play only), when asked for.
    bot_server: grpc.aio.Server | None = None

    async def stop(self, grace: float = 1.0) -> None:
        """Goodbye to every stream, then stop accepting calls and close the database."""
        await self.health.enter_graceful_shutdown()
        self.hub.shutdown()
        await asyncio.sleep(0.05)  # let the stream writers flush their Goodbye
        servers = [self.server] + ([self.bot_server] if self.bot_server is not None else [])
        await asyncio.gather(*(server.stop(grace) for server in servers))
        await self.hub.records_written()
        self.hub.close()
        self.hub.store.close()


def bind_problem(listen: str) -> str:
    """Why ``listen`` (HOST:PORT) cannot be bound, or "": tried with a socket of our own
    first, as gRPC binds (SO_REUSEADDR, no SO_REUSEPORT), because gRPC's core writes a
    line of its own on stderr for a failed bind, ahead of the server's one-line error.
    Port 0 and what does not parse are left to gRPC."""
    host, _, port = listen.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        return ""
    try:
        found = socket.getaddrinfo(
            host.strip("[]") or None, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except OSError:
        return ""
    failures = []
    for family, kind, proto, _, address in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return "the port is in use"
                failures.append(exc.strerror or str(exc))
    # gRPC listens if any of the host's addresses binds (a host without IPv6, say)
    return failures[0] if found and len(failures) == len(found) else ""


async def start_server(
    listen: str = "127.0.0.1:0",
    db: str | Path = ":memory:",
    *,
    admin_token: str | None = None,
    tls_cert: str | Path | None = None,
    tls_key: str | Path | None = None,
    disconnect_grace_ms: int = 30_000,
    keep_finished_s: float = KEEP_FINISHED_S,
    limits: Limits | None = None,
    services: Sequence[tuple[str, Callable[[grpc.aio.Server], None]]] = (),
    bot_socket: str | Path | None = None,
) -> RunningServer:
    """``services``: more (full service name, add-to-server function) pairs served on
    the same port, e.g. the ladder's LadderService. ``bot_socket``: a unix socket path
    where sandboxed bots are served ``MatchService/Play`` and nothing else, in plaintext
    (``cirulla.server.bot_socket``)."""
    if bool(tls_cert) != bool(tls_key):
        raise ValueError("TLS needs both --tls-cert and --tls-key")
    check_listen(listen)
    problem = bind_problem(listen)  # before the database is made: a refusal changes nothing
    if problem:
        raise OSError(f"cannot listen on {listen}: {problem}")
    if bot_socket is not None:
        check_bot_socket(bot_socket)
    store = Store(db)
    if keep_finished_s < 0:
        raise ValueError(f"--keep-finished must be 0 or more seconds, not {keep_finished_s}")
    hub = Hub(
        store,
        admin_token=admin_token,
        default_grace_ms=disconnect_grace_ms,
        keep_finished_s=keep_finished_s,
        limits=limits,
    )
    server_options = [
        ("grpc.max_receive_message_length", hub.limits.max_request_bytes),
        ("grpc.max_concurrent_streams", hub.limits.max_streams_per_connection),
        # a port already in use must fail, not be shared with another server
        ("grpc.so_reuseport", 0),
    ]
    server = grpc.aio.server(options=server_options)
    servicer = MatchService(hub)
    add_to_server(servicer, server)
    for _name, add_service in services:
        add_service(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (
            SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
            *(name for name, _ in services),
        ),
        server,
    )
    if tls_cert and tls_key:
        creds = grpc.ssl_server_credentials(
            [(read_pem(tls_key, "--tls-key"), read_pem(tls_cert, "--tls-cert"))]
        )
        add_port: Callable[[str], int] = functools.partial(
            server.add_secure_port, server_credentials=creds
        )
    else:
        add_port = server.add_insecure_port
    try:
        port = add_port(listen)
    except RuntimeError:
        port = 0
    if not port:
        store.close()
        raise OSError(f"cannot listen on {listen}: the port is in use or the address is not local")
    bot_server = None
    if bot_socket is not None:
        try:
            bot_server = await start_bot_server(bot_socket, servicer, server_options)
        except BaseException:
            store.close()
            raise
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info(
        "server_started listen=%s port=%d db=%s tls=%s admin_token=%s bot_socket=%s",
        listen,
        port,
        db,
        bool(tls_cert),
        bool(admin_token),
        bot_socket or "",
    )
    return RunningServer(server, port, hub, health_servicer, bot_server)


def check_listen(listen: str) -> None:
    """Refuse a HOST:PORT whose port is not 0..65535 (gRPC would wrap it silently)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isascii() or not port.isdigit():
        raise ValueError(f"--listen {listen!r}: expected HOST:PORT")
    if int(port) > 65535:
        raise ValueError(f"--listen {listen!r}: port {port} is above 65535")


def tune_gc() -> None:
    """Keep the garbage collector's full collections off a serving process's hot path.

    A full collection walks every object the process holds (the live matches' games and
    events, the ended matches kept in memory, the recent records) and stops the event
    loop meanwhile: at 100 matches at once about 300,000 objects, 0.1-0.4 s per
    collection, one every few seconds with Python's thresholds, which was the paced load's
    whole p99 latency (docs/performance-log.md, "The match server"). The server makes almost
    no cyclic garbage (a session holds no reference cycle: its memory goes when the hub
    lets go of it), so full collections can be rare: what start-up loaded (modules,
    descriptors, the caches' first entries) is frozen out of every future collection, and
    a full collection waits for ``FULL_COLLECTION_EVERY`` second-generation ones (10 to 15
    minutes at 1,000 decisions a second). The young generations keep Python's
    thresholds: their collections stay short.
    """
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)


async def _watch_parent(parent_pid: int, stop: asyncio.Event, every_s: float = 0.5) -> None:
    """Set ``stop`` once the process that started this server is gone.

    An embedded server (the tournament runner's) must not outlive its runner, even
    when the runner is killed with SIGKILL and cannot stop it: when the parent dies the
    server is re-parented, so ``getppid`` changes. Polling also works when the runner
    started the server from a thread (PR_SET_PDEATHSIG follows the thread).
    """
    while not stop.is_set():
        if os.getppid() != parent_pid:
            log.warning("parent_gone pid=%d: stopping", parent_pid)
            stop.set()
            return
        await asyncio.sleep(every_s)


async def serve(
    listen: str = "127.0.0.1:50051",
    db: str | Path = "cirulla.sqlite3",
    *,
    port_file: str | Path | None = None,
    http: str | None = None,
    ladder: str | None = None,
    metrics: str | None = None,
    parent_pid: int | None = None,
    **kwargs: object,
) -> int:
    """Run until SIGINT/SIGTERM (or until ``parent_pid`` exits); returns the bound port.

    With ``http`` (HOST:PORT) the web view (``cirulla.server.web``) is served too, on the
    same event loop, as a client of this server's own gRPC port (and with ``ladder``, a
    ladder's address, of its LadderService). With ``metrics`` (HOST:PORT) Prometheus
    metrics are served at ``/metrics`` there (``cirulla.server.metrics``).
    """
    if http and kwargs.get("tls_cert"):
        raise ValueError(
            "--http with --tls-cert is not supported: serve the web view from a plaintext server"
        )
    if metrics:
        parse_address(metrics)  # a bad address fails before anything starts
    running = await start_server(listen, db, **kwargs)  # type: ignore[arg-type]
    web = None
    exporter = None
    try:
        if http:
            from cirulla.server.web.app import start_web

            host = listen.rpartition(":")[0].strip("[]")
            local = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
            web = await start_web(http, f"{local}:{running.port}", ladder)
        if metrics:
            exporter = start_metrics(metrics)
    except BaseException:
        if web is not None:
            await web.stop()
        await running.stop()
        raise
    tune_gc()  # after start-up: what it loaded is never collected again
    if port_file:
        tmp = Path(str(port_file) + ".tmp")
        tmp.write_text(f"{running.port}\n")
        tmp.replace(port_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    watchdog = (
        asyncio.create_task(_watch_parent(parent_pid, stop)) if parent_pid is not None else None
    )
    try:
        await stop.wait()
    finally:
        if watchdog is not None:
            watchdog.cancel()
        log.info("server_stopping port=%d", running.port)
        if web is not None:
            await web.stop()
        if exporter is not None:
            exporter.stop()
        await running.stop()
    return running.port


def read_pem(path: str | Path, option: str) -> bytes:
    """A TLS file's bytes; an OSError names the option that gave it (``--tls-cert
    /nonexistent`` said only ``[Errno 2] No such file or directory: '/nonexistent'``)."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise OSError(f"{option} {path}: {exc.strerror or exc}") from None
