"""The board of ``cirulla play`` and ``cirulla watch`` after each deal's last play and on
the final screen (issue 25, item 1): the position the log describes, every one of the
40 cards accounted for (hands + table + stock + both sides' captures), the right last
taker, no card left in a hand. Driven through Textual's pilot against a real match
server process and real bot processes.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from cirulla.clients.play.app import PlayApp, WatchApp
from cirulla.clients.play.launch import LocalGame
from cirulla.v1 import events_pb2, match_service_pb2

GAME_SECONDS = 240


def cards_on_screen(screen: str) -> dict[str, int]:
    """What the board says: cards on the table, in the stock, taken, held."""
    table = re.search(r"^Table:\s+(.*)$", screen, re.M)
    stock = re.search(r"^Stock:\s+(\d+) cards", screen, re.M)
    assert table and stock, screen
    on_table = 0 if table.group(1).strip() == "(empty)" else len(table.group(1).split())
    return {
        "table": on_table,
        "stock": int(stock.group(1)),
        "taken": sum(int(n) for n in re.findall(r"took (\d+) cards", screen)),
        "held": sum(int(n) for n in re.findall(r": (\d+) in hand", screen)),
    }


class LastTaker:
    """The side that captured last in the current deal, followed from the events."""

    def __init__(self) -> None:
        self.side: int | None = None

    def see(self, e: events_pb2.Event) -> None:
        kind = e.WhichOneof("body")
        if kind == "deal_started":
            self.side = None
        elif kind == "dealer_bonus":
            self.side = e.dealer_bonus.side
        elif kind == "card_played" and e.card_played.captured:
            self.side = e.card_played.side


def check_deal_end(screen: str, last: int | None, players: int) -> None:
    counts = cards_on_screen(screen)
    assert sum(counts.values()) == 40, (counts, screen)
    assert counts["held"] == 0 and counts["stock"] == 0, (counts, screen)
    assert len(re.findall(r": 0 in hand", screen)) == players, screen
    if last is not None:
        assert f"Last to capture: side {last}" in screen, (last, screen)
        assert counts["table"] == 0, screen  # the last take swept it
    assert "your turn" not in screen and "to move:" not in screen, screen
    # the board's game totals are the deal's new ones
    board = [int(n) for n in re.findall(r"\): game (\d+) · scope", screen)]
    scored = [int(n) for n in re.findall(r"\(game (\d+)\)", screen)]
    assert board == scored and board, (board, scored, screen)
    # the deal's score says the same of the cards taken
    in_score = sum(int(n) for n in re.findall(r"(\d+) cards taken", screen))
    assert in_score == counts["taken"], (in_score, counts, screen)


class RecordingPlay(PlayApp):
    """PlayApp that keeps the screen as it stands right after each deal is scored."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.taker = LastTaker()
        self.deal_ends: list[tuple[str, int | None]] = []

    def handle_play(self, msg: match_service_pb2.PlayResponse) -> None:
        super().handle_play(msg)
        if msg.WhichOneof("body") == "event":
            self.taker.see(msg.event)
            if msg.event.WhichOneof("body") == "deal_scored":
                self.deal_ends.append((self.screen_text(), self.taker.side))


class RecordingWatch(WatchApp):
    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.taker = LastTaker()
        self.deal_ends: list[tuple[str, int | None]] = []

    def handle_spectate(self, msg: match_service_pb2.SpectateResponse) -> None:
        super().handle_spectate(msg)
        if msg.WhichOneof("body") == "event":
            self.taker.see(msg.event)
            if msg.event.WhichOneof("body") == "deal_scored":
                self.deal_ends.append((self.screen_text(), self.taker.side))


@pytest.mark.slow
def test_play_shows_each_deal_end_and_the_final_position(tmp_path: Path) -> None:
    final = ""

    async def main() -> RecordingPlay:
        nonlocal final
        app = RecordingPlay(game.address, game.match_id, game.token, "tester")
        async with app.run_test(size=(150, 50)) as pilot:
            deadline = time.monotonic() + GAME_SECONDS
            while app.table.match_result is None:
                assert time.monotonic() < deadline, app.screen_text()
                assert not app.error_text, app.error_text
                if app.step == 1:
                    await pilot.press("1")
                elif app.step == 2:
                    await pilot.press("enter")
                await pilot.pause(0.02)
            await pilot.pause(0.3)
            final = app.screen_text()
            await pilot.press("q")
        return app

    # To 11 points: every move is a keypress the screen redraws for (about a third of a
    # second each), and this deterministic game (seed 7, the first card and capture each
    # time, greedy) has two deals, so a deal end followed by another deal is seen too.
    with LocalGame(["greedy"], overrides={"target": 11}, seed=7, workdir=tmp_path) as game:
        app = asyncio.run(main())
    # every deal end was seen, a middle one and the last one
    assert len(app.deal_ends) == len(re.findall(r"Deal \d+ scored", final)) >= 2
    for screen, last in app.deal_ends:
        check_deal_end(screen, last, players=2)
        assert "Your hand:  (empty)" in screen, screen
    # the final screen: the last deal's final position, not the position before its
    # last play ("1 in hand" beside "Your hand: (empty)")
    check_deal_end(final, app.deal_ends[-1][1], players=2)
    assert "Your hand:  (empty)" in final and "Match over" in final, final


def test_watch_shows_each_deal_end_and_the_final_position(tmp_path: Path) -> None:
    async def main() -> tuple[RecordingWatch, str]:
        app = RecordingWatch(game.address, game.match_id)
        async with app.run_test(size=(150, 50)) as pilot:
            deadline = time.monotonic() + GAME_SECONDS
            while app.table.match_result is None:
                assert time.monotonic() < deadline, app.screen_text()
                await pilot.pause(0.05)
            await pilot.pause(0.2)
            final = app.screen_text()
            await pilot.press("q")
        return app, final

    with LocalGame(
        ["random", "greedy"], overrides={"target": 31}, seat=None, seed=3, workdir=tmp_path
    ) as game:
        app, final = asyncio.run(main())
    assert len(app.deal_ends) == len(re.findall(r"Deal \d+ scored", final)) >= 1
    for screen, last in app.deal_ends:
        check_deal_end(screen, last, players=2)
    check_deal_end(final, app.deal_ends[-1][1], players=2)
    assert "Match over" in final and "Your hand" not in final
