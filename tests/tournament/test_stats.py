"""Statistics of the tournament runner against hand-computed values and simulations."""

from __future__ import annotations

import math
import random

import pytest

from cirulla.clients.tournament.stats import (
    Penta,
    Sprt,
    Wdl,
    elo_from_score,
    elo_interval,
    los,
    penta_interval,
    score_from_elo,
    score_variance,
)


def test_elo_of_known_scores() -> None:
    assert elo_from_score(0.5) == 0.0
    # 60% score: -400 log10(1/0.6 - 1) = 70.437...
    assert elo_from_score(0.6) == pytest.approx(70.437, abs=1e-3)
    assert elo_from_score(0.25) == pytest.approx(-190.849, abs=1e-3)
    assert elo_from_score(1.0) == math.inf
    assert elo_from_score(0.0) == -math.inf
    for elo in (-300.0, -10.0, 0.0, 42.0, 250.0):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo)


def test_wdl_score_and_variance() -> None:
    wdl = Wdl(wins=6, draws=2, losses=2)
    assert wdl.games == 10
    assert wdl.score == pytest.approx(0.7)
    # outcomes 1 (x6), 0.5 (x2), 0 (x2) around 0.7
    expected = (6 * 0.3**2 + 2 * 0.2**2 + 2 * 0.7**2) / 10
    assert score_variance(wdl) == pytest.approx(expected)
    assert wdl.flipped() == Wdl(2, 2, 6)
    assert wdl + Wdl(1, 0, 0) == Wdl(7, 2, 2)
    assert Wdl().score == 0.5


def test_elo_interval_even_match() -> None:
    # 50-0-50: stderr of the score = sqrt(0.25 / 100) = 0.05
    est = elo_interval(Wdl(50, 0, 50))
    z = 1.959964
    assert est.elo == 0.0
    assert est.low == pytest.approx(elo_from_score(0.5 - z * 0.05), abs=1e-3)
    assert est.high == pytest.approx(-est.low, abs=1e-9)
    assert est.margin == pytest.approx(69.0, abs=0.05)


def test_elo_interval_shrinks_with_games_and_is_infinite_at_extremes() -> None:
    few = elo_interval(Wdl(6, 0, 4))
    many = elo_interval(Wdl(600, 0, 400))
    assert few.elo == pytest.approx(many.elo)
    assert many.margin < few.margin / 5
    assert many.low < many.elo < many.high
    sweep = elo_interval(Wdl(5, 0, 0))
    assert sweep.elo == math.inf
    empty = elo_interval(Wdl())
    assert (empty.low, empty.high) == (-math.inf, math.inf)


def test_los_known_values() -> None:
    assert los(Wdl(5, 3, 5)) == 0.5
    assert los(Wdl(0, 7, 0)) == 0.5
    # W - L = 10 over 20 decisive: 0.5 (1 + erf(10 / sqrt(40)))
    assert los(Wdl(15, 4, 5)) == pytest.approx(0.5 * (1 + math.erf(10 / math.sqrt(40))))
    assert los(Wdl(15, 4, 5)) == pytest.approx(0.9873, abs=1e-4)
    assert los(Wdl(5, 4, 15)) == pytest.approx(1 - los(Wdl(15, 4, 5)))


def test_sprt_bounds_and_llr_by_hand() -> None:
    sprt = Sprt(0, 10, 0.05, 0.05)
    assert sprt.lower == pytest.approx(math.log(0.05 / 0.95))
    assert sprt.upper == pytest.approx(-sprt.lower)
    # 100-0-100 plus the prior (half a win, half a loss): N = 201, s = 0.5, var = 0.25;
    # LLR = N (s1 - s0)(2s - s0 - s1) / (2 var)
    s0, s1 = score_from_elo(0), score_from_elo(10)
    expected = 201 * (s1 - s0) * (1 - s0 - s1) / 0.5
    assert sprt.llr(Wdl(100, 0, 100)) == pytest.approx(expected)
    assert sprt.llr(Wdl(100, 0, 100)) < 0
    assert sprt.llr(Wdl()) == 0.0
    assert sprt.decide(Wdl(100, 0, 100)) is None


def test_sprt_decides_on_clear_data() -> None:
    sprt = Sprt(0, 50, 0.05, 0.05)
    assert sprt.decide(Wdl(60, 0, 20)) == "H1"
    assert sprt.decide(Wdl(20, 0, 60)) == "H0"
    assert sprt.decide(Wdl(3, 0, 2)) is None
    # one game never decides; all wins (zero variance) still give a finite, decisive LLR
    assert sprt.decide(Wdl(1, 0, 0)) is None
    assert sprt.decide(Wdl(0, 0, 1)) is None
    assert math.isfinite(sprt.llr(Wdl(40, 0, 0)))
    assert sprt.decide(Wdl(40, 0, 0)) == "H1"


@pytest.mark.parametrize(("true_elo", "expected"), [(150.0, "H1"), (-100.0, "H0")])
def test_sprt_on_simulated_matches(true_elo: float, expected: str) -> None:
    """Sequential games drawn from a known strength end with the right decision."""
    sprt = Sprt(0, 50, 0.05, 0.05)
    p_win = score_from_elo(true_elo)
    for seed in range(20):
        rng = random.Random(seed)
        wdl = Wdl()
        decision = None
        for _ in range(5000):
            wdl = wdl + (Wdl(1, 0, 0) if rng.random() < p_win else Wdl(0, 0, 1))
            decision = sprt.decide(wdl)
            if decision:
                break
        assert decision == expected, (seed, wdl)


def test_sprt_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="elo0 < elo1"):
        Sprt(10, 0)
    with pytest.raises(ValueError, match="alpha"):
        Sprt(0, 10, alpha=0.7)
    with pytest.raises(ValueError, match="confidence"):
        elo_interval(Wdl(1, 0, 1), confidence=1.5)


def test_elo_cells_of_the_tables() -> None:
    from cirulla.clients.tournament.results import _fmt_elo

    assert _fmt_elo(elo_interval(Wdl(50, 0, 50))) == "+0 ±69"
    assert _fmt_elo(elo_interval(Wdl(3, 0, 0))) == "+inf"
    assert _fmt_elo(elo_interval(Wdl(0, 0, 3))) == "-inf"
    assert _fmt_elo(elo_interval(Wdl(2, 0, 6))) == "-191 [-inf,+35]"


def test_pentanomial_counts_pairs_by_their_points() -> None:
    assert Penta.of_pair(0, 0).counts == (1, 0, 0, 0, 0)
    assert Penta.of_pair(0.5, 0).counts == (0, 1, 0, 0, 0)
    assert Penta.of_pair(1, 0).counts == Penta.of_pair(0.5, 0.5).counts == (0, 0, 1, 0, 0)
    assert Penta.of_pair(1, 0.5).counts == (0, 0, 0, 1, 0)
    assert Penta.of_pair(1, 1).counts == (0, 0, 0, 0, 1)
    penta = Penta((1, 0, 2, 0, 3)) + Penta.of_pair(1, 1)
    assert penta.counts == (1, 0, 2, 0, 4) and penta.pairs == 7
    assert penta.score == pytest.approx((2 * 0.5 + 4 * 1.0) / 7)
    assert penta.flipped().counts == (4, 0, 2, 0, 1)
    assert Penta().score == 0.5


def test_pentanomial_interval_by_hand() -> None:
    # 10 pairs: 2 LL, 6 split, 2 WW. Mean 0.5; pair-score variance (2 x 0.25 + 2 x 0.25) / 10
    penta = Penta((2, 0, 6, 0, 2))
    est = penta_interval(penta)
    stderr = math.sqrt(0.1 / 10)
    z = 1.959963984540054
    assert est.elo == 0.0
    assert est.low == pytest.approx(elo_from_score(0.5 - z * stderr))
    assert est.high == pytest.approx(elo_from_score(0.5 + z * stderr))
    assert penta_interval(Penta()).margin == math.inf


def test_pairs_that_split_are_tighter_than_independent_games() -> None:
    """When the deal decides (each bot wins its seat of the deal), the pairs all split:
    the pentanomial interval is far narrower than counting 20 independent games."""
    split = penta_interval(Penta((1, 0, 8, 0, 1)))
    games = elo_interval(Wdl(wins=10, draws=0, losses=10))
    assert split.elo == games.elo == 0.0
    assert split.margin < 0.7 * games.margin  # stderr ratio sqrt(0.05 / 10) / sqrt(0.25 / 20)


def test_pentanomial_llr_by_hand() -> None:
    sprt = Sprt(0, 50, 0.05, 0.05)
    counts = [3.0, 0.0, 4.0, 0.0, 8.0]
    counts[0] += 0.5  # SPRT_PRIOR pseudo-pairs on LL and WW
    counts[4] += 0.5
    n = sum(counts)
    values = (0.0, 0.25, 0.5, 0.75, 1.0)
    s = sum(c * v for c, v in zip(counts, values, strict=True)) / n
    var = sum(c * (v - s) ** 2 for c, v in zip(counts, values, strict=True)) / n
    s0, s1 = score_from_elo(0), score_from_elo(50)
    expected = n * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)
    assert sprt.llr_penta(Penta((3, 0, 4, 0, 8))) == pytest.approx(expected)
    assert sprt.llr_penta(Penta()) == 0.0
    assert sprt.decide(Penta((0, 0, 2, 0, 30))) == "H1"
    assert sprt.decide(Penta((30, 0, 2, 0, 0))) == "H0"
    assert sprt.decide(Penta((1, 0, 2, 0, 1))) is None
