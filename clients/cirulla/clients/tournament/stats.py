"""Match statistics: Elo difference with a confidence interval, likelihood of superiority
and the generalized sequential probability ratio test (GSPRT).

Everything works on trinomial counts (wins, draws, losses) of one player against an
opponent (or against the field), with the logistic Elo model used by cutechess and
fishtest: a score fraction ``s`` corresponds to ``elo = -400 * log10(1 / s - 1)``.

Duplicate deals make the two games of a pair correlated (the same cards with seats
swapped), so treating games as independent overestimates the variance. ``Penta`` counts
whole pairs instead, as fastchess does: the pentanomial model (a pair scores 0, 1/2, 1,
3/2 or 2 points) whose Elo interval and SPRT use the variance of the pair scores, which is
smaller when the deal's luck cancels out between the two games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

#: Pseudo-games added to the wins and to the losses before an SPRT step. Cirulla games
#: are never drawn, so the first games are all wins or all losses (zero variance) and
#: fishtest's tiny regularization (1e-3) would stop a match after one game; half a win
#: and half a loss is a weak prior that keeps the early LLR finite and modest.
SPRT_PRIOR = 0.5
#: The same prior keeps an interval honest when every outcome so far is the same (five
#: pairs all split 1-1, or three games all won): the observed variance is then 0, and
#: fastchess's normal interval would be +0 ±0 from five samples. Like fishtest's
#: ``regularize`` ("if necessary mix in a small prior ... to avoid the variance being
#: zero"), the variance is then taken from the counts with ``SPRT_PRIOR`` pseudo-outcomes
#: added at both extremes; any other counts get the plain formula, as fastchess computes it.


@dataclass(frozen=True, slots=True)
class Wdl:
    """Wins, draws and losses of one player from its own point of view."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Fraction of the available points (win 1, draw 1/2); 0.5 with no games."""
        if not self.games:
            return 0.5
        return (self.wins + 0.5 * self.draws) / self.games

    def __add__(self, other: Wdl) -> Wdl:
        return Wdl(self.wins + other.wins, self.draws + other.draws, self.losses + other.losses)

    def flipped(self) -> Wdl:
        """The same games from the opponent's side."""
        return Wdl(self.losses, self.draws, self.wins)


#: What a pair of games (the same deals, seats swapped) can score, as a fraction of its
#: two points: the five pentanomial outcomes LL, LD+DL, WL+LW+DD, WD+DW, WW.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True, slots=True)
class Penta:
    """Counts of the five pair outcomes (``PAIR_SCORES``), from one player's view."""

    counts: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    @classmethod
    def of_pair(cls, first: float, second: float) -> Penta:
        """One pair from its two game scores (1, 1/2 or 0 each)."""
        counts = [0] * 5
        counts[round((first + second) * 2)] = 1
        return cls(_five(counts))

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def score(self) -> float:
        """Mean score per game over the pairs; 0.5 with none."""
        return _mean(self.counts, PAIR_SCORES)

    def __add__(self, other: Penta) -> Penta:
        return Penta(_five([a + b for a, b in zip(self.counts, other.counts, strict=True)]))

    def flipped(self) -> Penta:
        return Penta(_five(list(reversed(self.counts))))


def _five(counts: list[int]) -> tuple[int, int, int, int, int]:
    a, b, c, d, e = counts
    return a, b, c, d, e


def _mean(weights: tuple[float, ...] | list[float], values: tuple[float, ...]) -> float:
    n = sum(weights)
    return sum(w * v for w, v in zip(weights, values, strict=True)) / n if n else 0.5


def _variance(weights: tuple[float, ...] | list[float], values: tuple[float, ...]) -> float:
    """Variance of one outcome (one game, or one pair) under the observed frequencies."""
    n = sum(weights)
    if not n:
        return 0.0
    mean = _mean(weights, values)
    return sum(w * (v - mean) ** 2 for w, v in zip(weights, values, strict=True)) / n


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """Elo difference and the bounds of its confidence interval (may be infinite)."""

    elo: float
    low: float
    high: float

    @property
    def margin(self) -> float:
        """Half width of the interval, the ``±`` figure reported by cutechess."""
        return (self.high - self.low) / 2


def elo_from_score(score: float) -> float:
    """Logistic Elo difference for a score fraction; ``±inf`` at 0 and 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected score fraction of a player ``elo`` points stronger."""
    return float(1.0 / (1.0 + 10.0 ** (-elo / 400.0)))


def score_variance(wdl: Wdl) -> float:
    """Per-game variance of the score (outcomes 1, 1/2, 0 with their observed frequencies)."""
    n = wdl.games
    if not n:
        return 0.0
    s = wdl.score
    return (
        wdl.wins * (1.0 - s) ** 2 + wdl.draws * (0.5 - s) ** 2 + wdl.losses * (0.0 - s) ** 2
    ) / n


def elo_interval(wdl: Wdl, confidence: float = 0.95) -> EloEstimate:
    """Elo difference with a normal-approximation interval on the mean score.

    The interval is computed on the score and mapped through the Elo curve, so it is
    asymmetric in Elo (as in cutechess's ``elo ± margin`` report, which halves its width).
    """
    weights = (wdl.losses, wdl.draws, wdl.wins)
    return _interval(wdl.games, wdl.score, _regular_variance(weights, (0.0, 0.5, 1.0)), confidence)


def penta_interval(penta: Penta, confidence: float = 0.95) -> EloEstimate:
    """Elo difference with its interval from pairs (fastchess's pentanomial report): the
    same mapping as ``elo_interval``, with the variance of the pairs' mean scores."""
    variance = _regular_variance(penta.counts, PAIR_SCORES)
    return _interval(penta.pairs, penta.score, variance, confidence)


def _regular_variance(counts: tuple[int, ...], values: tuple[float, ...]) -> float:
    """The outcomes' variance; when it is 0 (every outcome alike), that of the counts
    with ``SPRT_PRIOR`` added to the lowest and the highest outcome."""
    variance = _variance(counts, values)
    if variance > 0.0 or not sum(counts):
        return variance
    weights = [float(c) for c in counts]
    weights[0] += SPRT_PRIOR
    weights[-1] += SPRT_PRIOR
    return _variance(weights, values)


def _interval(n: int, s: float, variance: float, confidence: float) -> EloEstimate:
    """``n`` outcomes of mean score ``s`` and per-outcome ``variance``, mapped to Elo."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    if not n:
        return EloEstimate(0.0, -math.inf, math.inf)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    stderr = math.sqrt(variance / n)
    return EloEstimate(
        elo_from_score(s), elo_from_score(s - z * stderr), elo_from_score(s + z * stderr)
    )


def los(wdl: Wdl) -> float:
    """Likelihood of superiority: probability that the player is the stronger one.

    Cutechess's formula, which ignores draws: ``0.5 * (1 + erf((W - L) / sqrt(2 (W + L))))``;
    0.5 when there are no decisive games.
    """
    decisive = wdl.wins + wdl.losses
    if not decisive:
        return 0.5
    return 0.5 * (1.0 + math.erf((wdl.wins - wdl.losses) / math.sqrt(2.0 * decisive)))


@dataclass(frozen=True, slots=True)
class Sprt:
    """A sequential test of H0: elo = elo0 against H1: elo = elo1.

    ``alpha`` is the chance of accepting H1 when H0 holds, ``beta`` the chance of
    accepting H0 when H1 holds.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"SPRT needs elo0 < elo1, got elo0={self.elo0} elo1={self.elo1}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"SPRT {name} must be between 0 and 0.5, not {value}")

    @property
    def lower(self) -> float:
        """Accept H0 when the LLR falls to this bound: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 when the LLR reaches this bound: ``log((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, wdl: Wdl) -> float:
        """GSPRT log-likelihood ratio of the trinomial results (fishtest's ``LLR_logistic``).

        With ``N`` games, mean score ``s``, per-game score variance ``var`` and
        ``s0``/``s1`` the expected scores at ``elo0``/``elo1``, the generalized LLR is
        approximately ``N * (s1 - s0) * (2 s - s0 - s1) / (2 var)``, computed after adding
        ``SPRT_PRIOR`` pseudo-games to the wins and the losses.
        """
        if not wdl.games:
            return 0.0
        weights = [wdl.losses + SPRT_PRIOR, float(wdl.draws), wdl.wins + SPRT_PRIOR]
        return self._llr(weights, (0.0, 0.5, 1.0))

    def llr_penta(self, penta: Penta) -> float:
        """The same GSPRT on pairs (fastchess's pentanomial LLR): ``N`` is the number of
        pairs, ``s`` their mean score per game and ``var`` the variance of a pair's score;
        ``SPRT_PRIOR`` pseudo-pairs are added to LL and to WW."""
        if not penta.pairs:
            return 0.0
        weights = [float(c) for c in penta.counts]
        weights[0] += SPRT_PRIOR
        weights[-1] += SPRT_PRIOR
        return self._llr(weights, PAIR_SCORES)

    def _llr(self, weights: list[float], values: tuple[float, ...]) -> float:
        n = sum(weights)
        s, var = _mean(weights, values), _variance(weights, values)
        s0, s1 = score_from_elo(self.elo0), score_from_elo(self.elo1)
        return n * (s1 - s0) * (2.0 * s - s0 - s1) / (2.0 * var)

    def decide(self, wdl: Wdl | Penta) -> str | None:
        """``"H1"`` (elo >= elo1 accepted), ``"H0"`` (elo <= elo0 accepted) or None (go on)."""
        llr = self.llr_penta(wdl) if isinstance(wdl, Penta) else self.llr(wdl)
        return self.verdict(llr)

    def describe(self, llr: float) -> str:
        """The LLR with its bounds and hypotheses, as fastchess prints it:
        ``LLR 3.92 (-2.94, 2.94) [0, 50]``."""
        return f"LLR {llr:.2f} ({self.lower:.2f}, {self.upper:.2f}) [{self.elo0:g}, {self.elo1:g}]"

    def verdict(self, llr: float) -> str | None:
        """The decision an LLR reaches (see ``decide``)."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None
