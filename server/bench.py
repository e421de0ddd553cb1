"""``cirulla bench server``: how fast and how fair the server is on loopback.

Three numbers matter to bots and the tournament runner: the round trip of one decision on
one stream, the overhead of playing a whole game over gRPC instead of in process, and
whether many concurrent matches all make progress (none starves).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from typing import Any

import grpc

from cirulla.rules import Game, Options
from cirulla.server.app import start_server
from cirulla.server.client import Outbox, hello, submit_index
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1 import match_service_pb2_grpc, match_settings_pb2, rules_pb2


def _settings(target: int, seed: int, best_of: int = 1) -> match_settings_pb2.MatchSettings:
    return match_settings_pb2.MatchSettings(
        rules=rules_pb2.Rules(overrides=rules_pb2.RuleOptions(players=2, target=target)),
        seed=seed,
        best_of=best_of,
    )


async def _seat(
    stub: Any, match_id: str, token: str, rng: random.Random, rtts: list[float] | None
) -> int:
    """Play a seat with random choices; time submit -> accepted into ``rtts``."""
    out = Outbox()
    out.send(hello(match_id, token, "bench"))
    decisions = 0
    sent = 0.0
    async for msg in stub.Play(out):
        kind = msg.WhichOneof("body")
        if kind == "decision_request":
            req = msg.decision_request
            sent = time.perf_counter()
            out.send(submit_index(req.decision_id, rng.randrange(len(req.legal_actions))))
            decisions += 1
        elif kind == "action_accepted" and rtts is not None:
            rtts.append((time.perf_counter() - sent) * 1000)
        elif kind == "goodbye":
            break
    out.send(None)
    return decisions


async def _match(stub: Any, settings: Any, seed: int, rtts: list[float] | None = None) -> int:
    m = await stub.CreateMatch(ms.CreateMatchRequest(settings=settings))
    counts = await asyncio.gather(
        *[
            _seat(
                stub,
                m.match.match_id,
                t.token,
                random.Random(seed * 10 + i),
                rtts if i == 0 else None,
            )
            for i, t in enumerate(m.seat_tokens)
        ]
    )
    return sum(counts)


def _in_process_replay(record: dict[str, Any]) -> tuple[float, int]:
    """The same game (decks and actions of the record) through the rules core only."""
    start = time.perf_counter()
    game = Game(
        Options(**record["options"]), decks=record["decks"], first_dealer=record["first_dealer"]
    )
    for act in record["actions"]:
        game.legal_codes()  # the server computes the legal actions for every decision
        game.apply(act["code"], act["seat"])
    return time.perf_counter() - start, len(record["actions"])


async def run_bench(decisions: int = 2000, matches: int = 50, target: int = 11) -> dict[str, Any]:
    srv = await start_server("127.0.0.1:0", ":memory:")
    result: dict[str, Any] = {"benchmark": "server"}
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.port}") as ch:
            stub = match_service_pb2_grpc.MatchServiceStub(ch)
            # 1. Round trips on one stream (seat 0's submit -> accepted).
            rtts: list[float] = []
            seed = 0
            start = time.perf_counter()
            total = 0
            while len(rtts) < decisions:
                seed += 1
                total += await _match(stub, _settings(51, seed), seed, rtts)
            elapsed = time.perf_counter() - start
            rtts.sort()
            result["round_trip"] = {
                "samples": len(rtts),
                "median_ms": round(statistics.median(rtts), 3),
                "p99_ms": round(rtts[int(len(rtts) * 0.99) - 1], 3),
                "decisions_per_s_one_match": round(total / elapsed, 1),
            }
            # 2. One complete game over gRPC vs in process.
            start = time.perf_counter()
            m = await stub.CreateMatch(ms.CreateMatchRequest(settings=_settings(51, 4242)))
            grpc_decisions = sum(
                await asyncio.gather(
                    *[
                        _seat(stub, m.match.match_id, t.token, random.Random(i), None)
                        for i, t in enumerate(m.seat_tokens)
                    ]
                )
            )
            grpc_s = time.perf_counter() - start
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

            # 3. Concurrent matches: per-match decision rates.
            async def timed(i: int) -> float:
                t0 = time.perf_counter()
                n = await _match(stub, _settings(target, 1000 + i), 1000 + i)
                return n / (time.perf_counter() - t0)

            start = time.perf_counter()
            rates = await asyncio.gather(*[timed(i) for i in range(matches)])
            wall = time.perf_counter() - start
            result["concurrent"] = {
                "matches": matches,
                "target": target,
                "wall_s": round(wall, 2),
                "per_match_decisions_per_s": {
                    "min": round(min(rates), 1),
                    "median": round(statistics.median(rates), 1),
                    "max": round(max(rates), 1),
                },
                "starved": sum(1 for r in rates if r < 0.1 * statistics.median(rates)),
            }
    finally:
        await srv.stop()
    return result
