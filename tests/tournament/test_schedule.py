"""Tournament schedule, journal and standings, without a server."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from cirulla.bots.botspec import BotSpec, parse_bots
from cirulla.clients.matches.journal import (
    GameResult,
    Journal,
    Settings,
    load_settings,
    save_settings,
)
from cirulla.clients.matches.schedule import build_schedule, deck_seed, groups, rotations
from cirulla.clients.tournament.results import (
    bots_table,
    pairs_table,
    results_document,
    side_ranks,
    standings,
)
from cirulla.clients.tournament.stats import Sprt, Wdl


def test_round_robin_two_players_duplicates_each_seed_with_seats_swapped() -> None:
    games = build_schedule(["a", "b", "c"], players=2, fmt="round-robin", games=4, seed=7)
    assert len(games) == 3 * 4
    assert [g.index for g in games] == list(range(12))
    by_pair_seed = Counter((g.group, g.seed) for g in games)
    assert set(by_pair_seed.values()) == {2}
    for g, h in zip(games[::2], games[1::2], strict=True):
        assert g.seed == h.seed and g.group == h.group
        assert h.seats == g.seats[::-1]
    # every pairing plays the same deck seeds, set by set
    seeds = {
        grp: [g.seed for g in games if g.group == grp]
        for grp in groups(["a", "b", "c"], 2, "round-robin")
    }
    assert len({tuple(s) for s in seeds.values()}) == 1
    assert games[0].pairing == "a vs b"


def test_schedule_is_a_pure_function_of_its_inputs() -> None:
    one = build_schedule(["x", "y"], players=2, fmt="round-robin", games=6, seed=3)
    two = build_schedule(["x", "y"], players=2, fmt="round-robin", games=6, seed=3)
    other = build_schedule(["x", "y"], players=2, fmt="round-robin", games=6, seed=4)
    assert one == two
    assert [g.seed for g in one] != [g.seed for g in other]
    assert deck_seed(3, 0) == one[0].seed
    assert 0 <= deck_seed(3, 1) < 2**31


def test_games_round_up_to_full_duplicate_sets() -> None:
    assert len(build_schedule(["x", "y"], players=2, fmt="gauntlet", games=3, seed=0)) == 4
    assert len(build_schedule(["x", "y", "z"], players=3, fmt="round-robin", games=2, seed=0)) == 3


def test_gauntlet_pairs_the_first_bot_with_each_other() -> None:
    assert groups(["a", "b", "c", "d"], 2, "gauntlet") == [("a", "b"), ("a", "c"), ("a", "d")]
    assert groups(["a", "b", "c", "d"], 3, "gauntlet") == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "c", "d"),
    ]


def test_four_players_are_partnerships_and_three_players_rotate() -> None:
    assert rotations(("a", "b"), 4) == [("a", "b", "a", "b"), ("b", "a", "b", "a")]
    rots = rotations(("a", "b", "c"), 3)
    for seat in range(3):
        assert {r[seat] for r in rots} == {"a", "b", "c"}
    assert groups(["a", "b"], 3, "round-robin") == [("a", "a", "b"), ("a", "b", "b")]


@pytest.mark.parametrize(
    ("bots", "players", "fmt", "message"),
    [
        (["a"], 2, "round-robin", "at least two"),
        (["a", "a"], 2, "round-robin", "distinct"),
        (["a", "b"], 5, "round-robin", "players"),
        (["a", "b"], 2, "swiss", "unknown format"),
    ],
)
def test_bad_schedules_are_refused(bots: list[str], players: int, fmt: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        groups(bots, players, fmt)


def result(
    index: int,
    seats: tuple[str, ...],
    winner: int | None,
    totals: tuple[int, ...],
    outcomes: tuple[str, ...] | None = None,
) -> GameResult:
    return GameResult(
        index=index,
        match_id=f"m{index}",
        seats=seats,
        seed=1,
        deal_set=index // 2,
        group=tuple(sorted(set(seats))),
        winner=winner,
        totals=totals,
        deals=4,
        seat_outcomes=outcomes or ("ok",) * len(seats),
    )


def test_journal_round_trip_and_torn_last_line(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    assert journal.read() == {}
    r0 = result(0, ("a", "b"), 0, (52, 30))
    r1 = result(1, ("b", "a"), None, (0, 0), ("crash", "crash"))
    journal.append(r0)
    journal.append(r1)
    with journal.path.open("a") as f:
        f.write('{"index": 2, "match_id": "m2", "sea')  # interrupted mid-write
    assert journal.read() == {0: r0, 1: r1}


def test_settings_round_trip(tmp_path: Path) -> None:
    settings = Settings(
        bots=parse_bots({"a": "random", "b": "greedy"}), games=6, seed=9, sprt=(0, 50, 0.05, 0.05)
    )
    save_settings(tmp_path, settings)
    assert load_settings(tmp_path) == settings
    with pytest.raises(ValueError, match="does not exist"):
        load_settings(tmp_path / "nowhere")
    (tmp_path / "tournament.json").write_text(json.dumps({"bots": {}, "colour": 1}))
    with pytest.raises(ValueError, match="unknown settings colour"):
        load_settings(tmp_path)


def test_side_ranks_put_the_winner_first_then_points() -> None:
    assert side_ranks(result(0, ("a", "b", "c"), 2, (40, 45, 52))) == [2, 1, 0]
    assert side_ranks(result(0, ("a", "b", "c"), 0, (52, 30, 30))) == [0, 1, 1]
    assert side_ranks(result(0, ("a", "b"), None, (0, 0))) == [0, 0]


def test_standings_two_players() -> None:
    settings = Settings(bots=parse_bots({"a": "random", "b": "greedy"}), sprt=(0, 50, 0.05, 0.05))
    games = [
        result(0, ("a", "b"), 1, (30, 52)),
        result(1, ("b", "a"), 0, (55, 20)),
        result(2, ("a", "b"), 0, (51, 49), ("ok", "timeout")),
        result(3, ("b", "a"), 0, (60, 10)),
    ]
    st = standings(settings, games)
    a, b = (next(x for x in st.bots if x.name == n) for n in "ab")
    assert (b.games, b.wins, b.losses) == (4, 3, 1)
    assert (a.games, a.wins, a.losses) == (4, 1, 3)
    assert b.points_per_deal == pytest.approx((52 + 55 + 49 + 60) / 16)
    assert b.problems == {"timeout": 1}
    assert st.bots[0].name == "b"  # sorted by score
    assert b.elo.elo > 0 > a.elo.elo
    assert b.rating_mu > a.rating_mu
    (h2h,) = st.head_to_head
    assert (h2h.first, h2h.wdl.wins, h2h.wdl.losses) == ("a", 1, 3)
    assert h2h.sprt_decision is None and h2h.sprt_llr is not None
    # deck set 0: a lost both seatings (LL); deck set 1: one each (a split pair)
    assert h2h.penta.counts == (1, 0, 1, 0, 0)
    assert h2h.sprt_llr == pytest.approx(Sprt(0, 50, 0.05, 0.05).llr_penta(h2h.penta))
    assert h2h.sprt_llr_trinomial == pytest.approx(Sprt(0, 50, 0.05, 0.05).llr(h2h.wdl))
    # a deck set with one game played so far is not a pair yet
    partial = standings(settings, [*games, result(4, ("a", "b"), 0, (51, 3))])
    assert partial.head_to_head[0].penta.counts == (1, 0, 1, 0, 0)
    doc = results_document(settings, games)
    penta = doc["standings"]["head_to_head"][0]["pentanomial"]
    assert penta["counts"] == [1, 0, 1, 0, 0] and penta["pairs"] == 2
    assert doc["standings"]["head_to_head"][0]["sprt"]["model"] == "pentanomial"
    assert doc["standings"]["bots"][0]["bot"] == "b"
    assert doc["standings"]["head_to_head"][0]["sprt"]["decision"] is None
    assert len(doc["games"]) == 4
    json.dumps(doc, allow_nan=False)
    assert bots_table(st).row_count == 2
    assert pairs_table(st).row_count == 1


def test_standings_four_players_count_partnerships_once() -> None:
    settings = Settings(bots=parse_bots({"a": "random", "b": "greedy"}), players=4)
    games = [
        result(0, ("a", "b", "a", "b"), 0, (51, 40)),
        result(1, ("b", "a", "b", "a"), 0, (51, 40)),
    ]
    st = standings(settings, games)
    a = next(x for x in st.bots if x.name == "a")
    assert (a.games, a.wins, a.losses) == (2, 1, 1)
    # two seats per side but one pairwise result per game
    assert a.wdl.games == 2


def test_standings_three_players_compare_losers_on_points() -> None:
    settings = Settings(
        bots={
            "a": BotSpec("x", "kind", kind="x"),
            "b": BotSpec("y", "kind", kind="y"),
            "c": BotSpec("z", "kind", kind="z"),
        },
        players=3,
    )
    st = standings(settings, [result(0, ("a", "b", "c"), 2, (40, 45, 52))])
    wdl = {b.name: b.wdl for b in st.bots}
    assert (wdl["c"].wins, wdl["c"].losses) == (2, 0)
    assert (wdl["b"].wins, wdl["b"].losses) == (1, 1)
    assert (wdl["a"].wins, wdl["a"].losses) == (0, 2)
    assert [b.name for b in st.bots] == ["c", "b", "a"]
    assert st.head_to_head == []


def test_sprt_decided_pairing_starts_no_new_deck_set(tmp_path: Path) -> None:
    """The runner's queue drops a pairing once its SPRT decides, but finishes started sets."""
    from cirulla.clients.tournament.runner import RunOptions, Tournament

    settings = Settings(
        bots=parse_bots({"a": "random", "b": "greedy", "c": "greedy"}),
        games=40,
        sprt=(0, 50, 0.05, 0.05),
    )
    save_settings(tmp_path, settings)
    tournament = Tournament(settings, RunOptions(out=tmp_path))
    schedule = tournament.schedule
    assert len(tournament.pending(standings(settings, []))) == len(schedule) == 120
    journal = Journal(tmp_path)
    # "b" beats "a" in every game of the first 10 deck sets, minus the last game of set 9
    ab = [g for g in schedule if g.group == ("a", "b") and g.deal_set < 10][:-1]
    for g in ab:
        r = result(g.index, g.seats, g.seats.index("b"), (30, 30))
        journal.append(replace(r, deal_set=g.deal_set, group=g.group, seed=g.seed))
    resumed = Tournament(settings, RunOptions(out=tmp_path))
    st = standings(settings, resumed.done.values())
    (h2h,) = [h for h in st.head_to_head if h.pairing == "a vs b"]
    assert h2h.sprt_decision == "H0" and h2h.wdl == Wdl(0, 0, 19)
    left = resumed.pending(st)
    left_ab = [g for g in left if g.group == ("a", "b")]
    # only the unfinished game of the already started set 9 remains for a vs b
    assert [(g.deal_set, g.seats) for g in left_ab] == [(9, ("b", "a"))]
    assert len([g for g in left if g.group != ("a", "b")]) == 80


def test_bot_command_lines() -> None:
    """Built-in specs run through this Python; no token on any command line."""
    import sys

    from cirulla.bots.botspec import BotSpec
    from cirulla.clients.matches.seat_argv import bot_argv, seat_values

    values = seat_values(server="127.0.0.1:5", match="m-1", token="-tok", seat=1, name="b", seed=9)
    argv = bot_argv(BotSpec.parse("mcts:iterations=5"), values)
    assert argv[:4] == [sys.executable, "-m", "cirulla", "bot"]
    assert "--match=m-1" in argv and not any("tok" in arg for arg in argv)  # $CIRULLA_TOKEN
    joined = " ".join(argv)
    assert "--option=iterations=5" in joined or "--option iterations=5" in joined
    cmd = bot_argv(BotSpec.parse("cmd:engine --at {server} --id {match}/{seat}"), values)
    assert cmd == ["engine", "--at", "127.0.0.1:5", "--id", "m-1/1"]
    with pytest.raises(ValueError, match="CIRULLA_TOKEN"):
        BotSpec.parse("cmd:engine '{token}'")
    with pytest.raises(ValueError, match="empty"):
        BotSpec.parse("cmd:  ")
    with pytest.raises(ValueError, match="unknown bot kind"):
        BotSpec.parse("alphazero")
