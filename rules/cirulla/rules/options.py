"""Rule options and the three presets of RULES.md.

Every disagreement between the source rule texts is an option; a preset is a named bundle.
Options are a frozen dataclass so a game can hold them and hash them (the capture cache
and the bots key on them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, TypeAlias

from cirulla.rules.errors import OptionError

#: An option's value: every option is a bool or an int (``Options.__post_init__`` checks).
OptionValue: TypeAlias = bool | int


#: Highest game target accepted (101 is the longest in use; a game to 1000 is ~100 deals).
MAX_TARGET = 1000


def side_count(players: int) -> int:
    """Scoring sides: two partnerships with 4 players (seats 0+2 against 1+3), one side
    per player otherwise. The one definition of partnerships: everything else asks here."""
    return 2 if players == 4 else players


def side_of(seat: int, players: int) -> int:
    """The side ``seat`` scores for."""
    return seat % 2 if players == 4 else seat


def seats_of_side(side: int, players: int) -> list[int]:
    """The seats of ``side``, in seat order."""
    return [seat for seat in range(players) if side_of(seat, players) == side]


@dataclass(frozen=True, slots=True)
class Options:
    """One value per rule option; the defaults are the ``standard`` preset."""

    players: int = 2
    target: int = 51
    must_capture: bool = True
    pairing_precedence: bool = False
    ace_sweep_scopa: bool = True
    dealer_low_bonus: bool = True
    primiera_needs_all_suits: bool = True
    piccola_max: int = 6
    cappotto: bool = True

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("bool", bool):
                if not isinstance(value, bool):
                    raise OptionError(f"option {f.name} must be true or false, not {value!r}")
            elif not isinstance(value, int) or isinstance(value, bool):
                raise OptionError(f"option {f.name} must be an integer, not {value!r}")
        if self.players not in (2, 3, 4):
            raise OptionError(f"option players must be 2, 3 or 4, not {self.players}")
        if not 1 <= self.target <= MAX_TARGET:
            raise OptionError(f"option target must be 1..{MAX_TARGET}, not {self.target}")
        if not 3 <= self.piccola_max <= 10:
            raise OptionError(f"option piccola_max must be 3..10, not {self.piccola_max}")

    @property
    def sides(self) -> int:
        """Scoring sides: partnerships with 4 players, one per player otherwise."""
        return side_count(self.players)

    def side_of(self, seat: int) -> int:
        return side_of(seat, self.players)

    @classmethod
    def preset(cls, name: str = "standard", **overrides: Any) -> Options:
        try:
            base = PRESETS[name.strip().lower().replace("_", "-")]
        except KeyError:
            raise OptionError(
                f"unknown preset {name!r}; presets are {', '.join(PRESETS)}"
            ) from None
        options = base.with_overrides(**overrides)
        if base is PRESETS["fantacarte"] and options.players != 2:
            raise OptionError("preset fantacarte is for 2 players only")
        return options

    def with_overrides(self, **overrides: Any) -> Options:
        known = {f.name for f in fields(self)}
        for key in overrides:
            if key not in known:
                raise OptionError(f"unknown rule option {key!r}; options are {', '.join(known)}")
        return replace(self, **overrides)

    @classmethod
    def from_dict(cls, data: Mapping[str, object], preset: str = "standard") -> Options:
        """Overrides of a preset, as in the rule-case files (missing keys = preset values;
        each value is checked by ``Options``)."""
        return cls.preset(preset, **data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def parse_assignment(self, text: str) -> Options:
        """Apply ``name=value`` as typed on a command line (``must_capture=off``)."""
        return self.with_overrides(**parse_overrides([text]))


def parse_overrides(assignments: Iterable[str]) -> dict[str, Any]:
    """``name=value`` strings as typed on a command line, as typed option overrides.

    >>> from cirulla.rules import parse_overrides
    >>> parse_overrides(["target=31", "must_capture=false"])
    {'target': 31, 'must_capture': False}
    >>> parse_overrides(["target=abc"])
    Traceback (most recent call last):
    ...
    cirulla.rules.errors.OptionError: option target takes an integer, not 'abc'

    Pass the result to ``Options.preset(name, **overrides)`` so that the preset's own
    checks (fantacarte is for 2 players) apply to the overridden options too.
    """
    kinds = {f.name: f.type for f in fields(Options)}
    overrides: dict[str, OptionValue] = {}
    for text in assignments:
        key, sep, raw = text.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise OptionError(f"expected option=value, got {text!r}")
        if key not in kinds:
            raise OptionError(f"unknown rule option {key!r}; options are {', '.join(kinds)}")
        raw = raw.strip().lower()
        if kinds[key] in ("bool", bool):
            if raw in ("1", "true", "on", "yes"):
                overrides[key] = True
            elif raw in ("0", "false", "off", "no"):
                overrides[key] = False
            else:
                raise OptionError(f"option {key} takes on/off, not {raw!r}")
        else:
            try:
                overrides[key] = int(raw)
            except ValueError:
                raise OptionError(f"option {key} takes an integer, not {raw!r}") from None
    return overrides


OPTION_HELP: dict[str, str] = {
    "players": "number of players, 2 or 3 alone, 4 in partnerships (0+2 vs 1+3)",
    "target": "game ends after the deal in which a side reaches this many points",
    "must_capture": "a played card that can capture must capture",
    "pairing_precedence": "if a table card pairs the played card, adding captures are barred",
    "ace_sweep_scopa": "the ace sweep scores a scopa (never on the last card of the deal)",
    "dealer_low_bonus": "dealer's four table cards summing to 9 or less score 3 scope",
    "primiera_needs_all_suits": "a side missing a suit cannot win the primiera",
    "piccola_max": "highest coin value counted in the piccola sequence (6 = up to 6D)",
    "cappotto": "a side that captures all ten coins in a deal wins the game at once",
}

PRESETS: dict[str, Options] = {
    "standard": Options(),
    "genova-home": Options(
        must_capture=False, dealer_low_bonus=False, primiera_needs_all_suits=False
    ),
    "fantacarte": Options(
        pairing_precedence=True, ace_sweep_scopa=False, dealer_low_bonus=False, piccola_max=10
    ),
}
PRESET_NOTES = {"fantacarte": "2 players only"}
