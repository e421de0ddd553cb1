"""A real match server on an ephemeral port, in process, for one test body.

One place for "start the server, open a channel, run, stop the server", which every
in-process server test needs; and the command lines that keep a server (or a runner that
starts one) started as a subprocess from outliving an interrupted or killed test run.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc

from cirulla.server.app import start_server
from cirulla.v1 import match_service_pb2_grpc


def server_command(*args: str) -> list[str]:
    """``cirulla server ARGS`` that stops by itself when this test process dies, even by
    SIGKILL (``--parent-pid``): an interrupted test leaves no server behind."""
    return [sys.executable, "-m", "cirulla", "server", *args, "--parent-pid", str(os.getpid())]


def tied_to_this_process(argv: list[str]) -> list[str]:
    """``argv`` run so it gets SIGTERM when the thread starting it dies (even by SIGKILL):
    for programs with no ``--parent-pid`` that start servers (a tournament runner, a
    ladder), which stop their children on SIGTERM. ``setpriv`` (util-linux) sets the
    parent-death signal and then execs ``argv`` in its place, same pid. Start it from the
    test's main thread: the signal follows the thread that forked, not the process."""
    return ["setpriv", "--pdeathsig", "TERM", "--", *argv]


@asynccontextmanager
async def serving(
    db: Any = ":memory:", **server_options: Any
) -> AsyncIterator[tuple[match_service_pb2_grpc.MatchServiceStub, Any, grpc.aio.Channel]]:
    """Yield (stub, running server, channel); the server stops when the block ends."""
    srv = await start_server("127.0.0.1:0", db, **server_options)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.port}") as channel:
            yield match_service_pb2_grpc.MatchServiceStub(channel), srv, channel
    finally:
        await srv.stop()


def run_with_server(
    body: Callable[[Any, Any], Awaitable[Any]], db: Any = ":memory:", **server_options: Any
) -> Any:
    """``asyncio.run`` of ``body(stub, server)`` against a fresh server."""

    async def main() -> Any:
        async with serving(db, **server_options) as (stub, srv, _):
            return await body(stub, srv)

    return asyncio.run(main())
