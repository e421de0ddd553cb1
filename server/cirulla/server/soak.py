"""``cirulla bench soak``: the server under a long run of concurrent matches.

The server runs as its own ``cirulla server`` process (SQLite file, INFO logs); this
process plays every seat with random legal choices, keeping ``concurrency`` matches in
play until ``total`` have finished. Reported: the decision round trip (a seat's submit to
its ``action_accepted``: check, apply and acknowledge on the server plus both network
legs) as p50/p99/max, the server's resident memory (start, peak, end) and CPU time, and
that every match finished. The seats share this process, so on a small machine part of
the latency is the client's own queueing: compare figures measured the same way.
"""

from __future__ import annotations

import asyncio
import collections
import multiprocessing
import random
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, wait
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

import grpc

from cirulla.server.bench import LOAD_SERVER_ARGS, _settings, server_process
from cirulla.server.client import Outbox, hello, submit_index
from cirulla.server.load import PlayCall, Stub
from cirulla.server.procstat import cpu_seconds, rss_kib
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc

#: Play streams that ended with an error status, by status (in this process).
errors: collections.Counter[str] = collections.Counter()
#: Matches ended so far by every client process (shared; set by ``_init``).
ended: Synchronized[int] | None = None


def _init(counter: Synchronized[int]) -> None:
    """(client process) The shared count of ended matches, for the memory curve."""
    global ended
    ended = counter


async def _seat(
    stub: Stub, match_id: str, token: str, rng: random.Random, rtts: list[float]
) -> bool:
    """Play one seat with random choices; True if the match ended with a result.

    A stream that fails is counted and reopened (a few times), as a bot would: on an
    overloaded machine the other seat must not wait forever for this one.
    """
    for attempt in range(4):
        out = Outbox()
        out.send(hello(match_id, token, "soak", resume=0 if attempt else None))
        try:
            return await _read(stub.Play(out), out, rng, rtts)
        except grpc.aio.AioRpcError as exc:  # counted, not fatal: the soak goes on
            errors[exc.code().name] += 1
            await asyncio.sleep(0.5)
        finally:
            out.send(None)
    return False


async def _create(stub: Stub, request: ms.CreateMatchRequest) -> ms.CreateMatchResponse:
    """CreateMatch, tried again (counted in ``errors``) when the call fails."""
    for attempt in range(4):
        try:
            response: ms.CreateMatchResponse = await stub.CreateMatch(request)
            return response
        except grpc.aio.AioRpcError as exc:
            errors["CreateMatch " + exc.code().name] += 1
            if attempt == 3:
                raise
            await asyncio.sleep(0.5)
    raise AssertionError("unreachable")


async def _read(call: PlayCall, out: Outbox, rng: random.Random, rtts: list[float]) -> bool:
    sent: dict[int, float] = {}
    result = False
    async for msg in call:
        kind = msg.WhichOneof("body")
        if kind == "decision_request":
            req = msg.decision_request
            sent[req.decision_id] = time.perf_counter()
            out.send(submit_index(req.decision_id, rng.randrange(len(req.legal_actions))))
        elif kind == "action_accepted":
            start = sent.pop(msg.action_accepted.decision_id, None)
            if start is not None:
                rtts.append((time.perf_counter() - start) * 1000)
        elif kind == "match_result":
            result = True
        elif kind == "goodbye":
            break
    return result


async def _play(
    port: int, concurrency: int, total: int, target: int, first_seed: int
) -> tuple[list[float], int, int]:
    """Keep ``concurrency`` matches in play until ``total`` have ended; (rtts, ok, failed)."""
    rtts: list[float] = []
    finished = failed = started = 0

    async def worker(stub: Stub) -> None:
        nonlocal finished, failed, started
        while started < total:
            started += 1
            seed = first_seed + started
            m = await _create(stub, ms.CreateMatchRequest(settings=_settings(target, seed)))
            done = await asyncio.gather(
                *[
                    _seat(stub, m.match.match_id, t.token, random.Random(seed * 10 + i), rtts)
                    for i, t in enumerate(m.seat_tokens)
                ]
            )
            if all(done):
                finished += 1
            else:
                failed += 1
            if ended is not None:
                with ended.get_lock():
                    ended.value += 1

    # A few channels, as many clients would open: one HTTP/2 connection for hundreds of
    # streams would measure that connection's flow control rather than the server.
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(4)]
    try:
        stubs = [match_service_pb2_grpc.MatchServiceStub(c) for c in channels]
        await asyncio.gather(*(worker(stubs[i % len(stubs)]) for i in range(concurrency)))
    finally:
        for channel in channels:
            await channel.close()
    return rtts, finished, failed


def _client(
    args: tuple[int, int, int, int, int],
) -> tuple[list[float], int, int, dict[str, int]]:
    """One client process's share of the seats (run in a worker process)."""
    rtts, finished, failed = asyncio.run(_play(*args))
    return rtts, finished, failed, dict(errors)


def _at(curve: list[tuple[int, int]], games: int) -> int:
    """The first RSS sample taken once ``games`` matches had ended."""
    return next((rss for done, rss in curve if done >= games), curve[-1][1])


def _slope(curve: list[tuple[int, int]], after: int) -> float | None:
    """MiB per 1,000 matches ended, fitted over the samples from ``after`` matches on."""
    points = [(done, rss) for done, rss in curve if done >= after]
    if len({done for done, _ in points}) < 2:
        return None
    mx = sum(d for d, _ in points) / len(points)
    my = sum(r for _, r in points) / len(points)
    var = sum((d - mx) ** 2 for d, _ in points)
    cov = sum((d - mx) * (r - my) for d, r in points)
    return round(cov / var * 1000 / 1024, 3)


def _share(n: int, parts: int, i: int) -> int:
    return n // parts + (1 if i < n % parts else 0)


def run_soak(
    concurrency: int = 200, total: int = 400, target: int = 11, processes: int = 4
) -> dict[str, object]:
    """Start a server process, play the soak against it from ``processes`` client
    processes (one would be the bottleneck: its queueing would pass for server latency),
    return the figures."""
    procs: list[subprocess.Popen[bytes]] = []
    processes = max(1, min(processes, concurrency))
    ctx = multiprocessing.get_context("spawn")
    counter = ctx.Value("i", 0)
    with (
        tempfile.TemporaryDirectory(prefix="cirulla-soak-") as tmp,
        server_process(Path(tmp), procs=procs, args=LOAD_SERVER_ARGS) as port,
        ProcessPoolExecutor(
            processes, mp_context=ctx, initializer=_init, initargs=(counter,)
        ) as pool,
    ):
        pid = procs[0].pid
        argv = procs[0].args
        assert isinstance(argv, list)  # server_process starts it from a list
        server_flags = [str(arg) for arg in argv[3:]]  # after "python -m cirulla"
        memory = [rss_kib(pid)]
        curve = [(0, memory[0])]  # (matches ended, server RSS KiB)
        cpu_start = cpu_seconds(pid)
        t0 = time.perf_counter()
        jobs = [
            pool.submit(
                _client,
                (
                    port,
                    _share(concurrency, processes, i),
                    _share(total, processes, i),
                    target,
                    i * total,
                ),
            )
            for i in range(processes)
        ]
        while not all(job.done() for job in jobs):
            wait(jobs, timeout=0.5)
            memory.append(rss_kib(pid))
            curve.append((counter.value, memory[-1]))
        wall = time.perf_counter() - t0
        cpu = cpu_seconds(pid) - cpu_start
        rtts: list[float] = []
        finished = failed = 0
        stream_errors: collections.Counter[str] = collections.Counter()
        for job in jobs:
            samples, ok, bad, errs = job.result()
            rtts += samples
            finished += ok
            failed += bad
            stream_errors.update(errs)
    rtts.sort()
    return {
        "concurrency": concurrency,
        "matches": total,
        "client_processes": processes,
        # the server's own command line: its match-creation rate is lifted (one client
        # address creates every match; a deployed server's 20 a second refused them)
        "server_command": server_flags,
        "finished": finished,
        "failed": failed,
        "stream_errors": dict(stream_errors),
        "decisions": len(rtts),
        "wall_s": round(wall, 1),
        "decisions_per_s": round(len(rtts) / wall, 1),
        "decision_rtt_ms": {
            "p50": round(statistics.median(rtts), 2) if rtts else None,
            "p99": round(rtts[max(0, int(len(rtts) * 0.99) - 1)], 2) if rtts else None,
            "max": round(rtts[-1], 2) if rtts else None,
        },
        "server_rss_mib": {
            "start": round(memory[0] / 1024, 1),
            "middle": round(_at(curve, total // 2) / 1024, 1),
            "peak": round(max(memory) / 1024, 1),
            "end": round(memory[-1] / 1024, 1),
        },
        "server_rss_mib_per_1000_matches": {
            "second_half": _slope(curve, total // 2),
            "whole_run": _slope(curve, 0),
            "what": "least-squares slope of the server's RSS against matches ended, "
            "sampled every 0.5 s (the first half includes the warm-up: caches, pools)",
        },
        "server_cpu_s": round(cpu, 1),
        "server_cpu_share": round(cpu / wall, 2),
    }
