"""The ladder's web view (``cirulla ladder serve --http``) in a real headless Chromium,
against a real ladder playing real bots: standings (also without JavaScript), a bot's
page with its rating chart (points with hover titles on a time axis), a replay drawn as
cards whose timeline jumps to a chosen move, a live view that shows no hand, and the
first game of an unfinished duplicate pair withheld exactly as the LadderService
withholds it (no result, no replay: the match server refuses its record)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest

from cirulla.v1 import ladder_pb2, match_pb2
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1.match_service_pb2_grpc import MatchServiceStub
from tests.ladder_harness import LadderProcess, open_store, settled, wait_for
from tests.server_harness import tied_to_this_process
from tests.web.test_match_pages import CHROMIUM, CHROMIUM_ARGS

SLOW_BOT = """
import time
from cirulla.bots.kit import run_bot

def decide(view, legal, time_left):
    # slow enough that a duplicate pair's second game lasts a while (seconds: a game to 51
    # is several deals of 18 moves a seat), which the checks that catch it poll every 0.02
    # to 0.05 s; at 0.12 s a move each of the three tests waited two or three games of
    # 10 to 20 s (33 and 42 s for the browser and remote tests at -n 1, now 12 and 15 s)
    time.sleep(0.05)
    return 0

run_bot(decide, name="slow")
"""


def slow_bot_and_db(tmp_path: Path) -> tuple[Path, str]:
    """The slow bot's file and the ladder's database, in folders of their own (the
    sandbox never binds a file in the database's folder)."""
    (tmp_path / "bots").mkdir()
    (tmp_path / "db").mkdir()
    bot = tmp_path / "bots" / "slow_bot.py"
    bot.write_text(SLOW_BOT)
    return bot, f"sqlite:///{tmp_path / 'db' / 'ladder.sqlite3'}"


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def data_cards(html: str, element_id: str) -> list[str]:
    """The card codes inside the element with ``element_id`` (no nested element of the
    same tag closes before it ends: the table's cards div holds only cards)."""
    start = html.index(f'id="{element_id}"')
    end = html.index("</div>", start)
    return re.findall(r'data-card="([^"]+)"', html[start:end])


def history(ladder: LadderProcess, name: str) -> Any:
    return ladder.stub().GetBotHistory(
        ladder_pb2.GetBotHistoryRequest(bot_name=name, page_size=1000), timeout=10
    )


def check_withheld(ladder: LadderProcess, base: str) -> str:
    """Catch a duplicate pair between its games; every view of the finished twin says
    withheld and offers no replay, checked while the rpc still withholds it."""
    stub = ladder.stub()
    matches = MatchServiceStub(grpc.insecure_channel(ladder.address))
    state = json.loads((ladder.folder / "cirulla-ladder.json").read_text())
    token = Path(state["admin_token_file"]).read_text().strip()
    admin = (("authorization", f"Bearer {token}"),)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        time.sleep(0.02)
        twins = [m for m in history(ladder, "rnd").matches if m.withheld]
        if not twins:
            continue
        twin = twins[0]
        status, page = get(f"{base}/ladder/matches/{twin.match_id}")
        record_status, record_page = get(f"{base}/records/{twin.server_match_id}-g1")
        _, steps = get(f"{base}/api/records/{twin.server_match_id}-g1/steps")
        _, bot_page = get(f"{base}/ladder/bots/rnd")
        try:
            matches.GetMatch(ms.GetMatchRequest(match_id=twin.server_match_id), timeout=10)
            summary = "shown"
        except grpc.RpcError as exc:
            summary = f"{exc.code().name}: {exc.details()}"
        still = stub.GetLadderMatch(
            ladder_pb2.GetLadderMatchRequest(match_id=twin.match_id), timeout=10
        ).match
        if not still.withheld:
            continue  # its twin ended while we looked: catch the next pair
        # The match server withholds the twin's summary from the public as well (read
        # before ``still``, as the pages); the ladder's admin token reads it.
        played = matches.GetMatch(
            ms.GetMatchRequest(match_id=twin.server_match_id), timeout=10, metadata=admin
        )
        if played.match.status != match_pb2.MATCH_STATUS_FINISHED:
            continue  # a seat never joined: the game was never played, it has no record
        assert status == 200
        assert "withheld" in page and 'class="replay"' not in page
        assert 'id="lresult"><span class="withheld">' in page
        assert "won" not in page.split('id="lresult"')[1].split("</p>")[0]
        assert record_status == 409 and "withheld" in record_page
        assert summary.startswith("FAILED_PRECONDITION: match") and "withheld" in summary
        assert "FAILED_PRECONDITION" in json.loads(steps)["error"]
        row = bot_page.split(f'data-match="{twin.match_id}"')[1].split("</tr>")[0]
        assert "withheld" in row and "won" not in row
        return twin.match_id
    raise AssertionError("never saw the first game of a duplicate pair withheld")


@pytest.mark.slow
def test_ladder_web_view_in_a_real_browser(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    bot, db = slow_bot_and_db(tmp_path)
    # The bots are in the database before the ladder starts, their two validation games
    # (unrated) waived: the chart's points come from the first pair's games, not from
    # the third and fourth (what a new version's validation does is not this test's:
    # tests/ladder/ check it).
    store = open_store(db)
    try:
        store.add_bot("slow", f"cmd:{sys.executable} {bot}")
        store.add_bot("rnd", "random")
        settled(store)
    finally:
        store.engine.dispose()
    ladder = LadderProcess(tmp_path / "ladder", db, "--http", "127.0.0.1:0", "--concurrency", "1")
    ladder.start()
    try:
        state = json.loads((ladder.folder / "cirulla-ladder.json").read_text())
        base = f"http://{state['http']}"
        withheld_id = check_withheld(ladder, base)
        # rated games: the chart has points
        wait_for(lambda: len(history(ladder, "rnd").rating_history) >= 2, 300, "rated games")
        h = history(ladder, "rnd")
        done = [m for m in h.matches if m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED]
        done = [m for m in done if not m.withheld]
        assert done
        # the standings are in the HTML itself (no script needed)
        status, html = get(f"{base}/ladder")
        assert status == 200
        assert '<tr class="bot" data-bot="rnd">' in html
        assert '<tr class="bot" data-bot="slow">' in html

        async def browse() -> None:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(
                    executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
                )
                # without JavaScript: the standings and a bot's chart are there
                nojs = await browser.new_context(java_script_enabled=False)
                page = await nojs.new_page()
                await page.goto(f"{base}/ladder")
                names = await page.eval_on_selector_all(
                    "tr.bot", "els => els.map(e => e.dataset.bot)"
                )
                assert sorted(names) == ["rnd", "slow"]
                await page.goto(f"{base}/ladder/bots/rnd")
                assert await page.locator("circle.point").count() >= 2
                await nojs.close()

                page = await browser.new_page()
                await page.goto(f"{base}/ladder")
                await page.click('tr.bot[data-bot="rnd"] a.botlink')
                await page.wait_for_selector("#botname")
                assert await page.inner_text("#botname") == "rnd"
                assert "v1" in await page.inner_text("#versions")
                # the rating chart: one point per rating-history row, on a time axis,
                # each with a hover title giving its time and values. The ladder goes on
                # rating games meanwhile: compare a page read between two equal histories
                for _ in range(20):
                    before = history(ladder, "rnd")
                    await page.reload()
                    await page.wait_for_selector("#botname")
                    now = history(ladder, "rnd")
                    if len(now.rating_history) == len(before.rating_history):
                        break
                points = page.locator("circle.point")
                assert await points.count() == len(now.rating_history)
                times = [
                    float(t)
                    for t in await page.eval_on_selector_all(
                        "circle.point", "els => els.map(e => e.dataset.at)"
                    )
                ]
                expected = sorted(p.time.seconds + p.time.nanos / 1e9 for p in now.rating_history)
                # the page writes milliseconds: equal to within the half millisecond of its
                # rounding (rounding both sides to hundredths could split them at a .xx5)
                assert sorted(times) == pytest.approx(expected, abs=0.0006)
                xs = await page.eval_on_selector_all(
                    "circle.point", "els => els.map(e => +e.getAttribute('cx'))"
                )
                order = sorted(range(len(times)), key=lambda i: times[i])
                assert [xs[i] for i in order] == sorted(xs)  # later is further right
                assert await page.locator("text.xtick").count() >= 2
                await points.first.hover()
                tip = await page.locator("circle.point >> title").first.text_content()
                assert tip and "UTC" in tip and "\u03bc" in tip and "rating" in tip
                # the withheld twin, once its pair is over, is a plain finished match now
                await page.goto(f"{base}/ladder/matches/{withheld_id}")
                await page.wait_for_selector("#lstatus")
                # a finished match: its page links its replay
                await page.goto(f"{base}/ladder/matches/{done[0].match_id}")
                await page.click("a.replay")
                await page.wait_for_selector("body[data-steps]")
                steps = int(await page.get_attribute("body", "data-steps") or 0)
                assert steps > 10
                record_url = page.url.split("?")[0]
                record_id = record_url.rsplit("/", 1)[1]
                _, raw = get(f"{base}/api/records/{record_id}/steps")
                data = json.loads(raw)
                shown0 = await page.eval_on_selector_all(
                    "#tablecards .card[data-card]", "els => els.map(e => e.dataset.card)"
                )
                assert sorted(shown0) == sorted(data["steps"][0]["table"])
                assert await page.locator(".hand .card[data-card]").count() > 0  # a record
                # jump to a chosen move through the timeline: the cards follow
                opening = data["steps"][0]["table"]
                k = next(i for i in range(5, steps) if data["steps"][i]["table"] != opening)
                await page.click(f'#timeline a[data-step="{k}"]:not(.dealjump)')
                await page.wait_for_selector(f'body[data-step="{k}"]')
                shown = await page.eval_on_selector_all(
                    "#tablecards .card[data-card]", "els => els.map(e => e.dataset.card)"
                )
                assert sorted(shown) == sorted(data["steps"][k]["table"]) != sorted(shown0)
                hands = await page.eval_on_selector_all(
                    ".seat",
                    "els => els.map(e => [...e.querySelectorAll('.card[data-card]')]"
                    ".map(c => c.dataset.card).sort())",
                )
                assert hands == [sorted(h) for h in data["steps"][k]["hands"]]
                assert await page.locator("#timeline a.cur").inner_text() == str(k)
                assert "denari" in await page.inner_text(".felt .legend")
                assert f"move {k} of {steps - 1}" in await page.inner_text("#pos")
                # the same move without JavaScript: the server draws the same cards
                _, at_k = get(f"{record_url}?step={k}")
                assert sorted(data_cards(at_k, "tablecards")) == sorted(shown)
                # a deal's label jumps to its opening table
                deal2 = next((i for i, st in enumerate(data["steps"]) if st["deal"] == 2), None)
                if deal2 is not None:
                    await page.click('#timeline .deal[data-deal="2"] a.dealjump')
                    await page.wait_for_selector(f'body[data-step="{deal2}"]')
                    assert f"move {deal2} of" in await page.inner_text("#pos")
                    assert "deal 2" in await page.inner_text("#pos")
                    await page.click(f'#timeline a[data-step="{k}"]:not(.dealjump)')
                    await page.wait_for_selector(f'body[data-step="{k}"]')
                # the wild 7 and whose turn are on the table
                info = await page.inner_text("#info")
                assert "wild 7" in info and "deal" in info
                await page.keyboard.press("End")
                assert "Result:" in await page.inner_text("#result")
                await browser.close()

        asyncio.run(browse())
        # every ladder match is listed, with its result (page after page: "older matches")
        status, listing = get(f"{base}/ladder/matches")
        assert status == 200
        more = listing
        while 'id="older"' in more:
            older = more.split('id="older" href="')[1].split('"')[0].replace("&amp;", "&")
            more = get(f"{base}{older}")[1]
            listing += more
        for m in history(ladder, "rnd").matches:
            assert f'data-match="{m.match_id}"' in listing
    finally:
        ladder.stop()


@pytest.mark.slow
def test_live_ladder_match_shows_no_hand(tmp_path: Path) -> None:
    """The live view of a running ladder match, first state rendered by the server:
    hands are backs only; its table cards are the spectator's view.

    A game is watchable only while no duplicate twin of it is unfinished (the match
    server withholds it otherwise): a requested single game (``RequestMatch``, one game:
    no twin), claimed before any scheduled pair, is watchable from its first move to its
    last. One match at a time (--concurrency 1): should a scheduled pair be claimed before
    the request arrives, its second game is watchable too. (The test used to wait for a
    pair's first game to end before it could watch the second: twice the time; with the
    twins played side by side both were withheld almost to the end, 1 to 3 minutes.)"""
    bot, db = slow_bot_and_db(tmp_path)
    ladder = LadderProcess(tmp_path / "ladder", db, "--http", "127.0.0.1:0", "--concurrency", "1")
    ladder.start()
    try:
        base = "http://" + json.loads((ladder.folder / "cirulla-ladder.json").read_text())["http"]
        ladder.add("slow", f"cmd:{sys.executable} {bot}")
        ladder.add("slow2", f"cmd:{sys.executable} {bot}")
        ladder.stub().RequestMatch(
            ladder_pb2.RequestMatchRequest(bot_names=["slow", "slow2"], games=1),
            metadata=ladder.admin(),
            timeout=30,
        )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            time.sleep(0.05)
            running = [
                m
                for m in history(ladder, "slow").matches
                if m.status == ladder_pb2.LADDER_MATCH_STATUS_RUNNING and m.server_match_id
            ]
            if not running:
                continue
            status, page = get(f"{base}/matches/{running[0].server_match_id}")
            # (between rounds every hand may be empty: wait for a table with cards in hand)
            if status == 200 and 'class="felt"' in page and 'class="card back"' in page:
                break
        else:
            raise AssertionError("never saw a running ladder match's table")
        hands = re.findall(r'<div class="hand"[^>]*>(.*?)</div>', page)
        assert hands and all("data-card" not in h for h in hands)
        assert any('class="card back"' in h for h in hands)
        assert "wild 7" in page
        # another process's web view shows this ladder too: cirulla server --ladder
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        argv = [sys.executable, "-m", "cirulla", "server", "--listen", "127.0.0.1:0"]
        argv += ["--db", str(tmp_path / "web.sqlite3"), "--http", f"127.0.0.1:{port}"]
        argv += ["--ladder", ladder.address]
        web = subprocess.Popen(tied_to_this_process(argv), stderr=subprocess.DEVNULL)
        try:

            def standings() -> str:
                try:
                    return get(f"http://127.0.0.1:{port}/ladder")[1]
                except OSError:
                    return ""

            html = wait_for(standings, 60, "cirulla server --ladder's standings", every=0.2)
            assert '<tr class="bot" data-bot="slow">' in html
            assert '<tr class="bot" data-bot="slow2">' in html
            assert 'href="/ladder"' in get(f"http://127.0.0.1:{port}/")[1]
        finally:
            web.terminate()
            web.wait(30)
    finally:
        ladder.stop()
