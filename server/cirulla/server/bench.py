"""``cirulla bench server``: how fast and how fair the server is on loopback.

Three numbers matter to bots and the tournament runner: the round trip of one decision on
one stream, the overhead of playing a whole game over gRPC instead of in process, and
whether many concurrent matches all make progress (none starves).

The headline round trip is measured as a player sees it: the server runs as its own
``cirulla server`` process and the seats play from this one, so the client's work does
not share the server's event loop. The old in-process figure (server and seats on one
loop) is kept beside it for comparison.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import grpc

from cirulla.rules import Game, Options
from cirulla.server.app import start_server
from cirulla.server.client import Outbox, hello, submit_index
from cirulla.server.documents import GameRecord
from cirulla.server.echo import run_echo
from cirulla.server.load import LoadFigures, Stub, run_load
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, rules_pb2


def _settings(target: int, seed: int, best_of: int = 1) -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=target)),
        seed=seed,
        best_of=best_of,
    )


class _Timing:
    """Samples of one benchmark run, shared by the seats of a match (one clock)."""

    def __init__(self) -> None:
        self.rtts: list[float] = []  # seat 0: its submit -> its action_accepted
        self.turnarounds: list[float] = []  # any submit -> the next decision_request
        self.last_submit = 0.0


async def _seat(
    stub: Stub, match_id: str, token: str, rng: random.Random, timing: _Timing | None, seat: int
) -> int:
    """Play a seat with random choices, timing round trips into ``timing``."""
    out = Outbox()
    out.send(hello(match_id, token, "bench"))
    decisions = 0
    sent = 0.0
    async for msg in stub.Play(out):
        kind = msg.WhichOneof("body")
        if kind == "decision_request":
            now = time.perf_counter()
            if timing is not None and timing.last_submit:
                timing.turnarounds.append((now - timing.last_submit) * 1000)
            req = msg.decision_request
            sent = time.perf_counter()
            if timing is not None:
                timing.last_submit = sent
            out.send(submit_index(req.decision_id, rng.randrange(len(req.legal_actions))))
            decisions += 1
        elif kind == "action_accepted" and timing is not None and seat == 0:
            timing.rtts.append((time.perf_counter() - sent) * 1000)
        elif kind == "goodbye":
            break
    out.send(None)
    return decisions


async def _match(
    stub: Stub,
    settings: match_settings_pb2.MatchSettings,
    seed: int,
    timing: _Timing | None = None,
) -> int:
    m = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
    if timing is not None:
        timing.last_submit = 0.0  # a new match: no submit awaits its successor
    counts = await asyncio.gather(
        *[
            _seat(stub, m.match.match_id, t.token, random.Random(seed * 10 + i), timing, i)
            for i, t in enumerate(m.seat_tokens)
        ]
    )
    return sum(counts)


def _in_process_replay(record: GameRecord) -> tuple[float, int]:
    """The same game (decks and actions of the record) through the rules core only."""
    start = time.perf_counter()
    game = Game(
        Options(**record["options"]), decks=record["decks"], first_dealer=record["first_dealer"]
    )
    for act in record["actions"]:
        game.legal_codes()  # the server computes the legal actions for every decision
        game.apply(act["code"], act["seat"])
    return time.perf_counter() - start, len(record["actions"])


#: The flags of a server under a benchmark's load: one client address creates every match,
#: so no creation rate applies to it (a deployed server's default, 20 a second, would
#: refuse a fast load's matches); a match a seat never joined (its streams all failed)
#: ends in a minute.
LOAD_SERVER_ARGS = (
    "--create-rate",
    "1000000",
    "--create-burst",
    "1000000",
    "--waiting-timeout",
    "60",
)


@contextlib.contextmanager
def server_process(
    workdir: Path,
    env: dict[str, str] | None = None,
    startup_s: float = 20.0,
    procs: list[subprocess.Popen[bytes]] | None = None,
    python: str = sys.executable,
    args: tuple[str, ...] = (),
) -> Iterator[int]:
    """A ``cirulla server`` child on an ephemeral loopback port; yields the port (and
    appends the process to ``procs`` for a caller that watches it).

    The server keeps its real settings (INFO logs, a SQLite file in ``workdir``) so the
    figure includes what a deployed server does per decision. ``python``: the
    interpreter that runs it (another installation's: a baseline in the same run);
    ``args``: more of its flags.
    """
    port_file = workdir / "port"
    log_path = workdir / "server.log"
    cmd = [python, "-m", "cirulla", "server", "--listen", "127.0.0.1:0"]
    cmd += ["--port-file", str(port_file), "--db", str(workdir / "bench.sqlite3")]
    cmd += ["--parent-pid", str(os.getpid())]  # an interrupted benchmark leaves no server
    cmd += args
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(cmd, stdout=log_file, stderr=log_file, env=env)
    if procs is not None:
        procs.append(proc)
    try:
        deadline = time.monotonic() + startup_s
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"cirulla server did not start (exit {proc.poll()}): "
                    + log_path.read_text()[-2000:]
                )
            time.sleep(0.02)
        yield int(port_file.read_text())
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _median_p99(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)
    return {
        "median_ms": round(statistics.median(samples), 3),
        "p99_ms": round(samples[max(0, int(len(samples) * 0.99) - 1)], 3),
    }


async def round_trips(port: int, decisions: int) -> dict[str, object]:
    """Play 2-player matches to target 51 until ``decisions`` submit -> accepted samples.

    ``next_decision`` is the time from any submit to the next decision request: the whole
    move (check, apply, events, next view and legal actions) plus both network legs.
    """
    timing = _Timing()
    seed = 0
    total = 0
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = match_service_pb2_grpc.MatchServiceStub(ch)
        start = time.perf_counter()
        while len(timing.rtts) < decisions:
            seed += 1
            total += await _match(stub, _settings(51, seed), seed, timing)
        elapsed = time.perf_counter() - start
    return {
        "samples": len(timing.rtts),
        **_median_p99(timing.rtts),
        "next_decision": _median_p99(timing.turnarounds),
        "decisions_per_s_one_match": round(total / elapsed, 1),
    }


@dataclass(frozen=True)
class LoadPlan:
    """The load of ``cirulla bench server`` (its flags)."""

    matches: int = 100  # at once
    total: int = 100  # played per mode
    target: int = 51
    think_ms: float = 20.0  # the paced run's thinking time per decision
    processes: int = 2  # client processes
    baseline_python: str | None = None
    rounds: int = 1  # load runs per server, alternated with the baseline's


#: The targets of the server's cost (issue "fast where users touch it").
TARGET_CPU_MS_PER_DECISION = 0.2
TARGET_P99_MS = 20.0


class LoadRuns(TypedDict):
    """The load against one server process (``_load_runs``)."""

    kit: LoadFigures
    plain: LoadFigures
    kit_paced: LoadFigures


def _load_runs(plan: LoadPlan, python: str, tmp: Path) -> LoadRuns:
    """The load against one server process run by ``python``: the kit's flags and a
    plain client at full speed (the CPU per decision), the kit's paced (the latency)."""
    procs: list[subprocess.Popen[bytes]] = []
    with server_process(tmp, procs=procs, python=python, args=LOAD_SERVER_ARGS) as port:
        pid = procs[0].pid
        common = {
            "concurrency": plan.matches,
            "total": plan.total,
            "target": plan.target,
            "processes": plan.processes,
        }
        kit = run_load(port, pid, mode="kit", think_ms=0, **common)
        plain = run_load(port, pid, mode="plain", think_ms=0, seed=10**6, **common)
        paced = run_load(port, pid, mode="kit", think_ms=plan.think_ms, seed=2 * 10**6, **common)
    return {"kit": kit, "plain": plain, "kit_paced": paced}


def run_bench(decisions: int = 2000, plan: LoadPlan | None = None) -> dict[str, object]:
    """Every figure of ``cirulla bench server`` with its baseline from the same run (a
    JSON document: printed)."""
    plan = plan or LoadPlan()
    machine: dict[str, float | None] = {
        "cpus": os.cpu_count(),
        "load_average_start": os.getloadavg()[0],
    }
    result: dict[str, object] = {
        "benchmark": "server",
        "machine": machine,
        "load": {
            "matches_at_once": plan.matches,
            "matches_per_run": plan.total,
            "target": plan.target,
            "client_processes": plan.processes,
            "paced_think_ms": plan.think_ms,
            "what": "2-player matches, random legal choices; the server is a cirulla server "
            "process (SQLite file, INFO logs); CPU per decision = its CPU time / decisions "
            "answered; latency = a seat's answer to the match's next decision request",
        },
    }
    with tempfile.TemporaryDirectory(prefix="cirulla-bench-") as tmp:
        runs = _alternated(plan, Path(tmp))
        server = runs["server"][0]
        result["server"] = server
        if plan.baseline_python:
            result["baseline_server"] = {"python": plan.baseline_python, **runs["baseline"][0]}
        if plan.rounds > 1:
            result["rounds"] = runs
            result["medians"] = {side: _medians(each) for side, each in runs.items() if each}
        kit = server["kit"]
        reply = int(kit["bytes_per_decision"] or 500)
        wire = result["wire_baseline"] = run_echo(
            streams=plan.matches,
            round_trips=max(1, kit["decisions"] // max(plan.matches, 1)),
            request_bytes=len(submit_index(1 << 20, 3).SerializeToString()),
            reply_bytes=reply,
            processes=plan.processes,
        )
        (Path(tmp) / "round-trip").mkdir()  # a fresh folder: no port file of before
        with server_process(Path(tmp) / "round-trip") as port:
            result["round_trip"] = {
                "server": "separate process (cirulla server), client in this process",
                **asyncio.run(round_trips(port, decisions)),
            }
    result.update(asyncio.run(_in_process()))
    cpu = kit["server_cpu_ms_per_decision"]
    p99 = server["kit_paced"]["latency_ms"]["p99"]
    if plan.rounds > 1:  # the targets read the rounds' medians
        medians = _medians(runs["server"])
        cpu, p99 = medians["kit_cpu_ms_per_decision"], medians["kit_paced_p99_ms"]
    wire_cpu = wire["server_cpu_ms_per_round_trip"]
    result["targets"] = {
        "server_cpu_ms_per_decision": {
            "value": cpu,
            "target": TARGET_CPU_MS_PER_DECISION,
            "met": cpu is not None and cpu <= TARGET_CPU_MS_PER_DECISION,
            "times_the_wire": round(cpu / wire_cpu, 2) if cpu and wire_cpu else None,
        },
        "p99_decision_latency_ms": {
            "value": p99,
            "target": TARGET_P99_MS,
            "met": p99 is not None and p99 <= TARGET_P99_MS,
            "wire_p99_ms": wire["latency_ms"]["p99"],
        },
    }
    machine["load_average_end"] = os.getloadavg()[0]
    return result


def _alternated(plan: LoadPlan, tmp: Path) -> dict[str, list[LoadRuns]]:
    """``plan.rounds`` load runs against the server of this installation and as many
    against the baseline's, alternated A B B A A B ... so that a machine whose speed drifts
    (a shared host) weighs on both alike: one run of each is not an A/B on such a machine,
    the medians of several alternated ones are."""
    runs: dict[str, list[LoadRuns]] = {"server": [], "baseline": []}
    sides = [("server", sys.executable)]
    if plan.baseline_python:
        sides.append(("baseline", plan.baseline_python))
    for number in range(plan.rounds):
        order = sides if number % 2 == 0 else sides[::-1]
        for side, python in order:
            folder = tmp / f"{side}-{number}"
            folder.mkdir()
            runs[side].append(_load_runs(plan, python, folder))
    return runs


def _medians(runs: list[LoadRuns]) -> dict[str, float | None]:
    """The figures the targets read, each the median over the rounds."""

    def median(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return round(statistics.median(known), 4) if known else None

    return {
        "kit_cpu_ms_per_decision": median([r["kit"]["server_cpu_ms_per_decision"] for r in runs]),
        "plain_cpu_ms_per_decision": median(
            [r["plain"]["server_cpu_ms_per_decision"] for r in runs]
        ),
        "kit_paced_cpu_ms_per_decision": median(
            [r["kit_paced"]["server_cpu_ms_per_decision"] for r in runs]
        ),
        "kit_paced_p50_ms": median([r["kit_paced"]["latency_ms"]["p50"] for r in runs]),
        "kit_paced_p99_ms": median([r["kit_paced"]["latency_ms"]["p99"] for r in runs]),
    }


async def _in_process() -> dict[str, object]:
    """A whole game over gRPC (server on this event loop) vs the same game in process."""
    srv = await start_server("127.0.0.1:0", ":memory:")
    result: dict[str, object] = {}
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.port}") as ch:
            stub = match_service_pb2_grpc.MatchServiceStub(ch)
            start = time.perf_counter()
            m = await stub.CreateMatch(ms.CreateMatchRequest(settings=_settings(51, 4242)))
            grpc_decisions = sum(
                await asyncio.gather(
                    *[
                        _seat(stub, m.match.match_id, t.token, random.Random(i), None, i)
                        for i, t in enumerate(m.seat_tokens)
                    ]
                )
            )
            grpc_s = time.perf_counter() - start
            await srv.hub.records_written()  # written on the hub's writer thread
            record = srv.hub.store.get_record(f"{m.match.match_id}-g1")
            assert record is not None
            local_s, local_decisions = _in_process_replay(record)
            result["game"] = {
                "grpc_s": round(grpc_s, 4),
                "grpc_decisions": grpc_decisions,
                "in_process_s": round(local_s, 4),
                "in_process_decisions": local_decisions,
                "ratio": round(grpc_s / local_s, 1),
            }
    finally:
        await srv.stop()
    return result
