"""The OpenSpiel games' parameters (``python_cirulla`` and ``python_cirulla_baseline``): their
type and the rules they give. Needs no OpenSpiel, so both games share it."""

from __future__ import annotations

from dataclasses import fields
from typing import TypeAlias

from cirulla.env.vector import make_options
from cirulla.rules.options import Options, OptionValue

#: A game parameter's value, as OpenSpiel passes them (``pyspiel.load_game``'s params).
ParamValue: TypeAlias = int | float | str | bool
GameParams: TypeAlias = dict[str, ParamValue]

#: The rule options a game takes as parameters (the player count is its own parameter).
RULES = [f.name for f in fields(Options) if f.name != "players"]


def options_of(params: GameParams) -> Options:
    """The rules of a parameter dict (-1: the preset's value)."""
    rules: dict[str, OptionValue] = {}
    for name in RULES:
        value = int(params.get(name, -1))
        if value == -1:
            continue
        field_type = next(f.type for f in fields(Options) if f.name == name)
        if field_type in ("bool", bool):
            if value not in (0, 1):
                raise ValueError(f"parameter {name}: expected 0, 1 or -1 (preset), not {value}")
            rules[name] = bool(value)
        else:
            rules[name] = value
    return make_options(
        int(params.get("players", 2)), str(params.get("preset", "standard")), **rules
    )
