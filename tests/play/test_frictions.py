"""The small frictions of ``cirulla play`` and ``cirulla watch`` (issue 25, item 8):
fatal errors of ``watch`` on stderr with a non-zero exit, one keypress for a card with
one way to play, log lines wrapped to the panel, ``q`` asking while the game is on.
Real match server and bot processes; the screens through Textual's pilot, the
command's errors as a subprocess."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from cirulla.clients.play.app import PlayApp, WatchApp
from cirulla.clients.play.launch import LocalGame
from cirulla.clients.play.widgets import ConfirmQuit, EventLog

GAME_SECONDS = 240


def watch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cirulla", "watch", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens there once the socket closes


def test_watch_errors_are_one_line_on_stderr_and_a_failing_exit(tmp_path: Path) -> None:
    with LocalGame(["random"], seat=None, workdir=tmp_path) as game:
        wrong = watch("m-1-nothere", "--server", game.address)
    assert wrong.returncode == 1, (wrong.returncode, wrong.stderr)
    lines = wrong.stderr.strip().splitlines()
    assert len(lines) == 1, wrong.stderr
    assert lines[0].startswith("cirulla watch: ") and "m-1-nothere" in lines[0], lines
    assert "Traceback" not in wrong.stderr and "\x1b[" not in wrong.stdout  # no screen

    address = f"127.0.0.1:{closed_port()}"
    closed = watch("m-1-3fa2b1", "--server", address)
    assert closed.returncode == 1, (closed.returncode, closed.stderr)
    lines = closed.stderr.strip().splitlines()
    assert len(lines) == 1, closed.stderr
    assert lines[0].startswith(f"cirulla watch: no match server answers at {address}"), lines
    assert "\x1b[" not in closed.stdout

    # cirulla play taking a seat on a server checks the same way
    argv = [sys.executable, "-m", "cirulla", "play", "--server", address]
    joining = subprocess.run(
        [*argv, "--match", "m-1-3fa2b1", "--token=x"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert joining.returncode == 1, (joining.returncode, joining.stderr)
    assert joining.stderr.startswith("cirulla play: no match server answers at"), joining.stderr
    assert len(joining.stderr.strip().splitlines()) == 1, joining.stderr


def test_one_keypress_plays_a_card_with_one_way_and_q_asks_first(tmp_path: Path) -> None:
    played: list[str] = []

    async def main() -> None:
        app = PlayApp(game.address, game.match_id, game.token, "tester")
        async with app.run_test(size=(150, 50)) as pilot:
            deadline = time.monotonic() + GAME_SECONDS
            while len(played) < 4:
                assert time.monotonic() < deadline, app.screen_text()
                assert not app.error_text and app.table.match_result is None
                if app.step == 1:
                    one_way = [i for i, c in enumerate(app.cards) if len(c.actions) == 1]
                    if not one_way:  # every card captures in several ways: pick one
                        await pilot.press("1", "enter")
                        continue
                    choice = app.cards[one_way[0]]
                    asked = app.table.decision
                    assert asked is not None
                    await pilot.press(str(one_way[0] + 1))  # one keypress
                    await pilot.pause()
                    assert app.step != 2, app.texts["prompt"]  # no second confirmation
                    now = app.table.decision  # answered (or already the next one)
                    assert now is None or now.decision_id != asked.decision_id
                    played.append(choice.actions[0].action.card.code)
                await pilot.pause(0.02)
            # each of those cards was played, as the server's event log tells
            deadline = time.monotonic() + 30
            while not all(
                re.search(rf"seat 0 tester \(you\) plays {code}\b", app.screen_text())
                for code in played
            ):
                assert time.monotonic() < deadline, (played, app.screen_text())
                await pilot.pause(0.05)

            # q while the game is on asks; n goes back to the game
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmQuit) and app.is_running
            await pilot.press("n")
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmQuit) and app.is_running
            # ... and the game goes on: the next card is played with a key again
            while app.step != 1:
                assert time.monotonic() < deadline and app.table.match_result is None
                await pilot.pause(0.02)
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmQuit)
            await pilot.press("y")
            await pilot.pause(0.2)
            assert not app.is_running

    with LocalGame(["greedy"], overrides={"target": 21}, seed=11, workdir=tmp_path) as game:
        asyncio.run(main())


def test_log_lines_wrap_to_the_panel_and_rewrap_on_resize(tmp_path: Path) -> None:
    async def main() -> None:
        app = WatchApp(game.address, game.match_id)
        async with app.run_test(size=(100, 40)) as pilot:
            deadline = time.monotonic() + GAME_SECONDS
            while app.table.match_result is None:
                assert time.monotonic() < deadline, app.screen_text()
                await pilot.pause(0.05)
            await pilot.pause(0.3)
            for width in (100, 70):
                await pilot.resize_terminal(width, 40)
                await pilot.pause(0.3)
                log = app.query_one("#log", EventLog)
                panel = log.scrollable_content_region.width
                assert 10 < panel < 78, panel  # narrower than a RichLog's default
                strips = log.lines
                widest = max(s.cell_length for s in strips)
                assert widest <= panel, (width, widest, panel)
                shown = " ".join(" ".join(s.text.split()) for s in strips)
                # every word of every line is there: wrapped, none cut
                for line in ("Match over", "Game over"):
                    assert line in shown, shown
                long = [t.plain for t in log.texts if len(t.plain) > panel]
                assert long, "no line longer than the panel: nothing was tested"
                for text in long:
                    assert " ".join(text.split()) in shown, (text, shown)
            await pilot.press("q")

    with LocalGame(
        ["random", "greedy"], overrides={"target": 11}, seat=None, workdir=tmp_path
    ) as game:
        asyncio.run(main())


def test_play_and_watch_without_a_terminal_are_one_line_not_a_screen(tmp_path: Path) -> None:
    """With standard input or output redirected, the screen cannot open: one line saying
    so, exit 2, and no screen written to the pipe (it drew there and waited for keys
    that never came, until killed); a local game starts no server or bot for it."""
    started = time.monotonic()
    local = subprocess.run(
        [sys.executable, "-m", "cirulla", "play", "--vs", "random"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        cwd=tmp_path,
    )
    assert local.returncode == 2, (local.returncode, local.stderr)
    assert local.stderr == (
        "cirulla play: needs a terminal, and standard input and output are not one "
        "(run it in a terminal window)\n"
    )
    assert local.stdout == "" and list(tmp_path.iterdir()) == []
    assert time.monotonic() - started < 30

    with LocalGame(["random"], seat=None, workdir=tmp_path / "game") as game:
        watching = subprocess.run(
            [sys.executable, "-m", "cirulla", "watch", game.match_id, "--server", game.address],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    assert watching.returncode == 2, (watching.returncode, watching.stderr)
    assert watching.stderr.startswith("cirulla watch: needs a terminal"), watching.stderr
    assert len(watching.stderr.splitlines()) == 1 and "\x1b[" not in watching.stdout
