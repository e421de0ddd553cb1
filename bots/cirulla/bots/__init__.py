"""Bots that play Cirulla as ordinary players over the match protocol.

Write one decision function (a ``View`` and the numbered legal actions in, an index out);
the kit (``cirulla.bots.kit``) does the connection, handshake, reconnects, clock and
logging. Built-in kinds: ``random``, ``greedy`` and ``mcts`` (see docs/bots.md).
"""

from cirulla.bots.botspec import bot_command, parse_bot_spec
from cirulla.bots.mcts_policy import MctsPolicy
from cirulla.bots.policy import FunctionPolicy, Policy
from cirulla.bots.simple import GreedyPolicy, RandomPolicy
from cirulla.bots.specs import KINDS, format_bot_spec, make_policy

__all__ = [
    "KINDS",
    "FunctionPolicy",
    "GreedyPolicy",
    "MctsPolicy",
    "Policy",
    "RandomPolicy",
    "bot_command",
    "format_bot_spec",
    "make_policy",
    "parse_bot_spec",
]
