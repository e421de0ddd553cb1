"""Play match after match in one process: how the tournament runner keeps bots alive.

Starting a Python bot costs far more than playing a game of Cirulla over gRPC, so the
runner starts each bot once (per concurrency slot) and hands it one match at a time, the
way cutechess keeps its engines between games. The hand-over is a line protocol:

* the bot first writes ``{"ready": true}`` on its **stdout** once it can take matches
  (the runner creates no match for it before that, so start-up time is never game time);
* the runner writes one JSON object per line on the bot's **stdin**, an *assignment*:
  ``{"server": "HOST:PORT", "match": "ID", "token": "SEAT-TOKEN", "seat": 0,
  "name": "NAME", "seed": 123}`` (``seat``, ``name`` and ``seed`` may be absent);
* the bot plays that match with the kit (a ``BotClient``, on one event loop and one
  connection kept from match to match) and, when it has left it, writes one
  line on its **stdout**: ``{"done": "ID", "code": 0}`` (``code`` 1 and an ``"error"``
  text when it could not play, e.g. the server refused it);
* end of input: the bot exits 0.

The token travels on a pipe, never on a command line. Anything else the bot prints goes
to stderr (the runner's log of that bot): stdout carries only these lines.

``serve(policy)`` (or ``serve(factory=...)`` for a fresh, seeded policy per match) is
all a Python bot needs; ``python -m cirulla.bots.loop SPEC`` serves a built-in kind
(``random``, ``mcts:iterations=500``...), which is what the runner starts.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, Any

import grpc

from cirulla.bots.botspec import BotSpec
from cirulla.bots.kit import (
    BotClient,
    BotError,
    MatchOutcome,
    open_aio_channel,
    run_bot,
    setup_logging,
)
from cirulla.bots.policy import DecisionFunction, Policy
from cirulla.logs import add_log_level_argument
from cirulla.logs import setup_logging as logfmt

log = logging.getLogger("cirulla.bots.loop")


@dataclass(frozen=True, slots=True)
class Assignment:
    """One match to play: where, which, the seat's secret token, and a seed for the bot."""

    server: str
    match: str
    token: str
    seat: int | None = None
    name: str | None = None
    seed: int | None = None

    def to_line(self) -> str:
        data: dict[str, Any] = {}
        for key in ("server", "match", "token", "seat", "name", "seed"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return json.dumps(data, separators=(",", ":")) + "\n"

    @classmethod
    def from_line(cls, line: str) -> Assignment:
        """Parse one assignment line; a ValueError names the field that is wrong."""
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"assignment is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("assignment must be a JSON object")
        values: dict[str, Any] = {}
        for key in ("server", "match", "token"):
            value = data.get(key)
            if not isinstance(value, str) or not value:
                raise ValueError(f"assignment field {key!r} must be a non-empty string")
            values[key] = value
        for key, kind in (("seat", int), ("name", str), ("seed", int)):
            value = data.get(key)
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                raise ValueError(f"assignment field {key!r} must be {kind.__name__}")
            values[key] = value
        unknown = set(data) - {"server", "match", "token", "seat", "name", "seed"}
        if unknown:
            raise ValueError(f"assignment has unknown fields: {', '.join(sorted(unknown))}")
        return cls(**values)


def control_stream() -> IO[str]:
    """The process's real stdout, for the done lines only; fd 1 then points at stderr so
    a stray ``print`` lands in the log instead of corrupting the protocol."""
    sys.stdout.flush()
    control = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    return control


def serve(
    policy: Policy | DecisionFunction | None = None,
    *,
    factory: Callable[[Assignment], Policy | DecisionFunction] | None = None,
    lines: Iterable[str] | None = None,
    control: IO[str] | None = None,
    retries: int = 8,
    name: str | None = None,
) -> int:
    """Play every assignment read from ``lines`` (default: stdin), one after another.

    Give either one ``policy`` used for every match, or a ``factory`` that builds one per
    assignment (the built-in kinds do: a fresh policy seeded with the assignment's seed,
    so a game is reproducible whatever the process played before). ``name`` is shown to the
    other players when an assignment names none. Returns 0 at the end of the input.
    """
    if (policy is None) == (factory is None):
        raise TypeError("serve() takes either a policy or a factory")
    setup_logging("info", name or "bot")
    out = control or control_stream()
    out.write('{"ready":true}\n')
    out.flush()
    source = lines if lines is not None else iter(sys.stdin.readline, "")
    with Connection() as connection:
        for line in source:
            if not line.strip():
                continue
            try:
                assignment = Assignment.from_line(line)
            except ValueError as exc:
                log.error("%s", exc)
                _report(out, None, 2, str(exc))
                continue
            log.info("assignment: match %s seat %s", assignment.match, assignment.seat)
            if assignment.name is None and name is not None:
                assignment = dataclasses.replace(assignment, name=name)
            code, error = _play(assignment, policy, factory, retries, connection)
            _report(out, assignment.match, code, error)
    return 0


class Connection:
    """One event loop and one channel, kept from match to match while the server stays
    the same: a new loop, channel and HTTP/2 connection for every match cost the bot and
    the server more than a short game's first moves."""

    def __init__(self) -> None:
        self._runner = asyncio.Runner()
        self._channel: grpc.aio.Channel | None = None
        self._key: tuple[str, str | None] | None = None

    def play(self, client: BotClient) -> MatchOutcome:
        return self._runner.run(self._play(client))

    async def _play(self, client: BotClient) -> MatchOutcome:
        key = (client.server, client.tls_ca)
        if self._channel is None or self._key != key:
            await self._close_channel()
            self._channel = open_aio_channel(*key)
            self._key = key
        return await client.run_async(self._channel)

    async def _close_channel(self) -> None:
        if self._channel is not None:
            channel, self._channel = self._channel, None
            await channel.close()

    def close(self) -> None:
        try:
            self._runner.run(self._close_channel())
        finally:
            self._runner.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _play(
    assignment: Assignment,
    policy: Policy | DecisionFunction | None,
    factory: Callable[[Assignment], Policy | DecisionFunction] | None,
    retries: int,
    connection: Connection,
) -> tuple[int, str | None]:
    player = policy if factory is None else None
    try:
        if factory is not None:
            player = factory(assignment)
        assert player is not None
        run_bot(
            player,
            server=assignment.server,
            match_id=assignment.match,
            token=assignment.token,
            name=assignment.name,
            retries=retries,
            runner=connection.play,
        )
        return 0, None
    except BotError as exc:
        log.error("%s", exc)
        return 1, str(exc)
    except Exception as exc:  # the next match deserves a chance; the runner sees code 1
        log.exception("the match failed")
        return 1, f"{type(exc).__name__}: {exc}"
    finally:
        close = getattr(player, "close", None) if factory is not None else None
        if close is not None:
            close()


def _report(out: IO[str], match: str | None, code: int, error: str | None) -> None:
    message: dict[str, Any] = {"done": match, "code": code}
    if error:
        message["error"] = error
    out.write(json.dumps(message, separators=(",", ":")) + "\n")
    out.flush()


def main(argv: list[str] | None = None) -> int:
    """``python -m cirulla.bots.loop SPEC``: serve a built-in bot kind over stdin."""
    parser = argparse.ArgumentParser(
        prog="python -m cirulla.bots.loop",
        description="Play the matches assigned on stdin (one JSON line each) with a "
        "built-in bot; see the module docstring for the protocol.",
    )
    parser.add_argument("spec", help="bot spec, e.g. random, greedy, mcts:iterations=500")
    parser.add_argument("--name", help="name shown to the other players (default: the kind)")
    parser.add_argument("--retries", type=int, default=8, help="reconnection attempts")
    add_log_level_argument(parser)
    args = parser.parse_args(argv)
    try:
        spec = BotSpec.parse(args.spec)  # the spec enters here, as its canonical text
        spec.policy(seed=0)  # refuse bad options before the first match
    except ValueError as exc:
        print(f"cirulla bot loop: {exc}", file=sys.stderr)
        return 2
    logfmt(args.log_level, args.name or spec.kind)

    def factory(assignment: Assignment) -> Policy:
        return spec.policy(seed=assignment.seed)

    return serve(factory=factory, retries=args.retries, name=args.name)


if __name__ == "__main__":
    sys.exit(main())
