"""``cirulla play`` and ``cirulla watch`` driven through Textual's pilot, against a real
match server process and real bot processes: whole games, played with the keyboard."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from cirulla.clients.matches.supervise import LIVE
from cirulla.clients.play.app import PlayApp, WatchApp
from cirulla.clients.play.launch import LocalGame
from cirulla.v1 import match_service_pb2, match_service_pb2_grpc

GAME_SECONDS = 240


def fetch_record(address: str, match_id: str) -> str:
    with grpc.insecure_channel(address) as channel:
        stub = match_service_pb2_grpc.MatchServiceStub(channel)
        listed = stub.ListRecords(match_service_pb2.ListRecordsRequest(match_id=match_id))
        record = stub.GetRecord(
            match_service_pb2.GetRecordRequest(record_id=listed.records[0].record_id)
        ).record
    from cirulla.server import records

    return records.dumps(records.record_dict(record))


@pytest.mark.slow
def test_play_a_whole_game_against_random_with_the_keyboard(tmp_path: Path) -> None:
    screens: list[str] = []
    previews: list[str] = []
    moves = 0

    async def main() -> None:
        nonlocal moves
        app = PlayApp(game.address, game.match_id, game.token, "tester")
        async with app.run_test(size=(150, 50)) as pilot:
            deadline = time.monotonic() + GAME_SECONDS
            while app.table.match_result is None:
                assert time.monotonic() < deadline, app.screen_text()
                assert not app.error_text, app.error_text
                if app.step == 1:
                    screens.append(app.screen_text())
                    ways = len(app.cards[0].actions)
                    await pilot.press("1")  # the first card, by its number
                    await pilot.pause()
                    if ways == 1:  # one way to play it: played with that key
                        moves += 1
                    else:  # which capture, then Enter
                        assert app.step == 2
                elif app.step == 2:
                    previews.append(app.texts["prompt"])
                    await pilot.press("enter")  # confirm the highlighted capture
                    moves += 1
                await pilot.pause(0.02)
            await pilot.pause(0.3)
            screens.append(app.screen_text())
            await pilot.press("q")

    # A deterministic game (seed 0: the first card and the highlighted capture each time,
    # against random) of one deal, 18 keyboard moves, two of them with a capture to pick;
    # the deal ends and the game after several deals are test_board.py's (seed 4 had
    # two deals here: twice the redraws, nothing more checked)
    with LocalGame(["random"], overrides={"target": 11}, seed=0, workdir=tmp_path) as game:
        asyncio.run(main())
        record = fetch_record(game.address, game.match_id)
    assert not LIVE._children
    assert moves >= 10
    first = screens[0]
    assert "Your hand:" in first and "Table:" in first and "your turn" in first
    assert "7H" in first  # the wild card's line: "7H is counted as" / "has no named value"
    assert "seat 1 random" in first and "seat 0 tester (you)" in first
    assert previews and all("takes" in p and "Enter confirms" in p for p in previews)
    assert len(previews) < moves  # most cards have one way to play: no second key
    final = screens[-1]
    assert "Game over" in final and "Match over" in final
    assert "Deal 1 score" in final or "score" in final
    assert "cards " in final and "settebello " in final and "primiera " in final
    # the game the screen played is the one the server recorded, and it replays
    doc = json.loads(record)
    mine = [a for d in doc["deals"] for a in d["actions"] if a["seat"] == 0]
    assert len(mine) == moves and not any(a["by_timeout"] for a in mine)
    path = tmp_path / "game.json"
    path.write_text(record)
    checked = subprocess.run(
        [sys.executable, "-m", "cirulla", "replay", str(path)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout


def test_watch_follows_a_bot_game_with_public_information_only(tmp_path: Path) -> None:
    async def main() -> str:
        app = WatchApp(game.address, game.match_id)
        async with app.run_test(size=(150, 50)) as pilot:
            deadline = time.monotonic() + GAME_SECONDS
            while app.table.match_result is None:
                assert time.monotonic() < deadline, app.screen_text()
                assert app.table.hand == [] and app.table.decision is None
                await pilot.pause(0.05)
            await pilot.pause(0.2)
            text = app.screen_text()
            await pilot.press("q")
            return text

    with LocalGame(
        ["random", "greedy"], overrides={"target": 11}, seat=None, workdir=tmp_path
    ) as game:
        text = asyncio.run(main())
    assert "plays" in text and "Game over" in text and "Match over" in text
    assert "Your hand" not in text
    assert "seat 0 random" in text and "seat 1 greedy" in text
