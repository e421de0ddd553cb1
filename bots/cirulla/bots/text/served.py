"""A text-protocol engine kept alive between matches: how a tournament plays ``text:``.

Starting an engine can cost more than a game (a JIT, a big table, a network to load),
and the text protocol already says where one game ends and the next begins (``rules``
and ``newgame``), so the tournament runner keeps an engine like any built-in or
``serve:`` bot: it starts ``python -m cirulla.bots.text.served --name=NAME -- CMD ARGS`` once per
bot and slot, and hands it one match after another on stdin (the protocol of
``cirulla.bots.loop``). This process starts the engine before it says it is ready, so a
slow start is paid once per process and never on a game's clock (a bot runs two: a process
never plays both games of a duplicate pair), and plays every assigned match with
that engine. Only after the engine died (a crash, a protocol failure, no answer in time)
does the next match get a fresh one; ``quit`` is sent when the tournament ends.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from cirulla.bots.botspec import TEXT_PREFIX, text_engine_argv
from cirulla.bots.kit import BotError, setup_logging
from cirulla.bots.loop import Assignment, serve
from cirulla.bots.policy import RawAnswer
from cirulla.bots.text.bridge import TextEnginePolicy
from cirulla.bots.text.engine_io import EngineError
from cirulla.rules.actions import Action
from cirulla.rules.views import View
from cirulla.v1 import match_service_pb2

#: Seconds the engine gets between SIGTERM and SIGKILL when this process is stopped.
TERM_GRACE = 1.0


class KeptEngine:
    """The one engine of this process, restarted only when it is no longer alive."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self.policy: TextEnginePolicy | None = None
        #: Engines started so far (restarts included).
        self.starts = 0

    def start(self) -> TextEnginePolicy:
        """The running engine, or a freshly started one; ``EngineError`` if it cannot
        start or does not speak the protocol."""
        if self.policy is not None and self.policy.alive():
            return self.policy
        if self.policy is not None:
            self.policy.close(quit_first=False)
            self.policy = None
        policy = TextEnginePolicy(self.argv)
        self.starts += 1
        try:
            policy.start()
        except EngineError:
            policy.close()
            raise
        self.policy = policy
        return policy

    def for_match(self, assignment: Assignment) -> MatchSeat:
        """``serve``'s factory: this match's seat, played by the kept engine."""
        return MatchSeat(self.start())

    def close(self, quit_first: bool = True, grace: float | None = None) -> None:
        if self.policy is not None:
            if grace is None:
                self.policy.close(quit_first)
            else:
                self.policy.close(quit_first, grace)
            self.policy = None


class MatchSeat:
    """One match's view of the kept engine. It has no ``close``: ``serve`` closes what a
    factory returns after each match, and the engine must outlive the match."""

    def __init__(self, policy: TextEnginePolicy) -> None:
        self.policy = policy
        self.name = policy.name

    def observe(self, response: match_service_pb2.PlayResponse) -> None:
        """An engine that died mid-match ends this match's seat with one log line (the
        next match starts a fresh engine)."""
        try:
            self.policy.observe(response)
        except EngineError as exc:
            raise BotError(f"the engine stopped: {exc}") from None

    def choose(
        self, view: View, legal: Sequence[Action], time_left: float | None
    ) -> int | RawAnswer:
        return self.policy.choose(view, legal, time_left)


def main(argv: list[str] | None = None) -> int:
    """``python -m cirulla.bots.text.served [--name NAME] -- CMD ARGS`` (or a spec,
    ``text:CMD ARGS``, instead of ``-- CMD ARGS``)."""
    words = list(sys.argv[1:] if argv is None else argv)
    engine_argv = words[words.index("--") + 1 :] if "--" in words else []
    own = words[: words.index("--")] if "--" in words else words
    parser = argparse.ArgumentParser(
        prog="python -m cirulla.bots.text.served",
        description="Play the matches assigned on stdin (cirulla.bots.loop's protocol) "
        "with one text-protocol engine, kept between matches: ... -- CMD ARGS",
    )
    parser.add_argument("spec", nargs="?", help=f"the engine as a spec, {TEXT_PREFIX}CMD ARGS")
    parser.add_argument("--name", help="name shown to the other players")
    parser.add_argument("--retries", type=int, default=8, help="reconnection attempts")
    args = parser.parse_args(own)
    try:
        if args.spec is not None:
            engine_argv = text_engine_argv(args.spec)
        if not engine_argv:
            raise ValueError("give the engine's command after --, or a text: spec")
    except ValueError as exc:
        print(f"cirulla text engine: {exc}", file=sys.stderr)
        return 2
    setup_logging("info", args.name or "text")
    engine = KeptEngine(engine_argv)
    try:
        engine.start()  # before "ready": a slow start is paid here, once
    except EngineError as exc:
        print(f"cirulla text engine: {exc}", file=sys.stderr)
        return 1

    def stop(signum: int, frame: object) -> None:
        engine.close(quit_first=False, grace=TERM_GRACE)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    try:
        return serve(factory=engine.for_match, retries=args.retries, name=args.name)
    finally:
        engine.close()


if __name__ == "__main__":
    sys.exit(main())
