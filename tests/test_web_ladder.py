"""The web view's ladder page in a real headless Chromium: standings from the ladder's
store and each bot's rating over time as a chart."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path

from sqlalchemy import insert, update

from cirulla.clients.ladder.db import open_database
from cirulla.clients.ladder.schema import rating_history, ratings
from cirulla.clients.ladder.store import LadderStore
from cirulla.server.web.app import start_web

from .server_harness import serving
from .test_web import CHROMIUM, CHROMIUM_ARGS


def make_ladder(db: Path) -> None:
    """Two rated bots with a few rating points each, written as the store keeps them."""
    engine = open_database(str(db))
    store = LadderStore(engine)
    store.add_bot("alpha", "greedy", ("2p",))
    store.add_bot("beta", "random", ("2p",))
    curves = {"alpha": [25.0, 26.5, 28.0, 29.2], "beta": [25.0, 23.4, 22.1, 21.0]}
    vids = {name: store.get_bot(name)["version_id"] for name in curves}
    with engine.begin() as conn:
        for name, mus in curves.items():
            vid = vids[name]
            for n, mu in enumerate(mus):
                conn.execute(
                    insert(rating_history).values(
                        version_id=vid,
                        queue="2p",
                        match_id=f"m-{n}",
                        mu=mu,
                        sigma=5.0,
                        at=1000.0 + n,
                    )
                )
            conn.execute(
                update(ratings)
                .where(ratings.c.version_id == vid, ratings.c.queue == "2p")
                .values(mu=mus[-1], sigma=5.0, games=len(mus), wins=3 if name == "alpha" else 1)
            )
    engine.dispose()


def test_ladder_standings_and_rating_chart(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    db = tmp_path / "ladder.sqlite3"
    make_ladder(db)

    async def main() -> None:
        async with serving(":memory:") as (_stub, srv, _ch):
            web = await start_web("127.0.0.1:0", f"127.0.0.1:{srv.port}", str(db))
            base = f"http://127.0.0.1:{web.port}"
            try:
                raw = await asyncio.to_thread(
                    lambda: urllib.request.urlopen(base + "/api/ladder?queue=2p").read()
                )
                doc = json.loads(raw)
                assert [r["bot"] for r in doc["standings"]] == ["alpha", "beta"]
                assert [len(r["history"]) for r in doc["standings"]] == [4, 4]
                async with async_playwright() as pw:
                    browser = await pw.chromium.launch(
                        executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
                    )
                    page = await browser.new_page()
                    await page.goto(base + "/ladder")
                    await page.wait_for_selector("polyline.series")
                    rows = await page.eval_on_selector_all(
                        "tr.bot", "els => els.map(e => e.textContent)"
                    )
                    assert rows[0].startswith("1alpha") and rows[1].startswith("2beta")
                    lines = await page.eval_on_selector_all(
                        "polyline.series",
                        "els => els.map(e => [e.dataset.bot, e.getAttribute('points')])",
                    )
                    assert {bot: len(pts.split()) for bot, pts in lines} == {"alpha": 4, "beta": 4}
                    # alpha climbs: its last point is higher on the chart (smaller y)
                    alpha = dict(lines)["alpha"].split()
                    assert float(alpha[-1].split(",")[1]) < float(alpha[0].split(",")[1])
                    await page.goto(base + "/")
                    await page.wait_for_selector("#ladderlink:not([hidden])")
                    await browser.close()
            finally:
                await web.stop()

    asyncio.run(main())
