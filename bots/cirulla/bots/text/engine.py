"""``cirulla engine KIND``: a built-in bot as a text-protocol engine on stdin/stdout.

Other referees can use our bots this way, and the bridge is tested against it: the
engine rebuilds the seat's ``View`` from the ``state`` line and the legal actions from
``genmove``, so it needs nothing else (events and hands are acknowledged and ignored),
and a bot seeded alike chooses exactly what it would over gRPC.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from cirulla.bots.policy import Policy, RawAnswer, resolve_choice
from cirulla.bots.text.protocol import (
    REQUIRED_COMMANDS,
    TEXT_PROTOCOL_VERSION,
    TextProtocolError,
    genmove_parse,
    rules_parse,
    state_parse,
)
from cirulla.rules.options import Options
from cirulla.rules.views import View
from cirulla.version import __version__


class EngineSession:
    """The state of one engine session: rules in force, the last state line."""

    def __init__(self, policy: Policy, name: str) -> None:
        self.policy = policy
        self.name = name
        self.options = Options()
        self.view: View | None = None
        self.running = True

    def handle(self, command: str, args: str) -> str:
        """The answer text for one command; raises ``TextProtocolError`` for ``?``."""
        handler: Callable[[str], str] | None = getattr(self, f"cmd_{command}", None)
        if handler is None:
            raise TextProtocolError(f"unknown command {command!r}")
        return handler(args)

    def cmd_protocol_version(self, args: str) -> str:
        return TEXT_PROTOCOL_VERSION

    def cmd_name(self, args: str) -> str:
        return self.name

    def cmd_version(self, args: str) -> str:
        return __version__

    def cmd_known_command(self, args: str) -> str:
        return "true" if args.strip() in REQUIRED_COMMANDS else "false"

    def cmd_list_commands(self, args: str) -> str:
        return "\n".join(REQUIRED_COMMANDS)

    def cmd_quit(self, args: str) -> str:
        self.running = False
        return ""

    def cmd_rules(self, args: str) -> str:
        self.options = rules_parse(args)
        return ""

    def cmd_newgame(self, args: str) -> str:
        self.view = None
        # A policy that follows the game from view to view starts its account afresh.
        new_game = getattr(self.policy, "new_game", None)
        if callable(new_game):
            new_game()
        return ""

    def cmd_event(self, args: str) -> str:
        return ""

    def cmd_hand(self, args: str) -> str:
        return ""

    def cmd_state(self, args: str) -> str:
        self.view = state_parse(args, self.options)
        return ""

    def cmd_genmove(self, args: str) -> str:
        if self.view is None:
            raise TextProtocolError("genmove before any state")
        time_ms, legal = genmove_parse(args)
        time_left = time_ms / 1000 if time_ms > 0 else None
        choice = self.policy.choose(self.view, legal, time_left)
        if isinstance(choice, RawAnswer):  # a built-in policy answers an index or action
            return choice.text
        return str(resolve_choice(choice, legal))


def serve(session: EngineSession, stdin: TextIO, stdout: TextIO) -> int:
    """Answer commands until ``quit`` or the end of input (GTP v2 framing)."""
    for raw in stdin:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        head, _, rest = line.partition(" ")
        ident = ""
        if head.isdigit():
            ident = head
            head, _, rest = rest.strip().partition(" ")
        try:
            text = session.handle(head, rest.strip())
            prefix = "="
        except (TextProtocolError, ValueError) as exc:
            text, prefix = str(exc), "?"
        stdout.write(f"{prefix}{ident} {text}".rstrip() + "\n\n")
        stdout.flush()
        if not session.running:
            break
    return 0


def run_engine(policy: Policy, name: str) -> int:
    try:
        return serve(EngineSession(policy, name), sys.stdin, sys.stdout)
    finally:
        close = getattr(policy, "close", None)
        if close is not None:
            close()
