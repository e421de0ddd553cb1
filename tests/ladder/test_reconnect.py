"""A connect-in bot is back within seconds of a restarted ladder listening again, however
long the ladder was away (issue 40, item 2).

The kit used to keep one gRPC channel for all its enrolment attempts. After an outage of a
minute that channel sits in gRPC's own reconnect backoff (1 s growing by 1.6 per failure,
up to 120 s), during which every call fails at once with the last "Connection refused",
so a bot stayed away for about two minutes from a ladder that was already back. Real
processes: ``cirulla ladder serve`` stopped with SIGTERM and started again on the same
port and database, and ``cirulla bot random --ladder`` running throughout.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest

from cirulla.bots import enroll
from cirulla.bots.kit import KIT_CHANNEL_OPTIONS
from cirulla.bots.simple import RandomPolicy
from tests.ladder_harness import LadderProcess, wait_for
from tests.server_harness import tied_to_this_process

#: The bot's longest wait between enrolment attempts (``--reenroll-max``, 10 s unless
#: set): the bound the test checks is this plus one connection. (0.5 s, the kit's first
#: ceiling: uncapped, the second delay's ceiling is already twice it.)
REENROLL_MAX = 0.5
REENROLL = ("--reenroll-max", str(REENROLL_MAX))
#: How long the ladder stays away: ten times the bot's cap, a dozen attempts or more, each
#: of whose delays the bot logs: uncapped (0.5 s doubling) they would pass the cap from the
#: second on, and the test checks every one. (It was 10 s with a cap of 1 s: the same
#: multiples, 5 s less of a worker's time. Before that the test kept the ladder away 45 s
#: with the default cap of 10 s, back within 20 s: long enough for gRPC's own reconnect
#: backoff, 1 s growing by 1.6, to put its next attempt about 25 s after the ladder came
#: back. Where that outage caught a channel kept across attempts only when gRPC's jitter
#: let it, test_every_enrolment_attempt_dials_a_new_channel checks the fresh channel
#: itself, every time.)
OUTAGE_SECONDS = 5.0
#: What the issue asks: every connect-in bot back within 30 s of the ladder listening.
#: The kit's own bound is its longest enrolment delay plus one connection; the rest is
#: room for a busy machine.
BACK_WITHIN_SECONDS = 10.0
#: The kit's line before each wait (cirulla.bots.enroll.LadderBot.run).
DELAY = re.compile(r"re-enrolling remote on \S+ in ([0-9.]+)s")
#: A built-in bot as a connect-in bot.
BOT = [sys.executable, "-m", "cirulla", "bot", "random"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def enrolments(log: Path) -> int:
    return log.read_text(errors="replace").count("enrolled on ")


@pytest.mark.slow
def test_a_connect_in_bot_is_back_soon_after_a_long_ladder_outage(tmp_path: Path) -> None:
    port = free_port()
    db = f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    ladder = LadderProcess(tmp_path / "ladder", db, "--listen", f"127.0.0.1:{port}")
    address = ladder.start()
    assert address.endswith(f":{port}")
    bot: subprocess.Popen[bytes] | None = None
    log = tmp_path / "bot.log"
    try:
        key = ladder.cli("add", "remote", "connect").stdout.strip().splitlines()[-1].strip()
        with log.open("ab") as out:
            bot = subprocess.Popen(
                tied_to_this_process(
                    [*BOT, "--ladder", address, "--bot-name", "remote", *REENROLL]
                ),
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "CIRULLA_BOT_KEY": key},
                start_new_session=True,
            )
        wait_for(lambda: enrolments(log) >= 1, 60, "the bot's first enrolment")

        assert ladder.stop() is not None  # SIGTERM: the ladder goes away
        time.sleep(OUTAGE_SECONDS)
        failed_while_away = log.read_text(errors="replace").count("enroll stream failed")
        assert failed_while_away >= 5, log.read_text()[-2000:]  # it kept trying
        # and never waited longer than its cap between two attempts
        delays = [float(d) for d in DELAY.findall(log.read_text(errors="replace"))]
        assert len(delays) >= 5 and max(delays) <= REENROLL_MAX, delays

        ladder.start()  # the same port, the same database
        listening = time.monotonic()
        wait_for(lambda: enrolments(log) >= 2, 120, "the bot to enrol again", every=0.2)
        back_after = time.monotonic() - listening
        print(f"\nback {back_after:.1f} s after the ladder listened again")
        assert back_after < BACK_WITHIN_SECONDS, (back_after, log.read_text()[-2000:])
        assert bot.poll() is None  # the bot never gave up
    finally:
        if bot is not None and bot.poll() is None:
            os.killpg(bot.pid, signal.SIGKILL)
            bot.wait(30)
        ladder.stop()


def test_every_enrolment_attempt_dials_a_new_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fix itself, in process: each attempt opens (and closes) a channel of its own,
    so no attempt after an outage inherits a channel waiting out gRPC's reconnect
    backoff; the kit's channels cap that backoff at 2 s besides."""
    opened: list[grpc.Channel] = []
    kits = enroll.open_channel

    def counting(server: str, tls_ca: str | None = None) -> grpc.Channel:
        opened.append(kits(server, tls_ca))
        return opened[-1]

    monkeypatch.setattr(enroll, "open_channel", counting)
    bot = enroll.LadderBot(
        RandomPolicy, f"127.0.0.1:{free_port()}", "remote", "key", backoff=0.02, max_backoff=0.05
    )
    stop = threading.Event()
    runner = threading.Thread(target=bot.run, args=(stop,))
    runner.start()
    try:
        wait_for(lambda: len(opened) >= 5, 30, "five enrolment attempts", every=0.05)
    finally:
        stop.set()
        runner.join(30)
    assert not runner.is_alive()
    assert len(set(map(id, opened))) == len(opened) >= 5  # one channel per attempt
    assert dict(KIT_CHANNEL_OPTIONS)["grpc.max_reconnect_backoff_ms"] <= 2000
