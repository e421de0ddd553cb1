"""Every command that plays takes the rules the same way (``rules.arguments.add_rule_arguments``):
the same --preset, --rule and --players, with one default each command may change."""

from __future__ import annotations

import argparse

import pytest

from cirulla.cli import build_parser
from cirulla.rules.arguments import add_rule_arguments

COMMANDS = (
    (["tournament"], None),  # None: --resume refuses rules given again
    (["match", "create"], "standard"),
    (["play"], "standard"),
    (["ladder", "serve"], "standard"),
    (["rules", "demo"], "standard"),
)


def _subparser(parser: argparse.ArgumentParser, path: list[str]) -> argparse.ArgumentParser:
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


@pytest.mark.parametrize("command, default", COMMANDS)
def test_each_command_takes_the_shared_rule_arguments(
    command: list[str], default: str | None
) -> None:
    parser = build_parser()
    args = parser.parse_args(command)
    assert args.preset == default and args.rule == []
    args = parser.parse_args([*command, "--preset", "genova-home", "--rule", "target=21"])
    assert (args.preset, args.rule) == ("genova-home", ["target=21"])
    reference = argparse.ArgumentParser()
    add_rule_arguments(reference)
    helps = {a.dest: a.help for a in reference._actions}
    sub = _subparser(parser, command)
    for action in sub._actions:
        if action.dest in ("preset", "rule", "players"):
            assert action.help == helps[action.dest], (command, action.dest)
