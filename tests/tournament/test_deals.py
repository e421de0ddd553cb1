"""``--deals FILE``: fixed deck sets, like an opening book, checked line by line before
anything is written, and played from the file (seeds and explicit deck orders)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cirulla.bots.botspec import parse_bots
from cirulla.cli import main
from cirulla.clients.matches.journal import Settings
from cirulla.clients.matches.schedule import deck_seed
from cirulla.clients.tournament.deals import deal_seeds, load_deals
from cirulla.clients.tournament.runner import schedule_of
from cirulla.rules.cards import CARD_NAMES

DECK = " ".join(CARD_NAMES)  # a valid deck order: the 40 cards in index order


def test_load_deals_accepts_seeds_and_decks_and_skips_comments(tmp_path: Path) -> None:
    path = tmp_path / "deals.jsonl"
    path.write_text(
        '# my book\n\n{"seed": 7}\n' + json.dumps({"decks": [DECK, DECK.split()[::-1]]}) + "\n"
    )
    deals = load_deals(path)
    assert deals[0] == {"seed": 7}
    assert deals[1]["decks"][0] == DECK.split()
    assert deals[1]["decks"][1] == DECK.split()[::-1]
    # the file is used again from the top; a decks line is named by its line's seed
    assert deal_seeds(deals, 5, 4) == [7, deck_seed(5, 1), 7, deck_seed(5, 1)]


def test_every_bad_line_is_reported_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "deals.jsonl"
    path.write_text(
        '{"seed": 1}\n'
        "not json\n"
        '{"seed": -3}\n'
        '{"decks": ["AD 2D"]}\n'
        '{"decks": ["' + DECK.replace("KS", "XX") + '"]}\n'
        '{"colour": 1}\n'
    )
    with pytest.raises(ValueError) as info:
        load_deals(path)
    lines = str(info.value).splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [
        f"--deals {path} line {n}" for n in (2, 3, 4, 5, 6)
    ]
    assert "not JSON" in lines[0]
    assert "seed must be an integer" in lines[1]
    assert "deck 1" in lines[2] and "40 cards" in lines[2]
    assert "XX" in lines[3]
    assert '{"seed": N}' in lines[4]


def test_a_bad_deals_file_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deals.jsonl"
    path.write_text('{"seed": 1}\n{"seed": "x"}\n')
    out = tmp_path / "t"
    args = ["tournament", "--out", str(out), "--bot", "random", "--bot", "greedy"]
    assert main([*args, "--deals", str(path)]) == 2
    err = capsys.readouterr().err
    assert "line 2: seed must be an integer" in err and "Traceback" not in err
    assert err.count("\n") == 1
    assert not out.exists()
    assert main([*args, "--deals", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read it" in capsys.readouterr().err
    assert not out.exists()


def test_the_schedule_takes_its_seeds_from_the_file() -> None:
    settings = Settings(
        bots=parse_bots({"a": "random", "b": "greedy"}), games=6, deals=[{"seed": 11}, {"seed": 12}]
    )
    seeds = [g.seed for g in schedule_of(settings)]
    assert seeds == [11, 11, 12, 12, 11, 11]


def test_a_tournament_plays_the_file_s_deals(tmp_path: Path) -> None:
    """A seed line and a decks line, played by a real server and bots: the records of the
    decks line's games show the file's deck orders, dealt in order."""
    path = tmp_path / "deals.jsonl"
    decks = [random.Random(i).sample(CARD_NAMES, 40) for i in range(30)]  # plenty to 11
    path.write_text('{"seed": 424242}\n' + json.dumps({"decks": decks}) + "\n")
    out = tmp_path / "t"
    args = ["tournament", "--out", str(out), "--bot", "random", "--bot", "greedy"]
    args += ["--games", "4", "--target", "11", "--deals", str(path), "--seed", "5"]
    assert main(args) == 0
    doc = json.loads((out / "results.json").read_text())
    games = doc["games"]
    assert [g["deal_set"] for g in games] == [0, 0, 1, 1]
    assert [g["seed"] for g in games] == [424242, 424242, deck_seed(5, 1), deck_seed(5, 1)]
    assert all(g["winner"] is not None for g in games), [g["notes"] for g in games]
    for game in games[2:]:
        record = json.loads((out / "records" / f"{game['match_id']}.json").read_text())
        dealt = [[c["code"] for c in deck["cards"]] for d in record["deals"] for deck in d["decks"]]
        assert dealt == decks[: len(dealt)]  # one deck per deal (redeals too), in order
    # resume needs no file: the deals are saved in tournament.json
    saved = json.loads((out / "tournament.json").read_text())
    assert saved["deals"] == [{"seed": 424242}, {"decks": decks}]
