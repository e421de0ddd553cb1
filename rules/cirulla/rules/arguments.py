"""The rule options on a command line (--preset, --players, --rule OPTION=VALUE): one
way for every command that plays. Its own module, light (argparse and the options), so
that a command's parser takes them without importing ``cirulla rules``' own command (its
tables, rule cases and benchmarks)."""

from __future__ import annotations

import argparse

from cirulla.rules.options import PRESETS, Options, OptionValue, parse_overrides


def add_rule_arguments(
    parser: argparse.ArgumentParser, *, default: str | None = "standard", players: bool = True
) -> None:
    """--preset, --players and --rule OPTION=VALUE, shared by every command that plays.

    ``default`` is ``args.preset`` when --preset is not given; None lets a command tell
    "not given" apart (the tournament refuses rules with --resume) and apply "standard"
    itself. ``players=False`` leaves out --players (the ladder sets it per queue). An
    unknown preset is reported by ``Options.preset`` in one line, naming the presets.
    """
    parser.add_argument(
        "--preset",
        default=default,
        metavar="P",
        help=f"rule preset: {', '.join(PRESETS)} (default standard)",
    )
    if players:
        parser.add_argument(
            "--players", type=int, choices=(2, 3, 4), help="seats per game (default 2)"
        )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="override one rule option, e.g. must_capture=off or target=21 (repeat); "
        "see `cirulla rules options`",
    )


def rule_overrides(args: argparse.Namespace) -> dict[str, OptionValue]:
    """The rule options the arguments change: each --rule, then --players and --target
    (the commands that have them), which win over a --rule naming the same option."""
    overrides = parse_overrides(args.rule)
    for name in ("players", "target"):
        value = getattr(args, name, None)
        if value is not None:
            overrides[name] = value
    return overrides


def options_from_args(args: argparse.Namespace) -> Options:
    return Options.preset(args.preset, **rule_overrides(args))
