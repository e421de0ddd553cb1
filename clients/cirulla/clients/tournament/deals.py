"""Fixed deals for a tournament (``--deals FILE``), the way cutechess takes an opening book.

The file is JSON lines, one line per deck set (the games of a set play the same cards with
the seats rotated); blank lines and lines starting with ``#`` are skipped. A line is one of

* ``{"seed": 123456}``: the deck seed of the set: the server deals every deal of its games
  from it, exactly as it does with the seeds the runner derives from ``--seed``;
* ``{"decks": ["7D AS ... (40 cards)", ...]}``: explicit deck orders, one per deal (a void
  deal that is redealt uses the next one too), dealt from the front. A game that uses them
  all before it ends is aborted by the server and counted void, so give enough of them (a
  game to 51 rarely takes more than 15 deals). A deck is 40 distinct card codes (rank
  ``A 2-7 J Q K`` then suit ``D H C S``), as a string or a list of strings.

Deck set *k* of the tournament takes line *k*; with more sets than lines the file is used
again from the top. The parsed lines are saved in ``tournament.json``, so ``--resume``
needs no file. Every line is checked before anything is written: each bad line is
reported on a line of its own with its number.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from cirulla.clients.matches.journal import DeckSet
from cirulla.clients.matches.schedule import SEED_BITS, deck_seed
from cirulla.rules.cards import card_name, parse_cards
from cirulla.rules.decks import parse_deck
from cirulla.rules.errors import CirullaError

#: Errors listed before giving up on a file (each on its own line).
MAX_ERRORS = 20


def load_deals(path: Path) -> list[DeckSet]:
    """The deck sets of ``path``: ``{"seed": n}`` or ``{"decks": [[card codes] ...]}``
    each; a ValueError lists every bad line (up to MAX_ERRORS), one per line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--deals {path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"--deals {path}: not a UTF-8 text file") from None
    deals: list[DeckSet] = []
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            deals.append(parse_line(line))
        except ValueError as exc:
            errors.append(f"--deals {path} line {number}: {exc}")
            if len(errors) == MAX_ERRORS:
                errors.append(f"--deals {path}: stopped after {MAX_ERRORS} errors")
                break
    if not errors and not deals:
        errors.append(f"--deals {path}: no deck set in it (one JSON object per line)")
    if errors:
        raise ValueError("\n".join(errors))
    return deals


def parse_line(line: str) -> DeckSet:
    """One deck set, normalized (decks as lists of card codes)."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict) or len(data) != 1 or not {"seed", "decks"} & set(data):
        raise ValueError('expected {"seed": N} or {"decks": [DECK, ...]}')
    if "seed" in data:
        seed = data["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**SEED_BITS:
            raise ValueError(f"seed must be an integer 0..{2**SEED_BITS - 1}, not {seed!r}")
        return {"seed": seed}
    decks = data["decks"]
    if not isinstance(decks, list) or not decks:
        raise ValueError('"decks" must be a non-empty list of deck orders')
    out = []
    for i, deck in enumerate(decks, start=1):
        try:
            if not isinstance(deck, str) and not (
                isinstance(deck, list) and all(isinstance(c, str) for c in deck)
            ):
                raise ValueError("a deck is a string of 40 card codes or a list of them")
            cards = parse_deck(parse_cards(deck))
        except (CirullaError, ValueError) as exc:
            raise ValueError(f"deck {i}: {exc}") from None
        out.append([card_name(c) for c in cards])
    return {"decks": out}


def deal_seeds(deals: Sequence[DeckSet], tournament_seed: int, sets: int) -> list[int]:
    """The deck seed of each of ``sets`` deck sets. A ``decks`` line gets the seed the
    runner would derive for its line number: it names the set (bots' seeds, its duplicate
    ``deal_group``) and is the same each time the file is used again from the top."""
    seeds = []
    for deal_set in range(sets):
        line = deal_set % len(deals)
        entry = deals[line]
        seeds.append(entry["seed"] if "seed" in entry else deck_seed(tournament_seed, line))
    return seeds
