"""Concurrent matches played against a server process, for ``cirulla bench server``.

The seats are played from client processes of their own (one process would be the
bottleneck, and its queueing would pass for the server's latency), with random legal
choices, in one of two ways a client can speak the protocol:

- ``plain``: a client written from the protos that sets no Hello flag (every message its
  own stream message: an acknowledgement, each event, each decision request);
- ``kit``: what the bot kit sets (``accept_batches``, ``defer_events``,
  ``auto_play_forced``): about one stream message each way per decision.

The server's cost per decision is its CPU time (``/proc``) over the run divided by the
decisions the seats answered (moves the server plays itself for ``auto_play_forced`` are
not counted, so the figure is, if anything, high). The decision latency is the time from a
seat's answer to the next decision request of its match, as the waiting seat sees it: the
server's whole move (check, apply, record, events, next view and legal actions) plus both
network legs, and the client's own event loop on both ends (the frame waits for it to be
read; the answer is timed when it is queued, after the thinking). Seats may think
(``think_ms``) before answering, so latency can be measured at a load the machine can
carry rather than at saturation, where it only measures the queue; the client processes'
CPU per decision (``client_cpu_ms_per_decision``) says how much of the machine the load
itself takes: server and clients share its cores.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import time
from collections.abc import AsyncIterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TypedDict

import grpc

from cirulla.server.client import Outbox, hello, submit_index
from cirulla.server.procstat import cpu_seconds, rss_kib
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, rules_pb2

#: A client's stub of the match service, and a seat's Play call (what it reads).
Stub = match_service_pb2_grpc.MatchServiceStub
PlayCall = AsyncIterator[ms.PlayResponse]


class Latency(TypedDict):
    p50: float | None
    p99: float | None
    max: float | None


class RssMib(TypedDict):
    start: float
    end: float


class LoadFigures(TypedDict):
    """``run_load``'s figures (``cirulla bench server`` prints them)."""

    mode: str
    concurrency: int
    matches: int
    failed: int
    stream_errors: dict[str, int]
    target: int
    think_ms: float
    client_processes: int
    decisions: int
    wall_s: float
    decisions_per_s: float | None
    server_cpu_s: float
    server_cpu_ms_per_decision: float | None
    server_cores_busy: float | None
    client_cpu_ms_per_decision: float | None
    client_cores_busy: float | None
    frames_per_decision: float | None
    bytes_per_frame: float | None
    bytes_per_decision: float | None
    latency_ms: Latency
    server_rss_mib: RssMib


MODES = ("plain", "kit")


@dataclass
class _Match:
    """One match's shared clock: when its last answer was sent."""

    submitted: float = 0.0


@dataclass
class Tally:
    """What one client process saw."""

    latencies_ms: list[float] = field(default_factory=list)
    decisions: int = 0
    frames: int = 0  # stream messages received
    frame_bytes: int = 0  # their serialized size
    matches: int = 0
    failed: int = 0
    #: Play streams that ended with an error status, by status.
    errors: dict[str, int] = field(default_factory=dict)
    #: The client process's CPU time over its share of the load.
    cpu_s: float = 0.0


def settings(target: int, seed: int) -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=target)),
        seed=seed,
        best_of=1,
    )


#: Attempts at a seat's stream (and at creating a match) before it counts as failed.
ATTEMPTS = 4


async def _seat(
    stub: Stub,
    match_id: str,
    token: str,
    mode: str,
    state: _Match,
    rng: random.Random,
    think_s: float,
    tally: Tally,
) -> bool:
    """Play one seat to its Goodbye; True if the match ended with a result.

    A stream that fails is counted and opened again with ``resume`` (a few times), as
    a bot would: on an overloaded machine the other seat must not wait forever for this
    one."""
    kit = mode == "kit"
    for attempt in range(ATTEMPTS):
        out = Outbox()
        out.send(
            hello(
                match_id,
                token,
                "load",
                resume=0 if attempt else None,
                batches=kit,
                defer_events=kit,
                auto_play_forced=kit,
            )
        )
        try:
            ended = await _stream(stub.Play(out), out, state, rng, think_s, tally)
        finally:
            out.send(None)
        if ended is not None:
            return ended
        await asyncio.sleep(0.2)
    return False


async def _stream(
    call: PlayCall, out: Outbox, state: _Match, rng: random.Random, think_s: float, tally: Tally
) -> bool | None:
    """One stream of a seat: whether the match ended with a result, None if it failed."""
    result = False
    async for frame in _frames(call, tally):
        tally.frames += 1
        tally.frame_bytes += frame.ByteSize()
        msgs = frame.batch.responses if frame.WhichOneof("body") == "batch" else (frame,)
        for msg in msgs:
            kind = msg.WhichOneof("body")
            if kind == "decision_request":
                now = time.perf_counter()
                if state.submitted:
                    tally.latencies_ms.append((now - state.submitted) * 1000)
                req = msg.decision_request
                if think_s:
                    await asyncio.sleep(think_s)
                state.submitted = time.perf_counter()
                out.send(submit_index(req.decision_id, rng.randrange(len(req.legal_actions))))
                tally.decisions += 1
            elif kind == "match_result":
                result = True
            elif kind == "goodbye":
                return result
    return None


async def create(
    stub: Stub, request: ms.CreateMatchRequest, tally: Tally
) -> ms.CreateMatchResponse:
    """CreateMatch, tried again (counted) when the call fails."""
    for attempt in range(ATTEMPTS):
        try:
            response: ms.CreateMatchResponse = await stub.CreateMatch(request)
            return response
        except grpc.aio.AioRpcError as exc:
            name = f"CreateMatch {exc.code().name}: {(exc.details() or '')[:80]}"
            tally.errors[name] = tally.errors.get(name, 0) + 1
            if attempt == ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.2)
    raise AssertionError("unreachable")


async def _frames(call: PlayCall, tally: Tally) -> AsyncIterator[ms.PlayResponse]:
    """The stream's messages; a stream that fails ends (counted, not raised: the other
    matches go on, and the report says how many failed)."""
    try:
        async for frame in call:
            yield frame
    except grpc.aio.AioRpcError as exc:
        name = exc.code().name
        tally.errors[name] = tally.errors.get(name, 0) + 1


async def _play(
    port: int, mode: str, concurrency: int, total: int, target: int, seed0: int, think_s: float
) -> Tally:
    tally = Tally()
    started = 0

    async def slot(stub: Stub) -> None:
        nonlocal started
        while started < total:
            started += 1
            seed = seed0 + started
            m = await create(stub, ms.CreateMatchRequest(settings=settings(target, seed)), tally)
            state = _Match()
            done = await asyncio.gather(
                *[
                    _seat(
                        stub,
                        m.match.match_id,
                        t.token,
                        mode,
                        state,
                        random.Random(seed * 10 + i),
                        think_s,
                        tally,
                    )
                    for i, t in enumerate(m.seat_tokens)
                ]
            )
            if all(done):
                tally.matches += 1
            else:
                tally.failed += 1

    # A few connections, as many clients would open.
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(4)]
    try:
        stubs = [match_service_pb2_grpc.MatchServiceStub(c) for c in channels]
        await asyncio.gather(*(slot(stubs[i % len(stubs)]) for i in range(concurrency)))
    finally:
        for channel in channels:
            await channel.close()
    return tally


def _client(args: tuple[int, str, int, int, int, int, float]) -> Tally:
    cpu = time.process_time()
    tally = asyncio.run(_play(*args))
    tally.cpu_s = time.process_time() - cpu
    return tally


def share(n: int, parts: int, i: int) -> int:
    """Part ``i`` of ``n`` split as evenly as possible into ``parts``."""
    return n // parts + (1 if i < n % parts else 0)


def percentile(samples: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``samples`` (nearest rank), None if there are none."""
    if not samples:
        return None
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def settled_cpu(pid: int, quiet_s: float = 0.1, limit_s: float = 5.0) -> float:
    """The CPU time of process ``pid`` once it stops rising (at most ``limit_s`` later):
    what a load left queued on the server counts in the load, above all the records of
    its last games, written on the server's writer thread after the last client is done
    (with 100 matches at once, most of a run's games end in its last moments)."""
    deadline = time.monotonic() + limit_s
    last = cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now = cpu_seconds(pid)
        if now == last:  # not one clock tick (10 ms) of work in ``quiet_s``
            break
        last = now
    return last


def run_load(
    port: int,
    pid: int,
    *,
    mode: str,
    concurrency: int,
    total: int,
    target: int,
    think_ms: float,
    processes: int,
    seed: int = 0,
) -> LoadFigures:
    """Play ``total`` matches, ``concurrency`` at a time, against the server ``pid``
    listening on ``port``; the figures as a dict."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    processes = max(1, min(processes, concurrency))
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=ctx) as pool:
        # the client processes start (imports) before the clock does
        list(pool.map(share, [1] * processes, [1] * processes, [0] * processes))
        cpu0, rss0, t0 = cpu_seconds(pid), rss_kib(pid), time.perf_counter()
        jobs = [
            pool.submit(
                _client,
                (
                    port,
                    mode,
                    share(concurrency, processes, i),
                    share(total, processes, i),
                    target,
                    seed + i * total,
                    think_ms / 1000,
                ),
            )
            for i in range(processes)
        ]
        tallies = [job.result() for job in jobs]
        wall = time.perf_counter() - t0
        cpu = settled_cpu(pid) - cpu0
        rss1 = rss_kib(pid)
    latencies = [x for t in tallies for x in t.latencies_ms]
    decisions = sum(t.decisions for t in tallies)
    frames = sum(t.frames for t in tallies)
    frame_bytes = sum(t.frame_bytes for t in tallies)
    client_cpu = sum(t.cpu_s for t in tallies)
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    return {
        "mode": mode,
        "concurrency": concurrency,
        "matches": sum(t.matches for t in tallies),
        "failed": sum(t.failed for t in tallies),
        "stream_errors": {
            name: sum(t.errors.get(name, 0) for t in tallies)
            for name in sorted({n for t in tallies for n in t.errors})
        },
        "target": target,
        "think_ms": think_ms,
        "client_processes": processes,
        "decisions": decisions,
        "wall_s": round(wall, 2),
        "decisions_per_s": round(decisions / wall, 1) if wall else None,
        "server_cpu_s": round(cpu, 3),
        "server_cpu_ms_per_decision": round(cpu * 1000 / decisions, 4) if decisions else None,
        "server_cores_busy": round(cpu / wall, 2) if wall else None,
        "client_cpu_ms_per_decision": (
            round(client_cpu * 1000 / decisions, 4) if decisions else None
        ),
        "client_cores_busy": round(client_cpu / wall, 2) if wall else None,
        "frames_per_decision": round(frames / decisions, 2) if decisions else None,
        "bytes_per_frame": round(frame_bytes / frames, 1) if frames else None,
        "bytes_per_decision": round(frame_bytes / decisions, 1) if decisions else None,
        "latency_ms": {
            "p50": None if p50 is None else round(p50, 3),
            "p99": None if p99 is None else round(p99, 3),
            "max": round(max(latencies), 3) if latencies else None,
        },
        "server_rss_mib": {"start": round(rss0 / 1024, 1), "end": round(rss1 / 1024, 1)},
    }
