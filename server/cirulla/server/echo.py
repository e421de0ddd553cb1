"""The wire's own cost: a raw ``grpc.aio`` echo of the match server's message sizes.

``cirulla bench server`` compares the match server with this: a server process that does
nothing but answer each request of a bidirectional stream with one message of a given
size (bytes in, bytes out: no protobuf, no game), played by the same client processes as
the real load, one round trip per decision. What the match server costs beyond it is
its own work (the rules, the hiding, the conversion, the records).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import time
from collections.abc import AsyncIterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.queues import Queue
from typing import TypedDict

import grpc

from cirulla.server.load import percentile, share
from cirulla.server.procstat import cpu_seconds

METHOD = "/cirulla.bench.Echo/Echo"


class EchoLatency(TypedDict):
    p50: float | None
    p99: float | None


class EchoFigures(TypedDict):
    """``run_echo``'s figures."""

    what: str
    streams: int
    request_bytes: int
    reply_bytes: int
    round_trips: int
    wall_s: float
    round_trips_per_s: float | None
    server_cpu_s: float
    server_cpu_ms_per_round_trip: float | None
    client_cpu_s: float
    client_cpu_ms_per_round_trip: float | None
    latency_ms: EchoLatency


def _identity(data: bytes) -> bytes:
    return data


async def _serve(port_out: Queue[int], reply_bytes: int) -> None:
    reply = b"x" * reply_bytes

    async def echo(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        async for _ in requests:
            yield reply

    handler = grpc.method_handlers_generic_handler(
        "cirulla.bench.Echo",
        {
            "Echo": grpc.stream_stream_rpc_method_handler(
                echo, request_deserializer=_identity, response_serializer=_identity
            )
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    port_out.put(port)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(0.1)


def serve(port_out: Queue[int], reply_bytes: int) -> None:
    """(child process) Serve the echo until SIGTERM; put the bound port on ``port_out``."""
    asyncio.run(_serve(port_out, reply_bytes))


async def _streams(
    port: int, streams: int, round_trips: int, request_bytes: int
) -> tuple[list[float], int]:
    request = b"r" * request_bytes
    latencies: list[float] = []

    async def one(channel: grpc.aio.Channel) -> int:
        call = channel.stream_stream(
            METHOD, request_serializer=_identity, response_deserializer=_identity
        )()
        done = 0
        for _ in range(round_trips):
            t0 = time.perf_counter()
            await call.write(request)
            await call.read()
            latencies.append((time.perf_counter() - t0) * 1000)
            done += 1
        await call.done_writing()
        return done

    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(4)]
    try:
        counts = await asyncio.gather(*(one(channels[i % 4]) for i in range(streams)))
    finally:
        for channel in channels:
            await channel.close()
    return latencies, sum(counts)


def _client(args: tuple[int, int, int, int]) -> tuple[list[float], int, float]:
    """(client process) The streams' latencies and round trips, and this process's CPU
    for them (every thread's: gRPC's own threads included)."""
    cpu = time.process_time()
    latencies, done = asyncio.run(_streams(*args))
    return latencies, done, time.process_time() - cpu


def run_echo(
    *, streams: int, round_trips: int, request_bytes: int, reply_bytes: int, processes: int
) -> EchoFigures:
    """``streams`` concurrent streams of ``round_trips`` round trips each, from
    ``processes`` client processes, against an echo server process: its CPU per round
    trip, the clients' (their event loops and channels, from start to end), and the
    round trip's latency."""
    ctx = multiprocessing.get_context("spawn")
    ports: Queue[int] = ctx.Queue()
    proc = ctx.Process(target=serve, args=(ports, reply_bytes), daemon=True)
    proc.start()
    try:
        port = ports.get(timeout=60)
        processes = max(1, min(processes, streams))
        with ProcessPoolExecutor(processes, mp_context=ctx) as pool:
            list(pool.map(share, [1] * processes, [1] * processes, [0] * processes))
            assert proc.pid is not None
            cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
            jobs = [
                pool.submit(
                    _client, (port, share(streams, processes, i), round_trips, request_bytes)
                )
                for i in range(processes)
            ]
            results = [job.result() for job in jobs]
            wall = time.perf_counter() - t0
            cpu = cpu_seconds(proc.pid) - cpu0
    finally:
        if proc.pid is not None and proc.is_alive():
            os.kill(proc.pid, signal.SIGTERM)
        proc.join(10)
        if proc.is_alive():
            proc.kill()
    latencies = [x for lat, _, _ in results for x in lat]
    total = sum(n for _, n, _ in results)
    client_cpu = sum(c for _, _, c in results)
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    return {
        "what": "raw grpc.aio bidirectional echo, bytes in and out (no protobuf, no game)",
        "streams": streams,
        "request_bytes": request_bytes,
        "reply_bytes": reply_bytes,
        "round_trips": total,
        "wall_s": round(wall, 2),
        "round_trips_per_s": round(total / wall, 1) if wall else None,
        "server_cpu_s": round(cpu, 3),
        "server_cpu_ms_per_round_trip": round(cpu * 1000 / total, 4) if total else None,
        "client_cpu_s": round(client_cpu, 3),
        "client_cpu_ms_per_round_trip": round(client_cpu * 1000 / total, 4) if total else None,
        "latency_ms": {
            "p50": None if p50 is None else round(p50, 3),
            "p99": None if p99 is None else round(p99, 3),
        },
    }
