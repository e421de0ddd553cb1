"""A match: best of N games with the same options, decks drawn from one source.

The deal keeps passing to the next seat across games, and every game's deck orders come
from the match's seed (or explicit decks), so a match is determined by them and the actions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cirulla.rules.actions import Action
from cirulla.rules.decks import DeckSource
from cirulla.rules.errors import IllegalActionError, OptionError
from cirulla.rules.events import Event
from cirulla.rules.game import Game
from cirulla.rules.options import Options

#: Largest best_of accepted: more games than this is not a match but a series.
MAX_BEST_OF = 99


def check_best_of(best_of: int) -> None:
    """best_of must be odd and 1..MAX_BEST_OF (an even one would invite ties)."""
    if not 1 <= best_of <= MAX_BEST_OF or best_of % 2 == 0:
        raise OptionError(f"best_of must be an odd number 1..{MAX_BEST_OF}, not {best_of}")


def match_winner(games_won: Sequence[int], best_of: int) -> int | None:
    """The side that has won the match, or None while it goes on.

    The ONE best-of rule (the server and ``Match`` both use it): a side wins the match
    when it has won more than half of ``best_of`` games. Until one has, the match plays
    on, also past ``best_of`` games: with three sides a best of 3 can stand 1-1-1, and a
    fourth game decides it. So a match never ends in a tie.
    """
    for side, won in enumerate(games_won):
        if won * 2 > best_of:
            return side
    return None


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    winner: int
    games_won: tuple[int, ...]


class Match:
    def __init__(
        self,
        options: Options | None = None,
        *,
        best_of: int = 1,
        seed: int | None = None,
        decks: Iterable[Sequence[int | str]] | None = None,
        first_dealer: int | None = None,
    ) -> None:
        check_best_of(best_of)
        self.options = options or Options()
        self.best_of = best_of
        self.deck_source = DeckSource(seed, decks)
        self.games_won = [0] * self.options.sides
        self.winner: int | None = None
        self.opening_events: list[Event] = []
        self.games: list[Game] = [
            Game(
                self.options,
                deck_source=self.deck_source,
                first_dealer=first_dealer,
                events=self.opening_events,
            )
        ]

    @property
    def game(self) -> Game:
        return self.games[-1]

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def to_move(self) -> int | None:
        return None if self.winner is not None else self.game.to_move

    def apply(self, action: Action | int | str, seat: int | None = None) -> list[Event]:
        """Checked move; when a game ends the next one starts (its events follow)."""
        if self.winner is not None:
            raise IllegalActionError("match_over", "the match is over; no more actions")
        game = self.game
        events = list(game.apply(action, seat))
        if game.winner is not None:
            self.games_won[game.winner] += 1
            if match_winner(self.games_won, self.best_of) is not None:
                self.winner = game.winner
                events.append(MatchOver(self.winner, tuple(self.games_won)))
            else:
                self.games.append(
                    Game(
                        self.options,
                        deck_source=self.deck_source,
                        first_dealer=(game.dealer + 1) % self.options.players,
                        events=events,
                    )
                )
        return events
