"""Sit a kit bot on a ladder as a connect-in bot (the lichess-bot model).

``cirulla bot KIND --ladder HOST:PORT --bot-name NAME`` (key in ``$CIRULLA_BOT_KEY`` or
``--bot-key-file``) holds the ladder's ``Enroll`` stream: it says how many matches it
plays at once, sends heartbeats, and plays each match the ladder assigns on the match
server named in the assignment, with a fresh policy per match, in its own thread. The
stream is reopened with exponential back-off when it drops or the ladder says goodbye
(matches being played go on meanwhile); a refused key stops the bot at once.

The key never goes on a command line (other local users can read those): it comes from
the environment or a file.
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from cirulla.bots.kit import BotError, MatchOutcome, open_channel, reconnect_delay, run_bot
from cirulla.bots.policy import DecisionFunction, Policy
from cirulla.logs import setup_logging
from cirulla.v1 import ladder_pb2, ladder_pb2_grpc
from cirulla.version import __version__

log = logging.getLogger("cirulla.bots.enroll")

#: Environment variable holding the bot key that ``cirulla ladder add NAME connect`` printed.
KEY_ENV = "CIRULLA_BOT_KEY"

#: Statuses that reconnecting cannot fix (wrong key, removed bot, bad hello).
FATAL_CODES = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNIMPLEMENTED,
}


def read_bot_key(key_file: str | None = None) -> str:
    """The bot key from ``key_file`` or else ``$CIRULLA_BOT_KEY``; BotError if neither."""
    if key_file:
        try:
            key = Path(key_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise BotError(f"--bot-key-file {key_file}: {exc.strerror or exc}") from None
        if not key:
            raise BotError(f"--bot-key-file {key_file}: the file is empty")
        return key
    key = os.environ.get(KEY_ENV, "").strip()
    if not key:
        raise BotError(
            f"no bot key: set {KEY_ENV} or pass --bot-key-file FILE "
            "(the key `cirulla ladder add NAME connect` printed)"
        )
    return key


@dataclass
class Played:
    """One assignment and how it went (for logs and tests)."""

    match_id: str
    seat: int
    outcome: MatchOutcome | None = None
    error: str = ""


@dataclass
class LadderBot:
    """A connect-in bot: one Enroll stream, up to ``capacity`` matches at once."""

    #: Makes the policy of one match: a ``Policy`` or a plain decision function
    #: ``(view, legal, time_left) -> index``, as ``run_bot`` takes.
    make_policy: Callable[[], Policy | DecisionFunction]
    ladder: str
    bot_name: str
    bot_key: str
    capacity: int = 1
    name: str | None = None
    #: The ladder's CA certificate (PEM file): TLS to the ladder and to the match servers
    #: its assignments name (a ladder's processes speak TLS, or none do); None: plaintext.
    tls_ca: str | None = None
    backoff: float = 0.5
    #: The longest wait between enrolment attempts: a restarted ladder has every
    #: connect-in bot back within this (plus one connection) of listening again.
    max_backoff: float = 10.0
    #: The re-enrolment delays' generator (None: the kit's, seeded by the system).
    jitter: random.Random | None = None
    #: Extra keyword arguments for ``run_bot`` (e.g. retries, TLS).
    play_options: dict[str, Any] = field(default_factory=dict)
    played: list[Played] = field(default_factory=list)
    enrollments: int = 0

    def __post_init__(self) -> None:
        if self.capacity < 1:
            raise BotError(f"--capacity must be at least 1, not {self.capacity}")
        self._active: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()

    # -- matches ---------------------------------------------------------------------

    def playing(self) -> int:
        with self._lock:
            return sum(1 for t in self._active.values() if t.is_alive())

    def _play(self, assignment: ladder_pb2.Assignment, record: Played) -> None:
        policy: Policy | DecisionFunction | None = None
        options = {"tls_ca": self.tls_ca, **self.play_options}
        try:
            # made inside the try: a policy that fails to start (a text engine that will
            # not answer) is this match's error, the enrollment goes on
            policy = self.make_policy()
            record.outcome = run_bot(
                policy,
                server=assignment.server_address,
                match_id=assignment.server_match_id,
                token=assignment.seat_token,
                name=self.name or self.bot_name,
                **options,
            )
            log.info("match %s over (seat %d)", assignment.match_id, assignment.seat)
        except BotError as exc:
            record.error = str(exc)
            log.warning("match %s: %s", assignment.match_id, exc)
        except Exception as exc:  # a policy bug must not take the enrollment down
            record.error = f"{type(exc).__name__}: {exc}"
            log.exception("match %s failed", assignment.match_id)
        finally:
            close = getattr(policy, "close", None) if policy is not None else None
            if close is not None:
                close()

    def _start(self, assignment: ladder_pb2.Assignment) -> bool:
        with self._lock:
            known = self._active.get(assignment.match_id)
            if known is not None:
                return False  # the same assignment twice: already playing it
            record = Played(assignment.match_id, assignment.seat)
            self.played.append(record)
            thread = threading.Thread(
                target=self._play,
                args=(assignment, record),
                name=f"match-{assignment.match_id}",
                daemon=True,
            )
            self._active[assignment.match_id] = thread
        thread.start()
        return True

    # -- the stream ------------------------------------------------------------------

    def _requests(
        self, outbox: queue.Queue[ladder_pb2.EnrollRequest | None], interval: list[float]
    ) -> Iterator[ladder_pb2.EnrollRequest]:
        yield ladder_pb2.EnrollRequest(
            hello=ladder_pb2.EnrollHello(
                bot_name=self.bot_name,
                bot_key=self.bot_key,
                capacity=self.capacity,
                software_version=f"cirulla-bot-kit {__version__}",
            )
        )
        while True:
            try:
                item = outbox.get(timeout=interval[0])
            except queue.Empty:
                item = ladder_pb2.EnrollRequest(
                    heartbeat=ladder_pb2.EnrollHeartbeat(playing=self.playing())
                )
            if item is None:
                return
            yield item

    def _session(self, channel: grpc.Channel) -> bool:
        """One Enroll stream until it ends; True if the ladder enrolled us."""
        stub = ladder_pb2_grpc.LadderServiceStub(channel)
        outbox: queue.Queue[ladder_pb2.EnrollRequest | None] = queue.Queue()
        interval = [1.0]  # heartbeat period until the ladder says its own
        call = stub.Enroll(self._requests(outbox, interval))
        watcher = threading.Thread(
            target=lambda: (self._stop.wait(), call.cancel()), daemon=True, name="enroll-stop"
        )
        watcher.start()
        enrolled = False
        try:
            for response in call:
                kind = response.WhichOneof("body")
                if kind == "enrolled":
                    enrolled = True
                    self.enrollments += 1
                    interval[0] = max(0.05, response.enrolled.heartbeat_interval_ms / 1000 / 3)
                    log.info(
                        "enrolled on %s as %s v%d, %d at once",
                        self.ladder,
                        response.enrolled.bot_name,
                        response.enrolled.version,
                        response.enrolled.capacity,
                    )
                elif kind == "assignment":
                    assignment = response.assignment
                    if self._start(assignment):
                        outbox.put(
                            ladder_pb2.EnrollRequest(
                                accepted=ladder_pb2.AssignmentAccepted(match_id=assignment.match_id)
                            )
                        )
                elif kind == "goodbye":
                    log.info("the ladder said goodbye: %s", response.goodbye.reason)
                    break
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            if self._stop.is_set():
                return enrolled
            detail = exc.details() if hasattr(exc, "details") else str(exc)
            if code in FATAL_CODES:
                raise BotError(f"the ladder refused the bot: {detail}") from None
            log.warning("enroll stream failed (%s: %s)", code.name if code else "?", detail)
        finally:
            outbox.put(None)
            call.cancel()
        return enrolled

    def run(self, stop: threading.Event | None = None) -> None:
        """Enroll and play until ``stop`` is set (or forever); BotError if refused."""
        if stop is not None:
            self._stop = stop
        failures = 0
        while not self._stop.is_set():
            # A fresh channel for every session: a channel whose connection failed sits in
            # gRPC's own reconnect backoff (up to minutes after a long outage) and fails
            # every call at once with its cached "Connection refused", however long ago the
            # ladder came back; a new channel dials now.
            with open_channel(self.ladder, self.tls_ca) as channel:
                enrolled = self._session(channel)
            if self._stop.is_set():
                break
            failures = 0 if enrolled else failures + 1
            delay = reconnect_delay(failures, self.backoff, self.max_backoff, self.jitter)
            log.info("re-enrolling %s on %s in %.2fs", self.bot_name, self.ladder, delay)
            self._stop.wait(delay)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no match is being played (True) or ``timeout`` passes (False)."""
        deadline = time.monotonic() + timeout
        while self.playing():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True


def add_ladder_arguments(p: argparse.ArgumentParser) -> None:
    """``cirulla bot KIND --ladder HOST:PORT --bot-name NAME [--bot-key-file F]``."""
    group = p.add_argument_group(
        "ladder (connect-in bot)",
        "Sit on a ladder instead of playing one match: hold its enrollment stream and play "
        f"every match it assigns. The bot key comes from ${KEY_ENV} or --bot-key-file, "
        "never from the command line.",
    )
    group.add_argument("--ladder", metavar="HOST:PORT", help="the ladder's address")
    group.add_argument("--bot-name", metavar="NAME", help="the name registered on the ladder")
    group.add_argument(
        "--bot-key-file", metavar="FILE", help=f"file holding the bot key (default: ${KEY_ENV})"
    )
    group.add_argument(
        "--capacity", type=int, default=1, metavar="N", help="matches played at once (1)"
    )
    group.add_argument(
        "--reenroll-max",
        type=float,
        default=LadderBot.max_backoff,
        metavar="SECONDS",
        help="the longest wait between two enrolment attempts while the ladder is away: "
        "the bot is back within about this of a restarted ladder listening again "
        f"({LadderBot.max_backoff:g})",
    )


def run_from_args(
    args: argparse.Namespace, make_policy: Callable[[], Policy | DecisionFunction]
) -> int:
    """The ``--ladder`` branch of ``cirulla bot``: runs until interrupted."""
    try:
        if not args.bot_name:
            raise BotError("--ladder needs --bot-name NAME (the name registered on the ladder)")
        if not args.reenroll_max > 0:
            raise BotError(f"--reenroll-max must be more than 0 seconds, not {args.reenroll_max:g}")
        bot = LadderBot(
            make_policy,
            ladder=args.ladder,
            bot_name=args.bot_name,
            bot_key=read_bot_key(args.bot_key_file),
            capacity=args.capacity,
            max_backoff=args.reenroll_max,
            name=args.name,
            tls_ca=args.tls_ca or os.environ.get("CIRULLA_TLS_CA") or None,
            play_options={"retries": args.retries},
        )

        setup_logging(args.log_level, args.bot_name)
        bot.run()
    except BotError as exc:
        print(f"cirulla bot: {exc}", file=sys.stderr)
        return 1
    return 0
