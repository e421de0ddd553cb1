"""Bot authors see their own bot's life with its key (issue 40, item 3).

A real ``cirulla ladder serve`` on SQLite and on PostgreSQL, with ``--webhook`` pointing at
a real HTTP server this test starts, and ``--http``: the author of a managed bot reads its
logs, a record of its game and its state changes with the key ``add`` printed, by rpc,
by ``cirulla ladder logs|record|events`` (key in $CIRULLA_BOT_KEY or a file) and by the
web page (key POSTed in a form); another bot's key is refused with PERMISSION_DENIED in
one line; the first game of a duplicate pair whose twin is still played stays withheld;
and a bot that crashes three times is deactivated, which the webhook is told.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from cirulla.ladder.db import MIGRATIONS, create, open_database
from cirulla.ladder.store import (
    LadderStore,
    MatchConfig,
    MatchOutcome,
    MatchPlan,
    Refused,
    SeatOutcome,
    SeatPlan,
    hash_key,
)
from cirulla.ladder.webhook import DeactivationWebhook
from cirulla.v1 import ladder_pb2
from tests.ladder_harness import LadderProcess, wait_for


class Hooks:
    """A local HTTP server that keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                owner.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?token=s3cret"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hooks() -> Iterator[Hooks]:
    h = Hooks()
    yield h
    h.close()


def withheld_pair(db: str) -> tuple[str, str, str]:
    """Bots a and b (paused) with a duplicate pair whose first game is over and whose
    second is claimed by a worker that is not this ladder's: (a's key, first, second)."""
    store = LadderStore(open_database(db))
    key_a = store.add_bot("a", "random", ["2p"])[2]
    store.add_bot("b", "random", ["2p"])
    a, b = (store.get_bot(n)["version_id"] for n in "ab")
    first, second = store.schedule(
        [
            MatchPlan("2p", (SeatPlan(0, 0, a), SeatPlan(1, 1, b)), 7, MatchConfig(), "lp-1", 0),
            MatchPlan("2p", (SeatPlan(0, 0, b), SeatPlan(1, 1, a)), 7, MatchConfig(), "lp-1", 1),
        ]
    )
    assert store.claim("w", "x:1").id == first
    assert store.claim("w", "x:1").id == second
    store.finish(
        first,
        MatchOutcome(winner=0, totals=(11, 3), seats=(SeatOutcome(0), SeatOutcome(1)), deals=2),
    )
    for name in "ab":
        store.bots.set_state(name, "paused", "test: a pair by hand")
    store.engine.dispose()
    return key_a, first, second


def key_of(added: str) -> str:
    assert "bot key (shown once" in added, added
    return added.strip().splitlines()[-1]


def author_cli(ladder: LadderProcess, key: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``cirulla ladder ARGS`` as an author: the bot key in the environment, and no admin
    token anywhere (a folder of their own, the ladder named by --server)."""
    env = {k: v for k, v in os.environ.items() if k != "CIRULLA_ADMIN_TOKEN"}
    env["CIRULLA_BOT_KEY"] = key
    home = ladder.folder.parent / "author"
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "cirulla", "ladder", *args, "--server", ladder.address],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def post_form(url: str, fields: dict[str, str]) -> tuple[int, str]:
    data = urllib.parse.urlencode(fields).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.slow
def test_authors_read_their_own_bot_only(
    tmp_path: Path, db_url: str, hooks: Hooks, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if db_url.startswith("sqlite"):
        db_url = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    key_a, first, _second = withheld_pair(db_url)
    crash = tmp_path_factory.mktemp("bots") / "crash.py"  # not beside the database
    crash.write_text("import sys\nprint('crash.py: giving up', file=sys.stderr)\nsys.exit(3)\n")
    ladder = LadderProcess(
        tmp_path / "ladder", db_url, "--http", "127.0.0.1:0", "--webhook", hooks.url
    )
    ladder.start()
    try:
        stub = ladder.stub()
        # the withheld twin: no log, no record, not listed, even for its own author
        bearer_a = (("authorization", f"Bearer {key_a}"),)
        for call, request in (
            (stub.GetBotLogs, ladder_pb2.GetBotLogsRequest(bot_name="a", match_id=first)),
            (stub.GetBotRecord, ladder_pb2.GetBotRecordRequest(bot_name="a", match_id=first)),
        ):
            with pytest.raises(grpc.RpcError) as refused:
                call(request, metadata=bearer_a, timeout=10)
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "withheld" in (refused.value.details() or "")
        listed = stub.GetBotLogs(ladder_pb2.GetBotLogsRequest(bot_name="a"), metadata=bearer_a)
        assert first not in [entry.match_id for entry in listed.logs]

        # the key as `add` prints it (once: the others by rpc, a process start less each)
        key_crash = key_of(ladder.cli("add", "crasher", f"cmd:{sys.executable} {crash}").stdout)
        key_rnd = ladder.add("rnd", "random").bot_key
        ladder.add("grd", "greedy")
        assert key_rnd != key_crash

        def deactivated() -> bool:
            bot = stub.GetBotHistory(ladder_pb2.GetBotHistoryRequest(bot_name="crasher")).bot
            return bot.state == ladder_pb2.BOT_STATE_DEACTIVATED

        wait_for(deactivated, 240, "the crashing bot to be deactivated", every=0.2)
        # the webhook is told, once, with the reason (a real POST to this test's server);
        # once: checked again at the end, 3 s after it came at the least
        wait_for(lambda: hooks.bodies, 30, "the deactivation webhook", every=0.1)
        told_at = time.monotonic()
        told = hooks.bodies[0]
        assert (told["event"], told["bot"], told["version"]) == ("bot.deactivated", "crasher", 1)
        assert "3 failures in a row" in told["reason"] and told["ladder"] == ladder.address
        # its author reads the state changes and the bot's own words
        events = author_cli(ladder, key_crash, "events", "crasher")
        assert events.returncode == 0, events.stderr
        assert "v1 registered" in events.stdout and "deactivated: 3 failures" in events.stdout
        logs = author_cli(ladder, key_crash, "logs", "crasher", "--limit", "3")
        assert logs.returncode == 0, logs.stderr
        assert "crash.py" in logs.stdout  # what its process wrote (here: python, on its start)

        def rnd_played() -> Any:
            """A game of rnd played out (not a forfeit), with its log and its record."""
            page = stub.GetBotLogs(
                ladder_pb2.GetBotLogsRequest(bot_name="rnd", page_size=20),
                metadata=(("authorization", f"Bearer {key_rnd}"),),
            )
            for entry in page.logs:
                m = stub.GetLadderMatch(ladder_pb2.GetLadderMatchRequest(match_id=entry.match_id))
                if entry.text and m.match.end_reason in (
                    ladder_pb2.LADDER_END_REASON_TARGET,
                    ladder_pb2.LADDER_END_REASON_CAPPOTTO,
                ):
                    got = author_cli(
                        ladder, key_rnd, "record", "rnd", entry.match_id, "--out", str(out)
                    )
                    if got.returncode == 0:
                        return entry, got
            return None

        out = ladder.folder.parent / "author" / "game.json"
        played, record = wait_for(rnd_played, 180, "a game of rnd played out, with its record")
        # every game the checks below read is played: the ladder stops playing more
        ladder.pause("rnd", "grd")
        assert "assignment: match" in played.text  # its kept-alive process's own lines
        assert record.returncode == 0, record.stderr
        check = subprocess.run(
            [sys.executable, "-m", "cirulla", "replay", str(out)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert check.returncode == 0, check.stdout + check.stderr
        # another bot's key: refused in one line, for each kind of read
        for args in (
            ("logs", "rnd"),
            ("events", "rnd"),
            ("record", "rnd", played.match_id),
        ):
            refused_cli = author_cli(ladder, key_crash, *args)
            assert refused_cli.returncode == 2
            assert refused_cli.stderr.count("\n") == 1, refused_cli.stderr
            assert "not the key of bot 'rnd' (PERMISSION_DENIED)" in refused_cli.stderr
            assert key_crash not in refused_cli.stderr
        with pytest.raises(grpc.RpcError) as no_key:
            stub.ListBotEvents(ladder_pb2.ListBotEventsRequest(bot_name="rnd"), timeout=10)
        assert no_key.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # the web page: the key in a POSTed form, never in a URL or the page
        state = json.loads((ladder.folder / "cirulla-ladder.json").read_text())
        base = f"http://{state['http']}/ladder/author"
        with urllib.request.urlopen(base, timeout=30) as r:
            assert 'method="post"' in r.read().decode()
        status, html = post_form(base, {"bot": "crasher", "key": key_crash})
        assert status == 200, html
        assert 'id="authorstate">deactivated<' in html and "crash.py" in html
        assert 'data-kind="deactivated"' in html and key_crash not in html
        status, html = post_form(base, {"bot": "rnd", "key": key_crash})
        assert status == 403 and "PERMISSION_DENIED" in html and "assignment" not in html
        if db_url.startswith("sqlite"):  # once: the form in a real Chromium
            asyncio.run(browse_author_page(base, "crasher", key_crash))
        # the admin rotates a key: the old one stops working, the new one reads
        rotated = key_of_rotate(ladder.cli("rotate-key", "rnd").stdout)
        assert author_cli(ladder, key_rnd, "events", "rnd").returncode == 2
        assert "key rotated" in author_cli(ladder, rotated, "events", "rnd").stdout
        # the webhook was told once only (the checks above took longer than this wait)
        time.sleep(max(0.0, told_at + 3 - time.monotonic()))
        assert len(hooks.bodies) == 1, hooks.bodies
    finally:
        ladder.stop()


async def browse_author_page(url: str, bot: str, key: str) -> None:
    """Type the name and the key into the form in Chromium and submit it: the page shows
    the bot's state, and neither the address bar nor the page holds the key."""
    from playwright.async_api import async_playwright

    from tests.web.test_match_pages import CHROMIUM, CHROMIUM_ARGS

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        page = await browser.new_page()
        await page.goto(url)
        await page.fill('input[name="bot"]', bot)
        await page.fill('input[name="key"]', key)
        assert await page.get_attribute('input[name="key"]', "type") == "password"
        await page.click('#authorform button[type="submit"]')
        await page.wait_for_selector("#authorbot")
        assert await page.inner_text("#authorstate") == "deactivated"
        assert await page.locator('tr.event[data-kind="deactivated"]').count() == 1
        assert page.url == url and key not in page.url
        assert key not in await page.content()
        await browser.close()


def key_of_rotate(out: str) -> str:
    assert "shown once" in out, out
    return out.strip().splitlines()[-1]


def test_a_failing_webhook_never_stalls(tmp_path: Path) -> None:
    """A POST to an endpoint that refuses is one warning and False, within its timeout."""
    store = LadderStore(open_database(f"sqlite:///{tmp_path / 'l.sqlite3'}"))
    hook = DeactivationWebhook(store, "http://127.0.0.1:9/nothing-listens", "x:1")
    started = time.monotonic()
    assert hook.post(b"{}") is False
    assert time.monotonic() - started < 6
    with pytest.raises(ValueError, match="--webhook"):
        DeactivationWebhook(store, "ftp://example.org/x", "x:1")


def test_migration_0007_from_0006(db_url: str) -> None:
    """A ladder database at 0006 with bots upgrades: its bots have no author key (every key
    refused) until the admin rotates one, then that key reads, and the rotation is an
    event; a connect-in bot's Enroll key reads its own data at once."""
    engine = create(db_url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0006")
        conn.execute(
            sa.text(
                "INSERT INTO bots (name, created_at, state, state_reason, bot_key_hash, "
                "max_concurrency) VALUES ('old', 1.0, 'active', '', NULL, 2), "
                f"('remote', 1.0, 'active', '', '{hash_key('enroll-key')}', 2)"
            )
        )
    engine.dispose()
    store = LadderStore(open_database(db_url))
    with pytest.raises(Refused, match="not the key of bot 'old'"):
        store.authors.check_key("old", "anything")
    store.authors.check_key("remote", "enroll-key")  # a connect-in bot's own key reads
    key = store.bots.rotate_author_key("old")
    store.authors.check_key("old", key)
    assert [e["state"] for e in store.authors.events("old")] == ["key-rotated"]
    with pytest.raises(Refused):
        store.authors.check_key("remote", key)  # one bot's key is no other's
