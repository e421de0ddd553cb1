"""The ladder's web view shows matches another worker hosts: a real `cirulla ladder
serve --concurrency 0 --http` (it only schedules) and a real `cirulla ladder worker`
with its own match server, on the real PostgreSQL. The ladder's page of a running match
links its live view, drawn from the worker's Spectate stream; a finished match's page
links its replay, whose moves are the worker's record (the ladder's own match server
has never heard of it), stepped through in Chromium; a duplicate twin caught between
its pair's games is refused by the page and by the worker's server itself. Also: the
channels to other servers are few, and under TLS they check the ladder's CA."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest

from cirulla.server.web.ladder.reader import REMOTE_CHANNELS, LadderReader
from cirulla.server.web.steps import replay_steps
from cirulla.v1 import ladder_pb2, match_pb2
from cirulla.v1 import match_service_pb2 as ms
from cirulla.v1.match_service_pb2_grpc import MatchServiceStub
from tests.ladder_harness import LadderProcess, wait_for
from tests.server_harness import tied_to_this_process
from tests.web.test_ladder_pages import data_cards, get, slow_bot_and_db
from tests.web.test_match_pages import CHROMIUM, CHROMIUM_ARGS


def matches_of(ladder: LadderProcess) -> list[Any]:
    got = ladder.stub().ListLadderMatches(
        ladder_pb2.ListLadderMatchesRequest(page_size=1000), timeout=10
    )
    return list(got.matches)


def first_event(url: str) -> dict[str, Any]:
    """The first Server-Sent Event of a stream, as JSON."""
    with urllib.request.urlopen(url, timeout=30) as r:
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("data: "):
                return dict(json.loads(line[len("data: ") :]))
    raise AssertionError(f"no event from {url}")


@pytest.mark.slow
def test_a_match_on_another_workers_server(tmp_path: Path, postgres_url: str) -> None:
    from playwright.async_api import async_playwright

    bot, _ = slow_bot_and_db(tmp_path)
    ladder = LadderProcess(
        tmp_path / "ladder", postgres_url, "--concurrency", "0", "--http", "127.0.0.1:0"
    )
    ladder.start()
    worker_log = (tmp_path / "worker.log").open("w")
    argv = [sys.executable, "-m", "cirulla", "ladder", "worker", "--db", postgres_url]
    argv += ["--listen", "127.0.0.1:0", "--data", str(tmp_path / "worker"), "--concurrency", "1"]
    worker = subprocess.Popen(
        tied_to_this_process(argv),
        stdout=worker_log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: stopped with its bots
    )
    try:
        base = "http://" + json.loads((ladder.folder / "cirulla-ladder.json").read_text())["http"]
        ladder.add("slow", f"cmd:{sys.executable} {bot}")  # by rpc: no command is checked here
        ladder.add("rnd", "random")
        own = MatchServiceStub(grpc.insecure_channel(ladder.address))

        # a running match, hosted by the worker: its live view comes from there
        live_seen = twin_seen = False
        deadline = time.monotonic() + 180
        while not (live_seen and twin_seen) and time.monotonic() < deadline:
            time.sleep(0.05)
            for m in matches_of(ladder):
                if not m.server_match_id:
                    continue
                assert m.server_address and m.server_address != ladder.address
                if not live_seen and m.status == ladder_pb2.LADDER_MATCH_STATUS_RUNNING:
                    live_seen = check_live(base, m, own)
                if not twin_seen and m.withheld:
                    twin_seen = check_twin(base, m, ladder, tmp_path / "worker")
        assert live_seen, "never saw a running match's table on the worker"
        assert twin_seen, "never caught a withheld twin on the worker"

        # a finished match: its replay is the worker's record
        def finished() -> Any:
            done = [
                m
                for m in matches_of(ladder)
                if m.status == ladder_pb2.LADDER_MATCH_STATUS_FINISHED and not m.withheld
            ]
            return done[0] if done else None

        m = wait_for(finished, 120, "a finished match", every=0.2)
        status, match_page = get(f"{base}/ladder/matches/{m.match_id}")
        assert status == 200 and f'id="lserver">{m.server_address}<' in match_page
        (href,) = re.findall(r'<a class="replay" href="([^"]+)"', match_page)
        record_id = href.rsplit("/", 1)[1]
        assert href == f"/ladder/matches/{m.match_id}/records/{record_id}"
        worker_server = MatchServiceStub(grpc.insecure_channel(m.server_address))
        record = worker_server.GetRecord(ms.GetRecordRequest(record_id=record_id), timeout=10)
        steps = replay_steps(record.record)["steps"]
        with pytest.raises(grpc.RpcError) as unknown:  # not the ladder's own server's
            own.GetRecord(ms.GetRecordRequest(record_id=record_id), timeout=10)
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
        k = next(i for i in range(3, len(steps)) if steps[i]["table"] != steps[0]["table"])
        status, at_k = get(f"{base}{href}?step={k}")  # drawn on the server, no script
        assert status == 200 and f"move {k} of {len(steps) - 1}" in at_k
        assert sorted(data_cards(at_k, "tablecards")) == sorted(steps[k]["table"])
        # a record of another match is not served under this match's address
        other = get(f"{base}/ladder/matches/{m.match_id}/records/mt-other-g1")[0]
        assert other == 404

        async def browse() -> None:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(
                    executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
                )
                page = await browser.new_page()
                await page.goto(f"{base}/ladder/matches/{m.match_id}")
                await page.click("a.replay")
                await page.wait_for_selector("body[data-steps]")  # the worker's boards
                assert int(await page.get_attribute("body", "data-steps") or 0) == len(steps)
                await page.click(f'#timeline a[data-step="{k}"]:not(.dealjump)')
                await page.wait_for_selector(f'body[data-step="{k}"]')
                shown = await page.eval_on_selector_all(
                    "#tablecards .card[data-card]", "els => els.map(e => e.dataset.card)"
                )
                assert sorted(shown) == sorted(steps[k]["table"])
                await browser.close()

        asyncio.run(browse())
        # the list of every match, a filter of it, and a bad filter
        status, listing = get(f"{base}/ladder/matches?bot=slow&status=finished")
        assert status == 200 and f'data-match="{m.match_id}"' in listing
        assert set(re.findall(r'data-status="(\w+)"', listing)) == {"finished"}
        assert get(f"{base}/ladder/matches?status=lost")[0] == 400
        assert get(f"{base}/ladder/matches?page_token=nonsense")[0] == 400
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()
        worker_log.close()
        ladder.stop()


def check_live(base: str, m: Any, own: MatchServiceStub) -> bool:
    """The live page of a running match on the worker: a table with hidden hands, from
    the worker's server (the ladder's own knows no such match); its stream starts."""
    status, page = get(f"{base}/ladder/matches/{m.match_id}")
    if f'href="/ladder/matches/{m.match_id}/live"' not in page:
        return False  # over since the list was read
    status, page = get(f"{base}/ladder/matches/{m.match_id}/live")
    # (between rounds every hand may be empty: wait for a table with cards in hand)
    if status != 200 or 'class="felt"' not in page or 'class="card back"' not in page:
        return False
    hands = re.findall(r'<div class="hand"[^>]*>(.*?)</div>', page)
    assert hands and all("data-card" not in h for h in hands)
    assert f"/ladder/matches/{m.match_id}/live/stream" in page
    with pytest.raises(grpc.RpcError) as unknown:
        own.GetMatch(ms.GetMatchRequest(match_id=m.server_match_id), timeout=10)
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
    event = first_event(f"{base}/ladder/matches/{m.match_id}/live/stream")
    assert "error" not in event, event
    return True


def check_twin(base: str, m: Any, ladder: LadderProcess, worker_data: Path) -> bool:
    """A withheld twin on the worker: its page offers no replay, the record route
    refuses it, and so does the worker's match server itself (its summary too, but to
    the worker's admin token)."""
    worker_server = MatchServiceStub(grpc.insecure_channel(m.server_address))
    try:
        worker_server.GetMatch(ms.GetMatchRequest(match_id=m.server_match_id), timeout=10)
        summary_code = grpc.StatusCode.OK
    except grpc.RpcError as exc:
        summary_code = exc.code()
    admin = (("authorization", f"Bearer {(worker_data / 'admin-token').read_text().strip()}"),)
    played = worker_server.GetMatch(
        ms.GetMatchRequest(match_id=m.server_match_id), timeout=10, metadata=admin
    )
    if played.match.status != match_pb2.MATCH_STATUS_FINISHED:
        return False  # a seat never joined: the game was never played, it has no record
    record_id = f"{m.server_match_id}-g1"
    _, page = get(f"{base}/ladder/matches/{m.match_id}")
    status, refused = get(f"{base}/ladder/matches/{m.match_id}/records/{record_id}")
    boards_status, _ = get(f"{base}/ladder/matches/{m.match_id}/records/{record_id}/boards")
    try:
        worker_server.GetRecord(ms.GetRecordRequest(record_id=record_id), timeout=10)
        server_code = grpc.StatusCode.OK
    except grpc.RpcError as exc:
        server_code = exc.code()
    still = ladder.stub().GetLadderMatch(
        ladder_pb2.GetLadderMatchRequest(match_id=m.match_id), timeout=10
    )
    if not still.match.withheld:
        return False  # its twin ended while we looked: catch the next pair
    assert "withheld" in page and 'class="replay"' not in page
    assert status == 409 and "withheld" in refused
    assert boards_status == 409
    assert server_code == summary_code == grpc.StatusCode.FAILED_PRECONDITION
    return True


def test_few_channels_and_tls_with_the_ladders_ca(tmp_path: Path) -> None:
    """At most REMOTE_CHANNELS channels to other servers are kept; under TLS the web
    view reaches a TLS match server with the ladder's CA, and not without it."""
    from cirulla.server.app import start_server
    from tests.server.test_play import settings
    from tests.server.test_tls import self_signed

    cert, key = self_signed(tmp_path)

    async def run() -> None:
        running = await start_server(
            "127.0.0.1:0", tmp_path / "m.sqlite3", tls_cert=cert, tls_key=key
        )
        ours = await start_server("127.0.0.1:0", tmp_path / "ours.sqlite3")
        here = f"127.0.0.1:{ours.port}"
        address = f"127.0.0.1:{running.port}"
        match = ladder_pb2.LadderMatch(
            match_id="lm-x", server_match_id="mt-none", server_address=address
        )
        secure = LadderReader("127.0.0.1:1", "127.0.0.1:1", tls_ca=cert.read_bytes())
        plain = LadderReader("127.0.0.1:1", "127.0.0.1:1")
        local = LadderReader("127.0.0.1:1", "127.0.0.1:1", local={address})
        restarted = LadderReader("127.0.0.1:1", here)
        try:
            assert await secure.records_of(match) == []  # reached, over TLS
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await plain.records_of(match)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            for port in range(2, 2 + REMOTE_CHANNELS + 3):  # channels connect lazily
                await secure.server_of(ladder_pb2.LadderMatch(server_address=f"127.0.0.1:{port}"))
            assert len(secure._remote) == REMOTE_CHANNELS
            assert address not in secure._remote  # the least recently used went first
            assert (await local.server_of(match))[0] == ""  # hosted here: the own server's
            # a match our own server knows is ours, whatever address it was hosted under
            # (a ladder restarted on another port); one it does not know is elsewhere
            async with grpc.aio.insecure_channel(here) as channel:
                created = await MatchServiceStub(channel).CreateMatch(
                    ms.CreateMatchRequest(settings=settings(2, target=11, seed=3))
                )
            old = ladder_pb2.LadderMatch(
                server_match_id=created.match.match_id, server_address="127.0.0.1:9"
            )
            assert (await restarted.server_of(old))[0] == ""
            assert (await restarted.server_of(match))[0] == address
        finally:
            await secure.close()
            await plain.close()
            await local.close()
            await restarted.close()
            await ours.stop()
            await running.stop()

    asyncio.run(run())
