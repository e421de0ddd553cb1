"""The referee's seam (issue 22): the ladder brings to ``Referee.play`` what it needs
through a ``GameSeam`` (the deal group size, a hook on match creation, how a kept-alive
seat's process is taken), with no proxy of the referee's stub and no thread-local. On a
real match server with real bot processes."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from cirulla.bots.botspec import BotSpec, parse_bots
from cirulla.bots.cgroups import BotLimits
from cirulla.clients.matches.journal import Settings
from cirulla.clients.matches.referee import GameSeam, Referee
from cirulla.clients.matches.schedule import ScheduledGame
from cirulla.clients.matches.supervise import ServedBot
from cirulla.ladder.runner import LadderBotPool
from cirulla.server.app import start_server


class Stop(RuntimeError):
    pass


def serve_in_thread() -> tuple[str, Any]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    running = asyncio.run_coroutine_threadsafe(start_server("127.0.0.1:0"), loop).result(30)

    def stop() -> None:
        asyncio.run_coroutine_threadsafe(running.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    return f"127.0.0.1:{running.port}", stop


def test_the_seam_creates_hooks_and_acquires(tmp_path: Path) -> None:
    address, stop = serve_in_thread()
    pool = LadderBotPool(tmp_path / "out" / "logs")
    settings = Settings(bots=parse_bots({"a": "random", "b": "greedy"}), rules={"target": 11})
    referee = Referee(settings, address, tmp_path / "out", bot_pool=pool)
    created: list[str] = []
    acquired: list[tuple[str, str]] = []

    def acquire(bot: str, spec: BotSpec, limits: BotLimits | None) -> ServedBot:
        acquired.append((bot, spec.text))
        return pool.acquire(bot, spec=spec, pair_id="lp-1", limits=limits)

    def on_created(response: Any) -> None:
        # before any seat is given to its bot: nobody has joined yet
        assert not any(s.name for s in response.match.seats)
        created.append(response.match.match_id)

    try:
        game = ScheduledGame(0, ("a", "b"), 0, 7, ("a", "b"))
        seam = GameSeam(deal_group_size=2, on_created=on_created, acquire=acquire)
        result = referee.play(game, seam)
        assert result is not None and result.winner is not None
        assert created == [result.match_id]
        assert acquired == [("a", "random"), ("b", "greedy")]  # each seat's own spec
        assert result.seat_outcomes == ("ok", "ok")

        # a hook that raises ends the game there, before any bot is seated
        def refuse(response: Any) -> None:
            raise Stop("taken back")

        pool.group_over("lp-1")  # its processes may play again (the ladder says so)
        before = pool.started("a")
        with pytest.raises(Stop):
            referee.play(
                ScheduledGame(1, ("a", "b"), 0, 8, ("a", "b")), GameSeam(on_created=refuse)
            )
        # the kept-alive processes it had taken went back to the pool, none was started
        assert pool.started("a") == before
    finally:
        referee.close()
        pool.close()
        stop()
