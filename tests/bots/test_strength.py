"""The strength benchmark's bookkeeping: duplicate seatings, counts and intervals."""

from __future__ import annotations

import json

import pytest

from cirulla.bots.strength import mean_interval, run_strength, seatings, wilson
from cirulla.cli import main


def test_duplicate_seatings_put_each_bot_in_every_position() -> None:
    assert seatings(2) == [["a", "b"], ["b", "a"]]
    assert [s.index("a") for s in seatings(3)] == [0, 1, 2]
    assert seatings(4) == [["a", "b", "a", "b"], ["b", "a", "b", "a"]]


def test_wilson_and_mean_intervals_contain_the_estimate() -> None:
    low, high = wilson(9, 10)
    assert low < 0.9 < high <= 1.0
    assert wilson(10, 10)[1] == pytest.approx(1.0)
    mean, lo, hi = mean_interval([1.0, 2.0, 3.0])
    assert (mean, lo < 2.0 < hi) == (2.0, True)


def test_greedy_beats_random_on_duplicate_deals() -> None:
    report = run_strength("greedy", "random", games=8, seed=3)
    assert report["games"] == 8 and report["duplicate_groups"] == 4
    assert report["a_wins"] + report["b_wins"] == 8
    assert report["a_wins"] >= 6
    low, high = report["a_mean_point_diff_per_deal_ci95"]
    assert low < report["a_mean_point_diff_per_deal"] < high


def test_same_bot_both_sides_is_exactly_even_on_duplicate_deals() -> None:
    # Deterministic greedy against itself: each deck sequence is won once by each seating.
    report = run_strength("greedy", "greedy", games=4, seed=5)
    assert report["a_wins"] == 2
    assert report["a_mean_point_diff_per_deal"] == pytest.approx(0.0)


def test_base_plays_the_same_games_and_pairs_them() -> None:
    report = run_strength("greedy", "random", games=8, seed=3, base="random")
    alone = run_strength("random", "random", games=8, seed=3)
    assert {k: report["base"][k] for k in alone} == alone  # the very same games as a run of its own
    paired = report["paired"]
    assert paired["duplicate_groups"] == 4
    assert paired["point_diff_per_deal"] == pytest.approx(
        report["a_mean_point_diff_per_deal"] - alone["a_mean_point_diff_per_deal"]
    )
    assert paired["point_diff_per_deal_ci95"][0] > 0
    assert paired["win_rate"] == pytest.approx(report["a_win_rate"] - alone["a_win_rate"])


def test_a_bot_paired_with_itself_differs_by_nothing() -> None:
    paired = run_strength("greedy", "random", games=4, seed=2, base="greedy")["paired"]
    assert paired["point_diff_per_deal"] == 0.0 and paired["win_rate"] == 0.0
    assert paired["point_diff_per_deal_ci95"] == [0.0, 0.0]


def test_bench_strength_command_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "bench",
            "strength",
            "--a",
            "greedy",
            "--b",
            "random",
            "--games",
            "2",
            "--players",
            "3",
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["players"] == 3 and report["games"] == 3
    assert "not over gRPC" in report["mode"]


def test_bench_mcts_command_reports_a_rate(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "mcts", "--iterations", "50", "--runs", "1", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["iterations_per_second"] > 0


def test_bad_bot_spec_fails_before_playing() -> None:
    with pytest.raises(ValueError, match="unknown bot kind"):
        run_strength("alphazero", "random", games=2)
    with pytest.raises(ValueError, match="unknown bot kind"):
        run_strength("greedy", "random", games=2, base="alphazero")
