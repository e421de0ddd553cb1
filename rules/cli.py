"""``cirulla rules ...`` and ``cirulla bench rules``."""

from __future__ import annotations

import argparse


def register(commands: argparse._SubParsersAction, bench: argparse._SubParsersAction) -> None:
    rules = commands.add_parser("rules", help="rule options, presets and rule-case checks")
    sub = rules.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    sub.add_parser("options", help="list every rule option with defaults and presets")
