"""Start and stop the gRPC server: listening, TLS, health, reflection, signals.

``start_server`` returns a running server with its bound port (port 0 allowed), which is
what tests and the tournament runner need; ``serve`` wraps it for the command line and
shuts down gracefully on SIGINT/SIGTERM, saying Goodbye to every connected player first.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from cirulla.server.hub import KEEP_FINISHED_S, Hub
from cirulla.server.service import MatchService
from cirulla.server.store import Store
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc

log = logging.getLogger("cirulla.server")
SERVICE_NAME = match_service_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name


@dataclass
class RunningServer:
    server: grpc.aio.Server
    port: int
    hub: Hub
    health: health.aio.HealthServicer

    async def stop(self, grace: float = 1.0) -> None:
        """Goodbye to every stream, then stop accepting calls and close the database."""
        await self.health.enter_graceful_shutdown()
        self.hub.shutdown()
        await asyncio.sleep(0.05)  # let the stream writers flush their Goodbye
        await self.server.stop(grace)
        self.hub.store.close()


async def start_server(
    listen: str = "127.0.0.1:0",
    db: str | Path = ":memory:",
    *,
    admin_token: str | None = None,
    tls_cert: str | Path | None = None,
    tls_key: str | Path | None = None,
    disconnect_grace_ms: int = 30_000,
    keep_finished_s: float = KEEP_FINISHED_S,
) -> RunningServer:
    if bool(tls_cert) != bool(tls_key):
        raise ValueError("TLS needs both --tls-cert and --tls-key")
    store = Store(db)
    if keep_finished_s < 0:
        raise ValueError(f"--keep-finished must be 0 or more seconds, not {keep_finished_s}")
    hub = Hub(
        store,
        admin_token=admin_token,
        default_grace_ms=disconnect_grace_ms,
        keep_finished_s=keep_finished_s,
    )
    server = grpc.aio.server()
    match_service_pb2_grpc.add_MatchServiceServicer_to_server(MatchService(hub), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (
            SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    if tls_cert and tls_key:
        creds = grpc.ssl_server_credentials(
            [(Path(tls_key).read_bytes(), Path(tls_cert).read_bytes())]
        )
        port = server.add_secure_port(listen, creds)
    else:
        port = server.add_insecure_port(listen)
    if not port:
        raise OSError(f"cannot listen on {listen}")
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info(
        "server_started listen=%s port=%d db=%s tls=%s admin_token=%s",
        listen,
        port,
        db,
        bool(tls_cert),
        bool(admin_token),
    )
    return RunningServer(server, port, hub, health_servicer)


async def serve(
    listen: str = "127.0.0.1:50051",
    db: str | Path = "cirulla.sqlite3",
    *,
    port_file: str | Path | None = None,
    http: str | None = None,
    ladder_db: str | None = None,
    **kwargs: object,
) -> int:
    """Run until SIGINT/SIGTERM; returns the port that was bound.

    With ``http`` (HOST:PORT) the web view (``cirulla.server.web``) is served too, on the
    same event loop, as a client of this server's own gRPC port.
    """
    if http and kwargs.get("tls_cert"):
        raise ValueError(
            "--http with --tls-cert is not supported: serve the web view from a plaintext server"
        )
    running = await start_server(listen, db, **kwargs)  # type: ignore[arg-type]
    web = None
    if http:
        from cirulla.server.web.app import start_web

        host = listen.rpartition(":")[0].strip("[]")
        local = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
        try:
            web = await start_web(http, f"{local}:{running.port}", ladder_db)
        except BaseException:
            await running.stop()
            raise
    if port_file:
        tmp = Path(str(port_file) + ".tmp")
        tmp.write_text(f"{running.port}\n")
        tmp.replace(port_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        log.info("server_stopping port=%d", running.port)
        if web is not None:
            await web.stop()
        await running.stop()
    return running.port
