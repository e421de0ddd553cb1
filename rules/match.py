"""A match: best of N games with the same options, decks drawn from one source.

The deal keeps passing to the next seat across games, and every game's deck orders come
from the match's seed (or explicit decks), so a match is determined by them and the actions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cirulla.rules.actions import Action
from cirulla.rules.errors import IllegalActionError, OptionError
from cirulla.rules.events import Event
from cirulla.rules.game import DeckSource, Game
from cirulla.rules.options import Options


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
        if best_of < 1:
            raise OptionError(f"best_of must be at least 1, not {best_of}")
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
        events = game.apply(action, seat)
        if game.winner is not None:
            self.games_won[game.winner] += 1
            if self.games_won[game.winner] * 2 > self.best_of:
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
