"""The web view in a real headless Chromium: match list, live view over Server-Sent
Events, replay viewer; and no card a spectator may not see in any page or SSE payload.

A real gRPC server and the web server run on one event loop (as ``cirulla server
--http`` runs them); the seats are real Play streams on that server.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from typing import Any

from cirulla.server.client import Outbox, hello, submit_index
from cirulla.server.web.app import start_web
from cirulla.v1 import match_service_pb2 as ms
from tests.server.test_play import play_match, settings
from tests.server_harness import serving

CHROMIUM = os.environ.get("CIRULLA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CODE = re.compile(r'"code":\s*"([0-9AJQK][DHCS])"')
#: a card the server drew into a payload's table_html (quotes escaped in the JSON)
DRAWN = re.compile(r'data-card=\\"([0-9AJQK][DHCS])\\"')


class GatedSeat:
    """A Play stream that answers each decision with its first legal action, but only
    while ``gate`` is open; it knows its own hand at every moment (for the hiding test)."""

    def __init__(self, stub: Any, match_id: str, token: str, seat: int, gate: asyncio.Event):
        self.stub, self.match_id, self.token, self.seat, self.gate = (
            stub,
            match_id,
            token,
            seat,
            gate,
        )
        self.hand: set[str] = set()
        self.pending = False

    async def run(self) -> None:
        out = Outbox()
        out.send(hello(self.match_id, self.token, f"bot{self.seat}"))
        async for msg in self.stub.Play(out):
            kind = msg.WhichOneof("body")
            if kind == "decision_request":
                req = msg.decision_request
                self.hand = {c.code for c in req.view.hand}
                self.pending = True
                await self.gate.wait()
                await asyncio.sleep(0.03)
                self.pending = False
                out.send(submit_index(req.decision_id, 0))
            elif kind == "event":
                e = msg.event
                if e.WhichOneof("body") == "hand_dealt" and e.hand_dealt.seat == self.seat:
                    self.hand = {c.code for c in e.hand_dealt.cards}
                elif e.WhichOneof("body") == "card_played" and e.card_played.seat == self.seat:
                    self.hand.discard(e.card_played.card.code)
            elif kind == "goodbye":
                out.send(None)


async def read_sse(port: int, path: str, into: list[str], stop: asyncio.Event) -> None:
    """Collect every ``data:`` payload of an SSE stream until the stream or ``stop`` ends."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    try:
        while not stop.is_set():
            try:
                line = await asyncio.wait_for(reader.readline(), 0.2)
            except TimeoutError:
                continue
            if not line:
                break
            text = line.decode("utf-8", "replace").strip()
            if text.startswith("data: "):
                into.append(text[6:])
    finally:
        writer.close()


def test_web_view_in_a_real_browser() -> None:
    from playwright.async_api import async_playwright

    assert os.path.exists(CHROMIUM), "needs chromium: apt-get install chromium (.ci/setup.d)"

    async def main() -> None:
        async with serving(":memory:") as (stub, srv, _ch):
            web = await start_web("127.0.0.1:0", f"127.0.0.1:{srv.port}")
            base = f"http://127.0.0.1:{web.port}"
            try:
                # a finished game to replay
                done, _ = await play_match(stub, settings(2, target=11, seed=5))
                listed = await stub.ListRecords(ms.ListRecordsRequest(match_id=done.match.match_id))
                record_id = listed.records[0].record_id
                full = (await stub.GetRecord(ms.GetRecordRequest(record_id=record_id))).record
                # a live game, held still while the pages are checked
                live = await stub.CreateMatch(
                    ms.CreateMatchRequest(settings=settings(2, target=11, seed=6))
                )
                live_id = live.match.match_id
                gate = asyncio.Event()
                seats = [GatedSeat(stub, live_id, t.token, t.seat, gate) for t in live.seat_tokens]
                tasks = [asyncio.create_task(s.run()) for s in seats]
                sse: list[str] = []
                stop = asyncio.Event()
                sse_task = asyncio.create_task(
                    read_sse(web.port, f"/api/matches/{live_id}/stream", sse, stop)
                )
                async with async_playwright() as pw:
                    browser = await pw.chromium.launch(
                        executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
                    )
                    page = await browser.new_page()
                    await check_pages(page, base, live_id, done.match.match_id, record_id)
                    await check_live(page, base, live_id, seats, gate, sse)
                    await check_replay(page, base, record_id, full)
                    await browser.close()
                await asyncio.wait_for(asyncio.gather(*tasks), 120)
                stop.set()
                await sse_task
                messages = [json.loads(m) for m in sse]
                assert any("match_result" in m for m in messages)
                for m in messages:
                    assert "hand_dealt" not in json.dumps(m)
                    assert not m.get("view", {}).get("hand")
                    assert "private_to_seat" not in m.get("event", {})
            finally:
                await web.stop()

    asyncio.run(main())


async def check_pages(page: Any, base: str, live_id: str, done_id: str, record_id: str) -> None:
    await page.goto(base + "/")
    await page.wait_for_selector(f'tr[data-match="{done_id}"]')
    row = await page.inner_text(f'tr[data-match="{done_id}"]')
    assert "finished" in row and record_id in row
    assert "watch live" in await page.inner_text(f'tr[data-match="{live_id}"]')


async def visible_cards(page: Any) -> set[str]:
    """The codes of the face-up cards on the page (a face-down back has none)."""
    found = await page.eval_on_selector_all("[data-card]", "els => els.map(e => e.dataset.card)")
    return set(found)


async def check_live(
    page: Any, base: str, live_id: str, seats: list[GatedSeat], gate: asyncio.Event, sse: list[str]
) -> None:
    await page.goto(f"{base}/matches/{live_id}")
    for _ in range(4):  # four stills of the game: the page never shows a card in a hand
        gate.clear()
        for _ in range(1200):  # a seat waits at the gate (up to a minute on a busy machine)
            if any(s.pending for s in seats):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("no seat reached a decision")
        await asyncio.sleep(0.5)  # every event of the still has reached the page
        hidden = set().union(*(s.hand for s in seats))
        assert hidden, "a still with no card in any hand"
        shown = await visible_cards(page)
        assert shown, "the live page shows no card"
        assert not shown & hidden, f"hidden cards on the live page: {shown & hidden}"
        streamed = {c for payload in sse for c in CODE.findall(payload)}
        drawn = {c for payload in sse for c in DRAWN.findall(payload)}
        assert drawn, "no table drawn in the SSE stream"
        assert not drawn & hidden, f"hidden cards drawn in the SSE stream: {drawn & hidden}"
        assert not streamed & hidden, f"hidden cards in the SSE stream: {streamed & hidden}"
        before = int(await page.get_attribute("body", "data-events") or 0)
        gate.set()
        for _ in range(200):  # the live page updates as the game goes on
            await asyncio.sleep(0.05)
            if int(await page.get_attribute("body", "data-events") or 0) > before + 2:
                break
        else:
            raise AssertionError("the live page did not update")
    gate.set()
    await page.wait_for_selector("body[data-over='1']", timeout=120_000)
    assert "match over" in await page.inner_text("#status")
    assert "Deal" in await page.inner_text("#score")


async def check_replay(page: Any, base: str, record_id: str, full: Any) -> None:
    await page.goto(f"{base}/records/{record_id}")
    await page.wait_for_selector("body[data-steps]")
    steps = int(await page.get_attribute("body", "data-steps"))
    assert steps == 1 + sum(len(d.actions) for d in full.deals)
    await page.click("#next")
    await page.click("#next")
    assert await page.get_attribute("body", "data-step") == "2"
    first = full.deals[0].actions[0].notation
    await page.click("#prev")
    assert first in await page.inner_text("#action")
    await page.keyboard.press("End")
    assert await page.get_attribute("body", "data-step") == str(steps - 1)
    result = await page.inner_text("#result")
    totals = "-".join(str(t) for t in full.result.totals)
    assert result.startswith("Result:") and totals in result
    scores = await page.inner_text("#score")
    assert scores.count("Deal ") == len(full.deals)
    assert "settebello" in scores and "primiera" in scores
